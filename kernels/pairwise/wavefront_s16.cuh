// The 16-bit pairwise pass: the wavefront of wavefront_s32.cuh with two pairs
// per group, pair A in the low and pair B in the high half of every register,
// the cell update in Hopper DPX instructions on Ho = H - open (common/dp_cell.hpp; local
// passes hold every value plus a bias of open, dp::affine_cell_biased). Forward and reverse
// passes only; the traceback pass runs at 32 bits. Every pair's result says
// whether the pass may have saturated (Cell16x2::exact); the host recomputes
// those pairs with the s32 kernel, so no wrong score leaves the device.
// The local passes of the intra families (G >= 4) run in local_s16.cuh (intra_s16_chunked), which
// shares the cells and the profile; this kernel keeps the bounded modes, the
// inter family (G = 1) and local targets too long for intra_s16_chunked's end keys.
#pragma once

#include "pairwise/wavefront_s32.cuh"

namespace alignscope::kernels::device {

// Threads per block of the 16-bit passes: the stride of the profile planes.
constexpr int kS16BlockThreads = PairwiseCommonPolicy::kBlockThreads;

// Whether the 16-bit pass of group size G reads its scores from a per-thread
// query profile (below) rather than straight from the matrix (the policy says
// why).
template <int G>
constexpr bool kS16Profile = PairwisePolicy<G>::kS16Profile;

// Dynamic shared memory of a 16-bit pass: each thread's query profile, for
// both of its pairs and every letter (matrix letters and the pad letter) the
// scores s + open of its kS16Rows rows as signed bytes.
template <int G>
constexpr unsigned s16_profile_bytes(int letters) {
    return kS16Profile<G> ? 2u * static_cast<unsigned>(letters + 1) * kS16BlockThreads *
                                static_cast<unsigned>(PairwisePolicy<G>::kS16Rows)
                          : 0u;
}

// (a[k], b[k]) of two words of four signed bytes, sign-extended into the two
// 16-bit halves of one register: one PRMT (the selector's high bit of each
// nibble replicates the chosen byte's sign).
// k is a constant once the row loop is unrolled, so the selector becomes an
// immediate.
__device__ __forceinline__ std::uint32_t byte_pair_s16x2(std::uint32_t a, std::uint32_t b, int k) {
    const std::uint32_t selector = k | ((8 | k) << 4) | ((4 + k) << 8) | ((12 + k) << 12);
    std::uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
    return d;
}

// The two pairs of a 16-bit group (pairs first_pair and first_pair + 1) as a
// pass sees them: m x n cells whose letters are read at q[h][dir * (i - 1)] and
// s[h][dir * (j - 1)] (the reverse pass reads the prefixes up to the end cell
// backwards). A missing pair, or one the reverse pass skips (empty or
// saturated), is inactive and has no cells.
struct GroupPairs {
    int m[2] = {0, 0}, n[2] = {0, 0};
    const std::uint8_t* q[2] = {nullptr, nullptr};
    const std::uint8_t* s[2] = {nullptr, nullptr};
    bool active[2] = {false, false};
    int dir = 1;
};

__device__ __forceinline__ GroupPairs group_pairs(const PassParams& p, long long first_pair) {
    GroupPairs g;
    const bool reverse = p.kind == PassKind::Reverse;
    g.dir = reverse ? -1 : 1;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        g.q[h] = g.s[h] = p.residues;
        const long long index = first_pair + h;
        if (index >= p.count) continue;
        const PairTask& task = p.tasks[index];
        const PairResult& result = p.results[index];
        if (reverse) {
            if (result.flags & (kEmpty | kSaturated)) continue;
            g.m[h] = result.query_end;
            g.n[h] = result.target_end;
            g.q[h] = p.residues + task.query_offset + g.m[h] - 1;
            g.s[h] = p.residues + task.target_offset + g.n[h] - 1;
        } else {
            g.m[h] = task.query_length;
            g.n[h] = task.target_length;
            g.q[h] = p.residues + task.query_offset;
            g.s[h] = p.residues + task.target_offset;
        }
        g.active[h] = true;
    }
    return g;
}

