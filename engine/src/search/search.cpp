// The search job: batches of queries are scanned against the whole database,
// the best K of each query are chosen, aligned in full by the pairwise
// backend, and handed out in query order with their statistics.
#include <alignscope/error.hpp>
#include <alignscope/search/search.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace alignscope {

std::vector<std::size_t> top_positions(std::span<const std::int32_t> scores, const PreparedDatabase& database,
                                       std::size_t k, std::optional<std::int64_t> min_score) {
    if (scores.size() != database.size()) throw Error("top_positions: one score per database sequence expected");
    struct Candidate {
        std::int32_t score;
        std::uint32_t file_index;
        std::uint32_t position;
    };
    auto better = [](const Candidate& a, const Candidate& b) {
        return a.score != b.score ? a.score > b.score : a.file_index < b.file_index;
    };
    std::vector<Candidate> candidates;
    if (k == 0) return {};
    // A running threshold keeps the candidate list short on big databases:
    // once 4k candidates are held, drop those below the k-th best.
    std::int64_t floor = min_score.value_or(INT64_MIN);
    for (std::size_t p = 0; p < scores.size(); ++p) {
        if (scores[p] < floor) continue;
        candidates.push_back({scores[p], database.file_index[p], static_cast<std::uint32_t>(p)});
        if (candidates.size() >= 4 * k + 64) {
            std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k - 1),
                             candidates.end(), better);
            floor = std::max<std::int64_t>(floor, candidates[k - 1].score);
            candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                            [&](const Candidate& c) { return c.score < floor; }),
                             candidates.end());
        }
    }
    const std::size_t keep = std::min(k, candidates.size());
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                      better);
    std::vector<std::size_t> out;
    out.reserve(keep);
    for (std::size_t i = 0; i < keep; ++i) out.push_back(candidates[i].position);
    return out;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::size_t default_query_batch(std::size_t queries, std::size_t database_size) {
    const std::size_t budget = std::size_t(1) << 30;  // bytes of scores held at once
    const std::size_t per_query = std::max<std::size_t>(1, database_size * sizeof(std::int32_t));
    return std::clamp<std::size_t>(budget / per_query, 1, std::max<std::size_t>(1, queries));
}

