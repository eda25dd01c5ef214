// The window's timeline view (id "timeline"): the kernel timeline
// (views/timeline) of the chosen job's recorded events, or a Chrome trace
// file imported read-only (File > Import Chrome Trace…) until a job is chosen.
#pragma once

#include "views/job_result_view.hpp"

namespace alignscope::ui {

class TimelineView;

class JobTimelineView : public JobResultView {
    Q_OBJECT
public:
    JobTimelineView(ProjectDocument& document, QWidget* parent = nullptr);

    bool canShow(const store::JobInfo& job) const override { return job.counts.timeline_events > 0; }

    // Shows the trace instead of the job's events. Throws alignscope::Error
    // naming the file.
    void importChromeTrace(const QString& path);
    TimelineView& timeline() const { return *timeline_; }

protected:
    void load(const store::JobInfo* job) override;

private:
    TimelineView* timeline_ = nullptr;
};

}  // namespace alignscope::ui
