// The scalar PassRunner: every pass column by column (so a goal search meets
// its candidates in the order it must report them and can stop at the first
// column that has one), O(rows) memory per pass, special rows on the heap.
// Written to be obviously right rather than fast: it is what the CUDA runner
// is tested against.
#include <alignscope/align/long_pass.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <limits>
#include <mutex>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;

Score clamp(I64 v) { return static_cast<Score>(std::max<I64>(v, kNegInf)); }

// The CPU runners' link of a streamed split: the producer's last column (H
// and E, as a GPU link carries it: F of column 0 arrives as kNegInf, and the
// split must not need it) in host memory, handed over whole once its pass
// is done; the consumer waits for it, watching for cancellation.
class HostLink final : public BoundaryLink {
public:
    void put(std::vector<Score> h, std::vector<Score> e) {
        std::lock_guard lock(mutex_);
        f_.assign(h.size(), kNegInf);
        h_ = std::move(h);
        e_ = std::move(e);
        ready_ = true;
        ready_cv_.notify_all();
    }
    void take(PassTask& t, const JobContext& context) {
        std::unique_lock lock(mutex_);
        while (!ready_) {
            ready_cv_.wait_for(lock, std::chrono::milliseconds(10));
            if (context.cancelled()) throw Cancelled();
        }
        if (h_.size() != static_cast<std::size_t>(t.rows() + 1))
            throw Error("internal error: a long-pair link carries a column of the wrong length");
        t.left_h = std::move(h_);
        t.left_e = std::move(e_);
        t.left_f = std::move(f_);
        ready_ = false;
    }

private:
    std::mutex mutex_;
    std::condition_variable ready_cv_;
    bool ready_ = false;
    std::vector<Score> h_, e_, f_;
};

class CpuPassRunner final : public PassRunner {
public:
    void prepare(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                 const ScoringScheme& scheme) override {
        query_ = query;
        target_ = target;
        m_ = m;
        n_ = n;
        scheme_ = scheme;
        saved_rows_.clear();
        saved_h_.clear();
        saved_f_.clear();
        saved_full_ = true;
    }

    void run(std::vector<PassTask>& tasks, const JobContext& context, const PassProgress& progress) override {
        std::uint64_t total = 0, done = 0;
        for (const PassTask& t : tasks)
            total += static_cast<std::uint64_t>(t.rows()) * static_cast<std::uint64_t>(t.cols());
        for (PassTask& t : tasks) {
            context.throw_if_cancelled();
            std::function<void(std::uint64_t)> cells_done;
            if (progress) cells_done = [&](std::uint64_t cells) { progress(done + cells, total); };
            run_linked(t, context, cells_done);
            done += t.cells;
            if (progress) progress(done, total);
        }
    }

    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        if (k >= saved_h_.size()) throw Error("internal error: reading an unknown special row");
        h = saved_h_[k];
        f = saved_f_[k];
    }

    const std::vector<std::int64_t>& saved_rows() const override { return saved_rows_; }
    // Between two CPU runners: a host buffer, the whole column at the end of the pass.
    std::shared_ptr<BoundaryLink> link_to(PassRunner& next, std::int64_t /*rows*/) override {
        if (!dynamic_cast<CpuPassRunner*>(&next)) return nullptr;
        return std::make_shared<HostLink>();
    }
    std::string device() const override { return "cpu-ref"; }
    std::string kernel() const override { return "nw_affine_columns_s32"; }  // align_long sets mode and gaps
    std::string strategy() const override { return "cpu-passes"; }

