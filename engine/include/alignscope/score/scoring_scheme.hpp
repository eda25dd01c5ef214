// The scoring scheme every aligner takes: substitution scores and gap penalties
// as scaled integers.
//
// Gap convention (EMBOSS, parasail): a gap of length k costs open + (k-1)*extend,
// both penalties positive. BLAST's "existence E / extension X" is open = E + X,
// extend = X (BLAST 11/1 = AlignScope 12/1). open == extend is the linear model.
// Penalties may be given in steps of 0.5 (EMBOSS's default is 10/0.5); then all
// scores, matrix included, are held multiplied by scale = 2 so the DP stays in
// integers. Scores leave the engine in user units: score / scale.
#pragma once

#include <alignscope/score/substitution_matrix.hpp>

#include <cstdint>
#include <string>

namespace alignscope {

struct ScoringScheme {
    SubstitutionMatrix matrix;  // already multiplied by scale
    int gap_open = 0;           // scaled, >= 0: cost of a gap of length 1
    int gap_extend = 0;         // scaled, >= 0: cost of each further position
    int scale = 1;              // 1 or 2

    bool linear() const { return gap_open == gap_extend; }
    // Cost of a gap of length k >= 1, scaled.
    std::int64_t gap_cost(std::int64_t k) const { return gap_open + (k - 1) * gap_extend; }
    double to_user(std::int64_t scaled_score) const { return static_cast<double>(scaled_score) / scale; }
    // e.g. "BLOSUM62, gap open 10, extend 0.5 (a gap of length k costs open + (k-1)*extend)"
    std::string describe() const;

    // Builds a scheme from user units. Throws Error naming the parameter when a
    // penalty is negative, not a multiple of 0.5, or extend > open; or when a
    // match/mismatch value is not an integer.
    static ScoringScheme create(const SubstitutionMatrix& unscaled, double gap_open, double gap_extend);
};

}  // namespace alignscope
