// The domain stage's stochastic tracebacks: TraceSampler, which keeps each
// choice's quotients and each row's end-state sums from trace to trace,
// against the straightforward traceback that normalises and divides at every
// step (its traces, and its domains with their null2 taken without a trace);
// and the clustering of sampled domains against Easel's loop. Both start from the same generator state over the same
// full multihit Forward matrix (hmmer-examples' models; targets holding one or several near-consensus domains among
// random residues), and must give the same traces step for step and leave the generator in the same state, for as many
// traces as a region draws, over several regions in a row (the sampler's per-thread stores carry over from one region
// to the next).
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/null_model.hpp>
#include <alignscope/profile/residue_code.hpp>

#include "../../engine/src/profile/domain_clustering.hpp"
#include "../../engine/src/profile/posterior_decoding.hpp"
#include "../../engine/src/profile/stochastic_trace.hpp"

#include <QtTest>

#include <cmath>
#include <cstdint>
#include <cstring>
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

// The domains of a trace (target and model extent of their M states).
void add_domains(const std::vector<TraceStep>& tr, int sample, std::vector<SampledDomain>& out) {
    SampledDomain d{sample, 0, 0, 0, 0};
    for (const TraceStep& s : tr) {
        if (s.state == TraceStep::B) d = SampledDomain{sample, 0, 0, 0, 0};
        if (s.state == TraceStep::M) {
            if (d.i == 0) d.i = s.i, d.k = s.k;
            d.j = s.i, d.m = s.k;
        }
        if (s.state == TraceStep::E) out.push_back(d);
    }
}

// Easel's single linkage step by step: the last unassigned domain starts a
// cluster; each one popped scans the unassigned from the last, a linked one
// swapped out for the last and pushed.
std::vector<int> plain_single_linkage(const std::vector<SampledDomain>& sp, int& clusters) {
    const int n = static_cast<int>(sp.size());
    std::vector<int> available, pending, assignment(static_cast<std::size_t>(n), -1);
    for (int v = n - 1; v >= 0; --v) available.push_back(v);
    int na = n;
    clusters = 0;
    while (na > 0) {
        pending.push_back(available[static_cast<std::size_t>(--na)]);
        while (!pending.empty()) {
            const int v = pending.back();
            pending.pop_back();
            assignment[static_cast<std::size_t>(v)] = clusters;
            for (int a = na - 1; a >= 0; --a)
                if (linked(sp[static_cast<std::size_t>(v)],
                           sp[static_cast<std::size_t>(available[static_cast<std::size_t>(a)])])) {
                    pending.push_back(available[static_cast<std::size_t>(a)]);
                    available[static_cast<std::size_t>(a)] = available[static_cast<std::size_t>(--na)];
                }
        }
        ++clusters;
    }
    return assignment;
}

// TraceSampler::domains() of the next trace against the straightforward
// trace tr: each domain's extent, and its null2 from the nodes against
// null2_by_trace() over its B..E steps, bit for bit. Empty when they agree.
std::string domains_difference(const ForwardProfile& om, ResidueAlphabet alphabet, const std::vector<TraceStep>& tr,
                               const TraceDomains& found) {
    std::size_t d = 0;
    int tfrom = 0;
    SampledDomain x{0, 0, 0, 0, 0};
    for (int z = 0; z < static_cast<int>(tr.size()); ++z) {
        const TraceStep& s = tr[static_cast<std::size_t>(z)];
        if (s.state == TraceStep::B) tfrom = z, x = SampledDomain{0, 0, 0, 0, 0};
        if (s.state == TraceStep::M) {
            if (x.i == 0) x.i = s.i, x.k = s.k;
            x.j = s.i, x.m = s.k;
        }
        if (s.state != TraceStep::E) continue;
        if (d >= found.domains.size()) return "fewer domains";
        const TraceDomain& f = found.domains[d++];
        if (f.sqfrom != x.i || f.sqto != x.j || f.hmmfrom != x.k || f.hmmto != x.m)
            return "extent of domain " + std::to_string(d);
        const std::vector<float> a = null2_by_trace(om, tr, tfrom, z, alphabet);
        const std::vector<float> b = null2_by_nodes(om, found.nodes.data() + f.first, f.count, alphabet);
        if (a.size() != b.size() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0)
            return "null2 of domain " + std::to_string(d);
    }
    return d == found.domains.size() ? std::string{} : "more domains";
}

