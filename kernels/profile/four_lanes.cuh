// What the Forward, Backward and envelope kernels share on the device: one
// lane of the four threads that hold a target's striped four-float segments
// (its float arithmetic as HMMER's SSE code does it: each sum, product and
// quotient rounded alone, PTX .rn so never fused, .ftz as SSE's FTZ/DAZ; the
// shuffles among the four), the block's copy of the model in shared memory,
// and a launch with its shared-memory attribute and fault check.
#pragma once

#include "common/fault_injection.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace alignscope::kernels::profile {

// One lane of a target's group of four consecutive threads. The kernels'
// lanes types (DeviceForwardLanes, ...) add where their rows live.
struct FourLanes {
    using V = float;
    using Flag = bool;
    unsigned mask = 0;  // the group's four lanes
    int lane = 0;       // 0..3

    // The group of thread threadIdx.x.
    __device__ static FourLanes of_thread() {
        FourLanes g;
        g.mask = 0xfu << (threadIdx.x & 28);
        g.lane = static_cast<int>(threadIdx.x & 3);
        return g;
    }

    __device__ static float zero() { return 0.0f; }
    __device__ static float splat(float x) { return x; }
    __device__ static float add(float a, float b) {
        float r;
        asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
    __device__ static float mul(float a, float b) {
        float r;
        asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
    __device__ static float fadd(float a, float b) { return add(a, b); }
    __device__ static float fmul(float a, float b) { return mul(a, b); }
    __device__ static float fdiv(float a, float b) {
        float r;
        asm("div.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
    // This lane's float of a segment.
    __device__ float seg(const float* p) const { return p[lane]; }
    // [a0 a1 a2 a3] -> [0 a0 a1 a2] over the group's lanes.
    __device__ float shift_up(float a) const {
        const float v = __shfl_up_sync(mask, a, 1, 4);
        return lane == 0 ? 0.0f : v;
    }
    // [a0 a1 a2 a3] -> [a1 a2 a3 0].
    __device__ float shift_down(float a) const {
        const float v = __shfl_down_sync(mask, a, 1, 4);
        return lane == 3 ? 0.0f : v;
    }
    // (a0 + a1) + (a2 + a3) in every lane, as the SSE code's horizontal sum.
    __device__ float sum(float a) const {
        const float t0 = __shfl_sync(mask, a, 0, 4), t1 = __shfl_sync(mask, a, 1, 4);
        const float t2 = __shfl_sync(mask, a, 2, 4), t3 = __shfl_sync(mask, a, 3, 4);
        return add(add(t0, t1), add(t2, t3));
    }
    // One read by the lead lane, for all four (the lead lane alone writes the
    // rows' specials, which may share storage with what is read).
    __device__ float broadcast(const float* p) const {
        float v = 0.0f;
        if (lane == 0) v = *p;
        return __shfl_sync(mask, v, 0, 4);
    }
    __device__ bool any(bool f) const { return __any_sync(mask, f) != 0; }
    __device__ bool lead() const { return lane == 0; }
    // The group's next work item: the lead lane takes it from `counter`.
    __device__ std::uint32_t next_item(std::uint32_t* counter) const {
        std::uint32_t item = 0;
        if (lane == 0) item = atomicAdd(counter, 1u);
        return __shfl_sync(mask, item, 0, 4);
    }
};

// A lane whose row (the M, I and D arrays of Q segments, updated in place)
// is its thread's own, interleaved with the other threads' rows: in shared
// memory (SharedRows: the block's Threads threads, a stride the compiler
// knows) or in a global scratch array (interleaved over every thread of the
// grid, global_stride of them). The Forward filter's and Backward's lanes.
template <bool SharedRows, int Threads>
struct RowLanes : FourLanes {
    float* rows = nullptr;  // this thread's row: [(array * Q + q) * stride]
    int Q = 0;
    std::uint32_t global_stride = 0;

    // Thread threadIdx.x's lane: its row at shared[threadIdx.x] or at
    // scratch[its index in the grid].
    __device__ static RowLanes of_thread(float* shared, float* scratch, int segments, std::uint32_t stride) {
        RowLanes g{FourLanes::of_thread()};
        const std::uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
        g.rows = SharedRows ? shared + threadIdx.x : scratch + thread;
        g.Q = segments;
        g.global_stride = stride;
        return g;
    }
    __device__ static void note_greater(bool& f, float a, float b) { f = f || a > b; }
    __device__ std::size_t at(int a, int q) const {
        if constexpr (SharedRows) return static_cast<std::size_t>(a * Q + q) * Threads;
        else
            return static_cast<std::size_t>(a * Q + q) * global_stride;
    }
    __device__ float get(int a, int q) const { return rows[at(a, q)]; }
    __device__ void put(int a, int q, float v) { rows[at(a, q)] = v; }
};

// The model's `count` striped floats for the block: copied to `shared` by
// all its threads when `in_shared` (the same for every block), else `global`.
__device__ inline const float* block_model(const float* global, float* shared, int count, bool in_shared) {
    if (!in_shared) return global;
    for (int j = threadIdx.x; j < count; j += blockDim.x) shared[j] = global[j];
    __syncthreads();
    return shared;
}

// `kernel` on `blocks` blocks of `threads` with `shared` bytes of dynamic
// shared memory (the attribute set first: more than 48 KiB needs it).
template <class... Params, class... Args>
cudaError_t launch_with_shared(void (*kernel)(Params...), int blocks, int threads, std::size_t shared,
                               cudaStream_t stream, Args&&... args) {
    const cudaError_t status =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (status != cudaSuccess) return status;
    kernel<<<blocks, threads, shared, stream>>>(std::forward<Args>(args)...);
    return fault::after_launch(cudaGetLastError());
}

}  // namespace alignscope::kernels::profile
