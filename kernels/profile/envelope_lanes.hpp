// The domain stage's rescoring of one envelope as four lanes of HMMER's
// striped layout: the unihit Forward and Backward with every row kept,
// posterior decoding, the optimal accuracy DP, null2 from the posteriors and
// the optimal accuracy traceback. Written once for the GPU kernel (one
// thread a lane, four threads an envelope: envelope_kernel.cu) and for a CPU
// emulation (the four lanes in one thread) that tests check against the
// engine's forward()/backward(), decode_and_align() and the traceback bit for
// bit. Every product, sum and maximum is the engine's, in its order, each
// rounded alone (no fused multiply-add), subnormals flushed as under FTZ/DAZ.
#pragma once

#include "backward_lanes.hpp"
#include "forward_lanes.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace alignscope::kernels::profile {

// Segments whose loads a row issues together before their stores (the GPU
// unrolls the chunk: its loads are in flight at once); a Lanes type says
// how many (Lanes::kChunk), this many by default.
inline constexpr int kEnvelopeChunk = 8;
#if defined(__CUDA_ARCH__)
#define ALIGNSCOPE_LANES_UNROLL _Pragma("unroll")
#else
#define ALIGNSCOPE_LANES_UNROLL
#endif

// The GPU kernel's name on the timeline (the kernel grammar): Plan7's gaps,
// an envelope's Forward, Backward, decoding and alignment ("envelope") four
// threads an envelope, 32-bit float cells.
inline constexpr const char* kEnvelopeKernelName = "sw_affine_envelope4_s32";

// An envelope's cell arrays, rows 0..L of 4Q floats each: the Forward's M and
// I (then the posteriors' M and I, row by row in place), the Backward's M and
// I (then the optimal accuracy M and I), and the optimal accuracy D (its rows
// 0 and 1 first hold the Forward's, then the Backward's two rows of D).
enum EnvelopeArray { kEnvPostM = 0, kEnvPostI, kEnvAccM, kEnvAccI, kEnvAccD, kEnvArrays };
// The special states, in blocks of L + 1 rows each: the Forward's E N J B C
// Scale, the Backward's E N J B C Scale, the Forward's scale factors alone
// (as Backward reads them), the posteriors' N J C and the optimal accuracy's
// E N J B C; kEnvSpecials floats a row in all.
enum EnvelopeSpecialBlock { kEnvFwdX = 0, kEnvBckX, kEnvScale, kEnvPostX, kEnvAccX };
inline constexpr int kEnvSpecials = 2 * kForwardSpecials + 1 + 3 + 5;
// The optimal accuracy specials' order (DpMatrix::Special's first five).
enum EnvelopeAccSpecial { kAccE = 0, kAccN, kAccJ, kAccB, kAccC };

// What the traceback reports besides its steps.
enum EnvelopeStatus : int {
    kEnvelopeOk = 0,
    kEnvelopeTraceFull = 1,        // more steps than the trace's room: redo it on the CPU
    kEnvelopeTraceImpossible = 2,  // an impossible state or a trace that did not end: redo it on the CPU
    // The Backward's B passed 1e16, where HMMER's switches to scale factors
    // of its own (DpMatrix::own_scales), which the lanes do not: redo it on
    // the CPU, which does.
    kEnvelopeOwnScales = 3
};

// One traceback step as TraceStep keeps it (state letter, node, position, posterior).
struct EnvelopeStep {
    int state = 0, k = 0, i = 0;
    float posterior = 0;
};

// An envelope's residues, its target's unihit length model and its storage.
struct EnvelopeView {
    const std::uint8_t* dsq = nullptr;  // the envelope's residues (its first at dsq[0])
    int L = 0;                          // envelope length, >= 1
    float loop = 0, move = 0;           // LengthModel::for_target(target length, false)
    float* cells = nullptr;             // kEnvArrays arrays of (L + 1) rows of 4Q floats
    float* specials = nullptr;          // (L + 1) rows of kEnvSpecials floats
    float* usage = nullptr;             // 8Q floats: null2's expected match and insert uses
    float* null2 = nullptr;             // K floats (null when not wanted)
    int K = 0;                          // canonical residues
    EnvelopeStep* trace = nullptr;      // room for `trace_room` steps, written from T back to S
    int trace_room = 0;
};

// The kernel's results for one envelope.
struct EnvelopeResult {
    float fwd_xC = 0, fwd_total_scale = 0;  // forward_score_of() of these is the envelope score
    float bck_xN = 0, bck_total_scale = 0;  // backward_score_of() of these must not throw
    float accuracy = 0;                     // the optimal accuracy score (decoded only)
    int decoded = 0;                        // 0: the posteriors underflowed (nothing else is set)
    int steps = 0;                          // trace steps written
    int status = kEnvelopeOk;
    std::uint32_t packed_at = 0;  // the GPU kernel: where its steps were packed in the batch's output
};

ALIGNSCOPE_LANES_FN float* envelope_row(const EnvelopeView& t, int W, int array, int i) {
    return t.cells +
           (static_cast<std::size_t>(array) * static_cast<std::size_t>(t.L + 1) + static_cast<std::size_t>(i)) *
               static_cast<std::size_t>(W);
}
// Block b's rows 0..L.
ALIGNSCOPE_LANES_FN float* envelope_block(const EnvelopeView& t, int b) {
    const int before = b == kEnvFwdX    ? 0
                       : b == kEnvBckX  ? kForwardSpecials
                       : b == kEnvScale ? 2 * kForwardSpecials
                       : b == kEnvPostX ? 2 * kForwardSpecials + 1
                                        : 2 * kForwardSpecials + 4;
    return t.specials + static_cast<std::size_t>(before) * static_cast<std::size_t>(t.L + 1);
}

