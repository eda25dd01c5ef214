// The parser Backward of one target (multihit, what the domain stage reads
// beside the Forward) as four lanes of HMMER's striped layout, written once
// for the GPU kernel (one thread a lane, four threads a target:
// backward_kernel.cu) and for a CPU emulation (the four lanes in one thread)
// that tests check against the engine's backward() bit for bit. Each lane
// does the float products and sums of forward_backward.cpp in the same order,
// each rounded alone (no fused multiply-add), subnormals flushed as under
// SSE's FTZ/DAZ; rows are divided by the Forward's scale factors.
#pragma once

#include "forward_lanes.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace alignscope::kernels::profile {

// The GPU kernel's name on the timeline (the kernel grammar): Plan7's gaps,
// the parser Backward ("bwdparser") four threads a target, 32-bit float cells.
inline constexpr const char* kBackwardKernelName = "sw_affine_bwdparser4_s32";

struct BackwardTargetView {
    const std::uint8_t* dsq = nullptr;
    int L = 0;
    float loop = 0, move = 0;       // the target's LengthModel (multihit)
    const float* scales = nullptr;  // the Forward's scale factor of rows 0..L (DpMatrix::Scale)
    float* specials = nullptr;      // rows 0..L, kForwardSpecials floats each (E N J B C Scale; may be null)
};

// Backward's score is backward_score_of(xN, total_scale, L) (the engine's);
// xN is row 0's N.
struct BackwardOutcome {
    float xN = 0, total_scale = 0;
};

// Backward's specials carried from row to row.
struct BackwardLaneCarry {
    float xE = 0, xN = 0, xJ = 0, xB = 0, xC = 0, total_scale = 0;
};

// The D->D paths of a Backward row (after M->E and D->E are in: add_end),
// all four passes, then M->D, as the engine's backward_deletes(). `first`
// is what enters the last segment from segment 0. Loads are made a step
// ahead of the chains that need them (segment q-1's before q's stores).
template <class Lanes>
ALIGNSCOPE_LANES_FN void backward_lane_deletes(Lanes& g, const ForwardModelView& m, typename Lanes::V first,
                                               typename Lanes::V xEv, bool add_end) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* dd = m.striped + static_cast<std::size_t>(kFwdDD * Q * 4);
    const float* md = m.striped + static_cast<std::size_t>(kFwdMD * Q * 4);
    V dpv = first, dcv = g.zero();
    V d_next = g.get(kRowD, Q - 1), m_next = g.get(kRowM, Q - 1), t_next = g.seg(dd + (Q - 1) * 4);
    for (int q = Q - 1; q >= 0; --q) {
        const V d_old = d_next, m_old = m_next, t = t_next;
        if (q > 0) d_next = g.get(kRowD, q - 1), m_next = g.get(kRowM, q - 1), t_next = g.seg(dd + (q - 1) * 4);
        dcv = g.mul(dpv, t);
        if (add_end) {
            dpv = g.add(d_old, g.add(dcv, xEv));
            g.put(kRowM, q, g.add(m_old, xEv));
        } else {
            dpv = g.add(d_old, dcv);
        }
        g.put(kRowD, q, dpv);
    }
    for (int j = 1; j < 4; ++j) {
        dcv = g.shift_down(dcv);
        d_next = g.get(kRowD, Q - 1), t_next = g.seg(dd + (Q - 1) * 4);
        for (int q = Q - 1; q >= 0; --q) {
            const V d_old = d_next, t = t_next;
            if (q > 0) d_next = g.get(kRowD, q - 1), t_next = g.seg(dd + (q - 1) * 4);
            dcv = g.mul(dcv, t);
            g.put(kRowD, q, g.add(d_old, dcv));
        }
    }
    dcv = g.shift_down(g.get(kRowD, 0));
    d_next = g.get(kRowD, Q - 1), m_next = g.get(kRowM, Q - 1), t_next = g.seg(md + (Q - 1) * 4);
    for (int q = Q - 1; q >= 0; --q) {
        const V d = d_next, m_old = m_next, t = t_next;
        if (q > 0) d_next = g.get(kRowD, q - 1), m_next = g.get(kRowM, q - 1), t_next = g.seg(md + (q - 1) * 4);
        g.put(kRowM, q, g.add(m_old, g.mul(dcv, t)));
        dcv = d;
    }
}

