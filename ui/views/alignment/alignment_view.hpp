// The pairwise alignment viewer: an EMBOSS-like summary header over a custom
// painted alignment (coordinate rulers for both sequences, the |/:/. markup
// line, residue colouring, gaps), wrapped into blocks or on one scrolling
// line. Only the visible columns are painted and positions are found through
// per-1024-column checkpoints, so a megabase alignment scrolls like a short one.
// Search for a position, select columns with the mouse, copy as text, export
// EMBOSS pair, FASTA or SAM.
#pragma once

#include "views/alignment/aligned_pair.hpp"

#include <QAbstractScrollArea>
#include <QColor>
#include <QWidget>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace alignscope::ui {

enum class ResidueColouring { Auto, None, Nucleotide, Protein };
enum class AlignmentExport { Pair, Fasta, Sam };
enum class AlignedSide { Query, Target };

// Background colour of a residue under a scheme; invalid for none (gaps, None).
QColor residue_colour(char residue, ResidueColouring colouring);

// The painted alignment (the scroll area inside AlignmentView).
class AlignmentCanvas : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit AlignmentCanvas(QWidget* parent = nullptr);

    void setPair(const AlignedPair* pair, const std::string* markup);
    void setWrapped(bool wrapped);
    bool wrapped() const { return wrapped_; }
    void setLineWidth(int columns);  // 0: as many as fit
    int lineWidth() const;           // columns per block now
    void setColouring(ResidueColouring colouring);
    ResidueColouring colouring() const { return colouring_; }
    ResidueColouring effectiveColouring() const;

    std::int64_t columns() const;
    // Residues of `side` in alignment columns [0, column).
    std::int64_t residuesBefore(AlignedSide side, std::int64_t column) const;
    // Alignment column holding residue `position` (1-based, sequence coordinates) of `side`; -1 outside the alignment.
    std::int64_t columnOf(AlignedSide side, std::int64_t position) const;
    void scrollToColumn(std::int64_t column);
    void setHighlight(std::int64_t column);  // -1: none
    std::int64_t highlight() const { return highlight_; }
    void setSelection(std::int64_t first, std::int64_t last);  // inclusive; first > last clears
    std::optional<std::pair<std::int64_t, std::int64_t>> selection() const;

    // Geometry (viewport coordinates): where column `column` of a line is now,
    // or an empty rect when it is not in view. Lines: 0 query ruler, 1 query,
    // 2 markup, 3 target, 4 target ruler.
    QRect cellRect(std::int64_t column, int line) const;
    std::int64_t columnAt(const QPoint& pos) const;  // -1 outside the sequences
    std::pair<std::int64_t, std::int64_t> lastPaintedColumns() const { return painted_; }
    int charWidth() const { return char_w_; }
    int lineHeight() const { return line_h_; }

    static constexpr int lines_per_block = 6;  // 5 lines and a gap
    static constexpr int name_chars = 13;
    static constexpr int number_chars = 9;

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

signals:
    void selectionChanged();
    void copyRequested();

private:
    void updateScrollBars();
    int leftMargin() const { return (name_chars + 1 + number_chars + 1) * char_w_ + 4; }
    std::int64_t blockCount() const;
    void paintLines(QPainter& p, std::int64_t first, std::int64_t count, int top, int x0);

    const AlignedPair* pair_ = nullptr;
    const std::string* markup_ = nullptr;
    std::vector<std::int64_t> query_checkpoints_, target_checkpoints_;  // residues before column k*1024
    bool wrapped_ = true;
    int line_width_ = 0;
    ResidueColouring colouring_ = ResidueColouring::Auto;
    std::int64_t highlight_ = -1;
    std::int64_t select_from_ = -1, select_to_ = -1;
    std::pair<std::int64_t, std::int64_t> painted_{0, 0};
    int char_w_ = 8, line_h_ = 16, ascent_ = 12;
};

class AlignmentView : public QWidget {
    Q_OBJECT
public:
    explicit AlignmentView(QWidget* parent = nullptr);

    // The alignment must have its traceback (aligned strings and CIGAR).
    // Throws alignscope::Error otherwise.
    void setAlignedPair(AlignedPair pair);
    void setAlignment(const Alignment& alignment, const Sequence& query, const Sequence& target,
                      const ScoringScheme& scheme);
    void loadFromProject(const store::Project& project, std::int64_t job_id, std::int64_t row = 0);
    void clear();
    bool hasAlignment() const { return has_pair_; }
    const AlignedPair& pair() const { return pair_; }
    const std::string& markup() const { return markup_; }
    AlignmentCanvas* canvas() const { return canvas_; }

    void setWrapped(bool wrapped);
    void setColouring(ResidueColouring colouring);
    // Scrolls to residue `position` of `side` and highlights its column;
    // false (and a message) when the alignment does not cover it.
    bool goToPosition(AlignedSide side, std::int64_t position);

    // EMBOSS pair-style summary lines ("# Length: ...").
    QString headerText() const;
    // Pair-format blocks of the selected columns (the whole alignment when none).
    QString selectionText() const;
    void copy() const;  // selectionText() to the clipboard
    // Writes the whole alignment; throws alignscope::Error naming the file.
    void exportTo(const QString& path, AlignmentExport format) const;
    QString messageText() const;

private:
    std::string pairText() const;

    AlignmentCanvas* canvas_ = nullptr;
    QPlainTextEdit* header_ = nullptr;
    QCheckBox* wrap_ = nullptr;
    QComboBox* colouring_ = nullptr;
    QComboBox* side_ = nullptr;
    QLineEdit* position_ = nullptr;
    QLabel* message_ = nullptr;
    AlignedPair pair_;
    std::string markup_;
    bool has_pair_ = false;
};

}  // namespace alignscope::ui
