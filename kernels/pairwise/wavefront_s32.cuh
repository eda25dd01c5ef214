// The 32-bit pairwise pass: G threads per pair, R query rows per thread, a
// strip of G*R rows swept across all target columns as an anti-diagonal
// wavefront (common/warp_wavefront.cuh: thread t works on column k - t + 1 at
// step k) whose rows hand H and F down through warp shuffles; the strip's
// bottom row goes to a global boundary buffer for the next strip. G = 1 is the
// inter-sequence kernel (inter_s32, one thread per pair), G = 4 .. 32 the
// intra-sequence ones (intra_s32<G>, a group of threads per pair).
//
// Three passes share the code (the mode tag, pass_common.cuh): forward and
// reverse (score and end cell; begin cell on the reversed prefixes) in mode::sw
// or mode::nw_sg, and mode::traceback (a global pass over the aligned region
// that stores 4-bit directions and walks them; intra groups of 4 or more use
// trace_s32.cuh instead). The recurrences, boundaries, candidate cells and
// tie-breaks are exactly those of engine/src/align/reference_aligner.cpp, so
// scores and coordinates agree.
#pragma once

#include "pairwise/pass_common.cuh"

namespace alignscope::kernels::device {

// The problem of a 32-bit pass: m x n cells over letters read at
// q[dir * (i-1)] and s[dir * (j-1)].
struct PassRegion {
    int m = 0, n = 0, dir = 1;
    const std::uint8_t* q = nullptr;
    const std::uint8_t* s = nullptr;
};

// The region of this pass of the pair: the whole pair (forward), the prefixes
// up to the end cell read backwards (reverse), or the aligned region
// (traceback). False when there is nothing to compute: the pair is empty or
// saturated for the later passes, or its traceback region has no rows or no
// columns (then thread 0 writes its one-run CIGAR here).
__device__ __forceinline__ bool s32_region(const PassParams& p, const PairTask& task, PairResult& result, int t,
                                           PassRegion& region) {
    region.m = task.query_length;
    region.n = task.target_length;
    region.dir = 1;
    region.q = p.residues + task.query_offset;
    region.s = p.residues + task.target_offset;
    if (p.kind == PassKind::Reverse) {
        if (result.flags & (kEmpty | kSaturated)) return false;
        region.m = result.query_end;
        region.n = result.target_end;
        region.q += region.m - 1;
        region.s += region.n - 1;
        region.dir = -1;
    } else if (p.kind == PassKind::Traceback) {
        if (result.flags & (kEmpty | kSaturated)) return false;
        region.m = result.query_end - result.query_begin + 1;
        region.n = result.target_end - result.target_begin + 1;
        region.q += result.query_begin - 1;
        region.s += result.target_begin - 1;
        if (region.m == 0 || region.n == 0) {
            if (t == 0) write_one_run_cigar(p, result, region.m, region.n);
            return false;
        }
    }
    return true;
}

// One thread's R rows of a strip: letters, H of the column to the left, E,
// and (score passes) each row's maximum and its first column.
template <int R>
struct S32Rows {
    int qcode[R], h_left[R], e_run[R], row_max[R], row_col[R];
};

// The cells of one column j of a thread's rows, top to bottom: H and F come
// in from the row above (above, f) with the diagonal d = H(row0, j-1), and
// leave as the bottom row's. Returns the traceback pass's direction word.
template <int R, class Mode>
__device__ __forceinline__ std::uint32_t s32_column(S32Rows<R>& rows, const int* column, int o, int e, int j,
                                                    bool track_rows, int& above, int& f, int d) {
    using C = dp::Cell32;
    std::uint32_t bits = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int score = column[rows.qcode[r]];
        const int e_open = rows.h_left[r] - o, e_ext = rows.e_run[r] - e;
        const int e_new = C::max(e_open, e_ext);
        const int f_open = above - o, f_ext = f - e;
        f = C::max(f_open, f_ext);
        int h = d + score;
        if constexpr (Mode::trace) {
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
            h = C::max(h, C::max(e_new, f));
            if constexpr (Mode::local) h = C::max(h, 0);
        }
        d = rows.h_left[r];
        rows.h_left[r] = h;
        rows.e_run[r] = e_new;
        above = h;
        if (!Mode::trace && track_rows && h > rows.row_max[r]) {
            rows.row_max[r] = h;
            rows.row_col[r] = j;
        }
    }
    return bits;
}

