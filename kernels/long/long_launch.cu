// Instantiates the strip kernel for R = 8 and 16 rows per lane, local and not.
#include "long/long_launch.hpp"

#include "long/strip_kernel.cuh"

namespace alignscope::kernels::longpass {

namespace {

template <int R, bool Local, bool Overview>
cudaError_t prepare(int alphabet, int* blocks_per_sm) {
    const std::size_t bytes = shared_bytes(R, alphabet);
    cudaError_t status = cudaFuncSetAttribute(device::strip_kernel<R, Local, Overview>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (status != cudaSuccess) return status;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, device::strip_kernel<R, Local, Overview>,
                                                         block_threads(), bytes);
}

template <int R, bool Local, bool Overview>
cudaError_t launch(const LaunchParams& params, int blocks, cudaStream_t stream) {
    device::strip_kernel<R, Local, Overview>
        <<<static_cast<unsigned>(blocks), static_cast<unsigned>(block_threads()), shared_bytes(R, params.alphabet), stream>>>(params);
    return cudaGetLastError();
}

}  // namespace

int block_threads() { return device::kWarpsPerBlock * 32; }

std::size_t shared_bytes(int r, int alphabet) {
    return static_cast<std::size_t>(device::kWarpsPerBlock) * static_cast<std::size_t>(alphabet) *
           static_cast<std::size_t>(r / 4) * 32 * sizeof(unsigned);
}

cudaError_t prepare_kernel(int r, bool local, bool overview, int alphabet, int* blocks_per_sm) {
    if (overview) {  // stage 1 only, and always with strips enough for R = 16
        return local ? prepare<16, true, true>(alphabet, blocks_per_sm) : prepare<16, false, true>(alphabet, blocks_per_sm);
    }
    if (r == 16)
        return local ? prepare<16, true, false>(alphabet, blocks_per_sm) : prepare<16, false, false>(alphabet, blocks_per_sm);
    return local ? prepare<8, true, false>(alphabet, blocks_per_sm) : prepare<8, false, false>(alphabet, blocks_per_sm);
}

cudaError_t launch_strip_kernel(int r, bool local, bool overview, const LaunchParams& params, int blocks,
                                cudaStream_t stream) {
    if (overview)
        return local ? launch<16, true, true>(params, blocks, stream) : launch<16, false, true>(params, blocks, stream);
    if (r == 16)
        return local ? launch<16, true, false>(params, blocks, stream) : launch<16, false, false>(params, blocks, stream);
    return local ? launch<8, true, false>(params, blocks, stream) : launch<8, false, false>(params, blocks, stream);
}

}  // namespace alignscope::kernels::longpass
