// Whether the GPU's 32-bit pairwise passes can hold a pair's DP, decided from
// the scheme's actual bounds (largest and smallest substitution score, open,
// extend) and the pair's lengths. A pair they cannot hold goes to the exact
// CPU path (the 64-bit reference) inside the same job. Plain C++: the tests
// check the rule without a GPU.
#pragma once

#include "pass_types.hpp"

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/lane_bounds.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

namespace alignscope::kernels {

// The 32-bit passes (inter_s32, intra_s32, intra_s32_chunked) start E and F at kS32Neg and
// subtract one extend from it before a real value replaces it; every real
// value must stay above kS32Neg so that a maximum never picks the sentinel.
// From above, the largest sum is H + s (+ open on the traceback pass's
// H - open cells), which must stay below kS32Ceiling: the slack above it
// keeps the padding rows (up to one strip, 255 rows, of gaps below the last
// real row) and penalties of up to 2,000,000 (scaled) inside 32 bits.
inline constexpr std::int64_t kS32Ceiling = std::int64_t{1} << 30;

// Lowest and highest value any 32-bit pass of an m x n pair computes from
// real cells: H, E and F of the forward and reverse passes, and H - open, E
// and F of the traceback pass (a global pass over a region within m x n,
// whatever the mode).
struct PassRange {
    std::int64_t lowest = 0;
    std::int64_t highest = 0;
};

inline PassRange s32_pass_range(AlignmentMode mode, bool traceback, std::int64_t m, std::int64_t n,
                                const SchemeBounds& bounds) {
    const std::int64_t open = bounds.gap_open, extend = bounds.gap_extend;
    PassRange range;
    if (mode == AlignmentMode::Local && !traceback) {
        // Local passes without the (global) traceback pass: H >= 0, E and F
        // >= -open, one extend below them before a real value replaces the
        // sentinel; an open more to spare.
        range.lowest = -(2 * open + extend);
    } else {
        // lowest_value: both all-gap boundaries, a further open and the worst
        // substitution (global mode, the widest); the traceback's H - open and
        // an E or F one extend below it.
        range.lowest = bounds.lowest_value(m, n) - open - extend;
    }
    range.highest = bounds.highest_score(m, n) + std::max(0, bounds.max_substitution) + open;
    return range;
}

// Whether every value of the 32-bit passes of an m x n pair stays strictly
// between the sentinel and the ceiling, the matrix entries fit the device
// table (int32) and every penalty fits PassParams.
inline bool s32_can_hold(AlignmentMode mode, bool traceback, std::int64_t m, std::int64_t n,
                         const SchemeBounds& bounds) {
    if (m <= 0 || n <= 0) return true;
    constexpr std::int64_t table_limit = std::numeric_limits<std::int32_t>::max() / 4;
    if (bounds.largest_parameter() >= table_limit) return false;
    const PassRange range = s32_pass_range(mode, traceback, m, n, bounds);
    return range.lowest > kS32Neg && range.highest < kS32Ceiling;
}

}  // namespace alignscope::kernels
