// The database-scan kernel: alignment scores of query profiles against a
// length-sorted, GPU-resident database, score only. Local alignment
// (scan_tile, described below) and, as a template twin, global and
// semi-global alignment (scan_tile_bounded; profile layout, boundaries, end
// cells and saturation rule in db_scan_bounds.hpp).
//
// Layout of the work (CUDASW++4.0's scheme, written anew):
//  - A group of G threads aligns one database sequence; each thread holds R
//    consecutive query rows in registers, so a group covers a tile of G*R
//    rows. The database sequence streams across the columns: thread t works
//    on column s - t at step s (an anti-diagonal wavefront) and hands the H
//    and F of its bottom row, and the residue, to thread t+1 through warp
//    shuffles. Queries longer than a tile are done tile by tile; the bottom
//    row of a tile goes to a per-group scratch strip in global memory.
//  - Cells are 16-bit pairs (Cell16x2): two queries of similar length share
//    every register, and each recurrence step is one Hopper DPX instruction
//    (__viaddmax_s16x2, __viaddmax_s16x2_relu, __vimax_s16x2_relu,
//    __vimax3_s16x2). Cell32 is the same code on 32-bit scalars, for the
//    pairs whose 16-bit score may have saturated.
//  - The query profile of the tile sits in shared memory, laid out so that
//    the G threads of a group read consecutive 16-byte words (4 rows each).
//    Profile entries hold s + open, so the diagonal term is Ho + s' with
//    Ho = H - open, the quantity the gap recurrences need anyway:
//        E  = max(E - e, Ho_left)            viaddmax
//        F  = max(F - e, Ho_up)              viaddmax
//        H  = max(max(Ho_diag + s', 0), E, F) viaddmax + vimax3
//        Ho = H - o                          IMAD (see below)
//    plus one vimax3 per two rows for the running maximum: 4.5 DPX
//    instructions per 32-bit register, i.e. 2.25 per cell with 16-bit pairs,
//    and one IMAD. The DPX instructions share the SM's integer (ALU) pipe,
//    which issues at half the rate of the FMA pipe and is what bounds this
//    kernel (ncu: SM throughput 91 %, 0.57 instructions issued per cycle
//    and scheduler, before this change), so the subtraction of o goes to
//    the FMA pipe as a 32-bit IMAD with a multiplier of 1 the compiler cannot
//    see. A 32-bit subtraction of o from both halves is exact when the low
//    half cannot borrow from the high half, i.e. when every H's low half is
//    at least o; so the local kernel keeps every cell value plus a bias
//    B = o (H = 0 is held as B, the ReLU becomes a maximum with B, and the
//    best score loses B once at the end). Values are only compared and
//    offset by penalties, so the bias changes nothing else; it costs B of
//    the 16-bit range, which the host's saturation bound gives back.
//  - Saturation: with all H <= T = 32767 - max substitution score nothing can
//    wrap, so a 16-bit score above T is the only sign of overflow; the host
//    recomputes exactly those pairs with Cell32.
//  - Blocks are persistent and take work items from an atomic counter: an
//    item is one profile (query pair) and a run of GROUPS database sequences
//    of similar length, longest first (implicit items), or an explicit list of
//    (profile, sequence) entries for the recompute pass.
#pragma once

#include "common/dp_cell.hpp"
#include "common/warp_wavefront.cuh"
#include "search/db_scan_launch.hpp"

#include <cstdint>

