// The job queue: jobs run one after another on a worker thread through the
// engine's DeviceRegistry (pairwise jobs, and long pairs through
// longpair::align_long_on) and ScannerRegistry (database searches, through the
// engine's run_search as the CLI runs them), never on the GUI thread. Progress arrives as queued
// signals (coalesced, so a backend that reports often cannot flood the event
// loop), cancellation goes through each job's CancellationToken, and each job
// is written to the project by a JobRecorder made on the worker thread.
#pragma once

#include "jobs/job_request.hpp"
#include "jobs/task_thread.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/search/scan.hpp>
#include <alignscope/store/results.hpp>

#include <QObject>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::ui {

enum class JobState { Queued, Running, Done, Failed, Cancelled, Interrupted };
QString display_name(JobState state);

// What a job is doing. Every phase a job goes through is named, so the window
// never shows a finished bar while work goes on.
enum class JobPhase {
    Waiting,        // queued behind other jobs
    Preparing,      // choosing the backend, packing a database
    Aligning,       // pairwise jobs: the pairs (the cells count all the work)
    Scanning,       // a search: scanning the database and aligning the hits, query by query
    LongFirstPass,  // a long pair on a CPU: Myers-Miller's first pass over the whole matrix
    LongRefining,   // then its divide and conquer on the halves (about as long again, not counted)
    LongStage1,     // a long pair on GPUs: stage 1, the forward pass over the whole matrix
    LongStages23,   // then stage 2 (the start of the path) and stage 3 (the traceback)
    Saving,         // writing the results into the project
};
QString display_name(JobPhase phase);

// A job's progress as the GUI shows it.
struct JobProgress {
    std::uint64_t cells_done = 0, cells_total = 0;
    std::uint64_t pairs_done = 0, pairs_total = 0;
    double seconds = 0;  // since the job started
    JobPhase phase = JobPhase::Waiting;
    // Whether cells_done/cells_total measures the phase's work: false in
    // phases no counter covers (percent and ETA are then unknown).
    bool counted = true;
    // Whether the rate so far predicts the end of the whole job (pairwise
    // jobs and searches: their cells are all their work; not long pairs).
    bool predicts_end = false;
    double cells_per_second() const { return seconds > 0 ? double(cells_done) / seconds : 0; }
    // Seconds left at the rate so far; negative when unknown.
    double eta_seconds() const;
    // Of the phase; -1 when unknown.
    int percent() const;
    // "stage 1 of 3: forward pass (42 %)", for the status bar and the queue.
    QString text() const;
};

struct JobOutcome {
    JobState state = JobState::Done;
    std::string message;  // the error for Failed
    double seconds = 0;   // wall time inside the backend
    std::uint64_t cells = 0;
    std::string device;                                        // the backend that ran it ("cpu", "gpu:0,1")
    std::int64_t project_job_id = 0;                           // 0 when not recorded
    std::shared_ptr<const std::vector<Alignment>> alignments;  // pairwise jobs
    bool search = false;
    std::uint64_t queries = 0;  // a search's queries
    std::uint64_t hits = 0;     // and the hits kept
    // A long pair's pipeline statistics (null for other jobs), and whether the
    // device kept an overview of the DP matrix for the heatmap.
    std::shared_ptr<const store::LongPairStats> long_pair;
    bool long_overview = false;
    double gcups() const { return seconds > 0 ? double(cells) / seconds / 1e9 : 0; }
};

// Where a job's record goes (the project: see ProjectJobRecorder). A recorder
// is made when the job is queued, on the queue's recording thread, and then
// used by the worker; progress() may be called from any thread. Every call but
// progress() may throw Error (a full disk), which fails the job.
class JobRecorder {
public:
    virtual ~JobRecorder() = default;
    virtual std::int64_t job_id() const = 0;  // the job's id in the project
    virtual void started() = 0;
    virtual void progress(const Progress& progress) = 0;  // thread-safe, cheap, never throws
    // A search's hits, batch by batch as its queries finish, with the
    // alignments of those hits (empty without traceback); done() follows.
    virtual void hits(const std::vector<store::Hit>& hits, const std::vector<Alignment>& alignments) = 0;
    // A long pair's pipeline statistics and its stage-1 overview of the DP
    // matrix (null when the device kept none), before done().
    virtual void long_pair(const store::LongPairStats& stats, const store::Heatmap* overview) {
        (void)stats;
        (void)overview;
    }
    virtual void done(const std::vector<Alignment>& alignments, const std::vector<TimelineEvent>& timeline,
                      const std::string& clock_source) = 0;
    virtual void failed(const std::string& message) = 0;
    virtual void cancelled() = 0;
    // The application is closing with the job unfinished.
    virtual void interrupted() = 0;
};
// Makes the record of a job about to be queued on `device` (as the request
// names it: "cpu", "gpu:0", or all GPUs). Throws Error when it cannot.
using RecorderFactory =
    std::function<std::unique_ptr<JobRecorder>(const JobRequest& request, const DeviceInfo& device)>;

