// Host-side bookkeeping of the GPU all-against-all scorer, without CUDA: how
// the rows of the set pair up into query profiles (two rows of similar length
// share a 16-bit lane pair), which work items a tile becomes (a profile and a
// run of `groups` consecutive columns), and where each (row, column) score
// goes in the tile's pair order (allvsall::Tiling::pairs). Positions are
// places in the tiling's length order, not record numbers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace alignscope::kernels::allvsall_gpu {

// Row positions paired block by block: (p, p + 1) inside each row block of
// `tile_size` rows, a block of odd size ending with a single.
struct ProfileIndex {
    std::vector<std::uint32_t> first_row;    // per profile: its first row position
    std::vector<std::uint8_t> lanes;         // per profile: 1 or 2 rows
    std::vector<std::uint32_t> block_first;  // per row block: its first profile; one more entry at the end

    static ProfileIndex pair_rows(std::size_t rows, std::uint32_t tile_size) {
        ProfileIndex index;
        for (std::size_t block = 0; block * tile_size < rows; ++block) {
            index.block_first.push_back(static_cast<std::uint32_t>(index.first_row.size()));
            const std::size_t end = std::min<std::size_t>(rows, (block + 1) * std::size_t{tile_size});
            for (std::size_t p = block * tile_size; p < end; p += 2) {
                index.first_row.push_back(static_cast<std::uint32_t>(p));
                index.lanes.push_back(p + 1 < end ? 2 : 1);
            }
        }
        index.block_first.push_back(static_cast<std::uint32_t>(index.first_row.size()));
        return index;
    }
};

// One unit of kernel work: a profile against the columns column .. column +
// groups - 1 (those before the tile's column end).
struct Item {
    std::int32_t profile = 0;
    std::int32_t column = 0;
};

// The rows and columns of one tile, in positions: rows [row_begin, row_end)
// against columns [column_begin, column_end); on the triangle's diagonal
// (`diagonal`) only the pairs of a row with the columns after it.
struct TileSpan {
    std::uint32_t row_begin = 0, row_end = 0, column_begin = 0, column_end = 0;
    bool diagonal = false;

    // The first column a row pairs with.
    std::uint32_t first_column(std::uint32_t row) const {
        return diagonal ? std::max(column_begin, row + 1) : column_begin;
    }
    std::uint64_t pair_count() const {
        std::uint64_t pairs = 0;
        for (std::uint32_t r = row_begin; r < row_end; ++r) pairs += column_end - std::min(column_end, first_column(r));
        return pairs;
    }
};

// Items of `profile` in `tile`: runs of `groups` columns from the first column
// its first row pairs with (its second row's pairs start one later and are
// covered by the same runs).
inline void add_items(const ProfileIndex& index, std::uint32_t profile, const TileSpan& tile, int groups,
                      std::vector<Item>& out) {
    const std::uint32_t first = tile.first_column(index.first_row[profile]);
    for (std::uint32_t c = first; c < tile.column_end; c += static_cast<std::uint32_t>(groups))
        out.push_back(Item{static_cast<std::int32_t>(profile), static_cast<std::int32_t>(c)});
}

// Where the score of (row, column) goes in the tile's pair order (rows in
// order, each with its columns in order), or -1 when the tile does not hold
// that pair (a column past the end, or not after the row on the diagonal).
class TileOrder {
public:
    explicit TileOrder(const TileSpan& tile) : tile_(tile) {
        std::uint64_t at = 0;
        for (std::uint32_t r = tile.row_begin; r < tile.row_end; ++r) {
            row_offset_.push_back(at);
            at += tile.column_end - std::min(tile.column_end, tile.first_column(r));
        }
        pairs_ = at;
    }
    std::int64_t index(std::uint32_t row, std::uint32_t column) const {
        if (row < tile_.row_begin || row >= tile_.row_end || column >= tile_.column_end) return -1;
        const std::uint32_t first = tile_.first_column(row);
        if (column < first) return -1;
        return static_cast<std::int64_t>(row_offset_[row - tile_.row_begin] + (column - first));
    }
    std::uint64_t pair_count() const { return pairs_; }

private:
    TileSpan tile_;
    std::vector<std::uint64_t> row_offset_;
    std::uint64_t pairs_ = 0;
};

}  // namespace alignscope::kernels::allvsall_gpu
