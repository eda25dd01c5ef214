// JobTimelineView: a job's events, or an imported trace.
#include "views/job_timeline_view.hpp"

#include "project_document.hpp"
#include "views/timeline/timeline_view.hpp"

#include <QFileInfo>
#include <QLabel>
#include <QVBoxLayout>

namespace alignscope::ui {

JobTimelineView::JobTimelineView(ProjectDocument& document, QWidget* parent) : JobResultView(document, parent) {
    timeline_ = new TimelineView(this);
    timeline_->setObjectName("timeline");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(noteLabel());
    layout->addWidget(timeline_, 1);
}

void JobTimelineView::load(const store::JobInfo* job) {
    if (!job) {
        timeline_->setEvents({});
        setNote(noJobText() + tr(" A Chrome trace can be imported too (File › Import Chrome Trace…)."));
        return;
    }
    if (job->counts.timeline_events == 0) {
        timeline_->setEvents({});
        if (job->spec.command == "gui")
            setNote(tr("Job %1 recorded no timeline events: %2 reported none for this kind of job (%3). Pairwise "
                       "jobs and database searches record theirs; run one to fill the timeline.")
                        .arg(job->id)
                        .arg(QString::fromStdString(job->spec.devices), jobTitle(*job)));
        else
            setNote(tr("Job %1 recorded no timeline events: a command-line job records them when run with "
                       "--timeline, and only on GPUs.")
                        .arg(job->id));
        return;
    }
    timeline_->loadFromProject(*document().project(), job->id);
    setNote(tr("%1: %n event(s)", nullptr, int(job->counts.timeline_events)).arg(jobTitle(*job)));
}

void JobTimelineView::importChromeTrace(const QString& path) {
    timeline_->importChromeTrace(path);
    forgetJob();
    setNote(tr("%1, imported read-only; choose a job in the Jobs list to go back to the project.")
                .arg(QFileInfo(path).fileName()));
}

}  // namespace alignscope::ui
