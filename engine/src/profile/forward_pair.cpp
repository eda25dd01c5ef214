// Several targets' Forward and Backward in one instruction stream: each
// target in four lanes of a wide register (two targets in a 256-bit AVX
// register, four in a 512-bit AVX-512 one; up to eight targets in several
// registers: forward_group_rows.hpp), each doing exactly the four-lane
// striped recurrence of forward_backward.cpp (same products, same sums, same
// order; a target that needs no rescaling is multiplied by 1, one whose D->D
// passes have stopped adds 0). A group runs while all its targets have rows
// left; then the targets still going regroup (three go as four, five to
// seven as eight, the last one's lanes repeated into a scratch matrix), and
// the last one finishes alone in the four-lane code. Independent targets
// hide the latency of the D->D chains, which bounds the four-lane code.
#include "forward_pair.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>

#include <algorithm>
#include <array>
#include <cstdlib>
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

namespace {

enum Array { BM = 0, MM, IM, DM, MD, MI, II, DD, Match };

struct GroupRow {
    float *m, *i, *d;
};
// Where each target's row lives in its own matrix.
struct MatrixRows {
    float* m[kGroupTargets];
    float* i[kGroupTargets];
    float* d[kGroupTargets];
};
// The targets of one stage of a group; a lane past the targets repeats the
// last one, reading its matrices and writing to a scratch one.
struct StageLanes {
    const PairTarget* t[kGroupTargets];
    DpMatrix* out[kGroupTargets];  // the matrix the lane writes (Forward's, or Backward's)
    int slot[kGroupTargets];       // the lane's target in the group (its carry)
};

}  // namespace

