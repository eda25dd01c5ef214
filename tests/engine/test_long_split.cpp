// One long-pair pass split across several runners (make_split_pass_runner),
// tested over CPU pass runners as the multi-GPU path runs over CUDA runners.
//   - explicit left edges: a pass cut into two column pieces, the second taking
//     the first's last column (H, E, F) as its left edge, gives every output of
//     the uncut pass (and dropping E breaks it: the test sees the difference);
//   - random passes (forward and reversed, local and not, every edge kind,
//     explicit top and left edges, special rows, best cell, last row and
//     column, overview, on_rows_done) on 2 and 3 members with uneven slice
//     widths, slices narrower than a row block, slices of width 1, several
//     slices per member: the same outputs as one CPU runner;
//   - a pass that is itself a column slice (columns c..n, explicit left edge,
//     overview binned as the whole row's columns), split with SM-count-like
//     and odd weights: the single runner's overview;
//   - align_long through the split runner on random DNA and protein pairs,
//     tiny and a few thousand residues, local, global and semi-global, affine:
//     the score and end of the independent reference aligner and the CIGAR of
//     the single CPU runner (re-scored to the score);
//   - checkpoint and resume through the split runner (killed after its first
//     checkpoint, resumed on the split runner with other settings or on one
//     runner, and the other way round);
//   - a failing member stops the others and its error surfaces once, naming
//     its device; a cancelled job ends with Cancelled.
#include "random_relatives.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

using I64 = std::int64_t;

// A relative (random_relatives.hpp), never empty.
std::string mutate_nonempty(std::mt19937& rng, const std::string& s, const std::string& alphabet) {
    const std::string out = mutate(rng, s, alphabet);
    return out.empty() ? std::string(1, alphabet[0]) : out;
}

const char* kDna = "ACGT";
const char* kProtein = "ARNDCQEGHILKMFPSTWYV";

ScoringScheme dna() { return ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5); }
ScoringScheme protein() { return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1); }

// A CPU runner that says it is busy with passes of `busy` rows and keeps
// special rows at multiples of `granularity` (as a GPU's strips do).
class Shaped final : public PassRunner {
public:
    Shaped(std::int64_t busy, std::int64_t granularity)
        : inner_(make_cpu_pass_runner()), busy_(busy), granularity_(granularity) {}
    void prepare(const std::uint8_t* q, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                 const ScoringScheme& s) override {
        inner_->prepare(q, m, t, n, s);
    }
    void run(std::vector<PassTask>& tasks, const JobContext& c, const PassProgress& p) override {
        for (const PassTask& t : tasks)
            if (t.special_every % granularity_ != 0) throw Error("special rows off the granularity");
        inner_->run(tasks, c, p);
    }
    const std::vector<std::int64_t>& saved_rows() const override { return inner_->saved_rows(); }
    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        inner_->read_special_row(k, h, f);
    }
    std::int64_t busy_rows() const override { return busy_; }
    std::int64_t special_row_granularity() const override { return granularity_; }
    std::string device() const override { return inner_->device(); }
    std::string kernel() const override { return inner_->kernel(); }
    std::string strategy() const override { return inner_->strategy(); }

private:
    std::unique_ptr<PassRunner> inner_;
    std::int64_t busy_, granularity_;
};

std::unique_ptr<PassRunner> split_of(int members, SplitSettings settings = {}, std::int64_t busy = 0,
                                     std::int64_t granularity = 1) {
    std::vector<std::unique_ptr<PassRunner>> list;
    for (int k = 0; k < members; ++k)
        list.push_back(busy > 0 || granularity > 1 ? std::make_unique<Shaped>(busy, granularity)
                                                   : make_cpu_pass_runner());
    return make_split_pass_runner(std::move(list), std::move(settings));
}

QString best_text(const BestCell& b) { return QString("%1 at %2,%3").arg(b.score).arg(b.i).arg(b.j); }
bool same(const BestCell& a, const BestCell& b) { return a.score == b.score && a.i == b.i && a.j == b.j; }

// A random explicit edge value: a score or "no path".
Score edge_score(std::mt19937& rng) { return rng() % 8 == 0 ? kNegInf : static_cast<Score>(rng() % 81) - 40; }

