// EventLoopProbe: a precise timer and a monotonic clock.
#include "event_loop_probe.hpp"

#include <QLoggingCategory>

#include <algorithm>
#include <cmath>
#include <ctime>

// QT_LOGGING_RULES="alignscope.stall.debug=true" lists every long gap.
Q_LOGGING_CATEGORY(stall_log, "alignscope.stall", QtWarningMsg)

namespace alignscope::ui {

namespace {

qint64 thread_cpu_ns() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return qint64(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

EventLoopProbe::EventLoopProbe(QObject* parent) : QObject(parent) {
    timer_.setTimerType(Qt::PreciseTimer);
    timer_.setInterval(period_ms);
    connect(&timer_, &QTimer::timeout, this, &EventLoopProbe::tick);
}

void EventLoopProbe::start() {
    max_gap_ns_ = 0;
    max_gap_cpu_ns_ = 0;
    max_busy_ns_ = 0;
    ticks_ = 0;
    busy_counts_.fill(0);
    clock_.start();
    last_ns_ = 0;
    last_cpu_ns_ = thread_cpu_ns();
    timer_.start();
}

void EventLoopProbe::stop() {
    if (!timer_.isActive()) return;
    tick();  // a stall that is still going on counts too
    timer_.stop();
}

double EventLoopProbe::busyPercentileMs(double fraction) const {
    qint64 total = 0;
    for (const qint64 n : busy_counts_) total += n;
    if (total == 0) return 0;
    const auto wanted = qint64(std::ceil(std::clamp(fraction, 0.0, 1.0) * double(total)));
    qint64 seen = 0;
    for (std::size_t k = 0; k + 1 < busy_counts_.size(); ++k) {
        seen += busy_counts_[k];
        // The slot's upper edge, never past the largest tick seen.
        if (seen >= wanted) return std::min(double((qint64(k) + 1) * busy_step_ns), double(max_busy_ns_)) / 1e6;
    }
    return maxBusyMs();
}

double EventLoopProbe::maxStallMs() const { return std::max(0.0, maxGapMs() - period_ms); }

void EventLoopProbe::tick() {
    const qint64 now = clock_.nsecsElapsed(), cpu = thread_cpu_ns();
    const qint64 gap = now - last_ns_, busy = cpu - last_cpu_ns_;
    if (gap > 3 * period_ms * 1'000'000LL)
        qCDebug(stall_log, "event loop stalled %.1f ms (%.1f ms of it busy) at %.3f s", double(gap) / 1e6,
                double(busy) / 1e6, double(now) / 1e9);
    if (gap > max_gap_ns_) {
        max_gap_ns_ = gap;
        max_gap_cpu_ns_ = busy;
    }
    max_busy_ns_ = std::max(max_busy_ns_, busy);
    const auto slot = std::min<qint64>(std::max<qint64>(busy, 0) / busy_step_ns, qint64(busy_counts_.size()) - 1);
    ++busy_counts_[std::size_t(slot)];
    last_ns_ = now;
    last_cpu_ns_ = cpu;
    ++ticks_;
}

}  // namespace alignscope::ui
