// The split runner's streamed boundaries (PassRunner::link_to, SplitSettings::
// device_links), over CPU pass runners that link as GPU runners do:
//   - the linked plan (members busy with many rows, as GPUs are): row blocks
//     at least 8 x busy rows or the whole pass, multiples of the special
//     rows' spacing, at least the slices asked for, every column in a slice;
//   - random stage-1 passes (every edge kind, special rows, best cell, last
//     row and column with E and F, reports) split over 2 and 3 linked members
//     and over the same members without links: every output equal to one CPU
//     runner's;
//   - a member that fails while the next slice waits on its link: the error
//     surfaces once, naming its device, and nothing hangs.
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/long_split_runner.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <random>
#include <string>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

using I64 = std::int64_t;

// A CPU runner that says it is busy with `busy` rows and keeps special rows at
// multiples of `granularity` (as a GPU's strips do), links to the next one
// as CPU runners do, and fails on its `fail_at`-th run call (0: never).
class Linking final : public PassRunner {
public:
    Linking(I64 busy, I64 granularity, int fail_at = 0, std::string name = "cpu-ref")
        : inner_(make_cpu_pass_runner()), busy_(busy), granularity_(granularity), fail_at_(fail_at), name_(name) {}
    void prepare(const std::uint8_t* q, I64 m, const std::uint8_t* t, I64 n, const ScoringScheme& s) override {
        inner_->prepare(q, m, t, n, s);
    }
    void run(std::vector<PassTask>& tasks, const JobContext& c, const PassProgress& p) override {
        if (++calls_ == fail_at_) throw Error("the device fell off the bus");
        for (const PassTask& t : tasks) {
            if (t.special_every % granularity_ != 0) throw Error("special rows off the granularity");
            if (t.left_link) ++linked_in_;
        }
        inner_->run(tasks, c, p);
    }
    std::shared_ptr<BoundaryLink> link_to(PassRunner& next, I64 rows) override {
        auto* other = dynamic_cast<Linking*>(&next);
        return other ? inner_->link_to(*other->inner_, rows) : nullptr;
    }
    const std::vector<std::int64_t>& saved_rows() const override { return inner_->saved_rows(); }
    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        inner_->read_special_row(k, h, f);
    }
    I64 busy_rows() const override { return busy_; }
    I64 special_row_granularity() const override { return granularity_; }
    std::string device() const override { return name_; }
    std::string kernel() const override { return inner_->kernel(); }
    int linked_in() const { return linked_in_; }

private:
    std::unique_ptr<PassRunner> inner_;
    I64 busy_, granularity_;
    int fail_at_, calls_ = 0, linked_in_ = 0;
    std::string name_;
};

Score edge_score(std::mt19937& rng) { return rng() % 8 == 0 ? kNegInf : static_cast<Score>(rng() % 81) - 40; }

// A random stage-1 pass (forward, special rows maybe) over an m x n matrix.
PassTask random_stage1(std::mt19937& rng, I64 m, I64 n) {
    PassTask t;
    const I64 h = 1 + static_cast<I64>(rng() % static_cast<unsigned>(m)),
              w = 2 + static_cast<I64>(rng() % static_cast<unsigned>(n - 1));
    t.row_begin = static_cast<I64>(rng() % static_cast<unsigned>(m - h + 1));
    t.row_end = t.row_begin + h;
    t.col_begin = static_cast<I64>(rng() % static_cast<unsigned>(n - w + 1));
    t.col_end = t.col_begin + w;
    t.local = rng() % 2 == 0;
    const Edge tops[] = {Edge::Zero, Edge::Gap, Edge::Closed, Edge::Explicit};
    const Edge lefts[] = {Edge::Zero, Edge::Gap, Edge::GapContinue, Edge::Closed, Edge::Explicit};
    t.top = tops[rng() % 4];
    t.left = lefts[rng() % 5];
    t.corner_open = rng() % 4 != 0;
    for (I64 j = 0; t.top == Edge::Explicit && j <= w; ++j) {
        t.top_h.push_back(edge_score(rng));
        t.top_f.push_back(edge_score(rng));
    }
    for (I64 i = 0; t.left == Edge::Explicit && i <= h; ++i) {
        t.left_h.push_back(edge_score(rng));
        t.left_e.push_back(edge_score(rng));
        t.left_f.push_back(edge_score(rng));
    }
    t.track_best = rng() % 2 == 0;
    t.want_last_row = rng() % 4 != 0;
    t.want_last_column = rng() % 2 == 0;
    t.want_last_column_state = rng() % 2 == 0;
    if (rng() % 3 != 0) t.special_every = 1 + static_cast<I64>(rng() % static_cast<unsigned>(std::max<I64>(1, h / 3)));
    return t;
}

