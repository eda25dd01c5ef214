// The CUDA long-pair runner's launch plan (kernels/long/long_batch_plan.hpp):
// batches under the memory budget, the strip height, each task's words in
// the launch buffers, the special rows a stage-1 pass keeps, the overview's
// row blocks, the kernels/streams/blocks of a launch and the progress of a
// snapshot. Host logic only: no GPU needed.
#include "../../kernels/long/long_batch_plan.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <random>

using namespace alignscope;
using namespace alignscope::kernels::longpass;
using longpair::Edge;
using longpair::PassTask;

namespace {

PassTask task(std::int64_t rows, std::int64_t cols) {
    PassTask t;
    t.row_begin = 1000;
    t.row_end = 1000 + rows;
    t.col_begin = 7;
    t.col_end = 7 + cols;
    return t;
}

std::uint64_t bus_bytes(const PassTask& t) {
    return static_cast<std::uint64_t>(t.cols() + 1) * 8 + static_cast<std::uint64_t>(t.rows() + 1) * 4;
}

}  // namespace

class TestLongBatchPlan : public QObject {
    Q_OBJECT

private slots:
    // Batches take the tasks in order and close as soon as their buses reach
    // the budget: a task goes to the next batch only when the batch before
    // it is already full.
    void batches_close_at_the_budget() {
        std::mt19937 rng(11);
        for (int round = 0; round < 50; ++round) {
            TaskList tasks;
            const int count = 1 + static_cast<int>(rng() % 40);
            for (int k = 0; k < count; ++k) tasks.push_back(task(1 + rng() % 5000, rng() % 20000));
            const std::uint64_t budget = 1 + rng() % 400000;
            const auto batches = plan_batches(tasks, budget);
            std::size_t next = 0;
            for (const auto& [first, last] : batches) {
                QCOMPARE(first, next);
                QVERIFY(last > first);
                std::uint64_t before_last = 0;
                for (std::size_t x = first; x + 1 < last; ++x) before_last += bus_bytes(tasks[x]);
                QVERIFY(before_last < budget);
                if (last < tasks.size()) QVERIFY(before_last + bus_bytes(tasks[last - 1]) >= budget);
                next = last;
            }
            QCOMPARE(next, tasks.size());
        }
        QVERIFY(plan_batches({}, 100).empty());
    }

    void traits_of_a_batch() {
        TaskList tasks(4, task(100, 50));
        tasks[1].overview_rows = tasks[1].overview_cols = 4;
        tasks[2].goal_search = true;
        tasks[3].want_last_column = true;
        BatchTraits b = batch_traits(tasks, 0, 2);
        QVERIFY(b.overview && !b.goal_search && !b.slice && !b.local);
        QCOMPARE(b.total_rows, 200ll);
        b = batch_traits(tasks, 2, 4);
        QVERIFY(!b.overview && b.goal_search && !b.slice);  // a last column without its state: no slice kernel
        tasks[3].want_last_column_state = true;
        QVERIFY(batch_traits(tasks, 3, 4).slice);
        tasks[0].left = Edge::Explicit;
        QVERIFY(batch_traits(tasks, 0, 1).slice);
        tasks[1].local = true;
        QVERIFY(batch_traits(tasks, 1, 2).local);
        QVERIFY_THROWS_EXCEPTION(Error, batch_traits(tasks, 0, 2));
    }

