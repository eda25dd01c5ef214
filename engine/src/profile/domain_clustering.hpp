// Single-linkage clustering of the domains sampled from a region's stochastic
// tracebacks, as hmmsearch links them: two domains are linked when each
// overlaps the other by 80 % of the shorter in the target and in the model,
// and their start or end diagonals differ by at most four. The clusters and
// their numbering follow Easel's order of discovery.
#pragma once

#include <cstdint>
#include <vector>

namespace alignscope::profile {

// A domain of sampled trace `sample`: target i..j, model k..m.
struct SampledDomain {
    int sample, i, j, k, m;
};

// Whether an overlap of nov positions of n falls short of the 80 % that
// links two sampled domains: float(nov) / float(n) < 0.8f, decided in
// integers where the conversions are exact (n > 0). The quotient rounds below
// 0.8f exactly when nov / n <= 26843545 / 2^25, the midpoint between 0.8f
// (13421773 / 2^24, odd) and the float below it, to which a tie rounds.
constexpr float kMinOverlap = 0.8f;
inline bool below_min_overlap(int nov, int n) {
    constexpr int exact = 1 << 24;
    if (n > exact || nov > exact || nov < -exact) return static_cast<float>(nov) / static_cast<float>(n) < kMinOverlap;
    return static_cast<std::int64_t>(nov) * (std::int64_t{1} << 25) <= std::int64_t{26843545} * n;
}

// Whether sampled domains a and b are linked.
bool linked(const SampledDomain& a, const SampledDomain& b);

// The cluster of each sampled domain (0, 1, ... in Easel's order of
// discovery) and, in `clusters`, how many there are.
std::vector<int> single_linkage(const std::vector<SampledDomain>& sp, int& clusters);

}  // namespace alignscope::profile
