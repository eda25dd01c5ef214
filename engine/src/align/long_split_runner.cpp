// The split PassRunner (see long_pair.hpp): one long-pair pass over several
// devices. Stage 1 is cut into column slices (widths by the members' weights)
// and row blocks; slice s takes block b's boundary column from slice s - 1
// (H and E of its last column, the state a column passes to the next in an
// affine DP), so every cell is the cell of the unsplit pass. Where the
// members link (PassRunner::link_to: GPU to GPU), the column streams through
// the link while both slices run, and slice s starts the block as soon as
// slice s - 1 has started it; else slice s - 1 hands the finished column over
// in host memory. One host thread per member takes the ready block of its
// slices with the smallest block index; the calling thread assembles
// finished blocks (special rows, best cell, last column, overview), reports
// them (on_rows_done, progress), and watches for cancellation.
//
// The slices' special rows (and the last row) are written straight into
// full-width rows in host memory, each slice its own columns (slice s > 0
// leaves column 0 of its slice, the boundary, to slice s - 1), so stage 2's
// goal searches get them as explicit crossing rows on whichever member runs
// them. Device-agnostic: tested in CI over CPU pass runners, run over CUDA
// runners by kernels/multi/gpu_group.cpp.
#include <alignscope/align/long_split_runner.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;

Score clamp(I64 v) { return static_cast<Score>(std::max<I64>(v, kNegInf)); }

BestCell shifted(BestCell c, I64 di, I64 dj) {
    if (c.score > kNegInf) {
        c.i += di;
        c.j += dj;
    }
    return c;
}
void merge(BestCell& into, const BestCell& c) {
    if (better_cell(c, into)) into = c;
}

// The boundary column one slice hands to the next for one row block.
struct Column {
    std::vector<Score> h, e, f;
};
// A linked (block, slice)'s links: in from the slice before, out to the next.
struct Links {
    std::shared_ptr<BoundaryLink> left, right;
};

// What a (row block, slice) sub-pass leaves for the calling thread.
struct SliceResult {
    BestCell best;                             // pass coordinates
    std::vector<Score> overview;               // rows x C
    std::vector<std::int64_t> overview_edges;  // 1-based, relative to the block
    std::uint64_t cells = 0;
    bool reported = false;  // the member's last on_rows_done (last block only)
    RowsDone report;
};

// Errors of the members' threads: the first real one wins, named by device.
class Failures {
public:
    void add(std::exception_ptr e, const std::string& device) {
        std::lock_guard lock(mutex_);
        list_.emplace_back(std::move(e), device);
    }
    bool any() const {
        std::lock_guard lock(mutex_);
        return !list_.empty();
    }
    // Rethrows the first failure that is not a cancellation; else Cancelled
    // when there was one; else nothing.
    void rethrow() const {
        std::exception_ptr cancel;
        for (const auto& [e, device] : list_) {
            try {
                std::rethrow_exception(e);
            } catch (const Cancelled&) {
                cancel = e;
            } catch (const std::exception& x) {
                const std::string what = x.what();
                if (what.find(device) != std::string::npos) std::rethrow_exception(e);
                throw Error(device + ": " + what);
            } catch (...) {
                throw Error(device + ": an unknown error");
            }
        }
        if (cancel) std::rethrow_exception(cancel);
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::pair<std::exception_ptr, std::string>> list_;
};

class SplitRunner final : public PassRunner {
public:
    SplitRunner(std::vector<std::unique_ptr<PassRunner>> members, SplitSettings settings)
        : members_(std::move(members)), settings_(std::move(settings)) {
        if (members_.empty()) throw Error("a split long-pair runner needs at least one member");
        for (const auto& m : members_)
            if (!m) throw Error("a split long-pair runner was given a null member");
        if (!settings_.weights.empty() && settings_.weights.size() != members_.size())
            throw Error("a split long-pair runner has " + std::to_string(members_.size()) + " members but " +
                        std::to_string(settings_.weights.size()) + " weights");
        if (settings_.weights.empty()) settings_.weights.assign(members_.size(), 1.0);
        for (double w : settings_.weights)
            if (!(w > 0) || !std::isfinite(w)) throw Error("the weights of a split long-pair runner must be positive");
        if (settings_.slices_per_member < 1)
            throw Error("a split long-pair runner needs at least one slice per member");
        if (settings_.block_rows < 0) throw Error("the row blocks of a split long-pair runner cannot be negative");
        goal_member_ = static_cast<std::size_t>(std::max_element(settings_.weights.begin(), settings_.weights.end()) -
                                                settings_.weights.begin());
    }

    void prepare(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                 const ScoringScheme& scheme) override {
        m_ = m;
        n_ = n;
        scheme_ = scheme;
        saved_rows_.clear();
        saved_h_.clear();
        saved_f_.clear();
        for (auto& member : members_) {
            try {
                member->prepare(query, m, target, n, scheme);
            } catch (const Cancelled&) {
                throw;
            } catch (...) {
                Failures f;
                f.add(std::current_exception(), member->device());
                f.rethrow();
            }
        }
    }

    void run(std::vector<PassTask>& tasks, const JobContext& context, const PassProgress& progress) override {
        if (tasks.size() == 1 && !tasks[0].goal_search) {
            split_pass(tasks[0], context, progress);
        } else if (tasks.size() == 1) {
            run_goal_search(tasks[0], context, progress);
        } else if (!tasks.empty()) {
            deal(tasks, context, progress);
        }
    }

