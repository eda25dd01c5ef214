// The parser Forward of one target (the pipeline's Fwd filter) as four lanes
// of HMMER's striped layout, written once for the GPU kernel (one thread a
// lane, four threads a target: forward_kernel.cu) and for a CPU emulation
// (the four lanes in one thread) that tests check against the engine's
// forward() bit for bit. Each lane does the float products and sums of
// forward_backward.cpp in the same order, each rounded alone (no fused
// multiply-add), subnormals flushed as under SSE's FTZ/DAZ.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define ALIGNSCOPE_LANES_FN __host__ __device__ __forceinline__
#else
#define ALIGNSCOPE_LANES_FN inline
#endif

namespace alignscope::kernels::profile {

// ForwardProfile::striped's arrays, in its order; match emissions of code x
// at kFwdMatch + x.
enum ForwardArray { kFwdBM = 0, kFwdMM, kFwdIM, kFwdDM, kFwdMD, kFwdMI, kFwdII, kFwdDD, kFwdMatch };
// A row's special states, in DpMatrix::Special's order: E N J B C Scale.
inline constexpr int kForwardSpecials = 6;
// The row storage's arrays (one row, updated in place).
enum ForwardRow { kRowM = 0, kRowI, kRowD };

struct ForwardModelView {
    const float* striped = nullptr;  // ForwardProfile::striped
    int Q = 0, M = 0;
    float e_loop = 0, e_move = 0;
};

struct ForwardTargetView {
    const std::uint8_t* dsq = nullptr;
    int L = 0;
    float loop = 0, move = 0;   // the target's LengthModel
    float* specials = nullptr;  // rows 0..L, kForwardSpecials floats each (may be null)
};

struct ForwardOutcome {
    float xC = 0, total_scale = 0;
};

// A row's scale factor as its specials keep it (1: not rescaled), and the
// factor its cells are multiplied by (1: not rescaled).
struct LaneRowScale {
    float scale = 1.0f, factor = 1.0f;
};

// One row's special states from the row's E, as the engine's
// forward_specials(): N, C, J, B, then, where E passes 1e4, all four divided
// by it, its log added to total_scale and E set to 1. The Forward of a
// target and of an envelope (envelope_lanes.hpp) both step through this.
template <class Lanes>
ALIGNSCOPE_LANES_FN LaneRowScale forward_special_step(const Lanes& g, const ForwardModelView& m, float loop, float move,
                                                      float& xE, float& xN, float& xJ, float& xB, float& xC,
                                                      float& total_scale) {
    xN = g.fmul(xN, loop);
    xC = g.fadd(g.fmul(xC, loop), g.fmul(xE, m.e_move));
    xJ = g.fadd(g.fmul(xJ, loop), g.fmul(xE, m.e_loop));
    xB = g.fadd(g.fmul(xJ, move), g.fmul(xN, move));
    LaneRowScale r;
    if (xE > 1.0e4f) {
        xN = g.fdiv(xN, xE);
        xC = g.fdiv(xC, xE);
        xJ = g.fdiv(xJ, xE);
        xB = g.fdiv(xB, xE);
        r.factor = static_cast<float>(1.0 / static_cast<double>(xE));
        r.scale = xE;
        total_scale = g.fadd(total_scale, static_cast<float>(log(static_cast<double>(xE))));
        xE = 1.0f;
    }
    return r;
}

// Row i's specials from the row's E (forward_special_step()), stored where
// the target keeps them; returns the factor the row's cells are multiplied
// by (1: not rescaled).
template <class Lanes>
ALIGNSCOPE_LANES_FN float forward_lane_specials(const Lanes& g, const ForwardModelView& m, const ForwardTargetView& t,
                                                float xE, float& xN, float& xJ, float& xB, float& xC,
                                                float& total_scale, int i) {
    const LaneRowScale r = forward_special_step(g, m, t.loop, t.move, xE, xN, xJ, xB, xC, total_scale);
    if (t.specials && g.lead()) {
        float* row = t.specials + static_cast<std::size_t>(i) * kForwardSpecials;
        row[0] = xE, row[1] = xN, row[2] = xJ, row[3] = xB, row[4] = xC, row[5] = r.scale;
    }
    return r.factor;
}

// The lanes' row (M, D, I) multiplied by a scale factor: nothing when it is 1.
template <class Lanes>
ALIGNSCOPE_LANES_FN void scale_lane_row(Lanes& g, int Q, float factor) {
    if (factor == 1.0f) return;
    const typename Lanes::V f = g.splat(factor);
    for (int q = 0; q < Q; ++q) {
        g.put(kRowM, q, g.mul(g.get(kRowM, q), f));
        g.put(kRowD, q, g.mul(g.get(kRowD, q), f));
        g.put(kRowI, q, g.mul(g.get(kRowI, q), f));
    }
}

// Forward's D->D paths of the row: one full pass, up to three more across
// lane boundaries (stopping early on models of 100 nodes or more once a pass
// changes nothing, as HMMER does).
template <class Lanes>
ALIGNSCOPE_LANES_FN void forward_lane_deletes(Lanes& g, const ForwardModelView& m, typename Lanes::V dcv) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* dd = m.striped + static_cast<std::size_t>(kFwdDD * Q * 4);
    // Each cell and transition is read a step ahead of the chain that needs
    // it (the loads do not wait for the chain's stores).
    dcv = g.shift_up(dcv);
    g.put(kRowD, 0, g.zero());
    V next = g.zero(), t_next = g.seg(dd);
    for (int q = 0; q < Q; ++q) {
        const V old = next, t = t_next;
        if (q + 1 < Q) next = g.get(kRowD, q + 1), t_next = g.seg(dd + (q + 1) * 4);
        const V sum = g.add(dcv, old);
        g.put(kRowD, q, sum);
        dcv = g.mul(sum, t);
    }
    for (int j = 1; j < 4; ++j) {
        dcv = g.shift_up(dcv);
        typename Lanes::Flag changed{};
        next = g.get(kRowD, 0), t_next = g.seg(dd);
        for (int q = 0; q < Q; ++q) {
            const V old = next, t = t_next;
            if (q + 1 < Q) next = g.get(kRowD, q + 1), t_next = g.seg(dd + (q + 1) * 4);
            const V sum = g.add(dcv, old);
            g.note_greater(changed, sum, old);
            g.put(kRowD, q, sum);
            dcv = g.mul(dcv, t);
        }
        if (m.M >= 100 && !g.any(changed)) break;
    }
}

