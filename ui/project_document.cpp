// ProjectDocument: the GUI thread's view of one project file, and the job
// list's catch-up (new jobs by id, changing rows again, deletions by count).
#include "project_document.hpp"

#include "jobs/project_job_recorder.hpp"

#include <alignscope/error.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace alignscope::ui {

namespace {

// Whether a job's row may still change: queued or running, or final without
// its end written. The store reports a job whose owner let go of it as it
// ended (or as interrupted) from a second look at its state, while the rest
// of the row may come from just before: its end, last progress and result
// counts then come with the next read. The store writes the end with every
// final state.
bool may_change(const store::JobInfo& job) { return !store::is_final(job.state) || job.ended_ms <= 0; }

// A long-pair job or a bench --long run (what longPairModel draws on).
bool long_pair_job(const store::JobInfo& job) {
    auto it = job.spec.parameters.find("long");
    return it != job.spec.parameters.end() && it->second != "no";
}

// The row as the list keeps it: the spec without the matrix text (about 2 KB
// for BLOSUM62, the same in most jobs); ProjectDocument::scheme reads it back.
store::JobInfo&& list_row(store::JobInfo&& job) {
    job.spec.matrix_text.clear();
    job.spec.matrix_text.shrink_to_fit();
    return std::move(job);
}

// The fields of a job's row that change after it is recorded.
bool same_row(const store::JobInfo& a, const store::JobInfo& b) {
    const auto& p = a.progress;
    const auto& q = b.progress;
    const auto& c = a.counts;
    const auto& d = b.counts;
    return a.state == b.state && a.started_ms == b.started_ms && a.ended_ms == b.ended_ms && a.error == b.error &&
           p.cells_done == q.cells_done && p.cells_total == q.cells_total && p.items_done == q.items_done &&
           p.items_total == q.items_total && a.clock_source == b.clock_source && c.alignments == d.alignments &&
           c.hits == d.hits && c.long_alignments == d.long_alignments && c.heatmaps == d.heatmaps &&
           c.timeline_events == d.timeline_events && c.bench_points == d.bench_points &&
           c.long_pair_stats == d.long_pair_stats && a.inputs == b.inputs;
}

std::vector<store::JobInfo>::const_iterator find_job(const std::vector<store::JobInfo>& jobs, qint64 id) {
    auto it = std::lower_bound(jobs.begin(), jobs.end(), id,
                               [](const store::JobInfo& j, qint64 wanted) { return j.id < wanted; });
    return it != jobs.end() && it->id == id ? it : jobs.end();
}

void erase_id(std::vector<qint64>& ids, qint64 id) {
    auto it = std::lower_bound(ids.begin(), ids.end(), id);
    if (it != ids.end() && *it == id) ids.erase(it);
}

}  // namespace

QString SequenceInput::label() const { return QFileInfo(QString::fromStdString(info.path)).fileName(); }

QStringList sequence_set_warnings(const SequenceSet& set, std::size_t records_checked) {
    QStringList warnings;
    if (const std::string line = set.duplicate_id_warning(); !line.empty()) warnings << QString::fromStdString(line);
    const bool protein = set.alphabet == AlphabetKind::Protein;
    std::size_t checked = 0, other = 0;
    const Sequence* first_other = nullptr;
    for (const Sequence& s : set.records) {
        if (checked == records_checked) break;
        ++checked;
        if (s.residues.size() < 8) continue;  // too short to tell
        if ((detect_alphabet(s.residues) == AlphabetKind::Protein) != protein) {
            if (!first_other) first_other = &s;
            ++other;
        }
    }
    if (other > 0) {
        const QString name = QFileInfo(QString::fromStdString(set.path)).fileName();
        const QString kind = protein ? QObject::tr("nucleotides") : QObject::tr("protein");
        const QString of = checked < set.records.size()
                               ? QObject::tr("%1 of the first %2 records").arg(other).arg(checked)
                               : QObject::tr("%1 of %2 records").arg(other).arg(checked);
        warnings << QObject::tr(
                        "%1: %2 look like %3 (the first is %4) but the file is read as %5: one file should "
                        "hold one kind of sequence")
                        .arg(name, of, kind, QString::fromStdString(first_other->id),
                             QString::fromUtf8(to_string(set.alphabet).data()));
    }
    return warnings;
}

