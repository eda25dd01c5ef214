// A long-pair job's results for the project: its stage-1 overview as a
// heatmap (with the alignment's path walked along the CIGAR in blocks) and
// its pipeline statistics.
#include <alignscope/align/long_pair.hpp>
#include <alignscope/error.hpp>
#include <alignscope/store/results.hpp>

#include <algorithm>
#include <limits>

namespace alignscope::store {

Heatmap Heatmap::from_long_overview(const longpair::LongPairOverview& o, const Alignment& a, int scale) {
    if (o.empty()) throw Error("long-pair overview: the runner kept none");
    if (scale < 1) throw Error("long-pair overview: the score scale must be positive");
    const std::size_t grid_rows = o.row_edges.size();
    if (o.rows < 1 || o.cols < 1 || o.grid_cols < 1 || o.grid_cols > o.cols || grid_rows < 1 ||
        grid_rows > static_cast<std::size_t>(o.rows) ||
        o.max_h.size() != grid_rows * static_cast<std::size_t>(o.grid_cols))
        throw Error("long-pair overview: " + std::to_string(o.max_h.size()) + " values for " +
                    std::to_string(grid_rows) + " x " + std::to_string(o.grid_cols) + " blocks of a " +
                    std::to_string(o.rows) + " x " + std::to_string(o.cols) + " matrix");
    Heatmap h;
    h.label = "overview H";
    h.query_id = a.query_id;
    h.target_id = a.target_id;
    h.source_rows = o.rows + 1;
    h.source_cols = o.cols + 1;
    h.rows = static_cast<int>(grid_rows);
    h.cols = o.grid_cols;
    h.row_edges = o.row_edges;
    // Column j (1-based) is in block (j - 1) * grid_cols / n: block c starts at
    // the first j with (j - 1) >= ceil(c * n / grid_cols).
    h.col_edges.resize(static_cast<std::size_t>(h.cols));
    for (int c = 0; c < h.cols; ++c)
        h.col_edges[static_cast<std::size_t>(c)] = (static_cast<std::int64_t>(c) * o.cols + h.cols - 1) / h.cols + 1;
    if (h.row_edges.front() < 1) throw Error("long-pair overview: the first row block starts at row 0");
    h.values.resize(o.max_h.size());
    for (std::size_t k = 0; k < o.max_h.size(); ++k)
        h.values[k] = o.max_h[k] <= longpair::kNegInf / 2 ? std::numeric_limits<float>::quiet_NaN()
                                                          : static_cast<float>(static_cast<double>(o.max_h[k]) / scale);

    // The path, a run of the CIGAR at a time: every stretch of an operation
    // that stays in one block adds that block once. Row 0 and column 0 (a
    // global path's start) count as the first block.
    if (!a.cigar.empty()) {
        if (a.query_begin < 1 || a.target_begin < 1 || a.query_end > o.rows || a.target_end > o.cols)
            throw Error("long-pair overview: the alignment's coordinates lie outside the " + std::to_string(o.rows) +
                        " x " + std::to_string(o.cols) + " matrix");
        auto add = [&h](std::int64_t i, std::int64_t j) {
            const std::pair<int, int> cell{std::max(h.row_of(i), 0), std::max(h.col_of(j), 0)};
            if (h.path.empty() || h.path.back() != cell) h.path.push_back(cell);
        };
        // The first source row (column) of the next block after the one holding i (j).
        auto next_row = [&h](std::int64_t i) { return h.row_begin(h.row_of(i) + 1); };
        auto next_col = [&h](std::int64_t j) { return h.col_begin(h.col_of(j) + 1); };
        std::int64_t i = a.query_begin - 1, j = a.target_begin - 1;
        if (a.mode != AlignmentMode::Local) add(i, j);
        for (const CigarOp& op : a.cigar.ops()) {
            const std::int64_t di = op.op != 'D', dj = op.op != 'I';
            std::int64_t remaining = op.length;
            while (remaining > 0) {
                const std::int64_t i1 = i + di, j1 = j + dj;
                if (i1 > o.rows || j1 > o.cols)
                    throw Error("long-pair overview: the alignment's CIGAR leaves the " + std::to_string(o.rows) +
                                " x " + std::to_string(o.cols) + " matrix");
                add(i1, j1);
                std::int64_t k = remaining;
                if (di) k = std::min(k, next_row(i1) - i1);
                if (dj) k = std::min(k, next_col(j1) - j1);
                k = std::max<std::int64_t>(k, 1);
                i += di * k;
                j += dj * k;
                remaining -= k;
            }
        }
    }
    h.check("long-pair overview");
    return h;
}

double LongPairStats::stage1_gcups() const {
    if (stage_seconds[0] <= 0) return 0;
    // The cells stage 1 computed (fewer than m x n in a job resumed from a checkpoint).
    const double cells = stage_cells[0] > 0 ? static_cast<double>(stage_cells[0])
                                            : static_cast<double>(query_length) * static_cast<double>(target_length);
    return cells / stage_seconds[0] / 1e9;
}

LongPairStats LongPairStats::from(const longpair::LongPairStats& stats, const Alignment& alignment, double seconds) {
    LongPairStats s;
    s.query_id = alignment.query_id;
    s.target_id = alignment.target_id;
    s.query_length = alignment.query_length;
    s.target_length = alignment.target_length;
    s.device = alignment.device;
    s.kernel = alignment.kernel;
    s.strategy = stats.strategy;
    s.seconds = seconds;
    for (int k = 0; k < 3; ++k) {
        s.stage_seconds[static_cast<std::size_t>(k)] = stats.stage_seconds[k];
        s.stage_cells[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(stats.stage_cells[k]);
    }
    s.special_rows = stats.special_rows;
    s.crossings = stats.crossings;
    s.split_levels = stats.split_levels;
    s.base_segments = stats.base_segments;
    return s;
}

}  // namespace alignscope::store
