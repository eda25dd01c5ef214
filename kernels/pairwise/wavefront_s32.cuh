// The 32-bit pairwise pass: G threads per pair, R query rows per thread, a
// strip of G*R rows swept across all target columns as an anti-diagonal
// wavefront (thread t works on column k - t + 1 at step k) whose rows hand
// H and F down through warp shuffles; the strip's bottom row goes to a global
// boundary buffer for the next strip. G = 1 is the inter-sequence kernel (one
// thread per pair), G = 32 the intra-sequence one (a warp per pair).
//
// Three passes share the code (PassKind): forward (score and end cell), reverse
// (on the reversed prefixes, for the begin cell) and traceback (a global pass
// over the aligned region that stores 4-bit directions and walks them). The
// recurrences, boundaries, candidate cells and tie-breaks are exactly those of
// engine/src/align/reference_aligner.cpp, so scores and coordinates agree.
#pragma once

#include "pairwise/pass_types.hpp"

#include <cstdint>

namespace alignscope::kernels::device {

constexpr int kNegS32 = kS32Neg;  // far below any score, safe to subtract penalties from
constexpr int kMaxLetters = 32;   // matrix letters; code `letters` pads

__device__ __forceinline__ int gap_cost(int open, int extend, int k) { return k > 0 ? open + (k - 1) * extend : 0; }

// End-cell order of the reference: higher score, then smaller j, then smaller i.
__device__ __forceinline__ bool better_end(int score, int i, int j, int best_score, int best_i, int best_j) {
    return score > best_score || (score == best_score && (j < best_j || (j == best_j && i < best_i)));
}

template <int G>
__device__ __forceinline__ unsigned group_mask(int lane) {
    if constexpr (G == 32) return 0xffffffffu;
    else
        return ((1u << G) - 1u) << ((lane / G) * G);
}

template <int G, typename T>
__device__ __forceinline__ T group_shfl_xor(unsigned mask, T v, int delta) {
    if constexpr (G == 1) return v;
    else
        return __shfl_xor_sync(mask, v, delta, G);
}

// The 4-bit direction of a cell, row r of a thread's R in bits 4(R-1-r) ..
// 4(R-1-r)+3 of its column's word (row 0 highest: the kernels shift flags in
// as they go down the rows): whether H came from neither the diagonal nor E
// (F), from E, or the diagonal (kNotDiagonal clear; the diagonal wins ties,
// then E), and whether E and F extended (extension >= opening).
inline constexpr std::uint32_t kNotDiagonal = 8, kNotE = 4, kExtendsE = 2, kExtendsF = 1;

// Walks the 4-bit directions of a global pass over rows x cols from the
// bottom-right corner with the reference's preferences and writes run-length
// ops into `scratch` from its end backwards; returns how many it wrote.
template <int G, int R>
__device__ int walk_directions(const std::uint32_t* trace, std::uint64_t group_base, std::uint32_t steps, int rows,
                               int cols, std::uint32_t* scratch, int capacity, bool& overflow) {
    int count = 0;
    std::uint32_t run_op = 0xffffffffu;
    std::uint32_t run_length = 0;
    auto emit = [&](std::uint32_t op, std::uint32_t length) {
        if (length == 0) return;
        if (op == run_op) {
            run_length += length;
            return;
        }
        if (run_length) {
            if (count < capacity) scratch[capacity - 1 - count] = run_length << 2 | run_op;
            else
                overflow = true;
            ++count;
        }
        run_op = op;
        run_length = length;
    };
    enum { Any, GapD, GapI } state = Any;
    int i = rows, j = cols;
    std::uint64_t cached_index = ~std::uint64_t{0};
    std::uint32_t word = 0;
    while (i > 0 && j > 0) {
        const int rem = (i - 1) % (G * R);
        const int strip = (i - 1) / (G * R);
        const int t = rem / R;
        const int r = rem % R;
        const std::uint64_t index =
            group_base + (static_cast<std::uint64_t>(strip) * steps + static_cast<std::uint64_t>(j - 1 + t)) * 32u + t;
        if (index != cached_index) {
            word = trace[index];
            cached_index = index;
        }
        const std::uint32_t bits = (word >> (4 * (R - 1 - r))) & 15u;
        if (state == Any) {
            if (!(bits & kNotDiagonal)) {
                emit(kCigarM, 1);
                --i;
                --j;
            } else {
                state = (bits & kNotE) ? GapI : GapD;
            }
        } else if (state == GapD) {
            emit(kCigarD, 1);
            state = (bits & kExtendsE) ? GapD : Any;
            --j;
        } else {
            emit(kCigarI, 1);
            state = (bits & kExtendsF) ? GapI : Any;
            --i;
        }
    }
    emit(kCigarI, static_cast<std::uint32_t>(i));
    emit(kCigarD, static_cast<std::uint32_t>(j));
    emit(0xfffffffeu, 1);  // flushes the last run
    return count;
}

// Writes a CIGAR of one run (a region with no rows or no columns).
__device__ inline void copy_cigar_out(const PassParams& p, PairResult& out, const std::uint32_t* runs, int count) {
    const std::uint32_t base = atomicAdd(p.cigar_counter, static_cast<std::uint32_t>(count));
    for (int k = 0; k < count; ++k) p.cigar_out[base + k] = runs[k];
    out.cigar_offset = base;
    out.cigar_count = static_cast<std::uint32_t>(count);
}

template <int G, int R, bool Local, bool Trace>
__global__ void __launch_bounds__(128) wavefront_s32(PassParams p) {
    static_assert(!(Local && Trace), "the traceback pass is a global alignment of the region");
    static_assert(!Trace || R == 8, "directions are packed 8 rows to a 32-bit word");
    __shared__ int table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    const int dim = p.letters + 1;
    for (int k = threadIdx.x; k < dim * dim; k += blockDim.x) table[k] = p.matrix[k];
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const int t = lane % G;
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    if (group >= p.count) return;  // whole groups leave together
    const unsigned mask = group_mask<G>(lane);
    const PairTask task = p.tasks[group];
    PairResult& result = p.results[group];

    // The problem of this pass: m x n cells over letters read at q[dir * (i-1)].
    int m = task.query_length, n = task.target_length, dir = 1;
    const std::uint8_t* q = p.residues + task.query_offset;
    const std::uint8_t* s = p.residues + task.target_offset;
    if (p.kind == PassKind::Reverse) {
        if (result.flags & (kEmpty | kSaturated)) return;
        m = result.query_end;
        n = result.target_end;
        q += m - 1;
        s += n - 1;
        dir = -1;
    } else if (p.kind == PassKind::Traceback) {
        if (result.flags & (kEmpty | kSaturated)) return;
        m = result.query_end - result.query_begin + 1;
        n = result.target_end - result.target_begin + 1;
        q += result.query_begin - 1;
        s += result.target_begin - 1;
        if (m == 0 || n == 0) {
            if (t == 0) {
                const std::uint32_t run = m == 0 ? (static_cast<std::uint32_t>(n) << 2 | kCigarD)
                                                 : (static_cast<std::uint32_t>(m) << 2 | kCigarI);
                copy_cigar_out(p, result, &run, 1);
            }
            return;
        }
    }

    const int o = p.gap_open;
    const int e = p.gap_extend;
    const bool zero_row0 = Local || p.row0_free;
    const bool zero_col0 = Local || p.col0_free;
    const bool track_rows = Local || p.last_row_free;
    constexpr int strip_rows = G * R;
    const int strips = (m + strip_rows - 1) / strip_rows;
    const int steps = n + G - 1;
    const int stride = 32 / G;  // boundary slots of the groups of a warp interleave
    int2* boundary = reinterpret_cast<int2*>(p.boundary) + task.boundary_base;

    int best_score = Local ? 0 : kNegS32, best_i = 0, best_j = 0;  // local, or the last row's first maximum
    int col_best = kNegS32, col_i = 0;                             // last column's first maximum
    int corner = kNegS32;                                          // H(m, n)

    for (int strip = 0; strip < strips; ++strip) {
        const int row0 = strip * strip_rows + t * R;  // this thread's rows are row0+1 .. row0+R
        int qcode[R], h_left[R], e_run[R], row_max[R], row_col[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = row0 + r + 1;
            qcode[r] = i <= m ? q[dir * (i - 1)] : p.letters;
            h_left[r] = zero_col0 ? 0 : -gap_cost(o, e, i);
            e_run[r] = kNegS32;
            row_max[r] = Local ? 0 : kNegS32;
            row_col[r] = 0;
        }
        int diag = row0 == 0 ? 0 : (zero_col0 ? 0 : -gap_cost(o, e, row0));  // H(row0, j-1)
        int up_h = 0, up_f = kNegS32;                                        // H, F of the row above at column j
        int bottom_h = 0, bottom_f = kNegS32;
        // The coming column's target residue and (thread 0 of a later strip)
        // boundary, read one column ahead to hide their latency.
        int next_letter = p.letters;
        int2 next_up = make_int2(0, kNegS32);
        auto fetch = [&](int column) {
            if (column < 1 || column > n) return;
            next_letter = s[dir * (column - 1)];
            if (t == 0 && strip > 0) next_up = boundary[static_cast<long long>(column) * stride];
        };
        fetch(1 - t);
        for (int k = 0; k < steps; ++k) {
            const int j = k - t + 1;
            const int letter = next_letter;
            const int2 up_word = next_up;
            fetch(j + 1);
            if (t == 0 && j <= n) {
                if (strip == 0) {
                    up_h = zero_row0 ? 0 : -gap_cost(o, e, j);
                    up_f = kNegS32;
                } else {
                    up_h = up_word.x;
                    up_f = up_word.y;
                }
            }
            if (j >= 1 && j <= n) {
                const int* column = table + dim * letter;
                int above = up_h, f = up_f, d = diag;
                std::uint32_t bits = 0;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const int score = column[qcode[r]];
                    const int e_open = h_left[r] - o, e_ext = e_run[r] - e;
                    const int e_new = max(e_open, e_ext);
                    const int f_open = above - o, f_ext = f - e;
                    f = max(f_open, f_ext);
                    int h = d + score;
                    if constexpr (Trace) {
                        std::uint32_t code = 0;
                        if (e_new > h) {
                            h = e_new;
                            code = kNotDiagonal;
                        }
                        if (f > h) {
                            h = f;
                            code = kNotDiagonal | kNotE;
                        }
                        code |= (e_ext >= e_open ? kExtendsE : 0u) | (f_ext >= f_open ? kExtendsF : 0u);
                        bits |= code << (4 * (R - 1 - r));
                    } else {
                        h = max(h, max(e_new, f));
                        if constexpr (Local) h = max(h, 0);
                    }
                    d = h_left[r];
                    h_left[r] = h;
                    e_run[r] = e_new;
                    above = h;
                    if (!Trace && track_rows && h > row_max[r]) {
                        row_max[r] = h;
                        row_col[r] = j;
                    }
                }
                diag = up_h;
                bottom_h = above;
                bottom_f = f;
                if constexpr (Trace)
                    p.trace[task.trace_base + (static_cast<std::uint64_t>(strip) * task.trace_steps + k) * 32u + t] =
                        bits;
                if (t == G - 1 && strip + 1 < strips)
                    boundary[static_cast<long long>(j) * stride] = make_int2(bottom_h, bottom_f);
            }
            if constexpr (G > 1) {
                up_h = __shfl_up_sync(mask, bottom_h, 1, G);
                up_f = __shfl_up_sync(mask, bottom_f, 1, G);
            }
        }
        if constexpr (!Trace) {
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int i = row0 + r + 1;
                if (i > m) continue;
                if constexpr (Local) {
                    if (row_max[r] > 0 && better_end(row_max[r], i, row_col[r], best_score, best_i, best_j)) {
                        best_score = row_max[r];
                        best_i = i;
                        best_j = row_col[r];
                    }
                } else {
                    if (i == m) {
                        corner = h_left[r];
                        if (p.last_row_free) {
                            best_score = row_max[r];
                            best_i = m;
                            best_j = row_col[r];
                        }
                    }
                    if (h_left[r] > col_best) {
                        col_best = h_left[r];
                        col_i = i;
                    }
                }
            }
        }
        if constexpr (G > 1) __syncwarp(mask);
    }

    if constexpr (Trace) {
        __syncwarp(mask);
        if (t == 0) {
            std::uint32_t* scratch = p.cigar_scratch + task.cigar_base;
            const int capacity = task.query_length + task.target_length + 2;
            bool overflow = false;
            const int count =
                walk_directions<G, R>(p.trace, task.trace_base, task.trace_steps, m, n, scratch, capacity, overflow);
            if (overflow) {
                result.flags |= kCigarOverflow;
            } else {
                copy_cigar_out(p, result, scratch + (capacity - count), count);
            }
        }
        return;
    }

    // Gather the group's candidates in the reference's order.
    if constexpr (G > 1) {
#pragma unroll
        for (int delta = 1; delta < G; delta <<= 1) {
            const int os = group_shfl_xor<G>(mask, best_score, delta);
            const int oi = group_shfl_xor<G>(mask, best_i, delta);
            const int oj = group_shfl_xor<G>(mask, best_j, delta);
            if (better_end(os, oi, oj, best_score, best_i, best_j)) {
                best_score = os;
                best_i = oi;
                best_j = oj;
            }
            const int oc = group_shfl_xor<G>(mask, col_best, delta);
            const int oci = group_shfl_xor<G>(mask, col_i, delta);
            if (oc > col_best || (oc == col_best && oci < col_i)) {
                col_best = oc;
                col_i = oci;
            }
            corner = max(corner, group_shfl_xor<G>(mask, corner, delta));
        }
    }
    if (t != 0) return;

    int end_score, end_i, end_j;
    if constexpr (Local) {
        end_score = best_score;
        end_i = best_i;
        end_j = best_j;
    } else {
        end_score = corner;
        end_i = m;
        end_j = n;
        if (p.last_row_free) {
            if (best_score >= end_score) {
                end_score = best_score;
                end_i = m;
                end_j = best_j;
            }
            const int h_m0 = zero_col0 ? 0 : -gap_cost(o, e, m);
            if (p.boundary_ends && h_m0 >= end_score) {
                end_score = h_m0;
                end_i = m;
                end_j = 0;
            }
        }
        if (p.last_col_free) {
            if (col_best > end_score || (col_best == end_score && end_j == n && col_i < end_i)) {
                end_score = col_best;
                end_i = col_i;
                end_j = n;
            }
            const int h_0n = zero_row0 ? 0 : -gap_cost(o, e, n);
            if (p.boundary_ends && (h_0n > end_score || (h_0n == end_score && end_j == n))) {
                end_score = h_0n;
                end_i = 0;
                end_j = n;
            }
        }
    }

    if (p.kind == PassKind::Forward) {
        result.score = end_score;
        result.flags = 0;
        result.cigar_offset = result.cigar_count = 0;
        if (Local && end_score == 0) {
            result.flags = kEmpty;
            result.query_end = result.target_end = result.query_begin = result.target_begin = 0;
        } else {
            result.query_end = end_i;
            result.target_end = end_j;
            result.query_begin = 1;
            result.target_begin = 1;
        }
    } else {  // reverse: reversed cell (i', j') is the cell after the begin
        if (end_score != result.score) result.flags |= kPassMismatch;
        result.query_begin = result.query_end - end_i + 1;
        result.target_begin = result.target_end - end_j + 1;
    }
}

}  // namespace alignscope::kernels::device