ProjectDocument::ProjectDocument(QObject* parent) : QObject(parent) {
    poll_timer_.setInterval(poll_interval_ms);
    connect(&poll_timer_, &QTimer::timeout, this, &ProjectDocument::poll);
    connect(&loader_, &ProjectLoader::projectOpened, this, &ProjectDocument::adopt);
    connect(&loader_, &ProjectLoader::projectOpenFailed, this, &ProjectDocument::openFailed);
    connect(&loader_, &ProjectLoader::loadStarted, this, &ProjectDocument::loadStarted);
    connect(&loader_, &ProjectLoader::loadProgress, this, &ProjectDocument::loadProgress);
    connect(&loader_, &ProjectLoader::loaded, this, &ProjectDocument::inputLoaded);
    connect(&loader_, &ProjectLoader::loadFailed, this, [this](const QString& path, const QString& message, qint64 id) {
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
        else
            emit loadingIdle();
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
    inputs_.clear();
    jobs_.clear();
    last_job_id_ = 0;
    watched_.clear();
    long_jobs_.clear();
    speeds_.clear();
    long_bench_points_.clear();
    long_job_stats_.clear();
    reloadJobs();
    refreshInputs();  // the loader reads them once it is idle (see the idle handler)
    poll_timer_.start();
    emit opened(path);
}

const store::JobInfo* ProjectDocument::job(qint64 id) const {
    auto it = find_job(jobs_, id);
    return it == jobs_.end() ? nullptr : &*it;
}

ScoringScheme ProjectDocument::scheme(qint64 id) const {
    if (!project_) throw Error("no project is open");
    return project_->job(id).spec.scheme();
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

void ProjectDocument::removeInput(qint64 id) {
    if (!project_) throw Error("no project is open");
    project_->delete_input(id);
    inputs_.erase(std::remove_if(inputs_.begin(), inputs_.end(),
                                 [id](const SequenceInput& i) { return i.info.id == id; }),
                  inputs_.end());
    emit inputsChanged();
}

QString ProjectDocument::setting(const QString& key) const {
    if (!project_) return {};
    try {
        return QString::fromStdString(project_->setting(key.toStdString()).value_or(std::string()));
    } catch (const std::exception&) {
        return {};
    }
}

void ProjectDocument::setSetting(const QString& key, const QString& value) {
    if (!project_ || project_->read_only()) return;
    try {
        project_->set_setting(key.toStdString(), value.toStdString());
    } catch (const std::exception&) {
        // A busy or full disk: the settings are a convenience, the next change tries again.
    }
}

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
        if (!project_->changed_since(seen_version_) && !reload_jobs_) return;
    } catch (const std::exception&) {
        return;  // a busy or vanished file: try again on the next tick
    }
    refreshJobs();
    refreshInputs();
}

void ProjectDocument::reloadJobs() {
    std::vector<store::JobInfo> jobs;
    try {
        jobs = project_->jobs();
    } catch (const std::exception&) {
        reload_jobs_ = true;  // a busy or damaged file: again at the next poll
        return;
    }
    reload_jobs_ = false;
    jobs_ = std::move(jobs);
    for (store::JobInfo& j : jobs_) list_row(std::move(j));
    std::sort(jobs_.begin(), jobs_.end(), [](const store::JobInfo& a, const store::JobInfo& b) { return a.id < b.id; });
    last_job_id_ = jobs_.empty() ? 0 : jobs_.back().id;
    watched_.clear();
    long_jobs_.clear();
    long_bench_points_.clear();
    long_job_stats_.clear();
    for (const auto& j : jobs_) {
        if (may_change(j)) watched_.push_back(j.id);
        if (long_pair_job(j)) long_jobs_.push_back(j.id);
    }
    recountSpeeds();
    JobListChange change;
    change.reset = true;
    emit jobsChanged(change);
}

void ProjectDocument::refreshJobs() {
    if (reload_jobs_) {
        reloadJobs();
        return;
    }
    // Everything is read before anything changes, so a failed read leaves the
    // list as it was (and the next poll reads it whole).
    std::vector<store::JobInfo> added, again;
    std::vector<qint64> removed;
    try {
        const std::vector<std::int64_t> new_ids = project_->job_ids(last_job_id_);
        const std::int64_t count = project_->job_count();
        if (count != std::int64_t(jobs_.size() + new_ids.size())) {
            // Some were deleted (or a job came between the two reads): which?
            const std::vector<std::int64_t> all = project_->job_ids(0);
            for (const auto& j : jobs_)
                if (!std::binary_search(all.begin(), all.end(), j.id)) removed.push_back(j.id);
        }
        for (const std::int64_t id : new_ids) added.push_back(list_row(project_->job(id)));
        for (const qint64 id : watched_)
            if (!std::binary_search(removed.begin(), removed.end(), id)) again.push_back(list_row(project_->job(id)));
    } catch (const std::exception&) {
        reload_jobs_ = true;  // a busy file, or a job deleted between two reads
        return;
    }

    JobListChange change;
    if (!removed.empty()) {
        jobs_.erase(std::remove_if(jobs_.begin(), jobs_.end(),
                                   [&](const store::JobInfo& j) {
                                       return std::binary_search(removed.begin(), removed.end(), j.id);
                                   }),
                    jobs_.end());
        for (const qint64 id : removed) {
            erase_id(watched_, id);
            erase_id(long_jobs_, id);
            long_bench_points_.erase(id);
            long_job_stats_.erase(id);
        }
        recountSpeeds();
        change.removed = std::move(removed);
    }
    for (store::JobInfo& now : again) {
        const auto found = find_job(jobs_, now.id);
        if (found == jobs_.end()) continue;
        store::JobInfo& row = jobs_[std::size_t(found - jobs_.cbegin())];
        if (same_row(row, now)) continue;
        row = std::move(now);
        if (!may_change(row)) erase_id(watched_, row.id);
        noteJob(row);
        change.updated.push_back(row.id);
    }
    for (store::JobInfo& j : added) {
        if (j.id <= last_job_id_) continue;  // ids only grow; never twice
        last_job_id_ = j.id;
        if (may_change(j)) watched_.push_back(j.id);
        if (long_pair_job(j)) long_jobs_.push_back(j.id);
        change.added.push_back(j.id);
        jobs_.push_back(std::move(j));
        noteJob(jobs_.back());
    }
    if (!change.empty()) emit jobsChanged(change);
}

void ProjectDocument::noteJob(const store::JobInfo& j) {
    // Only finished jobs of one kind measure a speed (see throughput): a
    // search's says nothing of a pairwise job's, nor traceback of a
    // score-only run. A finished job never changes again, so it counts once.
    if (j.state != store::JobState::Done) return;
    if (j.started_ms <= 0 || j.ended_ms < j.started_ms || j.progress.cells_done == 0) return;
    std::string kind = measuredKind(j.spec);
    if (kind.empty()) return;
    // Times are kept in milliseconds: a job that finished within the same
    // millisecond counts as 1 ms, a lower bound on its speed.
    Speed& speed = speeds_[{j.spec.devices, std::move(kind)}];
    speed.cells += double(j.progress.cells_done);
    speed.seconds += double(std::max<std::int64_t>(j.ended_ms - j.started_ms, 1)) / 1000.0;
    ++speed.jobs;
}

void ProjectDocument::recountSpeeds() {
    speeds_.clear();
    for (const auto& j : jobs_) noteJob(j);
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
        // A file just read (a project's own inputs are checked when loaded).
        if (set)
            for (const QString& warning : sequence_set_warnings(*set))
                emit loadWarning(QString::fromStdString(set->path), warning);
    }
    if (it->set) return;  // the same file again: the project already had it
    it->set = std::move(set);
    it->error.clear();
    emit inputsChanged();
}