class JobQueue : public QObject {
    Q_OBJECT
public:
    // `registry` (and `scanners`, when given) outlive the queue; only the
    // worker thread selects backends. Without scanners, searches fail.
    explicit JobQueue(DeviceRegistry& registry, const ScannerRegistry* scanners = nullptr, QObject* parent = nullptr);
    // Interrupts every job (they are recorded as interrupted) and joins the worker.
    ~JobQueue() override;

    const std::vector<DeviceInfo>& devices() const { return devices_; }
    // The device a request names as a DeviceInfo: a registered device, or for
    // "gpu" (all GPUs) one standing for the group. Null when none.
    std::optional<DeviceInfo> device(const std::string& spec) const;
    // Jobs queued after this call are recorded through `factory` (empty: not recorded).
    void setRecorderFactory(RecorderFactory factory);

    // Queues a job; returns its ticket, which names it in every signal.
    quint64 enqueue(JobRequest request);
    // A queued job never starts; a running one ends with Cancelled within ~100 ms.
    void cancel(quint64 ticket);
    void cancelAll();
    // Stops everything as if the application were closing: running and queued
    // jobs are recorded as interrupted. Blocks until the worker is idle.
    void interruptAll();
    bool busy() const;
    QList<quint64> activeTickets() const;  // queued or running, in order

signals:
    void jobQueued(quint64 ticket, QString summary);
    // The job is in the project (as queued) under this id.
    void jobRecorded(quint64 ticket, qint64 projectJobId);
    void jobStarted(quint64 ticket);
    void jobProgress(quint64 ticket, alignscope::ui::JobProgress progress);
    void jobFinished(quint64 ticket, alignscope::ui::JobOutcome outcome);
    // Queue became empty.
    void idle();

private:
    struct Entry;
    void record(const std::shared_ptr<Entry>& entry, const RecorderFactory& factory);  // recording thread
    void run(const std::shared_ptr<Entry>& entry);                                     // on the worker thread
    // The work of one job (worker thread); fills `outcome`, throws Error or Cancelled.
    void runPairs(const std::shared_ptr<Entry>& entry, JobRecorder* recorder, JobOutcome& outcome,
                  TimelineRecorder& timeline);
    void runSearch(const std::shared_ptr<Entry>& entry, JobRecorder* recorder, JobOutcome& outcome,
                   TimelineRecorder& timeline);
    void runLongPair(const std::shared_ptr<Entry>& entry, JobRecorder* recorder, JobOutcome& outcome,
                     TimelineRecorder& timeline);
    void report(const std::shared_ptr<Entry>& entry, const Progress& progress);
    void setPhase(const std::shared_ptr<Entry>& entry, JobPhase phase);
    static JobProgress shownProgress(Entry& entry, JobPhase phase);  // GUI thread
    void finish(const std::shared_ptr<Entry>& entry, JobOutcome outcome);

    DeviceRegistry& registry_;
    const ScannerRegistry* scanners_;
    std::vector<DeviceInfo> devices_;
    mutable std::mutex mutex_;
    RecorderFactory recorder_factory_;
    std::map<quint64, std::shared_ptr<Entry>> active_;
    quint64 next_ticket_ = 1;
    std::atomic<bool> interrupting_{false};
    // Last: joined first on destruction, before anything they use goes.
    std::unique_ptr<TaskThread> recording_thread_;
    std::unique_ptr<TaskThread> worker_;
};

}  // namespace alignscope::ui

Q_DECLARE_METATYPE(alignscope::ui::JobProgress)
Q_DECLARE_METATYPE(alignscope::ui::JobOutcome)
