// The project's sequences as one table (id, length, alphabet, description,
// file), over every loaded sequence set without copying a record: rows map to
// (set, record) through prefix sums, so millions of reads cost one int each.
#pragma once

#include <alignscope/seq/sequence_reader.hpp>

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace alignscope::ui {

class SequenceTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Length, Alphabet, Description, File, ColumnCount };

    struct Source {
        std::shared_ptr<const SequenceSet> set;
        QString label;        // file name shown in the File column
        qint64 input_id = 0;  // the set's id in the project
    };

    explicit SequenceTableModel(QObject* parent = nullptr);

    // Replaces every set (sets are immutable; the model keeps them alive).
    void setSources(std::vector<Source> sources);
    const std::vector<Source>& sources() const { return sources_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The record and the source behind a row.
    const Sequence& record(int row) const;
    const Source& source(int row) const;
    AlphabetKind alphabet(int row) const { return source(row).set->alphabet; }

private:
    std::size_t source_index(int row) const;

    std::vector<Source> sources_;
    std::vector<qint64> first_row_;  // first row of each source, plus the total
};

}  // namespace alignscope::ui
