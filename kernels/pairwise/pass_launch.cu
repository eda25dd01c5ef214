// Instantiates the pairwise kernels and launches the one a variant and pass
// ask for. Dispatch only: the kernel bodies live in the .cuh files.
#include "pairwise/pass_launch.hpp"

#include "common/fault_injection.hpp"

#include "pairwise/family_layout.hpp"
#include "pairwise/local_s16.cuh"
#include "pairwise/trace_s32.cuh"
#include "pairwise/wavefront_s16.cuh"
#include "pairwise/wavefront_s32.cuh"

#include <type_traits>

namespace alignscope::kernels {

namespace {

constexpr int kBlockThreads = 128;
static_assert(kBlockThreads == device::kS16BlockThreads, "the 16-bit profile planes are laid out for this block");
// Query rows per thread of the 16-bit passes. Free to differ from the 32-bit
// traceback pass's 8 (its direction words hold 8 rows): a 16-bit group hands
// on only its strip's bottom row, whatever its height.
constexpr int kS16Rows = 8;

template <int G, int R, bool Local, bool Trace>
cudaError_t launch_s32(const PassParams& params, cudaStream_t stream) {
    const long long threads = static_cast<long long>(params.count) * G;
    const unsigned blocks = static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
    device::wavefront_s32<G, R, Local, Trace><<<blocks, kBlockThreads, 0, stream>>>(params);
    return cudaGetLastError();
}

template <int G>
cudaError_t launch_family_s32(bool local, PassKind kind, const PassParams& params, cudaStream_t stream) {
    if (kind == PassKind::Traceback) {
        if constexpr (G >= 4) {
            const long long threads = static_cast<long long>(params.count) * G;
            const unsigned blocks = static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
            device::trace_s32<G><<<blocks, kBlockThreads, 0, stream>>>(params);
            return cudaGetLastError();
        }
        return launch_s32<G, 8, false, true>(params, stream);
    }
    return local ? launch_s32<G, 8, true, false>(params, stream) : launch_s32<G, 8, false, false>(params, stream);
}

template <int G, int R, bool Local>
cudaError_t launch_s16(const PassParams& params, cudaStream_t stream) {
    const long long groups = (static_cast<long long>(params.count) + 1) / 2;
    const long long threads = groups * G;
    const unsigned blocks = static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
    const unsigned profile = device::s16_profile_bytes<G>(params.letters);
    if constexpr (Local && G >= 4) {
        if (params.longest_target <= device::kLocalS16MaxColumns) {
            const cudaError_t set =
                cudaFuncSetAttribute(device::local_s16<G>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(profile));
            if (set != cudaSuccess) return set;
            device::local_s16<G><<<blocks, kBlockThreads, profile, stream>>>(params);
            return cudaGetLastError();
        }
    }
    const cudaError_t set =
        cudaFuncSetAttribute(device::wavefront_s16<G, R, Local>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(profile));
    if (set != cudaSuccess) return set;
    device::wavefront_s16<G, R, Local><<<blocks, kBlockThreads, profile, stream>>>(params);
    return cudaGetLastError();
}

cudaError_t dispatch_pass(const KernelVariant& variant, PassKind kind, const PassParams& params, cudaStream_t stream) {
    const bool local = variant.mode == AlignmentMode::Local && kind != PassKind::Traceback;
    const bool s16 = variant.width == LaneWidth::S16 && kind != PassKind::Traceback;
    auto with_group = [&](auto group) {
        constexpr int G = decltype(group)::value;
        if (s16)
            return local ? launch_s16<G, kS16Rows, true>(params, stream)
                         : launch_s16<G, kS16Rows, false>(params, stream);
        return launch_family_s32<G>(local, kind, params, stream);
    };
    switch (variant.threads_per_pair()) {
        case 1: return with_group(std::integral_constant<int, 1>{});
        case 4: return with_group(std::integral_constant<int, 4>{});
        case 8: return with_group(std::integral_constant<int, 8>{});
        case 16: return with_group(std::integral_constant<int, 16>{});
        case 32: return with_group(std::integral_constant<int, 32>{});
        default: return cudaErrorInvalidValue;
    }
}

}  // namespace

cudaError_t launch_pass(const KernelVariant& variant, PassKind kind, const PassParams& params, cudaStream_t stream) {
    if (params.count == 0) return cudaSuccess;
    return fault::after_launch(dispatch_pass(variant, kind, params, stream));
}

int minimum_compute_capability() {
#ifdef __CUDA_ARCH_LIST__
    constexpr int archs[] = {__CUDA_ARCH_LIST__};
    int lowest = archs[0];
    for (int a : archs) lowest = a < lowest ? a : lowest;
    return lowest / 10;
#else
    return 90;
#endif
}

}  // namespace alignscope::kernels
