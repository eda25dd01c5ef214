// Several targets' Forward and Backward in one instruction stream: target g
// in the four lanes of half g % 2 of 256-bit register g / 2 (two targets in
// one register, four in two, eight in four), each half doing exactly the
// four-lane striped recurrence of forward_backward.cpp (same products, same
// sums, same order; a half that needs no rescaling is multiplied by 1, a half
// whose D->D passes have stopped adds 0). A group runs while all its targets
// have rows left; then the targets still going regroup (three go as four,
// five to seven as eight, the last one's lanes repeated into a scratch
// matrix), and the last one finishes alone in the four-lane code.
// Independent targets hide the latency of the D->D chains, which bounds the
// four-lane code.
#include "forward_pair.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>

#include <algorithm>
#include <array>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#define ALIGNSCOPE_PAIRED_ROWS 1
#include <immintrin.h>
#else
#define ALIGNSCOPE_PAIRED_ROWS 0
#endif

namespace alignscope::profile {

namespace {

void set_row_specials(DpMatrix& dp, int i, const BackwardCarry& x) {
    dp.x(i, DpMatrix::E) = x.xE;
    dp.x(i, DpMatrix::N) = x.xN;
    dp.x(i, DpMatrix::J) = x.xJ;
    dp.x(i, DpMatrix::B) = x.xB;
    dp.x(i, DpMatrix::C) = x.xC;
}

// The order in which a group's targets run: longest first (a stable order,
// so that equal lengths keep theirs).
std::array<int, kGroupTargets> longest_first(const PairTarget* t, int n) {
    std::array<int, kGroupTargets> order{};
    for (int j = 0; j < n; ++j) order[static_cast<std::size_t>(j)] = j;
    std::stable_sort(order.begin(), order.begin() + n, [&](int a, int b) { return t[a].L > t[b].L; });
    return order;
}

}  // namespace

#if ALIGNSCOPE_PAIRED_ROWS

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

// H registers of eight floats: 2H targets.
template <int H>
struct V {
    __m256 r[H];
};
template <int H>
inline V<H> operator+(V<H> a, V<H> b) {
    for (int h = 0; h < H; ++h) a.r[h] = _mm256_add_ps(a.r[h], b.r[h]);
    return a;
}
template <int H>
inline V<H> operator*(V<H> a, V<H> b) {
    for (int h = 0; h < H; ++h) a.r[h] = _mm256_mul_ps(a.r[h], b.r[h]);
    return a;
}
template <int H>
inline V<H> zero() {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = _mm256_setzero_ps();
    return a;
}
inline __m256 both(__m128 a, __m128 b) { return _mm256_insertf128_ps(_mm256_castps128_ps256(a), b, 1); }
// Target g's value in all four lanes of its half.
template <int H>
inline V<H> splat(const float* x) {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = both(_mm_set1_ps(x[2 * h]), _mm_set1_ps(x[2 * h + 1]));
    return a;
}
// In each half: [a0 a1 a2 a3] -> [0 a0 a1 a2] and [a0 a1 a2 a3] -> [a1 a2 a3 0].
template <int H>
inline V<H> shift_up(V<H> a) {
    for (int h = 0; h < H; ++h)
        a.r[h] = _mm256_blend_ps(_mm256_shuffle_ps(a.r[h], a.r[h], _MM_SHUFFLE(2, 1, 0, 0)), _mm256_setzero_ps(), 0x11);
    return a;
}
template <int H>
inline V<H> shift_down(V<H> a) {
    for (int h = 0; h < H; ++h)
        a.r[h] = _mm256_blend_ps(_mm256_shuffle_ps(a.r[h], a.r[h], _MM_SHUFFLE(0, 3, 2, 1)), _mm256_setzero_ps(), 0x88);
    return a;
}
// Each target's (t0 + t1) + (t2 + t3), as the four-lane code sums.
template <int H>
inline void half_sums(V<H> a, float* s) {
    for (int h = 0; h < H; ++h) {
        alignas(32) float t[8];
        _mm256_store_ps(t, a.r[h]);
        s[2 * h] = (t[0] + t[1]) + (t[2] + t[3]);
        s[2 * h + 1] = (t[4] + t[5]) + (t[6] + t[7]);
    }
}

// The profile's striped arrays; a transition segment goes to both halves
// of a register in one load (a 128-bit broadcast), emissions per target.
struct GroupProfile {
    const float* base;
    int Q;
    template <int H>
    V<H> at(int array, int q) const {
        const __m256 x =
            _mm256_broadcast_ps(reinterpret_cast<const __m128*>(base + static_cast<std::size_t>((array * Q + q) * 4)));
        V<H> a;
        for (int h = 0; h < H; ++h) a.r[h] = x;
        return a;
    }
    const float* match(int x) const { return base + static_cast<std::size_t>(((Match + x) * Q) * 4); }
};
GroupProfile group_profile(const ForwardProfile& om) { return {om.striped.data(), om.segments}; }
template <int H>
inline V<H> emission(const float* const* e, int q) {
    V<H> a;
    for (int h = 0; h < H; ++h)
        a.r[h] = both(_mm_loadu_ps(e[2 * h] + static_cast<std::size_t>(q) * 4),
                      _mm_loadu_ps(e[2 * h + 1] + static_cast<std::size_t>(q) * 4));
    return a;
}

// Two rows of grouped M, I and D per worker thread: segment q of a row is
// 8H floats.
struct GroupRow {
    float *m, *i, *d;
};
template <int H>
struct GroupRows {
    int Q;
    float* base;
    explicit GroupRows(int segments) : Q(segments) {
        thread_local std::vector<float> rows;
        const std::size_t n = static_cast<std::size_t>(Q) * 8 * H * 3 * 2;
        if (rows.size() < n) rows.resize(n);
        base = rows.data();
    }
    GroupRow row(int slot) const {
        const std::size_t w = static_cast<std::size_t>(Q) * 8 * H;
        float* r = base + static_cast<std::size_t>(slot & 1) * 3 * w;
        return {r, r + w, r + 2 * w};
    }
};
template <int H>
inline V<H> at(const float* row, int q) {
    V<H> a;
    for (int h = 0; h < H; ++h) a.r[h] = _mm256_loadu_ps(row + static_cast<std::size_t>(q * H + h) * 8);
    return a;
}
template <int H>
inline void put(float* row, int q, V<H> a) {
    for (int h = 0; h < H; ++h) _mm256_storeu_ps(row + static_cast<std::size_t>(q * H + h) * 8, a.r[h]);
}

template <int H>
void scale_group_row(GroupRow r, int Q, const float* f) {
    bool all_one = true;
    for (int g = 0; g < 2 * H; ++g) all_one = all_one && f[g] == 1.0f;
    if (all_one) return;
    const V<H> fv = splat<H>(f);
    for (int q = 0; q < Q; ++q) {
        put(r.m, q, at<H>(r.m, q) * fv);
        put(r.d, q, at<H>(r.d, q) * fv);
        put(r.i, q, at<H>(r.i, q) * fv);
    }
}

// Where each target's row lives in its own matrix.
struct MatrixRows {
    float* m[kGroupTargets];
    float* i[kGroupTargets];
    float* d[kGroupTargets];
};
template <int H>
MatrixRows matrix_rows(DpMatrix* const* dp, const int* rows) {
    MatrixRows r{};
    for (int g = 0; g < 2 * H; ++g) {
        const std::size_t o = dp[g]->row(rows[g]);
        r.m[g] = dp[g]->mmx.data() + o;
        r.i[g] = dp[g]->imx.data() + o;
        r.d[g] = dp[g]->dmx.data() + o;
    }
    return r;
}

// Each target's row of its matrix into the group's row, and back.
template <int H>
void pack_group_row(const MatrixRows& from, int Q, GroupRow to) {
    float* const out[3] = {to.m, to.i, to.d};
    float* const* in[3] = {from.m, from.i, from.d};
    for (int s = 0; s < 3; ++s)
        for (int q = 0; q < Q; ++q)
            for (int h = 0; h < H; ++h)
                _mm256_storeu_ps(out[s] + static_cast<std::size_t>(q * H + h) * 8,
                                 both(_mm_loadu_ps(in[s][2 * h] + static_cast<std::size_t>(q) * 4),
                                      _mm_loadu_ps(in[s][2 * h + 1] + static_cast<std::size_t>(q) * 4)));
}
// Without `deletes`, D stays behind (a full matrix's rows before the last
// one of a stage: nothing reads their D but the next row, from the group).
template <int H>
void split_group_row(GroupRow from, int Q, const MatrixRows& to, bool deletes = true) {
    const float* const in[3] = {from.m, from.i, from.d};
    float* const* out[3] = {to.m, to.i, to.d};
    for (int s = 0; s < (deletes ? 3 : 2); ++s)
        for (int q = 0; q < Q; ++q)
            for (int h = 0; h < H; ++h) {
                const __m256 v = _mm256_loadu_ps(in[s] + static_cast<std::size_t>(q * H + h) * 8);
                _mm_storeu_ps(out[s][2 * h] + static_cast<std::size_t>(q) * 4, _mm256_castps256_ps128(v));
                _mm_storeu_ps(out[s][2 * h + 1] + static_cast<std::size_t>(q) * 4, _mm256_extractf128_ps(v, 1));
            }
}

// Forward's D->D passes; a half whose pass changed nothing (models of 100
// nodes or more) adds zeros from then on, as if it had stopped.
template <int H>
void forward_deletes_group(const GroupProfile& p, int M, V<H> dcv, float* d) {
    const int Q = p.Q;
    dcv = shift_up(dcv);
    put(d, 0, zero<H>());
    for (int q = 0; q < Q; ++q) {
        const V<H> sum = dcv + at<H>(d, q);
        put(d, q, sum);
        dcv = sum * p.at<H>(DD, q);
    }
    V<H> live;
    for (int h = 0; h < H; ++h) live.r[h] = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int j = 1; j < 4; ++j) {
        dcv = shift_up(dcv);
        for (int h = 0; h < H; ++h) dcv.r[h] = _mm256_and_ps(dcv.r[h], live.r[h]);
        V<H> changed = zero<H>();
        for (int q = 0; q < Q; ++q) {
            const V<H> old = at<H>(d, q);
            const V<H> sum = dcv + old;
            for (int h = 0; h < H; ++h)
                changed.r[h] = _mm256_or_ps(changed.r[h], _mm256_cmp_ps(sum.r[h], old.r[h], _CMP_GT_OQ));
            put(d, q, sum);
            dcv = dcv * p.at<H>(DD, q);
        }
        if (M < 100) continue;
        int any_live = 0;
        for (int h = 0; h < H; ++h) {
            const int bits = _mm256_movemask_ps(changed.r[h]);
            const __m128 keep_a = (bits & 0x0F) ? _mm_castsi128_ps(_mm_set1_epi32(-1)) : _mm_setzero_ps();
            const __m128 keep_b = (bits & 0xF0) ? _mm_castsi128_ps(_mm_set1_epi32(-1)) : _mm_setzero_ps();
            live.r[h] = _mm256_and_ps(live.r[h], both(keep_a, keep_b));
            any_live |= _mm256_movemask_ps(live.r[h]);
        }
        if (any_live == 0) break;
    }
}

