// Batch planning under a GPU memory budget (kernels/pairwise/batch_plan.hpp)
// and the device bytes each kernel family's warp block needs
// (family_layout.hpp): every batch fits, no pair is lost or repeated, a pair
// that cannot fit on its own is an Error naming it, and the byte counts add up
// from first principles. Host logic only: no GPU needed.
#include "../../kernels/pairwise/batch_plan.hpp"
#include "../../kernels/pairwise/family_layout.hpp"

#include <alignscope/error.hpp>

#include <QtTest>

#include <algorithm>
#include <random>

using namespace alignscope;
using namespace alignscope::kernels;

class TestBatchPlan : public QObject {
    Q_OBJECT

private slots:
    void batches_cover_units_in_order_within_budget_data() {
        QTest::addColumn<quint64>("budget");
        QTest::addColumn<quint64>("max_cells");
        QTest::addColumn<int>("seed");
        QTest::newRow("tight budget") << quint64(5000) << quint64(0) << 1;
        QTest::newRow("roomy budget") << quint64(1) << quint64(0) << 2;  // 1 = everything fits one batch (set below)
        QTest::newRow("cell cap") << quint64(1ull << 40) << quint64(20000) << 3;
        QTest::newRow("both") << quint64(8000) << quint64(30000) << 4;
    }
    void batches_cover_units_in_order_within_budget() {
        QFETCH(quint64, budget);
        QFETCH(quint64, max_cells);
        QFETCH(int, seed);
        std::mt19937_64 rng(static_cast<unsigned>(seed));
        std::vector<UnitCost> units(500);
        std::uint64_t total = 0;
        for (auto& u : units) {
            u.bytes = 100 + rng() % 4000;
            u.cells = 1 + rng() % 10000;
            total += u.bytes;
        }
        if (budget == 1) budget = total;
        const auto batches = plan_batches(units, budget, max_cells, [](std::size_t k) { return std::to_string(k); });
        std::size_t next = 0;
        for (const BatchRange& b : batches) {
            QCOMPARE(b.first, next);
            QVERIFY(b.count > 0);
            std::uint64_t bytes = 0, cells = 0;
            for (std::size_t k = b.first; k < b.first + b.count; ++k) {
                bytes += units[k].bytes;
                cells += units[k].cells;
            }
            QCOMPARE(b.bytes, bytes);
            QCOMPARE(b.cells, cells);
            QVERIFY(bytes <= budget);
            if (max_cells && b.count > 1) QVERIFY(cells <= max_cells);
            // Greedy: the next unit would not have fitted.
            if (b.first + b.count < units.size()) {
                const UnitCost& after = units[b.first + b.count];
                QVERIFY(bytes + after.bytes > budget || (max_cells && cells + after.cells > max_cells));
            }
            next = b.first + b.count;
        }
        QCOMPARE(next, units.size());
        if (budget == total && !max_cells) QCOMPARE(batches.size(), std::size_t{1});
    }

    void a_unit_too_large_for_the_budget_is_an_error_naming_it() {
        std::vector<UnitCost> units{{1000, 10}, {50'000'000, 10}, {1000, 10}};
        try {
            plan_batches(units, 10'000'000, 0,
                         [](std::size_t k) { return "pair " + std::to_string(k) + " (query 9000 residues)"; });
            QFAIL("expected an Error");
        } catch (const Error& e) {
            const QString message = e.what();
            QVERIFY2(message.contains("pair 1 (query 9000 residues)"), e.what());
            QVERIFY2(message.contains("48 MiB"), e.what());  // 50,000,000 bytes rounded up
            QVERIFY2(message.contains("budget of 9 MiB"), e.what());
        }
    }

    void empty_job_plans_no_batch() {
        QVERIFY(plan_batches({}, 1000, 0, [](std::size_t) { return std::string(); }).empty());
    }

    void unit_bytes_add_up_data() {
        QTest::addColumn<int>("family");
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("traceback");
        for (int family : {0, 1, 2})
            for (int width : {0, 1})
                for (bool traceback : {false, true})
                    QTest::newRow(
                        qPrintable(QString("family %1 width %2 traceback %3").arg(family).arg(width).arg(traceback)))
                        << family << width << traceback;
    }
    void unit_bytes_add_up() {
        QFETCH(int, family);
        QFETCH(int, width);
        QFETCH(bool, traceback);
        // family 0: inter; 1: a warp per pair; 2: 8 threads per pair.
        const KernelVariant variant{AlignmentMode::Local, false, family ? KernelFamily::Intra : KernelFamily::Inter,
                                    width ? LaneWidth::S16 : LaneWidth::S32, family == 2 ? 8 : 0};
        const FamilyLayout layout = layout_of(variant);
        const int threads = family == 0 ? 1 : family == 1 ? 32 : 8;
        QCOMPARE(layout.group_threads, threads);
        QCOMPARE(layout.pairs_per_warp(), (32 / threads) * (width ? 2 : 1));
        std::vector<std::pair<std::int64_t, std::int64_t>> lengths;
        for (int k = 0; k < layout.pairs_per_warp(); ++k) lengths.emplace_back(300 - k, 17 + 5 * k);
        const std::size_t count = lengths.size();
        const std::int64_t max_m = 300, max_n = 17 + 5 * (static_cast<std::int64_t>(count) - 1);
        // Residues padded to 16, one task and one result per pair.
        std::uint64_t expect = 0;
        for (auto [m, n] : lengths)
            expect += static_cast<std::uint64_t>((m + 15) / 16 * 16 + (n + 15) / 16 * 16) + sizeof(PairTask) +
                      sizeof(PairResult) + (traceback ? 8u * static_cast<std::uint64_t>(m + n + 2) : 0u);
        // Strip boundary: (H, F) per column per group of the warp block.
        expect += static_cast<std::uint64_t>(max_n + 1) * static_cast<std::uint64_t>(layout.groups_per_warp()) * 8u;
        if (traceback) {
            // 4 bits per cell of each 32-bit traceback warp block, in 8-row words.
            const FamilyLayout tb = traceback_layout_of(variant);
            for (std::size_t b = 0; b < count; b += static_cast<std::size_t>(tb.pairs_per_warp())) {
                std::int64_t bm = 0, bn = 0;
                for (std::size_t k = b; k < std::min(count, b + static_cast<std::size_t>(tb.pairs_per_warp())); ++k) {
                    bm = std::max(bm, lengths[k].first);
                    bn = std::max(bn, lengths[k].second);
                }
                const std::uint64_t strips = static_cast<std::uint64_t>((bm + tb.strip_rows() - 1) / tb.strip_rows());
                expect += strips * static_cast<std::uint64_t>(bn + tb.group_threads - 1) * 32u * 4u;
                expect += static_cast<std::uint64_t>(bn + 1) * static_cast<std::uint64_t>(tb.groups_per_warp()) * 8u;
            }
        }
        QCOMPARE(unit_bytes(layout, lengths, 0, count, traceback), expect);
        Q_UNUSED(max_m);
        // Traceback storage covers at least 4 bits per cell.
        if (traceback) {
            std::uint64_t cells = 0;
            for (auto [m, n] : lengths) cells += static_cast<std::uint64_t>(m * n);
            QVERIFY(unit_bytes(layout, lengths, 0, count, true) > cells / 2);
        }
    }

