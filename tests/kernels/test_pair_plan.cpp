// The host-side plan of a pairwise GPU job (kernels/pairwise/pair_plan.hpp)
// and the rule that decides which pairs the 32-bit passes can hold
// (pass_bounds.hpp): the rule is checked against a full 64-bit DP of the pair
// (every H, E and F it computes) on both sides of its limit, and the plan
// against what it must hold: every pair planned once, on the GPU or the CPU
// path, longest first per kernel, batches inside the budget.
#include "../../kernels/pairwise/pair_plan.hpp"

#include <alignscope/error.hpp>
#include <alignscope/score/lane_bounds.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <limits>
#include <random>
#include <set>

using namespace alignscope;
using namespace alignscope::kernels;

namespace {

// The extremes of a 64-bit Gotoh DP of q x t as the 32-bit passes compute it:
// the lowest of H, E, F, H - open (the traceback pass's cells) and one extend
// below E and F; the highest of H + max(0, largest score) + open (the
// diagonal sum on H - open cells).
struct Extremes {
    std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
    std::int64_t highest = std::numeric_limits<std::int64_t>::min();
};

Extremes dp_extremes(const std::vector<int>& q, const std::vector<int>& t, const ScoringScheme& scheme, bool local) {
    const std::int64_t o = scheme.gap_open, e = scheme.gap_extend;
    const std::int64_t top = std::max(0, scheme.matrix.max_score()) + o;
    constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min() / 4;
    auto gap = [&](std::int64_t k) { return k > 0 ? o + (k - 1) * e : 0; };
    Extremes x;
    auto see = [&](std::int64_t h, std::int64_t ee, std::int64_t f) {
        x.lowest = std::min(x.lowest, h - o);
        if (ee > none / 2) x.lowest = std::min(x.lowest, ee - e);
        if (f > none / 2) x.lowest = std::min(x.lowest, f - e);
        x.highest = std::max(x.highest, h + top);
    };
    const std::size_t n = t.size();
    std::vector<std::int64_t> up(n + 1), row(n + 1), f(n + 1, none);
    for (std::size_t j = 0; j <= n; ++j) {
        up[j] = local ? 0 : -gap(static_cast<std::int64_t>(j));
        see(up[j], none, none);
    }
    for (std::size_t i = 1; i <= q.size(); ++i) {
        row[0] = local ? 0 : -gap(static_cast<std::int64_t>(i));
        see(row[0], none, none);
        std::int64_t ee = none;
        for (std::size_t j = 1; j <= n; ++j) {
            ee = std::max(row[j - 1] - o, ee - e);
            f[j] = std::max(up[j] - o, f[j] - e);
            std::int64_t h = std::max({up[j - 1] + scheme.matrix.score(q[i - 1], t[j - 1]), ee, f[j]});
            if (local) h = std::max<std::int64_t>(h, 0);
            row[j] = h;
            see(h, ee, f[j]);
        }
        std::swap(up, row);
    }
    return x;
}

std::vector<int> random_codes(std::mt19937& rng, std::size_t length, int letters) {
    std::vector<int> out(length);
    for (int& c : out) c = static_cast<int>(rng() % static_cast<unsigned>(letters));
    return out;
}

std::string describe(std::size_t k) { return "pair " + std::to_string(k); }

}  // namespace

