// GPU timelines from CUPTI activity records (external correlation ids tie each
// record to the operation that enqueued it) or, failing that, CUDA events.
#include "common/gpu_timeline.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
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

    // Starts collecting (first user) ; false when CUPTI refuses.
    bool acquire() {
        std::lock_guard lock(mutex_);
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
    void release() {
        {
            std::lock_guard lock(mutex_);
            if (users_ == 0 || --users_ > 0) return;
        }
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_MEMCPY);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_MEMSET);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_RUNTIME);
        (void)api().activity_disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        // Flushing calls buffer_completed, which takes the lock: never flush
        // while holding it.
        (void)api().activity_flush_all(1);
        std::lock_guard lock(mutex_);
        if (users_ == 0) {
            records_.clear();
            external_.clear();
        }
    }

    std::uint64_t next_id() { return next_id_.fetch_add(1) + 1; }

    struct Interval {
        std::uint64_t start = 0, end = 0, bytes = 0;
    };
    // Flushes CUPTI's buffers and takes the intervals of the given external ids.
    std::unordered_map<std::uint64_t, std::vector<Interval>> take(const std::vector<std::uint64_t>& ids) {
        (void)api().activity_flush_all(1);
        std::lock_guard lock(mutex_);
        std::unordered_map<std::uint64_t, std::vector<Interval>> out;
        std::unordered_map<std::uint64_t, bool> wanted;
        for (auto id : ids) wanted[id] = true;
        for (auto it = external_.begin(); it != external_.end();) {
            const auto [correlation, external] = *it;
            if (!wanted.count(external)) {
                ++it;
                continue;
            }
            if (auto r = records_.find(correlation); r != records_.end()) {
                for (const Interval& interval : r->second) out[external].push_back(interval);
                records_.erase(r);
            }
            it = external_.erase(it);
        }
        return out;
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
                    records_[k->correlationId].push_back({k->start, k->end, 0});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMCPY: {
                    const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
                    records_[c->correlationId].push_back({c->start, c->end, c->bytes});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_MEMSET: {
                    const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
                    records_[s->correlationId].push_back({s->start, s->end, s->bytes});
                    break;
                }
                case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
                    const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
                    if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
                        external_[x->correlationId] = x->externalId;
                    break;
                }
                default: break;
            }
        }
    }

    std::mutex mutex_;
    bool registered_ = false;
    bool broken_ = false;
    int users_ = 0;
    std::atomic<std::uint64_t> next_id_{0};
    std::unordered_map<std::uint32_t, std::vector<Interval>> records_;  // by correlation id
    std::map<std::uint32_t, std::uint64_t> external_;                   // correlation -> external id
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
    {
        // CUDA events bracket every operation even with CUPTI: an operation
        // CUPTI reports nothing for still gets its (queue-to-queue) times.
        check_cuda(cudaEventCreate(&base_), "cudaEventCreate", site_);
        check_cuda(cudaEventRecord(base_, nullptr), "cudaEventRecord", site_);
        check_cuda(cudaEventSynchronize(base_), "cudaEventSynchronize", site_);
        base_ns_ = steady_now_ns();
    }
    sink_->set_clock_source(clock_source());
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
    Pending p;
    p.op = std::move(op);
#ifdef ALIGNSCOPE_WITH_CUPTI
    if (cupti_) {
        p.external_id = CuptiCollector::instance().next_id();
        (void)CuptiCollector::api().activity_push_external_correlation_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                                          p.external_id);
    }
#endif
    p.start = take_event();
    p.stop = take_event();
    check_cuda(cudaEventRecord(p.start, stream), "cudaEventRecord", site_);
    pending_.push_back(std::move(p));
    return pending_.size() - 1;
}

void GpuTimeline::end(std::size_t id, cudaStream_t stream) {
#ifdef ALIGNSCOPE_WITH_CUPTI
    if (cupti_) {
        std::uint64_t last = 0;
        (void)CuptiCollector::api().activity_pop_external_correlation_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                                         &last);
    }
#endif
    check_cuda(cudaEventRecord(pending_[id].stop, stream), "cudaEventRecord", site_);
}

void GpuTimeline::flush() {
    if (!sink_ || pending_.empty()) return;
    auto emit = [&](const Pending& p, std::int64_t start_ns, std::int64_t end_ns, std::uint64_t bytes) {
        TimelineEvent event;
        event.name = p.op.name;
        event.category = p.op.category;
        event.device = device_id_;
        event.lane = p.op.lane;
        event.start_ns = start_ns;
        event.end_ns = end_ns;
        event.bytes = bytes;
        event.cells = p.op.cells;
        sink_->record(std::move(event));
    };
    std::size_t from_cupti = 0;
#ifdef ALIGNSCOPE_WITH_CUPTI
    std::unordered_map<std::uint64_t, std::vector<CuptiCollector::Interval>> intervals;
    if (cupti_) {
        std::vector<std::uint64_t> ids;
        ids.reserve(pending_.size());
        for (const Pending& p : pending_) ids.push_back(p.external_id);
        intervals = CuptiCollector::instance().take(ids);
    }
#endif
    for (const Pending& p : pending_) {
#ifdef ALIGNSCOPE_WITH_CUPTI
        if (auto it = intervals.find(p.external_id); cupti_ && it != intervals.end() && !it->second.empty()) {
            for (const auto& interval : it->second)
                emit(p, static_cast<std::int64_t>(interval.start) + cupti_offset_ns_,
                     static_cast<std::int64_t>(interval.end) + cupti_offset_ns_,
                     p.op.category == "copy" ? interval.bytes : p.op.bytes);
            ++from_cupti;
            continue;
        }
#endif
        check_cuda(cudaEventSynchronize(p.stop), "cudaEventSynchronize", site_);
        float start_ms = 0, stop_ms = 0;
        check_cuda(cudaEventElapsedTime(&start_ms, base_, p.start), "cudaEventElapsedTime", site_);
        check_cuda(cudaEventElapsedTime(&stop_ms, base_, p.stop), "cudaEventElapsedTime", site_);
        emit(p, base_ns_ + static_cast<std::int64_t>(static_cast<double>(start_ms) * 1e6),
             base_ns_ + static_cast<std::int64_t>(static_cast<double>(stop_ms) * 1e6), p.op.bytes);
    }
    // Say how the events were timed: CUPTI only when it timed all of them.
    if (cupti_ && from_cupti != pending_.size())
        sink_->set_clock_source(from_cupti ? "cupti+cuda-events" : "cuda-events");
    pending_.clear();
    events_used_ = 0;
}

}  // namespace alignscope::kernels
