// The JobRecorder that writes a GUI job into the project through the store's
// JobRecording: the full specification, links to the input sets, progress,
// results (a long pair's pipeline statistics and stage-1 overview among them)
// and the final state, on a connection of its own.
#pragma once

#include "jobs/job_queue.hpp"

#include <alignscope/store/job_recording.hpp>

#include <memory>
#include <string>

namespace alignscope::ui {

class ProjectJobRecorder : public JobRecorder {
public:
    // Records the job as queued. Throws Error when the project cannot take it.
    ProjectJobRecorder(const std::string& project_path, const JobRequest& request, const DeviceInfo& device);

    std::int64_t job_id() const override { return job_id_; }
    void started() override;
    void progress(const Progress& progress) override;
    void hits(const std::vector<store::Hit>& hits, const std::vector<Alignment>& alignments) override;
    void long_pair(const store::LongPairStats& stats, const store::Heatmap* overview) override;
    void done(const std::vector<Alignment>& alignments, const std::vector<TimelineEvent>& timeline,
              const std::string& clock_source) override;
    void failed(const std::string& message) override;
    void cancelled() override;
    void interrupted() override;

    // What the project keeps of a request besides the engine settings.
    static store::JobSpec spec_for(const JobRequest& request, const DeviceInfo& device);

private:
    std::unique_ptr<store::JobRecording> recording_;
    std::int64_t job_id_ = 0;
};

}  // namespace alignscope::ui
