// Two targets' parser Forward and Backward in one instruction stream: target
// a in the low four lanes of a 256-bit register, target b in the high four,
// each half doing exactly the four-lane striped recurrence of
// forward_backward.cpp (same products, same sums, same order; a half that
// needs no rescaling is multiplied by 1, a half whose D->D passes have
// stopped adds 0). The pair runs for the shorter target's rows; then each
// target's row goes back to its own matrix and the four-lane code finishes it.
#include "forward_pair.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#define ALIGNSCOPE_PAIRED_ROWS 1
#include <immintrin.h>
#else
#define ALIGNSCOPE_PAIRED_ROWS 0
#endif

namespace alignscope::profile {

namespace {

// Two rows of paired M, I and D (8 floats a segment) per worker thread.
float* pair_rows(int Q) {
    thread_local std::vector<float> rows;
    const std::size_t n = static_cast<std::size_t>(Q) * 8 * 3 * 2;
    if (rows.size() < n) rows.resize(n);
    return rows.data();
}

void set_row_specials(DpMatrix& dp, int i, const BackwardCarry& x) {
    dp.x(i, DpMatrix::E) = x.xE;
    dp.x(i, DpMatrix::N) = x.xN;
    dp.x(i, DpMatrix::J) = x.xJ;
    dp.x(i, DpMatrix::B) = x.xB;
    dp.x(i, DpMatrix::C) = x.xC;
}

}  // namespace

#if ALIGNSCOPE_PAIRED_ROWS

bool paired_rows_available() { return __builtin_cpu_supports("avx"); }

// AVX for this section only (the rest of the engine stays SSE2): GCC takes
// its target pragma, clang an attribute applied to every function here.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx")
#endif

namespace {

enum Array { BM = 0, MM, IM, DM, MD, MI, II, DD, Match };

struct V {
    __m256 v;
};
inline V operator+(V a, V b) { return {_mm256_add_ps(a.v, b.v)}; }
inline V operator*(V a, V b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline V zero8() { return {_mm256_setzero_ps()}; }
inline V both(__m128 a, __m128 b) { return {_mm256_insertf128_ps(_mm256_castps128_ps256(a), b, 1)}; }
inline V splat2(float a, float b) { return both(_mm_set1_ps(a), _mm_set1_ps(b)); }
// In each half: [a0 a1 a2 a3] -> [0 a0 a1 a2] and [a0 a1 a2 a3] -> [a1 a2 a3 0].
inline V shift_up(V a) {
    return {_mm256_blend_ps(_mm256_shuffle_ps(a.v, a.v, _MM_SHUFFLE(2, 1, 0, 0)), _mm256_setzero_ps(), 0x11)};
}
inline V shift_down(V a) {
    return {_mm256_blend_ps(_mm256_shuffle_ps(a.v, a.v, _MM_SHUFFLE(0, 3, 2, 1)), _mm256_setzero_ps(), 0x88)};
}
// Each half's (t0 + t1) + (t2 + t3), as the four-lane code sums.
inline void half_sums(V a, float& sa, float& sb) {
    alignas(32) float t[8];
    _mm256_store_ps(t, a.v);
    sa = (t[0] + t[1]) + (t[2] + t[3]);
    sb = (t[4] + t[5]) + (t[6] + t[7]);
}

// The profile (the same for both halves) and the two targets' emissions.
struct PairProfile {
    const float* base;
    int Q;
    V at(int array, int q) const {
        const __m128 x = _mm_loadu_ps(base + static_cast<std::size_t>((array * Q + q) * 4));
        return both(x, x);
    }
    const float* match(int x) const { return base + static_cast<std::size_t>(((Match + x) * Q) * 4); }
};
inline V emission(const float* ea, const float* eb, int q) {
    return both(_mm_loadu_ps(ea + static_cast<std::size_t>(q) * 4), _mm_loadu_ps(eb + static_cast<std::size_t>(q) * 4));
}

struct PairRow {
    float *m, *i, *d;
};
PairRow pair_row(float* rows, int Q, int slot) {
    float* r = rows + static_cast<std::size_t>(slot) * 3 * static_cast<std::size_t>(Q) * 8;
    const std::size_t w = static_cast<std::size_t>(Q) * 8;
    return {r, r + w, r + 2 * w};
}
inline V at8(const float* row, int q) { return {_mm256_loadu_ps(row + static_cast<std::size_t>(q) * 8)}; }
inline void put8(float* row, int q, V a) { _mm256_storeu_ps(row + static_cast<std::size_t>(q) * 8, a.v); }

void scale_pair_row(PairRow r, int Q, float fa, float fb) {
    if (fa == 1.0f && fb == 1.0f) return;
    const V f = splat2(fa, fb);
    for (int q = 0; q < Q; ++q) {
        put8(r.m, q, at8(r.m, q) * f);
        put8(r.d, q, at8(r.d, q) * f);
        put8(r.i, q, at8(r.i, q) * f);
    }
}

// Each half of the paired row back to its own target's row in its matrix.
void split_pair_row(PairRow r, int Q, DpMatrix& a, int ia, DpMatrix& b, int ib) {
    float* const out[2][3] = {{a.mmx.data() + a.row(ia), a.imx.data() + a.row(ia), a.dmx.data() + a.row(ia)},
                              {b.mmx.data() + b.row(ib), b.imx.data() + b.row(ib), b.dmx.data() + b.row(ib)}};
    const float* const in[3] = {r.m, r.i, r.d};
    for (int s = 0; s < 3; ++s)
        for (int q = 0; q < Q; ++q) {
            const V v = at8(in[s], q);
            _mm_storeu_ps(out[0][s] + static_cast<std::size_t>(q) * 4, _mm256_castps256_ps128(v.v));
            _mm_storeu_ps(out[1][s] + static_cast<std::size_t>(q) * 4, _mm256_extractf128_ps(v.v, 1));
        }
}

// Forward's D->D passes; a half whose pass changed nothing (models of 100
// nodes or more) adds zeros from then on, as if it had stopped.
void forward_deletes_pair(PairProfile p, int M, V dcv, float* d) {
    const int Q = p.Q;
    dcv = shift_up(dcv);
    put8(d, 0, zero8());
    for (int q = 0; q < Q; ++q) {
        const V sum = dcv + at8(d, q);
        put8(d, q, sum);
        dcv = sum * p.at(DD, q);
    }
    __m256 live = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int j = 1; j < 4; ++j) {
        dcv = {_mm256_and_ps(shift_up(dcv).v, live)};
        __m256 changed = _mm256_setzero_ps();
        for (int q = 0; q < Q; ++q) {
            const V old = at8(d, q);
            const V sum = dcv + old;
            changed = _mm256_or_ps(changed, _mm256_cmp_ps(sum.v, old.v, _CMP_GT_OQ));
            put8(d, q, sum);
            dcv = dcv * p.at(DD, q);
        }
        if (M < 100) continue;
        const int bits = _mm256_movemask_ps(changed);
        const __m128 keep_a = (bits & 0x0F) ? _mm_castsi128_ps(_mm_set1_epi32(-1)) : _mm_setzero_ps();
        const __m128 keep_b = (bits & 0xF0) ? _mm_castsi128_ps(_mm_set1_epi32(-1)) : _mm_setzero_ps();
        live = _mm256_and_ps(live, both(keep_a, keep_b).v);
        if (_mm256_movemask_ps(live) == 0) break;
    }
}

void forward_row_pair(PairProfile p, int M, const float* ea, const float* eb, V xBv, PairRow prev, PairRow cur,
                      float& xEa, float& xEb) {
    const int Q = p.Q;
    V dcv = zero8(), xEv = zero8();
    V mpv = shift_up(at8(prev.m, Q - 1));
    V dpv = shift_up(at8(prev.d, Q - 1));
    V ipv = shift_up(at8(prev.i, Q - 1));
    for (int q = 0; q < Q; ++q) {
        V sv = xBv * p.at(BM, q);
        sv = sv + mpv * p.at(MM, q);
        sv = sv + ipv * p.at(IM, q);
        sv = sv + dpv * p.at(DM, q);
        sv = sv * emission(ea, eb, q);
        xEv = xEv + sv;
        mpv = at8(prev.m, q);
        dpv = at8(prev.d, q);
        ipv = at8(prev.i, q);
        put8(cur.m, q, sv);
        put8(cur.d, q, dcv);
        dcv = sv * p.at(MD, q);
        put8(cur.i, q, mpv * p.at(MI, q) + ipv * p.at(II, q));
    }
    forward_deletes_pair(p, M, dcv, cur.d);
    for (int q = 0; q < Q; ++q) xEv = at8(cur.d, q) + xEv;
    half_sums(xEv, xEa, xEb);
}

// Backward's D->D passes (all four), then M->D, as backward_deletes().
void backward_deletes_pair(PairProfile p, V first, V xEv, bool add_end, PairRow cur) {
    const int Q = p.Q;
    V dpv = first, dcv = zero8();
    for (int q = Q - 1; q >= 0; --q) {
        dcv = dpv * p.at(DD, q);
        dpv = add_end ? at8(cur.d, q) + (dcv + xEv) : at8(cur.d, q) + dcv;
        put8(cur.d, q, dpv);
        if (add_end) put8(cur.m, q, at8(cur.m, q) + xEv);
    }
    for (int j = 1; j < 4; ++j) {
        dcv = shift_down(dcv);
        for (int q = Q - 1; q >= 0; --q) {
            dcv = dcv * p.at(DD, q);
            put8(cur.d, q, at8(cur.d, q) + dcv);
        }
    }
    dcv = shift_down(at8(cur.d, 0));
    for (int q = Q - 1; q >= 0; --q) {
        const V d = at8(cur.d, q);
        put8(cur.m, q, at8(cur.m, q) + dcv * p.at(MD, q));
        dcv = d;
    }
}

// The M, I and D of a Backward row from the row below; returns each half's
// B sum.
void backward_cells_pair(PairProfile p, const float* ea, const float* eb, PairRow next, PairRow cur, float& xBa,
                         float& xBb) {
    const int Q = p.Q;
    V tmmv = shift_down(p.at(MM, 0)), timv = shift_down(p.at(IM, 0)), tdmv = shift_down(p.at(DM, 0));
    V mpv = shift_down(at8(next.m, 0) * emission(ea, eb, 0));
    V xBv = zero8();
    for (int q = Q - 1; q >= 0; --q) {
        const V ipv = at8(next.i, q);
        put8(cur.i, q, (ipv * p.at(II, q)) + (mpv * timv));
        put8(cur.d, q, mpv * tdmv);
        const V mcv = (ipv * p.at(MI, q)) + (mpv * tmmv);
        mpv = at8(next.m, q) * emission(ea, eb, q);
        put8(cur.m, q, mcv);
        tdmv = p.at(DM, q);
        timv = p.at(IM, q);
        tmmv = p.at(MM, q);
        xBv = xBv + mpv * p.at(BM, q);
    }
    half_sums(xBv, xBa, xBb);
}

// Row L of both targets: M and D start from E, I from 0.
void backward_last_pair(PairProfile p, const PairTarget& a, const PairTarget& b, BackwardCarry& xa, BackwardCarry& xb,
                        PairRow cur) {
    for (int q = 0; q < p.Q; ++q) {
        put8(cur.m, q, splat2(xa.xE, xb.xE));
        put8(cur.d, q, splat2(xa.xE, xb.xE));
        put8(cur.i, q, zero8());
    }
    backward_deletes_pair(p, shift_down(at8(cur.d, p.Q - 1)), zero8(), false, cur);
    const float fa = backward_scale(*a.fwd, a.L, *a.bck, xa), fb = backward_scale(*b.fwd, b.L, *b.bck, xb);
    scale_pair_row(cur, p.Q, fa, fb);
    set_row_specials(*a.bck, a.L, xa);
    set_row_specials(*b.bck, b.L, xb);
}

}  // namespace

void forward_pair(const ForwardProfile& om, const PairTarget& a, const PairTarget& b, float& score_a, float& score_b) {
    const PairProfile p{om.striped.data(), om.segments};
    const int Q = p.Q, steps = std::min(a.L, b.L);
    ForwardCarry ca, cb;
    forward_start(om, a.length, a.L, *a.fwd, ca, false);
    forward_start(om, b.length, b.L, *b.fwd, cb, false);
    float* rows = pair_rows(Q);
    const PairRow first = pair_row(rows, Q, 0);
    for (int q = 0; q < Q; ++q) put8(first.m, q, zero8()), put8(first.i, q, zero8()), put8(first.d, q, zero8());
    for (int i = 1; i <= steps; ++i) {
        const PairRow cur = pair_row(rows, Q, i & 1);
        float xEa = 0.0f, xEb = 0.0f;
        forward_row_pair(p, om.length, p.match(a.dsq[i - 1]), p.match(b.dsq[i - 1]), splat2(ca.xB, cb.xB),
                         pair_row(rows, Q, (i - 1) & 1), cur, xEa, xEb);
        const float fa = forward_specials(om, a.length, xEa, ca, *a.fwd, i);
        const float fb = forward_specials(om, b.length, xEb, cb, *b.fwd, i);
        scale_pair_row(cur, Q, fa, fb);
    }
    split_pair_row(pair_row(rows, Q, steps & 1), Q, *a.fwd, steps, *b.fwd, steps);
    score_a = forward_from(om, a.length, a.dsq, a.L, *a.fwd, ca, steps + 1);
    score_b = forward_from(om, b.length, b.dsq, b.L, *b.fwd, cb, steps + 1);
}

void backward_pair(const ForwardProfile& om, const PairTarget& a, const PairTarget& b, float& score_a, float& score_b) {
    const PairProfile p{om.striped.data(), om.segments};
    const int Q = p.Q, steps = std::min(a.L, b.L);
    if (steps < 1) throw Error("paired Backward needs two targets of at least one residue");
    BackwardCarry xa, xb;
    backward_start(om, a.length, a.L, *a.bck, xa, false);
    backward_start(om, b.length, b.L, *b.bck, xb, false);
    float* rows = pair_rows(Q);
    backward_last_pair(p, a, b, xa, xb, pair_row(rows, Q, 0));
    for (int t = 1; t < steps; ++t) {
        const int ia = a.L - t, ib = b.L - t;
        const PairRow cur = pair_row(rows, Q, t & 1);
        float xBa = 0.0f, xBb = 0.0f;
        backward_cells_pair(p, p.match(a.dsq[ia]), p.match(b.dsq[ib]), pair_row(rows, Q, (t - 1) & 1), cur, xBa, xBb);
        backward_specials(xBa, a.length, om, xa);
        backward_specials(xBb, b.length, om, xb);
        const V xEv = splat2(xa.xE, xb.xE);
        backward_deletes_pair(p, shift_down(at8(cur.d, 0) + xEv), xEv, true, cur);
        const float fa = backward_scale(*a.fwd, ia, *a.bck, xa), fb = backward_scale(*b.fwd, ib, *b.bck, xb);
        scale_pair_row(cur, Q, fa, fb);
        set_row_specials(*a.bck, ia, xa);
        set_row_specials(*b.bck, ib, xb);
    }
    const int la = a.L - steps + 1, lb = b.L - steps + 1;  // the last rows done in pairs
    split_pair_row(pair_row(rows, Q, (steps - 1) & 1), Q, *a.bck, la, *b.bck, lb);
    score_a = backward_from(om, a.length, a.dsq, a.L, *a.fwd, *a.bck, xa, la - 1);
    score_b = backward_from(om, b.length, b.dsq, b.L, *b.fwd, *b.bck, xb, lb - 1);
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else

bool paired_rows_available() { return false; }
void forward_pair(const ForwardProfile&, const PairTarget&, const PairTarget&, float&, float&) {
    throw Error("paired Forward rows need an x86-64 build");
}
void backward_pair(const ForwardProfile&, const PairTarget&, const PairTarget&, float&, float&) {
    throw Error("paired Backward rows need an x86-64 build");
}

#endif

}  // namespace alignscope::profile
