// The multi-GPU backend's dealing of a job (kernels/multi/group_plan.hpp):
// static shares by throughput, the tail chunks and the rules by job size, on
// cases worked out by hand.
#include "../../kernels/multi/group_plan.hpp"

#include <QtTest>

#include <cstdint>
#include <vector>

using namespace alignscope::kernels;

namespace {

bool same(const GroupChunk& c, std::size_t first, std::size_t end) { return c.first == first && c.end == end; }

// Every pair dealt exactly once, in job order: the members' own chunks, then
// the tail, back to back.
bool covers(const GroupCut& cut, std::size_t count) {
    std::size_t next = 0;
    for (const GroupChunk& c : cut.own) {
        if (c.first != next || c.end < c.first) return false;
        next = c.end;
    }
    for (const GroupChunk& c : cut.tail) {
        if (c.first != next || c.end <= c.first) return false;
        next = c.end;
    }
    return next == count;
}

}  // namespace

class TestGroupPlan : public QObject {
    Q_OBJECT
private slots:
    void shares_follow_throughput() {
        const std::vector<double> s = static_shares({3.0, 1.0}, 0.9);
        QCOMPARE(s.size(), std::size_t{2});
        QVERIFY(qFuzzyCompare(s[0], 0.675) && qFuzzyCompare(s[1], 0.225));
        const std::vector<double> none = static_shares({0.0, 0.0, 0.0}, 0.9);  // not measured: alike
        for (double x : none) QVERIFY(qFuzzyCompare(x, 0.3));
    }

    void equal_members_no_tail() {
        // Ten pairs of 10 cells, two equal GPUs: each one's 45-cell share is
        // reached after five pairs, and nothing is left for the tail.
        const GroupCut cut = cut_group_job(std::vector<std::uint64_t>(10, 10), {1.0, 1.0});
        QVERIFY(same(cut.own[0], 0, 5) && same(cut.own[1], 5, 10));
        QVERIFY(cut.tail.empty());
        QVERIFY(covers(cut, 10));
    }

    void faster_member_and_tail() {
        // 100 pairs of one cell, GPU 0 three times as fast: shares of 67 and
        // 22 cells (0.675 and 0.225 of 100, rounded down), 11 cells left; a
        // tail chunk is 11 / (2 x 2) = 2 cells: five chunks of two, one of one.
        const GroupCut cut = cut_group_job(std::vector<std::uint64_t>(100, 1), {3.0, 1.0});
        QVERIFY(same(cut.own[0], 0, 67) && same(cut.own[1], 67, 89));
        QCOMPARE(cut.tail.size(), std::size_t{6});
        for (std::size_t k = 0; k < 5; ++k) QVERIFY(same(cut.tail[k], 89 + 2 * k, 91 + 2 * k));
        QVERIFY(same(cut.tail[5], 99, 100));
        QVERIFY(covers(cut, 100));
    }

    void large_pair_overshoots_a_share() {
        // A member takes whole pairs: one pair of 1,000 cells fills GPU 0's
        // share (0.45 x 1,030 = 463) at once; GPU 1's 463 cells take the
        // rest, so the tail is empty.
        const std::vector<std::uint64_t> cells = {1000, 10, 10, 10};
        const GroupCut cut = cut_group_job(cells, {1.0, 1.0});
        QVERIFY(same(cut.own[0], 0, 1) && same(cut.own[1], 1, 4));
        QVERIFY(cut.tail.empty());
    }

    void whole_static_cut_has_no_tail() {
        // Rules of a mid-sized job: everything dealt up front; the last
        // member takes what rounding leaves (0.5 x 101 = 50 cells each, 1 over).
        GroupCutRules rules;
        rules.static_fraction = 1.0;
        const GroupCut cut = cut_group_job(std::vector<std::uint64_t>(101, 1), {1.0, 1.0}, rules);
        QVERIFY(same(cut.own[0], 0, 50) && same(cut.own[1], 50, 101));
        QVERIFY(cut.tail.empty());
        QVERIFY(covers(cut, 101));
    }

    void tail_chunks_have_a_least_size() {
        // 90 % static (45 each), 10 cells left: a quarter would be 2 or 3
        // cells, but the rules' least is 4: chunks of 4, 4 and 2.
        GroupCutRules rules;
        rules.least_tail_chunk = 4;
        const GroupCut cut = cut_group_job(std::vector<std::uint64_t>(100, 1), {1.0, 1.0}, rules);
        QVERIFY(same(cut.own[0], 0, 45) && same(cut.own[1], 45, 90));
        QCOMPARE(cut.tail.size(), std::size_t{3});
        QVERIFY(same(cut.tail[0], 90, 94) && same(cut.tail[1], 94, 98) && same(cut.tail[2], 98, 100));
    }

    void rules_by_job_size() {
        GroupSplitRules rules;
        rules.tail_cells = 1000;
        rules.least_tail_chunk = 70;
        const GroupCutRules mid = cut_rules_for(999, rules);
        QCOMPARE(mid.static_fraction, 1.0);
        const GroupCutRules large = cut_rules_for(1000, rules);
        QCOMPARE(large.static_fraction, 0.9);
        QCOMPARE(large.least_tail_chunk, std::uint64_t{70});
        // Defaults: the pair pipeline's chunk (65,536 pairs of 300 x 300) and
        // bench's million such pairs run whole on one GPU (host-bound); a
        // hundred thousand pairs of 1,000 x 1,000 are split, without a tail.
        const GroupSplitRules defaults;
        QVERIFY(!split_job(65536ull * 90000, 65536, defaults));
        QVERIFY(!split_job(1000000ull * 90000, 1000000, defaults));
        QVERIFY(split_job(100000ull * 1000000, 100000, defaults));
        QVERIFY(!split_job(10000ull * 1000000, 10000, defaults));  // 1e10 cells: too few
        QVERIFY(!split_job(0, 0, defaults));
        QCOMPARE(cut_rules_for(100000ull * 1000000, defaults).static_fraction, 1.0);
    }

    void empty_job() {
        const GroupCut cut = cut_group_job({}, {1.0, 2.0, 3.0});
        QCOMPARE(cut.own.size(), std::size_t{3});
        for (const GroupChunk& c : cut.own) QVERIFY(same(c, 0, 0));
        QVERIFY(cut.tail.empty());
    }
};

QTEST_GUILESS_MAIN(TestGroupPlan)
#include "test_group_plan.moc"
