// The domain stage, following hmmsearch's order of work and its numerical
// choices (single precision, its tie-breaking in tracebacks, the striped order
// in which a stochastic traceback picks the state that ends a domain, the
// constants of region finding and trace clustering), so that envelopes,
// alignments and null2 corrections come out as hmmsearch's do.
#include <alignscope/error.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/envelope_rescore.hpp>

#include "domain_clustering.hpp"
#include "forward_pair.hpp"
#include "posterior_decoding.hpp"
#include "stochastic_trace.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <span>

namespace alignscope::profile {

namespace {

// Full matrices each worker thread reuses from envelope to envelope:
// allocating, zeroing and freeing megabytes per envelope kept 16 threads
// waiting on the kernel's page-fault and unmap paths. One that grew past
// kKeepBytes (a very long envelope) is freed after use.
// Envelopes are rescored one at a time (kEnvelopeGroup): side by side, up to
// a group of targets within kEnvelopeGroupBytes of full matrices, the rows
// ran some 10 % faster on one thread, but each worker kept eight envelopes'
// matrices; on the 16-core GPU hosts (virtual machines, where first touching
// a page is dear) Pkinase against DB.fasta x10 took 1.08-1.16 s at 16 threads
// against 0.89-0.94 s one at a time, with 50,000 more page faults.
constexpr int kEnvelopeGroup = 1;
constexpr std::size_t kEnvelopeGroupBytes = std::size_t{16} << 20;
struct ScratchMatrices {
    DpMatrix ensemble, pp, ox;
    std::array<DpMatrix, kEnvelopeGroup> fx, bx;  // the unihit Forward and Backward of a group of envelopes
};
constexpr std::size_t kKeepBytes = std::size_t{64} << 20;
ScratchMatrices& scratch_matrices() {
    thread_local ScratchMatrices scratch;
    return scratch;
}
void release_if_large(DpMatrix& m) {
    if ((m.mmx.capacity() + m.imx.capacity() + m.dmx.capacity()) * sizeof(float) > kKeepBytes) m = DpMatrix{};
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Region and envelope thresholds on the posterior expectations.
constexpr float kRegionTrigger = 0.25f;  // a region starts where P(in a domain) reaches this
constexpr float kRegionEdge = 0.10f;     // and is bounded where P(in a domain, not starting/ending) drops below
constexpr float kMultidomain = 0.20f;    // expected domains on both sides of a point: cluster the region
constexpr int kSamples = 200;            // stochastic tracebacks per clustered region
constexpr float kMinPosterior = 0.25f;
constexpr float kMinEndpoint = 0.02f;

char encode_posterior(float p) {
    return (p + 0.05 >= 1.0) ? '*' : static_cast<char>(static_cast<int>((p + 0.05) * 10.0) + '0');
}

struct DomainIndex {
    int tfrom = 0, tto = 0, sqfrom = 0, sqto = 0, hmmfrom = 0, hmmto = 0;
};

std::vector<DomainIndex> index_domains(const std::vector<TraceStep>& tr) {
    std::vector<DomainIndex> out;
    DomainIndex d;
    for (int z = 0; z < static_cast<int>(tr.size()); ++z) {
        switch (tr[static_cast<std::size_t>(z)].state) {
            case TraceStep::B:
                d = DomainIndex{};
                d.tfrom = z;
                break;
            case TraceStep::M:
                if (d.sqfrom == 0) d.sqfrom = tr[static_cast<std::size_t>(z)].i;
                if (d.hmmfrom == 0) d.hmmfrom = tr[static_cast<std::size_t>(z)].k;
                d.sqto = tr[static_cast<std::size_t>(z)].i;
                d.hmmto = tr[static_cast<std::size_t>(z)].k;
                break;
            case TraceStep::E:
                d.tto = z;
                out.push_back(d);
                break;
            default: break;
        }
    }
    return out;
}

std::vector<TraceStep> optimal_accuracy_trace(const ForwardProfile& om, const LengthModel& length, const DpMatrix& pp,
                                              const DpMatrix& ox) {
    const int M = om.length, Q = striped_segments(M);
    int i = ox.L, k = 0;
    std::vector<TraceStep> tr;
    tr.push_back({TraceStep::T, 0, 0, 0.0f});
    tr.push_back({TraceStep::C, 0, 0, 0.0f});
    TraceStep::State s0 = TraceStep::C;
    auto or_inf = [](float t, float v) { return t == 0.0f ? kNegInf : v; };
    std::size_t guard = 0;
    while (s0 != TraceStep::S) {
        if (++guard > static_cast<std::size_t>(4 * (ox.L + 2) * (M + 2)))
            throw Error("optimal accuracy traceback did not end");
        TraceStep::State s1 = TraceStep::S;
        switch (s0) {
            case TraceStep::M: {
                const std::size_t j = static_cast<std::size_t>(k - 1);
                // Node 0 of the previous row reads as -infinity.
                const std::size_t prev = k > 1 ? ox.cell(i - 1, k - 1) : 0;
                const auto before = [&](const std::vector<float>& v) { return k > 1 ? v[prev] : kNegInf; };
                float path[4];
                path[0] = or_inf(om.mm[j], before(ox.mmx));
                path[1] = or_inf(om.im[j], before(ox.imx));
                path[2] = or_inf(om.dm[j], before(ox.dmx));
                path[3] = or_inf(om.bm[j], ox.x(i - 1, DpMatrix::B));
                int best = 0;
                for (int z = 1; z < 4; ++z)
                    if (path[z] > path[best]) best = z;
                const TraceStep::State states[4] = {TraceStep::M, TraceStep::I, TraceStep::D, TraceStep::B};
                s1 = states[best];
                --k;
                --i;
                break;
            }
            case TraceStep::D: {
                const float p0 =
                    k >= 2 ? or_inf(om.md[static_cast<std::size_t>(k - 2)], ox.mmx[ox.cell(i, k - 1)]) : kNegInf;
                const float p1 =
                    k >= 2 ? or_inf(om.dd[static_cast<std::size_t>(k - 2)], ox.dmx[ox.cell(i, k - 1)]) : kNegInf;
                s1 = p0 >= p1 ? TraceStep::M : TraceStep::D;
                --k;
                break;
            }
            case TraceStep::I: {
                const std::size_t j = static_cast<std::size_t>(k - 1);
                const float p0 = or_inf(om.mi[j], ox.mmx[ox.cell(i - 1, k)]);
                const float p1 = or_inf(om.ii[j], ox.imx[ox.cell(i - 1, k)]);
                s1 = p0 >= p1 ? TraceStep::M : TraceStep::I;
                --i;
                break;
            }
            case TraceStep::N: s1 = i == 0 ? TraceStep::S : TraceStep::N; break;
            case TraceStep::C: {
                const float p0 = length.loop == 0.0f ? kNegInf : ox.x(i - 1, DpMatrix::C) + pp.x(i, DpMatrix::C);
                const float p1 = om.e_move == 0.0f ? kNegInf : ox.x(i, DpMatrix::E);
                s1 = p0 > p1 ? TraceStep::C : TraceStep::E;
                break;
            }
            case TraceStep::J: {
                const float p0 = length.loop == 0.0f ? kNegInf : ox.x(i - 1, DpMatrix::J) + pp.x(i, DpMatrix::J);
                const float p1 = om.e_loop == 0.0f ? kNegInf : ox.x(i, DpMatrix::E);
                s1 = p0 > p1 ? TraceStep::J : TraceStep::E;
                break;
            }
            case TraceStep::E: {
                // Striped scan; M wins ties (>=), D needs strictly more.
                float max = kNegInf;
                int kmax = 0;
                TraceStep::State smax = TraceStep::M;
                for (int q = 0; q < Q; ++q) {
                    for (int r = 0; r < 4; ++r) {
                        const int kk = r * Q + q + 1;
                        const float v = kk <= M ? ox.mmx[ox.row(i) + static_cast<std::size_t>(q * 4 + r)] : 0.0f;
                        if (v >= max && kk <= M) max = v, smax = TraceStep::M, kmax = kk;
                    }
                    for (int r = 0; r < 4; ++r) {
                        const int kk = r * Q + q + 1;
                        if (kk > M) continue;
                        const float v = ox.dmx[ox.row(i) + static_cast<std::size_t>(q * 4 + r)];
                        if (v > max) max = v, smax = TraceStep::D, kmax = kk;
                    }
                }
                k = kmax;
                s1 = smax;
                break;
            }
            case TraceStep::B: {
                const float p0 = length.move == 0.0f ? kNegInf : ox.x(i, DpMatrix::N);
                const float p1 = length.move == 0.0f ? kNegInf : ox.x(i, DpMatrix::J);
                s1 = p0 > p1 ? TraceStep::N : TraceStep::J;
                break;
            }
            default: throw Error("optimal accuracy traceback reached an impossible state");
        }
        float postprob = 0.0f;
        if (s1 == TraceStep::M) postprob = pp.mmx[pp.cell(i, k)];
        else if (s1 == TraceStep::I)
            postprob = pp.imx[pp.cell(i, k)];
        else if (s1 == s0 && s1 == TraceStep::N)
            postprob = pp.x(i, DpMatrix::N);
        else if (s1 == s0 && s1 == TraceStep::C)
            postprob = pp.x(i, DpMatrix::C);
        else if (s1 == s0 && s1 == TraceStep::J)
            postprob = pp.x(i, DpMatrix::J);
        append_step(tr, s1, k, i, postprob);
        if ((s1 == TraceStep::N || s1 == TraceStep::J || s1 == TraceStep::C) && s1 == s0) --i;
        s0 = s1;
    }
    std::reverse(tr.begin(), tr.end());
    return tr;
}

struct Cluster {
    int i, j, k, m;
    float prob;
};

std::vector<Cluster> cluster_samples(const std::vector<SampledDomain>& sp, int samples) {
    const int n = static_cast<int>(sp.size());
    // Single linkage, in Easel's order of discovery.
    int nc = 0;
    const std::vector<int> assignment = single_linkage(sp, nc);
    std::vector<Cluster> out;
    for (int c = 0; c < nc; ++c) {
        int included = 0, last = -1;
        for (int h = 0; h < n; ++h)
            if (assignment[static_cast<std::size_t>(h)] == c) {
                if (sp[static_cast<std::size_t>(h)].sample != last) ++included;
                last = sp[static_cast<std::size_t>(h)].sample;
            }
        if (static_cast<float>(included) / static_cast<float>(samples) < kMinPosterior) continue;
        int imin = 0, imax = 0, jmin = 0, jmax = 0, kmin = 0, kmax = 0, mmin = 0, mmax = 0;
        bool first = true;
        for (int h = 0; h < n; ++h) {
            if (assignment[static_cast<std::size_t>(h)] != c) continue;
            const SampledDomain& s = sp[static_cast<std::size_t>(h)];
            if (first) {
                imin = imax = s.i, jmin = jmax = s.j, kmin = kmax = s.k, mmin = mmax = s.m;
                first = false;
            } else {
                imin = std::min(imin, s.i), imax = std::max(imax, s.i);
                jmin = std::min(jmin, s.j), jmax = std::max(jmax, s.j);
                kmin = std::min(kmin, s.k), kmax = std::max(kmax, s.k);
                mmin = std::min(mmin, s.m), mmax = std::max(mmax, s.m);
            }
        }
        const int threshold = static_cast<int>(std::ceil(static_cast<float>(included) * kMinEndpoint));
        auto endpoint = [&](int lo, int hi, auto field, bool leftmost) {
            std::vector<int> count(static_cast<std::size_t>(hi - lo + 1), 0);
            for (int h = 0; h < n; ++h)
                if (assignment[static_cast<std::size_t>(h)] == c)
                    ++count[static_cast<std::size_t>(field(sp[static_cast<std::size_t>(h)]) - lo)];
            if (leftmost) {
                for (int v = lo; v <= hi; ++v)
                    if (count[static_cast<std::size_t>(v - lo)] >= threshold) return v;
            } else {
                for (int v = hi; v >= lo; --v)
                    if (count[static_cast<std::size_t>(v - lo)] >= threshold) return v;
            }
            return lo + static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
        };
        const int bi = endpoint(
            imin, imax, [](const SampledDomain& s) { return s.i; }, true);
        const int bk = endpoint(
            kmin, kmax, [](const SampledDomain& s) { return s.k; }, true);
        const int bj = endpoint(
            jmin, jmax, [](const SampledDomain& s) { return s.j; }, false);
        const int bm = endpoint(
            mmin, mmax, [](const SampledDomain& s) { return s.m; }, false);
        if (bi > bj || bk > bm) continue;
        out.push_back({bi, bj, bk, bm, static_cast<float>(included) / static_cast<float>(samples)});
    }
    std::stable_sort(out.begin(), out.end(), [](const Cluster& a, const Cluster& b) { return a.i < b.i; });
    return out;
}

// The displayed alignment of the trace's first domain, or with `text` false
// only its coordinates (no lines built for an output that shows none).
DomainAlignment make_alignment(const ConfiguredProfile& profile, const std::vector<TraceStep>& tr,
                               const std::uint8_t* dsq, bool text) {
    const ResidueCode& code = ResidueCode::of(profile.plan7.alphabet);
    const auto domains = index_domains(tr);
    DomainAlignment ad;
    if (domains.empty()) return ad;
    int z1 = domains[0].tfrom, z2 = domains[0].tto;
    while (z1 < static_cast<int>(tr.size()) && tr[static_cast<std::size_t>(z1)].state != TraceStep::M) ++z1;
    while (z2 >= 0 && tr[static_cast<std::size_t>(z2)].state != TraceStep::M) --z2;
    if (z1 > z2) return ad;
    const std::string& consensus = profile.plan7.consensus;
    ad.hmm_from = tr[static_cast<std::size_t>(z1)].k;
    ad.hmm_to = tr[static_cast<std::size_t>(z2)].k;
    ad.target_from = tr[static_cast<std::size_t>(z1)].i;
    ad.target_to = tr[static_cast<std::size_t>(z2)].i;
    if (!text) return ad;
    for (int z = z1; z <= z2; ++z) {
        const TraceStep& s = tr[static_cast<std::size_t>(z)];
        if (!profile.reference.empty())
            ad.reference += s.state == TraceStep::I ? '.' : profile.reference[static_cast<std::size_t>(s.k)];
        if (!profile.structure.empty())
            ad.structure += s.state == TraceStep::I ? '.' : profile.structure[static_cast<std::size_t>(s.k)];
        ad.posterior += s.state == TraceStep::D ? '.' : encode_posterior(s.posterior);
        ad.posterior_values.push_back(s.state == TraceStep::D ? 0.0f : s.posterior);
        const int x = s.i > 0 ? dsq[s.i - 1] : 0;
        const char letter = code.symbol(x);
        switch (s.state) {
            case TraceStep::M: {
                const char cons = consensus[static_cast<std::size_t>(s.k)];
                ad.model += cons;
                if (x == code.code_of(cons)) ad.match += cons;
                else if (profile.multihit.match[static_cast<std::size_t>(x * profile.plan7.length + s.k - 1)] > 1.0f)
                    ad.match += '+';
                else
                    ad.match += ' ';
                ad.target += static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
                break;
            }
            case TraceStep::I:
                ad.model += '.';
                ad.match += ' ';
                ad.target += static_cast<char>(std::tolower(static_cast<unsigned char>(letter)));
                break;
            default:
                ad.model += consensus[static_cast<std::size_t>(s.k)];
                ad.match += ' ';
                ad.target += '-';
                break;
        }
    }
    return ad;
}

// An envelope to rescore: its target positions, whether its null2 came from
// the region's stochastic traces, and its region (clustered regions count
// envelopes that overlap the one before).
struct Envelope {
    int i = 0, j = 0;
    bool null2_done = false;
    int region = 0;
};

class DomainDefinition {
public:
    DomainDefinition(const ConfiguredProfile& profile, const std::uint8_t* dsq, int L, std::uint32_t seed,
                     bool alignments)
        : profile_(profile),
          dsq_(dsq),
          L_(L),
          random_(seed),
          alignments_(alignments),
          multihit_length_(LengthModel::for_target(L, true)),
          unihit_length_(LengthModel::for_target(L, false)) {}

    // Regions from the parser matrices' posteriors, and the envelopes to
    // rescore in them (clustered regions' from their stochastic traces).
    void find_envelopes(const DpMatrix& fwd, const DpMatrix& bck) {
        const int L = L_;
        std::vector<float> btot(static_cast<std::size_t>(L + 1)), etot(static_cast<std::size_t>(L + 1)),
            mocc(static_cast<std::size_t>(L + 1));
        float scaleproduct = static_cast<float>(1.0 / bck.x(0, DpMatrix::N));
        const float loop = multihit_length_.loop;
        for (int i = 1; i <= L; ++i) {
            btot[static_cast<std::size_t>(i)] =
                btot[static_cast<std::size_t>(i - 1)] +
                fwd.x(i - 1, DpMatrix::B) * bck.x(i - 1, DpMatrix::B) * fwd.x(i - 1, DpMatrix::Scale) * scaleproduct;
            // A Backward with factors of its own: the product of the rows'
            // Forward over Backward factors, up to row i-1.
            if (bck.own_scales) scaleproduct *= fwd.x(i - 1, DpMatrix::Scale) / bck.x(i - 1, DpMatrix::Scale);
            etot[static_cast<std::size_t>(i)] =
                etot[static_cast<std::size_t>(i - 1)] +
                fwd.x(i, DpMatrix::E) * bck.x(i, DpMatrix::E) * fwd.x(i, DpMatrix::Scale) * scaleproduct;
            float njcp = fwd.x(i - 1, DpMatrix::N) * bck.x(i, DpMatrix::N) * loop * scaleproduct;
            njcp += fwd.x(i - 1, DpMatrix::J) * bck.x(i, DpMatrix::J) * loop * scaleproduct;
            njcp += fwd.x(i - 1, DpMatrix::C) * bck.x(i, DpMatrix::C) * loop * scaleproduct;
            mocc[static_cast<std::size_t>(i)] = static_cast<float>(1.0 - njcp);
        }
        stage_.null2.assign(static_cast<std::size_t>(L + 1), 0.0f);
        stage_.expected_domains = btot[static_cast<std::size_t>(L)];
        int i = -1;
        bool triggered = false;
        for (int j = 1; j <= L; ++j) {
            const std::size_t J = static_cast<std::size_t>(j);
            if (!triggered) {
                if (mocc[J] - (btot[J] - btot[J - 1]) < kRegionEdge) i = j;
                else if (i == -1)
                    i = j;
                if (mocc[J] >= kRegionTrigger) triggered = true;
            } else if (mocc[J] - (etot[J] - etot[J - 1]) < kRegionEdge) {
                const int region = ++stage_.regions;
                if (is_multidomain(btot, etot, i, j)) {
                    ++stage_.clustered;
                    for (const Cluster& cl : trace_ensemble(i, j)) envelopes_.push_back({cl.i, cl.j, true, region});
                } else {
                    envelopes_.push_back({i, j, false, region});
                }
                i = -1;
                triggered = false;
            }
        }
        stage_.envelopes = static_cast<int>(envelopes_.size());
        rescored_.assign(envelopes_.size(), std::nullopt);
    }

    const std::vector<Envelope>& envelopes() const { return envelopes_; }
    const ConfiguredProfile& profile() const { return profile_; }
    int length() const { return L_; }
    const std::uint8_t* residues() const { return dsq_; }
    const LengthModel& unihit_length() const { return unihit_length_; }

    // Envelope e after its unihit Forward (score envsc) and Backward in fx, bx.
    void rescore(std::size_t e, float envsc, const DpMatrix& fx, const DpMatrix& bx) {
        const Envelope& env = envelopes_[e];
        rescored_[e] = rescore_envelope(env.i, env.j, env.null2_done, envsc, fx, bx);
    }

    // The domains in envelope order; the overlaps of clustered regions'
    // envelopes with the last one that rescored.
    DomainStage finish() {
        int region = 0, last_j2 = 0;
        for (std::size_t e = 0; e < envelopes_.size(); ++e) {
            const Envelope& env = envelopes_[e];
            if (env.region != region) region = env.region, last_j2 = 0;
            if (env.null2_done && env.i <= last_j2) ++stage_.overlaps;
            if (!rescored_[e]) continue;
            if (env.null2_done) last_j2 = env.j;
            stage_.domains.push_back(std::move(*rescored_[e]));
        }
        return std::move(stage_);
    }

private:
    static bool is_multidomain(const std::vector<float>& btot, const std::vector<float>& etot, int i, int j) {
        float max = -1.0f;
        for (int z = i; z <= j; ++z) {
            const float expected = std::min(etot[static_cast<std::size_t>(z)] - etot[static_cast<std::size_t>(i - 1)],
                                            btot[static_cast<std::size_t>(j)] - btot[static_cast<std::size_t>(z - 1)]);
            max = std::max(max, expected);
        }
        return max >= kMultidomain;
    }

    std::vector<Cluster> trace_ensemble(int ireg, int jreg) {
        const int Lr = jreg - ireg + 1;
        const ForwardProfile& om = profile_.multihit;
        DpMatrix& fx = scratch_matrices().ensemble;
        forward(om, multihit_length_, dsq_ + ireg - 1, Lr, fx, true);
        for (int pos = ireg; pos <= jreg; ++pos) stage_.null2[static_cast<std::size_t>(pos)] = 0.0f;
        random_.reseed(random_.seed());
        std::vector<SampledDomain> sampled;
        TraceDomains found;
        TraceSampler sampler(om, multihit_length_, fx);
        for (int t = 0; t < kSamples; ++t) {
            sampler.domains(random_, found);
            int pos = 1;
            for (const TraceDomain& d : found.domains) {
                sampled.push_back({t, d.sqfrom + ireg - 1, d.sqto + ireg - 1, d.hmmfrom, d.hmmto});
                const auto null2 = null2_by_nodes(om, found.nodes.data() + d.first, d.count, profile_.plan7.alphabet);
                for (; pos <= d.sqfrom; ++pos) stage_.null2[static_cast<std::size_t>(ireg + pos - 1)] += 1.0f;
                for (; pos <= d.sqto; ++pos)
                    stage_.null2[static_cast<std::size_t>(ireg + pos - 1)] += null2[dsq_[ireg + pos - 2]];
            }
            for (; pos <= Lr; ++pos) stage_.null2[static_cast<std::size_t>(ireg + pos - 1)] += 1.0f;
        }
        for (int pos = ireg; pos <= jreg; ++pos)
            stage_.null2[static_cast<std::size_t>(pos)] =
                std::log(stage_.null2[static_cast<std::size_t>(pos)] / static_cast<float>(kSamples));
        auto clusters = cluster_samples(sampled, kSamples);
        // Drop clusters that overlap a more probable one by 80 % or more.
        const int nc = static_cast<int>(clusters.size());
        std::vector<char> dominated(static_cast<std::size_t>(nc), 0);
        for (int d = 0; d < nc; ++d)
            for (int d2 = d + 1; d2 < nc; ++d2) {
                const Cluster& a = clusters[static_cast<std::size_t>(d)];
                const Cluster& b = clusters[static_cast<std::size_t>(d2)];
                const int nov = std::min(a.j, b.j) - std::max(a.i, b.i) + 1;
                if (nov == 0) break;
                const int n = std::min(a.j - a.i + 1, b.j - b.i + 1);
                if (static_cast<float>(nov) / static_cast<float>(n) >= 0.8f) {
                    if (a.prob > b.prob) dominated[static_cast<std::size_t>(d2)] = 1;
                    else
                        dominated[static_cast<std::size_t>(d)] = 1;
                }
            }
        std::vector<Cluster> kept;
        for (int d = 0; d < nc; ++d)
            if (!dominated[static_cast<std::size_t>(d)]) kept.push_back(clusters[static_cast<std::size_t>(d)]);
        return kept;
    }

    // Posterior decoding, optimal accuracy and null2 of envelope i..j from
    // its unihit Forward and Backward; nothing when the posteriors underflow.
    std::optional<DomainHit> rescore_envelope(int i, int j, bool null2_done, float envsc, const DpMatrix& fx,
                                              const DpMatrix& bx) {
        const ForwardProfile& om = profile_.unihit;
        ScratchMatrices& scratch = scratch_matrices();
        DpMatrix &pp = scratch.pp, &ox = scratch.ox;
        std::vector<float> null2;
        const std::optional<float> decoded = decode_and_align(om, unihit_length_, fx, bx, pp, ox,
                                                              profile_.plan7.alphabet, null2_done ? nullptr : &null2);
        if (!decoded) return std::nullopt;
        return envelope_hit(i, j, null2_done, envsc, *decoded, optimal_accuracy_trace(om, unihit_length_, pp, ox),
                            null2);
    }

public:
    // Envelope e rescored elsewhere.
    void rescored(std::size_t e, RescoredEnvelope outcome) {
        const Envelope& env = envelopes_[e];
        if (!outcome.accuracy) return;
        if (!env.null2_done &&
            outcome.null2.size() < static_cast<std::size_t>(ResidueCode::of(profile_.plan7.alphabet).all_codes()))
            throw Error("domain stage: a rescored envelope came without its null2");
        rescored_[e] = envelope_hit(env.i, env.j, env.null2_done, outcome.envsc, *outcome.accuracy,
                                    std::move(outcome.trace), outcome.null2);
    }

private:
    // The domain of envelope i..j from its Forward score, optimal-accuracy
    // score and trace (i relative to the envelope) and, unless the region's
    // stochastic traces gave it, its null2 odds per residue code.
    DomainHit envelope_hit(int i, int j, bool null2_done, float envsc, float oasc, std::vector<TraceStep> tr,
                           const std::vector<float>& null2) {
        for (auto& s : tr)
            if (s.i > 0) s.i += i - 1;
        DomainHit dom;
        dom.alignment = make_alignment(profile_, tr, dsq_, alignments_);
        if (!null2_done) {
            for (int pos = i; pos <= j; ++pos)
                stage_.null2[static_cast<std::size_t>(pos)] = std::log(null2[dsq_[pos - 1]]);
        }
        float correction = 0.0f;
        for (int pos = i; pos <= j; ++pos) correction += stage_.null2[static_cast<std::size_t>(pos)];
        dom.env_from = i;
        dom.env_to = j;
        dom.env_score = envsc;
        dom.correction = correction;
        dom.expected_accuracy = oasc;
        return dom;
    }

    const ConfiguredProfile& profile_;
    const std::uint8_t* dsq_;
    int L_;
    DomainRandom random_;
    bool alignments_;
    LengthModel multihit_length_, unihit_length_;
    DomainStage stage_;
    std::vector<Envelope> envelopes_;
    std::vector<std::optional<DomainHit>> rescored_;
};

// The unihit Forward and Backward of every envelope of the targets, up to
// kEnvelopeGroup at a time (longest first, so that a group's envelopes are of similar
// lengths), each then decoded and aligned by its own target.
void rescore_envelopes(const ConfiguredProfile& profile, std::span<DomainDefinition> targets) {
    struct Item {
        std::size_t target, envelope;
        int length;
    };
    std::vector<Item> items;
    for (std::size_t t = 0; t < targets.size(); ++t) {
        const auto& env = targets[t].envelopes();
        for (std::size_t e = 0; e < env.size(); ++e) items.push_back({t, e, env[e].j - env[e].i + 1});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.length > b.length; });
    ScratchMatrices& scratch = scratch_matrices();
    const std::size_t row_bytes =
        static_cast<std::size_t>(striped_segments(profile.unihit.length)) * 4 * 2 * 2 * sizeof(float);
    for (std::size_t first = 0; first < items.size();) {
        int n = 1;  // as many as fit the budget (at least one)
        std::size_t bytes = static_cast<std::size_t>(items[first].length + 1) * row_bytes;
        while (n < kEnvelopeGroup && first + static_cast<std::size_t>(n) < items.size()) {
            bytes += static_cast<std::size_t>(items[first + static_cast<std::size_t>(n)].length + 1) * row_bytes;
            if (bytes > kEnvelopeGroupBytes) break;
            ++n;
        }
        PairTarget group[kEnvelopeGroup];
        for (int g = 0; g < n; ++g) {
            const Item& it = items[first + static_cast<std::size_t>(g)];
            const DomainDefinition& d = targets[it.target];
            const Envelope& env = d.envelopes()[it.envelope];
            group[g] = PairTarget{d.residues() + env.i - 1, it.length, d.unihit_length(),
                                  &scratch.fx[static_cast<std::size_t>(g)], &scratch.bx[static_cast<std::size_t>(g)]};
        }
        float envsc[kEnvelopeGroup], bcksc[kEnvelopeGroup];
        // (Full matrices for decoding, which reads no D: D in two rows.)
        forward_group(profile.unihit, group, n, true, envsc, false);
        backward_group(profile.unihit, group, n, true, bcksc, false);
        for (int g = 0; g < n; ++g) {
            const Item& it = items[first + static_cast<std::size_t>(g)];
            targets[it.target].rescore(it.envelope, envsc[g], *group[g].fwd, *group[g].bck);
        }
        first += static_cast<std::size_t>(n);
    }
    for (DpMatrix* m : {&scratch.ensemble, &scratch.pp, &scratch.ox}) release_if_large(*m);
    for (std::size_t g = 0; g < kEnvelopeGroup; ++g) release_if_large(scratch.fx[g]), release_if_large(scratch.bx[g]);
}

std::uint32_t jenkins_mix(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    a -= b;
    a -= c;
    a ^= (c >> 13);
    b -= c;
    b -= a;
    b ^= (a << 8);
    c -= a;
    c -= b;
    c ^= (b >> 13);
    a -= b;
    a -= c;
    a ^= (c >> 12);
    b -= c;
    b -= a;
    b ^= (a << 16);
    c -= a;
    c -= b;
    c ^= (b >> 5);
    a -= b;
    a -= c;
    a ^= (c >> 3);
    b -= c;
    b -= a;
    b ^= (a << 10);
    c -= a;
    c -= b;
    c ^= (b >> 15);
    return c;
}

}  // namespace

void DomainRandom::reseed(std::uint32_t seed) {
    seed_ = seed;
    x_ = jenkins_mix(seed, 87654321u, 12345678u);
    if (x_ == 0) x_ = 42;
}

ConfiguredProfile::ConfiguredProfile(const ProfileHmm& hmm, const NullModel& null_model)
    : plan7(configure_local(hmm, null_model)),
      msv(make_msv_profile(plan7)),
      viterbi(make_viterbi_filter_profile(plan7)),
      multihit(make_forward_profile(plan7, true)),
      unihit(make_forward_profile(plan7, false)),
      reference(hmm.reference),
      structure(hmm.structure) {}

DomainStage define_domains(const ConfiguredProfile& profile, const std::uint8_t* dsq, int L, const DpMatrix& fwd,
                           const DpMatrix& bck, std::uint32_t seed, bool alignments) {
    const DomainTarget target{dsq, L, &fwd, &bck};
    return std::move(define_domains(profile, &target, 1, seed, alignments).front());
}

std::vector<DomainStage> define_domains(const ConfiguredProfile& profile, const DomainTarget* targets, int n,
                                        std::uint32_t seed, bool alignments) {
    std::vector<DomainDefinition> definitions;
    definitions.reserve(static_cast<std::size_t>(n));
    for (int t = 0; t < n; ++t) {
        definitions.emplace_back(profile, targets[t].dsq, targets[t].L, seed, alignments);
        definitions.back().find_envelopes(*targets[t].fwd, *targets[t].bck);
    }
    rescore_envelopes(profile, definitions);
    std::vector<DomainStage> stages;
    stages.reserve(definitions.size());
    for (DomainDefinition& d : definitions) stages.push_back(d.finish());
    return stages;
}

struct TargetDomains::Definition {
    DomainDefinition definition;
};

TargetDomains::TargetDomains(const ConfiguredProfile& profile, const std::uint8_t* dsq, int L, std::uint32_t seed,
                             bool alignments)
    : d_(std::make_unique<Definition>(Definition{DomainDefinition(profile, dsq, L, seed, alignments)})) {}
TargetDomains::~TargetDomains() = default;
TargetDomains::TargetDomains(TargetDomains&&) noexcept = default;
TargetDomains& TargetDomains::operator=(TargetDomains&&) noexcept = default;

void TargetDomains::find_envelopes(const DpMatrix& fwd, const DpMatrix& bck) {
    d_->definition.find_envelopes(fwd, bck);
}
std::size_t TargetDomains::envelope_count() const { return d_->definition.envelopes().size(); }
TargetDomains::Span TargetDomains::envelope(std::size_t e) const {
    const Envelope& env = d_->definition.envelopes()[e];
    return {env.i, env.j, !env.null2_done};
}
int TargetDomains::length() const { return d_->definition.length(); }
void TargetDomains::rescore_on_cpu() {
    rescore_envelopes(d_->definition.profile(), std::span<DomainDefinition>(&d_->definition, 1));
}
void TargetDomains::rescored(std::size_t e, RescoredEnvelope outcome) {
    d_->definition.rescored(e, std::move(outcome));
}
DomainStage TargetDomains::finish() { return d_->definition.finish(); }

std::vector<TraceStep> accuracy_traceback(const ForwardProfile& om, const LengthModel& length, const DpMatrix& pp,
                                          const DpMatrix& ox) {
    return optimal_accuracy_trace(om, length, pp, ox);
}

}  // namespace alignscope::profile