// Row i's division by the Forward's scale factor of the row (backward_scale()
// of the engine), then the row's specials out; the cells are multiplied by
// the returned factor (1: not rescaled).
template <class Lanes>
ALIGNSCOPE_LANES_FN float backward_lane_rescale(const Lanes& g, const BackwardTargetView& t, BackwardLaneCarry& x,
                                                int i) {
    const float s = g.broadcast(t.scales + i);
    float factor = 1.0f;
    if (s > 1.0f) {
        x.xE = g.fdiv(x.xE, s);
        x.xN = g.fdiv(x.xN, s);
        x.xC = g.fdiv(x.xC, s);
        x.xJ = g.fdiv(x.xJ, s);
        x.xB = g.fdiv(x.xB, s);
        x.total_scale = g.fadd(x.total_scale, static_cast<float>(log(static_cast<double>(s))));
        factor = static_cast<float>(1.0 / static_cast<double>(s));
    }
    if (t.specials && g.lead()) {
        float* row = t.specials + static_cast<std::size_t>(i) * kForwardSpecials;
        row[0] = x.xE, row[1] = x.xN, row[2] = x.xJ, row[3] = x.xB, row[4] = x.xC, row[5] = s;
    }
    return factor;
}

template <class Lanes>
ALIGNSCOPE_LANES_FN void backward_lane_scale_row(Lanes& g, int Q, float factor) {
    if (factor == 1.0f) return;
    const typename Lanes::V f = g.splat(factor);
    for (int q = 0; q < Q; ++q) {
        g.put(kRowM, q, g.mul(g.get(kRowM, q), f));
        g.put(kRowD, q, g.mul(g.get(kRowD, q), f));
        g.put(kRowI, q, g.mul(g.get(kRowI, q), f));
    }
}

// Row i (1 <= i < L) from row i+1, in place in the one row the lanes keep
// (row i+1's M and I are read a segment ahead of row i's stores; its D is
// not read). The specials as backward_specials() of the engine.
template <class Lanes>
ALIGNSCOPE_LANES_FN void backward_lane_row(Lanes& g, const ForwardModelView& m, const BackwardTargetView& t,
                                           BackwardLaneCarry& x, int i) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* base = m.striped;
    auto array = [base, Q](int a) { return base + static_cast<std::size_t>(a * Q * 4); };
    const float *bm = array(kFwdBM), *mm = array(kFwdMM), *im = array(kFwdIM), *dm = array(kFwdDM);
    const float *mi = array(kFwdMI), *ii = array(kFwdII);
    const float* e = array(kFwdMatch + t.dsq[i]);  // residue i+1's emissions
    V tmmv = g.shift_down(g.seg(mm)), timv = g.shift_down(g.seg(im)), tdmv = g.shift_down(g.seg(dm));
    V mpv = g.shift_down(g.mul(g.get(kRowM, 0), g.seg(e)));
    V xBv = g.zero();
    V i_next = g.get(kRowI, Q - 1), m_next = g.get(kRowM, Q - 1);
    for (int q = Q - 1; q >= 0; --q) {
        const int s = q * 4;
        const V tii = g.seg(ii + s), tmi = g.seg(mi + s), es = g.seg(e + s), tbm = g.seg(bm + s);
        const V ipv = i_next, m_old = m_next;
        if (q > 0) i_next = g.get(kRowI, q - 1), m_next = g.get(kRowM, q - 1);
        g.put(kRowI, q, g.add(g.mul(ipv, tii), g.mul(mpv, timv)));
        g.put(kRowD, q, g.mul(mpv, tdmv));
        const V mcv = g.add(g.mul(ipv, tmi), g.mul(mpv, tmmv));
        mpv = g.mul(m_old, es);
        g.put(kRowM, q, mcv);
        tdmv = g.seg(dm + s);
        timv = g.seg(im + s);
        tmmv = g.seg(mm + s);
        xBv = g.add(xBv, g.mul(mpv, tbm));
    }
    x.xB = g.sum(xBv);
    x.xC = g.fmul(x.xC, t.loop);
    x.xJ = g.fadd(g.fmul(x.xB, t.move), g.fmul(x.xJ, t.loop));
    x.xN = g.fadd(g.fmul(x.xB, t.move), g.fmul(x.xN, t.loop));
    x.xE = g.fadd(g.fmul(x.xC, m.e_move), g.fmul(x.xJ, m.e_loop));
    const V xEv = g.splat(x.xE);
    backward_lane_deletes(g, m, g.shift_down(g.add(g.get(kRowD, 0), xEv)), xEv, true);
}

