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
// bit. Wider registers would change that order, hence four lanes. Without SSE2
// the same lanes are plain floats.
#include <alignscope/error.hpp>
#include <alignscope/profile/filters.hpp>

#include <algorithm>
#include <array>
#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace alignscope::profile {

#if defined(__SSE2__)
FlushSubnormals::FlushSubnormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ | DAZ
FlushSubnormals::~FlushSubnormals() { _mm_setcsr(saved_); }
#else
FlushSubnormals::FlushSubnormals() = default;
FlushSubnormals::~FlushSubnormals() = default;
#endif

void DpMatrix::resize(int model_length, int target_length, bool keep_all_rows)
{
    M = model_length;
    L = target_length;
    full = keep_all_rows;
    const std::size_t rows = full ? static_cast<std::size_t>(L + 1) : 2;
    const std::size_t cells = rows * static_cast<std::size_t>(M + 1);
    mmx.assign(cells, 0.0f);
    imx.assign(cells, 0.0f);
    dmx.assign(cells, 0.0f);
    xmx.assign(static_cast<std::size_t>(L + 1) * Specials, 0.0f);
    total_scale = 0.0f;
}

namespace {

// Four float lanes and the few operations the recurrences need.
#if defined(__SSE2__)
struct F4 {
    __m128 v;
};
inline F4 load(const float* p) { return {_mm_loadu_ps(p)}; }
inline void store(float* p, F4 a) { _mm_storeu_ps(p, a.v); }
inline F4 splat(float x) { return {_mm_set1_ps(x)}; }
inline F4 zero4() { return {_mm_setzero_ps()}; }
inline F4 operator+(F4 a, F4 b) { return {_mm_add_ps(a.v, b.v)}; }
inline F4 operator*(F4 a, F4 b) { return {_mm_mul_ps(a.v, b.v)}; }
// [a0 a1 a2 a3] -> [0 a0 a1 a2]: node k's predecessor of the previous segment.
inline F4 shift_up(F4 a) { return {_mm_move_ss(_mm_shuffle_ps(a.v, a.v, _MM_SHUFFLE(2, 1, 0, 0)), _mm_setzero_ps())}; }
// [a0 a1 a2 a3] -> [a1 a2 a3 0]: node k's successor of the next segment.
inline F4 shift_down(F4 a)
{
    const __m128 t = _mm_move_ss(a.v, _mm_setzero_ps());
    return {_mm_shuffle_ps(t, t, _MM_SHUFFLE(0, 3, 2, 1))};
}
inline bool any_greater(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmpgt_ps(a.v, b.v)) != 0; }
inline float lane_sum(F4 a)
{
    alignas(16) float t[4];
    _mm_store_ps(t, a.v);
    return (t[0] + t[1]) + (t[2] + t[3]);
}
#else
struct F4 {
    std::array<float, 4> v;
};
inline F4 load(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
inline void store(float* p, F4 a) { std::copy(a.v.begin(), a.v.end(), p); }
inline F4 splat(float x) { return {{x, x, x, x}}; }
inline F4 zero4() { return splat(0.0f); }
inline F4 operator+(F4 a, F4 b) { return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}}; }
inline F4 operator*(F4 a, F4 b) { return {{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}}; }
inline F4 shift_up(F4 a) { return {{0.0f, a.v[0], a.v[1], a.v[2]}}; }
inline F4 shift_down(F4 a) { return {{a.v[1], a.v[2], a.v[3], 0.0f}}; }
inline bool any_greater(F4 a, F4 b)
{
    return a.v[0] > b.v[0] || a.v[1] > b.v[1] || a.v[2] > b.v[2] || a.v[3] > b.v[3];
}
inline float lane_sum(F4 a) { return (a.v[0] + a.v[1]) + (a.v[2] + a.v[3]); }
#endif

enum StripedArray { BM = 0, MM, IM, DM, MD, MI, II, DD, Match };

// Two striped rows of M, I and D (previous and current), Q segments each.
struct StripedRows {
    int Q = 0;
    std::vector<F4> mp, ip, dp, mc, ic, dc;
    explicit StripedRows(int segments) : Q(segments)
    {
        for (auto* row : {&mp, &ip, &dp, &mc, &ic, &dc}) row->assign(static_cast<std::size_t>(Q), zero4());
    }
    void advance()
    {
        std::swap(mp, mc);
        std::swap(ip, ic);
        std::swap(dp, dc);
    }
    void scale(float factor)
    {
        const F4 f = splat(factor);
        for (int q = 0; q < Q; ++q) {
            mc[static_cast<std::size_t>(q)] = mc[static_cast<std::size_t>(q)] * f;
            dc[static_cast<std::size_t>(q)] = dc[static_cast<std::size_t>(q)] * f;
            ic[static_cast<std::size_t>(q)] = ic[static_cast<std::size_t>(q)] * f;
        }
    }
};