namespace alignscope::kernels::search {

namespace device {

// The scan's cells: the arithmetic of common/dp_cell.hpp (one DPX
// instruction each), plus what only the scan has: its boundary constants
// (db_scan_bounds.hpp) and the bounded scan's replacement of one lane's value
// at a DP row 0. T and max2 are the all-against-all kernel's names for word
// and max.
struct Cell16x2 : dp::Cell16x2 {
    using T = word;
    static constexpr int pad = kPad16;
    static constexpr int neg = kNeg16;
    static __device__ __forceinline__ T max2(T a, T b) { return max(a, b); }
    static __device__ __forceinline__ T exclude(T v, bool lo, bool hi, T with) {
        if (lo) v = (v & 0xffff0000u) | (with & 0xffffu);
        if (hi) v = (v & 0xffffu) | (with & 0xffff0000u);
        return v;
    }
};

struct Cell32 : dp::Cell32 {
    using T = word;
    static constexpr int pad = kPad32;
    static constexpr int neg = kNeg32;
    static __device__ __forceinline__ T max2(T a, T b) { return max(a, b); }
    static __device__ __forceinline__ T exclude(T v, bool lo, bool, T with) { return lo ? with : v; }
};

template <typename T>
__device__ __forceinline__ T as_cell(std::uint32_t bits) {
    return static_cast<T>(bits);
}
template <typename T>
__device__ __forceinline__ std::uint32_t as_bits(T v) {
    return static_cast<std::uint32_t>(v);
}

// Words of the profile tile in shared memory for one letter: (R/4) 16-byte
// words per thread, thread-major within each word index, plus padding that
// keeps two 4-thread groups of a quarter-warp off the same banks.
template <int G, int R>
struct TileShape {
    static constexpr int words_per_thread = R / 4;
    static constexpr int plane_pad = ScanPolicy::plane_pad(G);  // in 16-byte words
    static constexpr int plane = words_per_thread * G + plane_pad;
    static constexpr int rows = G * R;
};

// Thread 0's read of a chunk of four columns (sequences are padded to 4 with
// the pad letter): the residues' word and, in later tiles, the strip's (Ho,
// F) pairs of those columns (`boundary` past the sequence's end).
__device__ __forceinline__ void fetch_chunk(int column, int n, const std::uint32_t* __restrict__ residues,
                                            const uint2* __restrict__ strip, bool first_tile, std::uint32_t pad_word,
                                            const uint4& boundary, std::uint32_t& w, uint4& a, uint4& b) {
    w = wavefront::aligned_residues(reinterpret_cast<const std::uint8_t*>(residues), column, n, pad_word);
    if (!first_tile) {
        if (column < n) {
            const uint4* from = reinterpret_cast<const uint4*>(strip + column);
            a = from[0];
            b = from[1];
        } else {
            a = boundary;
            b = boundary;
        }
    }
}

// The bottom row of a tile (thread G - 1's last register) into the group's
// strip for the next tile: columns up to the sequence's padded end, `past`
// beyond its last residue.
template <typename Cell>
__device__ __forceinline__ void store_strip_cell(uint2* __restrict__ strip, int column, int n, typename Cell::T ho,
                                                 typename Cell::T f, uint2 past) {
    if (column >= 0 && column < ((n + 3) & ~3)) strip[column] = column < n ? make_uint2(as_bits(ho), as_bits(f)) : past;
}

// What a thread takes from the thread above at one step: the residue it used
// and its bottom row (Ho, F), handed down by one shuffle each; thread 0 takes
// residue `q` of its chunk word instead, and the row above the tile: `top_ho`
// and F = neg above tile 0, the strip's (Ho, F) pair of column q of its chunk
// in later tiles. Every lane calls it at every step (the shuffles need them).
template <typename Cell, int G>
__device__ __forceinline__ void take_from_above(bool top, bool first_tile, int q, std::uint32_t code,
                                                typename Cell::T bottom_ho, typename Cell::T bottom_f,
                                                std::uint32_t word, const uint4& strip_a, const uint4& strip_b,
                                                typename Cell::T top_ho, typename Cell::T neg, std::uint32_t& code_in,
                                                typename Cell::T& ho_up, typename Cell::T& f_up) {
    using T = typename Cell::T;
    constexpr unsigned full = 0xffffffffu;
    code_in = wavefront::WavefrontGroup<G>::from_above(full, code);
    ho_up = as_cell<T>(wavefront::WavefrontGroup<G>::from_above(full, as_bits(bottom_ho)));
    f_up = as_cell<T>(wavefront::WavefrontGroup<G>::from_above(full, as_bits(bottom_f)));
    if (top) {
        code_in = wavefront::residue_of(word, q);
        if (first_tile) {
            ho_up = top_ho;
            f_up = neg;
        } else {
            const uint4& chunk = q < 2 ? strip_a : strip_b;
            ho_up = as_cell<T>((q & 1) ? chunk.z : chunk.x);
            f_up = as_cell<T>((q & 1) ? chunk.w : chunk.y);
        }
    }
}

// One group (G lanes) scans one tile of its profile against one database
// sequence of n residues (codes as 32-bit words, 4 per word). `steps` is the
// same for the whole warp (shuffles need every lane) and covers the longest
// sequence of the warp plus the wavefront's G - 1 steps, rounded to 4.
template <typename Cell, int G, int R>
__device__ __forceinline__ void scan_tile(const uint4* __restrict__ tile, const std::uint32_t* __restrict__ residues,
                                          int n, int steps, int lane_in_group, bool first_tile, bool last_tile,
                                          uint2* __restrict__ strip, int open, int extend, std::uint32_t pad,
                                          std::uint32_t one, typename Cell::T& best) {
    using T = typename Cell::T;
    using Shape = TileShape<G, R>;
    const T neg = Cell::splat(Cell::neg);
    const T minus_extend = Cell::splat(-extend);
    // Cells hold value + B with B = open (kLocalBias): zero is B, and H - o
    // is a plain 32-bit subtraction of o from both halves (no borrow, as
    // every biased H is >= o).
    const T zero = Cell::splat(open);
    const std::uint32_t minus_open_word = 0u - as_bits(Cell::splat(open));
    const T boundary_ho = Cell::splat(0);  // H = 0 (B) on the tile's upper and left borders: Ho = B - o
    const std::uint32_t pad_word = pad * 0x01010101u;

    T ho[R], e[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        ho[r] = boundary_ho;
        e[r] = neg;
    }
    T bottom_ho = boundary_ho, bottom_f = neg, diag_in = boundary_ho;
    std::uint32_t code = pad;  // columns before a thread's first real one are padding
    const bool top = lane_in_group == 0;
    const uint4* my_words = tile + lane_in_group;

    // Thread 0 reads residues 4 at a time (sequences are padded to 4 with the
    // pad letter), and in later tiles the (Ho, F) strip 4 columns at a time,
    // one chunk ahead of its use.
    std::uint32_t word = pad_word, next_word = pad_word;
    uint4 strip_a = {}, strip_b = {}, next_a = {}, next_b = {};
    const uint4 boundary_pair = make_uint4(as_bits(boundary_ho), as_bits(neg), as_bits(boundary_ho), as_bits(neg));
    if (top) fetch_chunk(0, n, residues, strip, first_tile, pad_word, boundary_pair, word, strip_a, strip_b);

    for (int s4 = 0; s4 < steps; s4 += 4) {
        if (top)
            fetch_chunk(s4 + 4, n, residues, strip, first_tile, pad_word, boundary_pair, next_word, next_a, next_b);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            std::uint32_t code_in;
            T ho_up, f_up;
            take_from_above<Cell, G>(top, first_tile, q, code, bottom_ho, bottom_f, word, strip_a, strip_b, boundary_ho,
                                     neg, code_in, ho_up, f_up);
            code = code_in;
            const uint4* words = my_words + static_cast<int>(code) * Shape::plane;
            T diag = diag_in;
            diag_in = ho_up;
            T f = f_up;
            T above = ho_up;
            T h_even = best;
#pragma unroll
            for (int k = 0; k < Shape::words_per_thread; ++k) {
                const uint4 w = words[k * G];
                const std::uint32_t score[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    const int r = 4 * k + u;
                    const T ho_diag = diag;
                    diag = ho[r];
                    // Ho = H - o as an IMAD, on the FMA pipe.
                    const T h =
                        dp::affine_cell_biased<Cell>(ho[r], e[r], f, above, ho_diag, as_cell<T>(score[u]), zero,
                                                     minus_extend, as_cell<T>(minus_open_word), as_cell<T>(one));
                    above = ho[r];
                    if (u & 1) best = Cell::max3(best, h_even, h);
                    else
                        h_even = h;
                }
            }
            bottom_ho = ho[R - 1];
            bottom_f = f;
            if (!last_tile && lane_in_group == G - 1)
                store_strip_cell<Cell>(strip, s4 + q - (G - 1), n, bottom_ho, bottom_f,
                                       make_uint2(as_bits(boundary_ho), as_bits(neg)));
        }
        word = next_word;
        strip_a = next_a;
        strip_b = next_b;
    }
}

// The bounded scan's DP column 0 of padded row `row` for both lanes.
template <typename Cell>
__device__ __forceinline__ typename Cell::T left_cell(int row, int z_lo, int z_hi, int open, int extend,
                                                      bool free_target_begin) {
    return Cell::pack(left_boundary(row, z_lo, open, extend, free_target_begin, Cell::neg),
                      left_boundary(row, z_hi, open, extend, free_target_begin, Cell::neg));
}

// Register (+1) of each lane's DP row 0 among this thread's R rows from
// `first_row`, 0 for none, in one word (low byte: lane lo; next: lane hi).
template <int R>
__device__ __forceinline__ unsigned zero_row_registers(int z_lo, int z_hi, int first_row) {
    unsigned zero_at = 0;
    const int at_lo = z_lo - first_row, at_hi = z_hi - first_row;
    if (at_lo >= 0 && at_lo < R) zero_at |= static_cast<unsigned>(at_lo + 1);
    if (at_hi >= 0 && at_hi < R) zero_at |= static_cast<unsigned>(at_hi + 1) << 8;
    return zero_at;
}

// The end cells of a column where the target's end is free: every row of this
// thread but a lane's DP row 0 (register `zero_at`, see zero_row_registers).
template <typename Cell, int R>
__device__ __forceinline__ typename Cell::T best_of_row_ends(typename Cell::T best, const typename Cell::T (&ho)[R],
                                                             unsigned zero_at, typename Cell::T neg) {
    // The comparisons with zero_at are loop-invariant: left to the compiler,
    // it hoists all 2R of them out of the column loop and spills. The empty
    // volatile asm keeps them here.
    unsigned at = zero_at;
    asm volatile("" : "+r"(at));
#pragma unroll
    for (int r = 0; r < R; ++r)
        best = Cell::max2(best, Cell::exclude(ho[r], (at & 0xffu) == static_cast<unsigned>(r + 1),
                                              (at >> 8) == static_cast<unsigned>(r + 1), neg));
    return best;
}

// The bounded (global and semi-global) scan of one tile: scan_tile's
// wavefront, shuffles, profile reads and strips, with the layout of
// db_scan_bounds.hpp. Differences: no ReLU (H = max(Ho_diag + s', E, F)); each
// register starts at its row's DP column 0 (left_boundary) and the wavefront's
// columns < 0 are skipped instead of computed, so the registers still hold it
// at column 0; tile 0's upper border is a void row (neg) instead of H = 0; and
// no running maximum in the inner loop: `best` (in Ho units) only takes the
// end cells the mode allows, at the columns where they are final:
//  - the last row (register R-1 of thread G-1 in the last tile) at column
//    n - 1 and after, or at every computed column when the query's end is
//    free (padding columns never beat (m, n));
//  - every row but the DP's row 0 (padded rows z_lo / z_hi of tile 0) at
//    column n - 1 when the target's end is free.
// Whether the 16-bit pass was exact is decided on the host from the lengths.
template <typename Cell, int G, int R>
__device__ __forceinline__ void scan_tile_bounded(const uint4* __restrict__ tile,
                                                  const std::uint32_t* __restrict__ residues, int n, int steps,
                                                  int lane_in_group, int tile_index, bool last_tile,
                                                  uint2* __restrict__ strip, int open, int extend, std::uint32_t pad,
                                                  int free_ends, int z_lo, int z_hi, typename Cell::T& best) {
    using T = typename Cell::T;
    using Shape = TileShape<G, R>;
    const T neg = Cell::splat(Cell::neg);
    const T minus_extend = Cell::splat(-extend);
    const T minus_open = Cell::splat(-open);
    const std::uint32_t pad_word = pad * 0x01010101u;
    const bool free_target_begin = (free_ends & kFreeTargetBegin) != 0;
    const bool first_tile = tile_index == 0;
    const int first_row = tile_index * Shape::rows + lane_in_group * R;  // padded row of register 0

    T ho[R], e[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        ho[r] = left_cell<Cell>(first_row + r, z_lo, z_hi, open, extend, free_target_begin);
        e[r] = neg;
    }
    // The thread below reads these at its column -1 / 0: this thread's last
    // row at DP column 0.
    T bottom_ho = ho[R - 1], bottom_f = neg;
    // Only thread 0 uses its own: the row above the tile at DP column 0.
    T diag_in = first_tile ? neg : left_cell<Cell>(first_row - 1, z_lo, z_hi, open, extend, free_target_begin);
    std::uint32_t code = pad;
    const bool top = lane_in_group == 0;
    const uint4* my_words = tile + lane_in_group;
    // Where this thread takes end cells: the last row from column
    // `row_from` on (all of them when the query's end is free, else n - 1 and
    // the padding columns after it, which cannot beat (m, n): see
    // db_scan_bounds.hpp; never for the other threads), and every row at
    // column `column_at` (n - 1 when the target's end is free, else never).
    constexpr int never = 0x7fffffff;
    const int row_from = last_tile && lane_in_group == G - 1 ? ((free_ends & kFreeQueryEnd) ? 0 : n - 1) : never;
    const int column_at = (free_ends & kFreeTargetEnd) ? n - 1 : -1;
    // The shorter query of a pair sits lower in a profile the longer one
    // sizes, so its row 0 may lie in any tile, not only the first. One word,
    // so the end capture costs one register across the loop.
    const unsigned zero_at = zero_row_registers<R>(z_lo, z_hi, first_row);

    std::uint32_t word = pad_word, next_word = pad_word;
    uint4 strip_a = {}, strip_b = {}, next_a = {}, next_b = {};
    const uint4 boundary_pair = make_uint4(as_bits(neg), as_bits(neg), as_bits(neg), as_bits(neg));
    if (top) fetch_chunk(0, n, residues, strip, first_tile, pad_word, boundary_pair, word, strip_a, strip_b);

    for (int s4 = 0; s4 < steps; s4 += 4) {
        if (top)
            fetch_chunk(s4 + 4, n, residues, strip, first_tile, pad_word, boundary_pair, next_word, next_a, next_b);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            std::uint32_t code_in;
            T ho_up, f_up;
            // Above padded row 0 (tile 0): a void row.
            take_from_above<Cell, G>(top, first_tile, q, code, bottom_ho, bottom_f, word, strip_a, strip_b, neg, neg,
                                     code_in, ho_up, f_up);
            code = code_in;
            T diag = diag_in;
            diag_in = ho_up;
            const int column = s4 + q - lane_in_group;
            if (column >= 0) {
                const uint4* words = my_words + static_cast<int>(code) * Shape::plane;
                T f = f_up;
                T above = ho_up;
#pragma unroll
                for (int k = 0; k < Shape::words_per_thread; ++k) {
                    const uint4 w = words[k * G];
                    const std::uint32_t score[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
                    for (int u = 0; u < 4; ++u) {
                        const int r = 4 * k + u;
                        e[r] = Cell::add_max(e[r], minus_extend, ho[r]);
                        f = Cell::add_max(f, minus_extend, above);
                        const T h = Cell::add_max(diag, as_cell<T>(score[u]), Cell::max2(e[r], f));
                        diag = ho[r];
                        ho[r] = Cell::add_max(h, minus_open, neg);
                        above = ho[r];
                    }
                }
                bottom_ho = ho[R - 1];
                bottom_f = f;
                if (column >= row_from) best = Cell::max2(best, ho[R - 1]);
                if (column == column_at) best = best_of_row_ends<Cell, R>(best, ho, zero_at, neg);
            }
            if (!last_tile && lane_in_group == G - 1)
                store_strip_cell<Cell>(strip, column, n, bottom_ho, bottom_f, make_uint2(as_bits(neg), as_bits(neg)));
        }
        word = next_word;
        strip_a = next_a;
        strip_b = next_b;
    }
}

// The kernel: persistent blocks take items until none is left.
template <typename Cell, int G, int R, bool Explicit, bool Local = true>
__global__ void __launch_bounds__(ScanPolicy::block_threads, ScanPolicy::min_blocks_per_sm(R))
    db_scan(const DbScanParams p) {
    using T = typename Cell::T;
    using Shape = TileShape<G, R>;
    constexpr int groups = ScanPolicy::block_threads / G;
    constexpr unsigned full = 0xffffffffu;
    extern __shared__ uint4 tile[];
    __shared__ int item_shared;

    const int lane_in_group = static_cast<int>(threadIdx.x) % G;
    const int group = static_cast<int>(threadIdx.x) / G;
    const int total = Explicit ? p.items : p.profile_count * p.chunks;
    const std::uint32_t pad = static_cast<std::uint32_t>(p.letters - 1);
    uint2* strip = p.scratch ? p.scratch + (static_cast<std::size_t>(blockIdx.x) * groups + group) *
                                               static_cast<std::size_t>(p.scratch_columns)
                             : nullptr;
    const int tile_words = p.letters * Shape::rows / 4;

    for (;;) {
        if (threadIdx.x == 0) item_shared = static_cast<int>(atomicAdd(p.next_item, 1u));
        __syncthreads();
        const int item = item_shared;
        __syncthreads();  // everyone has read it before thread 0 may write the next
        if (item >= total) break;
        int profile, position;
        if constexpr (Explicit) {
            profile = p.item_profile[item];
            position = p.item_positions[static_cast<std::size_t>(item) * groups + group];
        } else {
            profile = item / p.chunks;
            const int chunk = item % p.chunks;
            position = p.db_count - 1 - (chunk * groups + group);  // longest first
        }
        const int n = position >= 0 ? p.lengths[position] : 0;
        const int n_warp = __reduce_max_sync(full, n);
        const int steps = (((n_warp + 3) & ~3) + G - 1 + 3) & ~3;
        const std::uint32_t* residues =
            position >= 0 ? reinterpret_cast<const std::uint32_t*>(p.residues + p.starts[position]) : nullptr;
        const int tiles = p.profile_tiles[profile];
        const uint4* source = reinterpret_cast<const uint4*>(p.profiles + p.profile_offsets[profile]);
        T best = Cell::splat(Local ? p.open : Cell::neg);  // local: biased by B = open (scan_tile)
        int z_lo = 0, z_hi = 0;                            // bounded: padded row of each lane's DP row 0
        if constexpr (!Local) {
            const int padded = tiles * Shape::rows;
            z_lo = zero_row(padded, p.profile_lengths[2 * profile]);
            z_hi = zero_row(padded, p.profile_lengths[2 * profile + 1]);
        }
        for (int k = 0; k < tiles; ++k) {
            const uint4* from = source + static_cast<std::size_t>(k) * tile_words;
            for (int v = static_cast<int>(threadIdx.x); v < tile_words; v += ScanPolicy::block_threads) {
                const int letter = v / (Shape::rows / 4);
                const int c = v - letter * (Shape::rows / 4);
                const int thread = c / Shape::words_per_thread;
                const int word = c - thread * Shape::words_per_thread;
                tile[letter * Shape::plane + word * G + thread] = from[v];
            }
            __syncthreads();
            if (n_warp > 0) {
                if constexpr (Local)
                    scan_tile<Cell, G, R>(tile, residues, n, steps, lane_in_group, k == 0, k == tiles - 1, strip,
                                          p.open, p.extend, pad, static_cast<std::uint32_t>(p.one), best);
                else
                    scan_tile_bounded<Cell, G, R>(tile, residues, n, steps, lane_in_group, k, k == tiles - 1, strip,
                                                  p.open, p.extend, pad, p.free_ends, z_lo, z_hi, best);
            }
            __syncthreads();
        }
        if constexpr (Local) {
#pragma unroll
            for (int d = G / 2; d >= 1; d /= 2)
                best = Cell::max_relu(best, as_cell<T>(__shfl_xor_sync(full, as_bits(best), d, G)));
            best = Cell::add_max(best, Cell::splat(-p.open), Cell::splat(Cell::neg));  // remove the bias B
        } else {
#pragma unroll
            for (int d = G / 2; d >= 1; d /= 2)
                best = Cell::max2(best, as_cell<T>(__shfl_xor_sync(full, as_bits(best), d, G)));
            best = Cell::add_max(best, Cell::splat(p.open), Cell::splat(Cell::neg));  // Ho -> H
        }
        if (lane_in_group == 0 && position >= 0) {
            if constexpr (Explicit) p.out[static_cast<std::size_t>(item) * groups + group] = as_bits(best);
            else
                p.out[static_cast<std::size_t>(profile) * p.db_count + position] = as_bits(best);
        }
    }
}

}  // namespace device
}  // namespace alignscope::kernels::search
