// Whether a DP held in signed integer lanes of a given width can hold an
// alignment problem, decided from the scheme's actual bounds (its largest and
// smallest substitution scores, its penalties) and the lengths, never from a
// default. Every CPU kernel width asks here before it runs and takes a wider
// path (ultimately 64-bit linear space) when the answer is no.
#pragma once

#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>

namespace alignscope {

// The extremes of a scheme, scaled (as the DP sees them).
struct SchemeBounds {
    int max_substitution = 0;  // largest matrix entry
    int min_substitution = 0;  // smallest matrix entry
    int gap_open = 0;          // penalties, >= 0
    int gap_extend = 0;

    static SchemeBounds of(const ScoringScheme& scheme);

    // The largest magnitude among the matrix entries and the penalties.
    std::int64_t largest_parameter() const;
    // Upper bound on any alignment score of an m x n problem (>= 0).
    std::int64_t highest_score(std::int64_t m, std::int64_t n) const;
    // Lower bound on any H, E or F value of an m x n problem in global mode
    // (the widest case; semi-global and local cells stay above it): both
    // all-gap boundaries, a further gap open and the worst substitution.
    std::int64_t lowest_value(std::int64_t m, std::int64_t n) const;
};

// Whether lanes of `bits` (8, 16 or 32) of a SIMD kernel that detects
// saturation on its scores (parasail's) can take the scheme's parameters at
// all: every matrix entry and penalty must stay below 2^(bits-3), so that
// H + s, H - open and E - extend cannot wrap before the saturation check sees
// them. Measured on parasail 2.6 (sw/nw, striped/scan): 8-bit lanes went
// wrong from substitution scores of 33 and opens of 65, 16-bit lanes from
// opens of 10,000, without flagging saturation.
bool lane_takes_parameters(const SchemeBounds& bounds, int bits);

// Whether every value of an m x n problem fits lanes of `bits` with a
// quarter of the range to spare (no saturation can then occur).
bool lane_holds_values(const SchemeBounds& bounds, std::int64_t m, std::int64_t n, int bits);

}  // namespace alignscope
