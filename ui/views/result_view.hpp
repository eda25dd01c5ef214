// The slot every view plugs into: a widget that shows part of the open project
// (usually the results of one job), placed by the window in a tab and rendered
// on its own by `alignscope --screenshot --view ID`. Views are listed in
// view_catalog.cpp; the ones that draw a job's results from the project build
// on JobResultView (job_result_view.hpp).
#pragma once

#include <alignscope/store/project.hpp>

#include <QWidget>

#include <vector>

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
    // The job to show when none is named (--screenshot without --job): the most
    // recent job this view can show; 0 for views whose default is not one job
    // (the GCUPS view then shows the project's whole benchmark series).
    virtual qint64 defaultJob(const std::vector<store::JobInfo>& jobs) const;
    // False while the view still computes what it shows on a worker thread
    // (a large DP heatmap): --screenshot waits for it.
    virtual bool settled() const { return true; }
    // One alignment of a job was chosen elsewhere (a row of the alignment list):
    // views about one pair follow it. `row` is 0-based, in the job's order.
    virtual void showAlignmentRow(qint64 jobId, qint64 row) {
        (void)jobId;
        (void)row;
    }

signals:
    // The user chose a job in this view (e.g. double-click in the jobs list).
    void jobActivated(qint64 jobId);
    // The user chose alignment `row` of `jobId` in this view.
    void alignmentRowChosen(qint64 jobId, qint64 row);

protected:
    ProjectDocument& document() const { return document_; }

private:
    ProjectDocument& document_;
};

}  // namespace alignscope::ui
