// Painting and driving the teaching stepper.
#include "views/heatmap/stepper_view.hpp"

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

namespace alignscope::ui {

namespace colours {
const QColor unfilled(236, 236, 236);
const QColor filled(255, 255, 255);
const QColor current(255, 221, 87);
const QColor diagonal(52, 101, 164);
const QColor left(78, 154, 6);
const QColor up(206, 92, 0);
const QColor traced(242, 143, 133);
// A path cell whose value the path reads from another matrix than the shown one.
const QColor traced_elsewhere(250, 216, 212);
const QColor header(220, 226, 235);
}  // namespace colours

// The table itself: header row and column with the residues, then the cells.
class DpStepperGrid : public QWidget {
public:
    explicit DpStepperGrid(DpStepperView* view) : QWidget(view), view_(view) {
        setMouseTracking(false);
        setFocusPolicy(Qt::StrongFocus);
    }

    QSize sizeHint() const override {
        const DpStepper* s = view_->stepper();
        if (!s) return {200, 100};
        return {int(s->cols() + 1) * DpStepperView::cell_width + 1,
                int(s->rows() + 1) * DpStepperView::cell_height + 1};
    }

    QRect cellRect(std::int64_t i, std::int64_t j) const {
        return {int(j + 1) * DpStepperView::cell_width, int(i + 1) * DpStepperView::cell_height,
                DpStepperView::cell_width, DpStepperView::cell_height};
    }

protected:
    void paintEvent(QPaintEvent* event) override {
        const DpStepper* s = view_->stepper();
        QPainter p(this);
        p.fillRect(event->rect(), Qt::white);
        if (!s) return;
        QFont font = QFontDatabase::systemFont(QFontDatabase::FixedFont);
        font.setPointSize(9);
        p.setFont(font);
        const CellRange cells = visibleCells(*s, event->rect());
        paintHeaders(p, *s, cells);
        paintCells(p, *s, cells);
        if (const auto current = s->current();
            current && !s->inTraceback() && current->first > 0 && current->second > 0)
            paintDependencies(p, *s, current->first, current->second);
    }

    void mousePressEvent(QMouseEvent* event) override {
        const DpStepper* s = view_->stepper();
        if (!s) return;
        // Row and column -1 are the residue headers, not cells.
        const auto j = static_cast<std::int64_t>(std::floor(event->position().x() / DpStepperView::cell_width)) - 1;
        const auto i = static_cast<std::int64_t>(std::floor(event->position().y() / DpStepperView::cell_height)) - 1;
        if (i >= 0 && j >= 0 && i < s->rows() && j < s->cols() && s->isFilled(i, j)) view_->explainCell(i, j);
    }

private:
    // Rows i0..i1 and columns j0..j1 of the matrix (0 the boundary).
    struct CellRange {
        std::int64_t i0, i1, j0, j1;
    };

    // Only the visible cells: teaching pairs are small, but the table may be scrolled.
    static CellRange visibleCells(const DpStepper& s, const QRect& r) {
        const int w = DpStepperView::cell_width, h = DpStepperView::cell_height;
        return {std::max<std::int64_t>(0, r.top() / h - 1), std::min<std::int64_t>(s.rows() - 1, r.bottom() / h),
                std::max<std::int64_t>(0, r.left() / w - 1), std::min<std::int64_t>(s.cols() - 1, r.right() / w)};
    }

    // The residues: the target along the top, the query down the side.
    static void paintHeaders(QPainter& p, const DpStepper& s, const CellRange& cells) {
        const int w = DpStepperView::cell_width, h = DpStepperView::cell_height;
        for (std::int64_t j = cells.j0; j <= cells.j1; ++j) {
            const QRect head(int(j + 1) * w, 0, w, h);
            p.fillRect(head, colours::header);
            p.setPen(Qt::black);
            p.drawText(head, Qt::AlignCenter, j == 0 ? QString("-") : QString(QChar(s.target()[std::size_t(j - 1)])));
        }
        for (std::int64_t i = cells.i0; i <= cells.i1; ++i) {
            const QRect head(0, int(i + 1) * h, w, h);
            p.fillRect(head, colours::header);
            p.setPen(Qt::black);
            p.drawText(head, Qt::AlignCenter, i == 0 ? QString("-") : QString(QChar(s.query()[std::size_t(i - 1)])));
        }
    }