    const std::vector<std::int64_t>& saved_rows() const override { return saved_rows_; }

    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        if (k >= saved_h_.size()) throw Error("internal error: reading an unknown special row");
        h = saved_h_[k];
        f = saved_f_[k];
    }

    // Special rows live in host memory here, whatever the members keep.
    std::uint64_t special_row_bytes(std::int64_t n) const override { return static_cast<std::uint64_t>(n + 1) * 8; }

    // Stage 2's bands run on one member: the strictest member's limit.
    std::int64_t max_band_rows() const override {
        std::int64_t cap = 0;
        for (const auto& m : members_) {
            const std::int64_t c = m->max_band_rows();
            if (c > 0) cap = cap > 0 ? std::min(cap, c) : c;
        }
        return cap;
    }
    std::int64_t busy_rows() const override {
        std::int64_t rows = 0;
        for (const auto& m : members_) rows = std::max(rows, m->busy_rows());
        return rows;
    }
    std::int64_t special_row_granularity() const override { return granularity(); }

    // Every member runs parts of the pair: the first that cannot hold it says why.
    std::string cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) const override {
        for (const auto& member : members_)
            if (std::string why = member->cannot_hold(m, n, scheme); !why.empty()) return member->device() + ": " + why;
        return {};
    }

    std::string device() const override {
        std::string id;
        for (std::size_t k = 0; k < members_.size(); ++k) id += (k ? "+" : "") + members_[k]->device();
        return id;
    }
    std::string strategy() const override { return members_.front()->strategy(); }
    // The kernel that computed most of the last split pass (else the first
    // member's): one KernelName, as a single device reports; that the pass
    // was split shows in the device ("gpu:0+gpu:1") and in split_levels.
    std::string kernel() const override {
        if (kernel_cells_.empty()) return members_.front()->kernel();
        auto top = kernel_cells_.begin();
        for (auto x = kernel_cells_.begin(); x != kernel_cells_.end(); ++x)
            if (x->second > top->second) top = x;
        return top->first;
    }

