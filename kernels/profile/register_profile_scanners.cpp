// Registers a GPU profile filter scanner for every CUDA device that can run
// the filter kernels (and Forward, Backward and the envelope rescoring), and
// the kernels' family in the kernel catalog.
#include <alignscope/error.hpp>
#include <alignscope/kernels/profile_scanners.hpp>
#include <alignscope/profile/filters.hpp>

#include "common/device_probe.hpp"
#include "profile/backward_lanes.hpp"
#include "profile/cuda_profile_scanner.hpp"
#include "profile/envelope_lanes.hpp"
#include "profile/filter_launch.hpp"

#include <limits>
#include <memory>
#include <string>

namespace alignscope::kernels {

namespace {
// __reduce_max_sync (row maxima) needs compute capability 8.0.
constexpr int kMinimumCapability = 80;
}  // namespace

void register_cuda_profile_scanners(alignscope::profile::ProfileScannerRegistry& registry) {
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
                           profile::kForwardKernelName + ", " + profile::kBackwardKernelName + " and " +
                           profile::kEnvelopeKernelName + " (four threads per target), " +
                           std::to_string(props.multiProcessorCount) + " SMs, " + gib(props.totalGlobalMem) +
                           "; regions, stochastic traces and the targets too long for the device on the CPU threads";
        registry.add(info, [d, info](int threads) {
            auto scanner = std::make_unique<profile::CudaProfileScanner>(d, info, threads);
            return std::unique_ptr<alignscope::profile::ProfileFilterScanner>(std::move(scanner));
        });
    }
}

std::vector<std::string> profile_filter_kernel_names() {
    return {profile::kSsvKernelName, profile::kMsvKernelName, profile::kViterbiKernelName, profile::kForwardKernelName};
}

std::vector<alignscope::profile::ExtraMsvPass> profile_kernel_passes(
    alignscope::profile::ProfileFilterScanner& scanner) {
    auto* gpu = dynamic_cast<profile::CudaProfileScanner*>(&scanner);
    if (!gpu) return {};
    alignscope::profile::ExtraMsvPass alone;
    alone.kernel = profile::kMsvKernelName;
    alone.run = [gpu](const alignscope::profile::MsvProfile& model, const alignscope::profile::ProfileTargets& targets,
                      std::span<float> scores) {
        // Models longer than the compiled kernels are filtered on the CPU: no kernel to judge.
        if (profile::segments_for(model.length, 64) == 0) return false;
        const std::vector<std::int32_t> codes = gpu->msv_codes(model, true);
        for (std::size_t t = 0; t < codes.size(); ++t)
            scores[t] = codes[t] == profile::kMsvOverflow
                            ? std::numeric_limits<float>::infinity()
                            : alignscope::profile::msv_score_of(model, codes[t], targets.length(t));
        return true;
    };
    return {alone};
}

void add_cuda_profile_kernel_families(KernelCatalog& catalog) {
    alignscope::profile::ProfileKernelFamily gpu;
    gpu.make_scanner = [](const std::string& device, int threads) {
        alignscope::profile::ProfileScannerRegistry registry;
        register_cuda_profile_scanners(registry);
        return registry.create(device, threads);
    };
    gpu.extra_passes = profile_kernel_passes;
    // The scanner's msv() is SSV over every target, then MSV where SSV cannot
    // settle the score: its scores stand for the SSV kernel; MSV is judged alone.
    gpu.msv_kernel = profile::kSsvKernelName;
    gpu.viterbi_kernel = profile::kViterbiKernelName;
    gpu.forward_kernel = profile::kForwardKernelName;
    gpu.backward_kernel = profile::kBackwardKernelName;
    gpu.envelope_kernel = profile::kEnvelopeKernelName;
    catalog.add({"profile",
                 "gpu",
                 {KernelName::parse(profile::kSsvKernelName), KernelName::parse(profile::kMsvKernelName),
                  KernelName::parse(profile::kViterbiKernelName), KernelName::parse(profile::kForwardKernelName),
                  KernelName::parse(profile::kBackwardKernelName), KernelName::parse(profile::kEnvelopeKernelName)},
                 alignscope::profile::make_profile_kernel_check(gpu)});
}

}  // namespace alignscope::kernels
