// The MSV filter vectorised for the CPU: Farrar's striped layout, sixteen
// model nodes per 128-bit register in HMMER's byte units, the same saturating
// arithmetic cell for cell as the scalar reference (MSV has no dependency
// within a row, so striping changes the order of work, never a score).
#pragma once

#include <alignscope/profile/plan7_profile.hpp>

#include <cstdint>
#include <vector>

namespace alignscope::profile {

struct StripedMsvProfile {
    const MsvProfile* scalar = nullptr;  // base, bias, tbm, tec, tjb(L)
    int segments = 0;                    // Q: vectors of 16 nodes; node k sits at vector (k-1) % Q, lane (k-1) / Q
    std::vector<std::uint8_t> cost;      // cost[(x * Q + q) * 16 + lane]; 255 past node M
};

StripedMsvProfile make_striped_msv_profile(const MsvProfile& profile);

// Same result as msv_filter(); falls back to it where SSE2 is absent.
float msv_filter_striped(const StripedMsvProfile& om, const std::uint8_t* dsq, int L);

}  // namespace alignscope::profile
