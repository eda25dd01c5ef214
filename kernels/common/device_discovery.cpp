// Finds the CUDA devices at start-up and registers a backend for each usable
// one; a missing driver, a driver older than the runtime, or a device older
// than this build's kernels become "unavailable" entries that say why.
#include <alignscope/kernels/cuda_backend.hpp>

#include "common/compiled_architectures.hpp"
#include "common/cuda_check.hpp"
#include "common/device_probe.hpp"
#include "common/stream_pool.hpp"
#include "multi/gpu_group.hpp"
#include "pairwise/cuda_pair_backend.hpp"

#include <memory>
#include <string>

namespace alignscope::kernels {

namespace {

std::string cuda_version(int version) {
    if (version <= 0) return "none";
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

}  // namespace

std::string gib(std::uint64_t bytes) {
    const double value = static_cast<double>(bytes) / static_cast<double>(1ull << 30);
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", value);
    return text;
}

CudaProbe probe_cuda() {
    int runtime = 0, driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    CudaProbe probe;
    probe.driver_version = cuda_version(driver);
    probe.runtime_version = cuda_version(runtime);
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count > 0) {
        probe.device_count = count;
        return probe;
    }
    (void)cudaGetLastError();
    DeviceInfo info;
    info.id = "gpu";
    info.kind = "gpu";
    info.name = "CUDA GPUs";
    info.driver_version = probe.driver_version;
    info.runtime_version = probe.runtime_version;
    if (status == cudaErrorInsufficientDriver) {
        info.unavailable_reason = driver > 0 ? "the NVIDIA driver supports CUDA " + cuda_version(driver) +
                                                   ", older than the CUDA " + cuda_version(runtime) +
                                                   " runtime of this build (update the driver)"
                                             : "no NVIDIA driver is installed";
    } else if (status == cudaErrorNoDevice || status == cudaSuccess) {
        info.unavailable_reason = "no CUDA GPU was found";
    } else {
        info.unavailable_reason = "the CUDA runtime could not start: " + describe_cuda_error(status);
    }
    probe.unavailable = std::move(info);
    return probe;
}

void register_cuda_backends(DeviceRegistry& registry) {
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
        info.driver_version = probe.driver_version;
        info.runtime_version = probe.runtime_version;
        const cudaError_t got = cudaGetDeviceProperties(&props, d);
        if (got != cudaSuccess) {
            (void)cudaGetLastError();
            info.name = "CUDA device " + std::to_string(d);
            info.unavailable_reason = "cudaGetDeviceProperties failed: " + describe_cuda_error(got);
            registry.add_unavailable(std::move(info));
            continue;
        }
        info.name = props.name;
        info.sm_count = props.multiProcessorCount;
        info.memory_bytes = props.totalGlobalMem;
        info.compute_major = props.major;
        info.compute_minor = props.minor;
        const int capability = props.major * 10 + props.minor;
        info.description = "CUDA " + probe.runtime_version + ", compute capability " + std::to_string(props.major) +
                           "." + std::to_string(props.minor) + ", " + std::to_string(props.multiProcessorCount) +
                           " SMs, " + gib(props.totalGlobalMem) + ", " +
                           std::to_string(default_stream_count(props.multiProcessorCount)) +
                           " streams by default; kernels inter/intra s16x2 and s32" +
                           (capability >= 90 ? " (s16x2 in DPX instructions)" : " (s16x2 without DPX)");
        if (capability < needed) {
            info.unavailable_reason = "compute capability " + std::to_string(props.major) + "." +
                                      std::to_string(props.minor) + " is older than the " +
                                      std::to_string(needed / 10) + "." + std::to_string(needed % 10) +
                                      " this build's kernels need";
            registry.add_unavailable(std::move(info));
            continue;
        }
        registry.add(std::make_unique<CudaPairBackend>(CudaDevice{d, std::move(info)}));
    }
    registry.set_gpu_group_factory([](std::vector<Backend*> members) { return make_gpu_group(std::move(members)); });
}

}  // namespace alignscope::kernels
