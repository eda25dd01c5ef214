// `verify`: seeded random pairs over every mode, gap model, matrix and length
// class, run on a backend and on the CPU reference, and compared pair by pair.
// This file runs both sides in chunks; the generator, the checks and the
// randomness live in verify_generator.cpp, verify_checks.cpp, verify_random.cpp.
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/kernel_name.hpp>

#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace alignscope {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One configuration's pairs of a chunk, as a job for both sides.
struct VerifyJob {
    const VerifyConfig* config = nullptr;
    std::vector<std::size_t> members;  // indices into the chunk's pairs
    std::vector<Sequence> queries, targets;
    PairJob job;
    std::uint64_t cells = 0;
    std::vector<Alignment> tested, reference;
    std::string tested_failure;
    bool tested_refused = false;  // the job threw an Error (not a wrong result count)
    std::exception_ptr reference_error;
};

// Runs every reference job. A CPU reference gets whole jobs pulled by one
// worker per core, biggest first, each job on one thread: a job's few long
// pairs then no longer hold all cores idle behind them, which is what keeps a
// 100,000-pair check to minutes. Other references run job after job.
class ReferenceRunner {
public:
    ReferenceRunner(Backend& reference, std::vector<VerifyJob>& jobs, int threads, const CancellationToken* cancel,
                    bool concurrent)
        : reference_(reference), jobs_(jobs), cancel_(cancel) {
        order_.reserve(jobs.size());
        for (std::size_t k = 0; k < jobs.size(); ++k) order_.push_back(k);
        std::stable_sort(order_.begin(), order_.end(),
                         [&](std::size_t a, std::size_t b) { return jobs[a].cells > jobs[b].cells; });
        if (!concurrent) {
            sequential_threads_ = threads;
            return;
        }
        const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
        const auto workers = static_cast<std::size_t>(threads > 0 ? threads : static_cast<int>(hardware));
        for (std::size_t w = 0; w < std::min(workers, jobs.size()); ++w) workers_.emplace_back([this] { work(1); });
    }
    ReferenceRunner(const ReferenceRunner&) = delete;
    ReferenceRunner& operator=(const ReferenceRunner&) = delete;
    ~ReferenceRunner() {
        failed_.store(true);  // leaving early (an exception): let the workers finish at once
        for (auto& worker : workers_)
            if (worker.joinable()) worker.join();
    }

    // Waits for every job; a sequential runner does all its work here.
    void join() {
        if (sequential_threads_) work(*sequential_threads_);
        sequential_threads_.reset();
        for (auto& worker : workers_)
            if (worker.joinable()) worker.join();
        workers_.clear();
    }

private:
    void work(int threads) {
        JobContext context;
        context.cancel = cancel_;
        for (std::size_t next = next_.fetch_add(1); next < order_.size(); next = next_.fetch_add(1)) {
            VerifyJob& job = jobs_[order_[next]];
            if (failed_.load()) continue;  // an error ends the run; skip what is left
            PairJob reference_job = job.job;
            reference_job.threads = threads;
            reference_job.streams = 0;
            reference_job.kernel.clear();
            try {
                job.reference = reference_.align_pairs(reference_job, context);
            } catch (...) {
                job.reference_error = std::current_exception();
                failed_.store(true);
            }
        }
    }

    Backend& reference_;
    std::vector<VerifyJob>& jobs_;
    const CancellationToken* cancel_;
    std::vector<std::size_t> order_;
    std::vector<std::thread> workers_;
    std::optional<int> sequential_threads_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> failed_{false};
};

}  // namespace

namespace {

// A --kernel the device does not know is a usage error, said once before any
// work, not a device that fails every job: one pair of the first
// configuration the name may run, on the tested device. Rethrows the device's
// Error when it is about --kernel; anything else is left to the real run.
void refuse_unknown_kernel(Backend& tested, const std::vector<VerifyConfig>& configs, const VerifyOptions& options,
                           JobContext& context) {
    // A check that counts refusals apart sees an unknown kernel as a variant
    // that passed nothing; the probe would take a narrow kernel's refusal of
    // its one pair for a usage error.
    if (options.kernel.empty() || options.forced_kernel_may_refuse) return;
    const auto config = std::find_if(configs.begin(), configs.end(), [&](const VerifyConfig& c) {
        return !c.extreme && kernel_can_run(options.kernel, c);
    });
    if (config == configs.end()) return;
    const std::vector<Sequence> one{Sequence{"probe", "", "A", ""}};
    PairJob probe;
    probe.queries = &one;
    probe.targets = &one;
    probe.pairs = {{0, 0}};
    probe.scheme = config->scheme;
    probe.options = config->options;
    probe.kernel = options.kernel;
    probe.threads = 1;
    probe.gpu_memory_budget = options.gpu_memory_budget;
    JobContext probe_context;
    probe_context.cancel = context.cancel;
    try {
        (void)tested.align_pairs(probe, probe_context);
    } catch (const Error& e) {
        if (std::string_view(e.what()).find("--kernel") != std::string_view::npos) throw;
    }
}

}  // namespace

