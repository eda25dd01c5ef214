// What verify --profile and the profile kernels' catalog entries check with:
// the made-up models are proper Plan7 models (every distribution sums to 1),
// the extreme ones really drive the scalar reference's MSV bytes and Viterbi
// filter words through their ceilings on the made-up targets (a consensus
// prefix one residue longer turns a finite score into +infinity), and the
// catalog check fails a kernel whose scores are off on one target while it
// passes the filter that is right and a kernel that declines the longest
// models.
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/profile/filters.hpp>

#include <QtTest>

#include <cmath>
#include <set>

using namespace alignscope;
using namespace alignscope::profile;

namespace {

// Index of the target named `name`, or -1.
int target_named(const ProfileTargets& targets, const std::string& name) {
    for (std::size_t t = 0; t < targets.size(); ++t)
        if (targets.names[t] == name) return static_cast<int>(t);
    return -1;
}

// Whether some consensus prefix scores finite and the prefix one longer +infinity.
bool crosses_ceiling(const ProfileTargets& targets, const std::function<float(std::size_t)>& score) {
    for (int n = 1; n < 64; ++n) {
        const int a = target_named(targets, "consensus_prefix" + std::to_string(n));
        const int b = target_named(targets, "consensus_prefix" + std::to_string(n + 1));
        if (a < 0 || b < 0) return false;
        const float sa = score(static_cast<std::size_t>(a)), sb = score(static_cast<std::size_t>(b));
        if (std::isfinite(sa) && std::isinf(sb) && sb > 0) return true;
    }
    return false;
}

}  // namespace

class TestProfileFilterVerify : public QObject {
    Q_OBJECT

private slots:
    void made_up_models_are_plan7_models() {
        const std::vector<ProfileHmm> models = made_up_profile_models(3, true, 9);
        std::set<std::string> names;
        std::set<int> lengths;
        for (const ProfileHmm& hmm : models) {
            names.insert(hmm.name);
            lengths.insert(hmm.length);
            QVERIFY(hmm.statistics.has_value());
            QCOMPARE(int(hmm.consensus.size()), hmm.length + 1);
            const int K = hmm.canonical();
            for (int k = 0; k <= hmm.length; ++k) {
                double match = 0, insert = 0;
                for (int x = 0; x < K; ++x) {
                    match += hmm.match[static_cast<std::size_t>(k * K + x)];
                    insert += hmm.insert[static_cast<std::size_t>(k * K + x)];
                }
                if (k > 0) QVERIFY2(std::fabs(match - 1) < 1e-4, hmm.name.c_str());
                QVERIFY2(std::fabs(insert - 1) < 1e-4, hmm.name.c_str());
                const double from_m = hmm.transition(k, kMM) + hmm.transition(k, kMI) + hmm.transition(k, kMD);
                const double from_i = hmm.transition(k, kIM) + hmm.transition(k, kII);
                const double from_d = hmm.transition(k, kDM) + hmm.transition(k, kDD);
                QVERIFY2(std::fabs(from_m - 1) < 1e-4 && std::fabs(from_i - 1) < 1e-4 && std::fabs(from_d - 1) < 1e-4,
                         qPrintable(QString::fromStdString(hmm.name) + " node " + QString::number(k)));
            }
            QCOMPARE(hmm.transition(hmm.length, kMD), 0.0f);  // no node after the last
            QCOMPARE(hmm.transition(0, kDM), 1.0f);           // no delete state before the first
        }
        QCOMPARE(names.size(), models.size());
        QVERIFY(lengths.count(1) && lengths.count(1100) && lengths.count(2100));
        // The same seed gives the same models.
        QCOMPARE(made_up_profile_models(3, true, 9)[1].match, models[1].match);
    }