// A random pass over a random rectangle of an m x n matrix.
PassTask random_pass(std::mt19937& rng, I64 m, I64 n, bool stage1_only) {
    PassTask t;
    const I64 h = 1 + static_cast<I64>(rng() % static_cast<unsigned>(m)),
              w = 1 + static_cast<I64>(rng() % static_cast<unsigned>(n));
    t.row_begin = static_cast<I64>(rng() % static_cast<unsigned>(m - h + 1));
    t.row_end = t.row_begin + h;
    t.col_begin = static_cast<I64>(rng() % static_cast<unsigned>(n - w + 1));
    t.col_end = t.col_begin + w;
    t.reversed = !stage1_only && rng() % 3 == 0;
    t.local = rng() % 3 == 0;
    const Edge tops[] = {Edge::Zero, Edge::Gap, Edge::Closed, Edge::Explicit};
    const Edge lefts[] = {Edge::Zero, Edge::Gap, Edge::GapContinue, Edge::Closed, Edge::Explicit};
    t.top = tops[rng() % 4];
    t.left = lefts[rng() % 5];
    t.corner_open = rng() % 4 != 0;
    if (t.top == Edge::Explicit) {
        for (I64 j = 0; j <= w; ++j) {
            t.top_h.push_back(edge_score(rng));
            t.top_f.push_back(edge_score(rng));
        }
    }
    if (t.left == Edge::Explicit) {
        for (I64 i = 0; i <= h; ++i) {
            t.left_h.push_back(edge_score(rng));
            t.left_e.push_back(edge_score(rng));
            t.left_f.push_back(edge_score(rng));
        }
    }
    t.track_best = rng() % 2 == 0;
    t.want_last_row = rng() % 4 != 0;
    t.want_last_column = rng() % 2 == 0;
    t.want_last_column_state = rng() % 2 == 0;
    if (!t.reversed && rng() % 3 != 0)
        t.special_every = 1 + static_cast<I64>(rng() % static_cast<unsigned>(std::max<I64>(1, h / 2)));
    if (rng() % 3 == 0) {
        t.overview_rows = 1 + static_cast<int>(rng() % 9);
        t.overview_cols = 1 + static_cast<int>(rng() % 9);
        if (rng() % 2 == 0) {  // the pass is a column slice of a wider one: its columns binned as that one's
            t.overview_col_total = w + static_cast<I64>(rng() % static_cast<unsigned>(2 * w + 1));
            t.overview_col_offset = static_cast<I64>(rng() % static_cast<unsigned>(t.overview_col_total - w + 1));
        }
    }
    return t;
}

// What a runner reported through on_rows_done.
struct Report {
    I64 row = 0;
    std::size_t rows = 0;
    BestCell best, last_column;
    std::vector<std::int64_t> edges;  // the overview at the time
    std::vector<Score> grid;
};

// The special rows a runner kept.
struct Rows {
    std::vector<std::int64_t> at;
    std::vector<std::vector<Score>> h, f;
};
Rows rows_of(PassRunner& r) {
    Rows out;
    out.at = r.saved_rows();
    for (std::size_t k = 0; k < out.at.size(); ++k) {
        out.h.emplace_back();
        out.f.emplace_back();
        r.read_special_row(k, out.h.back(), out.f.back());
    }
    return out;
}

// Runs `task` on `runner`, collecting the reports (and checking that every row
// a report names can be read from inside the callback).
PassTask run_one(PassRunner& runner, PassTask task, std::vector<Report>* reports) {
    if (reports && task.special_every > 0)
        task.on_rows_done = [&runner, reports](const RowsDone& d) {
            Report r{d.row, d.special_rows, d.best, d.last_column, {}, {}};
            if (d.overview_row_edges) r.edges = *d.overview_row_edges;
            if (d.overview) r.grid = *d.overview;
            std::vector<Score> h, f;
            for (std::size_t k = 0; k < d.special_rows; ++k) runner.read_special_row(k, h, f);
            reports->push_back(r);
        };
    std::vector<PassTask> one(1, std::move(task));
    runner.run(one, {}, {});
    return std::move(one[0]);
}

// The overview `got` (any row blocks) against the single runner's per-row grid.
void check_overview(const PassTask& got, const PassTask& per_row, const QString& what) {
    const I64 h = got.rows();
    const std::size_t C = got.overview_row_edges.empty() ? 0 : got.overview.size() / got.overview_row_edges.size();
    QVERIFY2(per_row.overview_row_edges.size() == static_cast<std::size_t>(h), qPrintable(what + " per-row overview"));
    const std::size_t Cr = per_row.overview.size() / static_cast<std::size_t>(h);
    QVERIFY2(C == Cr, qPrintable(what + QString(" overview %1 columns, expected %2").arg(C).arg(Cr)));
    QVERIFY2(!got.overview_row_edges.empty() && got.overview_row_edges.front() == 1,
             qPrintable(what + " overview rows"));
    for (std::size_t b = 0; b < got.overview_row_edges.size(); ++b) {
        const I64 lo = got.overview_row_edges[b];
        const I64 hi = b + 1 < got.overview_row_edges.size() ? got.overview_row_edges[b + 1] : h + 1;
        QVERIFY2(lo < hi && hi <= h + 1, qPrintable(what + " overview row edges out of order"));
        for (std::size_t c = 0; c < C; ++c) {
            Score expect = kNegInf;
            for (I64 i = lo; i < hi; ++i)
                expect = std::max(expect, per_row.overview[static_cast<std::size_t>(i - 1) * C + c]);
            QVERIFY2(got.overview[b * C + c] == expect,
                     qPrintable(what + QString(" overview block %1,%2: %3, expected %4")
                                           .arg(b)
                                           .arg(c)
                                           .arg(got.overview[b * C + c])
                                           .arg(expect)));
        }
    }
}

