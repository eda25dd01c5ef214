// Forward and Backward in probability space (odds ratios against the null
// model), local multihit, with HMMER's sparse rescaling: a row whose E value
// passes 1e4 is divided by it and the factor's log is added to the total; the
// Backward pass divides by the same factors so that Forward x Backward gives
// posteriors directly.
//
// Both run striped over four-float SSE registers in HMMER's own order of
// floating-point work (node k in segment (k-1) % Q, lane (k-1) / Q; the D->D
// paths in up to four passes; horizontal sums as (a0 + a1) + (a2 + a3)), so
// every product and sum happens as in hmmsearch and the scores, scale factors
// and the tracebacks drawn from the matrices agree with its own to the last
// bit. Wider registers would change that order, hence four lanes (two targets
// may share 256-bit registers, one per half: forward_pair.cpp). Without SSE2
// the same lanes are plain floats. Rows are computed in place in the matrix
// (a full one keeps the striped layout for the domain stage).
#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filters.hpp>

#include "forward_pair.hpp"
#include "striped_float.hpp"

#include <cmath>

namespace alignscope::profile {

#if defined(__SSE2__)
FlushSubnormals::FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ | DAZ
FlushSubnormals::~FlushSubnormals() { _mm_setcsr(saved_); }
#else
FlushSubnormals::FlushSubnormals() = default;
FlushSubnormals::~FlushSubnormals() = default;
#endif

namespace {
void grow(std::vector<float>& v, std::size_t n) {
    if (v.size() < n) v.resize(n);
}
}  // namespace

void DpMatrix::resize(int model_length, int target_length, bool keep_all_rows, bool keep_all_deletes) {
    M = model_length;
    L = target_length;
    Q = striped_segments(M);
    full = keep_all_rows;
    all_deletes = keep_all_deletes;
    const std::size_t rows = full ? static_cast<std::size_t>(L + 1) : 2;
    for (auto* v : {&mmx, &imx}) grow(*v, rows * width());
    grow(dmx, (full && all_deletes ? rows : 2) * width());
    grow(xmx, static_cast<std::size_t>(L + 1) * Specials);
    total_scale = 0.0f;
    own_scales = false;
}

namespace {

using namespace striped;

// Row i's M, I and D cells, written in place: the full matrix's own row, or
// one of the two rows a parser matrix keeps.
struct Row {
    float *m, *i, *d;
};
Row row_of(DpMatrix& dp, int i) {
    const std::size_t r = dp.row(i);
    return {dp.mmx.data() + r, dp.imx.data() + r, dp.dmx.data() + dp.drow(i)};
}

void clear_row(Row r, int Q) {
    for (int q = 0; q < Q; ++q) put(r.m, q, zero4()), put(r.i, q, zero4()), put(r.d, q, zero4());
}

void scale_row(Row r, int Q, float factor) {
    const F4 f = splat(factor);
    for (int q = 0; q < Q; ++q) {
        put(r.m, q, at(r.m, q) * f);
        put(r.d, q, at(r.d, q) * f);
        put(r.i, q, at(r.i, q) * f);
    }
}

void set_specials(DpMatrix& dp, int i, float xE, float xN, float xJ, float xB, float xC) {
    dp.x(i, DpMatrix::E) = xE;
    dp.x(i, DpMatrix::N) = xN;
    dp.x(i, DpMatrix::J) = xJ;
    dp.x(i, DpMatrix::B) = xB;
    dp.x(i, DpMatrix::C) = xC;
}

// The D->D paths of a Forward row: one full pass, then up to three more
// across lane boundaries (HMMER stops early on models of 100 nodes or more
// once a pass changes nothing). `dcv` is the M->D carried out of the row.
// Returns xEv plus the row's final D values in segment order, as HMMER adds
// them after the passes: each later pass adds up the values it leaves, and
// the last pass's sum is the one (a pass that changes nothing, the third,
// or one whose carried products are all zero, after which no cell changes:
// the rest of the row is added as it is).
F4 forward_deletes(Profile p, F4 dcv, int M, float* d, F4 xEv) {
    const int Q = p.Q;
    dcv = shift_up(dcv);
    put(d, 0, zero4());
    for (int q = 0; q < Q; ++q) {
        const F4 sum = dcv + at(d, q);
        put(d, q, sum);
        dcv = sum * p.at(DD, q);
    }
    F4 total = xEv;
    for (int j = 1; j < 4; ++j) {
        dcv = shift_up(dcv);
        F4 changed = zero4();
        total = xEv;
        int q = 0;
        // Once the carried products are all zero (flushed below FLT_MIN),
        // every later sum of this pass and the next adds +0: no cell changes.
        for (; q < Q && !all_zero(dcv); ++q) {
            const F4 old = at(d, q);
            const F4 sum = dcv + old;
            changed = or4(changed, greater_mask(sum, old));
            put(d, q, sum);
            total = sum + total;
            dcv = dcv * p.at(DD, q);
        }
        if (q < Q) {
            for (; q < Q; ++q) total = at(d, q) + total;
            return total;
        }
        if (M >= 100 && !any_set(changed)) break;
    }
    return total;
}

// One Forward row's M, I and D from the previous row; returns the row's E
// before rescaling.
float forward_row(Profile p, const float* emission, float xB, int M, Row prev, Row cur) {
    const int Q = p.Q;
    const F4 xBv = splat(xB);
    F4 dcv = zero4(), xEv = zero4();
    F4 mpv = shift_up(at(prev.m, Q - 1));
    F4 dpv = shift_up(at(prev.d, Q - 1));
    F4 ipv = shift_up(at(prev.i, Q - 1));
    for (int q = 0; q < Q; ++q) {
        F4 sv = xBv * p.at(BM, q);
        sv = sv + mpv * p.at(MM, q);
        sv = sv + ipv * p.at(IM, q);
        sv = sv + dpv * p.at(DM, q);
        sv = sv * load(emission + static_cast<std::size_t>(q * 4));
        xEv = xEv + sv;
        mpv = at(prev.m, q);
        dpv = at(prev.d, q);
        ipv = at(prev.i, q);
        put(cur.m, q, sv);
        put(cur.d, q, dcv);
        dcv = sv * p.at(MD, q);
        put(cur.i, q, mpv * p.at(MI, q) + ipv * p.at(II, q));
    }
    return lane_sum(forward_deletes(p, dcv, M, cur.d, xEv));
}

}  // namespace

float forward_specials(const ForwardProfile& om, const LengthModel& length, float xE, ForwardCarry& c, DpMatrix& fwd,
                       int i) {
    c.xN = c.xN * length.loop;
    c.xC = (c.xC * length.loop) + (xE * om.e_move);
    c.xJ = (c.xJ * length.loop) + (xE * om.e_loop);
    c.xB = (c.xJ * length.move) + (c.xN * length.move);
    float factor = 1.0f, scale = 1.0f;
    if (xE > 1.0e4f) {
        c.xN = c.xN / xE;
        c.xC = c.xC / xE;
        c.xJ = c.xJ / xE;
        c.xB = c.xB / xE;
        factor = static_cast<float>(1.0 / xE);
        scale = xE;
        fwd.total_scale += static_cast<float>(std::log(static_cast<double>(xE)));
        xE = 1.0f;
    }
    fwd.x(i, DpMatrix::Scale) = scale;
    set_specials(fwd, i, xE, c.xN, c.xJ, c.xB, c.xC);
    return factor;
}

void forward_start(const ForwardProfile& om, const LengthModel& length, int L, DpMatrix& fwd, ForwardCarry& c,
                   bool full, bool all_deletes) {
    fwd.resize(om.length, L, full, all_deletes);
    clear_row(row_of(fwd, 0), fwd.Q);
    c = ForwardCarry{1.0f, 0.0f, length.move, 0.0f};
    set_specials(fwd, 0, 0.0f, c.xN, c.xJ, c.xB, c.xC);
    fwd.x(0, DpMatrix::Scale) = 1.0f;
}

float forward_from(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
                   ForwardCarry c, int from) {
    const Profile p(om);
    for (int i = from; i <= L; ++i) {
        const Row cur = row_of(fwd, i);
        const float xE = forward_row(p, p.match(dsq[i - 1]), c.xB, om.length, row_of(fwd, i - 1), cur);
        const float factor = forward_specials(om, length, xE, c, fwd, i);
        if (factor != 1.0f) scale_row(cur, p.Q, factor);
    }
    return forward_score_of(length, c.xC, fwd.total_scale, L);
}

float forward_score_of(const LengthModel& length, float xC, float total_scale, int L) {
    if (std::isnan(xC)) throw Error("Forward score is NaN");
    if (L > 0 && xC == 0.0f) throw Error("Forward score underflow");
    if (std::isinf(xC)) throw Error("Forward score overflow");
    return static_cast<float>(total_scale + std::log(static_cast<double>(xC * length.move)));
}

float forward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
              bool full, bool all_deletes) {
    ForwardCarry c;
    forward_start(om, length, L, fwd, c, full, all_deletes);
    return forward_from(om, length, dsq, L, fwd, c, 1);
}