    void extreme_models_cross_the_lane_ceilings() {
        std::vector<ProfileHmm> models = made_up_profile_models(0, false, 3);
        for (ProfileHmm& hmm : made_up_profile_models(0, false, 3, ResidueAlphabet::Dna))
            models.push_back(std::move(hmm));
        int checked = 0;
        for (const ProfileHmm& hmm : models) {
            // The peaked models long enough to climb (not the one-node ones), and
            // the amino zeros model (three residues of twenty a node; of four,
            // a DNA node scores too little to reach the words' ceiling in 50).
            const bool extreme = hmm.name.find("peaked_") != std::string::npos || hmm.name.rfind("zeros_", 0) == 0;
            if (!extreme || hmm.length < 40) continue;
            ++checked;
            NullModel null_model(hmm.alphabet);
            null_model.set_filter(hmm.length, hmm.composition);
            const ConfiguredProfile profile(hmm, null_model);
            const ProfileTargets targets = made_up_profile_targets(hmm, 5, 3);
            QVERIFY2(crosses_ceiling(targets,
                                     [&](std::size_t t) {
                                         return msv_filter(profile.msv, targets.codes(t), targets.length(t));
                                     }),
                     (hmm.name + ": no consensus prefix takes MSV past its bytes").c_str());
            QVERIFY2(crosses_ceiling(targets,
                                     [&](std::size_t t) {
                                         return viterbi_filter(profile.viterbi, targets.codes(t), targets.length(t));
                                     }),
                     (hmm.name + ": no consensus prefix takes the Viterbi filter past its words").c_str());
        }
        QCOMPARE(checked, 5);  // peaked_M40 and peaked_M300, amino and DNA; zeros_M50
    }

    // A scanner whose MSV score of one target is a byte unit off: the catalog
    // check fails that kernel and passes the Viterbi filter and an extra pass
    // that is right.
    void catalog_check_fails_a_wrong_kernel() {
        struct OffByOne final : ProfileFilterScanner {
            std::unique_ptr<ProfileFilterScanner> inner = make_cpu_profile_scanner_registry()->create("cpu", 2);
            DeviceInfo info() const override { return inner->info(); }
            void load(const ProfileTargets& t, JobContext& c) override { inner->load(t, c); }
            void msv(const MsvProfile& m, std::span<float> s, JobContext& c) override {
                inner->msv(m, s, c);
                s[1] += 1.0f / m.scale;
            }
            void viterbi(const ViterbiFilterProfile& m, std::span<const std::uint32_t> t, std::span<float> s,
                         JobContext& c) override {
                inner->viterbi(m, t, s, c);
            }
        };
        ProfileKernelFamily family;
        family.make_scanner = [](const std::string&, int) { return std::make_unique<OffByOne>(); };
        family.extra_passes = [](ProfileFilterScanner&) {
            ExtraMsvPass right;
            right.kernel = "sw_linear_msv_s16x2";
            right.run = [](const MsvProfile& m, const ProfileTargets& targets, std::span<float> scores) {
                if (m.length > 250) return false;  // as a GPU kernel declines the longest models
                for (std::size_t t = 0; t < targets.size(); ++t)
                    scores[t] = msv_filter(m, targets.codes(t), targets.length(t));
                return true;
            };
            return std::vector<ExtraMsvPass>{right};
        };
        family.msv_kernel = "sw_linear_ssv_s16x2";
        family.viterbi_kernel = "sw_affine_vitfilter_s32";
        family.long_models = false;  // a second or two under the sanitizers, not ten
        const KernelCheck check = make_profile_kernel_check(family);
        JobContext context;
        KernelCheckRequest request;
        request.device = "gpu:0";
        request.pairs = 4;
        request.threads = 2;
        request.context = &context;
        request.kernel = KernelName::parse("sw_linear_ssv_s16x2");
        const KernelCheckOutcome wrong = check(request);
        QVERIFY(!wrong.ok());
        QVERIFY(wrong.failed > 0 && wrong.failed < wrong.pairs);
        QVERIFY(!wrong.problems.empty());
        request.kernel = KernelName::parse("sw_affine_vitfilter_s32");
        const KernelCheckOutcome viterbi = check(request);
        QVERIFY2(viterbi.ok(), viterbi.problems.empty() ? "" : viterbi.problems.front().c_str());
        QCOMPARE(viterbi.pairs, wrong.pairs);
        request.kernel = KernelName::parse("sw_linear_msv_s16x2");
        const KernelCheckOutcome alone = check(request);
        QVERIFY(alone.ok());
        QVERIFY(alone.pairs > 0 && alone.pairs < wrong.pairs);   // the long models were declined, not failed
        request.kernel = KernelName::parse("sw_linear_msv_s8");  // a kernel nothing here runs
        QVERIFY(check(request).failed_check());
    }
};

QTEST_GUILESS_MAIN(TestProfileFilterVerify)
#include "test_profile_filter_verify.moc"
