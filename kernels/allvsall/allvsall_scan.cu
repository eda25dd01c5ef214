// The all-against-all scan kernel: search/db_scan_kernel.cuh's tile scans
// (scan_tile for local, scan_tile_bounded for global and semi-global) driven
// by a tile's explicit work items, so a tile of rows x columns of one set is
// scored without a database of its own and the triangle's diagonal tiles
// compute only the pairs after each row. Instantiated for the shapes that
// suit sequences of tens to thousands of residues.
#include "allvsall/allvsall_launch.hpp"
#include "search/db_scan_kernel.cuh"

#include <utility>

namespace alignscope::kernels::allvsall_gpu {
namespace device {

using search::kBlockThreads;
using search::device::Cell16x2;
using search::device::TileShape;

template <int G, int R, bool Local>
__global__ void __launch_bounds__(kBlockThreads, search::ScanPolicy::min_blocks_per_sm(R))
    allvsall_scan(const ScanParams p) {
    using Cell = Cell16x2;
    using T = Cell::T;
    using Shape = TileShape<G, R>;
    constexpr int groups = kBlockThreads / G;
    constexpr unsigned full = 0xffffffffu;
    extern __shared__ uint4 tile[];
    __shared__ int item_shared;

    const int lane_in_group = static_cast<int>(threadIdx.x) % G;
    const int group = static_cast<int>(threadIdx.x) / G;
    const std::uint32_t pad = static_cast<std::uint32_t>(p.letters - 1);
    uint2* strip = p.scratch ? p.scratch + (static_cast<std::size_t>(blockIdx.x) * groups + group) *
                                               static_cast<std::size_t>(p.scratch_columns)
                             : nullptr;
    const int tile_words = p.letters * Shape::rows / 4;

    for (;;) {
        if (threadIdx.x == 0) item_shared = static_cast<int>(atomicAdd(p.next_item, 1u));
        __syncthreads();
        const int item = item_shared;
        __syncthreads();
        if (item >= p.item_count) break;
        const int2 work = p.items[item];
        const int profile = work.x;
        int position = work.y + group;
        if (position >= p.column_end) position = -1;
        const int n = position >= 0 ? p.lengths[position] : 0;
        const int n_warp = __reduce_max_sync(full, n);
        const int steps = (((n_warp + 3) & ~3) + G - 1 + 3) & ~3;
        const std::uint32_t* residues =
            position >= 0 ? reinterpret_cast<const std::uint32_t*>(p.residues + p.starts[position]) : nullptr;
        const int tiles = p.profile_tiles[profile];
        const uint4* source = reinterpret_cast<const uint4*>(p.profiles + p.profile_offsets[profile]);
        T best = Cell::splat(Local ? p.open : Cell::neg);
        int z_lo = 0, z_hi = 0;
        if constexpr (!Local) {
            const int padded = tiles * Shape::rows;
            z_lo = search::zero_row(padded, p.profile_lengths[2 * profile]);
            z_hi = search::zero_row(padded, p.profile_lengths[2 * profile + 1]);
        }
        for (int k = 0; k < tiles; ++k) {
            const uint4* from = source + static_cast<std::size_t>(k) * tile_words;
            for (int v = static_cast<int>(threadIdx.x); v < tile_words; v += kBlockThreads) {
                const int letter = v / (Shape::rows / 4);
                const int c = v - letter * (Shape::rows / 4);
                const int thread = c / Shape::words_per_thread;
                const int word = c - thread * Shape::words_per_thread;
                tile[letter * Shape::plane + word * G + thread] = from[v];
            }
            __syncthreads();
            if (n_warp > 0) {
                if constexpr (Local)
                    search::device::scan_tile<Cell, G, R>(tile, residues, n, steps, lane_in_group, k == 0,
                                                          k == tiles - 1, strip, p.open, p.extend, pad,
                                                          static_cast<std::uint32_t>(p.one), best);
                else
                    search::device::scan_tile_bounded<Cell, G, R>(tile, residues, n, steps, lane_in_group, k,
                                                                  k == tiles - 1, strip, p.open, p.extend, pad,
                                                                  p.free_ends, z_lo, z_hi, best);
            }
            __syncthreads();
        }
        if constexpr (Local) {
#pragma unroll
            for (int d = G / 2; d >= 1; d /= 2) best = Cell::max_relu(best, __shfl_xor_sync(full, best, d, G));
            best = Cell::add_max(best, Cell::splat(-p.open), Cell::splat(Cell::neg));
        } else {
#pragma unroll
            for (int d = G / 2; d >= 1; d /= 2) best = Cell::max2(best, __shfl_xor_sync(full, best, d, G));
            best = Cell::add_max(best, Cell::splat(p.open), Cell::splat(Cell::neg));
        }
        if (lane_in_group == 0 && position >= 0) p.out[static_cast<std::size_t>(item) * groups + group] = best;
    }
}

}  // namespace device

namespace {

using Kernel = void (*)(ScanParams);

struct Entry {
    search::DbScanShape shape;
    Kernel local = nullptr;
    Kernel bounded = nullptr;
};

template <int G, int R>
Entry entry() {
    return {{G, R, false}, &device::allvsall_scan<G, R, true>, &device::allvsall_scan<G, R, false>};
}

const std::vector<Entry>& entries() {
    static const std::vector<Entry> table = {entry<8, 16>(),  entry<8, 32>(),  entry<16, 16>(), entry<16, 24>(),
                                             entry<16, 28>(), entry<16, 32>(), entry<32, 20>(), entry<32, 28>()};
    return table;
}

Kernel find(const search::DbScanShape& shape, bool local) {
    for (const Entry& e : entries())
        if (e.shape.threads == shape.threads && e.shape.rows == shape.rows) return local ? e.local : e.bounded;
    return nullptr;
}

}  // namespace

const std::vector<search::DbScanShape>& scan_shapes() {
    static const std::vector<search::DbScanShape> shapes = [] {
        std::vector<search::DbScanShape> s;
        for (const Entry& e : entries()) s.push_back(e.shape);
        return s;
    }();
    return shapes;
}

std::string scan_kernel_name(bool linear, const char* mode_prefix) {
    return std::string(mode_prefix) + (linear ? "_linear" : "_affine") + "_allvsall_s16x2";
}

int scan_blocks_per_sm(const search::DbScanShape& shape, bool local, int letters) {
    const Kernel kernel = find(shape, local);
    if (!kernel) return 0;
    const std::size_t bytes = search::db_scan_shared_bytes(shape, letters);
    if (cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(kernel),
                                                      search::kBlockThreads, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return blocks;
}

cudaError_t launch_scan(const search::DbScanShape& shape, bool local, const ScanParams& params, int blocks,
                        cudaStream_t stream) {
    const Kernel kernel = find(shape, local);
    if (!kernel) return cudaErrorInvalidDeviceFunction;
    if (blocks <= 0) return cudaSuccess;
    const std::size_t bytes = search::db_scan_shared_bytes(shape, params.letters);
    kernel<<<static_cast<unsigned>(blocks), search::kBlockThreads, bytes, stream>>>(params);
    return cudaGetLastError();
}

}  // namespace alignscope::kernels::allvsall_gpu
