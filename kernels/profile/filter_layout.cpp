// Striping the MSV and Viterbi filter tables for the warp kernels.
#include "profile/filter_layout.hpp"

namespace alignscope::kernels::profile {

int segments_for(int nodes, int nodes_per_stripe)
{
    const int needed = (nodes + nodes_per_stripe - 1) / nodes_per_stripe;
    for (int q : kSegmentCounts)
        if (q >= needed) return q;
    return 0;
}

MsvStripes make_msv_stripes(const MsvProfile& profile, int segments)
{
    MsvStripes out;
    out.segments = segments;
    const int Q = segments, M = profile.length;
    // Halves start at cost 255: a node past M never rises above 0.
    std::vector<std::int32_t> cost(static_cast<std::size_t>(profile.codes) * static_cast<std::size_t>(Q) * 64, 255);
    for (int x = 0; x < profile.codes; ++x)
        for (int k = 1; k <= M; ++k) {
            const int q = (k - 1) % Q, p = (k - 1) / Q;
            cost[(static_cast<std::size_t>(x * Q + q) * 32 + static_cast<std::size_t>(p / 2)) * 2 +
                 static_cast<std::size_t>(p % 2)] = profile.costs_of(x)[k - 1];
        }
    out.negated_cost.resize(cost.size() / 2);
    for (std::size_t w = 0; w < out.negated_cost.size(); ++w) {
        const auto lo = static_cast<std::uint16_t>(static_cast<std::int16_t>(-cost[2 * w]));
        const auto hi = static_cast<std::uint16_t>(static_cast<std::int16_t>(-cost[2 * w + 1]));
        out.negated_cost[w] = static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
    }
    return out;
}

ViterbiStripes make_viterbi_stripes(const ViterbiFilterProfile& profile, int segments)
{
    ViterbiStripes out;
    out.segments = segments;
    const int Q = segments, M = profile.length;
    const std::size_t width = static_cast<std::size_t>(Q) * 32;
    out.transitions.assign(width * ViterbiStripes::Transitions, -32768);
    out.match.assign(width * static_cast<std::size_t>(profile.codes), -32768);
    const std::vector<std::int16_t>* arrays[ViterbiStripes::Transitions] = {&profile.bm, &profile.mm, &profile.im,
                                                                           &profile.dm, &profile.md, &profile.mi,
                                                                           &profile.ii, &profile.dd};
    for (int k = 1; k <= M; ++k) {
        const std::size_t slot = static_cast<std::size_t>((k - 1) % Q) * 32 + static_cast<std::size_t>((k - 1) / Q);
        for (int a = 0; a < ViterbiStripes::Transitions; ++a)
            out.transitions[static_cast<std::size_t>(a) * width + slot] = (*arrays[a])[static_cast<std::size_t>(k - 1)];
        for (int x = 0; x < profile.codes; ++x)
            out.match[static_cast<std::size_t>(x) * width + slot] =
                profile.match[static_cast<std::size_t>(x) * static_cast<std::size_t>(M) + static_cast<std::size_t>(k - 1)];
    }
    return out;
}

}  // namespace alignscope::kernels::profile
