// JobAlignmentsView: the alignment list drives the viewer.
#include "views/job_alignments_view.hpp"

#include "project_document.hpp"
#include "views/alignment/alignment_view.hpp"

#include <alignscope/error.hpp>

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace alignscope::ui {

JobAlignmentsView::JobAlignmentsView(ProjectDocument& document, QWidget* parent) : JobResultView(document, parent) {
    table_ = new QTableView(this);
    table_->setObjectName("alignmentList");
    table_->setModel(&model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->horizontalHeader()->setStretchLastSection(true);
    viewer_ = new AlignmentView(this);
    viewer_->setObjectName("alignmentViewer");
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(table_);
    split->addWidget(viewer_);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 3);
    split->setSizes({160, 560});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(noteLabel());
    layout->addWidget(split, 1);

    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid() || current.row() == row_) return;
                showRow(current.row());
                emit alignmentRowChosen(shownJob(), row_);
            });
}

void JobAlignmentsView::load(const store::JobInfo* job) {
    viewer_->clear();
    if (!job) {
        model_.clear();
        setNote(tr("No job chosen: select a job in the Jobs list."));
        return;
    }
    if (job->counts.alignments == 0) {
        model_.clear();
        setNote(tr("Job %1 holds no alignments (%2).")
                    .arg(job->id)
                    .arg(QString::fromUtf8(store::to_string(job->state).data())));
        return;
    }
    model_.setJob(document().project(), job->id, job->spec.scheme().scale);
    setNote(tr("%1: %n alignment(s)", nullptr, int(job->counts.alignments)).arg(jobTitle(*job)));
    const qint64 row = requested_job_ == job->id ? requested_row_ : 0;
    row_ = -1;
    selectRow(std::min<qint64>(row, job->counts.alignments - 1));
    table_->resizeColumnsToContents();  // over the first page, now fetched
}

void JobAlignmentsView::showAlignmentRow(qint64 jobId, qint64 row) {
    requested_job_ = jobId;
    requested_row_ = row;
    if (jobId == shownJob() && !loadPending() && row != row_) selectRow(row);
}

void JobAlignmentsView::selectRow(qint64 row) {
    if (!model_.ensureRow(row)) return;
    const QSignalBlocker quiet(table_->selectionModel());
    table_->selectRow(int(row));
    table_->setCurrentIndex(model_.index(int(row), 0));
    table_->scrollTo(model_.index(int(row), 0));
    showRow(row);
}

void JobAlignmentsView::showRow(qint64 row) {
    row_ = row;
    const store::JobInfo* job = document().job(shownJob());
    if (!job) return;
    try {
        const AlignedPair pair = alignedPair(*job, row);
        if (!pair.alignment.has_traceback()) {
            viewer_->clear();
            setNote(tr("%1: alignment %2 of %3 was computed without traceback (scores and coordinates only)")
                        .arg(jobTitle(*job))
                        .arg(row + 1)
                        .arg(job->counts.alignments));
            return;
        }
        viewer_->setAlignedPair(pair);
        setNote(tr("%1: alignment %2 of %3, %4 against %5")
                    .arg(jobTitle(*job))
                    .arg(row + 1)
                    .arg(job->counts.alignments)
                    .arg(QString::fromStdString(pair.query.id), QString::fromStdString(pair.target.id)));
    } catch (const std::exception& e) {
        viewer_->clear();
        setNote(tr("Alignment %1 of job %2 cannot be shown: %3").arg(row + 1).arg(job->id).arg(e.what()));
    }
}

}  // namespace alignscope::ui
