// The jobs list: every job of the project with its state, device, time and
// GCUPS, newest first, with a progress bar per running job. Double-click (or
// Enter) opens a job's results in the other views. It follows the project's
// job list row by row (a finished job changes one row), never rebuilt whole
// while jobs run, and reads the rows from the project document's list.
#pragma once

#include "models/jobs_model.hpp"
#include "project_document.hpp"
#include "views/result_view.hpp"

#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>

namespace alignscope::ui {

class JobsView : public ResultView {
    Q_OBJECT
public:
    JobsView(ProjectDocument& document, QWidget* parent = nullptr);

    void showJob(qint64 jobId) override;  // selects its row
    qint64 shownJob() const override;     // the selected job
    bool canShow(const store::JobInfo&) const override { return true; }

    JobsModel& model() { return model_; }
    QTableView& table() { return *table_; }
    // The line over an empty list: what would fill it (empty when jobs are listed).
    QString emptyText() const;

signals:
    // The selection moved to this job (0: none).
    void jobSelected(qint64 jobId);
    void cancelRequested(qint64 jobId);
    void deleteRequested(qint64 jobId);

private:
    void showContextMenu(const QPoint& at);
    void jobsChanged(const JobListChange& change);
    // Widens columns to fit these rows (never narrows: the user's widths stay).
    void fitColumns(const std::vector<qint64>& jobs);
    void updateEmptyText();

    JobsModel model_;
    QSortFilterProxyModel sorted_;
    QTableView* table_;
    QLabel* empty_;
};

}  // namespace alignscope::ui
