// Instantiates the strip kernel for the rows per lane of StripPolicy (8 and 16), local and not,
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
    constexpr int tall = StripPolicy::tall_rows, short_ = StripPolicy::short_rows;
    constexpr int overview_rows = StripPolicy::overview_rows;
    if (overview)  // stage 1 only, and always with strips enough for the overview's height
        return local ? with_slice.template operator()<overview_rows, true, true>()
                     : with_slice.template operator()<overview_rows, false, true>();
    if (r == tall)
        return local ? with_slice.template operator()<tall, true, false>()
                     : with_slice.template operator()<tall, false, false>();
    return local ? with_slice.template operator()<short_, true, false>()
                 : with_slice.template operator()<short_, false, false>();
}

}  // namespace

int block_threads() { return StripPolicy::block_threads; }

std::size_t shared_bytes(int r, int alphabet) {
    return static_cast<std::size_t>(StripPolicy::warps_per_block) * static_cast<std::size_t>(alphabet) *
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
