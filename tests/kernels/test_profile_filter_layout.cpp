// The GPU profile filters' striped tables and their SSV-then-MSV scheme, on
// the CPU: a lane-by-lane emulation of the warp kernel's recurrence reads the
// model through make_msv_stripes() exactly as the kernel does (64 positions
// of 16-bit halves per segment, the shift of position p-1 into p between the
// last segment and the first, B constant in SSV) and must give, for every
// target, the scalar reference's MSV score (filters.cpp, HMMER's byte
// arithmetic): directly where SSV settles the target, through the full MSV
// recurrence where SSV says the J state could matter. The Viterbi filter's
// table must hold node k's values where the kernel reads node k. The kernels'
// names must parse in the kernel grammar. (The kernels themselves are checked
// against the same reference on the GPU machine by alignscope-profile-selftest.)
#include "../../kernels/profile/filter_layout.hpp"

#include "hmmsearch_oracle.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::kernels::profile;
using namespace alignscope::test;

namespace {

// The warp kernel's msv_target(), one position at a time: xJ or a code.
int emulate_msv(const MsvStripes& stripes, const MsvProfile& om, const std::uint8_t* dsq, int L, bool full) {
    const int Q = stripes.segments, tjbm = (om.tjb(L) + om.tbm) & 0xff;
    std::vector<int> mv(static_cast<std::size_t>(Q) * 64, 0), prev(64);
    int xJ = 0, xB = std::max(om.base - tjbm, 0), run = 0;
    for (int i = 0; i < L; ++i) {
        for (int p = 0; p < 64; ++p)
            prev[static_cast<std::size_t>(p)] = p == 0 ? 0 : mv[static_cast<std::size_t>((Q - 1) * 64 + p - 1)];
        int xE = 0;
        for (int q = 0; q < Q; ++q)
            for (int p = 0; p < 64; ++p) {
                const std::uint32_t word =
                    stripes.negated_cost[static_cast<std::size_t>((dsq[i] * Q + q) * 32 + p / 2)];
                const int negated = static_cast<std::int16_t>(p % 2 ? word >> 16 : word & 0xffff);
                int sv = std::max(prev[static_cast<std::size_t>(p)], xB);
                sv = std::min(sv + om.bias, 255);
                sv = std::max(sv + negated, 0);
                xE = std::max(xE, sv);
                int& cell = mv[static_cast<std::size_t>(q * 64 + p)];
                prev[static_cast<std::size_t>(p)] = cell;
                cell = sv;
            }
        if (full) {
            if (xE + om.bias >= 255) return kMsvOverflow;
            xJ = std::max(xJ, std::max(xE - om.tec, 0));
            xB = std::max(std::max(static_cast<int>(om.base), xJ) - tjbm, 0);
        } else {
            run = std::max(run, xE);
        }
    }
    if (full) return xJ;
    if (run + om.bias >= 255) return kMsvOverflow;
    if (run - om.tec > om.base) return kMsvNeedsFull;
    return std::max(run - om.tec, 0);
}

float score_of(const MsvProfile& om, int code, int L) {
    return code == kMsvOverflow ? std::numeric_limits<float>::infinity() : msv_score_of(om, code, L);
}

}  // namespace