// Every output of `task` on `tested` against one CPU runner.
void check_pass(const std::string& q, const std::string& t, const ScoringScheme& scheme, const PassTask& task,
                PassRunner& tested, const QString& what) {
    const EncodedSequence eq = encode(q, scheme.matrix, "query"), et = encode(t, scheme.matrix, "target");
    const auto m = static_cast<I64>(eq.size()), n = static_cast<I64>(et.size());
    auto single = make_cpu_pass_runner();
    single->prepare(eq.data(), m, et.data(), n, scheme);
    tested.prepare(eq.data(), m, et.data(), n, scheme);
    std::vector<Report> want_reports, got_reports;
    // Special rows where the tested runner puts them: rounded up to its granularity.
    PassTask reference_task = task;
    const std::int64_t g = tested.special_row_granularity();
    if (task.special_every > 0) reference_task.special_every = (task.special_every + g - 1) / g * g;
    const PassTask want = run_one(*single, reference_task, &want_reports);
    const Rows want_rows = rows_of(*single);
    const PassTask got = run_one(tested, task, &got_reports);
    const Rows got_rows = rows_of(tested);

    QVERIFY2(got.last_h == want.last_h && got.last_f == want.last_f, qPrintable(what + " last row"));
    QVERIFY2(got.last_col_h == want.last_col_h, qPrintable(what + " last column H"));
    QVERIFY2(got.last_col_e == want.last_col_e, qPrintable(what + " last column E"));
    QVERIFY2(got.last_col_f == want.last_col_f, qPrintable(what + " last column F"));
    QVERIFY2(same(got.best, want.best),
             qPrintable(what + " best " + best_text(got.best) + ", single " + best_text(want.best)));
    QCOMPARE(got.cells, want.cells);
    QVERIFY2(got_rows.at == want_rows.at,
             qPrintable(what +
                        QString(" %1 special rows, single %2").arg(got_rows.at.size()).arg(want_rows.at.size())));
    for (std::size_t k = 0; k < want_rows.at.size(); ++k)
        QVERIFY2(got_rows.h[k] == want_rows.h[k] && got_rows.f[k] == want_rows.f[k],
                 qPrintable(what + QString(" special row %1").arg(want_rows.at[k])));
    // Reports: ascending, each as the single runner's at the same row, and the
    // last one covers every special row.
    if (!want_rows.at.empty()) {
        QVERIFY2(!got_reports.empty() && got_reports.back().rows == want_rows.at.size(),
                 qPrintable(what + QString(" reported %1 of %2 special rows")
                                       .arg(got_reports.empty() ? 0 : got_reports.back().rows)
                                       .arg(want_rows.at.size())));
        for (std::size_t x = 0; x < got_reports.size(); ++x) {
            const Report& r = got_reports[x];
            QVERIFY2(r.rows >= 1 && r.rows <= want_reports.size() && (x == 0 || r.rows > got_reports[x - 1].rows),
                     qPrintable(what + " reports out of order"));
            const Report& s = want_reports[r.rows - 1];
            QVERIFY2(r.row == s.row, qPrintable(what + QString(" report row %1, single %2").arg(r.row).arg(s.row)));
            QVERIFY2(same(r.best, s.best),
                     qPrintable(what + " reported best " + best_text(r.best) + ", single " + best_text(s.best)));
            QVERIFY2(same(r.last_column, s.last_column),
                     qPrintable(what + " reported last-column best " + best_text(r.last_column) + ", single " +
                                best_text(s.last_column)));
            if (task.overview_rows > 0 && task.overview_cols > 0) {
                // Complete for rows 1..row: its row blocks that end there hold their final values.
                QVERIFY2(!r.edges.empty() && r.edges.front() == 1, qPrintable(what + " report without its overview"));
                for (std::size_t b = 0; b < r.edges.size(); ++b) {
                    const I64 end = b + 1 < r.edges.size() ? r.edges[b + 1] - 1 : got.rows();
                    if (end > r.row) break;
                    QVERIFY2(b < got.overview_row_edges.size() && got.overview_row_edges[b] == r.edges[b],
                             qPrintable(what + " reported overview rows differ from the final ones"));
                    const std::size_t C = got.overview.size() / got.overview_row_edges.size();
                    QVERIFY2(std::equal(r.grid.begin() + static_cast<std::ptrdiff_t>(b * C),
                                        r.grid.begin() + static_cast<std::ptrdiff_t>((b + 1) * C),
                                        got.overview.begin() + static_cast<std::ptrdiff_t>(b * C)),
                             qPrintable(what + QString(" reported overview rows %1..%2 incomplete at row %3")
                                                   .arg(r.edges[b])
                                                   .arg(end)
                                                   .arg(r.row)));
                }
            }
        }
    }
    if (task.overview_rows > 0 && task.overview_cols > 0) {
        PassTask per_row_task = task;
        per_row_task.overview_rows = static_cast<int>(task.rows());
        per_row_task.special_every = 0;
        const PassTask per_row = run_one(*single, per_row_task, nullptr);
        check_overview(got, per_row, what);
    } else {
        QVERIFY2(got.overview.empty() && got.overview_row_edges.empty(),
                 qPrintable(what + " an overview nobody asked for"));
    }
}

struct Shape {
    int members;
    SplitSettings settings;
    const char* name;
    std::int64_t busy = 0, granularity = 1;  // Shaped members
};