// What a 16-bit pass hands back for one pair: the forward pass its score and
// end cell (or empty, for a local score of 0), the reverse pass the begin cell
// (end cell of the reversed prefixes) or the mismatch flag; either marks a
// pair whose pass may have saturated for the 32-bit recompute.
__device__ __forceinline__ void write_s16_result(PassKind kind, PairResult& result, bool local, bool saturated,
                                                 int largest, int end_score, int end_i, int end_j) {
    if (kind == PassKind::Forward) {
        result.score = end_score;
        result.flags = saturated ? kSaturated : 0;
        result.max_seen = largest;
        result.cigar_offset = result.cigar_count = 0;
        if (local && end_score == 0 && !saturated) {
            result.flags |= kEmpty;
            result.query_end = result.target_end = result.query_begin = result.target_begin = 0;
        } else {
            result.query_end = end_i;
            result.target_end = end_j;
            result.query_begin = 1;
            result.target_begin = 1;
        }
    } else if (saturated) {
        result.flags |= kSaturated;
    } else {
        if (end_score != result.score) result.flags |= kPassMismatch;
        result.query_begin = result.query_end - end_i + 1;
        result.target_begin = result.target_end - end_j + 1;
    }
}

// A thread's query profile for its R = 8 rows from row0 + 1 (both pairs of its
// group, every letter of the table of s + open): plane (h, c) of `profile`,
// which points at the thread's own column of the block's planes. Rows past a
// pair's m take the pad letter.
template <int R>
__device__ __forceinline__ void build_profile_s16(uint2* profile, const std::int16_t* table, int dim, int row0,
                                                  const int (&m)[2], const std::uint8_t* const (&q)[2], int dir,
                                                  int pad) {
    static_assert(R == 8, "8 rows in two 32-bit words of bytes");
    int qa[R], qb[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
        qa[r] = i <= m[0] ? q[0][dir * (i - 1)] : pad;
        qb[r] = i <= m[1] ? q[1][dir * (i - 1)] : pad;
    }
    for (int c = 0; c < dim; ++c) {
        const std::int16_t* column = table + dim * c;
        std::uint32_t a[2] = {0, 0}, b[2] = {0, 0};
#pragma unroll
        for (int r = 0; r < R; ++r) {
            a[r / 4] |= (static_cast<std::uint32_t>(column[qa[r]]) & 0xffu) << (8 * (r % 4));
            b[r / 4] |= (static_cast<std::uint32_t>(column[qb[r]]) & 0xffu) << (8 * (r % 4));
        }
        profile[c * kS16BlockThreads] = make_uint2(a[0], a[1]);
        profile[(dim + c) * kS16BlockThreads] = make_uint2(b[0], b[1]);
    }
}

