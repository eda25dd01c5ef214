// What the pairwise passes share on the device: the mode tags their kernels
// carry, the substitution table in shared memory, the reference's order of
// end cells and how a pass picks its end cell from its candidates, the group
// reductions, and the traceback's directions and walk.
#pragma once

#include "common/dp_cell.hpp"
#include "common/warp_wavefront.cuh"
#include "pairwise/pairwise_policy.hpp"
#include "pairwise/pass_types.hpp"

#include <cstdint>

namespace alignscope::kernels::device {

// The mode a pairwise kernel is compiled for, a template argument of every
// kernel (the name CUPTI shows, e.g. intra_s16<8, mode::sw>): local (sw); the
// bounded modes, global and semi-global, whose free ends are the pass's
// boundary flags (nw_sg); and the traceback pass, a global pass over the
// aligned region of any mode (traceback).
namespace mode {
struct sw {
    static constexpr bool local = true, trace = false;
};
struct nw_sg {
    static constexpr bool local = false, trace = false;
};
struct traceback {
    static constexpr bool local = false, trace = true;
};
}  // namespace mode

constexpr int kNegS32 = kS32Neg;  // far below any score, safe to subtract penalties from
constexpr int kMaxLetters = 32;   // matrix letters; code `letters` pads

__device__ __forceinline__ int gap_cost(int open, int extend, int k) { return k > 0 ? open + (k - 1) * extend : 0; }

// End-cell order of the reference: higher score, then smaller j, then smaller i.
__device__ __forceinline__ bool better_end(int score, int i, int j, int best_score, int best_i, int best_j) {
    return score > best_score || (score == best_score && (j < best_j || (j == best_j && i < best_i)));
}

template <int G, typename T>
__device__ __forceinline__ T group_shfl_xor(unsigned mask, T v, int delta) {
    if constexpr (G == 1) return v;
    else
        return __shfl_xor_sync(mask, v, delta, G);
}

// The block's substitution table in shared memory, [target letter][query
// letter] over letters + 1 codes (the pad scores 0), every entry plus `add`.
template <class T>
__device__ __forceinline__ void load_table(T* table, const PassParams& p, int add) {
    const int dim = p.letters + 1;
    for (int k = threadIdx.x; k < dim * dim; k += blockDim.x) table[k] = static_cast<T>(p.matrix[k] + add);
    __syncthreads();
}

// A pass's candidates for the end cell, per thread and then per group: the
// local best (or the last row's first maximum), the last column's first
// maximum, and the corner H(m, n).
struct EndCandidates {
    int best_score = kNegS32, best_i = 0, best_j = 0;
    int col_best = kNegS32, col_i = 0;
    int corner = kNegS32;
};

struct EndCell {
    int score = 0, i = 0, j = 0;
};

// The group's candidates in the reference's order, on every thread. With
// `bounded` false only the best (local passes track nothing else).
template <int G, bool bounded>
__device__ __forceinline__ void merge_group_ends(unsigned mask, EndCandidates& c) {
    if constexpr (G > 1) {
#pragma unroll
        for (int delta = 1; delta < G; delta <<= 1) {
            const int os = group_shfl_xor<G>(mask, c.best_score, delta);
            const int oi = group_shfl_xor<G>(mask, c.best_i, delta);
            const int oj = group_shfl_xor<G>(mask, c.best_j, delta);
            if (better_end(os, oi, oj, c.best_score, c.best_i, c.best_j)) {
                c.best_score = os;
                c.best_i = oi;
                c.best_j = oj;
            }
            if constexpr (bounded) {
                const int oc = group_shfl_xor<G>(mask, c.col_best, delta);
                const int oci = group_shfl_xor<G>(mask, c.col_i, delta);
                if (oc > c.col_best || (oc == c.col_best && oci < c.col_i)) {
                    c.col_best = oc;
                    c.col_i = oci;
                }
                c.corner = dp::Cell32::max(c.corner, group_shfl_xor<G>(mask, c.corner, delta));
            }
        }
    }
}

// The end cell of a bounded (global or semi-global) pass over m x n cells
// from the group's candidates, as the reference chooses it: the corner, the
// last row's and last column's maxima where those ends are free, and with
// boundary_ends the cells (m, 0) and (0, n).
__device__ __forceinline__ EndCell bounded_end(const PassParams& p, const EndCandidates& c, int m, int n,
                                               bool zero_row0, bool zero_col0) {
    const int o = p.gap_open, e = p.gap_extend;
    EndCell end{c.corner, m, n};
    if (p.last_row_free) {
        if (c.best_score >= end.score) end = EndCell{c.best_score, m, c.best_j};
        const int h_m0 = zero_col0 ? 0 : -gap_cost(o, e, m);
        if (p.boundary_ends && h_m0 >= end.score) end = EndCell{h_m0, m, 0};
    }
    if (p.last_col_free) {
        if (c.col_best > end.score || (c.col_best == end.score && end.j == n && c.col_i < end.i))
            end = EndCell{c.col_best, c.col_i, n};
        const int h_0n = zero_row0 ? 0 : -gap_cost(o, e, n);
        if (p.boundary_ends && (h_0n > end.score || (h_0n == end.score && end.j == n))) end = EndCell{h_0n, 0, n};
    }
    return end;
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

// Writes a CIGAR of `count` runs to the batch's output.
__device__ inline void copy_cigar_out(const PassParams& p, PairResult& out, const std::uint32_t* runs, int count) {
    const std::uint32_t base = atomicAdd(p.cigar_counter, static_cast<std::uint32_t>(count));
    for (int k = 0; k < count; ++k) p.cigar_out[base + k] = runs[k];
    out.cigar_offset = base;
    out.cigar_count = static_cast<std::uint32_t>(count);
}

// The traceback of a region with no rows or no columns: one run.
__device__ __forceinline__ void write_one_run_cigar(const PassParams& p, PairResult& out, int m, int n) {
    const std::uint32_t run =
        m == 0 ? (static_cast<std::uint32_t>(n) << 2 | kCigarD) : (static_cast<std::uint32_t>(m) << 2 | kCigarI);
    copy_cigar_out(p, out, &run, 1);
}

// Thread 0's end of a traceback pass over m x n cells: walks the directions
// into the pair's scratch and copies the CIGAR out, or flags an overflow.
template <int G, int R>
__device__ __forceinline__ void walk_and_write_cigar(const PassParams& p, const PairTask& task, PairResult& result,
                                                     int m, int n) {
    std::uint32_t* scratch = p.cigar_scratch + task.cigar_base;
    const int capacity = task.query_length + task.target_length + 2;
    bool overflow = false;
    const int count =
        walk_directions<G, R>(p.trace, task.trace_base, task.trace_steps, m, n, scratch, capacity, overflow);
    if (overflow) result.flags |= kCigarOverflow;
    else
        copy_cigar_out(p, result, scratch + (capacity - count), count);
}

}  // namespace alignscope::kernels::device
