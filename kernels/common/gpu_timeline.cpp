// GPU timelines from CUPTI activity records (external correlation ids tie each
// record to the operation that enqueued it; activity_correlation.hpp keeps the
// books) or, failing that, CUDA events.
#include "common/gpu_timeline.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

#ifdef ALIGNSCOPE_WITH_CUPTI
#include "common/cupti_library.hpp"
#endif

namespace alignscope::kernels {

#ifdef ALIGNSCOPE_WITH_CUPTI
namespace {

// CUPTI is process-wide: one collector serves every GpuTimeline (several at
// once when a job runs on several GPUs), routing records by external id.
class CuptiCollector {
public:
    static CuptiCollector& instance() {
        static CuptiCollector collector;
        return collector;
    }
    // Only called once acquire() succeeded, so CUPTI is loaded.
    static const CuptiLibrary& api() { return *cupti_library(); }

    // Starts collecting (first user) ; false when CUPTI refuses. CUPTI is
    // enabled and disabled under control_, never under mutex_: CUPTI's own
    // thread delivers buffers to parse(), which takes mutex_, and may do so
    // while another thread is inside a CUPTI call.
    bool acquire() {
        std::lock_guard control(control_);
        if (broken_) return false;
        if (!registered_) {
            if (!cupti_library()) {  // not installed: CUDA events time the timeline
                broken_ = true;
                return false;
            }
            if (api().activity_register_callbacks(&buffer_requested, &buffer_completed) != CUPTI_SUCCESS) {
                broken_ = true;
                return false;
            }
            registered_ = true;
        }
        if (users_ == 0) {
            // External correlation records hang off the runtime API records,
            // so those must be on too (their own records are dropped).
            const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                                CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
            for (CUpti_ActivityKind kind : kinds) {
                if (api().activity_enable(kind) != CUPTI_SUCCESS) {
                    for (CUpti_ActivityKind k : kinds) (void)api().activity_disable(k);
                    broken_ = true;
                    return false;
                }
            }
        }
        ++users_;
        return true;
    }
    // The last user stops collecting. Under control_ throughout, so a job that
    // starts meanwhile waits and enables again instead of losing its records.
    void release() {
        std::lock_guard control(control_);
        if (users_ == 0 || --users_ > 0) return;
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_MEMCPY);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_MEMSET);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_RUNTIME);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        // Flushing calls buffer_completed, which takes mutex_: never flush
        // while holding it.
        (void)api().activity_flush_all(1);
        std::lock_guard lock(mutex_);
        correlation_.clear();
    }

    std::uint64_t next_id() { return next_id_.fetch_add(1) + 1; }

    // Flushes CUPTI's buffers and takes the records of the given external ids.
    std::unordered_map<std::uint64_t, std::vector<ActivityRecord>> take(const std::vector<std::uint64_t>& ids) {
        (void)api().activity_flush_all(1);
        std::lock_guard lock(mutex_);
        return correlation_.take(ids);
    }

private:
    static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
        constexpr std::size_t bytes = 1 << 20;
        *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, bytes));
        *size = *buffer ? bytes : 0;
        *max_records = 0;
    }
    static void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
        instance().parse(buffer, valid);
        std::free(buffer);
    }
    void parse(uint8_t* buffer, std::size_t valid) {
        std::lock_guard lock(mutex_);
        CUpti_Activity* record = nullptr;
        while (api().activity_get_next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
            switch (record->kind) {
                case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
                case CUPTI_ACTIVITY_KIND_KERNEL: {
                    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
                    correlation_.add_record({k->correlationId, k->start, k->end, 0, k->name ? k->name : ""});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMCPY: {
                    const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
                    correlation_.add_record({c->correlationId, c->start, c->end, c->bytes});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMSET: {
                    const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
                    correlation_.add_record({s->correlationId, s->start, s->end, s->bytes});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                    const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
                    if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
                        correlation_.add_external(x->correlationId, x->externalId);
                    break;
                }
                default: break;
            }
        }
    }

    std::mutex control_;  // registered_, broken_, users_ and the CUPTI calls that enable and disable
    std::mutex mutex_;    // correlation_, filled by CUPTI's buffer thread
    bool registered_ = false;
    bool broken_ = false;
    int users_ = 0;
    std::atomic<std::uint64_t> next_id_{0};
    ActivityCorrelation correlation_;
};

}  // namespace
#endif

GpuTimeline::GpuTimeline(TimelineSink* sink, std::string device_id, const CudaSite& site)
    : sink_(sink), device_id_(std::move(device_id)), site_(site) {
    if (!sink_) return;
#ifdef ALIGNSCOPE_WITH_CUPTI
    const char* wanted = std::getenv("ALIGNSCOPE_TIMELINE_CLOCK");
    if (!(wanted && std::string_view(wanted) == "cuda-events") && CuptiCollector::instance().acquire()) {
        cupti_ = true;
        std::uint64_t now = 0;
        (void)CuptiCollector::api().get_timestamp(&now);
        cupti_offset_ns_ = steady_now_ns() - static_cast<std::int64_t>(now);
    }
#endif
    try {
        // CUDA events bracket every operation even with CUPTI: an operation
        // CUPTI reports nothing for still gets its (queue-to-queue) times.
        check_cuda(cudaEventCreate(&base_), "cudaEventCreate", site_);
        check_cuda(cudaEventRecord(base_, nullptr), "cudaEventRecord", site_);
        check_cuda(cudaEventSynchronize(base_), "cudaEventSynchronize", site_);
        base_ns_ = steady_now_ns();
        sink_->set_clock_source(clock_source());
    } catch (...) {
        // No destructor runs for a constructor that throws: give back what
        // the destructor would (CUPTI stays on for the process otherwise).
        if (base_) (void)cudaEventDestroy(base_);
#ifdef ALIGNSCOPE_WITH_CUPTI
        if (cupti_) CuptiCollector::instance().release();
#endif
        throw;
    }
}

