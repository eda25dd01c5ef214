// Turns a failed CUDA call into the engine's error type.
#include "common/cuda_check.hpp"

#include <alignscope/error.hpp>

namespace alignscope::kernels {

std::string describe_cuda_error(cudaError_t status) {
    return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

void throw_cuda_error(cudaError_t status, const char* call, const CudaSite& site) {
    // Clear a non-sticky error so the next job on this device starts clean; a
    // sticky one (an illegal address) stays and fails later calls, each of
    // which reports itself the same way.
    (void)cudaGetLastError();
    std::string message = "CUDA error on " + (site.device.empty() ? std::string("the GPU") : site.device);
    if (!site.job.empty()) message += " while running " + site.job;
    message += ": " + std::string(call) + " failed with " + describe_cuda_error(status);
    if (status == cudaErrorMemoryAllocation) message += " (try a smaller --gpu-mem budget or fewer --streams)";
    throw Error(message);
}

}  // namespace alignscope::kernels
