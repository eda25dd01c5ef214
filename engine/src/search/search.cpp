// The search job: batches of queries are scanned against the whole database,
// the best K of each query are chosen, aligned in full by the pairwise
// backend, and handed out in query order with their statistics.
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/search.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>

namespace alignscope {

std::vector<std::size_t> top_positions(std::span<const std::int64_t> scores, const PreparedDatabase& database,
                                       std::size_t k, std::optional<std::int64_t> min_score) {
    if (scores.size() != database.size()) throw Error("top_positions: one score per database sequence expected");
    struct Candidate {
        std::int64_t score;
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

// A stage of the search's own host work on the job's timeline (device
// "search host"), beside the devices' kernels and copies.
class SearchSpan : public ScopedHostSpan {
public:
    SearchSpan(TimelineSink* sink, const char* name, std::uint64_t items = 0)
        : ScopedHostSpan(sink, "search", name, items) {}
};

}  // namespace

std::size_t default_query_batch(std::size_t queries, std::size_t database_size) {
    const std::size_t budget = std::size_t(1) << 30;  // bytes of scores held at once
    const std::size_t per_query = std::max<std::size_t>(1, database_size * sizeof(std::int64_t));
    return std::clamp<std::size_t>(budget / per_query, 1, std::max<std::size_t>(1, queries));
}

namespace {

// A batch's scores (up to a GiB) go back to the system on a thread of their
// own: unmapping them takes tens of milliseconds that the caller, writing
// its outputs, need not wait for. A small buffer is freed here.
void free_in_background(std::unique_ptr<std::int64_t[]> scores, std::size_t size) {
    if (!scores || size * sizeof(std::int64_t) < (std::size_t{64} << 20)) return;
    try {
        std::thread([freed = std::move(scores)]() mutable { freed.reset(); }).detach();
    } catch (const std::system_error&) {
        // No thread to spare: the scores were freed with the thread's arguments.
    }
}

// One search from start to end: the fixed inputs, the running totals, and one
// stage per step of a batch of queries (scan, select, align, hand out).
class SearchRun {
public:
    SearchRun(const std::vector<Sequence>& queries, const PreparedDatabase& database, const ScoringScheme& scheme,
              const AlignOptions& options, DatabaseScanner& scanner, Backend* aligner, const SearchOptions& search,
              const SearchCallbacks& callbacks, JobContext& context, int threads, int streams,
              std::uint64_t gpu_memory_budget)
        : queries_(queries),
          database_(database),
          scheme_(scheme),
          options_(options),
          scanner_(scanner),
          aligner_(aligner),
          search_(search),
          callbacks_(callbacks),
          context_(context),
          threads_(threads),
          streams_(streams),
          gpu_memory_budget_(gpu_memory_budget) {}

    ~SearchRun() { free_in_background(std::move(scores_), scores_size_); }
    SearchRun(const SearchRun&) = delete;
    SearchRun& operator=(const SearchRun&) = delete;

    SearchSummary run();

private:
    void check_inputs() const;
    void start_summary();
    void encode_queries();
    void load_database();
    void run_batch(std::size_t first, std::size_t last);
    ScanStats scan_batch(std::size_t first, std::size_t last);
    std::vector<QueryHits> select_hits(std::size_t first, std::size_t count);
    QueryHits hits_of(std::size_t query, std::span<const std::int64_t> row) const;
    std::optional<std::int64_t> threshold_for(std::size_t query) const;
    void align_hits(std::size_t first, std::vector<QueryHits>& results);
    void hand_out(std::vector<QueryHits>& results, const ScanStats& stats);
    void report_progress() const;
    void note(const std::string& text) const {
        if (callbacks_.note) callbacks_.note(text);
    }

    const std::vector<Sequence>& queries_;
    const PreparedDatabase& database_;
    const ScoringScheme& scheme_;
    const AlignOptions& options_;
    DatabaseScanner& scanner_;
    Backend* aligner_;
    const SearchOptions& search_;
    const SearchCallbacks& callbacks_;
    JobContext& context_;
    const int threads_, streams_;
    const std::uint64_t gpu_memory_budget_;

    SearchSummary summary_;
    std::uint64_t statistics_residues_ = 0;
    std::optional<std::int64_t> min_scaled_;
    std::vector<EncodedSequence> encoded_;
    std::uint64_t cells_before_ = 0;
    std::size_t queries_before_ = 0;
    std::set<std::string> kernels_;
    // The batch's scores, a row per query in the order the scanner was given
    // them (by length: a GPU pairs queries of like length, and a split
    // scanner deals out runs of them); row_of_ maps a batch query to its row.
    // Kept from batch to batch and never cleared: the scanner writes every
    // score of a batch.
    std::unique_ptr<std::int64_t[]> scores_;
    std::size_t scores_size_ = 0;
    std::vector<std::size_t> row_of_;
};

SearchSummary SearchRun::run() {
    const auto start = std::chrono::steady_clock::now();
    check_inputs();
    start_summary();
    const std::size_t batch =
        search_.query_batch ? search_.query_batch : default_query_batch(queries_.size(), database_.size());
    encode_queries();
    load_database();
    if (search_.min_score)
        min_scaled_ = static_cast<std::int64_t>(std::ceil(*search_.min_score * scheme_.scale - 1e-9));

    for (std::size_t first = 0; first < queries_.size(); first += batch) {
        context_.throw_if_cancelled();
        const std::size_t last = std::min(queries_.size(), first + batch);
        run_batch(first, last);
        if (last < queries_.size())
            note("search: " + std::to_string(last) + " of " + std::to_string(queries_.size()) + " queries done");
    }
    for (const std::string& k : kernels_) summary_.scan_kernels += (summary_.scan_kernels.empty() ? "" : ",") + k;
    summary_.setup_stats = scanner_.setup_stats();
    summary_.total_seconds = seconds_since(start);
    return summary_;
}

void SearchRun::check_inputs() const {
    if (queries_.empty()) throw Error("search: no query sequences");
    if (database_.empty()) throw Error("search: the database is empty");
    if (search_.top == 0) throw Error("--top must be at least 1");
    if (search_.traceback && !aligner_)
        throw Error("search: alignments were asked for but no pairwise device was given");
}

void SearchRun::start_summary() {
    summary_.queries = queries_.size();
    summary_.database_sequences = database_.size();
    summary_.database_residues = database_.residue_count();
    summary_.scan_device = scanner_.info().id;
    if (aligner_) summary_.traceback_device = aligner_->info().id;
    std::string why;
    summary_.statistics = karlin_altschul_for(scheme_, options_.mode, &why);
    if (!summary_.statistics) summary_.statistics_note = why;
    if (search_.max_evalue && !summary_.statistics) throw Error("--evalue cannot be used here: " + why);
    statistics_residues_ = search_.statistics_residues.value_or(database_.residue_count());
}

void SearchRun::encode_queries() {
    encoded_.reserve(queries_.size());
    std::uint64_t total_cells = 0;
    for (const Sequence& q : queries_) {
        if (q.residues.empty()) throw Error("query '" + q.id + "' is empty");
        encoded_.push_back(encode(q.residues, scheme_.matrix, "query '" + q.id + "'"));
        total_cells += q.residues.size() * database_.residue_count();
    }
    summary_.cells = total_cells;
}

void SearchRun::load_database() {
    ScanSetup setup;
    setup.scheme = scheme_;
    setup.options = options_;
    setup.options.traceback = false;
    setup.threads = threads_;
    setup.streams = streams_;
    setup.gpu_memory_budget = gpu_memory_budget_;
    const auto t = std::chrono::steady_clock::now();
    SearchSpan span(context_.timeline, "load database", database_.size());
    scanner_.load(database_, setup, context_);
    summary_.load_seconds = seconds_since(t);
}

void SearchRun::run_batch(std::size_t first, std::size_t last) {
    const ScanStats stats = scan_batch(first, last);

    const auto select_start = std::chrono::steady_clock::now();
    std::optional<SearchSpan> span(std::in_place, context_.timeline, "select hits", last - first);
    std::vector<QueryHits> results = select_hits(first, last - first);
    summary_.select_seconds += seconds_since(select_start);

    if (search_.traceback) {
        span.emplace(context_.timeline, "traceback", last - first);
        const auto trace_start = std::chrono::steady_clock::now();
        align_hits(first, results);
        summary_.traceback_seconds += seconds_since(trace_start);
    }
    span.emplace(context_.timeline, "hand out", last - first);
    hand_out(results, stats);
    queries_before_ = last;
    report_progress();
}

// Scores of queries [first, last) against the whole database, one row per
// query (row_of_), the queries handed to the scanner shortest first.
ScanStats SearchRun::scan_batch(std::size_t first, std::size_t last) {
    std::vector<std::size_t> order(last - first);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return encoded_[first + a].size() < encoded_[first + b].size();
    });
    std::vector<const EncodedSequence*> batch_queries;
    row_of_.assign(order.size(), 0);
    std::uint64_t batch_cells = 0;
    for (std::size_t row = 0; row < order.size(); ++row) {
        batch_queries.push_back(&encoded_[first + order[row]]);
        row_of_[order[row]] = row;
        batch_cells += encoded_[first + order[row]].size() * database_.residue_count();
    }
    const std::size_t size = (last - first) * database_.size();
    if (size > scores_size_) {
        scores_.reset();
        scores_ = std::make_unique_for_overwrite<std::int64_t[]>(size);
        scores_size_ = size;
    }
    const std::span<std::int64_t> scores(scores_.get(), size);

    // The scanner reports within its call; the job reports the whole search.
    JobContext scan_context;
    scan_context.cancel = context_.cancel;
    scan_context.timeline = context_.timeline;
    if (context_.progress) {
        scan_context.progress = [&](const Progress& p) {
            Progress whole;
            whole.cells_total = summary_.cells;
            whole.cells_done = cells_before_ + std::min(p.cells_done, batch_cells);
            whole.items_total = queries_.size();
            whole.items_done = queries_before_;
            context_.progress(whole);
        };
    }
    const auto scan_start = std::chrono::steady_clock::now();
    std::optional<SearchSpan> span(std::in_place, context_.timeline, "scan", batch_queries.size());
    scanner_.scan(batch_queries, scores, scan_context);
    span.reset();
    summary_.scan_seconds += seconds_since(scan_start);
    ScanStats stats = scanner_.last_stats();
    summary_.scan_kernel_seconds += stats.kernel_seconds;
    summary_.recomputed += stats.recomputed;
    for (std::size_t a = 0, b; a < stats.kernels.size(); a = b + 1) {
        b = stats.kernels.find(',', a);
        if (b == std::string::npos) b = stats.kernels.size();
        if (b > a) kernels_.insert(stats.kernels.substr(a, b - a));
    }
    cells_before_ += batch_cells;
    return stats;
}

// The lowest scaled score a hit of this query may have: --min-score and the
// score --evalue asks for at this query's length, whichever is higher.
std::optional<std::int64_t> SearchRun::threshold_for(std::size_t query) const {
    std::optional<std::int64_t> threshold = min_scaled_;
    if (search_.max_evalue) {
        const std::int64_t s = min_score_for_evalue(*summary_.statistics, *search_.max_evalue,
                                                    queries_[query].residues.size(), statistics_residues_);
        threshold = threshold ? std::max(*threshold, s) : s;
    }
    return threshold;
}

// The top K hits of each query of the batch, with their statistics: the
// queries' rows are read on several threads (a row is a whole database).
std::vector<QueryHits> SearchRun::select_hits(std::size_t first, std::size_t count) {
    std::vector<QueryHits> results(count);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t workers = std::min<std::size_t>(threads_ > 0 ? static_cast<std::size_t>(threads_) : cores,
                                                      std::max<std::size_t>(1, count / 4));
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto work = [&] {
        try {
            for (std::size_t k = next.fetch_add(1); k < count; k = next.fetch_add(1)) {
                const std::span<const std::int64_t> row(scores_.get() + row_of_[k] * database_.size(),
                                                        database_.size());
                results[k] = hits_of(first + k, row);
            }
        } catch (...) {
            std::lock_guard lock(failure_mutex);
            if (!failure) failure = std::current_exception();
            next.store(count);
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
    return results;
}

// One query's top K hits from its row of scores.
QueryHits SearchRun::hits_of(std::size_t q, std::span<const std::int64_t> row) const {
    QueryHits result;
    result.query_index = q;
    int rank = 0;
    for (std::size_t position : top_positions(row, database_, search_.top, threshold_for(q))) {
        SearchHit hit;
        hit.position = position;
        hit.file_index = database_.file_index[position];
        hit.rank = ++rank;
        hit.score = row[position];
        if (summary_.statistics) {
            hit.bits = bit_score(*summary_.statistics, hit.score);
            hit.evalue = evalue(*summary_.statistics, hit.score, queries_[q].residues.size(), statistics_residues_);
        }
        result.hits.push_back(std::move(hit));
    }
    return result;
}

// Full alignments of the batch's hits on the pairwise backend; each must
// score what the scan scored.
void SearchRun::align_hits(std::size_t first, std::vector<QueryHits>& results) {
    const std::size_t count = results.size();
    std::vector<Sequence> job_queries, job_targets;
    std::map<std::size_t, std::uint32_t> target_slot;
    PairJob job;
    job.scheme = scheme_;
    job.options = options_;
    job.options.traceback = true;
    job.threads = threads_;
    job.streams = streams_;
    job.gpu_memory_budget = gpu_memory_budget_;
    for (std::size_t k = 0; k < count; ++k) {
        job_queries.push_back(queries_[first + k]);
        for (const SearchHit& hit : results[k].hits) {
            auto [it, inserted] = target_slot.emplace(hit.position, static_cast<std::uint32_t>(job_targets.size()));
            if (inserted) job_targets.push_back(database_.sequence(hit.position));
            job.pairs.emplace_back(static_cast<std::uint32_t>(k), it->second);
        }
    }
    job.queries = &job_queries;
    job.targets = &job_targets;
    if (job.pairs.empty()) return;
    JobContext trace_context;
    trace_context.cancel = context_.cancel;
    trace_context.timeline = context_.timeline;
    std::vector<Alignment> aligned = aligner_->align_pairs(job, trace_context);
    if (aligned.size() != job.pairs.size())
        throw Error("search: the pairwise device returned " + std::to_string(aligned.size()) + " alignments for " +
                    std::to_string(job.pairs.size()) + " hits");
    std::size_t next = 0;
    for (std::size_t k = 0; k < count; ++k) {
        for (SearchHit& hit : results[k].hits) {
            Alignment& a = aligned[next++];
            if (a.score != hit.score)
                throw Error("search: " + aligner_->info().id + " aligned query '" + queries_[first + k].id +
                            "' with '" + database_.ids[hit.position] + "' at score " +
                            std::to_string(scheme_.to_user(a.score)) + " but " + summary_.scan_device +
                            " scanned it at " + std::to_string(scheme_.to_user(hit.score)) +
                            " (a device fault; `search --verify` checks this)");
            hit.alignment = std::move(a);
        }
    }
}

// Names every hit's alignment (and fills score-only ones from the scan),
// then hands each query's hits to the caller in query order.
void SearchRun::hand_out(std::vector<QueryHits>& results, const ScanStats& stats) {
    for (QueryHits& r : results) {
        for (SearchHit& hit : r.hits) {
            Alignment& a = hit.alignment;
            a.query_id = queries_[r.query_index].id;
            a.target_id = database_.ids[hit.position];
            if (!search_.traceback) {
                a.mode = options_.mode;
                a.score = hit.score;
                a.query_length = static_cast<std::int64_t>(queries_[r.query_index].residues.size());
                a.target_length = database_.length(hit.position);
                a.device = summary_.scan_device;
                a.kernel = stats.kernels;
            }
        }
        summary_.hits += r.hits.size();
        if (callbacks_.query_done) callbacks_.query_done(r);
    }
}

void SearchRun::report_progress() const {
    if (!context_.progress) return;
    Progress whole;
    whole.cells_total = summary_.cells;
    whole.cells_done = cells_before_;
    whole.items_total = queries_.size();
    whole.items_done = queries_before_;
    context_.progress(whole);
}

}  // namespace

SearchSummary run_search(const std::vector<Sequence>& queries, const PreparedDatabase& database,
                         const ScoringScheme& scheme, const AlignOptions& options, DatabaseScanner& scanner,
                         Backend* aligner, const SearchOptions& search, const SearchCallbacks& callbacks,
                         JobContext& context, int threads, int streams, std::uint64_t gpu_memory_budget) {
    return SearchRun(queries, database, scheme, options, scanner, aligner, search, callbacks, context, threads, streams,
                     gpu_memory_budget)
        .run();
}

}  // namespace alignscope