// Forward's D->D paths of the row: one full pass, up to three more across
// lane boundaries (stopping early on models of 100 nodes or more once a pass
// changes nothing), as the engine's forward_deletes().
template <class Lanes>
ALIGNSCOPE_LANES_FN void envelope_forward_deletes(Lanes& g, const ForwardModelView& m, typename Lanes::V dcv) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* dd = m.striped + static_cast<std::size_t>(kFwdDD * Q * 4);
    dcv = g.shift_up(dcv);
    g.put(kRowD, 0, g.zero());
    // A chunk of cells read before the chunk's stores (the GPU's rows in place).
    for (int j = 0; j < 4; ++j) {
        if (j > 0) dcv = g.shift_up(dcv);
        typename Lanes::Flag changed{};
        for (int q0 = 0; q0 < Q; q0 += Lanes::kChunk) {
            V old[Lanes::kChunk];
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) old[u] = g.get(kRowD, q0 + u < Q ? q0 + u : Q - 1);
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 + u;
                if (q >= Q) break;
                const V sum = g.add(dcv, old[u]);
                if (j > 0) g.note_greater(changed, sum, old[u]);
                g.put(kRowD, q, sum);
                dcv = g.mul(j == 0 ? sum : dcv, g.seg(dd + q * 4));
            }
        }
        if (j > 0 && m.M >= 100 && !g.any(changed)) break;
    }
}

// Backward's D->D paths of the row (after M->E and D->E are in: add_end),
// all four passes, then M->D, as the engine's backward_deletes(). `first`
// is what enters the last segment from segment 0.
template <class Lanes>
ALIGNSCOPE_LANES_FN void envelope_backward_deletes(Lanes& g, const ForwardModelView& m, typename Lanes::V first,
                                                   typename Lanes::V xEv, bool add_end) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    const float* dd = m.striped + static_cast<std::size_t>(kFwdDD * Q * 4);
    const float* md = m.striped + static_cast<std::size_t>(kFwdMD * Q * 4);
    V dpv = first, dcv = g.zero();
    // A chunk of cells (from the last segment down) read before the chunk's
    // stores (the GPU's rows in place).
    for (int q0 = Q - 1; q0 >= 0; q0 -= Lanes::kChunk) {
        V d[Lanes::kChunk], mv[Lanes::kChunk];
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 - u >= 0 ? q0 - u : 0;
            d[u] = g.get(kRowD, q), mv[u] = g.get(kRowM, q);
        }
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 - u;
            if (q < 0) break;
            dcv = g.mul(dpv, g.seg(dd + q * 4));
            if (add_end) {
                dpv = g.add(d[u], g.add(dcv, xEv));
                g.put(kRowD, q, dpv);
                g.put(kRowM, q, g.add(mv[u], xEv));
            } else {
                dpv = g.add(d[u], dcv);
                g.put(kRowD, q, dpv);
            }
        }
    }
    for (int j = 1; j < 4; ++j) {
        dcv = g.shift_down(dcv);
        for (int q0 = Q - 1; q0 >= 0; q0 -= Lanes::kChunk) {
            V d[Lanes::kChunk];
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) d[u] = g.get(kRowD, q0 - u >= 0 ? q0 - u : 0);
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 - u;
                if (q < 0) break;
                dcv = g.mul(dcv, g.seg(dd + q * 4));
                g.put(kRowD, q, g.add(d[u], dcv));
            }
        }
    }
    dcv = g.shift_down(g.get(kRowD, 0));
    for (int q0 = Q - 1; q0 >= 0; q0 -= Lanes::kChunk) {
        V d[Lanes::kChunk], mv[Lanes::kChunk];
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 - u >= 0 ? q0 - u : 0;
            d[u] = g.get(kRowD, q), mv[u] = g.get(kRowM, q);
        }
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 - u;
            if (q < 0) break;
            g.put(kRowM, q, g.add(mv[u], g.mul(dcv, g.seg(md + q * 4))));
            dcv = d[u];
        }
    }
}

