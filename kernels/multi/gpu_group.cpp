// The multi-GPU backend: a small job, or one of short pairs, runs whole on one
// free GPU (two such jobs at once on two GPUs); a larger one of long pairs is
// cut into one share per GPU, run by one host thread per GPU through that
// GPU's own backend (streams, budget, kernels), with, for a large job, a
// shared queue of chunks so the faster GPUs absorb the tail (group_plan.hpp).
// Shares follow SM counts on GPUs of one model, else each GPU's measured
// throughput (cells per second of its busy time on the last job).
#include "gpu_group.hpp"
#include <alignscope/align/long_pair.hpp>
#include "../pairwise/result_vector.hpp"
#include "group_plan.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <future>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

namespace alignscope::kernels {

namespace {

// Cells of each pair, in job order (group_plan.hpp cuts the job by them).
std::vector<std::uint64_t> pair_cells(const PairJob& job) {
    const std::size_t count = job.pairs.size();
    std::vector<std::uint64_t> cells(count);
    for (std::size_t k = 0; k < count; ++k) {
        const auto [q, t] = job.pairs[k];
        if (!job.queries || !job.targets || q >= job.queries->size() || t >= job.targets->size())
            throw Error("pair job refers to a sequence it does not have (pair " + std::to_string(k) + ")");
        cells[k] = static_cast<std::uint64_t>((*job.queries)[q].residues.size()) * (*job.targets)[t].residues.size();
    }
    return cells;
}

std::uint64_t total_of(const std::vector<std::uint64_t>& cells) {
    return std::accumulate(cells.begin(), cells.end(), std::uint64_t{0});
}

// The rules, with the environment's ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS (tests
// and measurements) over them: jobs of at least that many cells are split,
// whatever their pairs' lengths (0 splits every job, a huge number none).
GroupSplitRules split_rules() {
    GroupSplitRules rules;
    if (const char* text = std::getenv("ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS"); text && *text) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (!end || *end != 0 || text[0] == '-')
            throw Error("ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS: expected a number of cells, got '" + std::string(text) +
                        "'");
        rules.split_cells = value;
        rules.split_cells_per_pair = 0;
    }
    return rules;
}

// Moves `from` into `to` at `first` on several threads (a million Alignments
// are hundreds of MB).
void move_into(std::vector<Alignment>& to, std::size_t first, std::vector<Alignment>& from, std::size_t pieces) {
    const std::size_t count = from.size();
    pieces = std::clamp<std::size_t>(pieces, 1, std::max<std::size_t>(1, count / 16384));
    std::vector<std::thread> threads;
    for (std::size_t p = 1; p < pieces; ++p)
        threads.emplace_back([&, p] {
            const std::size_t a = count * p / pieces, b = count * (p + 1) / pieces;
            std::move(from.begin() + static_cast<std::ptrdiff_t>(a), from.begin() + static_cast<std::ptrdiff_t>(b),
                      to.begin() + static_cast<std::ptrdiff_t>(first + a));
        });
    std::move(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(count / pieces),
              to.begin() + static_cast<std::ptrdiff_t>(first));
    for (auto& thread : threads) thread.join();
    std::vector<Alignment>().swap(from);
}

// One job over the group: a host thread per member runs its own share, then
// takes tail chunks; results, failures, progress and busy time per member.
// The results go into `out` (resized to the job's pairs; a buffer the
// caller keeps between jobs lends its storage, every element is overwritten).
class GroupRun {
public:
    GroupRun(const PairJob& job, JobContext& context, const std::vector<Backend*>& members,
             const std::vector<double>& throughput, std::vector<std::uint64_t> cells, const GroupCutRules& rules,
             std::vector<Alignment>& out)
        : job_(job),
          context_(context),
          members_(members),
          cells_(std::move(cells)),
          cut_(cut_group_job(cells_, throughput, rules)),
          produced_(members.size()),
          member_progress_(members.size()),
          failures_(members.size()),
          busy_seconds_(members.size(), 0.0),
          done_cells_(members.size(), 0),
          out_(out) {
        progress_.cells_total = std::accumulate(cells_.begin(), cells_.end(), std::uint64_t{0});
        progress_.items_total = job.pairs.size();
        // The result vector, where it is not the job's size already (a
        // million Alignments are hundreds of MB to construct and fault in), is
        // resized on a thread of its own while the GPUs run, its pages made
        // present by several threads; each member's results wait beside it
        // until all are done.
        const std::size_t count = job.pairs.size();
        if (out_.size() != count)
            building_ = std::async(std::launch::async, [this, count, threads = job.threads] {
                resize_present(out_, count, threads, kPopulatedResultBytes);
            });
    }

    void run_members() {
        std::vector<std::thread> threads;
        threads.reserve(members_.size());
        for (std::size_t d = 0; d < members_.size(); ++d) threads.emplace_back([this, d] { run_member(d); });
        for (auto& thread : threads) thread.join();
    }