// The cells of one column j of a thread's R rows for both pairs: scores s +
// open from the thread's profile words (sa, sb) or from the table's columns
// of the two target letters at the rows' byte offsets; H and F come in from
// the row above (above, f), d is Ho(row0, j-1), and they leave as the bottom
// row's. Bounded passes track each row's maximum and its first column, inside
// each pair's own columns only.
template <int R, bool Local, bool use_profile, int K>
__device__ __forceinline__ void s16_cells(dp::Cell16x2::word (&h_left)[R], dp::Cell16x2::word (&e_run)[R],
                                          dp::Cell16x2::word (&row_max)[R], int (&col_a)[R], int (&col_b)[R],
                                          const std::uint32_t (&sa)[2], const std::uint32_t (&sb)[2],
                                          const char* column_a, const char* column_b, const int (&qoff_a)[K],
                                          const int (&qoff_b)[K], int j, const int (&n)[2], dp::Cell16x2::word& above,
                                          dp::Cell16x2::word& f, dp::Cell16x2::word d, dp::Cell16x2::word neg_open,
                                          dp::Cell16x2::word neg_extend, dp::Cell16x2::word zero,
                                          dp::Cell16x2::word minus_open_word, dp::Cell16x2::word one) {
    using C = dp::Cell16x2;
    using word = C::word;
    const word neg = C::pack(C::kNeg, C::kNeg);
    // Bounded passes track rows only inside each pair's own columns.
    const word inside = (j <= n[0] ? 0x0000ffffu : 0u) | (j <= n[1] ? 0xffff0000u : 0u);
#pragma unroll
    for (int r = 0; r < R; ++r) {
        word score;
        if constexpr (use_profile) score = byte_pair_s16x2(sa[r / 4], sb[r / 4], r % 4);
        else
            score = C::pack(*reinterpret_cast<const std::int16_t*>(column_a + qoff_a[r]),
                            *reinterpret_cast<const std::int16_t*>(column_b + qoff_b[r]));
        const word left = h_left[r];
        word h;
        if constexpr (Local)
            h = dp::affine_cell_biased<C>(h_left[r], e_run[r], f, above, d, score, zero, neg_extend, minus_open_word,
                                          one);
        else
            h = dp::affine_cell<C, false>(h_left[r], e_run[r], f, above, d, score, neg_open, neg_extend);
        d = left;
        above = h_left[r];
        if constexpr (!Local) {
            bool keep_hi, keep_lo;
            const word tracked = (h & inside) | (neg & ~inside);
            row_max[r] = C::max_keep(row_max[r], tracked, keep_hi, keep_lo);
            col_a[r] = keep_lo ? col_a[r] : j;
            col_b[r] = keep_hi ? col_b[r] : j;
        }
    }
}

// The local end cell, tracked per column rather than per cell: the column's
// maximum over this thread's rows (three-way DPX maxima), and only when it
// beats the best so far (best_word: best - open + bias of both pairs), or
// equals it in an earlier column than tie_column (a later strip), a scalar
// look for its first row. Cells of padding rows and columns (code `letters`,
// score 0) never win: each equals at most a real cell above or to the left of
// it, which the (score, smaller j, smaller i) order prefers.
template <int R>
__device__ __forceinline__ void s16_local_column_end(const dp::Cell16x2::word (&h_left)[R], int j, int row0, int o,
                                                     int bias, int (&best_score)[2], int (&best_i)[2], int (&best_j)[2],
                                                     dp::Cell16x2::word& best_word, int& tie_column) {
    using C = dp::Cell16x2;
    C::word column_max = h_left[0];
#pragma unroll
    for (int r = 1; r + 1 < R; r += 2) column_max = C::max3(column_max, h_left[r], h_left[r + 1]);
    if constexpr (R % 2 == 0) column_max = C::max(column_max, h_left[R - 1]);
    const bool raised = C::max(column_max, best_word) != best_word;
    const bool earlier_tie = j < tie_column && C::equal_any(column_max, best_word);
    if (raised || earlier_tie) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int value = C::lane(column_max, h) + o - bias;
            if (value > best_score[h] || (value == best_score[h] && value > 0 && j < best_j[h])) {
                int first = R - 1;
#pragma unroll
                for (int r = R - 1; r >= 0; --r)
                    if (C::lane(h_left[r], h) + o - bias == value) first = r;
                best_score[h] = value;
                best_i[h] = row0 + first + 1;
                best_j[h] = j;
            }
        }
        best_word = C::pack(best_score[0] - o + bias, best_score[1] - o + bias);
        tie_column = best_j[0] > best_j[1] ? best_j[0] : best_j[1];
    }
}