template <int H>
void forward_row_group(const GroupProfile& p, int M, const float* const* e, V<H> xBv, GroupRow prev, GroupRow cur,
                       float* xE) {
    const int Q = p.Q;
    V<H> dcv = zero<H>(), xEv = zero<H>();
    V<H> mpv = shift_up(at<H>(prev.m, Q - 1));
    V<H> dpv = shift_up(at<H>(prev.d, Q - 1));
    V<H> ipv = shift_up(at<H>(prev.i, Q - 1));
    for (int q = 0; q < Q; ++q) {
        V<H> sv = xBv * p.at<H>(BM, q);
        sv = sv + mpv * p.at<H>(MM, q);
        sv = sv + ipv * p.at<H>(IM, q);
        sv = sv + dpv * p.at<H>(DM, q);
        sv = sv * emission<H>(e, q);
        xEv = xEv + sv;
        mpv = at<H>(prev.m, q);
        dpv = at<H>(prev.d, q);
        ipv = at<H>(prev.i, q);
        put(cur.m, q, sv);
        put(cur.d, q, dcv);
        dcv = sv * p.at<H>(MD, q);
        put(cur.i, q, mpv * p.at<H>(MI, q) + ipv * p.at<H>(II, q));
    }
    forward_deletes_group(p, M, dcv, cur.d);
    for (int q = 0; q < Q; ++q) xEv = at<H>(cur.d, q) + xEv;
    half_sums(xEv, xE);
}

