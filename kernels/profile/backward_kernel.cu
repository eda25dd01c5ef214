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
#include "profile/four_lanes.cuh"

#include <cstdlib>
#include <string_view>

namespace alignscope::kernels::profile {

namespace {

// One lane of a target's four; rows where the Forward filter's are.
template <bool SharedRows, int Threads>
using DeviceBackwardLanes = RowLanes<SharedRows, Threads>;

// Shared memory: the rows first (SharedRows), then the model (shared_model).
// Threads a block: the Forward filter's (kRowsWideThreads or kRowsNarrowThreads).
template <bool SharedRows, int Ahead, int Threads>
__global__ void __launch_bounds__(Threads)
    backward_parser_kernel(BackwardBatchView batch, ForwardModelView model, int model_floats, bool shared_model) {
    extern __shared__ float shared_floats[];
    model.striped = block_model(model.striped, shared_floats + (SharedRows ? 3 * model.Q * Threads : 0), model_floats,
                                shared_model);
    auto g = DeviceBackwardLanes<SharedRows, Threads>::of_thread(shared_floats, batch.scratch, model.Q, batch.stride);
    for (;;) {
        const std::uint32_t item = g.next_item(batch.counter);
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
        if (g.lead()) batch.result[position] = make_float2(out.xN, out.total_scale);
    }
}

template <bool SharedRows, int Ahead, int Threads>
cudaError_t backward_at(const BackwardBatchView& batch, const ForwardModelView& model, int model_floats,
                        bool shared_model, int blocks, cudaStream_t stream) {
    return launch_with_shared(backward_parser_kernel<SharedRows, Ahead, Threads>, blocks, Threads,
                              forward_shared_bytes(model.Q, model_floats, SharedRows, shared_model, Threads), stream,
                              batch, model, model_floats, shared_model);
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
                           bool shared_rows, bool shared_model, int blocks, cudaStream_t stream, int threads) {
    if (threads == kRowsNarrowThreads) {
        if (!shared_rows || !shared_model) return cudaErrorInvalidConfiguration;
        return backward_at<true, Ahead, kRowsNarrowThreads>(batch, model, model_floats, true, blocks, stream);
    }
    if (threads != kRowsWideThreads) return cudaErrorInvalidConfiguration;
    return shared_rows
               ? backward_at<true, Ahead, kRowsWideThreads>(batch, model, model_floats, shared_model, blocks, stream)
               : backward_at<false, Ahead, kRowsWideThreads>(batch, model, model_floats, shared_model, blocks, stream);
}

}  // namespace

cudaError_t launch_backward_parser(const BackwardBatchView& batch, const ForwardModelView& model, int model_floats,
                                   bool shared_rows, bool shared_model, int blocks, cudaStream_t stream, int threads) {
    switch (ahead()) {
        case 1:
            return backward_ahead<1>(batch, model, model_floats, shared_rows, shared_model, blocks, stream, threads);
        case 6:
            return backward_ahead<6>(batch, model, model_floats, shared_rows, shared_model, blocks, stream, threads);
        default:
            return backward_ahead<kBackwardAhead>(batch, model, model_floats, shared_rows, shared_model, blocks, stream,
                                                  threads);
    }
}

cudaError_t load_backward_kernels() {
    cudaFuncAttributes attributes{};
    cudaError_t status =
        cudaFuncGetAttributes(&attributes, backward_parser_kernel<true, kBackwardAhead, kRowsWideThreads>);
    if (status == cudaSuccess)
        status = cudaFuncGetAttributes(&attributes, backward_parser_kernel<false, kBackwardAhead, kRowsWideThreads>);
    return status == cudaSuccess
               ? cudaFuncGetAttributes(&attributes, backward_parser_kernel<true, kBackwardAhead, kRowsNarrowThreads>)
               : status;
}

}  // namespace alignscope::kernels::profile
