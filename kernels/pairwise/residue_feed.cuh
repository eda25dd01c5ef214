// Target residues of a pass for thread 0 of a group, column after column. The
// kernels used to read one byte from global memory per column and pair, each
// load waited for at once; the feed reads aligned 32-bit words (four columns)
// and has the next word in flight while the current one is used, so the
// latency of the load hides behind four columns of cells. The other threads
// of a group get each column's residue from the thread above by shuffle,
// with the H and F of its bottom row.
#pragma once

#include <cstdint>

namespace alignscope::kernels::device {

class ResidueFeed {
public:
    // Column j (1-based) holds the residue at byte `first + dir * (j - 1)` of
    // `buffer` (4-byte aligned) for j <= count; later columns get the pad.
    __device__ void start(const std::uint8_t* buffer, long long first, int count, int dir) {
        const auto* word = reinterpret_cast<const std::uint32_t*>(buffer) + (first >> 2);
        shift_ = 8 * static_cast<int>(first & 3);
        step_ = 8 * dir;
        // Words holding a residue of this pass after the first one.
        const long long last = first + static_cast<long long>(dir) * (count - 1);
        words_left_ = count > 0 ? static_cast<int>(dir > 0 ? (last >> 2) - (first >> 2) : (first >> 2) - (last >> 2))
                                : 0;
        current_ = count > 0 ? __ldg(word) : 0u;
        next_word_ = word + dir;
        next_ = 0u;
        fetch();
    }

    // The residue of the next column (calls come for columns 1, 2, 3, ...,
    // up to the pass's count; past it the caller uses the pad itself).
    __device__ int next_code() {
        const int code = static_cast<int>((current_ >> shift_) & 0xffu);
        shift_ += step_;
        if (static_cast<unsigned>(shift_) > 24u) {  // left the word: on to the prefetched one
            shift_ &= 31;
            current_ = next_;
            fetch();
        }
        return code;
    }

private:
    __device__ void fetch() {
        if (words_left_ > 0) {
            next_ = __ldg(next_word_);
            next_word_ += step_ > 0 ? 1 : -1;
            --words_left_;
        }
    }

    const std::uint32_t* next_word_ = nullptr;
    std::uint32_t current_ = 0, next_ = 0;
    int shift_ = 0, step_ = 8, words_left_ = 0;
};

}  // namespace alignscope::kernels::device
