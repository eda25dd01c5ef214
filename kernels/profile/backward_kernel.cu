// The GPU parser Backward: four threads a target, each one lane of HMMER's
// striped four-float layout running backward_lanes() (backward_lanes.hpp),
// every product and sum the SSE code's, rounded alone (PTX .rn, never fused)
// with subnormals flushed (.ftz: SSE's FTZ/DAZ). Rows and model sit where
// the Forward filter's do (forward_kernel.cu: shared memory where they fit,
// else the global scratch interleaved over threads); groups take targets
// longest first from a global counter. The Forward's scale factor of each
// row is read by the group's first lane and passed to the others.
#include "profile/backward_lanes.hpp"
#include "profile/filter_launch.hpp"

#include "common/fault_injection.hpp"

#include <cstdlib>
#include <string_view>

namespace alignscope::kernels::profile {

namespace {

constexpr int kBackwardThreads = 64;  // per block: 16 targets at a time (the Forward filter's shape)

template <bool SharedRows>
struct DeviceBackwardLanes {
    using V = float;
    using Flag = bool;
    float* rows;  // this thread's row: [(array * Q + q) * stride]
    int Q;
    std::uint32_t global_stride;
    unsigned mask;  // the group's four lanes
    int lane;       // 0..3

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
    __device__ float seg(const float* p) const { return p[lane]; }
    // [a0 a1 a2 a3] -> [a1 a2 a3 0] over the group's lanes.
    __device__ float shift_down(float a) const {
        const float v = __shfl_down_sync(mask, a, 1, 4);
        return lane == 3 ? 0.0f : v;
    }
    __device__ float sum(float a) const {
        const float t0 = __shfl_sync(mask, a, 0, 4), t1 = __shfl_sync(mask, a, 1, 4);
        const float t2 = __shfl_sync(mask, a, 2, 4), t3 = __shfl_sync(mask, a, 3, 4);
        return add(add(t0, t1), add(t2, t3));
    }
    // One read by the lead lane, for all four (the lead lane alone writes the
    // rows' specials, which may share storage with the scale factors).
    __device__ float broadcast(const float* p) const {
        float v = 0.0f;
        if (lane == 0) v = *p;
        return __shfl_sync(mask, v, 0, 4);
    }
    __device__ bool lead() const { return lane == 0; }
    __device__ std::size_t at(int a, int q) const {
        if constexpr (SharedRows) return static_cast<std::size_t>(a * Q + q) * kBackwardThreads;
        else
            return static_cast<std::size_t>(a * Q + q) * global_stride;
    }
    __device__ float get(int a, int q) const { return rows[at(a, q)]; }
    __device__ void put(int a, int q, float v) { rows[at(a, q)] = v; }
};

// Shared memory: the rows first (SharedRows), then the model (shared_model).
template <bool SharedRows, int Ahead>
__global__ void __launch_bounds__(kBackwardThreads)
    backward_parser_kernel(BackwardBatchView batch, ForwardModelView model, int model_floats, bool shared_model) {
    extern __shared__ float shared_floats[];
    float* shared_model_floats = shared_floats + (SharedRows ? 3 * model.Q * kBackwardThreads : 0);
    if (shared_model) {
        for (int j = threadIdx.x; j < model_floats; j += blockDim.x) shared_model_floats[j] = model.striped[j];
        __syncthreads();
        model.striped = shared_model_floats;
    }
    const int lane = threadIdx.x & 3;
    const unsigned mask = 0xfu << (threadIdx.x & 28);
    const std::uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
    float* rows = SharedRows ? shared_floats + threadIdx.x : batch.scratch + thread;
    DeviceBackwardLanes<SharedRows> g{rows, model.Q, batch.stride, mask, lane};
    for (;;) {
        std::uint32_t item = 0;
        if (lane == 0) item = atomicAdd(batch.counter, 1u);
        item = __shfl_sync(mask, item, 0, 4);
        if (item >= batch.count) break;
        const std::uint32_t position = batch.order[item];
        const std::uint32_t t = batch.list[position];
        const std::uint64_t begin = batch.offsets[t];
        const std::uint64_t first_row = batch.first_row[position];
        BackwardTargetView target;
        target.dsq = batch.residues + begin;
        target.L = static_cast<int>(batch.offsets[t + 1] - begin);
        target.loop = batch.length[position].x;
        target.move = batch.length[position].y;
        target.scales = batch.scales + first_row * batch.scale_step;
        target.specials = batch.specials + first_row * kForwardSpecials;
        const BackwardOutcome out = backward_lanes<Ahead>(g, model, target);
        if (lane == 0) batch.result[position] = make_float2(out.xN, out.total_scale);
    }
}

template <bool SharedRows, int Ahead>
cudaError_t backward_at(const BackwardBatchView& batch, const ForwardModelView& model, int model_floats,
                        bool shared_model, int blocks, cudaStream_t stream) {
    const std::size_t shared = forward_shared_bytes(model.Q, model_floats, SharedRows, shared_model);
    cudaError_t status = cudaFuncSetAttribute(backward_parser_kernel<SharedRows, Ahead>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
    if (status != cudaSuccess) return status;
    backward_parser_kernel<SharedRows, Ahead>
        <<<blocks, kBackwardThreads, shared, stream>>>(batch, model, model_floats, shared_model);
    return fault::after_launch(cudaGetLastError());
}

// ALIGNSCOPE_BACKWARD_AHEAD=1 or 6: loads that many segments ahead instead
// of kBackwardAhead (the same results; to compare the schedules' speed).
int ahead() {
    static const int chosen = [] {
        const char* v = std::getenv("ALIGNSCOPE_BACKWARD_AHEAD");
        if (v && std::string_view(v) == "1") return 1;
        if (v && std::string_view(v) == "6") return 6;
        return kBackwardAhead;
    }();
    return chosen;
}

template <int Ahead>
cudaError_t backward_ahead(const BackwardBatchView& batch, const ForwardModelView& model, int model_floats,
                           bool shared_rows, bool shared_model, int blocks, cudaStream_t stream) {
    return shared_rows ? backward_at<true, Ahead>(batch, model, model_floats, shared_model, blocks, stream)
                       : backward_at<false, Ahead>(batch, model, model_floats, shared_model, blocks, stream);
}

}  // namespace

cudaError_t launch_backward_parser(const BackwardBatchView& batch, const ForwardModelView& model, int model_floats,
                                   bool shared_rows, bool shared_model, int blocks, cudaStream_t stream) {
    // The shared memory and scratch are sized by the Forward filter's shape.
    if (forward_threads_per_block() != kBackwardThreads) return cudaErrorInvalidConfiguration;
    switch (ahead()) {
        case 1: return backward_ahead<1>(batch, model, model_floats, shared_rows, shared_model, blocks, stream);
        case 6: return backward_ahead<6>(batch, model, model_floats, shared_rows, shared_model, blocks, stream);
        default:
            return backward_ahead<kBackwardAhead>(batch, model, model_floats, shared_rows, shared_model, blocks,
                                                  stream);
    }
}

cudaError_t load_backward_kernels() {
    cudaFuncAttributes attributes{};
    const cudaError_t status = cudaFuncGetAttributes(&attributes, backward_parser_kernel<true, kBackwardAhead>);
    return status == cudaSuccess ? cudaFuncGetAttributes(&attributes, backward_parser_kernel<false, kBackwardAhead>)
                                 : status;
}

}  // namespace alignscope::kernels::profile
