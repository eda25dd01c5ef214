// The DP heatmap: exact, downsampled-and-refined, or as the project saved it.
#include "views/heatmap/heatmap_view.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>

#include <qcustomplot.h>

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QThread>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace alignscope::ui {

namespace {

constexpr std::int64_t none = DpMatrices::minus_infinity;
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

QCPColorGradient viridis() {
    QCPColorGradient g;
    g.clearColorStops();
    g.setColorStopAt(0.0, QColor(68, 1, 84));
    g.setColorStopAt(0.25, QColor(59, 82, 139));
    g.setColorStopAt(0.5, QColor(33, 145, 140));
    g.setColorStopAt(0.75, QColor(94, 201, 98));
    g.setColorStopAt(1.0, QColor(253, 231, 37));
    g.setNanHandling(QCPColorGradient::nhTransparent);
    return g;
}

const char* state_name(DpState s) { return s == DpState::H ? "H" : s == DpState::E ? "E" : "F"; }

// An axis in block units over blocks of unequal size: block b is drawn over
// plot coordinates [b - 0.5, b + 0.5) and stands for the sequence positions
// [begins[b], begins[b + 1]) (a position p being the cell [p, p + 1), centre
// p + 0.5). Ticks go at round positions, mapped into the blocks.
class BlockTicker : public QCPAxisTicker {
public:
    explicit BlockTicker(std::vector<std::int64_t> begins) : begins_(std::move(begins)) {}

    int blocks() const { return int(begins_.size()) - 1; }
    // Plot coordinate -> continuous position, and back.
    double toPosition(double x) const {
        const int b = std::clamp(int(std::floor(x + 0.5)), 0, blocks() - 1);
        const double f = x - (b - 0.5);
        return double(begins_[std::size_t(b)]) + f * double(begins_[std::size_t(b) + 1] - begins_[std::size_t(b)]);
    }
    double toPlot(double position) const {
        const auto it = std::upper_bound(begins_.begin(), begins_.end() - 1, std::int64_t(std::floor(position)));
        const int b = std::clamp(int(it - begins_.begin()) - 1, 0, blocks() - 1);
        const double size = double(begins_[std::size_t(b) + 1] - begins_[std::size_t(b)]);
        return b - 0.5 + (position - double(begins_[std::size_t(b)])) / size;
    }

protected:
    QVector<double> createTickVector(double, const QCPRange& range) override {
        const double lo = toPosition(range.lower) - 0.5, hi = toPosition(range.upper) - 0.5;
        const double step = std::max(1.0, getTickStep(QCPRange(lo, hi)));
        QVector<double> ticks;
        for (double v = std::ceil(lo / step) * step; v <= hi && ticks.size() < 1000; v += step)
            ticks << toPlot(v + 0.5);
        return ticks;
    }
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        const double v = std::round(toPosition(tick) - 0.5);
        if (std::fabs(v) >= 1e6) return QString::number(v / 1e6, 'g', 6) + "M";
        if (std::fabs(v) >= 1e4) return QString::number(v / 1e3, 'g', 6) + "k";
        return QString::number(v, 'f', 0);
    }

private:
    std::vector<std::int64_t> begins_;  // blocks + 1 entries, the last = the end
};

std::vector<std::int64_t> block_begins(const store::Heatmap& h, bool rows) {
    const int n = rows ? h.rows : h.cols;
    std::vector<std::int64_t> begins(std::size_t(n) + 1);
    for (int b = 0; b <= n; ++b) begins[std::size_t(b)] = rows ? h.row_begin(b) : h.col_begin(b);
    return begins;
}

}  // namespace

