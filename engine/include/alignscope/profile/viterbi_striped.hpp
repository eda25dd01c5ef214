// The Viterbi filter vectorised for the CPU: Farrar's striped layout, eight
// model nodes per 128-bit register in HMMER's signed 16-bit units, saturating
// adds exactly where the scalar reference saturates, and the D->D chains
// closed across lanes until no lane changes (so every cell, not just the
// score, equals the scalar reference's).
#pragma once

#include <alignscope/profile/plan7_profile.hpp>

#include <cstdint>
#include <vector>

namespace alignscope::profile {

struct StripedViterbiProfile {
    const ViterbiFilterProfile* scalar = nullptr;  // base, e_loop, e_move, ncj_move(L)
    int segments = 0;                              // Q: node k sits at vector (k-1) % Q, lane (k-1) / Q
    // Eight arrays of Q vectors (bm, mm, im, dm, md, mi, ii, dd), then the match
    // scores of each code: [(array * Q + q) * 8 + lane]; -32768 past node M.
    std::vector<std::int16_t> words;
};

StripedViterbiProfile make_striped_viterbi_profile(const ViterbiFilterProfile& profile);

// Same result as viterbi_filter(); falls back to it where SSE2 is absent.
float viterbi_filter_striped(const StripedViterbiProfile& om, const std::uint8_t* dsq, int L);

}  // namespace alignscope::profile
