// Striped SSE2 MSV filter (16 unsigned bytes per register). The recurrence
// per cell is max(M(i-1,k-1), B) + bias - cost, saturating at 0 and 255, with
// the row's maximum checked against 255 - bias for overflow, exactly as in
// filters.cpp.
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/msv_striped.hpp>

#include <algorithm>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace alignscope::profile {

StripedMsvProfile make_striped_msv_profile(const MsvProfile& profile) {
    StripedMsvProfile om;
    om.scalar = &profile;
    const int M = profile.length;
    om.segments = std::max(2, (M - 1) / 16 + 1);
    const int Q = om.segments;
    om.cost.assign(static_cast<std::size_t>(profile.codes * Q * 16), 255);
    for (int x = 0; x < profile.codes; ++x)
        for (int k = 1; k <= M; ++k) {
            const int q = (k - 1) % Q, lane = (k - 1) / Q;
            om.cost[static_cast<std::size_t>((x * Q + q) * 16 + lane)] = profile.costs_of(x)[k - 1];
        }
    return om;
}

float msv_filter_striped(const StripedMsvProfile& om, const std::uint8_t* dsq, int L) {
#if defined(__SSE2__)
    const MsvProfile& p = *om.scalar;
    const int Q = om.segments;
    const int tjb = p.tjb(L);
    const int tjbm = (tjb + p.tbm) & 0xff;
    const int base = p.base, bias = p.bias, tec = p.tec;
    std::vector<std::uint8_t> row(static_cast<std::size_t>(Q) * 16, 0);
    auto* dp = reinterpret_cast<__m128i*>(row.data());
    const __m128i biasv = _mm_set1_epi8(static_cast<char>(bias));
    const __m128i* costs = reinterpret_cast<const __m128i*>(om.cost.data());
    int xJ = 0;
    int xB = std::max(base - tjbm, 0);
    for (int i = 0; i < L; ++i) {
        const __m128i* rsc = costs + static_cast<std::size_t>(dsq[i]) * static_cast<std::size_t>(Q);
        const __m128i xBv = _mm_set1_epi8(static_cast<char>(xB));
        __m128i xEv = _mm_setzero_si128();
        // M(i-1, k-1) for the first segment: the last segment shifted up one lane, 0 in lane 0.
        __m128i mpv = _mm_slli_si128(_mm_loadu_si128(dp + Q - 1), 1);
        for (int q = 0; q < Q; ++q) {
            __m128i sv = _mm_max_epu8(mpv, xBv);
            sv = _mm_adds_epu8(sv, biasv);
            sv = _mm_subs_epu8(sv, _mm_loadu_si128(rsc + q));
            xEv = _mm_max_epu8(xEv, sv);
            mpv = _mm_loadu_si128(dp + q);
            _mm_storeu_si128(dp + q, sv);
        }
        xEv = _mm_max_epu8(xEv, _mm_srli_si128(xEv, 8));
        xEv = _mm_max_epu8(xEv, _mm_srli_si128(xEv, 4));
        xEv = _mm_max_epu8(xEv, _mm_srli_si128(xEv, 2));
        xEv = _mm_max_epu8(xEv, _mm_srli_si128(xEv, 1));
        const int xE = _mm_cvtsi128_si32(xEv) & 0xff;
        if (xE + bias >= 255) return std::numeric_limits<float>::infinity();
        xJ = std::max(xJ, std::max(xE - tec, 0));
        xB = std::max(std::max(base, xJ) - tjbm, 0);
    }
    return msv_score_of(p, xJ, L);
#else
    return msv_filter(*om.scalar, dsq, L);
#endif
}

}  // namespace alignscope::profile