// The unihit Forward with every row's M and I kept (D in two rows), as the
// engine's forward() of a full matrix: xC and the total scale.
template <class Lanes>
ALIGNSCOPE_LANES_FN ForwardOutcome envelope_forward(Lanes& g, const ForwardModelView& m, const EnvelopeView& t) {
    using V = typename Lanes::V;
    const int Q = m.Q, W = 4 * Q;
    const float* base = m.striped;
    auto array = [base, Q](int a) { return base + static_cast<std::size_t>(a * Q * 4); };
    const float *bm = array(kFwdBM), *mm = array(kFwdMM), *im = array(kFwdIM), *dm = array(kFwdDM);
    const float *md = array(kFwdMD), *mi = array(kFwdMI), *ii = array(kFwdII);
    g.set_rows(envelope_row(t, W, kEnvPostM, 0), envelope_row(t, W, kEnvPostI, 0), envelope_row(t, W, kEnvAccD, 0));
    for (int q = 0; q < Q; ++q) g.put(kRowM, q, g.zero()), g.put(kRowI, q, g.zero()), g.put(kRowD, q, g.zero());
    float* fx = envelope_block(t, kEnvFwdX);
    float* scales = envelope_block(t, kEnvScale);
    float xN = 1.0f, xJ = 0.0f, xB = t.move, xC = 0.0f, total_scale = 0.0f;
    if (g.lead()) {
        float* row = fx;
        row[0] = 0.0f, row[1] = xN, row[2] = xJ, row[3] = xB, row[4] = xC, row[5] = 1.0f;
        scales[0] = 1.0f;
    }
    for (int i = 1; i <= t.L; ++i) {
        g.set_prev(envelope_row(t, W, kEnvPostM, i - 1), envelope_row(t, W, kEnvPostI, i - 1),
                   envelope_row(t, W, kEnvAccD, (i - 1) & 1));
        g.set_rows(envelope_row(t, W, kEnvPostM, i), envelope_row(t, W, kEnvPostI, i),
                   envelope_row(t, W, kEnvAccD, i & 1));
        const float* emission = array(kFwdMatch + t.dsq[i - 1]);
        const V xBv = g.splat(xB);
        V dcv = g.zero(), xEv = g.zero();
        V mpv = g.shift_up(g.prev(kRowM, Q - 1));
        V dpv = g.shift_up(g.prev(kRowD, Q - 1));
        V ipv = g.shift_up(g.prev(kRowI, Q - 1));
        // A chunk of segments of the previous row is read before the
        // chunk's stores (which may share its storage: the GPU's rows in place).
        for (int q0 = 0; q0 < Q; q0 += Lanes::kChunk) {
            V pmv[Lanes::kChunk], pdv[Lanes::kChunk], piv[Lanes::kChunk];
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 + u < Q ? q0 + u : Q - 1;
                pmv[u] = g.prev(kRowM, q), pdv[u] = g.prev(kRowD, q), piv[u] = g.prev(kRowI, q);
            }
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 + u, s = q * 4;
                if (q >= Q) break;
                V sv = g.mul(xBv, g.seg(bm + s));
                sv = g.add(sv, g.mul(mpv, g.seg(mm + s)));
                sv = g.add(sv, g.mul(ipv, g.seg(im + s)));
                sv = g.add(sv, g.mul(dpv, g.seg(dm + s)));
                sv = g.mul(sv, g.seg(emission + s));
                xEv = g.add(xEv, sv);
                mpv = pmv[u];
                dpv = pdv[u];
                ipv = piv[u];
                g.put(kRowM, q, sv);
                g.put(kRowD, q, dcv);
                dcv = g.mul(sv, g.seg(md + s));
                g.put(kRowI, q, g.add(g.mul(mpv, g.seg(mi + s)), g.mul(ipv, g.seg(ii + s))));
            }
        }
        envelope_forward_deletes(g, m, dcv);
        for (int q = 0; q < Q; ++q) xEv = g.add(g.get(kRowD, q), xEv);
        // The row's specials (the engine's forward_specials()).
        float xE = g.sum(xEv);
        const LaneRowScale r = forward_special_step(g, m, t.loop, t.move, xE, xN, xJ, xB, xC, total_scale);
        if (g.lead()) {
            float* row = fx + static_cast<std::size_t>(i) * kForwardSpecials;
            row[0] = xE, row[1] = xN, row[2] = xJ, row[3] = xB, row[4] = xC, row[5] = r.scale;
            scales[i] = r.scale;
        }
        scale_lane_row(g, Q, r.factor);
    }
    return {xC, total_scale};
}

// The unihit Backward with every row's M and I kept (D in two rows), as the
// engine's backward() of a full matrix given the Forward's scale factors
// (the lanes read them after the Forward is done: the caller syncs between).
template <class Lanes>
ALIGNSCOPE_LANES_FN BackwardOutcome envelope_backward(Lanes& g, const ForwardModelView& m, const EnvelopeView& t) {
    using V = typename Lanes::V;
    const int Q = m.Q, W = 4 * Q, L = t.L;
    const float* base = m.striped;
    auto array = [base, Q](int a) { return base + static_cast<std::size_t>(a * Q * 4); };
    const float *bm = array(kFwdBM), *mm = array(kFwdMM), *im = array(kFwdIM), *dm = array(kFwdDM);
    const float *mi = array(kFwdMI), *ii = array(kFwdII);
    const float* scales = envelope_block(t, kEnvScale);
    float* bx = envelope_block(t, kEnvBckX);
    BackwardLaneCarry x;
    x.xC = t.move;
    x.xE = g.fmul(x.xC, m.e_move);
    // Row i's division by the Forward's scale factor of the row
    // (backward_scale_step()), its specials out; the cells' factor back.
    bool own_scales = false;
    auto rescale = [&](int i) {
        own_scales = own_scales || static_cast<double>(x.xB) > 1.0e16;  // backward_needs_own_scales()
        const float s = g.broadcast(scales + i);
        const float factor = backward_scale_step(g, s, x);
        if (g.lead()) {
            float* row = bx + static_cast<std::size_t>(i) * kForwardSpecials;
            row[0] = x.xE, row[1] = x.xN, row[2] = x.xJ, row[3] = x.xB, row[4] = x.xC, row[5] = s;
        }
        return factor;
    };
    // Row L: every M and D reaches E; I does not.
    g.set_rows(envelope_row(t, W, kEnvAccM, L), envelope_row(t, W, kEnvAccI, L), envelope_row(t, W, kEnvAccD, L & 1));
    const V xEv0 = g.splat(x.xE);
    for (int q = 0; q < Q; ++q) g.put(kRowM, q, xEv0), g.put(kRowD, q, xEv0), g.put(kRowI, q, g.zero());
    envelope_backward_deletes(g, m, g.shift_down(g.get(kRowD, Q - 1)), g.zero(), false);
    scale_lane_row(g, Q, rescale(L));
    for (int i = L - 1; i >= 1; --i) {
        g.set_prev(envelope_row(t, W, kEnvAccM, i + 1), envelope_row(t, W, kEnvAccI, i + 1),
                   envelope_row(t, W, kEnvAccD, (i + 1) & 1));
        g.set_rows(envelope_row(t, W, kEnvAccM, i), envelope_row(t, W, kEnvAccI, i),
                   envelope_row(t, W, kEnvAccD, i & 1));
        const float* e = array(kFwdMatch + t.dsq[i]);  // residue i+1's emissions
        V tmmv = g.shift_down(g.seg(mm)), timv = g.shift_down(g.seg(im)), tdmv = g.shift_down(g.seg(dm));
        V mpv = g.shift_down(g.mul(g.prev(kRowM, 0), g.seg(e)));
        V xBv = g.zero();
        // A chunk of segments of the row below (from the last segment
        // down) is read before the chunk's stores.
        for (int q0 = Q - 1; q0 >= 0; q0 -= Lanes::kChunk) {
            V nmv[Lanes::kChunk], niv[Lanes::kChunk];
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 - u >= 0 ? q0 - u : 0;
                nmv[u] = g.prev(kRowM, q), niv[u] = g.prev(kRowI, q);
            }
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 - u, s = q * 4;
                if (q < 0) break;
                const V ipv = niv[u];
                g.put(kRowI, q, g.add(g.mul(ipv, g.seg(ii + s)), g.mul(mpv, timv)));
                g.put(kRowD, q, g.mul(mpv, tdmv));
                const V mcv = g.add(g.mul(ipv, g.seg(mi + s)), g.mul(mpv, tmmv));
                mpv = g.mul(nmv[u], g.seg(e + s));
                g.put(kRowM, q, mcv);
                tdmv = g.seg(dm + s);
                timv = g.seg(im + s);
                tmmv = g.seg(mm + s);
                xBv = g.add(xBv, g.mul(mpv, g.seg(bm + s)));
            }
        }
        // The row's specials (the engine's backward_specials()).
        x.xB = g.sum(xBv);
        backward_special_step(g, m, t.loop, t.move, x);
        const V xEv = g.splat(x.xE);
        envelope_backward_deletes(g, m, g.shift_down(g.add(g.get(kRowD, 0), xEv)), xEv, true);
        scale_lane_row(g, Q, rescale(i));
    }
    // Row 0: N and B from row 1.
    g.set_rows(envelope_row(t, W, kEnvAccM, 1), envelope_row(t, W, kEnvAccI, 1), envelope_row(t, W, kEnvAccD, 1));
    const float* e = array(kFwdMatch + t.dsq[0]);
    V xBv = g.zero();
    for (int q = 0; q < Q; ++q) xBv = g.add(xBv, g.mul(g.mul(g.get(kRowM, q), g.seg(e + q * 4)), g.seg(bm + q * 4)));
    x.xB = g.sum(xBv);
    x.xN = g.fadd(g.fmul(x.xB, t.move), g.fmul(x.xN, t.loop));
    if (g.lead()) bx[0] = 0.0f, bx[1] = x.xN, bx[2] = 0.0f, bx[3] = x.xB, bx[4] = 0.0f, bx[5] = 1.0f;
    return {x.xN, x.total_scale, own_scales ? 1 : 0};
}

