// AlignmentListModel: keyset pages of the job's alignments, reduced to what a row shows.
#include "models/alignment_list_model.hpp"

#include <alignscope/io/alignment_format.hpp>
#include <alignscope/store/project.hpp>

#include <algorithm>

namespace alignscope::ui {

AlignmentListModel::AlignmentListModel(QObject* parent) : KeysetPageModel(parent) {}

namespace {

AlignmentListRow list_row(const Alignment& a) {
    AlignmentListRow r;
    r.query_id = a.query_id;
    r.target_id = a.target_id;
    r.score = a.score;
    r.query_begin = a.query_begin;
    r.query_end = a.query_end;
    r.target_begin = a.target_begin;
    r.target_end = a.target_end;
    r.length = a.stats.length;
    r.identity = a.identity();
    r.traceback = a.has_traceback();
    return r;
}

}  // namespace

void AlignmentListModel::setJob(const store::Project* project, std::int64_t job_id, int scale, int page_size) {
    beginResetModel();
    scale_ = std::max(scale, 1);
    total_ = project ? project->job(job_id).counts.alignments : 0;
    PageReader read;
    if (project)
        read = [project, job_id](std::int64_t from, int limit) {
            const store::Page<Alignment> page = project->alignments(job_id, from, limit);
            store::Page<AlignmentListRow> rows;
            rows.first = page.first;
            rows.more = page.more;
            rows.rows.reserve(page.rows.size());
            for (const Alignment& a : page.rows) rows.rows.push_back(list_row(a));
            return rows;
        };
    startPaging(std::move(read), total_ > 0, page_size);
    endResetModel();
}

void AlignmentListModel::clear() {
    beginResetModel();
    startPaging(nullptr, false, 1);
    total_ = 0;
    endResetModel();
}

int AlignmentListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant AlignmentListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const AlignmentListRow& r = rows_[std::size_t(index.row())];
    if (role == Qt::TextAlignmentRole)
        return index.column() == Query || index.column() == Target ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                                                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    auto range = [](std::int64_t b, std::int64_t e) {
        return b == 0 && e == 0 ? QString("-") : QString("%1-%2").arg(b).arg(e);
    };
    switch (index.column()) {
        case Number: return index.row() + 1;
        case Query: return QString::fromStdString(r.query_id);
        case Target: return QString::fromStdString(r.target_id);
        case Score: return QString::fromStdString(format_score(double(r.score) / scale_));
        case Identity: return r.traceback ? QString::number(100 * r.identity, 'f', 1) + " %" : QString("-");
        case Length: return r.traceback ? QVariant(qlonglong(r.length)) : QVariant(QString("-"));
        case QueryRange: return range(r.query_begin, r.query_end);
        case TargetRange: return range(r.target_begin, r.target_end);
        default: return {};
    }
}

QVariant AlignmentListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
    static const char* names[] = {"#", "Query", "Target", "Score", "Identity", "Length", "Query range", "Target range"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace alignscope::ui
