// BenchmarkView: bench points from the project, and comparisons recorded into it.
#include "views/benchmark_view.hpp"

#include "project_document.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <QLabel>
#include <QVBoxLayout>

namespace alignscope::ui {

BenchmarkView::BenchmarkView(ProjectDocument& document, QWidget* parent) : JobResultView(document, parent) {
    gcups_ = new GcupsView(this);
    gcups_->setObjectName("gcupsPlot");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(noteLabel());
    layout->addWidget(gcups_, 1);
    connect(gcups_, &GcupsView::comparisonStarted, this, &BenchmarkView::comparisonStarted);
    connect(gcups_, &GcupsView::comparisonPoint, this, [this](const store::BenchPoint& point) {
        if (!recording_) return;
        try {
            recording_->add_bench_points({point});
        } catch (const std::exception& e) {
            setNote(tr("The comparison's points can no longer be recorded: %1").arg(e.what()));
            recording_.reset();  // the store reads the job as failed
        }
    });
    connect(gcups_, &GcupsView::comparisonFinished, this,
            [this](const QString& summary) { comparisonEnded(store::JobState::Done, summary); });
    connect(gcups_, &GcupsView::comparisonFailed, this, [this](const QString& message) {
        comparisonEnded(gcups_->comparisonCancelled() ? store::JobState::Cancelled : store::JobState::Failed, message);
    });
}

BenchmarkView::~BenchmarkView() {
    // The comparison stops with the view (GcupsView joins its thread); the
    // recording then reads as interrupted, as a job cut off by closing does.
    (void)recording_.release();
}

qint64 BenchmarkView::defaultJob(const std::vector<store::JobInfo>&) const { return 0; }

void BenchmarkView::setDeviceRegistry(DeviceRegistry* registry) {
    registry_ = registry;
    gcups_->setDeviceRegistry(registry);
}

bool BenchmarkView::comparing() const { return gcups_->comparisonRunning(); }

QString BenchmarkView::projectSignature() const {
    QString signature;
    for (const store::JobInfo& job : document().jobs())
        if (job.counts.bench_points > 0) signature += QString("%1:%2;").arg(job.id).arg(job.counts.bench_points);
    return signature;
}

void BenchmarkView::load(const store::JobInfo* job) {
    if (comparing()) {
        setNote(
            tr("Comparing CPU and GPU: points appear as they are measured (recorded as job %1).").arg(comparison_job_));
        return;
    }
    store::Project* project = document().project();
    if (!project) {
        gcups_->setPoints({});
        setNote(tr("No project is open."));
        return;
    }
    if (job && job->counts.bench_points > 0) {
        gcups_->setPoints(bench_points_from_project(*project, job->id));
        setNote(
            tr("%1: %n benchmark point(s)", nullptr, int(job->counts.bench_points))
                .arg(tr("Job %1 (%2 on %3)")
                         .arg(job->id)
                         .arg(QString::fromStdString(job->spec.command), QString::fromStdString(job->spec.devices))));
        return;
    }
    // The project's series: every bench job, each run named by its job when
    // there are several (two runs of one sweep are two curves, not one).
    std::vector<const store::JobInfo*> bench;
    for (const store::JobInfo& j : document().jobs())
        if (j.counts.bench_points > 0) bench.push_back(&j);
    std::vector<store::BenchPoint> points;
    for (const store::JobInfo* j : bench)
        for (store::BenchPoint& p : bench_points_from_project(*project, j->id)) {
            if (bench.size() > 1) p.series = "job " + std::to_string(j->id) + ": " + p.series;
            points.push_back(std::move(p));
        }
    gcups_->setPoints(std::move(points));
    if (bench.empty()) {
        setNote(tr("No benchmark results in this project yet: Compare CPU and GPU here, or run "
                   "alignscope-cli bench --project %1.")
                    .arg(document().path()));
        return;
    }
    QString lead = job ? tr("Job %1 has no benchmark points; ").arg(job->id) : QString();
    setNote(lead + tr("the project's benchmark series: %n bench job(s)", nullptr, int(bench.size())));
}

void BenchmarkView::compare(const BenchOptions& options) {
    if (registry_ && !comparing()) gcups_->startComparison(*registry_, options);
}

void BenchmarkView::comparisonStarted(const BenchOptions& options) {
    emit comparingChanged(true);
    comparison_job_ = 0;
    if (!document().isOpen()) return;
    store::JobSpec spec;
    spec.command = "bench";
    spec.algorithm = "bench";
    std::string devices = "cpu";
    if (registry_)
        for (const DeviceInfo& d : registry_->devices())
            if (d.kind == "gpu" && d.available) devices += "," + d.id;
    spec.devices = devices;
    spec.command_line = "alignscope: Compare CPU and GPU";
    std::string lengths;
    for (auto l : options.lengths) {
        if (!lengths.empty()) lengths += ',';
        lengths += std::to_string(l);
    }
    spec.parameters["comparison"] = "cpu-gpu";
    spec.parameters["lengths"] = lengths;
    spec.parameters["gpu_pairs"] = std::to_string(options.gpu_pairs);
    spec.parameters["cpu_seconds"] = std::to_string(options.cpu_seconds);
    spec.parameters["repeat"] = std::to_string(options.repeat);
    spec.parameters["warmup"] = std::to_string(options.warmup);
    if (options.cpu_pairs) spec.parameters["cpu_pairs"] = std::to_string(options.cpu_pairs);
    spec.threads = options.threads;
    try {
        recording_ = std::make_unique<store::JobRecording>(document().path().toStdString(), spec);
        comparison_job_ = recording_->job_id();
        setNote(
            tr("Comparing CPU and GPU: points appear as they are measured (recorded as job %1).").arg(comparison_job_));
    } catch (const std::exception& e) {
        setNote(tr("Comparing CPU and GPU; the project cannot record it: %1").arg(e.what()));
    }
    document().poll();
}

void BenchmarkView::comparisonEnded(store::JobState state, const QString& message) {
    if (recording_) {
        try {
            if (state == store::JobState::Done) recording_->finish_done();
            else if (state == store::JobState::Cancelled)
                recording_->finish_cancelled();
            else
                recording_->finish_failed(message.toStdString());
        } catch (const std::exception& e) {
            setNote(tr("The comparison's end could not be recorded: %1").arg(e.what()));
        }
        recording_.reset();
    }
    document().poll();
    emit comparingChanged(false);
    // Show what the project now holds: the comparison's job, or the series.
    if (comparison_job_ && state == store::JobState::Done) showJob(comparison_job_);
    else
        reload();
    setNote(noteText() + " — " + message);
}

}  // namespace alignscope::ui
