// The host-side plan of a database scan (kernels/search/scan_plan.hpp),
// checked without a GPU: every query in exactly one profile, paired with its
// neighbour in length; each profile on a runnable shape of least cost, tall
// enough for its rows; profiles of one shape together with packed offsets;
// launches that keep to one shape, the output cap and the work target; and
// the short-strip memory rule at its boundary (figures worked out by hand).
#include "../../kernels/search/scan_plan.hpp"

#include <alignscope/error.hpp>

#include <QtTest>

#include <set>

using namespace alignscope;
using namespace alignscope::kernels::search;

namespace {

std::vector<DbScanShape> narrow_shapes() {
    return {{4, 8, false}, {8, 8, false}, {16, 8, false}, {32, 8, false}, {16, 16, false}};
}

ScanPlanInputs inputs(std::vector<std::size_t> lengths, bool narrow = true) {
    ScanPlanInputs in;
    in.query_lengths = std::move(lengths);
    in.narrow = narrow;
    in.mean_length = 300;
    in.letters = 25;
    in.shapes = narrow ? narrow_shapes() : std::vector<DbScanShape>{{16, 8, true}, {32, 8, true}};
    in.blocks_per_sm = [](const DbScanShape&) { return 2; };
    in.device = "cuda:0";
    return in;
}

std::size_t length_of(const ScanPlanInputs& in, int query) { return in.query_lengths[static_cast<std::size_t>(query)]; }

}  // namespace

class TestScanPlan : public QObject {
    Q_OBJECT

private slots:
    void pairsNeighboursInLength() {
        const ScanPlanInputs in = inputs({50, 10, 30, 10, 70});
        const ScanPlan plan = plan_scan(in);
        QCOMPARE(plan.profiles.size(), std::size_t{3});
        std::set<std::pair<int, int>> pairs;
        std::multiset<int> seen;
        for (const ProfilePlan& p : plan.profiles) {
            pairs.insert({p.a, p.b});
            seen.insert(p.a);
            if (p.b >= 0) seen.insert(p.b);
            const std::size_t rows = std::max(length_of(in, p.a), p.b >= 0 ? length_of(in, p.b) : 0);
            QCOMPARE(p.rows, static_cast<int>(rows));
        }
        // Sorted (stably) by length: 1 (10), 3 (10), 2 (30), 0 (50), 4 (70).
        QCOMPARE(pairs, (std::set<std::pair<int, int>>{{1, 3}, {2, 0}, {4, -1}}));
        QCOMPARE(seen, (std::multiset<int>{0, 1, 2, 3, 4}));
    }

    void wideCellsTakeOneQueryEach() {
        const ScanPlan plan = plan_scan(inputs({5, 9, 7}, false));
        QCOMPARE(plan.profiles.size(), std::size_t{3});
        for (const ProfilePlan& p : plan.profiles) {
            QCOMPARE(p.b, -1);
            QVERIFY(p.shape.wide);
        }
    }

    void boundedModesAddTheZeroRow() {
        ScanPlanInputs in = inputs({128, 40});
        in.bounded = true;
        const ScanPlan plan = plan_scan(in);
        QCOMPARE(plan.profiles.size(), std::size_t{1});
        QCOMPARE(plan.profiles[0].rows, 129);
    }

    void eachProfileOnTheCheapestRunnableShape() {
        ScanPlanInputs in = inputs({3, 20, 90, 130, 250, 700, 1500, 4000});
        in.blocks_per_sm = [](const DbScanShape& s) { return s.threads == 8 ? 0 : 2; };  // 8 threads cannot run
        for (bool short_strips : {false, true}) {
            in.short_strips = short_strips;
            const ScanPlan plan = plan_scan(in);
            for (const ProfilePlan& p : plan.profiles) {
                QVERIFY(p.shape.threads != 8);
                QVERIFY(p.tiles * p.shape.tile_rows() >= p.rows);
                QVERIFY((p.tiles - 1) * p.shape.tile_rows() < p.rows);
                const double chosen = shape_cost(p.shape, p.rows, in.mean_length, short_strips);
                for (const DbScanShape& other : in.shapes)
                    if (other.threads != 8) QVERIFY(chosen <= shape_cost(other, p.rows, in.mean_length, short_strips));
            }
        }
    }

    // Without short strips a narrow group (under 16 threads) never takes more than one tile.
    void narrowGroupsKeepToOneTileWithLongStrips() {
        ScanPlanInputs in = inputs({1500, 1600, 3000});
        in.short_strips = false;
        for (const ProfilePlan& p : plan_scan(in).profiles)
            if (p.shape.threads < 16) QCOMPARE(p.tiles, 1);
    }

    void oneShapeTogetherAndPackedOffsets() {
        const ScanPlanInputs in = inputs({3, 4000, 20, 1500, 90, 700, 130, 250, 10, 60});
        const ScanPlan plan = plan_scan(in);
        std::uint64_t words = 0;
        for (std::size_t k = 0; k < plan.profiles.size(); ++k) {
            const ProfilePlan& p = plan.profiles[k];
            if (k > 0) {
                const DbScanShape& before = plan.profiles[k - 1].shape;
                QVERIFY(std::make_pair(before.threads, before.rows) <= std::make_pair(p.shape.threads, p.shape.rows));
            }
            QCOMPARE(p.offset, words);
            words += static_cast<std::uint64_t>(p.tiles) * 25 * p.shape.tile_rows();
        }
        QCOMPARE(plan.words, words);
    }