SearchSummary run_search(const std::vector<Sequence>& queries, const PreparedDatabase& database,
                         const ScoringScheme& scheme, const AlignOptions& options, DatabaseScanner& scanner,
                         Backend* aligner, const SearchOptions& search, const SearchCallbacks& callbacks,
                         JobContext& context, int threads, int streams, std::uint64_t gpu_memory_budget) {
    const auto start = std::chrono::steady_clock::now();
    if (queries.empty()) throw Error("search: no query sequences");
    if (database.empty()) throw Error("search: the database is empty");
    if (search.top == 0) throw Error("--top must be at least 1");
    if (search.traceback && !aligner) throw Error("search: alignments were asked for but no pairwise device was given");
    auto note = [&](const std::string& text) {
        if (callbacks.note) callbacks.note(text);
    };

    SearchSummary summary;
    summary.queries = queries.size();
    summary.database_sequences = database.size();
    summary.database_residues = database.residue_count();
    summary.scan_device = scanner.info().id;
    if (aligner) summary.traceback_device = aligner->info().id;
    std::string why;
    summary.statistics = karlin_altschul_for(scheme, options.mode, &why);
    if (!summary.statistics) summary.statistics_note = why;
    if (search.max_evalue && !summary.statistics) throw Error("--evalue cannot be used here: " + why);
    const std::uint64_t statistics_residues = search.statistics_residues.value_or(database.residue_count());

    std::vector<EncodedSequence> encoded;
    encoded.reserve(queries.size());
    std::uint64_t total_cells = 0;
    for (const Sequence& q : queries) {
        if (q.residues.empty()) throw Error("query '" + q.id + "' is empty");
        encoded.push_back(encode(q.residues, scheme.matrix, "query '" + q.id + "'"));
        total_cells += q.residues.size() * database.residue_count();
    }
    summary.cells = total_cells;

    ScanSetup setup;
    setup.scheme = scheme;
    setup.options = options;
    setup.options.traceback = false;
    setup.threads = threads;
    setup.streams = streams;
    setup.gpu_memory_budget = gpu_memory_budget;
    {
        const auto t = std::chrono::steady_clock::now();
        scanner.load(database, setup, context);
        summary.load_seconds = seconds_since(t);
    }

    std::optional<std::int64_t> min_scaled;
    if (search.min_score) min_scaled = static_cast<std::int64_t>(std::ceil(*search.min_score * scheme.scale - 1e-9));

    const std::size_t batch = search.query_batch ? search.query_batch : default_query_batch(queries.size(), database.size());
    std::vector<std::int32_t> scores;
    std::uint64_t cells_before = 0;
    std::size_t queries_before = 0;
    std::set<std::string> kernels;

    for (std::size_t first = 0; first < queries.size(); first += batch) {
        context.throw_if_cancelled();
        const std::size_t last = std::min(queries.size(), first + batch);
        const std::size_t count = last - first;
        std::vector<const EncodedSequence*> batch_queries;
        std::uint64_t batch_cells = 0;
        for (std::size_t q = first; q < last; ++q) {
            batch_queries.push_back(&encoded[q]);
            batch_cells += encoded[q].size() * database.residue_count();
        }
        scores.assign(count * database.size(), 0);

        // The scanner reports within its call; the job reports the whole search.
        JobContext scan_context;
        scan_context.cancel = context.cancel;
        scan_context.timeline = context.timeline;
        if (context.progress) {
            scan_context.progress = [&](const Progress& p) {
                Progress whole;
                whole.cells_total = total_cells;
                whole.cells_done = cells_before + std::min(p.cells_done, batch_cells);
                whole.items_total = queries.size();
                whole.items_done = queries_before;
                context.progress(whole);
            };
        }
        const auto scan_start = std::chrono::steady_clock::now();
        scanner.scan(batch_queries, scores, scan_context);
        summary.scan_seconds += seconds_since(scan_start);
        const ScanStats stats = scanner.last_stats();
        summary.scan_kernel_seconds += stats.kernel_seconds;
        summary.recomputed += stats.recomputed;
        for (std::size_t a = 0, b; a < stats.kernels.size(); a = b + 1) {
            b = stats.kernels.find(',', a);
            if (b == std::string::npos) b = stats.kernels.size();
            if (b > a) kernels.insert(stats.kernels.substr(a, b - a));
        }
        cells_before += batch_cells;

        // Top K per query.
        const auto select_start = std::chrono::steady_clock::now();
        std::vector<QueryHits> results(count);
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t q = first + k;
            std::optional<std::int64_t> threshold = min_scaled;
            if (search.max_evalue) {
                const std::int64_t s = min_score_for_evalue(*summary.statistics, *search.max_evalue,
                                                            queries[q].residues.size(), statistics_residues);
                threshold = threshold ? std::max(*threshold, s) : s;
            }
            const std::span<const std::int32_t> row(scores.data() + k * database.size(), database.size());
            results[k].query_index = q;
            int rank = 0;
            for (std::size_t position : top_positions(row, database, search.top, threshold)) {
                SearchHit hit;
                hit.position = position;
                hit.file_index = database.file_index[position];
                hit.rank = ++rank;
                hit.score = row[position];
                if (summary.statistics) {
                    hit.bits = bit_score(*summary.statistics, hit.score);
                    hit.evalue = evalue(*summary.statistics, hit.score, queries[q].residues.size(),
                                        statistics_residues);
                }
                results[k].hits.push_back(std::move(hit));
            }
        }
        summary.select_seconds += seconds_since(select_start);

        // Full alignments of the hits, on the pairwise backend.
        if (search.traceback) {
            const auto trace_start = std::chrono::steady_clock::now();
            std::vector<Sequence> job_queries, job_targets;
            std::map<std::size_t, std::uint32_t> target_slot;
            PairJob job;
            job.scheme = scheme;
            job.options = options;
            job.options.traceback = true;
            job.threads = threads;
            job.streams = streams;
            job.gpu_memory_budget = gpu_memory_budget;
            for (std::size_t k = 0; k < count; ++k) {
                job_queries.push_back(queries[first + k]);
                for (const SearchHit& hit : results[k].hits) {
                    auto [it, inserted] = target_slot.emplace(hit.position, static_cast<std::uint32_t>(job_targets.size()));
                    if (inserted) job_targets.push_back(database.sequence(hit.position));
                    job.pairs.emplace_back(static_cast<std::uint32_t>(k), it->second);
                }
            }
            job.queries = &job_queries;
            job.targets = &job_targets;
            if (!job.pairs.empty()) {
                JobContext trace_context;
                trace_context.cancel = context.cancel;
                trace_context.timeline = context.timeline;
                std::vector<Alignment> aligned = aligner->align_pairs(job, trace_context);
                if (aligned.size() != job.pairs.size())
                    throw Error("search: the pairwise device returned " + std::to_string(aligned.size()) +
                                " alignments for " + std::to_string(job.pairs.size()) + " hits");
                std::size_t next = 0;
                for (std::size_t k = 0; k < count; ++k) {
                    for (SearchHit& hit : results[k].hits) {
                        Alignment& a = aligned[next++];
                        if (a.score != hit.score)
                            throw Error("search: " + aligner->info().id + " aligned query '" + queries[first + k].id +
                                        "' with '" + database.ids[hit.position] + "' at score " +
                                        std::to_string(scheme.to_user(a.score)) + " but " + summary.scan_device +
                                        " scanned it at " + std::to_string(scheme.to_user(hit.score)) +
                                        " (a device fault; `search --verify` checks this)");
                        hit.alignment = std::move(a);
                    }
                }
            }
            summary.traceback_seconds += seconds_since(trace_start);
        }
        for (QueryHits& r : results) {
            for (SearchHit& hit : r.hits) {
                Alignment& a = hit.alignment;
                a.query_id = queries[r.query_index].id;
                a.target_id = database.ids[hit.position];
                if (!search.traceback) {
                    a.mode = options.mode;
                    a.score = hit.score;
                    a.query_length = static_cast<std::int64_t>(queries[r.query_index].residues.size());
                    a.target_length = database.length(hit.position);
                    a.device = summary.scan_device;
                    a.kernel = stats.kernels;
                }
            }
            summary.hits += r.hits.size();
            if (callbacks.query_done) callbacks.query_done(r);
        }
        queries_before = last;
        if (context.progress) {
            Progress whole;
            whole.cells_total = total_cells;
            whole.cells_done = cells_before;
            whole.items_total = queries.size();
            whole.items_done = queries_before;
            context.progress(whole);
        }
        if (last < queries.size())
            note("search: " + std::to_string(last) + " of " + std::to_string(queries.size()) + " queries done");
    }
    for (const std::string& k : kernels) summary.scan_kernels += (summary.scan_kernels.empty() ? "" : ",") + k;
    summary.total_seconds = seconds_since(start);
    return summary;
}

}  // namespace alignscope
