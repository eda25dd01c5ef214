// The kernel timeline view: one lane per device x stream (or CPU worker),
// wheel zoom around the cursor, drag to pan, Shift+drag (or right-drag) to
// measure a range (time, kernels, cells, GCUPS), tooltips with every field,
// click to select, zoom to fit and a zoom-out stack. Events come from a job in
// the project, from memory, or from a Chrome trace file (then read-only).
#pragma once

#include "views/timeline/timeline_index.hpp"
#include "views/timeline/timeline_plottable.hpp"

#include <alignscope/device/timeline.hpp>

#include <QVector>
#include <QWidget>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QCustomPlot;
class QCPItemRect;
class QComboBox;
class QLabel;
class QMouseEvent;
class QWheelEvent;

namespace alignscope::store {
class Project;
}

namespace alignscope::ui {

// Every event of a job, read page by page.
std::vector<TimelineEvent> timeline_from_project(const store::Project& project, std::int64_t job_id);

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    // `source` names where they came from, for the title line.
    void setEvents(std::vector<TimelineEvent> events, const QString& source = {});
    // The job's events; throws alignscope::Error.
    void loadFromProject(const store::Project& project, std::int64_t job_id);
    // Reads a Chrome trace (ours or another tool's) as a read-only timeline.
    // Throws alignscope::Error naming the file.
    void importChromeTrace(const QString& path);
    bool readOnly() const { return read_only_; }

    const TimelineIndex& index() const { return *index_; }
    QCustomPlot* plot() const { return plot_; }
    TimelinePlottable* plottable() const { return bars_; }

    void setColouring(TimelinePlottable::Colouring colouring);
    // Visible time range in ns since the first event.
    std::pair<double, double> visibleRange() const;
    void setVisibleRange(double lo_ns, double hi_ns);  // pushes the old range on the zoom-out stack
    void zoomToFit();
    void zoomOut();  // back to the range before the last zoom; fit when the stack is empty
    int zoomStackDepth() const { return static_cast<int>(zoom_stack_.size()); }
    // The time axis as the plot maps it now (pixels in plot() coordinates).
    double timeToPixel(double ns) const;
    double pixelToTime(double px) const;
    int laneAtPixel(double y) const;

    // Range measure, as Shift+drag does it.
    TimelineRangeSummary measure(double lo_ns, double hi_ns);
    std::optional<TimelineRangeSummary> measurement() const { return measurement_; }
    void clearMeasurement();

    void selectEvent(std::optional<std::uint32_t> event);
    std::optional<std::uint32_t> selectedEvent() const { return bars_->selectedEvent(); }
    // Every field of an event, one per line (tooltips and the details line).
    QString describeEvent(std::uint32_t event) const;
    QString infoText() const;

signals:
    void eventSelected(int event);  // -1 when none
    void rangeMeasured(double lo_ns, double hi_ns);

private:
    void onMousePress(QMouseEvent* event);
    void onMouseMove(QMouseEvent* event);
    void onMouseRelease(QMouseEvent* event);
    void onWheel(QWheelEvent* event);
    void pushZoom();
    void updateLanes();
    void updateInfo();
    void replot();

    QCustomPlot* plot_ = nullptr;
    TimelinePlottable* bars_ = nullptr;
    QCPItemRect* band_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* info_ = nullptr;
    QComboBox* colouring_ = nullptr;
    std::shared_ptr<TimelineIndex> index_;
    QVector<QPair<double, double>> zoom_stack_;  // key ranges, µs
    qint64 last_wheel_push_ms_ = 0;
    std::optional<double> measure_from_;  // ns
    std::optional<std::pair<double, double>> measure_range_;
    std::optional<TimelineRangeSummary> measurement_;
    QPointF press_pos_;
    bool read_only_ = false;
    QString source_;
};

}  // namespace alignscope::ui
