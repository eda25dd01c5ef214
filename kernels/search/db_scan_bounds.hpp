// Global and semi-global database scans: the layout of their query profiles,
// their DP boundaries, and the rule that says when a 16-bit score is exact.
// Host and device code without CUDA headers: the scan kernel
// (db_scan_kernel.cuh), the scanner (cuda_scanner.cpp) and the CPU tests
// (tests/kernels/test_db_scan_bounds.cpp, which runs the same cell arithmetic
// on the host) share these functions.
//
// Layout. Local scans pad a query at the bottom of its last tile. A bounded
// (global or semi-global) scan needs the DP's last row m, so the query goes to
// the BOTTOM of its profile instead, with the DP's row 0 as a profile row of
// its own right above it, and "void" rows above that:
//
//     padded row x:  0 .. z-1   void rows (score kPad, left boundary neg)
//                    z          DP row 0   (score kPad, or -neg when the
//                                           query's begin is free; left Ho -o)
//                    z+1 .. P-1 DP rows 1..m  (score s + open)
//
// with P = tiles * tile rows >= m + 1 and z = P - m - 1 (beyond the first
// tile for the shorter query of a pair whose partner sizes P). Two queries
// of different lengths in one 16-bit register pair then both end on the last
// row of the last tile (register R-1 of the group's last thread), so the
// captures below never index registers by a run-time row. Void rows stay at
// exactly `neg` (their values come from neg through max, -e, and +kPad); row
// z then computes H(0, j) = -g(j) through its horizontal gap (E) from its left
// boundary H(0, 0) = 0, or H(0, j) = 0 = neg + (-neg) through its diagonal
// when the query's begin is free; F(0, j) = neg stands for minus infinity.
// Column 0 of the DP is each register's value before the thread's first real
// column (the kernel skips the wavefront's columns < 0 instead of computing
// them); it is -g(i) - open, or -open when the target's begin is free.
//
// Where the score is read (the reference's ends, reference_aligner.hpp):
//  - (m, n): the last row's register at column n - 1 of the last tile.
//  - query end free (any (m, j >= 1)): the last row's register at every
//    computed column, including the padding columns past n. They cannot win:
//    a padding column's letter scores kPad on every row, so a path into it
//    is horizontal and vertical moves after leaving column n at some (i0, n);
//    going straight down column n instead costs no more and ends at the legal
//    (m, n). With the query's begin free, row 0's 0 continues into the
//    padding columns, but a path from (0, j > n) down to row m is worth at
//    most -g(m) <= H(m, n).
//  - target end free (any (i >= 1, n)): every register at column n - 1 except
//    row z (H(0, n) is no candidate); void rows hold neg, below any real cell.
//
// The saturation rule (16-bit pairs; the same argument holds for 32-bit cells
// with their own neg and top). Cells hold Ho = H - open, clamped below at neg
// (Ho = max(H - o, neg)); E and F are maxima that include an Ho, so every
// stored value is >= neg. The additions are E - e, F - e, H - o (>= neg - 4095,
// as the scanner keeps penalties below 4096), and Ho + s' (>= neg + kPad =
// -32768 exactly, or neg + (-neg) = 0 on row z): none can wrap below. Above,
// the largest sum is Ho(i-1, j-1) + s' = H(i-1, j-1) + s. So a pass is exact
// (equal to the Gotoh recurrence in unbounded integers) when
//   (a) no real cell is clamped: every H of the DP (boundaries included) is at
//       least neg + open, and
//   (b) nothing wraps above: every H is at most top - max(0, max_score).
// Until the first clamp or wrap every computed value equals the exact one, so
// (a) and (b) on the exact values suffice. Padding and void cells may clamp:
// a real cell never depends on them (void rows feed row z only through a kPad
// diagonal, F = neg and neg + (-neg) = 0), and the padding columns' values
// derived from a clamp stay <= neg < any real cell, so they cannot win a max.
// The kernel does not measure (a) and (b): the host proves them per pair from
// the lengths (no instruction in the inner loop, unlike the local kernel's
// running maximum), with
//   lowest H >= max(-(g(m) + g(n)), min over the region of
//                   min_score * d - g(D - d)), d = min(i, j), D = max(i, j)
//     (for each cell the all-gap path and the path of d diagonals and one
//     gap, so the region's lowest H is at least the larger of the two
//     minima; both are
//     lower bounds of H(i, j) since H is a maximum over paths, and a free
//     begin only adds paths: with the query's begin free H(i, j) >= -g(i),
//     with the target's begin free H(i, j) >= -g(j));
//   highest H <= min(max_score * min(m, n), sum over the query of each
//     residue's best score, sum over the target of the same)
//     (a path has at most min(i, j) diagonal moves, each on its own query row
//     and target column, gaps cost >= 0, boundaries are <= 0).
// Pairs the rule cannot prove exact are rescored with 32-bit cells, whose
// own bound the scanner checks before it scans.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ALIGNSCOPE_SCAN_HD __host__ __device__ __forceinline__
#else
#define ALIGNSCOPE_SCAN_HD inline
#endif

