// ProjectJobRecorder: JobRequest -> store::JobSpec, and the recording's life.
#include "jobs/project_job_recorder.hpp"

#include <alignscope/search/search_settings.hpp>

namespace alignscope::ui {

namespace {

// Ids of a hand-picked list, kept with the job so it can be traced; a list
// long enough to bloat the record is summarised by its count and label.
std::string record_ids(const SequenceList& list) {
    constexpr std::size_t max_listed = 1000;
    if (!list.records || list.size() > max_listed) return {};
    std::string ids;
    for (const auto& s : *list.records) ids += (ids.empty() ? "" : ",") + s.id;
    return ids;
}

}  // namespace

store::JobSpec ProjectJobRecorder::spec_for(const JobRequest& request, const DeviceInfo& device) {
    if (request.is_search()) {
        SearchOptions search;
        search.top = request.top;
        search.traceback = request.traceback;
        store::JobSpec spec = search_job_spec("gui", scan_setup(request), search, device);
        spec.devices = request.device;
        auto& p = spec.parameters;
        p["queries"] = request.queries.label;
        p["targets"] = request.targets.label;  // the jobs list names both sides by these
        p["database"] = request.targets.label;
        p["query_count"] = std::to_string(request.queries.size());
        p["database_count"] = std::to_string(request.targets.size());
        p["cells"] = std::to_string(request.cell_count());
        if (auto ids = record_ids(request.queries); !ids.empty()) p["query_ids"] = ids;
        return spec;
    }
    store::JobSpec spec = store::JobSpec::for_pair_job("gui", job_settings(request), device);
    spec.devices = request.device;
    auto& p = spec.parameters;
    if (request.is_long_pair()) {
        // As `alignscope-cli align --long` records it, with the pair named.
        p["long"] = "yes";
        p["queries"] = request.queries.label;
        p["targets"] = request.targets.label;
        p["pairs"] = std::to_string(request.pair_count());
        p["cells"] = std::to_string(request.cell_count());
        p["traceback"] = request.traceback ? "on" : "off";
        p["overview_size"] = std::to_string(long_overview_size);
        if (request.queries.size() > 0) p["query_ids"] = request.queries.records->front().id;
        if (request.targets.size() > 0) p["target_ids"] = request.targets.records->front().id;
        if (device.kind == "gpu") {
            const LongRunnerSettings settings = long_runner_settings(request);
            p["strategy"] = settings.strategy;
            if (settings.kernels) p["kernels"] = std::to_string(settings.kernels);
            spec.streams = settings.streams;
        }
        return spec;
    }
    p["pairing"] = request.pairing == Pairing::AllAgainstAll ? "all-against-all" : "record-by-record";
    p["queries"] = request.queries.label;
    p["targets"] = request.targets.label;
    p["query_count"] = std::to_string(request.queries.size());
    p["target_count"] = std::to_string(request.targets.size());
    p["pairs"] = std::to_string(request.pair_count());
    p["cells"] = std::to_string(request.cell_count());
    p["traceback"] = request.traceback ? "on" : "off";
    if (auto ids = record_ids(request.queries); !ids.empty()) p["query_ids"] = ids;
    if (auto ids = record_ids(request.targets); !ids.empty()) p["target_ids"] = ids;
    return spec;
}

ProjectJobRecorder::ProjectJobRecorder(const std::string& project_path, const JobRequest& request,
                                       const DeviceInfo& device) {
    store::RecordingOptions options;
    options.queued = true;
    recording_ = std::make_unique<store::JobRecording>(project_path, spec_for(request, device), options);
    job_id_ = recording_->job_id();
    for (std::int64_t id : request.queries.set_ids) recording_->link_input(id, "query");
    for (std::int64_t id : request.targets.set_ids)
        recording_->link_input(id, request.is_search() ? "database" : "target");
}

void ProjectJobRecorder::started() { recording_->start(); }

void ProjectJobRecorder::progress(const Progress& progress) { recording_->progress(progress); }

void ProjectJobRecorder::hits(const std::vector<store::Hit>& hits, const std::vector<Alignment>& alignments) {
    recording_->add_hits(hits);
    if (!alignments.empty()) recording_->add_alignments(alignments);
}

void ProjectJobRecorder::long_pair(const store::LongPairStats& stats, const store::Heatmap* overview) {
    recording_->add_long_pair_stats(stats);
    if (overview) recording_->add_heatmap(*overview);
}

void ProjectJobRecorder::done(const std::vector<Alignment>& alignments, const std::vector<TimelineEvent>& timeline,
                              const std::string& clock_source) {
    if (!alignments.empty()) recording_->add_alignments(alignments);
    if (!timeline.empty()) recording_->add_timeline(timeline, clock_source);
    recording_->finish_done();
}

void ProjectJobRecorder::failed(const std::string& message) { recording_->finish_failed(message); }

void ProjectJobRecorder::cancelled() { recording_->finish_cancelled(); }

void ProjectJobRecorder::interrupted() {
    // The store calls a job interrupted when the process that owned it is gone;
    // finishing the recording now would misstate it as failed or cancelled. So
    // the recording is left open, holding its owner lock, until the process
    // ends (the application is closing): the kernel then drops the lock, and
    // the next open of the project shows the job as interrupted.
    (void)recording_.release();
}

}  // namespace alignscope::ui