// The profile's striped arrays as four-lane segments.
struct StripedProfile {
    const float* base;
    int Q;
    F4 at(int array, int q) const { return load(base + static_cast<std::size_t>((array * Q + q) * 4)); }
    const float* match(int x) const { return base + static_cast<std::size_t>(((Match + x) * Q) * 4); }
};

// The current row of `rows` in node order into row i of `dp` (for the domain
// stage's readers; only full matrices keep it), and the specials.
void store_row(DpMatrix& dp, int i, const StripedRows& rows, float xE, float xN, float xJ, float xB, float xC)
{
    dp.x(i, DpMatrix::E) = xE;
    dp.x(i, DpMatrix::N) = xN;
    dp.x(i, DpMatrix::J) = xJ;
    dp.x(i, DpMatrix::B) = xB;
    dp.x(i, DpMatrix::C) = xC;
    if (!dp.full) return;
    const int M = dp.M, Q = rows.Q;
    float* rm = dp.mmx.data() + dp.cell(i, 0);
    float* ri = dp.imx.data() + dp.cell(i, 0);
    float* rd = dp.dmx.data() + dp.cell(i, 0);
    rm[0] = ri[0] = rd[0] = 0.0f;
    alignas(16) float m[4], in[4], d[4];
    for (int q = 0; q < Q; ++q) {
        store(m, rows.mc[static_cast<std::size_t>(q)]);
        store(in, rows.ic[static_cast<std::size_t>(q)]);
        store(d, rows.dc[static_cast<std::size_t>(q)]);
        for (int z = 0; z < 4; ++z) {
            const int k = z * Q + q + 1;
            if (k > M) continue;
            rm[k] = m[z];
            ri[k] = in[z];
            rd[k] = d[z];
        }
    }
}

// One Forward row's M, I and D (the D->D paths included); returns the row's
// E before rescaling.
float forward_row(const StripedProfile& p, const float* emission, float xB, int M, StripedRows& r)
{
    const int Q = r.Q;
    const F4 xBv = splat(xB);
    F4 dcv = zero4(), xEv = zero4();
    F4 mpv = shift_up(r.mp[static_cast<std::size_t>(Q - 1)]);
    F4 dpv = shift_up(r.dp[static_cast<std::size_t>(Q - 1)]);
    F4 ipv = shift_up(r.ip[static_cast<std::size_t>(Q - 1)]);
    for (int q = 0; q < Q; ++q) {
        const std::size_t s = static_cast<std::size_t>(q);
        F4 sv = xBv * p.at(BM, q);
        sv = sv + mpv * p.at(MM, q);
        sv = sv + ipv * p.at(IM, q);
        sv = sv + dpv * p.at(DM, q);
        sv = sv * load(emission + static_cast<std::size_t>(q * 4));
        xEv = xEv + sv;
        mpv = r.mp[s];
        dpv = r.dp[s];
        ipv = r.ip[s];
        r.mc[s] = sv;
        r.dc[s] = dcv;
        dcv = sv * p.at(MD, q);
        r.ic[s] = mpv * p.at(MI, q) + ipv * p.at(II, q);
    }
    // D->D paths: one full pass, then up to three more across lane boundaries.
    dcv = shift_up(dcv);
    r.dc[0] = zero4();
    for (int q = 0; q < Q; ++q) {
        const std::size_t s = static_cast<std::size_t>(q);
        r.dc[s] = dcv + r.dc[s];
        dcv = r.dc[s] * p.at(DD, q);
    }
    for (int j = 1; j < 4; ++j) {
        dcv = shift_up(dcv);
        bool changed = false;
        for (int q = 0; q < Q; ++q) {
            const std::size_t s = static_cast<std::size_t>(q);
            const F4 sum = dcv + r.dc[s];
            changed = changed || any_greater(sum, r.dc[s]);
            r.dc[s] = sum;
            dcv = dcv * p.at(DD, q);
        }
        if (M >= 100 && !changed) break;  // HMMER stops early on larger models
    }
    for (int q = 0; q < Q; ++q) xEv = r.dc[static_cast<std::size_t>(q)] + xEv;
    return lane_sum(xEv);
}

}  // namespace

