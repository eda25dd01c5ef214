// Pieces shared by the CPU reference aligners (reference_aligner.cpp,
// linear_space.cpp, dp_matrix.cpp): the linear-memory score passes, the search
// for the aligned region, and the global tracebacks (full matrix and
// Myers-Miller). Private to engine/src/align.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>

namespace alignscope::detail {

// Far below any reachable score, yet safe to subtract penalties from.
inline constexpr std::int64_t minus_infinity = std::numeric_limits<std::int64_t>::min() / 4;

// Counts DP cells and hands the running total to a progress callback every few
// million cells (a few milliseconds of work), so cancellation is prompt.
class CellCounter {
public:
    explicit CellCounter(const std::function<void(std::uint64_t)>* progress = nullptr) : progress_(progress) {}
    void add(std::uint64_t cells) {
        done_ += cells;
        if (progress_ && *progress_ && done_ - reported_ >= report_step) report();
    }
    void report() {
        reported_ = done_;
        if (progress_ && *progress_) (*progress_)(done_);
    }
    std::uint64_t done() const { return done_; }

private:
    static constexpr std::uint64_t report_step = 1u << 22;
    const std::function<void(std::uint64_t)>* progress_;
    std::uint64_t done_ = 0;
    std::uint64_t reported_ = 0;
};

// Where a non-local alignment may start and end. Row 0 / column 0 "free" means
// the boundary scores 0 instead of a gap; last row / last column "free" means
// the alignment may end in any cell (m, j >= 1) / (i >= 1, n). With
// boundary_ends, (m, 0) and (0, n) are candidates as well: the reverse pass
// needs them, where they stand for alignments made only of gaps on one side.
struct Boundary {
    bool row0_free = false;
    bool col0_free = false;
    bool last_row_free = false;
    bool last_col_free = false;
    bool boundary_ends = false;
};

struct PassEnd {
    std::int64_t score = 0;
    std::int64_t i = 0;  // end cell; (0, 0) for an empty local alignment
    std::int64_t j = 0;
};

// One forward pass in O(n) memory: the optimal score and its end cell under the
// tie-break of reference_aligner.hpp (smallest j, then smallest i).
PassEnd forward_pass(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                     const ScoringScheme& scheme, bool local, const Boundary& boundary, CellCounter& counter);

// The aligned region: score and 1-based inclusive coordinates. A side that the
// alignment does not consume has begin = end + 1. Empty local: all zero.
struct Region {
    std::int64_t score = 0;
    std::int64_t query_begin = 0, query_end = 0;
    std::int64_t target_begin = 0, target_end = 0;
    bool empty = false;
};

// Forward pass for score and end, reverse pass (on the reversed prefixes) for
// the begin.
Region find_region(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                   const ScoringScheme& scheme, const AlignOptions& options, CellCounter& counter);

// Global alignment of query[0..rows) with target[0..cols) from a full direction
// matrix, appended to `cigar`; returns its score. A run of 'I' that starts at
// the top-left corner costs top_open for its first column instead of gap_open,
// one that ends at the bottom-right corner bottom_open (Myers-Miller's
// boundary conditions, e for a gap already opened outside the rectangle).
std::int64_t global_traceback(const std::uint8_t* query, std::int64_t rows, const std::uint8_t* target,
                              std::int64_t cols, const ScoringScheme& scheme, std::int64_t top_open,
                              std::int64_t bottom_open, Cigar& cigar, CellCounter& counter);

// The same alignment problem (top_open = bottom_open = gap_open) in linear space.
void myers_miller(const std::uint8_t* query, std::int64_t rows, const std::uint8_t* target, std::int64_t cols,
                  const ScoringScheme& scheme, Cigar& cigar, CellCounter& counter);

// The whole pipeline behind align_reference and align_linear_space: region,
// then the traceback of the region in a direction matrix when it has at most
// `matrix_cell_limit` cells, else by Myers-Miller. complete = false leaves the
// CIGAR as the traceback made it (re-scored, but no aligned text and no
// statistics): for a caller that streams the alignment (long_pair.cpp).
Alignment align_pair(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                     const AlignOptions& options, std::uint64_t matrix_cell_limit, CellCounter& counter,
                     bool complete = true);

// Throws Error when the scheme cannot be used (negative penalty, extend > open, no matrix).
void check_scheme(const ScoringScheme& scheme);

}  // namespace alignscope::detail
