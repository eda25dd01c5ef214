// The events of a kernel timeline arranged for drawing: one lane per device x
// stream (GPU) or device x worker thread (CPU), each lane sorted by start with
// a running maximum of end times, so the events of any visible time range are
// found by binary search and those narrower than a pixel merged into one span.
// Qt-free, so the time<->pixel arithmetic is unit-tested on its own.
#pragma once

#include <alignscope/device/timeline.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::ui {

// Linear map between time (ns since the first event) and pixels.
struct TimeMapping {
    double time_lo = 0, time_hi = 1;    // visible time range, ns
    double pixel_lo = 0, pixel_hi = 1;  // the pixels they fall on

    double ns_per_pixel() const { return (time_hi - time_lo) / (pixel_hi - pixel_lo); }
    double to_pixel(double t) const { return pixel_lo + (t - time_lo) / ns_per_pixel(); }
    double to_time(double px) const { return time_lo + (px - pixel_lo) * ns_per_pixel(); }
};

struct TimelineLane {
    std::string device;
    int lane = 0;
    std::string label;                 // "gpu:0 stream 1", "cpu worker 3"
    std::vector<std::uint32_t> order;  // event indices, by start
    std::vector<double> starts, ends;  // ns since the first event, in `order`
    std::vector<double> max_end;       // running maximum of ends (non-decreasing)
};

// One thing to draw in a lane: a single event, or a run of events each
// narrower than `min_pixels` and less than a pixel apart, merged.
struct TimelineSpan {
    double start = 0, end = 0;  // ns since the first event
    std::uint32_t first = 0;    // event index of the first (leftmost) event
    std::uint32_t count = 1;    // events merged into it
};

// What a range of time holds (the range-measure readout).
struct TimelineRangeSummary {
    double duration_ns = 0;
    std::uint64_t events = 0;   // events overlapping the range
    std::uint64_t kernels = 0;  // of them, compute work: GPU kernels (category "kernel") and CPU work items ("cpu")
    double cells = 0;           // DP cells of kernels and CPU work, prorated to the overlap
    double gcups() const { return duration_ns > 0 ? cells / duration_ns : 0; }  // cells per ns = Gcells/s
};

class TimelineIndex {
public:
    TimelineIndex() = default;
    explicit TimelineIndex(std::vector<TimelineEvent> events);

    const std::vector<TimelineEvent>& events() const { return events_; }
    const std::vector<TimelineLane>& lanes() const { return lanes_; }
    std::int64_t origin_ns() const { return origin_ns_; }  // start of the earliest event
    double span_ns() const { return span_ns_; }            // last end - origin
    int lane_of(std::uint32_t event) const { return lane_of_[event]; }
    double start_of(std::uint32_t event) const { return double(events_[event].start_ns - origin_ns_); }
    double end_of(std::uint32_t event) const { return double(events_[event].end_ns - origin_ns_); }

    // Spans of `lane` meeting [t_lo, t_hi], left to right; events at least
    // `min_pixels` wide stand alone, narrower ones closer than a pixel merge.
    void visible_spans(int lane, const TimeMapping& mapping, double min_pixels, std::vector<TimelineSpan>& out) const;
    // The event of `lane` covering time t (within `tolerance_ns`), the
    // shortest when several do.
    std::optional<std::uint32_t> event_at(int lane, double t, double tolerance_ns) const;
    TimelineRangeSummary summarize(double t_lo, double t_hi) const;

private:
    std::size_t first_visible(const TimelineLane& lane, double t_lo) const;

    std::vector<TimelineEvent> events_;
    std::vector<TimelineLane> lanes_;
    std::vector<int> lane_of_;
    std::int64_t origin_ns_ = 0;
    double span_ns_ = 0;
};

// "gpu:0 stream 1" for GPU devices, "cpu worker 3" for the rest.
std::string lane_label(const std::string& device, int lane);

}  // namespace alignscope::ui
