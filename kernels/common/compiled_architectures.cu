// The architectures nvcc compiled this library for, read from its
// __CUDA_ARCH_LIST__ (a .cu file: the host compiler alone does not define it).
#include "common/compiled_architectures.hpp"

namespace alignscope::kernels {

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
