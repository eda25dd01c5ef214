// Instantiates the strip kernel for R = 8 and 16 rows per lane, local and not,
// with and without the column-slice extras (explicit left edge, last column).
#include "long/long_launch.hpp"

#include "common/fault_injection.hpp"

#include "long/strip_kernel.cuh"

namespace alignscope::kernels::longpass {

namespace {

template <int R, bool Local, bool Overview, bool Slice>
cudaError_t prepare(int alphabet, int* blocks_per_sm) {
    const std::size_t bytes = shared_bytes(R, alphabet);
    cudaError_t status = cudaFuncSetAttribute(device::strip_kernel<R, Local, Overview, Slice>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
    if (status != cudaSuccess) return status;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, device::strip_kernel<R, Local, Overview, Slice>,
                                                         block_threads(), bytes);
}

template <int R, bool Local, bool Overview, bool Slice>
cudaError_t launch(const LaunchParams& params, int blocks, cudaStream_t stream) {
    device::strip_kernel<R, Local, Overview, Slice>
        <<<static_cast<unsigned>(blocks), static_cast<unsigned>(block_threads()), shared_bytes(R, params.alphabet),
           stream>>>(params);
    return cudaGetLastError();
}

// The variant for (R, local, overview, slice): f.template operator()<R, L, O, S>().
template <typename F>
cudaError_t dispatch(int r, bool local, bool overview, bool slice, F&& f) {
    auto with_slice = [&]<int R, bool L, bool O>() {
        return slice ? f.template operator()<R, L, O, true>() : f.template operator()<R, L, O, false>();
    };
    if (overview)  // stage 1 only, and always with strips enough for R = 16
        return local ? with_slice.template operator()<16, true, true>()
                     : with_slice.template operator()<16, false, true>();
    if (r == 16)
        return local ? with_slice.template operator()<16, true, false>()
                     : with_slice.template operator()<16, false, false>();
    return local ? with_slice.template operator()<8, true, false>() : with_slice.template operator()<8, false, false>();
}

}  // namespace

int block_threads() { return device::kWarpsPerBlock * 32; }

std::size_t shared_bytes(int r, int alphabet) {
    return static_cast<std::size_t>(device::kWarpsPerBlock) * static_cast<std::size_t>(alphabet) *
           static_cast<std::size_t>(r / 4) * 32 * sizeof(unsigned);
}

cudaError_t prepare_kernel(int r, bool local, bool overview, bool slice, int alphabet, int* blocks_per_sm) {
    return dispatch(r, local, overview, slice,
                    [&]<int R, bool L, bool O, bool S>() { return prepare<R, L, O, S>(alphabet, blocks_per_sm); });
}

cudaError_t launch_strip_kernel(int r, bool local, bool overview, bool slice, const LaunchParams& params, int blocks,
                                cudaStream_t stream) {
    return fault::after_launch(dispatch(r, local, overview, slice, [&]<int R, bool L, bool O, bool S>() {
        return launch<R, L, O, S>(params, blocks, stream);
    }));
}

}  // namespace alignscope::kernels::longpass