float forward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L, DpMatrix& fwd,
              bool full)
{
    const int M = om.length;
    const StripedProfile p{om.striped.data(), om.segments};
    StripedRows rows(om.segments);
    fwd.resize(M, L, full);
    float xE = 0.0f, xN = 1.0f, xJ = 0.0f, xB = length.move, xC = 0.0f;
    store_row(fwd, 0, rows, xE, xN, xJ, xB, xC);
    fwd.x(0, DpMatrix::Scale) = 1.0f;
    float total = 0.0f;
    for (int i = 1; i <= L; ++i) {
        xE = forward_row(p, p.match(dsq[i - 1]), xB, M, rows);
        xN = xN * length.loop;
        xC = (xC * length.loop) + (xE * om.e_move);
        xJ = (xJ * length.loop) + (xE * om.e_loop);
        xB = (xJ * length.move) + (xN * length.move);
        float scale = 1.0f;
        if (xE > 1.0e4f) {
            xN = xN / xE;
            xC = xC / xE;
            xJ = xJ / xE;
            xB = xB / xE;
            rows.scale(static_cast<float>(1.0 / xE));
            scale = xE;
            total += static_cast<float>(std::log(static_cast<double>(xE)));
            xE = 1.0f;
        }
        fwd.x(i, DpMatrix::Scale) = scale;
        store_row(fwd, i, rows, xE, xN, xJ, xB, xC);
        rows.advance();
    }
    fwd.total_scale = total;
    if (std::isnan(xC)) throw Error("Forward score is NaN");
    if (L > 0 && xC == 0.0f) throw Error("Forward score underflow");
    if (std::isinf(xC)) throw Error("Forward score overflow");
    return static_cast<float>(total + std::log(static_cast<double>(xC * length.move)));
}

namespace {

// Backward's specials of one row, carried from row to row.
struct BackwardSpecials {
    float xE = 0, xN = 0, xJ = 0, xB = 0, xC = 0;
};

// The D->D paths of a Backward row (after M->E and D->E are in), then M->D.
// `first` is what enters the last segment's lanes from segment 0.
void backward_deletes(const StripedProfile& p, F4 first, F4 xEv, bool add_end, StripedRows& r)
{
    const int Q = r.Q;
    F4 dpv = first, dcv = zero4();
    for (int q = Q - 1; q >= 0; --q) {
        const std::size_t s = static_cast<std::size_t>(q);
        dcv = dpv * p.at(DD, q);
        r.dc[s] = add_end ? r.dc[s] + (dcv + xEv) : r.dc[s] + dcv;
        dpv = r.dc[s];
        if (add_end) r.mc[s] = r.mc[s] + xEv;
    }
    for (int j = 1; j < 4; ++j) {
        dcv = shift_down(dcv);
        for (int q = Q - 1; q >= 0; --q) {
            const std::size_t s = static_cast<std::size_t>(q);
            dcv = dcv * p.at(DD, q);
            r.dc[s] = r.dc[s] + dcv;
        }
    }
    dcv = shift_down(r.dc[0]);
    for (int q = Q - 1; q >= 0; --q) {
        const std::size_t s = static_cast<std::size_t>(q);
        r.mc[s] = r.mc[s] + dcv * p.at(MD, q);
        dcv = r.dc[s];
    }
}

// One Backward row i (1 <= i < L) from row i+1 (the previous one in r);
// `emission` is residue i+1's. Updates the specials.
void backward_row(const StripedProfile& p, const float* emission, const LengthModel& length, const ForwardProfile& om,
                  StripedRows& r, BackwardSpecials& x)
{
    const int Q = r.Q;
    F4 tmmv = shift_down(p.at(MM, 0)), timv = shift_down(p.at(IM, 0)), tdmv = shift_down(p.at(DM, 0));
    F4 mpv = shift_down(r.mp[0] * load(emission));
    F4 xBv = zero4();
    for (int q = Q - 1; q >= 0; --q) {
        const std::size_t s = static_cast<std::size_t>(q);
        const F4 ipv = r.ip[s];
        r.ic[s] = (ipv * p.at(II, q)) + (mpv * timv);
        r.dc[s] = mpv * tdmv;
        const F4 mcv = (ipv * p.at(MI, q)) + (mpv * tmmv);
        mpv = r.mp[s] * load(emission + static_cast<std::size_t>(q * 4));
        r.mc[s] = mcv;
        tdmv = p.at(DM, q);
        timv = p.at(IM, q);
        tmmv = p.at(MM, q);
        xBv = xBv + mpv * p.at(BM, q);
    }
    x.xB = lane_sum(xBv);
    x.xC = x.xC * length.loop;
    x.xJ = (x.xB * length.move) + (x.xJ * length.loop);
    x.xN = (x.xB * length.move) + (x.xN * length.loop);
    x.xE = (x.xC * om.e_move) + (x.xJ * om.e_loop);
    const F4 xEv = splat(x.xE);
    backward_deletes(p, shift_down(r.dc[0] + xEv), xEv, true, r);
}

// Divides row i by the Forward pass's scale factor of that row; returns it.
float backward_rescale(const DpMatrix& fwd, int i, DpMatrix& bck, StripedRows& r, BackwardSpecials& x)
{
    const float s = fwd.x(i, DpMatrix::Scale);
    bck.x(i, DpMatrix::Scale) = s;
    if (s > 1.0f) {
        x.xE = x.xE / s;
        x.xN = x.xN / s;
        x.xC = x.xC / s;
        x.xJ = x.xJ / s;
        x.xB = x.xB / s;
        r.scale(static_cast<float>(1.0 / s));
    }
    return s;
}

}  // namespace