private:
    // Every member links to the next (round-robin: the last to the first,
    // which takes the next round of slices): asked once with a small link.
    bool can_link() {
        if (!settings_.device_links) return false;
        for (std::size_t g = 0; g < members_.size(); ++g)
            if (!members_[g]->link_to(*members_[(g + 1) % members_.size()], 1)) return false;
        return true;
    }

    I64 granularity() const {
        I64 g = 1;
        for (const auto& m : members_) g = std::max<I64>(g, m->special_row_granularity());
        return g;
    }

    // A goal search references the special rows kept here: the member gets them
    // as an explicit crossing row.
    void to_explicit_crossing(PassTask& t) const {
        if (!t.goal_search || t.crossing_row < 0) return;
        const auto k = static_cast<std::size_t>(t.crossing_row);
        if (k >= saved_h_.size()) throw Error("internal error: long-pair goal search names an unknown special row");
        if (saved_h_[k].size() < static_cast<std::size_t>(t.col_end + 1))
            throw Error("internal error: long-pair goal search beyond its special row");
        t.crossing_h = saved_h_[k];
        t.crossing_f = saved_f_[k];
        t.crossing_row = kExplicitRow;
    }

    void run_goal_search(PassTask& t, const JobContext& context, const PassProgress& progress) {
        const int original = t.crossing_row;
        to_explicit_crossing(t);
        PassRunner& member = *members_[goal_member_];
        std::vector<PassTask> one;
        one.push_back(std::move(t));
        std::exception_ptr failure;
        try {
            member.run(one, context, progress);
        } catch (...) {
            failure = std::current_exception();
        }
        t = std::move(one[0]);
        if (original != t.crossing_row) {
            t.crossing_row = original;
            t.crossing_h.clear();
            t.crossing_f.clear();
        }
        if (failure) {
            Failures f;
            f.add(failure, member.device());
            f.rethrow();
        }
    }

    // Runs job(g) for each g in `who` on its own thread; the calling thread
    // reports progress (sum of cells[g]) and watches for cancellation, and
    // `between` (on the calling thread, may throw) runs each time it wakes:
    // when `pending` (asked under the mutex) says there is news, a thread
    // ended, or 20 ms passed.
    template <typename Job, typename Pending, typename Between>
    void run_threads(const std::vector<std::size_t>& who, Job&& job, Pending&& pending, Between&& between,
                     const JobContext& context, const PassProgress& progress, std::uint64_t total,
                     CancellationToken& stop, Failures& failures, std::mutex& mutex, std::condition_variable& wake,
                     std::vector<std::atomic<std::uint64_t>>& cells) {
        std::size_t finished = 0;
        std::vector<std::thread> threads;
        threads.reserve(who.size());
        for (std::size_t g : who)
            threads.emplace_back([&, g] {
                try {
                    job(g);
                } catch (...) {
                    failures.add(std::current_exception(), members_[g]->device());
                    stop.cancel();
                }
                std::lock_guard lock(mutex);
                ++finished;
                wake.notify_all();
            });
        std::exception_ptr own;  // from `between` (a checkpoint that could not be written)
        auto last_report = std::chrono::steady_clock::now() - std::chrono::seconds(1);
        for (;;) {
            bool all = false;
            {
                std::unique_lock lock(mutex);
                wake.wait_for(lock, std::chrono::milliseconds(20),
                              [&] { return finished == threads.size() || (!stop.cancelled() && pending()); });
                all = finished == threads.size();
            }
            if (context.cancelled()) {
                stop.cancel();
                wake.notify_all();
            }
            if (!own && !stop.cancelled()) {
                try {
                    between();
                } catch (...) {
                    own = std::current_exception();
                    stop.cancel();
                    wake.notify_all();
                }
            }
            const auto now = std::chrono::steady_clock::now();
            if (progress && now - last_report >= std::chrono::milliseconds(100)) {
                last_report = now;
                std::uint64_t done = 0;
                for (const auto& c : cells) done += c.load(std::memory_order_relaxed);
                progress(std::min(done, total), total);
            }
            if (all) break;
        }
        for (std::thread& t : threads) t.join();
        if (own) std::rethrow_exception(own);
        failures.rethrow();
        context.throw_if_cancelled();
        if (stop.cancelled()) throw Cancelled();
    }

    // Several independent tasks (stage 3): dealt to the members by cells
    // (largest first, to the member with the least work per weight), each
    // member's share in one call of its own, all at once.
    void deal(std::vector<PassTask>& tasks, const JobContext& context, const PassProgress& progress) {
        const std::size_t G = members_.size();
        std::vector<std::size_t> order(tasks.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        auto cells_of = [&](std::size_t x) {
            return static_cast<double>(std::max<I64>(tasks[x].rows(), 0)) *
                   static_cast<double>(std::max<I64>(tasks[x].cols(), 0));
        };
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return cells_of(a) > cells_of(b); });
        std::vector<std::vector<std::size_t>> share(G);
        std::vector<double> load(G, 0.0);
        std::uint64_t total = 0;
        for (std::size_t x : order) {
            std::size_t best = 0;
            for (std::size_t g = 1; g < G; ++g)
                if ((load[g] + cells_of(x)) / settings_.weights[g] <
                    (load[best] + cells_of(x)) / settings_.weights[best])
                    best = g;
            share[best].push_back(x);
            load[best] += cells_of(x);
            total += static_cast<std::uint64_t>(cells_of(x));
        }
        std::vector<std::size_t> who;
        for (std::size_t g = 0; g < G; ++g) {
            std::sort(share[g].begin(), share[g].end());
            if (!share[g].empty()) who.push_back(g);
        }
        // Goal searches among them get the special rows as explicit rows.
        std::vector<int> crossing(tasks.size());
        for (std::size_t x = 0; x < tasks.size(); ++x) {
            crossing[x] = tasks[x].crossing_row;
            to_explicit_crossing(tasks[x]);
        }
        std::vector<std::vector<PassTask>> parts(G);
        for (std::size_t g : who)
            for (std::size_t x : share[g]) parts[g].push_back(std::move(tasks[x]));
        CancellationToken stop;
        Failures failures;
        std::mutex mutex;
        std::condition_variable wake;
        std::vector<std::atomic<std::uint64_t>> cells(G);
        auto job = [&](std::size_t g) {
            JobContext sub;
            sub.cancel = &stop;
            sub.timeline = context.timeline;
            members_[g]->run(parts[g], sub, [&, g](std::uint64_t done, std::uint64_t) { cells[g] = done; });
        };
        std::exception_ptr failure;
        try {
            run_threads(
                who, job, [] { return false; }, [] {}, context, progress, total, stop, failures, mutex, wake, cells);
        } catch (...) {
            failure = std::current_exception();
        }
        for (std::size_t g : who)
            for (std::size_t k = 0; k < share[g].size(); ++k) tasks[share[g][k]] = std::move(parts[g][k]);
        for (std::size_t x = 0; x < tasks.size(); ++x)
            if (crossing[x] != tasks[x].crossing_row) {
                tasks[x].crossing_row = crossing[x];
                tasks[x].crossing_h.clear();
                tasks[x].crossing_f.clear();
            }
        if (failure) std::rethrow_exception(failure);
        if (progress) progress(total, total);
    }

    // ---- Stage 1: one pass as a pipeline over row blocks x column slices.
    class Pipeline;
    void split_pass(PassTask& T, const JobContext& context, const PassProgress& progress);

    std::vector<std::unique_ptr<PassRunner>> members_;
    SplitSettings settings_;
    std::size_t goal_member_ = 0;
    I64 m_ = 0, n_ = 0;
    ScoringScheme scheme_;
    std::vector<std::int64_t> saved_rows_;
    std::vector<std::vector<Score>> saved_h_, saved_f_;
    std::map<std::string, std::uint64_t> kernel_cells_;  // the last split pass: cells per member kernel
    bool linked_ = false;                                // the last split pass streamed its boundaries
};

