// JobAlignmentsView: the alignment list drives the viewer.
#include "views/job_alignments_view.hpp"

#include "project_document.hpp"
#include "views/alignment/alignment_view.hpp"
#include "views/alignment_export.hpp"

#include <alignscope/error.hpp>

#include <algorithm>

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace alignscope::ui {

JobAlignmentsView::JobAlignmentsView(ProjectDocument& document, QWidget* parent) : JobResultView(document, parent) {
    table_ = new QTableView(this);
    table_->setObjectName("alignmentList");
    table_->setModel(&model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
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
    export_ = new QPushButton(tr("Export alignments…"), this);
    export_->setObjectName("exportAlignments");
    export_->setToolTip(
        tr("All, the selected or the shown alignment, as EMBOSS pair, aligned FASTA, Clustal, "
           "Stockholm, SAM, TSV or JSON"));
    export_->setEnabled(false);
    connect(export_, &QPushButton::clicked, this, [this] { exportDialog(); });
    auto* top = new QHBoxLayout;
    top->addWidget(noteLabel(), 1);
    top->addWidget(export_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    connect(table_, &QWidget::customContextMenuRequested, this, [this](const QPoint& at) {
        if (!export_->isEnabled()) return;
        QMenu menu(this);
        menu.addAction(tr("Export alignments…"), this, [this] { exportDialog(); });
        menu.exec(table_->viewport()->mapToGlobal(at));
    });

    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid() || current.row() == row_) return;
                showRow(current.row());
                emit alignmentRowChosen(shownJob(), row_);
            });
}

std::vector<qint64> JobAlignmentsView::selectedRows() const {
    std::vector<qint64> rows;
    for (const QModelIndex& index : table_->selectionModel()->selectedRows()) rows.push_back(index.row());
    std::sort(rows.begin(), rows.end());
    return rows;
}

ExportAlignmentsDialog* JobAlignmentsView::exportDialog() {
    const store::JobInfo* job = document().job(shownJob());
    if (!job || job->counts.alignments == 0) return nullptr;
    const QString folder = QSettings().value("folders/alignments", QDir::homePath()).toString();
    auto* dialog = new ExportAlignmentsDialog(job->counts.alignments, selectedRows(), row_,
                                              QDir(folder).filePath(QStringLiteral("job%1.txt").arg(job->id)), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    const qint64 id = job->id;
    connect(dialog, &ExportAlignmentsDialog::saveRequested, this, [this, dialog, id] {
        const store::JobInfo* shown = document().job(id);
        if (!shown) return dialog->setError(tr("Job %1 is gone").arg(id));
        try {
            std::vector<AlignedPair> pairs;
            for (qint64 row : dialog->rows()) pairs.push_back(alignedPair(*shown, row));
            write_alignments(dialog->path(), dialog->format(), pairs);
        } catch (const std::exception& e) {
            return dialog->setError(QString::fromUtf8(e.what()));
        }
        QSettings().setValue("folders/alignments", QFileInfo(dialog->path()).absolutePath());
        dialog->accept();
    });
    dialog->open();
    return dialog;
}

void JobAlignmentsView::load(const store::JobInfo* job) {
    viewer_->clear();
    export_->setEnabled(job && job->counts.alignments > 0);
    if (!job) {
        model_.clear();
        setNote(noJobText());
        return;
    }
    if (job->counts.alignments == 0) {
        model_.clear();
        setNote(tr("Job %1 holds no alignments (%2).")
                    .arg(job->id)
                    .arg(QString::fromUtf8(store::to_string(job->state).data())));
        return;
    }
    model_.setJob(document().project(), job->id, document().scheme(job->id).scale);
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