GpuTimeline::~GpuTimeline() {
    for (cudaEvent_t e : events_) (void)cudaEventDestroy(e);
    if (base_) (void)cudaEventDestroy(base_);
#ifdef ALIGNSCOPE_WITH_CUPTI
    if (cupti_) CuptiCollector::instance().release();
#endif
}

const char* GpuTimeline::clock_source() const { return cupti_ ? "cupti" : "cuda-events"; }

cudaEvent_t GpuTimeline::take_event() {
    if (events_used_ == events_.size()) {
        cudaEvent_t e = nullptr;
        check_cuda(cudaEventCreate(&e), "cudaEventCreate", site_);
        events_.push_back(e);
    }
    return events_[events_used_++];
}

std::size_t GpuTimeline::begin(cudaStream_t stream, GpuOp op) {
    // Everything that may throw comes before the push, so that no push is
    // left without its pop.
    Pending p;
    p.op = std::move(op);
    p.start = take_event();
    p.stop = take_event();
    check_cuda(cudaEventRecord(p.start, stream), "cudaEventRecord", site_);
#ifdef ALIGNSCOPE_WITH_CUPTI
    if (cupti_) p.external_id = CuptiCollector::instance().next_id();
#endif
    pending_.push_back(std::move(p));
#ifdef ALIGNSCOPE_WITH_CUPTI
    if (cupti_)
        (void)CuptiCollector::api().activity_push_external_correlation_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                                          pending_.back().external_id);
#endif
    return pending_.size() - 1;
}

void GpuTimeline::end(std::size_t id, cudaStream_t stream) noexcept {
#ifdef ALIGNSCOPE_WITH_CUPTI
    if (cupti_) {
        std::uint64_t last = 0;
        (void)CuptiCollector::api().activity_pop_external_correlation_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                                         &last);
    }
#endif
    if (id >= pending_.size()) return;  // flushed while the operation was open: nothing to stop
    Pending& p = pending_[id];
    p.stopped = cudaEventRecord(p.stop, stream) == cudaSuccess;
    if (!p.stopped) (void)cudaGetLastError();
}

void GpuTimeline::flush() {
    if (!sink_ || pending_.empty()) return;
    std::size_t from_cupti = 0;
#ifdef ALIGNSCOPE_WITH_CUPTI
    std::unordered_map<std::uint64_t, std::vector<ActivityRecord>> records;
    if (cupti_) {
        std::vector<std::uint64_t> ids;
        ids.reserve(pending_.size());
        for (const Pending& p : pending_) ids.push_back(p.external_id);
        records = CuptiCollector::instance().take(ids);
    }
#endif
    std::size_t timed = 0;
    for (const Pending& p : pending_) {
#ifdef ALIGNSCOPE_WITH_CUPTI
        if (auto it = records.find(p.external_id); cupti_ && it != records.end() && !it->second.empty()) {
            for (const ActivityRecord& record : it->second)
                sink_->record(labelled_event(p.op, record, device_id_, cupti_offset_ns_));
            ++from_cupti;
            ++timed;
            continue;
        }
#endif
        // An operation whose launch failed has no stop event: left out.
        if (!p.stopped) continue;
        ++timed;
        check_cuda(cudaEventSynchronize(p.stop), "cudaEventSynchronize", site_);
        float start_ms = 0, stop_ms = 0;
        check_cuda(cudaEventElapsedTime(&start_ms, base_, p.start), "cudaEventElapsedTime", site_);
        check_cuda(cudaEventElapsedTime(&stop_ms, base_, p.stop), "cudaEventElapsedTime", site_);
        TimelineEvent event;
        event.name = p.op.name;
        event.category = p.op.category;
        event.device = device_id_;
        event.lane = p.op.lane;
        event.start_ns = base_ns_ + static_cast<std::int64_t>(static_cast<double>(start_ms) * 1e6);
        event.end_ns = base_ns_ + static_cast<std::int64_t>(static_cast<double>(stop_ms) * 1e6);
        event.bytes = p.op.bytes;
        event.cells = p.op.cells;
        event.detail = p.op.detail;
        sink_->record(std::move(event));
    }
    // Say how the events were timed: CUPTI only when it timed all of them.
    if (cupti_ && from_cupti != timed) sink_->set_clock_source(from_cupti ? "cupti+cuda-events" : "cuda-events");
    pending_.clear();
    events_used_ = 0;
}

}  // namespace alignscope::kernels