    void rows_per_lane_data() {
        QTest::addColumn<bool>("overview");
        QTest::addColumn<bool>("goal");
        QTest::addColumn<bool>("slice");
        QTest::addColumn<qint64>("rows");
        QTest::addColumn<int>("forced");
        QTest::addColumn<int>("R");
        // The GPU: 132 SMs; 4,000 strips at once, 1,000 of the slice kernels.
        const qint64 fill16 = 132ll * 16 * 512;  // strips of 16 for 16 warps per SM
        QTest::newRow("overview") << true << false << false << qint64(100) << 8 << 16;
        QTest::newRow("forced 8") << false << false << false << fill16 * 2 << 8 << 8;
        QTest::newRow("forced 16") << false << false << false << qint64(100) << 16 << 16;
        QTest::newRow("fills the GPU") << false << false << false << fill16 << 0 << 16;
        QTest::newRow("short of filling") << false << false << false << fill16 - 1 << 0 << 8;
        QTest::newRow("slice fills its kernels") << false << false << true << qint64(1000 * 512) << 0 << 16;
        QTest::newRow("slice short") << false << false << true << qint64(1000 * 512 - 1) << 0 << 8;
        QTest::newRow("goal, more strips of 8 than run at once")
            << false << true << false << qint64(4001 * 256) << 0 << 16;
        QTest::newRow("goal, all strips of 8 at once") << false << true << false << qint64(4000 * 256) << 0 << 8;
    }
    void rows_per_lane() {
        QFETCH(bool, overview);
        QFETCH(bool, goal);
        QFETCH(bool, slice);
        QFETCH(qint64, rows);
        QFETCH(int, forced);
        QFETCH(int, R);
        BatchTraits b;
        b.overview = overview;
        b.goal_search = goal;
        b.slice = slice;
        b.total_rows = rows;
        QCOMPARE(choose_rows_per_lane(b, {132, 4000, 1000, forced}), R);
    }

    // Every task gets its own words in each buffer, back to back, as many as
    // it needs.
    void layout_gives_each_task_its_words() {
        TaskList tasks;
        tasks.push_back(task(10, 20));  // a plain pass
        tasks.push_back(task(5, 8));
        tasks[1].want_last_column = true;
        tasks[1].left = Edge::Explicit;
        tasks.push_back(task(7, 3));  // a goal search on an explicit row
        tasks[2].goal_search = true;
        tasks[2].crossing_row = longpair::kExplicitRow;
        tasks[2].crossing_h.assign(11, 0);
        tasks.push_back(task(9, 4));  // a goal search on a kept special row
        tasks[3].goal_search = true;
        tasks[3].crossing_row = 0;
        const BatchLayout l = plan_batch_layout(tasks, 1, 4);  // tasks 1..3
        QCOMPARE(l.bus_at, (std::vector<std::size_t>{0, 18, 26}));
        QCOMPARE(l.bus_words, std::size_t{36});
        QCOMPARE(l.col_at, (std::vector<std::size_t>{0, 12, 12}));
        QCOMPARE(l.col_words, std::size_t{12});
        QCOMPARE(l.left_at, (std::vector<std::size_t>{0, 18, 18}));
        QCOMPARE(l.left_words, std::size_t{18});
        QCOMPARE(l.hit_at, (std::vector<std::size_t>{0, 0, 1}));
        QCOMPARE(l.hits, std::size_t{2});
        QCOMPARE(l.goal_at, (std::vector<std::size_t>{0, 0, 22}));
        QCOMPARE(l.goal_words, std::size_t{22});
    }

    // Special rows are strip bottoms, spaced by whole strips at least as far
    // apart as asked (less than a strip more), above the pass's last row.
    void special_rows_are_strip_bottoms_data() {
        QTest::addColumn<qint64>("rows");
        QTest::addColumn<qint64>("every");
        QTest::addColumn<qint64>("strip");
        QTest::newRow("1500 in strips of 512") << qint64(10000) << qint64(1500) << qint64(512);
        QTest::newRow("exact multiple") << qint64(10240) << qint64(1024) << qint64(512);
        QTest::newRow("less than a strip") << qint64(3000) << qint64(100) << qint64(256);
        QTest::newRow("none fit") << qint64(900) << qint64(1000) << qint64(512);
    }
    void special_rows_are_strip_bottoms() {
        QFETCH(qint64, rows);
        QFETCH(qint64, every);
        QFETCH(qint64, strip);
        PassTask t = task(rows, 100);
        t.special_every = every;
        const StripSpecialRows s = plan_special_rows(t, strip);
        const qint64 spacing = s.every_strips * strip;
        QVERIFY(spacing >= every && spacing < every + strip);
        std::vector<std::int64_t> expect;
        for (qint64 r = spacing; r < rows; r += spacing) expect.push_back(t.row_begin + r);
        QCOMPARE(s.rows, expect);
    }

