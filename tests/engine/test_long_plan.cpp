// The long-pair pipeline's host-only decisions (align/long_plan.hpp): stage
// 1's special-row spacing under the memory budget and the stage-2 band limit,
// its edges on a resume, the checkpoint schedule, the overview joined across
// a resume, the end cell's tie rule, a free column 0 in stage 2, stage 3's
// "small" rule, and the middle-row crossing (checked against the reference
// aligner on random pairs, through the scalar pass runner); and how the split
// runner cuts a pass into column slices and row blocks. No GPU needed.
#include <alignscope/align/long_plan.hpp>
#include <alignscope/align/long_split_runner.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <random>
#include <string>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

Stage1Inputs inputs(std::int64_t m, std::int64_t n) {
    Stage1Inputs in;
    in.m = m;
    in.n = n;
    in.row_bytes = static_cast<std::uint64_t>(n + 1) * 8;
    in.special_row_budget = 1ull << 30;
    in.min_band_rows = 1;
    in.device = "gpu:7";
    return in;
}

// Special rows of a pass of `rows` rows at spacing `every`: every, 2 every, ... < rows.
std::int64_t special_rows(std::int64_t rows, std::int64_t every) { return (rows - 1) / every; }

std::string random_dna(std::mt19937& rng, int length) {
    static const char letters[] = "ACGT";
    std::string s;
    for (int k = 0; k < length; ++k) s += letters[rng() % 4];
    return s;
}

}  // namespace

class TestLongPlan : public QObject {
    Q_OBJECT

private slots:
    // The spacing keeps as many special rows as the budget holds (less a
    // resumed checkpoint's), and no fewer: one row less apart would need
    // more than the budget holds.
    void special_rows_fill_the_budget_data() {
        QTest::addColumn<qint64>("rows");
        QTest::addColumn<int>("budget_rows");
        QTest::addColumn<int>("loaded");
        QTest::newRow("ten rows, 100k") << qint64(100000) << 10 << 0;
        QTest::newRow("three rows, odd") << qint64(99991) << 3 << 0;
        QTest::newRow("many rows") << qint64(5000) << 4000 << 0;
        QTest::newRow("resumed, 4 loaded") << qint64(100000) << 10 << 4;
        QTest::newRow("resumed, budget used up") << qint64(100000) << 10 << 12;
    }
    void special_rows_fill_the_budget() {
        QFETCH(qint64, rows);
        QFETCH(int, budget_rows);
        QFETCH(int, loaded);
        Stage1Inputs in = inputs(rows, 1000);
        in.special_row_budget = in.row_bytes * static_cast<std::uint64_t>(budget_rows) + in.row_bytes / 2;
        in.loaded_rows = static_cast<std::size_t>(loaded);
        const Stage1Plan plan = plan_stage1(in);
        QVERIFY(plan.runs);
        const std::int64_t every = plan.pass.special_every;
        const std::int64_t room = std::max(1, budget_rows - loaded);  // at least one row apart from the checkpoint's
        QVERIFY2(special_rows(rows, every) <= room, qPrintable(QString("every %1").arg(every)));
        if (every > 1)
            QVERIFY2(special_rows(rows, every - 1) > room || special_rows(rows, every - 1) == special_rows(rows, every),
                     qPrintable(QString("every %1 is wider than it needs").arg(every)));
    }

    void special_rows_respect_the_minimum_band() {
        Stage1Inputs in = inputs(100000, 1000);
        in.min_band_rows = 4096;
        QCOMPARE(plan_stage1(in).pass.special_every, std::int64_t{4096});
    }

