// Striped MSV filter on the CPU: SSV first (SSE4.1 or AVX2, chosen at run
// time), the full striped SSE2 MSV where SSV cannot decide. The MSV recurrence
// per cell is max(M(i-1,k-1), B) + bias - cost, saturating at 0 and 255, with
// the row's maximum checked against 255 - bias for overflow, exactly as in
// filters.cpp.
//
// SSV decides whenever B stays constant in MSV: the J state only raises B once
// some row's E - tec passes base, so if the largest cell E of the whole matrix
// (computed with B constant) has E - tec <= base, MSV's xJ is max(E - tec, 0).
// If that E overflows (E + bias >= 255), so does MSV (its cells are never
// lower). SSV's signed cells (ssv_kernel.hpp) are exact while every cell is
// below B + 128: true whenever 255 - bias - B <= 128, as overflow comes first.
#include <alignscope/error.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/msv_striped.hpp>

#include <algorithm>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#define ALIGNSCOPE_X86 1
#include <immintrin.h>
#endif

namespace alignscope::profile {

#if defined(ALIGNSCOPE_X86)
namespace sse41 {
#if defined(__clang__)  // clang has no GCC target pragma: the attribute on every function
#pragma clang attribute push(__attribute__((target("sse4.1"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("sse4.1")
#endif
struct Lanes {
    using V = __m128i;
    static constexpr int width = 16;
    static V load(const std::int8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
    static void store(std::int8_t* p, V v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
    static V adds(V a, V b) { return _mm_adds_epi8(a, b); }
    static V max(V a, V b) { return _mm_max_epi8(a, b); }
    static V floor() { return _mm_set1_epi8(-128); }
    // Lane j takes lane j - 1; lane 0 takes -128 (M(i-1, 0) is "-infinity": B).
    static V shift_in(V v) { return _mm_alignr_epi8(v, floor(), 15); }
    // The largest lane plus 128, 0..255 (unsigned bytes from here on).
    static int top_of(V v) {
        v = _mm_xor_si128(v, floor());
        v = _mm_max_epu8(v, _mm_srli_si128(v, 8));
        v = _mm_max_epu8(v, _mm_srli_si128(v, 4));
        v = _mm_max_epu8(v, _mm_srli_si128(v, 2));
        v = _mm_max_epu8(v, _mm_srli_si128(v, 1));
        return _mm_cvtsi128_si32(v) & 0xff;
    }
};
#include "ssv_kernel.hpp"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
}  // namespace sse41

namespace avx2 {
#if defined(__clang__)  // clang has no GCC target pragma: the attribute on every function
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif
struct Lanes {
    using V = __m256i;
    static constexpr int width = 32;
    static V load(const std::int8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static void store(std::int8_t* p, V v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
    static V adds(V a, V b) { return _mm256_adds_epi8(a, b); }
    static V max(V a, V b) { return _mm256_max_epi8(a, b); }
    static V floor() { return _mm256_set1_epi8(-128); }
    // Across the two 128-bit halves: the low half's last byte moves into the
    // high half's first (permute, then a byte align within each half).
    static V shift_in(V v) {
        const V carry = _mm256_permute2x128_si256(v, floor(), 0x02);
        return _mm256_alignr_epi8(v, carry, 15);
    }
    static int top_of(V v) {
        __m128i h = _mm_max_epi8(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        h = _mm_xor_si128(h, _mm_set1_epi8(-128));
        h = _mm_max_epu8(h, _mm_srli_si128(h, 8));
        h = _mm_max_epu8(h, _mm_srli_si128(h, 4));
        h = _mm_max_epu8(h, _mm_srli_si128(h, 2));
        h = _mm_max_epu8(h, _mm_srli_si128(h, 1));
        return _mm_cvtsi128_si32(h) & 0xff;
    }
};
#include "ssv_kernel.hpp"
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
}  // namespace avx2
#endif

std::string_view to_string(SimdLevel level) {
    switch (level) {
        case SimdLevel::Scalar: return "scalar";
        case SimdLevel::Sse2: return "SSE2";
        case SimdLevel::Sse41: return "SSE4.1";
        case SimdLevel::Avx2: return "AVX2";
    }
    return "unknown";
}

std::vector<SimdLevel> supported_simd_levels() {
    std::vector<SimdLevel> levels{SimdLevel::Scalar};
#if defined(ALIGNSCOPE_X86) && defined(__SSE2__)
    levels.push_back(SimdLevel::Sse2);
    // libgcc's check includes the operating system's saving of the AVX state.
    if (__builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("ssse3")) levels.push_back(SimdLevel::Sse41);
    if (__builtin_cpu_supports("avx2")) levels.push_back(SimdLevel::Avx2);
#endif
    return levels;
}

SimdLevel best_simd_level() {
    static const SimdLevel best = supported_simd_levels().back();
    return best;
}

StripedMsvProfile make_striped_msv_profile(const MsvProfile& profile) {
    return make_striped_msv_profile(profile, best_simd_level());
}

StripedMsvProfile make_striped_msv_profile(const MsvProfile& profile, SimdLevel level) {
    const auto levels = supported_simd_levels();
    if (std::find(levels.begin(), levels.end(), level) == levels.end())
        throw Error("MSV filter: this CPU has no " + std::string(to_string(level)));
    StripedMsvProfile om;
    om.scalar = &profile;
    om.level = level;
    const int M = profile.length;
    om.segments = std::max(2, (M - 1) / 16 + 1);
    const int Q = om.segments;
    om.cost.assign(static_cast<std::size_t>(profile.codes * Q * 16), 255);
    for (int x = 0; x < profile.codes; ++x)
        for (int k = 1; k <= M; ++k) {
            const int q = (k - 1) % Q, lane = (k - 1) / Q;
            om.cost[static_cast<std::size_t>((x * Q + q) * 16 + lane)] = profile.costs_of(x)[k - 1];
        }
    if ((level == SimdLevel::Sse41 || level == SimdLevel::Avx2) && profile.bias <= 127 && M > 0) {
        const int W = level == SimdLevel::Avx2 ? 32 : 16;
        const int S = (M - 1) / W + 1;
        om.ssv_width = W;
        om.ssv_segments = S;
        om.ssv_score.assign(static_cast<std::size_t>(profile.codes * S * W), static_cast<std::int8_t>(-128));
        for (int x = 0; x < profile.codes; ++x)
            for (int k = 1; k <= M; ++k) {
                const int q = (k - 1) % S, lane = (k - 1) / S;
                const int score = std::max(profile.bias - profile.costs_of(x)[k - 1], -128);
                om.ssv_score[static_cast<std::size_t>((x * S + q) * W + lane)] = static_cast<std::int8_t>(score);
            }
    }
    return om;
}

namespace {

constexpr float kOverflow = std::numeric_limits<float>::infinity();

// The full MSV, B raised by J row by row: SSE2, sixteen nodes per register.
float msv_full(const StripedMsvProfile& om, const std::uint8_t* dsq, int L) {
#if defined(ALIGNSCOPE_X86) && defined(__SSE2__)
    const MsvProfile& p = *om.scalar;
    const int Q = om.segments;
    const int tjb = p.tjb(L);
    const int tjbm = (tjb + p.tbm) & 0xff;
    const int base = p.base, bias = p.bias, tec = p.tec;
    thread_local std::vector<std::uint8_t> row;
    row.assign(static_cast<std::size_t>(Q) * 16, 0);
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
        if (xE + bias >= 255) return kOverflow;
        xJ = std::max(xJ, std::max(xE - tec, 0));
        xB = std::max(std::max(base, xJ) - tjbm, 0);
    }
    return msv_score_of(p, xJ, L);
#else
    return msv_filter(*om.scalar, dsq, L);
#endif
}

// SSV's largest cell minus B (0..255), or -1 where this build has no SSV.
int ssv_top(const StripedMsvProfile& om, const std::uint8_t* dsq, int L) {
#if defined(ALIGNSCOPE_X86)
    if (om.level == SimdLevel::Avx2) return avx2::ssv_top(om.ssv_score.data(), om.ssv_segments, dsq, L);
    if (om.level == SimdLevel::Sse41) return sse41::ssv_top(om.ssv_score.data(), om.ssv_segments, dsq, L);
#else
    (void)om, (void)dsq, (void)L;
#endif
    return -1;
}

}  // namespace

float msv_filter_striped(const StripedMsvProfile& om, const std::uint8_t* dsq, int L, bool* by_ssv) {
    if (by_ssv) *by_ssv = false;
    if (om.level == SimdLevel::Scalar) return msv_filter(*om.scalar, dsq, L);
    if (!om.ssv_score.empty() && L > 0) {
        const MsvProfile& p = *om.scalar;
        const int tjbm = (p.tjb(L) + p.tbm) & 0xff;
        const int xB = std::max(p.base - tjbm, 0);
        const int overflow = 255 - p.bias - xB;  // a cell this far above B overflows
        if (overflow >= 1 && overflow <= 128) {
            const int top = ssv_top(om, dsq, L);
            // top == 0: every cell sat at B or below it, where SSV's cells
            // are clamped and MSV's are not: the exact E is unknown.
            const int E = xB + top;
            if (top >= overflow || (top > 0 && E - p.tec <= p.base)) {
                if (by_ssv) *by_ssv = true;
                return top >= overflow ? kOverflow : msv_score_of(p, std::max(E - p.tec, 0), L);
            }
        }
    }
    return msv_full(om, dsq, L);
}

}  // namespace alignscope::profile
