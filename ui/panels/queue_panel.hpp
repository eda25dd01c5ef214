// The job queue on screen: every job this window has queued and not yet seen
// end, in order, with its state (waiting, or the phase it runs) and a button
// that cancels that job alone.
#pragma once

#include "jobs/job_queue.hpp"

#include <QTreeWidget>
#include <QWidget>

namespace alignscope::ui {

class QueuePanel : public QWidget {
    Q_OBJECT
public:
    explicit QueuePanel(JobQueue& queue, QWidget* parent = nullptr);

    QTreeWidget& list() const { return *list_; }
    // The row of a queued or running job; null once it ended.
    QTreeWidgetItem* row(quint64 ticket) const;
    enum Column { Job, What, State, Cancel, ColumnCount };

private:
    void updateState(quint64 ticket, const QString& state);

    JobQueue& queue_;
    QTreeWidget* list_;
};

}  // namespace alignscope::ui