std::vector<Shape> shapes() {
    std::vector<Shape> list;
    list.push_back({2, {}, "2 equal"});
    list.push_back({3, {}, "3 equal"});
    list.push_back({2, {{1, 3}, 5, 1}, "2 uneven, blocks of 5"});
    list.push_back({3, {{2, 1, 1}, 1, 1}, "3 uneven, blocks of 1"});
    list.push_back({2, {{1, 1000}, 0, 1}, "2, a slice of width 1"});
    list.push_back({2, {{1, 2}, 40, 2}, "2 x 2 slices, blocks of 40"});
    list.push_back({3, {{}, 3, 3}, "3 x 3 slices, blocks of 3"});
    list.push_back({2, {}, "2 busy with 7 rows, special rows by 4", 7, 4});
    list.push_back({3, {{1, 1, 2}, 0, 2}, "3 x 2 slices busy with 40 rows, special rows by 8", 40, 8});
    return list;
}

// A runner that stops stage 1 (as a kill would) right after the pipeline's
// first checkpoint.
class KilledAfterCheckpoint final : public PassRunner {
public:
    explicit KilledAfterCheckpoint(std::unique_ptr<PassRunner> inner) : inner_(std::move(inner)) {}
    void prepare(const std::uint8_t* q, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                 const ScoringScheme& s) override {
        inner_->prepare(q, m, t, n, s);
    }
    void run(std::vector<PassTask>& tasks, const JobContext& c, const PassProgress& p) override {
        for (PassTask& task : tasks)
            if (task.on_rows_done) {
                RowsDoneCallback pipeline = task.on_rows_done;
                task.on_rows_done = [pipeline](const RowsDone& d) {
                    pipeline(d);
                    throw Cancelled();
                };
            }
        inner_->run(tasks, c, p);
    }
    const std::vector<std::int64_t>& saved_rows() const override { return inner_->saved_rows(); }
    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        inner_->read_special_row(k, h, f);
    }
    std::int64_t max_band_rows() const override { return inner_->max_band_rows(); }
    std::string device() const override { return inner_->device(); }
    std::string kernel() const override { return inner_->kernel(); }

private:
    std::unique_ptr<PassRunner> inner_;
};

// A CPU runner named like a GPU that fails (or stalls until cancelled) on its
// `fail_at`-th run call.
class Faulty final : public PassRunner {
public:
    Faulty(std::string name, int fail_at, bool stall, std::atomic<int>* cancelled_seen)
        : inner_(make_cpu_pass_runner()),
          name_(std::move(name)),
          fail_at_(fail_at),
          stall_(stall),
          seen_(cancelled_seen) {}
    void prepare(const std::uint8_t* q, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                 const ScoringScheme& s) override {
        inner_->prepare(q, m, t, n, s);
    }
    void run(std::vector<PassTask>& tasks, const JobContext& c, const PassProgress& p) override {
        if (++calls_ == fail_at_) {
            if (!stall_) throw Error("the device fell off the bus");
            const auto t0 = std::chrono::steady_clock::now();
            while (!c.cancelled()) {
                if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20)) throw Error("never cancelled");
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            if (seen_) ++*seen_;
            throw Cancelled();
        }
        inner_->run(tasks, c, p);
    }
    const std::vector<std::int64_t>& saved_rows() const override { return inner_->saved_rows(); }
    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        inner_->read_special_row(k, h, f);
    }
    std::string device() const override { return name_; }
    std::string kernel() const override { return "faulty"; }

private:
    std::unique_ptr<PassRunner> inner_;
    std::string name_;
    int fail_at_, calls_ = 0;
    bool stall_;
    std::atomic<int>* seen_;
};

AlignOptions mode_options(const QString& mode) {
    AlignOptions align;
    const QStringList parts = mode.split(':');
    align.mode = parse_mode(parts[0].toStdString());
    if (parts.size() > 1) align.free_ends = FreeEndGaps::parse(parts[1].toStdString());
    return align;
}

}  // namespace