    void default_budget_leaves_a_reserve_and_shares_among_streams() {
        const std::uint64_t gib = 1ull << 30;
        QCOMPARE(default_batch_budget(80 * gib, 80 * gib, 4), (80 * gib - 5 * gib) / 4);
        QCOMPARE(default_batch_budget(4 * gib, 8 * gib, 2), (4 * gib - (512ull << 20)) / 2);
        QCOMPARE(budget_per_batch(8 * gib, 4), 2 * gib);
        QCOMPARE(budget_per_batch(8 * gib, 0), 8 * gib);
    }

    // The parts a large job runs in: they add up to the job, the first and the
    // last are the small size, they at most double towards the middle and
    // none is larger than the most a batch holds; a job within one batch (or with the
    // ramp off) is one part.
    void ramp_parts_add_up_and_grow_towards_the_middle_data() {
        QTest::addColumn<quint64>("total");
        QTest::addColumn<quint64>("first");
        QTest::addColumn<quint64>("most");
        QTest::newRow("1M protein 300x300") << quint64(90'000'000'000ull) << quint64(1ull << 31) << quint64(1ull << 34);
        QTest::newRow("1M DNA 150x250") << quint64(37'500'000'000ull) << quint64(1ull << 31) << quint64(1ull << 34);
        QTest::newRow("just over one batch") << quint64((1ull << 34) + 1) << quint64(1ull << 31) << quint64(1ull << 34);
        QTest::newRow("first as large as most") << quint64(100) << quint64(40) << quint64(40);
        QTest::newRow("first larger than most") << quint64(1000) << quint64(64) << quint64(30);
        QTest::newRow("odd sizes") << quint64(1'234'567) << quint64(1000) << quint64(99'999);
    }
    void ramp_parts_add_up_and_grow_towards_the_middle() {
        QFETCH(quint64, total);
        QFETCH(quint64, first);
        QFETCH(quint64, most);
        const std::vector<std::uint64_t> parts = ramp_parts(total, first, most);
        QVERIFY(parts.size() > 1);
        std::uint64_t sum = 0;
        for (std::uint64_t part : parts) {
            QVERIFY(part > 0);
            QVERIFY(part <= most);
            sum += part;
        }
        QCOMPARE(sum, std::uint64_t(total));
        const std::uint64_t small = std::min<std::uint64_t>(first, most);
        QVERIFY(parts.front() <= small);
        QVERIFY(parts.back() <= small);
        // A part is at most twice its neighbour towards the nearer end.
        for (std::size_t k = 1; k < parts.size(); ++k) {
            const std::uint64_t outer = k <= parts.size() / 2 ? parts[k - 1] : parts[k];
            const std::uint64_t inner = k <= parts.size() / 2 ? parts[k] : parts[k - 1];
            QVERIFY2(inner <= 2 * outer, qPrintable(QString("part %1").arg(k)));
        }
    }
    void ramp_parts_one_part_within_one_batch_or_off() {
        QCOMPARE(ramp_parts(1ull << 34, 1ull << 31, 1ull << 34), std::vector<std::uint64_t>{1ull << 34});
        QCOMPARE(ramp_parts(5'000'000, 1ull << 31, 1ull << 34), std::vector<std::uint64_t>{5'000'000});
        QCOMPARE(ramp_parts(1ull << 40, 0, 1ull << 34), std::vector<std::uint64_t>{1ull << 40});
        // 1M protein pairs of 300x300: 2^31, 2^32, 2^33 at each end, four of at most 2^34 between.
        const std::vector<std::uint64_t> protein = ramp_parts(90'000'000'000ull, 1ull << 31, 1ull << 34);
        QCOMPARE(protein.size(), std::size_t{10});
        QCOMPARE(protein[0], 1ull << 31);
        QCOMPARE(protein[2], 1ull << 33);
        QCOMPARE(protein[9], 1ull << 31);
    }
};

QTEST_GUILESS_MAIN(TestBatchPlan)
#include "test_batch_plan.moc"
