// Four float lanes in HMMER's striped order (node k in segment (k-1) % Q,
// lane (k-1) / Q), shared by Forward/Backward, posterior decoding, optimal
// accuracy and null2, so that every stage adds and multiplies as hmmsearch does.
#pragma once

#include <alignscope/profile/plan7_profile.hpp>

#include <algorithm>
#include <array>
#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace alignscope::profile::striped {

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
inline F4 max4(F4 a, F4 b) { return {_mm_max_ps(a.v, b.v)}; }
// `v` where the transition `t` is possible (t > 0), else 0.
inline F4 gate(F4 t, F4 v) { return {_mm_and_ps(_mm_cmpgt_ps(t.v, _mm_setzero_ps()), v.v)}; }
// The mask of gate(): all bits where t > 0; and4(possible(t), v) is gate(t, v).
inline F4 possible(F4 t) { return {_mm_cmpgt_ps(t.v, _mm_setzero_ps())}; }
inline F4 and4(F4 mask, F4 v) { return {_mm_and_ps(mask.v, v.v)}; }
// [a0 a1 a2 a3] -> [fill a0 a1 a2]: node k's predecessor of the previous segment.
inline F4 shift_up(F4 a, float fill = 0.0f) {
    return {_mm_move_ss(_mm_shuffle_ps(a.v, a.v, _MM_SHUFFLE(2, 1, 0, 0)), _mm_set_ss(fill))};
}
// [a0 a1 a2 a3] -> [a1 a2 a3 0]: node k's successor of the next segment.
inline F4 shift_down(F4 a) {
    const __m128 t = _mm_move_ss(a.v, _mm_setzero_ps());
    return {_mm_shuffle_ps(t, t, _MM_SHUFFLE(0, 3, 2, 1))};
}
inline bool any_greater(F4 a, F4 b) { return _mm_movemask_ps(_mm_cmpgt_ps(a.v, b.v)) != 0; }
inline F4 greater_mask(F4 a, F4 b) { return {_mm_cmpgt_ps(a.v, b.v)}; }
inline F4 or4(F4 a, F4 b) { return {_mm_or_ps(a.v, b.v)}; }
inline bool any_set(F4 a) { return _mm_movemask_ps(a.v) != 0; }
// Every lane exactly zero (a NaN lane is not).
inline bool all_zero(F4 a) { return _mm_movemask_ps(_mm_cmpneq_ps(a.v, _mm_setzero_ps())) == 0; }
// All bits in the lanes where a or b is NaN.
inline F4 unordered_mask(F4 a, F4 b) { return {_mm_cmpunord_ps(a.v, b.v)}; }
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
inline F4 max4(F4 a, F4 b) {
    // As maxps: the second operand when the comparison fails.
    F4 r;
    for (int z = 0; z < 4; ++z)
        r.v[static_cast<std::size_t>(z)] = a.v[static_cast<std::size_t>(z)] > b.v[static_cast<std::size_t>(z)]
                                               ? a.v[static_cast<std::size_t>(z)]
                                               : b.v[static_cast<std::size_t>(z)];
    return r;
}
inline F4 gate(F4 t, F4 v) {
    F4 r;
    for (int z = 0; z < 4; ++z)
        r.v[static_cast<std::size_t>(z)] =
            t.v[static_cast<std::size_t>(z)] > 0.0f ? v.v[static_cast<std::size_t>(z)] : 0.0f;
    return r;
}
inline F4 possible(F4 t) {
    F4 r;
    for (int z = 0; z < 4; ++z)
        r.v[static_cast<std::size_t>(z)] = t.v[static_cast<std::size_t>(z)] > 0.0f ? 1.0f : 0.0f;
    return r;
}
inline F4 and4(F4 mask, F4 v) {
    F4 r;
    for (int z = 0; z < 4; ++z)
        r.v[static_cast<std::size_t>(z)] =
            mask.v[static_cast<std::size_t>(z)] != 0.0f ? v.v[static_cast<std::size_t>(z)] : 0.0f;
    return r;
}
inline F4 shift_up(F4 a, float fill = 0.0f) { return {{fill, a.v[0], a.v[1], a.v[2]}}; }
inline F4 shift_down(F4 a) { return {{a.v[1], a.v[2], a.v[3], 0.0f}}; }
inline bool any_greater(F4 a, F4 b) { return a.v[0] > b.v[0] || a.v[1] > b.v[1] || a.v[2] > b.v[2] || a.v[3] > b.v[3]; }
inline F4 greater_mask(F4 a, F4 b) {
    F4 r;
    for (int z = 0; z < 4; ++z)
        r.v[static_cast<std::size_t>(z)] =
            a.v[static_cast<std::size_t>(z)] > b.v[static_cast<std::size_t>(z)] ? 1.0f : 0.0f;
    return r;
}
inline F4 or4(F4 a, F4 b) { return a + b; }
inline bool any_set(F4 a) { return a.v[0] != 0.0f || a.v[1] != 0.0f || a.v[2] != 0.0f || a.v[3] != 0.0f; }
inline bool all_zero(F4 a) { return a.v[0] == 0.0f && a.v[1] == 0.0f && a.v[2] == 0.0f && a.v[3] == 0.0f; }
inline F4 unordered_mask(F4 a, F4 b) {
    F4 r;
    for (std::size_t z = 0; z < 4; ++z) r.v[z] = a.v[z] != a.v[z] || b.v[z] != b.v[z] ? 1.0f : 0.0f;
    return r;
}
#endif

// (a0 + a1) + (a2 + a3), as HMMER's horizontal sum.
inline float lane_sum(F4 a) {
    alignas(16) float t[4];
    store(t, a);
    return (t[0] + t[1]) + (t[2] + t[3]);
}
inline float lane_max(F4 a) {
    alignas(16) float t[4];
    store(t, a);
    return std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
}

enum Array { BM = 0, MM, IM, DM, MD, MI, II, DD, Match };

// The profile's striped arrays as four-lane segments.
struct Profile {
    const float* base;
    int Q;
    explicit Profile(const ForwardProfile& om) : base(om.striped.data()), Q(om.segments) {}
    F4 at(int array, int q) const { return load(base + static_cast<std::size_t>((array * Q + q) * 4)); }
    const float* match(int x) const { return base + static_cast<std::size_t>(((Match + x) * Q) * 4); }
};

inline F4 at(const float* row, int q) { return load(row + static_cast<std::size_t>(q) * 4); }
inline void put(float* row, int q, F4 a) { store(row + static_cast<std::size_t>(q) * 4, a); }

}  // namespace alignscope::profile::striped
