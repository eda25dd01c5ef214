// Timeline events in memory and as Chrome trace-event JSON (the format
// chrome://tracing and Perfetto open): writing ours, reading ours and other
// tools' back.
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <utility>

namespace alignscope {

void TimelineRecorder::record(TimelineEvent event) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
}

void TimelineRecorder::set_clock_source(const std::string& source) {
    std::lock_guard lock(mutex_);
    clock_source_ = source;
}

std::vector<TimelineEvent> TimelineRecorder::events() const {
    std::vector<TimelineEvent> copy;
    {
        std::lock_guard lock(mutex_);
        copy = events_;
    }
    std::stable_sort(copy.begin(), copy.end(),
                     [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_ns < b.start_ns; });
    return copy;
}

std::string TimelineRecorder::clock_source() const {
    std::lock_guard lock(mutex_);
    return clock_source_;
}

std::int64_t steady_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void record_host_span(TimelineSink* sink, std::string_view device, const char* name, std::int64_t start_ns,
                      std::uint64_t cells) {
    if (!sink) return;
    TimelineEvent event;
    event.name = name;
    event.category = "host";
    event.device = std::string(device) + " host";
    event.start_ns = start_ns;
    event.end_ns = steady_now_ns();
    event.cells = cells;
    try {
        sink->record(std::move(event));
    } catch (...) {
        // A timeline that cannot take an event must not fail the work it times.
    }
}

namespace {

using nlohmann::json;

// GPU lanes are streams, CPU lanes are worker threads; the thread names say so.
std::string lane_label(const std::string& device, int lane) {
    const bool gpu = device.rfind("gpu", 0) == 0;
    return (gpu ? "stream " : "worker ") + std::to_string(lane);
}

}  // namespace