// After a bounded strip, each pair's candidates from its rows: the largest H
// met (the saturation rule), the corner, the last row's maximum and the last
// column's first maximum.
template <int R>
__device__ __forceinline__ void s16_strip_ends(const dp::Cell16x2::word (&row_max)[R], const int (&col_a)[R],
                                               const int (&col_b)[R], const dp::Cell16x2::word (&last_col)[R], int row0,
                                               const int (&m)[2], int o, bool last_row_free, int (&best_score)[2],
                                               int (&best_i)[2], int (&best_j)[2], int (&col_best)[2], int (&col_i)[2],
                                               int (&corner)[2], int (&largest)[2]) {
    using C = dp::Cell16x2;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            if (i > m[h]) continue;
            const int value = C::lane(row_max[r], h);
            const int col = h == 0 ? col_a[r] : col_b[r];
            const int last = C::lane(last_col[r], h) + o;
            largest[h] = value > largest[h] ? value : largest[h];
            if (i == m[h]) {
                corner[h] = last;
                if (last_row_free) {
                    best_score[h] = value;
                    best_i[h] = i;
                    best_j[h] = col;
                }
            }
            if (last > col_best[h]) {
                col_best[h] = last;
                col_i[h] = i;
            }
        }
    }
}

// The query letters of a strip's rows as a 16-bit pass reads them: the
// thread's profile for its rows (use_profile), or the rows' byte offsets into
// a table column.
template <int R, bool use_profile, int K>
__device__ __forceinline__ void s16_strip_letters(int (&qoff_a)[K], int (&qoff_b)[K], uint2* my_profile,
                                                  const std::int16_t* table, int dim, int row0, const int (&m)[2],
                                                  const std::uint8_t* const (&q)[2], int dir, int pad) {
    if constexpr (!use_profile) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = row0 + r + 1;
            qoff_a[r] = 2 * (i <= m[0] ? q[0][dir * (i - 1)] : pad);
            qoff_b[r] = 2 * (i <= m[1] ? q[1][dir * (i - 1)] : pad);
        }
    } else {
        build_profile_s16<R>(my_profile, table, dim, row0, m, q, dir, pad);
    }
}

