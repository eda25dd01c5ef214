// The profile filters' model tables as the GPU kernels read them: striped over
// a warp (lane = position in the stripe), one table per residue code, and the
// code a kernel writes per target. Plain C++ so that tests and the self-test
// can build and check them without a GPU.
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
// filter one node per lane (32 per stripe): MSV up to 2,048 nodes, the
// Viterbi filter up to 1,024 on the GPU.
inline constexpr std::array<int, 10> kSegmentCounts = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
int segments_for(int nodes, int nodes_per_stripe);  // 0 when no compiled count fits

// What a filter kernel writes per target.
inline constexpr std::int32_t kMsvOverflow = -1;     // byte range overflowed: +infinity
inline constexpr std::int32_t kMsvNeedsFull = -2;    // SSV: the J state would be used, run MSV
inline constexpr std::int32_t kViterbiOverflow = 0x7fffffff;  // word range overflowed: +infinity

// MSV in 16-bit halves of 32-bit words: node k sits in segment (k-1) % Q,
// stripe position p = (k-1) / Q, i.e. lane p / 2, half p % 2 (low half first).
// negated_cost[(x * Q + q) * 32 + lane] holds -cost of both halves; nodes past
// M cost 255 (their cells stay 0, HMMER's -infinity).
struct MsvStripes {
    int segments = 0;
    std::vector<std::uint32_t> negated_cost;
};
MsvStripes make_msv_stripes(const MsvProfile& profile, int segments);

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
ViterbiStripes make_viterbi_stripes(const ViterbiFilterProfile& profile, int segments);

}  // namespace alignscope::kernels::profile
