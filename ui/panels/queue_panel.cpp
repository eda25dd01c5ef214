// QueuePanel: a row per queued or running job, kept from the queue's signals.
#include "panels/queue_panel.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

namespace alignscope::ui {

namespace {
constexpr int ticket_role = Qt::UserRole + 1;
}

QueuePanel::QueuePanel(JobQueue& queue, QWidget* parent) : QWidget(parent), queue_(queue) {
    list_ = new QTreeWidget(this);
    list_->setObjectName("queueList");
    list_->setRootIsDecorated(false);
    list_->setColumnCount(ColumnCount);
    list_->setHeaderLabels({tr("Job"), tr("What"), tr("State"), QString()});
    list_->header()->setStretchLastSection(false);
    list_->header()->setSectionResizeMode(What, QHeaderView::Stretch);
    list_->header()->setSectionResizeMode(State, QHeaderView::Stretch);
    list_->header()->setSectionResizeMode(Cancel, QHeaderView::ResizeToContents);
    list_->setWordWrap(false);
    list_->setTextElideMode(Qt::ElideRight);
    auto* empty = new QLabel(tr("No job queued or running. Run queues a job; jobs run one after another."), this);
    empty->setObjectName("queueEmpty");
    empty->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(empty);
    layout->addWidget(list_, 1);
    auto show_empty = [this, empty] { empty->setVisible(list_->topLevelItemCount() == 0); };
    show_empty();

    connect(&queue_, &JobQueue::jobQueued, this, [this, show_empty](quint64 ticket, const QString& summary) {
        auto* item = new QTreeWidgetItem(list_);
        item->setData(Job, ticket_role, ticket);
        item->setText(Job, QStringLiteral("…"));
        item->setText(What, summary);
        item->setToolTip(What, summary);
        item->setText(State, display_name(JobPhase::Waiting));
        auto* cancel = new QToolButton(list_);
        cancel->setObjectName(QStringLiteral("cancelTicket%1").arg(ticket));
        cancel->setIcon(QIcon(":/icons/cancel.svg"));
        cancel->setText(tr("Cancel"));
        cancel->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        cancel->setAutoRaise(true);
        cancel->setToolTip(tr("Cancel this job only; the others stay queued"));
        connect(cancel, &QToolButton::clicked, this, [this, ticket, cancel] {
            queue_.cancel(ticket);
            cancel->setEnabled(false);
            updateState(ticket, tr("cancelling"));
        });
        list_->setItemWidget(item, Cancel, cancel);
        show_empty();
    });
    connect(&queue_, &JobQueue::jobRecorded, this, [this](quint64 ticket, qint64 id) {
        if (QTreeWidgetItem* item = row(ticket)) item->setText(Job, QString::number(id));
    });
    connect(&queue_, &JobQueue::jobStarted, this,
            [this](quint64 ticket) { updateState(ticket, display_name(JobPhase::Preparing)); });
    connect(&queue_, &JobQueue::jobProgress, this, [this](quint64 ticket, const JobProgress& progress) {
        if (QTreeWidgetItem* item = row(ticket); item && list_->itemWidget(item, Cancel)->isEnabled())
            updateState(ticket, tr("running: %1").arg(progress.text()));
    });
    connect(&queue_, &JobQueue::jobFinished, this, [this, show_empty](quint64 ticket, const JobOutcome&) {
        delete row(ticket);
        show_empty();
    });
}

QTreeWidgetItem* QueuePanel::row(quint64 ticket) const {
    for (int k = 0; k < list_->topLevelItemCount(); ++k)
        if (list_->topLevelItem(k)->data(Job, ticket_role).toULongLong() == ticket) return list_->topLevelItem(k);
    return nullptr;
}

void QueuePanel::updateState(quint64 ticket, const QString& state) {
    if (QTreeWidgetItem* item = row(ticket)) {
        item->setText(State, state);
        item->setToolTip(State, state);
    }
}

}  // namespace alignscope::ui
