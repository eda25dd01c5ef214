// GCUPS curves, their speedup axis, exports and the live CPU-versus-GPU run.
#include "views/gcups/gcups_view.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>
#include <QThread>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace alignscope::ui {

std::vector<store::BenchPoint> bench_points_from_project(const store::Project& project, std::int64_t job_id) {
    std::vector<store::BenchPoint> points;
    std::int64_t from = 0;
    for (;;) {
        auto page = project.bench_points(job_id, from, 10'000);
        points.insert(points.end(), page.rows.begin(), page.rows.end());
        if (!page.more || page.rows.empty()) break;
        from = page.next();
    }
    return points;
}

BenchOptions default_comparison_options() {
    BenchOptions options;
    options.standard_cases = false;
    options.lengths = {64, 128, 256, 512, 1024, 2048};
    options.gpu_pairs = 100'000;
    options.cpu_seconds = 0.5;
    options.repeat = 3;
    return options;
}

namespace {

bool is_cpu(const std::string& device) { return device.rfind("cpu", 0) == 0; }

QString curve_name(const store::BenchPoint& p) {
    return QString::fromStdString(p.series) + " on " + QString::fromStdString(p.device);
}

QString axis_title(const QString& kind) {
    if (kind == "length") return QObject::tr("sequence length (residues, log scale)");
    if (kind == "pairs") return QObject::tr("batch size (pairs, log scale)");
    if (kind == "streams") return QObject::tr("streams per GPU");
    if (kind == "kernel") return QObject::tr("kernel");
    return kind;
}

bool log_axis(const QString& kind) { return kind == "length" || kind == "pairs"; }

QString csv_field(const std::string& text) {
    QString s = QString::fromStdString(text);
    if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace("\"", "\"\"") + '"';
    return s;
}

// Ticks of a logarithmic axis that stay labelled however narrow its range:
// powers of ten over many decades, 1-2-5 steps over a few, and more steps
// inside one decade (lengths 64 to 250 get 100 and 200, and 60 to 90 get 60,
// 70, 80, 90), printed as plain numbers.
class LogLengthTicker : public QCPAxisTicker {
protected:
    QVector<double> createTickVector(double, const QCPRange& range) override {
        QVector<double> ticks;
        if (range.lower <= 0 || range.upper <= range.lower) return ticks;
        const double span = std::log10(range.upper / range.lower);
        static const std::vector<double> one{1}, three{1, 2, 5}, many{1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9};
        static const std::vector<double> every{1,   1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2,
                                               2.5, 3,   3.5, 4,   4.5, 5,   6,   7,   8,   9};
        const std::vector<double>& mantissas = span > 4 ? one : span > 1.3 ? three : span > 0.3 ? many : every;
        for (int e = int(std::floor(std::log10(range.lower))); e <= int(std::ceil(std::log10(range.upper))); ++e)
            for (double m : mantissas) {
                const double v = m * std::pow(10.0, e);
                if (v >= range.lower * (1 - 1e-9) && v <= range.upper * (1 + 1e-9)) ticks << v;
            }
        return ticks;
    }
    QVector<double> createSubTickVector(int, const QVector<double>&) override { return {}; }
    QString getTickLabel(double tick, const QLocale& locale, QChar, int) override {
        return tick >= 1 && std::fabs(tick - std::round(tick)) < 1e-9 ? locale.toString(qlonglong(std::llround(tick)))
                                                                      : locale.toString(tick, 'g', 4);
    }
};

std::string parameter(const store::BenchPoint& p, const std::string& key) {
    const auto it = p.parameters.find(key);
    return it == p.parameters.end() ? std::string() : it->second;
}

}  // namespace

GcupsView::GcupsView(QWidget* parent) : QWidget(parent) {
    kinds_ = new QComboBox;
    compare_ = new QPushButton(tr("Compare CPU and GPU"));
    compare_->setToolTip(
        tr("Measure GCUPS on the CPU and the GPU at lengths 64 to 2048 on this machine; the "
           "points appear as they are measured"));
    kinds_->setToolTip(tr("What the horizontal axis shows: sequence length, batch size, streams or kernel"));
    status_ = new QLabel;
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("GCUPS against")));
    bar->addWidget(kinds_);
    bar->addStretch(1);
    bar->addWidget(status_);
    bar->addWidget(compare_);

    plot_ = new QCustomPlot;
    plot_->setMinimumSize(320, 240);
    plot_->legend->setVisible(false);
    plot_->legend->setFont(QFont(font().family(), 8));
    // Top left: throughput rises with length, so that corner is usually empty.
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    plot_->yAxis->setLabel(tr("GCUPS (10⁹ cell updates per second)"));
    plot_->yAxis2->setLabel(tr("GPU speedup over the CPU (×)"));
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(plot_, 1);

    connect(kinds_, &QComboBox::currentTextChanged, this, [this](const QString& kind) {
        if (!kind.isEmpty() && kind != x_kind_) setXKind(kind);
    });
    connect(compare_, &QPushButton::clicked, this, [this] {
        if (comparisonRunning()) {
            cancelComparison();
        } else if (registry_) {
            startComparison(*registry_);
        } else {
            status_->setText(tr("No devices to compare"));
        }
    });
    connect(plot_, &QCustomPlot::mouseMove, this, &GcupsView::onMouseMove);
    rebuild();
}

