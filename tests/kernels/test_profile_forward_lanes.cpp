// The GPU Forward filter's recurrence on the CPU: forward_lanes() (the code
// the kernel runs, one thread a lane) emulated with the four lanes in one
// thread must give the engine's striped forward() bit for bit: the score, the
// total scale and every row's special states, for the tutorial models over a
// slice of real sequences and the made-up models (random, peaked, zeros, flat,
// gappy, one node, 1,100 nodes) over made-up targets (consensus prefixes and
// repeats that rescale many rows, runs of one residue). The kernel's name must
// parse in the kernel grammar. (The kernel itself is checked against the same
// reference on the GPU machine by verify --profile.)
#include "../../kernels/profile/filter_layout.hpp"
#include "../../kernels/profile/forward_lanes.hpp"

#include "hmmsearch_oracle.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::kernels::profile;
using namespace alignscope::test;

namespace {

struct Tally {
    int targets = 0, differ = 0, rescaled = 0;
    QString first;
};

// Every target of `targets` through the emulated lanes and through forward().
void compare_model(const ProfileHmm& hmm, const ProfileTargets& targets, Tally& tally) {
    const FlushSubnormals flush;
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);
    const ForwardProfile& om = profile.multihit;
    ForwardModelView model;
    model.striped = om.striped.data();
    model.Q = om.segments;
    model.M = om.length;
    model.e_loop = om.e_loop;
    model.e_move = om.e_move;
    HostForwardLanes lanes(om.segments);
    DpMatrix fwd;
    for (std::size_t t = 0; t < targets.size(); ++t) {
        const int L = targets.length(t);
        const LengthModel length = LengthModel::for_target(L, true);
        std::vector<float> specials((static_cast<std::size_t>(L) + 1) * kForwardSpecials, -1.0f);
        ForwardTargetView target;
        target.dsq = targets.codes(t);
        target.L = L;
        target.loop = length.loop;
        target.move = length.move;
        target.specials = specials.data();
        const ForwardOutcome ours = forward_lanes(lanes, model, target);
        float reference = 0.0f, score = 0.0f;
        bool reference_fails = false, ours_fails = false;
        try {
            reference = forward(om, length, targets.codes(t), L, fwd, false);
        } catch (const Error&) {
            reference_fails = true;
        }
        try {
            score = forward_score_of(length, ours.xC, ours.total_scale, L);
        } catch (const Error&) {
            ours_fails = true;
        }
        ++tally.targets;
        tally.rescaled += ours.total_scale > 0.0f;
        const bool same = ours_fails == reference_fails &&
                          (reference_fails || std::memcmp(&score, &reference, sizeof score) == 0) &&
                          std::memcmp(&ours.total_scale, &fwd.total_scale, sizeof(float)) == 0 &&
                          std::memcmp(specials.data(), fwd.xmx.data(), specials.size() * sizeof(float)) == 0;
        if (same) continue;
        if (tally.differ++ == 0)
            tally.first = QStringLiteral("%1 x %2 (%3 residues): %4, reference %5")
                              .arg(QString::fromStdString(hmm.name), QString::fromStdString(targets.names[t]))
                              .arg(L)
                              .arg(static_cast<double>(score), 0, 'g', 9)
                              .arg(static_cast<double>(reference), 0, 'g', 9);
    }
}

}  // namespace

class TestProfileForwardLanes : public QObject {
    Q_OBJECT

private slots:
    void tutorial_models_on_real_sequences() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/Pkinase.hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        const QString slice = database_slice(dir_, QStringLiteral("slice.fa"), 60);
        Tally tally;
        for (const char* name : {"globins4", "fn3", "Pkinase"}) {
            const ProfileHmm hmm = read_hmm_file((kTutorial + "/" + name + ".hmm").toStdString()).front();
            ProfileTargets targets = read_profile_targets(slice.toStdString(), hmm.alphabet);
            // The consensus twice: a hit, its rows rescaled.
            std::vector<std::uint8_t> consensus;
            ResidueCode::of(hmm.alphabet).digitise(hmm.consensus.substr(1) + hmm.consensus.substr(1), consensus);
            targets.residues.insert(targets.residues.end(), consensus.begin(), consensus.end());
            targets.offsets.push_back(targets.residues.size());
            targets.names.push_back("consensus_x2");
            targets.descriptions.emplace_back();
            compare_model(hmm, targets, tally);
        }
        QVERIFY2(
            tally.differ == 0,
            qPrintable(
                QStringLiteral("%1 of %2 differ; first: %3").arg(tally.differ).arg(tally.targets).arg(tally.first)));
        QVERIFY2(tally.rescaled > 0, "no target was rescaled: the rescaling path went untested");
    }

    void made_up_models_and_targets() {
        Tally tally;
        for (const ProfileHmm& hmm : made_up_profile_models(2, false, 7)) {
            ProfileTargets targets = made_up_profile_targets(hmm, 4, 7);
            // The 100,000-residue target is the last: too slow here for every model.
            targets.residues.resize(targets.offsets[targets.size() - 1]);
            targets.offsets.pop_back();
            targets.names.pop_back();
            targets.descriptions.pop_back();
            compare_model(hmm, targets, tally);
        }
        QVERIFY2(
            tally.differ == 0,
            qPrintable(
                QStringLiteral("%1 of %2 differ; first: %3").arg(tally.differ).arg(tally.targets).arg(tally.first)));
        QVERIFY(tally.rescaled > 0);
    }

    void kernel_name_parses() {
        const KernelName parsed = KernelName::parse(kForwardKernelName);
        QCOMPARE(QString::fromStdString(parsed.format()), QString::fromLatin1(kForwardKernelName));
        QCOMPARE(QString::fromStdString(parsed.family), QStringLiteral("fwdfilter"));
        QCOMPARE(parsed.group, 4);
        QCOMPARE(parsed.width, KernelWidth::S32);
    }

private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestProfileForwardLanes)
#include "test_profile_forward_lanes.moc"
