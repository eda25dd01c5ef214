// Scores of every pair, tile by tile, and the lazy traceback of the pairs
// that pass (see allvsall.hpp).
#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <deque>

namespace alignscope::allvsall {
namespace {

PairJob base_job(const Problem& problem) {
    PairJob job;
    job.queries = problem.rows;
    job.targets = problem.columns;
    job.scheme = problem.scheme;
    job.options = problem.options;
    job.threads = problem.threads;
    job.streams = problem.streams;
    job.kernel = problem.kernel;
    job.gpu_memory_budget = problem.gpu_memory_budget;
    return job;
}

// The CLI's device progress shows whole tiles; a backend's own progress is not passed on.
JobContext quiet(const JobContext& context) {
    JobContext c;
    c.cancel = context.cancel;
    c.timeline = context.timeline;
    return c;
}

std::vector<Alignment> checked_align(Backend& backend, const PairJob& job, JobContext& context) {
    std::vector<Alignment> results = backend.align_pairs(job, context);
    if (results.size() != job.pairs.size())
        throw Error("allvsall: device " + backend.info().id + " returned " + std::to_string(results.size()) +
                    " results for " + std::to_string(job.pairs.size()) + " pairs");
    return results;
}

TracedPair traced_from(const Alignment& a, std::uint32_t index) {
    TracedPair t;
    t.index = index;
    t.query_begin = a.query_begin;
    t.query_end = a.query_end;
    t.target_begin = a.target_begin;
    t.target_end = a.target_end;
    t.stats = a.stats;
    t.cigar = a.cigar.to_string();
    return t;
}

// The largest magnitude a pair's score can reach: no more than min(m, n)
// columns score at most the largest substitution score each, and no optimum
// (local, global or semi-global) is below the alignment of one gap against the
// other, -(gap(m) + gap(n)).
std::int64_t score_bound(const ScoringScheme& scheme, const std::vector<std::size_t>& rows,
                         const std::vector<std::size_t>& columns) {
    const auto longest = [](const std::vector<std::size_t>& lengths) {
        return static_cast<std::int64_t>(lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end()));
    };
    const std::int64_t m = longest(rows), n = longest(columns);
    const std::int64_t best = std::max(0, scheme.matrix.max_score());
    const auto gap = [&](std::int64_t k) { return k > 0 ? scheme.gap_open + (k - 1) * scheme.gap_extend : 0; };
    return std::max(std::min(m, n) * best, gap(m) + gap(n));
}

}  // namespace

double Problem::normalised(std::uint32_t i, std::uint32_t j, std::int64_t score) const {
    const std::int64_t self = std::min(row_self.at(i), column_self.at(j));
    return self > 0 ? static_cast<double>(score) / static_cast<double>(self) : 0.0;
}

Problem make_problem(const std::vector<Sequence>& rows, const std::vector<Sequence>* columns,
                     const ScoringScheme& scheme, const AlignOptions& options, const TraceCriteria& trace,
                     std::uint32_t tile_size) {
    Problem p;
    p.rows = &rows;
    p.columns = columns ? columns : &rows;
    p.scheme = scheme;
    p.options = options;
    p.trace = trace;
    if (rows.empty()) throw Error("allvsall: the set has no sequences");
    if (columns && columns->empty()) throw Error("allvsall: the --against set has no sequences");
    if (!columns && rows.size() < 2) throw Error("allvsall: the set has one sequence; all against all needs two");
    std::vector<std::size_t> row_lengths, column_lengths;
    for (const Sequence& s : rows) row_lengths.push_back(s.residues.size());
    if (columns) {
        for (const Sequence& s : *columns) column_lengths.push_back(s.residues.size());
        p.tiling = Tiling::rectangle(row_lengths, column_lengths, tile_size);
    } else {
        p.tiling = Tiling::triangle(row_lengths, tile_size);
    }
    p.score_bound = score_bound(scheme, row_lengths, columns ? column_lengths : row_lengths);
    return p;
}

void compute_self_scores(Problem& problem, Backend& backend, JobContext& context) {
    auto self_of = [&](const std::vector<Sequence>& set) {
        PairJob job = base_job(problem);
        job.queries = &set;
        job.targets = &set;
        job.options.traceback = false;
        job.options.begins = false;
        for (std::uint32_t k = 0; k < set.size(); ++k) job.pairs.emplace_back(k, k);
        JobContext c = quiet(context);
        std::vector<std::int64_t> scores;
        for (const Alignment& a : checked_align(backend, job, c)) scores.push_back(a.score);
        return scores;
    };
    problem.row_self = self_of(*problem.rows);
    problem.column_self = problem.triangle() ? problem.row_self : self_of(*problem.columns);
}

