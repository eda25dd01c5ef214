// The CPU filter scanners (threads over targets; SSV/MSV at the CPU's widest
// vector width and the SSE2 Viterbi filter, or the scalar reference
// recurrences) and the registry of profile filter scanners.
#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/msv_striped.hpp>
#include <alignscope/profile/viterbi_striped.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace alignscope::profile {

namespace {

// The threads parallel_for runs on, kept from call to call: the stages after
// the filters keep megabytes of DP matrices per thread (thread_local), which
// fresh threads would allocate and first touch again on every call, each
// model of a file and each stage of the pipeline; on a virtual machine those
// page faults cost more than the rows computed in them. One job at a time: a
// caller that finds the pool busy, and a call from inside a job, start
// threads of their own as before.
class WorkerPool {
public:
    static WorkerPool& instance() {
        static WorkerPool pool;
        return pool;
    }
    // Runs `work` on the caller and `helpers` pool threads at once; false
    // (nothing run) when another job has the pool.
    bool run(int helpers, const std::function<void()>& work) {
        if (in_pool_thread()) return false;
        std::unique_lock busy(busy_, std::try_to_lock);
        if (!busy.owns_lock()) return false;
        {
            std::lock_guard lock(mutex_);
            while (static_cast<int>(threads_.size()) < helpers)
                threads_.emplace_back([this, seen = generation_] { loop(seen); });
            job_ = &work;
            open_slots_ = helpers;
            running_ = helpers;
            ++generation_;
        }
        wake_.notify_all();
        work();
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return running_ == 0; });
        job_ = nullptr;
        return true;
    }
    ~WorkerPool() {
        {
            std::lock_guard lock(mutex_);
            quit_ = true;
        }
        wake_.notify_all();
        for (auto& t : threads_) t.join();
    }

private:
    static bool& in_pool_thread() {
        thread_local bool flag = false;
        return flag;
    }
    void loop(std::uint64_t seen) {
        in_pool_thread() = true;
        std::unique_lock lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return quit_ || (generation_ != seen && open_slots_ > 0); });
            if (quit_) return;
            seen = generation_;
            --open_slots_;
            const std::function<void()>* job = job_;
            lock.unlock();
            (*job)();  // parallel_for's work catches what its body throws
            lock.lock();
            if (--running_ == 0) done_.notify_all();
        }
    }
    std::mutex busy_;  // held by the caller whose job runs
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    const std::function<void()>* job_ = nullptr;
    std::uint64_t generation_ = 0;
    int open_slots_ = 0, running_ = 0;
    bool quit_ = false;
};

}  // namespace

void parallel_for(std::size_t n, int threads, const std::function<void(std::size_t)>& body, std::size_t chunk) {
    int workers = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    workers = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(workers), std::max<std::size_t>(n, 1)));
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    std::atomic<bool> stop{false};
    const std::function<void()> work = [&] {
        const std::size_t step = std::max<std::size_t>(chunk, 1);
        while (!stop.load(std::memory_order_relaxed)) {
            const std::size_t first = next.fetch_add(step);
            if (first >= n) break;
            try {
                for (std::size_t i = first; i < std::min(n, first + step); ++i) body(i);
            } catch (...) {
                std::lock_guard lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                stop = true;
            }
        }
    };
    if (workers <= 1) {
        work();
    } else if (!WorkerPool::instance().run(workers - 1, work)) {
        std::vector<std::thread> pool;
        for (int w = 0; w < workers; ++w) pool.emplace_back(work);
        for (auto& t : pool) t.join();
    }
    if (failure) std::rethrow_exception(failure);
}

