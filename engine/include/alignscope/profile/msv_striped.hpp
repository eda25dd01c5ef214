// The MSV filter vectorised for the CPU, as HMMER runs it: first SSV (one
// diagonal, B constant, two byte operations per cell, no reduction per row),
// then, only where SSV cannot decide (J could have raised B, or every cell sat
// at B), the full MSV in Farrar's striped layout. Both use the same saturating
// byte arithmetic as the scalar reference, so every score is identical to
// msv_filter(). The vector width is picked at run time: AVX2 (32 bytes),
// SSE4.1 (16), else SSE2 MSV alone; the build runs on any x86-64.
#pragma once

#include <alignscope/profile/plan7_profile.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace alignscope::profile {

// Instruction sets the striped filters can use, narrowest first.
enum class SimdLevel { Scalar, Sse2, Sse41, Avx2 };
std::string_view to_string(SimdLevel level);
// The widest level this CPU (and its operating system) supports.
SimdLevel best_simd_level();
// Every level this CPU supports, narrowest first (for tests and benchmarks).
std::vector<SimdLevel> supported_simd_levels();

struct StripedMsvProfile {
    const MsvProfile* scalar = nullptr;  // base, bias, tbm, tec, tjb(L)
    SimdLevel level = SimdLevel::Sse2;
    int segments = 0;                // Q: vectors of 16 nodes; node k sits at vector (k-1) % Q, lane (k-1) / Q
    std::vector<std::uint8_t> cost;  // cost[(x * Q + q) * 16 + lane]; 255 past node M
    // SSV at `level` (Sse41, Avx2): `ssv_width` byte lanes, `ssv_segments`
    // vectors per row; score[(x * Q + q) * width + lane] = bias - cost as a
    // signed byte (clamped to -128; -128 past node M). Empty when SSV is off
    // (no SSE4.1, or a bias over 127).
    int ssv_width = 0, ssv_segments = 0;
    std::vector<std::int8_t> ssv_score;
};

// The profile for `level` (default: best_simd_level()); a level this CPU lacks
// is an Error.
StripedMsvProfile make_striped_msv_profile(const MsvProfile& profile);
StripedMsvProfile make_striped_msv_profile(const MsvProfile& profile, SimdLevel level);

// Same result as msv_filter(), bit for bit. `by_ssv`, where given, says
// whether SSV decided alone (false: the full MSV ran).
float msv_filter_striped(const StripedMsvProfile& om, const std::uint8_t* dsq, int L, bool* by_ssv = nullptr);

}  // namespace alignscope::profile
