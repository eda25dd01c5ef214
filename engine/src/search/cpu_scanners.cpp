// The CPU database scanners: "cpu" runs parasail's SIMD score-only kernels
// (the CPU comparison point for the GPU), "cpu-ref" the scalar reference
// recurrence (score_forward). Both thread over the database: workers take
// work items (one query, a run of database sequences, longest first) from a
// shared counter while the calling thread reports progress and watches for
// cancellation.
//
// parasail family choice (see engine/src/device/parasail_backend.cpp for the
// measurements behind it): striped for local alignment with affine gaps, scan
// for linear gaps (parasail 2.6's striped kernels lose score when open ==
// extend) and for global and semi-global. Lanes start at 8 bits for local
// alignment with affine gaps (16 otherwise) and widen to 16 and 32 when
// parasail reports saturation. Linear gaps never start at 8 bits: parasail
// 2.6's 8-bit sw_scan overestimates some scores of long queries with open ==
// extend (tests/engine/test_search_topk.cpp, linearGapsMatchTheReference).
#include "../device/parasail_support.hpp"
#include "parallel_tasks.hpp"
#include "present_pages.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/lane_bounds.hpp>
#include <alignscope/search/scan.hpp>

#include <parasail.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

namespace alignscope {
namespace {

using parasail_support::MatrixPtr;
using parasail_support::ProfilePtr;
using parasail_support::ResultPtr;
// A work item's size: big enough that timeline events stay few, small enough
// that a cancel is seen within a fraction of a second.
constexpr std::uint64_t item_cells = 64ull << 20;

std::int64_t now_ns() { return steady_now_ns(); }

int worker_count(int threads) {
    if (threads > 0) return threads;
    return std::max(1u, std::thread::hardware_concurrency());
}

// Splits (query, database run) work over worker threads; see the file comment.
class ScanPool {
public:
    struct Item {
        std::size_t query = 0;
        std::size_t first = 0, last = 0;  // database positions [first, last)
        std::uint64_t cells = 0;
    };

    // Items for every query over the database, longest sequences first so the
    // tail of the job is made of short items.
    static std::vector<Item> plan(std::span<const EncodedSequence* const> queries, const PreparedDatabase& db) {
        std::vector<Item> items;
        for (std::size_t q = 0; q < queries.size(); ++q) {
            const std::uint64_t m = std::max<std::uint64_t>(1, queries[q]->size());
            std::size_t last = db.size();
            while (last > 0) {
                std::size_t first = last;
                std::uint64_t cells = 0;
                while (first > 0 && (cells == 0 || cells + m * db.length(first - 1) <= item_cells)) {
                    --first;
                    cells += m * db.length(first);
                }
                items.push_back({q, first, last, cells});
                last = first;
            }
        }
        return items;
    }