DpHeatmapView::DpHeatmapView(QWidget* parent) : QWidget(parent) {
    states_ = new QComboBox;
    states_->addItems({tr("H (best score)"), tr("E (gap in the query)"), tr("F (gap in the target)")});
    states_->setToolTip(
        tr("Which DP matrix the colours show: H, the best score of each cell, or E and F, the best "
           "scores ending in a gap (affine gaps)"));
    status_ = new QLabel;
    auto* bar = new QHBoxLayout;
    bar->addWidget(states_);
    bar->addWidget(status_, 1);

    plot_ = new QCustomPlot;
    plot_->setMinimumSize(300, 300);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis2->setRangeReversed(true);
    plot_->xAxis->setLabel(tr("target position"));
    plot_->yAxis->setLabel(tr("query position"));
    plot_->xAxis2->setVisible(true);
    plot_->yAxis2->setVisible(true);
    plot_->xAxis->grid()->setVisible(false);
    plot_->yAxis->grid()->setVisible(false);
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    map_->setInterpolate(false);
    map_->setTightBoundary(false);
    scale_bar_ = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(0, 1, scale_bar_);
    scale_bar_->setType(QCPAxis::atRight);
    map_->setColorScale(scale_bar_);
    map_->setGradient(viridis());
    auto* margins = new QCPMarginGroup(plot_);
    plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    scale_bar_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    path_ = new QCPCurve(plot_->xAxis, plot_->yAxis);
    path_->setPen(QPen(pathColour(), 3));
    path_->setLineStyle(QCPCurve::lsLine);

    refine_ = new QTimer(this);
    refine_->setSingleShot(true);
    refine_->setInterval(120);
    connect(refine_, &QTimer::timeout, this, &DpHeatmapView::requestRegion);
    auto range_changed = [this] {
        updateSequenceTicks();
        if (mode_ == Mode::Large) refine_->start();
    };
    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, range_changed);
    connect(plot_->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, range_changed);
    // Bottom/right mirror top/left.
    connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot_->xAxis2,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(plot_->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot_->yAxis2,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(states_, &QComboBox::currentIndexChanged, this, [this](int i) {
        setState(i == 0 ? DpState::H : i == 1 ? DpState::E : DpState::F);
    });
    connect(plot_, &QCustomPlot::mouseMove, this, &DpHeatmapView::onMouseMove);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(plot_, 1);
}

DpHeatmapView::~DpHeatmapView() {
    cancelWork();
    // Their finished() would arrive after this view is gone: wait and delete here.
    for (QThread* thread : threads_) {
        thread->wait();
        delete thread;
    }
}

void DpHeatmapView::cancelWork() {
    if (cancel_) cancel_->cancel();
    ++generation_;
    pending_ = {};
}

void DpHeatmapView::setMatrices(DpMatrices dp, std::string query, std::string target, int scale) {
    cancelWork();
    setBlockTickers(nullptr);
    mode_ = Mode::Exact;
    dp_ = std::move(dp);
    query_ = std::move(query);
    target_ = std::move(target);
    scale_ = std::max(scale, 1);
    heatmap_.reset();
    stored_.reset();
    states_->setEnabled(true);
    QVector<double> keys, values;
    for (const auto& [i, j] : dp_->path) {
        keys << double(j);
        values << double(i);
    }
    path_->setData(keys, values);
    showExact();
    plot_->xAxis->setRange(-0.5, double(dp_->cols) - 0.5);
    plot_->yAxis->setRange(-0.5, double(dp_->rows) - 0.5);
    status_->setText(tr("%1 x %2 cells, exact; score %3")
                         .arg(dp_->rows)
                         .arg(dp_->cols)
                         .arg(QString::fromStdString(format_score(double(dp_->alignment.score) / scale_))));
    updateSequenceTicks();
    plot_->replot();
}

void DpHeatmapView::showExact() {
    const DpMatrices& dp = *dp_;
    const std::vector<std::int64_t>& m = state_ == DpState::H ? dp.H : state_ == DpState::E ? dp.E : dp.F;
    map_->data()->setSize(int(dp.cols), int(dp.rows));
    map_->data()->setRange(QCPRange(0, double(dp.cols - 1)), QCPRange(0, double(dp.rows - 1)));
    for (std::int64_t i = 0; i < dp.rows; ++i)
        for (std::int64_t j = 0; j < dp.cols; ++j) {
            const std::int64_t v = m[std::size_t(i * dp.cols + j)];
            map_->data()->setCell(int(j), int(i), v <= none / 2 ? nan : double(v) / scale_);
        }
    map_->rescaleDataRange(true);
    scale_bar_->axis()->setLabel(tr("%1 (score)").arg(state_name(state_)));
}

