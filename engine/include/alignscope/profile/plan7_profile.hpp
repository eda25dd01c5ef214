// A profile HMM configured for search as hmmsearch configures it: local
// multihit Plan7 (entry at any match state weighted by occupancy, exit from
// any, E->J loop for further domains, N/C/J lengths set for each target), in
// log-odds scores (nats) against the null model; and the same scores reduced
// to the units of the three filters: MSV's biased bytes (1/3 bit), the Viterbi
// filter's words (1/500 bit) and Forward's probabilities (odds ratios).
#pragma once

#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/null_model.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::profile {

struct Plan7Profile {
    std::string name, accession, description;
    ResidueAlphabet alphabet = ResidueAlphabet::Amino;
    int length = 0;  // M
    ProfileStatistics statistics;
    std::string consensus;  // [1..M]
    // Log-odds in nats. Transitions out of node k (k = 0..M): index k*8 + t,
    // t in Transition order then kBM = 7 meaning B -> M(k+1) (stored one off,
    // so that "into node k" reads [k-1]). Match emissions: match_score[x*(M+1) + k].
    static constexpr int kBM = 7;
    std::vector<float> transition_score;
    std::vector<float> match_score;
    float tsc(int k, int t) const { return transition_score[static_cast<std::size_t>(k * 8 + t)]; }
    float msc(int k, int x) const { return match_score[static_cast<std::size_t>(x * (length + 1) + k)]; }
};

// Local multihit configuration (hmmsearch's only mode).
Plan7Profile configure_local(const ProfileHmm& hmm, const NullModel& null_model);

// N, C, J loop and move probabilities for a target of length L: move is
// 3/(L+3) in multihit mode, 2/(L+2) in unihit mode (one domain).
struct LengthModel {
    float loop = 0, move = 0;
    static LengthModel for_target(int L, bool multihit = true);
};

// MSV filter units: costs in 1/3 bits, offset so that "-infinity" is 0 and a
// score of 0 is `base`; every match cost carries `bias` so it is never negative.
struct MsvProfile {
    int length = 0;
    float scale = 0;
    std::uint8_t base = 190, bias = 0, tbm = 0, tec = 0;
    int codes = 0;
    std::vector<std::uint8_t> cost;  // cost[x*M + k-1]
    const std::uint8_t* costs_of(int x) const { return cost.data() + static_cast<std::size_t>(x * length); }
    std::uint8_t tjb(int L) const;  // N->B / J->B cost for a target of length L
};
MsvProfile make_msv_profile(const Plan7Profile& profile);

// Viterbi filter units: signed 16-bit scores in 1/500 bits, -32768 = -infinity.
struct ViterbiFilterProfile {
    int length = 0;
    float scale = 0;
    std::int16_t base = 12000;
    int codes = 0;
    std::vector<std::int16_t> match;  // match[x*M + k-1]
    // Per node k = 1..M at [k-1]: into M(k) from B, M(k-1), I(k-1), D(k-1);
    // out of node k: M->D(k+1), M->I(k), I->I(k), D->D(k+1).
    std::vector<std::int16_t> bm, mm, im, dm, md, mi, ii, dd;
    std::int16_t e_loop = 0, e_move = 0;
    std::int16_t ncj_move(int L) const;
};
ViterbiFilterProfile make_viterbi_filter_profile(const Plan7Profile& profile);

// Forward/Backward in probability space: odds ratios and transition probabilities.
struct ForwardProfile {
    int length = 0;
    int codes = 0;
    std::vector<float> match;                           // match[x*M + k-1]
    std::vector<float> bm, mm, im, dm, md, mi, ii, dd;  // same layout as the Viterbi filter's
    float e_loop = 0.5f, e_move = 0.5f;                 // E -> J and E -> C: 1/2 each multihit; 0 and 1 unihit
    // The same values striped as HMMER's SSE Forward reads them: Q segments of
    // four lanes, node k in segment (k-1) % Q, lane (k-1) / Q, 0 past node M.
    // Array a (0..7: bm, mm, im, dm, md, mi, ii, dd; 8 + x: match of code x)
    // starts at striped_array(a); a segment is four consecutive floats.
    int segments = 0;
    std::vector<float> striped;
    const float* striped_array(int a) const { return striped.data() + static_cast<std::size_t>(a * segments * 4); }
};
// Multihit (as the pipeline's Forward), or unihit (as the domain stage rescores
// each envelope).
ForwardProfile make_forward_profile(const Plan7Profile& profile, bool multihit = true);

}  // namespace alignscope::profile
