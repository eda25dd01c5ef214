// Filtering and sorting of the sequence table: a text that must occur in the id
// or the description (case-insensitive; * and ? as wildcards), an alphabet, and
// a length range. Reads the source model's records directly, not through
// QVariant, so filtering a million rows stays quick.
#pragma once

#include "models/sequence_table_model.hpp"

#include <QRegularExpression>
#include <QSortFilterProxyModel>

#include <optional>

namespace alignscope::ui {

class SequenceFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit SequenceFilterModel(QObject* parent = nullptr);

    void setSourceModel(QAbstractItemModel* model) override;
    void setText(const QString& text);
    void setAlphabet(std::optional<AlphabetKind> alphabet);
    void setLengthRange(qint64 min_length, qint64 max_length);  // max 0: no upper bound

protected:
    bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

private:
    SequenceTableModel* table_ = nullptr;
    QString text_;
    QRegularExpression pattern_;  // set when the text has wildcards
    std::optional<AlphabetKind> alphabet_;
    qint64 min_length_ = 0, max_length_ = 0;
};

}  // namespace alignscope::ui
