// One background analysis of the workbench (a profile search, an
// all-against-all matrix) on a worker thread of its own: progress reaches the
// GUI as coalesced queued signals, cancellation goes through a
// CancellationToken, and the end comes as one finished() signal.
#pragma once

#include "jobs/task_thread.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/profile/filter_scan.hpp>

#include <QObject>
#include <QString>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

namespace alignscope::ui {

// The devices analyses run on: the pairwise registry the window was given
// (app: CPU and CUDA backends; by default the engine's CPU registry), and the
// profile filter scanners (CPU; the app adds GPU ones).
DeviceRegistry& analysis_devices();
void use_analysis_devices(DeviceRegistry& registry);  // outlives every analysis
profile::ProfileScannerRegistry& profile_scanners();

class AnalysisJob : public QObject {
    Q_OBJECT
public:
    enum class State { Done, Failed, Cancelled };
    Q_ENUM(State)
    // Runs on the worker thread; throws Error (Failed), Cancelled, or returns (Done).
    using Work = std::function<void(JobContext& context)>;

    explicit AnalysisJob(QObject* parent = nullptr);
    // Cancels a running analysis and waits for it.
    ~AnalysisJob() override;

    // Starts `work`; false while another runs.
    bool start(Work work);
    void cancel();
    bool running() const { return running_; }

signals:
    // Items and cells as the engine counts them; seconds since the start.
    void progressed(quint64 itemsDone, quint64 itemsTotal, quint64 cellsDone, quint64 cellsTotal, double seconds);
    void finished(alignscope::ui::AnalysisJob::State state, QString message, double seconds);

private:
    struct Run;
    std::shared_ptr<Run> run_;
    std::atomic<bool> running_{false};
    std::unique_ptr<TaskThread> worker_;  // last: joined first
};

}  // namespace alignscope::ui
