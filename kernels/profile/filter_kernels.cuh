// Device code of the profile filters: one warp per target, the model striped
// over the warp's lanes in shared memory (filter_layout.hpp), a row of the DP
// matrix per step over the target's residues.
//   SSV/MSV: two nodes per lane in 16-bit halves, Hopper DPX instructions (the
//   "_relu" forms: every cell is >= 0 anyway); the
//   same saturation at 0 and 255 as HMMER's unsigned bytes, so the same scores.
//   SSV keeps B constant (no J loop) and needs no reduction per row; where the
//   J loop could have raised B (max E - tec > base) it says so and the MSV
//   kernel, which reduces E every row as HMMER does, scores that target.
//   Viterbi filter: one node per lane in 32-bit cells clamped to HMMER's 16-bit
//   range after every add; D->D chains crossing lanes are closed by repeated
//   passes until no lane changes (Farrar's lazy F, over 32 lanes).
#pragma once

#include "profile/filter_launch.hpp"

#include <cstdint>

namespace alignscope::kernels::profile {

constexpr unsigned kFullMask = 0xffffffffu;

// Residue i of the target, every lane: the warp reads 32 residues at a time
// (one coalesced load) and broadcasts one per row.
__device__ __forceinline__ int warp_residue(const std::uint8_t* dsq, int L, int i, std::uint32_t& chunk) {
    const int lane = threadIdx.x & 31;
    if ((i & 31) == 0) chunk = (i + lane < L) ? dsq[i + lane] : 0;
    return static_cast<int>(__shfl_sync(kFullMask, chunk, i & 31));
}

// One target through SSV (full = false) or MSV (full = true). Returns xJ, or
// kMsvOverflow, or (SSV only) kMsvNeedsFull.
template <int Q>
__device__ int msv_target(const std::uint32_t* __restrict__ cost, const MsvParams& p, int tjb,
                          const std::uint8_t* __restrict__ dsq, int L, bool full) {
    const int lane = threadIdx.x & 31;
    const int tjbm = (tjb + p.tbm) & 0xff;
    unsigned mv[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) mv[q] = 0u;
    const unsigned bias2 = static_cast<unsigned>(p.bias) * 0x10001u;
    const unsigned c255 = 255u * 0x10001u;
    int xJ = 0;
    int xB = max(p.base - tjbm, 0);
    unsigned xBv = static_cast<unsigned>(xB) * 0x10001u;
    unsigned run = 0u;  // SSV: max over every row so far
    std::uint32_t chunk = 0;
    for (int i = 0; i < L; ++i) {
        const int x = warp_residue(dsq, L, i, chunk);
        const std::uint32_t* row = cost + x * Q * 32 + lane;
        unsigned t = __shfl_up_sync(kFullMask, mv[Q - 1], 1);
        if (lane == 0) t = 0u;
        unsigned prev = __byte_perm(t, mv[Q - 1], 0x5432);  // position p-1 into p
        unsigned xEv = 0u;
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            unsigned sv = __vimax_s16x2_relu(prev, xBv);
            sv = __viaddmin_s16x2(sv, bias2, c255);
            sv = __viaddmax_s16x2(sv, row[q * 32], 0u);
            xEv = __vimax_s16x2_relu(xEv, sv);
            prev = mv[q];
            mv[q] = sv;
        }
        if (full) {
            const unsigned e = max(xEv & 0xffffu, xEv >> 16);
            const int xE = static_cast<int>(__reduce_max_sync(kFullMask, e));
            if (xE + p.bias >= 255) return kMsvOverflow;
            xJ = max(xJ, max(xE - p.tec, 0));
            xB = max(max(p.base, xJ) - tjbm, 0);
            xBv = static_cast<unsigned>(xB) * 0x10001u;
        } else {
            run = __vimax_s16x2_relu(run, xEv);
        }
    }
    if (full) return xJ;
    const int xE = static_cast<int>(__reduce_max_sync(kFullMask, max(run & 0xffffu, run >> 16)));
    if (xE + p.bias >= 255) return kMsvOverflow;
    // B stays constant in MSV too as long as J never passes base.
    if (xE - p.tec > p.base) return kMsvNeedsFull;
    return max(xE - p.tec, 0);
}