// After a strip, a score pass's candidates from its rows: the local best, or
// the corner, the last row's maximum and the last column's first maximum.
template <int R, class Mode>
__device__ __forceinline__ void s32_strip_ends(const S32Rows<R>& rows, int row0, int m, bool last_row_free,
                                               EndCandidates& ends) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
        if (i > m) continue;
        if constexpr (Mode::local) {
            if (rows.row_max[r] > 0 &&
                better_end(rows.row_max[r], i, rows.row_col[r], ends.best_score, ends.best_i, ends.best_j)) {
                ends.best_score = rows.row_max[r];
                ends.best_i = i;
                ends.best_j = rows.row_col[r];
            }
        } else {
            if (i == m) {
                ends.corner = rows.h_left[r];
                if (last_row_free) {
                    ends.best_score = rows.row_max[r];
                    ends.best_i = m;
                    ends.best_j = rows.row_col[r];
                }
            }
            if (rows.h_left[r] > ends.col_best) {
                ends.col_best = rows.h_left[r];
                ends.col_i = i;
            }
        }
    }
}

// One strip of a 32-bit pass: the thread's rows row0+1 .. row0+R swept
// across the region's columns, the upper boundary from row 0 or from the
// strip above (thread 0), the bottom row handed down and stored for the strip
// below, the traceback pass's directions stored per column.
template <int G, int R, class Mode>
__device__ __forceinline__ void s32_strip(const PassParams& p, const PairTask& task, const PassRegion& region,
                                          const int* table, int strip, int strips, int t, unsigned mask, int2* boundary,
                                          EndCandidates& ends) {
    using Group = wavefront::WavefrontGroup<G>;
    const int o = p.gap_open, e = p.gap_extend, m = region.m, n = region.n, dir = region.dir;
    const int dim = p.letters + 1;
    const bool zero_row0 = Mode::local || p.row0_free;
    const bool zero_col0 = Mode::local || p.col0_free;
    const bool track_rows = Mode::local || p.last_row_free;
    const int row0 = strip * G * R + t * R;  // this thread's rows are row0+1 .. row0+R
    S32Rows<R> rows;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = row0 + r + 1;
        rows.qcode[r] = i <= m ? region.q[dir * (i - 1)] : p.letters;
        rows.h_left[r] = zero_col0 ? 0 : -gap_cost(o, e, i);
        rows.e_run[r] = kNegS32;
        rows.row_max[r] = Mode::local ? 0 : kNegS32;
        rows.row_col[r] = 0;
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
        next_letter = region.s[dir * (column - 1)];
        if (t == 0 && strip > 0) next_up = boundary[static_cast<long long>(column) * Group::per_warp];
    };
    fetch(1 - t);
    const int steps = n + G - 1;
    for (int k = 0; k < steps; ++k) {
        const int j = Group::column(k, t);
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
            int above = up_h, f = up_f;
            const std::uint32_t bits =
                s32_column<R, Mode>(rows, table + dim * letter, o, e, j, track_rows, above, f, diag);
            diag = up_h;
            bottom_h = above;
            bottom_f = f;
            if constexpr (Mode::trace)
                p.trace[task.trace_base + (static_cast<std::uint64_t>(strip) * task.trace_steps + k) * 32u + t] = bits;
            if (t == G - 1 && strip + 1 < strips)
                boundary[static_cast<long long>(j) * Group::per_warp] = make_int2(bottom_h, bottom_f);
        }
        if constexpr (G > 1) {  // one thread per pair has no thread above
            up_h = Group::from_above(mask, bottom_h);
            up_f = Group::from_above(mask, bottom_f);
        }
    }
    if constexpr (!Mode::trace) s32_strip_ends<R, Mode>(rows, row0, m, p.last_row_free, ends);
}