// Row i of the posteriors and of the optimal accuracy DP in one pass over
// the segments: the posteriors of M and I (the Forward's cells in post_m,
// post_i times the Backward's in bck_m, bck_i times totr, as
// decode_and_align()'s decode_row()) stored over the Forward's, then the
// optimal accuracy row from row i-1 (the lanes' prev rows) into the lanes'
// rows (which may be the Backward's: a chunk's cells are all read before
// its stores); returns the row's E: the best M or D, as accuracy_row().
template <class Lanes>
ALIGNSCOPE_LANES_FN float envelope_accuracy_row(Lanes& g, const ForwardModelView& m, float* post_m, float* post_i,
                                                const float* bck_m, const float* bck_i, float totr, float xB) {
    using V = typename Lanes::V;
    const int Q = m.Q;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const float* base = m.striped;
    auto array = [base, Q](int a) { return base + static_cast<std::size_t>(a * Q * 4); };
    const float *bm = array(kFwdBM), *mm = array(kFwdMM), *im = array(kFwdIM), *dm = array(kFwdDM);
    const float *md = array(kFwdMD), *mi = array(kFwdMI), *ii = array(kFwdII), *dd = array(kFwdDD);
    const V xBv = g.splat(xB);
    V mpv = g.shift_up_fill(g.prev(kRowM, Q - 1), kNegInf);
    V dpv = g.shift_up_fill(g.prev(kRowD, Q - 1), kNegInf);
    V ipv = g.shift_up_fill(g.prev(kRowI, Q - 1), kNegInf);
    V mcur = g.zero();
    const V totrv = g.splat(totr);
    for (int q0 = 0; q0 < Q; q0 += Lanes::kChunk) {
        // A chunk of segments' Forward, Backward and previous-row cells,
        // all loaded before the chunk's stores (which may share storage).
        V fm[Lanes::kChunk], bk[Lanes::kChunk], fi[Lanes::kChunk], bi[Lanes::kChunk];
        V pmv[Lanes::kChunk], pdv[Lanes::kChunk], piv[Lanes::kChunk];
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 + u < Q ? q0 + u : Q - 1;
            fm[u] = g.at(post_m, q), bk[u] = g.at(bck_m, q), fi[u] = g.at(post_i, q), bi[u] = g.at(bck_i, q);
            pmv[u] = g.prev(kRowM, q), pdv[u] = g.prev(kRowD, q), piv[u] = g.prev(kRowI, q);
        }
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 + u, s = q * 4;
            if (q >= Q) break;
            const V pm = g.mul(g.mul(fm[u], bk[u]), totrv), pi = g.mul(g.mul(fi[u], bi[u]), totrv);
            g.store(post_m, q, pm);
            g.store(post_i, q, pi);
            V sv = g.gate(g.seg(bm + s), xBv);
            sv = g.vmax(sv, g.gate(g.seg(mm + s), mpv));
            sv = g.vmax(sv, g.gate(g.seg(im + s), ipv));
            sv = g.vmax(sv, g.gate(g.seg(dm + s), dpv));
            sv = g.add(sv, pm);
            mpv = pmv[u];
            dpv = pdv[u];
            ipv = piv[u];
            g.put(kRowM, q, sv);
            g.put(kRowI, q, g.add(g.vmax(g.gate(g.seg(mi + s), mpv), g.gate(g.seg(ii + s), ipv)), pi));
            g.put(kRowD, q, q == 0 ? g.splat(kNegInf) : g.gate(g.seg(md + s - 4), mcur));
            mcur = sv;
        }
    }
    // D->D: a first pass along the segments, then up to three more across
    // lane boundaries while any D improves.
    V dcv = g.shift_up_fill(g.gate(g.seg(md + (Q - 1) * 4), mcur), kNegInf);
    for (int j = 0; j < 4; ++j) {
        if (j > 0) dcv = g.shift_up_fill(dcv, kNegInf);
        typename Lanes::Flag changed{};
        for (int q0 = 0; q0 < Q; q0 += Lanes::kChunk) {
            V old[Lanes::kChunk];
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) old[u] = g.get(kRowD, q0 + u < Q ? q0 + u : Q - 1);
            ALIGNSCOPE_LANES_UNROLL
            for (int u = 0; u < Lanes::kChunk; ++u) {
                const int q = q0 + u;
                if (q >= Q) break;
                const V best = g.vmax(dcv, old[u]);
                if (j > 0) g.note_greater(changed, best, old[u]);
                g.put(kRowD, q, best);
                dcv = g.gate(g.seg(dd + q * 4), j == 0 ? best : dcv);
            }
        }
        if (j > 0 && !g.any(changed)) break;
    }
    V xEv = g.splat(kNegInf);
    for (int q0 = 0; q0 < Q; q0 += Lanes::kChunk) {
        V mv[Lanes::kChunk], d[Lanes::kChunk];
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            const int q = q0 + u < Q ? q0 + u : Q - 1;
            mv[u] = g.get(kRowM, q), d[u] = g.get(kRowD, q);
        }
        ALIGNSCOPE_LANES_UNROLL
        for (int u = 0; u < Lanes::kChunk; ++u) {
            if (q0 + u >= Q) break;
            xEv = g.vmax(g.vmax(xEv, mv[u]), d[u]);
        }
    }
    return g.lane_max(xEv);
}

