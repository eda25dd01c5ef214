// The profile filters' model tables as the GPU kernels read them: striped over
// a warp (lane = position in the stripe), one table per residue code, and the
// code a kernel writes per target, and the kernels' names. Plain C++ and
// header-only, so that CPU tests check the same layout without a GPU.
#pragma once

#include <alignscope/profile/plan7_profile.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace alignscope::kernels::profile {

using alignscope::profile::MsvProfile;
using alignscope::profile::ViterbiFilterProfile;

// Segment counts a kernel is compiled for (the model's count is rounded up to
// the next one). MSV packs two nodes per lane (64 per stripe), the Viterbi
// filter one node per lane (32 per stripe) and has two more counts, so that
// both take models of up to 2,048 nodes on the GPU (Pfam's longest are
// about 2,000; SMC_N of hmmer's examples has 1,142).
inline constexpr std::array<int, 10> kSegmentCounts = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
inline constexpr std::array<int, 12> kViterbiSegmentCounts = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
// The compiled count for `nodes` nodes (nodes_per_stripe: 64 for MSV, 32 for
// the Viterbi filter); 0 when none fits.
inline int segments_for(int nodes, int nodes_per_stripe);

// What a filter kernel writes per target.
inline constexpr std::int32_t kMsvOverflow = -1;              // byte range overflowed: +infinity
inline constexpr std::int32_t kMsvNeedsFull = -2;             // SSV: the J state would be used, run MSV
inline constexpr std::int32_t kViterbiOverflow = 0x7fffffff;  // word range overflowed: +infinity

// MSV in 16-bit halves of 32-bit words: node k sits in segment (k-1) % Q,
// stripe position p = (k-1) / Q, i.e. lane p / 2, half p % 2 (low half first).
// negated_cost[(x * Q + q) * 32 + lane] holds -cost of both halves; nodes past
// M cost 255 (their cells stay 0, HMMER's -infinity).
struct MsvStripes {
    int segments = 0;
    std::vector<std::uint32_t> negated_cost;
};
inline MsvStripes make_msv_stripes(const MsvProfile& profile, int segments);

// The Viterbi filter, one node per lane: node k sits in segment (k-1) % Q,
// lane (k-1) / Q. Arrays of Q * 32 words, nodes past M at -32768; the transition
// arrays keep the node-indexed meaning of ViterbiFilterProfile ("into k" and
// "out of k", both stored at node k).
struct ViterbiStripes {
    enum Array { BM = 0, MM, IM, DM, MD, MI, II, DD, Transitions };
    int segments = 0;
    std::vector<std::int16_t> transitions;  // [(array * Q + q) * 32 + lane]
    std::vector<std::int16_t> match;        // [(x * Q + q) * 32 + lane]
};
inline ViterbiStripes make_viterbi_stripes(const ViterbiFilterProfile& profile, int segments);

// The names these kernels carry on the timeline and in verify (the kernel
// grammar: mode x gap model x family x lane width). MSV and SSV are local and
// ungapped; the Viterbi filter is local with Plan7's affine-like gaps.
inline constexpr const char* kSsvKernelName = "sw_linear_ssv_s16x2";
inline constexpr const char* kMsvKernelName = "sw_linear_msv_s16x2";
inline constexpr const char* kViterbiKernelName = "sw_affine_vitfilter_s32";
// The Forward filter: Plan7's gaps, four threads a target ("fwdfilter4"), 32-bit float cells.
inline constexpr const char* kForwardKernelName = "sw_affine_fwdfilter4_s32";

// Definitions (header-only, so CPU tests use the same layout without CUDA).

inline int segments_for(int nodes, int nodes_per_stripe) {
    const int needed = (nodes + nodes_per_stripe - 1) / nodes_per_stripe;
    if (nodes_per_stripe == 32) {
        for (int q : kViterbiSegmentCounts)
            if (q >= needed) return q;
        return 0;
    }
    for (int q : kSegmentCounts)
        if (q >= needed) return q;
    return 0;
}

inline MsvStripes make_msv_stripes(const MsvProfile& profile, int segments) {
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

inline ViterbiStripes make_viterbi_stripes(const ViterbiFilterProfile& profile, int segments) {
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
                profile
                    .match[static_cast<std::size_t>(x) * static_cast<std::size_t>(M) + static_cast<std::size_t>(k - 1)];
    }
    return out;
}

}  // namespace alignscope::kernels::profile