namespace {

// The D->D paths of a Backward row (after M->E and D->E are in), then M->D.
// `first` is what enters the last segment's lanes from segment 0. The first
// pass carries D's own sums; the three more carry only the D->D products, all
// four in full (Backward has no early stop, as in HMMER).
void backward_deletes(Profile p, F4 first, F4 xEv, bool add_end, Row cur) {
    const int Q = p.Q;
    F4 dpv = first, dcv = zero4();
    if (add_end) {
        for (int q = Q - 1; q >= 0; --q) {
            dcv = dpv * p.at(DD, q);
            dpv = at(cur.d, q) + (dcv + xEv);
            put(cur.d, q, dpv);
            put(cur.m, q, at(cur.m, q) + xEv);
        }
    } else {
        for (int q = Q - 1; q >= 0; --q) {
            dcv = dpv * p.at(DD, q);
            dpv = at(cur.d, q) + dcv;
            put(cur.d, q, dpv);
        }
    }
    for (int j = 1; j < 4 && !all_zero(dcv); ++j) {
        dcv = shift_down(dcv);
        for (int q = Q - 1; q >= 0; --q) {
            // Products all zero from here on add +0 to every cell left.
            if (all_zero(dcv)) break;
            dcv = dcv * p.at(DD, q);
            put(cur.d, q, at(cur.d, q) + dcv);
        }
    }
    dcv = shift_down(at(cur.d, 0));
    for (int q = Q - 1; q >= 0; --q) {
        const F4 d = at(cur.d, q);
        put(cur.m, q, at(cur.m, q) + dcv * p.at(MD, q));
        dcv = d;
    }
}

// One Backward row i (1 <= i < L) from row i+1 (`next`); `emission` is
// residue i+1's. Updates the specials.
void backward_row(Profile p, const float* emission, const LengthModel& length, const ForwardProfile& om, Row next,
                  Row cur, BackwardCarry& x) {
    const int Q = p.Q;
    F4 tmmv = shift_down(p.at(MM, 0)), timv = shift_down(p.at(IM, 0)), tdmv = shift_down(p.at(DM, 0));
    F4 mpv = shift_down(at(next.m, 0) * load(emission));
    F4 xBv = zero4();
    for (int q = Q - 1; q >= 0; --q) {
        const F4 ipv = at(next.i, q);
        put(cur.i, q, (ipv * p.at(II, q)) + (mpv * timv));
        put(cur.d, q, mpv * tdmv);
        const F4 mcv = (ipv * p.at(MI, q)) + (mpv * tmmv);
        mpv = at(next.m, q) * load(emission + static_cast<std::size_t>(q * 4));
        put(cur.m, q, mcv);
        tdmv = p.at(DM, q);
        timv = p.at(IM, q);
        tmmv = p.at(MM, q);
        xBv = xBv + mpv * p.at(BM, q);
    }
    backward_specials(lane_sum(xBv), length, om, x);
    const F4 xEv = splat(x.xE);
    backward_deletes(p, shift_down(at(cur.d, 0) + xEv), xEv, true, cur);
}

// Divides row i by the Forward pass's scale factor of that row.
void backward_rescale(const DpMatrix& fwd, int i, DpMatrix& bck, Row cur, BackwardCarry& x) {
    const float factor = backward_scale(fwd, i, bck, x);
    if (factor != 1.0f) scale_row(cur, bck.Q, factor);
}

// Row 0: only N and B, from row 1.
void backward_first_row(Profile p, const float* emission, const LengthModel& length, DpMatrix& bck, BackwardCarry& x) {
    const Row one = row_of(bck, 1);
    F4 xBv = zero4();
    for (int q = 0; q < p.Q; ++q) {
        const F4 mpv = at(one.m, q) * load(emission + static_cast<std::size_t>(q * 4));
        xBv = xBv + mpv * p.at(BM, q);
    }
    x.xB = lane_sum(xBv);
    x.xN = (x.xB * length.move) + (x.xN * length.loop);
    set_specials(bck, 0, 0.0f, x.xN, 0.0f, x.xB, 0.0f);
    bck.x(0, DpMatrix::Scale) = 1.0f;
    if (bck.full) clear_row(row_of(bck, 0), p.Q);
}

}  // namespace