namespace alignscope::kernels::search {

constexpr int kPad16 = -16384;  // profile score of padding (rows, letter): far below any real cell
constexpr int kNeg16 = -16384;  // "minus infinity" for E and F in 16 bits; the clamp of Ho
constexpr int kTop16 = 32767;
constexpr int kPad32 = -(1 << 28);
constexpr int kNeg32 = -(1 << 28);
constexpr int kTop32 = 0x7fffffff;

// Free end gaps of a semi-global scan, as bits of DbScanParams::free_ends.
constexpr int kFreeQueryBegin = 1;   // DP row 0 is zero
constexpr int kFreeQueryEnd = 2;     // the alignment may end anywhere on row m
constexpr int kFreeTargetBegin = 4;  // DP column 0 is zero
constexpr int kFreeTargetEnd = 8;    // the alignment may end anywhere on column n

// g(k): a gap of length k costs open + (k - 1) * extend; g(0) = 0.
ALIGNSCOPE_SCAN_HD long long gap_cost(long long open, long long extend, long long k) {
    return k > 0 ? open + (k - 1) * extend : 0;
}

// Profile rows a bounded scan needs for a query of m residues (row 0 too).
ALIGNSCOPE_SCAN_HD int bounded_rows(int m) { return m + 1; }

// Padded index of the DP's row 0 for a query of m residues in `padded` rows.
ALIGNSCOPE_SCAN_HD int zero_row(int padded, int m) { return padded - m - 1; }

// Ho = H(i, 0) - open of padded row x (the value a register holds before its
// first column), clamped at neg.
ALIGNSCOPE_SCAN_HD int left_boundary(int x, int z, int open, int extend, bool free_target_begin, int neg) {
    if (x < z) return neg;
    if (x == z) return -open;
    const long long h = free_target_begin ? 0 : -gap_cost(open, extend, x - z);
    const long long ho = h - open;
    return ho < neg ? neg : static_cast<int>(ho);
}

// Profile entry of padded row x for a real letter: s + open on the query's
// rows (`real` = s(q[x - z - 1], letter) + open), `pad` on void rows, and on
// row z kPad or -neg (then H(0, j) = neg - neg = 0: a free query begin).
ALIGNSCOPE_SCAN_HD int profile_entry(int x, int z, int real, bool free_query_begin, int pad, int neg) {
    if (x < z) return pad;
    if (x == z) return free_query_begin ? -neg : pad;
    return real;
}

// The lowest H of any cell (0 <= i <= m, 0 <= j <= n) of a bounded DP, from
// the paths in the file comment; min_score is the matrix's lowest score.
inline long long lowest_cell(long long m, long long n, long long open, long long extend, long long min_score,
                             int free_ends) {
    const long long low = m < n ? m : n, high = m < n ? n : m;
    const long long all_gaps = -(gap_cost(open, extend, m) + gap_cost(open, extend, n));
    // min over the region of B(d, D) = s * d - g(D - d) (s = min(min_score, 0)):
    // B falls as D grows, so D = high; along it B is affine in d while
    // D - d >= 1, i.e. on [0, min(low, high - 1)], and d = low = high is one
    // more point. The minimum is at one of those three.
    const long long s = min_score < 0 ? min_score : 0;
    auto along = [&](long long d) { return s * d - gap_cost(open, extend, high - d); };
    long long diagonal = along(0);
    const long long last_affine = low < high - 1 ? low : high - 1;
    if (last_affine > 0 && along(last_affine) < diagonal) diagonal = along(last_affine);
    if (along(low) < diagonal) diagonal = along(low);
    long long bound = all_gaps > diagonal ? all_gaps : diagonal;
    if (free_ends & kFreeQueryBegin) {
        const long long v = -gap_cost(open, extend, m);
        bound = bound > v ? bound : v;
    }
    if (free_ends & kFreeTargetBegin) {
        const long long v = -gap_cost(open, extend, n);
        bound = bound > v ? bound : v;
    }
    return bound;
}

// The highest H of any cell: at most max_score per diagonal move, at most
// min(m, n) of them, each on its own query row (query_best: the sum of the
// query residues' best scores, negatives as 0) and target column (target_best).
inline long long highest_cell(long long m, long long n, long long max_score, long long query_best,
                              long long target_best) {
    const long long s = max_score > 0 ? max_score : 0;
    long long bound = s * (m < n ? m : n);
    bound = bound < query_best ? bound : query_best;
    bound = bound < target_best ? bound : target_best;
    return bound > 0 ? bound : 0;
}

// The saturation rule of bounded scans (see the file comment): cells with
// `neg` as their clamp and `top` as their largest value hold the exact DP when
// no H is below neg + open and none above top - max_score.
inline bool bounded_exact(long long lowest, long long highest, long long open, long long max_score, long long neg,
                          long long top) {
    const long long s = max_score > 0 ? max_score : 0;
    return lowest >= neg + open && highest + s <= top;
}

// Whether the 16-bit scans take a scheme at all: they hold s + open in the
// profile and H - open in the cells, and subtract penalties from values near
// kNeg16; every such value must stay far from the 16-bit ends (the argument
// above takes penalties below 4096). Schemes past it scan with 32-bit cells.
inline bool scan16_takes_scheme(long long min_score, long long max_score, long long open, long long extend) {
    const long long low = min_score < 0 ? -min_score : min_score;
    const long long reach = (low > max_score ? low : max_score) + open;
    return reach < 4096 && extend < 4096 && open >= 0 && extend >= 0;
}

// Local scans hold every cell plus a bias of open (db_scan_kernel.cuh), so the
// largest sum is H + max_score + open: exact when that stays within `top`.
// From below a local cell is >= 0 and E, F >= -open: far above kNeg32 for
// any accepted penalty, and the 16-bit case is the saturation bound's.
inline bool local_exact(long long highest, long long open, long long max_score, long long top) {
    const long long s = max_score > 0 ? max_score : 0;
    return highest + s + open <= top;
}

// Whether the 32-bit cells hold the DP of a query of m residues against a
// sequence of n exactly (the rescoring pass and 32-bit scans): local from
// above only, bounded modes by bounded_exact with kNeg32 and kTop32.
// query_best and target_best are the per-residue best-score sums of
// highest_cell; pass a large value where they are not known. Pairs it
// refuses are scored on the host in 64 bits.
inline bool exact32(bool local, long long m, long long n, long long open, long long extend, long long min_score,
                    long long max_score, long long query_best, long long target_best, int free_ends) {
    const long long highest = highest_cell(m, n, max_score, query_best, target_best);
    if (local) return local_exact(highest, open, max_score, kTop32) && open < (1LL << 27) && extend < (1LL << 27);
    const long long lowest = lowest_cell(m, n, open, extend, min_score, free_ends);
    return bounded_exact(lowest, highest, open, max_score, kNeg32, kTop32);
}

}  // namespace alignscope::kernels::search
