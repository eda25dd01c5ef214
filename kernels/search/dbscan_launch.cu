// Instantiates the database-scan kernel for every compiled tile shape and
// launches the one asked for. Dispatch only: the body is dbscan_kernel.cuh.
#include "search/dbscan_kernel.cuh"
#include "search/dbscan_launch.hpp"

#include <utility>

namespace alignscope::kernels::search {
namespace {

using KernelPointer = void (*)(DbscanParams);

struct Entry {
    DbscanShape shape;
    KernelPointer implicit_items = nullptr;
    KernelPointer explicit_items = nullptr;
};

template <int G, int R>
Entry narrow() {
    return {{G, R, false}, &device::dbscan<device::Cell16x2, G, R, false>, nullptr};
}
template <int G, int R>
Entry wide() {
    return {{G, R, true}, &device::dbscan<device::Cell32, G, R, false>, &device::dbscan<device::Cell32, G, R, true>};
}

template <int G, int... R>
void add_narrow(std::vector<Entry>& out, std::integer_sequence<int, R...>) {
    (out.push_back(narrow<G, R>()), ...);
}

const std::vector<Entry>& entries() {
    static const std::vector<Entry> table = [] {
        std::vector<Entry> t;
        using Rows = std::integer_sequence<int, 8, 12, 16, 20, 24, 28, 32>;
        add_narrow<4>(t, Rows{});
        add_narrow<8>(t, Rows{});
        add_narrow<16>(t, Rows{});
        add_narrow<32>(t, Rows{});
        t.push_back(wide<8, 16>());
        t.push_back(wide<32, 16>());
        return t;
    }();
    return table;
}

const Entry* find(const DbscanShape& shape) {
    for (const Entry& e : entries())
        if (e.shape.threads == shape.threads && e.shape.rows == shape.rows && e.shape.wide == shape.wide) return &e;
    return nullptr;
}

}  // namespace

const std::vector<DbscanShape>& dbscan_shapes(bool wide_cells) {
    static const std::vector<DbscanShape> narrow_shapes = [] {
        std::vector<DbscanShape> s;
        for (const Entry& e : entries())
            if (!e.shape.wide) s.push_back(e.shape);
        return s;
    }();
    static const std::vector<DbscanShape> wide_shapes = [] {
        std::vector<DbscanShape> s;
        for (const Entry& e : entries())
            if (e.shape.wide) s.push_back(e.shape);
        return s;
    }();
    return wide_cells ? wide_shapes : narrow_shapes;
}

std::string dbscan_kernel_name(const DbscanShape& shape, bool linear) {
    return std::string("sw_") + (linear ? "linear" : "affine") + "_dbscan_" + (shape.wide ? "s32" : "s16x2");
}

std::size_t dbscan_shared_bytes(const DbscanShape& shape, int letters) {
    const int pad = shape.threads == 4 ? 4 : 0;
    return static_cast<std::size_t>(letters) * static_cast<std::size_t>(shape.rows / 4 * shape.threads + pad) * 16;
}

int dbscan_blocks_per_sm(const DbscanShape& shape, bool explicit_items, int letters) {
    const Entry* e = find(shape);
    if (!e) return 0;
    KernelPointer kernel = explicit_items ? e->explicit_items : e->implicit_items;
    if (!kernel) return 0;
    const std::size_t bytes = dbscan_shared_bytes(shape, letters);
    if (cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(kernel), kBlockThreads,
                                                      bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return blocks;
}

cudaError_t launch_dbscan(const DbscanShape& shape, bool explicit_items, const DbscanParams& params, int blocks,
                          cudaStream_t stream) {
    const Entry* e = find(shape);
    KernelPointer kernel = e ? (explicit_items ? e->explicit_items : e->implicit_items) : nullptr;
    if (!kernel) return cudaErrorInvalidDeviceFunction;
    if (blocks <= 0) return cudaSuccess;
    const std::size_t bytes = dbscan_shared_bytes(shape, params.letters);
    kernel<<<static_cast<unsigned>(blocks), kBlockThreads, bytes, stream>>>(params);
    return cudaGetLastError();
}

}  // namespace alignscope::kernels::search

namespace alignscope::kernels::search {

int dbscan_minimum_compute_capability() {
#ifdef __CUDA_ARCH_LIST__
    constexpr int archs[] = {__CUDA_ARCH_LIST__};
    int lowest = archs[0];
    for (int a : archs) lowest = a < lowest ? a : lowest;
    return lowest / 10;
#else
    return 90;
#endif
}

}  // namespace alignscope::kernels::search
