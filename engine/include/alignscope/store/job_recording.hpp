// Recording one job into a project while it runs: the job row from queued or
// running to its final state, throttled progress, and its results, each batch
// in one transaction. The recording holds the job's owner lock for its whole
// life; if the process dies the kernel drops the lock and the next open shows
// the job as interrupted, with every batch committed before the death intact.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_spec.hpp>
#include <alignscope/store/project.hpp>
#include <alignscope/store/results.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::store {

struct RecordingOptions {
    bool queued = false;  // begin as queued; start() moves it to running
    // Progress is written at most this often (the last value is kept in memory
    // and written by the next update or by finish).
    std::chrono::milliseconds progress_interval{250};
    ProjectOptions project;  // how the recording's own connection opens the file
};

class JobRecording {
public:
    // Opens `project_path` (creating it when project.create_if_missing is set),
    // inserts the job as running (or queued) with this process's pid and host,
    // and takes the job's owner lock before the row becomes visible. Throws Error.
    JobRecording(const std::string& project_path, const JobSpec& spec, const RecordingOptions& options = {});
    // A recording that was not finished is marked failed ("ended without
    // reporting an outcome"); errors are swallowed, a destructor cannot report them.
    ~JobRecording();
    JobRecording(const JobRecording&) = delete;
    JobRecording& operator=(const JobRecording&) = delete;

    std::int64_t job_id() const { return job_id_; }
    const std::string& project_path() const;

    // Inputs: registers the set with the project (or finds it) and links it to
    // this job under `role` ("query", "target", "database", ...). Returns its id.
    std::int64_t add_input(const SequenceSet& set, std::string_view role);
    void link_input(std::int64_t input_id, std::string_view role);

    void start();  // queued -> running; no-op when already running

    // Thread-safe, cheap, never throws: writes at most every progress_interval,
    // and skips a write rather than wait while another process writes.
    void progress(const Progress& progress);
    // A callback for JobContext::progress that feeds progress(); it refers to
    // this recording, which must outlive every call.
    std::function<void(const Progress&)> progress_callback();

    // Results. Every call is one transaction: all of its rows or none. Rows are
    // numbered on from the job's previous rows of the same kind. Thread-safe.
    void add_alignments(const std::vector<Alignment>& alignments);
    void add_hits(const std::vector<Hit>& hits);
    void add_long_alignment(const LongAlignmentSummary& summary);
    void add_heatmap(const Heatmap& heatmap);  // throws Error when Heatmap::check() does
    void add_long_pair_stats(const LongPairStats& stats);
    void add_timeline(const std::vector<TimelineEvent>& events, const std::string& clock_source);
    void add_bench_points(const std::vector<BenchPoint>& points);

    // Final states: the last progress is written with them and the owner lock
    // released. Only the first finish counts; later ones throw Error.
    void finish_done();
    void finish_failed(std::string_view message);
    void finish_cancelled();
    bool finished() const;

private:
    void finish(JobState state, std::string_view message);
    void write_progress_locked(bool force);
    template <class Body>
    void write_results(std::string_view what, Body&& body);

    mutable std::mutex mutex_;
    RecordingOptions options_;
    std::unique_ptr<Project> project_;
    struct OwnerLockHolder;
    std::unique_ptr<OwnerLockHolder> lock_;
    std::int64_t job_id_ = 0;
    bool finished_ = false;
    Progress pending_progress_;
    bool progress_pending_ = false;
    bool progress_written_ = false;  // the first update is written at once
    std::chrono::steady_clock::time_point last_progress_write_{};
};

}  // namespace alignscope::store
