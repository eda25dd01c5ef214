// How each kernel family lays a batch out on the device: threads per pair
// group, query rows per thread, pairs per group, and the device bytes a warp
// block of pairs needs (what the batch planner budgets). Plain C++ shared by
// the host code, the kernels' launcher and the tests.
#pragma once

#include "kernel_catalog.hpp"
#include "pairwise_policy.hpp"
#include "pass_types.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace alignscope::kernels {

struct FamilyLayout {
    int group_threads = 1;                                 // G: threads that share a pair (group)
    int rows_per_thread = PairwiseCommonPolicy::kS32Rows;  // R
    int pairs_per_group = 1;                               // 2 with s16 (the two halves of a register)

    int groups_per_warp() const { return 32 / group_threads; }
    int pairs_per_warp() const { return groups_per_warp() * pairs_per_group; }
    int strip_rows() const { return group_threads * rows_per_thread; }
};

// The score passes (forward, reverse) of a variant, rows as its kernels'
// policy (pairwise_policy.hpp) says.
inline FamilyLayout layout_of(const KernelVariant& variant) {
    FamilyLayout layout;
    layout.group_threads = variant.threads_per_pair();
    layout.rows_per_thread =
        variant.width == LaneWidth::S16 ? PairwiseCommonPolicy::kS16Rows : PairwiseCommonPolicy::kS32Rows;
    layout.pairs_per_group = variant.width == LaneWidth::S16 ? 2 : 1;
    return layout;
}

// The traceback pass always runs at 32 bits in the variant's own grouping,
// with the rows of its direction words.
inline FamilyLayout traceback_layout_of(const KernelVariant& variant) {
    FamilyLayout layout;
    layout.group_threads = variant.threads_per_pair();
    layout.rows_per_thread = PairwiseCommonPolicy::kTraceRows;
    layout.pairs_per_group = 1;
    return layout;
}

inline std::uint64_t padded_residues(std::int64_t length) {
    return (static_cast<std::uint64_t>(length) + 15u) & ~15ull;
}

// Shape of a warp block: the largest query and target among its pairs.
struct BlockShape {
    std::int64_t max_query = 0;
    std::int64_t max_target = 0;
};

inline BlockShape shape_of(const std::vector<std::pair<std::int64_t, std::int64_t>>& lengths, std::size_t first,
                           std::size_t count) {
    BlockShape shape;
    for (std::size_t k = first; k < first + count && k < lengths.size(); ++k) {
        shape.max_query = std::max(shape.max_query, lengths[k].first);
        shape.max_target = std::max(shape.max_target, lengths[k].second);
    }
    return shape;
}

// Strip-boundary slots (two ints each) a warp block of `layout` needs.
inline std::uint64_t boundary_slots(const FamilyLayout& layout, const BlockShape& shape) {
    return static_cast<std::uint64_t>(shape.max_target + 1) * static_cast<std::uint64_t>(layout.groups_per_warp());
}

// Direction words a traceback warp block of `layout` needs.
inline std::uint64_t trace_words(const FamilyLayout& layout, const BlockShape& shape) {
    const std::uint64_t strips = (static_cast<std::uint64_t>(shape.max_query) + layout.strip_rows() - 1) /
                                 static_cast<std::uint64_t>(layout.strip_rows());
    const std::uint64_t steps = static_cast<std::uint64_t>(shape.max_target) + layout.group_threads - 1;
    return strips * steps * 32u;
}

// Device bytes of the pairs [first, first+count) of `lengths` (query, target)
// run as one unit of `layout`, with or without the traceback pass.
inline std::uint64_t unit_bytes(const FamilyLayout& layout,
                                const std::vector<std::pair<std::int64_t, std::int64_t>>& lengths, std::size_t first,
                                std::size_t count, bool traceback) {
    std::uint64_t bytes = 0;
    for (std::size_t k = first; k < first + count; ++k) {
        const auto [m, n] = lengths[k];
        bytes += padded_residues(m) + padded_residues(n) + sizeof(PairTask) + sizeof(PairResult);
        if (traceback) bytes += 2 * 4 * static_cast<std::uint64_t>(m + n + 2);  // CIGAR scratch and output
    }
    bytes += boundary_slots(layout, shape_of(lengths, first, count)) * 8u;
    if (traceback) {
        // The 32-bit traceback pass groups the same pairs in warp blocks of its own.
        FamilyLayout tb = layout;
        tb.pairs_per_group = 1;
        const std::size_t per_block = static_cast<std::size_t>(tb.pairs_per_warp());
        for (std::size_t b = first; b < first + count; b += per_block) {
            const BlockShape shape = shape_of(lengths, b, std::min(per_block, first + count - b));
            bytes += trace_words(tb, shape) * 4u + boundary_slots(tb, shape) * 8u;
        }
    }
    return bytes;
}

}  // namespace alignscope::kernels
