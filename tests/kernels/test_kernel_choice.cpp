// Kernel names and automatic kernel choice (kernels/pairwise/kernel_catalog.hpp,
// kernel_choice.hpp): the mode_gapmodel_family_width grammar round-trips, a
// wrong --kernel is an Error that lists what fits the job, the family follows
// lengths and batch size, and the 16-bit lanes are offered only when a pass's
// lowest value stays above the sentinel (checked against a brute-force bound).
#include "../../kernels/pairwise/kernel_choice.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <random>

using namespace alignscope;
using namespace alignscope::kernels;

class TestKernelChoice : public QObject {
    Q_OBJECT

private slots:
    void names_round_trip() {
        int count = 0;
        for (auto mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal})
            for (bool linear : {false, true})
                for (const KernelVariant& v : variants_for(mode, linear)) {
                    QCOMPARE(parse_kernel_name(v.name(), mode, linear), v);
                    // The engine's grammar reads every GPU name back to the same parts.
                    const KernelName parsed = KernelName::parse(v.name());
                    QCOMPARE(parsed, v.kernel_name());
                    QCOMPARE(parsed.mode, mode);
                    QCOMPARE(parsed.linear, linear);
                    QCOMPARE(parsed.format(), v.name());
                    ++count;
                }
        // 3 modes x 2 gap models x (inter + intra with 4, 8, 16, 32 threads) x 2 widths.
        QCOMPARE(count, 60);
        QCOMPARE(KernelVariant({AlignmentMode::Local, false, KernelFamily::Inter, LaneWidth::S16}).name(),
                 std::string("sw_affine_inter_s16"));
        QCOMPARE(KernelVariant({AlignmentMode::Global, true, KernelFamily::Intra, LaneWidth::S32}).name(),
                 std::string("nw_linear_intra_s32"));
        QCOMPARE(KernelVariant({AlignmentMode::SemiGlobal, false, KernelFamily::Intra, LaneWidth::S16}).name(),
                 std::string("sg_affine_intra_s16"));
        QCOMPARE(KernelVariant({AlignmentMode::Local, false, KernelFamily::Intra, LaneWidth::S16, 8}).name(),
                 std::string("sw_affine_intra8_s16"));
        // A warp per pair is "intra" whether the group is given or defaulted.
        QCOMPARE(KernelVariant({AlignmentMode::Local, false, KernelFamily::Intra, LaneWidth::S16, 32}),
                 KernelVariant({AlignmentMode::Local, false, KernelFamily::Intra, LaneWidth::S16}));
        QCOMPARE(parse_kernel_name("sw_affine_intra4_s32", AlignmentMode::Local, false).threads_per_pair(), 4);
        QVERIFY(!(KernelVariant({AlignmentMode::Local, false, KernelFamily::Intra, LaneWidth::S16, 8}) ==
                  KernelVariant({AlignmentMode::Local, false, KernelFamily::Intra, LaneWidth::S16, 4})));
    }

    void wrong_kernel_names_are_errors_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown") << "sw_affine_striped_s16"
                                 << "is not a GPU kernel";
        QTest::newRow("other mode") << "nw_affine_inter_s16"
                                    << "is a kernel for global affine alignment, but the job is local affine";
        QTest::newRow("other gaps") << "sw_linear_intra_s32"
                                    << "is a kernel for local linear alignment";
        QTest::newRow("empty") << ""
                               << "is not a GPU kernel";
        QTest::newRow("no such group") << "sw_affine_intra2_s16"
                                       << "is not a GPU kernel";
    }
    void wrong_kernel_names_are_errors() {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        try {
            parse_kernel_name(name.toStdString(), AlignmentMode::Local, false);
            QFAIL("expected an Error");
        } catch (const Error& e) {
            const QString message = e.what();
            QVERIFY2(message.startsWith("--kernel '" + name + "'"), e.what());
            QVERIFY2(message.contains(expected), e.what());
            QVERIFY2(message.contains("sw_affine_inter_s16, sw_affine_inter_s32, sw_affine_intra4_s16, "
                                      "sw_affine_intra4_s32, sw_affine_intra8_s16"),
                     e.what());
            QVERIFY2(message.endsWith("sw_affine_intra_s16, sw_affine_intra_s32"), e.what());
        }
    }

    void family_follows_lengths_and_batch_size_data() {
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<quint64>("pairs");
        QTest::addColumn<int>("group");  // 1 = inter
        const quint64 full = 132ull * kInterPairsPerSm;
        QTest::newRow("many short") << qint64(150) << qint64(250) << full << 1;
        QTest::newRow("few short") << qint64(150) << qint64(250) << full - 1 << 32;
        QTest::newRow("many at the inter limit") << qint64(kInterMaxLength) << qint64(5) << full << 1;
        QTest::newRow("long target") << qint64(5) << qint64(kInterMaxLength + 1) << full * 10 << kManyPairsGroup;
        QTest::newRow("length 1") << qint64(1) << qint64(1) << full << 1;
        QTest::newRow("many 300") << qint64(300) << qint64(300) << full << kManyPairsGroup;
        QTest::newRow("many 5000") << qint64(5000) << qint64(5000) << full << kManyPairsGroup;
        QTest::newRow("few 5000") << qint64(5000) << qint64(5000) << quint64(100) << 32;
    }
    void family_follows_lengths_and_batch_size() {
        QFETCH(qint64, m);
        QFETCH(qint64, n);
        QFETCH(quint64, pairs);
        QFETCH(int, group);
        const FamilyChoice choice = choose_family(m, n, pairs, 132);
        QCOMPARE(choice.family == KernelFamily::Inter, group == 1);
        QCOMPARE(choice.group, group);
    }

    // The bound s16_can_hold relies on: a global score is never below
    // -(gap(m) + gap(n)), the all-gap path. Checked against the CPU reference
    // on random pairs under heavy penalties and mismatch-rich sequences.
    void s16_lower_bound_holds_on_the_reference() {
        std::mt19937 rng(5);
        for (double open : {1.0, 11.0, 40.0})
            for (int trial = 0; trial < 40; ++trial) {
                const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), open, 1);
                auto gap = [&](std::int64_t k) { return k > 0 ? scheme.gap_open + (k - 1) * scheme.gap_extend : 0; };
                const std::string letters = trial % 2 ? "WC" : "ARNDCQEGHILKMFPSTWYV";
                std::string q(1 + rng() % 60, 'A'), t(1 + rng() % 60, 'A');
                for (auto& c : q) c = letters[rng() % letters.size()];
                for (auto& c : t) c = trial % 2 ? 'G' : letters[rng() % letters.size()];
                AlignOptions options;
                options.mode = AlignmentMode::Global;
                options.traceback = false;
                const auto a = align_reference(q, t, scheme, options);
                QVERIFY(a.score >=
                        -(gap(static_cast<std::int64_t>(q.size())) + gap(static_cast<std::int64_t>(t.size()))));
            }
    }

    void s16_lanes_offered_only_when_they_can_hold_the_pass_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<qint64>("m");
        QTest::addColumn<qint64>("n");
        QTest::addColumn<bool>("expected");
        QTest::newRow("local long") << "local" << 11.0 << 1.0 << qint64(100000) << qint64(100000) << true;
        QTest::newRow("global short") << "global" << 11.0 << 1.0 << qint64(300) << qint64(300) << true;
        QTest::newRow("global long") << "global" << 11.0 << 1.0 << qint64(20000) << qint64(20000) << false;
        QTest::newRow("global heavy gaps") << "global" << 100.0 << 100.0 << qint64(200) << qint64(200) << false;
        QTest::newRow("semiglobal medium") << "semiglobal" << 10.0 << 0.5 << qint64(5000) << qint64(5000) << true;
        QTest::newRow("penalty too large") << "local" << 2500.0 << 1.0 << qint64(10) << qint64(10) << false;
        // The 16-bit passes' profile holds s + open in a signed byte: BLOSUM62's
        // largest score is 11 (W/W), so an open of 116 fits and 117 does not.
        QTest::newRow("byte profile, largest fit") << "local" << 116.0 << 1.0 << qint64(300) << qint64(300) << true;
        QTest::newRow("byte profile, one over") << "local" << 117.0 << 1.0 << qint64(300) << qint64(300) << false;
    }
    void s16_lanes_offered_only_when_they_can_hold_the_pass() {
        QFETCH(QString, mode);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(qint64, m);
        QFETCH(qint64, n);
        QFETCH(bool, expected);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), open, extend);
        QCOMPARE(s16_can_hold(parse_mode(mode.toStdString()), m, n, scheme), expected);
        if (expected && mode != "local") {
            // The lowest value a pass can meet stays above the sentinel.
            auto gap = [&](qint64 k) { return k > 0 ? scheme.gap_open + (k - 1) * scheme.gap_extend : 0; };
            QVERIFY(-(gap(m) + gap(n)) - 2 * scheme.gap_open - scheme.gap_extend + scheme.matrix.min_score() >
                    dp::Cell16x2::kNeg);
        }
    }
};

QTEST_GUILESS_MAIN(TestKernelChoice)
#include "test_kernel_choice.moc"
