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
    // With links between GPU members a minimum: the plan may cut more (see
    // plan_split_pass).
    int slices_per_member = 1;
    // Hand boundary columns over through the members' links
    // (PassRunner::link_to: GPU to GPU while both slices run, or between CPU
    // runners a host buffer) where every pair of neighbours has one; false:
    // always through host memory between row blocks.
    bool device_links = true;
};

// A runner over several runners: a single pass (stage 1) is cut into column
// slices, one member per slice (widths by weight), and run as a pipeline over
// row blocks, one host thread per member. With links (SplitSettings::
// device_links) the member of slice s starts block b as soon as slice s - 1
// has started it, and the boundary column streams from one to the other
// through their link; without, it starts once slice s - 1 has finished the
// block and handed over its boundary column (H, E, F) in host memory.
// Special rows, the last row, the best cell (the reference's tie rule across
// slices), the last column, the overview and the on_rows_done reports are
// those of one unsplit pass (reported as row blocks finish: a linked pass of
// one block reports them at its end). Calls with several tasks
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
// (0: none); granularity and busy_rows are the members' largest (for GPU
// runners the strip height and the rows of the strips they hold at once).
// `linked`: the slices stream their boundaries (links between GPU runners,
// busy_rows > 0): a slice waits for one strip's sweep of the slice before it,
// not for a whole block, so blocks are tall (at least 8 x busy_rows, or the
// whole pass) and the slices per member are chosen, at least
// settings.slices_per_member, to minimise the modelled time: per member and
// block, K launches of a slice (its sweeps in waves of busy_rows plus the
// strips' start-up, 64 columns a strip), plus one slice's sweep of fill.
SplitPassPlan plan_split_pass(std::int64_t rows, std::int64_t cols, const SplitSettings& settings,
                              std::int64_t special_every, std::int64_t granularity, std::int64_t busy_rows,
                              bool linked = false);

}  // namespace alignscope::longpair
