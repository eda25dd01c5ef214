// The CUDA database scanners' entry point: the CLI (and the GUI) call it at
// start-up so the engine's scanner registry knows every usable GPU for
// `search`, and why a GPU cannot scan when it cannot.
#pragma once

#include <alignscope/search/scan.hpp>

namespace alignscope::kernels {

// Adds a "gpu:N" scanner per usable CUDA device and an unavailable entry (with
// the reason) when there is no driver, no GPU, or a GPU older than this
// build's kernels. Never throws for a missing GPU.
void register_cuda_scanners(ScannerRegistry& registry);

}  // namespace alignscope::kernels
