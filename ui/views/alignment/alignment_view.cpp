// The alignment viewer: painting only what is in view, positions through
// checkpoints, selection, search, copy and export.
#include "views/alignment/alignment_view.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QVBoxLayout>

#include <algorithm>
#include <sstream>

namespace alignscope::ui {

namespace {

constexpr std::int64_t checkpoint_step = 1024;

const std::string& aligned(const AlignedPair& pair, AlignedSide side) {
    return side == AlignedSide::Query ? pair.alignment.query_aligned : pair.alignment.target_aligned;
}

std::vector<std::int64_t> checkpoints(const std::string& row) {
    std::vector<std::int64_t> out{0};
    std::int64_t count = 0;
    for (std::size_t c = 0; c < row.size(); ++c) {
        if (c > 0 && c % checkpoint_step == 0) out.push_back(count);
        count += row[c] != '-';
    }
    return out;
}

}  // namespace

QColor residue_colour(char residue, ResidueColouring colouring) {
    const char r = static_cast<char>(std::toupper(static_cast<unsigned char>(residue)));
    if (r == '-' || colouring == ResidueColouring::None || colouring == ResidueColouring::Auto) return {};
    if (colouring == ResidueColouring::Nucleotide) {
        switch (r) {
            case 'A': return {140, 220, 140};
            case 'C': return {140, 180, 255};
            case 'G': return {255, 210, 120};
            case 'T':
            case 'U': return {255, 150, 150};
            default: return {215, 215, 215};  // ambiguity codes
        }
    }
    // Protein: physico-chemical classes, after Clustal X's scheme.
    switch (r) {
        case 'A':
        case 'I':
        case 'L':
        case 'M':
        case 'F':
        case 'W':
        case 'V': return {160, 185, 245};  // hydrophobic
        case 'K':
        case 'R': return {245, 140, 130};  // positive
        case 'D':
        case 'E': return {215, 150, 215};  // negative
        case 'N':
        case 'Q':
        case 'S':
        case 'T': return {150, 225, 150};  // polar
        case 'C': return {245, 170, 170};
        case 'G': return {245, 190, 130};
        case 'P': return {225, 225, 120};
        case 'H':
        case 'Y': return {140, 215, 215};  // aromatic polar
        default: return {215, 215, 215};
    }
}

// ---------------------------------------------------------------- canvas

AlignmentCanvas::AlignmentCanvas(QWidget* parent) : QAbstractScrollArea(parent) {
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setPointSize(10);
    viewport()->setFont(mono);
    setFont(mono);
    const QFontMetrics m(mono);
    char_w_ = std::max(1, m.horizontalAdvance(QLatin1Char('M')));
    line_h_ = m.height() + 2;
    ascent_ = m.ascent() + 1;
    setFocusPolicy(Qt::StrongFocus);
    viewport()->setBackgroundRole(QPalette::Base);
    viewport()->setAutoFillBackground(false);
}

void AlignmentCanvas::setPair(const AlignedPair* pair, const std::string* markup) {
    pair_ = pair;
    markup_ = markup;
    query_checkpoints_ = pair ? checkpoints(pair->alignment.query_aligned) : std::vector<std::int64_t>{};
    target_checkpoints_ = pair ? checkpoints(pair->alignment.target_aligned) : std::vector<std::int64_t>{};
    highlight_ = -1;
    select_from_ = select_to_ = -1;
    verticalScrollBar()->setValue(0);
    horizontalScrollBar()->setValue(0);
    updateScrollBars();
    viewport()->update();
}

std::int64_t AlignmentCanvas::columns() const {
    return pair_ ? static_cast<std::int64_t>(pair_->alignment.query_aligned.size()) : 0;
}

void AlignmentCanvas::setWrapped(bool wrapped) {
    if (wrapped == wrapped_) return;
    const std::int64_t keep = painted_.first;
    wrapped_ = wrapped;
    updateScrollBars();
    scrollToColumn(keep);
    viewport()->update();
}

void AlignmentCanvas::setLineWidth(int columns) {
    line_width_ = std::max(0, columns);
    updateScrollBars();
    viewport()->update();
}

int AlignmentCanvas::lineWidth() const {
    if (line_width_ > 0) return line_width_;
    const int room = (viewport()->width() - leftMargin() - (number_chars + 1) * char_w_) / char_w_;
    return std::max(10, room / 10 * 10);  // whole tens, so the rulers line up block to block
}

void AlignmentCanvas::setColouring(ResidueColouring colouring) {
    colouring_ = colouring;
    viewport()->update();
}

ResidueColouring AlignmentCanvas::effectiveColouring() const {
    if (colouring_ != ResidueColouring::Auto) return colouring_;
    if (!pair_) return ResidueColouring::None;
    return pair_->scheme.matrix.is_nucleotide() ? ResidueColouring::Nucleotide : ResidueColouring::Protein;
}

std::int64_t AlignmentCanvas::blockCount() const {
    const std::int64_t w = lineWidth();
    return (columns() + w - 1) / w;
}

void AlignmentCanvas::updateScrollBars() {
    const int block_h = lines_per_block * line_h_;
    if (wrapped_) {
        horizontalScrollBar()->setRange(0, 0);
        const int visible = std::max(1, viewport()->height() / block_h);
        const std::int64_t blocks = blockCount();
        // Block units (not pixels), so a 100 Mbp alignment still fits an int.
        verticalScrollBar()->setRange(0, static_cast<int>(std::max<std::int64_t>(0, blocks - visible)));
        verticalScrollBar()->setPageStep(visible);
        verticalScrollBar()->setSingleStep(1);
    } else {
        verticalScrollBar()->setRange(0, 0);
        const int visible = std::max(1, (viewport()->width() - leftMargin() - (number_chars + 1) * char_w_) / char_w_);
        horizontalScrollBar()->setRange(0, static_cast<int>(std::max<std::int64_t>(0, columns() - visible)));
        horizontalScrollBar()->setPageStep(visible);
        horizontalScrollBar()->setSingleStep(10);
    }
}

std::int64_t AlignmentCanvas::residuesBefore(AlignedSide side, std::int64_t column) const {
    if (!pair_ || column <= 0) return 0;
    const std::string& row = aligned(*pair_, side);
    column = std::min<std::int64_t>(column, static_cast<std::int64_t>(row.size()));
    const auto& marks = side == AlignedSide::Query ? query_checkpoints_ : target_checkpoints_;
    const std::int64_t k =
        std::min<std::int64_t>(column / checkpoint_step, static_cast<std::int64_t>(marks.size()) - 1);
    std::int64_t count = marks[static_cast<std::size_t>(k)];
    for (std::int64_t c = k * checkpoint_step; c < column; ++c) count += row[static_cast<std::size_t>(c)] != '-';
    return count;
}

std::int64_t AlignmentCanvas::columnOf(AlignedSide side, std::int64_t position) const {
    if (!pair_) return -1;
    const Alignment& a = pair_->alignment;
    const std::int64_t begin = side == AlignedSide::Query ? a.query_begin : a.target_begin;
    const std::int64_t end = side == AlignedSide::Query ? a.query_end : a.target_end;
    if (position < begin || position > end) return -1;
    const std::int64_t wanted = position - begin;  // residues before it inside the alignment
    const auto& marks = side == AlignedSide::Query ? query_checkpoints_ : target_checkpoints_;
    const auto k = static_cast<std::int64_t>(std::upper_bound(marks.begin(), marks.end(), wanted) - marks.begin()) - 1;
    const std::string& row = aligned(*pair_, side);
    std::int64_t count = marks[static_cast<std::size_t>(std::max<std::int64_t>(k, 0))];
    for (std::int64_t c = std::max<std::int64_t>(k, 0) * checkpoint_step; c < static_cast<std::int64_t>(row.size());
         ++c) {
        if (row[static_cast<std::size_t>(c)] == '-') continue;
        if (count == wanted) return c;
        ++count;
    }
    return -1;
}

void AlignmentCanvas::scrollToColumn(std::int64_t column) {
    if (column < 0) return;
    if (wrapped_) {
        const std::int64_t block = column / lineWidth();
        const int visible = verticalScrollBar()->pageStep();
        verticalScrollBar()->setValue(static_cast<int>(std::max<std::int64_t>(0, block - visible / 2)));
    } else {
        const int visible = horizontalScrollBar()->pageStep();
        horizontalScrollBar()->setValue(static_cast<int>(std::max<std::int64_t>(0, column - visible / 2)));
    }
    viewport()->update();
}

void AlignmentCanvas::setHighlight(std::int64_t column) {
    highlight_ = column;
    viewport()->update();
}

void AlignmentCanvas::setSelection(std::int64_t first, std::int64_t last) {
    select_from_ = first;
    select_to_ = last;
    if (first > last) select_from_ = select_to_ = -1;
    viewport()->update();
    emit selectionChanged();
}

std::optional<std::pair<std::int64_t, std::int64_t>> AlignmentCanvas::selection() const {
    if (select_from_ < 0 || select_to_ < 0) return std::nullopt;
    return std::make_pair(std::min(select_from_, select_to_), std::max(select_from_, select_to_));
}

QRect AlignmentCanvas::cellRect(std::int64_t column, int line) const {
    if (!pair_ || column < 0 || column >= columns()) return {};
    if (wrapped_) {
        const std::int64_t w = lineWidth();
        const std::int64_t block = column / w - verticalScrollBar()->value();
        if (block < 0) return {};
        const std::int64_t top = block * lines_per_block * line_h_ + std::int64_t(line) * line_h_;
        if (top > viewport()->height()) return {};
        return {leftMargin() + int(column % w) * char_w_, int(top), char_w_, line_h_};
    }
    const std::int64_t offset = column - horizontalScrollBar()->value();
    const int x = leftMargin() + int(offset) * char_w_;
    if (offset < 0 || x > viewport()->width()) return {};
    return {x, line * line_h_, char_w_, line_h_};
}

std::int64_t AlignmentCanvas::columnAt(const QPoint& pos) const {
    if (!pair_ || pos.x() < leftMargin()) return -1;
    const std::int64_t offset = (pos.x() - leftMargin()) / char_w_;
    std::int64_t column = -1;
    int line = 0;
    if (wrapped_) {
        const int block_h = lines_per_block * line_h_;
        const std::int64_t w = lineWidth();
        if (offset >= w) return -1;
        line = (pos.y() % block_h) / line_h_;
        column = (verticalScrollBar()->value() + pos.y() / block_h) * w + offset;
    } else {
        line = pos.y() / line_h_;
        column = horizontalScrollBar()->value() + offset;
    }
    if (line < 1 || line > 3 || column >= columns()) return -1;
    return column;
}

void AlignmentCanvas::paintLines(QPainter& p, std::int64_t first, std::int64_t count, int top, int x0) {
    const Alignment& a = pair_->alignment;
    const ResidueColouring colouring = effectiveColouring();
    const auto q =
        std::string_view(a.query_aligned).substr(static_cast<std::size_t>(first), static_cast<std::size_t>(count));
    const auto t =
        std::string_view(a.target_aligned).substr(static_cast<std::size_t>(first), static_cast<std::size_t>(count));
    const auto m = std::string_view(*markup_).substr(static_cast<std::size_t>(first), static_cast<std::size_t>(count));
    const std::int64_t q0 = a.query_begin + residuesBefore(AlignedSide::Query, first);
    const std::int64_t t0 = a.target_begin + residuesBefore(AlignedSide::Target, first);
    const auto residues = [](std::string_view s) {
        return std::int64_t(std::count_if(s.begin(), s.end(), [](char c) { return c != '-'; }));
    };
    const std::int64_t qn = residues(q), tn = residues(t);

    // Backgrounds: residue colours, the selection, the searched column.
    const int y_query = top + line_h_, y_markup = top + 2 * line_h_, y_target = top + 3 * line_h_;
    if (colouring != ResidueColouring::None)
        for (std::int64_t k = 0; k < count; ++k) {
            const int x = x0 + int(k) * char_w_;
            const QColor cq = residue_colour(q[static_cast<std::size_t>(k)], colouring);
            if (cq.isValid()) p.fillRect(x, y_query, char_w_, line_h_, cq);
            const QColor ct = residue_colour(t[static_cast<std::size_t>(k)], colouring);
            if (ct.isValid()) p.fillRect(x, y_target, char_w_, line_h_, ct);
        }
    if (const auto sel = selection()) {
        const std::int64_t lo = std::max(sel->first, first), hi = std::min(sel->second, first + count - 1);
        if (lo <= hi)
            p.fillRect(x0 + int(lo - first) * char_w_, y_query, int(hi - lo + 1) * char_w_, 3 * line_h_,
                       QColor(60, 120, 230, 70));
    }
    if (highlight_ >= first && highlight_ < first + count) {
        p.setPen(QPen(QColor(220, 30, 30), 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(QRect(x0 + int(highlight_ - first) * char_w_, top + 1, char_w_, 5 * line_h_ - 2));
    }

    // Text: whole runs at a time (the font is fixed-pitch, so cells line up).
    p.setPen(palette().color(QPalette::Text));
    auto name = [](const std::string& id) { return QString::fromStdString(id.substr(0, name_chars)); };
    auto number = [](std::int64_t v) { return QString::number(v).rightJustified(number_chars - 1, QLatin1Char(' ')); };
    const int right = x0 + int(count) * char_w_ + char_w_;
    p.drawText(2, y_query + ascent_, name(a.query_id));
    p.drawText(2, y_target + ascent_, name(a.target_id));
    p.drawText(x0 - number_chars * char_w_, y_query + ascent_, number(q0));
    p.drawText(x0 - number_chars * char_w_, y_target + ascent_, number(t0));
    p.drawText(right, y_query + ascent_, QString::number(qn ? q0 + qn - 1 : q0 - 1));
    p.drawText(right, y_target + ascent_, QString::number(tn ? t0 + tn - 1 : t0 - 1));
    p.drawText(x0, y_query + ascent_, QString::fromLatin1(q.data(), qsizetype(q.size())));
    p.drawText(x0, y_markup + ascent_, QString::fromLatin1(m.data(), qsizetype(m.size())));
    p.drawText(x0, y_target + ascent_, QString::fromLatin1(t.data(), qsizetype(t.size())));

    // Rulers: every tenth residue of each sequence, numbered where it sits.
    p.setPen(palette().color(QPalette::PlaceholderText));
    auto ruler = [&](std::string_view row, std::int64_t start, int y) {
        std::int64_t pos = start - 1;
        int free_from = x0 - number_chars * char_w_;  // labels never overlap
        for (std::int64_t k = 0; k < count; ++k) {
            if (row[static_cast<std::size_t>(k)] == '-') continue;
            if (++pos % 10 != 0) continue;
            const QString label = QString::number(pos);
            const int x_end = x0 + int(k + 1) * char_w_;
            const int x_begin = x_end - int(label.size()) * char_w_;
            if (x_begin < free_from) continue;
            p.drawText(x_begin, y + ascent_, label);
            free_from = x_end + char_w_;
        }
    };
    ruler(q, q0, top);
    ruler(t, t0, top + 4 * line_h_);
}

void AlignmentCanvas::paintEvent(QPaintEvent* event) {
    QPainter p(viewport());
    p.fillRect(event->rect(), palette().color(QPalette::Base));
    painted_ = {0, 0};
    if (!pair_ || columns() == 0) return;
    p.setFont(font());
    const int x0 = leftMargin();
    if (wrapped_) {
        const std::int64_t w = lineWidth();
        const int block_h = lines_per_block * line_h_;
        const std::int64_t first_block = verticalScrollBar()->value();
        const std::int64_t blocks = blockCount();
        const int shown = viewport()->height() / block_h + 1;
        std::int64_t first_col = -1, last_col = -1;
        for (std::int64_t b = first_block; b < std::min(blocks, first_block + shown); ++b) {
            const std::int64_t from = b * w, count = std::min(w, columns() - from);
            paintLines(p, from, count, int(b - first_block) * block_h, x0);
            if (first_col < 0) first_col = from;
            last_col = from + count;
        }
        painted_ = {std::max<std::int64_t>(first_col, 0), std::max<std::int64_t>(last_col, 0)};
    } else {
        const std::int64_t from = horizontalScrollBar()->value();
        const int visible = (viewport()->width() - x0 - (number_chars + 1) * char_w_) / char_w_;
        const std::int64_t count = std::max<std::int64_t>(0, std::min<std::int64_t>(visible, columns() - from));
        paintLines(p, from, count, 0, x0);
        painted_ = {from, from + count};
    }
}

void AlignmentCanvas::resizeEvent(QResizeEvent* event) {
    QAbstractScrollArea::resizeEvent(event);
    updateScrollBars();
}

void AlignmentCanvas::mousePressEvent(QMouseEvent* event) {
    const std::int64_t c = columnAt(event->position().toPoint());
    if (event->button() != Qt::LeftButton) return;
    if (c < 0) {
        setSelection(1, 0);
        return;
    }
    select_from_ = select_to_ = c;
    viewport()->update();
    emit selectionChanged();
}

void AlignmentCanvas::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton) || select_from_ < 0) return;
    const std::int64_t c = columnAt(event->position().toPoint());
    if (c < 0 || c == select_to_) return;
    select_to_ = c;
    viewport()->update();
    emit selectionChanged();
}