// The whole parser Backward of one target, rows L down to 0: xN (row 0's N)
// and the total of the log scale factors. Row 0 gets N and B only, as in
// the engine; an empty target (L = 0) writes no row.
template <class Lanes>
ALIGNSCOPE_LANES_FN BackwardOutcome backward_lanes(Lanes& g, const ForwardModelView& m, const BackwardTargetView& t) {
    using V = typename Lanes::V;
    const int Q = m.Q, L = t.L;
    BackwardLaneCarry x;
    x.xC = t.move;
    x.xE = g.fmul(x.xC, m.e_move);
    if (L == 0) return {x.xN, x.total_scale};
    // Row L: every M and D reaches E; I does not.
    const V xEv = g.splat(x.xE);
    for (int q = 0; q < Q; ++q) g.put(kRowM, q, xEv), g.put(kRowD, q, xEv), g.put(kRowI, q, g.zero());
    backward_lane_deletes(g, m, g.shift_down(g.get(kRowD, Q - 1)), g.zero(), false);
    backward_lane_scale_row(g, Q, backward_lane_rescale(g, t, x, L));
    for (int i = L - 1; i >= 1; --i) {
        backward_lane_row(g, m, t, x, i);
        backward_lane_scale_row(g, Q, backward_lane_rescale(g, t, x, i));
    }
    // Row 0: N and B from row 1.
    const float* bm = m.striped + static_cast<std::size_t>(kFwdBM * Q * 4);
    const float* e = m.striped + static_cast<std::size_t>((kFwdMatch + t.dsq[0]) * Q * 4);
    V xBv = g.zero();
    for (int q = 0; q < Q; ++q) xBv = g.add(xBv, g.mul(g.mul(g.get(kRowM, q), g.seg(e + q * 4)), g.seg(bm + q * 4)));
    x.xB = g.sum(xBv);
    x.xN = g.fadd(g.fmul(x.xB, t.move), g.fmul(x.xN, t.loop));
    if (t.specials && g.lead()) {
        float* row = t.specials;
        row[0] = 0.0f, row[1] = x.xN, row[2] = 0.0f, row[3] = x.xB, row[4] = 0.0f, row[5] = 1.0f;
    }
    return {x.xN, x.total_scale};
}

// The CPU emulation: HostForwardLanes (one row of storage, four lanes in one
// thread) with the lanes' shift towards lane 0 and a plain read of a value
// the GPU's lead lane reads for all four. Run under FlushSubnormals to match.
struct HostBackwardLanes : HostForwardLanes {
    using HostForwardLanes::HostForwardLanes;
    static V shift_down(V a) { return {a[1], a[2], a[3], 0.0f}; }
    static float broadcast(const float* p) { return *p; }
};

}  // namespace alignscope::kernels::profile
