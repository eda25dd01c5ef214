// The hit table model: display roles, paging and sorting.
#include "views/hits/hit_table_model.hpp"

#include <alignscope/io/alignment_format.hpp>
#include <alignscope/store/project.hpp>

#include <algorithm>
#include <numeric>

namespace alignscope::ui {

HitTableModel::HitTableModel(QObject* parent) : KeysetPageModel(parent) {}

void HitTableModel::setHits(std::vector<store::Hit> hits, int scale) {
    beginResetModel();
    std::vector<Row> rows;
    rows.reserve(hits.size());
    for (std::size_t k = 0; k < hits.size(); ++k)
        rows.push_back({std::move(hits[k]), static_cast<std::int64_t>(k), std::nullopt, IdentitySource::None});
    setAllRows(std::move(rows));
    total_ = static_cast<std::int64_t>(rows_.size());
    scale_ = std::max(scale, 1);
    endResetModel();
}

namespace {

// A page of the job's hits as rows, each with the identity of its own stored
// alignment when the job keeps alignments (one keyed read per hit).
store::Page<HitTableRow> hit_rows(const store::Project& project, std::int64_t job_id, bool stored_alignments,
                                  std::int64_t from, int limit) {
    store::Page<store::Hit> page = project.hits(job_id, from, limit);
    store::Page<HitTableRow> rows;
    rows.first = page.first;
    rows.more = page.more;
    rows.rows.reserve(page.rows.size());
    for (std::size_t k = 0; k < page.rows.size(); ++k) {
        HitTableRow row{std::move(page.rows[k]), page.first + static_cast<std::int64_t>(k), std::nullopt,
                        HitIdentitySource::None};
        if (stored_alignments) {
            try {
                if (const auto a = project.hit_alignment(job_id, row.ordinal); a && a->stats.length > 0) {
                    row.identity = 100.0 * double(a->stats.identities) / double(a->stats.length);
                    row.identity_source = HitIdentitySource::Stored;
                }
            } catch (const std::exception&) {
                // No alignment to read: the identity stays unknown.
            }
        }
        rows.rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace

void HitTableModel::setProject(const store::Project* project, std::int64_t job_id, int scale, int page_size) {
    beginResetModel();
    scale_ = std::max(scale, 1);
    const store::JobInfo job = project ? project->job(job_id) : store::JobInfo{};
    total_ = job.counts.hits;
    PageReader read;
    if (project)
        read = [project, job_id, stored = job.counts.alignments > 0](std::int64_t from, int limit) {
            return hit_rows(*project, job_id, stored, from, limit);
        };
    startPaging(std::move(read), total_ > 0, page_size);
    endResetModel();
}

int HitTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant HitTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const store::Hit& h = hit(index.row());
    const Row& r = rows_[static_cast<std::size_t>(index.row())];
    const bool text_column = index.column() == Query || index.column() == Target || index.column() == Description;
    if (role == Qt::TextAlignmentRole)
        return text_column ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    // Ids are cut at the end in the table: the full id on hover.
    if (role == Qt::ToolTipRole && (index.column() == Query || index.column() == Target))
        return QString::fromStdString(index.column() == Query ? h.query_id : h.target_id);
    if (role == Qt::ToolTipRole && index.column() == Description) return data(index, Qt::DisplayRole);
    if (role == Qt::ToolTipRole && index.column() == Identity) {
        switch (r.identity_source) {
            case IdentitySource::Stored:
                return tr("Identical columns over the columns of the search's stored alignment");
            case IdentitySource::Realigned:
                return tr("From the alignment made here when the hit was selected (the project holds none for it)");
            case IdentitySource::None:
                return tr(
                    "No alignment of this hit is stored (a search without traceback keeps only scores and ends): "
                    "select the hit to align it, which fills this in");
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Coverage)
        return coverage(h) ? tr("Query residues %1-%2 of %3 are in the alignment")
                                 .arg(h.query_begin)
                                 .arg(h.query_end)
                                 .arg(h.query_length)
                           : tr("The search kept no start coordinate for this hit, so its coverage is unknown");
    if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
    const bool sort_key = role == Qt::UserRole;
    auto range = [](std::int64_t b, std::int64_t e) {
        return b == 0 && e == 0 ? QString("-") : QString("%1-%2").arg(b).arg(e);
    };
    switch (index.column()) {
        case Rank: return qlonglong(h.rank);
        case Query: return QString::fromStdString(h.query_id);
        case Target: return QString::fromStdString(h.target_id);
        case Description: return describe_ ? QString::fromStdString(describe_(h.target_id)) : QString();
        case Identity:
            if (!r.identity) return sort_key ? QVariant(-1.0) : QVariant(QString("-"));
            return sort_key ? QVariant(*r.identity) : QVariant(QString::number(*r.identity, 'f', 1));
        case Coverage: {
            const auto c = coverage(h);
            if (!c) return sort_key ? QVariant(-1.0) : QVariant(QString("-"));
            return sort_key ? QVariant(*c) : QVariant(QString::number(*c, 'f', 1));
        }
        case Score:
            if (sort_key) return double(h.score) / scale_;
            return QString::fromStdString(format_score(double(h.score) / scale_));
        case Bits:
            if (!h.bits) return sort_key ? QVariant(0.0) : QVariant(QString("-"));
            return sort_key ? QVariant(*h.bits) : QVariant(QString::number(*h.bits, 'f', 1));
        case EValue:
            if (!h.evalue) return sort_key ? QVariant(1e300) : QVariant(QString("-"));
            return sort_key ? QVariant(*h.evalue) : QVariant(QString::number(*h.evalue, 'g', 3));
        case QueryRange:
            return sort_key ? QVariant(qlonglong(h.query_begin)) : QVariant(range(h.query_begin, h.query_end));
        case TargetRange:
            return sort_key ? QVariant(qlonglong(h.target_begin)) : QVariant(range(h.target_begin, h.target_end));
        case TargetLength: return qlonglong(h.target_length);
        default: return {};
    }
}

void HitTableModel::setDescriber(std::function<std::string(const std::string&)> describe) {
    describe_ = std::move(describe);
    if (!rows_.empty()) emit dataChanged(index(0, Description), index(rowCount() - 1, Description));
}

std::optional<double> HitTableModel::coverage(const store::Hit& hit) {
    if (hit.query_begin <= 0 || hit.query_end < hit.query_begin || hit.query_length <= 0) return std::nullopt;
    return 100.0 * double(hit.query_end - hit.query_begin + 1) / double(hit.query_length);
}

void HitTableModel::setRealignedIdentity(int row, double percent) {
    if (row < 0 || row >= rowCount()) return;
    Row& r = rows_[static_cast<std::size_t>(row)];
    if (r.identity_source == IdentitySource::Stored) return;
    r.identity = percent;
    r.identity_source = IdentitySource::Realigned;
    emit dataChanged(index(row, Identity), index(row, Identity));
}

QVariant HitTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole) {
        if (section == Identity)
            return tr(
                "Identity: identical columns over alignment columns, in %, from the hit's "
                "stored alignment (\"-\" when the search kept none)");
        if (section == Coverage)
            return tr(
                "Query coverage: the share of the query from the hit's first to its last "
                "aligned residue, in %");
        if (section == Description) return tr("The target's description line from its FASTA file");
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return section + 1;
    static const char* names[] = {"Rank",       "Query",       "Target",       "Description",
                                  "Score",      "Bits",        "E-value",      "Identity %",
                                  "Coverage %", "Query range", "Target range", "Target length"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

void HitTableModel::sort(int column, Qt::SortOrder order) {
    if (column < 0 || column >= ColumnCount) return;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    auto key = [this, column](const store::Hit& h) {
        switch (column) {
            case Rank: return QVariant(qlonglong(h.rank));
            case Query: return QVariant(QString::fromStdString(h.query_id));
            case Target: return QVariant(QString::fromStdString(h.target_id));
            case Score: return QVariant(double(h.score) / scale_);
            case Bits: return QVariant(h.bits.value_or(0.0));
            case EValue: return QVariant(h.evalue.value_or(1e300));
            case Description: return QVariant(describe_ ? QString::fromStdString(describe_(h.target_id)) : QString());
            case Coverage: return QVariant(coverage(h).value_or(-1.0));
            case QueryRange: return QVariant(qlonglong(h.query_begin));
            case TargetRange: return QVariant(qlonglong(h.target_begin));
            default: return QVariant(qlonglong(h.target_length));
        }
    };
    // Keys once per row (not per comparison), then the rows in key order.
    std::vector<QVariant> keys;
    keys.reserve(rows_.size());
    for (const Row& r : rows_) keys.push_back(column == Identity ? QVariant(r.identity.value_or(-1.0)) : key(r.hit));
    std::vector<std::size_t> perm(rows_.size());
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
        const auto c = QVariant::compare(keys[a], keys[b]);
        return order == Qt::AscendingOrder ? c == QPartialOrdering::Less : c == QPartialOrdering::Greater;
    });
    std::vector<Row> sorted;
    sorted.reserve(rows_.size());
    std::vector<int> new_row(rows_.size());
    for (std::size_t k = 0; k < perm.size(); ++k) {
        sorted.push_back(std::move(rows_[perm[k]]));
        new_row[perm[k]] = static_cast<int>(k);
    }
    rows_ = std::move(sorted);
    // The selected and current rows follow their hits.
    const QModelIndexList before = persistentIndexList();
    QModelIndexList after;
    after.reserve(before.size());
    for (const QModelIndex& index : before)
        after.push_back(index.isValid() && index.row() < rowCount()
                            ? createIndex(new_row[static_cast<std::size_t>(index.row())], index.column())
                            : QModelIndex());
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

}  // namespace alignscope::ui