GcupsView::~GcupsView() {
    cancelComparison();
    joinWorker();
}

void GcupsView::setPoints(std::vector<store::BenchPoint> points) {
    points_ = std::move(points);
    updateKinds();
    rebuild();
}

void GcupsView::addPoint(const store::BenchPoint& point) {
    points_.push_back(point);
    updateKinds();
    rebuild();
}

void GcupsView::loadFromProject(const store::Project& project, std::int64_t job_id) {
    setPoints(bench_points_from_project(project, job_id));
}

QStringList GcupsView::xKinds() const {
    QStringList kinds;
    for (const auto& p : points_) {
        const QString k = QString::fromStdString(p.x_label);
        if (!kinds.contains(k)) kinds << k;
    }
    return kinds;
}

void GcupsView::updateKinds() {
    const QStringList kinds = xKinds();
    if (x_kind_.isEmpty() || !kinds.contains(x_kind_))
        x_kind_ = kinds.contains("length") ? QStringLiteral("length") : kinds.value(0);
    const QSignalBlocker block(kinds_);
    if (kinds_->count() != kinds.size()) {
        kinds_->clear();
        kinds_->addItems(kinds);
    }
    kinds_->setCurrentText(x_kind_);
}

void GcupsView::setXKind(const QString& kind) {
    x_kind_ = kind;
    {
        const QSignalBlocker block(kinds_);
        kinds_->setCurrentText(kind);
    }
    rebuild();
}

QString GcupsView::emptyText() const { return empty_text_ && empty_text_->visible() ? empty_text_->text() : QString(); }

QStringList GcupsView::curveNames() const { return curves_.keys(); }
QCPGraph* GcupsView::curve(const QString& name) const { return curves_.value(name, nullptr); }

// Curves in first-seen order; x -> y per curve (a repeated x keeps the last).
struct GcupsView::CurveValues {
    std::vector<QString> order;
    std::map<QString, std::map<double, double>> values;
    std::map<QString, store::BenchPoint> first;
};

