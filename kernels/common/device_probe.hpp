// What the CUDA runtime says about this machine before any backend is made:
// how many devices there are, the driver and runtime versions, and, when there
// is no usable device, the "unavailable" registry entry that says why. Shared by
// the pairwise backends and the database scanners so both explain it alike.
#pragma once

#include <alignscope/device/backend.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace alignscope::kernels {

struct CudaProbe {
    int device_count = 0;
    std::string driver_version;  // "13.0", or "none"
    std::string runtime_version;
    std::optional<DeviceInfo> unavailable;  // set when device_count == 0
};

CudaProbe probe_cuda();

// "139.8 GiB"
std::string gib(std::uint64_t bytes);

}  // namespace alignscope::kernels