void AlignmentCanvas::keyPressEvent(QKeyEvent* event) {
    if (event->matches(QKeySequence::Copy)) {
        emit copyRequested();
        return;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

// ---------------------------------------------------------------- view

AlignmentView::AlignmentView(QWidget* parent) : QWidget(parent) {
    wrap_ = new QCheckBox(tr("Wrap"));
    wrap_->setChecked(true);
    colouring_ = new QComboBox;
    colouring_->addItems(
        {tr("Colour: automatic"), tr("Colour: none"), tr("Colour: nucleotide"), tr("Colour: protein")});
    side_ = new QComboBox;
    side_->addItems({tr("Query position"), tr("Target position")});
    position_ = new QLineEdit;
    position_->setPlaceholderText(tr("go to…"));
    position_->setMaximumWidth(110);
    auto* copy_button = new QPushButton(tr("Copy"));
    auto* export_button = new QPushButton(tr("Export…"));
    message_ = new QLabel;
    wrap_->setToolTip(tr("Wrap the alignment into blocks that fit the width, or show it on one long line"));
    colouring_->setToolTip(tr("Colour residues by kind: automatic (by alphabet), none, nucleotide or protein classes"));
    side_->setToolTip(tr("Which sequence's numbering the position to go to is in"));
    position_->setToolTip(tr("A residue position to scroll to (Enter)"));
    copy_button->setToolTip(tr("Copy the alignment as text, in the layout shown"));
    export_button->setToolTip(tr("Save this alignment as EMBOSS pair, FASTA or SAM"));
    auto* bar = new QHBoxLayout;
    for (QWidget* w : std::initializer_list<QWidget*>{wrap_, colouring_, side_, position_, copy_button, export_button})
        bar->addWidget(w);
    bar->addWidget(message_, 1);

    header_ = new QPlainTextEdit;
    header_->setReadOnly(true);
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    header_->setFont(mono);
    header_->setMaximumHeight(QFontMetrics(mono).lineSpacing() * 15 + 12);
    canvas_ = new AlignmentCanvas;
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(header_);
    layout->addWidget(canvas_, 1);

    connect(wrap_, &QCheckBox::toggled, this, &AlignmentView::setWrapped);
    connect(colouring_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setColouring(static_cast<ResidueColouring>(i)); });
    connect(position_, &QLineEdit::returnPressed, this, [this] {
        bool ok = false;
        const qlonglong pos = position_->text().trimmed().toLongLong(&ok);
        if (!ok) {
            message_->setText(tr("Type a position (a whole number)"));
            return;
        }
        goToPosition(side_->currentIndex() == 0 ? AlignedSide::Query : AlignedSide::Target, pos);
    });
    connect(copy_button, &QPushButton::clicked, this, &AlignmentView::copy);
    connect(canvas_, &AlignmentCanvas::copyRequested, this, &AlignmentView::copy);
    connect(export_button, &QPushButton::clicked, this, [this] {
        if (!has_pair_) return;
        QString filter;
        // The folder last used for alignments (the window's dialogs share the key).
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export alignment"),
                                         QSettings().value("folders/alignments").toString(),
                                         tr("EMBOSS pair (*.pair *.txt);;FASTA (*.fa *.fasta);;SAM (*.sam)"), &filter);
        if (path.isEmpty()) return;
        QSettings().setValue("folders/alignments", QFileInfo(path).absolutePath());
        const AlignmentExport format = filter.startsWith("FASTA") ? AlignmentExport::Fasta
                                       : filter.startsWith("SAM") ? AlignmentExport::Sam
                                                                  : AlignmentExport::Pair;
        try {
            exportTo(path, format);
            message_->setText(tr("Exported to %1").arg(path));
        } catch (const Error& e) {
            message_->setText(QString::fromStdString(e.what()));
        }
    });
}