class TestLongSplit : public QObject {
    Q_OBJECT

private slots:
    // The primitive under the split: a pass cut at column b with the first
    // piece's last column as the second's left edge.
    void explicit_left_edge() {
        std::mt19937 rng(11);
        int e_mattered = 0;
        for (int round = 0; round < 300; ++round) {
            const bool prot = round % 2;
            const ScoringScheme scheme = prot ? protein() : dna();
            const std::string alphabet = prot ? kProtein : kDna;
            const std::string q = random_residues(rng, alphabet, 2 + rng() % 40);
            const std::string t =
                round % 3 ? mutate_nonempty(rng, q, alphabet) : random_residues(rng, alphabet, 2 + rng() % 40);
            const EncodedSequence eq = encode(q, scheme.matrix, "query"), et = encode(t, scheme.matrix, "target");
            const auto m = static_cast<I64>(eq.size()), n = static_cast<I64>(et.size());
            if (n < 2) continue;
            PassTask whole = random_pass(rng, m, n, false);
            if (whole.cols() < 2) continue;
            whole.special_every = 0;
            whole.overview_rows = 0;
            whole.want_last_row = true;
            whole.want_last_column = true;
            whole.want_last_column_state = true;
            auto runner = make_cpu_pass_runner();
            runner->prepare(eq.data(), m, et.data(), n, scheme);
            const PassTask want = run_one(*runner, whole, nullptr);
            const I64 w = whole.cols(), cut = 1 + static_cast<I64>(rng() % static_cast<unsigned>(w - 1));
            PassTask first = whole, second = whole;
            if (!whole.reversed) {
                first.col_end = whole.col_begin + cut;
                second.col_begin = first.col_end;
            } else {
                first.col_begin = whole.col_end - cut;
                second.col_end = first.col_begin;
            }
            if (whole.top == Edge::Explicit) {
                first.top_h.resize(static_cast<std::size_t>(cut + 1));
                first.top_f.resize(static_cast<std::size_t>(cut + 1));
            }
            first.want_last_column = true;
            const PassTask a = run_one(*runner, first, nullptr);
            // The second piece's top edge: the whole pass's row 0 over its columns.
            second.top = Edge::Explicit;
            second.top_h.clear();
            second.top_f.clear();
            for (I64 j = cut; j <= w; ++j) {
                second.top_h.push_back(static_cast<Score>(
                    std::max<I64>(top_value(whole, j, scheme.gap_open, scheme.gap_extend), kNegInf)));
                second.top_f.push_back(static_cast<Score>(std::max<I64>(top_f_value(whole, j), kNegInf)));
            }
            second.left = Edge::Explicit;
            second.left_h = a.last_col_h;
            second.left_e = a.last_col_e;
            second.left_f = a.last_col_f;
            const PassTask b = run_one(*runner, second, nullptr);
            const QString what = QString("round %1 (%2x%3 cut at %4%5)")
                                     .arg(round)
                                     .arg(whole.rows())
                                     .arg(w)
                                     .arg(cut)
                                     .arg(whole.reversed ? ", reversed" : "");
            // Row: the first piece's columns 0..cut, then the second's 1..
            std::vector<Score> row_h(a.last_h), row_f(a.last_f);
            row_h.insert(row_h.end(), b.last_h.begin() + 1, b.last_h.end());
            row_f.insert(row_f.end(), b.last_f.begin() + 1, b.last_f.end());
            QVERIFY2(row_h == want.last_h && row_f == want.last_f, qPrintable(what + " last row"));
            QVERIFY2(b.last_col_h == want.last_col_h && b.last_col_e == want.last_col_e &&
                         b.last_col_f == want.last_col_f,
                     qPrintable(what + " last column"));
            // Column 0 of the second piece is the first's last column.
            QCOMPARE(b.last_h.front(), a.last_h.back());
            QCOMPARE(b.last_f.front(), a.last_f.back());
            if (whole.track_best) {
                BestCell merged = a.best;
                BestCell shifted = b.best;
                if (shifted.score > kNegInf) shifted.j += cut;
                if (better_cell(shifted, merged)) merged = shifted;
                QVERIFY2(same(merged, want.best),
                         qPrintable(what + " best " + best_text(merged) + ", whole " + best_text(want.best)));
            }
            // Without E the horizontal gaps that cross the cut are lost: the test can tell.
            PassTask no_e = second;
            std::fill(no_e.left_e.begin(), no_e.left_e.end(), kNegInf);
            const PassTask c = run_one(*runner, no_e, nullptr);
            if (c.last_h != b.last_h || c.last_col_h != b.last_col_h) ++e_mattered;
        }
        QVERIFY2(e_mattered > 20,
                 qPrintable(QString("E of the left edge changed the result in only %1 rounds").arg(e_mattered)));
    }

    void random_passes_data() {
        QTest::addColumn<int>("shape");
        const auto list = shapes();
        for (std::size_t k = 0; k < list.size(); ++k) QTest::addRow("%s", list[k].name) << static_cast<int>(k);
    }
    void random_passes() {
        QFETCH(int, shape);
        const Shape sh = shapes()[static_cast<std::size_t>(shape)];
        std::mt19937 rng(100 + static_cast<unsigned>(shape));
        for (int round = 0; round < 80; ++round) {
            const bool prot = round % 2;
            const ScoringScheme scheme = prot ? protein() : dna();
            const std::string alphabet = prot ? kProtein : kDna;
            const std::size_t len = round < 40 ? 1 + rng() % 12 : 20 + rng() % 120;
            const std::string q = random_residues(rng, alphabet, len);
            const std::string t =
                round % 3 ? mutate_nonempty(rng, q, alphabet) : random_residues(rng, alphabet, 1 + rng() % 120);
            const EncodedSequence eq = encode(q, scheme.matrix, "query"), et = encode(t, scheme.matrix, "target");
            const PassTask task =
                random_pass(rng, static_cast<I64>(eq.size()), static_cast<I64>(et.size()), round % 4 == 0);
            auto split = split_of(sh.members, sh.settings, sh.busy, sh.granularity);
            check_pass(q, t, scheme, task, *split,
                       QString("%1 round %2 %3x%4 of %5x%6")
                           .arg(sh.name)
                           .arg(round)
                           .arg(task.rows())
                           .arg(task.cols())
                           .arg(q.size())
                           .arg(t.size()));
            if (QTest::currentTestFailed()) return;
        }
    }

