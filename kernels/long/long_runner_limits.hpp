// What the CUDA long-pair runner can hold, decided on the host from the
// pair's lengths and the scheme's bounds before any work (and unit-tested
// without a GPU): a pair it cannot hold takes the 64-bit linear-space path.
#pragma once

#include <alignscope/align/long_pass.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace alignscope::kernels::longpass {

// The strip kernel reads substitution scores from a table of bytes.
inline constexpr int kLowestByteScore = -127, kHighestByteScore = 127;
// Rows and columns are counted in 32-bit words with a margin of 64.
inline constexpr std::int64_t kMaxResidues = (std::int64_t{1} << 30) - 64;

// Why the CUDA runner cannot hold an m x n pair under `scheme`, in a user's
// words, or empty when it can: a sequence too long, a substitution score
// outside the byte table, or the pipeline's 32-bit limit.
inline std::string cuda_long_cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) {
    if (std::max(m, n) >= kMaxResidues)
        return "a sequence of " + std::to_string(std::max(m, n)) +
               " residues is longer than the GPU long-pair kernel's limit of 2^30 - 64";
    const int low = scheme.matrix.min_score(), high = scheme.matrix.max_score();
    if (low < kLowestByteScore || high > kHighestByteScore)
        return "substitution score " + std::to_string(low < kLowestByteScore ? low : high) +
               " is outside -127..127, which the GPU long-pair kernel holds in bytes";
    return longpair::passes_cannot_hold(m, n, scheme);
}

}  // namespace alignscope::kernels::longpass
