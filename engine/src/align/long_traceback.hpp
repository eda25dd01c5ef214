// Stage 3's CPU part of the long-pair pipeline (long_pair.cpp): full-matrix
// tracebacks of the small segments, in memory on a pool of threads or
// streamed to a sink in path order a bounded window ahead, and the check
// that a streamed path is the alignment the DP found.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/alignment_sink.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/long_plan.hpp>
#include <alignscope/align/path_scorer.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace alignscope::longpair {

// Full-matrix traceback of a small segment, with its boundary states: a start
// inside a gap continues it (first 'I' costs extend), an end inside a gap must
// arrive by 'I'. Appends the operations in path order; throws an internal
// Error when the segment does not score seg.score.
void traceback_segment(const PathSegment& seg, const std::uint8_t* q, const std::uint8_t* t, const ScoringScheme& s,
                       std::vector<char>& ops);

// The tracebacks of all segments on `workers` threads (the calling thread
// one of them), in path order. Throws the first failure, or Cancelled.
std::vector<std::vector<char>> trace_segments(const std::vector<PathSegment>& segments, const std::uint8_t* q,
                                              const std::uint8_t* t, const ScoringScheme& scheme, unsigned workers,
                                              const JobContext& context);

// The tracebacks on `workers` threads, handed to the sink in path order by
// the calling thread (and pushed to `scorer` and a.cigar); at most `window`
// held at once (running, or done and waiting for their turn).
void stream_tracebacks(const std::vector<PathSegment>& segments, const std::uint8_t* q, const std::uint8_t* t,
                       const ScoringScheme& scheme, unsigned workers, std::size_t window, const JobContext& context,
                       Alignment& a, PathScorer& scorer, AlignmentSink& sink, LongPairStats& stats);

// The end of a streamed path: it must stop at the alignment's end cell and be
// worth the score the DP found; then its statistics are the alignment's.
// `who` names the aligner in the internal error.
void finish_streamed_path(Alignment& a, const PathScorer& scorer, const char* who);

}  // namespace alignscope::longpair
