// Recording a job: its row, owner lock, progress, results and final state.
#include "entity_columns.hpp"
#include "project_impl.hpp"
#include "record_columns.hpp"

#include <alignscope/error.hpp>
#include <alignscope/store/job_recording.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>

#include <unistd.h>

namespace alignscope::store {
namespace {

std::string host_name() {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0) return "unknown host";
    return name;
}

}  // namespace

struct JobRecording::OwnerLockHolder {
    OwnerLockHolder(const std::string& lock_path, std::int64_t job_id) : lock(lock_path, job_id) {}
    OwnerLock lock;
};

JobRecording::JobRecording(const std::string& project_path, const JobSpec& spec, const RecordingOptions& options)
    : options_(options) {
    ProjectOptions open_options = options.project;
    open_options.read_only = false;
    open_options.verify_inputs = false;
    project_ = std::make_unique<Project>(project_path, open_options);
    auto& impl = *project_->impl_;
    auto& db = *impl.db;

    const std::int64_t now = now_ms();
    JobInfo row;  // the new row of the jobs table
    row.spec = spec;
    if (row.spec.build_version.empty()) row.spec.build_version = build_version();
    row.state = options.queued ? JobState::Queued : JobState::Running;
    row.created_ms = now;
    row.started_ms = options.queued ? 0 : now;  // NULL until it starts
    row.owner_pid = static_cast<std::int64_t>(::getpid());
    row.owner_host = host_name();
    try {
        db.write("recording a new job", [&] {
            auto insert = db.prepare(columns::insert(entity::job_columns, "jobs", ""));
            columns::bind(entity::job_columns, insert, 1, row);
            insert.run();
            job_id_ = db.last_insert_rowid();
            // Locked before COMMIT: no other process can see this job as
            // active without its owner lock being held.
            lock_ = std::make_unique<OwnerLockHolder>(impl.lock_path, job_id_);
        });
    } catch (...) {
        lock_.reset();
        throw;
    }
}

JobRecording::~JobRecording() {
    if (finished()) return;
    try {
        finish(JobState::Failed,
               "the job ended without reporting its outcome (an error or an early return in the program running it)");
    } catch (...) {
        // Nothing can be reported from a destructor; the released lock makes
        // the next open mark the job interrupted instead.
    }
}

const std::string& JobRecording::project_path() const { return project_->path(); }

std::int64_t JobRecording::add_input(const SequenceSet& set, std::string_view role) {
    std::int64_t id = 0;
    {
        std::lock_guard guard(mutex_);
        id = project_->add_sequence_set(set);
    }
    link_input(id, role);
    return id;
}

void JobRecording::link_input(std::int64_t input_id, std::string_view role) {
    std::lock_guard guard(mutex_);
    auto& db = *project_->impl_->db;
    db.write("linking an input to " + job_name(job_id_), [&] {
        auto link = db.prepare("INSERT OR IGNORE INTO job_inputs (job_id, role, input_id) VALUES (?, ?, ?)");
        link.bind(1, job_id_).bind(2, role).bind(3, input_id);
        link.run();
    });
}

void JobRecording::start() {
    std::lock_guard guard(mutex_);
    auto& db = *project_->impl_->db;
    db.write("starting " + job_name(job_id_), [&] {
        auto update = db.prepare("UPDATE jobs SET state = 'running', started_ms = ? WHERE id = ? AND state = 'queued'");
        update.bind(1, now_ms()).bind(2, job_id_);
        update.run();
    });
}

void JobRecording::progress(const Progress& progress) {
    std::lock_guard guard(mutex_);
    if (finished_) return;
    pending_progress_ = progress;
    progress_pending_ = true;
    if (!progress_written_ || std::chrono::steady_clock::now() - last_progress_write_ >= options_.progress_interval)
        write_progress_locked(false);
}

std::function<void(const Progress&)> JobRecording::progress_callback() {
    return [this](const Progress& p) { progress(p); };
}