    // Runs work(item, worker) for every item on `threads` workers.
    template <typename Work>
    static void run(const std::vector<Item>& items, int threads, JobContext& context, std::size_t query_count,
                    const std::string& event_name, Work work) {
        const int workers =
            std::min<int>(worker_count(threads), static_cast<int>(std::max<std::size_t>(1, items.size())));
        std::uint64_t total = 0;
        for (const Item& it : items) total += it.cells;
        std::atomic<std::size_t> next{0};
        std::atomic<std::uint64_t> cells_done{0};
        std::atomic<bool> stop{false};
        std::vector<std::size_t> items_left(query_count, 0);
        for (const Item& it : items) ++items_left[it.query];
        std::atomic<std::size_t> queries_done{0};
        std::vector<std::atomic<std::size_t>> left(query_count);
        for (std::size_t q = 0; q < query_count; ++q) left[q].store(items_left[q]);
        std::exception_ptr failure;
        std::mutex mutex;
        std::condition_variable done_cv;
        int running = workers;

        auto body = [&](int worker) {
            try {
                while (!stop.load(std::memory_order_relaxed)) {
                    const std::size_t k = next.fetch_add(1);
                    if (k >= items.size()) break;
                    const Item& it = items[k];
                    const std::int64_t t0 = now_ns();
                    work(it, worker);
                    if (context.timeline) {
                        TimelineEvent e;
                        e.name = event_name;
                        e.category = "cpu";
                        e.device = "cpu";
                        e.lane = worker;
                        e.start_ns = t0;
                        e.end_ns = now_ns();
                        e.cells = it.cells;
                        context.timeline->record(std::move(e));
                    }
                    cells_done.fetch_add(it.cells, std::memory_order_relaxed);
                    if (left[it.query].fetch_sub(1) == 1) queries_done.fetch_add(1);
                }
            } catch (...) {
                std::lock_guard lock(mutex);
                if (!failure) failure = std::current_exception();
                stop.store(true);
            }
            std::lock_guard lock(mutex);
            if (--running == 0) done_cv.notify_all();
        };
        std::vector<std::thread> pool;
        pool.reserve(static_cast<std::size_t>(workers));
        for (int w = 0; w < workers; ++w) pool.emplace_back(body, w);
        {
            std::unique_lock lock(mutex);
            while (running > 0) {
                done_cv.wait_for(lock, std::chrono::milliseconds(50));
                if (context.cancelled()) stop.store(true);
                if (context.progress) {
                    Progress p;
                    p.cells_done = cells_done.load();
                    p.cells_total = total;
                    p.items_done = queries_done.load();
                    p.items_total = query_count;
                    lock.unlock();
                    context.progress(p);
                    lock.lock();
                }
            }
        }
        for (auto& t : pool) t.join();
        if (failure) std::rethrow_exception(failure);
        context.throw_if_cancelled();
    }
};

std::uint64_t scan_cells(std::span<const EncodedSequence* const> queries, const PreparedDatabase& db) {
    std::uint64_t cells = 0;
    for (const EncodedSequence* q : queries) cells += q->size() * db.residue_count();
    return cells;
}

// The name of a scanner kernel of `family` for the setup's mode and gap model.
std::string scan_kernel(const ScanSetup& setup, const char* family, KernelWidth width) {
    return KernelName{setup.options.mode, setup.scheme.linear(), family, 0, width}.format();
}

DeviceInfo cpu_info(const std::string& id, const std::string& name, const std::string& description) {
    DeviceInfo info;
    info.id = id;
    info.kind = "cpu";
    info.name = name;
    info.description = description;
    info.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return info;
}

// ---------------------------------------------------------------- cpu-ref

class ReferenceScanner : public DatabaseScanner {
public:
    DeviceInfo info() const override {
        return cpu_info("cpu-ref", "CPU reference (scalar)",
                        "scalar Gotoh recurrence, threaded over database sequences");
    }
    void load(const PreparedDatabase& database, const ScanSetup& setup, JobContext&) override {
        database_ = &database;
        setup_ = setup;
        codes_ = encode_database(database, setup.scheme.matrix);
    }
    void scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
              JobContext& context) override {
        if (!database_) throw Error("cpu-ref scanner: scan before load");
        const auto start = std::chrono::steady_clock::now();
        const PreparedDatabase& db = *database_;
        if (scores.size() != queries.size() * db.size()) throw Error("cpu-ref scanner: score buffer of the wrong size");
        for (const EncodedSequence* q : queries)
            if (q->empty()) throw Error("cpu-ref scanner: empty query");
        const auto items = ScanPool::plan(queries, db);
        const std::string name = scan_kernel(setup_, "reference", KernelWidth::S64);
        ScanPool::run(items, setup_.threads, context, queries.size(), name, [&](const ScanPool::Item& it, int) {
            const EncodedSequence& q = *queries[it.query];
            for (std::size_t p = it.first; p < it.last; ++p) {
                const ScoreAndEnd r =
                    score_forward(q.data(), static_cast<std::int64_t>(q.size()), codes_.data() + db.offsets[p],
                                  db.length(p), setup_.scheme, setup_.options);
                scores[it.query * db.size() + p] = r.score;
            }
        });
        stats_ = {};
        stats_.cells = scan_cells(queries, db);
        stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        stats_.kernel_seconds = stats_.seconds;
        stats_.kernels = name;
    }
    ScanStats last_stats() const override { return stats_; }

private:
    const PreparedDatabase* database_ = nullptr;
    ScanSetup setup_;
    std::vector<std::uint8_t> codes_;
    ScanStats stats_;
};

// ---------------------------------------------------------------- cpu (parasail)

using ProfileCreator = parasail_profile_t* (*)(const char*, int, const parasail_matrix_t*);
using ProfileFunction = parasail_result_t* (*)(const parasail_profile_t*, const char*, int, int, int);

constexpr ProfileCreator profile_create[3] = {parasail_profile_create_8, parasail_profile_create_16,
                                              parasail_profile_create_32};
constexpr ProfileFunction sw_striped[3] = {parasail_sw_striped_profile_8, parasail_sw_striped_profile_16,
                                           parasail_sw_striped_profile_32};
constexpr ProfileFunction sw_scan[3] = {parasail_sw_scan_profile_8, parasail_sw_scan_profile_16,
                                        parasail_sw_scan_profile_32};
constexpr ProfileFunction nw_scan[3] = {parasail_nw_scan_profile_8, parasail_nw_scan_profile_16,
                                        parasail_nw_scan_profile_32};
// Semi-global: the free beginnings choose the function (our query_begin is
// parasail's db, target_begin its qb); the free ends are read off the last
// row and column that the rowcol variants return.
constexpr ProfileFunction rowcol_scan[4][3] = {
    {parasail_nw_rowcol_scan_profile_8, parasail_nw_rowcol_scan_profile_16, parasail_nw_rowcol_scan_profile_32},
    {parasail_sg_db_rowcol_scan_profile_8, parasail_sg_db_rowcol_scan_profile_16,
     parasail_sg_db_rowcol_scan_profile_32},
    {parasail_sg_qb_rowcol_scan_profile_8, parasail_sg_qb_rowcol_scan_profile_16,
     parasail_sg_qb_rowcol_scan_profile_32},
    {parasail_sg_qb_db_rowcol_scan_profile_8, parasail_sg_qb_db_rowcol_scan_profile_16,
     parasail_sg_qb_db_rowcol_scan_profile_32},
};
constexpr int width_bits[3] = {8, 16, 32};
constexpr KernelWidth lane_widths[3] = {KernelWidth::S8, KernelWidth::S16, KernelWidth::S32};

class ParasailScanner : public DatabaseScanner {
public:
    DeviceInfo info() const override {
        return cpu_info(
            "cpu", "CPU SIMD (parasail " + parasail_support::simd_level() + ")",
            "parasail striped/scan score-only kernels, 8/16/32-bit lanes, threaded over database sequences");
    }