std::string ProjectDocument::measuredKind(const store::JobSpec& spec) {
    const auto& p = spec.parameters;
    auto value = [&p](const char* key) {
        auto it = p.find(key);
        return it == p.end() ? std::string() : it->second;
    };
    const std::string traceback = value("traceback");
    const bool scores_only = traceback == "off" || traceback == "false" || traceback == "no";
    if (p.count("search")) return std::string("search/") + (scores_only ? "scores" : "traceback");
    if (p.count("long") && value("long") != "no") return {};  // its own model: see longPairModel
    if (spec.command == "bench" || spec.command == "verify") return {};
    return "pairs/" + spec.mode + "/" + (scores_only ? "scores" : "traceback");
}

std::string ProjectDocument::measuredKind(const JobRequest& request) {
    if (request.is_long_pair()) return {};
    if (request.is_search()) return std::string("search/") + (request.traceback ? "traceback" : "scores");
    return "pairs/" + std::string(to_string(request.align_options().mode)) + "/" +
           (request.traceback ? "traceback" : "scores");
}

ProjectDocument::Throughput ProjectDocument::throughput(const std::string& device, const std::string& kind) const {
    auto it = speeds_.find({device, kind});
    if (kind.empty() || it == speeds_.end()) return {};
    const Speed& s = it->second;
    return {s.seconds > 0 ? s.cells / s.seconds : 0, s.jobs};
}