void DpHeatmapView::setPair(std::string query, std::string target, const ScoringScheme& scheme,
                            const AlignOptions& options, std::optional<Alignment> alignment) {
    const std::uint64_t cells = (query.size() + 1) * std::uint64_t(target.size() + 1);
    if (cells <= exact_cell_limit) {
        AlignOptions with_path = options;
        with_path.traceback = true;
        DpMatrices dp = compute_dp_matrices(query, target, scheme, with_path, exact_cell_limit);
        setMatrices(std::move(dp), std::move(query), std::move(target), scheme.scale);
        return;
    }
    cancelWork();
    setBlockTickers(nullptr);
    mode_ = Mode::Large;
    dp_.reset();
    stored_.reset();
    saved_rows_.reset();
    scheme_ = scheme;
    options_ = options;
    scale_ = scheme.scale;
    query_ = query;
    target_ = target;
    large_query_ = std::make_shared<const std::string>(std::move(query));
    large_target_ = std::make_shared<const std::string>(std::move(target));
    states_->setEnabled(true);
    if (!alignment && cells <= 64'000'000) {
        AlignOptions with_path = options;
        with_path.traceback = true;
        alignment = align_reference(*large_query_, *large_target_, scheme, with_path);
    }
    if (alignment) setPathFromAlignment(*alignment);
    else
        path_->data()->clear();
    status_->setText(tr("%1 x %2 cells, block maxima at screen resolution")
                         .arg(large_query_->size() + 1)
                         .arg(large_target_->size() + 1));
    heatmap_.reset();
    {
        const QSignalBlocker bx(plot_->xAxis), by(plot_->yAxis);
        plot_->xAxis->setRange(-0.5, double(large_target_->size()) + 0.5);
        plot_->yAxis->setRange(-0.5, double(large_query_->size()) + 0.5);
    }
    plot_->xAxis2->setRange(plot_->xAxis->range());
    plot_->yAxis2->setRange(plot_->yAxis->range());
    updateSequenceTicks();
    requestRegion();
}

void DpHeatmapView::setSavedRows(std::vector<DpRowCheckpoint> rows) {
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.row < b.row; });
    saved_rows_ = std::make_shared<const std::vector<DpRowCheckpoint>>(std::move(rows));
    heatmap_.reset();
    if (mode_ == Mode::Large) requestRegion();
}

void DpHeatmapView::setAlignedPair(const AlignedPair& pair) {
    setPair(pair.query.residues, pair.target.residues, pair.scheme, pair.options, pair.alignment);
}

void DpHeatmapView::loadFromProject(const store::Project& project, std::int64_t job_id, std::int64_t row) {
    setAlignedPair(aligned_pair_from_project(project, job_id, row));
}

void DpHeatmapView::setPathFromAlignment(const Alignment& a) {
    // One vertex where the path turns, not one per cell.
    QVector<double> keys, values;
    if (a.cigar.empty()) {
        path_->data()->clear();
        return;
    }
    std::int64_t i = a.query_begin - 1, j = a.target_begin - 1;
    bool started = a.mode != AlignmentMode::Local;
    if (started) {
        keys << double(j);
        values << double(i);
    }
    const auto& ops = a.cigar.ops();
    for (std::size_t k = 0; k < ops.size(); ++k) {
        const CigarOp& op = ops[k];
        if (!started) {
            // A local path begins at its first aligned cell, not before it.
            keys << double(j + (op.op != 'I'));
            values << double(i + (op.op != 'D'));
            started = true;
        }
        if (op.op != 'D') i += op.length;
        if (op.op != 'I') j += op.length;
        // '=' and 'X' runs both go diagonally: one segment until the direction turns.
        const bool diagonal = op.op == '=' || op.op == 'X';
        const bool next_diagonal = k + 1 < ops.size() && (ops[k + 1].op == '=' || ops[k + 1].op == 'X');
        if (diagonal && next_diagonal) continue;
        keys << double(j);
        values << double(i);
    }
    path_->setData(keys, values);
}

