// The kernel timeline view: the plot, its interactions and readouts.
#include "views/timeline/timeline_view.hpp"

#include <alignscope/error.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <new>
#include <string>

namespace alignscope::ui {

std::vector<TimelineEvent> timeline_from_project(const store::Project& project, std::int64_t job_id) {
    std::vector<TimelineEvent> events;
    std::int64_t from = 0;
    for (;;) {
        store::Page<TimelineEvent> page = project.timeline(job_id, from, 50'000);
        events.insert(events.end(), std::make_move_iterator(page.rows.begin()),
                      std::make_move_iterator(page.rows.end()));
        if (!page.more || page.rows.empty()) break;
        from = page.next();
    }
    return events;
}

namespace {

QString format_ns(double ns) {
    const double a = std::abs(ns);
    if (a >= 1e9) return QString::number(ns / 1e9, 'g', 4) + " s";
    if (a >= 1e6) return QString::number(ns / 1e6, 'g', 4) + " ms";
    if (a >= 1e3) return QString::number(ns / 1e3, 'g', 4) + " µs";
    return QString::number(ns, 'g', 4) + " ns";
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent), index_(std::make_shared<TimelineIndex>()) {
    title_ = new QLabel(tr("No timeline"));
    // A long source name is cut at the edge rather than widening the view.
    title_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    title_->setMinimumWidth(120);
    colouring_ = new QComboBox;
    colouring_->addItem(tr("Colour by kernel name"));
    colouring_->addItem(tr("Colour by stream"));
    auto* fit = new QPushButton(tr("Zoom to fit"));
    auto* out = new QPushButton(tr("Zoom out"));
    auto* import = new QPushButton(tr("Import trace…"));
    colouring_->setToolTip(tr("Colour the bars by the kernel they ran, or by the CUDA stream they ran on"));
    fit->setToolTip(tr("Show the whole job (wheel zooms, drag pans, Shift-drag measures)"));
    out->setToolTip(tr("Show twice the time span"));
    import->setToolTip(tr("Show a Chrome trace file (JSON) here, read-only"));
    auto* bar = new QHBoxLayout;
    bar->addWidget(title_, 1);
    bar->addWidget(colouring_);
    bar->addWidget(fit);
    bar->addWidget(out);
    bar->addWidget(import);

    plot_ = new QCustomPlot;
    plot_->setMinimumHeight(160);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->axisRect()->setRangeDrag(Qt::Horizontal);
    plot_->axisRect()->setRangeZoom(Qt::Horizontal);
    plot_->xAxis->setLabel(tr("time since the first event (µs)"));
    plot_->yAxis->setRangeReversed(true);
    plot_->yAxis->setTickLength(0, 0);
    plot_->yAxis->setSubTickLength(0, 0);
    plot_->yAxis->grid()->setVisible(false);
    plot_->setNoAntialiasingOnDrag(true);
    bars_ = new TimelinePlottable(plot_->xAxis, plot_->yAxis);
    band_ = new QCPItemRect(plot_);
    band_->topLeft->setTypeX(QCPItemPosition::ptPlotCoords);
    band_->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
    band_->bottomRight->setTypeX(QCPItemPosition::ptPlotCoords);
    band_->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
    band_->topLeft->setCoords(0, 0);
    band_->bottomRight->setCoords(0, 1);
    band_->setPen(QPen(QColor(30, 60, 160), 1, Qt::DashLine));
    band_->setBrush(QColor(30, 60, 160, 40));
    band_->setVisible(false);

    info_ = new QLabel;
    info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    info_->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(plot_, 1);
    layout->addWidget(info_);

    connect(colouring_, &QComboBox::currentIndexChanged, this, [this](int i) {
        setColouring(i == 0 ? TimelinePlottable::Colouring::ByKernelName : TimelinePlottable::Colouring::ByStream);
    });
    connect(fit, &QPushButton::clicked, this, &TimelineView::zoomToFit);
    connect(out, &QPushButton::clicked, this, &TimelineView::zoomOut);
    connect(import, &QPushButton::clicked, this, [this] {
        // The folder last used for traces (the window's dialogs share the key).
        const QString path = QFileDialog::getOpenFileName(this, tr("Import Chrome trace"),
                                                          QSettings().value("folders/traces").toString(),
                                                          tr("Chrome trace (*.json);;All files (*)"));
        if (path.isEmpty()) return;
        QSettings().setValue("folders/traces", QFileInfo(path).absolutePath());
        try {
            importChromeTrace(path);
        } catch (const Error& e) {
            info_->setText(QString::fromStdString(e.what()));
        }
    });
    connect(plot_, &QCustomPlot::mousePress, this, &TimelineView::onMousePress);
    connect(plot_, &QCustomPlot::mouseMove, this, &TimelineView::onMouseMove);
    connect(plot_, &QCustomPlot::mouseRelease, this, &TimelineView::onMouseRelease);
    connect(plot_, &QCustomPlot::mouseWheel, this, &TimelineView::onWheel);
    updateLanes();
}

void TimelineView::setEvents(std::vector<TimelineEvent> events, const QString& source) {
    index_ = std::make_shared<TimelineIndex>(std::move(events));
    bars_->setIndex(index_);
    source_ = source;
    read_only_ = false;
    measurement_.reset();
    measure_range_.reset();
    band_->setVisible(false);
    zoom_stack_.clear();
    updateLanes();
    const QString what = tr("%1 events in %2 lanes over %3")
                             .arg(QLocale().toString(qulonglong(index_->events().size())))
                             .arg(index_->lanes().size())
                             .arg(format_ns(index_->span_ns()));
    title_->setText(source.isEmpty() ? what : source + " — " + what);
    plot_->xAxis->setRange(0, std::max(index_->span_ns(), 1.0) / 1000.0);
    updateInfo();
    replot();
}

void TimelineView::loadFromProject(const store::Project& project, std::int64_t job_id) {
    const store::JobInfo job = project.job(job_id);
    setEvents(timeline_from_project(project, job_id),
              tr("job %1 (%2, clock %3)")
                  .arg(job_id)
                  .arg(QString::fromStdString(job.spec.command), QString::fromStdString(job.clock_source)));
}

void TimelineView::importChromeTrace(const QString& path) {
    const std::string name = path.toStdString();
    const QFileInfo info(path);
    // A trace is a file of known size: a device or a pipe would be read
    // without end, and the size bounds what is read.
    if (info.exists() && !info.isFile())
        throw Error(name + ": not a regular file (a folder, device or pipe); a Chrome trace is a JSON file");
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Error(name + ": cannot read the trace: " + file.errorString().toStdString());
    const qint64 size = file.size();
    // The text, the parsed JSON and the events are all in memory at once:
    // running out of it is reading this file, and is said as such.
    try {
        std::string text(static_cast<std::size_t>(size), '\0');
        const qint64 got = size > 0 ? file.read(text.data(), size) : 0;
        if (got != size)
            throw Error(name + ": cannot read the trace: " +
                        (got < 0 ? file.errorString().toStdString() : std::string("it ended early")));
        std::vector<TimelineEvent> events = read_chrome_trace(text, name);
        text = std::string();
        setEvents(std::move(events), tr("%1 (imported, read-only)").arg(info.fileName()));
    } catch (const std::bad_alloc&) {
        throw Error(name + ": out of memory importing the Chrome trace (" +
                    QLocale::c().toString(double(size) / double(1 << 20), 'f', 1).toStdString() +
                    " MiB, several times that once parsed): import a shorter trace (of a shorter job, or the trace "
                    "cut into parts), or close other work to free memory");
    }
    read_only_ = true;
}

void TimelineView::setColouring(TimelinePlottable::Colouring colouring) {
    bars_->setColouring(colouring);
    const int i = colouring == TimelinePlottable::Colouring::ByKernelName ? 0 : 1;
    if (colouring_->currentIndex() != i) colouring_->setCurrentIndex(i);
    replot();
}

void TimelineView::updateLanes() {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const auto& lanes = index_->lanes();
    for (std::size_t l = 0; l < lanes.size(); ++l) ticker->addTick(double(l), QString::fromStdString(lanes[l].label));
    plot_->yAxis->setTicker(ticker);
    plot_->yAxis->setRange(-0.5, std::max<double>(double(lanes.size()), 1.0) - 0.5);
}

std::pair<double, double> TimelineView::visibleRange() const {
    const QCPRange r = plot_->xAxis->range();
    return {r.lower * 1000.0, r.upper * 1000.0};
}

void TimelineView::pushZoom() {
    const QCPRange r = plot_->xAxis->range();
    zoom_stack_.push_back({r.lower, r.upper});
    if (zoom_stack_.size() > 100) zoom_stack_.pop_front();
}

void TimelineView::setVisibleRange(double lo_ns, double hi_ns) {
    if (hi_ns < lo_ns) std::swap(lo_ns, hi_ns);
    pushZoom();
    plot_->xAxis->setRange(lo_ns / 1000.0, std::max(hi_ns, lo_ns + 1.0) / 1000.0);
    replot();
}

void TimelineView::zoomToFit() {
    pushZoom();
    plot_->xAxis->setRange(0, std::max(index_->span_ns(), 1.0) / 1000.0);
    replot();
}

void TimelineView::zoomOut() {
    if (zoom_stack_.isEmpty()) {
        plot_->xAxis->setRange(0, std::max(index_->span_ns(), 1.0) / 1000.0);
    } else {
        const auto r = zoom_stack_.takeLast();
        plot_->xAxis->setRange(r.first, r.second);
    }
    replot();
}

double TimelineView::timeToPixel(double ns) const { return plot_->xAxis->coordToPixel(ns / 1000.0); }
double TimelineView::pixelToTime(double px) const { return plot_->xAxis->pixelToCoord(px) * 1000.0; }
int TimelineView::laneAtPixel(double y) const { return static_cast<int>(std::lround(plot_->yAxis->pixelToCoord(y))); }

TimelineRangeSummary TimelineView::measure(double lo_ns, double hi_ns) {
    if (hi_ns < lo_ns) std::swap(lo_ns, hi_ns);
    measure_range_ = {lo_ns, hi_ns};
    measurement_ = index_->summarize(lo_ns, hi_ns);
    band_->topLeft->setCoords(lo_ns / 1000.0, 0);
    band_->bottomRight->setCoords(hi_ns / 1000.0, 1);
    band_->setVisible(true);
    updateInfo();
    replot();
    emit rangeMeasured(lo_ns, hi_ns);
    return *measurement_;
}

void TimelineView::clearMeasurement() {
    measurement_.reset();
    measure_range_.reset();
    band_->setVisible(false);
    updateInfo();
    replot();
}

void TimelineView::selectEvent(std::optional<std::uint32_t> event) {
    if (event && *event >= index_->events().size()) event.reset();
    bars_->setSelectedEvent(event);
    updateInfo();
    replot();
    emit eventSelected(event ? static_cast<int>(*event) : -1);
}

QString TimelineView::describeEvent(std::uint32_t e) const {
    const TimelineEvent& ev = index_->events()[e];
    const double dur = double(ev.end_ns - ev.start_ns);
    QStringList lines;
    lines << QString::fromStdString(ev.name);
    if (!ev.detail.empty()) lines << QString::fromStdString(ev.detail);  // the pass and the device function
    lines << tr("category: %1").arg(QString::fromStdString(ev.category));
    lines << tr("lane: %1").arg(QString::fromStdString(lane_label(ev.device, ev.lane)));
    lines << tr("start: %1 after the first event").arg(format_ns(index_->start_of(e)));
    lines << tr("duration: %1").arg(format_ns(dur));
    if (ev.bytes) {
        lines << tr("bytes: %1").arg(QLocale().toString(qulonglong(ev.bytes)));
        if (dur > 0) lines << tr("bandwidth: %1 GB/s").arg(double(ev.bytes) / dur, 0, 'g', 4);
    }
    if (ev.cells) {
        lines << tr("cells: %1").arg(QLocale().toString(qulonglong(ev.cells)));
        if (dur > 0) lines << tr("GCUPS: %1").arg(double(ev.cells) / dur, 0, 'g', 4);
    }
    return lines.join('\n');
}

QString TimelineView::infoText() const { return info_->text(); }

void TimelineView::updateInfo() {
    QStringList parts;
    if (measurement_ && measure_range_) {
        const TimelineRangeSummary& m = *measurement_;
        parts << tr("Range %1 – %2: Δt %3, %4 kernels (%5 events), %6 cells, %7 GCUPS")
                     .arg(format_ns(measure_range_->first), format_ns(measure_range_->second), format_ns(m.duration_ns))
                     .arg(m.kernels)
                     .arg(m.events)
                     .arg(QLocale().toString(m.cells, 'f', 0))
                     .arg(m.gcups(), 0, 'g', 4);
    }
    if (const auto e = bars_->selectedEvent()) parts << describeEvent(*e).replace('\n', QStringLiteral("; "));
    if (parts.isEmpty() && !index_->events().empty())
        parts << tr("Wheel: zoom around the cursor · drag: pan · Shift+drag or right-drag: measure · click: select");
    info_->setText(parts.join('\n'));
}

void TimelineView::replot() { plot_->replot(QCustomPlot::rpQueuedReplot); }

void TimelineView::onMousePress(QMouseEvent* event) {
    press_pos_ = event->position();
    if (event->button() == Qt::RightButton ||
        (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier))) {
        measure_from_ = pixelToTime(event->position().x());
        plot_->setInteraction(QCP::iRangeDrag, false);
    }
}

void TimelineView::onMouseMove(QMouseEvent* event) {
    const double t = pixelToTime(event->position().x());
    if (measure_from_) {
        band_->topLeft->setCoords(std::min(*measure_from_, t) / 1000.0, 0);
        band_->bottomRight->setCoords(std::max(*measure_from_, t) / 1000.0, 1);
        band_->setVisible(true);
        replot();
        return;
    }
    if (event->buttons() != Qt::NoButton) return;
    const double tolerance = std::abs(pixelToTime(event->position().x() + 3) - t);
    if (const auto e = index_->event_at(laneAtPixel(event->position().y()), t, tolerance))
        QToolTip::showText(event->globalPosition().toPoint(), describeEvent(*e), plot_);
    else
        QToolTip::hideText();
}

void TimelineView::onMouseRelease(QMouseEvent* event) {
    const double t = pixelToTime(event->position().x());
    if (measure_from_) {
        const double from = *measure_from_;
        measure_from_.reset();
        plot_->setInteraction(QCP::iRangeDrag, true);
        if (std::abs(event->position().x() - press_pos_.x()) >= 2) measure(from, t);
        else
            clearMeasurement();
        return;
    }
    if ((event->position() - press_pos_).manhattanLength() > 3) return;  // that was a pan
    const double tolerance = std::abs(pixelToTime(event->position().x() + 3) - t);
    selectEvent(index_->event_at(laneAtPixel(event->position().y()), t, tolerance));
}

void TimelineView::onWheel(QWheelEvent* event) {
    Q_UNUSED(event)
    // One stack entry per burst of wheel steps, so "zoom out" undoes a gesture.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - last_wheel_push_ms_ > 600) pushZoom();
    last_wheel_push_ms_ = now;
}

}  // namespace alignscope::ui
