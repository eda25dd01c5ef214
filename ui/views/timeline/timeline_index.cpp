// Lanes, visible spans and range summaries of a kernel timeline.
#include "views/timeline/timeline_index.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace alignscope::ui {

std::string lane_label(const std::string& device, int lane) {
    const bool gpu = device.rfind("gpu", 0) == 0;
    return device + (gpu ? " stream " : " worker ") + std::to_string(lane);
}

TimelineIndex::TimelineIndex(std::vector<TimelineEvent> events) : events_(std::move(events)) {
    if (events_.empty()) return;
    origin_ns_ = std::numeric_limits<std::int64_t>::max();
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    for (const TimelineEvent& e : events_) {
        origin_ns_ = std::min(origin_ns_, e.start_ns);
        last = std::max(last, std::max(e.end_ns, e.start_ns));
    }
    span_ns_ = double(last - origin_ns_);

    // GPUs first (by id), then CPUs; lanes in number order within a device.
    auto device_key = [](const std::string& device) { return std::make_tuple(device.rfind("gpu", 0) != 0, device); };
    std::map<std::tuple<bool, std::string, int>, int> lane_number;
    for (const TimelineEvent& e : events_)
        lane_number.emplace(std::tuple_cat(device_key(e.device), std::make_tuple(e.lane)), 0);
    int next = 0;
    for (auto& [key, number] : lane_number) {
        number = next++;
        TimelineLane lane;
        lane.device = std::get<1>(key);
        lane.lane = std::get<2>(key);
        lane.label = lane_label(lane.device, lane.lane);
        lanes_.push_back(std::move(lane));
    }
    lane_of_.resize(events_.size());
    for (std::uint32_t k = 0; k < events_.size(); ++k) {
        const TimelineEvent& e = events_[k];
        const int l = lane_number.at(std::tuple_cat(device_key(e.device), std::make_tuple(e.lane)));
        lane_of_[k] = l;
        lanes_[static_cast<std::size_t>(l)].order.push_back(k);
    }
    for (TimelineLane& lane : lanes_) {
        std::stable_sort(lane.order.begin(), lane.order.end(), [this](std::uint32_t a, std::uint32_t b) {
            return events_[a].start_ns < events_[b].start_ns;
        });
        lane.starts.reserve(lane.order.size());
        lane.ends.reserve(lane.order.size());
        lane.max_end.reserve(lane.order.size());
        double running = -std::numeric_limits<double>::infinity();
        for (const std::uint32_t k : lane.order) {
            const double s = start_of(k);
            const double e = std::max(s, end_of(k));
            lane.starts.push_back(s);
            lane.ends.push_back(e);
            running = std::max(running, e);
            lane.max_end.push_back(running);
        }
    }
}

std::size_t TimelineIndex::first_visible(const TimelineLane& lane, double t_lo) const {
    // Every event before this one ends before t_lo (max_end is non-decreasing).
    return static_cast<std::size_t>(
        std::partition_point(lane.max_end.begin(), lane.max_end.end(), [t_lo](double e) { return e < t_lo; }) -
        lane.max_end.begin());
}

void TimelineIndex::visible_spans(int lane_index, const TimeMapping& mapping, double min_pixels,
                                  std::vector<TimelineSpan>& out) const {
    out.clear();
    if (lane_index < 0 || lane_index >= static_cast<int>(lanes_.size())) return;
    const TimelineLane& lane = lanes_[static_cast<std::size_t>(lane_index)];
    const double ns_px = mapping.ns_per_pixel();
    const double narrow = ns_px * min_pixels;
    const std::size_t n = lane.starts.size();
    bool merging = false;  // the last span is a run of narrow events still open
    for (std::size_t i = first_visible(lane, mapping.time_lo); i < n && lane.starts[i] <= mapping.time_hi; ++i) {
        const double s = lane.starts[i], e = lane.ends[i];
        if (e < mapping.time_lo) continue;  // an earlier long event kept max_end high
        if (e - s >= narrow) {
            out.push_back({s, e, lane.order[i], 1});
            merging = false;
            continue;
        }
        if (merging && s - out.back().end < ns_px) {
            TimelineSpan& run = out.back();
            run.end = std::max(run.end, e);
            ++run.count;
            continue;
        }
        out.push_back({s, e, lane.order[i], 1});
        merging = true;
    }
}

std::optional<std::uint32_t> TimelineIndex::event_at(int lane_index, double t, double tolerance_ns) const {
    if (lane_index < 0 || lane_index >= static_cast<int>(lanes_.size())) return std::nullopt;
    const TimelineLane& lane = lanes_[static_cast<std::size_t>(lane_index)];
    std::optional<std::uint32_t> best;
    double best_width = std::numeric_limits<double>::infinity();
    double best_distance = std::numeric_limits<double>::infinity();
    for (std::size_t i = first_visible(lane, t - tolerance_ns);
         i < lane.starts.size() && lane.starts[i] <= t + tolerance_ns; ++i) {
        const double s = lane.starts[i], e = lane.ends[i];
        const double distance = t < s ? s - t : t > e ? t - e : 0.0;
        if (distance > tolerance_ns) continue;
        if (distance < best_distance || (distance == best_distance && e - s < best_width)) {
            best = lane.order[i];
            best_width = e - s;
            best_distance = distance;
        }
    }
    return best;
}

TimelineRangeSummary TimelineIndex::summarize(double t_lo, double t_hi) const {
    TimelineRangeSummary summary;
    if (t_hi < t_lo) std::swap(t_lo, t_hi);
    summary.duration_ns = t_hi - t_lo;
    for (const TimelineLane& lane : lanes_) {
        for (std::size_t i = first_visible(lane, t_lo); i < lane.starts.size() && lane.starts[i] <= t_hi; ++i) {
            const double s = lane.starts[i], e = lane.ends[i];
            if (e < t_lo) continue;
            const TimelineEvent& event = events_[lane.order[i]];
            ++summary.events;
            if (event.category == "kernel" || event.category == "cpu") ++summary.kernels;
            if (event.cells == 0) continue;
            const double overlap = std::min(e, t_hi) - std::max(s, t_lo);
            const double fraction = e > s ? std::clamp(overlap / (e - s), 0.0, 1.0) : 1.0;
            summary.cells += double(event.cells) * fraction;
        }
    }
    return summary;
}

}  // namespace alignscope::ui
