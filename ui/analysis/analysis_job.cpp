// AnalysisJob: the work runs on its own TaskThread; progress is posted to the
// GUI at most every 40 ms, one post in flight at a time.
#include "analysis/analysis_job.hpp"

#include <alignscope/error.hpp>

#include <QMetaObject>

#include <mutex>
#include <new>
#include <thread>

namespace alignscope::ui {

namespace {

DeviceRegistry* g_devices = nullptr;

}  // namespace

DeviceRegistry& analysis_devices() {
    if (g_devices) return *g_devices;
    static std::unique_ptr<DeviceRegistry> own = make_cpu_registry();
    return *own;
}

void use_analysis_devices(DeviceRegistry& registry) { g_devices = &registry; }

profile::ProfileScannerRegistry& profile_scanners() {
    static std::unique_ptr<profile::ProfileScannerRegistry> registry = profile::make_cpu_profile_scanner_registry();
    return *registry;
}

struct AnalysisJob::Run {
    CancellationToken token;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::mutex mutex;
    Progress latest;
    std::atomic<bool> post_pending{false};
    std::atomic<std::int64_t> last_post_ns{-1'000'000'000};
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
};

AnalysisJob::AnalysisJob(QObject* parent) : QObject(parent), worker_(std::make_unique<TaskThread>()) {}

AnalysisJob::~AnalysisJob() {
    cancel();
    worker_.reset();
}

void AnalysisJob::cancel() {
    if (auto run = run_) run->token.cancel();
}

bool AnalysisJob::start(Work work) {
    if (running_.exchange(true)) return false;
    auto run = std::make_shared<Run>();
    run_ = run;
    worker_->post([this, run, work = std::move(work)] {
        JobContext context;
        context.cancel = &run->token;
        context.progress = [this, run](const Progress& p) {
            {
                std::lock_guard lock(run->mutex);
                if (p.cells_done >= run->latest.cells_done || p.items_done >= run->latest.items_done) run->latest = p;
            }
            const auto now =
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - run->start)
                    .count();
            if (now - run->last_post_ns.load() < 40'000'000) return;
            if (run->post_pending.exchange(true)) return;
            run->last_post_ns = now;
            QMetaObject::invokeMethod(
                this,
                [this, run] {
                    run->post_pending = false;
                    Progress latest;
                    {
                        std::lock_guard lock(run->mutex);
                        latest = run->latest;
                    }
                    emit progressed(latest.items_done, latest.items_total, latest.cells_done, latest.cells_total,
                                    run->seconds());
                },
                Qt::QueuedConnection);
        };
        State state = State::Done;
        QString message;
        try {
            work(context);
        } catch (const Cancelled&) {
            state = State::Cancelled;
        } catch (const std::bad_alloc&) {
            state = State::Failed;
            message = QStringLiteral("out of memory");
        } catch (const std::exception& e) {
            state = State::Failed;
            message = QString::fromStdString(e.what());
        }
        if (state == State::Done && run->token.cancelled()) state = State::Cancelled;
        const double seconds = run->seconds();
        QMetaObject::invokeMethod(
            this,
            [this, state, message, seconds] {
                running_ = false;
                emit finished(state, message, seconds);
            },
            Qt::QueuedConnection);
    });
    return true;
}

}  // namespace alignscope::ui
