// The window's alignment view (id "alignment"): the job's alignments as a
// paged list over the alignment viewer (views/alignment) of the chosen one,
// with its rulers, colouring, search, copy and exports. The chosen row is
// announced, so the DP heatmap shows the same pair.
#pragma once

#include "models/alignment_list_model.hpp"
#include "views/job_result_view.hpp"

#include <vector>

class QPushButton;
class QTableView;

namespace alignscope::ui {

class AlignmentView;
class ExportAlignmentsDialog;

class JobAlignmentsView : public JobResultView {
    Q_OBJECT
public:
    JobAlignmentsView(ProjectDocument& document, QWidget* parent = nullptr);

    bool canShow(const store::JobInfo& job) const override { return job.counts.alignments > 0; }
    void showAlignmentRow(qint64 jobId, qint64 row) override;

    // Selects alignment `row` (0-based) of the shown job and shows it.
    void selectRow(qint64 row);
    qint64 currentRow() const { return row_; }
    AlignmentListModel& model() { return model_; }
    QTableView& table() const { return *table_; }
    AlignmentView& viewer() const { return *viewer_; }
    // Export alignments…: the dialog (open, window-modal), or null without alignments.
    ExportAlignmentsDialog* exportDialog();
    // The selected rows of the list, 0-based, in order.
    std::vector<qint64> selectedRows() const;

protected:
    void load(const store::JobInfo* job) override;

private:
    void showRow(qint64 row);

    AlignmentListModel model_;
    QTableView* table_ = nullptr;
    AlignmentView* viewer_ = nullptr;
    QPushButton* export_ = nullptr;
    qint64 row_ = 0;
    qint64 requested_job_ = 0, requested_row_ = 0;  // a row asked for before the job was loaded
};

}  // namespace alignscope::ui
