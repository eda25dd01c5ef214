// Registers a GPU profile filter scanner for every CUDA device that can run
// the filter kernels.
#include <alignscope/kernels/profile_scanners.hpp>

#include "common/device_probe.hpp"
#include "profile/cuda_profile_scanner.hpp"
#include "profile/filter_launch.hpp"

#include <memory>
#include <string>

namespace alignscope::kernels {

namespace {
// __reduce_max_sync (row maxima) needs compute capability 8.0.
constexpr int kMinimumCapability = 80;
}  // namespace

void register_cuda_profile_scanners(alignscope::profile::ProfileScannerRegistry& registry)
{
    const CudaProbe probe = probe_cuda();
    for (int d = 0; d < probe.device_count; ++d) {
        cudaDeviceProp props{};
        if (cudaGetDeviceProperties(&props, d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (props.major * 10 + props.minor < kMinimumCapability) continue;
        DeviceInfo info;
        info.id = "gpu:" + std::to_string(d);
        info.kind = "gpu";
        info.name = props.name;
        info.sm_count = props.multiProcessorCount;
        info.memory_bytes = props.totalGlobalMem;
        info.compute_major = props.major;
        info.compute_minor = props.minor;
        info.description = std::string("profile filters: ") + profile::kSsvKernelName + " then " +
                           profile::kMsvKernelName + ", " + profile::kViterbiKernelName + " (a warp per target), " +
                           std::to_string(props.multiProcessorCount) + " SMs, " + gib(props.totalGlobalMem) +
                           "; Forward and the domain stage on the CPU threads";
        registry.add(info, [d, info](int threads) {
            auto scanner = std::make_unique<profile::CudaProfileScanner>(d, info, threads);
            return std::unique_ptr<alignscope::profile::ProfileFilterScanner>(std::move(scanner));
        });
    }
}

std::vector<std::string> profile_filter_kernel_names()
{
    return {profile::kSsvKernelName, profile::kMsvKernelName, profile::kViterbiKernelName};
}

}  // namespace alignscope::kernels