// Backward's D->D passes (all four), then M->D, as backward_deletes().
template <int H>
void backward_deletes_group(const GroupProfile& p, V<H> first, V<H> xEv, bool add_end, GroupRow cur) {
    const int Q = p.Q;
    V<H> dpv = first, dcv = zero<H>();
    for (int q = Q - 1; q >= 0; --q) {
        dcv = dpv * p.at<H>(DD, q);
        dpv = add_end ? at<H>(cur.d, q) + (dcv + xEv) : at<H>(cur.d, q) + dcv;
        put(cur.d, q, dpv);
        if (add_end) put(cur.m, q, at<H>(cur.m, q) + xEv);
    }
    for (int j = 1; j < 4; ++j) {
        dcv = shift_down(dcv);
        for (int q = Q - 1; q >= 0; --q) {
            dcv = dcv * p.at<H>(DD, q);
            put(cur.d, q, at<H>(cur.d, q) + dcv);
        }
    }
    dcv = shift_down(at<H>(cur.d, 0));
    for (int q = Q - 1; q >= 0; --q) {
        const V<H> d = at<H>(cur.d, q);
        put(cur.m, q, at<H>(cur.m, q) + dcv * p.at<H>(MD, q));
        dcv = d;
    }
}

// The M, I and D of a Backward row from the row below; each target's B sum
// into xB.
template <int H>
void backward_cells_group(const GroupProfile& p, const float* const* e, GroupRow next, GroupRow cur, float* xB) {
    const int Q = p.Q;
    V<H> tmmv = shift_down(p.at<H>(MM, 0)), timv = shift_down(p.at<H>(IM, 0)), tdmv = shift_down(p.at<H>(DM, 0));
    V<H> mpv = shift_down(at<H>(next.m, 0) * emission<H>(e, 0));
    V<H> xBv = zero<H>();
    for (int q = Q - 1; q >= 0; --q) {
        const V<H> ipv = at<H>(next.i, q);
        put(cur.i, q, (ipv * p.at<H>(II, q)) + (mpv * timv));
        put(cur.d, q, mpv * tdmv);
        const V<H> mcv = (ipv * p.at<H>(MI, q)) + (mpv * tmmv);
        mpv = at<H>(next.m, q) * emission<H>(e, q);
        put(cur.m, q, mcv);
        tdmv = p.at<H>(DM, q);
        timv = p.at<H>(IM, q);
        tmmv = p.at<H>(MM, q);
        xBv = xBv + mpv * p.at<H>(BM, q);
    }
    half_sums(xBv, xB);
}