void AlignmentView::setAlignedPair(AlignedPair pair) {
    Alignment& a = pair.alignment;
    if (!a.has_traceback())
        throw Error("alignment " + a.query_id + " vs " + a.target_id +
                    " has no traceback (it was computed for score and coordinates only)");
    if (a.query_aligned.empty() || a.query_aligned.size() != a.target_aligned.size())
        complete_alignment(a, pair.query.residues, pair.target.residues, pair.scheme);
    pair_ = std::move(pair);
    markup_ = markup_line(pair_.alignment.query_aligned, pair_.alignment.target_aligned, pair_.scheme);
    has_pair_ = true;
    canvas_->setPair(&pair_, &markup_);
    header_->setPlainText(headerText());
    message_->clear();
}

void AlignmentView::setAlignment(const Alignment& alignment, const Sequence& query, const Sequence& target,
                                 const ScoringScheme& scheme) {
    AlignedPair pair;
    pair.alignment = alignment;
    pair.query = query;
    pair.target = target;
    pair.scheme = scheme;
    pair.options.mode = alignment.mode;
    setAlignedPair(std::move(pair));
}

void AlignmentView::loadFromProject(const store::Project& project, std::int64_t job_id, std::int64_t row) {
    setAlignedPair(aligned_pair_from_project(project, job_id, row));
}

