// PairPlan::make_all (every pair of a job, no index list) against
// PairPlan::make over the list 0..n-1, and the shape runs make() reads once:
// jobs of mixed lengths in runs and interleaved, pairs past the 32-bit limit,
// every pair planned exactly once, longest first per kernel; make_range over a
// part of the job, into fresh storage and into a used plan's.
#include "../../kernels/pairwise/pair_plan.hpp"

#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <numeric>
#include <random>

using namespace alignscope;
using namespace alignscope::kernels;

class TestPairPlanAll : public QObject {
    Q_OBJECT
private slots:
    void sameAsMake_data();
    void sameAsMake();
};

void TestPairPlanAll::sameAsMake_data() {
    QTest::addColumn<int>("pattern");
    QTest::newRow("one shape") << 0;
    QTest::newRow("runs of shapes") << 1;
    QTest::newRow("shapes interleaved") << 2;
    QTest::newRow("some past the 32-bit limit") << 3;
}

void TestPairPlanAll::sameAsMake() {
    QFETCH(int, pattern);
    std::mt19937_64 random(42 + static_cast<std::uint64_t>(pattern));
    std::vector<PairLengths> lengths;
    for (std::size_t k = 0; k < 5000; ++k) {
        PairLengths shape{300, 300};
        if (pattern == 1) shape = k / 700 % 2 ? PairLengths{120, 90} : PairLengths{300, 280};
        if (pattern == 2)
            shape = {static_cast<std::int64_t>(random() % 600 + 1), static_cast<std::int64_t>(random() % 600 + 1)};
        if (pattern == 3 && k % 97 == 5) shape = {3'000'000, 3'000'000};
        lengths.push_back(shape);
    }
    PairPlanRules rules;
    rules.mode = AlignmentMode::Global;
    rules.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62").scaled(1000), 11, 1);
    rules.sm_count = 4;  // 5,000 pairs are "many": short ones inter, longer ones intra4
    std::vector<std::size_t> all(lengths.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    const auto describe = [](std::size_t k) { return "pair " + std::to_string(k); };
    const PairPlan listed = PairPlan::make(lengths, all, rules, false, describe);
    const PairPlan whole = PairPlan::make_all(lengths, rules, false, describe);
    QCOMPARE(whole.host_pairs(), listed.host_pairs());
    QCOMPARE(whole.lists().size(), listed.lists().size());
    std::size_t planned = whole.host_pairs().size();
    for (const auto& [name, list] : whole.lists()) {
        const WorkList& other = listed.lists().at(name);
        QCOMPARE(list.pairs, other.pairs);
        QVERIFY(list.lengths == other.lengths);
        QCOMPARE(list.unit_first, other.unit_first);
        QCOMPARE(list.units.size(), other.units.size());
        QVERIFY(std::is_sorted(list.lengths.begin(), list.lengths.end(), std::greater<>()));
        for (std::size_t u = 0; u < list.units.size(); ++u) {
            QCOMPARE(list.units[u].bytes, other.units[u].bytes);
            QCOMPARE(list.units[u].cells, other.units[u].cells);
        }
        for (std::size_t k = 0; k < list.pairs.size(); ++k) QVERIFY(list.lengths[k] == lengths[list.pairs[k]]);
        planned += list.pairs.size();
    }
    QCOMPARE(planned, lengths.size());
    if (pattern == 3) QVERIFY(!whole.host_pairs().empty());
    if (pattern == 1) QCOMPARE(whole.lists().size(), std::size_t{2});

    // A range of the job (a part of a job run in parts) against make() over
    // the same indices, the kernels chosen for the whole job's pair count.
    const std::size_t first = 1234, count = 2001;
    std::vector<std::size_t> some(count);
    std::iota(some.begin(), some.end(), first);
    PairPlanRules part_rules = rules;
    part_rules.job_pairs = lengths.size();
    const PairPlan listed_part = PairPlan::make(lengths, some, part_rules, false, describe);
    const PairPlan range = PairPlan::make_range(lengths, first, count, part_rules, false, describe);
    QCOMPARE(range.host_pairs(), listed_part.host_pairs());
    QCOMPARE(range.lists().size(), listed_part.lists().size());
    std::size_t in_range = range.host_pairs().size();
    for (const auto& [name, list] : range.lists()) {
        const WorkList& other = listed_part.lists().at(name);
        QCOMPARE(list.pairs, other.pairs);
        QCOMPARE(list.unit_first, other.unit_first);
        QVERIFY(whole.lists().count(name) == 1);  // the whole job's kernels
        for (std::size_t k : list.pairs) QVERIFY(k >= first && k < first + count);
        in_range += list.pairs.size();
    }
    QCOMPARE(in_range, count);

    // The same range planned into the storage of a plan done with (the whole
    // job's): the same plan, the donor left empty.
    PairPlan donor = PairPlan::make_all(lengths, rules, false, describe);
    QVERIFY(donor.capacity() >= lengths.size() - whole.host_pairs().size());
    const PairPlan reused = PairPlan::make_range(lengths, first, count, part_rules, false, describe, &donor);
    QCOMPARE(donor.capacity(), std::size_t{0});
    QVERIFY(donor.lists().empty() && donor.host_pairs().empty());
    QCOMPARE(reused.host_pairs(), range.host_pairs());
    QCOMPARE(reused.lists().size(), range.lists().size());
    for (const auto& [name, list] : reused.lists()) {
        const WorkList& other = range.lists().at(name);
        QVERIFY(list.variant == other.variant);
        QCOMPARE(list.pairs, other.pairs);
        QVERIFY(list.lengths == other.lengths);
        QCOMPARE(list.unit_first, other.unit_first);
        QCOMPARE(list.units.size(), other.units.size());
        for (std::size_t u = 0; u < list.units.size(); ++u) {
            QCOMPARE(list.units[u].bytes, other.units[u].bytes);
            QCOMPARE(list.units[u].cells, other.units[u].cells);
        }
    }
}

QTEST_GUILESS_MAIN(TestPairPlanAll)
#include "test_pair_plan_all.moc"
