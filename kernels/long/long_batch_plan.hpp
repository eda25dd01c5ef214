// How the CUDA long-pair runner (cuda_long_runner.cpp) lays a runner call
// out on the GPU, as host-only plain data: the batches a call is cut into
// under the memory budget, the strip height, each task's words in the
// launch buffers, the special rows a stage-1 pass keeps, the overview's row
// blocks, and the launch's kernels, streams and blocks. No CUDA here, and
// header-only: the unit tests (tests/kernels) run it without a GPU or the
// kernels library.
#pragma once

#include "long_types.hpp"  // relative: the unit tests include this header without the kernels folder

#include <alignscope/align/long_pass.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace alignscope::kernels::longpass {

using TaskList = std::vector<longpair::PassTask>;

// Consecutive ranges [first, last) of the tasks, in order, each closed as
// soon as its buses ((cols + 1) x 8 + (rows + 1) x 4 bytes a task) reach
// `budget` bytes; every range holds at least one task.
inline std::vector<std::pair<std::size_t, std::size_t>> plan_batches(const TaskList& tasks, std::uint64_t budget) {
    std::vector<std::pair<std::size_t, std::size_t>> batches;
    std::size_t first = 0;
    while (first < tasks.size()) {
        std::size_t last = first;
        std::uint64_t bytes = 0;
        do {
            bytes += static_cast<std::uint64_t>(tasks[last].cols() + 1) * 8 +
                     static_cast<std::uint64_t>(tasks[last].rows() + 1) * 4;
            ++last;
        } while (last < tasks.size() && bytes < budget);
        batches.emplace_back(first, last);
        first = last;
    }
    return batches;
}

// What the tasks [first, last) of one launch ask for, as the strip height
// and the kernel variant depend on it. Throws an internal Error when local
// and non-local passes share the launch.
struct BatchTraits {
    bool local = false;        // H clamped at 0 (every task, or none)
    bool overview = false;     // some task fills an overview grid
    bool goal_search = false;  // some task is a goal search
    bool slice = false;        // some task has an explicit left edge or wants its last column's state
    bool linked = false;       // some task is a slice of a streamed split (a BoundaryLink in or out)
    long long total_rows = 0;
};
inline BatchTraits batch_traits(const TaskList& tasks, std::size_t first, std::size_t last) {
    BatchTraits b;
    for (std::size_t x = first; x < last; ++x) {
        b.local = b.local || tasks[x].local;
        b.total_rows += tasks[x].rows();
    }
    for (std::size_t x = first; x < last; ++x)
        if (tasks[x].local != b.local)
            throw Error("internal error: local and non-local long-pair passes in one launch");
    for (std::size_t x = first; x < last; ++x) {
        const longpair::PassTask& t = tasks[x];
        b.overview = b.overview || (t.overview_rows > 0 && t.overview_cols > 0);
        b.goal_search = b.goal_search || t.goal_search;
        b.linked = b.linked || t.left_link || t.right_link;
        b.slice = b.slice || b.linked || t.left == longpair::Edge::Explicit ||
                  (t.want_last_column && t.want_last_column_state);
    }
    return b;
}

// The GPU the strip height is chosen for (from prepare()), and the height a
// forced kernel asks for (0 = automatic).
struct StripOccupancy {
    int sm_count = 1;
    int resident_warps = 1;        // strips the plain kernels hold at once
    int resident_slice_warps = 1;  // strips the slice kernels hold at once
    int forced_rows = 0;
};
// Rows per lane R (StripPolicy): the overview kernels' height with an
// overview, the tall height for the slices of a streamed split (both sides
// of a link count its rows in the same strips), else the forced height, else
// the tall height when there are tall
// strips enough to fill the GPU (or a goal search has more short strips than
// can run at once), else the short one.
inline int choose_rows_per_lane(const BatchTraits& batch, const StripOccupancy& gpu) {
    constexpr int tall = StripPolicy::tall_rows, short_ = StripPolicy::short_rows;
    const int resident_guess =
        batch.slice ? gpu.resident_slice_warps : gpu.sm_count * StripPolicy::resident_warps_per_sm;
    if (batch.overview) return StripPolicy::overview_rows;
    if (batch.linked) return tall;
    if (gpu.forced_rows) return gpu.forced_rows;
    return (batch.total_rows / strip_rows(tall) >= resident_guess ||
            (batch.goal_search && batch.total_rows / strip_rows(short_) > gpu.resident_warps))
               ? tall
               : short_;
}

// Each task's words in the launch's buffers (offsets per task k = x - first)
// and the buffers' sizes: its bus (H and F of a row, cols + 1 each), its last
// column (H then E, rows + 1 each, when wanted), its explicit left column
// (H, E, F), its goal-search hit (one key), its explicit crossing row (H, F).
struct BatchLayout {
    std::vector<std::size_t> bus_at, col_at, left_at, hit_at, goal_at;
    std::size_t bus_words = 0, col_words = 0, left_words = 0, hits = 0, goal_words = 0;
};
inline BatchLayout plan_batch_layout(const TaskList& tasks, std::size_t first, std::size_t last) {
    BatchLayout l;
    const std::size_t count = last - first;
    l.bus_at.resize(count);
    l.col_at.resize(count);
    l.left_at.resize(count);
    l.hit_at.resize(count);
    l.goal_at.resize(count);
    for (std::size_t x = first; x < last; ++x) {
        const longpair::PassTask& t = tasks[x];
        const std::size_t k = x - first;
        const long long h = t.rows(), w = t.cols();
        l.bus_at[k] = l.bus_words;
        l.bus_words += static_cast<std::size_t>(w + 1) * 2;
        l.col_at[k] = l.col_words;
        if (t.want_last_column) l.col_words += 2 * static_cast<std::size_t>(h + 1);  // H, then E (slice kernels)
        l.left_at[k] = l.left_words;
        if (t.left == longpair::Edge::Explicit) l.left_words += 3 * static_cast<std::size_t>(h + 1);
        l.hit_at[k] = l.hits;
        if (t.goal_search) ++l.hits;
        l.goal_at[k] = l.goal_words;
        if (t.goal_search && t.crossing_row == longpair::kExplicitRow) l.goal_words += 2 * t.crossing_h.size();
    }
    return l;
}

