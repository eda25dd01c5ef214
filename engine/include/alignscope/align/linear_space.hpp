// Linear-space alignment (Myers-Miller divide and conquer for affine gaps,
// Hirschberg's idea) for long pairs on the CPU: the same result as
// align_reference in O(m + n) memory. It is the reference for the GPU
// long-sequence path.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <functional>
#include <string_view>

namespace alignscope {

// Local and semi-global: a forward pass finds score and end, a reverse pass the
// begin, and the region between is aligned globally by Myers-Miller. Same
// score and coordinates as align_reference; among equally good paths the CIGAR
// may differ. `progress` (optional) receives cells computed so far and may
// throw Cancelled.
Alignment align_linear_space(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                             const AlignOptions& options,
                             const std::function<void(std::uint64_t cells)>& progress = {});

}  // namespace alignscope