// One strip of a 16-bit pass: both pairs' rows row0+1 .. row0+R swept across
// the group's columns (thread t on column k - t + 1 at step k), the upper
// boundary from row 0 or from the strip above (thread 0), the bottom row
// handed down and stored for the strip below. Per pair h the candidates:
// best (local, or the last row's maximum), the last column's maximum, the
// corner and the largest H. (Plain arrays, not structs: with structs nvcc
// gave these kernels up to 4 registers more.)
template <int G, int R, bool Local>
__device__ __forceinline__ void s16_strip(const PassParams& p, const std::int16_t* table, uint2* my_profile, int strip,
                                          int t, unsigned mask, const GroupPairs& pairs, int bias, bool zero_row0,
                                          bool zero_col0, int cols, int strips, int steps, int2* boundary,
                                          dp::Cell16x2::word neg_open, dp::Cell16x2::word neg_extend,
                                          dp::Cell16x2::word zero, dp::Cell16x2::word minus_open_word,
                                          dp::Cell16x2::word one, int (&best_score)[2], int (&best_i)[2],
                                          int (&best_j)[2], int (&col_best)[2], int (&col_i)[2], int (&corner)[2],
                                          int (&largest)[2], dp::Cell16x2::word& best_word, int& tie_column) {
    using C = dp::Cell16x2;
    using word = C::word;
    const int(&m)[2] = pairs.m;
    const int(&n)[2] = pairs.n;
    const std::uint8_t* const(&q)[2] = pairs.q;
    const std::uint8_t* const(&s)[2] = pairs.s;
    const int dir = pairs.dir;
    const int o = p.gap_open, e = p.gap_extend;
    const word neg = C::pack(C::kNeg, C::kNeg);
    constexpr int strip_rows = G * R;
    using Group = wavefront::WavefrontGroup<G>;
    const int stride = Group::per_warp;  // boundary slots of the groups of a warp interleave
    const int dim = p.letters + 1;
    constexpr bool use_profile = kS16Profile<G>;
    auto boundary_value = [&](bool zero_, int k) { return zero_ ? 0 : -gap_cost(o, e, k); };
    auto boundary_ho = [&](bool zero_, int k) {
        const int v = boundary_value(zero_, k) - o + bias;
        return C::pack(v, v);
    };
    const int row0 = strip * strip_rows + t * R;
    constexpr int kOffsets = use_profile ? 1 : R;
    int qoff_a[kOffsets], qoff_b[kOffsets];  // without the profile: byte offsets into a table column
    s16_strip_letters<R, use_profile>(qoff_a, qoff_b, my_profile, table, dim, row0, m, q, dir, p.letters);
    word h_left[R], e_run[R], row_max[R], last_col[R];  // h_left and last_col hold Ho = H - open (+ bias)
    int col_a[R], col_b[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
        h_left[r] = boundary_ho(zero_col0, i);
        e_run[r] = neg;
        row_max[r] = neg;
        last_col[r] = neg;
        col_a[r] = col_b[r] = 0;
    }
    word diag = row0 == 0 ? C::pack(bias - o, bias - o) : boundary_ho(zero_col0, row0);
    word up_h = 0, up_f = neg, bottom_h = 0, bottom_f = neg;
    // What the coming column needs from global memory, read one column
    // ahead so that the loads' latency hides behind a column of cells:
    // both target residues, and (thread 0 of a later strip) the boundary.
    int next_ta = p.letters, next_tb = p.letters;
    int2 next_up = make_int2(0, static_cast<int>(neg));
    auto fetch = [&](int column) {
        if (column < 1 || column > cols) return;
        next_ta = column <= n[0] ? s[0][dir * (column - 1)] : p.letters;
        next_tb = column <= n[1] ? s[1][dir * (column - 1)] : p.letters;
        if (t == 0 && strip > 0) next_up = boundary[static_cast<long long>(column) * stride];
    };
    fetch(1 - t);
    for (int k = 0; k < steps; ++k) {
        // WavefrontGroup::column(k, t), written out: with the call nvcc gave
        // the 16-bit kernels up to 4 registers more.
        const int j = k - t + 1;
        const int ta = next_ta, tb = next_tb;
        const int2 up_word = next_up;
        fetch(j + 1);
        if (t == 0 && j <= cols) {
            if (strip == 0) {
                up_h = boundary_ho(zero_row0, j);
                up_f = neg;
            } else {
                up_h = static_cast<word>(up_word.x);
                up_f = static_cast<word>(up_word.y);
            }
        }
        if (j >= 1 && j <= cols) {
            std::uint32_t sa[2] = {0, 0}, sb[2] = {0, 0};
            const char* column_a = nullptr;
            const char* column_b = nullptr;
            if constexpr (use_profile) {
                const uint2 scores_a = my_profile[ta * kS16BlockThreads];
                const uint2 scores_b = my_profile[(dim + tb) * kS16BlockThreads];
                sa[0] = scores_a.x;
                sa[1] = scores_a.y;
                sb[0] = scores_b.x;
                sb[1] = scores_b.y;
            } else {
                column_a = reinterpret_cast<const char*>(table + dim * ta);
                column_b = reinterpret_cast<const char*>(table + dim * tb);
            }
            word above = up_h, f = up_f;
            s16_cells<R, Local, use_profile>(h_left, e_run, row_max, col_a, col_b, sa, sb, column_a, column_b, qoff_a,
                                             qoff_b, j, n, above, f, diag, neg_open, neg_extend, zero, minus_open_word,
                                             one);
            if constexpr (Local)
                s16_local_column_end<R>(h_left, j, row0, o, bias, best_score, best_i, best_j, best_word, tie_column);
            if constexpr (!Local) {
                // Column n of each pair: its last column and corner.
                if (j == n[0] || j == n[1]) {
                    const word take = (j == n[0] ? 0x0000ffffu : 0u) | (j == n[1] ? 0xffff0000u : 0u);
#pragma unroll
                    for (int r = 0; r < R; ++r) last_col[r] = (h_left[r] & take) | (last_col[r] & ~take);
                }
            }
            diag = up_h;
            bottom_h = above;
            bottom_f = f;
            if (t == G - 1 && strip + 1 < strips)
                boundary[static_cast<long long>(j) * stride] =
                    make_int2(static_cast<int>(bottom_h), static_cast<int>(bottom_f));
        }
        if constexpr (G > 1) {
            up_h = Group::from_above(mask, bottom_h);
            up_f = Group::from_above(mask, bottom_f);
        }
    }
    if constexpr (!Local)
        s16_strip_ends<R>(row_max, col_a, col_b, last_col, row0, m, o, p.last_row_free, best_score, best_i, best_j,
                          col_best, col_i, corner, largest);
}

