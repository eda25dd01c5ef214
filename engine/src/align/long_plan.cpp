// The long-pair pipeline's host-only decisions (see long_plan.hpp).
#include <alignscope/align/long_plan.hpp>
#include <alignscope/error.hpp>

#include <algorithm>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;
constexpr I64 kNoPath = kNegInf / 2;  // a value below this means "no path"

// Special rows at least min_band_rows apart, as many as the budget holds (a
// resumed job's checkpoint rows count against it), capped by the runner's
// stage-2 band limit when stage 2 runs.
I64 special_row_spacing(const Stage1Inputs& in, I64 rows) {
    // Rows the budget holds; a resumed job's checkpoint rows count against it.
    const std::uint64_t budget_rows = in.special_row_budget / std::max<std::uint64_t>(in.row_bytes, 1);
    const std::uint64_t count =
        std::max<std::uint64_t>(1, budget_rows - std::min<std::uint64_t>(budget_rows, in.loaded_rows));
    I64 every = std::max<I64>(in.min_band_rows, (rows + static_cast<I64>(count)) / (static_cast<I64>(count) + 1));
    const I64 cap = in.band_cap;
    if (cap > 0 && every > cap && (in.align.traceback || in.align.mode != AlignmentMode::Global)) {
        every = cap;
        const std::uint64_t needed = static_cast<std::uint64_t>(rows / cap) * in.row_bytes;
        if (needed > in.special_row_budget)
            throw Error("this pair needs " + std::to_string(rows / cap) + " special rows of " +
                        std::to_string(in.row_bytes >> 20) + " MiB (" + std::to_string(needed >> 20) + " MiB) on " +
                        in.device + " for its stage-2 bands of at most " + std::to_string(cap) +
                        " rows; the budget is " + std::to_string(in.special_row_budget >> 20) +
                        " MiB: raise --special-rows-mem, or use --device cpu");
    }
    return every;
}

}  // namespace

Stage1Plan plan_stage1(const Stage1Inputs& in) {
    const AlignmentMode mode = in.align.mode;
    const bool local = mode == AlignmentMode::Local;
    const bool semi = mode == AlignmentMode::SemiGlobal;
    const FreeEndGaps fe = semi ? in.align.free_ends : FreeEndGaps::none();
    Stage1Plan plan;
    plan.top = local ? Edge::Zero : (fe.query_begin ? Edge::Zero : Edge::Gap);
    plan.left = local ? Edge::Zero : (fe.target_begin ? Edge::Zero : Edge::Gap);
    plan.overview_cols = static_cast<int>(std::min<I64>(in.overview_size, in.n));
    const I64 r0 = in.resumed_row;
    plan.runs = r0 < in.m;
    if (!plan.runs) return plan;
    PassTask& p = plan.pass;
    const I64 rows = in.m - r0;
    p.row_begin = r0;
    p.row_end = in.m;
    p.col_end = in.n;
    p.top = plan.top;
    p.left = plan.left;
    if (r0 > 0) {  // row r0 from the checkpoint is the top edge; the left edge goes on from its column 0
        p.top = Edge::Explicit;
        if (plan.left == Edge::Gap) p.left = Edge::GapContinue;
    }
    p.local = local;
    p.track_best = local;
    p.want_last_row = !local || in.checkpointed;
    p.want_last_column = semi && fe.target_end;
    if (plan.overview_cols > 0) {
        p.overview_rows = static_cast<int>(std::clamp<I64>((in.overview_size * rows + in.m - 1) / in.m, 1, rows));
        p.overview_cols = plan.overview_cols;
    }
    p.special_every = special_row_spacing(in, rows);
    return plan;
}