void JobRecording::write_progress_locked(bool force) {
    if (!progress_pending_) return;
    auto& db = *project_->impl_->db;
    const int patience = db.busy_timeout_ms();
    // Progress is advisory: rather than stall the computation behind another
    // writer, skip this update (the next one, or finish, carries it).
    if (!force) db.set_busy_timeout(0);
    try {
        auto update =
            db.prepare("UPDATE jobs SET cells_done = ?, cells_total = ?, items_done = ?, items_total = ? WHERE id = ?");
        update.bind(1, pending_progress_.cells_done)
            .bind(2, pending_progress_.cells_total)
            .bind(3, pending_progress_.items_done)
            .bind(4, pending_progress_.items_total)
            .bind(5, job_id_);
        update.run();
        progress_pending_ = false;
        progress_written_ = true;
        last_progress_write_ = std::chrono::steady_clock::now();
    } catch (const Error&) {
        if (force) {
            db.set_busy_timeout(patience);
            throw;
        }
    }
    db.set_busy_timeout(patience);
}

template <class Body>
void JobRecording::write_results(std::string_view what, Body&& body) {
    std::lock_guard guard(mutex_);
    if (finished_)
        throw Error(project_->path() + ": " + job_name(job_id_) + " is finished; cannot add " + std::string(what));
    auto& db = *project_->impl_->db;
    db.write("recording " + std::string(what) + " of " + job_name(job_id_), [&] { body(db); });
}

namespace {

// The next free ordinal of a result kind, read inside the write transaction.
std::int64_t next_ordinal(sqlite::Connection& db, std::int64_t job_id, std::string_view count_sql) {
    auto row = db.prepare(count_sql);
    row.bind(1, job_id);
    if (!row.step()) throw Error(db.path() + ": " + job_name(job_id) + " was deleted while it was being recorded");
    return row.int64(0);
}

void add_to_count(sqlite::Connection& db, std::int64_t job_id, std::string_view update_sql, std::int64_t n) {
    auto update = db.prepare(update_sql);
    update.bind(1, n).bind(2, job_id);
    update.run();
}

}  // namespace

void JobRecording::add_alignments(const std::vector<Alignment>& alignments) {
    write_results("alignments", [&](sqlite::Connection& db) {
        std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT alignment_count FROM jobs WHERE id = ?");
        static const std::string sql = columns::insert(entity::alignment_columns, "alignments", "job_id, ordinal");
        auto insert = db.prepare(sql);
        for (const Alignment& a : alignments) {
            insert.bind(1, job_id_).bind(2, ordinal++);
            columns::bind(entity::alignment_columns, insert, 3, a);
            insert.run();
        }
        add_to_count(db, job_id_, "UPDATE jobs SET alignment_count = alignment_count + ? WHERE id = ?",
                     static_cast<std::int64_t>(alignments.size()));
    });
}

void JobRecording::add_hits(const std::vector<Hit>& hits) {
    write_results("hits", [&](sqlite::Connection& db) {
        std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT hit_count FROM jobs WHERE id = ?");
        static const std::string sql = columns::insert(entity::hit_columns, "hits", "job_id, ordinal");
        auto insert = db.prepare(sql);
        for (const Hit& h : hits) {
            insert.bind(1, job_id_).bind(2, ordinal++);
            columns::bind(entity::hit_columns, insert, 3, h);
            insert.run();
        }
        add_to_count(db, job_id_, "UPDATE jobs SET hit_count = hit_count + ? WHERE id = ?",
                     static_cast<std::int64_t>(hits.size()));
    });
}

void JobRecording::add_long_alignment(const LongAlignmentSummary& s) {
    write_results("a long alignment", [&](sqlite::Connection& db) {
        const std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT long_alignment_count FROM jobs WHERE id = ?");
        static const std::string sql =
            columns::insert(entity::long_alignment_columns, "long_alignments", "job_id, ordinal");
        auto insert = db.prepare(sql);
        insert.bind(1, job_id_).bind(2, ordinal);
        columns::bind(entity::long_alignment_columns, insert, 3, s);
        insert.run();
        add_to_count(db, job_id_, "UPDATE jobs SET long_alignment_count = long_alignment_count + ? WHERE id = ?", 1);
    });
}

void JobRecording::add_heatmap(const Heatmap& h) {
    h.check("heatmap " + h.label);
    write_results("a heatmap", [&](sqlite::Connection& db) {
        const std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT heatmap_count FROM jobs WHERE id = ?");
        static const std::string sql = columns::insert(entity::heatmap_columns, "heatmaps", "job_id, ordinal");
        auto insert = db.prepare(sql);
        insert.bind(1, job_id_).bind(2, ordinal);
        columns::bind(entity::heatmap_columns, insert, 3, h);
        insert.run();
        add_to_count(db, job_id_, "UPDATE jobs SET heatmap_count = heatmap_count + ? WHERE id = ?", 1);
    });
}

