// JobQueue: the recording thread writes each job into the project as it is
// queued, the worker runs PairJobs through the registry, and the GUI side only
// ever receives queued calls.
#include "jobs/job_queue.hpp"

#include <alignscope/align/long_pair.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/search/search_settings.hpp>

#include <QCoreApplication>
#include <QMetaObject>

#include <chrono>
#include <future>
#include <new>
#include <thread>

namespace alignscope::ui {

QString display_name(JobState state) {
    switch (state) {
        case JobState::Queued: return QCoreApplication::translate("JobState", "queued");
        case JobState::Running: return QCoreApplication::translate("JobState", "running");
        case JobState::Done: return QCoreApplication::translate("JobState", "done");
        case JobState::Failed: return QCoreApplication::translate("JobState", "failed");
        case JobState::Cancelled: return QCoreApplication::translate("JobState", "cancelled");
        case JobState::Interrupted: return QCoreApplication::translate("JobState", "interrupted");
    }
    return {};
}

QString display_name(JobPhase phase) {
    auto tr = [](const char* text) { return QCoreApplication::translate("JobPhase", text); };
    switch (phase) {
        case JobPhase::Waiting: return tr("waiting in the queue");
        case JobPhase::Preparing: return tr("preparing");
        case JobPhase::Aligning: return tr("aligning the pairs");
        case JobPhase::Scanning: return tr("scanning the database and aligning the hits");
        case JobPhase::LongFirstPass: return tr("first pass over the whole matrix (Myers-Miller)");
        case JobPhase::LongRefining: return tr("divide and conquer on the halves (Myers-Miller)");
        case JobPhase::LongStage1: return tr("stage 1 of 3: forward pass over the whole matrix");
        case JobPhase::LongStages23: return tr("stages 2 and 3 of 3: the path's start, then the traceback");
        case JobPhase::Saving: return tr("saving the results into the project");
    }
    return {};
}

double JobProgress::eta_seconds() const {
    const double rate = cells_per_second();
    if (!predicts_end || !counted || rate <= 0 || cells_total < cells_done) return -1;
    return double(cells_total - cells_done) / rate;
}

int JobProgress::percent() const {
    if (!counted) return -1;
    if (cells_total == 0) return pairs_total ? int(100 * pairs_done / pairs_total) : -1;
    return int(100.0 * double(cells_done) / double(cells_total));
}

QString JobProgress::text() const {
    QString text = display_name(phase);
    if (phase == JobPhase::Scanning && pairs_total)
        text += QCoreApplication::translate("JobPhase", ", query %1 of %2")
                    .arg(std::min(pairs_done + 1, pairs_total))
                    .arg(pairs_total);
    if (const int p = percent();
        p >= 0 && phase != JobPhase::Waiting && phase != JobPhase::Saving && phase != JobPhase::Preparing)
        text += QStringLiteral(" (%1 %)").arg(p);
    return text;
}

struct JobQueue::Entry {
    quint64 ticket = 0;
    JobRequest request;
    CancellationToken token;
    // Made on the recording thread; the worker waits for it before it starts.
    std::promise<std::unique_ptr<JobRecorder>> recorder_promise;
    std::future<std::unique_ptr<JobRecorder>> recorder;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::mutex progress_mutex;
    Progress latest;  // under progress_mutex
    std::atomic<bool> post_pending{false};
    std::atomic<std::int64_t> last_post_ns{0};
    std::atomic<JobPhase> phase{JobPhase::Waiting};
    // A long pair: the cells of its whole matrix (the first pass), on which
    // kind of device, and whether a path follows the first pass.
    std::uint64_t long_matrix = 0;
    bool long_gpu = false;
    bool long_path = false;
};

namespace {

// Often enough for a smooth progress bar, rarely enough to cost the GUI nothing.
constexpr std::int64_t progress_interval_ns = 40'000'000;

std::int64_t since_ns(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

JobQueue::JobQueue(DeviceRegistry& registry, const ScannerRegistry* scanners, QObject* parent)
    : QObject(parent),
      registry_(registry),
      scanners_(scanners),
      devices_(registry.devices()),
      recording_thread_(std::make_unique<TaskThread>()),
      worker_(std::make_unique<TaskThread>()) {
    qRegisterMetaType<JobProgress>();
    qRegisterMetaType<JobOutcome>();
}

JobQueue::~JobQueue() {
    interruptAll();
    worker_.reset();
    recording_thread_.reset();
}

std::optional<DeviceInfo> JobQueue::device(const std::string& spec) const {
    for (const auto& d : devices_)
        if (d.id == spec) return d;
    if (spec != "gpu") return std::nullopt;
    DeviceInfo group;
    int count = 0;
    for (const auto& d : devices_) {
        if (d.kind != "gpu" || !d.available) continue;
        if (count++ == 0) group = d;
    }
    if (count == 0) return std::nullopt;
    group.id = "gpu";
    group.name = "all GPUs (" + std::to_string(count) + ")";
    return group;
}

void JobQueue::setRecorderFactory(RecorderFactory factory) {
    std::lock_guard lock(mutex_);
    recorder_factory_ = std::move(factory);
}

quint64 JobQueue::enqueue(JobRequest request) {
    auto entry = std::make_shared<Entry>();
    entry->recorder = entry->recorder_promise.get_future();
    RecorderFactory factory;
    {
        std::lock_guard lock(mutex_);
        entry->ticket = next_ticket_++;
        active_.emplace(entry->ticket, entry);
        factory = recorder_factory_;
    }
    entry->request = std::move(request);
    interrupting_ = false;
    emit jobQueued(entry->ticket, QString::fromStdString(entry->request.summary()));
    recording_thread_->post([this, entry, factory] { record(entry, factory); });
    worker_->post([this, entry] { run(entry); });
    return entry->ticket;
}

void JobQueue::cancel(quint64 ticket) {
    std::lock_guard lock(mutex_);
    if (auto it = active_.find(ticket); it != active_.end()) it->second->token.cancel();
}

void JobQueue::cancelAll() {
    std::lock_guard lock(mutex_);
    for (auto& [ticket, entry] : active_) entry->token.cancel();
}

void JobQueue::interruptAll() {
    interrupting_ = true;
    cancelAll();
    while ((worker_ && worker_->busy()) || (recording_thread_ && recording_thread_->busy()))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

bool JobQueue::busy() const { return worker_->busy(); }

QList<quint64> JobQueue::activeTickets() const {
    std::lock_guard lock(mutex_);
    QList<quint64> tickets;
    for (const auto& [ticket, entry] : active_) tickets.append(ticket);
    return tickets;
}

void JobQueue::record(const std::shared_ptr<Entry>& entry, const RecorderFactory& factory) {
    if (!factory) {
        entry->recorder_promise.set_value(nullptr);
        return;
    }
    try {
        const auto info = device(entry->request.device);
        if (!info) throw Error("there is no device '" + entry->request.device + "'");
        auto recorder = factory(entry->request, *info);
        const std::int64_t id = recorder ? recorder->job_id() : 0;
        entry->recorder_promise.set_value(std::move(recorder));
        if (id)
            QMetaObject::invokeMethod(
                this, [this, ticket = entry->ticket, id] { emit jobRecorded(ticket, id); }, Qt::QueuedConnection);
    } catch (...) {
        entry->recorder_promise.set_exception(std::current_exception());
    }
}

void JobQueue::run(const std::shared_ptr<Entry>& entry) {
    JobOutcome outcome;
    std::unique_ptr<JobRecorder> recorder;
    const JobRequest& request = entry->request;
    // Every way out records the job's end exactly once. A recorder that fails
    // must not hide the job's own error, so its failure only adds to the message.
    auto record_end = [&](auto&& call) {
        if (!recorder) return;
        try {
            call(*recorder);
        } catch (const std::exception& e) {
            if (outcome.state == JobState::Done) outcome.state = JobState::Failed;
            outcome.message += (outcome.message.empty() ? "" : "; ") +
                               std::string("the project could not record the outcome: ") + e.what();
        }
    };
    auto end_state = [&] { return interrupting_ ? JobState::Interrupted : JobState::Cancelled; };

    try {
        recorder = entry->recorder.get();
    } catch (const std::exception& e) {
        outcome.state = JobState::Failed;
        outcome.message = std::string("the project could not record the job: ") + e.what();
        finish(entry, std::move(outcome));
        return;
    }
    outcome.project_job_id = recorder ? recorder->job_id() : 0;
    if (entry->token.cancelled()) {
        outcome.state = end_state();
        record_end([&](JobRecorder& r) {
            if (outcome.state == JobState::Interrupted) r.interrupted();
            else
                r.cancelled();
        });
        recorder.reset();
        finish(entry, std::move(outcome));
        return;
    }

    entry->start = std::chrono::steady_clock::now();
    setPhase(entry, JobPhase::Preparing);
    TimelineRecorder timeline;
    try {
        if (request.is_search()) runSearch(entry, recorder.get(), outcome, timeline);
        else if (request.is_long_pair())
            runLongPair(entry, recorder.get(), outcome, timeline);
        else
            runPairs(entry, recorder.get(), outcome, timeline);
        outcome.state = JobState::Done;
        setPhase(entry, JobPhase::Saving);
        record_end([&](JobRecorder& r) {
            r.done(outcome.alignments ? *outcome.alignments : std::vector<Alignment>{}, timeline.events(),
                   timeline.clock_source());
        });
    } catch (const Cancelled&) {
        outcome.state = end_state();
        record_end([&](JobRecorder& r) {
            if (outcome.state == JobState::Interrupted) r.interrupted();
            else
                r.cancelled();
        });
    } catch (const std::bad_alloc&) {
        outcome.state = JobState::Failed;
        outcome.message = "out of memory";
        record_end([&](JobRecorder& r) { r.failed(outcome.message); });
    } catch (const std::exception& e) {
        outcome.state = JobState::Failed;
        outcome.message = e.what();
        record_end([&](JobRecorder& r) { r.failed(outcome.message); });
    }
    if (outcome.seconds == 0)
        outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - entry->start).count();
    recorder.reset();
    finish(entry, std::move(outcome));
}

void JobQueue::runPairs(const std::shared_ptr<Entry>& entry, JobRecorder* recorder, JobOutcome& outcome,
                        TimelineRecorder& timeline) {
    const JobRequest& request = entry->request;
    Backend& backend = registry_.select(request.device);
    outcome.device = backend.info().id;
    if (recorder) recorder->started();
    QMetaObject::invokeMethod(
        this, [this, ticket = entry->ticket] { emit jobStarted(ticket); }, Qt::QueuedConnection);

    PairJob job = make_pair_job(request);
    outcome.cells = job.total_cells();
    {
        std::lock_guard lock(entry->progress_mutex);
        entry->latest.cells_total = outcome.cells;
        entry->latest.items_total = job.pairs.size();
    }
    setPhase(entry, JobPhase::Aligning);
    JobContext context;
    context.cancel = &entry->token;
    context.timeline = &timeline;
    context.progress = [this, entry, recorder](const Progress& p) {
        report(entry, p);
        if (recorder) recorder->progress(p);
    };
    const auto started = std::chrono::steady_clock::now();
    std::vector<Alignment> results = backend.align_pairs(job, context);
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (results.size() != job.pairs.size())
        throw Error(outcome.device + " returned " + std::to_string(results.size()) + " results for " +
                    std::to_string(job.pairs.size()) + " pairs");
    for (std::size_t k = 0; k < results.size(); ++k) {
        results[k].query_id = (*job.queries)[job.pairs[k].first].id;
        results[k].target_id = (*job.targets)[job.pairs[k].second].id;
    }
    Progress last;
    last.cells_done = last.cells_total = outcome.cells;
    last.items_done = last.items_total = job.pairs.size();
    report(entry, last);
    // The project keeps the finished job's full count even when the backend was
    // too quick to report any progress (its speed feeds the time estimates).
    if (recorder) recorder->progress(last);
    outcome.alignments = std::make_shared<const std::vector<Alignment>>(std::move(results));
}

void JobQueue::runSearch(const std::shared_ptr<Entry>& entry, JobRecorder* recorder, JobOutcome& outcome,
                         TimelineRecorder& timeline) {
    // The engine calls `alignscope-cli search` makes: the scanner the device
    // names (or the CPU when "auto" finds a GPU that cannot scan this), the
    // pairwise backend of the same device for the traceback, run_search.
    const JobRequest& request = entry->request;
    if (!scanners_) throw Error("database search is not available: no scanners were registered");
    outcome.search = true;
    const ScanSetup setup = scan_setup(request);
    const std::string spec = choose_scan_device(*scanners_, request.device, setup, nullptr, "device");
    std::unique_ptr<DatabaseScanner> scanner = scanners_->create(spec);
    Backend* aligner = request.traceback ? &registry_.select(spec) : nullptr;
    outcome.device = scanner->info().id;
    if (recorder) recorder->started();
    QMetaObject::invokeMethod(
        this, [this, ticket = entry->ticket] { emit jobStarted(ticket); }, Qt::QueuedConnection);

    // The loaded set is already normalised (read_sequences), as
    // prepare_database would have it: packed the same way, it gives the
    // CLI's order, ties and hits.
    const PreparedDatabase database =
        pack_database(*request.targets.records, request.targets.alphabet, request.targets.label);
    const std::vector<Sequence>& queries = *request.queries.records;
    std::uint64_t query_residues = 0;
    for (const Sequence& q : queries) query_residues += q.residues.size();
    outcome.cells = query_residues * database.residue_count();
    outcome.queries = queries.size();
    {
        std::lock_guard lock(entry->progress_mutex);
        entry->latest.cells_total = outcome.cells;
        entry->latest.items_total = queries.size();
    }
    setPhase(entry, JobPhase::Scanning);

    SearchOptions search;
    search.top = request.top;
    search.traceback = request.traceback;
    // Hits reach the project in batches as queries finish, so a long search
    // shows its first hits early and a cancelled one keeps what it found.
    std::vector<store::Hit> hits;
    std::vector<Alignment> alignments;
    auto last_flush = std::chrono::steady_clock::now();
    auto flush = [&] {
        if (recorder && !hits.empty()) recorder->hits(hits, alignments);
        hits.clear();
        alignments.clear();
        last_flush = std::chrono::steady_clock::now();
    };
    SearchCallbacks callbacks;
    callbacks.query_done = [&](const QueryHits& result) {
        for (const SearchHit& hit : result.hits) {
            hits.push_back(to_store_hit(hit));
            if (hit.alignment.has_traceback()) alignments.push_back(hit.alignment);
            ++outcome.hits;
        }
        if (hits.size() >= 5000 || std::chrono::steady_clock::now() - last_flush > std::chrono::seconds(1)) flush();
    };
    JobContext context;
    context.cancel = &entry->token;
    context.timeline = &timeline;
    context.progress = [this, entry, recorder](const Progress& p) {
        report(entry, p);
        if (recorder) recorder->progress(p);
    };
    try {
        const SearchSummary summary = run_search(queries, database, setup.scheme, setup.options, *scanner, aligner,
                                                 search, callbacks, context, request.threads, request.streams);
        outcome.seconds = summary.total_seconds;
    } catch (...) {
        try {
            flush();  // what was found before the end stays in the project
        } catch (...) {
        }
        throw;
    }
    flush();
    Progress last;
    last.cells_done = last.cells_total = outcome.cells;
    last.items_done = last.items_total = queries.size();
    report(entry, last);
    if (recorder) recorder->progress(last);
}

void JobQueue::runLongPair(const std::shared_ptr<Entry>& entry, JobRecorder* recorder, JobOutcome& outcome,
                           TimelineRecorder& timeline) {
    // What `alignscope-cli align --long` runs: the first query with the first
    // target through align_long_on on the chosen device (its pass runner on
    // GPUs, which also leaves the stage-1 overview for the heatmap;
    // Myers-Miller in linear space on CPU backends).
    const JobRequest& request = entry->request;
    if (request.queries.size() == 0 || request.targets.size() == 0)
        throw Error("a long pair needs a query and a target");
    Backend& backend = registry_.select(request.device);
    const DeviceInfo info = backend.info();
    outcome.device = info.id;
    if (recorder) recorder->started();
    QMetaObject::invokeMethod(
        this, [this, ticket = entry->ticket] { emit jobStarted(ticket); }, Qt::QueuedConnection);

    const Sequence& q = request.queries.records->front();
    const Sequence& t = request.targets.records->front();
    const ScoringScheme scheme = request.scoring.scheme();
    longpair::LongPairOptions options;
    options.align = request.align_options();
    options.threads = request.threads;
    options.overview_size = long_overview_size;
    const LongRunnerSettings settings = long_runner_settings(request);
    outcome.cells = std::uint64_t(q.residues.size()) * t.residues.size();
    {
        std::lock_guard lock(entry->progress_mutex);
        entry->latest.cells_total = outcome.cells;
        entry->latest.items_total = 1;
    }
    // GPUs (pass runners) run the three-stage pipeline; CPU backends align by
    // Myers-Miller, whose counter covers only its first pass.
    entry->long_matrix = outcome.cells;
    entry->long_gpu = info.kind == "gpu";
    entry->long_path = request.traceback;
    setPhase(entry, entry->long_gpu ? JobPhase::LongStage1 : JobPhase::LongFirstPass);
    JobContext context;
    context.cancel = &entry->token;
    context.timeline = &timeline;
    context.progress = [this, entry, recorder](const Progress& p) {
        report(entry, p);
        if (recorder) recorder->progress(p);
    };
    longpair::LongPairStats stats;
    const auto started = std::chrono::steady_clock::now();
    Alignment a = longpair::align_long_on(backend, q.residues, t.residues, scheme, options, settings, context, &stats);
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    a.query_id = q.id;
    a.target_id = t.id;

    auto record = std::make_shared<store::LongPairStats>(store::LongPairStats::from(stats, a, outcome.seconds));
    // The strategy that ran comes with the run's statistics (from()).
    record->kernels = settings.kernels;
    record->streams = settings.streams;
    std::optional<store::Heatmap> overview;
    if (!stats.overview.empty()) overview = store::Heatmap::from_long_overview(stats.overview, a, scheme.scale);
    outcome.long_overview = overview.has_value();
    if (recorder) recorder->long_pair(*record, overview ? &*overview : nullptr);
    outcome.long_pair = std::move(record);

    Progress last;
    last.cells_done = last.cells_total = outcome.cells;
    last.items_done = last.items_total = 1;
    report(entry, last);
    if (recorder) recorder->progress(last);
    outcome.alignments = std::make_shared<const std::vector<Alignment>>(std::vector<Alignment>{std::move(a)});
}

void JobQueue::report(const std::shared_ptr<Entry>& entry, const Progress& progress) {
    {
        std::lock_guard lock(entry->progress_mutex);
        // A backend's threads may report out of order; keep the furthest.
        if (progress.cells_done >= entry->latest.cells_done) {
            const auto cells_total = entry->latest.cells_total, items_total = entry->latest.items_total;
            entry->latest = progress;
            if (!entry->latest.cells_total) entry->latest.cells_total = cells_total;
            if (!entry->latest.items_total) entry->latest.items_total = items_total;
        }
    }
    const std::int64_t now = since_ns(entry->start);
    const bool final = progress.cells_total && progress.cells_done >= progress.cells_total;
    if (!final && now - entry->last_post_ns.load() < progress_interval_ns) return;
    // One report in flight at most: the GUI always reads the latest figures.
    if (entry->post_pending.exchange(true)) return;
    entry->last_post_ns = now;
    QMetaObject::invokeMethod(
        this,
        [this, entry] {
            entry->post_pending = false;
            emit jobProgress(entry->ticket, shownProgress(*entry, entry->phase.load()));
        },
        Qt::QueuedConnection);
}

JobProgress JobQueue::shownProgress(Entry& entry, JobPhase phase) {
    JobProgress shown;
    {
        std::lock_guard lock(entry.progress_mutex);
        shown.cells_done = entry.latest.cells_done;
        shown.cells_total = entry.latest.cells_total;
        shown.pairs_done = entry.latest.items_done;
        shown.pairs_total = entry.latest.items_total;
    }
    shown.seconds = double(since_ns(entry.start)) / 1e9;
    shown.phase = phase;
    switch (shown.phase) {
        case JobPhase::Aligning:
        case JobPhase::Scanning: shown.predicts_end = true; break;
        case JobPhase::LongFirstPass:
        case JobPhase::LongStage1: {
            // The engine's counter runs over the first pass (the CPU's clamps at
            // the matrix; the GPU pipeline's goes on through stages 2 and 3 by a
            // guessed share): the bar shows the first pass alone, and what follows
            // is named, without a percentage nobody measured.
            const std::uint64_t matrix = entry.long_matrix;
            if (matrix && shown.cells_done >= matrix && entry.long_path) {
                shown.phase = shown.phase == JobPhase::LongStage1 ? JobPhase::LongStages23 : JobPhase::LongRefining;
                JobPhase expected = phase;  // a later phase set meanwhile (saving) stays
                entry.phase.compare_exchange_strong(expected, shown.phase);
                shown.counted = false;
            } else {
                shown.cells_total = matrix ? matrix : shown.cells_total;
                shown.cells_done = std::min(shown.cells_done, shown.cells_total);
            }
            break;
        }
        case JobPhase::LongRefining:
        case JobPhase::LongStages23:
        case JobPhase::Waiting:
        case JobPhase::Preparing:
        case JobPhase::Saving: shown.counted = false; break;
    }
    return shown;
}

void JobQueue::setPhase(const std::shared_ptr<Entry>& entry, JobPhase phase) {
    entry->phase = phase;
    // Said at once: the GUI learns of a phase even when no progress follows.
    QMetaObject::invokeMethod(
        this, [this, entry, phase] { emit jobProgress(entry->ticket, shownProgress(*entry, phase)); },
        Qt::QueuedConnection);
}

void JobQueue::finish(const std::shared_ptr<Entry>& entry, JobOutcome outcome) {
    QMetaObject::invokeMethod(
        this,
        [this, entry, outcome = std::move(outcome)] {
            bool empty = false;
            {
                std::lock_guard lock(mutex_);
                active_.erase(entry->ticket);
                empty = active_.empty();
            }
            emit jobFinished(entry->ticket, outcome);
            if (empty) emit idle();
        },
        Qt::QueuedConnection);
}

}  // namespace alignscope::ui
