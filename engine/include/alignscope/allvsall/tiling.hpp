// The pairs of an all-against-all job cut into tiles: every pair i < j of one
// set (the triangle) or every pair of two sets (the rectangle), with the
// records sorted by length so that a tile holds pairs of similar lengths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace alignscope::allvsall {

// (row record, column record), 0-based indices in file order. In the triangle
// the row record is always the smaller index: it is the query of the pair.
using PairIndex = std::pair<std::uint32_t, std::uint32_t>;

class Tiling {
public:
    Tiling() = default;
    // Records are ordered longest first (ties by file order) and cut into blocks
    // of `tile_size`; tile (a, b) pairs block a with block b, a <= b in the
    // triangle (pairs of one block: each unordered pair once). Tiles are
    // numbered row by row of blocks. Throws Error when tile_size is 0.
    static Tiling triangle(const std::vector<std::size_t>& lengths, std::uint32_t tile_size);
    static Tiling rectangle(const std::vector<std::size_t>& row_lengths, const std::vector<std::size_t>& column_lengths,
                            std::uint32_t tile_size);

    bool is_triangle() const { return triangle_; }
    std::uint32_t tile_size() const { return tile_size_; }
    std::uint64_t tile_count() const { return blocks_.size(); }
    std::uint64_t pair_count() const { return pair_count_; }
    std::uint64_t cell_count() const { return cell_count_; }  // sum of |row| x |column| over all pairs
    std::size_t rows() const { return row_order_.size(); }
    std::size_t columns() const { return column_order_.size(); }

    // Records in tiling order (longest first): tile (a, b) pairs positions
    // [a * tile_size, ...) of row_order() with those of column_order(); the
    // triangle's two orders are the same.
    const std::vector<std::uint32_t>& row_order() const { return row_order_; }
    const std::vector<std::uint32_t>& column_order() const { return column_order_; }
    // (row block, column block) of a tile.
    std::pair<std::uint32_t, std::uint32_t> blocks(std::uint64_t tile) const { return blocks_.at(tile); }

    // The pairs of one tile in their fixed order (block rows, then columns).
    void pairs(std::uint64_t tile, std::vector<PairIndex>& out) const;
    std::uint64_t pair_count(std::uint64_t tile) const;
    std::uint64_t cell_count(std::uint64_t tile) const;

private:
    bool triangle_ = true;
    std::uint32_t tile_size_ = 1;
    std::vector<std::uint32_t> row_order_, column_order_;          // records, longest first
    std::vector<std::size_t> row_lengths_, column_lengths_;        // by record
    std::vector<std::pair<std::uint32_t, std::uint32_t>> blocks_;  // (row block, column block) of each tile
    std::uint64_t pair_count_ = 0, cell_count_ = 0;
};

}  // namespace alignscope::allvsall