// The whole parser Forward of one target: xC and the total of the log scale
// factors; the score is forward_score_of() of them (the engine's).
template <class Lanes>
ALIGNSCOPE_LANES_FN ForwardOutcome forward_lanes(Lanes& g, const ForwardModelView& m, const ForwardTargetView& t) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* base = m.striped;
    auto array = [base, Q](int a) { return base + static_cast<std::size_t>(a * Q * 4); };
    const float *bm = array(kFwdBM), *mm = array(kFwdMM), *im = array(kFwdIM), *dm = array(kFwdDM);
    const float *md = array(kFwdMD), *mi = array(kFwdMI), *ii = array(kFwdII);
    for (int q = 0; q < Q; ++q) g.put(kRowM, q, g.zero()), g.put(kRowI, q, g.zero()), g.put(kRowD, q, g.zero());
    float xN = 1.0f, xJ = 0.0f, xB = t.move, xC = 0.0f, total_scale = 0.0f;
    if (t.specials && g.lead()) {
        float* row = t.specials;
        row[0] = 0.0f, row[1] = xN, row[2] = xJ, row[3] = xB, row[4] = xC, row[5] = 1.0f;
    }
    for (int i = 1; i <= t.L; ++i) {
        const float* emission = array(kFwdMatch + t.dsq[i - 1]);
        const V xBv = g.splat(xB);
        V dcv = g.zero(), xEv = g.zero();
        V mpv = g.shift_up(g.get(kRowM, Q - 1));
        V dpv = g.shift_up(g.get(kRowD, Q - 1));
        V ipv = g.shift_up(g.get(kRowI, Q - 1));
        // Row q's cells of the previous row, read before any of this
        // iteration's stores and a step ahead.
        V m_next = g.get(kRowM, 0), d_next = g.get(kRowD, 0), i_next = g.get(kRowI, 0);
        for (int q = 0; q < Q; ++q) {
            const int s = q * 4;
            const V tbm = g.seg(bm + s), tmm = g.seg(mm + s), tim = g.seg(im + s), tdm = g.seg(dm + s);
            const V e = g.seg(emission + s), tmd = g.seg(md + s), tmi = g.seg(mi + s), tii = g.seg(ii + s);
            const V m_old = m_next, d_old = d_next, i_old = i_next;
            if (q + 1 < Q) m_next = g.get(kRowM, q + 1), d_next = g.get(kRowD, q + 1), i_next = g.get(kRowI, q + 1);
            V sv = g.mul(xBv, tbm);
            sv = g.add(sv, g.mul(mpv, tmm));
            sv = g.add(sv, g.mul(ipv, tim));
            sv = g.add(sv, g.mul(dpv, tdm));
            sv = g.mul(sv, e);
            xEv = g.add(xEv, sv);
            mpv = m_old;
            dpv = d_old;
            ipv = i_old;
            g.put(kRowM, q, sv);
            g.put(kRowD, q, dcv);
            dcv = g.mul(sv, tmd);
            g.put(kRowI, q, g.add(g.mul(mpv, tmi), g.mul(ipv, tii)));
        }
        forward_lane_deletes(g, m, dcv);
        for (int q = 0; q < Q; ++q) xEv = g.add(g.get(kRowD, q), xEv);
        const float xE = g.sum(xEv);
        scale_lane_row(g, Q, forward_lane_specials(g, m, t, xE, xN, xJ, xB, xC, total_scale, i));
    }
    return {xC, total_scale};
}