// Copies a model table into the block's shared memory.
template <typename T>
__device__ void stage_table(T* shared, const T* global, int count) {
    for (int j = threadIdx.x; j < count; j += blockDim.x) shared[j] = global[j];
    __syncthreads();
}

// The next work item of this warp (every lane gets it), from a global counter.
__device__ __forceinline__ std::uint32_t next_item(std::uint32_t* counter) {
    std::uint32_t item = 0;
    if ((threadIdx.x & 31) == 0) item = atomicAdd(counter, 1u);
    return __shfl_sync(kFullMask, item, 0);
}

// SSV (full = false) or MSV over targets.order[0..count): out[order[item]] =
// xJ or a code; tjb[t] is target t's N/J->B cost.
template <int Q>
__global__ void __launch_bounds__(kFilterWarps * 32)
    msv_filter_kernel(TargetView targets, const std::uint32_t* __restrict__ cost, MsvParams params,
                      const std::uint8_t* __restrict__ tjb, std::int32_t* __restrict__ out, std::uint32_t* counter,
                      bool full) {
    extern __shared__ std::uint32_t shared_cost[];
    stage_table(shared_cost, cost, params.codes * Q * 32);
    for (std::uint32_t item = next_item(counter); item < targets.count; item = next_item(counter)) {
        const std::uint32_t t = targets.order[item];
        const std::uint64_t begin = targets.offsets[t];
        const int L = static_cast<int>(targets.offsets[t + 1] - begin);
        const int r = msv_target<Q>(shared_cost, params, tjb[t], targets.residues + begin, L, full);
        if ((threadIdx.x & 31) == 0) out[t] = r;
    }
}

__device__ __forceinline__ int adds16_down(int a, int b) { return __viaddmax_s32(a, b, -32768); }
__device__ __forceinline__ int adds16(int a, int b) { return min(__viaddmax_s32(a, b, -32768), 32767); }

// D(i,k) = max(M(i,k-1) + md(k-1), D(i,k-1) + dd(k-1)) along the whole row.
template <int Q>
__device__ __forceinline__ void close_delete_chains(int (&mv)[Q], int (&dv)[Q], const std::int16_t* md,
                                                    const std::int16_t* dd, int lane) {
    int carry = __shfl_up_sync(kFullMask, adds16_down(mv[Q - 1], md[(Q - 1) * 32]), 1);
    dv[0] = lane == 0 ? -32768 : carry;
#pragma unroll
    for (int q = 1; q < Q; ++q) dv[q] = adds16_down(mv[q - 1], md[(q - 1) * 32]);
    bool changed;
    do {
#pragma unroll
        for (int q = 1; q < Q; ++q) dv[q] = max(dv[q], adds16_down(dv[q - 1], dd[(q - 1) * 32]));
        carry = __shfl_up_sync(kFullMask, adds16_down(dv[Q - 1], dd[(Q - 1) * 32]), 1);
        if (lane == 0) carry = -32768;
        changed = carry > dv[0];
        dv[0] = max(dv[0], carry);
    } while (__any_sync(kFullMask, changed));
}

