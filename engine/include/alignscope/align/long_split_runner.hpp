// A PassRunner over several PassRunners (one per device): one stage-1 pass
// cut into column slices and run as a pipeline over row blocks; the other
// calls dealt to the members (see long_split_runner.cpp).
#pragma once

#include <alignscope/align/long_pass.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace alignscope::longpair {

// One pass split across several runners (one per device; see long_split_runner.cpp).
struct SplitSettings {
    // Relative speed of each member: slice widths are proportional to it
    // (empty = equal).
    std::vector<double> weights;
    // Row-block height of the stage-1 pipeline, rounded to the special rows'
    // spacing. 0: from the members' busy_rows() (the multiple of the spacing
    // that minimises (blocks x slices per member + members - 1) x
    // ceil(block / busy_rows), the pipeline's length in sweeps), or without
    // it (CPU runners) rows / (8 x slices).
    std::int64_t block_rows = 0;
    // Column slices per member (>= 1), dealt round-robin: more, narrower slices
    // shorten the pipeline's fill (each device waits for one slice's sweep).
    int slices_per_member = 1;
};

// A runner over several runners: a single pass (stage 1) is cut into column
// slices, one member per slice (widths by weight), and run as a pipeline over
// row blocks: the member of slice s computes block b once slice s-1 has
// handed it the block's boundary column (H, E, F through host memory), one
// host thread per member. Special rows, the last row, the best cell (the
// reference's tie rule across slices), the last column, the overview and the
// on_rows_done reports are those of one unsplit pass. Calls with several tasks
// (stage 3) are dealt to the members by cells and run at once; goal searches
// (stage 2) run on the first member, with the special rows (kept in host
// memory here) passed as explicit rows. The first error of any member stops
// the others and is thrown once, naming that member's device.
std::unique_ptr<PassRunner> make_split_pass_runner(std::vector<std::unique_ptr<PassRunner>> members,
                                                   SplitSettings settings = {});

// How the split runner cuts one stage-1 pass of rows x cols cells (host-only,
// unit-tested): column slices, slice s on member s % members with widths by
// weight (at least one column each, no more slices than columns); the
// special rows' spacing rounded up to the members' granularity; and row
// blocks, multiples of that spacing so that every block but the last ends on
// a special row (see SplitSettings::block_rows for the height chosen).
struct SplitPassPlan {
    std::int64_t rows = 0;
    std::vector<std::int64_t> slice_edges;  // slices() + 1 entries: slice s is pass columns [edges[s], edges[s + 1])
    std::int64_t every = 0;                 // special rows at pass rows every, 2 every, ... < rows (0: none)
    std::int64_t block_rows = 1;
    std::size_t blocks = 0;  // ceil(rows / block_rows); 0 without rows
    std::size_t slices() const { return slice_edges.size() - 1; }
    // Pass row above block b (0-based; block_top(blocks) == rows).
    std::int64_t block_top(std::size_t b) const {
        return std::min<std::int64_t>(rows, static_cast<std::int64_t>(b) * block_rows);
    }
};
// `settings.weights` has one entry per member; special_every is the task's
// (0: none); granularity and busy_rows are the members' largest.
SplitPassPlan plan_split_pass(std::int64_t rows, std::int64_t cols, const SplitSettings& settings,
                              std::int64_t special_every, std::int64_t granularity, std::int64_t busy_rows);

}  // namespace alignscope::longpair
