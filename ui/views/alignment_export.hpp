// Writing a job's alignments to a file: all of them, the selected rows or the
// shown one, as EMBOSS pair text, aligned FASTA, Clustal, Stockholm, SAM, TSV
// or JSON Lines (the last four through the engine's AlignmentWriter, so they
// read as the CLI's do).
#pragma once

#include "views/alignment/aligned_pair.hpp"

#include <QDialog>
#include <QString>
#include <QStringList>

#include <vector>

class QComboBox;
class QLineEdit;
class QRadioButton;
class QLabel;

namespace alignscope::ui {

enum class AlignmentFileFormat { Pair, Fasta, Clustal, Stockholm, Sam, Tsv, Json };
QString display_name(AlignmentFileFormat format);
QString file_suffix(AlignmentFileFormat format);  // "txt", "fasta", "aln", "sto", "sam", "tsv", "jsonl"
const std::vector<AlignmentFileFormat>& alignment_file_formats();

// Writes the pairs (each with its sequences and scheme) to `path`, replacing it
// only when all is written. Throws alignscope::Error naming the file, or the
// alignment that has no traceback (only pair, SAM, TSV and JSON take those).
void write_alignments(const QString& path, AlignmentFileFormat format, const std::vector<AlignedPair>& pairs);

// The export dialog of the alignment view: which alignments, which format, which file.
class ExportAlignmentsDialog : public QDialog {
    Q_OBJECT
public:
    enum class Scope { All, Selected, Shown };
    // `selected` rows (0-based) may be empty (the choice is then off).
    ExportAlignmentsDialog(qint64 total, std::vector<qint64> selected, qint64 shown, const QString& suggested_path,
                           QWidget* parent = nullptr);
    Scope scope() const;
    AlignmentFileFormat format() const;
    QString path() const;
    // The rows the scope names, 0-based.
    std::vector<qint64> rows() const;
    void setError(const QString& text);

signals:
    // Save was pressed: the owner writes the file, then accept()s or setError()s.
    void saveRequested();

private:
    qint64 total_;
    std::vector<qint64> selected_;
    qint64 shown_;
    QRadioButton* all_;
    QRadioButton* selected_button_;
    QRadioButton* shown_button_;
    QComboBox* format_;
    QLineEdit* path_;
    QLabel* error_;
};

}  // namespace alignscope::ui
