// Kernel and copy timelines on a GPU: every operation a job enqueues becomes a
// TimelineEvent (device "gpu:N", lane = stream, name, start/end on the steady
// clock, bytes, cells). CUPTI's Activity API gives the true start and end of
// concurrent kernels; without it (not built in, or refused at run time) CUDA
// events bracket each operation, which measures queue-to-queue time instead.
#pragma once

#include "common/cuda_check.hpp"

#include <alignscope/device/timeline.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace alignscope::kernels {

struct GpuOp {
    std::string name;      // kernel name ("sw_affine_inter_s16") or copy ("H2D", "D2H")
    std::string category;  // "kernel" or "copy"
    int lane = 0;          // stream index in the job's pool
    std::uint64_t bytes = 0;
    std::uint64_t cells = 0;
};

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

    // Enqueues what `enqueue` puts on `stream` as one timed operation.
    template <typename Enqueue>
    void record(cudaStream_t stream, GpuOp op, Enqueue&& enqueue) {
        if (!sink_) {
            enqueue();
            return;
        }
        const std::size_t id = begin(stream, std::move(op));
        enqueue();
        end(id, stream);
    }

    // Call with the device idle: hands every recorded operation to the sink.
    void flush();

private:
    std::size_t begin(cudaStream_t stream, GpuOp op);
    void end(std::size_t id, cudaStream_t stream);

    struct Pending {
        GpuOp op;
        cudaEvent_t start = nullptr;
        cudaEvent_t stop = nullptr;
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

}  // namespace alignscope::kernels
