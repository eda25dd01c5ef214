// Test-only fault injection for the CUDA backend, to check that a job whose
// device allocation or kernel launch fails mid-batch ends cleanly: one clear
// error, nothing half-written, no crash (scripts/gpu-check --steps fault).
//
// The environment variable ALIGNSCOPE_FAULT, read once at the first device
// allocation or launch of the process, names the calls to fail, as a comma
// list:
//   alloc:N   the Nth allocation (cudaMalloc or cudaMallocHost through
//             CudaBuffer, counted from 1 over the whole process) fails with
//             cudaErrorMemoryAllocation without allocating;
//   launch:N  the Nth kernel launch (pairwise passes, long-pair strips,
//             database scan, profile filters) reports cudaErrorLaunchFailure
//             once it is queued.
// Each injected failure is said on stderr ("ALIGNSCOPE_FAULT: failing
// allocation N"), so a test can tell a job that never reached it from one
// that swallowed it. Unset or empty, nothing is injected and each call costs
// a flag check. A malformed value is an Error naming ALIGNSCOPE_FAULT.
#pragma once

#include <cuda_runtime_api.h>

namespace alignscope::kernels::fault {

// `status` of an allocation call about to be made: cudaErrorMemoryAllocation
// when this is the allocation to fail (the caller then does not allocate),
// else cudaSuccess.
cudaError_t before_allocation();

// The status of a launch just queued, or cudaErrorLaunchFailure when this is
// the launch to fail.
cudaError_t after_launch(cudaError_t status);

}  // namespace alignscope::kernels::fault
