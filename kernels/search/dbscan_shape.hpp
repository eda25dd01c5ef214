// The tile shape of a database-scan kernel (G threads x R rows a tile) and
// the block size every shape shares: plain C++, so the host-side plan
// (scan_plan.hpp) and its tests need no CUDA header.
#pragma once

namespace alignscope::kernels::search {

constexpr int kBlockThreads = 256;

// One compiled tile shape.
struct DbscanShape {
    int threads = 0;    // G: threads per database sequence
    int rows = 0;       // R: query rows per thread
    bool wide = false;  // 32-bit cells (one query) instead of 16-bit pairs (two)
    int tile_rows() const { return threads * rows; }
    int groups_per_block() const { return kBlockThreads / threads; }
};

}  // namespace alignscope::kernels::search