// Lanes (targets side by side, 2 per register) of a stage of n targets.
int lanes_for(int n) { return n <= 2 ? 2 : n <= 4 ? 4 : 8; }

// The targets of one stage of a group: 2H lanes; a lane past the targets
// repeats the last one, reading its matrices and writing to a scratch one.
struct StageLanes {
    const PairTarget* t[kGroupTargets];
    DpMatrix* out[kGroupTargets];  // the matrix the lane writes (Forward's, or Backward's)
    int slot[kGroupTargets];       // the lane's target in the group (its carry)
};

// Forward rows from..to of a stage's targets (rows past a target's end are
// not asked for): the previous row from each target's matrix, every row to
// the matrices when `full`, else the last one.
template <int H>
void forward_stage(const ForwardProfile& om, const GroupProfile& p, const StageLanes& s, ForwardCarry* carry, int from,
                   int to, bool full) {
    const int Q = p.Q;
    const GroupRows<H> rows(Q);
    int at_row[kGroupTargets];
    for (int g = 0; g < 2 * H; ++g) at_row[g] = from - 1;
    pack_group_row<H>(matrix_rows<H>(s.out, at_row), Q, rows.row(from - 1));
    for (int i = from; i <= to; ++i) {
        const GroupRow cur = rows.row(i);
        const float* e[kGroupTargets];
        float xB[kGroupTargets], xE[kGroupTargets], f[kGroupTargets];
        for (int g = 0; g < 2 * H; ++g) {
            e[g] = p.match(s.t[g]->dsq[i - 1]);
            xB[g] = carry[s.slot[g]].xB;
        }
        forward_row_group<H>(p, om.length, e, splat<H>(xB), rows.row(i - 1), cur, xE);
        for (int g = 0; g < 2 * H; ++g)
            f[g] = forward_specials(om, s.t[g]->length, xE[g], carry[s.slot[g]], *s.out[g], i);
        scale_group_row<H>(cur, Q, f);
        if (full || i == to) {
            for (int g = 0; g < 2 * H; ++g) at_row[g] = i;
            split_group_row<H>(cur, Q, matrix_rows<H>(s.out, at_row), i == to);
        }
    }
}