void DpHeatmapView::setStoredHeatmap(const store::Heatmap& heatmap) {
    cancelWork();
    mode_ = Mode::Stored;
    dp_.reset();
    heatmap_.reset();
    stored_ = heatmap;
    states_->setEnabled(false);
    query_.clear();
    target_.clear();
    const store::Heatmap& h = *stored_;
    if (!h.row_edges.empty() || !h.col_edges.empty()) {
        // Blocks of unequal size: one colour-map cell per block at integer
        // coordinates, the axes' ticks mapped to positions through the edges.
        map_->data()->setSize(h.cols, h.rows);
        map_->data()->setRange(QCPRange(0, std::max(h.cols - 1, 1)), QCPRange(0, std::max(h.rows - 1, 1)));
        for (int r = 0; r < h.rows; ++r)
            for (int c = 0; c < h.cols; ++c)
                map_->data()->setCell(c, r, std::isnan(h.at(r, c)) ? nan : double(h.at(r, c)));
        map_->rescaleDataRange(true);
        scale_bar_->axis()->setLabel(tr("%1 (block maximum)").arg(QString::fromStdString(h.label)));
        QVector<double> keys, values;
        keys.reserve(qsizetype(h.path.size()));
        values.reserve(qsizetype(h.path.size()));
        for (const auto& [r, c] : h.path) {
            keys << double(c);
            values << double(r);
        }
        path_->setData(keys, values);
        setBlockTickers(&h);
        {
            const QSignalBlocker bx(plot_->xAxis), by(plot_->yAxis);
            plot_->xAxis->setRange(-0.5, double(h.cols) - 0.5);
            plot_->yAxis->setRange(-0.5, double(h.rows) - 0.5);
        }
        plot_->xAxis2->setRange(plot_->xAxis->range());
        plot_->yAxis2->setRange(plot_->yAxis->range());
        status_->setText(tr("%1 vs %2: the whole %L3 x %L4 matrix as %5 x %6 blocks (maxima kept by the job)")
                             .arg(QString::fromStdString(h.query_id), QString::fromStdString(h.target_id))
                             .arg(h.source_rows - 1)
                             .arg(h.source_cols - 1)
                             .arg(h.rows)
                             .arg(h.cols));
        updateSequenceTicks();
        plot_->replot();
        return;
    }
    setBlockTickers(nullptr);
    map_->data()->setSize(h.cols, h.rows);
    // Block c covers source columns [ceil(c*N/cols), ceil((c+1)*N/cols)): place its centre there.
    const double bw = double(h.source_cols) / h.cols, bh = double(h.source_rows) / h.rows;
    map_->data()->setRange(QCPRange(bw / 2 - 0.5, double(h.source_cols) - bw / 2 - 0.5),
                           QCPRange(bh / 2 - 0.5, double(h.source_rows) - bh / 2 - 0.5));
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) map_->data()->setCell(c, r, std::isnan(h.at(r, c)) ? nan : double(h.at(r, c)));
    map_->rescaleDataRange(true);
    scale_bar_->axis()->setLabel(tr("%1 (block maximum)").arg(QString::fromStdString(h.label)));
    QVector<double> keys, values;
    for (const auto& [r, c] : h.path) {
        keys << (c + 0.5) * bw - 0.5;
        values << (r + 0.5) * bh - 0.5;
    }
    path_->setData(keys, values);
    plot_->xAxis->setRange(-0.5, double(h.source_cols) - 0.5);
    plot_->yAxis->setRange(-0.5, double(h.source_rows) - 0.5);
    status_->setText(tr("%1 vs %2: %3 x %4 cells saved as %5 x %6 blocks")
                         .arg(QString::fromStdString(h.query_id), QString::fromStdString(h.target_id))
                         .arg(h.source_rows)
                         .arg(h.source_cols)
                         .arg(h.rows)
                         .arg(h.cols));
    updateSequenceTicks();
    plot_->replot();
}

void DpHeatmapView::clear(const QString& message) {
    cancelWork();
    setBlockTickers(nullptr);
    mode_ = Mode::Empty;
    dp_.reset();
    heatmap_.reset();
    stored_.reset();
    query_.clear();
    target_.clear();
    map_->data()->clear();
    path_->data()->clear();
    status_->setText(message);
    updateSequenceTicks();
    plot_->replot();
}