void backward_specials(float xB, const LengthModel& length, const ForwardProfile& om, BackwardCarry& x) {
    x.xB = xB;
    x.xC = x.xC * length.loop;
    x.xJ = (x.xB * length.move) + (x.xJ * length.loop);
    x.xN = (x.xB * length.move) + (x.xN * length.loop);
    x.xE = (x.xC * om.e_move) + (x.xJ * om.e_loop);
}

float backward_scale(const DpMatrix& fwd, int i, DpMatrix& bck, BackwardCarry& x) {
    // The Forward's factor, until B passes 1e16: from that row down the
    // Backward takes factors of its own, B where it passes 1e4 (HMMER's
    // has_own_scales; a Backward of a long low-complexity target with a
    // high-scoring model otherwise overflows to NaN). Row L's B is 0.
    if (backward_needs_own_scales(x.xB)) bck.own_scales = true;
    const float s = bck.own_scales ? (x.xB > 1.0e4f ? x.xB : 1.0f) : fwd.x(i, DpMatrix::Scale);
    bck.x(i, DpMatrix::Scale) = s;
    if (!(s > 1.0f)) return 1.0f;
    x.xE = x.xE / s;
    x.xN = x.xN / s;
    x.xC = x.xC / s;
    x.xJ = x.xJ / s;
    x.xB = x.xB / s;
    bck.total_scale += static_cast<float>(std::log(static_cast<double>(s)));
    return static_cast<float>(1.0 / s);
}

