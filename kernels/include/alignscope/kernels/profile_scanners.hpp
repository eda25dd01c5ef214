// The GPU profile filter scanners' entry point: `alignscope-cli hmmsearch`
// calls it so that --device gpu:N runs the MSV/SSV and Viterbi filters on that
// GPU; and the names of those kernels for the kernel grammar.
#pragma once

#include <alignscope/profile/filter_scan.hpp>

#include <string>
#include <vector>

namespace alignscope::kernels {

// Adds a "gpu:N" profile filter scanner per usable CUDA device (compute
// capability 8.0 or newer). Never throws for a missing GPU: the registry then
// has only its CPU scanners.
void register_cuda_profile_scanners(alignscope::profile::ProfileScannerRegistry& registry);

// "sw_linear_ssv_s16x2", "sw_linear_msv_s16x2", "sw_affine_vitfilter_s32".
std::vector<std::string> profile_filter_kernel_names();

}  // namespace alignscope::kernels
