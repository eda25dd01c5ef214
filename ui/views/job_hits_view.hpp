// The window's hits view (id "hits"): a search job's ranked hits
// (views/hits) with the alignment of the selected hit.
#pragma once

#include "views/job_result_view.hpp"

namespace alignscope::ui {

class HitsView;

class JobHitsView : public JobResultView {
    Q_OBJECT
public:
    JobHitsView(ProjectDocument& document, QWidget* parent = nullptr);

    bool canShow(const store::JobInfo& job) const override { return job.counts.hits > 0; }
    HitsView& hits() const { return *hits_; }

protected:
    void load(const store::JobInfo* job) override;

private:
    HitsView* hits_ = nullptr;
};

}  // namespace alignscope::ui
