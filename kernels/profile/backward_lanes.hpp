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
// How many segments ahead the kernel's loops load (backward_lanes<Ahead>).
inline constexpr int kBackwardAhead = 3;

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
    // An envelope's: 1 where B passed 1e16 (envelope_backward()). An int, so
    // that the struct has no padding: tests compare outcomes byte for byte.
    int own_scales = 0;
};

// Backward's specials carried from row to row.
struct BackwardLaneCarry {
    float xE = 0, xN = 0, xJ = 0, xB = 0, xC = 0, total_scale = 0;
};

// The values of segments q-1 .. q-A of an array, loaded before a loop's
// segment q is stored (the loops go from segment Q-1 down to 0 and store only
// segment q at step q, so loads may run A steps ahead of the chains that need
// them: A = Ahead hides more load latency in registers).
template <class V, int A>
struct Lookahead {
    V v[A];
    // Segments from, from-1, ..., from-A+1 (zero below segment 0).
    template <class Load>
    ALIGNSCOPE_LANES_FN void fill(int from, const Load& load, V zero) {
        for (int k = 0; k < A; ++k) v[k] = from - k >= 0 ? load(from - k) : zero;
    }
    // Segment q's value; segment q-A's is loaded in its place.
    template <class Load>
    ALIGNSCOPE_LANES_FN V next(int q, const Load& load, V zero) {
        const V out = v[0];
        for (int k = 0; k + 1 < A; ++k) v[k] = v[k + 1];
        v[A - 1] = q - A >= 0 ? load(q - A) : zero;
        return out;
    }
};

// The D->D paths of a Backward row (after M->E and D->E are in: add_end),
// all four passes, then M->D, as the engine's backward_deletes(). `first`
// is what enters the last segment from segment 0.
template <int Ahead, class Lanes>
ALIGNSCOPE_LANES_FN void backward_lane_deletes(Lanes& g, const ForwardModelView& m, typename Lanes::V first,
                                               typename Lanes::V xEv, bool add_end) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* dd = m.striped + static_cast<std::size_t>(kFwdDD * Q * 4);
    const float* md = m.striped + static_cast<std::size_t>(kFwdMD * Q * 4);
    const auto row_d = [&g](int q) { return g.get(kRowD, q); };
    const auto row_m = [&g](int q) { return g.get(kRowM, q); };
    const auto t_dd = [&g, dd](int q) { return g.seg(dd + q * 4); };
    const auto t_md = [&g, md](int q) { return g.seg(md + q * 4); };
    const V zero = g.zero();
    Lookahead<V, Ahead> d, mm, t;
    V dpv = first, dcv = zero;
    d.fill(Q - 1, row_d, zero), mm.fill(Q - 1, row_m, zero), t.fill(Q - 1, t_dd, zero);
    for (int q = Q - 1; q >= 0; --q) {
        const V d_old = d.next(q, row_d, zero), m_old = mm.next(q, row_m, zero), tq = t.next(q, t_dd, zero);
        dcv = g.mul(dpv, tq);
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
        d.fill(Q - 1, row_d, zero), t.fill(Q - 1, t_dd, zero);
        for (int q = Q - 1; q >= 0; --q) {
            const V d_old = d.next(q, row_d, zero), tq = t.next(q, t_dd, zero);
            dcv = g.mul(dcv, tq);
            g.put(kRowD, q, g.add(d_old, dcv));
        }
    }
    dcv = g.shift_down(g.get(kRowD, 0));
    d.fill(Q - 1, row_d, zero), mm.fill(Q - 1, row_m, zero), t.fill(Q - 1, t_md, zero);
    for (int q = Q - 1; q >= 0; --q) {
        const V dq = d.next(q, row_d, zero), m_old = mm.next(q, row_m, zero), tq = t.next(q, t_md, zero);
        g.put(kRowM, q, g.add(m_old, g.mul(dcv, tq)));
        dcv = dq;
    }
}

// A row's division by the Forward's scale factor s of the row, as the
// engine's backward_scale(): where s > 1 every special divided by it and its
// log added to total_scale; returns the factor the cells are multiplied by
// (1: not rescaled). The Backward of a target and of an envelope
// (envelope_lanes.hpp) both step through this.
template <class Lanes>
ALIGNSCOPE_LANES_FN float backward_scale_step(const Lanes& g, float s, BackwardLaneCarry& x) {
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
    return factor;
}

// A row's specials from its B sum (x.xB), as the engine's
// backward_specials(): C, J, N, then E.
template <class Lanes>
ALIGNSCOPE_LANES_FN void backward_special_step(const Lanes& g, const ForwardModelView& m, float loop, float move,
                                               BackwardLaneCarry& x) {
    x.xC = g.fmul(x.xC, loop);
    x.xJ = g.fadd(g.fmul(x.xB, move), g.fmul(x.xJ, loop));
    x.xN = g.fadd(g.fmul(x.xB, move), g.fmul(x.xN, loop));
    x.xE = g.fadd(g.fmul(x.xC, m.e_move), g.fmul(x.xJ, m.e_loop));
}

// Row i's division by the Forward's scale factor of the row
// (backward_scale_step()), then the row's specials out; the cells are
// multiplied by the returned factor (1: not rescaled).
template <class Lanes>
ALIGNSCOPE_LANES_FN float backward_lane_rescale(const Lanes& g, const BackwardTargetView& t, BackwardLaneCarry& x,
                                                int i) {
    const float s = g.broadcast(t.scales + i);
    const float factor = backward_scale_step(g, s, x);
    if (t.specials && g.lead()) {
        float* row = t.specials + static_cast<std::size_t>(i) * kForwardSpecials;
        row[0] = x.xE, row[1] = x.xN, row[2] = x.xJ, row[3] = x.xB, row[4] = x.xC, row[5] = s;
    }
    return factor;
}