// The stage-1 pipeline of one split pass (SplitRunner::split_pass): the
// members' threads each run the ready (block, slice) of their slices with the
// smallest block, handing boundary columns on; the calling thread absorbs
// blocks finished by every slice, in order, and reports them.
class SplitRunner::Pipeline {
public:
    Pipeline(SplitRunner& owner, PassTask& T, const SplitPassPlan& plan, const JobContext& context,
             const PassProgress& progress)
        : owner_(owner),
          T_(T),
          plan_(plan),
          a_(plan.slice_edges),
          context_(context),
          progress_(progress),
          h_(T.rows()),
          w_(T.cols()),
          open_(owner.scheme_.gap_open),
          extend_(owner.scheme_.gap_extend),
          G_(owner.members_.size()),
          S_(plan.slices()),
          B_(plan.blocks),
          every_(plan.every),
          cells_(owner.members_.size()),
          total_(static_cast<std::uint64_t>(h_) * static_cast<std::uint64_t>(w_)) {
        // Results the members' threads fill in place (disjoint parts).
        reset_pass_results(T, open_, extend_);
        column_state_ = T.want_last_column && T.want_last_column_state;
        T.cells = 0;
        T.overview.clear();
        T.overview_row_edges.clear();
        overview_ = T.overview_rows > 0 && T.overview_cols > 0 && h_ > 0 && w_ > 0;
        // The overview's columns are binned as those of the pass T is a slice
        // of (its own when it is none): slice s of T starts a[s] columns into T,
        // so T's offset + a[s] into that pass, and every slice's grid is as
        // wide as that pass's.
        ov_total_ = T.overview_col_total > 0 ? T.overview_col_total : w_;
        ov_offset_ = T.overview_col_total > 0 ? T.overview_col_offset : 0;
        if (overview_ && (ov_offset_ < 0 || ov_offset_ + w_ > ov_total_))
            throw Error("internal error: a long-pair overview slice outside its pass");
        C_ = static_cast<std::size_t>(overview_ ? std::min<I64>(T.overview_cols, ov_total_) : 0);
    }

    void run() {
        if (B_ == 0) {  // no rows: the top edge is the last row
            if (T_.want_last_row)
                for (I64 j = 0; j <= w_; ++j) {
                    T_.last_h[static_cast<std::size_t>(j)] = clamp(top_value(T_, j, open_, extend_));
                    T_.last_f[static_cast<std::size_t>(j)] = clamp(top_f_value(T_, j));
                }
            if (progress_) progress_(0, 0);
            return;
        }
        results_.assign(B_, std::vector<SliceResult>(S_));
        linked_ = owner_.linked_ && S_ > 1;
        if (linked_) make_links();
        else
            boundary_.assign(S_, std::vector<Column>(B_));
        next_block_.assign(S_, 0);
        started_.assign(S_, 0);
        std::vector<std::size_t> who;
        for (std::size_t g = 0; g < std::min(G_, S_); ++g) who.push_back(g);
        auto news = [&] { return blocks_done() > merged_blocks_; };  // under the mutex
        owner_.run_threads(
            who, [&](std::size_t g) { member_job(g); }, news, [&] { between(); }, context_, progress_, total_, stop_,
            failures_, mutex_, wake_, cells_);
        between();  // whatever finished since the last look
        if (merged_blocks_ != B_) throw Error("internal error: the long-pair split pipeline stopped early");
        T_.best = T_.track_best ? best_ : BestCell{};
        if (progress_) progress_(total_, total_);
    }

private:
    // Linked: every block's link from each slice's member to the next's.
    void make_links() {
        links_.assign(S_, std::vector<std::shared_ptr<BoundaryLink>>(B_));
        for (std::size_t s = 1; s < S_; ++s)
            for (std::size_t b = 0; b < B_; ++b) {
                PassRunner& from = *owner_.members_[(s - 1) % G_];
                links_[s][b] = from.link_to(*owner_.members_[s % G_], plan_.block_top(b + 1) - plan_.block_top(b));
                if (!links_[s][b]) throw Error("internal error: a long-pair split member gave no link");
            }
    }

    // Blocks finished by every slice (under the mutex).
    std::size_t blocks_done() const {
        std::size_t done = B_;
        for (std::size_t s = 0; s < S_; ++s) done = std::min(done, next_block_[s]);
        return done;
    }

    // The (block, slice) sub-pass: the slice's columns of the block's rows,
    // its top row from the block above, its left column from the slice before
    // (or the pass's own left edge), asking for what the next ones need.
    PassTask slice_task(std::size_t b, std::size_t s, std::vector<Score>& top_h, std::vector<Score>& top_f, Column left,
                        Links links) const {
        const I64 r0 = plan_.block_top(b), r1 = plan_.block_top(b + 1), rows = r1 - r0;
        PassTask p;
        p.reversed = T_.reversed;
        if (!T_.reversed) {
            p.row_begin = T_.row_begin + r0;
            p.row_end = T_.row_begin + r1;
            p.col_begin = T_.col_begin + a_[s];
            p.col_end = T_.col_begin + a_[s + 1];
        } else {
            p.row_end = T_.row_end - r0;
            p.row_begin = T_.row_end - r1;
            p.col_end = T_.col_end - a_[s];
            p.col_begin = T_.col_end - a_[s + 1];
        }
        p.top = Edge::Explicit;
        p.top_h = std::move(top_h);
        p.top_f = std::move(top_f);
        p.left = Edge::Explicit;
        p.left_link = std::move(links.left);
        p.right_link = std::move(links.right);
        if (s == 0) {  // the pass's own left edge, rows r0..r1
            left.h.resize(static_cast<std::size_t>(rows + 1));
            left.e.resize(static_cast<std::size_t>(rows + 1));
            left.f.resize(static_cast<std::size_t>(rows + 1));
            for (I64 i = 0; i <= rows; ++i) {
                const auto I = static_cast<std::size_t>(i);
                left.h[I] = clamp(left_value(T_, r0 + i, open_, extend_));
                left.e[I] = clamp(left_e_value(T_, r0 + i));
                left.f[I] = clamp(left_f_value(T_, r0 + i, open_, extend_));
            }
        }
        p.left_h = std::move(left.h);
        p.left_e = std::move(left.e);
        p.left_f = std::move(left.f);
        p.local = T_.local;
        p.track_best = T_.track_best;
        p.want_last_row = true;
        const bool hand_over = s + 1 < S_ && !p.right_link;  // the next slice's left edge, through host memory
        p.want_last_column = hand_over || (s + 1 == S_ && T_.want_last_column);
        p.want_last_column_state = hand_over || (s + 1 == S_ && T_.want_last_column_state);
        if (every_ > 0 && rows > every_) p.special_every = every_;
        if (overview_) {
            p.overview_rows =
                static_cast<int>(std::clamp<I64>((static_cast<I64>(T_.overview_rows) * rows + h_ / 2) / h_, 1, rows));
            p.overview_cols = T_.overview_cols;
            p.overview_col_offset = ov_offset_ + a_[s];
            p.overview_col_total = ov_total_;
        }
        return p;
    }