bool same_clustering(const std::vector<SampledDomain>& sp) {
    int plain = 0, fast = 0;
    return plain_single_linkage(sp, plain) == single_linkage(sp, fast) && plain == fast;
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
        int traces = 0, domains = 0, clustered = 0;
        // One, two and three domains; a short target with none in full.
        for (const auto& [L, copies] : std::vector<std::pair<int, int>>{
                 {hmm.length + 40, 1}, {2 * hmm.length + 60, 2}, {3 * hmm.length + 30, 3}, {hmm.length / 2, 1}}) {
            const std::vector<std::uint8_t> dsq = target(hmm, L, copies, rng);
            const LengthModel length = LengthModel::for_target(L, true);
            DpMatrix fx;
            forward(profile.multihit, length, dsq.data(), L, fx, true);
            DomainRandom plain(42), fast(42), spans(42);
            TraceSampler sampler(profile.multihit, length, fx), by_domains(profile.multihit, length, fx);
            std::vector<TraceStep> a, b;
            TraceDomains found;
            std::vector<SampledDomain> sampled;
            for (int t = 0; t < 200; ++t) {
                stochastic_trace(plain, profile.multihit, length, fx, a);
                sampler.trace(fast, b);
                by_domains.domains(spans, found);
                const std::string spans_diff = domains_difference(profile.multihit, hmm.alphabet, a, found);
                QVERIFY2(
                    spans_diff.empty(),
                    (hmm.name + " L " + std::to_string(L) + " trace " + std::to_string(t) + ": " + spans_diff).c_str());
                const std::string diff = describe(a, b);
                QVERIFY2(diff.empty(),
                         (hmm.name + " L " + std::to_string(L) + " trace " + std::to_string(t) + ": " + diff).c_str());
                for (const TraceStep& s : a) domains += s.state == TraceStep::B;
                add_domains(a, t, sampled);
                ++traces;
            }
            // The clusters of the region's sampled domains.
            QVERIFY2(same_clustering(sampled), (hmm.name + " L " + std::to_string(L)).c_str());
            clustered += static_cast<int>(sampled.size());
            const double next = plain.uniform();  // the generators left in the same state
            QCOMPARE(fast.uniform(), next);
            QCOMPARE(spans.uniform(), next);
        }
        QCOMPARE(traces, 800);
        QVERIFY(domains > traces);  // several domains per trace in the repeated targets
        QCOMPARE(clustered, domains);
    }

    // Single linkage without branches against Easel's loop on domains drawn
    // around a few centres (links within and across them, ties of overlap).
    void single_linkage_in_easels_order() {
        std::mt19937 rng(7);
        int groups = 0;
        for (int round = 0; round < 40; ++round) {
            std::vector<SampledDomain> sp;
            const int centres = 1 + static_cast<int>(rng() % 5u), n = 50 + static_cast<int>(rng() % 400u);
            for (int s = 0; s < n; ++s) {
                const int c = static_cast<int>(rng() % static_cast<unsigned>(centres));
                const int i = 1 + c * 70 + static_cast<int>(rng() % 12u), k = 1 + static_cast<int>(rng() % 10u);
                const int len = 40 + static_cast<int>(rng() % 30u);
                sp.push_back({s / 3, i, i + len, k, k + len - static_cast<int>(rng() % 9u)});
            }
            int plain = 0, fast = 0;
            const std::vector<int> a = plain_single_linkage(sp, plain), b = single_linkage(sp, fast);
            QVERIFY2(a == b && plain == fast, ("round " + std::to_string(round)).c_str());
            groups += plain;
        }
        QVERIFY(groups > 40);  // more than one cluster in some rounds
        // Pairs around every threshold: 80 % overlaps in the target and the
        // model (ties included), diagonals four apart and five.
        int pairs = 0, links = 0;
        for (int len = 5; len <= 15; ++len)
            for (int di = -3; di <= 12; ++di)
                for (int blen = 5; blen <= 15; blen += 5)
                    for (int dk = -6; dk <= 6; ++dk) {
                        const std::vector<SampledDomain> sp{{0, 10, 9 + len, 10, 9 + len},
                                                            {1, 10 + di, 9 + di + blen, 10 + dk, 9 + dk + blen}};
                        QVERIFY2(same_clustering(sp), ("pair " + std::to_string(len) + " " + std::to_string(di) + " " +
                                                       std::to_string(blen) + " " + std::to_string(dk))
                                                          .c_str());
                        ++pairs;
                        links += linked(sp[0], sp[1]);
                    }
        QVERIFY(links > 0 && links < pairs);
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
            // (single_linkage's test for spans up to 2^23)
            if (n <= (1 << 23) && (5 * nov < 4 * n) != by_float)
                QFAIL(("5 nov < 4 n: overlap " + std::to_string(nov) + " of " + std::to_string(n)).c_str());
            ++checked;
            linked += !by_float;
        };
        for (int n = 1; n <= 3000; ++n)
            for (int nov = -3; nov <= n; ++nov) check(nov, n);
        for (int n = (1 << 23) - 200; n <= (1 << 23); ++n)
            for (int nov = n * 4 / 5 - 3; nov <= n * 4 / 5 + 3; ++nov) check(nov, n);
        for (int n = (1 << 24) - 40; n <= (1 << 24) + 40; ++n)
            for (int nov = n * 4 / 5 - 40; nov <= n * 4 / 5 + 40; ++nov) check(nov, n);
        QVERIFY(checked > 4000000 && linked > 0);
    }
    // A Backward with scale factors of its own (DpMatrix::own_scales, as
    // hmmsearch's takes where B passes 1e16): the domain stage's region sums
    // correct row by row by the Forward's over the Backward's factor, so the
    // same Backward stored with other factors gives the same regions,
    // envelopes and expected number of domains.
    void region_sums_follow_a_backward_with_its_own_scales() {
        const ProfileHmm hmm = read_hmm_file((kExamples + "fn3.hmm").toStdString()).front();
        NullModel null_model(hmm.alphabet);
        null_model.set_filter(hmm.length, hmm.composition);
        const ConfiguredProfile profile(hmm, null_model);
        const FlushSubnormals flush;
        std::mt19937 rng(7u);
        const int L = 3 * hmm.length + 30;
        const std::vector<std::uint8_t> dsq = target(hmm, L, 3, rng);
        const LengthModel length = LengthModel::for_target(L, true);
        DpMatrix fwd, bck;
        forward(profile.multihit, length, dsq.data(), L, fwd, false);
        backward(profile.multihit, length, dsq.data(), L, fwd, bck, false);
        QVERIFY(!bck.own_scales);
        // Every rescaled row below L divided by 1.5 times the Forward's factor
        // instead: row i's specials (and row 0's) carry the product of the
        // ratios of rows i..L-1.
        DpMatrix own = bck;
        own.own_scales = true;
        double carried = 1.0;
        int changed = 0;
        for (int i = L - 1; i >= 0; --i) {
            if (i >= 1 && bck.x(i, DpMatrix::Scale) > 1.0f) {
                own.x(i, DpMatrix::Scale) = 1.5f * bck.x(i, DpMatrix::Scale);
                carried /= 1.5;
                ++changed;
            }
            for (const DpMatrix::Special s : {DpMatrix::E, DpMatrix::N, DpMatrix::J, DpMatrix::B, DpMatrix::C})
                own.x(i, s) = static_cast<float>(static_cast<double>(bck.x(i, s)) * carried);
        }
        QVERIFY2(changed > 1, "the Forward rescaled no row: nothing to correct");
        const DomainStage a = define_domains(profile, dsq.data(), L, fwd, bck, 42, false);
        const DomainStage b = define_domains(profile, dsq.data(), L, fwd, own, 42, false);
        QVERIFY2(a.regions >= 2, "fewer than two regions: the sums went untested");
        QVERIFY2(std::fabs(b.expected_domains - a.expected_domains) <= 1e-4f * a.expected_domains,
                 qPrintable(
                     QStringLiteral("expected domains %1 against %2").arg(b.expected_domains).arg(a.expected_domains)));
        QCOMPARE(b.regions, a.regions);
        QCOMPARE(b.clustered, a.clustered);
        QCOMPARE(b.envelopes, a.envelopes);
        QCOMPARE(b.domains.size(), a.domains.size());
        for (std::size_t d = 0; d < a.domains.size(); ++d) {
            QCOMPARE(b.domains[d].env_from, a.domains[d].env_from);
            QCOMPARE(b.domains[d].env_to, a.domains[d].env_to);
        }
    }
};

QTEST_GUILESS_MAIN(TestDomainSampling)
#include "test_domain_sampling.moc"
