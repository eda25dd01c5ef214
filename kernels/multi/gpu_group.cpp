// The multi-GPU backend: one host thread per GPU, each running its share of
// the pairs through that GPU's own backend (streams, budget, kernels), then a
// shared queue of small chunks so the faster GPUs absorb the tail. Each GPU's
// throughput (cells per second of its busy time) is remembered for the next
// job's static shares.
#include "multi/gpu_group.hpp"
#include <alignscope/align/long_pair.hpp>

#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <mutex>
#include <numeric>
#include <thread>

namespace alignscope::kernels {

std::vector<double> static_shares(const std::vector<double>& throughput, double static_fraction) {
    std::vector<double> shares(throughput.size(), 0.0);
    const double total = std::accumulate(throughput.begin(), throughput.end(), 0.0);
    for (std::size_t k = 0; k < throughput.size(); ++k)
        shares[k] = total > 0 ? static_fraction * throughput[k] / total
                              : static_fraction / static_cast<double>(throughput.size());
    return shares;
}

namespace {

// A sub-job over some of the pairs (only the pairs differ from the job).
PairJob sub_job(const PairJob& job, std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs) {
    PairJob sub;
    sub.queries = job.queries;
    sub.targets = job.targets;
    sub.pairs = std::move(pairs);
    sub.scheme = job.scheme;
    sub.options = job.options;
    sub.threads = job.threads;
    sub.streams = job.streams;
    sub.kernel = job.kernel;
    sub.gpu_memory_budget = job.gpu_memory_budget;
    return sub;
}

class GpuGroup : public Backend {
public:
    explicit GpuGroup(std::vector<Backend*> members) : members_(std::move(members)) {
        for (Backend* member : members_) {
            const DeviceInfo info = member->info();
            // Until measured, SMs stand for throughput.
            throughput_.push_back(std::max(1, info.sm_count) * 1e9);
        }
    }

    DeviceInfo info() const override {
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
        info.description = names + ", one host thread per GPU, shares by measured throughput";
        return info;
    }

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
        const std::size_t count = job.pairs.size();
        if (count == 0) return {};
        const std::size_t devices = members_.size();

        // Pairs in job order, cut by cells: static shares first, then the tail.
        std::vector<std::uint64_t> cells(count);
        std::uint64_t total = 0;
        for (std::size_t k = 0; k < count; ++k) {
            const auto [q, t] = job.pairs[k];
            if (!job.queries || !job.targets || q >= job.queries->size() || t >= job.targets->size())
                throw Error("pair job refers to a sequence it does not have (pair " + std::to_string(k) + ")");
            cells[k] =
                static_cast<std::uint64_t>((*job.queries)[q].residues.size()) * (*job.targets)[t].residues.size();
            total += cells[k];
        }
        std::vector<double> throughput;
        {
            std::lock_guard lock(mutex_);
            throughput = throughput_;
        }
        // Static shares by measured throughput; the rest in two chunks per GPU
        // for whichever GPU is free first. Each chunk is a job of its own on a
        // member (encode, plan, setup: tens of ms of host work), so the tail
        // is kept short: small chunks cost more than imbalance saves.
        const auto shares = static_shares(throughput, 0.9);
        struct Chunk {
            std::size_t first = 0, end = 0;
        };
        std::vector<Chunk> own(devices);
        std::vector<Chunk> tail;
        std::size_t position = 0;
        for (std::size_t d = 0; d < devices; ++d) {
            const auto target = static_cast<std::uint64_t>(shares[d] * static_cast<double>(total));
            std::uint64_t taken = 0;
            own[d].first = position;
            while (position < count && taken < target) taken += cells[position++];
            own[d].end = position;
        }
        std::uint64_t tail_cells = 0;
        for (std::size_t k = position; k < count; ++k) tail_cells += cells[k];
        const std::uint64_t tail_chunk =
            std::max<std::uint64_t>(1, tail_cells / (2 * std::max<std::size_t>(devices, 1)));
        while (position < count) {
            Chunk chunk{position, position};
            std::uint64_t taken = 0;
            while (chunk.end < count && taken < tail_chunk) taken += cells[chunk.end++];
            position = chunk.end;
            tail.push_back(chunk);
        }