    // One (block, slice) sub-pass on member g, run by that member's thread.
    // Returns the slice's last column: the next slice's left edge.
    Column sub_pass(std::size_t g, std::size_t b, std::size_t s, std::vector<Score>& top_h, std::vector<Score>& top_f,
                    Column left, Links links, std::uint64_t cells_before) {
        PassRunner& member = *owner_.members_[g];
        std::vector<PassTask> one;
        one.push_back(slice_task(b, s, top_h, top_f, std::move(left), std::move(links)));
        PassTask& p = one[0];
        SliceResult& out = results_[b][s];
        if (T_.on_rows_done && p.special_every > 0 && b + 1 == B_)  // the last block's special rows, exactly
            p.on_rows_done = [&out](const RowsDone& d) {
                out.reported = true;
                out.report = d;
                out.report.overview = nullptr;
                out.report.overview_row_edges = nullptr;
            };
        JobContext sub;
        sub.cancel = &stop_;
        sub.timeline = context_.timeline;
        member.run(one, sub, [&, g, cells_before](std::uint64_t done, std::uint64_t) {
            cells_[g].store(cells_before + done, std::memory_order_relaxed);
        });
        cells_[g].store(cells_before + p.cells, std::memory_order_relaxed);
        {
            std::lock_guard lock(mutex_);
            owner_.kernel_cells_[member.kernel()] += p.cells;
        }
        keep_rows(member, p, b, s);
        out.best = shifted(p.best, plan_.block_top(b), a_[s]);
        out.overview = std::move(p.overview);
        out.overview_edges = std::move(p.overview_row_edges);
        if (overview_ && out.overview.size() != out.overview_edges.size() * C_)
            throw Error("internal error: a long-pair slice's overview has the wrong size");
        out.cells = p.cells;
        // The next block's top edge, and the next slice's left edge.
        top_h = std::move(p.last_h);
        top_f = std::move(p.last_f);
        Column right;
        if (s + 1 < S_ && !p.right_link) {
            if (p.last_col_h.size() != static_cast<std::size_t>(p.rows() + 1) ||
                p.last_col_e.size() != p.last_col_h.size() || p.last_col_f.size() != p.last_col_h.size())
                throw Error("internal error: a long-pair slice's last column has the wrong length");
            right.h = std::move(p.last_col_h);
            right.e = std::move(p.last_col_e);
            right.f = std::move(p.last_col_f);
        }
        return right;
    }

    // A finished sub-pass's rows, its slice's columns of them: the special
    // rows inside the block, then its bottom row (a special row, or the
    // pass's last row), and the last column when it is the last slice.
    void keep_rows(PassRunner& member, const PassTask& p, std::size_t b, std::size_t s) {
        const I64 r0 = plan_.block_top(b), r1 = plan_.block_top(b + 1), rows = r1 - r0;
        const I64 ws = a_[s + 1] - a_[s];
        const std::size_t from = s == 0 ? 0 : 1;
        auto put_row = [&](std::size_t k, const std::vector<Score>& rh, const std::vector<Score>& rf) {
            if (rh.size() != static_cast<std::size_t>(ws + 1) || rf.size() != rh.size())
                throw Error("internal error: a long-pair slice's row has the wrong length");
            std::copy(rh.begin() + static_cast<std::ptrdiff_t>(from), rh.end(),
                      owner_.saved_h_[k].begin() + static_cast<std::ptrdiff_t>(a_[s] + static_cast<I64>(from)));
            std::copy(rf.begin() + static_cast<std::ptrdiff_t>(from), rf.end(),
                      owner_.saved_f_[k].begin() + static_cast<std::ptrdiff_t>(a_[s] + static_cast<I64>(from)));
        };
        if (p.special_every > 0) {
            std::vector<std::int64_t> expect;
            for (I64 r = every_; r < rows; r += every_) expect.push_back(p.row_begin + r);
            if (member.saved_rows() != expect)
                throw Error(
                    "internal error: the special rows of a long-pair slice are not where the split expects them");
            std::vector<Score> rh, rf;
            for (std::size_t x = 0; x < expect.size(); ++x) {
                member.read_special_row(x, rh, rf);
                put_row(static_cast<std::size_t>((r0 + every_ * static_cast<I64>(x + 1)) / every_ - 1), rh, rf);
            }
        }
        if (every_ > 0 && r1 < h_) put_row(static_cast<std::size_t>(r1 / every_ - 1), p.last_h, p.last_f);
        if (b + 1 == B_ && T_.want_last_row) {
            std::copy(p.last_h.begin() + static_cast<std::ptrdiff_t>(from), p.last_h.end(),
                      T_.last_h.begin() + static_cast<std::ptrdiff_t>(a_[s] + static_cast<I64>(from)));
            std::copy(p.last_f.begin() + static_cast<std::ptrdiff_t>(from), p.last_f.end(),
                      T_.last_f.begin() + static_cast<std::ptrdiff_t>(a_[s] + static_cast<I64>(from)));
        }
        if (s + 1 == S_ && T_.want_last_column)
            for (I64 i = 1; i <= rows; ++i) {
                const auto I = static_cast<std::size_t>(i), R = static_cast<std::size_t>(r0 + i);
                T_.last_col_h[R] = p.last_col_h[I];
                if (column_state_) {
                    T_.last_col_e[R] = p.last_col_e[I];
                    T_.last_col_f[R] = p.last_col_f[I];
                }
            }
    }