// Backward steps from..to (step t is row L - t of each target, rows 1 and
// up); the row below from each target's matrix, rows back as Forward's.
template <int H>
void backward_stage(const ForwardProfile& om, const GroupProfile& p, const StageLanes& s, BackwardCarry* carry,
                    int from, int to, bool full) {
    const int Q = p.Q;
    const GroupRows<H> rows(Q);
    int at_row[kGroupTargets];
    for (int g = 0; g < 2 * H; ++g) at_row[g] = s.t[g]->L - from + 1;
    pack_group_row<H>(matrix_rows<H>(s.out, at_row), Q, rows.row(from - 1));
    for (int step = from; step <= to; ++step) {
        const GroupRow cur = rows.row(step);
        const float* e[kGroupTargets];
        float xB[kGroupTargets], xE[kGroupTargets], f[kGroupTargets];
        for (int g = 0; g < 2 * H; ++g) e[g] = p.match(s.t[g]->dsq[s.t[g]->L - step]);
        backward_cells_group<H>(p, e, rows.row(step - 1), cur, xB);
        for (int g = 0; g < 2 * H; ++g) {
            BackwardCarry& x = carry[s.slot[g]];
            backward_specials(xB[g], s.t[g]->length, om, x);
            xE[g] = x.xE;
        }
        const V<H> xEv = splat<H>(xE);
        backward_deletes_group<H>(p, shift_down(at<H>(cur.d, 0) + xEv), xEv, true, cur);
        for (int g = 0; g < 2 * H; ++g) {
            const int i = s.t[g]->L - step;
            f[g] = backward_scale(*s.t[g]->fwd, i, *s.out[g], carry[s.slot[g]]);
        }
        scale_group_row<H>(cur, Q, f);
        for (int g = 0; g < 2 * H; ++g) set_row_specials(*s.out[g], s.t[g]->L - step, carry[s.slot[g]]);
        if (full || step == to) {
            for (int g = 0; g < 2 * H; ++g) at_row[g] = s.t[g]->L - step;
            split_group_row<H>(cur, Q, matrix_rows<H>(s.out, at_row), step == to);
        }
    }
}

// The lanes of a stage over the group's targets active[0..n-1] (2 to 8):
// two lanes for two, four for three or four, eight for five to eight. Lanes
// past n repeat target active[n-1] into `spare` (all of them: they compute
// the same values), their carries in slots kGroupTargets and up.
StageLanes stage_lanes(const PairTarget* t, const int* active, int n, bool backward, DpMatrix& spare) {
    StageLanes s{};
    const int lanes = lanes_for(n);
    for (int g = 0; g < lanes; ++g) {
        const int j = active[std::min(g, n - 1)];
        s.t[g] = &t[j];
        s.out[g] = g < n ? (backward ? t[j].bck : t[j].fwd) : &spare;
        s.slot[g] = g < n ? j : kGroupTargets + g - n;
    }
    return s;
}

// The scratch matrix of repeated lanes: the same size, the same row below
// (a stage reads it from the lane's own matrix), the same carry.
void prepare_spare(const DpMatrix& like, int row, DpMatrix& spare) {
    spare.resize(like.M, like.L, like.full);
    spare.total_scale = like.total_scale;
    const std::size_t a = like.row(row), w = like.width();
    std::copy(like.mmx.begin() + static_cast<std::ptrdiff_t>(a), like.mmx.begin() + static_cast<std::ptrdiff_t>(a + w),
              spare.mmx.begin() + static_cast<std::ptrdiff_t>(spare.row(row)));
    std::copy(like.imx.begin() + static_cast<std::ptrdiff_t>(a), like.imx.begin() + static_cast<std::ptrdiff_t>(a + w),
              spare.imx.begin() + static_cast<std::ptrdiff_t>(spare.row(row)));
    std::copy(like.dmx.begin() + static_cast<std::ptrdiff_t>(a), like.dmx.begin() + static_cast<std::ptrdiff_t>(a + w),
              spare.dmx.begin() + static_cast<std::ptrdiff_t>(spare.row(row)));
}

