// SequenceTableModel: read-only rows over shared SequenceSets.
#include "models/sequence_table_model.hpp"

#include <QFont>

#include <algorithm>
#include <limits>

namespace alignscope::ui {

SequenceTableModel::SequenceTableModel(QObject* parent) : QAbstractTableModel(parent) { first_row_ = {0}; }

void SequenceTableModel::setSources(std::vector<Source> sources) {
    beginResetModel();
    sources_.clear();
    first_row_ = {0};
    for (auto& s : sources) {
        if (!s.set) continue;
        // A QAbstractItemModel counts rows in int; a larger total is cut off
        // rather than wrapped (the sets stay whole for jobs).
        const qint64 room = std::numeric_limits<int>::max() - first_row_.back();
        first_row_.push_back(first_row_.back() + std::min<qint64>(qint64(s.set->records.size()), room));
        sources_.push_back(std::move(s));
    }
    endResetModel();
}

int SequenceTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(first_row_.back());
}

int SequenceTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

std::size_t SequenceTableModel::source_index(int row) const {
    auto it = std::upper_bound(first_row_.begin(), first_row_.end(), qint64(row));
    return std::size_t(it - first_row_.begin()) - 1;
}

const SequenceTableModel::Source& SequenceTableModel::source(int row) const { return sources_[source_index(row)]; }

const Sequence& SequenceTableModel::record(int row) const {
    const std::size_t s = source_index(row);
    return sources_[s].set->records[std::size_t(row - first_row_[s])];
}

QVariant SequenceTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const Sequence& r = record(index.row());
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (index.column()) {
            case Id: return QString::fromStdString(r.id);
            case Length: return qlonglong(r.residues.size());
            case Alphabet: return QString::fromUtf8(to_string(alphabet(index.row())).data());
            case Description: return QString::fromStdString(r.description);
            case File:
                return role == Qt::ToolTipRole ? QString::fromStdString(source(index.row()).set->path)
                                               : source(index.row()).label;
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() == Length) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::FontRole && index.column() == Id) {
        QFont font;
        font.setFamily("monospace");
        font.setStyleHint(QFont::Monospace);
        return font;
    }
    return {};
}

QVariant SequenceTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
        case Id: return tr("Id");
        case Length: return tr("Length");
        case Alphabet: return tr("Alphabet");
        case Description: return tr("Description");
        case File: return tr("File");
    }
    return {};
}

}  // namespace alignscope::ui