    // Under the mutex: the ready (block, slice) of `mine` with the smallest
    // block (b = B_, s = S_ when none); true when the thread should stop
    // waiting (a pick, its slices done, or the job stopped). Ready: the slice
    // before has finished the block (linked: has started it, and streams its
    // boundary while both run; it never waits for a slice to its right, so
    // every slice started finishes).
    bool pick(const std::vector<std::size_t>& mine, std::size_t& b, std::size_t& s) {
        b = B_;
        s = S_;
        bool left_over = false;
        for (std::size_t x : mine) {
            const std::size_t nb = next_block_[x];
            if (nb >= B_) continue;
            left_over = true;
            const bool left_ready = x == 0 || (linked_ ? started_[x - 1] > nb : next_block_[x - 1] > nb);
            if (left_ready && nb < b) {
                b = nb;
                s = x;
            }
        }
        return stop_.cancelled() || !left_over || s < S_;
    }

    // A member's thread: the ready (block, slice) of its slices with the
    // smallest block, until its slices are done or the job stops.
    void member_job(std::size_t g) {
        std::vector<std::size_t> mine;
        for (std::size_t s = g; s < S_; s += G_) mine.push_back(s);
        std::vector<std::vector<Score>> top_h(S_), top_f(S_);  // per slice of mine: the row above its next block
        for (std::size_t s : mine) {
            top_h[s].resize(static_cast<std::size_t>(a_[s + 1] - a_[s] + 1));
            top_f[s].resize(top_h[s].size());
            for (std::size_t j = 0; j < top_h[s].size(); ++j) {
                top_h[s][j] = clamp(top_value(T_, a_[s] + static_cast<I64>(j), open_, extend_));
                top_f[s][j] = clamp(top_f_value(T_, a_[s] + static_cast<I64>(j)));
            }
        }
        std::uint64_t cells_before = 0;
        for (;;) {
            std::size_t b = B_, s = S_;
            Column left;
            Links links;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return pick(mine, b, s); });
                if (stop_.cancelled() || s == S_) return;
                if (linked_) {  // the next slice may start the block now
                    if (s > 0) links.left = links_[s][b];
                    if (s + 1 < S_) links.right = links_[s + 1][b];
                    started_[s] = b + 1;
                    wake_.notify_all();
                } else if (s > 0) {
                    left = std::move(boundary_[s][b]);
                }
            }
            Column right = sub_pass(g, b, s, top_h[s], top_f[s], std::move(left), links, cells_before);
            cells_before += results_[b][s].cells;
            std::lock_guard lock(mutex_);
            if (s + 1 < S_ && !linked_) boundary_[s + 1][b] = std::move(right);
            next_block_[s] = b + 1;
            started_[s] = b + 1;
            wake_.notify_all();
        }
    }

    // Block b, done by all slices: its best cells, cells, last column and
    // overview join the pass's.
    void absorb(std::size_t b) {
        const I64 r0 = plan_.block_top(b), r1 = plan_.block_top(b + 1);
        for (std::size_t s = 0; s < S_; ++s) {
            merge(best_, results_[b][s].best);
            T_.cells += results_[b][s].cells;
        }
        if (T_.want_last_column)
            for (I64 i = r0 + 1; i <= r1; ++i)
                merge(last_column_, BestCell{T_.last_col_h[static_cast<std::size_t>(i)], i, w_});
        if (overview_) {
            const std::vector<std::int64_t>& edges = results_[b][0].overview_edges;
            std::vector<Score> grid = results_[b][0].overview;
            for (std::size_t s = 1; s < S_; ++s) {
                if (results_[b][s].overview_edges != edges)
                    throw Error("internal error: the slices of a long-pair pass bin their overview rows differently");
                for (std::size_t x = 0; x < grid.size(); ++x) grid[x] = std::max(grid[x], results_[b][s].overview[x]);
            }
            for (std::int64_t e : edges) T_.overview_row_edges.push_back(e + r0);
            T_.overview.insert(T_.overview.end(), grid.begin(), grid.end());
        }
        for (std::size_t s = 0; s < S_; ++s) {
            results_[b][s].overview.clear();
            results_[b][s].overview.shrink_to_fit();
        }
    }

    void report(I64 row, std::size_t rows_done, const BestCell& b, const BestCell& lc) {
        if (!T_.on_rows_done || rows_done <= reported_rows_) return;
        RowsDone d;
        d.row = row;
        d.special_rows = rows_done;
        d.best = b;
        d.last_column = lc;
        if (overview_) {
            d.overview = &T_.overview;
            d.overview_row_edges = &T_.overview_row_edges;
        }
        reported_rows_ = rows_done;
        T_.on_rows_done(d);
    }

    // The last block: its special rows with the best cells above the last of
    // them, from the members' own reports (when every slice reported them all).
    void report_last_block(std::size_t b, const BestCell& best_above, const BestCell& column_above) {
        const I64 r0 = plan_.block_top(b);
        const std::size_t inner = static_cast<std::size_t>((h_ - 1) / every_) - static_cast<std::size_t>(r0 / every_);
        if (inner == 0) return;
        BestCell b_rows = best_above, lc_rows = column_above;
        for (std::size_t s = 0; s < S_; ++s) {
            const SliceResult& x = results_[b][s];
            if (!x.reported || x.report.special_rows != inner) return;
            merge(b_rows, shifted(x.report.best, r0, a_[s]));
            if (s + 1 == S_ && T_.want_last_column) {
                BestCell c = x.report.last_column;
                if (c.score > kNegInf) {
                    c.i += r0;
                    c.j = w_;
                }
                merge(lc_rows, c);
            }
        }
        report(r0 + static_cast<I64>(inner) * every_, owner_.saved_rows_.size(), b_rows, lc_rows);
    }

    // The calling thread: blocks finished by every slice, in order.
    void between() {
        std::size_t done = B_;
        {
            std::lock_guard lock(mutex_);
            done = blocks_done();
        }
        for (; merged_blocks_ < done; ++merged_blocks_) {
            const std::size_t b = merged_blocks_;
            const I64 r1 = plan_.block_top(b + 1);
            const BestCell best_above = best_, column_above = last_column_;
            absorb(b);
            if (every_ <= 0) continue;
            if (r1 < h_) {  // ends on a special row: everything above it is final
                report(r1, static_cast<std::size_t>(r1 / every_), best_, last_column_);
                continue;
            }
            report_last_block(b, best_above, column_above);
        }
    }

    SplitRunner& owner_;
    PassTask& T_;
    const SplitPassPlan& plan_;
    const std::vector<I64>& a_;  // slice edges
    const JobContext& context_;
    const PassProgress& progress_;
    const I64 h_, w_, open_, extend_;
    const std::size_t G_, S_, B_;
    const I64 every_;
    bool column_state_ = false, overview_ = false;
    I64 ov_total_ = 0, ov_offset_ = 0;
    std::size_t C_ = 0;  // overview grid columns
    std::vector<std::vector<SliceResult>> results_;
    std::vector<std::vector<Column>> boundary_;  // left edge of slice s, block b
    // Linked: the link into slice s for block b, all made before the members
    // start and kept until they are done (a GPU link is device memory:
    // allocated and freed while the GPUs are idle, never while a slice waits).
    std::vector<std::vector<std::shared_ptr<BoundaryLink>>> links_;
    std::vector<std::size_t> next_block_;  // guarded by mutex_
    std::vector<std::size_t> started_;     // linked: blocks of slice s started (guarded by mutex_)
    bool linked_ = false;
    std::mutex mutex_;
    std::condition_variable wake_;
    CancellationToken stop_;
    Failures failures_;
    std::vector<std::atomic<std::uint64_t>> cells_;
    const std::uint64_t total_;
    // The calling thread's: blocks merged, best cells so far, rows reported.
    std::size_t merged_blocks_ = 0;
    BestCell best_, last_column_;
    std::size_t reported_rows_ = 0;
};

