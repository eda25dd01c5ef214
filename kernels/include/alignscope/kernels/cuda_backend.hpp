// The CUDA backend's one entry point: the CLI and the GUI call it at start-up
// so the engine's device registry knows every usable GPU ("gpu:0", ...), the
// GPUs it cannot use and why, and how to run a job on several GPUs at once.
#pragma once

#include <alignscope/device/backend.hpp>

namespace alignscope::kernels {

// Adds one backend per usable CUDA device, an unavailable entry (with the
// reason) for every device or driver that cannot be used, and the multi-GPU
// group factory. Never throws for a missing GPU or driver: the CPU backends
// keep working and `devices` shows why the GPU is unavailable.
void register_cuda_backends(DeviceRegistry& registry);

}  // namespace alignscope::kernels

namespace alignscope {
class KernelCatalog;
}

namespace alignscope::kernels {

// Adds the CUDA kernel families (pairwise, database scan, long pair) to the
// catalog that `verify --all-kernels` runs.
void add_cuda_kernel_families(KernelCatalog& catalog);

}  // namespace alignscope::kernels
