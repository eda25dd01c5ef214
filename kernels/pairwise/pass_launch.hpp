// Launching the pairwise passes: picks the compiled kernel for a variant and a
// pass, sizes the grid, and launches it on a stream. Host-callable from plain
// C++ (the templates live in pass_launch.cu).
#pragma once

#include "pairwise/kernel_catalog.hpp"
#include "pairwise/pass_types.hpp"

#include <cuda_runtime_api.h>

namespace alignscope::kernels {

// Enqueues one pass of `variant` over params.count pairs; returns the launch
// status (cudaGetLastError after the launch).
cudaError_t launch_pass(const KernelVariant& variant, PassKind kind, const PassParams& params, cudaStream_t stream);

}  // namespace alignscope::kernels