    // The edge of row block b is the top row of the first strip in it.
    void overview_edges_are_first_strips() {
        for (int strips : {1, 3, 7, 64, 100})
            for (int ov_rows : {1, 2, 3, 7, 64}) {
                if (ov_rows > strips) continue;
                const std::vector<std::int64_t> edges = overview_row_edges(ov_rows, strips, 512);
                QCOMPARE(static_cast<int>(edges.size()), ov_rows);
                std::vector<std::int64_t> expect(static_cast<std::size_t>(ov_rows), -1);
                for (int s = strips - 1; s >= 0; --s)  // the smallest s of each block wins
                    expect[static_cast<std::size_t>(static_cast<long long>(s) * ov_rows / strips)] =
                        static_cast<std::int64_t>(s) * 512 + 1;
                QCOMPARE(edges, expect);
            }
    }

    void launch_shape() {
        LaunchRequest r;
        r.tickets = 1000;
        r.warps_per_block = 8;
        r.resident_blocks = 264;
        r.strategy = "strips";
        r.rows_per_lane = 16;
        LaunchShape s = plan_launch(r);
        QVERIFY(s.kernels == 1 && s.streams == 1 && s.blocks == 125);  // 1000 strips / 8 warps
        QCOMPARE(s.kernel.format(), std::string("nw_affine_strips16_s32"));
        r.tickets = 100000;
        QCOMPARE(plan_launch(r).blocks, 264);  // no more than are resident

        r.strategy = "streams";
        r.local = true;
        r.rows_per_lane = 8;
        s = plan_launch(r);
        QVERIFY(s.kernels == 4 && s.streams == 4);
        r.linear = true;
        s = plan_launch(r);
        QVERIFY(s.kernels == 4 && s.streams == 4);
        // The kernel and stream counts are the strategy's: the name is the kernel's.
        QCOMPARE(s.kernel.format(), std::string("sw_linear_strips8_s32"));
        QCOMPARE(KernelName::parse(s.kernel.format()), s.kernel);
        r.linear = false;
        r.kernels = 3;
        r.streams = 2;
        r.tickets = 9;  // 2 blocks' worth of strips, but one block per kernel at least
        s = plan_launch(r);
        QVERIFY(s.kernels == 3 && s.streams == 2 && s.blocks == 3);
        QCOMPARE(s.kernel.format(), std::string("sw_affine_strips8_s32"));
        r.tickets = 100000;
        s = plan_launch(r);
        QCOMPARE(s.blocks_of(0) + s.blocks_of(1) + s.blocks_of(2), 264);
        QVERIFY(std::abs(s.blocks_of(0) - s.blocks_of(2)) <= 1);
        r.goal_search = true;  // a goal search runs as one persistent kernel
        s = plan_launch(r);
        QVERIFY(s.kernels == 1 && s.streams == 1);
        QCOMPARE(s.kernel.format(), std::string("sw_affine_strips8_s32"));
    }

    void snapshot_progress() {
        // 1000 rows x 50 columns in strips of 256: 4 strips, the last 232 rows.
        const int snapshot[4] = {51, 30, -1, 10};  // n + 1 = done; -1 = not started
        QCOMPARE(snapshot_cells(snapshot, 4, 1000, 50, 256), std::uint64_t{50 * 256 + 30 * 256 + 10 * 232});
    }
};

QTEST_GUILESS_MAIN(TestLongBatchPlan)
#include "test_long_batch_plan.moc"
