// Shrinking DP matrices to display heatmaps (block maxima) and mapping the
// optimal path onto the shrunken grid.
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/error.hpp>
#include <alignscope/store/results.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace alignscope::store {
namespace {

int blocks_for(std::int64_t size, int max_blocks) {
    return static_cast<int>(std::min<std::int64_t>(size, max_blocks));
}

}  // namespace

Heatmap Heatmap::downsample(const std::vector<std::int64_t>& matrix, std::int64_t rows, std::int64_t cols,
                            int max_rows, int max_cols, int scale, std::int64_t unreachable) {
    if (rows < 0 || cols < 0 || static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols) != matrix.size())
        throw Error("heatmap: the matrix holds " + std::to_string(matrix.size()) + " cells, not " +
                    std::to_string(rows) + " x " + std::to_string(cols));
    if (max_rows < 1 || max_cols < 1 || scale < 1)
        throw Error("heatmap: the size limits and the score scale must be positive");
    Heatmap h;
    h.source_rows = rows;
    h.source_cols = cols;
    h.rows = blocks_for(rows, max_rows);
    h.cols = blocks_for(cols, max_cols);
    std::vector<std::int64_t> best(static_cast<std::size_t>(h.rows) * h.cols, std::numeric_limits<std::int64_t>::min());
    std::vector<bool> seen(best.size(), false);
    // Column block of each source column, computed once.
    std::vector<int> col_block(static_cast<std::size_t>(cols));
    for (std::int64_t j = 0; j < cols; ++j) col_block[static_cast<std::size_t>(j)] = static_cast<int>(j * h.cols / cols);
    for (std::int64_t i = 0; i < rows; ++i) {
        const std::size_t base = static_cast<std::size_t>(i * h.rows / rows) * h.cols;
        const std::int64_t* row = matrix.data() + i * cols;
        for (std::int64_t j = 0; j < cols; ++j) {
            const std::int64_t value = row[j];
            if (value <= unreachable) continue;
            const std::size_t cell = base + static_cast<std::size_t>(col_block[static_cast<std::size_t>(j)]);
            if (!seen[cell] || value > best[cell]) {
                best[cell] = value;
                seen[cell] = true;
            }
        }
    }
    h.values.resize(best.size());
    for (std::size_t k = 0; k < best.size(); ++k)
        h.values[k] = seen[k] ? static_cast<float>(static_cast<double>(best[k]) / scale)
                              : std::numeric_limits<float>::quiet_NaN();
    return h;
}

Heatmap Heatmap::from_dp(const DpMatrices& dp, int scale, int max_rows, int max_cols) {
    Heatmap h = downsample(dp.H, dp.rows, dp.cols, max_rows, max_cols, scale, DpMatrices::minus_infinity);
    h.label.assign(1, 'H');  // not = "H": GCC 12 warns falsely (-Wrestrict) on that
    h.query_id = dp.alignment.query_id;
    h.target_id = dp.alignment.target_id;
    for (const auto& [i, j] : dp.path) {
        const std::pair<int, int> cell{static_cast<int>(i * h.rows / dp.rows), static_cast<int>(j * h.cols / dp.cols)};
        if (h.path.empty() || h.path.back() != cell) h.path.push_back(cell);
    }
    return h;
}

}  // namespace alignscope::store
