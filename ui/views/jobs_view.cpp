// JobsView: a sorted table over JobsModel with a progress-bar delegate.
#include "views/jobs_view.hpp"

#include "project_document.hpp"

#include <QApplication>
#include <QHeaderView>
#include <QMenu>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QVBoxLayout>

namespace alignscope::ui {

namespace {

// Draws the Progress column as a progress bar.
class ProgressDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        const int percent = index.data(JobsModel::PercentRole).toInt();
        if (percent < 0) {
            QStyledItemDelegate::paint(painter, option, index);
            return;
        }
        QStyleOptionProgressBar bar;
        bar.rect = option.rect.adjusted(2, 3, -2, -3);
        bar.minimum = 0;
        bar.maximum = 100;
        bar.progress = percent;
        bar.text = index.data(Qt::DisplayRole).toString();
        bar.textVisible = true;
        bar.state = option.state | QStyle::State_Horizontal;
        if (option.state & QStyle::State_Selected) painter->fillRect(option.rect, option.palette.highlight());
        const QWidget* widget = option.widget;
        QStyle* style = widget ? widget->style() : QApplication::style();
        style->drawControl(QStyle::CE_ProgressBar, &bar, painter, widget);
    }
};

}  // namespace

JobsView::JobsView(ProjectDocument& document, QWidget* parent)
    : ResultView(document, parent), model_([&document](qint64 id) { return document.job(id); }) {
    sorted_.setSourceModel(&model_);
    sorted_.setSortRole(JobsModel::SortRole);
    table_ = new QTableView(this);
    table_->setObjectName("jobsTable");
    table_->setToolTip(tr("Every job of the project; double-click one to show its results in the views"));
    table_->setModel(&sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(JobsModel::Id, Qt::DescendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setAlternatingRowColors(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 8);
    table_->horizontalHeader()->setStretchLastSection(true);
    // Fitting the columns measures the rows on screen and at most this many
    // more, however long the list.
    table_->horizontalHeader()->setResizeContentsPrecision(100);
    table_->setItemDelegateForColumn(JobsModel::Percent, new ProgressDelegate(table_));
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
    table_->setWordWrap(false);
    empty_ = new QLabel(this);
    empty_->setObjectName("emptyState");
    empty_->setWordWrap(true);
    empty_->setAlignment(Qt::AlignCenter);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(empty_);
    layout->addWidget(table_);

    auto refresh_names = [this] {
        std::map<qint64, QString> names;
        for (const auto& input : this->document().inputs()) names[input.info.id] = input.label();
        model_.setInputNames(std::move(names));
    };
    connect(&document, &ProjectDocument::inputsChanged, this, refresh_names);
    connect(&document, &ProjectDocument::opened, this, refresh_names);
    connect(&document, &ProjectDocument::jobsChanged, this, &JobsView::jobsChanged);
    connect(&document, &ProjectDocument::opened, this, [this] { jobsChanged(JobListChange{true, {}, {}, {}}); });
    refresh_names();
    jobsChanged(JobListChange{true, {}, {}, {}});

    connect(table_, &QTableView::activated, this,
            [this](const QModelIndex& index) { emit jobActivated(index.data(JobsModel::JobIdRole).toLongLong()); });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                emit jobSelected(current.isValid() ? current.data(JobsModel::JobIdRole).toLongLong() : 0);
            });
    connect(table_, &QWidget::customContextMenuRequested, this, &JobsView::showContextMenu);
}

void JobsView::jobsChanged(const JobListChange& change) {
    if (change.reset) {
        const qint64 selected = shownJob();
        std::vector<qint64> ids;
        ids.reserve(document().jobs().size());
        for (const store::JobInfo& job : document().jobs()) ids.push_back(job.id);
        model_.setJobs(std::move(ids));
        table_->resizeColumnsToContents();
        if (selected) showJob(selected);
    } else {
        // Only the rows that changed: the sorted view places each one, the
        // selection stays on its job.
        model_.removeJobs(change.removed);
        std::vector<qint64> rows;
        rows.reserve(change.updated.size() + change.added.size());
        for (const auto* ids : {&change.updated, &change.added})
            for (const qint64 id : *ids)
                if (document().job(id)) rows.push_back(id);
        model_.updateJobs(rows);
        fitColumns(change.added);
    }
    updateEmptyText();
}

void JobsView::fitColumns(const std::vector<qint64>& jobs) {
    if (jobs.empty()) return;
    const int grid = table_->showGrid() ? 1 : 0;
    for (int column = 0; column < JobsModel::ColumnCount; ++column) {
        int width = table_->columnWidth(column);
        for (const qint64 id : jobs) {
            const int row = model_.rowOf(id);
            if (row < 0) continue;
            const QModelIndex cell = sorted_.mapFromSource(model_.index(row, column));
            width = std::max(width, table_->sizeHintForIndex(cell).width() + grid);
        }
        if (width > table_->columnWidth(column)) table_->setColumnWidth(column, width);
    }
}

void JobsView::updateEmptyText() {
    // Nothing listed: say what fills the list.
    QString empty;
    if (!document().isOpen())
        empty = tr("No project is open: File › New Project… or Open Project…, or start with alignscope --demo.");
    else if (model_.rowCount() == 0)
        empty =
            tr("No jobs yet: load sequences, set up the Job panel and press Run (Ctrl+R); jobs run from "
               "alignscope-cli with --project appear here too.");
    empty_->setText(empty);
    empty_->setVisible(!empty.isEmpty());
}

void JobsView::showJob(qint64 jobId) {
    const int row = model_.rowOf(jobId);
    if (row < 0) {
        table_->clearSelection();
        return;
    }
    const QModelIndex index = sorted_.mapFromSource(model_.index(row, 0));
    table_->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(index);
}

QString JobsView::emptyText() const { return empty_->isVisibleTo(this) ? empty_->text() : QString(); }

qint64 JobsView::shownJob() const {
    const QModelIndex current = table_->selectionModel()->currentIndex();
    return current.isValid() ? current.data(JobsModel::JobIdRole).toLongLong() : 0;
}

void JobsView::showContextMenu(const QPoint& at) {
    const QModelIndex index = table_->indexAt(at);
    if (!index.isValid()) return;
    const qint64 id = index.data(JobsModel::JobIdRole).toLongLong();
    const store::JobInfo* job = document().job(id);
    if (!job) return;
    QMenu menu(this);
    menu.addAction(tr("Show results"), this, [this, id] { emit jobActivated(id); });
    const bool active = job->state == store::JobState::Running || job->state == store::JobState::Queued;
    QAction* cancel = menu.addAction(tr("Cancel"), this, [this, id] { emit cancelRequested(id); });
    cancel->setEnabled(active);
    QAction* remove = menu.addAction(tr("Delete from project"), this, [this, id] { emit deleteRequested(id); });
    remove->setEnabled(!active);
    menu.exec(table_->viewport()->mapToGlobal(at));
}

}  // namespace alignscope::ui