void DpHeatmapView::setBlockTickers(const store::Heatmap* h) {
    // Positions along the bottom (target) and right (query) axes.
    if (h) {
        plot_->xAxis->setTicker(QSharedPointer<BlockTicker>::create(block_begins(*h, false)));
        plot_->yAxis2->setTicker(QSharedPointer<BlockTicker>::create(block_begins(*h, true)));
        plot_->yAxis2->setTickLabels(true);
    } else if (dynamic_cast<BlockTicker*>(plot_->xAxis->ticker().data())) {
        plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        plot_->yAxis2->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
}

QPointF DpHeatmapView::plotPoint(double i, double j) const {
    if (mode_ == Mode::Stored && stored_ && (!stored_->row_edges.empty() || !stored_->col_edges.empty())) {
        const auto* x = dynamic_cast<const BlockTicker*>(plot_->xAxis->ticker().data());
        const auto* y = dynamic_cast<const BlockTicker*>(plot_->yAxis2->ticker().data());
        if (x && y) return {x->toPlot(j + 0.5), y->toPlot(i + 0.5)};
    }
    return {j, i};
}

void DpHeatmapView::setState(DpState state) {
    state_ = state;
    const int index = state == DpState::H ? 0 : state == DpState::E ? 1 : 2;
    if (states_->currentIndex() != index) {
        const QSignalBlocker block(states_);
        states_->setCurrentIndex(index);
    }
    if (mode_ == Mode::Exact) {
        showExact();
        plot_->replot();
    } else if (mode_ == Mode::Large) {
        heatmap_.reset();
        requestRegion();
    }
}

void DpHeatmapView::setVisibleRegion(const DpRegion& region) {
    plot_->xAxis->setRange(double(region.col_begin) - 0.5, double(region.col_end) - 0.5);
    plot_->yAxis->setRange(double(region.row_begin) - 0.5, double(region.row_end) - 0.5);
    if (mode_ == Mode::Large) {
        refine_->stop();
        requestRegion();
    } else {
        plot_->replot();
    }
}

void DpHeatmapView::requestRegion() {
    if (mode_ != Mode::Large) return;
    const std::int64_t rows = std::int64_t(large_query_->size()) + 1, cols = std::int64_t(large_target_->size()) + 1;
    const QCPRange x = plot_->xAxis->range(), y = plot_->yAxis->range();
    DpRegion region;
    region.col_begin = std::clamp<std::int64_t>(std::int64_t(std::floor(x.lower + 0.5)), 0, cols - 1);
    region.col_end = std::clamp<std::int64_t>(std::int64_t(std::ceil(x.upper + 0.5)), region.col_begin + 1, cols);
    region.row_begin = std::clamp<std::int64_t>(std::int64_t(std::floor(y.lower + 0.5)), 0, rows - 1);
    region.row_end = std::clamp<std::int64_t>(std::int64_t(std::ceil(y.upper + 0.5)), region.row_begin + 1, rows);
    // The axis rect gets its size from a replot; ask for one when the layout is stale.
    if (plot_->axisRect()->rect().width() < 16 || plot_->axisRect()->outerRect().width() > plot_->width())
        plot_->replot(QCustomPlot::rpImmediateRefresh);
    const QRect rect = plot_->axisRect()->rect();
    DpHeatmapRequest request;
    request.region = region;
    request.grid_cols = std::clamp(rect.width(), 64, 2048);
    request.grid_rows = std::clamp(rect.height(), 64, 2048);
    request.state = state_;
    // Nothing to do when the grid on screen, or the one being computed, is this one.
    const std::array<std::int64_t, 7> key{region.row_begin,
                                          region.row_end,
                                          region.col_begin,
                                          region.col_end,
                                          std::min<std::int64_t>(request.grid_rows, region.rows()),
                                          std::min<std::int64_t>(request.grid_cols, region.cols()),
                                          int(state_)};
    const bool shown = heatmap_ && key == std::array<std::int64_t, 7>{heatmap_->region.row_begin,
                                                                      heatmap_->region.row_end,
                                                                      heatmap_->region.col_begin,
                                                                      heatmap_->region.col_end,
                                                                      heatmap_->rows,
                                                                      heatmap_->cols,
                                                                      int(heatmap_->state)};
    if (shown || (worker_ && key == pending_)) return;
    pending_ = key;
    cancelWork();
    cancel_ = std::make_shared<CancellationToken>();
    request.cancel = cancel_.get();
    const std::uint64_t generation = generation_;
    status_->setText(tr("Computing rows %1-%2, columns %3-%4…")
                         .arg(region.row_begin)
                         .arg(region.row_end - 1)
                         .arg(region.col_begin)
                         .arg(region.col_end - 1));
    QPointer<DpHeatmapView> self(this);
    auto query = large_query_, target = large_target_;
    auto cancel = cancel_;
    const ScoringScheme scheme = scheme_;
    const AlignOptions options = options_;
    auto saved = saved_rows_;
    auto pass_lock = pass_lock_;
    worker_ = QThread::create([self, query, target, scheme, options, request, cancel, generation, pass_lock, saved] {
        // One pass at a time; the one before was cancelled and ends soon.
        const std::lock_guard<std::mutex> one_pass(*pass_lock);
        if (cancel->cancelled()) return;
        std::shared_ptr<DpHeatmap> result;
        QString failure;
        try {
            DpHeatmapRequest from_saved = request;
            if (saved)
                for (const DpRowCheckpoint& row : *saved)  // sorted: the last that fits is the nearest
                    if (row.row <= request.region.row_begin && std::int64_t(row.H.size()) >= request.region.col_end &&
                        std::int64_t(row.F.size()) >= request.region.col_end)
                        from_saved.start = &row;
            result = std::make_shared<DpHeatmap>(compute_dp_heatmap(*query, *target, scheme, options, from_saved));
        } catch (const Cancelled&) {
            return;
        } catch (const std::exception& e) {
            failure = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            self,
            [self, result, failure, generation] {
                DpHeatmapView* view = self.data();
                if (!view || generation != view->generation_) return;
                if (!failure.isEmpty()) {
                    view->status_->setText(failure);
                    emit view->failed(failure);
                    return;
                }
                view->heatmap_ = result;
                view->showGrid();
                emit view->heatmapReady();
            },
            Qt::QueuedConnection);
    });
    threads_.push_back(worker_);
    connect(worker_, &QThread::finished, this, [this, w = worker_] {
        if (worker_ == w) worker_ = nullptr;
        threads_.erase(std::remove(threads_.begin(), threads_.end(), w), threads_.end());
        w->deleteLater();
    });
    worker_->start();
}

bool DpHeatmapView::busy() const { return worker_ != nullptr || (refine_ && refine_->isActive()); }

void DpHeatmapView::showGrid() {
    const DpHeatmap& h = *heatmap_;
    map_->data()->setSize(h.cols, h.rows);
    const double bw = double(h.region.cols()) / h.cols, bh = double(h.region.rows()) / h.rows;
    map_->data()->setRange(QCPRange(double(h.region.col_begin) + bw / 2 - 0.5, double(h.region.col_end) - bw / 2 - 0.5),
                           QCPRange(double(h.region.row_begin) + bh / 2 - 0.5,
                                    double(h.region.row_end) - bh / 2 - 0.5));
    for (int r = 0; r < h.rows; ++r)
        for (int c = 0; c < h.cols; ++c) {
            const std::int64_t v = h.at(r, c);
            map_->data()->setCell(c, r, v <= none / 2 ? nan : double(v) / scale_);
        }
    map_->rescaleDataRange(true);
    scale_bar_->axis()->setLabel(tr("%1 (block maximum)").arg(state_name(state_)));
    status_->setText(tr("Rows %1-%2, columns %3-%4 in %5 x %6 blocks (%7 M cells computed)")
                         .arg(h.region.row_begin)
                         .arg(h.region.row_end - 1)
                         .arg(h.region.col_begin)
                         .arg(h.region.col_end - 1)
                         .arg(h.rows)
                         .arg(h.cols)
                         .arg(double(h.cells_computed) / 1e6, 0, 'f', 1));
    plot_->replot(QCustomPlot::rpImmediateRefresh);
    // Showing it may have moved the layout (tick labels, colour scale): when the
    // axis rect no longer matches the grid, compute once more for the real size.
    const QRect rect = plot_->axisRect()->rect();
    if ((h.cols < h.region.cols() && h.cols != std::clamp(rect.width(), 64, 2048)) ||
        (h.rows < h.region.rows() && h.rows != std::clamp(rect.height(), 64, 2048)))
        refine_->start();
}

void DpHeatmapView::updateSequenceTicks() {
    // Residue letters along the top and left when few enough are in view;
    // positions along the bottom and right always.
    auto letters = [](QCPAxis* axis, const std::string& residues) {
        const QCPRange r = axis->range();
        if (residues.empty() || r.size() > 80) {
            axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
            axis->setTickLabels(false);
            return;
        }
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        const auto lo = std::max<std::int64_t>(1, std::int64_t(std::ceil(r.lower)));
        const auto hi = std::min<std::int64_t>(std::int64_t(residues.size()), std::int64_t(std::floor(r.upper)));
        for (std::int64_t k = lo; k <= hi; ++k)
            ticker->addTick(double(k), QString(QChar(residues[std::size_t(k - 1)])));
        axis->setTicker(ticker);
        axis->setTickLabels(true);
    };
    letters(plot_->xAxis2, target_);
    letters(plot_->yAxis, query_);
}

QString DpHeatmapView::hoverText(const QPointF& pos) const {
    const double x = plot_->xAxis->pixelToCoord(pos.x()), y = plot_->yAxis->pixelToCoord(pos.y());
    const auto j = std::int64_t(std::lround(x)), i = std::int64_t(std::lround(y));
    auto fmt = [this](std::int64_t v) {
        return v <= none / 2 ? QStringLiteral("-∞") : QString::fromStdString(format_score(double(v) / scale_));
    };
    if (mode_ == Mode::Exact && dp_) {
        if (i < 0 || j < 0 || i >= dp_->rows || j >= dp_->cols) return {};
        const auto k = std::size_t(i * dp_->cols + j);
        QString text =
            tr("H(%1,%2) = %3   E = %4   F = %5").arg(i).arg(j).arg(fmt(dp_->H[k]), fmt(dp_->E[k]), fmt(dp_->F[k]));
        if (i > 0) text += tr("\nquery %1: %2").arg(i).arg(QChar(query_[std::size_t(i - 1)]));
        if (j > 0) text += tr("\ntarget %1: %2").arg(j).arg(QChar(target_[std::size_t(j - 1)]));
        return text;
    }
    if (mode_ == Mode::Large && heatmap_) {
        const DpHeatmap& h = *heatmap_;
        if (i < h.region.row_begin || i >= h.region.row_end || j < h.region.col_begin || j >= h.region.col_end)
            return {};
        const int r = h.row_block(i), c = h.col_block(j);
        // The block's cells: rows with row_block == r.
        const auto first = [](std::int64_t begin, std::int64_t size, int blocks, int b) {
            return begin + (std::int64_t(b) * size + blocks - 1) / blocks;
        };
        return tr("max %1 over rows %2-%3, columns %4-%5 = %6")
            .arg(state_name(h.state))
            .arg(first(h.region.row_begin, h.region.rows(), h.rows, r))
            .arg(first(h.region.row_begin, h.region.rows(), h.rows, r + 1) - 1)
            .arg(first(h.region.col_begin, h.region.cols(), h.cols, c))
            .arg(first(h.region.col_begin, h.region.cols(), h.cols, c + 1) - 1)
            .arg(fmt(h.at(r, c)));
    }
    if (mode_ == Mode::Stored && stored_ && (!stored_->row_edges.empty() || !stored_->col_edges.empty())) {
        const store::Heatmap& h = *stored_;
        const int r = int(std::lround(y)), c = int(std::lround(x));
        if (r < 0 || c < 0 || r >= h.rows || c >= h.cols) return {};
        const float v = h.at(r, c);
        return tr("rows %L1-%L2, columns %L3-%L4: max %5 = %6")
            .arg(h.row_begin(r))
            .arg(h.row_begin(r + 1) - 1)
            .arg(h.col_begin(c))
            .arg(h.col_begin(c + 1) - 1)
            .arg(QString::fromStdString(h.label))
            .arg(std::isnan(v) ? QStringLiteral("-∞") : QString::number(double(v)));
    }
    if (mode_ == Mode::Stored && stored_) {
        const store::Heatmap& h = *stored_;
        if (i < 0 || j < 0 || i >= h.source_rows || j >= h.source_cols) return {};
        const int r = int(i * h.rows / h.source_rows), c = int(j * h.cols / h.source_cols);
        const float v = h.at(r, c);
        return tr("block (%1,%2): max %3 = %4")
            .arg(r)
            .arg(c)
            .arg(QString::fromStdString(h.label))
            .arg(std::isnan(v) ? QStringLiteral("-∞") : QString::number(double(v)));
    }
    return {};
}

void DpHeatmapView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (mode_ == Mode::Large) refine_->start();  // a grid per screen pixel: new size, new grid
}

void DpHeatmapView::onMouseMove(QMouseEvent* event) {
    if (event->buttons() != Qt::NoButton) return;
    const QString text = hoverText(event->position());
    if (text.isEmpty()) QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

}  // namespace alignscope::ui
