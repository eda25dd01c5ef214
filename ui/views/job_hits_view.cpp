// JobHitsView: a search job's hits from the project.
#include "views/job_hits_view.hpp"

#include "project_document.hpp"
#include "views/hits/hits_view.hpp"

#include <QLabel>
#include <QVBoxLayout>

namespace alignscope::ui {

JobHitsView::JobHitsView(ProjectDocument& document, QWidget* parent) : JobResultView(document, parent) {
    hits_ = new HitsView(this);
    hits_->setObjectName("hits");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(noteLabel());
    layout->addWidget(hits_, 1);
}

void JobHitsView::load(const store::JobInfo* job) {
    if (!job || job->counts.hits == 0) {
        hits_->setHits({}, {}, {}, ScoringScheme{}, AlignOptions{});
        setNote(job ? tr("Job %1 holds no database hits (run a database search from the Job panel).").arg(job->id)
                    : noJobText() + tr(" Hits come from a database search (Mode: Database search)."));
        return;
    }
    hits_->loadFromProject(*document().project(), job->id);
    QString note = tr("%1: %n hit(s)", nullptr, int(job->counts.hits)).arg(jobTitle(*job));
    // The first page now (the table pages in the rest as it scrolls), so the
    // best hit's alignment shows at once.
    if (hits_->model()->canFetchMore({})) hits_->model()->fetchMore({});
    if (hits_->model()->rowCount() > 0 && !hits_->model()->hit(0).bits)
        note += tr(". Bits and E-values show '-': there are no Karlin-Altschul statistics for %1 with gaps %2/%3 "
                   "(BLAST publishes them for some matrices and gap costs, such as BLOSUM62 with existence 11 and "
                   "extension 1, which is 12/1 here and the search's default); scores and ranks are exact")
                    .arg(QString::fromStdString(job->spec.matrix_name))
                    .arg(job->spec.gap_open)
                    .arg(job->spec.gap_extend);
    setNote(note);
    hits_->selectHit(0);
}

}  // namespace alignscope::ui