// std::max's choice (the first unless it is less than the second).
ALIGNSCOPE_LANES_FN float envelope_max(float a, float b) { return a < b ? b : a; }

// The optimal accuracy specials carried from row to row.
struct EnvelopeAccCarry {
    float xE = -std::numeric_limits<float>::infinity(), xN = 0.0f, xJ = -std::numeric_limits<float>::infinity(),
          xB = 0.0f, xC = -std::numeric_limits<float>::infinity();
};
// The posteriors' specials summed for null2.
struct EnvelopeUse {
    float n = 0, c = 0, j = 0;
};

// Posterior decoding and the optimal accuracy DP over rows 1..L (the
// Forward's and Backward's rows turned into the posteriors' and the optimal
// accuracy's in place), as decode_and_align(). False (nothing decoded) when
// the Backward total underflowed; else the optimal accuracy score in `score`.
template <class Lanes>
ALIGNSCOPE_LANES_FN bool envelope_decode(Lanes& g, const ForwardModelView& m, const EnvelopeView& t, float& score,
                                         EnvelopeUse& use) {
    using V = typename Lanes::V;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int Q = m.Q, W = 4 * Q, L = t.L;
    const float* fx = envelope_block(t, kEnvFwdX);
    const float* bx = envelope_block(t, kEnvBckX);
    float* px = envelope_block(t, kEnvPostX);
    float* ox = envelope_block(t, kEnvAccX);
    const float scaleproduct = static_cast<float>(1.0 / static_cast<double>(g.broadcast(bx + 1)));
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (scaleproduct == kInf || scaleproduct == -kInf) return false;
    g.set_rows(envelope_row(t, W, kEnvAccM, 0), envelope_row(t, W, kEnvAccI, 0), envelope_row(t, W, kEnvAccD, 0));
    const V none = g.splat(kNegInf);
    for (int q = 0; q < Q; ++q) g.put(kRowM, q, none), g.put(kRowI, q, none), g.put(kRowD, q, none);
    EnvelopeAccCarry a;
    if (g.lead()) ox[kAccE] = a.xE, ox[kAccN] = a.xN, ox[kAccJ] = a.xJ, ox[kAccB] = a.xB, ox[kAccC] = a.xC;
    for (int i = 1; i <= L; ++i) {
        const std::size_t r = static_cast<std::size_t>(i) * kForwardSpecials, r0 = r - kForwardSpecials;
        const float totr = g.fmul(scaleproduct, g.broadcast(fx + r + 5));
        float* pm = envelope_row(t, W, kEnvPostM, i);
        float* pi = envelope_row(t, W, kEnvPostI, i);
        const float* am = envelope_row(t, W, kEnvAccM, i);
        const float* ai = envelope_row(t, W, kEnvAccI, i);
        const float ppN =
            g.fmul(g.fmul(g.fmul(g.broadcast(fx + r0 + 1), g.broadcast(bx + r + 1)), t.loop), scaleproduct);
        const float ppJ =
            g.fmul(g.fmul(g.fmul(g.broadcast(fx + r0 + 2), g.broadcast(bx + r + 2)), t.loop), scaleproduct);
        const float ppC =
            g.fmul(g.fmul(g.fmul(g.broadcast(fx + r0 + 4), g.broadcast(bx + r + 4)), t.loop), scaleproduct);
        if (g.lead()) {
            float* p = px + static_cast<std::size_t>(i) * 3;
            p[0] = ppN, p[1] = ppJ, p[2] = ppC;
        }
        if (i == 1) use.n = ppN, use.c = ppC, use.j = ppJ;
        else
            use.n = g.fadd(use.n, ppN), use.c = g.fadd(use.c, ppC), use.j = g.fadd(use.j, ppJ);
        g.set_prev(envelope_row(t, W, kEnvAccM, i - 1), envelope_row(t, W, kEnvAccI, i - 1),
                   envelope_row(t, W, kEnvAccD, i - 1));
        g.set_rows(envelope_row(t, W, kEnvAccM, i), envelope_row(t, W, kEnvAccI, i), envelope_row(t, W, kEnvAccD, i));
        const float xE = envelope_accuracy_row(g, m, pm, pi, am, ai, totr, a.xB);
        a.xE = xE;
        float t1 = t.loop == 0.0f ? 0.0f : g.fadd(a.xJ, ppJ);
        float t2 = m.e_loop == 0.0f ? 0.0f : xE;
        a.xJ = envelope_max(t1, t2);
        t1 = t.loop == 0.0f ? 0.0f : g.fadd(a.xC, ppC);
        t2 = m.e_move == 0.0f ? 0.0f : xE;
        a.xC = envelope_max(t1, t2);
        a.xN = t.loop == 0.0f ? 0.0f : g.fadd(a.xN, ppN);
        t1 = t.move == 0.0f ? 0.0f : a.xN;
        t2 = t.move == 0.0f ? 0.0f : a.xJ;
        a.xB = envelope_max(t1, t2);
        if (g.lead()) {
            float* o = ox + static_cast<std::size_t>(i) * 5;
            o[kAccE] = a.xE, o[kAccN] = a.xN, o[kAccJ] = a.xJ, o[kAccB] = a.xB, o[kAccC] = a.xC;
        }
    }
    score = a.xC;
    return true;
}

