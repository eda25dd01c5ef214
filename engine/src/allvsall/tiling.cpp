// Tiles of the all-against-all triangle or rectangle (see tiling.hpp).
#include <alignscope/allvsall/tiling.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <numeric>

namespace alignscope::allvsall {
namespace {

std::vector<std::uint32_t> longest_first(const std::vector<std::size_t>& lengths) {
    std::vector<std::uint32_t> order(lengths.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return lengths[a] > lengths[b]; });
    return order;
}

std::uint32_t block_count(std::size_t records, std::uint32_t tile_size) {
    return static_cast<std::uint32_t>((records + tile_size - 1) / tile_size);
}

}  // namespace

Tiling Tiling::triangle(const std::vector<std::size_t>& lengths, std::uint32_t tile_size) {
    if (tile_size == 0) throw Error("--tile must be at least 1");
    if (lengths.size() > 0xffffffffu) throw Error("allvsall: too many records");
    Tiling t;
    t.triangle_ = true;
    t.tile_size_ = tile_size;
    t.row_order_ = longest_first(lengths);
    t.column_order_ = t.row_order_;
    t.row_lengths_ = lengths;
    t.column_lengths_ = lengths;
    const std::uint32_t blocks = block_count(lengths.size(), tile_size);
    for (std::uint32_t a = 0; a < blocks; ++a)
        for (std::uint32_t b = a; b < blocks; ++b) t.blocks_.emplace_back(a, b);
    const auto n = static_cast<std::uint64_t>(lengths.size());
    t.pair_count_ = n * (n - (n > 0 ? 1 : 0)) / 2;
    // Sum over i < j of L_i L_j = ((sum L)^2 - sum L^2) / 2.
    std::uint64_t sum = 0, squares = 0;
    for (std::size_t l : lengths) {
        sum += l;
        squares += static_cast<std::uint64_t>(l) * l;
    }
    t.cell_count_ = (sum * sum - squares) / 2;
    return t;
}

Tiling Tiling::rectangle(const std::vector<std::size_t>& row_lengths, const std::vector<std::size_t>& column_lengths,
                         std::uint32_t tile_size) {
    if (tile_size == 0) throw Error("--tile must be at least 1");
    if (row_lengths.size() > 0xffffffffu || column_lengths.size() > 0xffffffffu)
        throw Error("allvsall: too many records");
    Tiling t;
    t.triangle_ = false;
    t.tile_size_ = tile_size;
    t.row_order_ = longest_first(row_lengths);
    t.column_order_ = longest_first(column_lengths);
    t.row_lengths_ = row_lengths;
    t.column_lengths_ = column_lengths;
    const std::uint32_t row_blocks = block_count(row_lengths.size(), tile_size);
    const std::uint32_t column_blocks = block_count(column_lengths.size(), tile_size);
    for (std::uint32_t a = 0; a < row_blocks; ++a)
        for (std::uint32_t b = 0; b < column_blocks; ++b) t.blocks_.emplace_back(a, b);
    t.pair_count_ = static_cast<std::uint64_t>(row_lengths.size()) * column_lengths.size();
    std::uint64_t rows = 0, columns = 0;
    for (std::size_t l : row_lengths) rows += l;
    for (std::size_t l : column_lengths) columns += l;
    t.cell_count_ = rows * columns;
    return t;
}

void Tiling::pairs(std::uint64_t tile, std::vector<PairIndex>& out) const {
    out.clear();
    if (tile >= blocks_.size()) throw Error("allvsall: tile " + std::to_string(tile) + " out of range");
    const auto [a, b] = blocks_[tile];
    const std::size_t a0 = std::size_t{a} * tile_size_, a1 = std::min(row_order_.size(), a0 + tile_size_);
    const std::size_t b0 = std::size_t{b} * tile_size_, b1 = std::min(column_order_.size(), b0 + tile_size_);
    for (std::size_t p = a0; p < a1; ++p)
        for (std::size_t q = (triangle_ && a == b) ? p + 1 : b0; q < b1; ++q) {
            const std::uint32_t i = row_order_[p], j = column_order_[q];
            if (triangle_ && j < i) out.emplace_back(j, i);
            else
                out.emplace_back(i, j);
        }
}

std::uint64_t Tiling::pair_count(std::uint64_t tile) const {
    if (tile >= blocks_.size()) return 0;
    const auto [a, b] = blocks_[tile];
    const std::uint64_t rows = std::min<std::uint64_t>(row_order_.size() - std::size_t{a} * tile_size_, tile_size_);
    const std::uint64_t cols = std::min<std::uint64_t>(column_order_.size() - std::size_t{b} * tile_size_, tile_size_);
    return (triangle_ && a == b) ? rows * (rows - 1) / 2 : rows * cols;
}

std::uint64_t Tiling::cell_count(std::uint64_t tile) const {
    std::vector<PairIndex> p;
    pairs(tile, p);
    std::uint64_t cells = 0;
    for (const auto& [i, j] : p) cells += static_cast<std::uint64_t>(row_lengths_[i]) * column_lengths_[j];
    return cells;
}

}  // namespace alignscope::allvsall