struct Outcome {
    PassTask task;
    std::vector<std::int64_t> rows;
    std::vector<std::vector<Score>> h, f;
    std::size_t reported = 0;  // special rows covered by the last report
};

Outcome run_pass(PassRunner& runner, PassTask task) {
    Outcome out;
    task.on_rows_done = [&out](const RowsDone& d) { out.reported = d.special_rows; };
    std::vector<PassTask> one(1, std::move(task));
    runner.run(one, {}, {});
    out.task = std::move(one[0]);
    out.rows = runner.saved_rows();
    for (std::size_t k = 0; k < out.rows.size(); ++k) {
        out.h.emplace_back();
        out.f.emplace_back();
        runner.read_special_row(k, out.h.back(), out.f.back());
    }
    return out;
}

std::vector<std::uint8_t> random_codes(std::mt19937& rng, I64 length) {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(length));
    for (auto& c : codes) c = static_cast<std::uint8_t>(rng() % 4);
    return codes;
}

std::unique_ptr<PassRunner> linked_split(int members, I64 busy, I64 granularity, bool links, int slices = 1,
                                         std::vector<Linking*>* seen = nullptr) {
    std::vector<std::unique_ptr<PassRunner>> list;
    for (int k = 0; k < members; ++k) {
        auto member = std::make_unique<Linking>(busy, granularity);
        if (seen) seen->push_back(member.get());
        list.push_back(std::move(member));
    }
    SplitSettings settings;
    settings.device_links = links;
    settings.slices_per_member = slices;
    return make_split_pass_runner(std::move(list), settings);
}

}  // namespace

class TestLongSplitLinks : public QObject {
    Q_OBJECT

private slots:
    void linked_plan() {
        SplitSettings settings;
        settings.weights = {1, 1};
        for (const I64 rows : {1, 100, 511, 5000, 100000, 1000000}) {
            for (const I64 every : {0, 512, 2048}) {
                const SplitPassPlan plan = plan_split_pass(rows, 50000, settings, every, 512, 2048, true);
                const QString what = QString("rows %1, special rows every %2").arg(rows).arg(every);
                QVERIFY2(plan.slices() >= 2 && plan.slices() % 2 == 0, qPrintable(what));
                QCOMPARE(plan.slice_edges.front(), I64{0});
                QCOMPARE(plan.slice_edges.back(), I64{50000});
                for (std::size_t s = 0; s < plan.slices(); ++s)
                    QVERIFY2(plan.slice_edges[s + 1] > plan.slice_edges[s], qPrintable(what));
                QVERIFY2(plan.blocks == 1 || plan.block_rows >= 8 * 2048, qPrintable(what + " short blocks"));
                QVERIFY2(plan.blocks == static_cast<std::size_t>((rows + plan.block_rows - 1) / plan.block_rows),
                         qPrintable(what));
                if (every > 0) QVERIFY2(plan.block_rows % every == 0, qPrintable(what + " blocks off special rows"));
            }
        }
        // More slices than asked when a slice's sweep is long against the waves:
        // a pass of 4 waves on 2 members takes several slices each.
        const SplitPassPlan tall = plan_split_pass(4 * 2048, 1000000, settings, 0, 512, 2048, true);
        QVERIFY2(tall.slices() > 2, qPrintable(QString("%1 slices").arg(tall.slices())));
        settings.slices_per_member = 20;
        QCOMPARE(plan_split_pass(4 * 2048, 1000000, settings, 0, 512, 2048, true).slices(), std::size_t{40});
    }