void GcupsView::rebuild() {
    plot_->clearGraphs();
    curves_.clear();
    kernel_names_.clear();
    const CurveValues curves = curveValues();
    setXAxis();
    addCurves(curves);
    const bool any_speedup = addSpeedupCurves(curves);
    plot_->yAxis2->setVisible(any_speedup);
    // No points: no legend (it would be an empty box) and a line saying
    // what would fill the plot.
    plot_->legend->setVisible(!curves_.isEmpty());
    showEmptyText(curves_.isEmpty());
    fitRanges(any_speedup);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

GcupsView::CurveValues GcupsView::curveValues() {
    CurveValues curves;
    for (const auto& p : points_) {
        if (QString::fromStdString(p.x_label) != x_kind_) continue;
        const QString name = curve_name(p);
        if (!curves.values.count(name)) {
            curves.order.push_back(name);
            curves.first[name] = p;
        }
        curves.values[name][p.x] = p.y;
        if (x_kind_ == "kernel") {
            const int k = static_cast<int>(p.x);
            while (kernel_names_.size() <= k) kernel_names_ << QString();
            kernel_names_[k] = QString::fromStdString(parameter(p, "kernel"));
        }
    }
    return curves;
}

void GcupsView::setXAxis() {
    if (log_axis(x_kind_)) {
        plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
        plot_->xAxis->setTicker(QSharedPointer<LogLengthTicker>::create());
    } else {
        plot_->xAxis->setScaleType(QCPAxis::stLinear);
        plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    if (x_kind_ == "kernel") {
        auto ticker = QSharedPointer<QCPAxisTickerText>::create();
        for (int k = 0; k < kernel_names_.size(); ++k) ticker->addTick(k, kernel_names_[k]);
        plot_->xAxis->setTicker(ticker);
    }
    plot_->xAxis->setLabel(axis_title(x_kind_));
}

void GcupsView::addCurves(const CurveValues& curves) {
    int colour = 0;
    auto next_pen = [&colour](bool cpu) {
        // CPUs in warm colours, GPUs in cool ones, so the two families read apart.
        static const QColor cpu_colours[] = {QColor(200, 60, 40), QColor(230, 140, 20), QColor(160, 40, 120)};
        static const QColor gpu_colours[] = {QColor(30, 90, 200), QColor(20, 150, 120), QColor(90, 60, 190),
                                             QColor(40, 160, 210)};
        const QColor c = cpu ? cpu_colours[colour % 3] : gpu_colours[colour % 4];
        ++colour;
        return QPen(c, 2);
    };
    for (const QString& name : curves.order) {
        const store::BenchPoint& p = curves.first.at(name);
        QCPGraph* g = plot_->addGraph(plot_->xAxis, plot_->yAxis);
        g->setName(name);
        g->setPen(next_pen(is_cpu(p.device)));
        g->setScatterStyle(
            QCPScatterStyle(is_cpu(p.device) ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, 7));
        for (const auto& [x, y] : curves.values.at(name)) g->addData(x, y);
        curves_[name] = g;
    }
}

bool GcupsView::addSpeedupCurves(const CurveValues& curves) {
    // Each GPU curve over the CPU curve of the same series ("cpu" preferred
    // over the scalar "cpu-ref"), at the x values both have.
    bool any_speedup = false;
    for (const QString& name : curves.order) {
        const store::BenchPoint& p = curves.first.at(name);
        if (is_cpu(p.device)) continue;
        const QString series = QString::fromStdString(p.series);
        QString cpu_name;
        for (const char* cpu : {"cpu", "cpu-ref"})
            if (curves.values.count(series + " on " + cpu)) {
                cpu_name = series + " on " + cpu;
                break;
            }
        if (cpu_name.isEmpty()) continue;
        QCPGraph* g = plot_->addGraph(plot_->xAxis, plot_->yAxis2);
        const QString speedup = name + " vs " + cpu_name.section(" on ", -1) + " speedup";
        g->setName(speedup);
        QPen pen = curves_[name]->pen();
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.5);
        g->setPen(pen);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangle, 6));
        const auto& cpu_data = curves.values.at(cpu_name);
        for (const auto& [x, y] : curves.values.at(name)) {
            const auto it = cpu_data.find(x);
            if (it != cpu_data.end() && it->second > 0) g->addData(x, y / it->second);
        }
        curves_[speedup] = g;
        any_speedup = true;
    }
    return any_speedup;
}

