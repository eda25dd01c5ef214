// The full DP matrices of a small problem, for teaching (the GUI's heatmap and
// stepper): H, E and F for every cell and the optimal path over them.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

namespace alignscope {

struct DpMatrices {
    static constexpr std::int64_t minus_infinity = std::numeric_limits<std::int64_t>::min() / 4;
    std::int64_t rows = 0;  // query length + 1
    std::int64_t cols = 0;  // target length + 1
    // Row-major rows*cols, scaled; minus_infinity where a state is impossible
    // (E in column 0, F in row 0).
    std::vector<std::int64_t> H, E, F;
    // Cells (i, j) of the optimal path from its first to its last cell, as the
    // reference traceback walks it (row 0/column 0 cells included in global mode).
    std::vector<std::pair<std::int64_t, std::int64_t>> path;
    Alignment alignment;  // the same result align_reference gives

    std::int64_t h(std::int64_t i, std::int64_t j) const { return H[static_cast<std::size_t>(i * cols + j)]; }
};

// Refuses with Error when (m+1)*(n+1) exceeds `cell_limit` (default 4 M cells).
DpMatrices compute_dp_matrices(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                               const AlignOptions& options, std::uint64_t cell_limit = 4'000'000);

}  // namespace alignscope
