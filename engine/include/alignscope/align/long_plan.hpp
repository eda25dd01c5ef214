// The long-pair pipeline's decisions as plain data, apart from any device:
// stage 1's pass (edges, special-row spacing under the memory budget, the
// overview grid), when a checkpoint is due and how a resumed job's overview
// joins the pass's, which cell ends the alignment, where a stage-2 band may
// begin on a free column 0, when a stage-3 segment is small and where its
// split crosses the middle row. Host-only: unit-tested without a GPU.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/long_pass.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::longpair {

// A point the optimal path passes through (forward DP indices, 0..m, 0..n);
// in_gap: it arrives there inside a vertical gap ('I' run) that goes on below.
struct PathPoint {
    std::int64_t i = 0, j = 0;
    bool in_gap = false;
};

// The path from `from` to `to`, worth `score` (`to`'s forward value minus `from`'s).
struct PathSegment {
    PathPoint from, to;
    std::int64_t score = 0;
    std::int64_t rows() const { return to.i - from.i; }
    std::int64_t cols() const { return to.j - from.j; }
};

// ---- Stage 1.

// What stage 1's plan depends on: the pair, the job's options, a resumed
// checkpoint, and what the runner says about itself (after prepare()).
struct Stage1Inputs {
    std::int64_t m = 0, n = 0;     // query and target residues
    AlignOptions align;            // mode, free end gaps (semi-global), traceback
    std::int64_t resumed_row = 0;  // the checkpoint's last row (0: from the top; m: stage 1 is done)
    std::size_t loaded_rows = 0;   // rows the checkpoint holds (they count against the budget)
    bool checkpointed = false;     // a checkpoint is written (it needs the last row)
    int overview_size = 0;         // LongPairOptions::overview_size
    std::uint64_t special_row_budget = 0;
    std::int64_t min_band_rows = 0;
    std::uint64_t row_bytes = 0;  // PassRunner::special_row_bytes(n)
    std::int64_t band_cap = 0;    // PassRunner::max_band_rows() (0 = any)
    std::string device;           // PassRunner::device(), for the budget's error
};

struct Stage1Plan {
    Edge top = Edge::Gap, left = Edge::Gap;  // the matrix's own edges (stage 2 reads row 0 by `top`)
    int overview_cols = 0;                   // overview grid width (0 = none)
    // The pass over rows resumed_row..m (when runs()): everything but the
    // explicit top row (top == Explicit: the checkpoint's last row) and the
    // checkpoint callback.
    bool runs = false;
    PassTask pass;
};

// Special rows at least min_band_rows apart, as many as the budget holds
// (less the checkpoint's), but no further apart than the runner's stage-2
// band limit when stage 2 runs; throws Error naming the device when the
// budget cannot hold the rows that limit needs.
Stage1Plan plan_stage1(const Stage1Inputs& in);

// When the next checkpoint is due: every `every_seconds` after the last one
// (or the start), at every chance when 0 or less.
class CheckpointSchedule {
public:
    using Clock = std::chrono::steady_clock;
    explicit CheckpointSchedule(double every_seconds, Clock::time_point start = Clock::now())
        : every_(every_seconds), last_(start) {}
    bool due(Clock::time_point now = Clock::now()) const {
        return every_ <= 0 || std::chrono::duration<double>(now - last_).count() >= every_;
    }
    void written(Clock::time_point now = Clock::now()) { last_ = now; }

private:
    double every_;
    Clock::time_point last_;
};

// The stage-1 overview of rows 1..upto: a resumed job's part from its
// checkpoint (rows 1..resumed_row; one empty block when the checkpoint has
// none or another grid width), then the pass's row blocks that start at or
// above `upto` (pass rows, shifted by resumed_row).
struct OverviewJoin {
    int grid_cols = 0;  // 0: no overview
    std::int64_t resumed_row = 0;
    int loaded_cols = 0;  // the checkpoint's grid
    std::vector<std::int64_t> loaded_edges;
    std::vector<Score> loaded_grid;
    void join(const std::vector<std::int64_t>& pass_edges, const std::vector<Score>& pass_grid, std::int64_t upto,
              std::vector<std::int64_t>& edges, std::vector<Score>& grid) const;
};

// The alignment's end from what stage 1 left: the best cell (local), else
// the corner, or (semi-global) the best of the free last row and column by
// the reference's rule (highest score, then smallest j, then smallest i).
struct EndCell {
    std::int64_t score = 0, i = 0, j = 0;
};
EndCell choose_end(const AlignOptions& align, std::int64_t m, std::int64_t n, const BestCell& best_cell,
                   const std::vector<Score>& bottom_h, const BestCell& last_column);

// ---- Stage 2.

// A band's goal search on a free column 0 (semi-global, free target begin):
// the path may also begin on the band's last reverse column (forward column 0)
// wherever H there equals the goal. Returns the hit that comes first.
GoalHit with_free_column_begin(GoalHit hit, const std::vector<Score>& last_col_h, std::int64_t rows, std::int64_t cols,
                               std::int64_t goal);

// ---- Stage 3.

// Segments this small are finished by a full-matrix traceback on the CPU.
struct SegmentLimits {
    std::int64_t base_rows = 48;
    std::uint64_t base_cells = 1u << 20;
    bool small(const PathSegment& s) const;
};

inline std::int64_t middle_row(const PathSegment& s) { return s.from.i + s.rows() / 2; }

// Where the optimal path of `s` crosses its middle row, from the last rows
// (H and F, columns 0..cols) of a forward pass over the top half and a
// reverse pass over the bottom half: the first column with the best
// H + H, or F + F + (open - extend) for a vertical gap through the row.
struct MiddleCrossing {
    std::int64_t score = kNegInf;  // the best sum: must equal s.score
    PathPoint at;                  // on row middle_row(s)
    std::int64_t prefix = 0;       // the top half's value there
};
MiddleCrossing best_middle_crossing(const PathSegment& s, const std::vector<Score>& top_h,
                                    const std::vector<Score>& top_f, const std::vector<Score>& bottom_h,
                                    const std::vector<Score>& bottom_f, std::int64_t refund);

}  // namespace alignscope::longpair