// What a score pass hands back: the forward pass its score and end cell (or
// empty, for a local score of 0), the reverse pass the begin cell (the end
// cell of the reversed prefixes) or the mismatch flag.
__device__ __forceinline__ void write_s32_result(const PassParams& p, PairResult& result, bool local,
                                                 const EndCell& end) {
    if (p.kind == PassKind::Forward) {
        result.score = end.score;
        result.flags = 0;
        result.cigar_offset = result.cigar_count = 0;
        if (local && end.score == 0) {
            result.flags = kEmpty;
            result.query_end = result.target_end = result.query_begin = result.target_begin = 0;
        } else {
            result.query_end = end.i;
            result.target_end = end.j;
            result.query_begin = 1;
            result.target_begin = 1;
        }
    } else {  // reverse: reversed cell (i', j') is the cell after the begin
        if (end.score != result.score) result.flags |= kPassMismatch;
        result.query_begin = result.query_end - end.i + 1;
        result.target_begin = result.target_end - end.j + 1;
    }
}

// The whole pass of one group (kernels below): region, strips, and the end
// cell or the traceback walk.
template <int G, class Mode>
__device__ __forceinline__ void s32_pass(const PassParams& p) {
    using Policy = PairwisePolicy<G>;
    using Group = wavefront::WavefrontGroup<G>;
    constexpr int R = Mode::trace ? Policy::kTraceRows : Policy::kS32Rows;
    static_assert(!(Mode::local && Mode::trace), "the traceback pass is a global alignment of the region");
    __shared__ int table[(kMaxLetters + 1) * (kMaxLetters + 1)];
    load_table(table, p, 0);

    const int lane = threadIdx.x & 31;
    const int t = Group::thread(lane);
    const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
    if (group >= p.count) return;  // whole groups leave together
    const unsigned mask = Group::mask(lane);
    const PairTask task = p.tasks[group];
    PairResult& result = p.results[group];
    PassRegion region;
    if (!s32_region(p, task, result, t, region)) return;

    const int strips = (region.m + G * R - 1) / (G * R);
    int2* boundary = reinterpret_cast<int2*>(p.boundary) + task.boundary_base;
    EndCandidates ends;
    if constexpr (Mode::local) ends.best_score = 0;
    for (int strip = 0; strip < strips; ++strip) {
        s32_strip<G, R, Mode>(p, task, region, table, strip, strips, t, mask, boundary, ends);
        if constexpr (G > 1) __syncwarp(mask);
    }

    if constexpr (Mode::trace) {
        __syncwarp(mask);
        if (t == 0) walk_and_write_cigar<G, R>(p, task, result, region.m, region.n);
        return;
    }
    merge_group_ends<G, !Mode::local>(mask, ends);
    if (t != 0) return;
    const EndCell end = Mode::local ? EndCell{ends.best_score, ends.best_i, ends.best_j}
                                    : bounded_end(p, ends, region.m, region.n, p.row0_free, p.col0_free);
    write_s32_result(p, result, Mode::local, end);
}

// The kernels, named in the kernel grammar's family and width (the group and
// mode are template arguments): one thread per pair, and a group of G.
template <class Mode>
__global__ void __launch_bounds__(PairwiseInterPolicy::kBlockThreads) inter_s32(PassParams p) {
    s32_pass<1, Mode>(p);
}

template <int G, class Mode>
__global__ void __launch_bounds__(PairwiseIntraPolicy::kBlockThreads) intra_s32(PassParams p) {
    static_assert(G > 1, "one thread per pair is inter_s32");
    s32_pass<G, Mode>(p);
}

}  // namespace alignscope::kernels::device
