// The tile shape of a database-scan kernel (G threads x R rows a tile) and
// the tuning every shape shares (ScanPolicy): plain C++, so the host-side
// plan (scan_plan.hpp) and its tests need no CUDA header.
#pragma once

#include <utility>

namespace alignscope::kernels::search {

// The database-scan kernels' tuning, read by the kernels (block size,
// __launch_bounds__, the profile tile's layout), their launcher, the table of
// compiled shapes and the host plan alike: change a value here and every
// reader follows.
struct ScanPolicy {
    static constexpr int block_threads = 256;
    // Blocks per SM __launch_bounds__ asks for at R rows a thread (the
    // registers of R rows, E and Ho each, bound it).
    static constexpr int min_blocks_per_sm(int rows) { return rows <= 16 ? 3 : 2; }
    // 16-byte words of padding after each letter's plane of the profile tile,
    // which keeps two 4-thread groups of a quarter-warp off the same banks.
    static constexpr int plane_pad(int threads) { return threads == 4 ? 4 : 0; }
    // Groups narrower than this run a profile of several tiles only with
    // short strips (scan_plan.hpp); the narrowest group sizes their scratch.
    static constexpr int full_group = 16;
    static constexpr int narrowest_group = 4;
    // The compiled shapes: 16-bit lane pairs at every group size and rows a
    // thread; 32-bit cells at wide_rows, for the groups of WideGroups (the
    // last, rescore_threads, also rescores saturated pairs).
    using NarrowGroups = std::integer_sequence<int, 4, 8, 16, 32>;
    using NarrowRows = std::integer_sequence<int, 8, 12, 16, 20, 24, 28, 32>;
    using WideGroups = std::integer_sequence<int, 8, 32>;
    static constexpr int wide_rows = 16;
    static constexpr int rescore_threads = 32;
};

constexpr int kBlockThreads = ScanPolicy::block_threads;

// One compiled tile shape.
struct DbScanShape {
    int threads = 0;    // G: threads per database sequence
    int rows = 0;       // R: query rows per thread
    bool wide = false;  // 32-bit cells (one query) instead of 16-bit pairs (two)
    int tile_rows() const { return threads * rows; }
    int groups_per_block() const { return kBlockThreads / threads; }
};

// The family word of the database-scan kernels' names (device/kernel_name.hpp):
// "sw_affine_search_s16x2", "nw_linear_search_s32".
inline constexpr const char* kScanFamily = "search";

// The shape of the 32-bit rescoring of saturated pairs (explicit items).
constexpr DbScanShape rescore_shape() { return {ScanPolicy::rescore_threads, ScanPolicy::wide_rows, true}; }

}  // namespace alignscope::kernels::search
