// SequenceFilterModel: the filter predicates and a numeric length sort.
#include "models/sequence_filter_model.hpp"

namespace alignscope::ui {

SequenceFilterModel::SequenceFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortCaseSensitivity(Qt::CaseInsensitive);
}

void SequenceFilterModel::setSourceModel(QAbstractItemModel* model) {
    table_ = qobject_cast<SequenceTableModel*>(model);
    QSortFilterProxyModel::setSourceModel(model);
}

void SequenceFilterModel::setText(const QString& text) {
    text_ = text.trimmed();
    if (text_.contains('*') || text_.contains('?'))
        pattern_ = QRegularExpression(
            QRegularExpression::wildcardToRegularExpression(text_, QRegularExpression::UnanchoredWildcardConversion),
            QRegularExpression::CaseInsensitiveOption);
    else
        pattern_ = QRegularExpression();
    invalidateFilter();
}

void SequenceFilterModel::setAlphabet(std::optional<AlphabetKind> alphabet) {
    alphabet_ = alphabet;
    invalidateFilter();
}

void SequenceFilterModel::setLengthRange(qint64 min_length, qint64 max_length) {
    min_length_ = min_length;
    max_length_ = max_length;
    invalidateFilter();
}

bool SequenceFilterModel::filterAcceptsRow(int source_row, const QModelIndex&) const {
    if (!table_) return true;
    const Sequence& r = table_->record(source_row);
    const auto length = qint64(r.residues.size());
    if (length < min_length_ || (max_length_ > 0 && length > max_length_)) return false;
    if (alphabet_ && table_->alphabet(source_row) != *alphabet_) return false;
    if (text_.isEmpty()) return true;
    const QString id = QString::fromStdString(r.id), description = QString::fromStdString(r.description);
    if (pattern_.isValid() && !pattern_.pattern().isEmpty())
        return pattern_.match(id).hasMatch() || pattern_.match(description).hasMatch();
    return id.contains(text_, Qt::CaseInsensitive) || description.contains(text_, Qt::CaseInsensitive);
}

bool SequenceFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    if (table_ && left.column() == SequenceTableModel::Length)
        return table_->record(left.row()).residues.size() < table_->record(right.row()).residues.size();
    return QSortFilterProxyModel::lessThan(left, right);
}

}  // namespace alignscope::ui
