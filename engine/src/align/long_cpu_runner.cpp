// The scalar PassRunner: every pass column by column (so a goal search meets
// its candidates in the order it must report them and can stop at the first
// column that has one), O(rows) memory per pass, special rows on the heap.
// Written to be obviously right rather than fast: it is what the CUDA runner
// is tested against.
#include <alignscope/align/long_pair.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <limits>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;

Score clamp(I64 v) { return static_cast<Score>(std::max<I64>(v, kNegInf)); }

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
    }

    void run(std::vector<PassTask>& tasks, const JobContext& context, const PassProgress& progress) override {
        std::uint64_t total = 0, done = 0;
        for (const PassTask& t : tasks) total += static_cast<std::uint64_t>(t.rows()) * static_cast<std::uint64_t>(t.cols());
        for (PassTask& t : tasks) {
            context.throw_if_cancelled();
            run_one(t, context);
            done += t.cells;
            if (progress) progress(done, total);
        }
    }

    const std::vector<std::int64_t>& saved_rows() const override { return saved_rows_; }
    std::string device() const override { return "cpu-ref"; }
    std::string kernel() const override { return "long_scalar_columns"; }

private:
    void run_one(PassTask& t, const JobContext& context) {
        const I64 h = t.rows(), w = t.cols();
        if (h < 0 || w < 0 || t.row_begin < 0 || t.col_begin < 0 || t.row_end > m_ || t.col_end > n_)
            throw Error("internal error: long-pair pass outside the matrix");
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        const int size = scheme_.matrix.size();
        const std::vector<int>& scores = scheme_.matrix.scores();
        auto row_code = [&](I64 i) { return t.reversed ? query_[t.row_end - i] : query_[t.row_begin + i - 1]; };
        auto col_code = [&](I64 j) { return t.reversed ? target_[t.col_end - j] : target_[t.col_begin + j - 1]; };

        std::vector<I64> H(static_cast<std::size_t>(h + 1)), E(static_cast<std::size_t>(h + 1), kNegInf),
            F(static_cast<std::size_t>(h + 1), kNegInf);
        // Column 0.
        H[0] = t.corner_open ? 0 : kNegInf;
        for (I64 i = 1; i <= h; ++i) {
            H[i] = edge_value(t.left, i, open, extend);
            F[i] = (t.left == Edge::Gap || t.left == Edge::GapContinue) ? H[i] : kNegInf;
        }

        // Special rows: forward stage-1 passes only.
        std::vector<I64> keep;
        if (t.special_every > 0) {
            saved_rows_.clear();
            saved_h_.clear();
            saved_f_.clear();
            for (I64 r = t.special_every; r < h; r += t.special_every) keep.push_back(r);
            saved_rows_.assign(keep.begin(), keep.end());
            for (std::int64_t& r : saved_rows_) r += t.row_begin;
            saved_h_.assign(keep.size(), std::vector<Score>(static_cast<std::size_t>(w + 1)));
            saved_f_.assign(keep.size(), std::vector<Score>(static_cast<std::size_t>(w + 1)));
        }
        const std::vector<Score>* goal_h = nullptr;
        const std::vector<Score>* goal_f = nullptr;
        if (t.goal_search && t.crossing_row >= 0) {
            if (static_cast<std::size_t>(t.crossing_row) >= saved_h_.size())
                throw Error("internal error: long-pair goal search names an unknown special row");
            goal_h = &saved_h_[static_cast<std::size_t>(t.crossing_row)];
            goal_f = &saved_f_[static_cast<std::size_t>(t.crossing_row)];
        }
        auto forward_row = [&](I64 c, bool f) -> I64 {  // crossing row's value at forward column c
            if (goal_h) return f ? (*goal_f)[static_cast<std::size_t>(c)] : (*goal_h)[static_cast<std::size_t>(c)];
            if (f) return kNegInf;
            return c == 0 ? 0 : edge_value(t.crossing_edge, c, open, extend);
        };

        if (t.want_last_row) {
            t.last_h.assign(static_cast<std::size_t>(w + 1), kNegInf);
            t.last_f.assign(static_cast<std::size_t>(w + 1), kNegInf);
        }
        t.best = BestCell{};
        t.hit = GoalHit{};
        // Overview: uniform row blocks.
        const I64 orows = t.overview_rows > 0 && t.overview_cols > 0 ? std::min<I64>(t.overview_rows, h) : 0;
        const I64 ocols = orows > 0 ? std::min<I64>(t.overview_cols, w) : 0;
        t.overview.assign(static_cast<std::size_t>(orows * ocols), kNegInf);
        t.overview_row_edges.clear();
        for (I64 b = 0; b < orows; ++b) t.overview_row_edges.push_back(b * h / orows + 1);
        t.cells = 0;
        const I64 refund = open - extend;

        auto visit_column = [&](I64 j) -> bool {  // outputs of column j; true when the goal search may stop
            for (std::size_t k = 0; k < keep.size(); ++k) {
                saved_h_[k][static_cast<std::size_t>(j)] = clamp(H[static_cast<std::size_t>(keep[k])]);
                saved_f_[k][static_cast<std::size_t>(j)] = clamp(F[static_cast<std::size_t>(keep[k])]);
            }
            if (t.want_last_row) {
                t.last_h[static_cast<std::size_t>(j)] = clamp(H[static_cast<std::size_t>(h)]);
                t.last_f[static_cast<std::size_t>(j)] = clamp(F[static_cast<std::size_t>(h)]);
            }
            if (!t.goal_search) return false;
            for (I64 i = 0; i <= h; ++i) {
                GoalHit::Kind kind;
                if (t.goal_any_cell && H[i] == t.goal) {
                    kind = GoalHit::Kind::Begin;
                } else if (i == h) {
                    const I64 c = t.col_end - j;
                    const I64 fh = forward_row(c, false), ff = forward_row(c, true);
                    if (fh > kNegInf / 2 && H[i] > kNegInf / 2 && fh + H[i] == t.goal) kind = GoalHit::Kind::CrossH;
                    else if (ff > kNegInf / 2 && F[i] > kNegInf / 2 && ff + F[i] + refund == t.goal)
                        kind = GoalHit::Kind::CrossF;
                    else continue;
                } else {
                    continue;
                }
                t.hit.found = true;
                t.hit.kind = kind;
                t.hit.i = i;
                t.hit.j = j;
                if (i == h) {
                    const I64 c = t.col_end - j;
                    t.hit.forward_h = clamp(forward_row(c, false));
                    t.hit.forward_f = clamp(forward_row(c, true));
                }
                return true;
            }
            return false;
        };

        if (!visit_column(0)) {
            for (I64 j = 1; j <= w; ++j) {
                const int b = col_code(j);
                I64 diag = H[0];
                H[0] = edge_value(t.top, j, open, extend);
                F[0] = kNegInf;
                for (I64 i = 1; i <= h; ++i) {
                    const I64 e = std::max(E[i] - extend, H[i] - open);
                    const I64 f = std::max(F[i - 1] - extend, H[i - 1] - open);
                    I64 v = diag + scores[static_cast<std::size_t>(row_code(i) * size + b)];
                    v = std::max({v, e, f});
                    if (t.local) v = std::max<I64>(v, 0);
                    v = std::max<I64>(v, kNegInf);
                    diag = H[i];
                    H[i] = v;
                    E[i] = std::max<I64>(e, kNegInf);
                    F[i] = std::max<I64>(f, kNegInf);
                    if (t.track_best && v > t.best.score) t.best = {static_cast<Score>(v), i, j};
                    if (orows > 0) {
                        // Row block: the last edge <= i.
                        const I64 rb = static_cast<I64>(std::upper_bound(t.overview_row_edges.begin(), t.overview_row_edges.end(), i) -
                                                        t.overview_row_edges.begin()) - 1;
                        Score& cell = t.overview[static_cast<std::size_t>(rb * ocols + (j - 1) * ocols / w)];
                        cell = std::max(cell, clamp(v));
                    }
                }
                t.cells += static_cast<std::uint64_t>(h);
                if (visit_column(j)) break;
                if ((j & 1023) == 0) context.throw_if_cancelled();
            }
        }
        if (t.want_last_column) {
            t.last_col_h.resize(static_cast<std::size_t>(h + 1));
            for (I64 i = 0; i <= h; ++i) t.last_col_h[static_cast<std::size_t>(i)] = clamp(H[static_cast<std::size_t>(i)]);
        }
    }

    const std::uint8_t* query_ = nullptr;
    const std::uint8_t* target_ = nullptr;
    I64 m_ = 0, n_ = 0;
    ScoringScheme scheme_;
    std::vector<std::int64_t> saved_rows_;
    std::vector<std::vector<Score>> saved_h_, saved_f_;
};

}  // namespace

std::unique_ptr<PassRunner> make_cpu_pass_runner() { return std::make_unique<CpuPassRunner>(); }

}  // namespace alignscope::longpair