    void linked_passes_data() {
        QTest::addColumn<int>("members");
        QTest::addColumn<I64>("busy");
        QTest::addColumn<I64>("granularity");
        QTest::addColumn<int>("slices");
        QTest::newRow("2 linked, busy 3 rows") << 2 << I64{3} << I64{1} << 1;
        QTest::newRow("2 linked, busy 4, special rows by 2") << 2 << I64{4} << I64{2} << 1;
        QTest::newRow("3 linked, busy 2, 2 slices each") << 3 << I64{2} << I64{1} << 2;
        QTest::newRow("2 linked, not busy (CPU plan)") << 2 << I64{0} << I64{1} << 1;
    }
    void linked_passes() {
        QFETCH(int, members);
        QFETCH(I64, busy);
        QFETCH(I64, granularity);
        QFETCH(int, slices);
        std::mt19937 rng(static_cast<unsigned>(members * 1000 + busy * 10 + granularity));
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        const I64 m = 70, n = 90;
        const std::vector<std::uint8_t> q = random_codes(rng, m), t = random_codes(rng, n);
        auto single = make_cpu_pass_runner();
        std::vector<Linking*> seen;
        auto linked = linked_split(members, busy, granularity, true, slices, &seen);
        auto hosted = linked_split(members, busy, granularity, false, slices);
        for (PassRunner* r : {single.get(), linked.get(), hosted.get()}) r->prepare(q.data(), m, t.data(), n, scheme);
        for (int round = 0; round < 40; ++round) {
            PassTask task = random_stage1(rng, m, n);
            PassTask reference = task;
            if (task.special_every > 0)
                reference.special_every = (task.special_every + granularity - 1) / granularity * granularity;
            const Outcome want = run_pass(*single, reference);
            for (PassRunner* r : {linked.get(), hosted.get()}) {
                const Outcome got = run_pass(*r, task);
                const QString what = QString("round %1 %2").arg(round).arg(r == linked.get() ? "linked" : "hosted");
                QVERIFY2(got.task.last_h == want.task.last_h && got.task.last_f == want.task.last_f,
                         qPrintable(what + " last row"));
                QVERIFY2(got.task.last_col_h == want.task.last_col_h && got.task.last_col_e == want.task.last_col_e &&
                             got.task.last_col_f == want.task.last_col_f,
                         qPrintable(what + " last column"));
                QVERIFY2(got.task.best.score == want.task.best.score && got.task.best.i == want.task.best.i &&
                             got.task.best.j == want.task.best.j,
                         qPrintable(what + " best cell"));
                QCOMPARE(got.task.cells, want.task.cells);
                if (task.special_every <= 0) continue;  // a runner keeps the rows of its last pass that had some
                QVERIFY2(got.rows == want.rows && got.h == want.h && got.f == want.f,
                         qPrintable(what + " special rows"));
                QVERIFY2(got.reported == want.rows.size(), qPrintable(what + " special rows reported"));
            }
        }
        int linked_in = 0;
        for (const Linking* l : seen) linked_in += l->linked_in();
        QVERIFY2(linked_in > 0, "the linked split never streamed a boundary");
    }

    void failure_while_linked() {
        for (int fail_at = 1; fail_at <= 2; ++fail_at) {
            std::vector<std::unique_ptr<PassRunner>> list;
            list.push_back(std::make_unique<Linking>(4, 1, fail_at, "gpu:7"));
            list.push_back(std::make_unique<Linking>(4, 1));
            auto split = make_split_pass_runner(std::move(list), {});
            std::mt19937 rng(5);
            const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
            const std::vector<std::uint8_t> q = random_codes(rng, 200), t = random_codes(rng, 300);
            split->prepare(q.data(), 200, t.data(), 300, scheme);
            PassTask task;
            task.row_end = 200;
            task.col_end = 300;
            task.track_best = true;
            std::vector<PassTask> one(1, task);
            try {
                split->run(one, {}, {});
                QFAIL("a failing member went unnoticed");
            } catch (const Cancelled&) {
                QFAIL("a member's failure surfaced as a cancellation");
            } catch (const Error& e) {
                const std::string what = e.what();
                QVERIFY2(what.find("gpu:7") != std::string::npos && what.find("fell off the bus") != std::string::npos,
                         e.what());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestLongSplitLinks)
#include "test_long_split_links.moc"