// The CPU emulation of a target's four lanes (the GPU kernels' FourLanes):
// the four as an array in one thread, its arithmetic and shifts; the lead
// lane's reads are plain reads. Plain float operations: run under
// FlushSubnormals to match.
struct HostFourLanes {
    using V = std::array<float, 4>;
    using Flag = bool;

    static V zero() { return {0.0f, 0.0f, 0.0f, 0.0f}; }
    static V splat(float x) { return {x, x, x, x}; }
    static V add(V a, V b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]}; }
    static V mul(V a, V b) { return {a[0] * b[0], a[1] * b[1], a[2] * b[2], a[3] * b[3]}; }
    static V seg(const float* p) { return {p[0], p[1], p[2], p[3]}; }
    static V shift_up(V a) { return {0.0f, a[0], a[1], a[2]}; }
    static V shift_down(V a) { return {a[1], a[2], a[3], 0.0f}; }
    static float sum(V a) { return (a[0] + a[1]) + (a[2] + a[3]); }
    static void note_greater(Flag& f, V a, V b) {
        for (int z = 0; z < 4; ++z) f = f || a[static_cast<std::size_t>(z)] > b[static_cast<std::size_t>(z)];
    }
    static bool any(Flag f) { return f; }
    static float fadd(float a, float b) { return a + b; }
    static float fmul(float a, float b) { return a * b; }
    static float fdiv(float a, float b) { return a / b; }
    static float broadcast(const float* p) { return *p; }
    static bool lead() { return true; }
};

// The CPU emulation of the Forward filter's lanes: one row of storage.
struct HostForwardLanes : HostFourLanes {
    int Q = 0;
    std::vector<float> rows;  // [(array * Q + q) * 4 + lane]
    explicit HostForwardLanes(int segments) : Q(segments), rows(static_cast<std::size_t>(segments) * 12) {}

    V get(int a, int q) const { return seg(rows.data() + static_cast<std::size_t>((a * Q + q) * 4)); }
    void put(int a, int q, V v) {
        float* p = rows.data() + static_cast<std::size_t>((a * Q + q) * 4);
        p[0] = v[0], p[1] = v[1], p[2] = v[2], p[3] = v[3];
    }
};

}  // namespace alignscope::kernels::profile