DpMatrix& spare_matrix() {
    thread_local DpMatrix spare;
    return spare;
}

void forward_grouped(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores) {
    ForwardCarry carry[2 * kGroupTargets];
    for (int j = 0; j < n; ++j) forward_start(om, t[j].length, t[j].L, *t[j].fwd, carry[j], full);
    const auto order = longest_first(t, n);
    const GroupProfile p = group_profile(om);
    int row = 1, active = n;
    while (true) {
        while (active > 0 && t[order[static_cast<std::size_t>(active - 1)]].L < row) --active;
        if (active < 2) break;
        const int last = order[static_cast<std::size_t>(active - 1)];
        const int to = t[last].L;  // the shortest of the active targets
        DpMatrix& spare = spare_matrix();
        const StageLanes s = stage_lanes(t, order.data(), active, false, spare);
        const int lanes = lanes_for(active);
        if (lanes > active) prepare_spare(*t[last].fwd, row - 1, spare);
        for (int g = active; g < lanes; ++g) carry[kGroupTargets + g - active] = carry[last];
        if (lanes == 2) forward_stage<1>(om, p, s, carry, row, to, full);
        else if (lanes == 4)
            forward_stage<2>(om, p, s, carry, row, to, full);
        else
            forward_stage<4>(om, p, s, carry, row, to, full);
        row = to + 1;
    }
    for (int j = 0; j < n; ++j) {
        if (t[j].L >= row) scores[j] = forward_from(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, carry[j], row);
        else
            scores[j] = forward_score_of(t[j].length, carry[j].xC, t[j].fwd->total_scale, t[j].L);
    }
}

void backward_grouped(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores) {
    BackwardCarry carry[2 * kGroupTargets];
    for (int j = 0; j < n; ++j) {
        backward_start(om, t[j].length, t[j].L, *t[j].bck, carry[j], full);
        if (t[j].L > 0) backward_last_row(om, *t[j].fwd, *t[j].bck, carry[j]);
    }
    const auto order = longest_first(t, n);
    const GroupProfile p = group_profile(om);
    int step = 1, active = n;  // step s: row L - s of each target
    while (true) {
        while (active > 0 && t[order[static_cast<std::size_t>(active - 1)]].L - step < 1) --active;
        if (active < 2) break;
        const int last = order[static_cast<std::size_t>(active - 1)];
        const int to = t[last].L - 1;  // the shortest reaches row 1
        DpMatrix& spare = spare_matrix();
        const StageLanes s = stage_lanes(t, order.data(), active, true, spare);
        const int lanes = lanes_for(active);
        if (lanes > active) prepare_spare(*t[last].bck, t[last].L - step + 1, spare);
        for (int g = active; g < lanes; ++g) carry[kGroupTargets + g - active] = carry[last];
        if (lanes == 2) backward_stage<1>(om, p, s, carry, step, to, full);
        else if (lanes == 4)
            backward_stage<2>(om, p, s, carry, step, to, full);
        else
            backward_stage<4>(om, p, s, carry, step, to, full);
        step = to + 1;
    }
    for (int j = 0; j < n; ++j)
        scores[j] = backward_from(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, *t[j].bck, carry[j],
                                  std::max(t[j].L - step, 0));
}

}  // namespace

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

bool paired_rows_available() {
    static const bool available = __builtin_cpu_supports("avx");
    return available;
}

#else

bool paired_rows_available() { return false; }

#endif

void forward_group(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores) {
    if (n < 1 || n > kGroupTargets) throw Error("grouped Forward takes one to eight targets");
#if ALIGNSCOPE_PAIRED_ROWS
    if (n > 1 && paired_rows_available()) return forward_grouped(om, t, n, full, scores);
#endif
    for (int j = 0; j < n; ++j) scores[j] = forward(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, full);
}

void backward_group(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores) {
    if (n < 1 || n > kGroupTargets) throw Error("grouped Backward takes one to eight targets");
#if ALIGNSCOPE_PAIRED_ROWS
    if (n > 1 && paired_rows_available()) return backward_grouped(om, t, n, full, scores);
#endif
    for (int j = 0; j < n; ++j) scores[j] = backward(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, *t[j].bck, full);
}

}  // namespace alignscope::profile