// null2 odds of the K canonical residues from the posteriors (rows 1..L of
// the decoded matrix): each cell's uses summed row after row (row 1 first,
// then each row added), times 1/L, then per residue the lanes' sums of match
// use times emission odds plus insert use, segment by segment, their
// horizontal sum and the N, C, J share, as decode_and_align()'s null2.
template <class Lanes>
ALIGNSCOPE_LANES_FN void envelope_null2(Lanes& g, const ForwardModelView& m, const EnvelopeView& t,
                                        const EnvelopeUse& use) {
    using V = typename Lanes::V;
    const int Q = m.Q, W = 4 * Q, L = t.L;
    const float norm = static_cast<float>(1.0 / static_cast<double>(static_cast<float>(L)));
    float* um = t.usage;
    float* ui = t.usage + W;
    for (int q = 0; q < Q; ++q) {
        V sm = g.at(envelope_row(t, W, kEnvPostM, 1), q), si = g.at(envelope_row(t, W, kEnvPostI, 1), q);
        for (int i = 2; i <= L; ++i) {
            sm = g.add(g.at(envelope_row(t, W, kEnvPostM, i), q), sm);
            si = g.add(g.at(envelope_row(t, W, kEnvPostI, i), q), si);
        }
        g.store(um, q, g.mul(sm, g.splat(norm)));
        g.store(ui, q, g.mul(si, g.splat(norm)));
    }
    const float special = g.fadd(g.fadd(g.fmul(use.n, norm), g.fmul(use.c, norm)), g.fmul(use.j, norm));
    for (int x = 0; x < t.K; ++x) {
        const float* e = m.striped + static_cast<std::size_t>((kFwdMatch + x) * Q * 4);
        V sv = g.zero();
        for (int q = 0; q < Q; ++q) sv = g.add(g.add(sv, g.mul(g.at(um, q), g.seg(e + q * 4))), g.at(ui, q));
        const float odds = g.fadd(g.sum(sv), special);
        if (g.lead()) t.null2[x] = odds;
    }
}

// The node and state (M or D) that end the domain at row i of the
// traceback: HMMER's striped scan, M winning ties, D only when greater.
ALIGNSCOPE_LANES_FN int envelope_trace_end(const ForwardModelView& m, const EnvelopeView& t, int i, int& k) {
    const int M = m.M, Q = m.Q, W = 4 * Q;
    const float* rm = envelope_row(t, W, kEnvAccM, i);
    const float* rd = envelope_row(t, W, kEnvAccD, i);
    float best = -std::numeric_limits<float>::infinity();
    int kmax = 0, smax = 'M';
    for (int q = 0; q < Q; ++q) {
        for (int r = 0; r < 4; ++r) {
            const int kk = r * Q + q + 1;
            const float v = kk <= M ? rm[q * 4 + r] : 0.0f;
            if (v >= best && kk <= M) best = v, smax = 'M', kmax = kk;
        }
        for (int r = 0; r < 4; ++r) {
            const int kk = r * Q + q + 1;
            if (kk > M) continue;
            const float v = rd[q * 4 + r];
            if (v > best) best = v, smax = 'D', kmax = kk;
        }
    }
    k = kmax;
    return smax;
}

