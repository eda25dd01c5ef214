// Launching the long-pair strip kernel from plain C++ (the templates live in
// long_launch.cu).
#pragma once

#include "long/long_types.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace alignscope::kernels::longpass {

// Threads per block of the strip kernel.
int block_threads();
// Dynamic shared memory one block needs (the warps' query profiles).
std::size_t shared_bytes(int r, int alphabet);
// Sets the kernel's shared-memory limit and returns how many blocks of it fit
// on one SM (0 when it cannot run: too large an alphabet). `slice`: some task
// has an explicit left edge or wants its last column (the kernels with those
// extras; the others are as fast as they were without them).
cudaError_t prepare_kernel(int r, bool local, bool overview, bool slice, int alphabet, int* blocks_per_sm);
// Enqueues one strip kernel of `blocks` blocks; every kernel of a pass shares
// params.ticket, so several of them on several streams share the strips.
// `overview`: some task fills an overview grid (then R is 16).
cudaError_t launch_strip_kernel(int r, bool local, bool overview, bool slice, const LaunchParams& params, int blocks,
                                cudaStream_t stream);

}  // namespace alignscope::kernels::longpass