namespace {

// The chunk's pairs grouped into one job per configuration (the unit both
// sides run), with their cells counted into the summary.
std::vector<VerifyJob> group_into_jobs(const std::vector<VerifyPair>& pairs, const std::vector<VerifyConfig>& configs,
                                       const VerifyOptions& options, VerifySummary& summary) {
    std::vector<std::vector<std::size_t>> groups;  // pair indices, each group one configuration
    if (options.job_per_pair) {
        for (std::size_t k = 0; k < pairs.size(); ++k) groups.push_back({k});
    } else {
        std::vector<std::vector<std::size_t>> by_config(configs.size());
        for (std::size_t k = 0; k < pairs.size(); ++k) by_config[pairs[k].config].push_back(k);
        for (auto& members : by_config)
            if (!members.empty()) groups.push_back(std::move(members));
    }
    std::vector<VerifyJob> jobs;
    for (auto& members : groups) {
        VerifyJob& j = jobs.emplace_back();
        j.config = &configs[pairs[members.front()].config];
        j.members = std::move(members);
        j.queries.reserve(j.members.size());
        j.targets.reserve(j.members.size());
        for (std::size_t k : j.members) {
            j.job.pairs.emplace_back(static_cast<std::uint32_t>(j.queries.size()),
                                     static_cast<std::uint32_t>(j.targets.size()));
            j.queries.push_back(pairs[k].query);
            j.targets.push_back(pairs[k].target);
        }
    }
    for (auto& j : jobs) {  // pointers into `jobs` only once it has stopped growing
        j.job.queries = &j.queries;
        j.job.targets = &j.targets;
        j.job.scheme = j.config->scheme;
        j.job.options = j.config->options;
        j.job.threads = options.threads;
        j.cells = j.job.total_cells();
        summary.cells += j.cells;
    }
    summary.jobs += jobs.size();
    return jobs;
}

// Both sides run the chunk's jobs: the reference on its runner (side by side
// on a CPU) while the tested device takes them one after the other.
void run_both_sides(Backend& tested, Backend& reference, std::vector<VerifyJob>& jobs, const VerifyOptions& options,
                    bool concurrent_reference, JobContext& context, VerifySummary& summary) {
    JobContext tested_context;
    tested_context.cancel = context.cancel;
    tested_context.timeline = context.timeline;
    const auto reference_start = std::chrono::steady_clock::now();
    ReferenceRunner runner(reference, jobs, options.threads, context.cancel, concurrent_reference);
    for (auto& j : jobs) {
        if (context.cancelled()) break;
        PairJob job = j.job;
        job.streams = options.streams;
        job.kernel = options.kernel;
        job.gpu_memory_budget = options.gpu_memory_budget;
        const auto start = std::chrono::steady_clock::now();
        try {
            j.tested = tested.align_pairs(job, tested_context);
            if (j.tested.size() != j.members.size())
                j.tested_failure = "returned " + std::to_string(j.tested.size()) + " results for " +
                                   std::to_string(j.members.size()) + " pairs";
        } catch (const Cancelled&) {
            break;  // the reference side notices the same token
        } catch (const std::exception& e) {
            j.tested_failure = e.what();
            j.tested_refused = dynamic_cast<const Error*>(&e) != nullptr;
        }
        summary.tested_seconds += seconds_since(start);
    }
    runner.join();
    summary.reference_seconds += seconds_since(reference_start);
}

// A reference that failed ends the run: without it nothing can be judged.
void throw_reference_errors(const std::vector<VerifyJob>& jobs, const VerifySummary& summary) {
    for (const auto& j : jobs) {
        if (j.reference_error) {
            try {
                std::rethrow_exception(j.reference_error);
            } catch (const Cancelled&) {
                throw;
            } catch (const std::exception& e) {
                throw Error("verify: the reference device " + summary.reference_device + " failed on " +
                            j.config->describe() + ": " + e.what());
            }
        }
        if (j.reference.size() != j.members.size())
            throw Error("verify: the reference device " + summary.reference_device + " returned " +
                        std::to_string(j.reference.size()) + " results for " + std::to_string(j.members.size()) +
                        " pairs");
    }
}

// Judges the chunk's jobs: refused, failed as a whole, or pair by pair.
class ChunkJudge {
public:
    ChunkJudge(const VerifyOptions& options, const VerifyCallbacks& callbacks, VerifySummary& summary,
               std::set<std::string>& kernels)
        : options_(options), callbacks_(callbacks), summary_(summary), kernels_(kernels) {}

