// Which kernel runs a pair when the user does not force one: the family from
// the pair's lengths and how many pairs there are to fill the device, the lane
// width from whether 16-bit arithmetic can hold the pass. Plain C++: the tests
// check the rules without a GPU.
#pragma once

#include "../common/dp_cell.hpp"
#include "kernel_catalog.hpp"

#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <cstdint>

namespace alignscope::kernels {

// The longest pair the inter-sequence kernels take: beyond it one thread per
// pair sweeps so many columns, with a strip boundary in global memory every
// 8 rows, that a group of threads per pair does better.
inline constexpr std::int64_t kInterMaxLength = 256;

// Batched kernels need about this many pairs per SM to keep the device busy;
// with fewer pairs a warp per pair (intra, 32 threads) has more parallelism to
// give.
inline constexpr std::int64_t kInterPairsPerSm = 256;

struct FamilyChoice {
    KernelFamily family = KernelFamily::Intra;
    int group = 32;  // threads per pair
    bool operator==(const FamilyChoice&) const = default;
};

// Threads per pair for many pairs past the inter limit. A smaller group pads
// the query less (strips of group * 8 rows) and puts more pairs in a warp; a
// larger one hands fewer strip boundaries through global memory.
inline constexpr int kManyPairsGroup = 4;

// Many short pairs: a thread per pair; many longer ones: a small group of
// threads per pair; few pairs: a warp per pair.
inline FamilyChoice choose_family(std::int64_t query_length, std::int64_t target_length, std::uint64_t job_pairs,
                                  int sm_count) {
    const bool many_pairs = job_pairs >= static_cast<std::uint64_t>(std::max(sm_count, 1)) * kInterPairsPerSm;
    if (!many_pairs) return {KernelFamily::Intra, 32};
    if (std::max(query_length, target_length) <= kInterMaxLength) return {KernelFamily::Inter, 1};
    return {KernelFamily::Intra, kManyPairsGroup};
}

// Whether a pass of this pair fits 16-bit lanes from below: every value a
// pass can meet (the all-gap boundary, a gap opened from it, a mismatch added
// to it) must stay above the sentinel dp::Cell16x2::kNeg, and no penalty or score may
// exceed dp::Cell16x2::kMaxPenalty. Overflow from above is not decided here: the
// kernels track the largest H and dp::Cell16x2::exact() sends a pair that may have
// wrapped back to the 32-bit kernel.
inline bool s16_can_hold(AlignmentMode mode, std::int64_t query_length, std::int64_t target_length,
                         const ScoringScheme& scheme) {
    const std::int64_t o = scheme.gap_open, e = scheme.gap_extend;
    const std::int64_t worst_score = std::min(0, scheme.matrix.min_score());
    if (o > dp::Cell16x2::kMaxPenalty || e > dp::Cell16x2::kMaxPenalty || -worst_score > dp::Cell16x2::kMaxPenalty ||
        scheme.matrix.max_score() > dp::Cell16x2::kMaxPenalty)
        return false;
    // The 16-bit passes keep s + open per row in a signed byte (their query
    // profile in shared memory); the pad letter scores 0.
    if (std::min<std::int64_t>(worst_score, 0) + o < -128 || std::max(scheme.matrix.max_score(), 0) + o > 127)
        return false;
    if (mode == AlignmentMode::Local) return true;
    auto gap = [&](std::int64_t k) { return k > 0 ? o + (k - 1) * e : 0; };
    const std::int64_t lowest = -(gap(query_length) + gap(target_length)) - 2 * o - e + worst_score;
    return lowest > dp::Cell16x2::kNeg;
}

}  // namespace alignscope::kernels
