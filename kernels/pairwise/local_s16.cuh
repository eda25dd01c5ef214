// The local 16-bit pass of the intra families (G = 4 to 32 threads per group,
// two pairs per group in the halves of every register), forward and reverse:
// wavefront_s16's cells and per-thread query profile, laid out like the
// database scan (search/dbscan_kernel.cuh) so that a column costs little
// beyond its cells:
//  - every loop bound is the same for the whole warp (its longest pair sets
//    them; pairs arrive longest first, so little is wasted), so the shuffles
//    that hand rows down the wavefront are full-warp ones with no convergence
//    bookkeeping, and padding rows and columns are computed rather than
//    skipped (code `letters` scores 0; see the end-cell note below);
//  - columns go four at a time: thread 0 of a group reads four target
//    residues of each pair in one word (reversed in the reverse pass) and the
//    strip boundary one chunk ahead, and hands the residues down with the rows;
//  - the end cell is tracked without a branch. Per column, the maximum of the
//    thread's rows goes into a key per pair, value above 0xffff - j, so one
//    integer maximum keeps the larger score and, at an equal score, the
//    earlier column (the reference's order: score, then smaller j, then
//    smaller i). When a key rises, the column's values are kept (one LOP3 per
//    register, under a per-half mask); at the end of a strip whose keys rose
//    the kept column gives the first row. The branch this replaces ran in most
//    columns: along a homologous pair's alignment some lane of a warp raises
//    its best in nearly every column.
// Pads never win: a padding cell's value is that of a real cell with a smaller
// j or i (diagonal from the last real row or column, or a gap from a real cell
// minus a penalty), which the order prefers, and the groups' merge keeps it.
// The key holds j in 16 bits, so the host sends longer targets to
// wavefront_s16 (kLocalS16MaxColumns).
// Roofline (SASS of local_s16<4>, CUDA 13.0, sm_90): a column of 8 rows x 2
// pairs costs 133 instructions, 88 of them on the ALU pipe (36 DPX, the
// score and key PRMTs, the kept-column LOP3s, compares and selects), which
// issues a warp instruction every 2 cycles: 512 cells per 176 cycles per
// scheduler, about 2,700 GCUPS on an H200's 528 schedulers at 1.755 GHz.
// Measured: 2,616 (protein 300x300, score and end cell); ncu: ALU 82%.
#pragma once

#include "pairwise/wavefront_s16.cuh"

