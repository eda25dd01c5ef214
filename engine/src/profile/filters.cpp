// MSV and Viterbi filters, scalar, in HMMER's integer units: every add and
// subtract saturates exactly where HMMER's SIMD instructions saturate, so the
// scores (and therefore the filters' decisions) are the same.
#include <alignscope/profile/filters.hpp>

#include <algorithm>
#include <cmath>

namespace alignscope::profile {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

inline int adds16(int a, int b) { return std::clamp(a + b, -32768, 32767); }

}  // namespace

float msv_score_of(const MsvProfile& om, int xJ, int L) {
    float score = static_cast<float>(xJ - om.tjb(L)) - static_cast<float>(om.base);
    score /= om.scale;
    return static_cast<float>(score - 3.0);
}

float viterbi_score_of(const ViterbiFilterProfile& om, int xC, int L) {
    if (xC <= -32768) return -kInf;
    float score = static_cast<float>(xC) + static_cast<float>(om.ncj_move(L)) - static_cast<float>(om.base);
    score /= om.scale;
    return static_cast<float>(score - 3.0);
}

float msv_filter(const MsvProfile& om, const std::uint8_t* dsq, int L) {
    const int M = om.length;
    const int tjb = om.tjb(L);
    const int tjbm = (tjb + om.tbm) & 0xff;
    const int base = om.base, bias = om.bias, tec = om.tec;
    // Two rows of M(i,k), k = 0..M, with M(i,0) = 0 ("-infinity").
    std::vector<std::uint8_t> previous(static_cast<std::size_t>(M + 1), 0), current(static_cast<std::size_t>(M + 1), 0);
    int xJ = 0;
    int xB = std::max(base - tjbm, 0);
    for (int i = 0; i < L; ++i) {
        const std::uint8_t* cost = om.costs_of(dsq[i]);
        const std::uint8_t b = static_cast<std::uint8_t>(xB);
        int xE = 0;
        for (int k = 1; k <= M; ++k) {
            int m = std::max(previous[static_cast<std::size_t>(k - 1)], b);
            m = std::min(m + bias, 255);
            m = std::max(m - cost[k - 1], 0);
            current[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(m);
            xE = std::max(xE, m);
        }
        if (xE + bias >= 255) return kInf;
        xJ = std::max(xJ, std::max(xE - tec, 0));
        xB = std::max(std::max(base, xJ) - tjbm, 0);
        std::swap(previous, current);
    }
    return msv_score_of(om, xJ, L);
}

float viterbi_filter(const ViterbiFilterProfile& om, const std::uint8_t* dsq, int L) {
    const int M = om.length;
    const std::size_t n = static_cast<std::size_t>(M + 1);
    std::vector<int> mp(n, -32768), ip(n, -32768), dp(n, -32768), mc(n, -32768), ic(n, -32768), dc(n, -32768);
    const int ncj = om.ncj_move(L);
    std::int16_t xN = om.base;
    std::int16_t xB = static_cast<std::int16_t>(xN + ncj);
    std::int16_t xJ = -32768, xC = -32768;
    for (int i = 0; i < L; ++i) {
        const std::int16_t* rsc = om.match.data() + static_cast<std::size_t>(dsq[i]) * static_cast<std::size_t>(M);
        int xE = -32768;
        for (int k = 1; k <= M; ++k) {
            const std::size_t j = static_cast<std::size_t>(k - 1);
            int sv = adds16(xB, om.bm[j]);
            sv = std::max(sv, adds16(mp[j], om.mm[j]));
            sv = std::max(sv, adds16(ip[j], om.im[j]));
            sv = std::max(sv, adds16(dp[j], om.dm[j]));
            sv = adds16(sv, rsc[j]);
            mc[j + 1] = sv;
            xE = std::max(xE, sv);
            ic[j + 1] = std::max(adds16(mp[j + 1], om.mi[j]), adds16(ip[j + 1], om.ii[j]));
        }
        dc[1] = -32768;
        for (int k = 2; k <= M; ++k) {
            const std::size_t j = static_cast<std::size_t>(k - 2);
            dc[j + 2] = std::max(adds16(mc[j + 1], om.md[j]), adds16(dc[j + 1], om.dd[j]));
        }
        if (xE >= 32767) return kInf;
        // Specials in plain int arithmetic stored to 16 bits, as HMMER does;
        // the N/C/J loops cost 0 (the -3 nats below stand for them).
        xC = static_cast<std::int16_t>(std::max<int>(xC, xE + om.e_move));
        xJ = static_cast<std::int16_t>(std::max<int>(xJ, xE + om.e_loop));
        xB = static_cast<std::int16_t>(std::max<int>(xJ + ncj, xN + ncj));
        std::swap(mp, mc);
        std::swap(ip, ic);
        std::swap(dp, dc);
    }
    return viterbi_score_of(om, xC, L);
}

}  // namespace alignscope::profile