void GcupsView::showEmptyText(bool empty) {
    if (!empty_text_) {
        empty_text_ = new QCPItemText(plot_);
        empty_text_->setObjectName("emptyPlotText");
        empty_text_->position->setType(QCPItemPosition::ptAxisRectRatio);
        empty_text_->position->setCoords(0.5, 0.45);
        empty_text_->setPositionAlignment(Qt::AlignCenter);
        empty_text_->setClipToAxisRect(false);
        empty_text_->setColor(QColor(90, 90, 90));
    }
    empty_text_->setText(
        tr("No benchmark points to plot.\nPress \"Compare CPU and GPU\" to measure both here,\n"
           "or run alignscope-cli bench --project with this project."));
    empty_text_->setVisible(empty);
}

void GcupsView::fitRanges(bool any_speedup) {
    const bool log = log_axis(x_kind_);
    plot_->rescaleAxes();
    // Some air around the points; GCUPS and speedup start at zero.
    plot_->yAxis->setRangeLower(0);
    plot_->yAxis->setRangeUpper(std::max(plot_->yAxis->range().upper * 1.1, 1e-3));
    if (any_speedup) {
        plot_->yAxis2->setRangeLower(0);
        plot_->yAxis2->setRangeUpper(std::max(plot_->yAxis2->range().upper * 1.1, 1.0));
    }
    if (curves_.isEmpty()) {
        // Empty axes over a range that reads as lengths (or counts).
        plot_->xAxis->setRange(log ? QCPRange(10, 10'000) : QCPRange(0, 10));
        return;
    }
    const QCPRange xr = plot_->xAxis->range();
    if (log && xr.lower > 0) plot_->xAxis->setRange(xr.lower / 1.4, xr.upper * 1.4);
    else
        plot_->xAxis->setRange(xr.lower - 0.5, xr.upper + 0.5);
}

QString GcupsView::readoutAt(const QPointF& pos) const {
    double best = 12 * 12;
    QString text;
    for (auto it = curves_.begin(); it != curves_.end(); ++it) {
        const QCPGraph* g = it.value();
        for (auto d = g->data()->constBegin(); d != g->data()->constEnd(); ++d) {
            const QPointF px(g->keyAxis()->coordToPixel(d->key), g->valueAxis()->coordToPixel(d->value));
            const double dist = std::pow(px.x() - pos.x(), 2) + std::pow(px.y() - pos.y(), 2);
            if (dist > best) continue;
            best = dist;
            const QString x =
                x_kind_ == "kernel" ? kernel_names_.value(static_cast<int>(d->key)) : QString::number(d->key, 'g', 6);
            const bool speedup = it.key().endsWith("speedup");
            text = it.key() + "\n" + axis_title(x_kind_).section(" (", 0, 0) + ": " + x + "\n" +
                   (speedup ? tr("speedup: %1×").arg(d->value, 0, 'f', 2) : tr("%1 GCUPS").arg(d->value, 0, 'g', 4));
        }
    }
    return text;
}

void GcupsView::onMouseMove(QMouseEvent* event) {
    const QString text = readoutAt(event->position());
    if (text.isEmpty()) QToolTip::hideText();
    else
        QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
}

void GcupsView::exportPng(const QString& path, int width, int height) const {
    if (!plot_->savePng(path, width, height)) throw Error(path.toStdString() + ": cannot write the PNG image");
}

void GcupsView::exportPdf(const QString& path, int width, int height) const {
    if (!plot_->savePdf(path, width, height, QCP::epNoCosmetic, "AlignScope", tr("GCUPS curves")))
        throw Error(path.toStdString() + ": cannot write the PDF file");
}

void GcupsView::exportSvg(const QString& path, int width, int height) const {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(QSize(width, height));
    svg.setViewBox(QRect(0, 0, width, height));
    svg.setTitle(tr("GCUPS curves"));
    svg.setDescription(tr("AlignScope benchmark"));
    QCPPainter painter;
    if (!painter.begin(&svg)) throw Error(path.toStdString() + ": cannot write the SVG file");
    plot_->toPainter(&painter, width, height);
    painter.end();
    if (!QFileInfo(path).exists() || QFileInfo(path).size() == 0)
        throw Error(path.toStdString() + ": cannot write the SVG file");
}

void GcupsView::exportCsv(const QString& path) const {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        throw Error(path.toStdString() + ": cannot write the CSV file: " + file.errorString().toStdString());
    QTextStream out(&file);
    out << "series,device,kernel,x_name,x,gcups,gcups_kernel,seconds,cells\n";
    for (const auto& p : points_) {
        out << csv_field(p.series) << ',' << csv_field(p.device) << ',' << csv_field(parameter(p, "kernel")) << ','
            << csv_field(p.x_label) << ',' << QString::number(p.x, 'g', 17) << ',' << QString::number(p.y, 'g', 17)
            << ',' << csv_field(parameter(p, "gcups_kernel")) << ',' << csv_field(parameter(p, "seconds")) << ','
            << csv_field(parameter(p, "cells")) << '\n';
    }
    out.flush();
    if (!file.commit())
        throw Error(path.toStdString() + ": cannot write the CSV file: " + file.errorString().toStdString());
}

void GcupsView::startComparison(DeviceRegistry& registry, const BenchOptions& options) {
    if (comparisonRunning()) return;
    cancel_ = std::make_shared<CancellationToken>();
    compare_->setText(tr("Cancel comparison"));
    status_->setText(tr("Comparing…"));
    QPointer<GcupsView> self(this);
    auto cancel = cancel_;
    DeviceRegistry* devices = &registry;
    worker_ = QThread::create([self, cancel, devices, options] {
        QString summary, failure;
        try {
            std::vector<Backend*> backends{&devices->select("cpu")};
            QStringList names{"cpu"};
            for (const DeviceInfo& d : devices->devices())
                if (d.kind == "gpu" && d.available) {
                    backends.push_back(&devices->select(d.id));
                    names << QString::fromStdString(d.id);
                }
            BenchOptions run_options = options;
            run_options.cancel = cancel.get();
            BenchCallbacks callbacks;
            callbacks.point = [self](const BenchPoint& point) {
                const store::BenchPoint p = to_store_point(point);
                QMetaObject::invokeMethod(
                    self,
                    [self, p] {
                        if (!self) return;
                        self->addPoint(p);
                        emit self->comparisonPoint(p);
                    },
                    Qt::QueuedConnection);
            };
            const BenchReport report = run_bench(backends, run_options, callbacks);
            summary = QObject::tr("%1 points on %2").arg(report.points.size()).arg(names.join(", "));
            if (names.size() == 1) summary += QObject::tr(" (no GPU here: CPU only)");
        } catch (const Cancelled&) {
            failure = QObject::tr("cancelled");
        } catch (const std::exception& e) {
            failure = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            self,
            [self, summary, failure] {
                GcupsView* view = self.data();
                if (!view) return;
                view->joinWorker();
                view->compare_->setText(tr("Compare CPU and GPU"));
                view->status_->setText(failure.isEmpty() ? summary : failure);
                if (failure.isEmpty()) emit view->comparisonFinished(summary);
                else
                    emit view->comparisonFailed(failure);
            },
            Qt::QueuedConnection);
    });
    worker_->start();
    emit comparisonStarted(options);
}

bool GcupsView::comparisonCancelled() const { return cancel_ && cancel_->cancelled(); }

void GcupsView::setComparisonAllowed(bool allowed, const QString& why) {
    // A running comparison keeps its button: it is how the user cancels it.
    if (comparisonRunning()) return;
    compare_->setEnabled(allowed);
    compare_->setToolTip(allowed ? tr("Run a length sweep on the CPU SIMD backend and every GPU, plotting points "
                                      "as they arrive")
                                 : why);
}

void GcupsView::cancelComparison() {
    if (cancel_) cancel_->cancel();
}

void GcupsView::joinWorker() {
    if (!worker_) return;
    worker_->wait();
    delete worker_;
    worker_ = nullptr;
}

}  // namespace alignscope::ui
