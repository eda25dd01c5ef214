// Two 16-bit DP lanes in one 32-bit register (pair A in the low half, pair B
// in the high half), with Hopper's DPX instructions on the device (sm_90:
// VIADDMNMX/VIMNMX on .S16x2) and an exact emulation on the host, so the
// tests run the kernels' very cell update on a CPU. Additions wrap like the
// hardware's; whether a pass may have wrapped is decided by the saturation
// rule below, never assumed away.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ALIGNSCOPE_HD __host__ __device__ __forceinline__
#else
#define ALIGNSCOPE_HD inline
#endif

namespace alignscope::kernels::s16x2 {

using word = std::uint32_t;

// Far below any score a 16-bit pass holds, yet safe to subtract a penalty of
// up to kMaxPenalty from without wrapping.
inline constexpr int kNeg = -30000;
inline constexpr int kMaxPenalty = 2000;
inline constexpr word kMinWord = 0x80008000u;  // -32768 in both halves

ALIGNSCOPE_HD int lo(word x) { return static_cast<std::int16_t>(static_cast<std::uint16_t>(x & 0xffffu)); }
ALIGNSCOPE_HD int hi(word x) { return static_cast<std::int16_t>(static_cast<std::uint16_t>(x >> 16)); }
ALIGNSCOPE_HD word pack(int low, int high) {
    return (static_cast<word>(static_cast<std::uint16_t>(low))) |
           (static_cast<word>(static_cast<std::uint16_t>(high)) << 16);
}
ALIGNSCOPE_HD int wrap16(int x) { return static_cast<std::int16_t>(static_cast<std::uint16_t>(x & 0xffff)); }

// max(a + b, c) per half, the addition wrapping at 16 bits.
ALIGNSCOPE_HD word add_max(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
    return __viaddmax_s16x2(a, b, c);
#else
    const int l = wrap16(lo(a) + lo(b)), h = wrap16(hi(a) + hi(b));
    return pack(l > lo(c) ? l : lo(c), h > hi(c) ? h : hi(c));
#endif
}
// max(a + b, c, 0) per half.
ALIGNSCOPE_HD word add_max_relu(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
    return __viaddmax_s16x2_relu(a, b, c);
#else
    const word m = add_max(a, b, c);
    return pack(lo(m) > 0 ? lo(m) : 0, hi(m) > 0 ? hi(m) : 0);
#endif
}
// a + b per half (wrapping): max(a + b, -32768) is a + b.
ALIGNSCOPE_HD word add(word a, word b) { return add_max(a, b, kMinWord); }
ALIGNSCOPE_HD word max(word a, word b) {
#if defined(__CUDA_ARCH__)
    return __vmaxs2(a, b);
#else
    return pack(lo(a) > lo(b) ? lo(a) : lo(b), hi(a) > hi(b) ? hi(a) : hi(b));
#endif
}
// max(a, b, c) per half.
ALIGNSCOPE_HD word max3(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
    return __vimax3_s16x2(a, b, c);
#else
    return max(max(a, b), c);
#endif
}
// max(a, b, c, 0) per half.
ALIGNSCOPE_HD word max3_relu(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
    return __vimax3_s16x2_relu(a, b, c);
#else
    const word m = max3(a, b, c);
    return pack(lo(m) > 0 ? lo(m) : 0, hi(m) > 0 ? hi(m) : 0);
#endif
}
// Whether a and b are equal in at least one half.
ALIGNSCOPE_HD bool equal_any(word a, word b) {
#if defined(__CUDA_ARCH__)
    return __vcmpeq2(a, b) != 0;
#else
    return lo(a) == lo(b) || hi(a) == hi(b);
#endif
}
// max(a, b) per half, and per half whether a >= b (a kept).
ALIGNSCOPE_HD word max_keep(word a, word b, bool& keep_hi, bool& keep_lo) {
#if defined(__CUDA_ARCH__)
    // CUDA 13.0's __vibmax_s16x2 compares its result with `a` after writing
    // the result, without an early-clobber constraint: when the compiler
    // gives the result a's register (x = max_keep(x, y)), both predicates
    // come out true. The same instructions, with the output kept apart:
    word result;
    unsigned kept_hi, kept_lo;
    asm("{.reg .pred ph, pl;\n\t"
        ".reg .s16 m0, m1, a0, a1;\n\t"
        "max.s16x2 %0, %3, %4;\n\t"
        "mov.b32 {m0, m1}, %0;\n\t"
        "mov.b32 {a0, a1}, %3;\n\t"
        "setp.eq.s16 pl, m0, a0;\n\t"
        "setp.eq.s16 ph, m1, a1;\n\t"
        "selp.b32 %1, 1, 0, ph;\n\t"
        "selp.b32 %2, 1, 0, pl;}"
        : "=&r"(result), "=r"(kept_hi), "=r"(kept_lo)
        : "r"(a), "r"(b));
    keep_hi = kept_hi != 0;
    keep_lo = kept_lo != 0;
    return result;
#else
    keep_lo = lo(a) >= lo(b);
    keep_hi = hi(a) >= hi(b);
    return pack(keep_lo ? lo(a) : lo(b), keep_hi ? hi(a) : hi(b));
#endif
}

// One cell of the affine (Gotoh) recurrence for both lanes, as the kernels run
// it, on Ho = H - open rather than H: the gap recurrences need H - open of the
// cell to the left and of the cell above anyway, so keeping Ho computes that
// difference once per cell, and the diagonal term H(i-1,j-1) + s becomes
// Ho(i-1,j-1) + (s + open), with s + open taken from a shifted table.
// In: ho_left = Ho(i, j-1), e_run = E(i, j-1), ho_up = Ho(i-1, j),
// f = F(i-1, j), ho_diag = Ho(i-1, j-1), score_open = s(q_i, t_j) + open;
// neg_open / neg_extend hold -o / -e.
// Out: ho_left = Ho(i, j), e_run = E(i, j), f = F(i, j); returns H(i, j).
// Five instructions per register (two cells), one fewer than on H. Down a
// thread's column of rows only F, H and Ho wait on the row above (three
// dependent instructions per row); the diagonal sum and E do not.
template <bool Local>
ALIGNSCOPE_HD word affine_cell(word& ho_left, word& e_run, word& f, word ho_up, word ho_diag, word score_open,
                               word neg_open, word neg_extend) {
    const word diagonal = add(ho_diag, score_open);
    e_run = add_max(e_run, neg_extend, ho_left);
    f = add_max(f, neg_extend, ho_up);
    const word h = Local ? max3_relu(diagonal, e_run, f) : max3(diagonal, e_run, f);
    ho_left = add(h, neg_open);
    return h;
}

// The local passes' cell: affine_cell<true> with every value plus a bias B =
// open (H = 0 is held as B), so that Ho = H - open is one 32-bit subtraction
// of open from both halves: with every biased H at least open, the low half
// never borrows from the high one. The kernels compute it as an IMAD with a
// multiplier `one` (always 1) the compiler cannot see, which runs on the FMA
// pipe rather than the integer pipe that every DPX instruction shares and
// that bounds these kernels. Four DPX instructions and one IMAD per register.
// zero = pack(B, B); minus_open_word = -pack(open, open) as a 32-bit word.
// Down the rows the chain is still F, H, Ho: max(Ho_diag + s', B) and E do
// not wait on the row above.
ALIGNSCOPE_HD word affine_cell_biased(word& ho_left, word& e_run, word& f, word ho_up, word ho_diag, word score_open,
                                      word zero, word neg_extend, word minus_open_word, word one) {
    const word diagonal = add_max(ho_diag, score_open, zero);
    e_run = add_max(e_run, neg_extend, ho_left);
    f = add_max(f, neg_extend, ho_up);
    const word h = max3(diagonal, e_run, f);
    ho_left = h * one + minus_open_word;
    return h;
}

// The saturation rule. A 16-bit pass is exact when no addition wrapped. Every
// addition is either a penalty subtracted from a value (safe: values stay
// above kNeg - kMaxPenalty) or Ho(i-1, j-1) + (s + open) = H(i-1, j-1) + s;
// the first wrap needs an H above 32767 - max_score computed correctly before
// it, and the pass tracks the largest H it met. So: exact when largest_h + max_score <= 32767.
// A pass that holds H + bias (affine_cell_biased) pays the bias from that range.
ALIGNSCOPE_HD bool exact(int largest_h, int max_score, int bias = 0) {
    return largest_h + bias + (max_score > 0 ? max_score : 0) <= 32767;
}

}  // namespace alignscope::kernels::s16x2