    // A real failure beats the Cancelled it caused in the other threads.
    void rethrow_failure() {
        std::exception_ptr first_cancel;
        for (const auto& failure : failures_) {
            if (!failure) continue;
            try {
                std::rethrow_exception(failure);
            } catch (const Cancelled&) {
                if (!first_cancel) first_cancel = failure;
            } catch (...) {
                throw;
            }
        }
        if (first_cancel || context_.cancelled()) throw Cancelled();
    }

    // Each member's results moved into place, on a thread per member, each
    // spread over its share of the cores.
    void gather_results() {
        if (building_.valid()) building_.get();
        const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
        const std::size_t pieces = std::max<std::size_t>(1, cores / members_.size());
        std::vector<std::thread> threads;
        threads.reserve(members_.size());
        for (std::size_t d = 0; d < members_.size(); ++d)
            threads.emplace_back([this, d, pieces] {
                for (auto& [first, results] : produced_[d]) move_into(out_, first, results, pieces);
            });
        for (auto& thread : threads) thread.join();
    }

    // Cells per second of busy time, for the members that did work.
    void measured_throughput(std::vector<double>& throughput) const {
        for (std::size_t d = 0; d < members_.size(); ++d)
            if (busy_seconds_[d] > 0 && done_cells_[d] > 0)
                throughput[d] = static_cast<double>(done_cells_[d]) / busy_seconds_[d];
    }

private:
    // The sum of every member's progress, reported to the job's context.
    void report(std::size_t d, const Progress& finished, const Progress& p) {
        if (context_.cancelled()) stop_.cancel();
        std::lock_guard lock(progress_mutex_);
        member_progress_[d].cells_done = finished.cells_done + p.cells_done;
        member_progress_[d].items_done = finished.items_done + p.items_done;
        Progress sum = progress_;
        for (const Progress& m : member_progress_) {
            sum.cells_done += m.cells_done;
            sum.items_done += m.items_done;
        }
        if (context_.progress) context_.progress(sum);
    }

    void run_chunk(std::size_t d, const GroupChunk& chunk, JobContext& sub_context, Progress& finished) {
        if (chunk.first == chunk.end) return;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(job_.pairs.begin() +
                                                                       static_cast<std::ptrdiff_t>(chunk.first),
                                                                   job_.pairs.begin() +
                                                                       static_cast<std::ptrdiff_t>(chunk.end));
        const PairJob sub = job_.with_pairs(std::move(pairs));
        const auto start = std::chrono::steady_clock::now();
        auto results = members_[d]->align_pairs(sub, sub_context);
        busy_seconds_[d] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        produced_[d].emplace_back(chunk.first, std::move(results));
        std::uint64_t chunk_cells = 0;
        for (std::size_t k = chunk.first; k < chunk.end; ++k) chunk_cells += cells_[k];
        done_cells_[d] += chunk_cells;
        std::lock_guard lock(progress_mutex_);
        finished.cells_done += chunk_cells;
        finished.items_done += chunk.end - chunk.first;
        member_progress_[d].cells_done = finished.cells_done;
        member_progress_[d].items_done = finished.items_done;
    }

    void run_member(std::size_t d) {
        JobContext sub_context;
        sub_context.cancel = &stop_;
        sub_context.timeline = context_.timeline;
        Progress finished;  // chunks this member completed
        sub_context.progress = [this, d, &finished](const Progress& p) { report(d, finished, p); };
        try {
            run_chunk(d, cut_.own[d], sub_context, finished);
            while (!stop_.cancelled()) {
                const std::size_t k = next_tail_.fetch_add(1);
                if (k >= cut_.tail.size()) break;
                run_chunk(d, cut_.tail[k], sub_context, finished);
            }
        } catch (...) {
            failures_[d] = std::current_exception();
            stop_.cancel();
        }
    }

    const PairJob& job_;
    JobContext& context_;
    const std::vector<Backend*>& members_;
    const std::vector<std::uint64_t> cells_;  // per pair
    const GroupCut cut_;
    std::future<void> building_;
    std::vector<std::vector<std::pair<std::size_t, std::vector<Alignment>>>> produced_;
    std::atomic<std::size_t> next_tail_{0};
    CancellationToken stop_;
    std::mutex progress_mutex_;
    Progress progress_;
    std::vector<Progress> member_progress_;
    std::vector<std::exception_ptr> failures_;
    std::vector<double> busy_seconds_;
    std::vector<std::uint64_t> done_cells_;
    std::vector<Alignment>& out_;  // the caller's
};

class GpuGroup : public Backend {
public:
    explicit GpuGroup(std::vector<Backend*> members) : members_(std::move(members)), running_(members_.size(), 0) {
        same_model_ = true;
        for (Backend* member : members_) {
            const DeviceInfo info = member->info();
            same_model_ = same_model_ && info.name == members_.front()->info().name &&
                          info.sm_count == members_.front()->info().sm_count;
            // Until measured, SMs stand for throughput.
            sm_throughput_.push_back(std::max(1, info.sm_count) * 1e9);
        }
        throughput_ = sm_throughput_;
    }