TileResult finish_tile(const Problem& problem, std::uint64_t tile, const std::vector<std::int64_t>& scores,
                       Backend& backend, JobContext& context) {
    TileResult result;
    result.tile = tile;
    std::vector<PairIndex> pairs;
    problem.tiling.pairs(tile, pairs);
    if (scores.size() != pairs.size())
        throw Error("allvsall: tile " + std::to_string(tile) + " came back with " + std::to_string(scores.size()) +
                    " scores for " + std::to_string(pairs.size()) + " pairs");
    result.scores.reserve(scores.size());
    std::vector<std::uint32_t> passing;
    const TraceCriteria& trace = problem.trace;
    for (std::size_t k = 0; k < scores.size(); ++k) {
        const auto [i, j] = pairs[k];
        result.scores.push_back(PairScore{i, j, scores[k]});
        bool pass = trace.all;
        if (!pass && trace.min_score && problem.scheme.to_user(scores[k]) >= *trace.min_score) pass = true;
        if (!pass && trace.min_normalised && !problem.row_self.empty() &&
            problem.normalised(i, j, scores[k]) >= *trace.min_normalised)
            pass = true;
        if (pass) passing.push_back(static_cast<std::uint32_t>(k));
    }
    if (passing.empty()) return result;
    PairJob traced = base_job(problem);
    for (std::uint32_t k : passing) traced.pairs.push_back(pairs[k]);
    traced.options.traceback = true;
    traced.options.begins = true;
    JobContext c = quiet(context);
    const std::vector<Alignment> alignments = checked_align(backend, traced, c);
    for (std::size_t k = 0; k < passing.size(); ++k) {
        if (alignments[k].score != scores[passing[k]])
            throw Error("allvsall: device " + backend.info().id + " traced pair " +
                        std::to_string(pairs[passing[k]].first + 1) + "," +
                        std::to_string(pairs[passing[k]].second + 1) + " to score " +
                        std::to_string(alignments[k].score) + " but scored it " + std::to_string(scores[passing[k]]) +
                        " (scaled)");
        result.traced.push_back(traced_from(alignments[k], passing[k]));
    }
    return result;
}

TileResult run_tile(const Problem& problem, std::uint64_t tile, Backend& backend, JobContext& context) {
    PairJob job = base_job(problem);
    problem.tiling.pairs(tile, job.pairs);
    std::vector<std::int64_t> scores;
    if (!job.pairs.empty()) {
        job.options.traceback = false;
        job.options.begins = false;
        JobContext c = quiet(context);
        const std::vector<Alignment> aligned = checked_align(backend, job, c);
        scores.reserve(aligned.size());
        for (const Alignment& a : aligned) scores.push_back(a.score);
    }
    return finish_tile(problem, tile, scores, backend, context);
}

void run_tiles(const Problem& problem, Backend& backend, TileSource& source, TileSink& sink, JobContext& context) {
    run_tiles(problem, backend, nullptr, source, sink, context);
}

void run_tiles(const Problem& problem, Backend& backend, TileScorer* scorer, TileSource& source, TileSink& sink,
               JobContext& context) {
    if (!scorer || !problem.scores_fit_32_bits()) {
        while (const std::optional<std::uint64_t> tile = source.next()) {
            context.throw_if_cancelled();
            sink.put(run_tile(problem, *tile, backend, context));
        }
        return;
    }
    // Tiles in flight on the scorer, oldest first. A new tile is asked for
    // with next() only when none is in flight (a source may wait for this
    // worker's own oldest result), else with next_ready().
    std::deque<std::uint64_t> flight;
    bool dealt = false;
    try {
        for (;;) {
            while (!dealt && flight.size() < std::max<std::size_t>(1, scorer->depth())) {
                std::optional<std::uint64_t> tile;
                if (flight.empty()) {
                    tile = source.next();
                    if (!tile) dealt = true;
                } else {
                    bool none_left = false;
                    tile = source.next_ready(none_left);
                    if (!tile) {
                        dealt = none_left;
                        break;
                    }
                }
                if (!tile) break;
                context.throw_if_cancelled();
                scorer->submit(*tile, context);
                flight.push_back(*tile);
            }
            if (flight.empty()) break;
            const std::vector<std::int32_t> narrow = scorer->take(context);
            const std::uint64_t tile = flight.front();
            flight.pop_front();
            sink.put(
                finish_tile(problem, tile, std::vector<std::int64_t>(narrow.begin(), narrow.end()), backend, context));
        }
    } catch (...) {
        scorer->abandon();
        throw;
    }
}

std::vector<TracedPair> trace_pairs(const Problem& problem, const std::vector<PairScore>& pairs, Backend& backend,
                                    JobContext& context) {
    std::vector<TracedPair> out;
    if (pairs.empty()) return out;
    PairJob job = base_job(problem);
    for (const PairScore& p : pairs) job.pairs.emplace_back(p.i, p.j);
    job.options.traceback = true;
    job.options.begins = true;
    JobContext c = quiet(context);
    const std::vector<Alignment> alignments = checked_align(backend, job, c);
    out.reserve(alignments.size());
    for (std::size_t k = 0; k < alignments.size(); ++k) {
        if (alignments[k].score != pairs[k].score)
            throw Error("allvsall: device " + backend.info().id + " traced pair " + std::to_string(pairs[k].i + 1) +
                        "," + std::to_string(pairs[k].j + 1) + " to score " + std::to_string(alignments[k].score) +
                        " but scored it " + std::to_string(pairs[k].score) + " (scaled)");
        out.push_back(traced_from(alignments[k], static_cast<std::uint32_t>(k)));
    }
    return out;
}

}  // namespace alignscope::allvsall
