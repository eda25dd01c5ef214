// ProjectDocument: the GUI thread's view of one project file.
#include "project_document.hpp"

#include "jobs/project_job_recorder.hpp"

#include <QFileInfo>

#include <algorithm>
#include <cstdlib>

namespace alignscope::ui {

QString SequenceInput::label() const { return QFileInfo(QString::fromStdString(info.path)).fileName(); }

ProjectDocument::ProjectDocument(QObject* parent) : QObject(parent) {
    poll_timer_.setInterval(poll_interval_ms);
    connect(&poll_timer_, &QTimer::timeout, this, &ProjectDocument::poll);
    connect(&loader_, &ProjectLoader::projectOpened, this, &ProjectDocument::adopt);
    connect(&loader_, &ProjectLoader::projectOpenFailed, this, &ProjectDocument::openFailed);
    connect(&loader_, &ProjectLoader::loadStarted, this, &ProjectDocument::loadStarted);
    connect(&loader_, &ProjectLoader::loadProgress, this, &ProjectDocument::loadProgress);
    connect(&loader_, &ProjectLoader::loaded, this, &ProjectDocument::inputLoaded);
    connect(&loader_, &ProjectLoader::loadFailed, this,
            [this](const QString& path, const QString& message, qint64 id) {
                if (id) {
                    for (auto& input : inputs_)
                        if (input.info.id == id) input.error = message;
                    emit inputsChanged();
                }
                emit loadFailed(path, message);
            });
    connect(&loader_, &ProjectLoader::loadCancelled, this, [this](const QString& path) {
        // A project input the user stopped reading stays unread until reopened
        // (the idle handler would otherwise read it again at once).
        for (auto& input : inputs_)
            if (!input.set && input.error.isEmpty() && QString::fromStdString(input.info.path) == path)
                input.error = tr("not read: loading was cancelled");
        emit loadCancelled(path);
    });
    connect(&loader_, &ProjectLoader::idle, this, [this] {
        // Inputs another process added, noticed while files were loading.
        std::vector<store::InputInfo> missing;
        for (auto& input : inputs_)
            if (!input.set && input.error.isEmpty()) missing.push_back(input.info);
        if (!missing.empty() && project_) loader_.loadInputs(path_, missing);
        else emit loadingIdle();
    });
    connect(&loader_, &ProjectLoader::projectCopied, this,
            [this](const QString&, const QString& to) { open(to, false); });
    connect(&loader_, &ProjectLoader::projectCopyFailed, this, &ProjectDocument::saveFailed);
    connect(&loader_, &ProjectLoader::jobDeleted, this, &ProjectDocument::poll);
    connect(&loader_, &ProjectLoader::jobDeleteFailed, this, &ProjectDocument::deleteFailed);
}

ProjectDocument::~ProjectDocument() { loader_.cancel(); }

void ProjectDocument::open(const QString& path, bool create) {
    loader_.cancel();
    loader_.openProject(QFileInfo(path).absoluteFilePath(), create);
}

void ProjectDocument::adopt(const QString& path, std::shared_ptr<store::Project> project) {
    project_ = std::move(project);
    path_ = path;
    seen_version_ = project_->data_version();
    jobs_.clear();
    inputs_.clear();
    long_bench_points_.clear();
    refreshJobs();
    refreshInputs();  // the loader reads them once it is idle (see the idle handler)
    poll_timer_.start();
    emit opened(path);
}

const store::JobInfo* ProjectDocument::job(qint64 id) const {
    for (const auto& j : jobs_)
        if (j.id == id) return &j;
    return nullptr;
}

const SequenceInput* ProjectDocument::input(qint64 id) const {
    for (const auto& i : inputs_)
        if (i.info.id == id) return &i;
    return nullptr;
}

void ProjectDocument::loadFiles(const QStringList& paths) {
    if (!project_) return;
    loader_.loadFiles(paths, path_);
}

void ProjectDocument::cancelLoading() { loader_.cancel(); }

void ProjectDocument::deleteJob(qint64 jobId) {
    if (project_) loader_.deleteJob(path_, jobId);
}

void ProjectDocument::saveAs(const QString& path) {
    if (!project_) return;
    loader_.copyProject(path_, QFileInfo(path).absoluteFilePath());
}

RecorderFactory ProjectDocument::recorderFactory() const {
    if (!project_) return {};
    const std::string path = path_.toStdString();
    return [path](const JobRequest& request, const DeviceInfo& device) -> std::unique_ptr<JobRecorder> {
        return std::make_unique<ProjectJobRecorder>(path, request, device);
    };
}

void ProjectDocument::poll() {
    if (!project_) return;
    try {
        if (!project_->changed_since(seen_version_)) return;
    } catch (const std::exception&) {
        return;  // a busy or vanished file: try again on the next tick
    }
    refreshJobs();
    refreshInputs();
}

void ProjectDocument::refreshJobs() {
    try {
        jobs_ = project_->jobs();
    } catch (const std::exception&) {
        return;
    }
    emit jobsChanged();
}

void ProjectDocument::refreshInputs() {
    std::vector<store::InputInfo> infos;
    try {
        infos = project_->inputs();
    } catch (const std::exception&) {
        return;
    }
    bool added = false;
    for (const auto& info : infos) {
        if (info.kind != store::InputKind::SequenceSet) continue;  // profiles: the profile-search issue
        if (input(info.id)) continue;
        inputs_.push_back(SequenceInput{info, nullptr, {}});
        added = true;
    }
    if (!added) return;
    emit inputsChanged();
    if (!loader_.busy()) {
        std::vector<store::InputInfo> missing;
        for (const auto& i : inputs_)
            if (!i.set && i.error.isEmpty()) missing.push_back(i.info);
        loader_.loadInputs(path_, missing);
    }
}

void ProjectDocument::inputLoaded(const QString&, std::shared_ptr<const SequenceSet> set, qint64 id,
                                  const QString& projectPath) {
    if (!project_ || !id || projectPath != path_) return;  // read for a project closed since
    auto it = std::find_if(inputs_.begin(), inputs_.end(), [id](const SequenceInput& i) { return i.info.id == id; });
    if (it == inputs_.end()) {
        try {
            inputs_.push_back(SequenceInput{project_->input(id), nullptr, {}});
        } catch (const std::exception&) {
            return;
        }
        it = inputs_.end() - 1;
    }
    if (it->set) return;  // the same file again: the project already had it
    it->set = std::move(set);
    it->error.clear();
    emit inputsChanged();
}

ProjectDocument::Throughput ProjectDocument::throughput(const std::string& device) const {
    double cells = 0, seconds = 0;
    int count = 0;
    for (const auto& j : jobs_) {
        if (j.state != store::JobState::Done || j.spec.devices != device) continue;
        if (j.spec.parameters.count("long")) continue;  // another algorithm: see longPairSpeed
        if (j.started_ms <= 0 || j.ended_ms < j.started_ms || j.progress.cells_done == 0) continue;
        // Times are kept in milliseconds: a job that finished within the same
        // millisecond counts as 1 ms, a lower bound on its speed.
        const double s = double(std::max<std::int64_t>(j.ended_ms - j.started_ms, 1)) / 1000.0;
        cells += double(j.progress.cells_done);
        seconds += s;
        ++count;
    }
    return {seconds > 0 ? cells / seconds : 0, count};
}

ProjectDocument::LongPairSpeed ProjectDocument::longPairSpeed(const std::string& device,
                                                              const std::string& strategy) const {
    auto long_job = [](const store::JobInfo& j) {
        auto it = j.spec.parameters.find("long");
        return j.state == store::JobState::Done && it != j.spec.parameters.end() && it->second != "no";
    };
    // bench --long points: series "long/<strategy>[/s<streams>]", end-to-end
    // seconds and cells in their parameters.
    const store::BenchPoint* best = nullptr;
    bool best_matches = false;
    double best_speed = 0;
    for (const auto& j : jobs_) {
        if (!long_job(j) || j.spec.command != "bench" || j.counts.bench_points == 0 || !project_) continue;
        auto cached = long_bench_points_.find(j.id);
        if (cached == long_bench_points_.end()) {
            std::vector<store::BenchPoint> points;
            try {
                points = project_->bench_points(j.id, 0, 10'000).rows;
            } catch (const std::exception&) {
            }
            cached = long_bench_points_.emplace(j.id, std::move(points)).first;
        }
        for (const store::BenchPoint& p : cached->second) {
            if (p.device != device || p.series.rfind("long/", 0) != 0) continue;
            auto number = [&p](const char* key) {
                auto it = p.parameters.find(key);
                return it == p.parameters.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
            };
            const double cells = number("cells"), seconds = number("seconds");
            if (cells <= 0 || seconds <= 0) continue;
            const std::string own = "long/" + strategy;
            const bool matches = p.series == own || p.series.rfind(own + "/", 0) == 0;
            if (!best || (matches && !best_matches) || (matches == best_matches && p.x > best->x)) {
                best = &p;
                best_matches = matches;
                best_speed = cells / seconds;
            }
        }
    }
    if (best)
        return {best_speed, tr("bench --long, %1 at length %2").arg(QString::fromStdString(best->series)).arg(best->x, 0, 'g', 6)};
    double cells = 0, seconds = 0;
    int count = 0;
    for (const auto& j : jobs_) {
        if (!long_job(j) || j.spec.command == "bench" || j.spec.devices != device) continue;
        if (j.started_ms <= 0 || j.ended_ms < j.started_ms || j.progress.cells_done == 0) continue;
        cells += double(j.progress.cells_done);
        seconds += double(std::max<std::int64_t>(j.ended_ms - j.started_ms, 1)) / 1000.0;
        ++count;
    }
    if (count == 0 || seconds <= 0) return {};
    return {cells / seconds, tr("%n earlier long-pair job(s) on this device", nullptr, count)};
}

}  // namespace alignscope::ui
