// The SSV recurrence over one target, written once for any vector width:
// msv_striped.cpp includes this file once per instruction set, inside that
// set's namespace and target region (GCC's pragma, clang's attribute), after
// defining `Lanes` there (so no `#pragma once`: each inclusion is another
// instruction set).
//
// Cells hold w = M(i,k) - B - 128 as signed bytes, B the target's constant
// begin score: saturation at -128 is the max with B that MSV takes before each
// cell, so one saturating add of the signed score (bias - cost) and one max
// into the running maximum are the whole cell. Valid while every cell stays
// below B + 128 (the caller checks that overflow comes first).

// The largest M(i,k) - B over every cell, 0..255, with the row held in
// registers (Q known at compile time).
template <int Q>
int ssv_top_fixed(const std::int8_t* score, const std::uint8_t* dsq, int L) {
    using V = typename Lanes::V;
    constexpr int W = Lanes::width;
    V dp[Q];
    const V floor = Lanes::floor();
#pragma GCC unroll 16
    for (int q = 0; q < Q; ++q) dp[q] = floor;
    V top = floor;
    for (int i = 0; i < L; ++i) {
        const std::int8_t* s = score + static_cast<std::size_t>(dsq[i]) * (Q * W);
        V prev = Lanes::shift_in(dp[Q - 1]);
#pragma GCC unroll 16
        for (int q = 0; q < Q; ++q) {
            const V sv = Lanes::adds(prev, Lanes::load(s + q * W));
            top = Lanes::max(top, sv);
            prev = dp[q];
            dp[q] = sv;
        }
    }
    return Lanes::top_of(top);
}

// The same for any number of segments, the row in memory.
inline int ssv_top_any(const std::int8_t* score, int Q, const std::uint8_t* dsq, int L) {
    using V = typename Lanes::V;
    constexpr int W = Lanes::width;
    thread_local std::vector<std::int8_t> row;
    row.assign(static_cast<std::size_t>(Q) * W, static_cast<std::int8_t>(-128));
    std::int8_t* dp = row.data();
    V top = Lanes::floor();
    for (int i = 0; i < L; ++i) {
        const std::int8_t* s = score + static_cast<std::size_t>(dsq[i]) * static_cast<std::size_t>(Q * W);
        V prev = Lanes::shift_in(Lanes::load(dp + (Q - 1) * W));
        for (int q = 0; q < Q; ++q) {
            const V sv = Lanes::adds(prev, Lanes::load(s + q * W));
            top = Lanes::max(top, sv);
            prev = Lanes::load(dp + q * W);
            Lanes::store(dp + q * W, sv);
        }
    }
    return Lanes::top_of(top);
}

inline int ssv_top(const std::int8_t* score, int Q, const std::uint8_t* dsq, int L) {
    switch (Q) {
        case 1: return ssv_top_fixed<1>(score, dsq, L);
        case 2: return ssv_top_fixed<2>(score, dsq, L);
        case 3: return ssv_top_fixed<3>(score, dsq, L);
        case 4: return ssv_top_fixed<4>(score, dsq, L);
        case 5: return ssv_top_fixed<5>(score, dsq, L);
        case 6: return ssv_top_fixed<6>(score, dsq, L);
        case 7: return ssv_top_fixed<7>(score, dsq, L);
        case 8: return ssv_top_fixed<8>(score, dsq, L);
        case 9: return ssv_top_fixed<9>(score, dsq, L);
        case 10: return ssv_top_fixed<10>(score, dsq, L);
        case 11: return ssv_top_fixed<11>(score, dsq, L);
        case 12: return ssv_top_fixed<12>(score, dsq, L);
        default: return ssv_top_any(score, Q, dsq, L);
    }
}
