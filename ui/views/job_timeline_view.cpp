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
        const bool cpu = job->spec.devices.rfind("cpu", 0) == 0;
        if (job->spec.command == "gui")
            setNote(cpu ? tr("Job %1 ran on the CPU (%2), which launches no kernels or copies to draw: a job on a GPU "
                             "fills the timeline.")
                              .arg(job->id)
                              .arg(QString::fromStdString(job->spec.devices))
                        : tr("Job %1 recorded no timeline events on %2.").arg(job->id).arg(
                              QString::fromStdString(job->spec.devices)));
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