// AVX (two targets a register) and AVX-512 (four) for these sections only
// (the rest of the engine stays SSE2): GCC takes its target pragma, clang an
// attribute applied to every function there.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx")
#endif
namespace avx {
namespace {
using Reg = __m256;
constexpr int T = 2;
inline Reg r_add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
inline Reg r_mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
inline Reg r_zero() { return _mm256_setzero_ps(); }
inline Reg r_load(const float* p) { return _mm256_loadu_ps(p); }
inline void r_store(float* p, Reg a) { _mm256_storeu_ps(p, a); }
inline Reg both(__m128 a, __m128 b) { return _mm256_insertf128_ps(_mm256_castps128_ps256(a), b, 1); }
// In each target's lanes: [a0 a1 a2 a3] -> [0 a0 a1 a2], and -> [a1 a2 a3 0].
inline Reg r_shift_up(Reg a) {
    return _mm256_blend_ps(_mm256_shuffle_ps(a, a, _MM_SHUFFLE(2, 1, 0, 0)), _mm256_setzero_ps(), 0x11);
}
inline Reg r_shift_down(Reg a) {
    return _mm256_blend_ps(_mm256_shuffle_ps(a, a, _MM_SHUFFLE(0, 3, 2, 1)), _mm256_setzero_ps(), 0x88);
}
inline Reg r_broadcast4(const float* p) { return _mm256_broadcast_ps(reinterpret_cast<const __m128*>(p)); }
inline Reg r_gather(const float* const* p, std::size_t off) {
    return both(_mm_loadu_ps(p[0] + off), _mm_loadu_ps(p[1] + off));
}
inline void r_scatter(Reg v, float* const* p, std::size_t off) {
    _mm_storeu_ps(p[0] + off, _mm256_castps256_ps128(v));
    _mm_storeu_ps(p[1] + off, _mm256_extractf128_ps(v, 1));
}
inline Reg r_splat(const float* x) { return both(_mm_set1_ps(x[0]), _mm_set1_ps(x[1])); }
inline void r_sums(Reg a, float* s) {
    alignas(32) float t[8];
    _mm256_store_ps(t, a);
    s[0] = (t[0] + t[1]) + (t[2] + t[3]);
    s[1] = (t[4] + t[5]) + (t[6] + t[7]);
}
using Mask = __m256;
inline Mask m_none() { return _mm256_setzero_ps(); }
inline Mask m_or_gt(Mask m, Reg a, Reg b) { return _mm256_or_ps(m, _mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
inline int m_target_bits(Mask m) {
    const int bits = _mm256_movemask_ps(m);
    return ((bits & 0x0F) ? 1 : 0) | ((bits & 0xF0) ? 2 : 0);
}
inline Reg r_keep(Reg a, int bits) {
    const __m128 ones = _mm_castsi128_ps(_mm_set1_epi32(-1)), none = _mm_setzero_ps();
    return _mm256_and_ps(a, both((bits & 1) ? ones : none, (bits & 2) ? ones : none));
}
#include "forward_group_rows.hpp"  // (once per instruction set)
}  // namespace
}  // namespace avx
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif
namespace avx512 {
namespace {
using Reg = __m512;
constexpr int T = 4;
// Each product and sum rounded on its own: the plain intrinsics are vector
// arithmetic that GCC contracts into fused multiply-adds (AVX-512 has them),
// which round once and would change the results.
inline Reg r_add(Reg a, Reg b) { return _mm512_maskz_add_round_ps(0xFFFF, a, b, _MM_FROUND_CUR_DIRECTION); }
inline Reg r_mul(Reg a, Reg b) { return _mm512_maskz_mul_round_ps(0xFFFF, a, b, _MM_FROUND_CUR_DIRECTION); }
inline Reg r_zero() { return _mm512_setzero_ps(); }
inline Reg r_load(const float* p) { return _mm512_loadu_ps(p); }
inline void r_store(float* p, Reg a) { _mm512_storeu_ps(p, a); }
inline Reg r_shift_up(Reg a) { return _mm512_maskz_shuffle_ps(0xEEEE, a, a, _MM_SHUFFLE(2, 1, 0, 0)); }
inline Reg r_shift_down(Reg a) { return _mm512_maskz_shuffle_ps(0x7777, a, a, _MM_SHUFFLE(0, 3, 2, 1)); }
inline Reg r_broadcast4(const float* p) { return _mm512_maskz_broadcast_f32x4(0xFFFF, _mm_loadu_ps(p)); }
inline Reg four(__m128 a, __m128 b, __m128 c, __m128 d) {
    Reg v = _mm512_zextps128_ps512(a);
    v = _mm512_insertf32x4(v, b, 1);
    v = _mm512_insertf32x4(v, c, 2);
    return _mm512_insertf32x4(v, d, 3);
}
inline Reg r_gather(const float* const* p, std::size_t off) {
    return four(_mm_loadu_ps(p[0] + off), _mm_loadu_ps(p[1] + off), _mm_loadu_ps(p[2] + off), _mm_loadu_ps(p[3] + off));
}
inline void r_scatter(Reg v, float* const* p, std::size_t off) {
    // (The zero-masked forms: GCC 12's plain ones warn of an undefined source.)
    _mm_storeu_ps(p[0] + off, _mm512_maskz_extractf32x4_ps(0xF, v, 0));
    _mm_storeu_ps(p[1] + off, _mm512_maskz_extractf32x4_ps(0xF, v, 1));
    _mm_storeu_ps(p[2] + off, _mm512_maskz_extractf32x4_ps(0xF, v, 2));
    _mm_storeu_ps(p[3] + off, _mm512_maskz_extractf32x4_ps(0xF, v, 3));
}
inline Reg r_splat(const float* x) {
    return four(_mm_set1_ps(x[0]), _mm_set1_ps(x[1]), _mm_set1_ps(x[2]), _mm_set1_ps(x[3]));
}
inline void r_sums(Reg a, float* s) {
    alignas(64) float t[16];
    _mm512_store_ps(t, a);
    for (int g = 0; g < 4; ++g) s[g] = (t[4 * g] + t[4 * g + 1]) + (t[4 * g + 2] + t[4 * g + 3]);
}
using Mask = __mmask16;
inline Mask m_none() { return 0; }
inline Mask m_or_gt(Mask m, Reg a, Reg b) { return static_cast<Mask>(m | _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)); }
inline int m_target_bits(Mask m) {
    int bits = 0;
    for (int g = 0; g < 4; ++g) bits |= ((m >> (4 * g)) & 0xF) ? (1 << g) : 0;
    return bits;
}
inline Reg r_keep(Reg a, int bits) {
    int lanes = 0;
    for (int g = 0; g < 4; ++g) lanes |= (bits & (1 << g)) ? (0xF << (4 * g)) : 0;
    return _mm512_maskz_mov_ps(static_cast<__mmask16>(lanes), a);
}
#include "forward_group_rows.hpp"  // (once per instruction set)
}  // namespace
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace {

// AVX-512 where the CPU has it; ALIGNSCOPE_NO_AVX512 set in the environment
// keeps the AVX registers (the same results; for comparing their speeds).
bool avx512_rows() {
    static const bool available = __builtin_cpu_supports("avx512f") && std::getenv("ALIGNSCOPE_NO_AVX512") == nullptr;
    return available;
}

// Lanes (targets side by side) of a stage of n targets.
int lanes_for(int n) { return n <= 2 ? 2 : n <= 4 ? 4 : 8; }

// One stage on the widest registers the CPU has: eight lanes in four AVX
// registers or two AVX-512 ones, four in two or one, two in one AVX register.
void run_forward_stage(int lanes, const ForwardProfile& om, const StageLanes& s, ForwardCarry* carry, int from, int to,
                       bool full) {
    if (lanes == 2) avx::forward_stage<1>(om, s, carry, from, to, full);
    else if (lanes == 4 && avx512_rows())
        avx512::forward_stage<1>(om, s, carry, from, to, full);
    else if (lanes == 4)
        avx::forward_stage<2>(om, s, carry, from, to, full);
    else if (avx512_rows())
        avx512::forward_stage<2>(om, s, carry, from, to, full);
    else
        avx::forward_stage<4>(om, s, carry, from, to, full);
}
void run_backward_stage(int lanes, const ForwardProfile& om, const StageLanes& s, BackwardCarry* carry, int from,
                        int to, bool full) {
    if (lanes == 2) avx::backward_stage<1>(om, s, carry, from, to, full);
    else if (lanes == 4 && avx512_rows())
        avx512::backward_stage<1>(om, s, carry, from, to, full);
    else if (lanes == 4)
        avx::backward_stage<2>(om, s, carry, from, to, full);
    else if (avx512_rows())
        avx512::backward_stage<2>(om, s, carry, from, to, full);
    else
        avx::backward_stage<4>(om, s, carry, from, to, full);
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
    spare.resize(like.M, like.L, like.full, like.all_deletes);
    spare.total_scale = like.total_scale;
    const auto w = static_cast<std::ptrdiff_t>(like.width());
    const auto a = static_cast<std::ptrdiff_t>(like.row(row)), ad = static_cast<std::ptrdiff_t>(like.drow(row));
    std::copy(like.mmx.begin() + a, like.mmx.begin() + a + w,
              spare.mmx.begin() + static_cast<std::ptrdiff_t>(spare.row(row)));
    std::copy(like.imx.begin() + a, like.imx.begin() + a + w,
              spare.imx.begin() + static_cast<std::ptrdiff_t>(spare.row(row)));
    std::copy(like.dmx.begin() + ad, like.dmx.begin() + ad + w,
              spare.dmx.begin() + static_cast<std::ptrdiff_t>(spare.drow(row)));
}

DpMatrix& spare_matrix() {
    thread_local DpMatrix spare;
    return spare;
}

void forward_grouped(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores, bool all_deletes) {
    ForwardCarry carry[2 * kGroupTargets];
    for (int j = 0; j < n; ++j) forward_start(om, t[j].length, t[j].L, *t[j].fwd, carry[j], full, all_deletes);
    const auto order = longest_first(t, n);
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
        run_forward_stage(lanes, om, s, carry, row, to, full);
        row = to + 1;
    }
    for (int j = 0; j < n; ++j) {
        if (t[j].L >= row) scores[j] = forward_from(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, carry[j], row);
        else
            scores[j] = forward_score_of(t[j].length, carry[j].xC, t[j].fwd->total_scale, t[j].L);
    }
}

void backward_grouped(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores,
                      bool all_deletes) {
    BackwardCarry carry[2 * kGroupTargets];
    for (int j = 0; j < n; ++j) {
        backward_start(om, t[j].length, t[j].L, *t[j].bck, carry[j], full, all_deletes);
        if (t[j].L > 0) backward_last_row(om, *t[j].fwd, *t[j].bck, carry[j]);
    }
    const auto order = longest_first(t, n);
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
        run_backward_stage(lanes, om, s, carry, step, to, full);
        step = to + 1;
    }
    for (int j = 0; j < n; ++j)
        scores[j] = backward_from(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, *t[j].bck, carry[j],
                                  std::max(t[j].L - step, 0));
}

}  // namespace

bool paired_rows_available() {
    static const bool available = __builtin_cpu_supports("avx");
    return available;
}

#else

bool paired_rows_available() { return false; }

#endif

void forward_group(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores, bool all_deletes) {
    if (n < 1 || n > kGroupTargets) throw Error("grouped Forward takes one to eight targets");
#if ALIGNSCOPE_PAIRED_ROWS
    if (n > 1 && paired_rows_available()) return forward_grouped(om, t, n, full, scores, all_deletes);
#endif
    for (int j = 0; j < n; ++j) scores[j] = forward(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, full, all_deletes);
}

void backward_group(const ForwardProfile& om, const PairTarget* t, int n, bool full, float* scores, bool all_deletes) {
    if (n < 1 || n > kGroupTargets) throw Error("grouped Backward takes one to eight targets");
#if ALIGNSCOPE_PAIRED_ROWS
    if (n > 1 && paired_rows_available()) return backward_grouped(om, t, n, full, scores, all_deletes);
#endif
    for (int j = 0; j < n; ++j)
        scores[j] = backward(om, t[j].length, t[j].dsq, t[j].L, *t[j].fwd, *t[j].bck, full, all_deletes);
}

}  // namespace alignscope::profile