    // Each cell's value in the shown matrix, coloured by where the fill and
    // the traceback stand.
    void paintCells(QPainter& p, const DpStepper& s, const CellRange& cells) const {
        const auto current = s.current();
        // The cells of the last step: one, a row, or the whole anti-diagonal
        // (every cell one wavefront step computes at once).
        const auto step_cells = s.lastStepCells();
        auto in_step = [&step_cells](std::int64_t i, std::int64_t j) {
            return std::find(step_cells.begin(), step_cells.end(), std::make_pair(i, j)) != step_cells.end();
        };
        // The path walked so far, with the matrix it is in at each cell.
        const std::vector<TraceCell>& trace = s.trace();
        const auto walked = std::size_t(s.tracebackDone());
        auto trace_at = [&](std::int64_t i, std::int64_t j) -> const TraceCell* {
            for (std::size_t k = 0; k < walked; ++k)
                if (trace[k].i == i && trace[k].j == j) return &trace[k];
            return nullptr;
        };
        const DpState shown = view_->shownState();
        for (std::int64_t i = cells.i0; i <= cells.i1; ++i)
            for (std::int64_t j = cells.j0; j <= cells.j1; ++j) {
                const QRect cell = cellRect(i, j);
                const bool filled = s.isFilled(i, j);
                QColor fill = filled ? colours::filled : colours::unfilled;
                const TraceCell* t = filled ? trace_at(i, j) : nullptr;
                if (t) fill = t->enter == shown || t->leave == shown ? colours::traced : colours::traced_elsewhere;
                if (in_step(i, j) || (s.inTraceback() && current && current->first == i && current->second == j))
                    fill = colours::current;
                p.fillRect(cell, fill);
                p.setPen(QColor(200, 200, 200));
                p.drawRect(cell);
                if (!filled) continue;
                p.setPen(Qt::black);
                p.drawText(cell, Qt::AlignCenter, QString::fromStdString(s.format(s.value(shown, i, j))));
                if (t && !s.scheme().linear()) {
                    // The matrix the path is in here; "H>E" where it switches.
                    const QString badge = t->switches()
                                              ? QStringLiteral("%1>%2").arg(state_name(t->enter), state_name(t->leave))
                                              : state_name(t->enter);
                    paintSmallText(p, cell.adjusted(2, 1, -2, -1), Qt::AlignLeft | Qt::AlignTop, QColor(140, 30, 20),
                                   badge);
                }
            }
    }

    // The cells the recurrence of cell (i, j) reads in the shown matrix (H:
    // diagonal, left and above; E: the cell to the left; F: the cell above),
    // solid with an arrow where the maximum came from, and the name of the
    // winning term in the corner.
    void paintDependencies(QPainter& p, const DpStepper& s, std::int64_t i, std::int64_t j) const {
        const DpState shown = view_->shownState();
        const auto terms = s.dependencies(shown, i, j);
        // E(i,j) and F(i,j) in H's recurrence are the cell itself: the left
        // and upper neighbours carry them.
        auto drawn_at = [&](const DpDependency& d) {
            std::int64_t ni = d.i, nj = d.j;
            if (shown == DpState::H && d.state == DpState::E) nj = j - 1;
            if (shown == DpState::H && d.state == DpState::F) ni = i - 1;
            return std::make_pair(ni, nj);
        };
        const QPointF target = QRectF(cellRect(i, j)).center();
        std::vector<std::pair<std::int64_t, std::int64_t>> drawn;
        for (const DpDependency& d : terms) {
            const auto at = drawn_at(d);
            const auto [ni, nj] = at;
            const bool diagonal = ni == i - 1 && nj == j - 1;
            const QColor colour = diagonal ? colours::diagonal : ni == i ? colours::left : colours::up;
            bool used = false;
            for (const DpDependency& other : terms) used = used || (drawn_at(other) == at && other.used);
            const QRectF rect = QRectF(cellRect(ni, nj)).adjusted(1.5, 1.5, -1.5, -1.5);
            if (std::find(drawn.begin(), drawn.end(), at) == drawn.end()) {
                drawn.push_back(at);
                p.setPen(QPen(colour, used ? 3 : 1, used ? Qt::SolidLine : Qt::DashLine));
                p.setBrush(Qt::NoBrush);
                p.drawRect(rect);
                if (used) paintArrow(p, rect.center(), target);
            }
            if (shown != DpState::H && d.used)
                paintSmallText(p, rect.adjusted(2, 0, -2, 0), Qt::AlignLeft | Qt::AlignBottom, colour.darker(130),
                               d.state == DpState::H ? QStringLiteral("H-o")
                                                     : QStringLiteral("%1-e").arg(state_name(d.state)));
        }
    }

