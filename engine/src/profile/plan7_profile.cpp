// hmmsearch's model configuration and its reduction to filter units. The
// roundings (roundf of single-precision products, the byte and word
// saturations, the "no zero-cost I->I" clamp) are HMMER's, because the filters'
// pass/fail decisions at the thresholds depend on them.
#include <alignscope/error.hpp>
#include <alignscope/profile/plan7_profile.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace alignscope::profile {

namespace {

constexpr double kLog2 = 0.69314718055994529;
constexpr float kInf = std::numeric_limits<float>::infinity();

std::uint8_t unbiased_byte(float scale, float sc) {
    sc = -1.0f * std::round(scale * sc);
    return sc > 255.0f ? 255 : sc < 0.0f ? 0 : static_cast<std::uint8_t>(sc);
}

// A positive score is a negative cost; the bias lifts it (bias is at least the
// largest such cost), so the sum is taken in int: converting a negative float
// to an unsigned byte would be undefined.
std::uint8_t biased_byte(float scale, std::uint8_t bias, float sc) {
    sc = -1.0f * std::round(scale * sc);
    if (sc > static_cast<float>(255 - bias)) return 255;
    const int lifted = static_cast<int>(sc) + bias;
    return static_cast<std::uint8_t>(lifted < 0 ? 0 : lifted);
}

std::int16_t word(float scale, float sc) {
    sc = std::round(scale * sc);
    if (sc >= 32767.0f) return 32767;
    if (sc <= -32768.0f) return -32768;
    return static_cast<std::int16_t>(sc);
}

// exp() as HMMER's SIMD Forward profile computes it (Cephes' range reduction
// and degree-5 polynomial in single precision), so that the odds ratios, and
// hence every Forward value, are the same to the last bit.
float profile_exp(float x) {
    constexpr float max_log = 88.3762626647949f, min_log = -88.3762626647949f;
    if (x > max_log) return std::numeric_limits<float>::infinity();
    if (x <= min_log) return 0.0f;
    float fx = x * static_cast<float>(1.0 / kLog2);
    fx = fx + 0.5f;
    const float truncated = static_cast<float>(static_cast<int>(fx));
    fx = truncated > fx ? truncated - 1.0f : truncated;  // floor
    const int k = static_cast<int>(fx);
    x = x - fx * 0.693359375f;
    x = x - fx * -2.12194440e-4f;
    const float z = x * x;
    float y = 1.9875691500E-4f;
    y = y * x;
    y = y + 1.3981999507E-3f;
    y = y * x;
    y = y + 8.3334519073E-3f;
    y = y * x;
    y = y + 4.1665795894E-2f;
    y = y * x;
    y = y + 1.6666665459E-1f;
    y = y * x;
    y = y + 5.0000001201E-1f;
    y = y * z;
    y = y + x;
    y = y + 1.0f;
    const std::uint32_t bits = static_cast<std::uint32_t>(k + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return y * scale;
}

// The striped copy of a Forward profile (ForwardProfile::striped).
void stripe_forward_profile(ForwardProfile& om) {
    const int M = om.length, Q = std::max(2, (M - 1) / 4 + 1);
    om.segments = Q;
    const std::vector<float>* transitions[8] = {&om.bm, &om.mm, &om.im, &om.dm, &om.md, &om.mi, &om.ii, &om.dd};
    const std::size_t width = static_cast<std::size_t>(Q) * 4;
    om.striped.assign(width * static_cast<std::size_t>(8 + om.codes), 0.0f);
    for (int k = 1; k <= M; ++k) {
        const std::size_t slot = static_cast<std::size_t>(((k - 1) % Q) * 4 + (k - 1) / Q);
        for (int a = 0; a < 8; ++a)
            om.striped[static_cast<std::size_t>(a) * width + slot] = (*transitions[a])[static_cast<std::size_t>(k - 1)];
        for (int x = 0; x < om.codes; ++x)
            om.striped[static_cast<std::size_t>(8 + x) * width + slot] =
                om.match[static_cast<std::size_t>(x) * static_cast<std::size_t>(M) + static_cast<std::size_t>(k - 1)];
    }
}

}  // namespace

Plan7Profile configure_local(const ProfileHmm& hmm, const NullModel& null_model) {
    if (hmm.alphabet != null_model.alphabet())
        throw Error(hmm.path + ": model '" + hmm.name + "' is " + std::string(ResidueCode::of(hmm.alphabet).name()) +
                    " but the search is over " + std::string(ResidueCode::of(null_model.alphabet()).name()) +
                    " sequences");
    if (!hmm.statistics)
        throw Error(hmm.path + ":" + std::to_string(hmm.line) + ": model '" + hmm.name +
                    "' has no STATS LOCAL lines (it was not calibrated); hmmsearch needs them for E-values");
    const ResidueCode& code = ResidueCode::of(hmm.alphabet);
    const int M = hmm.length, K = code.canonical(), Kp = code.all_codes();
    Plan7Profile gm;
    gm.name = hmm.name;
    gm.accession = hmm.accession;
    gm.description = hmm.description;
    gm.alphabet = hmm.alphabet;
    gm.length = M;
    gm.statistics = *hmm.statistics;
    gm.consensus = hmm.consensus;
    gm.transition_score.assign(static_cast<std::size_t>((M + 1) * 8), -kInf);
    gm.match_score.assign(static_cast<std::size_t>(Kp * (M + 1)), -kInf);

    // Local entry: B -> Mk in proportion to the occupancy of Mk.
    if (M < 1) throw Error(hmm.path + ": model '" + hmm.name + "' has no nodes");
    std::vector<float> occupancy(static_cast<std::size_t>(M + 2), 0.0f);
    occupancy[1] = hmm.transition(0, kMI) + hmm.transition(0, kMM);
    for (int k = 2; k <= M; ++k) {
        const float previous = occupancy[static_cast<std::size_t>(k - 1)];
        const float through_match = previous * (hmm.transition(k - 1, kMM) + hmm.transition(k - 1, kMI));
        occupancy[static_cast<std::size_t>(k)] = static_cast<float>(
            static_cast<double>(through_match) + (1.0 - previous) * static_cast<double>(hmm.transition(k - 1, kDM)));
    }
    float Z = 0.0f;
    for (int k = 1; k <= M; ++k) Z += occupancy[static_cast<std::size_t>(k)] * static_cast<float>(M - k + 1);
    for (int k = 1; k <= M; ++k)
        gm.transition_score[static_cast<std::size_t>((k - 1) * 8 + Plan7Profile::kBM)] =
            static_cast<float>(std::log(static_cast<double>(occupancy[static_cast<std::size_t>(k)] / Z)));

    for (int k = 1; k < M; ++k)
        for (int t = 0; t < kTransitions; ++t)
            gm.transition_score[static_cast<std::size_t>(k * 8 + t)] =
                static_cast<float>(std::log(static_cast<double>(hmm.transition(k, static_cast<Transition>(t)))));

    const auto& f = null_model.frequencies();
    std::vector<float> sc(static_cast<std::size_t>(Kp));
    for (int k = 1; k <= M; ++k) {
        for (int x = 0; x < K; ++x)
            sc[static_cast<std::size_t>(x)] =
                static_cast<float>(std::log(static_cast<double>(hmm.match_probability(k, x)) /
                                            static_cast<double>(f[static_cast<std::size_t>(x)])));
        sc[static_cast<std::size_t>(code.gap())] = -kInf;
        sc[static_cast<std::size_t>(code.nonresidue())] = -kInf;
        sc[static_cast<std::size_t>(code.missing())] = -kInf;
        // Degenerate codes score the expectation over the residues they stand for.
        for (int x = K + 1; x <= Kp - 3; ++x) {
            float result = 0.0f, denom = 0.0f;
            for (int y = 0; y < K; ++y)
                if (code.stands_for(x, y)) {
                    result += sc[static_cast<std::size_t>(y)] * f[static_cast<std::size_t>(y)];
                    denom += f[static_cast<std::size_t>(y)];
                }
            sc[static_cast<std::size_t>(x)] = result / denom;
        }
        for (int x = 0; x < Kp; ++x)
            gm.match_score[static_cast<std::size_t>(x * (M + 1) + k)] = sc[static_cast<std::size_t>(x)];
    }
    return gm;
}

LengthModel LengthModel::for_target(int L, bool multihit) {
    const float nj = multihit ? 1.0f : 0.0f;
    const float pmove = (2.0f + nj) / (static_cast<float>(L) + 2.0f + nj);
    const float ploop = 1.0f - pmove;
    return {ploop, pmove};
}

std::uint8_t MsvProfile::tjb(int L) const { return unbiased_byte(scale, std::log(3.0f / static_cast<float>(L + 3))); }

MsvProfile make_msv_profile(const Plan7Profile& gm) {
    const ResidueCode& code = ResidueCode::of(gm.alphabet);
    const int M = gm.length, K = code.canonical(), Kp = code.all_codes();
    MsvProfile om;
    om.length = M;
    om.codes = Kp;
    om.scale = static_cast<float>(3.0 / kLog2);
    om.base = 190;
    // The largest match score (insert scores are 0, so never below 0).
    float max = 0.0f;
    for (int x = 0; x < K; ++x)
        for (int k = 1; k <= M; ++k) max = std::max(max, gm.msc(k, x));
    om.bias = unbiased_byte(om.scale, -1.0f * max);
    om.cost.resize(static_cast<std::size_t>(Kp * M));
    for (int x = 0; x < Kp; ++x)
        for (int k = 1; k <= M; ++k)
            om.cost[static_cast<std::size_t>(x * M + k - 1)] = biased_byte(om.scale, om.bias, gm.msc(k, x));
    om.tbm = unbiased_byte(om.scale, std::log(2.0f / (static_cast<float>(M) * static_cast<float>(M + 1))));
    om.tec = unbiased_byte(om.scale, std::log(0.5f));
    return om;
}

std::int16_t ViterbiFilterProfile::ncj_move(int L) const {
    return word(scale, std::log(LengthModel::for_target(L).move));
}

ViterbiFilterProfile make_viterbi_filter_profile(const Plan7Profile& gm) {
    const ResidueCode& code = ResidueCode::of(gm.alphabet);
    const int M = gm.length, Kp = code.all_codes();
    ViterbiFilterProfile om;
    om.length = M;
    om.codes = Kp;
    om.scale = static_cast<float>(500.0 / kLog2);
    om.base = 12000;
    om.match.resize(static_cast<std::size_t>(Kp * M));
    for (int x = 0; x < Kp; ++x)
        for (int k = 1; k <= M; ++k) om.match[static_cast<std::size_t>(x * M + k - 1)] = word(om.scale, gm.msc(k, x));
    for (auto* v : {&om.bm, &om.mm, &om.im, &om.dm, &om.md, &om.mi, &om.ii, &om.dd})
        v->assign(static_cast<std::size_t>(M), -32768);
    // Transitions out of node M do not exist (the last node only exits to E).
    auto w = [&](int k, int t) -> std::int16_t { return k < M ? word(om.scale, gm.tsc(k, t)) : std::int16_t(-32768); };
    for (int k = 1; k <= M; ++k) {
        const std::size_t i = static_cast<std::size_t>(k - 1);
        om.bm[i] = std::min<std::int16_t>(w(k - 1, Plan7Profile::kBM), 0);
        om.mm[i] = std::min<std::int16_t>(w(k - 1, kMM), 0);
        om.im[i] = std::min<std::int16_t>(w(k - 1, kIM), 0);
        om.dm[i] = std::min<std::int16_t>(w(k - 1, kDM), 0);
        om.md[i] = std::min<std::int16_t>(w(k, kMD), 0);
        om.mi[i] = std::min<std::int16_t>(w(k, kMI), 0);
        om.ii[i] = std::min<std::int16_t>(w(k, kII), -1);  // never a free I->I loop
        om.dd[i] = w(k, kDD);
    }
    om.e_loop = word(om.scale, static_cast<float>(-kLog2));
    om.e_move = word(om.scale, static_cast<float>(-kLog2));
    return om;
}

ForwardProfile make_forward_profile(const Plan7Profile& gm, bool multihit) {
    const ResidueCode& code = ResidueCode::of(gm.alphabet);
    const int M = gm.length, Kp = code.all_codes();
    ForwardProfile om;
    om.length = M;
    om.codes = Kp;
    om.match.resize(static_cast<std::size_t>(Kp * M));
    for (int x = 0; x < Kp; ++x)
        for (int k = 1; k <= M; ++k) om.match[static_cast<std::size_t>(x * M + k - 1)] = profile_exp(gm.msc(k, x));
    for (auto* v : {&om.bm, &om.mm, &om.im, &om.dm, &om.md, &om.mi, &om.ii, &om.dd})
        v->assign(static_cast<std::size_t>(M), 0.0f);
    auto p = [&](int k, int t) -> float { return k < M ? profile_exp(gm.tsc(k, t)) : 0.0f; };
    for (int k = 1; k <= M; ++k) {
        const std::size_t i = static_cast<std::size_t>(k - 1);
        om.bm[i] = p(k - 1, Plan7Profile::kBM);
        om.mm[i] = p(k - 1, kMM);
        om.im[i] = p(k - 1, kIM);
        om.dm[i] = p(k - 1, kDM);
        om.md[i] = p(k, kMD);
        om.mi[i] = p(k, kMI);
        om.ii[i] = p(k, kII);
        om.dd[i] = p(k, kDD);
    }
    stripe_forward_profile(om);
    if (multihit) {
        om.e_loop = std::exp(static_cast<float>(-kLog2));
        om.e_move = om.e_loop;
    } else {
        om.e_loop = 0.0f;
        om.e_move = 1.0f;
    }
    return om;
}

}  // namespace alignscope::profile