void SplitRunner::split_pass(PassTask& T, const JobContext& context, const PassProgress& progress) {
    check_explicit_edges(T);
    const I64 h = T.rows(), w = T.cols();
    if (h < 0 || w < 0 || T.row_begin < 0 || T.col_begin < 0 || T.row_end > m_ || T.col_end > n_)
        throw Error("internal error: long-pair pass outside the matrix");
    if (T.special_every > 0 && T.reversed) throw Error("internal error: special rows from a reversed pass");
    linked_ = members_.size() > 1 && w > 1 && can_link();
    const SplitPassPlan plan = plan_split_pass(h, w, settings_, T.special_every, granularity(), busy_rows(), linked_);
    kernel_cells_.clear();
    // Special rows (pass rows every, 2 every, ... < h) in host memory.
    saved_rows_.clear();
    saved_h_.clear();
    saved_f_.clear();
    if (plan.every > 0) {
        for (I64 r = plan.every; r < h; r += plan.every) saved_rows_.push_back(T.row_begin + r);
        saved_h_.assign(saved_rows_.size(), std::vector<Score>(static_cast<std::size_t>(w + 1), kNegInf));
        saved_f_.assign(saved_rows_.size(), std::vector<Score>(static_cast<std::size_t>(w + 1), kNegInf));
    }
    Pipeline pipeline(*this, T, plan, context, progress);
    pipeline.run();
}

}  // namespace

