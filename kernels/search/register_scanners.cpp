// Registers a CUDA database scanner for every GPU that can run this build's
// scan kernels.
#include <alignscope/kernels/search_scanners.hpp>

#include "common/compiled_architectures.hpp"
#include "common/cuda_check.hpp"
#include "common/device_probe.hpp"
#include "search/cuda_scanner.hpp"

#include <memory>
#include <string>

namespace alignscope::kernels {

void register_cuda_scanners(ScannerRegistry& registry) {
    const CudaProbe probe = probe_cuda();
    if (probe.unavailable) {
        registry.add_unavailable(*probe.unavailable);
        return;
    }
    const int count = probe.device_count;
    const int needed = minimum_compute_capability();
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp props{};
        DeviceInfo info;
        info.id = "gpu:" + std::to_string(d);
        info.kind = "gpu";
        if (cudaGetDeviceProperties(&props, d) != cudaSuccess) {
            (void)cudaGetLastError();
            info.name = "CUDA device " + std::to_string(d);
            info.unavailable_reason = "cudaGetDeviceProperties failed";
            registry.add_unavailable(std::move(info));
            continue;
        }
        info.name = props.name;
        info.sm_count = props.multiProcessorCount;
        info.memory_bytes = props.totalGlobalMem;
        info.compute_major = props.major;
        info.compute_minor = props.minor;
        info.description = "database scan: 16-bit DPX query-pair kernels with 32-bit rescoring, " +
                           std::to_string(props.multiProcessorCount) + " SMs, " + gib(props.totalGlobalMem);
        const int capability = props.major * 10 + props.minor;
        if (capability < needed) {
            info.unavailable_reason = "compute capability " + std::to_string(props.major) + "." +
                                      std::to_string(props.minor) + " is older than the " +
                                      std::to_string(needed / 10) + "." + std::to_string(needed % 10) +
                                      " this build's scan kernels need";
            registry.add_unavailable(std::move(info));
            continue;
        }
        registry.add(
            info, [d, info] { return std::make_unique<CudaScanner>(d, info); },
            [](const ScanSetup& setup) { return CudaScanner::capability(setup); });
    }
}

}  // namespace alignscope::kernels
