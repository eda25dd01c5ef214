// Backend "cpu-ref": the scalar reference aligner threaded over pairs, and the
// CPU worker pool both CPU backends run on.
#include "cpu_backends.hpp"

#include <alignscope/align/linear_space.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace alignscope {

int cpu_worker_count(const PairJob& job) {
    if (job.threads > 0) return job.threads;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
}

KernelName job_kernel(const PairJob& job, const ForcedKernel& kernel) {
    return KernelName{job.options.mode, job.scheme.linear(), kernel.family, 0, kernel.width};
}

std::optional<ForcedKernel> forced_kernel(const PairJob& job, const std::string& device,
                                          const std::vector<ForcedKernel>& runs) {
    if (job.kernel.empty()) return std::nullopt;
    KernelName name;
    try {
        name = KernelName::parse(job.kernel);
    } catch (const Error& e) {
        throw Error::about("kernel", e.what());
    }
    for (const ForcedKernel& k : runs)
        if (job_kernel(job, k) == name) return k;
    std::string choices;
    for (const ForcedKernel& k : runs) choices += (choices.empty() ? "" : ", ") + job_kernel(job, k).format();
    throw Error("--kernel '" + job.kernel + "' cannot run on device " + device + " for this job; it runs " + choices);
}

namespace {

constexpr std::int64_t progress_interval_ns = 50'000'000;

// What the workers of one job share.
class PoolState {
public:
    PoolState(const PairJob& job, JobContext& context, std::uint64_t total_cells)
        : job_(job), context_(context), total_cells_(total_cells) {}

    void add_cells(std::uint64_t cells) { cells_done_.fetch_add(cells, std::memory_order_relaxed); }
    void add_item() { items_done_.fetch_add(1, std::memory_order_relaxed); }

    // At most one report per interval, and never two at once.
    void maybe_report(bool force = false) {
        if (!context_.progress) return;
        const std::int64_t now = steady_now_ns();
        std::int64_t last = last_report_ns_.load(std::memory_order_relaxed);
        if (!force && now - last < progress_interval_ns) return;
        if (!force && !last_report_ns_.compare_exchange_strong(last, now)) return;
        std::unique_lock lock(progress_mutex_, std::defer_lock);
        if (force) {
            lock.lock();
        } else if (!lock.try_lock()) {
            return;
        }
        Progress p;
        p.cells_done = std::min(cells_done_.load(std::memory_order_relaxed), total_cells_);
        p.cells_total = total_cells_;
        p.items_done = items_done_.load(std::memory_order_relaxed);
        p.items_total = job_.pairs.size();
        context_.progress(p);
    }

    bool stopping() const { return stop_.load(std::memory_order_relaxed) || context_.cancelled(); }
    void stop() { stop_.store(true, std::memory_order_relaxed); }

    void fail(std::exception_ptr error) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::move(error);
        stop();
    }
    std::exception_ptr error() const { return error_; }

private:
    const PairJob& job_;
    JobContext& context_;
    std::uint64_t total_cells_;
    std::atomic<std::uint64_t> cells_done_{0};
    std::atomic<std::uint64_t> items_done_{0};
    std::atomic<std::int64_t> last_report_ns_{0};
    std::mutex progress_mutex_;
    std::atomic<bool> stop_{false};
    std::mutex error_mutex_;
    std::exception_ptr error_;
};

class WorkerProgress : public PairProgress {
public:
    explicit WorkerProgress(PoolState& pool) : pool_(pool) {}

    void start_pair(std::uint64_t cells) {
        pair_cells_ = cells;
        reported_ = 0;
    }
    void cells_done(std::uint64_t so_far) override {
        // A linear-space aligner recomputes cells; progress counts each once.
        so_far = std::min(so_far, pair_cells_);
        if (so_far > reported_) {
            pool_.add_cells(so_far - reported_);
            reported_ = so_far;
        }
        pool_.maybe_report();
        if (pool_.stopping()) throw Cancelled();
    }
    bool stop_requested() const override { return pool_.stopping(); }
    void finish_pair() {
        if (pair_cells_ > reported_) pool_.add_cells(pair_cells_ - reported_);
        reported_ = pair_cells_;
        pool_.add_item();
        pool_.maybe_report();
    }

private:
    PoolState& pool_;
    std::uint64_t pair_cells_ = 0;
    std::uint64_t reported_ = 0;
};

