// Kernel timelines: what ran where and when. Every backend reports its kernels,
// copies and CPU work items as TimelineEvents to a sink; the CLI writes them as
// Chrome trace-event JSON (Perfetto opens it), the project stores them, the GUI
// draws them.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

struct TimelineEvent {
    std::string name;           // kernel name as the timeline shows it, e.g. "sw_affine_inter_s16", "H2D", "cpu:sw"
    std::string category;       // "kernel", "copy", "cpu"
    std::string device;         // "gpu:0", "cpu"
    int lane = 0;               // stream index on a GPU, worker thread index on the CPU
    std::int64_t start_ns = 0;  // on one clock for the whole job (see TimelineRecorder::clock)
    std::int64_t end_ns = 0;
    std::uint64_t bytes = 0;  // bytes moved (copies)
    std::uint64_t cells = 0;  // DP cells computed (kernels, CPU work)
    // What ran under the name, for a reader who wants more than the grammar:
    // the pass and the CUDA device function of a GPU kernel, e.g.
    // "reverse pass; intra_s16_chunked<8>(PassParams)". Empty when there is
    // nothing to add.
    std::string detail = {};
};

class TimelineSink {
public:
    virtual ~TimelineSink() = default;
    // Thread-safe in every implementation.
    virtual void record(TimelineEvent event) = 0;
    // Names how the events were timed ("cupti", "cuda-events", "steady-clock").
    virtual void set_clock_source(const std::string& source) { (void)source; }
};

// Collects events in memory.
class TimelineRecorder : public TimelineSink {
public:
    void record(TimelineEvent event) override;
    void set_clock_source(const std::string& source) override;
    std::vector<TimelineEvent> events() const;  // sorted by start
    std::string clock_source() const;

private:
    mutable std::mutex mutex_;
    std::vector<TimelineEvent> events_;
    std::string clock_source_ = "steady-clock";
};

// Nanoseconds on the steady clock; the clock of CPU events.
std::int64_t steady_now_ns();

// Host-side work from start_ns until now as a "host" event of device
// "<device> host" (the lane beside that device's kernels and copies). A null
// sink records nothing; a sink that throws does not fail the work.
void record_host_span(TimelineSink* sink, std::string_view device, const char* name, std::int64_t start_ns,
                      std::uint64_t cells = 0);

// The same for the lifetime of a scope. `device` must outlive it.
class ScopedHostSpan {
public:
    ScopedHostSpan(TimelineSink* sink, std::string_view device, const char* name, std::uint64_t cells = 0)
        : sink_(sink), device_(device), name_(name), cells_(cells), start_(sink ? steady_now_ns() : 0) {}
    ~ScopedHostSpan() { record_host_span(sink_, device_, name_, start_, cells_); }
    ScopedHostSpan(const ScopedHostSpan&) = delete;
    ScopedHostSpan& operator=(const ScopedHostSpan&) = delete;

private:
    TimelineSink* sink_;
    std::string_view device_;
    const char* name_;
    std::uint64_t cells_;
    std::int64_t start_;
};

// Chrome trace-event format: {"traceEvents":[...], "displayTimeUnit":"ns", ...}
// with one complete event (ph "X", ts/dur in microseconds) per event, pid = device,
// tid = lane, args {bytes, cells, device, lane, and detail when it is not
// empty}, plus process/thread name metadata.
// Timestamps are relative to the earliest event.
void write_chrome_trace(std::ostream& out, const std::vector<TimelineEvent>& events, const std::string& clock_source);
// Reads a Chrome trace (ours or another tool's: "X" events, and "B"/"E" pairs).
// Throws Error naming the file and what is wrong.
std::vector<TimelineEvent> read_chrome_trace(const std::string& json_text, const std::string& source);

}  // namespace alignscope