    // A stage-1 pass that is itself a column slice, columns c..n (the
    // self-test's explicit-left check, as a GPU group runs it): its left edge
    // the last column of a pass over 0..c, its overview binned as the whole
    // row's columns (overview_col_offset c of n). The split must bin each of
    // its slices as the whole row too, whatever the slice widths, and also
    // when the grid is wider than the pass.
    void offset_overview() {
        std::mt19937 rng(29);
        auto list = shapes();
        list.push_back({2, {{132, 114}, 0, 1}, "2 weighted by SM count (132, 114)"});
        list.push_back({2, {{132, 114}, 0, 3}, "2 x 3 slices weighted by SM count (132, 114)"});
        list.push_back({3, {{7, 2, 5}, 0, 1}, "3 odd weights"});
        for (int round = 0; round < 24; ++round) {
            const Shape& sh = list[static_cast<std::size_t>(round) % list.size()];
            const bool prot = round % 2;
            const ScoringScheme scheme = prot ? protein() : dna();
            const std::string alphabet = prot ? kProtein : kDna;
            const std::string q = random_residues(rng, alphabet, 150 + rng() % 250);
            const std::string t = mutate_nonempty(rng, q, alphabet);
            const EncodedSequence eq = encode(q, scheme.matrix, "query"), et = encode(t, scheme.matrix, "target");
            const auto m = static_cast<I64>(eq.size()), n = static_cast<I64>(et.size());
            const I64 r = round % 3 ? static_cast<I64>(rng() % static_cast<unsigned>(m - 1)) : 0;
            const I64 c = 1 + static_cast<I64>(rng() % static_cast<unsigned>(n - 1));
            const bool local = round % 4 == 1;
            PassTask whole;  // stage 1 from row r, every column
            whole.row_begin = r;
            whole.row_end = m;
            whole.col_end = n;
            whole.local = local;
            whole.top = whole.left = local ? Edge::Zero : Edge::Gap;
            auto cpu = make_cpu_pass_runner();
            cpu->prepare(eq.data(), m, et.data(), n, scheme);
            if (r > 0) {  // rows 0..r as the top edge
                PassTask above = whole;
                above.row_begin = 0;
                above.row_end = r;
                above.want_last_row = true;
                const PassTask done = run_one(*cpu, above, nullptr);
                whole.top = Edge::Explicit;
                whole.top_h = done.last_h;
                whole.top_f = done.last_f;
                if (whole.left == Edge::Gap) whole.left = Edge::GapContinue;
            }
            PassTask first = whole;  // columns 0..c: the left edge
            first.col_end = c;
            if (whole.top == Edge::Explicit) {
                first.top_h.resize(static_cast<std::size_t>(c + 1));
                first.top_f.resize(static_cast<std::size_t>(c + 1));
            }
            first.want_last_column = true;
            first.want_last_column_state = true;
            const PassTask left = run_one(*cpu, first, nullptr);
            PassTask slice = whole;
            slice.col_begin = c;
            slice.top = Edge::Explicit;
            slice.top_h.clear();
            slice.top_f.clear();
            for (I64 j = c; j <= n; ++j) {
                slice.top_h.push_back(static_cast<Score>(
                    std::max<I64>(top_value(whole, j, scheme.gap_open, scheme.gap_extend), kNegInf)));
                slice.top_f.push_back(static_cast<Score>(std::max<I64>(top_f_value(whole, j), kNegInf)));
            }
            slice.left = Edge::Explicit;
            slice.left_h = left.last_col_h;
            slice.left_e = left.last_col_e;
            slice.left_f = left.last_col_f;
            slice.track_best = local;
            slice.want_last_row = true;
            slice.want_last_column = true;
            slice.want_last_column_state = true;
            slice.special_every = std::max<I64>(1, (m - r) / 4);
            slice.overview_rows = static_cast<int>(std::min<I64>(m - r, 24));
            // Narrower and wider than the pass's columns.
            slice.overview_cols = round % 3 == 2 ? static_cast<int>(n - c + 1 + static_cast<I64>(rng() % 20)) : 16;
            slice.overview_col_offset = c;
            slice.overview_col_total = n;
            auto split = split_of(sh.members, sh.settings, sh.busy, sh.granularity);
            check_pass(q, t, scheme, slice, *split,
                       QString("%1 round %2 %3x%4, rows %5.., columns %6.., overview %7 columns")
                           .arg(sh.name)
                           .arg(round)
                           .arg(m)
                           .arg(n)
                           .arg(r)
                           .arg(c)
                           .arg(slice.overview_cols));
            if (QTest::currentTestFailed()) return;
        }
    }

    // Stage 1 as align_long sets it up, a few thousand residues a side.
    void stage1_pass() {
        std::mt19937 rng(5);
        const std::string q = random_residues(rng, kDna, 2500);
        const std::string t = mutate_nonempty(rng, q, kDna);
        const EncodedSequence eq = encode(q, dna().matrix, "query");
        for (int local = 0; local < 2; ++local) {
            PassTask p;
            p.row_end = static_cast<I64>(eq.size());
            p.col_end = static_cast<I64>(t.size());
            p.local = local;
            p.top = p.left = local ? Edge::Zero : Edge::Gap;
            p.track_best = local;
            p.want_last_row = true;
            p.want_last_column = true;
            p.want_last_column_state = local;
            p.special_every = 97;
            p.overview_rows = 40;
            p.overview_cols = 33;
            auto split = split_of(3, {{1, 2, 1}, 300, 1});
            check_pass(q, t, dna(), p, *split, local ? "stage 1 local" : "stage 1 global");
        }
    }