std::string describe_pair(const PairJob& job, std::size_t p) {
    const auto& [q, t] = job.pairs[p];
    return "pair " + std::to_string(p + 1) + " (query '" + (*job.queries)[q].id + "', target '" + (*job.targets)[t].id +
           "')";
}

// An aligner's result put in its place: every field of `from`, with the ids
// and device written into the strings `to` had, whose storage is reused.
void store_result(Alignment& to, Alignment&& from, const Sequence& query, const Sequence& target,
                  const std::string& device) {
    std::string query_id = std::move(to.query_id), target_id = std::move(to.target_id),
                device_id = std::move(to.device);
    to = std::move(from);
    query_id.assign(query.id);
    target_id.assign(target.id);
    device_id.assign(device);
    to.query_id.swap(query_id);
    to.target_id.swap(target_id);
    to.device.swap(device_id);
}

}  // namespace

std::vector<Alignment> align_pairs_on_workers(const PairJob& job, JobContext& context, const std::string& device,
                                              const std::function<std::unique_ptr<PairAligner>()>& make_aligner) {
    std::vector<Alignment> results;
    align_pairs_on_workers(job, context, device, make_aligner, results);
    return results;
}

void align_pairs_on_workers(const PairJob& job, JobContext& context, const std::string& device,
                            const std::function<std::unique_ptr<PairAligner>()>& make_aligner,
                            std::vector<Alignment>& results) {
    const std::uint64_t total_cells = job.total_cells();  // also checks the pair indices
    const std::size_t n = job.pairs.size();
    results.resize(n);
    context.throw_if_cancelled();
    if (n == 0) return;

    const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(cpu_worker_count(job)), n));
    // Blocks small enough to balance the load, large enough that a worker
    // aligning one query against consecutive targets keeps its profile.
    const std::size_t block = std::clamp<std::size_t>(n / (static_cast<std::size_t>(threads) * 16), 1, 64);
    std::atomic<std::size_t> next{0};
    PoolState pool(job, context, total_cells);

    auto work = [&](int lane) {
        std::size_t current = n;
        try {
            std::unique_ptr<PairAligner> aligner = make_aligner();
            WorkerProgress progress(pool);
            while (!pool.stopping()) {
                const std::size_t begin = next.fetch_add(block, std::memory_order_relaxed);
                if (begin >= n) break;
                const std::size_t end = std::min(n, begin + block);

                // One timeline event per block and kernel. Pairs of one block
                // may alternate kernels (lane widths differ from pair to pair),
                // so each kernel's time in the block is summed and the events
                // are laid end to end from the block's start: as many events
                // as kernels, not as pairs.
                std::vector<TimelineEvent> kernels;
                const std::int64_t block_start = steady_now_ns();
                for (std::size_t p = begin; p < end; ++p) {
                    if (pool.stopping()) break;
                    current = p;
                    const Sequence& query = (*job.queries)[job.pairs[p].first];
                    const Sequence& target = (*job.targets)[job.pairs[p].second];
                    const std::uint64_t cells =
                        static_cast<std::uint64_t>(query.residues.size()) * target.residues.size();
                    progress.start_pair(cells);
                    const std::int64_t pair_start = steady_now_ns();
                    Alignment a = aligner->align(query, target, progress);
                    const std::int64_t pair_ns = steady_now_ns() - pair_start;
                    progress.finish_pair();
                    auto it = std::find_if(kernels.begin(), kernels.end(),
                                           [&a](const TimelineEvent& e) { return e.name == a.kernel; });
                    if (it == kernels.end()) {
                        TimelineEvent e;
                        e.name = a.kernel;
                        e.category = "cpu";
                        e.device = device;
                        e.lane = lane;
                        it = kernels.insert(kernels.end(), std::move(e));
                    }
                    it->end_ns += pair_ns;  // a duration until laid out below
                    it->cells += cells;
                    store_result(results[p], std::move(a), query, target, device);
                    current = n;
                }
                if (context.timeline) {
                    std::int64_t at = block_start;
                    for (TimelineEvent& e : kernels) {
                        e.start_ns = at;
                        e.end_ns += at;
                        at = e.end_ns;
                        context.timeline->record(std::move(e));
                    }
                }
            }
        } catch (const Cancelled&) {
            pool.stop();
        } catch (const Error& e) {
            pool.fail(std::make_exception_ptr(
                Error(device + ": " + (current < n ? describe_pair(job, current) + ": " : std::string()) + e.what())));
        } catch (const std::bad_alloc&) {
            pool.fail(std::make_exception_ptr(
                Error(device + ": out of memory" + (current < n ? " aligning " + describe_pair(job, current) : ""))));
        } catch (...) {
            pool.fail(std::current_exception());
        }
    };

    {
        std::vector<std::jthread> workers;
        workers.reserve(static_cast<std::size_t>(threads));
        for (int lane = 0; lane < threads; ++lane) workers.emplace_back(work, lane);
    }  // joined here

    if (pool.error()) std::rethrow_exception(pool.error());
    context.throw_if_cancelled();
    if (pool.stopping()) throw Cancelled();
    pool.maybe_report(true);
}