class TestProfileFilterLayout : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/Pkinase.hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        slice_ = database_slice(dir_, QStringLiteral("slice.fa"), 300);
    }

    void ssv_then_msv_equals_reference_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("segments");  // 0: the kernel's own choice
        QTest::newRow("globins4") << QStringLiteral("globins4") << 0;
        QTest::newRow("fn3") << QStringLiteral("fn3") << 0;
        QTest::newRow("Pkinase") << QStringLiteral("Pkinase") << 0;
        QTest::newRow("fn3 padded to 8 segments") << QStringLiteral("fn3") << 8;
    }
    void ssv_then_msv_equals_reference() {
        QFETCH(QString, model);
        QFETCH(int, segments);
        const ProfileHmm hmm = read_hmm_file((kTutorial + "/" + model + ".hmm").toStdString()).front();
        ProfileTargets targets = read_profile_targets(slice_.toStdString(), hmm.alphabet);
        // The consensus repeated: high scores, the J state, byte overflow.
        std::vector<std::uint8_t> consensus;
        ResidueCode::of(hmm.alphabet).digitise(hmm.consensus.substr(1), consensus);
        auto add = [&targets](const std::vector<std::uint8_t>& codes) {
            targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
            targets.offsets.push_back(targets.residues.size());
            targets.names.push_back("made up");
            targets.descriptions.emplace_back();
        };
        std::vector<std::uint8_t> repeated;
        for (int copies = 1; copies <= 4; ++copies) {
            repeated.insert(repeated.end(), consensus.begin(), consensus.end());
            add(repeated);
        }
        // Pieces of it: past the J threshold without overflowing the bytes.
        for (std::size_t piece : {10, 15, 20, 30, 45, 60})
            add(std::vector<std::uint8_t>(consensus.begin(),
                                          consensus.begin() +
                                              static_cast<std::ptrdiff_t>(std::min(piece, consensus.size()))));
        NullModel null_model(hmm.alphabet);
        const MsvProfile om = make_msv_profile(configure_local(hmm, null_model));
        const int Q = segments > 0 ? segments : segments_for(om.length, 64);
        QVERIFY(Q * 64 >= om.length);
        const MsvStripes stripes = make_msv_stripes(om, Q);
        int differ = 0, rescored = 0, overflows = 0;
        for (std::size_t t = 0; t < targets.size(); ++t) {
            const int L = targets.length(t);
            int code = emulate_msv(stripes, om, targets.codes(t), L, false);
            if (code == kMsvNeedsFull) {
                ++rescored;
                code = emulate_msv(stripes, om, targets.codes(t), L, true);
            }
            overflows += code == kMsvOverflow;
            const float reference = msv_filter(om, targets.codes(t), L);
            const float ours = score_of(om, code, L);
            differ += std::memcmp(&ours, &reference, sizeof ours) != 0;
            // The MSV recurrence alone gives the same score too.
            const float full = score_of(om, emulate_msv(stripes, om, targets.codes(t), L, true), L);
            differ += std::memcmp(&full, &reference, sizeof full) != 0;
        }
        QVERIFY2(differ == 0, qPrintable(QStringLiteral("%1 of %2 scores differ").arg(differ).arg(2 * targets.size())));
        QVERIFY2(rescored > 0, "no target needed the MSV pass: the SSV-to-MSV path went untested");
        QVERIFY2(overflows > 0, "no target overflowed: the overflow path went untested");
    }

    // Node k's values where the Viterbi kernel reads them: segment (k-1) % Q,
    // lane (k-1) / Q; -32768 past node M.
    void viterbi_stripes_place_nodes() {
        const ProfileHmm hmm = read_hmm_file((kTutorial + "/globins4.hmm").toStdString()).front();
        NullModel null_model(hmm.alphabet);
        const ViterbiFilterProfile om = make_viterbi_filter_profile(configure_local(hmm, null_model));
        const int Q = segments_for(om.length, 32);
        QCOMPARE(Q, 6);  // 149 nodes: 5 segments needed, 6 compiled
        const ViterbiStripes s = make_viterbi_stripes(om, Q);
        const std::size_t width = static_cast<std::size_t>(Q) * 32;
        for (int k = 1; k <= Q * 32; ++k) {
            const std::size_t slot = static_cast<std::size_t>(((k - 1) % Q) * 32 + (k - 1) / Q);
            const bool real = k <= om.length;
            const std::size_t node = static_cast<std::size_t>(k - 1);
            QCOMPARE(s.transitions[ViterbiStripes::MM * width + slot], real ? om.mm[node] : std::int16_t(-32768));
            QCOMPARE(s.transitions[ViterbiStripes::DD * width + slot], real ? om.dd[node] : std::int16_t(-32768));
            const int x = 7;
            QCOMPARE(s.match[static_cast<std::size_t>(x) * width + slot],
                     real ? om.match[static_cast<std::size_t>(x * om.length) + node] : std::int16_t(-32768));
        }
        QCOMPARE(segments_for(2048, 64), 32);
        QCOMPARE(segments_for(2049, 64), 0);
        QCOMPARE(segments_for(1024, 32), 32);
        QCOMPARE(segments_for(1025, 32), 48);
        QCOMPARE(segments_for(1142, 32), 48);  // SMC_N
        QCOMPARE(segments_for(1537, 32), 64);
        QCOMPARE(segments_for(2048, 32), 64);
        QCOMPARE(segments_for(2049, 32), 0);
    }

    void kernel_names_parse() {
        for (const char* name : {kSsvKernelName, kMsvKernelName, kViterbiKernelName}) {
            const KernelName parsed = KernelName::parse(name);
            QCOMPARE(QString::fromStdString(parsed.format()), QString::fromLatin1(name));
            QCOMPARE(parsed.mode, AlignmentMode::Local);
        }
        QCOMPARE(QString::fromStdString(KernelName::parse(kSsvKernelName).family), QStringLiteral("ssv"));
        QCOMPARE(KernelName::parse(kMsvKernelName).width, KernelWidth::S16x2);
        QCOMPARE(QString::fromStdString(KernelName::parse(kViterbiKernelName).family), QStringLiteral("vitfilter"));
    }

private:
    QTemporaryDir dir_;
    QString slice_;
};

QTEST_GUILESS_MAIN(TestProfileFilterLayout)
#include "test_profile_filter_layout.moc"