void AlignmentView::clear() {
    has_pair_ = false;
    canvas_->setPair(nullptr, nullptr);
    pair_ = AlignedPair();
    markup_.clear();
    header_->clear();
}

void AlignmentView::setWrapped(bool wrapped) {
    if (wrap_->isChecked() != wrapped) wrap_->setChecked(wrapped);
    canvas_->setWrapped(wrapped);
}

void AlignmentView::setColouring(ResidueColouring colouring) {
    if (colouring_->currentIndex() != int(colouring)) colouring_->setCurrentIndex(int(colouring));
    canvas_->setColouring(colouring);
}

bool AlignmentView::goToPosition(AlignedSide side, std::int64_t position) {
    if (!has_pair_) return false;
    const std::int64_t column = canvas_->columnOf(side, position);
    const Alignment& a = pair_.alignment;
    const bool query = side == AlignedSide::Query;
    if (column < 0) {
        message_->setText(tr("%1 position %2 is outside the aligned region %3-%4")
                              .arg(query ? tr("Query") : tr("Target"))
                              .arg(position)
                              .arg(query ? a.query_begin : a.target_begin)
                              .arg(query ? a.query_end : a.target_end));
        canvas_->setHighlight(-1);
        return false;
    }
    canvas_->setHighlight(column);
    canvas_->scrollToColumn(column);
    const char residue = (query ? a.query_aligned : a.target_aligned)[static_cast<std::size_t>(column)];
    const char other = (query ? a.target_aligned : a.query_aligned)[static_cast<std::size_t>(column)];
    message_->setText(tr("%1 %2 (%3) is alignment column %4, against %5")
                          .arg(query ? tr("Query") : tr("Target"))
                          .arg(position)
                          .arg(QChar(residue))
                          .arg(column + 1)
                          .arg(other == '-' ? tr("a gap") : QString(QChar(other))));
    return true;
}

