// Measures how responsive the GUI thread is: a 10 ms timer on the event loop
// records the largest gap between its ticks. A gap well above 10 ms is a stall
// the user feels (a frozen progress bar, a late click). The window runs one
// while jobs run and reports the worst stall with each finished job; tests
// read the spread of the GUI thread's work per tick (a percentile) as well.
#pragma once

#include <array>

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

namespace alignscope::ui {

class EventLoopProbe : public QObject {
    Q_OBJECT
public:
    explicit EventLoopProbe(QObject* parent = nullptr);

    void start();  // resets the figures
    void stop();
    bool running() const { return timer_.isActive(); }

    // Largest time between two ticks beyond the 10 ms period, in milliseconds.
    double maxStallMs() const;
    double maxGapMs() const { return double(max_gap_ns_) / 1e6; }
    // CPU time the GUI thread itself used inside the worst gap. Near the gap:
    // the window was busy with its own work; far below it: the thread was
    // blocked or waited for a CPU (a machine loaded by other programs).
    double busyInMaxGapMs() const { return double(max_gap_cpu_ns_) / 1e6; }
    // The most CPU time the GUI thread used inside any one gap: its longest
    // piece of work without returning to the event loop, which other
    // programs on a loaded machine cannot stretch (they stretch the gaps).
    double maxBusyMs() const { return double(max_busy_ns_) / 1e6; }
    qint64 ticks() const { return ticks_; }
    // The GUI thread's work per tick that `fraction` (0.99: the 99th
    // percentile) of the ticks since start() stayed at or under, in
    // milliseconds, to the histogram's 0.25 ms (work past 100 ms counts as
    // the largest seen).
    double busyPercentileMs(double fraction) const;

    static constexpr int period_ms = 10;

private:
    void tick();

    QTimer timer_;
    QElapsedTimer clock_;
    qint64 last_ns_ = 0;
    qint64 last_cpu_ns_ = 0;
    qint64 max_gap_ns_ = 0;
    qint64 max_gap_cpu_ns_ = 0;
    qint64 max_busy_ns_ = 0;
    qint64 ticks_ = 0;
    // Ticks by the GUI thread's work inside their gap, in steps of
    // busy_step_ns: fixed memory however long the probe runs.
    static constexpr qint64 busy_step_ns = 250'000;
    std::array<qint64, 400> busy_counts_{};
};

}  // namespace alignscope::ui
