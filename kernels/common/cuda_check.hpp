// CUDA runtime failures as alignscope::Error: every message names the CUDA
// call, the device and the job, so a user can tell what failed where.
#pragma once

#include "common/vector_state.hpp"

#include <cuda_runtime_api.h>

#include <string>

namespace alignscope::kernels {

// Where a CUDA call happens: "gpu:0 (NVIDIA H100 80GB HBM3)" and the job,
// e.g. "align 1000 pairs (local, affine)".
struct CudaSite {
    std::string device;
    std::string job;
};

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const CudaSite& site);

// Every call: the driver may leave the AVX registers' upper halves in use
// (vector_state.hpp).
inline void check_cuda(cudaError_t status, const char* call, const CudaSite& site) {
    clear_upper_vector_state();
    if (status != cudaSuccess) throw_cuda_error(status, call, site);
}

// "cudaErrorMemoryAllocation: out of memory".
std::string describe_cuda_error(cudaError_t status);

}  // namespace alignscope::kernels

#define ALIGNSCOPE_CUDA(call, site) ::alignscope::kernels::check_cuda((call), #call, (site))
