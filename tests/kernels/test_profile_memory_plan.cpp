// The GPU profile scanner's memory plan, on the CPU: a model's part must equal
// the bytes of the tables the scanner really uploads (make_msv_stripes,
// make_viterbi_stripes, the Forward profile's striped floats) for the
// tutorial models; the slices of a budget must cover every target once, in
// order, each fitting its room and none able to take the next target (checked
// by an exhaustive walk over small cases); a budget below the longest target
// gives no slice and says what is needed.
#include "../../kernels/profile/memory_plan.hpp"

#include "hmmsearch_oracle.hpp"

#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/plan7_profile.hpp>

#include <QtTest>

#include <random>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::kernels::profile;
using namespace alignscope::test;

namespace {

std::vector<std::uint64_t> offsets_of(const std::vector<std::uint64_t>& lengths) {
    std::vector<std::uint64_t> offsets{0};
    for (std::uint64_t L : lengths) offsets.push_back(offsets.back() + L);
    return offsets;
}

}  // namespace

class TestProfileMemoryPlan : public QObject {
    Q_OBJECT

private slots:
    void model_part_is_the_uploaded_tables_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("sm_count");
        QTest::addColumn<bool>("scratch");  // rows past the block's shared memory
        QTest::newRow("globins4, rows shared") << QStringLiteral("globins4") << 132 << false;
        QTest::newRow("Pkinase, rows shared") << QStringLiteral("Pkinase") << 132 << false;
        QTest::newRow("Pkinase, rows in scratch") << QStringLiteral("Pkinase") << 132 << true;
        QTest::newRow("fn3, rows in scratch, 1 SM") << QStringLiteral("fn3") << 1 << true;
    }
    void model_part_is_the_uploaded_tables() {
        QFETCH(QString, model);
        QFETCH(int, sm_count);
        QFETCH(bool, scratch);
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/" + model + ".hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        const ProfileHmm hmm = read_hmm_file((kTutorial + "/" + model + ".hmm").toStdString()).front();
        NullModel null_model(hmm.alphabet);
        const Plan7Profile gm = configure_local(hmm, null_model);
        const MsvProfile msv = make_msv_profile(gm);
        const ViterbiFilterProfile vit = make_viterbi_filter_profile(gm);
        const ForwardProfile fwd = make_forward_profile(gm);
        const MsvStripes ms = make_msv_stripes(msv, segments_for(msv.length, 64));
        const ViterbiStripes vs = make_viterbi_stripes(vit, segments_for(vit.length, 32));
        const std::uint64_t rows_of_block = 3ull * static_cast<std::uint64_t>(fwd.segments) * 64 * sizeof(float);
        ProfileDeviceShape device;
        device.sm_count = sm_count;
        device.forward_threads = 64;
        device.forward_shared = scratch ? rows_of_block - 1 : rows_of_block;
        std::uint64_t expected = sizeof(std::uint32_t) + ms.negated_cost.size() * sizeof(std::uint32_t) +
                                 (vs.transitions.size() + vs.match.size()) * sizeof(std::int16_t) +
                                 fwd.striped.size() * sizeof(float);
        if (scratch)  // the largest grid: 16 blocks an SM of 64 threads, three rows of Q floats each
            expected += 3ull * static_cast<std::uint64_t>(fwd.segments) * static_cast<std::uint64_t>(sm_count) * 16 *
                        64 * sizeof(float);
        QCOMPARE(msv.codes, vit.codes);
        QCOMPARE(profile_model_bytes(msv.length, msv.codes, device), expected);
    }

    void slices_cover_the_targets_and_fit() {
        std::mt19937 random(7);
        std::uniform_int_distribution<std::uint64_t> length(1, 400), count(1, 60);
        std::uniform_int_distribution<std::uint64_t> model(0, 5000);
        for (int round = 0; round < 300; ++round) {
            std::vector<std::uint64_t> lengths(count(random));
            for (auto& L : lengths) L = length(random);
            const std::vector<std::uint64_t> offsets = offsets_of(lengths);
            const std::uint64_t model_bytes = model(random);
            const std::uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
            const std::uint64_t needed = longest + 51 + 8 + model_bytes + (longest + 1) * 24;
            std::uniform_int_distribution<std::uint64_t> extra(0, offsets.back() + 60 * lengths.size());
            const std::uint64_t budget = needed + extra(random);
            const ProfileMemoryPlan plan = plan_profile_memory(offsets, budget, model_bytes);
            QCOMPARE(plan.needed, needed);
            QVERIFY(!plan.slices.empty());
            const std::uint64_t room = budget - model_bytes - (longest + 1) * 24;
            std::uint32_t next = 0;
            std::uint64_t largest = 0;
            for (std::size_t s = 0; s < plan.slices.size(); ++s) {
                const TargetSlice& slice = plan.slices[s];
                QCOMPARE(slice.begin, next);
                QVERIFY(slice.end > slice.begin);
                std::uint64_t residues = 0;
                for (std::uint32_t t = slice.begin; t < slice.end; ++t) residues += lengths[t];
                QCOMPARE(slice.residues, residues);
                const std::uint64_t bytes = residues + 51 * (slice.end - slice.begin) + 8;
                QVERIFY(bytes <= room);
                largest = std::max(largest, bytes);
                // Greedy: the next target would not have fitted.
                if (slice.end < lengths.size())
                    QVERIFY(residues + lengths[slice.end] + 51 * (slice.end - slice.begin + 1) + 8 > room);
                for (std::uint32_t t = slice.begin; t < slice.end; ++t) QCOMPARE(slice_of(plan.slices, t), s);
                next = slice.end;
            }
            QCOMPARE(static_cast<std::size_t>(next), lengths.size());
            QCOMPARE(plan.targets_bytes, largest);
            QCOMPARE(plan.rows_bytes, budget - model_bytes - largest);
            QVERIFY(plan.rows_bytes >= (longest + 1) * 24);
        }
    }

    void everything_fits_in_one_slice() {
        const std::vector<std::uint64_t> offsets = offsets_of({10, 20, 30});
        // 60 residues, 3 targets of 51 bytes, the closing offset: 221 bytes; rows of 31 x 24.
        const ProfileMemoryPlan plan = plan_profile_memory(offsets, 221 + 1000 + 31 * 24, 1000);
        QCOMPARE(plan.slices.size(), std::size_t(1));
        QCOMPARE(plan.slices[0], (TargetSlice{0, 3, 60}));
        QCOMPARE(plan.targets_bytes, std::uint64_t(221));
        QCOMPARE(plan.rows_bytes, std::uint64_t(31 * 24));
        // One byte less: the longest target alone in the second slice.
        const ProfileMemoryPlan split = plan_profile_memory(offsets, 221 + 1000 + 31 * 24 - 1, 1000);
        QCOMPARE(split.slices.size(), std::size_t(2));
        QCOMPARE(split.slices[1], (TargetSlice{2, 3, 30}));
    }

    void too_small_a_budget_gives_no_slice() {
        const std::vector<std::uint64_t> offsets = offsets_of({100, 5000, 7});
        const std::uint64_t needed = 5000 + 51 + 8 + 300 + 5001 * 24;
        QVERIFY(plan_profile_memory(offsets, needed - 1, 300).slices.empty());
        QCOMPARE(plan_profile_memory(offsets, needed - 1, 300).needed, needed);
        QCOMPARE(plan_profile_memory(offsets, needed, 300).slices.size(), std::size_t(3));
    }
};

QTEST_GUILESS_MAIN(TestProfileMemoryPlan)
#include "test_profile_memory_plan.moc"
