// The profile filter kernels' instantiations (one per compiled segment count)
// and their launchers.
#include "profile/filter_kernels.cuh"
#include "profile/filter_launch.hpp"

#include "common/fault_injection.hpp"

namespace alignscope::kernels::profile {

std::size_t msv_shared_bytes(int segments, int codes) {
    return static_cast<std::size_t>(codes) * static_cast<std::size_t>(segments) * 32 * sizeof(std::uint32_t);
}

std::size_t viterbi_shared_bytes(int segments, int codes) {
    return static_cast<std::size_t>(ViterbiStripes::Transitions + codes) * static_cast<std::size_t>(segments) * 32 *
           sizeof(std::int16_t);
}

namespace {

template <int Q>
cudaError_t msv_at(const TargetView& targets, const std::uint32_t* cost, const MsvParams& params,
                   const std::uint8_t* tjb, std::int32_t* out, std::uint32_t* counter, bool full, int blocks,
                   cudaStream_t stream) {
    const std::size_t shared = msv_shared_bytes(Q, params.codes);
    cudaError_t status = cudaFuncSetAttribute(msv_filter_kernel<Q>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(shared));
    if (status != cudaSuccess) return status;
    msv_filter_kernel<Q><<<blocks, kFilterWarps * 32, shared, stream>>>(targets, cost, params, tjb, out, counter, full);
    return fault::after_launch(cudaGetLastError());
}

template <int Q>
cudaError_t viterbi_at(const TargetView& targets, const std::int16_t* tables, const ViterbiParams& params,
                       const std::uint32_t* list, const std::int16_t* ncj, std::int32_t* out, std::uint32_t* counter,
                       int blocks, cudaStream_t stream) {
    const std::size_t shared = viterbi_shared_bytes(Q, params.codes);
    cudaError_t status = cudaFuncSetAttribute(viterbi_filter_kernel<Q>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(shared));
    if (status != cudaSuccess) return status;
    viterbi_filter_kernel<Q>
        <<<blocks, kFilterWarps * 32, shared, stream>>>(targets, tables, params, list, ncj, out, counter);
    return fault::after_launch(cudaGetLastError());
}

}  // namespace

#define ALIGNSCOPE_FOR_SEGMENTS(X) X(1) X(2) X(3) X(4) X(6) X(8) X(12) X(16) X(24) X(32)
// The Viterbi filter's two more (filter_layout.hpp: kViterbiSegmentCounts).
#define ALIGNSCOPE_FOR_VITERBI_SEGMENTS(X) ALIGNSCOPE_FOR_SEGMENTS(X) X(48) X(64)

cudaError_t launch_msv_filter(int segments, const TargetView& targets, const std::uint32_t* cost,
                              const MsvParams& params, const std::uint8_t* tjb, std::int32_t* out,
                              std::uint32_t* counter, bool full, int blocks, cudaStream_t stream) {
    switch (segments) {
#define ALIGNSCOPE_MSV_CASE(Q) \
    case Q: return msv_at<Q>(targets, cost, params, tjb, out, counter, full, blocks, stream);
        ALIGNSCOPE_FOR_SEGMENTS(ALIGNSCOPE_MSV_CASE)
#undef ALIGNSCOPE_MSV_CASE
        default: return cudaErrorInvalidValue;
    }
}

cudaError_t launch_viterbi_filter(int segments, const TargetView& targets, const std::int16_t* tables,
                                  const ViterbiParams& params, const std::uint32_t* list, const std::int16_t* ncj,
                                  std::int32_t* out, std::uint32_t* counter, int blocks, cudaStream_t stream) {
    switch (segments) {
#define ALIGNSCOPE_VITERBI_CASE(Q) \
    case Q: return viterbi_at<Q>(targets, tables, params, list, ncj, out, counter, blocks, stream);
        ALIGNSCOPE_FOR_VITERBI_SEGMENTS(ALIGNSCOPE_VITERBI_CASE)
#undef ALIGNSCOPE_VITERBI_CASE
        default: return cudaErrorInvalidValue;
    }
}

// Every instantiation's code loaded now (cudaFuncGetAttributes loads what
// lazy module loading would load at the first launch).
cudaError_t load_filter_kernels() {
    cudaFuncAttributes attributes{};
    cudaError_t status = cudaSuccess;
#define ALIGNSCOPE_LOAD_MSV(Q) \
    if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, msv_filter_kernel<Q>);
#define ALIGNSCOPE_LOAD_VITERBI(Q) \
    if (status == cudaSuccess) status = cudaFuncGetAttributes(&attributes, viterbi_filter_kernel<Q>);
    ALIGNSCOPE_FOR_SEGMENTS(ALIGNSCOPE_LOAD_MSV)
    ALIGNSCOPE_FOR_VITERBI_SEGMENTS(ALIGNSCOPE_LOAD_VITERBI)
#undef ALIGNSCOPE_LOAD_MSV
#undef ALIGNSCOPE_LOAD_VITERBI
    return status;
}

#undef ALIGNSCOPE_FOR_VITERBI_SEGMENTS
#undef ALIGNSCOPE_FOR_SEGMENTS

}  // namespace alignscope::kernels::profile