    // An arrow from a neighbour's centre most of the way to the current cell's.
    static void paintArrow(QPainter& p, const QPointF& from, const QPointF& to) {
        const QPointF tip = from + (to - from) * 0.62;
        p.drawLine(from + (to - from) * 0.3, tip);
        const double angle = std::atan2(tip.y() - from.y(), tip.x() - from.x());
        for (const double side : {-0.45, 0.45})
            p.drawLine(tip, tip - QPointF(std::cos(angle + side), std::sin(angle + side)) * 7);
    }

    static void paintSmallText(QPainter& p, const QRectF& rect, Qt::Alignment align, const QColor& colour,
                               const QString& text) {
        QFont small = p.font();
        small.setPointSize(6);
        p.save();
        p.setFont(small);
        p.setPen(colour);
        p.drawText(rect, int(align), text);
        p.restore();
    }

    static QString state_name(DpState state) {
        static const char* const names[] = {"H", "E", "F"};
        return QLatin1String(names[int(state)]);
    }

    DpStepperView* view_;
};

DpStepperView::DpStepperView(QWidget* parent) : QWidget(parent) {
    auto* bar = new QVBoxLayout;
    bar->addLayout(makeChoices());
    bar->addLayout(makeSteps());
    grid_ = new DpStepperGrid(this);
    scroll_ = new QScrollArea;
    scroll_->setWidget(grid_);
    scroll_->setWidgetResizable(false);
    scroll_->setToolTip(tr("The DP matrix: click a filled cell to see its recurrence"));
    text_ = new QPlainTextEdit;
    text_->setReadOnly(true);
    text_->setFocusPolicy(Qt::ClickFocus);
    text_->setObjectName("stepperRecurrence");
    text_->setToolTip(
        tr("The recurrence of the current (or clicked) cell with its numbers; in the traceback, what "
           "the step did and which matrix it is in"));
    QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    mono.setPointSize(11);
    text_->setFont(mono);
    text_->setMaximumHeight(130);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(scroll_, 1);
    layout->addWidget(text_);
    makeKeys();
    refresh();
}

QHBoxLayout* DpStepperView::makeChoices() {
    // What one step fills, which matrix is shown, Play and its speed.
    step_ = new QComboBox;
    step_->addItems({tr("Step by cell"), tr("Step by row"), tr("Step by anti-diagonal (wavefront order)")});
    step_->setToolTip(
        tr("What one step fills: a cell, a row, or a whole anti-diagonal (the cells a GPU computes "
           "at once, all of them highlighted)"));
    state_ = new QComboBox;
    state_->addItems({tr("H (best score)"), tr("E (gap in the query)"), tr("F (gap in the target)")});
    state_->setToolTip(
        tr("Which matrix the table shows: H, the best score; E, alignments ending in a gap in the "
           "query; F, ending in a gap in the target. E and F show the cells they read"));
    // Two rows, so the view fits beside the Job panel on a small screen: what
    // is stepped and shown, then the steps and where the fill stands.
    for (QComboBox* combo : {step_, state_}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(14);
    }
    play_ = new QPushButton(tr("Play"));
    play_->setObjectName("stepperPlay");
    play_->setCheckable(true);
    play_->setToolTip(
        tr("Play the steps one after another at the chosen speed; it pauses at the end of the fill "
           "and at the end of the traceback (Space)"));
    speed_ = new QComboBox;
    speed_->setObjectName("stepperSpeed");
    for (double v : speeds()) speed_->addItem(tr("%1 steps/s").arg(v), v);
    speed_->setCurrentIndex(2);
    speed_->setToolTip(tr("How many steps Play makes per second"));
    play_timer_ = new QTimer(this);
    play_timer_->setInterval(int(1000.0 / speed()));
    // The keys step the matrix from anywhere in the window: the choices and
    // buttons work by mouse and never take the focus (a combo box in focus
    // would keep Space for itself).
    for (QWidget* w : std::initializer_list<QWidget*>{step_, state_, speed_, play_}) w->setFocusPolicy(Qt::NoFocus);
    auto* row = new QHBoxLayout;
    row->addWidget(step_, 1);
    row->addWidget(state_, 1);
    row->addWidget(play_);
    row->addWidget(speed_);

    connect(step_, &QComboBox::currentIndexChanged, this, [this](int i) {
        setStep(i == 0 ? FillStep::Cell : i == 1 ? FillStep::Row : FillStep::AntiDiagonal);
    });
    connect(state_, &QComboBox::currentIndexChanged, this, [this](int i) {
        setShownState(i == 0 ? DpState::H : i == 1 ? DpState::E : DpState::F);
    });
    connect(play_timer_, &QTimer::timeout, this, &DpStepperView::playStep);
    connect(play_, &QPushButton::toggled, this, &DpStepperView::setPlaying);
    connect(speed_, &QComboBox::currentIndexChanged, this, [this] { play_timer_->setInterval(int(1000.0 / speed())); });
    return row;
}

QHBoxLayout* DpStepperView::makeSteps() {
    // Start, Back, Forward, End and where the fill or the traceback stands.
    auto* first = new QPushButton(tr("|< Start"));
    auto* back = new QPushButton(tr("◀ Back"));
    auto* forward = new QPushButton(tr("Forward ▶"));
    auto* last = new QPushButton(tr("End >|"));
    first->setObjectName("stepperStart");
    back->setObjectName("stepperBack");
    forward->setObjectName("stepperForward");
    last->setObjectName("stepperEnd");
    first->setToolTip(tr("Back to the empty matrix (only the boundary row and column) (Home)"));
    back->setToolTip(tr("One step back (Left arrow)"));
    forward->setToolTip(
        tr("One step: a cell, a row or an anti-diagonal as chosen; after the fill, one traceback "
           "step (Right arrow)"));
    last->setToolTip(
        tr("To the end of the fill, before the traceback; pressed again, to the end of the traceback (End)"));
    status_ = new QLabel;
    status_->setObjectName("stepperStatus");
    status_->setMinimumWidth(0);
    status_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* row = new QHBoxLayout;
    for (QPushButton* b : {first, back, forward, last}) {
        b->setFocusPolicy(Qt::NoFocus);
        row->addWidget(b);
    }
    row->addWidget(status_, 1);
    connect(first, &QPushButton::clicked, this, &DpStepperView::toStart);
    connect(back, &QPushButton::clicked, this, &DpStepperView::stepBack);
    connect(forward, &QPushButton::clicked, this, &DpStepperView::stepForward);
    connect(last, &QPushButton::clicked, this, &DpStepperView::toEnd);
    return row;
}

void DpStepperView::makeKeys() {
    // Window-wide while the stepper is visible (a shortcut of a hidden widget
    // is off, so another tab of the window keeps its keys). A text field in
    // focus keeps the arrows, Home, End and Space (Qt asks it first), and a
    // focused button, check box or combo box keeps Space, which presses or
    // opens it.
    const std::pair<Qt::Key, void (DpStepperView::*)()> keys[] = {{Qt::Key_Right, &DpStepperView::stepForward},
                                                                  {Qt::Key_Left, &DpStepperView::stepBack},
                                                                  {Qt::Key_Home, &DpStepperView::toStart},
                                                                  {Qt::Key_End, &DpStepperView::toEnd}};
    for (const auto& [key, slot] : keys) {
        auto* shortcut = new QShortcut(QKeySequence(key), this);
        shortcut->setContext(Qt::WindowShortcut);
        connect(shortcut, &QShortcut::activated, this, slot);
    }
    auto* space = new QShortcut(QKeySequence(Qt::Key_Space), this);
    space->setContext(Qt::WindowShortcut);
    connect(space, &QShortcut::activated, this, [this] { setPlaying(!playing()); });
    auto pressed_by_space = [](const QWidget* w) {
        return qobject_cast<const QAbstractButton*>(w) || qobject_cast<const QComboBox*>(w);
    };
    space->setEnabled(!pressed_by_space(QApplication::focusWidget()));
    connect(qApp, &QApplication::focusChanged, space,
            [space, pressed_by_space](QWidget*, QWidget* now) { space->setEnabled(!pressed_by_space(now)); });
}

void DpStepperView::playStep() {
    if (!stepper_) {
        setPlaying(false);
        return;
    }
    const bool fill_was_done = stepper_->filled() == stepper_->innerCells();
    const bool moved = stepper_->advance(+1);
    if (moved) explained_.reset();
    refresh();
    // Pause where End stops: the fill's end, then the traceback's.
    const bool fill_done = stepper_->filled() == stepper_->innerCells() && !stepper_->inTraceback();
    if (!moved || (fill_done && !fill_was_done) ||
        (stepper_->inTraceback() && stepper_->tracebackDone() == stepper_->tracebackSteps()))
        setPlaying(false);
}

DpStepperView::~DpStepperView() = default;

void DpStepperView::setPair(const std::string& query, const std::string& target, const ScoringScheme& scheme,
                            const AlignOptions& options) {
    auto stepper = std::make_unique<DpStepper>(query, target, scheme, options);
    stepper_ = std::move(stepper);
    stepper_->setStep(step_->currentIndex() == 0   ? FillStep::Cell
                      : step_->currentIndex() == 1 ? FillStep::Row
                                                   : FillStep::AntiDiagonal);
    state_->setEnabled(!scheme.linear());
    if (scheme.linear()) setShownState(DpState::H);
    explained_.reset();
    setPlaying(false);
    grid_->resize(grid_->sizeHint());
    refresh();
}

void DpStepperView::setStep(FillStep step) {
    const int index = step == FillStep::Cell ? 0 : step == FillStep::Row ? 1 : 2;
    if (step_->currentIndex() != index) {
        step_->setCurrentIndex(index);  // comes back here through the signal
        return;
    }
    if (stepper_) stepper_->setStep(step);
    refresh();
}

void DpStepperView::setShownState(DpState state) {
    shown_ = state;
    const int index = state == DpState::H ? 0 : state == DpState::E ? 1 : 2;
    if (state_->currentIndex() != index) state_->setCurrentIndex(index);
    grid_->update();
}

void DpStepperView::stepForward() {
    if (stepper_ && stepper_->advance(+1)) explained_.reset();
    refresh();
}

void DpStepperView::stepBack() {
    if (stepper_ && stepper_->advance(-1)) explained_.reset();
    refresh();
}

void DpStepperView::toStart() {
    if (stepper_) stepper_->toStart();
    explained_.reset();
    refresh();
}

void DpStepperView::toEnd() {
    // The end of the fill first (the whole matrix, the traceback not begun),
    // so the last cells can be read before the path is drawn.
    if (stepper_) {
        if (stepper_->filled() < stepper_->innerCells()) stepper_->toFillEnd();
        else
            stepper_->toEnd();
    }
    explained_.reset();
    refresh();
}

std::vector<double> DpStepperView::speeds() { return {0.5, 1, 2, 5, 10, 25, 100}; }

double DpStepperView::speed() const { return speed_->currentData().toDouble(); }

void DpStepperView::setSpeed(double stepsPerSecond) {
    int best = 0;
    for (int k = 0; k < speed_->count(); ++k)
        if (std::fabs(speed_->itemData(k).toDouble() - stepsPerSecond) <
            std::fabs(speed_->itemData(best).toDouble() - stepsPerSecond))
            best = k;
    speed_->setCurrentIndex(best);
}

bool DpStepperView::playing() const { return play_timer_->isActive(); }

void DpStepperView::setPlaying(bool playing) {
    if (playing && !stepper_) playing = false;
    if (playing) play_timer_->start();
    else
        play_timer_->stop();
    const QSignalBlocker block(play_);
    play_->setChecked(playing);
    play_->setText(playing ? tr("Pause") : tr("Play"));
}

void DpStepperView::explainCell(std::int64_t i, std::int64_t j) {
    explained_ = std::make_pair(i, j);
    refresh();
}

QString DpStepperView::recurrenceText() const { return text_->toPlainText(); }
QString DpStepperView::statusText() const { return status_->text(); }
QWidget* DpStepperView::grid() const { return grid_; }
QRect DpStepperView::cellRect(std::int64_t i, std::int64_t j) const { return grid_->cellRect(i, j); }

void DpStepperView::refresh() {
    if (!stepper_) {
        status_->setText(tr("No pair"));
        text_->clear();
        return;
    }
    const DpStepper& s = *stepper_;
    if (s.inTraceback()) {
        status_->setText(tr("Traceback: step %1 of %2").arg(s.tracebackDone()).arg(s.tracebackSteps()));
    } else {
        status_->setText(tr("Fill: %1 of %2 cells").arg(s.filled()).arg(s.innerCells()));
    }
    QString text;
    if (explained_) {
        text = QString::fromStdString(s.explain(explained_->first, explained_->second));
    } else if (s.inTraceback()) {
        text = QString::fromStdString(s.explainTraceback());
    } else if (const auto c = s.current()) {
        text = QString::fromStdString(s.explain(c->first, c->second));
    } else {
        text =
            tr("Row 0 and column 0 hold the boundary: leading gaps, or zeros where they are free. "
               "Step forward to fill the matrix.");
    }
    text_->setPlainText(text);
    if (const auto c = s.current())
        scroll_->ensureVisible(cellRect(c->first, c->second).center().x(), cellRect(c->first, c->second).center().y(),
                               60, 40);
    grid_->update();
    emit stepped();
}

}  // namespace alignscope::ui