    void load(const PreparedDatabase& database, const ScanSetup& setup, JobContext&) override {
        const SubstitutionMatrix& sm = setup.scheme.matrix;
        if (static_cast<std::size_t>(sm.size()) > parasail_support::letters.size())
            throw Error("cpu scanner: matrix " + sm.name() + " has more letters than parasail handles");
        database_ = &database;
        setup_ = setup;
        codes_ = encode_database(database, sm);
        // parasail's letters of the codes, in pieces on several cores (the load
        // is on the search's critical path).
        letters_.reserve(codes_.size());
        search_memory::make_present(letters_.data(), codes_.size());
        letters_.resize(codes_.size());
        constexpr std::size_t piece = 4 << 20;
        search_tasks::run_tasks((codes_.size() + piece - 1) / piece, [&](std::size_t p) {
            for (std::size_t k = p * piece; k < std::min(codes_.size(), (p + 1) * piece); ++k)
                letters_[k] = parasail_support::letters[codes_[k]];
        });
        matrix_ = parasail_support::make_matrix(sm);
        local_ = setup.options.mode == AlignmentMode::Local;
        striped_ = local_ && !setup.scheme.linear();
    }

    void scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
              JobContext& context) override {
        if (!database_) throw Error("cpu scanner: scan before load");
        const auto start = std::chrono::steady_clock::now();
        const PreparedDatabase& db = *database_;
        if (scores.size() != queries.size() * db.size()) throw Error("cpu scanner: score buffer of the wrong size");

        // One profile per query and lane width, shared read-only by the workers;
        // parasail keeps a pointer to the query letters, which live here.
        struct QueryProfiles {
            std::string letters;
            ProfilePtr width[3];
            std::once_flag made[3];
        };
        std::vector<std::unique_ptr<QueryProfiles>> profiles;
        for (const EncodedSequence* q : queries) {
            if (q->empty()) throw Error("cpu scanner: empty query");
            auto p = std::make_unique<QueryProfiles>();
            p->letters.resize(q->size());
            for (std::size_t k = 0; k < q->size(); ++k) p->letters[k] = parasail_support::letters[(*q)[k]];
            profiles.push_back(std::move(p));
        }
        auto profile = [&](std::size_t q, int w) -> const parasail_profile_t* {
            QueryProfiles& qp = *profiles[q];
            std::call_once(qp.made[w], [&] {
                qp.width[w].reset(
                    profile_create[w](qp.letters.data(), static_cast<int>(qp.letters.size()), matrix_.get()));
            });
            if (!qp.width[w]) throw Error("parasail could not build a query profile");
            return qp.width[w].get();
        };
        std::atomic<unsigned> widths_used{0};
        const ProfileFunction* family = striped_ ? sw_striped : local_ ? sw_scan : nw_scan;
        const FreeEndGaps ends = setup_.options.free_ends;
        const bool semiglobal = setup_.options.mode == AlignmentMode::SemiGlobal;
        const int beginnings = (ends.query_begin ? 1 : 0) + (ends.target_begin ? 2 : 0);
        // Lanes start where the scheme's own scores and penalties fit them
        // (lane_bounds.hpp). Striped local passes saturate rather than wrap
        // and parasail flags it; scan passes add gap runs without saturating,
        // so every value of the pair must fit their lanes (see
        // parasail_backend.cpp, pass_fits). Scores beyond 32 bits fit none:
        // those pairs take the scalar recurrence in 64 bits.
        const SchemeBounds bounds = SchemeBounds::of(setup_.scheme);
        int first_width = local_ && !setup_.scheme.linear() ? 0 : 1;
        while (first_width < 3 && !lane_takes_parameters(bounds, width_bits[first_width])) ++first_width;
        auto lanes_hold = [&](int w, std::int64_t m, std::int64_t n) {
            if (bounds.highest_score(m, n) >= (std::int64_t{1} << 31) / 4 * 3) return false;
            return striped_ || lane_holds_values(bounds, m, n, width_bits[w]);
        };
        std::atomic<bool> used_reference{false};
        const int open = setup_.scheme.gap_open, extend = setup_.scheme.gap_extend;
        const char* family_name = striped_ ? "striped" : "scan";
        // The workers' timeline label: the family's name without a width (a
        // block of pairs may run in several).
        std::string name = scan_kernel(setup_, family_name, KernelWidth::S8);
        name.erase(name.rfind('_'));

        const auto items = ScanPool::plan(queries, db);
        ScanPool::run(items, setup_.threads, context, queries.size(), name, [&](const ScanPool::Item& it, int) {
            for (std::size_t p = it.first; p < it.last; ++p) {
                const char* target = letters_.data() + db.offsets[p];
                const int n = static_cast<int>(db.length(p));
                const auto m64 = static_cast<std::int64_t>(queries[it.query]->size());
                bool done = false;
                for (int w = first_width; w < 3 && !done; ++w) {
                    if (!lanes_hold(w, m64, n)) continue;
                    const parasail_profile_t* prof = profile(it.query, w);
                    // parasail's profile functions take s1 = query, s2 = target:
                    // its qb/qe are our target_begin/target_end, db/de our
                    // query_begin/query_end (see reference_aligner.hpp).
                    ResultPtr r(semiglobal ? rowcol_scan[beginnings][w](prof, target, n, open, extend)
                                           : family[w](prof, target, n, open, extend));
                    if (!r) throw Error("parasail failed (out of memory?)");
                    if (parasail_result_is_saturated(r.get())) continue;
                    int score = r->score;
                    if (semiglobal) {
                        // Best allowed end: (m, n) always; the last row when the
                        // query's end is free, the last column when the target's is.
                        const int* row = parasail_result_get_score_row(r.get());
                        const int* col = parasail_result_get_score_col(r.get());
                        const int m = static_cast<int>(queries[it.query]->size());
                        score = row[n - 1];
                        if (ends.query_end)
                            for (int j = 0; j < n; ++j) score = std::max(score, row[j]);
                        if (ends.target_end)
                            for (int i = 0; i < m; ++i) score = std::max(score, col[i]);
                    }
                    scores[it.query * db.size() + p] = score;
                    widths_used.fetch_or(1u << w, std::memory_order_relaxed);
                    done = true;
                }
                if (!done) {
                    // No lane width holds this pair: the scalar recurrence in
                    // 64-bit arithmetic.
                    const EncodedSequence& q = *queries[it.query];
                    const ScoreAndEnd r =
                        score_forward(q.data(), m64, codes_.data() + db.offsets[p], n, setup_.scheme, setup_.options);
                    scores[it.query * db.size() + p] = r.score;
                    used_reference.store(true, std::memory_order_relaxed);
                }
            }
        });
        stats_ = {};
        stats_.cells = scan_cells(queries, db);
        stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        stats_.kernel_seconds = stats_.seconds;
        for (int w = 0; w < 3; ++w)
            if (widths_used.load() & (1u << w))
                stats_.kernels +=
                    (stats_.kernels.empty() ? "" : ",") + scan_kernel(setup_, family_name, lane_widths[w]);
        if (used_reference.load())
            stats_.kernels += (stats_.kernels.empty() ? "" : ",") + scan_kernel(setup_, "reference", KernelWidth::S64);
    }

    ScanStats last_stats() const override { return stats_; }

private:
    const PreparedDatabase* database_ = nullptr;
    ScanSetup setup_;
    std::vector<std::uint8_t> codes_;
    std::string letters_;
    MatrixPtr matrix_;
    bool local_ = true, striped_ = true;
    ScanStats stats_;
};

}  // namespace

std::unique_ptr<ScannerRegistry> make_cpu_scanner_registry() {
    auto registry = std::make_unique<ScannerRegistry>();
    registry->add(ReferenceScanner().info(), [] { return std::make_unique<ReferenceScanner>(); });
    registry->add(ParasailScanner().info(), [] { return std::make_unique<ParasailScanner>(); });
    return registry;
}

}  // namespace alignscope