class TestPairPlan : public QObject {
    Q_OBJECT

private slots:
    // From below: penalties of 1,000,000 (the largest accepted) put the
    // all-gap boundary past the sentinel within a few hundred residues. Every
    // pair the rule passes stays above the sentinel in a full DP, and the rule
    // refuses only pairs that come within a few penalties of it.
    void s32_rule_from_below_data() {
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::newRow("1000000/1000000") << 1e6 << 1e6;
        QTest::newRow("1000000/1") << 1e6 << 1.0;
        QTest::newRow("999999.5/999999.5 (scale 2)") << 999999.5 << 999999.5;
        QTest::newRow("65536/65536") << 65536.0 << 65536.0;
    }
    void s32_rule_from_below() {
        QFETCH(double, open);
        QFETCH(double, extend);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), open, extend);
        const SchemeBounds bounds = SchemeBounds::of(scheme);
        std::mt19937 rng(11);
        int flips = 0;
        bool held_before = true;
        // One residue against n: the DP's lowest cell is the all-gap path, so
        // the rule's bound is nearly met and its limit shows.
        for (std::int64_t n = 1; n <= 700; n += (n < 200 ? 7 : 1)) {
            const bool holds = s32_can_hold(AlignmentMode::Global, true, 1, n, bounds);
            if (!holds && held_before) ++flips;
            held_before = holds;
            const auto q = random_codes(rng, 1, scheme.matrix.size());
            const auto t = random_codes(rng, static_cast<std::size_t>(n), scheme.matrix.size());
            const Extremes x = dp_extremes(q, t, scheme, false);
            if (holds) {
                QVERIFY2(x.lowest > kS32Neg, qPrintable(QString("n = %1: lowest %2").arg(n).arg(x.lowest)));
                QVERIFY(x.highest < kS32Ceiling);
            } else {
                // Refused: the real DP comes within three gap opens, two
                // extends and one substitution of the sentinel.
                const std::int64_t slack =
                    3 * bounds.gap_open + 2 * bounds.gap_extend - std::min(0, bounds.min_substitution);
                QVERIFY2(x.lowest <= kS32Neg + slack, qPrintable(QString("n = %1 refused needlessly").arg(n)));
            }
            // The rule is monotone in the lengths.
            if (holds) QVERIFY(s32_can_hold(AlignmentMode::Global, true, 1, n - 1 > 0 ? n - 1 : 1, bounds));
        }
        QVERIFY(s32_can_hold(AlignmentMode::Global, true, 1, 1, bounds));
        if (bounds.gap_extend >= 1000000) QCOMPARE(flips, 1);
        // Square pairs in global and local mode: whatever the rule passes holds.
        for (std::int64_t m : {10, 60, 130, 131, 132, 200, 268, 269}) {
            const auto q = random_codes(rng, static_cast<std::size_t>(m), scheme.matrix.size());
            const auto t = random_codes(rng, static_cast<std::size_t>(m), scheme.matrix.size());
            if (!s32_can_hold(AlignmentMode::Global, true, m, m, bounds)) continue;
            for (bool local : {false, true}) {
                // Local score-only passes have their own, looser rule.
                if (local) QVERIFY(s32_can_hold(AlignmentMode::Local, false, m, m, bounds));
                const Extremes x = dp_extremes(q, t, scheme, local);
                QVERIFY(x.lowest > kS32Neg);
                QVERIFY(x.highest < kS32Ceiling);
            }
        }
    }

    // From above: a match score of 1,000,000 on identical sequences reaches
    // the ceiling at about 536 residues in local mode.
    void s32_rule_from_above() {
        // Half-step penalties double every score: the match is 2,000,000 scaled.
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1000000, -1), 0.5, 0.5);
        QCOMPARE(scheme.matrix.max_score(), 2000000);
        const SchemeBounds bounds = SchemeBounds::of(scheme);
        std::mt19937 rng(3);
        std::int64_t first_refused = 0;
        for (std::int64_t m = 500; m <= 560; ++m) {
            const auto q = random_codes(rng, static_cast<std::size_t>(m), 1);  // one letter: every pair matches
            const Extremes x = dp_extremes(q, q, scheme, true);
            if (s32_can_hold(AlignmentMode::Local, false, m, m, bounds)) {
                QVERIFY(x.highest < kS32Ceiling);
                QVERIFY(x.lowest > kS32Neg);
            } else {
                if (!first_refused) first_refused = m;
                QVERIFY2(x.highest + bounds.max_substitution >= kS32Ceiling,
                         qPrintable(QString("m = %1 refused needlessly").arg(m)));
            }
        }
        QVERIFY(first_refused > 500);
        // Lengths alone never decide: a short pair of the same scheme holds.
        QVERIFY(s32_can_hold(AlignmentMode::Local, true, 100, 1000000, bounds));
        QVERIFY(!s32_can_hold(AlignmentMode::Local, false, 600, 600, bounds));
    }

    // Matrix entries past 16 bits reach the 32-bit passes whole (their table
    // is 32-bit) and never the 16-bit ones.
    void wide_matrix_entries_take_the_32_bit_passes() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62").scaled(4096), 11, 1);
        QVERIFY(scheme.matrix.max_score() > 32767);
        QVERIFY(!s16_can_hold(AlignmentMode::Local, 300, 300, scheme));
        QVERIFY(s32_can_hold(AlignmentMode::Global, true, 300, 300, SchemeBounds::of(scheme)));
        // 11 x 4096 per residue: 23,000 identical residues pass 2^30.
        QVERIFY(!s32_can_hold(AlignmentMode::Local, false, 30000, 30000, SchemeBounds::of(scheme)));
        // Edges: an empty side holds; a parameter past the table does not.
        QVERIFY(s32_can_hold(AlignmentMode::Global, true, 0, 5, SchemeBounds::of(scheme)));
        SchemeBounds huge = SchemeBounds::of(scheme);
        huge.gap_open = std::numeric_limits<std::int32_t>::max() / 4;
        QVERIFY(!s32_can_hold(AlignmentMode::Global, true, 1, 1, huge));
    }

    // Every pair is planned once: on the GPU in one work list, or on the CPU
    // path exactly when the 32-bit passes cannot hold it.
    void pairs_split_between_gpu_and_cpu_path_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<int>("times");
        QTest::addColumn<bool>("cpu");  // whether some pair needs the CPU path
        QTest::newRow("global 1000000/1000000") << "global" << 1e6 << 1e6 << 1 << true;
        QTest::newRow("local 1000000/1000000") << "local" << 1e6 << 1e6 << 1 << true;
        QTest::newRow("semiglobal 65536/2") << "semiglobal" << 65536.0 << 2.0 << 1 << false;
        // 30,000 identical-length residues x 45,056 pass 2^30.
        QTest::newRow("global BLOSUM62 x4096") << "global" << 11.0 << 1.0 << 4096 << true;
        QTest::newRow("local BLOSUM62 11/1") << "local" << 11.0 << 1.0 << 1 << false;
        QTest::newRow("global BLOSUM62 11/1") << "global" << 11.0 << 1.0 << 1 << false;
    }
    void pairs_split_between_gpu_and_cpu_path() {
        QFETCH(QString, mode);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(int, times);
        QFETCH(bool, cpu);
        const SubstitutionMatrix blosum = SubstitutionMatrix::builtin("BLOSUM62");
        PairPlanRules rules;
        rules.mode = mode == "global"  ? AlignmentMode::Global
                     : mode == "local" ? AlignmentMode::Local
                                       : AlignmentMode::SemiGlobal;
        rules.scheme = ScoringScheme::create(times == 1 ? blosum : blosum.scaled(times), open, extend);
        rules.traceback = true;
        rules.sm_count = 132;
        std::mt19937 rng(7);
        std::vector<PairLengths> lengths;
        for (int k = 0; k < 400; ++k)
            lengths.emplace_back(1 + static_cast<std::int64_t>(rng() % 600),
                                 1 + static_cast<std::int64_t>(rng() % 600));
        lengths.emplace_back(30000, 30000);
        lengths.emplace_back(1, 1);
        std::vector<std::size_t> all(lengths.size());
        std::iota(all.begin(), all.end(), std::size_t{0});
        const PairPlan plan = PairPlan::make(lengths, all, rules, false, describe);

        const SchemeBounds bounds = SchemeBounds::of(rules.scheme);
        std::vector<int> seen(lengths.size(), 0);
        for (std::size_t k : plan.host_pairs()) {
            ++seen[k];
            QVERIFY(!s32_can_hold(rules.mode, true, lengths[k].first, lengths[k].second, bounds));
        }
        QVERIFY(std::is_sorted(plan.host_pairs().begin(), plan.host_pairs().end()));
        for (const auto& [name, list] : plan.lists()) {
            QCOMPARE(name, list.variant.name());
            QCOMPARE(list.lengths.size(), list.pairs.size());
            for (std::size_t x = 0; x < list.pairs.size(); ++x) {
                const std::size_t k = list.pairs[x];
                ++seen[k];
                QVERIFY(s32_can_hold(rules.mode, true, lengths[k].first, lengths[k].second, bounds));
                QCOMPARE(list.lengths[x], lengths[k]);
                // 16-bit lanes only where they can hold the pass.
                if (list.variant.width == LaneWidth::S16)
                    QVERIFY(s16_can_hold(rules.mode, lengths[k].first, lengths[k].second, rules.scheme));
                // Longest first, ties in job order.
                if (x > 0) {
                    QVERIFY(list.lengths[x - 1] >= list.lengths[x]);
                    if (list.lengths[x - 1] == list.lengths[x]) QVERIFY(list.pairs[x - 1] < k);
                }
            }
            QCOMPARE(list.units.size(), list.unit_first.size());
        }
        for (std::size_t k = 0; k < seen.size(); ++k) QCOMPARE(seen[k], 1);
        QCOMPARE(!plan.host_pairs().empty(), cpu);
        // The 1 x 1 pair always runs on the GPU.
        QCOMPARE(std::count(plan.host_pairs().begin(), plan.host_pairs().end(), lengths.size() - 1), 0);

        // Batches: each pair of the lists once, units whole, inside the budget.
        const std::uint64_t budget = std::uint64_t{1} << 30;  // the 30,000 x 30,000 traceback needs 0.5 GB
        const std::vector<Batch> batches = plan.batches(budget, 0, describe);
        std::vector<int> batched(lengths.size(), 0);
        for (const Batch& batch : batches) {
            QVERIFY(batch.count > 0);
            std::uint64_t cells = 0;
            for (std::size_t x = batch.first; x < batch.first + batch.count; ++x) {
                ++batched[batch.list->pairs[x]];
                cells += static_cast<std::uint64_t>(batch.list->lengths[x].first * batch.list->lengths[x].second);
            }
            QCOMPARE(batch.cells, cells);
        }
        for (std::size_t k = 0; k < lengths.size(); ++k) {
            const bool on_cpu = std::count(plan.host_pairs().begin(), plan.host_pairs().end(), k) > 0;
            QCOMPARE(batched[k], on_cpu ? 0 : 1);
        }
    }

    // The recompute of saturated pairs runs every pair at 32 bits; a forced
    // kernel that cannot hold a pair is refused naming --kernel and the pair.
    void wide_plans_and_forced_kernels() {
        PairPlanRules rules;
        rules.mode = AlignmentMode::Global;
        rules.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        rules.sm_count = 132;
        const std::vector<PairLengths> lengths{{300, 300}, {20, 40}, {300, 300}};
        const std::vector<std::size_t> all{0, 1, 2};
        const PairPlan narrow = PairPlan::make(lengths, all, rules, false, describe);
        bool any16 = false;
        for (const auto& [name, list] : narrow.lists()) any16 = any16 || list.variant.width == LaneWidth::S16;
        QVERIFY(any16);
        const PairPlan wide = PairPlan::make(lengths, all, rules, true, describe);
        for (const auto& [name, list] : wide.lists()) QCOMPARE(list.variant.width, LaneWidth::S32);

        rules.forced = parse_kernel_name("nw_affine_intra_s16", AlignmentMode::Global, false);
        const PairPlan forced = PairPlan::make(lengths, all, rules, false, describe);
        QCOMPARE(forced.lists().size(), std::size_t{1});
        QCOMPARE(forced.lists().begin()->first, std::string("nw_affine_intra_s16"));

        rules.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 1e6, 1e6);
        rules.forced = parse_kernel_name("nw_linear_intra_s32", AlignmentMode::Global, true);
        try {
            (void)PairPlan::make(lengths, all, rules, false, describe);
            QFAIL("expected an Error");
        } catch (const Error& e) {
            const QString message = e.what();
            QVERIFY2(message.startsWith("--kernel nw_linear_intra_s32 cannot hold pair 0"), e.what());
        }
        // Without the forced kernel the same pairs go to the CPU path.
        rules.forced.reset();
        const PairPlan routed = PairPlan::make(lengths, all, rules, false, describe);
        QCOMPARE(routed.host_pairs(), (std::vector<std::size_t>{0, 2}));
        QCOMPARE(routed.lists().size(), std::size_t{1});
        // Local score-only passes never go below -(2 open + extend): the
        // same pairs stay on the GPU.
        rules.mode = AlignmentMode::Local;
        rules.traceback = false;
        const PairPlan local = PairPlan::make(lengths, all, rules, false, describe);
        QVERIFY(local.host_pairs().empty());
        rules.traceback = true;
        QCOMPARE(PairPlan::make(lengths, all, rules, false, describe).host_pairs(), (std::vector<std::size_t>{0, 2}));
    }
};

QTEST_GUILESS_MAIN(TestPairPlan)
#include "test_pair_plan.moc"