    void align_long_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("prot");
        for (const char* mode :
             {"local", "global", "semiglobal", "semiglobal:qb,qe", "semiglobal:tb,te", "semiglobal:qb,te"}) {
            QTest::addRow("%s dna", mode) << mode << false;
            QTest::addRow("%s protein", mode) << mode << true;
        }
    }
    void align_long() {
        QFETCH(QString, mode);
        QFETCH(bool, prot);
        const ScoringScheme scheme = prot ? protein() : dna();
        const std::string alphabet = prot ? kProtein : kDna;
        const AlignOptions align = mode_options(mode);
        std::mt19937 rng(static_cast<unsigned>(qHash(mode)) + (prot ? 1 : 0));
        const auto list = shapes();
        for (int round = 0; round < 16; ++round) {
            const bool big = round >= 13;
            const std::size_t len = big ? 1500 + rng() % 1500 : 1 + rng() % (round < 6 ? 10 : 80);
            std::string q = random_residues(rng, alphabet, len);
            std::string t = round % 4 == 3 ? random_residues(rng, alphabet, 1 + rng() % (big ? 2500 : 80))
                                           : mutate_nonempty(rng, q, alphabet);
            if (round % 2) std::swap(q, t);
            LongPairOptions o;
            o.align = align;
            o.min_band_rows = big ? 150 : 2;
            o.base_rows = big ? 16 : 2;
            o.base_cells = big ? 2048 : 8;
            o.threads = 2;
            o.overview_size = round % 3 == 0 ? 16 : 0;
            const Shape& sh = list[static_cast<std::size_t>(round) % list.size()];
            const QString what = QString("%1 %2 round %3 (%4) %5x%6")
                                     .arg(mode, prot ? "protein" : "dna")
                                     .arg(round)
                                     .arg(sh.name)
                                     .arg(q.size())
                                     .arg(t.size());
            const Alignment ref = align_reference(q, t, scheme, align);
            auto single = make_cpu_pass_runner();
            LongPairStats single_stats, split_stats;
            const Alignment one = longpair::align_long(q, t, scheme, o, *single, {}, &single_stats);
            auto split = split_of(sh.members, sh.settings, sh.busy, sh.granularity);
            const Alignment got = longpair::align_long(q, t, scheme, o, *split, {}, &split_stats);
            QVERIFY2(got.score == ref.score && got.query_end == ref.query_end && got.target_end == ref.target_end,
                     qPrintable(what + QString(": score %1 end %2,%3; reference %4 end %5,%6")
                                           .arg(got.score)
                                           .arg(got.query_end)
                                           .arg(got.target_end)
                                           .arg(ref.score)
                                           .arg(ref.query_end)
                                           .arg(ref.target_end)));
            // With the same special rows, the same crossings and so the same alignment.
            if (sh.granularity == 1)
                QVERIFY2(got.query_begin == one.query_begin && got.target_begin == one.target_begin &&
                             got.cigar == one.cigar,
                         qPrintable(what + " differs from the single runner's alignment"));
            if (!(align.mode == AlignmentMode::Local && ref.score == 0))
                QCOMPARE(rescore(got.cigar, q, t, got.query_begin, got.target_begin, scheme), got.score);
            if (sh.granularity == 1) QCOMPARE(split_stats.special_rows, single_stats.special_rows);
            QCOMPARE(split_stats.stage_cells[0], single_stats.stage_cells[0]);
            QCOMPARE(split_stats.overview.row_edges.empty(), single_stats.overview.row_edges.empty());
            QCOMPARE(got.device, std::string(sh.members == 2 ? "cpu-ref+cpu-ref" : "cpu-ref+cpu-ref+cpu-ref"));
            // The members' kernel in the grammar, with the job's mode and gap
            // model; the devices field says it was split.
            QCOMPARE(got.kernel, KernelName({align.mode, scheme.linear(), "columns", 0, KernelWidth::S32}).format());
            QCOMPARE(split_stats.strategy, std::string("cpu-passes"));
        }
    }

    // Killed after the first checkpoint, resumed elsewhere: the reference's result.
    void checkpoint_resume() {
        std::mt19937 rng(77);
        const char* modes[] = {"local", "global", "semiglobal:tb,te"};
        for (int round = 0; round < 3; ++round) {
            const AlignOptions align = mode_options(modes[round]);
            const std::string q = random_residues(rng, kDna, 1500 + rng() % 500);
            const std::string t = mutate_nonempty(rng, q, kDna);
            const Alignment ref = align_reference(q, t, dna(), align);
            struct Leg {
                const char* name;
                std::function<std::unique_ptr<PassRunner>()> killed, resumed;
            };
            const Leg legs[] = {
                {"split -> split",
                 [] {
                     return split_of(2, {{}, 100, 1});
                 },
                 [] {
                     return split_of(3, {{1, 2, 3}, 50, 2});
                 }},
                {"split -> single",
                 [] {
                     return split_of(3, {{}, 0, 1});
                 },
                 [] { return make_cpu_pass_runner(); }},
                {"single -> split", [] { return make_cpu_pass_runner(); },
                 [] {
                     return split_of(2, {{2, 1}, 0, 1});
                 }},
            };
            for (const Leg& leg : legs) {
                QTemporaryDir dir;
                QVERIFY(dir.isValid());
                LongPairOptions o;
                o.align = align;
                o.min_band_rows = 100;
                o.base_rows = 16;
                o.base_cells = 2048;
                o.threads = 2;
                o.checkpoint_dir = (dir.path() + "/ckpt").toStdString();
                o.checkpoint_every = 0;
                o.overview_size = 12;
                const QString what = QString("%1 %2").arg(modes[round], leg.name);
                bool stopped = false;
                try {
                    KilledAfterCheckpoint killed(leg.killed());
                    longpair::align_long(q, t, dna(), o, killed);
                } catch (const Cancelled&) {
                    stopped = true;
                }
                QVERIFY2(stopped, qPrintable(what + ": the killed run was not stopped"));
                o.resume = true;
                o.checkpoint_every = 3600;  // no more checkpoints (each is synced to disk: slow)
                auto runner = leg.resumed();
                LongPairStats stats;
                const Alignment got = longpair::align_long(q, t, dna(), o, *runner, {}, &stats);
                QVERIFY2(got.score == ref.score && got.query_end == ref.query_end && got.target_end == ref.target_end,
                         qPrintable(what + QString(": score %1 end %2,%3; reference %4 end %5,%6")
                                               .arg(got.score)
                                               .arg(got.query_end)
                                               .arg(got.target_end)
                                               .arg(ref.score)
                                               .arg(ref.query_end)
                                               .arg(ref.target_end)));
                QCOMPARE(rescore(got.cigar, q, t, got.query_begin, got.target_begin, dna()), got.score);
                const auto m = static_cast<I64>(q.size());
                QVERIFY2(stats.resumed_from_row > 0 && stats.resumed_from_row < m,
                         qPrintable(what + QString(": resumed from row %1").arg(stats.resumed_from_row)));
                QCOMPARE(stats.stage_cells[0], static_cast<std::uint64_t>(m - stats.resumed_from_row) * t.size());
                QVERIFY(!stats.overview.empty());
            }
        }
    }

    // A member that fails stops the others; its error comes once, naming it.
    void member_failure() {
        std::mt19937 rng(3);
        const std::string q = random_residues(rng, kDna, 600);
        const std::string t = mutate_nonempty(rng, q, kDna);
        for (int failing = 0; failing < 3; ++failing) {
            std::atomic<int> cancelled_seen{0};
            std::vector<std::unique_ptr<PassRunner>> list;
            for (int k = 0; k < 3; ++k) {
                // The failing member fails at its 3rd sub-pass; the others stall
                // in theirs until cancelled.
                const bool fails = k == failing;
                list.push_back(
                    std::make_unique<Faulty>("gpu:" + std::to_string(k), fails ? 3 : 4, !fails, &cancelled_seen));
            }
            auto split = make_split_pass_runner(std::move(list), {{}, 40, 1});
            LongPairOptions o;
            o.align.mode = AlignmentMode::Local;
            o.min_band_rows = 40;
            const auto t0 = std::chrono::steady_clock::now();
            try {
                longpair::align_long(q, t, dna(), o, *split);
                QFAIL("no error");
            } catch (const Cancelled&) {
                QFAIL("a member's error came out as a cancellation");
            } catch (const Error& e) {
                const std::string what = e.what();
                QVERIFY2(what == "gpu:" + std::to_string(failing) + ": the device fell off the bus", what.c_str());
            }
            QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
        }
        // The user cancels: Cancelled, promptly.
        CancellationToken token;
        JobContext context;
        context.cancel = &token;
        context.progress = [&](const Progress& p) {
            if (p.cells_done > 0) token.cancel();
        };
        auto split = split_of(2, {{}, 20, 1});
        LongPairOptions o;
        o.align.mode = AlignmentMode::Global;
        bool cancelled = false;
        try {
            longpair::align_long(random_residues(rng, kDna, 3000), random_residues(rng, kDna, 3000), dna(), o, *split,
                                 context);
        } catch (const Cancelled&) {
            cancelled = true;
        }
        QVERIFY(cancelled);
    }

    void bad_settings() {
        auto two = [] {
            std::vector<std::unique_ptr<PassRunner>> list;
            list.push_back(make_cpu_pass_runner());
            list.push_back(make_cpu_pass_runner());
            return list;
        };
        QVERIFY_THROWS_EXCEPTION(Error, make_split_pass_runner({}, {}));
        QVERIFY_THROWS_EXCEPTION(Error, make_split_pass_runner(two(), {{1.0}, 0, 1}));
        QVERIFY_THROWS_EXCEPTION(Error, make_split_pass_runner(two(), {{1.0, 0.0}, 0, 1}));
        QVERIFY_THROWS_EXCEPTION(Error, make_split_pass_runner(two(), {{}, 0, 0}));
    }
};

QTEST_GUILESS_MAIN(TestLongSplit)
#include "test_long_split.moc"
