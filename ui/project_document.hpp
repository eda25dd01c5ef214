// The open project as the window sees it: the store connection the GUI thread
// reads from, the sequence sets it holds (loaded on a worker thread), the job
// list kept fresh by polling the store's cheap change check (so a CLI run into
// the same file shows up without reopening) and catching up by reading only
// the new jobs and those still running, and the recorder that writes new jobs
// into it. Every change a user makes goes through here into the project.
#pragma once

#include "jobs/job_queue.hpp"
#include "jobs/project_loader.hpp"

#include <alignscope/bench/runtime_model.hpp>
#include <alignscope/store/project.hpp>

#include <QObject>
#include <QString>
#include <QTimer>

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace alignscope::ui {

// A sequence-set input of the project and, once read, its records.
struct SequenceInput {
    store::InputInfo info;
    std::shared_ptr<const SequenceSet> set;  // null while loading or after an error
    QString error;                           // why it could not be read
    QString label() const;                   // file name
};

// The warnings a freshly read set deserves (see ProjectDocument::loadWarning):
// the engine's duplicate-id line, and records of the other kind of alphabet
// (protein among nucleotides or the reverse), judged by detect_alphabet on
// up to the first `records_checked` records. Empty when all is well.
QStringList sequence_set_warnings(const SequenceSet& set, std::size_t records_checked = 20'000);

// What one catch-up of the job list changed (ProjectDocument::jobsChanged),
// so a view updates those rows instead of reading the whole list again.
struct JobListChange {
    bool reset = false;           // the whole list was read again: forget what it held
    std::vector<qint64> added;    // new jobs, now the last of jobs() (ids above all others)
    std::vector<qint64> updated;  // jobs whose row changed (state, times, progress, result counts)
    std::vector<qint64> removed;  // jobs deleted
    bool empty() const { return !reset && added.empty() && updated.empty() && removed.empty(); }
};

class ProjectDocument : public QObject {
    Q_OBJECT
public:
    explicit ProjectDocument(QObject* parent = nullptr);
    ~ProjectDocument() override;

    // Opens (create: makes a new one) in the background; `opened` or
    // `openFailed` follows. The project open now stays open until then.
    void open(const QString& path, bool create = false);
    bool isOpen() const { return project_ != nullptr; }
    QString path() const { return path_; }
    // GUI thread only; null when no project is open.
    store::Project* project() const { return project_.get(); }

    // Oldest first (by id). job(): null when the project has no such job.
    // The rows' specs leave out the matrix text (kept once, in the project):
    // scheme() rebuilds a job's scoring scheme from the project.
    const std::vector<store::JobInfo>& jobs() const { return jobs_; }
    const store::JobInfo* job(qint64 id) const;
    // The scheme job `id` ran with, read from the project. Throws
    // alignscope::Error (no project, no such job, a spec without a scheme).
    ScoringScheme scheme(qint64 id) const;
    const std::vector<SequenceInput>& inputs() const { return inputs_; }
    const SequenceInput* input(qint64 id) const;

    // Reads files on the worker and adds them to the project.
    void loadFiles(const QStringList& paths);
    void cancelLoading();
    bool loading() const { return loader_.busy(); }
    // Removes a loaded sequence set from the project (`inputsChanged`
    // follows). A set some job used stays: the error names those jobs (their
    // results point at its records). Throws alignscope::Error.
    void removeInput(qint64 id);
    // Settings kept in the project file (Project::setting); empty / nothing
    // when no project is open or it is read-only.
    QString setting(const QString& key) const;
    void setSetting(const QString& key, const QString& value);
    // Deletes a finished job with its results (on the worker); `jobsChanged` follows.
    void deleteJob(qint64 jobId);
    // Writes a consistent copy to `path` and switches to it (`opened` follows).
    void saveAs(const QString& path);

    // Records jobs queued from this window into this project.
    RecorderFactory recorderFactory() const;

    // Catches up with the project when it changed: the jobs added since,
    // the rows of jobs that were still queued or running, jobs deleted (seen
    // by the count of jobs), and inputs added by another process. The whole
    // job list is read only when a project opens or after a failed read.
    void poll();
    // Cells per second measured on `device` by finished jobs of this project
    // (cells over seconds, summed), and how many jobs that rests on.
    struct Throughput {
        double cells_per_second = 0;
        int jobs = 0;
    };
    // Speed of the project's finished jobs of one kind (measuredKind) on one device.
    Throughput throughput(const std::string& device, const std::string& kind) const;
    // "search/traceback", "pairs/local/scores", ...; empty for jobs measured
    // otherwise (long pairs, bench and verify runs).
    static std::string measuredKind(const store::JobSpec& spec);
    static std::string measuredKind(const JobRequest& request);
    // The run-time model of the long-pair path on `device` with `strategy`
    // ("strips", "streams"; CPU devices have one path) and traceback on or off
    // (bench/runtime_model.hpp), fitted to the project's `bench --long` points
    // on that device (the strategy's own series when there are any, else all)
    // and its earlier long-pair jobs there (m, n and end-to-end seconds).
    // Without traceback, bench points that lack a score-only time count with
    // their full alignment's time. `source` says what it rests on; the model
    // is invalid when the project measured nothing. A set of GPUs ("gpu:0,1",
    // any spelling: device_set_id) is a device of its own: only bench points
    // and jobs on exactly that set count (a workbench job on all GPUs, "gpu",
    // counts for the set its statistics name), never its members' models.
    struct LongPairModel {
        RuntimeModel model;
        QString source;  // "model of 6 bench --long points on gpu:0, ±8 %"
    };
    LongPairModel longPairModel(const std::string& device, const std::string& strategy, bool traceback) const;

    // How often the store's change check runs.
    static constexpr int poll_interval_ms = 500;

signals:
    void opened(QString path);
    void openFailed(QString path, QString message);
    void jobsChanged(const alignscope::ui::JobListChange& change);
    void inputsChanged();
    void loadStarted(QString path);
    void loadProgress(QString path, quint64 bytesRead, quint64 fileSize);
    void loadFailed(QString path, QString message);
    void loadCancelled(QString path);
    // A file was read, but something in it deserves a look: records repeating
    // an id (the engine's own line, as the CLI prints it), or records that
    // look like nucleotides in a protein file (or the reverse).
    void loadWarning(QString path, QString message);
    void loadingIdle();
    void saveFailed(QString path, QString message);
    void deleteFailed(qint64 jobId, QString message);

private:
    void adopt(const QString& path, std::shared_ptr<store::Project> project);
    void refreshJobs();
    void reloadJobs();
    // Book-keeping for one job entering, changing in or leaving jobs_.
    void noteJob(const store::JobInfo& job);
    void recountSpeeds();
    void refreshInputs();
    void inputLoaded(const QString& path, std::shared_ptr<const SequenceSet> set, qint64 id,
                     const QString& projectPath);

    ProjectLoader loader_;
    std::shared_ptr<store::Project> project_;
    QString path_;
    std::int64_t seen_version_ = 0;
    std::vector<store::JobInfo> jobs_;  // by id
    qint64 last_job_id_ = 0;            // the highest id read
    std::vector<qint64> watched_;       // jobs whose rows may still change (queued, running), by id
    std::vector<qint64> long_jobs_;     // long-pair jobs and bench --long runs, by id (longPairModel)
    bool reload_jobs_ = false;          // a catch-up failed: read the whole list at the next poll
    // Finished jobs' cells and seconds by (device, measuredKind): throughput().
    struct Speed {
        double cells = 0, seconds = 0;
        int jobs = 0;
    };
    std::map<std::pair<std::string, std::string>, Speed> speeds_;
    std::vector<SequenceInput> inputs_;
    QTimer poll_timer_;
    QString pending_save_;  // the copy being written by saveAs
    // Benchmark points of finished `bench --long` jobs, read once per job.
    mutable std::map<qint64, std::vector<store::BenchPoint>> long_bench_points_;
    mutable std::map<qint64, std::vector<store::LongPairStats>> long_job_stats_;
};

}  // namespace alignscope::ui

Q_DECLARE_METATYPE(alignscope::ui::JobListChange)