private:
    // One pass, its left column taken from its link first and its last
    // column handed to its right link after (a streamed split's slice).
    void run_linked(PassTask& t, const JobContext& context, const std::function<void(std::uint64_t)>& cells_done) {
        auto* left = dynamic_cast<HostLink*>(t.left_link.get());
        auto* right = dynamic_cast<HostLink*>(t.right_link.get());
        if ((t.left_link && !left) || (t.right_link && !right))
            throw Error("internal error: a long-pair pass with another runner's link");
        if (left) {
            check_pass_edges(t);
            left->take(t, context);
        }
        const bool column = t.want_last_column, state = t.want_last_column_state;
        if (right) t.want_last_column = t.want_last_column_state = true;
        run_one(t, context, cells_done);
        if (left) {
            t.left_h.clear();
            t.left_e.clear();
            t.left_f.clear();
        }
        if (!right) return;
        right->put(t.last_col_h, t.last_col_e);
        t.want_last_column = column;
        t.want_last_column_state = state;
        if (!column) t.last_col_h.clear();
        if (!(column && state)) {
            t.last_col_e.clear();
            t.last_col_f.clear();
        }
    }

    // One pass. Stage 1 (special rows asked for) runs as horizontal bands that
    // end on the special rows, each band column by column with the previous
    // band's last row as its top edge, so that a special row is final as soon
    // as its band is (on_rows_done); any other pass is one band.
    void run_one(PassTask& t, const JobContext& context, const std::function<void(std::uint64_t)>& cells_done) {
        const I64 h = t.rows(), w = t.cols();
        if (h < 0 || w < 0 || t.row_begin < 0 || t.col_begin < 0 || t.row_end > m_ || t.col_end > n_)
            throw Error("internal error: long-pair pass outside the matrix");
        check_explicit_edges(t);
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        const std::vector<I64> keep = keep_special_rows(t);
        aim_goal_search(t);
        reset_pass_results(t, open, extend);
        start_overview(t);
        t.cells = 0;

        // The top edge of the first band.
        std::vector<I64> top_h(static_cast<std::size_t>(w + 1)), top_f(static_cast<std::size_t>(w + 1), kNegInf);
        for (I64 j = 0; j <= w; ++j) {
            top_h[static_cast<std::size_t>(j)] = top_value(t, j, open, extend);
            top_f[static_cast<std::size_t>(j)] = top_f_value(t, j);
        }
        BestCell last_column;  // want_last_column, rows so far
        I64 from = 0, last_j = w;
        for (std::size_t k = 0; k <= keep.size(); ++k) {
            const I64 to = k < keep.size() ? keep[k] : h;
            last_j = sweep(t, from, to, top_h, top_f, context);
            if (t.want_last_column)
                for (I64 i = std::max<I64>(from, 1); i <= to; ++i) {
                    const BestCell c{t.last_col_h[static_cast<std::size_t>(i)], i, w};
                    if (better_cell(c, last_column)) last_column = c;
                }
            if (cells_done) cells_done(t.cells);
            if (k < keep.size()) special_row_done(t, k, to, top_h, top_f, last_column);
            from = to;
        }
        if (t.want_last_row) {
            for (I64 j = 0; j <= last_j; ++j) {
                t.last_h[static_cast<std::size_t>(j)] = clamp(top_h[static_cast<std::size_t>(j)]);
                t.last_f[static_cast<std::size_t>(j)] = clamp(top_f[static_cast<std::size_t>(j)]);
            }
        }
    }

    // Stage 1: pass rows every, 2 every, ... below the top and above the last
    // row, kept here (in place of any kept before). Returns them (pass rows).
    std::vector<I64> keep_special_rows(const PassTask& t) {
        std::vector<I64> keep;
        if (t.special_every <= 0) return keep;
        if (t.goal_search) throw Error("internal error: special rows from a goal search");
        const I64 h = t.rows(), w = t.cols();
        saved_rows_.clear();
        saved_h_.clear();
        saved_f_.clear();
        for (I64 r = t.special_every; r < h; r += t.special_every) keep.push_back(r);
        saved_rows_.assign(keep.begin(), keep.end());
        for (std::int64_t& r : saved_rows_) r += t.row_begin;
        saved_full_ = t.col_begin == 0 && !t.reversed;
        saved_h_.assign(keep.size(), std::vector<Score>(static_cast<std::size_t>(w + 1)));
        saved_f_.assign(keep.size(), std::vector<Score>(static_cast<std::size_t>(w + 1)));
        return keep;
    }

    // A goal search's crossing row: one kept here, or the task's explicit one
    // (none: row 0 from the task's crossing edge).
    void aim_goal_search(PassTask& t) {
        goal_h_ = goal_f_ = nullptr;
        if (t.goal_search && t.crossing_row >= 0) {
            if (static_cast<std::size_t>(t.crossing_row) >= saved_h_.size())
                throw Error("internal error: long-pair goal search names an unknown special row");
            if (!saved_full_ ||
                saved_h_[static_cast<std::size_t>(t.crossing_row)].size() < static_cast<std::size_t>(t.col_end + 1))
                throw Error("internal error: long-pair goal search on special rows of a column slice");
            goal_h_ = &saved_h_[static_cast<std::size_t>(t.crossing_row)];
            goal_f_ = &saved_f_[static_cast<std::size_t>(t.crossing_row)];
        } else if (t.goal_search && t.crossing_row == kExplicitRow) {
            if (t.crossing_h.size() < static_cast<std::size_t>(t.col_end + 1) ||
                t.crossing_f.size() != t.crossing_h.size())
                throw Error("internal error: long-pair goal search with a short explicit crossing row");
            goal_h_ = &t.crossing_h;
            goal_f_ = &t.crossing_f;
        }
    }

    // Overview: uniform row blocks; columns binned as the pass it is a slice of.
    void start_overview(PassTask& t) {
        const I64 h = t.rows(), w = t.cols();
        ototal_ = t.overview_col_total > 0 ? t.overview_col_total : w;
        ooffset_ = t.overview_col_total > 0 ? t.overview_col_offset : 0;
        if (ooffset_ < 0 || ooffset_ + w > ototal_)
            throw Error("internal error: a long-pair overview slice outside its pass");
        orows_ = t.overview_rows > 0 && t.overview_cols > 0 ? std::min<I64>(t.overview_rows, h) : 0;
        ocols_ = orows_ > 0 ? std::min<I64>(t.overview_cols, ototal_) : 0;
        t.overview.assign(static_cast<std::size_t>(orows_ * ocols_), kNegInf);
        t.overview_row_edges.clear();
        for (I64 b = 0; b < orows_; ++b) t.overview_row_edges.push_back(b * h / orows_ + 1);
    }

    // Special row k (pass row `to`) is final: it is kept, and reported with
    // the best cells of the rows above it.
    void special_row_done(PassTask& t, std::size_t k, I64 to, const std::vector<I64>& top_h,
                          const std::vector<I64>& top_f, const BestCell& last_column) {
        const I64 w = t.cols();
        for (I64 j = 0; j <= w; ++j) {
            saved_h_[k][static_cast<std::size_t>(j)] = clamp(top_h[static_cast<std::size_t>(j)]);
            saved_f_[k][static_cast<std::size_t>(j)] = clamp(top_f[static_cast<std::size_t>(j)]);
        }
        if (!t.on_rows_done) return;
        RowsDone done;
        done.row = to;
        done.special_rows = k + 1;
        done.best = t.best;
        done.last_column = last_column;
        if (orows_ > 0) {
            done.overview = &t.overview;
            done.overview_row_edges = &t.overview_row_edges;
        }
        t.on_rows_done(done);
    }

    // Residue codes of pass row i and pass column j (1-based), either direction.
    std::uint8_t row_code(const PassTask& t, I64 i) const {
        return t.reversed ? query_[t.row_end - i] : query_[t.row_begin + i - 1];
    }
    std::uint8_t col_code(const PassTask& t, I64 j) const {
        return t.reversed ? target_[t.col_end - j] : target_[t.col_begin + j - 1];
    }
    // The crossing row's H (f false) or F at forward column c.
    I64 forward_row(const PassTask& t, I64 c, bool f) const {
        if (goal_h_) return f ? (*goal_f_)[static_cast<std::size_t>(c)] : (*goal_h_)[static_cast<std::size_t>(c)];
        if (f) return kNegInf;
        return c == 0 ? 0 : edge_value(t.crossing_edge, c, scheme_.gap_open, scheme_.gap_extend);
    }

    // A band's DP state: H, E, F of rows from..from + h (index 0 = row
    // `from`) in the current column, and per row of the band where its
    // residue's scores start in the matrix and its overview block.
    struct Band {
        I64 from = 0, h = 0;
        std::vector<I64> H, E, F;
        std::vector<std::size_t> row_scores;
        std::vector<I64> row_block;
    };

    // Rows from+1..to in column 0 (row `from` is top_h[0], top_f[0]).
    Band start_band(const PassTask& t, I64 from, I64 to, const std::vector<I64>& top_h,
                    const std::vector<I64>& top_f) const {
        const I64 h = to - from;
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        const int size = scheme_.matrix.size();
        Band b;
        b.from = from;
        b.h = h;
        b.H.assign(static_cast<std::size_t>(h + 1), top_h.front());
        b.E.assign(static_cast<std::size_t>(h + 1), kNegInf);
        b.F.assign(static_cast<std::size_t>(h + 1), top_f.front());
        for (I64 i = 1; i <= h; ++i) {
            b.H[static_cast<std::size_t>(i)] = left_value(t, from + i, open, extend);
            b.E[static_cast<std::size_t>(i)] = left_e_value(t, from + i);
            b.F[static_cast<std::size_t>(i)] = left_f_value(t, from + i, open, extend);
        }
        b.row_scores.assign(static_cast<std::size_t>(h + 1), 0);
        b.row_block.assign(orows_ > 0 ? static_cast<std::size_t>(h + 1) : 0, 0);
        for (I64 i = 1; i <= h; ++i) {
            b.row_scores[static_cast<std::size_t>(i)] =
                static_cast<std::size_t>(row_code(t, from + i)) * static_cast<std::size_t>(size);
            if (orows_ > 0)  // the last edge <= the pass row
                b.row_block[static_cast<std::size_t>(i)] =
                    static_cast<I64>(
                        std::upper_bound(t.overview_row_edges.begin(), t.overview_row_edges.end(), from + i) -
                        t.overview_row_edges.begin()) -
                    1;
        }
        return b;
    }

    // The outputs of column j: the band's bottom cell goes to top_h/top_f;
    // a goal search looks for its first candidate in the column (then sets
    // t.hit and returns true: the search may stop).
    bool visit_column(PassTask& t, const Band& b, I64 j, std::vector<I64>& top_h, std::vector<I64>& top_f) const {
        const I64 h = b.h;
        const std::vector<I64>& H = b.H;
        const std::vector<I64>& F = b.F;
        top_h[static_cast<std::size_t>(j)] = H[static_cast<std::size_t>(h)];
        top_f[static_cast<std::size_t>(j)] = F[static_cast<std::size_t>(h)];
        if (!t.goal_search) return false;
        const I64 refund = scheme_.gap_open - scheme_.gap_extend;
        for (I64 i = 0; i <= h; ++i) {
            GoalHit::Kind kind;
            if (t.goal_any_cell && H[static_cast<std::size_t>(i)] == t.goal) {
                kind = GoalHit::Kind::Begin;
            } else if (i == h) {
                const I64 c = t.col_end - j;
                const I64 fh = forward_row(t, c, false), ff = forward_row(t, c, true);
                if (fh > kNegInf / 2 && H[static_cast<std::size_t>(i)] > kNegInf / 2 &&
                    fh + H[static_cast<std::size_t>(i)] == t.goal)
                    kind = GoalHit::Kind::CrossH;
                else if (ff > kNegInf / 2 && F[static_cast<std::size_t>(i)] > kNegInf / 2 &&
                         ff + F[static_cast<std::size_t>(i)] + refund == t.goal)
                    kind = GoalHit::Kind::CrossF;
                else
                    continue;
            } else {
                continue;
            }
            t.hit.found = true;
            t.hit.kind = kind;
            t.hit.i = i;
            t.hit.j = j;
            if (i == h) {
                const I64 c = t.col_end - j;
                t.hit.forward_h = clamp(forward_row(t, c, false));
                t.hit.forward_f = clamp(forward_row(t, c, true));
            }
            return true;
        }
        return false;
    }

    // One column j (rows 1..h of the band), with the per-cell extras compiled
    // in or out: the local clamp, the best cell, the overview.
    template <bool Local, bool Track, bool Overview>
    void column(PassTask& t, Band& b, I64 j, const std::vector<I64>& top_h, const std::vector<I64>& top_f) const {
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        const I64 h = b.h, from = b.from;
        const int* col_scores = scheme_.matrix.scores().data() + col_code(t, j);
        I64* Hp = b.H.data();
        I64* Ep = b.E.data();
        I64* Fp = b.F.data();
        const std::size_t* rs = b.row_scores.data();
        I64 diag = Hp[0];
        Hp[0] = top_h[static_cast<std::size_t>(j)];
        Fp[0] = top_f[static_cast<std::size_t>(j)];
        I64 f_above = Fp[0], h_above = Hp[0];
        BestCell best = t.best;
        Score* ov_col = nullptr;
        if constexpr (Overview) ov_col = t.overview.data() + (ooffset_ + j - 1) * ocols_ / ototal_;
        for (I64 i = 1; i <= h; ++i) {
            const auto I = static_cast<std::size_t>(i);
            const I64 e = std::max(Ep[I] - extend, Hp[I] - open);
            const I64 f = std::max(f_above - extend, h_above - open);
            I64 v = std::max({diag + col_scores[rs[I]], e, f});
            if constexpr (Local) v = std::max<I64>(v, 0);
            v = std::max<I64>(v, kNegInf);
            diag = Hp[I];
            Hp[I] = v;
            h_above = v;
            Ep[I] = std::max<I64>(e, kNegInf);
            f_above = Fp[I] = std::max<I64>(f, kNegInf);
            if constexpr (Track)
                if (v >= best.score && better_cell({static_cast<Score>(v), from + i, j}, best))
                    best = {static_cast<Score>(v), from + i, j};
            if constexpr (Overview) {
                Score& cell = ov_col[b.row_block[I] * ocols_];
                cell = std::max(cell, clamp(v));
            }
        }
        t.best = best;
    }
    template <bool Overview>
    void column_with(PassTask& t, Band& b, I64 j, const std::vector<I64>& top_h, const std::vector<I64>& top_f) const {
        if (t.local && t.track_best) column<true, true, Overview>(t, b, j, top_h, top_f);
        else if (t.local)
            column<true, false, Overview>(t, b, j, top_h, top_f);
        else if (t.track_best)
            column<false, true, Overview>(t, b, j, top_h, top_f);
        else
            column<false, false, Overview>(t, b, j, top_h, top_f);
    }

    // Rows from+1..to of pass t, column by column. top_h/top_f hold H and F of
    // row `from` on entry and of row `to` on return (columns 0..w); a goal
    // search (one band: from = 0, to = rows) may stop at its first candidate
    // column, leaving the later columns of top_h/top_f as they were. Returns
    // the last column computed.
    I64 sweep(PassTask& t, I64 from, I64 to, std::vector<I64>& top_h, std::vector<I64>& top_f,
              const JobContext& context) {
        const I64 w = t.cols();
        Band b = start_band(t, from, to, top_h, top_f);
        I64 last_j = 0;
        if (!visit_column(t, b, 0, top_h, top_f)) {
            for (I64 j = 1; j <= w; ++j) {
                last_j = j;
                if (orows_ > 0) column_with<true>(t, b, j, top_h, top_f);
                else
                    column_with<false>(t, b, j, top_h, top_f);
                t.cells += static_cast<std::uint64_t>(b.h);
                if (visit_column(t, b, j, top_h, top_f)) break;
                if ((j & 1023) == 0) context.throw_if_cancelled();
            }
        }
        if (t.want_last_column)
            for (I64 i = 1; i <= b.h; ++i) {
                const auto I = static_cast<std::size_t>(i), R = static_cast<std::size_t>(from + i);
                t.last_col_h[R] = clamp(b.H[I]);
                if (!t.last_col_e.empty()) {
                    t.last_col_e[R] = clamp(b.E[I]);
                    t.last_col_f[R] = clamp(b.F[I]);
                }
            }
        return last_j;
    }

    const std::uint8_t* query_ = nullptr;
    const std::uint8_t* target_ = nullptr;
    I64 m_ = 0, n_ = 0;
    ScoringScheme scheme_;
    std::vector<std::int64_t> saved_rows_;
    std::vector<std::vector<Score>> saved_h_, saved_f_;
    const std::vector<Score>* goal_h_ = nullptr;  // the crossing row of the current goal search
    const std::vector<Score>* goal_f_ = nullptr;
    I64 orows_ = 0, ocols_ = 0;     // the current pass's overview grid
    I64 ooffset_ = 0, ototal_ = 1;  // its column binning (a slice of a wider pass)
    bool saved_full_ = true;        // the special rows span columns 0.. (not a slice)
};

}  // namespace

std::unique_ptr<PassRunner> make_cpu_pass_runner() { return std::make_unique<CpuPassRunner>(); }

}  // namespace alignscope::longpair