QString AlignmentView::messageText() const { return message_->text(); }

QString AlignmentView::headerText() const {
    if (!has_pair_) return {};
    // The pair writer's own header, so it reads as the CLI's does; the aligned
    // rows are left out of the copy so nothing but the header is written.
    Alignment summary = pair_.alignment;
    summary.query_aligned.clear();
    summary.target_aligned.clear();
    std::ostringstream out;
    WriterContext context;
    context.program = "AlignScope";
    context.scheme = pair_.scheme;
    auto writer = AlignmentWriter::create(OutputFormat::Pair, out, context);
    writer->write(summary, pair_.query, pair_.target);
    QStringList lines;
    for (const QString& line : QString::fromStdString(out.str()).split('\n'))
        if (line.startsWith("# ") && !line.startsWith("#====")) lines << line;
    return lines.join('\n');
}

std::string AlignmentView::pairText() const {
    std::ostringstream out;
    WriterContext context;
    context.program = "AlignScope";
    context.scheme = pair_.scheme;
    auto writer = AlignmentWriter::create(OutputFormat::Pair, out, context);
    writer->begin();
    writer->write(pair_.alignment, pair_.query, pair_.target);
    writer->end();
    return out.str();
}

QString AlignmentView::selectionText() const {
    if (!has_pair_) return {};
    const auto sel = canvas_->selection();
    if (!sel) return QString::fromStdString(pairText());
    // The selected columns in the pair layout, with their own coordinates.
    const Alignment& a = pair_.alignment;
    const std::int64_t width = 50;
    QString text;
    std::int64_t q = a.query_begin + canvas_->residuesBefore(AlignedSide::Query, sel->first);
    std::int64_t t = a.target_begin + canvas_->residuesBefore(AlignedSide::Target, sel->first);
    auto name = [](const std::string& id) { return QString::fromStdString(id.substr(0, 13)).leftJustified(13, ' '); };
    for (std::int64_t from = sel->first; from <= sel->second; from += width) {
        const std::int64_t len = std::min(width, sel->second - from + 1);
        const QString qs = QString::fromStdString(a.query_aligned.substr(std::size_t(from), std::size_t(len)));
        const QString ts = QString::fromStdString(a.target_aligned.substr(std::size_t(from), std::size_t(len)));
        const QString ms = QString::fromStdString(markup_.substr(std::size_t(from), std::size_t(len)));
        const std::int64_t qn = len - qs.count('-'), tn = len - ts.count('-');
        text += name(a.query_id) + ' ' + QString::number(q).rightJustified(6) + ' ' + qs + ' ' +
                QString::number(qn ? q + qn - 1 : q - 1).rightJustified(6) + '\n';
        text += QString(21, ' ') + ms + '\n';
        text += name(a.target_id) + ' ' + QString::number(t).rightJustified(6) + ' ' + ts + ' ' +
                QString::number(tn ? t + tn - 1 : t - 1).rightJustified(6) + "\n\n";
        q += qn;
        t += tn;
    }
    return text;
}