// One target through the Viterbi filter: xC, or kViterbiOverflow.
template <int Q>
__device__ int viterbi_target(const std::int16_t* __restrict__ tsc, const std::int16_t* __restrict__ msc,
                              const ViterbiParams& p, int ncj, const std::uint8_t* __restrict__ dsq, int L) {
    const int lane = threadIdx.x & 31;
    constexpr int W = Q * 32;
    const std::int16_t* bm = tsc + ViterbiStripes::BM * W + lane;
    const std::int16_t* mm = tsc + ViterbiStripes::MM * W + lane;
    const std::int16_t* im = tsc + ViterbiStripes::IM * W + lane;
    const std::int16_t* dm = tsc + ViterbiStripes::DM * W + lane;
    const std::int16_t* md = tsc + ViterbiStripes::MD * W + lane;
    const std::int16_t* mi = tsc + ViterbiStripes::MI * W + lane;
    const std::int16_t* ii = tsc + ViterbiStripes::II * W + lane;
    const std::int16_t* dd = tsc + ViterbiStripes::DD * W + lane;
    int mv[Q], iv[Q], dv[Q];
#pragma unroll
    for (int q = 0; q < Q; ++q) mv[q] = iv[q] = dv[q] = -32768;
    const int xN = p.base;
    int xB = static_cast<std::int16_t>(xN + ncj);
    int xJ = -32768, xC = -32768;
    std::uint32_t chunk = 0;
    for (int i = 0; i < L; ++i) {
        const int x = warp_residue(dsq, L, i, chunk);
        const std::int16_t* rsc = msc + x * W + lane;
        int mpv = __shfl_up_sync(kFullMask, mv[Q - 1], 1);
        int ipv = __shfl_up_sync(kFullMask, iv[Q - 1], 1);
        int dpv = __shfl_up_sync(kFullMask, dv[Q - 1], 1);
        if (lane == 0) mpv = ipv = dpv = -32768;
        int xE = -32768;
#pragma unroll
        for (int q = 0; q < Q; ++q) {
            const int j = q * 32;
            int sv = __vimax3_s32(adds16_down(xB, bm[j]), adds16_down(mpv, mm[j]), adds16_down(ipv, im[j]));
            sv = max(sv, adds16_down(dpv, dm[j]));
            sv = adds16(sv, rsc[j]);
            xE = max(xE, sv);
            const int in = max(adds16_down(mv[q], mi[j]), adds16_down(iv[q], ii[j]));
            mpv = mv[q];
            ipv = iv[q];
            dpv = dv[q];
            mv[q] = sv;
            iv[q] = in;
        }
        close_delete_chains<Q>(mv, dv, md, dd, lane);
        xE = __reduce_max_sync(kFullMask, xE);
        if (xE >= 32767) return kViterbiOverflow;
        xC = static_cast<std::int16_t>(max(xC, xE + p.e_move));
        xJ = static_cast<std::int16_t>(max(xJ, xE + p.e_loop));
        xB = static_cast<std::int16_t>(max(xJ + ncj, xN + ncj));
    }
    return xC;
}

// The Viterbi filter over a list of targets: work item j scores list[order[j]]
// into out[order[j]] (xC or a code); ncj[t] is target t's N/C/J->B move cost.
template <int Q>
__global__ void __launch_bounds__(kFilterWarps * 32)
    viterbi_filter_kernel(TargetView targets, const std::int16_t* __restrict__ tables, ViterbiParams params,
                          const std::uint32_t* __restrict__ list, const std::int16_t* __restrict__ ncj,
                          std::int32_t* __restrict__ out, std::uint32_t* counter) {
    extern __shared__ std::int16_t shared_tables[];
    constexpr int W = Q * 32;
    stage_table(shared_tables, tables, (ViterbiStripes::Transitions + params.codes) * W);
    for (std::uint32_t item = next_item(counter); item < targets.count; item = next_item(counter)) {
        const std::uint32_t position = targets.order[item];
        const std::uint32_t t = list[position];
        const std::uint64_t begin = targets.offsets[t];
        const int L = static_cast<int>(targets.offsets[t + 1] - begin);
        const int r = viterbi_target<Q>(shared_tables, shared_tables + ViterbiStripes::Transitions * W, params, ncj[t],
                                        targets.residues + begin, L);
        if ((threadIdx.x & 31) == 0) out[position] = r;
    }
}

}  // namespace alignscope::kernels::profile
