// Instantiates the local database-scan kernel for every compiled tile shape
// and launches the one asked for (the bounded kernels are instantiated in
// db_scan_bounded.cu, a translation unit of their own so the two compile side
// by side). Dispatch only: the body is db_scan_kernel.cuh.
#include "common/fault_injection.hpp"
#include "search/db_scan_kernel.cuh"
#include "search/db_scan_launch.hpp"
#include "search/db_scan_table.hpp"

#include <alignscope/device/kernel_name.hpp>

#include <optional>

namespace alignscope::kernels::search {
namespace {

const std::vector<Entry>& entries() {
    static const std::vector<Entry> local = table::make_entries<true>();
    return local;
}

const Entry* find(const DbScanShape& shape, DbScanMode mode) {
    for (const Entry& e : mode == DbScanMode::Local ? entries() : detail::bounded_entries())
        if (e.shape.threads == shape.threads && e.shape.rows == shape.rows && e.shape.wide == shape.wide) return &e;
    return nullptr;
}

}  // namespace

const std::vector<DbScanShape>& db_scan_shapes(bool wide_cells) {
    static const std::vector<DbScanShape> narrow_shapes = [] {
        std::vector<DbScanShape> s;
        for (const Entry& e : entries())
            if (!e.shape.wide) s.push_back(e.shape);
        return s;
    }();
    static const std::vector<DbScanShape> wide_shapes = [] {
        std::vector<DbScanShape> s;
        for (const Entry& e : entries())
            if (e.shape.wide) s.push_back(e.shape);
        return s;
    }();
    return wide_cells ? wide_shapes : narrow_shapes;
}

std::string db_scan_kernel_name(const DbScanShape& shape, bool linear, const char* mode_prefix) {
    const std::optional<AlignmentMode> mode = mode_from_word(mode_prefix);
    // Not reached: the scanner's prefixes are sw, nw, sg.
    if (!mode) return std::string(mode_prefix) + "_" + kScanFamily;
    return KernelName{*mode, linear, kScanFamily, 0, shape.wide ? KernelWidth::S32 : KernelWidth::S16x2}.format();
}

std::size_t db_scan_shared_bytes(const DbScanShape& shape, int letters) {
    const int pad = ScanPolicy::plane_pad(shape.threads);
    return static_cast<std::size_t>(letters) * static_cast<std::size_t>(shape.rows / 4 * shape.threads + pad) * 16;
}

int db_scan_blocks_per_sm(const DbScanShape& shape, DbScanMode mode, bool explicit_items, int letters) {
    const Entry* e = find(shape, mode);
    if (!e) return 0;
    KernelPointer kernel = explicit_items ? e->explicit_items : e->implicit_items;
    if (!kernel) return 0;
    const std::size_t bytes = db_scan_shared_bytes(shape, letters);
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

cudaError_t launch_db_scan(const DbScanShape& shape, DbScanMode mode, bool explicit_items, const DbScanParams& params,
                           int blocks, cudaStream_t stream) {
    const Entry* e = find(shape, mode);
    KernelPointer kernel = e ? (explicit_items ? e->explicit_items : e->implicit_items) : nullptr;
    if (!kernel) return cudaErrorInvalidDeviceFunction;
    if (blocks <= 0) return cudaSuccess;
    const std::size_t bytes = db_scan_shared_bytes(shape, params.letters);
    kernel<<<static_cast<unsigned>(blocks), kBlockThreads, bytes, stream>>>(params);
    return fault::after_launch(cudaGetLastError());
}

}  // namespace alignscope::kernels::search