// A stage-1 pass's special rows in strips of `strip_height` rows: the
// bottoms of strips every_strips - 1, 2 every_strips - 1, ... above the
// pass's last row (rows as forward row numbers), at a spacing of at least
// special_every rows.
struct StripSpecialRows {
    int every_strips = 1;
    std::vector<std::int64_t> rows;
};
inline StripSpecialRows plan_special_rows(const longpair::PassTask& t, long long strip_height) {
    StripSpecialRows s;
    const long long SH = strip_height;
    const long long every = std::max<long long>(1, (t.special_every + SH - 1) / SH);
    s.every_strips = static_cast<int>(every);
    for (long long k = every - 1; (k + 1) * SH < t.rows(); k += every) s.rows.push_back(t.row_begin + (k + 1) * SH);
    return s;
}

// First pass row (1-based) of each of an overview's ov_rows row blocks when
// strip s of `strips` falls in block s x ov_rows / strips.
inline std::vector<std::int64_t> overview_row_edges(int ov_rows, int strips, long long strip_height) {
    std::vector<std::int64_t> edges;
    for (long long b = 0; b < ov_rows; ++b) {
        const long long first_strip =
            (b * strips + ov_rows - 1) / ov_rows;  // smallest s with s * ov_rows / strips >= b
        edges.push_back(first_strip * strip_height + 1);
    }
    return edges;
}

// One launch: `kernels` strip kernels on `streams` streams sharing the
// strips by ticket ("streams" strategy; one persistent kernel otherwise, and
// always for a goal search, which stops early only when all of its strips
// are resident), `blocks` blocks between them, and the kernel's name, which
// the timeline shows: "sw_affine_strips16_s32" (mode local or global, the
// scheme's gap model, the rows per lane; the kernel and stream counts are the
// strategy's, not the kernel's).
struct LaunchShape {
    int kernels = 1, streams = 1, blocks = 1;
    KernelName kernel;
    // Blocks of kernel kx (at least 1).
    int blocks_of(int kx) const {
        const int b = blocks / kernels + (kx < blocks % kernels ? 1 : 0);
        return std::max(b, 1);
    }
};
// The strip kernel's name in the grammar: local, or global for every other
// mode (the kernel runs them all through its edges; align_long names the
// alignment's kernel with the job's mode).
inline KernelName strips_kernel_name(int rows_per_lane, bool local, bool linear) {
    return KernelName{local ? AlignmentMode::Local : AlignmentMode::Global, linear, "strips", rows_per_lane,
                      KernelWidth::S32};
}

struct LaunchRequest {
    int tickets = 0;  // strips of the launch
    int warps_per_block = 1;
    int resident_blocks = 1;       // blocks of this kernel variant the GPU holds at once
    bool goal_search = false;      // some launched task is a goal search
    std::string strategy;          // "strips" or "streams"
    int kernels = 0, streams = 0;  // LongRunnerSettings (0 = default: 4 kernels, a stream each)
    int rows_per_lane = StripPolicy::tall_rows;
    bool local = false;
    bool linear = false;  // the scheme's gap model (the kernel's cells are affine either way)
};
inline LaunchShape plan_launch(const LaunchRequest& r) {
    LaunchShape shape;
    const int blocks_needed = (r.tickets + r.warps_per_block - 1) / r.warps_per_block;
    int blocks = std::min(r.resident_blocks, blocks_needed);
    // A goal search must have all its strips resident at once (it stops early
    // only then), so it always runs as one persistent kernel.
    const bool streams_strategy = r.strategy == "streams" && !r.goal_search;
    shape.kernels = streams_strategy ? std::max(1, r.kernels > 0 ? r.kernels : 4) : 1;
    shape.streams = streams_strategy ? std::max(1, r.streams > 0 ? r.streams : shape.kernels) : 1;
    shape.blocks = std::max(blocks, shape.kernels);
    shape.kernel = strips_kernel_name(r.rows_per_lane, r.local, r.linear);
    return shape;
}

// Cells a one-task launch has computed by a progress snapshot (columns
// published per strip) of a task of m rows and n columns.
inline std::uint64_t snapshot_cells(const int* snapshot, int tickets, long long m, long long n,
                                    long long strip_height) {
    std::uint64_t cells = 0;
    for (int s = 0; s < tickets; ++s) {
        const long long cols = std::min<long long>(std::max(snapshot[static_cast<std::size_t>(s)], 0), n);
        const long long rows = std::min<long long>(strip_height, m - s * strip_height);
        cells += static_cast<std::uint64_t>(cols) * static_cast<std::uint64_t>(rows);
    }
    return cells;
}

}  // namespace alignscope::kernels::longpass