namespace {

// Pairs above this many cells run in linear space, whose progress callback
// lets a cancel through; below it the reference aligner finishes a pair in well
// under 100 ms (about 0.25 GCUPS with traceback on a busy core).
constexpr std::uint64_t reference_pair_cell_limit = 4'000'000;

const std::vector<ForcedKernel> reference_kernels = {{"scalar", KernelWidth::S64}, {"myersmiller", KernelWidth::S64}};

// Kernel names are the reference aligner's own: "scalar" for the full-matrix
// aligner, "myersmiller" for linear space.
class ReferencePairAligner : public PairAligner {
public:
    explicit ReferencePairAligner(const PairJob& job)
        : job_(job), forced_(forced_kernel(job, "cpu-ref", reference_kernels)) {}

    Alignment align(const Sequence& query, const Sequence& target, PairProgress& progress) override {
        const std::uint64_t cells = static_cast<std::uint64_t>(query.residues.size()) * target.residues.size();
        const bool linear_space = forced_ ? forced_->family == "myersmiller" : cells > reference_pair_cell_limit;
        if (!linear_space) return align_reference(query.residues, target.residues, job_.scheme, job_.options);
        Alignment a = align_linear_space(query.residues, target.residues, job_.scheme, job_.options,
                                         [&progress](std::uint64_t done) { progress.cells_done(done); });
        // Without traceback linear space runs the reference's own two score
        // passes, only with a progress callback.
        a.kernel = job_kernel(job_, forced_ ? *forced_
                                            : ForcedKernel{job_.options.traceback ? "myersmiller" : "scalar",
                                                           KernelWidth::S64})
                       .format();
        return a;
    }

private:
    const PairJob& job_;
    std::optional<ForcedKernel> forced_;
};

class CpuReferenceBackend : public Backend {
public:
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = "cpu-ref";
        d.kind = "cpu";
        d.name = "CPU reference (scalar)";
        d.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        d.description =
            "scalar reference aligner (64-bit scores), threaded over pairs, " + std::to_string(d.threads) + " threads";
        return d;
    }

    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        forced_kernel(job, "cpu-ref", reference_kernels);  // a wrong --kernel fails before any work
        return align_pairs_on_workers(job, context, "cpu-ref",
                                      [&job] { return std::make_unique<ReferencePairAligner>(job); });
    }

    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override {
        forced_kernel(job, "cpu-ref", reference_kernels);
        align_pairs_on_workers(
            job, context, "cpu-ref", [&job] { return std::make_unique<ReferencePairAligner>(job); }, results);
    }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_reference_backend() { return std::make_unique<CpuReferenceBackend>(); }

}  // namespace alignscope
