// Kernel and copy timelines on a GPU: every operation a job enqueues becomes a
// TimelineEvent (device "gpu:N", lane = stream, name, start/end on the steady
// clock, bytes, cells). CUPTI's Activity API gives the true start and end of
// concurrent kernels; without it (not built in, or refused at run time) CUDA
// events bracket each operation, which measures queue-to-queue time instead.
#pragma once

#include "common/activity_correlation.hpp"
#include "common/cuda_check.hpp"

#include <alignscope/device/timeline.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace alignscope::kernels {

class GpuTimeline {
public:
    // `sink` may be null: nothing is recorded and record() only enqueues.
    GpuTimeline(TimelineSink* sink, std::string device_id, const CudaSite& site);
    ~GpuTimeline();
    GpuTimeline(const GpuTimeline&) = delete;
    GpuTimeline& operator=(const GpuTimeline&) = delete;

    bool enabled() const { return sink_ != nullptr; }
    // "cupti" or "cuda-events".
    const char* clock_source() const;

    // Enqueues what `enqueue` puts on `stream` as one timed operation (a
    // ScopedGpuOp around it).
    template <typename Enqueue>
    void record(cudaStream_t stream, GpuOp op, Enqueue&& enqueue);

    // Call with the device idle: hands every recorded operation to the sink.
    void flush();

private:
    friend class ScopedGpuOp;
    std::size_t begin(cudaStream_t stream, GpuOp op);
    // Never throws: a timeline that cannot time an operation leaves it out.
    void end(std::size_t id, cudaStream_t stream) noexcept;

    struct Pending {
        GpuOp op;
        cudaEvent_t start = nullptr;
        cudaEvent_t stop = nullptr;
        bool stopped = false;  // the stop event is on the stream
        std::uint64_t external_id = 0;
    };
    cudaEvent_t take_event();

    TimelineSink* sink_;
    std::string device_id_;
    CudaSite site_;
    bool cupti_ = false;
    std::vector<Pending> pending_;
    std::vector<cudaEvent_t> events_;  // owned, reused
    std::size_t events_used_ = 0;
    cudaEvent_t base_ = nullptr;
    std::int64_t base_ns_ = 0;          // steady clock at base_
    std::int64_t cupti_offset_ns_ = 0;  // steady clock minus CUPTI clock
};

// One operation on the timeline for as long as it lives: what the calling
// thread enqueues on `stream` meanwhile (one kernel launch, or a copy) is
// timed under `op`. With CUPTI, an external correlation id pushed here and
// popped by the destructor ties CUPTI's records of the launch to `op`, so a
// kernel shows the KernelName of the launch whatever its device function is
// called; the pop happens even when the launch throws. With the timeline off
// it does nothing.
class ScopedGpuOp {
public:
    ScopedGpuOp(GpuTimeline& timeline, cudaStream_t stream, GpuOp op)
        : timeline_(timeline.enabled() ? &timeline : nullptr), stream_(stream) {
        if (timeline_) id_ = timeline_->begin(stream, std::move(op));
    }
    ~ScopedGpuOp() {
        if (timeline_) timeline_->end(id_, stream_);
    }
    ScopedGpuOp(const ScopedGpuOp&) = delete;
    ScopedGpuOp& operator=(const ScopedGpuOp&) = delete;

private:
    GpuTimeline* timeline_;
    cudaStream_t stream_;
    std::size_t id_ = 0;
};

template <typename Enqueue>
void GpuTimeline::record(cudaStream_t stream, GpuOp op, Enqueue&& enqueue) {
    ScopedGpuOp scope(*this, stream, std::move(op));
    enqueue();
}

}  // namespace alignscope::kernels
