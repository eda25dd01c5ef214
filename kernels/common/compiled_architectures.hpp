// What GPUs this build's kernels run on: every CUDA source of the library is
// compiled for the same architectures (CMAKE_CUDA_ARCHITECTURES), so one
// answer serves the pairwise, search, long-pair, all-against-all and profile
// kernels alike.
#pragma once

namespace alignscope::kernels {

// The lowest compute capability (major * 10 + minor) this build has machine
// code or PTX for; older devices cannot run its kernels.
int minimum_compute_capability();

}  // namespace alignscope::kernels
