// The result rows a project keeps besides alignments (align/alignment.hpp) and
// timeline events (device/timeline.hpp): ranked search hits, summaries of long
// alignments streamed to their own file, downsampled DP heatmaps for display,
// benchmark points for GCUPS curves; and the page a paged query returns.
#pragma once

#include <alignscope/align/alignment.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace alignscope {
struct DpMatrices;
}

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

    float at(int row, int col) const { return values[static_cast<std::size_t>(row) * cols + col]; }

    // Shrinks a row-major matrix of scaled scores to at most max_rows x
    // max_cols; entries at or below `unreachable` count as no value.
    static Heatmap downsample(const std::vector<std::int64_t>& matrix, std::int64_t rows, std::int64_t cols,
                              int max_rows, int max_cols, int scale, std::int64_t unreachable);
    // The H matrix and the optimal path of `dp`.
    static Heatmap from_dp(const DpMatrices& dp, int scale, int max_rows = 256, int max_cols = 256);
};

// One point of a benchmark curve (e.g. GCUPS against query length).
struct BenchPoint {
    std::string series;  // the curve, e.g. "sw_affine_inter_s16 on gpu:0"
    std::string device;
    double x = 0;
    double y = 0;
    std::string x_label;  // e.g. "query length"
    std::string y_label;  // e.g. "GCUPS"
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
    std::int64_t total() const {
        return alignments + hits + long_alignments + heatmaps + timeline_events + bench_points;
    }
};

}  // namespace alignscope::store
