// Instantiates the strip kernel for R = 8 and 16 rows per lane, local and not.
#include "long/long_launch.hpp"

#include "long/strip_kernel.cuh"

namespace alignscope::kernels::longpass {

namespace {

template <int R, bool Local>
cudaError_t prepare(int alphabet, int* blocks_per_sm) {
    const std::size_t bytes = shared_bytes(R, alphabet);
    cudaError_t status = cudaFuncSetAttribute(device::strip_kernel<R, Local>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (status != cudaSuccess) return status;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, device::strip_kernel<R, Local>,
                                                         block_threads(), bytes);
}

template <int R, bool Local>
cudaError_t launch(const LaunchParams& params, int blocks, cudaStream_t stream) {
    device::strip_kernel<R, Local>
        <<<static_cast<unsigned>(blocks), static_cast<unsigned>(block_threads()), shared_bytes(R, params.alphabet), stream>>>(params);
    return cudaGetLastError();
}

}  // namespace

int block_threads() { return device::kWarpsPerBlock * 32; }

std::size_t shared_bytes(int r, int alphabet) {
    return static_cast<std::size_t>(device::kWarpsPerBlock) * static_cast<std::size_t>(alphabet) *
           static_cast<std::size_t>(r / 4) * 32 * sizeof(unsigned);
}

cudaError_t prepare_kernel(int r, bool local, int alphabet, int* blocks_per_sm) {
    if (r == 16) return local ? prepare<16, true>(alphabet, blocks_per_sm) : prepare<16, false>(alphabet, blocks_per_sm);
    return local ? prepare<8, true>(alphabet, blocks_per_sm) : prepare<8, false>(alphabet, blocks_per_sm);
}

cudaError_t launch_strip_kernel(int r, bool local, const LaunchParams& params, int blocks, cudaStream_t stream) {
    if (r == 16) return local ? launch<16, true>(params, blocks, stream) : launch<16, false>(params, blocks, stream);
    return local ? launch<8, true>(params, blocks, stream) : launch<8, false>(params, blocks, stream);
}

}  // namespace alignscope::kernels::longpass