    DeviceInfo info() const override;

    // The first member's context, streams and buffers. The others start when
    // a job first needs them (one split among them, or a second job at once):
    // a stream of small jobs, which the first member runs alone, then never
    // waits for them (two H100s started at once took 0.42 s, one 0.31 s, in
    // the pair pipeline's start-up beside the reading).
    void warm_up() override { members_.front()->warm_up(); }

    // One long pair on every GPU of the group: its columns split among them,
    // slice widths by SM count (equal on equal GPUs), boundary columns passed
    // from GPU to GPU through host memory (longpair::make_split_pass_runner).
    std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings& settings) override {
        if (members_.size() == 1) return members_.front()->make_long_runner(settings);
        std::vector<std::unique_ptr<longpair::PassRunner>> runners;
        longpair::SplitSettings split;
        for (Backend* member : members_) {
            auto runner = member->make_long_runner(settings);
            if (!runner) return nullptr;
            runners.push_back(std::move(runner));
            split.weights.push_back(std::max(1, member->info().sm_count));
        }
        split.slices_per_member = std::max(1, settings.split_slices);
        split.block_rows = std::max<std::int64_t>(0, settings.split_block_rows);
        return longpair::make_split_pass_runner(std::move(runners), std::move(split));
    }

    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        std::vector<Alignment> out;
        align_pairs_into(job, context, out);
        return out;
    }

    // A job on one member goes into the caller's buffer through that member's
    // own align_pairs_into; a split job's shares are moved into it.
    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override {
        if (job.pairs.empty()) {
            results.clear();
            return;
        }
        std::vector<std::uint64_t> cells = pair_cells(job);
        const std::uint64_t total = total_of(cells);
        const GroupSplitRules rules = split_rules();
        if (members_.size() == 1 || !split_job(total, job.pairs.size(), rules)) {
            align_on_one(job, context, results);
            return;
        }
        std::vector<double> throughput;
        {
            std::lock_guard lock(mutex_);
            throughput = same_model_ ? sm_throughput_ : throughput_;
        }
        GroupRun run(job, context, members_, throughput, std::move(cells), cut_rules_for(total, rules), results);
        run.run_members();
        run.rethrow_failure();
        run.gather_results();
        std::lock_guard lock(mutex_);
        run.measured_throughput(throughput_);
    }

private:
    // The whole job on the member running the fewest jobs (the first of them).
    void align_on_one(const PairJob& job, JobContext& context, std::vector<Alignment>& results) {
        std::size_t chosen = 0;
        {
            std::lock_guard lock(mutex_);
            for (std::size_t d = 1; d < members_.size(); ++d)
                if (running_[d] < running_[chosen]) chosen = d;
            ++running_[chosen];
        }
        struct Done {
            GpuGroup& group;
            std::size_t d;
            ~Done() {
                std::lock_guard lock(group.mutex_);
                --group.running_[d];
            }
        } done{*this, chosen};
        members_[chosen]->align_pairs_into(job, context, results);
    }

    std::vector<Backend*> members_;
    std::mutex mutex_;
    bool same_model_ = true;
    std::vector<int> running_;           // jobs each member runs now (whole jobs on one member)
    std::vector<double> sm_throughput_;  // by SM count
    std::vector<double> throughput_;     // cells per second, measured on the last job
};

DeviceInfo GpuGroup::info() const {
    DeviceInfo info;
    info.id = "gpu:";
    info.kind = "gpu";
    info.name = std::to_string(members_.size()) + " GPUs";
    std::string names;
    for (std::size_t k = 0; k < members_.size(); ++k) {
        const DeviceInfo m = members_[k]->info();
        if (k) {
            info.id += ',';
            names += " + ";
        }
        info.id += m.id.substr(4);
        names += m.name;
        info.sm_count += m.sm_count;
        info.memory_bytes += m.memory_bytes;
        info.compute_major = m.compute_major;
        info.compute_minor = m.compute_minor;
        info.driver_version = m.driver_version;
        info.runtime_version = m.runtime_version;
    }
    info.description = names + ", one host thread per GPU, shares by SM count or measured throughput";
    return info;
}

}  // namespace

std::unique_ptr<Backend> make_gpu_group(std::vector<Backend*> members) {
    if (members.empty()) throw Error("a GPU group needs at least one GPU");
    return std::make_unique<GpuGroup>(std::move(members));
}

}  // namespace alignscope::kernels
