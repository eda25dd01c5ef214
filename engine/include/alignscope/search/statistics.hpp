// Karlin-Altschul statistics for local alignment scores: bit scores and
// E-values from the published lambda and K of NCBI BLAST's gapped parameter
// tables (blast_stat.c; Altschul & Gish 1996 and later simulations), for the
// built-in matrices and nucleotide match/mismatch scores with the gap costs
// BLAST supports. Other combinations (and every global or semi-global search)
// have no parameters: the search then reports raw scores only and says why.
//
// Conventions: BLAST's "existence E, extension X" is our open E + X, extend X
// (BLOSUM62 11/1 in BLAST = open 12, extend 1 here). Scores are raw (unscaled;
// only schemes with scale 1 have parameters).
//   bits    = (lambda * S - ln K) / ln 2
//   E-value = K * m * N * exp(-lambda * S)    m = query length, N = database residues
// No edge-effect length correction is applied (BLAST subtracts an expected HSP
// length from m and N; here E-values are therefore slightly larger, i.e.
// conservative, for short sequences).
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace alignscope {

struct KarlinAltschul {
    double lambda = 0;
    double K = 0;
    double H = 0;  // relative entropy (nats per aligned pair), for reference
    // BLAST's tables for match/mismatch 2/-3, 2/-5 and 2/-7 hold only for even
    // scores: an odd score is rounded down first.
    bool even_scores_only = false;
    // e.g. "NCBI BLAST gapped parameters for BLOSUM62, gap existence 11, extension 1"
    std::string source;
};

// One published row: the matrix (built-in name, or "match R/-P"), BLAST's gap
// existence and extension, and the parameters.
struct KarlinAltschulRow {
    std::string matrix;
    int existence = 0;
    int extension = 0;
    double lambda = 0, K = 0, H = 0;
};
// Every row this build knows.
const std::vector<KarlinAltschulRow>& karlin_altschul_table();

// Parameters for a local search under `scheme`, or std::nullopt with `why`
// (when given) set to a sentence saying what is missing. The matrix must equal
// the built-in of its name (a file that only borrows the name does not count),
// or be a match/mismatch matrix.
std::optional<KarlinAltschul> karlin_altschul_for(const ScoringScheme& scheme, AlignmentMode mode,
                                                  std::string* why = nullptr);

double bit_score(const KarlinAltschul& parameters, std::int64_t raw_score);
double evalue(const KarlinAltschul& parameters, std::int64_t raw_score, std::uint64_t query_length,
              std::uint64_t database_residues);
// The smallest raw score whose E-value is at most `max_evalue` (for filtering
// before the traceback).
std::int64_t min_score_for_evalue(const KarlinAltschul& parameters, double max_evalue, std::uint64_t query_length,
                                  std::uint64_t database_residues);

}  // namespace alignscope