    void judge(std::vector<VerifyJob>& jobs, const std::vector<VerifyPair>& pairs) {
        for (auto& j : jobs) {
            if (refusal(j)) {
                // A device may refuse a scheme past its limits (or, forced to
                // a narrow kernel, a pair its lanes cannot hold) with a clear
                // error; it may never answer it wrongly.
                summary_.refused += j.members.size();
                if (callbacks_.refusal) callbacks_.refusal({j.config, j.members.size(), j.tested_failure});
            } else if (!j.tested_failure.empty()) {
                for (std::size_t k : j.members) count_failure(pairs[k], *j.config);
                if (callbacks_.job_failure) callbacks_.job_failure({j.config, j.members.size(), j.tested_failure});
            } else {
                for (std::size_t k = 0; k < j.members.size(); ++k) judge_pair(j, k, pairs[j.members[k]]);
            }
        }
    }

private:
    bool refusal(const VerifyJob& j) const {
        return j.tested_refused && (j.config->extreme || options_.forced_kernel_may_refuse) &&
               j.tested_failure.find("internal error") == std::string::npos;
    }

    void judge_pair(VerifyJob& j, std::size_t k, const VerifyPair& pair) {
        if (!j.tested[k].kernel.empty()) kernels_.insert(j.tested[k].kernel);
        auto problems = check_alignment(j.tested[k], j.reference[k], pair.query.residues, pair.target.residues,
                                        j.config->scheme, j.config->options);
        if (problems.empty()) {
            ++summary_.passed;
            return;
        }
        count_failure(pair, *j.config);
        if (!callbacks_.mismatch) return;
        VerifyMismatch mismatch;
        mismatch.pair = &pair;
        mismatch.config = j.config;
        mismatch.problems = std::move(problems);
        mismatch.tested = std::move(j.tested[k]);
        mismatch.reference = std::move(j.reference[k]);
        mismatch.tested_device = summary_.tested_device;
        mismatch.reference_device = summary_.reference_device;
        callbacks_.mismatch(mismatch);
    }

    void count_failure(const VerifyPair& pair, const VerifyConfig& config) {
        ++summary_.failed;
        ++summary_.failures_by_kind["mode " + std::string(to_string(config.options.mode))];
        ++summary_.failures_by_kind["gaps " + std::string(to_string(config.gap_model))];
        ++summary_.failures_by_kind["class " + std::string(to_string(pair.length_class))];
        ++summary_.failures_by_kind["matrix " + config.matrix];
        ++summary_.failures_by_kind[config.options.traceback ? "traceback yes" : "traceback no"];
    }

    const VerifyOptions& options_;
    const VerifyCallbacks& callbacks_;
    VerifySummary& summary_;
    std::set<std::string>& kernels_;
};

}  // namespace

VerifySummary verify_backend(Backend& tested, Backend& reference, const VerifyOptions& options,
                             const VerifyCallbacks& callbacks, JobContext& context) {
    if (options.pairs == 0) throw Error("verify: --pairs must be at least 1");
    if (options.threads < 0) throw Error("verify: --threads must be 0 (all cores) or positive");
    if (options.streams < 0) throw Error("verify: --streams must be 0 (device default) or positive");

    VerifySummary summary;
    summary.tested_device = tested.info().id;
    const DeviceInfo reference_info = reference.info();
    summary.reference_device = reference_info.id;
    // Whole reference jobs run side by side only on a CPU reference that is not
    // also the device under test (the CPU backends take concurrent jobs).
    const bool concurrent_reference = reference_info.kind == "cpu" && &reference != &tested;
    std::set<std::string> kernels;

    VerifyPairGenerator generator(options.seed, options.traceback_too, options.kernel);
    const auto& configs = generator.configs();
    refuse_unknown_kernel(tested, configs, options, context);
    const std::uint64_t chunk = std::max<std::uint64_t>(options.chunk_pairs, 1);
    ChunkJudge judge(options, callbacks, summary, kernels);

    std::uint64_t done = 0;
    while (done < options.pairs) {
        const std::uint64_t count = std::min(chunk, options.pairs - done);
        std::vector<VerifyPair> pairs;
        pairs.reserve(static_cast<std::size_t>(count));
        for (std::uint64_t k = 0; k < count; ++k) pairs.push_back(generator.next());

        std::vector<VerifyJob> jobs = group_into_jobs(pairs, configs, options, summary);
        run_both_sides(tested, reference, jobs, options, concurrent_reference, context, summary);
        context.throw_if_cancelled();
        throw_reference_errors(jobs, summary);
        judge.judge(jobs, pairs);
        done += count;
        if (callbacks.progress) callbacks.progress(done, options.pairs);
    }
    for (const auto& kernel : kernels) {
        if (!summary.tested_kernels.empty()) summary.tested_kernels += ", ";
        summary.tested_kernels += kernel;
    }
    return summary;
}

VerifySummary verify_device(DeviceRegistry& registry, const VerifyOptions& options, const VerifyCallbacks& callbacks,
                            JobContext& context) {
    Backend& tested = registry.select(options.device);
    Backend& reference = registry.select(options.reference_device);
    return verify_backend(tested, reference, options, callbacks, context);
}

}  // namespace alignscope
