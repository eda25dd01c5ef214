// JobHeatmapView: the chosen pair in the heatmap, and in the stepper on demand.
#include "views/job_heatmap_view.hpp"

#include "project_document.hpp"
#include "views/heatmap/heatmap_view.hpp"
#include "views/heatmap/stepper_view.hpp"

#include <alignscope/error.hpp>

#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <cstdlib>

namespace alignscope::ui {

JobHeatmapView::JobHeatmapView(ProjectDocument& document, QWidget* parent) : JobResultView(document, parent) {
    heatmap_ = new DpHeatmapView(this);
    heatmap_->setObjectName("dpHeatmap");
    stepper_ = new DpStepperView(this);
    stepper_->setObjectName("dpStepper");
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName("dpTabs");
    tabs_->setDocumentMode(true);
    tabs_->addTab(heatmap_, tr("DP heatmap"));
    tabs_->addTab(stepper_, tr("Step through the DP"));
    row_box_ = new QSpinBox(this);
    row_box_->setObjectName("alignmentNumber");
    row_box_->setPrefix(tr("alignment "));
    row_box_->setMinimum(1);
    row_box_->setToolTip(tr("Which of the job's alignments (as numbered in the Alignment view)"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(noteLabel(), 1);
    bar->addWidget(row_box_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(bar);
    layout->addWidget(tabs_, 1);

    connect(row_box_, &QSpinBox::editingFinished, this, [this] {
        if (row_box_->value() - 1 == row_) return;
        row_ = row_box_->value() - 1;
        requested_job_ = shownJob();
        reload();
        emit alignmentRowChosen(shownJob(), row_);
    });
    connect(tabs_, &QTabWidget::currentChanged, this, [this](int index) {
        if (tabs_->widget(index) == stepper_) prepareStepper();
    });
    connect(heatmap_, &DpHeatmapView::failed, this, [this](const QString& message) { setNote(message); });
}

void JobHeatmapView::showAlignmentRow(qint64 jobId, qint64 row) {
    requested_job_ = jobId;
    if (row == row_ && jobId == shownJob()) return;
    row_ = row;
    if (jobId == shownJob()) reload();
}

bool JobHeatmapView::settled() const { return !heatmap_->busy(); }

bool JobHeatmapView::stepperAvailable() const { return tabs_->isTabEnabled(tabs_->indexOf(stepper_)); }

void JobHeatmapView::showStepper() {
    if (stepperAvailable()) tabs_->setCurrentWidget(stepper_);
}

void JobHeatmapView::load(const store::JobInfo* job) {
    pair_.reset();
    stepper_ready_ = false;
    const int stepper_tab = tabs_->indexOf(stepper_);
    tabs_->setTabEnabled(stepper_tab, false);
    tabs_->setCurrentWidget(heatmap_);
    row_box_->setEnabled(false);
    if (!job) {
        // Never the previous job's axes: an empty view says what fills it.
        heatmap_->clear(tr("No pair to draw"));
        setNote(noJobText() + tr(" The DP heatmap draws a pairwise or long-pair job's matrix."));
        return;
    }
    if (requested_job_ != job->id) row_ = 0;
    store::Project* project = document().project();
    // A long pair is drawn from what its job saved, never from its sequences:
    // the stage-1 overview (a grid of block maxima of the whole matrix) with
    // the alignment's path, so a job of megabases opens as fast as a small one.
    const bool long_pair = job->spec.parameters.count("long") > 0;
    if ((job->counts.alignments == 0 || long_pair) && job->counts.heatmaps > 0 && project) {
        const std::vector<store::Heatmap> saved = project->heatmaps(job->id);
        if (!saved.empty()) {
            heatmap_->setStoredHeatmap(saved.front());
            const store::Heatmap& h = saved.front();
            if (long_pair)
                setNote(tr("%1: long pair %2 (%L3) against %4 (%L5), the stage-1 overview of the whole matrix "
                           "(%6 x %7 blocks) with the alignment's path")
                            .arg(jobTitle(*job), QString::fromStdString(h.query_id))
                            .arg(h.source_rows - 1)
                            .arg(QString::fromStdString(h.target_id))
                            .arg(h.source_cols - 1)
                            .arg(h.rows)
                            .arg(h.cols));
            else
                setNote(tr("%1: saved %2 heatmap of %3 against %4")
                            .arg(jobTitle(*job), QString::fromStdString(h.label), QString::fromStdString(h.query_id),
                                 QString::fromStdString(h.target_id)));
            tabs_->setTabToolTip(stepper_tab, tr("The stepper needs the sequences of a small pair"));
            return;
        }
    }
    if (long_pair && job->counts.alignments > 0) {
        // No overview: the job ran on a CPU device (Myers-Miller keeps none).
        // A pair small enough is drawn again from its sequences; a larger one is not.
        std::uint64_t cells = 0;
        if (auto it = job->spec.parameters.find("cells"); it != job->spec.parameters.end())
            cells = std::strtoull(it->second.c_str(), nullptr, 10);
        if (cells == 0 || cells > long_recompute_cell_limit) {
            heatmap_->clear(tr("No overview of the DP matrix was saved"));
            setNote(tr("%1: a long pair run on %2, which keeps no overview of the DP matrix (CPU devices align it "
                       "by Myers-Miller), and at %L3 cells too large to compute again here. A GPU run saves one.")
                        .arg(jobTitle(*job), QString::fromStdString(job->spec.devices))
                        .arg(qulonglong(cells)));
            return;
        }
    }
    if (job->counts.alignments == 0) {
        heatmap_->clear(tr("No alignment in job %1").arg(job->id));
        setNote(tr("Job %1 holds no alignments to draw the DP matrix of: choose a pairwise or long-pair job in the "
                   "Jobs tab, or run one.")
                    .arg(job->id));
        return;
    }
    row_ = std::clamp<qint64>(row_, 0, job->counts.alignments - 1);
    {
        const QSignalBlocker quiet(row_box_);
        row_box_->setMaximum(int(std::min<qint64>(job->counts.alignments, 1'000'000'000)));
        row_box_->setValue(int(row_ + 1));
        row_box_->setEnabled(job->counts.alignments > 1);
    }
    pair_ = alignedPair(*job, row_);
    heatmap_->setAlignedPair(*pair_);
    const std::uint64_t cells = (pair_->query.residues.size() + 1) * std::uint64_t(pair_->target.residues.size() + 1);
    const bool small = cells <= stepper_cell_limit;
    tabs_->setTabEnabled(stepper_tab, small);
    tabs_->setTabToolTip(stepper_tab, small ? tr("Fill the matrix cell by cell, row by row or by anti-diagonal, "
                                                 "then trace back")
                                            : tr("For pairs up to %L1 DP cells; this one has %L2")
                                                  .arg(qulonglong(stepper_cell_limit))
                                                  .arg(qulonglong(cells)));
    setNote(tr("%1: alignment %2 of %3, %4 (%5) against %6 (%7)%8")
                .arg(jobTitle(*job))
                .arg(row_ + 1)
                .arg(job->counts.alignments)
                .arg(QString::fromStdString(pair_->query.id))
                .arg(pair_->query.residues.size())
                .arg(QString::fromStdString(pair_->target.id))
                .arg(pair_->target.residues.size())
                .arg(heatmap_->isDownsampled() ? tr(", block maxima (zoom in to refine)") : QString()));
}

void JobHeatmapView::prepareStepper() {
    if (stepper_ready_ || !pair_) return;
    try {
        stepper_->setPair(pair_->query.residues, pair_->target.residues, pair_->scheme, pair_->options);
        stepper_ready_ = true;
    } catch (const std::exception& e) {
        setNote(tr("The stepper cannot show this pair: %1").arg(e.what()));
        tabs_->setCurrentWidget(heatmap_);
    }
}

}  // namespace alignscope::ui
