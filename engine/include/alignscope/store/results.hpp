// The result rows a project keeps besides alignments (align/alignment.hpp) and
// timeline events (device/timeline.hpp): ranked search hits, summaries of long
// alignments streamed to their own file, downsampled DP heatmaps for display
// (a long-pair job's stage-1 overview among them), the pipeline statistics of
// long-pair jobs, benchmark points for GCUPS curves; and the page a paged
// query returns.
#pragma once

#include <alignscope/align/alignment.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace alignscope {
struct DpMatrices;
namespace longpair {
struct LongPairOverview;
struct LongPairStats;
}  // namespace longpair
}  // namespace alignscope

namespace alignscope::store {

// One ranked database hit. Coordinates are 1-based inclusive; 0 when the search
// reported none.
struct Hit {
    std::string query_id;
    std::string target_id;
    std::int64_t rank = 0;   // 1-based among the query's hits, best first
    std::int64_t score = 0;  // scaled, like Alignment::score
    std::optional<double> bits;
    std::optional<double> evalue;
    std::int64_t query_begin = 0, query_end = 0;
    std::int64_t target_begin = 0, target_end = 0;
    std::int64_t query_length = 0, target_length = 0;
    bool operator==(const Hit&) const = default;
};

// A long pairwise alignment whose columns were streamed to a file of their own
// (too large for a row): the summary lives in the project, the alignment in
// `alignment_path`.
struct LongAlignmentSummary {
    std::string query_id;
    std::string target_id;
    AlignmentMode mode = AlignmentMode::Global;
    std::int64_t score = 0;  // scaled
    std::int64_t query_begin = 0, query_end = 0;
    std::int64_t target_begin = 0, target_end = 0;
    std::int64_t query_length = 0, target_length = 0;
    AlignmentStats stats;
    std::string alignment_path;    // where the full alignment was written
    std::string alignment_format;  // how: "cigar", "pair", "sam", ...
    std::string device;
    std::string kernel;
    double seconds = 0;  // wall time of the alignment
};

// A DP matrix shrunk for display: each cell holds the maximum of a block of the
// full matrix, in user units. Source row i falls in block i * rows / source_rows
// (integer division), columns likewise, so blocks differ in size by at most one.
struct Heatmap {
    std::string label;  // which matrix: "H", "E", "F", or a caller's name
    std::string query_id;
    std::string target_id;
    std::int64_t source_rows = 0;  // full matrix: query length + 1
    std::int64_t source_cols = 0;  // target length + 1
    int rows = 0;
    int cols = 0;
    std::vector<float> values;  // rows*cols, row-major; NaN where no cell of the block is reachable
    // The optimal path in heatmap cells, in path order, consecutive repeats merged.
    std::vector<std::pair<int, int>> path;
    // Blocks of unequal size (a long-pair job's overview, binned the way its
    // runner binned the rows): the first source row of each heatmap row,
    // strictly ascending, and likewise the first source column of each
    // heatmap column. Heatmap row r then covers source rows
    // [row_edges[r], row_edges[r + 1]), the last one up to source_rows; source
    // rows before row_edges[0] are in no block. Empty: the uniform rule above.
    std::vector<std::int64_t> row_edges, col_edges;

    float at(int row, int col) const { return values[static_cast<std::size_t>(row) * cols + col]; }
    // The heatmap row (column) holding a source row (column) under either
    // rule; -1 when it is in no block.
    int row_of(std::int64_t source_row) const;
    int col_of(std::int64_t source_col) const;
    // The first source row (column) of heatmap row r (column c); r == rows
    // gives source_rows.
    std::int64_t row_begin(int r) const;
    std::int64_t col_begin(int c) const;
    // Throws Error naming `what` when the sizes, values or edges disagree.
    void check(const std::string& what) const;