void write_chrome_trace(std::ostream& out, const std::vector<TimelineEvent>& events, const std::string& clock_source) {
    std::int64_t origin = 0;
    if (!events.empty()) {
        origin = std::min_element(events.begin(), events.end(), [](const TimelineEvent& a, const TimelineEvent& b) {
                     return a.start_ns < b.start_ns;
                 })->start_ns;
    }

    // One pid per device in order of first appearance (Perfetto shows processes
    // in pid order, so the device seen first is on top).
    std::map<std::string, int> pid_of;
    std::vector<std::string> devices;
    std::map<std::pair<int, int>, bool> lanes_named;
    json trace_events = json::array();

    for (const TimelineEvent& e : events) {
        auto [it, inserted] = pid_of.emplace(e.device, static_cast<int>(pid_of.size()) + 1);
        const int pid = it->second;
        if (inserted) {
            trace_events.push_back(
                {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", e.device}}}});
            trace_events.push_back({{"name", "process_sort_index"},
                                    {"ph", "M"},
                                    {"pid", pid},
                                    {"tid", 0},
                                    {"args", {{"sort_index", pid}}}});
        }
        if (lanes_named.emplace(std::make_pair(pid, e.lane), true).second) {
            trace_events.push_back({{"name", "thread_name"},
                                    {"ph", "M"},
                                    {"pid", pid},
                                    {"tid", e.lane},
                                    {"args", {{"name", lane_label(e.device, e.lane)}}}});
        }
    }

    for (const TimelineEvent& e : events) {
        const double ts_us = static_cast<double>(e.start_ns - origin) / 1000.0;
        const double dur_us = static_cast<double>(std::max<std::int64_t>(0, e.end_ns - e.start_ns)) / 1000.0;
        json args = {{"bytes", e.bytes}, {"cells", e.cells}, {"device", e.device}, {"lane", e.lane}};
        if (!e.detail.empty()) args["detail"] = e.detail;
        trace_events.push_back({{"name", e.name},
                                {"cat", e.category},
                                {"ph", "X"},
                                {"ts", ts_us},
                                {"dur", dur_us},
                                {"pid", pid_of.at(e.device)},
                                {"tid", e.lane},
                                {"args", std::move(args)}});
    }

    json document = {{"traceEvents", std::move(trace_events)},
                     {"displayTimeUnit", "ns"},
                     {"otherData", {{"clock_source", clock_source}, {"origin_ns", origin}}}};
    // Names read back from a damaged project may not be UTF-8: U+FFFD, not an exception.
    out << document.dump(1, ' ', false, json::error_handler_t::replace) << '\n';
}

namespace {

// The reader's view of one trace: what it knows about pids and tids from the
// metadata events, and where it is in the input for error messages.
class TraceReader {
public:
    TraceReader(std::string source) : source_(std::move(source)) {}

    std::vector<TimelineEvent> read(const std::string& json_text) {
        json document;
        try {
            document = json::parse(json_text);
        } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
            throw Error(source_ + ": not a valid JSON trace: " + e.what());
        }
        try {
            return read_document(document);
        } catch (const json::exception& e) {  // a value of a type the reader did not expect
            throw Error(source_ + ": not a trace this reader understands: " + e.what());
        }
    }

private:
    std::vector<TimelineEvent> read_document(const json& document) {
        const json* list = nullptr;
        if (document.is_array()) {
            list = &document;  // the "JSON Array Format" of the trace-event spec
        } else if (document.is_object()) {
            auto it = document.find("traceEvents");
            if (it == document.end()) throw Error(source_ + ": no \"traceEvents\" array in the trace");
            if (!it->is_array()) throw Error(source_ + ": \"traceEvents\" is not an array");
            list = &*it;
        } else {
            throw Error(source_ + ": a Chrome trace is a JSON object or array, not " +
                        std::string(document.type_name()));
        }

        // Metadata first: names may come after the events they name.
        for (std::size_t k = 0; k < list->size(); ++k) {
            const json& ev = (*list)[k];
            if (!ev.is_object()) throw error_at(k, "is not a JSON object");
            if (phase(ev, k) != "M") continue;
            auto name_field = ev.find("name");
            if (name_field == ev.end() || !name_field->is_string()) continue;
            const std::string name = name_field->get<std::string>();
            auto args = ev.find("args");
            if (args == ev.end() || !args->is_object()) continue;
            auto label = args->find("name");
            if (label == args->end() || !label->is_string()) continue;
            if (name == "process_name") process_names_[id_text(ev, "pid", k)] = label->get<std::string>();
            if (name == "thread_name")
                thread_names_[{id_text(ev, "pid", k), id_text(ev, "tid", k)}] = label->get<std::string>();
        }

        std::vector<TimelineEvent> events;
        std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::size_t, TimelineEvent>>> open;
        for (std::size_t k = 0; k < list->size(); ++k) {
            const json& ev = (*list)[k];
            const std::string ph = phase(ev, k);
            if (ph == "X") {
                TimelineEvent e = begin_event(ev, k);
                const std::int64_t dur = microseconds_to_ns(required(ev, "dur", k), "dur", k);
                if (dur < 0) throw error_at(k, "has a negative \"dur\"");
                if (e.start_ns > 0 && dur > std::numeric_limits<std::int64_t>::max() - e.start_ns)
                    throw error_at(k, "ends out of range");
                e.end_ns = e.start_ns + dur;
                events.push_back(std::move(e));
            } else if (ph == "B") {
                open[{id_text(ev, "pid", k), id_text(ev, "tid", k)}].emplace_back(k, begin_event(ev, k));
            } else if (ph == "E") {
                const auto key = std::make_pair(id_text(ev, "pid", k), id_text(ev, "tid", k));
                auto& stack = open[key];
                if (stack.empty())
                    throw error_at(k, "is an \"E\" event without a matching \"B\" on pid " + key.first + " tid " +
                                          key.second);
                TimelineEvent e = std::move(stack.back().second);
                stack.pop_back();
                e.end_ns = microseconds_to_ns(required(ev, "ts", k), "ts", k);
                if (e.end_ns < e.start_ns) throw error_at(k, "ends before its \"B\" event begins");
                add_args(e, ev);  // "E" may carry args of its own
                events.push_back(std::move(e));
            }
            // Other phases (instant, counter, flow, async, metadata) are not work items.
        }
        // A "B" left open means the trace was cut while that work ran; it has no
        // duration to show, so it is left out.

        std::stable_sort(events.begin(), events.end(),
                         [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_ns < b.start_ns; });
        // Any two times of the trace differ by less than 2^62 ns, so the
        // differences the writer and the timeline views take never overflow.
        if (!events.empty()) {
            std::int64_t last = events.front().end_ns;
            for (const TimelineEvent& e : events) last = std::max(last, e.end_ns);
            const std::int64_t first = events.front().start_ns;
            if (first < 0 && last > std::numeric_limits<std::int64_t>::max() + first)
                throw Error(source_ + ": the trace spans more than 2^62 ns (146 years)");
            if (last - first > kMaxSpanNs) throw Error(source_ + ": the trace spans more than 2^62 ns (146 years)");
        }
        return events;
    }

    static constexpr std::int64_t kMaxSpanNs = std::int64_t{1} << 62;

    Error error_at(std::size_t k, const std::string& what) const {
        return Error(source_ + ": trace event " + std::to_string(k) + " " + what);
    }

    std::string phase(const json& ev, std::size_t k) const {
        auto it = ev.find("ph");
        if (it == ev.end()) throw error_at(k, "has no \"ph\" (phase) field");
        if (!it->is_string()) throw error_at(k, "has a \"ph\" field that is not a string");
        return it->get<std::string>();
    }

    const json& required(const json& ev, const char* field, std::size_t k) const {
        auto it = ev.find(field);
        if (it == ev.end()) throw error_at(k, "has no \"" + std::string(field) + "\" field");
        return *it;
    }

    std::int64_t microseconds_to_ns(const json& value, const char* field, std::size_t k) const {
        if (!value.is_number()) throw error_at(k, "has a \"" + std::string(field) + "\" that is not a number");
        const double ns = value.get<double>() * 1000.0;
        if (!std::isfinite(ns) || std::fabs(ns) > 9.0e18)
            throw error_at(k, "has a \"" + std::string(field) + "\" out of range");
        return std::llround(ns);
    }

    // pid and tid are numbers in most traces but strings in some.
    std::string id_text(const json& ev, const char* field, std::size_t k) const {
        const json& v = required(ev, field, k);
        if (v.is_string()) return v.get<std::string>();
        if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
        if (v.is_number()) return v.dump();
        throw error_at(k, "has a \"" + std::string(field) + "\" that is neither a number nor a string");
    }

    // A count: a number from 0 to 2^64 - 1 (a fraction is cut); anything else leaves `out` as it is.
    static void count_arg(const json& args, const char* key, std::uint64_t& out) {
        auto it = args.find(key);
        if (it == args.end()) return;
        if (it->is_number_unsigned()) {
            out = it->get<std::uint64_t>();
        } else if (it->is_number_integer()) {
            if (it->get<std::int64_t>() >= 0) out = static_cast<std::uint64_t>(it->get<std::int64_t>());
        } else if (it->is_number_float()) {
            const double v = it->get<double>();
            if (v >= 0 && v < 18446744073709551616.0) out = static_cast<std::uint64_t>(v);
        }
    }

    static void add_args(TimelineEvent& e, const json& ev) {
        auto args = ev.find("args");
        if (args == ev.end() || !args->is_object()) return;
        count_arg(*args, "bytes", e.bytes);
        count_arg(*args, "cells", e.cells);
        if (auto detail = args->find("detail"); detail != args->end() && detail->is_string())
            e.detail = detail->get<std::string>();
    }

    TimelineEvent begin_event(const json& ev, std::size_t k) {
        TimelineEvent e;
        const json& name = required(ev, "name", k);
        if (!name.is_string()) throw error_at(k, "has a \"name\" that is not a string");
        e.name = name.get<std::string>();
        e.category = ev.contains("cat") && ev["cat"].is_string() ? ev["cat"].get<std::string>() : std::string();
        e.start_ns = microseconds_to_ns(required(ev, "ts", k), "ts", k);
        const std::string pid = id_text(ev, "pid", k);
        const std::string tid = id_text(ev, "tid", k);
        add_args(e, ev);

        const json* args = ev.contains("args") && ev["args"].is_object() ? &ev["args"] : nullptr;
        if (args && args->contains("device") && (*args)["device"].is_string()) {
            e.device = (*args)["device"].get<std::string>();
        } else if (auto it = process_names_.find(pid); it != process_names_.end()) {
            e.device = it->second;
        } else {
            e.device = pid;
        }
        if (args && args->contains("lane") && (*args)["lane"].is_number_integer()) {
            e.lane = (*args)["lane"].get<int>();
        } else {
            e.lane = lane_of(pid, tid);
        }
        return e;
    }

    // Our own thread names end in the lane number ("stream 3"); otherwise a
    // numeric tid is the lane, and string tids are numbered in order of appearance.
    int lane_of(const std::string& pid, const std::string& tid) {
        if (auto it = thread_names_.find({pid, tid}); it != thread_names_.end()) {
            const std::string& label = it->second;
            std::size_t digits = label.size();
            while (digits > 0 && label[digits - 1] >= '0' && label[digits - 1] <= '9') --digits;
            if (digits < label.size() && label.size() - digits < 9 && digits > 0 && label[digits - 1] == ' ')
                return std::stoi(label.substr(digits));
        }
        if (!tid.empty() && tid.size() < 10 && tid.find_first_not_of("0123456789") == std::string::npos)
            return std::stoi(tid);
        auto& lanes = ordinal_lanes_[pid];
        auto [it, inserted] = lanes.emplace(tid, static_cast<int>(lanes.size()));
        return it->second;
    }

    std::string source_;
    std::map<std::string, std::string> process_names_;
    std::map<std::pair<std::string, std::string>, std::string> thread_names_;
    std::map<std::string, std::map<std::string, int>> ordinal_lanes_;
};

}  // namespace

std::vector<TimelineEvent> read_chrome_trace(const std::string& json_text, const std::string& source) {
    return TraceReader(source).read(json_text);
}

}  // namespace alignscope
