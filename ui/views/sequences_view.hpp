// The sequence table: every sequence of the project's sets with id, length,
// alphabet, description and file; filter by text, alphabet and length; the
// selection can be a job's queries or targets; files can be removed from the
// project again (unless a job used them). Empty, it says how to load some.
#pragma once

#include "jobs/job_request.hpp"
#include "models/sequence_filter_model.hpp"
#include "models/sequence_table_model.hpp"
#include "views/result_view.hpp"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>

namespace alignscope::ui {

class SequencesView : public ResultView {
    Q_OBJECT
public:
    SequencesView(ProjectDocument& document, QWidget* parent = nullptr);

    void showJob(qint64) override {}
    bool canShow(const store::JobInfo&) const override { return true; }

    // The selected sequences, in table order. The alphabet is the first
    // record's; `mixedAlphabets` says whether the selection mixes protein and
    // nucleotides.
    SequenceList selection(bool* mixedAlphabets = nullptr) const;
    int selectedCount() const;

    SequenceTableModel& model() { return model_; }
    SequenceFilterModel& filter() { return filter_; }
    QTableView& table() { return *table_; }
    QLineEdit& filterEdit() { return *text_; }
    // The files (project inputs) of the selected rows.
    std::vector<qint64> selectedInputs() const;
    // Asks, then removes the files of the selected rows from the project; the
    // box is returned opened (window-modal), null when nothing is selected.
    QMessageBox* confirmRemoveSelectedFiles();
    // Removes them without asking; false (and the reason in lastError) when
    // the project keeps one (a job used it).
    bool removeInputs(const std::vector<qint64>& ids);
    QString lastError() const { return last_error_; }
    // The line shown over an empty table: what would fill it.
    QString emptyText() const;

signals:
    void selectionChanged();

private:
    void rebuild();
    void updateCount();

    SequenceTableModel model_;
    SequenceFilterModel filter_;
    QLineEdit* text_;
    QComboBox* alphabet_;
    QSpinBox* min_length_;
    QTableView* table_;
    QLabel* count_;
    QLabel* empty_;
    QPushButton* remove_;
    QString last_error_;
};

}  // namespace alignscope::ui