// The optimal accuracy traceback of one envelope (one thread), as the domain
// stage's optimal_accuracy_trace(): steps from T back to S into t.trace (the
// caller reverses them), their number into `steps`. Ties break as there (M
// before I, D, B; E's striped scan, M winning ties, D only when greater).
template <class Lanes>
ALIGNSCOPE_LANES_FN int envelope_trace(const Lanes& g, const ForwardModelView& m, const EnvelopeView& t, int& steps) {
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    const int M = m.M, Q = m.Q, W = 4 * Q, L = t.L;
    const float* px = envelope_block(t, kEnvPostX);
    const float* ox = envelope_block(t, kEnvAccX);
    auto slot = [Q](int k) { return static_cast<std::size_t>(((k - 1) % Q) * 4 + (k - 1) / Q); };
    auto cell = [&](int array, int i, int k) { return envelope_row(t, W, array, i)[slot(k)]; };
    auto tsc = [&](int a, int node) { return m.striped[static_cast<std::size_t>(a * Q * 4) + slot(node)]; };
    auto acc = [ox](int i, int s) { return ox[static_cast<std::size_t>(i) * 5 + static_cast<std::size_t>(s)]; };
    auto post = [px](int i, int s) { return px[static_cast<std::size_t>(i) * 3 + static_cast<std::size_t>(s)]; };
    auto or_inf = [kNegInf](float p, float v) { return p == 0.0f ? kNegInf : v; };
    steps = 0;
    int last = 0;
    auto push = [&](int state, int k, int i, float pp) {
        if (steps >= t.trace_room) return false;
        EnvelopeStep& s = t.trace[steps++];
        s.state = state, s.k = k, s.i = i, s.posterior = pp;
        last = state;
        return true;
    };
    push('T', 0, 0, 0.0f);
    push('C', 0, 0, 0.0f);
    int i = L, k = 0, s0 = 'C';
    long long guard = 0;
    const long long most = 4LL * (L + 2) * (M + 2);
    while (s0 != 'S') {
        if (++guard > most) return kEnvelopeTraceImpossible;
        int s1 = 'S';
        switch (s0) {
            case 'M': {
                const float before_m = k > 1 ? cell(kEnvAccM, i - 1, k - 1) : kNegInf;
                const float before_i = k > 1 ? cell(kEnvAccI, i - 1, k - 1) : kNegInf;
                const float before_d = k > 1 ? cell(kEnvAccD, i - 1, k - 1) : kNegInf;
                float path[4];
                path[0] = or_inf(tsc(kFwdMM, k), before_m);
                path[1] = or_inf(tsc(kFwdIM, k), before_i);
                path[2] = or_inf(tsc(kFwdDM, k), before_d);
                path[3] = or_inf(tsc(kFwdBM, k), acc(i - 1, kAccB));
                int best = 0;
                for (int z = 1; z < 4; ++z)
                    if (path[z] > path[best]) best = z;
                const int states[4] = {'M', 'I', 'D', 'B'};
                s1 = states[best];
                --k;
                --i;
                break;
            }
            case 'D': {
                const float p0 = k >= 2 ? or_inf(tsc(kFwdMD, k - 1), cell(kEnvAccM, i, k - 1)) : kNegInf;
                const float p1 = k >= 2 ? or_inf(tsc(kFwdDD, k - 1), cell(kEnvAccD, i, k - 1)) : kNegInf;
                s1 = p0 >= p1 ? 'M' : 'D';
                --k;
                break;
            }
            case 'I': {
                const float p0 = or_inf(tsc(kFwdMI, k), cell(kEnvAccM, i - 1, k));
                const float p1 = or_inf(tsc(kFwdII, k), cell(kEnvAccI, i - 1, k));
                s1 = p0 >= p1 ? 'M' : 'I';
                --i;
                break;
            }
            case 'N': s1 = i == 0 ? 'S' : 'N'; break;
            case 'C': {
                const float p0 = t.loop == 0.0f ? kNegInf : g.fadd(acc(i - 1, kAccC), post(i, 2));
                const float p1 = m.e_move == 0.0f ? kNegInf : acc(i, kAccE);
                s1 = p0 > p1 ? 'C' : 'E';
                break;
            }
            case 'J': {
                const float p0 = t.loop == 0.0f ? kNegInf : g.fadd(acc(i - 1, kAccJ), post(i, 1));
                const float p1 = m.e_loop == 0.0f ? kNegInf : acc(i, kAccE);
                s1 = p0 > p1 ? 'J' : 'E';
                break;
            }
            case 'E': s1 = envelope_trace_end(m, t, i, k); break;
            case 'B': {
                const float p0 = t.move == 0.0f ? kNegInf : acc(i, kAccN);
                const float p1 = t.move == 0.0f ? kNegInf : acc(i, kAccJ);
                s1 = p0 > p1 ? 'N' : 'J';
                break;
            }
            default: return kEnvelopeTraceImpossible;
        }
        float pp = 0.0f;
        if (s1 == 'M') pp = cell(kEnvPostM, i, k);
        else if (s1 == 'I')
            pp = cell(kEnvPostI, i, k);
        else if (s1 == s0 && s1 == 'N')
            pp = post(i, 0);
        else if (s1 == s0 && s1 == 'C')
            pp = post(i, 2);
        else if (s1 == s0 && s1 == 'J')
            pp = post(i, 1);
        // As the trace's append(): N, C and J carry a position and a
        // posterior only when they follow themselves; D a node; M and I all.
        int sk = 0, si = 0;
        float sp = 0.0f;
        if (s1 == 'N' || s1 == 'C' || s1 == 'J') {
            if (last == s1) si = i, sp = pp;
        } else if (s1 == 'D') {
            sk = k;
        } else if (s1 == 'M' || s1 == 'I') {
            sk = k, si = i, sp = pp;
        }
        if (!push(s1, sk, si, sp)) return kEnvelopeTraceFull;
        if ((s1 == 'N' || s1 == 'J' || s1 == 'C') && s1 == s0) --i;
        s0 = s1;
    }
    return kEnvelopeOk;
}

// Whether Forward's last C or Backward's row-0 N of an envelope (L >= 1)
// gives a score: not NaN, not zero (underflow), not infinite (overflow).
ALIGNSCOPE_LANES_FN bool envelope_score_usable(float x) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    return x == x && x != 0.0f && x != kInf && x != -kInf;
}

