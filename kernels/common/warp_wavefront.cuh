// The warp-level building block of the anti-diagonal wavefront kernels
// (pairwise passes, database scan, traceback): a group of G threads of a warp
// shares one DP problem, each thread holding R consecutive query rows of a
// strip of G * R rows, and the strip sweeps the target columns.
//
// The contract, for any kernel that uses it:
//  - Columns. At wavefront step k, thread t of a group works on target column
//    j = k - t + 1 (1-based; j < 1 is the ramp before its first column, j > n
//    the tail after the last). WavefrontGroup<G>::column(k, t).
//  - Hand-down. After its column, every thread offers its bottom row's
//    boundary cell (H or Ho, and F; any 32-bit word: a cell or a residue code)
//    to the thread below with from_above(), one __shfl_up_sync by one lane
//    within the group; the thread below reads it at step k + 1, when it works
//    on the same column. Thread 0 gets its own value back and must replace it
//    with the strip's upper boundary (row 0, or the row the previous strip
//    stored). Every thread of the `mask` must call it at every step (the
//    warp-uniform loops below make that so); G = 1 is no shuffle at all.
//  - Chunks. The chunked kernels (full-warp loop bounds, every lane running
//    the same steps) take columns four at a time: thread 0 reads the four
//    target residues of a chunk as one 32-bit word (forward_residues,
//    aligned_residues, reversed_residues: byte c is column c0 + c, the pad
//    letter past the end), and whatever else it needs (the strip boundary of
//    those four columns) one chunk ahead of its use, so the loads' latency
//    hides behind a chunk of cells; the residue code then travels down the
//    group with the rows (from_above). for_each_chunk() is that loop.
// What is not here: the cells (common/dp_cell.hpp), the layout of the
// boundary buffer and the end-cell bookkeeping, which differ by kernel.
#pragma once

#include <cstdint>

namespace alignscope::kernels::wavefront {

// Columns a chunk covers: one 32-bit word of residues.
inline constexpr int kChunkColumns = 4;

template <int G>
struct WavefrontGroup {
    static_assert(G == 1 || G == 2 || G == 4 || G == 8 || G == 16 || G == 32, "a power of two dividing a warp");
    static constexpr int threads = G;
    // Groups per warp: the stride of the interleaved strip-boundary slots.
    static constexpr int per_warp = 32 / G;

    // This thread's index in its group.
    __device__ __forceinline__ static int thread(int lane) { return lane % G; }
    // The lanes of this thread's group.
    __device__ __forceinline__ static unsigned mask(int lane) {
        if constexpr (G == 32) return 0xffffffffu;
        else
            return ((1u << G) - 1u) << ((lane / G) * G);
    }
    // Target column of thread t at step k.
    __device__ __forceinline__ static int column(int step, int t) { return step - t + 1; }

    // The value the thread above offered at the previous step (see the
    // contract); thread 0 gets its own.
    template <class T>
    __device__ __forceinline__ static T from_above(unsigned lanes, T value) {
        static_assert(sizeof(T) == 4, "one 32-bit word per shuffle");
        if constexpr (G == 1) return value;
        else
            return __shfl_up_sync(lanes, value, 1, G);
    }
};

// Residue `c` (0..3) of a chunk word.
__device__ __forceinline__ std::uint32_t residue_of(std::uint32_t word, int c) { return (word >> (8 * c)) & 0xffu; }

// Residues from[c .. c+3] in bytes 0..3, the pad letter from column n on, for
// a sequence starting anywhere (a funnel shift of two aligned words). The two
// aligned words lie inside the sequence while c + 8 <= n; the last chunks go
// byte by byte.
__device__ __forceinline__ std::uint32_t forward_residues(const std::uint8_t* from, int c, int n,
                                                          std::uint32_t pad_word) {
    if (c >= n) return pad_word;
    if (c + 8 <= n) {
        const auto address = reinterpret_cast<std::uintptr_t>(from + c);
        const auto* words = reinterpret_cast<const std::uint32_t*>(address & ~std::uintptr_t{3});
        const unsigned shift = static_cast<unsigned>(address & 3u) * 8u;
        const std::uint32_t low = words[0], high = shift ? words[1] : 0u;
        return __funnelshift_r(low, high, shift);
    }
    std::uint32_t word = pad_word;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        if (c + k < n) word = (word & ~(0xffu << (8 * k))) | (static_cast<std::uint32_t>(from[c + k]) << (8 * k));
    return word;
}

// Residues from[c .. c+3] of a sequence that starts 4-aligned and whose
// buffer is padded to a multiple of 4 with pad letters: one load (c a
// multiple of 4), or the pad word past the end.
__device__ __forceinline__ std::uint32_t aligned_residues(const std::uint8_t* from, int c, int n,
                                                          std::uint32_t pad_word) {
    return c < n ? reinterpret_cast<const std::uint32_t*>(from)[c >> 2] : pad_word;
}

// Residues last[-c], last[-c-1], last[-c-2], last[-c-3] (columns c .. c+3 of
// a sequence read backwards from `last`, as the reverse passes do) in bytes
// 0..3, the pad letter past column n - 1. Two aligned loads and a byte
// reversal when all four are inside; otherwise byte by byte (once per pass).
__device__ __forceinline__ std::uint32_t reversed_residues(const std::uint8_t* last, int c, int n,
                                                           std::uint32_t pad_word) {
    if (c >= n) return pad_word;
    if (c + 4 <= n) {
        const std::uint8_t* lowest = last - c - 3;
        const auto address = reinterpret_cast<std::uintptr_t>(lowest);
        const auto* words = reinterpret_cast<const std::uint32_t*>(address & ~std::uintptr_t{3});
        const unsigned shift = static_cast<unsigned>(address & 3u) * 8u;
        // The second word is read only when the four bytes straddle it, and
        // then it holds none past last[-c].
        const std::uint32_t low = words[0], high = shift ? words[1] : 0u;
        return __byte_perm(__funnelshift_r(low, high, shift), 0u, 0x0123);
    }
    std::uint32_t word = pad_word;
#pragma unroll
    for (int k = 0; k < 4; ++k)
        if (c + k < n) word = (word & ~(0xffu << (8 * k))) | (static_cast<std::uint32_t>(last[-c - k]) << (8 * k));
    return word;
}

// The chunked sweep: `steps` (a multiple of kChunkColumns, the same for every
// lane of the warp) wavefront steps, four at a time. fetch(c0, chunk) fills a
// Chunk (what thread 0 reads: residues, boundary) for steps c0 .. c0+3; it
// runs one chunk ahead. column(k, c, chunk) runs step k = c0 + c with the
// chunk of its steps. `first` is what a chunk holds before its fetch (the
// lanes that read nothing keep it).
template <class Chunk, class Fetch, class Column>
__device__ __forceinline__ void for_each_chunk(int steps, const Chunk& first, Fetch&& fetch, Column&& column) {
    Chunk now = first, next = first;
    fetch(0, now);
    for (int c0 = 0; c0 < steps; c0 += kChunkColumns) {
        fetch(c0 + kChunkColumns, next);
#pragma unroll
        for (int c = 0; c < kChunkColumns; ++c) column(c0 + c, c, now);
        now = next;
    }
}

}  // namespace alignscope::kernels::wavefront