namespace {

// Row blocks of a linked split (see plan_split_pass): at least 8 x busy rows
// each (the whole pass when it is shorter), multiples of `unit`.
I64 linked_block_rows(I64 h, I64 busy, I64 unit) {
    const I64 blocks = std::max<I64>(1, h / (8 * busy));
    const I64 block = (h + blocks - 1) / blocks;
    return (block + unit - 1) / unit * unit;
}

// Slices per member of a linked split: the K >= minimum (up to 16) with the
// least modelled time, in columns swept by one strip: per block, K launches
// of a slice of w / (G K) columns, each its strips' waves (W = busy / SH at
// once) plus their start-up (a strip starts 64 columns after the one above),
// then one slice's sweep of fill.
std::size_t linked_slices_per_member(I64 h, I64 w, std::size_t G, I64 block, I64 strip, I64 busy, int minimum) {
    const I64 W = std::max<I64>(1, busy / strip);
    const I64 blocks = (h + block - 1) / block;
    const I64 N = (std::min(block, h) + strip - 1) / strip;  // strips of a block
    const double waves = static_cast<double>((N - 1) / W + 1);
    const double startup = 64.0 * static_cast<double>((N - 1) % W);
    std::size_t best = static_cast<std::size_t>(minimum);
    double best_cost = 0;
    for (int K = minimum; K <= std::max(16, minimum); ++K) {
        const double slice = static_cast<double>(w) / static_cast<double>(G * static_cast<std::size_t>(K));
        const double cost = static_cast<double>(blocks) * K * (slice * waves + startup) + slice;
        if (K == minimum || cost < best_cost) {
            best_cost = cost;
            best = static_cast<std::size_t>(K);
        }
    }
    return best;
}

// Row blocks of a split through host memory: see SplitSettings::block_rows.
I64 host_block_rows(I64 h, std::size_t G, std::size_t S, I64 block, I64 busy, I64 every) {
    if (block <= 0 && busy > 0 && h > 0) {
        // A member takes about ceil(rows / busy) sweeps of its slice for a
        // block (its warps work in waves), and the pipeline about
        // blocks x slices per member + members - 1 blocks' time: the
        // block height (a multiple of `unit`) that minimises the product.
        const I64 unit = every > 0 ? every : busy;
        const auto G_ = static_cast<double>(std::min(G, S)), K_ = static_cast<double>(S) / G_;
        double best_cost = 0;
        for (I64 k = 1;; ++k) {
            const I64 block_rows = k * unit;
            const auto blocks = static_cast<double>((h + block_rows - 1) / block_rows);
            const auto waves = static_cast<double>((std::min(block_rows, h) + busy - 1) / busy);
            const double cost = (blocks * K_ + G_ - 1) * waves;
            if (k == 1 || cost < best_cost) {
                best_cost = cost;
                block = block_rows;
            }
            if (block_rows >= h) break;
        }
        return block;
    }
    if (block <= 0) block = (h + 8 * static_cast<I64>(S) - 1) / (8 * static_cast<I64>(S));
    block = std::max<I64>(block, 1);
    if (every > 0) block = std::max<I64>(1, (block + every / 2) / every) * every;
    return block;
}

}  // namespace

SplitPassPlan plan_split_pass(I64 rows, I64 cols, const SplitSettings& settings, I64 special_every, I64 granularity,
                              I64 busy_rows, bool linked) {
    const I64 h = rows, w = cols;
    const std::size_t G = settings.weights.size();
    SplitPassPlan plan;
    plan.rows = rows;
    // Row blocks: multiples of the special rows' spacing, so that every
    // block but the last ends on a special row.
    const I64 every = special_every > 0 ? (special_every + granularity - 1) / granularity * granularity : 0;
    plan.every = every;
    linked = linked && busy_rows > 0 && h > 0 && G > 1;
    auto K = static_cast<std::size_t>(settings.slices_per_member);
    I64 block = settings.block_rows;
    if (linked) {
        if (block <= 0) block = linked_block_rows(h, busy_rows, every > 0 ? every : std::max<I64>(granularity, 1));
        else if (every > 0)
            block = std::max<I64>(1, (block + every / 2) / every) * every;
        K = linked_slices_per_member(h, w, G, block, std::max<I64>(granularity, 1), busy_rows,
                                     settings.slices_per_member);
    }

    // Column slices: slice s on member s % G, widths by weight, at least 1.
    const std::size_t S = static_cast<std::size_t>(std::max<I64>(1, std::min<I64>(static_cast<I64>(G * K), w)));
    std::vector<double> cum(S + 1, 0.0);
    for (std::size_t s = 0; s < S; ++s) cum[s + 1] = cum[s] + settings.weights[s % G];
    std::vector<I64>& a = plan.slice_edges;
    a.assign(S + 1, 0);
    a[S] = w;
    for (std::size_t s = 1; s < S; ++s) {
        const auto ideal = static_cast<I64>(std::llround(static_cast<double>(w) * cum[s] / cum[S]));
        a[s] = std::clamp<I64>(ideal, a[s - 1] + 1, w - static_cast<I64>(S - s));
    }

    if (!linked) block = host_block_rows(h, G, S, block, busy_rows, every);
    plan.block_rows = std::max<I64>(block, 1);
    plan.blocks = h > 0 ? static_cast<std::size_t>((h + plan.block_rows - 1) / plan.block_rows) : 0;
    return plan;
}

std::unique_ptr<PassRunner> make_split_pass_runner(std::vector<std::unique_ptr<PassRunner>> members,
                                                   SplitSettings settings) {
    return std::make_unique<SplitRunner>(std::move(members), std::move(settings));
}

}  // namespace alignscope::longpair
