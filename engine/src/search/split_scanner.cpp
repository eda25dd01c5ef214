// The split scanner: one database scan over several devices (split_plan.hpp).
// When every device holds the whole database, each loads it and the queries
// of a scan are dealt out in chunks, big ones first, to whichever device is
// free: a device writes its chunk's rows of scores straight into the
// caller's buffer, so nothing is merged and a slower device simply takes
// fewer chunks. Otherwise the database is dealt out (every n-th sequence of
// the length order, so each device gets the same mix of lengths), every
// device scans every query against its slice, and each device's thread puts
// its own scores into place as soon as it is done.
#include "split_plan.hpp"

#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/scan.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace alignscope {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::optional<split::Way> forced_way() {
    const char* text = std::getenv("ALIGNSCOPE_SPLIT_SCAN");
    switch (split::parse_forced(text)) {
        case split::Forced::Queries: return split::Way::Queries;
        case split::Forced::Sequences: return split::Way::Sequences;
        case split::Forced::Invalid:
            throw Error(std::string("ALIGNSCOPE_SPLIT_SCAN: expected 'queries' or 'sequences', got '") + text + "'");
        case split::Forced::None: break;
    }
    return std::nullopt;
}

class SplitScanner : public DatabaseScanner {
public:
    explicit SplitScanner(std::vector<std::unique_ptr<DatabaseScanner>> parts) : parts_(std::move(parts)) {
        if (parts_.empty()) throw Error("split scanner: no devices");
        for (const auto& part : parts_) ids_.push_back(part->info().id);
    }

    DeviceInfo info() const override {
        DeviceInfo info = parts_.front()->info();
        std::string ids, names;
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            const DeviceInfo p = parts_[k]->info();
            ids += (k ? "," : "") + (k ? p.id.substr(p.id.find(':') + 1) : p.id);
            names += (k ? " + " : "") + p.name;
        }
        info.id = ids;
        info.name = names;
        info.description = std::to_string(parts_.size()) + " devices, queries or database dealt out among them";
        return info;
    }

    ~SplitScanner() override { wait_for_loads(); }
    SplitScanner(const SplitScanner&) = delete;
    SplitScanner& operator=(const SplitScanner&) = delete;

    // Each device loads on a thread of its own and this returns at once: a
    // device takes its first chunk of a scan as soon as its own load is done
    // (a GPU whose context came up first starts first). A device's load
    // error is raised by the scan that waits for it.
    void load(const PreparedDatabase& database, const ScanSetup& setup, JobContext& context) override {
        wait_for_loads();
        database_ = nullptr;
        way_ = choose_way(database, setup);
        const std::size_t n = parts_.size();
        pieces_.assign(n, {});
        positions_.assign(n, {});
        if (way_ == split::Way::Sequences) {
            for (std::size_t p = 0; p < database.size(); ++p) positions_[p % n].push_back(p);
            for (std::size_t k = 0; k < n; ++k) pieces_[k] = database.subset(positions_[k]);
        }
        context.throw_if_cancelled();
        load_stop_ = std::make_unique<CancellationToken>();
        load_ready_.assign(n, 0);
        load_failures_.assign(n, nullptr);
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t k = 0; k < n; ++k) {
            const PreparedDatabase& part = way_ == split::Way::Queries ? database : pieces_[k];
            loads_.push_back(std::async(std::launch::async, [this, k, &part, setup, start] {
                JobContext part_context;
                part_context.cancel = load_stop_.get();
                parts_[k]->load(part, setup, part_context);
                load_ready_[k] = seconds_since(start);
            }));
        }
        database_ = &database;
    }

    void wait_loaded() override {
        for (std::size_t k = 0; k < loads_.size(); ++k) wait_for_load(k);
    }

    std::string setup_stats() const override {
        std::string text;
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            std::string part = parts_[k]->setup_stats();
            if (part.empty()) part = ids_[k];
            char ready[64];
            std::snprintf(ready, sizeof ready, " (ready %.3f s after the load began)",
                          k < load_ready_.size() ? load_ready_[k] : 0.0);
            text += (k ? "; " : "") + part + ready;
        }
        return text;
    }

    void scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
              JobContext& context) override {
        if (!database_) throw Error("split scanner: scan before load");
        const auto start = std::chrono::steady_clock::now();
        if (scores.size() != queries.size() * database_->size())
            throw Error("split scanner: score buffer of the wrong size");
        stats_ = {};
        busy_.assign(parts_.size(), {});
        if (way_ == split::Way::Queries) scan_by_queries(queries, scores, context);
        else
            scan_by_sequences(queries, scores, context);
        for (const PartStats& b : busy_) {
            stats_.cells += b.cells;
            stats_.kernel_seconds = std::max(stats_.kernel_seconds, b.kernel_seconds);
            stats_.recomputed += b.recomputed;
            for (const std::string& name : b.kernels) add_kernel(name);
        }
        stats_.seconds = seconds_since(start);
    }

    ScanStats last_stats() const override { return stats_; }