ProjectDocument::LongPairModel ProjectDocument::longPairModel(const std::string& device_asked,
                                                              const std::string& strategy, bool traceback) const {
    // Observations of exactly this device set count ("gpu:0,1", however a
    // point or job spelt it); a set is not predicted from its members' models.
    const std::string device = device_set_id(device_asked);
    // (A job resumed from a checkpoint timed only part of its pair: no sample.)
    auto long_job = [](const store::JobInfo& j) {
        return j.state == store::JobState::Done && long_pair_job(j) && !j.spec.parameters.count("resume");
    };
    // Only the project's long jobs (kept apart as they come), not every job.
    std::vector<const store::JobInfo*> long_jobs;
    for (const qint64 id : long_jobs_)
        if (const store::JobInfo* j = job(id); j && long_job(*j)) long_jobs.push_back(j);
    // bench --long points: series "long/<strategy>[/s<streams>]".
    std::vector<RuntimeSample> own, other;
    bool full_for_score = false;
    const std::string own_series = "long/" + strategy;
    for (const store::JobInfo* lj : long_jobs) {
        const store::JobInfo& j = *lj;
        if (j.spec.command != "bench" || j.counts.bench_points == 0 || !project_) continue;
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
            if (device_set_id(p.device) != device) continue;
            auto sample = long_bench_sample(p, traceback);
            if (!sample && !traceback && (sample = long_bench_sample(p, true))) full_for_score = true;
            if (!sample) continue;
            const bool matches = strategy.empty() || p.series == own_series || p.series.rfind(own_series + "/", 0) == 0;
            (matches ? own : other).push_back(*sample);
        }
    }
    const bool other_strategies = own.empty() && !other.empty();
    std::vector<RuntimeSample> samples = other_strategies ? other : own;
    const int bench_count = static_cast<int>(samples.size());
    // Earlier long-pair jobs: their pair's lengths and wall time.
    int job_count = 0;
    for (const store::JobInfo* lj : long_jobs) {
        const store::JobInfo& j = *lj;
        // "gpu" (all GPUs, as the workbench records it) or "auto": the set that
        // ran is the one the job's statistics name ("gpu:0+gpu:1").
        const std::string spec_device = device_set_id(j.spec.devices);
        const bool named_by_stats = spec_device == "gpu" || spec_device == "auto";
        if (j.spec.command == "bench" || (!named_by_stats && spec_device != device)) continue;
        auto tb = j.spec.parameters.find("traceback");
        if ((tb == j.spec.parameters.end() || tb->second != "off") != traceback) continue;
        auto cached = long_job_stats_.find(j.id);
        if (cached == long_job_stats_.end() && project_) {
            std::vector<store::LongPairStats> stats;
            try {
                stats = project_->long_pair_stats(j.id);
            } catch (const std::exception&) {
            }
            cached = long_job_stats_.emplace(j.id, std::move(stats)).first;
        }
        RuntimeSample s;
        const store::LongPairStats* stats =
            cached != long_job_stats_.end() && !cached->second.empty() ? &cached->second.front() : nullptr;
        if (named_by_stats && (!stats || device_set_id(stats->device) != device)) continue;
        if (stats && !strategy.empty() && !stats->strategy.empty() && stats->strategy != strategy) continue;
        if (stats && stats->query_length > 0 && stats->target_length > 0 && stats->seconds > 0) {
            s = {double(stats->query_length), double(stats->target_length), stats->seconds};
        } else {
            // No statistics: a square pair of its cells, timed by the job's clock.
            if (j.started_ms <= 0 || j.ended_ms < j.started_ms || j.progress.cells_done == 0) continue;
            const double side = std::sqrt(double(j.progress.cells_done));
            s = {side, side, double(std::max<std::int64_t>(j.ended_ms - j.started_ms, 1)) / 1000.0};
        }
        samples.push_back(s);
        ++job_count;
    }
    LongPairModel out;
    if (samples.empty()) return out;
    out.model = fit_runtime_model(samples);
    QStringList parts;
    if (bench_count)
        parts << (bench_count == 1 ? tr("1 bench --long point") : tr("%1 bench --long points").arg(bench_count));
    if (job_count)
        parts << (job_count == 1 ? tr("1 earlier long-pair job") : tr("%1 earlier long-pair jobs").arg(job_count));
    QString text = tr("model of %1 on %2").arg(parts.join(tr(" and ")), QString::fromStdString(device));
    if (other_strategies) text += tr(" (other strategies)");
    if (full_for_score) text += tr(" (full-alignment times)");
    if (out.model.exact())
        text += out.model.sizes == 1 ? tr(", exact fit through 1 size")
                                     : tr(", exact fit through %1 sizes").arg(out.model.sizes);
    else if (out.model.relative_rms < 0.01)
        text += tr(", under ±1 %");
    else
        text += tr(", ±%1 %").arg(std::round(out.model.relative_rms * 100), 0, 'f', 0);
    out.source = text;
    return out;
}

}  // namespace alignscope::ui