// The group's candidates for both pairs in the reference's order, on every
// thread (all of them, also in local passes: without the unused shuffles nvcc
// gave the local kernels more registers).
template <int G>
__device__ __forceinline__ void s16_merge_group_ends(unsigned mask, int (&best_score)[2], int (&best_i)[2],
                                                     int (&best_j)[2], int (&col_best)[2], int (&col_i)[2],
                                                     int (&corner)[2], int (&largest)[2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if constexpr (G > 1) {
#pragma unroll
            for (int delta = 1; delta < G; delta <<= 1) {
                const int os = group_shfl_xor<G>(mask, best_score[h], delta);
                const int oi = group_shfl_xor<G>(mask, best_i[h], delta);
                const int oj = group_shfl_xor<G>(mask, best_j[h], delta);
                if (better_end(os, oi, oj, best_score[h], best_i[h], best_j[h])) {
                    best_score[h] = os;
                    best_i[h] = oi;
                    best_j[h] = oj;
                }
                const int oc = group_shfl_xor<G>(mask, col_best[h], delta);
                const int oci = group_shfl_xor<G>(mask, col_i[h], delta);
                if (oc > col_best[h] || (oc == col_best[h] && oci < col_i[h])) {
                    col_best[h] = oc;
                    col_i[h] = oci;
                }
                const int oc2 = group_shfl_xor<G>(mask, corner[h], delta);
                corner[h] = oc2 > corner[h] ? oc2 : corner[h];
                const int ol = group_shfl_xor<G>(mask, largest[h], delta);
                largest[h] = ol > largest[h] ? ol : largest[h];
            }
        }
    }
}