namespace {

// "cpu": SSV/MSV (msv_striped.hpp) and the Viterbi filter striped over SIMD registers; "cpu-ref": the scalar
// reference recurrences. Both thread over targets and give the same scores.
class CpuProfileScanner final : public ProfileFilterScanner {
public:
    CpuProfileScanner(int threads, bool reference) : threads_(threads), reference_(reference) {}
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = reference_ ? "cpu-ref" : "cpu";
        d.kind = "cpu";
        d.name = reference_ ? "CPU reference (scalar filters)"
                            : "CPU (" + std::string(to_string(best_simd_level())) +
                                  " SSV, then striped MSV where SSV cannot decide; SSE2 Viterbi filter)";
        d.threads = threads_ > 0 ? threads_ : static_cast<int>(std::thread::hardware_concurrency());
        d.description = "MSV and Viterbi filters in HMMER's 8- and 16-bit units, threads over targets";
        return d;
    }
    void load(const ProfileTargets& targets, JobContext&) override { targets_ = &targets; }
    void msv(const MsvProfile& model, std::span<float> scores, JobContext& context) override {
        check_loaded(scores.size());
        const auto start = std::chrono::steady_clock::now();
        stats_ = {};
        stats_.msv_cells = targets_->residue_count() * static_cast<std::uint64_t>(model.length);
        const StripedMsvProfile striped = make_striped_msv_profile(model);
        parallel_for(targets_->size(), threads_, [&](std::size_t t) {
            if ((t & 255) == 0) context.throw_if_cancelled();
            scores[t] = reference_ ? msv_filter(model, targets_->codes(t), targets_->length(t))
                                   : msv_filter_striped(striped, targets_->codes(t), targets_->length(t));
        });
        stats_.msv_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    void viterbi(const ViterbiFilterProfile& model, std::span<const std::uint32_t> targets, std::span<float> scores,
                 JobContext& context) override {
        if (!targets_) throw Error("profile filter scanner: no targets loaded");
        const auto start = std::chrono::steady_clock::now();
        const StripedViterbiProfile striped = make_striped_viterbi_profile(model);
        parallel_for(targets.size(), threads_, [&](std::size_t i) {
            if ((i & 63) == 0) context.throw_if_cancelled();
            const std::uint32_t t = targets[i];
            scores[i] = reference_ ? viterbi_filter(model, targets_->codes(t), targets_->length(t))
                                   : viterbi_filter_striped(striped, targets_->codes(t), targets_->length(t));
        });
        for (std::uint32_t t : targets)
            stats_.viterbi_cells +=
                static_cast<std::uint64_t>(targets_->length(t)) * static_cast<std::uint64_t>(model.length);
        stats_.viterbi_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    ProfileFilterStats last_stats() const override { return stats_; }

private:
    void check_loaded(std::size_t n) const {
        if (!targets_) throw Error("profile filter scanner: no targets loaded");
        if (n != targets_->size()) throw Error("profile filter scanner: score array does not match the targets");
    }
    int threads_;
    bool reference_;
    const ProfileTargets* targets_ = nullptr;
    ProfileFilterStats stats_;
};

}  // namespace

void ProfileScannerRegistry::add(DeviceInfo info, Factory factory) {
    entries_.push_back({std::move(info), std::move(factory)});
}

std::vector<DeviceInfo> ProfileScannerRegistry::devices() const {
    std::vector<DeviceInfo> out;
    for (const auto& e : entries_) out.push_back(e.info);
    return out;
}

std::unique_ptr<ProfileFilterScanner> ProfileScannerRegistry::create(std::string_view spec, int threads) const {
    if (spec == "auto") {
        for (const auto& e : entries_)
            if (e.info.kind == "gpu" && e.info.available) return e.factory(threads);
        spec = "cpu";
    }
    for (const auto& e : entries_)
        if (e.info.id == spec) return e.factory(threads);
    std::string known;
    for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.info.id;
    throw Error("--device: no profile search device '" + std::string(spec) + "' (devices: " + known + ", auto)");
}

std::unique_ptr<ProfileScannerRegistry> make_cpu_profile_scanner_registry() {
    auto registry = std::make_unique<ProfileScannerRegistry>();
    registry->add(CpuProfileScanner(0, false).info(),
                  [](int threads) { return std::make_unique<CpuProfileScanner>(threads, false); });
    registry->add(CpuProfileScanner(0, true).info(),
                  [](int threads) { return std::make_unique<CpuProfileScanner>(threads, true); });
    return registry;
}

}  // namespace alignscope::profile