// Row i (1 <= i < L) from row i+1, in place in the one row the lanes keep
// (row i+1's M and I are read ahead of row i's stores; its D is not read).
// The specials as backward_specials() of the engine.
template <int Ahead, class Lanes>
ALIGNSCOPE_LANES_FN void backward_lane_row(Lanes& g, const ForwardModelView& m, const BackwardTargetView& t,
                                           BackwardLaneCarry& x, int i) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* base = m.striped;
    auto array = [base, Q](int a) { return base + static_cast<std::size_t>(a * Q * 4); };
    const float *bm = array(kFwdBM), *mm = array(kFwdMM), *im = array(kFwdIM), *dm = array(kFwdDM);
    const float *mi = array(kFwdMI), *ii = array(kFwdII);
    const float* e = array(kFwdMatch + t.dsq[i]);  // residue i+1's emissions
    const auto row_i = [&g](int q) { return g.get(kRowI, q); };
    const auto row_m = [&g](int q) { return g.get(kRowM, q); };
    const auto next_m = [&g, e](int q) { return g.mul(g.get(kRowM, q), g.seg(e + q * 4)); };
    const auto t_ii = [&g, ii](int q) { return g.seg(ii + q * 4); };
    const auto t_mi = [&g, mi](int q) { return g.seg(mi + q * 4); };
    const auto t_bm = [&g, bm](int q) { return g.seg(bm + q * 4); };
    const auto t_e = [&g, e](int q) { return g.seg(e + q * 4); };
    const V zero = g.zero();
    V tmmv = g.shift_down(g.seg(mm)), timv = g.shift_down(g.seg(im)), tdmv = g.shift_down(g.seg(dm));
    V mpv = g.shift_down(next_m(0));
    V xBv = zero;
    Lookahead<V, Ahead> in, mn, tii, tmi, tbm, te;
    in.fill(Q - 1, row_i, zero), mn.fill(Q - 1, row_m, zero);
    tii.fill(Q - 1, t_ii, zero), tmi.fill(Q - 1, t_mi, zero), tbm.fill(Q - 1, t_bm, zero), te.fill(Q - 1, t_e, zero);
    for (int q = Q - 1; q >= 0; --q) {
        const int s = q * 4;
        const V ipv = in.next(q, row_i, zero), m_old = mn.next(q, row_m, zero);
        const V tiiq = tii.next(q, t_ii, zero), tmiq = tmi.next(q, t_mi, zero);
        const V tbmq = tbm.next(q, t_bm, zero), es = te.next(q, t_e, zero);
        g.put(kRowI, q, g.add(g.mul(ipv, tiiq), g.mul(mpv, timv)));
        g.put(kRowD, q, g.mul(mpv, tdmv));
        const V mcv = g.add(g.mul(ipv, tmiq), g.mul(mpv, tmmv));
        mpv = g.mul(m_old, es);
        g.put(kRowM, q, mcv);
        tdmv = g.seg(dm + s);
        timv = g.seg(im + s);
        tmmv = g.seg(mm + s);
        xBv = g.add(xBv, g.mul(mpv, tbmq));
    }
    x.xB = g.sum(xBv);
    backward_special_step(g, m, t.loop, t.move, x);
    const V xEv = g.splat(x.xE);
    backward_lane_deletes<Ahead>(g, m, g.shift_down(g.add(g.get(kRowD, 0), xEv)), xEv, true);
}

// The whole parser Backward of one target, rows L down to 0: xN (row 0's N)
// and the total of the log scale factors. Row 0 gets N and B only, as in
// the engine; an empty target (L = 0) writes no row. Ahead: how many
// segments the loops load ahead (the same results for any).
template <int Ahead = 1, class Lanes>
ALIGNSCOPE_LANES_FN BackwardOutcome backward_lanes(Lanes& g, const ForwardModelView& m, const BackwardTargetView& t) {
    using V = typename Lanes::V;
    const int Q = m.Q, L = t.L;
    BackwardLaneCarry x;
    x.xC = t.move;
    x.xE = g.fmul(x.xC, m.e_move);
    if (L == 0) return {x.xN, x.total_scale, 0};
    // Row L: every M and D reaches E; I does not.
    const V xEv = g.splat(x.xE);
    for (int q = 0; q < Q; ++q) g.put(kRowM, q, xEv), g.put(kRowD, q, xEv), g.put(kRowI, q, g.zero());
    backward_lane_deletes<Ahead>(g, m, g.shift_down(g.get(kRowD, Q - 1)), g.zero(), false);
    scale_lane_row(g, Q, backward_lane_rescale(g, t, x, L));
    for (int i = L - 1; i >= 1; --i) {
        backward_lane_row<Ahead>(g, m, t, x, i);
        scale_lane_row(g, Q, backward_lane_rescale(g, t, x, i));
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
    return {x.xN, x.total_scale, 0};
}

// The CPU emulation: HostForwardLanes (one row of storage, four lanes in one
// thread; the shift towards lane 0 and the lead lane's reads are
// HostFourLanes'). Run under FlushSubnormals to match.
struct HostBackwardLanes : HostForwardLanes {
    using HostForwardLanes::HostForwardLanes;
};

}  // namespace alignscope::kernels::profile
