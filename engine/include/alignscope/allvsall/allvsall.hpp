// All-against-all alignment: the scores of every pair of a set (or of two
// sets), computed tile by tile through a Backend's align_pairs with traceback
// off, and a second align_pairs with traceback only for the pairs that pass
// the job's criteria (lazy traceback). A job runs between a TileSource and a
// TileSink (tile_result.hpp): one process deals its own tiles; a distributed
// run deals them from another process. Nothing here knows which.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/allvsall/tile_result.hpp>
#include <alignscope/allvsall/tile_scorer.hpp>
#include <alignscope/allvsall/tiling.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/sequence.hpp>

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::allvsall {

// Which pairs are traced back. A pair is traced when it passes any criterion.
struct TraceCriteria {
    std::optional<double> min_score;       // user units: score >= S
    std::optional<double> min_normalised;  // score / min(self-score of each) >= X
    std::uint32_t top = 0;                 // the N best-scoring partners of every record (after all scores)
    bool all = false;                      // every pair (identity distances need it)

    bool per_tile() const { return min_score || min_normalised || all; }
    bool any() const { return per_tile() || top > 0; }
};

struct Problem {
    const std::vector<Sequence>* rows = nullptr;     // the set
    const std::vector<Sequence>* columns = nullptr;  // the set again (triangle) or --against's
    ScoringScheme scheme;
    AlignOptions options;  // mode and free ends; traceback/begins are set per pass
    TraceCriteria trace;
    int threads = 0;
    int streams = 0;
    std::string kernel;
    std::uint64_t gpu_memory_budget = 0;
    Tiling tiling;
    // Self-scores (scaled), by record: each sequence aligned with itself in the job's mode.
    std::vector<std::int64_t> row_self, column_self;
    // The largest magnitude any pair's score can reach (scaled): scores are
    // 64-bit throughout, and a path that holds them in 32 bits (a TileScorer,
    // the compact spool record) is taken only where this says they fit.
    std::int64_t score_bound = 0;

    bool triangle() const { return tiling.is_triangle(); }
    bool scores_fit_32_bits() const { return score_bound <= std::int64_t{INT32_MAX}; }
    // score / min(self-scores of the pair's records); 0 when that minimum is not positive.
    double normalised(std::uint32_t i, std::uint32_t j, std::int64_t score) const;
};

// A problem over `rows` (and `columns`, or null for the triangle of `rows`),
// its tiling and score bound made and the self-scores still empty. Throws
// Error when a set is empty or the triangle has fewer than two records.
Problem make_problem(const std::vector<Sequence>& rows, const std::vector<Sequence>* columns,
                     const ScoringScheme& scheme, const AlignOptions& options, const TraceCriteria& trace,
                     std::uint32_t tile_size);

// Fills row_self and column_self: every record aligned with itself on `backend`
// (scores only). Cancellable through `context`.
void compute_self_scores(Problem& problem, Backend& backend, JobContext& context);

// One tile: its scores (traceback off, ends only), then the pairs that pass the
// per-tile criteria again with traceback. Throws Error or Cancelled.
TileResult run_tile(const Problem& problem, std::uint64_t tile, Backend& backend, JobContext& context);

// A tile's result from its scores (scaled, in the tile's pair order): the
// pairs that pass the per-tile criteria traced back on `backend`.
TileResult finish_tile(const Problem& problem, std::uint64_t tile, const std::vector<std::int64_t>& scores,
                       Backend& backend, JobContext& context);

// Takes tiles from `source` until it has none, runs each and puts its result
// into `sink`. With a `scorer`, the scores come from it, up to its depth of
// tiles in flight while the host finishes the previous one; traceback still
// runs on `backend`. A scorer's scores are 32-bit: where the problem's scores
// may not fit them (scores_fit_32_bits), `backend` scores the tiles instead.
void run_tiles(const Problem& problem, Backend& backend, TileSource& source, TileSink& sink, JobContext& context);
void run_tiles(const Problem& problem, Backend& backend, TileScorer* scorer, TileSource& source, TileSink& sink,
               JobContext& context);

// Traceback of given pairs on `backend`: for --top, after every score is
// known. Results in the order of `pairs`; TracedPair::index is the position in
// `pairs`. Throws Error when an alignment's score is not the pair's score.
std::vector<TracedPair> trace_pairs(const Problem& problem, const std::vector<PairScore>& pairs, Backend& backend,
                                    JobContext& context);

}  // namespace alignscope::allvsall
