// Instantiates the pairwise kernels and launches the one a variant and pass
// ask for. Dispatch only: the kernel bodies live in the .cuh files, their
// tuning in pairwise_policy.hpp.
//
// The kernels, named in the grammar's family and width with the group size
// and mode as template arguments (what CUPTI and nsys show; the timeline names
// each launch by the variant's KernelName, e.g. "sw_affine_intra8_s16", and
// keeps the pass and this device function in the event's detail):
//   inter_s32<Mode>             one thread per pair, every pass
//   intra_s32<G, Mode>          G threads per pair, forward and reverse
//   intra_s32_chunked<G, traceback>  the traceback pass of the intra families
//   inter_s16<Mode>             one thread per two pairs, forward and reverse
//   intra_s16<G, Mode>          bounded modes, and local targets too wide
//                               for the chunked kernel's end keys
//   intra_s16_chunked<G>        local forward and reverse of the intra families
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

static_assert(PairwiseInterPolicy::kBlockThreads == PairwiseIntraPolicy::kBlockThreads &&
                  PairwiseCommonPolicy::kBlockThreads == device::kS16BlockThreads,
              "the 16-bit profile planes are laid out for one block size");
static_assert(PairwiseCommonPolicy::kChunkColumns == wavefront::kChunkColumns, "a chunk is one word of residues");

// Blocks for `threads` threads of the family of G.
template <int G>
unsigned blocks_for(long long threads) {
    constexpr int block = PairwisePolicy<G>::kBlockThreads;
    return static_cast<unsigned>((threads + block - 1) / block);
}

template <int G, class Mode>
cudaError_t launch_s32(const PassParams& params, cudaStream_t stream) {
    constexpr int block = PairwisePolicy<G>::kBlockThreads;
    const unsigned blocks = blocks_for<G>(static_cast<long long>(params.count) * G);
    if constexpr (G == 1) device::inter_s32<Mode><<<blocks, block, 0, stream>>>(params);
    else if constexpr (Mode::trace)
        device::intra_s32_chunked<G, Mode><<<blocks, block, 0, stream>>>(params);
    else
        device::intra_s32<G, Mode><<<blocks, block, 0, stream>>>(params);
    return cudaGetLastError();
}

// Sets the kernel's dynamic shared memory (the 16-bit query profile) and
// launches it.
template <class Kernel>
cudaError_t launch_with_profile(Kernel kernel, unsigned blocks, int block, unsigned profile, const PassParams& params,
                                cudaStream_t stream) {
    const cudaError_t set =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(profile));
    if (set != cudaSuccess) return set;
    kernel<<<blocks, block, profile, stream>>>(params);
    return cudaGetLastError();
}

template <int G, class Mode>
cudaError_t launch_s16(const PassParams& params, cudaStream_t stream) {
    using Policy = PairwisePolicy<G>;
    const long long groups = (static_cast<long long>(params.count) + 1) / 2;
    const unsigned blocks = blocks_for<G>(groups * G);
    const unsigned profile = device::s16_profile_bytes<G>(params.letters);
    if constexpr (G == 1) {
        return launch_with_profile(device::inter_s16<Mode>, blocks, Policy::kBlockThreads, profile, params, stream);
    } else {
        if constexpr (Mode::local) {
            if (params.longest_target <= Policy::kLocalS16MaxColumns)
                return launch_with_profile(device::intra_s16_chunked<G>, blocks, Policy::kBlockThreads, profile, params,
                                           stream);
        }
        return launch_with_profile(device::intra_s16<G, Mode>, blocks, Policy::kBlockThreads, profile, params, stream);
    }
}

cudaError_t dispatch_pass(const KernelVariant& variant, PassKind kind, const PassParams& params, cudaStream_t stream) {
    const bool local = variant.mode == AlignmentMode::Local && kind != PassKind::Traceback;
    const bool s16 = variant.width == LaneWidth::S16 && kind != PassKind::Traceback;
    auto with_group = [&](auto group) {
        constexpr int G = decltype(group)::value;
        if (kind == PassKind::Traceback) return launch_s32<G, device::mode::traceback>(params, stream);
        if (s16)
            return local ? launch_s16<G, device::mode::sw>(params, stream)
                         : launch_s16<G, device::mode::nw_sg>(params, stream);
        return local ? launch_s32<G, device::mode::sw>(params, stream)
                     : launch_s32<G, device::mode::nw_sg>(params, stream);
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

}  // namespace alignscope::kernels