float backward(const ForwardProfile& om, const LengthModel& length, const std::uint8_t* dsq, int L,
               const DpMatrix& fwd, DpMatrix& bck, bool full)
{
    const int M = om.length, Q = om.segments;
    const StripedProfile p{om.striped.data(), Q};
    StripedRows r(Q);
    bck.resize(M, L, full);
    BackwardSpecials x;
    // Row L: only the path to C and T remains.
    x.xC = length.move;
    x.xE = x.xC * om.e_move;
    for (int q = 0; q < Q; ++q) r.mc[static_cast<std::size_t>(q)] = r.dc[static_cast<std::size_t>(q)] = splat(x.xE);
    backward_deletes(p, shift_down(r.dc[static_cast<std::size_t>(Q - 1)]), zero4(), false, r);
    backward_rescale(fwd, L, bck, r, x);
    bck.total_scale = static_cast<float>(std::log(static_cast<double>(fwd.x(L, DpMatrix::Scale))));
    store_row(bck, L, r, x.xE, x.xN, x.xJ, x.xB, x.xC);
    for (int i = L - 1; i >= 1; --i) {
        r.advance();
        backward_row(p, p.match(dsq[i]), length, om, r, x);
        const float s = backward_rescale(fwd, i, bck, r, x);
        if (s > 1.0f) bck.total_scale += static_cast<float>(std::log(static_cast<double>(s)));
        store_row(bck, i, r, x.xE, x.xN, x.xJ, x.xB, x.xC);
    }
    // Row 0: only N and B, from row 1 (the last one computed).
    const float* e = p.match(dsq[0]);
    F4 xBv = zero4();
    for (int q = 0; q < Q; ++q) {
        const F4 mpv = r.mc[static_cast<std::size_t>(q)] * load(e + static_cast<std::size_t>(q * 4));
        xBv = xBv + mpv * p.at(BM, q);
    }
    x.xB = lane_sum(xBv);
    x.xN = (x.xB * length.move) + (x.xN * length.loop);
    bck.x(0, DpMatrix::B) = x.xB;
    bck.x(0, DpMatrix::C) = 0.0f;
    bck.x(0, DpMatrix::J) = 0.0f;
    bck.x(0, DpMatrix::N) = x.xN;
    bck.x(0, DpMatrix::E) = 0.0f;
    bck.x(0, DpMatrix::Scale) = 1.0f;
    if (full) std::fill_n(bck.mmx.data() + bck.cell(0, 0), M + 1, 0.0f);
    if (std::isnan(x.xN)) throw Error("Backward score is NaN");
    if (L > 0 && x.xN == 0.0f) throw Error("Backward score underflow");
    if (std::isinf(x.xN)) throw Error("Backward score overflow");
    return static_cast<float>(bck.total_scale + std::log(static_cast<double>(x.xN)));
}

}  // namespace alignscope::profile