        // The result vector (a million Alignments are hundreds of MB to
        // construct and fault in) is built on a thread of its own while the
        // GPUs run; each member's results wait beside it until both are done.
        std::vector<Alignment> out;
        std::future<void> building =
            std::async(std::launch::async, [&out, count] { out = std::vector<Alignment>(count); });
        std::vector<std::vector<std::pair<std::size_t, std::vector<Alignment>>>> produced(devices);

        std::atomic<std::size_t> next_tail{0};
        CancellationToken stop;
        std::mutex progress_mutex;
        Progress progress;
        progress.cells_total = total;
        progress.items_total = count;
        std::vector<Progress> member_progress(devices);
        std::vector<std::exception_ptr> failures(devices);
        std::vector<double> busy_seconds(devices, 0.0);
        std::vector<std::uint64_t> done_cells(devices, 0);

        auto run_member = [&](std::size_t d) {
            JobContext sub_context;
            sub_context.cancel = &stop;
            sub_context.timeline = context.timeline;
            Progress finished;  // chunks this member completed
            sub_context.progress = [&](const Progress& p) {
                if (context.cancelled()) stop.cancel();
                std::lock_guard lock(progress_mutex);
                member_progress[d].cells_done = finished.cells_done + p.cells_done;
                member_progress[d].items_done = finished.items_done + p.items_done;
                Progress sum = progress;
                for (const Progress& m : member_progress) {
                    sum.cells_done += m.cells_done;
                    sum.items_done += m.items_done;
                }
                if (context.progress) context.progress(sum);
            };
            auto run_chunk = [&](const Chunk& chunk) {
                if (chunk.first == chunk.end) return;
                std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(job.pairs.begin() +
                                                                               static_cast<std::ptrdiff_t>(chunk.first),
                                                                           job.pairs.begin() +
                                                                               static_cast<std::ptrdiff_t>(chunk.end));
                const PairJob sub = sub_job(job, std::move(pairs));
                const auto start = std::chrono::steady_clock::now();
                auto results = members_[d]->align_pairs(sub, sub_context);
                busy_seconds[d] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                produced[d].emplace_back(chunk.first, std::move(results));
                std::uint64_t chunk_cells = 0;
                for (std::size_t k = chunk.first; k < chunk.end; ++k) chunk_cells += cells[k];
                done_cells[d] += chunk_cells;
                std::lock_guard lock(progress_mutex);
                finished.cells_done += chunk_cells;
                finished.items_done += chunk.end - chunk.first;
                member_progress[d].cells_done = finished.cells_done;
                member_progress[d].items_done = finished.items_done;
            };
            try {
                run_chunk(own[d]);
                while (!stop.cancelled()) {
                    const std::size_t k = next_tail.fetch_add(1);
                    if (k >= tail.size()) break;
                    run_chunk(tail[k]);
                }
            } catch (...) {
                failures[d] = std::current_exception();
                stop.cancel();
            }
        };

        std::vector<std::thread> threads;
        threads.reserve(devices);
        for (std::size_t d = 0; d < devices; ++d) threads.emplace_back(run_member, d);
        for (auto& thread : threads) thread.join();

        // A real failure beats the Cancelled it caused in the other threads.
        std::exception_ptr first_cancel;
        for (const auto& failure : failures) {
            if (!failure) continue;
            try {
                std::rethrow_exception(failure);
            } catch (const Cancelled&) {
                if (!first_cancel) first_cancel = failure;
            } catch (...) {
                throw;
            }
        }
        if (first_cancel || context.cancelled()) throw Cancelled();

        building.get();
        threads.clear();
        for (std::size_t d = 0; d < devices; ++d)
            threads.emplace_back([&, d] {
                for (auto& [first, results] : produced[d])
                    std::move(results.begin(), results.end(), out.begin() + static_cast<std::ptrdiff_t>(first));
            });
        for (auto& thread : threads) thread.join();

        std::lock_guard lock(mutex_);
        for (std::size_t d = 0; d < devices; ++d)
            if (busy_seconds[d] > 0 && done_cells[d] > 0)
                throughput_[d] = static_cast<double>(done_cells[d]) / busy_seconds[d];
        return out;
    }

private:
    std::vector<Backend*> members_;
    std::mutex mutex_;
    std::vector<double> throughput_;  // cells per second, measured on the last job
};

}  // namespace

std::unique_ptr<Backend> make_gpu_group(std::vector<Backend*> members) {
    if (members.empty()) throw Error("a GPU group needs at least one GPU");
    return std::make_unique<GpuGroup>(std::move(members));
}

}  // namespace alignscope::kernels