// The whole 16-bit pass of one group of two pairs (kernels below): the
// pairs, the strips, the group's candidates and each pair's result.
template <int G, int R, bool Local>
__device__ __forceinline__ void s16_pass(const PassParams& p) {
    using C = dp::Cell16x2;
    using word = C::word;
    static_assert(R == 8, "a thread's profile holds its 8 rows in two 32-bit words");
    __shared__ std::int16_t table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    // Plane (h, c) holds, for every thread of the block, the bytes s(c, row) +
    // open of pair h's query rows of the thread in this strip; a thread reads
    // and writes only its own column of it (no synchronisation), and the 32
    // lanes of a warp always meet 32 distinct bank pairs whatever letters they
    // read. s16_can_hold() keeps s + open within a signed byte.
    extern __shared__ uint2 profile[];
    const int dim = p.letters + 1;
    // s + open: the cells run on Ho = H - open (dp::affine_cell).
    for (int k = threadIdx.x; k < dim * dim; k += blockDim.x)
        table[k] = static_cast<std::int16_t>(p.matrix[k] + p.gap_open);
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const int t = wavefront::WavefrontGroup<G>::thread(lane);
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    const long long first_pair = 2 * group;
    if (first_pair >= p.count) return;  // whole groups leave together
    const unsigned mask = wavefront::WavefrontGroup<G>::mask(lane);

    // Both lanes' problems; a missing or skipped pair B has no rows.
    const GroupPairs pairs = group_pairs(p, first_pair);
    const int(&m)[2] = pairs.m;
    const int(&n)[2] = pairs.n;
    const bool(&active)[2] = pairs.active;
    const PairTask task0 = p.tasks[first_pair];

    const int o = p.gap_open, e = p.gap_extend;
    const word neg_open = C::pack(-o, -o), neg_extend = C::pack(-e, -e);
    // Local passes hold every value plus bias = open (dp::affine_cell_biased).
    const int bias = Local ? o : 0;
    const word zero = C::pack(bias, bias), minus_open_word = 0u - C::pack(o, o), one = static_cast<word>(p.one);
    const bool zero_row0 = Local || p.row0_free;
    const bool zero_col0 = Local || p.col0_free;
    constexpr int strip_rows = G * R;
    const int rows = m[0] > m[1] ? m[0] : m[1];
    const int cols = n[0] > n[1] ? n[0] : n[1];
    const int strips = (rows + strip_rows - 1) / strip_rows;
    const int steps = cols + G - 1;
    int2* boundary = reinterpret_cast<int2*>(p.boundary) + task0.boundary_base;

    int best_score[2], best_i[2] = {0, 0}, best_j[2] = {0, 0};
    int col_best[2] = {kNegS32, kNegS32}, col_i[2] = {0, 0}, corner[2] = {kNegS32, kNegS32};
    int largest[2] = {C::kNeg, C::kNeg};
    best_score[0] = best_score[1] = Local ? 0 : kNegS32;
    word best_word = C::pack(bias - o, bias - o);  // local: best_score - open + bias of both lanes, packed
    int tie_column = 0;                            // local: the larger best_j; an equal maximum before it may win

    uint2* const my_profile = profile + threadIdx.x;
    for (int strip = 0; strip < strips; ++strip) {
        s16_strip<G, R, Local>(p, table, my_profile, strip, t, mask, pairs, bias, zero_row0, zero_col0, cols, strips,
                               steps, boundary, neg_open, neg_extend, zero, minus_open_word, one, best_score, best_i,
                               best_j, col_best, col_i, corner, largest, best_word, tie_column);
        if constexpr (G > 1) __syncwarp(mask);
    }
    if constexpr (Local) {
        // Every H is >= 0 and none above the best: the best is the largest.
        largest[0] = best_score[0];
        largest[1] = best_score[1];
    }

    s16_merge_group_ends<G>(mask, best_score, best_i, best_j, col_best, col_i, corner, largest);
    if (t != 0) return;

#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (!active[h]) continue;
        const bool saturated = !C::exact(largest[h], p.max_score, bias);
        EndCell end{best_score[h], best_i[h], best_j[h]};
        if constexpr (!Local) {
            EndCandidates c;
            c.best_score = best_score[h];
            c.best_j = best_j[h];
            c.col_best = col_best[h];
            c.col_i = col_i[h];
            c.corner = corner[h];
            end = bounded_end(p, c, m[h], n[h], zero_row0, zero_col0);
        }
        write_s16_result(p.kind, p.results[first_pair + h], Local, saturated, largest[h], end.score, end.i, end.j);
    }
}

// The kernels, named in the kernel grammar's family and width (the group and
// mode are template arguments): one thread per two pairs, and a group of G.
template <class Mode>
__global__ void __launch_bounds__(PairwiseInterPolicy::kBlockThreads) inter_s16(PassParams p) {
    static_assert(!Mode::trace, "the traceback pass runs at 32 bits");
    s16_pass<1, PairwiseInterPolicy::kS16Rows, Mode::local>(p);
}

template <int G, class Mode>
__global__ void __launch_bounds__(PairwiseIntraPolicy::kBlockThreads) intra_s16(PassParams p) {
    static_assert(G > 1 && !Mode::trace, "one thread per two pairs is inter_s16; the traceback pass runs at 32 bits");
    s16_pass<G, PairwiseIntraPolicy::kS16Rows, Mode::local>(p);
}

}  // namespace alignscope::kernels::device
