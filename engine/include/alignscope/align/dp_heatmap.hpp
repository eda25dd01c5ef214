// Downsampled DP heatmaps for pairs whose matrix is too large to hold: one
// forward pass in linear memory over the part of the matrix a view shows,
// max-pooling H (or E, F) into a grid of screen pixels. Zooming in asks again
// for the smaller region at the same grid size, so the picture refines.
//
// Conventions as in dp_matrix.hpp: DP row i is query position i (row 0 is the
// boundary), column j target position j; scores are scaled. The pass fills the
// same recurrences and boundaries as compute_dp_matrices, so a heatmap equals
// the max-pooling of its matrices exactly (tests/engine/test_dp_heatmap.cpp).
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace alignscope {

enum class DpState { H, E, F };

// A rectangle of DP cells, half-open: rows [row_begin, row_end) of 0..m and
// columns [col_begin, col_end) of 0..n.
struct DpRegion {
    std::int64_t row_begin = 0, row_end = 0;
    std::int64_t col_begin = 0, col_end = 0;

    std::int64_t rows() const { return row_end - row_begin; }
    std::int64_t cols() const { return col_end - col_begin; }
    // The whole matrix of an m x n pair.
    static DpRegion whole(std::int64_t query_length, std::int64_t target_length) {
        return {0, query_length + 1, 0, target_length + 1};
    }
};

// One DP row kept during an earlier pass (a long-pair job's "special rows"):
// H and F of row `row` for columns 0 .. H.size()-1. A later pass starts below
// it instead of at row 0.
struct DpRowCheckpoint {
    std::int64_t row = 0;
    std::vector<std::int64_t> H, F;
};

struct DpHeatmapRequest {
    DpRegion region;      // empty (all zero) = the whole matrix
    int grid_rows = 256;  // at most this many blocks down (fewer when the region has fewer rows)
    int grid_cols = 256;
    DpState state = DpState::H;
    // Optional: a saved row at or above region.row_begin, covering columns up
    // to region.col_end; the pass starts from it.
    const DpRowCheckpoint* start = nullptr;
    const CancellationToken* cancel = nullptr;  // checked every few hundred thousand cells
    std::function<void(std::uint64_t cells_done, std::uint64_t cells_total)> progress;
};

// The grid: block (r, c) holds the maximum of the region's cells (i, j) with
// (i - row_begin) * rows / region.rows() == r, and likewise for columns, so
// blocks differ in size by at most one cell (store::Heatmap's convention).
struct DpHeatmap {
    DpRegion region;
    DpState state = DpState::H;
    int rows = 0;
    int cols = 0;
    std::vector<std::int64_t>
        values;  // rows*cols, row-major, scaled; DpMatrices::minus_infinity where no cell is reachable
    std::uint64_t cells_computed = 0;  // the price of the pass (rows from the start row, columns from 0)

    std::int64_t at(int row, int col) const { return values[static_cast<std::size_t>(row) * cols + col]; }
    int row_block(std::int64_t i) const { return static_cast<int>((i - region.row_begin) * rows / region.rows()); }
    int col_block(std::int64_t j) const { return static_cast<int>((j - region.col_begin) * cols / region.cols()); }
};

// Computes the heatmap of `request.region` for normalised residues. Cost: every
// cell above and left of the region's far corner (from the checkpoint row when
// one is given); memory O(n + grid). Throws Error for an empty sequence, a
// region outside the matrix, a grid smaller than 1 x 1, a checkpoint below the
// region or too short, a residue the matrix does not score; Cancelled.
DpHeatmap compute_dp_heatmap(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                             const AlignOptions& options, const DpHeatmapRequest& request);

// One forward pass that keeps H and F of the given rows (0..m, any order) for
// columns 0..n: the checkpoints a later compute_dp_heatmap can start from.
std::vector<DpRowCheckpoint> save_dp_rows(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                                          const AlignOptions& options, std::vector<std::int64_t> rows,
                                          const CancellationToken* cancel = nullptr);

}  // namespace alignscope
