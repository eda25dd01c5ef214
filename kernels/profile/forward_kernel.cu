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

// One lane of a target's four, its row in shared memory where it fits.
template <bool SharedRows, int Threads>
using DeviceForwardLanes = RowLanes<SharedRows, Threads>;

// Shared memory: the rows first (SharedRows), then the model (shared_model).
// Threads a block: kRowsWideThreads, or kRowsNarrowThreads (rows shared).
template <bool SharedRows, int Threads>
__global__ void __launch_bounds__(Threads)
    forward_filter_kernel(ForwardBatchView batch, ForwardModelView model, int model_floats, bool shared_model) {
    extern __shared__ float shared_floats[];
    model.striped = block_model(model.striped, shared_floats + (SharedRows ? 3 * model.Q * Threads : 0), model_floats,
                                shared_model);
    auto g = DeviceForwardLanes<SharedRows, Threads>::of_thread(shared_floats, batch.scratch, model.Q, batch.stride);
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

template <bool SharedRows, int Threads>
cudaError_t forward_at(const ForwardBatchView& batch, const ForwardModelView& model, int model_floats,
                       bool shared_model, int blocks, cudaStream_t stream) {
    return launch_with_shared(forward_filter_kernel<SharedRows, Threads>, blocks, Threads,
                              forward_shared_bytes(model.Q, model_floats, SharedRows, shared_model, Threads), stream,
                              batch, model, model_floats, shared_model);
}

}  // namespace

int forward_threads_per_block() { return kRowsWideThreads; }

std::size_t forward_shared_bytes(int segments, int model_floats, bool shared_rows, bool shared_model, int threads) {
    const std::size_t rows = shared_rows ? static_cast<std::size_t>(3) * static_cast<std::size_t>(segments) *
                                               static_cast<std::size_t>(threads)
                                         : 0;
    return (rows + (shared_model ? static_cast<std::size_t>(model_floats) : 0)) * sizeof(float);
}

cudaError_t launch_forward_filter(const ForwardBatchView& batch, const ForwardModelView& model, int model_floats,
                                  bool shared_rows, bool shared_model, int blocks, cudaStream_t stream, int threads) {
    if (threads == kRowsNarrowThreads) {
        if (!shared_rows || !shared_model) return cudaErrorInvalidConfiguration;
        return forward_at<true, kRowsNarrowThreads>(batch, model, model_floats, true, blocks, stream);
    }
    if (threads != kRowsWideThreads) return cudaErrorInvalidConfiguration;
    return shared_rows ? forward_at<true, kRowsWideThreads>(batch, model, model_floats, shared_model, blocks, stream)
                       : forward_at<false, kRowsWideThreads>(batch, model, model_floats, shared_model, blocks, stream);
}

cudaError_t load_forward_kernels() {
    cudaFuncAttributes attributes{};
    cudaError_t status = cudaFuncGetAttributes(&attributes, forward_filter_kernel<true, kRowsWideThreads>);
    if (status == cudaSuccess)
        status = cudaFuncGetAttributes(&attributes, forward_filter_kernel<false, kRowsWideThreads>);
    return status == cudaSuccess ? cudaFuncGetAttributes(&attributes, forward_filter_kernel<true, kRowsNarrowThreads>)
                                 : status;
}

}  // namespace alignscope::kernels::profile
