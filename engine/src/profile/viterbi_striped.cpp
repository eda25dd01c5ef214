// Striped SSE2 Viterbi filter (eight signed words per register), the same
// recurrence as viterbi_filter() in filters.cpp: M from B, M, I, D of the
// previous row plus the match score, I from M and I above, D along the row.
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/viterbi_striped.hpp>

#include <algorithm>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace alignscope::profile {

namespace {
enum Array { BM = 0, MM, IM, DM, MD, MI, II, DD, Transitions };
}  // namespace

StripedViterbiProfile make_striped_viterbi_profile(const ViterbiFilterProfile& profile) {
    StripedViterbiProfile om;
    om.scalar = &profile;
    const int M = profile.length;
    om.segments = std::max(2, (M - 1) / 8 + 1);
    const std::size_t width = static_cast<std::size_t>(om.segments) * 8;
    om.words.assign(width * static_cast<std::size_t>(Transitions + profile.codes), -32768);
    const std::vector<std::int16_t>* arrays[Transitions] = {&profile.bm, &profile.mm, &profile.im, &profile.dm,
                                                            &profile.md, &profile.mi, &profile.ii, &profile.dd};
    for (int k = 1; k <= M; ++k) {
        const std::size_t slot = static_cast<std::size_t>(((k - 1) % om.segments) * 8 + (k - 1) / om.segments);
        const std::size_t node = static_cast<std::size_t>(k - 1);
        for (int a = 0; a < Transitions; ++a) om.words[static_cast<std::size_t>(a) * width + slot] = (*arrays[a])[node];
        for (int x = 0; x < profile.codes; ++x)
            om.words[static_cast<std::size_t>(Transitions + x) * width + slot] =
                profile.match[static_cast<std::size_t>(x) * static_cast<std::size_t>(M) + node];
    }
    return om;
}

#if defined(__SSE2__)
namespace {

// [a0..a7] -> [-inf a0..a6]: a node's predecessor in the previous segment.
inline __m128i shift_in_neg(__m128i a) {
    return _mm_or_si128(_mm_slli_si128(a, 2), _mm_set_epi16(0, 0, 0, 0, 0, 0, 0, -32768));
}

inline int lane_max(__m128i a) {
    a = _mm_max_epi16(a, _mm_srli_si128(a, 8));
    a = _mm_max_epi16(a, _mm_srli_si128(a, 4));
    a = _mm_max_epi16(a, _mm_srli_si128(a, 2));
    return static_cast<std::int16_t>(_mm_cvtsi128_si32(a) & 0xffff);
}

// D(k) = max(M(k-1) + md(k-1), D(k-1) + dd(k-1)) along the row: dcv enters
// segment 0 (M->D of the last segment); passes repeat across lane boundaries
// while they still raise a value.
void close_deletes(__m128i* dp, __m128i dcv, const __m128i* tdd, int Q) {
    dcv = shift_in_neg(dcv);
    for (int q = 0; q < Q; ++q) {
        dp[q] = _mm_max_epi16(dcv, dp[q]);
        dcv = _mm_adds_epi16(dp[q], tdd[q]);
    }
    for (int pass = 1; pass < 8; ++pass) {
        dcv = shift_in_neg(dcv);
        int q = 0;
        for (; q < Q; ++q) {
            if (_mm_movemask_epi8(_mm_cmpgt_epi16(dcv, dp[q])) == 0) break;
            dp[q] = _mm_max_epi16(dcv, dp[q]);
            dcv = _mm_adds_epi16(dp[q], tdd[q]);
        }
        if (q < Q) break;
    }
}

}  // namespace
#endif

float viterbi_filter_striped(const StripedViterbiProfile& om, const std::uint8_t* dsq, int L) {
#if defined(__SSE2__)
    const ViterbiFilterProfile& p = *om.scalar;
    const int Q = om.segments;
    const auto* t = reinterpret_cast<const __m128i*>(om.words.data());
    auto table = [&](int a) { return t + static_cast<std::size_t>(a) * static_cast<std::size_t>(Q); };
    const __m128i *tbm = table(BM), *tmm = table(MM), *tim = table(IM), *tdm = table(DM);
    const __m128i *tmd = table(MD), *tmi = table(MI), *tii = table(II), *tdd = table(DD);
    const __m128i neg = _mm_set1_epi16(-32768);
    // Rows as 16-bit words (a vector of __m128i would drop the type's
    // alignment attribute); the allocator's 16-byte alignment suits SSE2.
    std::vector<std::int16_t> words(static_cast<std::size_t>(3 * Q) * 8);
    auto* mp = reinterpret_cast<__m128i*>(words.data());
    for (int k = 0; k < 3 * Q; ++k) _mm_store_si128(mp + k, neg);
    __m128i *ip = mp + Q, *dp = ip + Q;
    const int ncj = p.ncj_move(L);
    const int xN = p.base;
    int xB = static_cast<std::int16_t>(xN + ncj);
    int xJ = -32768, xC = -32768;
    for (int i = 0; i < L; ++i) {
        const __m128i* rsc = table(Transitions + dsq[i]);
        const __m128i xBv = _mm_set1_epi16(static_cast<short>(xB));
        __m128i mpv = shift_in_neg(mp[Q - 1]), ipv = shift_in_neg(ip[Q - 1]), dpv = shift_in_neg(dp[Q - 1]);
        __m128i xEv = neg, dcv = neg;
        for (int q = 0; q < Q; ++q) {
            __m128i sv = _mm_adds_epi16(xBv, tbm[q]);
            sv = _mm_max_epi16(sv, _mm_adds_epi16(mpv, tmm[q]));
            sv = _mm_max_epi16(sv, _mm_adds_epi16(ipv, tim[q]));
            sv = _mm_max_epi16(sv, _mm_adds_epi16(dpv, tdm[q]));
            sv = _mm_adds_epi16(sv, rsc[q]);
            xEv = _mm_max_epi16(xEv, sv);
            mpv = mp[q];
            ipv = ip[q];
            dpv = dp[q];
            mp[q] = sv;
            dp[q] = dcv;  // M->D from the previous segment (same lane)
            dcv = _mm_adds_epi16(sv, tmd[q]);
            ip[q] = _mm_max_epi16(_mm_adds_epi16(mpv, tmi[q]), _mm_adds_epi16(ipv, tii[q]));
        }
        close_deletes(dp, dcv, tdd, Q);
        const int xE = lane_max(xEv);
        if (xE >= 32767) return std::numeric_limits<float>::infinity();
        xC = static_cast<std::int16_t>(std::max(xC, xE + p.e_move));
        xJ = static_cast<std::int16_t>(std::max(xJ, xE + p.e_loop));
        xB = static_cast<std::int16_t>(std::max(xJ + ncj, xN + ncj));
    }
    return viterbi_score_of(p, xC, L);
#else
    return viterbi_filter(*om.scalar, dsq, L);
#endif
}

}  // namespace alignscope::profile
