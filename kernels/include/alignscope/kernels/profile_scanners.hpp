// The GPU profile filter scanners' entry point: `alignscope-cli hmmsearch`
// calls it so that --device gpu:N runs the MSV/SSV and Viterbi filters on that
// GPU; the names of those kernels for the kernel grammar; and their entries in
// the kernel catalog (`verify --all-kernels`, `verify --profile`).
#pragma once

#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filter_verify.hpp>

#include <string>
#include <vector>

namespace alignscope::kernels {

// Adds a "gpu:N" profile filter scanner per usable CUDA device (compute
// capability 8.0 or newer). Never throws for a missing GPU: the registry then
// has only its CPU scanners.
void register_cuda_profile_scanners(alignscope::profile::ProfileScannerRegistry& registry);

// "sw_linear_ssv_s16x2", "sw_linear_msv_s16x2", "sw_affine_vitfilter_s32".
std::vector<std::string> profile_filter_kernel_names();

// The GPU scanner's MSV kernel alone over every target (the pipeline runs SSV
// first and MSV only where SSV cannot settle the score); empty for a scanner
// that is not a GPU's.
std::vector<alignscope::profile::ExtraMsvPass> profile_kernel_passes(
    alignscope::profile::ProfileFilterScanner& scanner);

// The GPU profile kernels in the catalog: SSV (as the pipeline runs it, SSV
// then MSV), MSV alone, the Viterbi filter, the Forward filter, the parser
// Backward and the envelope rescoring, on every GPU.
void add_cuda_profile_kernel_families(KernelCatalog& catalog);

}  // namespace alignscope::kernels