void AlignmentView::copy() const {
    if (!has_pair_) return;
    QApplication::clipboard()->setText(selectionText());
}

void AlignmentView::exportTo(const QString& path, AlignmentExport format) const {
    if (!has_pair_) throw Error(path.toStdString() + ": there is no alignment to export");
    AtomicOutput out(path.toStdString());
    const Alignment& a = pair_.alignment;
    switch (format) {
        case AlignmentExport::Pair: out.stream() << pairText(); break;
        case AlignmentExport::Fasta: {
            // The aligned rows, gaps included, as two records (what MSA tools read).
            auto record = [&out](const std::string& id, std::int64_t begin, std::int64_t end, std::int64_t length,
                                 const std::string& row) {
                out.stream() << '>' << id << ' ' << begin << '-' << end << '/' << length << '\n';
                for (std::size_t k = 0; k < row.size(); k += 60) out.stream() << row.substr(k, 60) << '\n';
            };
            record(a.query_id, a.query_begin, a.query_end, a.query_length, a.query_aligned);
            record(a.target_id, a.target_begin, a.target_end, a.target_length, a.target_aligned);
            break;
        }
        case AlignmentExport::Sam: {
            WriterContext context;
            context.program = "AlignScope";
            context.scheme = pair_.scheme;
            context.references = {&pair_.target};
            auto writer = AlignmentWriter::create(OutputFormat::Sam, out.stream(), context);
            writer->begin();
            writer->write(a, pair_.query, pair_.target);
            writer->end();
            break;
        }
    }
    out.commit();
}

}  // namespace alignscope::ui
