// Which kernel runs a pair when the user does not force one: the family from
// the pair's lengths and how many pairs there are to fill the device, the lane
// width from whether 16-bit arithmetic can hold the pass. Plain C++: the tests
// check the rules without a GPU.
#pragma once

#include "pairwise/kernel_catalog.hpp"

#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <cstdint>

namespace alignscope::kernels {

// The longest pair the inter-sequence kernels take: beyond it one thread would
// sweep too many columns while its warp-mates idle.
inline constexpr std::int64_t kInterMaxLength = 2048;

// Inter-sequence kernels need about this many pairs per SM to keep the device
// busy; with fewer pairs a warp per pair (intra) has more parallelism to give.
inline constexpr std::int64_t kInterPairsPerSm = 256;

inline KernelFamily choose_family(std::int64_t query_length, std::int64_t target_length, std::uint64_t job_pairs,
                                  int sm_count) {
    const bool short_pair = std::max(query_length, target_length) <= kInterMaxLength;
    const bool many_pairs = job_pairs >= static_cast<std::uint64_t>(std::max(sm_count, 1)) * kInterPairsPerSm;
    return short_pair && many_pairs ? KernelFamily::Inter : KernelFamily::Intra;
}

}  // namespace alignscope::kernels
