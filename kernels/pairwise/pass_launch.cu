// Instantiates the pairwise kernels and launches the one a variant and pass
// ask for. Dispatch only: the kernel bodies live in the .cuh files.
#include "pairwise/pass_launch.hpp"

#include "pairwise/family_layout.hpp"
#include "pairwise/wavefront_s16.cuh"
#include "pairwise/wavefront_s32.cuh"

namespace alignscope::kernels {

namespace {

constexpr int kBlockThreads = 128;

template <int G, int R, bool Local, bool Trace>
cudaError_t launch_s32(const PassParams& params, cudaStream_t stream) {
    const long long threads = static_cast<long long>(params.count) * G;
    const unsigned blocks = static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
    device::wavefront_s32<G, R, Local, Trace><<<blocks, kBlockThreads, 0, stream>>>(params);
    return cudaGetLastError();
}

template <int G>
cudaError_t launch_family_s32(bool local, PassKind kind, const PassParams& params, cudaStream_t stream) {
    if (kind == PassKind::Traceback) return launch_s32<G, 8, false, true>(params, stream);
    return local ? launch_s32<G, 8, true, false>(params, stream) : launch_s32<G, 8, false, false>(params, stream);
}

template <int G, int R, bool Local>
cudaError_t launch_s16(const PassParams& params, cudaStream_t stream) {
    const long long groups = (static_cast<long long>(params.count) + 1) / 2;
    const long long threads = groups * G;
    const unsigned blocks = static_cast<unsigned>((threads + kBlockThreads - 1) / kBlockThreads);
    device::wavefront_s16<G, R, Local><<<blocks, kBlockThreads, 0, stream>>>(params);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_pass(const KernelVariant& variant, PassKind kind, const PassParams& params, cudaStream_t stream) {
    if (params.count == 0) return cudaSuccess;
    const bool local = variant.mode == AlignmentMode::Local && kind != PassKind::Traceback;
    if (variant.width == LaneWidth::S16 && kind != PassKind::Traceback) {
        if (variant.family == KernelFamily::Inter)
            return local ? launch_s16<1, 8, true>(params, stream) : launch_s16<1, 8, false>(params, stream);
        return local ? launch_s16<32, 8, true>(params, stream) : launch_s16<32, 8, false>(params, stream);
    }
    if (variant.family == KernelFamily::Inter) return launch_family_s32<1>(local, kind, params, stream);
    return launch_family_s32<32>(local, kind, params, stream);
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