    // With stage 2 to run, bands are no taller than the runner allows (here
    // the minimum band is taller); when the budget cannot hold the rows that
    // takes, the error names the device and the way out.
    void band_cap_limits_the_spacing() {
        Stage1Inputs in = inputs(100000, 1000);
        in.min_band_rows = 40000;
        in.band_cap = 30000;
        QCOMPARE(plan_stage1(in).pass.special_every, std::int64_t{30000});
        in.align.traceback = false;  // global without traceback: no stage 2, no cap
        QCOMPARE(plan_stage1(in).pass.special_every, std::int64_t{40000});
        in.align.mode = AlignmentMode::Local;  // local needs stage 2 for its begin
        QCOMPARE(plan_stage1(in).pass.special_every, std::int64_t{30000});
        in.special_row_budget = in.row_bytes * 2;  // 100000 / 30000 = 3 rows needed
        try {
            plan_stage1(in);
            QFAIL("no error for a budget below the band limit's rows");
        } catch (const Error& e) {
            const QString what = e.what();
            QVERIFY2(what.contains("gpu:7") && what.contains("--special-rows-mem"), qPrintable(what));
        }
        // A resumed job: its checkpoint's rows leave 3 of 8 to the budget's
        // spacing (25,001 rows), but the band limit's 5 rows fit the budget.
        Stage1Inputs resumed = inputs(100000, 1000);
        resumed.special_row_budget = resumed.row_bytes * 8;
        resumed.loaded_rows = 5;
        QVERIFY(plan_stage1(resumed).pass.special_every > 20000);
        resumed.band_cap = 20000;
        QCOMPARE(plan_stage1(resumed).pass.special_every, std::int64_t{20000});
    }