    // Shrinks a row-major matrix of scaled scores to at most max_rows x
    // max_cols; entries at or below `unreachable` count as no value.
    static Heatmap downsample(const std::vector<std::int64_t>& matrix, std::int64_t rows, std::int64_t cols,
                              int max_rows, int max_cols, int scale, std::int64_t unreachable);
    // The H matrix and the optimal path of `dp`.
    static Heatmap from_dp(const DpMatrices& dp, int scale, int max_rows = 256, int max_cols = 256);
    // A long-pair job's stage-1 overview (block maxima of H over the whole DP
    // matrix, align_long with LongPairOptions::overview_size) in user units,
    // label "overview H". Source rows and columns are the DP matrix's (0..m,
    // 0..n); the overview's row edges become row_edges, its column rule
    // ((j - 1) * grid_cols / n) col_edges, so row 0 and column 0 are in no
    // block. The path is `alignment`'s, walked along its CIGAR in heatmap
    // cells (none without a traceback): a walk of O(CIGAR runs + blocks), not
    // of the alignment's columns. Throws Error when the overview is empty or
    // malformed.
    static Heatmap from_long_overview(const longpair::LongPairOverview& overview, const Alignment& alignment,
                                      int scale);
};

// What the long-pair pipeline of one job did (align_long_on): the stage
// timings and cells, special rows, crossings, split levels and base segments
// as longpair::LongPairStats has them, with the pair, the device and the
// runner settings. On CPU backends (Myers-Miller in linear space) there are
// no stages: stage 1 holds the whole run and the rest is zero.
struct LongPairStats {
    std::string query_id;
    std::string target_id;
    std::int64_t query_length = 0, target_length = 0;
    std::string device;
    std::string kernel;
    std::string strategy;          // "strips", "streams", "cpu-passes" or "linear-space" (longpair::LongPairStats)
    int kernels = 0, streams = 0;  // as asked; 0 = the backend's default
    double seconds = 0;            // the whole alignment, wall time
    std::array<double, 3> stage_seconds{};
    std::array<std::int64_t, 3> stage_cells{};
    std::int64_t special_rows = 0;
    std::int64_t crossings = 0;
    int split_levels = 0;
    std::int64_t base_segments = 0;
    bool operator==(const LongPairStats&) const = default;

    // Stage-1 cells (m x n; fewer when resumed from a checkpoint) / stage-1 seconds / 1e9
    // (the figure bench --long reports); 0 when unknown.
    double stage1_gcups() const;
    // The engine's statistics of `alignment` (ids, lengths, device and kernel
    // from it, strategy from the run's); kernels and streams, as asked, are
    // left for the caller.
    static LongPairStats from(const longpair::LongPairStats& stats, const Alignment& alignment, double seconds);
};

// One point of a benchmark curve (e.g. GCUPS against query length).
struct BenchPoint {
    std::string series;  // the curve, e.g. "sw_affine_inter_s16 on gpu:0"
    std::string device;
    double x = 0;
    double y = 0;
    std::string x_label;                            // e.g. "query length"
    std::string y_label;                            // e.g. "GCUPS"
    std::map<std::string, std::string> parameters;  // streams, threads, batch size, ...
    bool operator==(const BenchPoint&) const = default;
};

// Rows [first, first + rows.size()) of a job's results in insertion order. Rows
// are numbered 0, 1, 2, ... without gaps, so any row can be the start of a page
// (a scrolling view asks for the page holding row k) and following pages are
// keyset reads on (job, ordinal): every page costs the same however deep.
template <class Row>
struct Page {
    std::vector<Row> rows;
    std::int64_t first = 0;
    bool more = false;  // rows exist after this page
    std::int64_t next() const { return first + static_cast<std::int64_t>(rows.size()); }
};

// How many results of each kind a job holds.
struct ResultCounts {
    std::int64_t alignments = 0;
    std::int64_t hits = 0;
    std::int64_t long_alignments = 0;
    std::int64_t heatmaps = 0;
    std::int64_t timeline_events = 0;
    std::int64_t bench_points = 0;
    std::int64_t long_pair_stats = 0;
    std::int64_t total() const {
        return alignments + hits + long_alignments + heatmaps + timeline_events + bench_points + long_pair_stats;
    }
};

}  // namespace alignscope::store
