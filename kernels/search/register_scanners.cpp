// Registers a CUDA database scanner for every GPU that can run this build's
// scan kernels.
#include <alignscope/kernels/search_scanners.hpp>

#include "common/cuda_check.hpp"
#include "search/cuda_scanner.hpp"

#include <cstdio>
#include <memory>
#include <string>

namespace alignscope::kernels {
namespace {

std::string gib(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
    return text;
}

}  // namespace

void register_cuda_scanners(ScannerRegistry& registry) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        DeviceInfo info;
        info.id = "gpu";
        info.kind = "gpu";
        info.name = "CUDA GPUs";
        info.unavailable_reason = status == cudaSuccess || status == cudaErrorNoDevice
                                      ? "no CUDA GPU was found"
                                      : "the CUDA runtime could not start: " + describe_cuda_error(status);
        registry.add_unavailable(std::move(info));
        return;
    }
    const int needed = search::dbscan_minimum_compute_capability();
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
