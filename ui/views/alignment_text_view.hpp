// A job's pairwise alignments as EMBOSS-like pair text (the same writer as the
// CLI and the project export), one page at a time from the project. The plain
// first version of the alignment view; the views issue's viewer (colouring,
// ruler, virtualised scrolling) replaces it under the same view id.
#pragma once

#include "views/result_view.hpp"

#include <QLabel>
#include <QPlainTextEdit>
#include <QToolButton>

namespace alignscope::ui {

class AlignmentTextView : public ResultView {
    Q_OBJECT
public:
    AlignmentTextView(ProjectDocument& document, QWidget* parent = nullptr);

    void showJob(qint64 jobId) override;
    qint64 shownJob() const override { return job_id_; }
    bool canShow(const store::JobInfo& job) const override { return job.counts.alignments > 0; }

    void showPage(qint64 first);  // the page starting at alignment `first` (0-based)
    QString text() const { return text_->toPlainText(); }
    qint64 firstShown() const { return first_; }

    // Pair text is verbose: a page of long alignments is already a lot of text.
    static constexpr int page_size = 20;
    static constexpr std::int64_t page_characters = 200'000;

private:
    void refresh();

    qint64 job_id_ = 0;
    qint64 first_ = 0;
    qint64 page_shown_ = 0;  // alignments on the page shown
    qint64 shown_count_ = -1;  // alignments the job had when last shown
    QLabel* title_;
    QLabel* range_;
    QToolButton* previous_;
    QToolButton* next_;
    QPlainTextEdit* text_;
};

}  // namespace alignscope::ui