    void edges_and_requests_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("free_ends");
        QTest::addColumn<qint64>("resumed");
        QTest::addColumn<bool>("checkpointed");
        QTest::addColumn<int>("top");
        QTest::addColumn<int>("left");
        QTest::addColumn<bool>("last_row");
        QTest::addColumn<bool>("last_column");
        const int Zero = int(Edge::Zero), Gap = int(Edge::Gap), Cont = int(Edge::GapContinue),
                  Expl = int(Edge::Explicit);
        const int global = int(AlignmentMode::Global), local = int(AlignmentMode::Local),
                  semi = int(AlignmentMode::SemiGlobal);
        QTest::newRow("global") << global << "none" << qint64(0) << false << Gap << Gap << true << false;
        QTest::newRow("global resumed") << global << "none" << qint64(300) << true << Expl << Cont << true << false;
        QTest::newRow("local") << local << "none" << qint64(0) << false << Zero << Zero << false << false;
        QTest::newRow("local checkpointed") << local << "none" << qint64(0) << true << Zero << Zero << true << false;
        QTest::newRow("local resumed") << local << "none" << qint64(300) << true << Expl << Zero << true << false;
        QTest::newRow("semi qb,te") << semi << "qb,te" << qint64(0) << false << Zero << Gap << true << true;
        QTest::newRow("semi tb resumed") << semi << "tb" << qint64(300) << true << Expl << Zero << true << false;
    }
    void edges_and_requests() {
        QFETCH(int, mode);
        QFETCH(QString, free_ends);
        QFETCH(qint64, resumed);
        QFETCH(bool, checkpointed);
        QFETCH(int, top);
        QFETCH(int, left);
        QFETCH(bool, last_row);
        QFETCH(bool, last_column);
        Stage1Inputs in = inputs(1000, 500);
        in.align.mode = static_cast<AlignmentMode>(mode);
        in.align.free_ends = FreeEndGaps::parse(free_ends.toStdString());
        in.resumed_row = resumed;
        in.checkpointed = checkpointed;
        const Stage1Plan plan = plan_stage1(in);
        QVERIFY(plan.runs);
        QCOMPARE(int(plan.pass.top), top);
        QCOMPARE(int(plan.pass.left), left);
        QCOMPARE(plan.pass.row_begin, std::int64_t(resumed));
        QCOMPARE(plan.pass.row_end, std::int64_t{1000});
        QCOMPARE(plan.pass.col_end, std::int64_t{500});
        QCOMPARE(plan.pass.want_last_row, last_row);
        QCOMPARE(plan.pass.want_last_column, last_column);
        QCOMPARE(plan.pass.track_best, in.align.mode == AlignmentMode::Local);
        QCOMPARE(plan.pass.local, in.align.mode == AlignmentMode::Local);
        // Stage 2 reads row 0 by the matrix's own top edge, not the resumed pass's.
        QVERIFY(plan.top != Edge::Explicit);
    }

    void nothing_runs_when_the_checkpoint_holds_stage_1() {
        Stage1Inputs in = inputs(1000, 500);
        in.resumed_row = 1000;
        in.special_row_budget = 1;  // would be refused if a pass were planned
        in.band_cap = 10;
        QVERIFY(!plan_stage1(in).runs);
    }

    void overview_grid() {
        Stage1Inputs in = inputs(1000, 300);
        in.overview_size = 512;
        Stage1Plan plan = plan_stage1(in);
        QCOMPARE(plan.overview_cols, 300);  // no wider than the matrix
        QCOMPARE(plan.pass.overview_rows, 512);
        in.resumed_row = 750;  // a quarter of the rows left: a quarter of the row blocks
        plan = plan_stage1(in);
        QCOMPARE(plan.pass.overview_rows, 128);
        in.resumed_row = 999;
        QCOMPARE(plan_stage1(in).pass.overview_rows, 1);
        in.overview_size = 0;
        QCOMPARE(plan_stage1(in).pass.overview_rows, 0);
    }

    void checkpoint_schedule() {
        using Clock = CheckpointSchedule::Clock;
        const Clock::time_point t0{};
        CheckpointSchedule every5(5.0, t0);
        QVERIFY(!every5.due(t0 + std::chrono::milliseconds(4999)));
        QVERIFY(every5.due(t0 + std::chrono::seconds(5)));
        every5.written(t0 + std::chrono::seconds(7));
        QVERIFY(!every5.due(t0 + std::chrono::seconds(11)));
        QVERIFY(every5.due(t0 + std::chrono::seconds(12)));
        CheckpointSchedule always(0.0, t0);
        QVERIFY(always.due(t0));
        always.written(t0);
        QVERIFY(always.due(t0));
    }

    void overview_join() {
        const Score N = kNegInf;
        OverviewJoin fresh;
        fresh.grid_cols = 2;
        std::vector<std::int64_t> edges;
        std::vector<Score> grid;
        // Pass blocks start at rows 1, 5, 9: only those at or above row 6.
        fresh.join({1, 5, 9}, {1, 2, 3, 4, 5, 6}, 6, edges, grid);
        QCOMPARE(edges, (std::vector<std::int64_t>{1, 5}));
        QCOMPARE(grid, (std::vector<Score>{1, 2, 3, 4}));

        OverviewJoin resumed = fresh;
        resumed.resumed_row = 100;
        resumed.loaded_cols = 2;
        resumed.loaded_edges = {1, 51};
        resumed.loaded_grid = {7, 7, 8, 8};
        resumed.join({1, 5, 9}, {1, 2, 3, 4, 5, 6}, 110, edges, grid);
        QCOMPARE(edges, (std::vector<std::int64_t>{1, 51, 101, 105, 109}));
        QCOMPARE(grid, (std::vector<Score>{7, 7, 8, 8, 1, 2, 3, 4, 5, 6}));

        OverviewJoin other_grid = resumed;  // the checkpoint's grid is 3 wide: its rows show as empty
        other_grid.loaded_cols = 3;
        other_grid.join({1}, {1, 2}, 1000, edges, grid);
        QCOMPARE(edges, (std::vector<std::int64_t>{1, 101}));
        QCOMPARE(grid, (std::vector<Score>{N, N, 1, 2}));

        OverviewJoin none = resumed;
        none.grid_cols = 0;
        none.join({1}, {1, 2}, 1000, edges, grid);
        QVERIFY(edges.empty() && grid.empty());
    }

    void end_cell() {
        AlignOptions global;
        const std::vector<Score> bottom{0, 5, 9, 9, 7};  // columns 0..4
        EndCell e = choose_end(global, 10, 4, {}, bottom, {});
        QVERIFY(e.score == 7 && e.i == 10 && e.j == 4);

        AlignOptions semi;
        semi.mode = AlignmentMode::SemiGlobal;
        semi.free_ends = FreeEndGaps::parse("qe,te");
        e = choose_end(semi, 10, 4, {}, bottom, BestCell{8, 3, 4});
        QVERIFY(e.score == 9 && e.i == 10 && e.j == 2);  // the smaller column of the tie
        e = choose_end(semi, 10, 4, {}, bottom, BestCell{9, 3, 4});
        QVERIFY(e.score == 9 && e.i == 10 && e.j == 2);  // a tie in the last column loses to a smaller j
        e = choose_end(semi, 10, 4, {}, {0, 1, 1, 1, 4}, BestCell{4, 3, 4});
        QVERIFY(e.score == 4 && e.i == 3 && e.j == 4);  // same column: the smaller row
        semi.free_ends = FreeEndGaps::parse("te");
        e = choose_end(semi, 10, 4, {}, bottom, BestCell{kNegInf, 0, 0});
        QVERIFY(e.score == 7 && e.i == 10 && e.j == 4);  // no last-column cell: the corner

        AlignOptions local;
        local.mode = AlignmentMode::Local;
        e = choose_end(local, 10, 4, BestCell{12, 6, 2}, {}, {});
        QVERIFY(e.score == 12 && e.i == 6 && e.j == 2);
    }

    void free_column_begin() {
        const std::vector<Score> column{1, 3, 9, 9};  // rows 0..3 of the band's last reverse column
        GoalHit inside{true, GoalHit::Kind::CrossH, 3, 2, 0, 0};
        GoalHit got = with_free_column_begin(inside, column, 3, 5, 9);
        QVERIFY(got.kind == GoalHit::Kind::CrossH && got.j == 2);  // a hit before the last column stands

        got = with_free_column_begin(GoalHit{}, column, 3, 5, 9);
        QVERIFY(got.found && got.kind == GoalHit::Kind::Begin && got.i == 2 && got.j == 5);

        GoalHit on_last{true, GoalHit::Kind::CrossH, 2, 5, 0, 0};  // same cell: Begin comes first
        got = with_free_column_begin(on_last, column, 3, 5, 9);
        QVERIFY(got.kind == GoalHit::Kind::Begin && got.i == 2);
        GoalHit higher{true, GoalHit::Kind::CrossF, 1, 5, 0, 0};  // a smaller row wins
        got = with_free_column_begin(higher, column, 3, 5, 9);
        QVERIFY(got.kind == GoalHit::Kind::CrossF && got.i == 1);

        got = with_free_column_begin(GoalHit{}, column, 3, 5, 4);
        QVERIFY(!got.found);
    }

    void small_segments() {
        const SegmentLimits limits{48, 1000};
        auto seg = [](std::int64_t h, std::int64_t w) {
            return PathSegment{{10, 20, false}, {10 + h, 20 + w, false}, 0};
        };
        QVERIFY(limits.small(seg(1, 1000000)));  // one row: a traceback of one row
        QVERIFY(limits.small(seg(30, 30)));      // 31 x 31 cells <= 1000
        QVERIFY(!limits.small(seg(100, 100)));   // 10,201 cells, 100 rows
        QVERIFY(limits.small(seg(48, 1300)));    // short: up to 64 x the cells
        QVERIFY(!limits.small(seg(48, 1400)));   // 49 x 1401 > 64,000
        QVERIFY(!limits.small(seg(49, 20)));     // 50 x 21 > 1000 and taller than 48
    }

    // The tie rule: the first column, and H before F in the same column; the
    // F + F sum gets the refund of one gap open.
    void middle_crossing_rules() {
        const PathSegment s{{4, 10, false}, {8, 13, false}, 0};  // 4 rows, 3 columns: middle row 6
        const Score N = kNegInf;
        MiddleCrossing c = best_middle_crossing(s, {1, 5, 5, 0}, {N, N, N, N}, {0, 2, 2, 0}, {N, N, N, N}, 2);
        QVERIFY(c.score == 7 && c.at.i == 6 && c.at.j == 11 && !c.at.in_gap && c.prefix == 5);
        c = best_middle_crossing(s, {1, 1, 1, 1}, {N, 2, N, N}, {N, N, N, N}, {N, N, 3, N}, 2);
        QVERIFY(c.score == 7 && c.at.j == 11 && c.at.in_gap && c.prefix == 2);
        c = best_middle_crossing(s, {N, 4, N, N}, {N, 2, N, N}, {N, N, 3, N}, {N, N, 3, N}, 2);
        QVERIFY(c.score == 7 && !c.at.in_gap);  // H + H = 7 = F + F + 2: H first
        c = best_middle_crossing(s, {N, N, N, N}, {N, N, N, N}, {N, N, N, N}, {N, N, N, N}, 2);
        QCOMPARE(c.score, std::int64_t{kNegInf});  // no path: the caller's check fails
    }

    // On random global pairs the crossing found from two real passes (the
    // scalar pass runner) is worth the reference aligner's score, and at a
    // diagonal crossing both halves are the reference's scores of their parts.
    void middle_crossing_matches_the_reference() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        std::mt19937 rng(20261126);
        AlignOptions global;
        auto runner = make_cpu_pass_runner();
        for (int round = 0; round < 60; ++round) {
            const std::string q = random_dna(rng, 2 + static_cast<int>(rng() % 30));
            std::string t = q;
            for (int k = 0; k < 4; ++k)
                if (!t.empty()) t.erase(rng() % t.size(), 1 + rng() % 3);
            t += random_dna(rng, static_cast<int>(rng() % 6));
            if (t.empty()) t = "A";
            const auto qe = encode(q, scheme.matrix, "q"), te = encode(t, scheme.matrix, "t");
            const auto h = static_cast<std::int64_t>(q.size()), w = static_cast<std::int64_t>(t.size());
            const std::int64_t score = align_reference(q, t, scheme, global).score;
            const PathSegment s{{0, 0, false}, {h, w, false}, score};
            std::vector<PassTask> tasks(2);
            tasks[0].row_end = middle_row(s);
            tasks[0].col_end = w;
            tasks[0].want_last_row = true;
            tasks[1].reversed = true;
            tasks[1].row_begin = middle_row(s);
            tasks[1].row_end = h;
            tasks[1].col_end = w;
            tasks[1].want_last_row = true;
            runner->prepare(qe.data(), h, te.data(), w, scheme);
            runner->run(tasks, {}, {});
            const MiddleCrossing c = best_middle_crossing(s, tasks[0].last_h, tasks[0].last_f, tasks[1].last_h,
                                                          tasks[1].last_f, scheme.gap_open - scheme.gap_extend);
            const QString ctx = QString("q=%1 t=%2").arg(QString::fromStdString(q), QString::fromStdString(t));
            QVERIFY2(c.score == score, qPrintable(ctx));
            QCOMPARE(c.at.i, middle_row(s));
            if (c.at.in_gap) continue;
            // A half with no target residues is one vertical gap.
            const auto mid = static_cast<std::size_t>(c.at.i), col = static_cast<std::size_t>(c.at.j);
            auto part = [&](std::size_t q0, std::size_t q1, std::size_t t0, std::size_t t1) -> std::int64_t {
                if (t0 == t1) return -(scheme.gap_open + static_cast<std::int64_t>(q1 - q0 - 1) * scheme.gap_extend);
                return align_reference(q.substr(q0, q1 - q0), t.substr(t0, t1 - t0), scheme, global).score;
            };
            QVERIFY2(c.prefix == part(0, mid, 0, col), qPrintable(ctx));
            QVERIFY2(score - c.prefix == part(mid, q.size(), col, t.size()), qPrintable(ctx));
        }
    }
    // Column slices cover the pass, one column at least each, widths by
    // weight (within a column of the exact share), dealt round-robin.
    void split_slices_by_weight() {
        std::mt19937 rng(7);
        for (int round = 0; round < 200; ++round) {
            SplitSettings settings;
            const int members = 1 + static_cast<int>(rng() % 4);
            for (int g = 0; g < members; ++g) settings.weights.push_back(0.5 + static_cast<double>(rng() % 100) / 25.0);
            settings.slices_per_member = 1 + static_cast<int>(rng() % 3);
            const std::int64_t cols = 1 + static_cast<std::int64_t>(rng() % (round < 100 ? 12 : 5000));
            const SplitPassPlan plan = plan_split_pass(1000, cols, settings, 0, 1, 0);
            const auto S = plan.slices();
            QCOMPARE(S, static_cast<std::size_t>(std::min<std::int64_t>(members * settings.slices_per_member, cols)));
            QCOMPARE(plan.slice_edges.front(), std::int64_t{0});
            QCOMPARE(plan.slice_edges.back(), cols);
            double total = 0;
            for (std::size_t x = 0; x < S; ++x) total += settings.weights[x % settings.weights.size()];
            double share = 0;
            for (std::size_t x = 0; x < S; ++x) {
                QVERIFY(plan.slice_edges[x + 1] > plan.slice_edges[x]);
                share += settings.weights[x % settings.weights.size()];
                // Far from the one-column floor, an edge sits where its weight puts it.
                if (cols >= 1000 && x + 1 < S)
                    QVERIFY2(std::abs(static_cast<double>(plan.slice_edges[x + 1]) -
                                      static_cast<double>(cols) * share / total) <= 1.0,
                             qPrintable(QString("edge %1 of %2 columns").arg(plan.slice_edges[x + 1]).arg(cols)));
            }
        }
    }

    // Row blocks are multiples of the special rows' spacing (itself rounded
    // up to the members' granularity), so every block but the last ends on a
    // special row, and they cover the pass.
    void split_blocks_end_on_special_rows_data() {
        QTest::addColumn<qint64>("rows");
        QTest::addColumn<qint64>("block_rows");
        QTest::addColumn<qint64>("special_every");
        QTest::addColumn<qint64>("granularity");
        QTest::addColumn<qint64>("busy_rows");
        QTest::newRow("CPU members, no special rows")
            << qint64(10000) << qint64(0) << qint64(0) << qint64(1) << qint64(0);
        QTest::newRow("CPU members, spacing 100")
            << qint64(10000) << qint64(0) << qint64(100) << qint64(1) << qint64(0);
        QTest::newRow("given block, spacing 300")
            << qint64(10000) << qint64(1000) << qint64(300) << qint64(1) << qint64(0);
        QTest::newRow("GPU members, granularity 512")
            << qint64(2000000) << qint64(0) << qint64(20000) << qint64(512) << qint64(270336);
        QTest::newRow("GPU members, no special rows")
            << qint64(700000) << qint64(0) << qint64(0) << qint64(512) << qint64(270336);
        QTest::newRow("fewer rows than a sweep")
            << qint64(5000) << qint64(0) << qint64(1024) << qint64(512) << qint64(270336);
    }
    void split_blocks_end_on_special_rows() {
        QFETCH(qint64, rows);
        QFETCH(qint64, block_rows);
        QFETCH(qint64, special_every);
        QFETCH(qint64, granularity);
        QFETCH(qint64, busy_rows);
        SplitSettings settings;
        settings.weights = {1.0, 1.0};
        settings.block_rows = block_rows;
        const SplitPassPlan plan = plan_split_pass(rows, 5000, settings, special_every, granularity, busy_rows);
        if (special_every > 0) {
            QCOMPARE(plan.every % granularity, std::int64_t{0});
            QVERIFY(plan.every >= special_every && plan.every < special_every + granularity);
            QCOMPARE(plan.block_rows % plan.every, std::int64_t{0});
        } else {
            QCOMPARE(plan.every, std::int64_t{0});
        }
        QVERIFY(plan.block_rows >= 1);
        QCOMPARE(plan.blocks, static_cast<std::size_t>((rows + plan.block_rows - 1) / plan.block_rows));
        QCOMPARE(plan.block_top(0), std::int64_t{0});
        QCOMPARE(plan.block_top(plan.blocks), std::int64_t(rows));
        for (std::size_t b = 1; b < plan.blocks; ++b)
            QVERIFY(plan.block_top(b) > plan.block_top(b - 1) &&
                    (plan.every == 0 || plan.block_top(b) % plan.every == 0));
        if (busy_rows > 0) {
            // The height minimises the pipeline's length in sweeps, as SplitSettings documents it:
            // (blocks x slices per member + members - 1) x ceil(block / busy_rows).
            const std::int64_t unit = plan.every > 0 ? plan.every : busy_rows;
            auto cost = [&](std::int64_t block) {
                const double blocks = static_cast<double>((rows + block - 1) / block);
                return (blocks * 1.0 + 1.0) *
                       static_cast<double>((std::min<std::int64_t>(block, rows) + busy_rows - 1) / busy_rows);
            };
            for (std::int64_t k = 1; (k - 1) * unit < rows; ++k)
                QVERIFY2(cost(plan.block_rows) <= cost(k * unit),
                         qPrintable(QString("block %1 vs %2").arg(plan.block_rows).arg(k * unit)));
        } else if (block_rows > 0 && special_every > 0) {
            QCOMPARE(plan.block_rows, std::int64_t{900});  // 1000 to the nearest multiple of 300
        }
    }

    void split_plan_without_rows() {
        SplitSettings settings;
        settings.weights = {1.0};
        const SplitPassPlan plan = plan_split_pass(0, 10, settings, 0, 1, 0);
        QCOMPARE(plan.blocks, std::size_t{0});
        QCOMPARE(plan.slices(), std::size_t{1});
    }
};

QTEST_GUILESS_MAIN(TestLongPlan)
#include "test_long_plan.moc"
