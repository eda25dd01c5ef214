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

int blocks_for(std::int64_t size, int max_blocks) { return static_cast<int>(std::min<std::int64_t>(size, max_blocks)); }

}  // namespace

Heatmap Heatmap::downsample(const std::vector<std::int64_t>& matrix, std::int64_t rows, std::int64_t cols, int max_rows,
                            int max_cols, int scale, std::int64_t unreachable) {
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
    for (std::int64_t j = 0; j < cols; ++j)
        col_block[static_cast<std::size_t>(j)] = static_cast<int>(j * h.cols / cols);
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

namespace {

// Block of `index` among `blocks` blocks of `size` source positions: the edges'
// rule when there are edges, else the uniform one; -1 outside every block.
int block_of(std::int64_t index, std::int64_t size, int blocks, const std::vector<std::int64_t>& edges) {
    if (index < 0 || index >= size || blocks <= 0) return -1;
    if (edges.empty()) return static_cast<int>(index * blocks / size);
    return static_cast<int>(std::upper_bound(edges.begin(), edges.end(), index) - edges.begin()) - 1;
}

std::int64_t block_begin(int block, std::int64_t size, int blocks, const std::vector<std::int64_t>& edges) {
    if (block >= blocks) return size;
    if (block < 0) return 0;
    if (!edges.empty()) return edges[static_cast<std::size_t>(block)];
    return (static_cast<std::int64_t>(block) * size + blocks - 1) / blocks;  // ceil(b * size / blocks)
}

void check_edges(const std::vector<std::int64_t>& edges, int blocks, std::int64_t size, const std::string& what,
                 const char* side) {
    if (edges.empty()) return;
    if (edges.size() != static_cast<std::size_t>(blocks))
        throw Error(what + ": " + std::to_string(edges.size()) + " " + side + " edges for " + std::to_string(blocks) +
                    " " + side + "s");
    for (std::size_t k = 0; k < edges.size(); ++k)
        if (edges[k] < 0 || edges[k] >= size || (k > 0 && edges[k] <= edges[k - 1]))
            throw Error(what + ": " + side + " edge " + std::to_string(k) + " (" + std::to_string(edges[k]) +
                        ") is not inside 0.." + std::to_string(size - 1) + " after the one before it");
}

}  // namespace

int Heatmap::row_of(std::int64_t source_row) const { return block_of(source_row, source_rows, rows, row_edges); }
int Heatmap::col_of(std::int64_t source_col) const { return block_of(source_col, source_cols, cols, col_edges); }
std::int64_t Heatmap::row_begin(int r) const { return block_begin(r, source_rows, rows, row_edges); }
std::int64_t Heatmap::col_begin(int c) const { return block_begin(c, source_cols, cols, col_edges); }

void Heatmap::check(const std::string& what) const {
    if (rows < 0 || cols < 0 || values.size() != static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols))
        throw Error(what + ": " + std::to_string(values.size()) + " values for " + std::to_string(rows) + " x " +
                    std::to_string(cols) + " cells");
    if (source_rows < rows || source_cols < cols)
        throw Error(what + ": " + std::to_string(rows) + " x " + std::to_string(cols) + " blocks over a " +
                    std::to_string(source_rows) + " x " + std::to_string(source_cols) + " matrix");
    check_edges(row_edges, rows, source_rows, what, "row");
    check_edges(col_edges, cols, source_cols, what, "column");
    for (const auto& [r, c] : path)
        if (r < 0 || r >= rows || c < 0 || c >= cols)
            throw Error(what + ": path cell (" + std::to_string(r) + ", " + std::to_string(c) + ") outside the " +
                        std::to_string(rows) + " x " + std::to_string(cols) + " blocks");
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