void JobRecording::add_long_pair_stats(const LongPairStats& s) {
    write_results("long-pair statistics", [&](sqlite::Connection& db) {
        const std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT long_pair_stats_count FROM jobs WHERE id = ?");
        static const std::string sql =
            columns::insert(entity::long_pair_stats_columns, "long_pair_stats", "job_id, ordinal");
        auto insert = db.prepare(sql);
        insert.bind(1, job_id_).bind(2, ordinal);
        columns::bind(entity::long_pair_stats_columns, insert, 3, s);
        insert.run();
        add_to_count(db, job_id_, "UPDATE jobs SET long_pair_stats_count = long_pair_stats_count + ? WHERE id = ?", 1);
    });
}

void JobRecording::add_timeline(const std::vector<TimelineEvent>& events, const std::string& clock_source) {
    write_results("timeline events", [&](sqlite::Connection& db) {
        std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT timeline_event_count FROM jobs WHERE id = ?");
        static const std::string sql = columns::insert(entity::timeline_columns, "timeline_events", "job_id, ordinal");
        auto insert = db.prepare(sql);
        for (const TimelineEvent& e : events) {
            insert.bind(1, job_id_).bind(2, ordinal++);
            columns::bind(entity::timeline_columns, insert, 3, e);
            insert.run();
        }
        auto update = db.prepare(
            "UPDATE jobs SET timeline_event_count = timeline_event_count + ?, clock_source = ? WHERE id = ?");
        update.bind(1, static_cast<std::int64_t>(events.size())).bind(2, clock_source).bind(3, job_id_);
        update.run();
    });
}

void JobRecording::add_bench_points(const std::vector<BenchPoint>& points) {
    write_results("benchmark points", [&](sqlite::Connection& db) {
        std::int64_t ordinal = next_ordinal(db, job_id_, "SELECT bench_point_count FROM jobs WHERE id = ?");
        // The parameters, a JSON object, after the table's columns.
        static const std::string sql =
            columns::insert(entity::bench_point_columns, "bench_points", "job_id, ordinal", "parameters");
        auto insert = db.prepare(sql);
        constexpr int parameters = 3 + static_cast<int>(entity::bench_point_columns.size());
        for (const BenchPoint& p : points) {
            if (!std::isfinite(p.x) || !std::isfinite(p.y))
                throw Error("benchmark point of series '" + p.series + "' is not a finite number");
            insert.bind(1, job_id_).bind(2, ordinal++);
            columns::bind(entity::bench_point_columns, insert, 3, p);
            insert.bind(parameters, nlohmann::json(p.parameters).dump());
            insert.run();
        }
        add_to_count(db, job_id_, "UPDATE jobs SET bench_point_count = bench_point_count + ? WHERE id = ?",
                     static_cast<std::int64_t>(points.size()));
    });
}

void JobRecording::finish_done() { finish(JobState::Done, ""); }

void JobRecording::finish_failed(std::string_view message) { finish(JobState::Failed, message); }

void JobRecording::finish_cancelled() { finish(JobState::Cancelled, "cancelled by the user"); }

bool JobRecording::finished() const {
    std::lock_guard guard(mutex_);
    return finished_;
}

void JobRecording::finish(JobState state, std::string_view message) {
    std::lock_guard guard(mutex_);
    if (finished_) throw Error(project_->path() + ": " + job_name(job_id_) + " was already finished");
    finished_ = true;
    auto& db = *project_->impl_->db;
    try {
        db.write("finishing " + job_name(job_id_), [&] {
            auto update = db.prepare(
                "UPDATE jobs SET state = ?, ended_ms = ?, error = ?, started_ms = coalesce(started_ms, ?) "
                "WHERE id = ?");
            const std::int64_t now = now_ms();
            update.bind(1, to_string(state)).bind(2, now).bind(3, message).bind(4, now).bind(5, job_id_);
            update.run();
            write_progress_locked(true);
        });
    } catch (...) {
        // The final state could not be written (disk full?): let go of the
        // lock anyway, so the job reads as interrupted rather than running forever.
        lock_.reset();
        throw;
    }
    // Released only after the final state is committed (see Impl::effective_state).
    lock_.reset();
}

}  // namespace alignscope::store