void backward_start(const ForwardProfile& om, const LengthModel& length, int L, DpMatrix& bck, BackwardCarry& x,
                    bool full, bool all_deletes) {
    bck.resize(om.length, L, full, all_deletes);
    x = BackwardCarry{};
    x.xC = length.move;
    x.xE = x.xC * om.e_move;
}

void backward_last_row(const ForwardProfile& om, const DpMatrix& fwd, DpMatrix& bck, BackwardCarry& x) {
    const Profile p(om);
    const int Q = p.Q, L = bck.L;
    const Row last = row_of(bck, L);
    for (int q = 0; q < Q; ++q) put(last.m, q, splat(x.xE)), put(last.d, q, splat(x.xE)), put(last.i, q, zero4());
    backward_deletes(p, shift_down(at(last.d, Q - 1)), zero4(), false, last);
    backward_rescale(fwd, L, bck, last, x);
    set_specials(bck, L, x.xE, x.xN, x.xJ, x.xB, x.xC);
}

float backward_from(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L,
                    const DpMatrix& fwd, DpMatrix& bck, BackwardCarry x, int from) {
    const Profile p(om);
    for (int i = from; i >= 1; --i) {
        const Row cur = row_of(bck, i);
        backward_row(p, p.match(dsq[i]), length, om, row_of(bck, i + 1), cur, x);
        backward_rescale(fwd, i, bck, cur, x);
        set_specials(bck, i, x.xE, x.xN, x.xJ, x.xB, x.xC);
    }
    if (L > 0) backward_first_row(p, p.match(dsq[0]), length, bck, x);
    if (std::isnan(x.xN)) throw Error("Backward score is NaN");
    if (L > 0 && x.xN == 0.0f) throw Error("Backward score underflow");
    if (std::isinf(x.xN)) throw Error("Backward score overflow");
    return static_cast<float>(bck.total_scale + std::log(static_cast<double>(x.xN)));
}

float backward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, const DpMatrix& fwd,
               DpMatrix& bck, bool full, bool all_deletes) {
    BackwardCarry x;
    backward_start(om, length, L, bck, x, full, all_deletes);
    if (L > 0) backward_last_row(om, fwd, bck, x);
    return backward_from(om, length, dsq, L, fwd, bck, x, L - 1);
}

}  // namespace alignscope::profile