private:
    // What one device did in the last scan.
    struct PartStats {
        std::uint64_t cells = 0;
        double seconds = 0, kernel_seconds = 0;
        std::uint64_t recomputed = 0;
        std::vector<std::string> kernels;
    };

    split::Way choose_way(const PreparedDatabase& database, const ScanSetup& setup) const {
        if (const std::optional<split::Way> forced = forced_way()) return *forced;
        for (const auto& part : parts_) {
            const DeviceInfo info = part->info();
            const std::uint64_t memory = info.kind == "gpu" ? std::max<std::uint64_t>(info.memory_bytes, 1) : 0;
            if (!split::holds_whole(database.residue_count(), database.size(), memory,
                                    info.kind == "gpu" ? setup.gpu_memory_budget : 0))
                return split::Way::Sequences;
        }
        return split::Way::Queries;
    }

    void add_kernel(const std::string& list) {
        for (std::size_t a = 0, b; a < list.size(); a = b + 1) {
            b = std::min(list.find(',', a), list.size());
            const std::string name = list.substr(a, b - a);
            if (name.empty()) continue;
            bool seen = false;
            for (std::size_t c = 0, d; c < stats_.kernels.size(); c = d + 1) {
                d = std::min(stats_.kernels.find(',', c), stats_.kernels.size());
                seen |= stats_.kernels.compare(c, d - c, name) == 0;
            }
            if (!seen) stats_.kernels += (stats_.kernels.empty() ? "" : ",") + name;
        }
    }

    void note_part(std::size_t k, std::uint64_t cells, double seconds) {
        const ScanStats s = parts_[k]->last_stats();
        PartStats& b = busy_[k];
        b.cells += cells;
        b.seconds += seconds;
        b.kernel_seconds += s.kernel_seconds;
        b.recomputed += s.recomputed;
        b.kernels.push_back(s.kernels);
    }

    // Chunks of queries to whichever device is free; rows written in place.
    void scan_by_queries(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
                         JobContext& context) {
        const std::size_t q = queries.size();
        const std::size_t columns = database_->size();
        std::vector<std::uint64_t> cells(q);
        std::uint64_t total_cells = 0;
        for (std::size_t k = 0; k < q; ++k) total_cells += cells[k] = queries[k]->size() * database_->residue_count();
        const auto chunks = split::query_chunks(cells, parts_.size());
        std::atomic<std::size_t> next_chunk{0};
        Summer summer(context, parts_.size(), total_cells, q);
        run_all(context, [&](std::size_t k, JobContext& part_context) {
            wait_for_load(k);
            std::uint64_t cells_before = 0, items_before = 0;
            part_context.progress = [&, k](const Progress& p) {
                summer.set(k, cells_before + p.cells_done, items_before);
            };
            for (std::size_t c = next_chunk.fetch_add(1); c < chunks.size(); c = next_chunk.fetch_add(1)) {
                part_context.throw_if_cancelled();
                const auto [first, end] = chunks[c];
                std::uint64_t chunk_cells = 0;
                for (std::size_t i = first; i < end; ++i) chunk_cells += cells[i];
                const auto began = std::chrono::steady_clock::now();
                const std::int64_t began_ns = context.timeline ? steady_now_ns() : 0;
                parts_[k]->scan(queries.subspan(first, end - first),
                                scores.subspan(first * columns, (end - first) * columns), part_context);
                record_host_span(context.timeline, ids_[k], "scan chunk", began_ns, chunk_cells);
                note_part(k, chunk_cells, seconds_since(began));
                cells_before += chunk_cells;
                items_before += end - first;
                summer.set(k, cells_before, items_before);
            }
        });
    }

    // Every query against each device's slice; each device's thread puts its
    // scores into place.
    void scan_by_sequences(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
                           JobContext& context) {
        const std::size_t q = queries.size();
        std::uint64_t total_cells = 0;
        for (const EncodedSequence* query : queries) total_cells += query->size() * database_->residue_count();
        Summer summer(context, parts_.size(), total_cells, q);
        run_all(context, [&](std::size_t k, JobContext& part_context) {
            wait_for_load(k);
            part_context.progress = [&, k](const Progress& p) { summer.set(k, p.cells_done, 0); };
            const std::size_t size = pieces_[k].size();
            std::vector<std::int64_t> part_scores(q * size);
            const auto began = std::chrono::steady_clock::now();
            const std::int64_t began_ns = context.timeline ? steady_now_ns() : 0;
            parts_[k]->scan(queries, part_scores, part_context);
            record_host_span(context.timeline, ids_[k], "scan slice", began_ns, parts_[k]->last_stats().cells);
            note_part(k, parts_[k]->last_stats().cells, seconds_since(began));
            const std::vector<std::size_t>& places = positions_[k];
            for (std::size_t query = 0; query < q; ++query) {
                std::int64_t* row = scores.data() + query * database_->size();
                const std::int64_t* mine = part_scores.data() + query * size;
                for (std::size_t local = 0; local < size; ++local) row[places[local]] = mine[local];
            }
            summer.set(k, busy_[k].cells, q);
        });
    }

    // The sum of every device's progress, reported to the scan's context;
    // items (queries) are done when every device is done with them.
    class Summer {
    public:
        Summer(JobContext& context, std::size_t parts, std::uint64_t cells, std::size_t items)
            : context_(context), latest_(parts) {
            total_.cells_total = cells;
            total_.items_total = items;
        }
        void set(std::size_t k, std::uint64_t cells_done, std::uint64_t items_done) {
            if (!context_.progress) return;
            std::lock_guard lock(mutex_);
            latest_[k] = {cells_done, items_done};
            Progress sum = total_;
            for (const auto& [cells, items] : latest_) {
                sum.cells_done += cells;
                sum.items_done += items;
            }
            sum.cells_done = std::min(sum.cells_done, sum.cells_total);
            sum.items_done = std::min(sum.items_done, sum.items_total);
            context_.progress(sum);
        }

    private:
        JobContext& context_;
        std::mutex mutex_;
        Progress total_;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> latest_;
    };

    // Part k's load, done; its error raised here (and by every later scan).
    // Only part k's scan thread calls this for k.
    void wait_for_load(std::size_t k) {
        if (k < loads_.size() && loads_[k].valid()) {
            try {
                loads_[k].get();
            } catch (...) {
                load_failures_[k] = std::current_exception();
            }
        }
        if (k < load_failures_.size() && load_failures_[k]) std::rethrow_exception(load_failures_[k]);
    }

    // Every load under way finished (a new load, the scanner's end); their
    // errors are dropped.
    void wait_for_loads() {
        if (load_stop_) load_stop_->cancel();
        for (std::future<void>& f : loads_)
            if (f.valid()) f.wait();
        loads_.clear();
        load_failures_.clear();
    }

    // Runs body(k) for every part on its own thread; the first error wins and
    // the others are cancelled through a shared token.
    template <typename Body>
    void run_all(JobContext& context, Body body) {
        CancellationToken stop;
        std::exception_ptr failure;
        std::mutex failure_mutex;
        std::vector<std::thread> threads;
        std::atomic<bool> finished{false};
        // Forward the user's cancellation to the parts.
        std::thread watcher([&] {
            while (!finished.load()) {
                if (context.cancelled()) stop.cancel();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
        });
        for (std::size_t k = 0; k < parts_.size(); ++k) {
            threads.emplace_back([&, k] {
                JobContext part_context;
                part_context.cancel = &stop;
                part_context.timeline = context.timeline;
                try {
                    body(k, part_context);
                } catch (...) {
                    std::lock_guard lock(failure_mutex);
                    if (!failure) failure = std::current_exception();
                    stop.cancel();
                }
            });
        }
        for (auto& t : threads) t.join();
        finished.store(true);
        watcher.join();
        context.throw_if_cancelled();
        if (failure) std::rethrow_exception(failure);
    }

    std::vector<std::unique_ptr<DatabaseScanner>> parts_;
    std::vector<std::string> ids_;
    // The parts' loads under way (declared after the parts: ended first).
    std::unique_ptr<CancellationToken> load_stop_;
    std::vector<std::future<void>> loads_;
    std::vector<std::exception_ptr> load_failures_;
    std::vector<double> load_ready_;  // seconds from load() to each part's load done
    const PreparedDatabase* database_ = nullptr;
    split::Way way_ = split::Way::Queries;
    std::vector<PreparedDatabase> pieces_;
    std::vector<std::vector<std::size_t>> positions_;
    std::vector<PartStats> busy_;
    ScanStats stats_;
};

}  // namespace

std::unique_ptr<DatabaseScanner> make_split_scanner(std::vector<std::unique_ptr<DatabaseScanner>> parts) {
    return std::make_unique<SplitScanner>(std::move(parts));
}

}  // namespace alignscope
