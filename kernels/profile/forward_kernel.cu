// The GPU Forward filter: four threads a target, each one lane of HMMER's
// striped four-float layout running forward_lanes() (forward_lanes.hpp), so
// every product and sum is the SSE code's, rounded alone (PTX .rn, never
// fused) with subnormals flushed (.ftz: SSE's FTZ/DAZ). Each thread's row
// sits in shared memory where it fits (else in a global scratch array
// interleaved over threads), and the model too where both fit; groups take
// targets longest first from a global counter.
#include "profile/filter_launch.hpp"
#include "profile/forward_lanes.hpp"
#include "profile/four_lanes.cuh"

namespace alignscope::kernels::profile {

namespace {

constexpr int kForwardThreads = 64;  // per block: 16 targets at a time

// One lane of a target's four. Rows in shared memory (SharedRows: the
// block's threads interleaved, a stride the compiler knows) or in the global
// scratch (interleaved over every thread of the grid).
template <bool SharedRows>
struct DeviceForwardLanes : FourLanes {
    float* rows;  // this thread's row: [(array * Q + q) * stride]
    int Q;
    std::uint32_t global_stride;

    __device__ static void note_greater(bool& f, float a, float b) { f = f || a > b; }
    __device__ std::size_t at(int a, int q) const {
        if constexpr (SharedRows) return static_cast<std::size_t>(a * Q + q) * kForwardThreads;
        else
            return static_cast<std::size_t>(a * Q + q) * global_stride;
    }
    __device__ float get(int a, int q) const { return rows[at(a, q)]; }
    __device__ void put(int a, int q, float v) { rows[at(a, q)] = v; }
};

// Shared memory: the rows first (SharedRows), then the model (shared_model).
template <bool SharedRows>
__global__ void __launch_bounds__(kForwardThreads)
    forward_filter_kernel(ForwardBatchView batch, ForwardModelView model, int model_floats, bool shared_model) {
    extern __shared__ float shared_floats[];
    model.striped = block_model(model.striped, shared_floats + (SharedRows ? 3 * model.Q * kForwardThreads : 0),
                                model_floats, shared_model);
    const std::uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
    float* rows = SharedRows ? shared_floats + threadIdx.x : batch.scratch + thread;
    DeviceForwardLanes<SharedRows> g{FourLanes::of_thread(), rows, model.Q, batch.stride};
    for (;;) {
        const std::uint32_t item = g.next_item(batch.counter);
        if (item >= batch.count) break;
        const std::uint32_t position = batch.order[item];
        const std::uint32_t t = batch.list[position];
        const std::uint64_t begin = batch.offsets[t];
        ForwardTargetView target;
        target.dsq = batch.residues + begin;
        target.L = static_cast<int>(batch.offsets[t + 1] - begin);
        target.loop = batch.length[position].x;
        target.move = batch.length[position].y;
        target.specials = batch.specials + batch.first_row[position] * kForwardSpecials;
        const ForwardOutcome out = forward_lanes(g, model, target);
        if (g.lead()) batch.result[position] = make_float2(out.xC, out.total_scale);
    }
}

template <bool SharedRows>
cudaError_t forward_at(const ForwardBatchView& batch, const ForwardModelView& model, int model_floats,
                       bool shared_model, int blocks, cudaStream_t stream) {
    return launch_with_shared(forward_filter_kernel<SharedRows>, blocks, kForwardThreads,
                              forward_shared_bytes(model.Q, model_floats, SharedRows, shared_model), stream, batch,
                              model, model_floats, shared_model);
}

}  // namespace

int forward_threads_per_block() { return kForwardThreads; }

std::size_t forward_shared_bytes(int segments, int model_floats, bool shared_rows, bool shared_model) {
    const std::size_t rows =
        shared_rows ? static_cast<std::size_t>(3) * static_cast<std::size_t>(segments) * kForwardThreads : 0;
    return (rows + (shared_model ? static_cast<std::size_t>(model_floats) : 0)) * sizeof(float);
}

cudaError_t launch_forward_filter(const ForwardBatchView& batch, const ForwardModelView& model, int model_floats,
                                  bool shared_rows, bool shared_model, int blocks, cudaStream_t stream) {
    return shared_rows ? forward_at<true>(batch, model, model_floats, shared_model, blocks, stream)
                       : forward_at<false>(batch, model, model_floats, shared_model, blocks, stream);
}

cudaError_t load_forward_kernels() {
    cudaFuncAttributes attributes{};
    const cudaError_t status = cudaFuncGetAttributes(&attributes, forward_filter_kernel<true>);
    return status == cudaSuccess ? cudaFuncGetAttributes(&attributes, forward_filter_kernel<false>) : status;
}

}  // namespace alignscope::kernels::profile