// The whole rescoring of one envelope: Forward, Backward, decoding and the
// optimal accuracy DP, null2 (where t.null2 is set) and the traceback.
template <class Lanes>
ALIGNSCOPE_LANES_FN EnvelopeResult envelope_rescore(Lanes& g, const ForwardModelView& m, const EnvelopeView& t) {
    EnvelopeResult r;
    const ForwardOutcome f = envelope_forward(g, m, t);
    r.fwd_xC = f.xC;
    r.fwd_total_scale = f.total_scale;
    g.sync();  // the Forward's specials, written by the lead lane, read by all
    const BackwardOutcome b = envelope_backward(g, m, t);
    r.bck_xN = b.xN;
    r.bck_total_scale = b.total_scale;
    g.sync();
    if (b.own_scales) {
        r.status = kEnvelopeOwnScales;
        return r;
    }
    // A score forward_score_of() or backward_score_of() rejects (NaN, zero,
    // infinite) makes the envelope the CPU's error whatever follows: nothing
    // is decoded (its posteriors would be NaN, and the traceback could walk
    // off the matrix). The lead lane's values (those the host judges).
    if (!envelope_score_usable(
            g.broadcast(envelope_block(t, kEnvFwdX) + static_cast<std::size_t>(t.L) * kForwardSpecials + 4)) ||
        !envelope_score_usable(g.broadcast(envelope_block(t, kEnvBckX) + 1)))
        return r;
    EnvelopeUse use;
    float score = 0.0f;
    if (!envelope_decode(g, m, t, score, use)) return r;
    r.decoded = 1;
    r.accuracy = score;
    if (t.null2) envelope_null2(g, m, t, use);
    g.sync();  // every lane's rows, read by the lead lane
    if (g.lead()) r.status = envelope_trace(g, m, t, r.steps);
    return r;
}

// The CPU emulation: the four lanes as an array in one thread, reading and
// writing the rows the code points it at. Plain float operations: run under
// FlushSubnormals to match.
struct HostEnvelopeLanes : HostFourLanes {
    static constexpr int kChunk = kEnvelopeChunk;
    float* rows[3] = {nullptr, nullptr, nullptr};
    const float* before[3] = {nullptr, nullptr, nullptr};

    void set_rows(float* m, float* i, float* d) { rows[0] = m, rows[1] = i, rows[2] = d; }
    void set_prev(const float* m, const float* i, const float* d) { before[0] = m, before[1] = i, before[2] = d; }
    static V at(const float* row, int q) { return seg(row + static_cast<std::size_t>(q) * 4); }
    static void store(float* row, int q, V v) {
        float* p = row + static_cast<std::size_t>(q) * 4;
        p[0] = v[0], p[1] = v[1], p[2] = v[2], p[3] = v[3];
    }
    static V shift_up_fill(V a, float fill) { return {fill, a[0], a[1], a[2]}; }
    // SSE's maxps (the second operand unless the first is greater), the
    // and-mask of a possible transition (probability above 0), std::max's
    // horizontal maximum.
    static V vmax(V a, V b) {
        return {a[0] > b[0] ? a[0] : b[0], a[1] > b[1] ? a[1] : b[1], a[2] > b[2] ? a[2] : b[2],
                a[3] > b[3] ? a[3] : b[3]};
    }
    static V gate(V t, V v) {
        return {t[0] > 0.0f ? v[0] : 0.0f, t[1] > 0.0f ? v[1] : 0.0f, t[2] > 0.0f ? v[2] : 0.0f,
                t[3] > 0.0f ? v[3] : 0.0f};
    }
    static float lane_max(V a) { return envelope_max(envelope_max(a[0], a[1]), envelope_max(a[2], a[3])); }
    static void sync() {}
    V get(int a, int q) const { return at(rows[a], q); }
    void put(int a, int q, V v) { store(rows[a], q, v); }
    V prev(int a, int q) const { return at(before[a], q); }
};

// The CPU emulation of the GPU kernel's shared row (envelope_kernel.cu with
// SharedRows): one row of M, I and D updated in place, tagged with the
// global M row it mirrors; stores go to it and to the rows, reads of the
// current row and of the previous one (while the buffer still holds it)
// come from it. Tests run the lanes code through it to check that every cell
// of a row is read before the next row's store overwrites it.
struct HostSharedRowLanes : HostEnvelopeLanes {
    std::vector<float> buffer;
    int W = 0;
    const float* mirror = nullptr;
    bool previous_shared = false;
    explicit HostSharedRowLanes(int segments) : buffer(static_cast<std::size_t>(12 * segments)), W(4 * segments) {}

    void set_rows(float* m, float* i, float* d) {
        HostEnvelopeLanes::set_rows(m, i, d);
        mirror = m;
    }
    void set_prev(const float* m, const float* i, const float* d) {
        HostEnvelopeLanes::set_prev(m, i, d);
        previous_shared = mirror == m;
    }
    float* in_buffer(int a) { return buffer.data() + static_cast<std::size_t>(a * W); }
    const float* in_buffer(int a) const { return buffer.data() + static_cast<std::size_t>(a * W); }
    V get(int a, int q) const { return at(in_buffer(a), q); }
    void put(int a, int q, V v) {
        store(in_buffer(a), q, v);
        store(rows[a], q, v);
    }
    V prev(int a, int q) const { return previous_shared ? at(in_buffer(a), q) : at(before[a], q); }
};

// Floats of an envelope of L residues and a model of Q segments: its cells,
// its specials, its null2 uses.
ALIGNSCOPE_LANES_FN std::size_t envelope_cell_floats(int L, int Q) {
    return static_cast<std::size_t>(kEnvArrays) * static_cast<std::size_t>(L + 1) * static_cast<std::size_t>(4 * Q);
}
ALIGNSCOPE_LANES_FN std::size_t envelope_special_floats(int L) {
    return static_cast<std::size_t>(kEnvSpecials) * static_cast<std::size_t>(L + 1);
}
ALIGNSCOPE_LANES_FN std::size_t envelope_usage_floats(int Q) { return static_cast<std::size_t>(8 * Q); }
// The traceback's room: one domain of L residues through M nodes and the
// flanks (more, rare, goes back to the CPU).
ALIGNSCOPE_LANES_FN int envelope_trace_room(int L, int M) { return L + M + 16; }

}  // namespace alignscope::kernels::profile
