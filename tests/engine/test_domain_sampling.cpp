// The domain stage's stochastic tracebacks: TraceSampler, which keeps each
// choice's quotients and each row's end-state sums from trace to trace,
// against the straightforward traceback that normalises and divides at every
// step. Both start from the same generator state over the same full
// multihit Forward matrix (hmmer-examples' models; targets holding one or
// several near-consensus domains among random residues), and must give the
// same traces step for step and leave the generator in the same state, for
// as many traces as a region draws, over several regions in a row (the
// sampler's per-thread stores carry over from one region to the next).
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/null_model.hpp>
#include <alignscope/profile/residue_code.hpp>

#include "../../engine/src/profile/stochastic_trace.hpp"

#include <QtTest>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace alignscope::profile;

namespace {

const QString kExamples = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial/");

// L residues: `copies` stretches of the consensus (about 85 % identical)
// among random residues, from a fixed seed (plain modulo of mt19937's
// output, the same everywhere).
std::vector<std::uint8_t> target(const ProfileHmm& hmm, int L, int copies, std::mt19937& rng) {
    const ResidueCode& code = ResidueCode::of(hmm.alphabet);
    const int M = hmm.length;
    std::vector<std::uint8_t> dsq(static_cast<std::size_t>(L));
    for (int i = 0; i < L; ++i) dsq[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(rng() % code.canonical());
    const int stride = L / copies;
    for (int c = 0; c < copies; ++c) {
        const int start = c * stride + static_cast<int>(rng() % 8u);
        for (int k = 1; k <= M && start + k - 1 < L; ++k) {
            const int x = code.code_of(hmm.consensus[static_cast<std::size_t>(k)]);
            if (x >= 0 && x < code.canonical() && rng() % 100u < 85u)
                dsq[static_cast<std::size_t>(start + k - 1)] = static_cast<std::uint8_t>(x);
        }
    }
    return dsq;
}

std::string describe(const std::vector<TraceStep>& a, const std::vector<TraceStep>& b) {
    if (a.size() != b.size()) return "lengths " + std::to_string(a.size()) + " and " + std::to_string(b.size());
    for (std::size_t z = 0; z < a.size(); ++z)
        if (a[z].state != b[z].state || a[z].k != b[z].k || a[z].i != b[z].i || a[z].posterior != b[z].posterior)
            return "step " + std::to_string(z) + ": " + std::string(1, a[z].state) + " k " + std::to_string(a[z].k) +
                   " i " + std::to_string(a[z].i) + " against " + std::string(1, b[z].state) + " k " +
                   std::to_string(b[z].k) + " i " + std::to_string(b[z].i);
    return {};
}

}  // namespace

class TestDomainSampling : public QObject {
    Q_OBJECT
private slots:
    void sampler_draws_the_straightforward_traces_data() {
        QTest::addColumn<QString>("file");
        for (const char* f : {"globins4", "fn3", "Pkinase"}) QTest::newRow(f) << QString(f);
    }
    void sampler_draws_the_straightforward_traces() {
        QFETCH(QString, file);
        const ProfileHmm hmm = read_hmm_file((kExamples + file + ".hmm").toStdString()).front();
        NullModel null_model(hmm.alphabet);
        null_model.set_filter(hmm.length, hmm.composition);
        const ConfiguredProfile profile(hmm, null_model);
        const FlushSubnormals flush;
        std::mt19937 rng(20261126u + static_cast<std::uint32_t>(hmm.length));
        int traces = 0, domains = 0;
        // One, two and three domains; a short target with none in full.
        for (const auto& [L, copies] : std::vector<std::pair<int, int>>{
                 {hmm.length + 40, 1}, {2 * hmm.length + 60, 2}, {3 * hmm.length + 30, 3}, {hmm.length / 2, 1}}) {
            const std::vector<std::uint8_t> dsq = target(hmm, L, copies, rng);
            const LengthModel length = LengthModel::for_target(L, true);
            DpMatrix fx;
            forward(profile.multihit, length, dsq.data(), L, fx, true);
            DomainRandom plain(42), fast(42);
            TraceSampler sampler(profile.multihit, length, fx);
            std::vector<TraceStep> a, b;
            for (int t = 0; t < 200; ++t) {
                stochastic_trace(plain, profile.multihit, length, fx, a);
                sampler.trace(fast, b);
                const std::string diff = describe(a, b);
                QVERIFY2(diff.empty(),
                         (hmm.name + " L " + std::to_string(L) + " trace " + std::to_string(t) + ": " + diff).c_str());
                for (const TraceStep& s : a) domains += s.state == TraceStep::B;
                ++traces;
            }
            QCOMPARE(plain.uniform(), fast.uniform());
        }
        QCOMPARE(traces, 800);
        QVERIFY(domains > traces);  // several domains per trace in the repeated targets
    }

    // The clustering's overlap test in integers against the float division
    // it stands for, over every overlap and span up to 3,000 and around the
    // limit of exact conversion.
    void overlap_threshold_in_integers() {
        long checked = 0, linked = 0;
        const auto check = [&](int nov, int n) {
            const bool by_float = static_cast<float>(nov) / static_cast<float>(n) < 0.8f;
            if (below_min_overlap(nov, n) != by_float)
                QFAIL(("overlap " + std::to_string(nov) + " of " + std::to_string(n)).c_str());
            ++checked;
            linked += !by_float;
        };
        for (int n = 1; n <= 3000; ++n)
            for (int nov = -3; nov <= n; ++nov) check(nov, n);
        for (int n = (1 << 24) - 40; n <= (1 << 24) + 40; ++n)
            for (int nov = n * 4 / 5 - 40; nov <= n * 4 / 5 + 40; ++nov) check(nov, n);
        QVERIFY(checked > 4000000 && linked > 0);
    }
};

QTEST_GUILESS_MAIN(TestDomainSampling)
#include "test_domain_sampling.moc"
