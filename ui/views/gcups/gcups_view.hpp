// GCUPS curves: benchmark series from the project (or a live "Compare CPU and
// GPU" run) as one curve per series x device, against the swept quantity
// (length on a log axis, batch size, streams, kernel), with the GPU's speedup
// over the CPU on a second axis; hover readouts; PNG/PDF/SVG and CSV export.
#pragma once

#include <alignscope/bench/bench.hpp>
#include <alignscope/store/results.hpp>

#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <memory>
#include <vector>

class QCustomPlot;
class QCPGraph;
class QCPItemText;
class QComboBox;
class QLabel;
class QMouseEvent;
class QPushButton;
class QThread;

namespace alignscope {
class DeviceRegistry;
}
namespace alignscope::store {
class Project;
}

namespace alignscope::ui {

// Every bench point of a job, read page by page.
std::vector<store::BenchPoint> bench_points_from_project(const store::Project& project, std::int64_t job_id);
// What the "Compare CPU and GPU" action runs when not told otherwise: a length
// sweep of protein local alignments, no standard cases.
BenchOptions default_comparison_options();

class GcupsView : public QWidget {
    Q_OBJECT
public:
    explicit GcupsView(QWidget* parent = nullptr);
    ~GcupsView() override;  // cancels and joins a running comparison

    void setPoints(std::vector<store::BenchPoint> points);
    void addPoint(const store::BenchPoint& point);  // one more point; the plot updates at once
    void loadFromProject(const store::Project& project, std::int64_t job_id);  // throws alignscope::Error
    const std::vector<store::BenchPoint>& points() const { return points_; }

    // The quantities swept in the points ("length", "pairs", "streams", "kernel").
    QStringList xKinds() const;
    void setXKind(const QString& kind);
    QString xKind() const { return x_kind_; }

    QCustomPlot* plot() const { return plot_; }
    // Curve names shown in the legend; speedup curves end in "speedup".
    QStringList curveNames() const;
    QCPGraph* curve(const QString& name) const;
    // The readout for the data point nearest to `pos` (plot pixels), empty when
    // none lies within 12 pixels.
    QString readoutAt(const QPointF& pos) const;

    // Exports; each throws alignscope::Error naming the file on failure.
    void exportPng(const QString& path, int width = 1200, int height = 800) const;
    void exportPdf(const QString& path, int width = 1200, int height = 800) const;
    void exportSvg(const QString& path, int width = 1200, int height = 800) const;
    void exportCsv(const QString& path) const;

    // The "Compare CPU and GPU" action: runs `options` on the CPU SIMD backend
    // ("cpu") and on every available GPU of `registry` on a worker thread,
    // adding points as they arrive. The registry must outlive the run.
    void setDeviceRegistry(DeviceRegistry* registry) { registry_ = registry; }
    void startComparison(DeviceRegistry& registry, const BenchOptions& options = default_comparison_options());
    void cancelComparison();
    bool comparisonRunning() const { return worker_ != nullptr; }
    // Whether the last comparison ended because it was cancelled.
    bool comparisonCancelled() const;
    // The window turns the action off while jobs run (the comparison measures
    // the devices alone); `why` becomes the button's tooltip.
    void setComparisonAllowed(bool allowed, const QString& why = {});
    // The line over an empty plot (empty when points are plotted).
    QString emptyText() const;

signals:
    void comparisonStarted(const alignscope::BenchOptions& options);
    // One measured point, already added to the plot (GUI thread).
    void comparisonPoint(const alignscope::store::BenchPoint& point);
    void comparisonFinished(QString summary);
    void comparisonFailed(QString message);

private:
    struct CurveValues;
    // The plot again from points_: the x axis for x_kind_, a curve per
    // series and device, the speedup curves, the ranges.
    void rebuild();
    CurveValues curveValues();  // also the kernel names of a kernel sweep
    void setXAxis();
    void addCurves(const CurveValues& curves);
    bool addSpeedupCurves(const CurveValues& curves);  // true when there is one
    void showEmptyText(bool empty);
    void fitRanges(bool any_speedup);
    void updateKinds();
    void onMouseMove(QMouseEvent* event);
    void joinWorker();

    QCustomPlot* plot_ = nullptr;
    QComboBox* kinds_ = nullptr;
    QLabel* status_ = nullptr;
    QPushButton* compare_ = nullptr;
    std::vector<store::BenchPoint> points_;
    QString x_kind_;
    QMap<QString, QCPGraph*> curves_;
    QStringList kernel_names_;           // tick labels of a kernel sweep
    QCPItemText* empty_text_ = nullptr;  // "no points" over an empty plot
    DeviceRegistry* registry_ = nullptr;
    QThread* worker_ = nullptr;
    std::shared_ptr<CancellationToken> cancel_;
};

}  // namespace alignscope::ui
