// The slot every view plugs into: a widget that shows part of the open project
// (usually the results of one job), placed by the window in a tab and rendered
// on its own by `alignscope --screenshot --view ID`. The views issue adds its
// heatmap, timeline and GCUPS views, and replaces the alignment view, by
// implementing this and listing them in view_catalog.cpp.
#pragma once

#include <alignscope/store/project.hpp>

#include <QWidget>

namespace alignscope::ui {

class ProjectDocument;

class ResultView : public QWidget {
    Q_OBJECT
public:
    ResultView(ProjectDocument& document, QWidget* parent = nullptr);

    // Shows this job's results; 0 shows none. Views that are not about one job
    // (the jobs list, the sequence table) select it or ignore it.
    virtual void showJob(qint64 jobId) = 0;
    virtual qint64 shownJob() const { return 0; }
    // Whether the job holds anything this view draws; the window and
    // --screenshot use it to pick the most recent job worth showing.
    virtual bool canShow(const store::JobInfo& job) const = 0;

signals:
    // The user chose a job in this view (e.g. double-click in the jobs list).
    void jobActivated(qint64 jobId);

protected:
    ProjectDocument& document() const { return document_; }

private:
    ProjectDocument& document_;
};

}  // namespace alignscope::ui