void OverviewJoin::join(const std::vector<std::int64_t>& pass_edges, const std::vector<Score>& pass_grid, I64 upto,
                        std::vector<std::int64_t>& edges, std::vector<Score>& grid) const {
    edges.clear();
    grid.clear();
    if (grid_cols <= 0) return;
    const auto C = static_cast<std::size_t>(grid_cols);
    if (resumed_row > 0) {
        if (loaded_cols == grid_cols && !loaded_edges.empty()) {
            edges = loaded_edges;
            grid = loaded_grid;
        } else {  // the checkpoint has none (or another grid): rows 1..resumed_row show as empty
            edges.push_back(1);
            grid.assign(C, kNegInf);
        }
    }
    for (std::size_t b = 0; b < pass_edges.size() && pass_edges[b] + resumed_row <= upto; ++b) {
        edges.push_back(pass_edges[b] + resumed_row);
        grid.insert(grid.end(), pass_grid.begin() + static_cast<std::ptrdiff_t>(b * C),
                    pass_grid.begin() + static_cast<std::ptrdiff_t>((b + 1) * C));
    }
}

EndCell choose_end(const AlignOptions& align, I64 m, I64 n, const BestCell& best_cell,
                   const std::vector<Score>& bottom_h, const BestCell& last_column) {
    if (align.mode == AlignmentMode::Local) return {best_cell.score, best_cell.i, best_cell.j};
    EndCell end{bottom_h[static_cast<std::size_t>(n)], m, n};
    if (align.mode != AlignmentMode::SemiGlobal) return end;
    // The end rule: highest score, then smallest j, then smallest i.
    auto consider = [&](I64 v, I64 i, I64 j) {
        if (v > end.score || (v == end.score && (j < end.j || (j == end.j && i < end.i)))) end = {v, i, j};
    };
    if (align.free_ends.query_end)
        for (I64 j = 1; j <= n; ++j) consider(bottom_h[static_cast<std::size_t>(j)], m, j);
    if (align.free_ends.target_end && last_column.score > kNegInf) consider(last_column.score, last_column.i, n);
    return end;
}

GoalHit with_free_column_begin(GoalHit hit, const std::vector<Score>& last_col_h, I64 rows, I64 cols, I64 goal) {
    if (hit.found && hit.j != cols) return hit;
    // Free column 0: a path may start on it (forward H = 0 there).
    for (I64 i = 0; i <= rows; ++i) {
        if (last_col_h[static_cast<std::size_t>(i)] != goal) continue;
        if (!hit.found || hit.j > cols || i < hit.i || (i == hit.i && hit.kind != GoalHit::Kind::Begin)) {
            hit.found = true;
            hit.kind = GoalHit::Kind::Begin;
            hit.i = i;
            hit.j = cols;
        }
        break;
    }
    return hit;
}

bool SegmentLimits::small(const PathSegment& s) const {
    const I64 h = s.rows(), w = s.cols();
    const std::uint64_t cells = static_cast<std::uint64_t>(h + 1) * static_cast<std::uint64_t>(w + 1);
    return h <= 1 || (h <= base_rows && cells <= base_cells * 64) || cells <= base_cells;
}

MiddleCrossing best_middle_crossing(const PathSegment& s, const std::vector<Score>& top_h,
                                    const std::vector<Score>& top_f, const std::vector<Score>& bottom_h,
                                    const std::vector<Score>& bottom_f, I64 refund) {
    const I64 w = s.cols();
    I64 best = kNegInf, best_c = -1, best_prefix = 0;
    bool best_gap = false;
    for (I64 c = 0; c <= w; ++c) {
        const auto C = static_cast<std::size_t>(c), R = static_cast<std::size_t>(w - c);
        const I64 hf = top_h[C], hr = bottom_h[R], ff = top_f[C], fr = bottom_f[R];
        if (hf > kNoPath && hr > kNoPath && hf + hr > best) {
            best = hf + hr;
            best_c = c;
            best_prefix = hf;
            best_gap = false;
        }
        if (ff > kNoPath && fr > kNoPath && ff + fr + refund > best) {
            best = ff + fr + refund;
            best_c = c;
            best_prefix = ff;
            best_gap = true;
        }
    }
    return {best, PathPoint{middle_row(s), s.from.j + best_c, best_gap}, best_prefix};
}

}  // namespace alignscope::longpair