namespace alignscope::kernels::device {

// Targets longer than this go to wavefront_s16: the end-cell key holds
// 0xffff - j in 16 bits, which must not wrap for the columns of a strip and
// its padding (up to about this + G + 3). Ramp columns (j <= 0) do wrap it,
// harmlessly: their cells are 0, and a key of value 0 never counts.
constexpr int kLocalS16MaxColumns = 65000;

// Residues last[-c], last[-c-1], last[-c-2], last[-c-3] (the reverse pass's
// columns c .. c+3 of a sequence read backwards from `last`) in bytes 0..3,
// the pad letter past column n - 1. Two aligned loads and a byte reversal when
// all four are inside; otherwise byte by byte (once per pass).
__device__ __forceinline__ std::uint32_t reversed_word(const std::uint8_t* last, int c, int n, std::uint32_t pad_word) {
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

template <int G>
__global__ void __launch_bounds__(kS16BlockThreads, 4) local_s16(PassParams p) {
    using namespace s16x2;
    constexpr int R = 8;  // a thread's profile holds its 8 rows in two 32-bit words
    static_assert(G >= 4 && G <= 32 && kS16Profile<G>, "the intra families with a query profile");
    constexpr unsigned full = 0xffffffffu;
    __shared__ std::int16_t table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    extern __shared__ uint2 profile[];  // wavefront_s16's planes: (pair, letter) x thread
    const int dim = p.letters + 1;
    for (int k = threadIdx.x; k < dim * dim; k += blockDim.x)
        table[k] = static_cast<std::int16_t>(p.matrix[k] + p.gap_open);
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const int t = lane % G;
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    const long long first_pair = 2 * group;
    const bool has_pairs = first_pair < p.count;
    if (__all_sync(full, !has_pairs)) return;  // whole warps leave together

    const GroupPairs pairs = group_pairs(p, first_pair);
    const int(&m)[2] = pairs.m;
    const int(&n)[2] = pairs.n;
    const std::uint8_t* const(&q)[2] = pairs.q;
    const std::uint8_t* const(&s)[2] = pairs.s;
    const bool reverse = p.kind == PassKind::Reverse;
    const int dir = pairs.dir;
    const int stride = 32 / G;
    int2* boundary = has_pairs ? reinterpret_cast<int2*>(p.boundary) + p.tasks[first_pair].boundary_base : nullptr;

    const int o = p.gap_open;
    const word neg = pack(kNeg, kNeg), neg_extend = pack(-p.gap_extend, -p.gap_extend);
    // Every value is held plus bias = open (affine_cell_biased), so Ho + bias
    // of H = 0 is 0, and what the registers hold after a cell is H itself.
    const word zero = pack(o, o), minus_open_word = 0u - pack(o, o), one = static_cast<word>(p.one);
    constexpr int strip_rows = G * R;
    const int rows = m[0] > m[1] ? m[0] : m[1];
    const int cols = n[0] > n[1] ? n[0] : n[1];
    const int strips = (rows + strip_rows - 1) / strip_rows;
    const int warp_strips = __reduce_max_sync(full, static_cast<unsigned>(strips));
    const int warp_cols = __reduce_max_sync(full, static_cast<unsigned>(cols));
    const int steps = (warp_cols + G - 1 + 3) & ~3;
    const std::uint32_t pad = static_cast<std::uint32_t>(p.letters);
    const std::uint32_t pad_word = pad * 0x01010101u;
    const std::uint32_t pad_code = pad | (pad << 16);
    const bool top = t == 0;

    // Per pair (lo, hi): the key of the best cell so far (value << 16 |
    // 0xffff - j; 0xffff is "score 0", which never counts) and where it is.
    int key[2] = {0xffff, 0xffff};
    int best_score[2] = {0, 0}, best_i[2] = {0, 0}, best_j[2] = {0, 0};

    uint2* const my_profile = profile + threadIdx.x;
    for (int strip = 0; strip < warp_strips; ++strip) {
        const int row0 = strip * strip_rows + t * R;
        build_profile_s16<R>(my_profile, table, dim, row0, m, q, dir, p.letters);
        word h_left[R], e_run[R], kept[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            h_left[r] = 0;  // H = 0 in column 0
            e_run[r] = neg;
            kept[r] = 0;
        }
        const int strip_key[2] = {key[0], key[1]};
        word diag_in = 0, bottom_h = 0, bottom_f = neg;
        std::uint32_t code = pad_code;
        // This group's boundary: read in strips 1 .. strips-1, written in
        // 0 .. strips-2 (later strips of the warp are padding rows under an
        // H = 0 border, like strip 0).
        const bool read_up = top && strip > 0 && strip < strips;
        const bool write_down = t == G - 1 && strip + 1 < strips;

        // Thread 0's chunk: four residues of each pair and the boundary of
        // four columns, read one chunk ahead.
        std::uint32_t word_a = pad_word, word_b = pad_word;
        int2 up[4], next_up[4];
        std::uint32_t next_a = pad_word, next_b = pad_word;
        auto fetch = [&](int c0, std::uint32_t& wa, std::uint32_t& wb, int2* u) {
#pragma unroll
            for (int k = 0; k < 4; ++k) u[k] = make_int2(0, static_cast<int>(neg));
            if (!top) return;
            if (reverse) {
                wa = reversed_word(s[0], c0, n[0], pad_word);
                wb = reversed_word(s[1], c0, n[1], pad_word);
            } else {
                wa = c0 < n[0] ? reinterpret_cast<const std::uint32_t*>(s[0])[c0 >> 2] : pad_word;
                wb = c0 < n[1] ? reinterpret_cast<const std::uint32_t*>(s[1])[c0 >> 2] : pad_word;
            }
            if (read_up) {
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    if (c0 + k < cols) u[k] = boundary[static_cast<long long>(c0 + k + 1) * stride];
            }
        };
        fetch(0, word_a, word_b, up);

        for (int s4 = 0; s4 < steps; s4 += 4) {
            fetch(s4 + 4, next_a, next_b, next_up);
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                std::uint32_t code_in = __shfl_up_sync(full, code, 1, G);
                word ho_up = __shfl_up_sync(full, bottom_h, 1, G);
                word f_up = __shfl_up_sync(full, bottom_f, 1, G);
                if (top) {
                    code_in = __byte_perm(word_a, word_b, c | ((4 + c) << 8)) & 0x00ff00ffu;
                    ho_up = static_cast<word>(up[c].x);
                    f_up = static_cast<word>(up[c].y);
                }
                code = code_in;
                const int j = s4 + c - t + 1;
                const uint2 scores_a = my_profile[(code & 0xffffu) * kS16BlockThreads];
                const uint2 scores_b = my_profile[(dim + (code >> 16)) * kS16BlockThreads];
                const std::uint32_t sa[2] = {scores_a.x, scores_a.y}, sb[2] = {scores_b.x, scores_b.y};
                word above = ho_up, f = f_up, d = diag_in;
                diag_in = ho_up;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const word score = byte_pair_s16x2(sa[r / 4], sb[r / 4], r % 4);
                    const word left = h_left[r];
                    (void)affine_cell_biased(h_left[r], e_run[r], f, above, d, score, zero, neg_extend, minus_open_word,
                                             one);
                    d = left;
                    above = h_left[r];
                }
                bottom_h = above;
                bottom_f = f;
                if (write_down && j >= 1 && j <= cols)
                    boundary[static_cast<long long>(j) * stride] =
                        make_int2(static_cast<int>(bottom_h), static_cast<int>(bottom_f));

                // The end cell: keys of this column's maximum, per pair.
                word column_max = h_left[0];
#pragma unroll
                for (int r = 1; r + 1 < R; r += 2) column_max = max3(column_max, h_left[r], h_left[r + 1]);
                column_max = max(column_max, h_left[R - 1]);
                const std::uint32_t jcode = static_cast<std::uint32_t>(0xffff - j);
                const int key_lo = static_cast<int>(__byte_perm(column_max, jcode, 0x1054));
                const int key_hi = static_cast<int>(__byte_perm(column_max, jcode, 0x3254));
                const bool up_lo = key_lo > key[0], up_hi = key_hi > key[1];
                key[0] = up_lo ? key_lo : key[0];
                key[1] = up_hi ? key_hi : key[1];
                const word mask = (up_lo ? 0x0000ffffu : 0u) | (up_hi ? 0xffff0000u : 0u);
#pragma unroll
                for (int r = 0; r < R; ++r) kept[r] = (h_left[r] & mask) | (kept[r] & ~mask);
            }
            word_a = next_a;
            word_b = next_b;
#pragma unroll
            for (int k = 0; k < 4; ++k) up[k] = next_up[k];
        }
        // Where this strip raised a key: its kept column gives the first row.
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (key[h] == strip_key[h]) continue;
            const int value = key[h] >> 16;
            int first = R - 1;
#pragma unroll
            for (int r = R - 1; r >= 0; --r)
                if ((h == 0 ? lo(kept[r]) : hi(kept[r])) == value) first = r;
            best_score[h] = value;
            best_i[h] = row0 + first + 1;
            best_j[h] = 0xffff - (key[h] & 0xffff);
        }
        __syncwarp();  // this strip's boundary stores before the next strip's loads
    }

#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int delta = 1; delta < G; delta <<= 1) {
            const int os = __shfl_xor_sync(full, best_score[h], delta, G);
            const int oi = __shfl_xor_sync(full, best_i[h], delta, G);
            const int oj = __shfl_xor_sync(full, best_j[h], delta, G);
            if (better_end(os, oi, oj, best_score[h], best_i[h], best_j[h])) {
                best_score[h] = os;
                best_i[h] = oi;
                best_j[h] = oj;
            }
        }
    }
    if (t != 0) return;

#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (!pairs.active[h]) continue;
        // Every H is >= 0 and none above the best: the best is the largest.
        write_s16_result(p.kind, p.results[first_pair + h], true, !exact(best_score[h], p.max_score, o), best_score[h],
                         best_score[h], best_i[h], best_j[h]);
    }
}

}  // namespace alignscope::kernels::device