    void noRunnableShapeIsAnError() {
        ScanPlanInputs in = inputs({10});
        in.blocks_per_sm = [](const DbScanShape&) { return 0; };
        try {
            plan_scan(in);
            QFAIL("expected an Error");
        } catch (const Error& e) {
            QCOMPARE(QString(e.what()), QString("cuda:0: no scan kernel fits 25 matrix letters"));
        }
    }

    // 2 streams x 132 SMs x 4 blocks x 64 strips x (1024 + 4) columns x 8 bytes
    // = 555,810,816 bytes, which must be at most half of a third of the budget.
    void shortStripsAtTheirMemoryBoundary() {
        QVERIFY(short_strips_fit(1024, 4, 2, 132, 3'334'864'896ull));
        QVERIFY(!short_strips_fit(1024, 4, 2, 132, 3'334'864'895ull));
        QVERIFY(!short_strips_fit(1025, 4, 2, 132, 1ull << 40));  // past kShortStripLength
        // The working memory is at most 3 GiB: 1.5 GiB of strips, whatever the budget.
        QVERIFY(!short_strips_fit(1024, 12, 2, 132, 1ull << 40));  // 1,667,432,448 bytes
        QVERIFY(short_strips_fit(1024, 11, 2, 132, 1ull << 40));   // 1,528,479,744 bytes
    }

    void launchesKeepToOneShapeAndTheWorkTarget() {
        std::vector<ProfilePlan> profiles;
        for (int k = 0; k < 5; ++k) profiles.push_back({k, -1, 100, {16, 8, false}, 1, 0});
        for (int k = 5; k < 8; ++k) profiles.push_back({k, -1, 400, {32, 8, false}, 2, 0});
        // 2 x 128 rows x 10^9 residues = 2.56e11 cells a 16x8 profile: the
        // second passes 3e11 and closes the run; a 32x8 one (2 tiles) holds
        // 1.024e12, a run by itself.
        std::vector<LaunchRun> runs = plan_launches(profiles, 1000, 1'000'000'000ull);
        std::vector<std::pair<std::size_t, std::size_t>> spans;
        for (const LaunchRun& r : runs) spans.push_back({r.first, r.last});
        QCOMPARE(spans,
                 (std::vector<std::pair<std::size_t, std::size_t>>{{0, 2}, {2, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 8}}));
        for (const LaunchRun& r : runs) QCOMPARE(r.multi_tile, r.first >= 5);
        // 256 MiB of scores over 2^25 sequences: two profiles a launch at most.
        runs = plan_launches(profiles, std::size_t{1} << 25, 1);
        spans.clear();
        for (const LaunchRun& r : runs) spans.push_back({r.first, r.last});
        QCOMPARE(spans, (std::vector<std::pair<std::size_t, std::size_t>>{{0, 2}, {2, 4}, {4, 5}, {5, 7}, {7, 8}}));
    }

    void launchGeometry() {
        const DbScanShape shape{16, 8, false};  // 16 groups a block
        LaunchGeometry g = launch_geometry(shape, 10, 1000, 2, 132, "cuda:0");
        QCOMPARE(g.chunks, 63);   // ceil(1000 / 16)
        QCOMPARE(g.blocks, 264);  // 630 items, 2 x 132 blocks at most
        g = launch_geometry(shape, 2, 100, 2, 132, "cuda:0");
        QCOMPARE(g.chunks, 7);
        QCOMPARE(g.blocks, 14);
        QVERIFY_THROWS_EXCEPTION(Error, launch_geometry(shape, 0x7fffffff / 63 + 1, 1000, 2, 132, "cuda:0"));
    }

    // Items of 4 slots (64-thread groups): five pairs of query 0 fill one and
    // start a second, query 2's one pair a third; empty slots are -1.
    void rescoringItemsByQuery() {
        const std::vector<RescorePair> sorted{{0, 100}, {0, 101}, {0, 102}, {0, 103}, {0, 104}, {2, 130}};
        const DbScanShape shape{64, 4, true};
        const RescorePlan plan = plan_rescoring(sorted, {300, 7, 50}, false, shape, 25, 100);
        QCOMPARE(plan.item_profile, (std::vector<std::int32_t>{0, 0, 1}));
        QCOMPARE(plan.item_positions, (std::vector<std::int32_t>{0, 1, 2, 3, 4, -1, -1, -1, 30, -1, -1, -1}));
        const std::size_t none = static_cast<std::size_t>(-1);
        QCOMPARE(plan.entry_of_slot, (std::vector<std::size_t>{0, 1, 2, 3, 4, none, none, none, 5, none, none, none}));
        QCOMPARE(plan.profiles.size(), std::size_t{2});
        QCOMPARE(plan.profiles[0].a, 0);
        QCOMPARE(plan.profiles[0].tiles, 2);  // 300 rows on 256-row tiles
        QCOMPARE(plan.profiles[1].a, 2);
        QCOMPARE(plan.profiles[1].tiles, 1);
        QCOMPARE(plan.profiles[1].offset, std::uint64_t{2 * 25 * 256});
        QCOMPARE(plan.words, std::uint64_t{3 * 25 * 256});
        // Bounded modes add the DP's row 0: 256 rows then take two tiles.
        const RescorePlan bounded = plan_rescoring({{0, 7}}, {256}, true, shape, 25, 0);
        QCOMPARE(bounded.profiles[0].rows, 257);
        QCOMPARE(bounded.profiles[0].tiles, 2);
    }
};

QTEST_APPLESS_MAIN(TestScanPlan)
#include "test_scan_plan.moc"
