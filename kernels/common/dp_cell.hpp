// The arithmetic of a DP cell at every lane width the kernels compute in, as
// one vocabulary: Cell16x2 (two 16-bit lanes in one 32-bit register) and Cell32
// (one 32-bit lane). On the device every operation is the Hopper instruction
// named beside it (DPX: VIADDMNMX, VIMNMX, VIMNMX3 on .S16x2 and .S32); on the
// host it is an exact emulation, so the tests run the kernels' very cell update
// on a CPU and compare it with plain scalar arithmetic.
//
// Both cells have the same members, so kernel code templated on a cell type
// (`template <class Cell> ... Cell::add_max(...)`) runs at either width:
//   word                      the register type (std::uint32_t / std::int32_t)
//   lanes                     values per word (2 / 1)
//   splat(v), pack(lo, hi)    a word from lane values (Cell32 ignores hi)
//   lane(w, h), lo(w), hi(w)  a lane's value (Cell32: lo = the value, hi = 0)
//   add(a, b)                 a + b per lane, wrapping at the lane's width
//   add_max(a, b, c)          max(a + b, c) per lane, the addition wrapping
//   add_max_relu(a, b, c)     max(a + b, c, 0)
//   add_min(a, b, c)          min(a + b, c)
//   max(a, b), max_relu(a, b) max(a, b) and max(a, b, 0)
//   max3(a, b, c), max3_relu  max(a, b, c) and max(a, b, c, 0)
//   equal_any(a, b)           whether some lane of a equals that of b
//   lane_mask(lo, hi)         all bits of the lanes whose flag is set
//   select(mask, a, b)        per lane a where mask is set, else b (one LOP3)
//   add_imad(a, b, one)       a * one + b as one 32-bit IMAD (see below)
// plus the affine (Gotoh) cell of the pairwise and scan kernels, on Ho = H - open
// (affine_cell, affine_cell_biased) and the 16-bit saturation rule (exact).
//
// add_imad: with `one` a value the compiler cannot see is 1 (a kernel
// parameter), a * one + b is an IMAD, which runs on the FMA pipe rather than
// the integer (ALU) pipe that every DPX instruction, maximum and compare
// shares and that bounds these kernels. On Cell16x2 it is one 32-bit addition
// over both lanes: exact only when the low lane cannot carry into the high one
// (affine_cell_biased says when).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ALIGNSCOPE_CELL_FN __host__ __device__ __forceinline__
#else
#define ALIGNSCOPE_CELL_FN inline
#endif

namespace alignscope::kernels::dp {

struct Cell16x2 {
    using word = std::uint32_t;
    static constexpr int lanes = 2;
    static constexpr int bits = 16;
    // Far below any score a 16-bit pairwise pass holds, yet safe to subtract a
    // penalty of up to kMaxPenalty from without wrapping.
    static constexpr int kNeg = -30000;
    static constexpr int kMaxPenalty = 2000;
    static constexpr word kMinWord = 0x80008000u;  // -32768 in both lanes
    static constexpr word kLoMask = 0x0000ffffu, kHiMask = 0xffff0000u;

    ALIGNSCOPE_CELL_FN static int wrap(int x) {
        return static_cast<std::int16_t>(static_cast<std::uint16_t>(static_cast<unsigned>(x) & 0xffffu));
    }
    ALIGNSCOPE_CELL_FN static int lo(word x) {
        return static_cast<std::int16_t>(static_cast<std::uint16_t>(x & 0xffffu));
    }
    ALIGNSCOPE_CELL_FN static int hi(word x) { return static_cast<std::int16_t>(static_cast<std::uint16_t>(x >> 16)); }
    ALIGNSCOPE_CELL_FN static int lane(word x, int h) { return h == 0 ? lo(x) : hi(x); }
    ALIGNSCOPE_CELL_FN static word pack(int low, int high) {
        return (static_cast<word>(static_cast<std::uint16_t>(low))) |
               (static_cast<word>(static_cast<std::uint16_t>(high)) << 16);
    }
    ALIGNSCOPE_CELL_FN static word splat(int v) { return pack(v, v); }

    // max(a + b, c) per lane, the addition wrapping at 16 bits.
    ALIGNSCOPE_CELL_FN static word add_max(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __viaddmax_s16x2(a, b, c);
#else
        const int l = wrap(lo(a) + lo(b)), h = wrap(hi(a) + hi(b));
        return pack(l > lo(c) ? l : lo(c), h > hi(c) ? h : hi(c));
#endif
    }
    // max(a + b, c, 0) per lane.
    ALIGNSCOPE_CELL_FN static word add_max_relu(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __viaddmax_s16x2_relu(a, b, c);
#else
        const word m = add_max(a, b, c);
        return pack(lo(m) > 0 ? lo(m) : 0, hi(m) > 0 ? hi(m) : 0);
#endif
    }
    // min(a + b, c) per lane, the addition wrapping at 16 bits.
    ALIGNSCOPE_CELL_FN static word add_min(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __viaddmin_s16x2(a, b, c);
#else
        const int l = wrap(lo(a) + lo(b)), h = wrap(hi(a) + hi(b));
        return pack(l < lo(c) ? l : lo(c), h < hi(c) ? h : hi(c));
#endif
    }
    // a + b per lane (wrapping): max(a + b, -32768) is a + b.
    ALIGNSCOPE_CELL_FN static word add(word a, word b) { return add_max(a, b, kMinWord); }
    ALIGNSCOPE_CELL_FN static word max(word a, word b) {
#if defined(__CUDA_ARCH__)
        return __vmaxs2(a, b);
#else
        return pack(lo(a) > lo(b) ? lo(a) : lo(b), hi(a) > hi(b) ? hi(a) : hi(b));
#endif
    }
    // max(a, b, 0) per lane.
    ALIGNSCOPE_CELL_FN static word max_relu(word a, word b) {
#if defined(__CUDA_ARCH__)
        return __vimax_s16x2_relu(a, b);
#else
        const word m = max(a, b);
        return pack(lo(m) > 0 ? lo(m) : 0, hi(m) > 0 ? hi(m) : 0);
#endif
    }
    // max(a, b, c) per lane.
    ALIGNSCOPE_CELL_FN static word max3(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __vimax3_s16x2(a, b, c);
#else
        return max(max(a, b), c);
#endif
    }
    // max(a, b, c, 0) per lane.
    ALIGNSCOPE_CELL_FN static word max3_relu(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __vimax3_s16x2_relu(a, b, c);
#else
        const word m = max3(a, b, c);
        return pack(lo(m) > 0 ? lo(m) : 0, hi(m) > 0 ? hi(m) : 0);
#endif
    }
    // Whether a and b are equal in at least one lane.
    ALIGNSCOPE_CELL_FN static bool equal_any(word a, word b) {
#if defined(__CUDA_ARCH__)
        return __vcmpeq2(a, b) != 0;
#else
        return lo(a) == lo(b) || hi(a) == hi(b);
#endif
    }
    // The mask of the lanes whose flag is set (all bits of a lane).
    ALIGNSCOPE_CELL_FN static word lane_mask(bool take_lo, bool take_hi) {
        return (take_lo ? kLoMask : 0u) | (take_hi ? kHiMask : 0u);
    }
    // Per lane a where its flag is set, else b: one LOP3 under lane_mask().
    ALIGNSCOPE_CELL_FN static word select(word mask, word a, word b) { return (a & mask) | (b & ~mask); }
    ALIGNSCOPE_CELL_FN static word add_imad(word a, word b, word one) { return a * one + b; }

    // max(a, b) per lane, and per lane whether a >= b (a kept).
    ALIGNSCOPE_CELL_FN static word max_keep(word a, word b, bool& keep_hi, bool& keep_lo) {
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

    // The saturation rule of a 16-bit pass. It is exact when no addition
    // wrapped. Every addition is either a penalty subtracted from a value (safe:
    // values stay above kNeg - kMaxPenalty) or Ho(i-1, j-1) + (s + open) =
    // H(i-1, j-1) + s; the first wrap needs an H above 32767 - max_score
    // computed correctly before it, and the pass tracks the largest H it met.
    // So: exact when largest_h + max_score <= 32767. A pass that holds H + bias
    // (affine_cell_biased) pays the bias from that range.
    ALIGNSCOPE_CELL_FN static bool exact(int largest_h, int max_score, int bias = 0) {
        return largest_h + bias + (max_score > 0 ? max_score : 0) <= 32767;
    }
};

struct Cell32 {
    using word = std::int32_t;
    static constexpr int lanes = 1;
    static constexpr int bits = 32;

    ALIGNSCOPE_CELL_FN static int wrap(long long x) {
        return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<unsigned long long>(x)));
    }
    ALIGNSCOPE_CELL_FN static int lo(word x) { return x; }
    ALIGNSCOPE_CELL_FN static int hi(word) { return 0; }
    ALIGNSCOPE_CELL_FN static int lane(word x, int) { return x; }
    ALIGNSCOPE_CELL_FN static word pack(int low, int) { return low; }
    ALIGNSCOPE_CELL_FN static word splat(int v) { return v; }

    // a + b, wrapping at 32 bits (defined on the host too).
    ALIGNSCOPE_CELL_FN static word add(word a, word b) {
        return static_cast<word>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
    }
    ALIGNSCOPE_CELL_FN static word max(word a, word b) {
#if defined(__CUDA_ARCH__)
        return ::max(a, b);
#else
        return a > b ? a : b;
#endif
    }
    ALIGNSCOPE_CELL_FN static word min(word a, word b) {
#if defined(__CUDA_ARCH__)
        return ::min(a, b);
#else
        return a < b ? a : b;
#endif
    }
    // max(a + b, c), the addition wrapping at 32 bits.
    ALIGNSCOPE_CELL_FN static word add_max(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __viaddmax_s32(a, b, c);
#else
        return max(add(a, b), c);
#endif
    }
    ALIGNSCOPE_CELL_FN static word add_max_relu(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __viaddmax_s32_relu(a, b, c);
#else
        return max(max(add(a, b), c), 0);
#endif
    }
    ALIGNSCOPE_CELL_FN static word add_min(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __viaddmin_s32(a, b, c);
#else
        return min(add(a, b), c);
#endif
    }
    ALIGNSCOPE_CELL_FN static word max_relu(word a, word b) {
#if defined(__CUDA_ARCH__)
        return __vimax_s32_relu(a, b);
#else
        return max(max(a, b), 0);
#endif
    }
    ALIGNSCOPE_CELL_FN static word max3(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __vimax3_s32(a, b, c);
#else
        return max(max(a, b), c);
#endif
    }
    ALIGNSCOPE_CELL_FN static word max3_relu(word a, word b, word c) {
#if defined(__CUDA_ARCH__)
        return __vimax3_s32_relu(a, b, c);
#else
        return max(max(max(a, b), c), 0);
#endif
    }
    ALIGNSCOPE_CELL_FN static bool equal_any(word a, word b) { return a == b; }
    ALIGNSCOPE_CELL_FN static word lane_mask(bool take_lo, bool) { return take_lo ? -1 : 0; }
    ALIGNSCOPE_CELL_FN static word select(word mask, word a, word b) { return (a & mask) | (b & ~mask); }
    ALIGNSCOPE_CELL_FN static word add_imad(word a, word b, word one) {
#if defined(__CUDA_ARCH__)
        return a * one + b;
#else
        return add(static_cast<word>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(one)), b);
#endif
    }
};

// One cell of the affine (Gotoh) recurrence, as the kernels run it, on
// Ho = H - open rather than H: the gap recurrences need H - open of the cell to
// the left and of the cell above anyway, so keeping Ho computes that difference
// once per cell, and the diagonal term H(i-1,j-1) + s becomes
// Ho(i-1,j-1) + (s + open), with s + open taken from a shifted table.
// In: ho_left = Ho(i, j-1), e_run = E(i, j-1), ho_up = Ho(i-1, j),
// f = F(i-1, j), ho_diag = Ho(i-1, j-1), score_open = s(q_i, t_j) + open;
// neg_open / neg_extend hold -o / -e in every lane.
// Out: ho_left = Ho(i, j), e_run = E(i, j), f = F(i, j); returns H(i, j).
// Five instructions per register, one fewer than on H. Down a thread's column
// of rows only F, H and Ho wait on the row above (three dependent instructions
// per row); the diagonal sum and E do not.
template <class Cell, bool Local>
ALIGNSCOPE_CELL_FN typename Cell::word affine_cell(typename Cell::word& ho_left, typename Cell::word& e_run,
                                                   typename Cell::word& f, typename Cell::word ho_up,
                                                   typename Cell::word ho_diag, typename Cell::word score_open,
                                                   typename Cell::word neg_open, typename Cell::word neg_extend) {
    using word = typename Cell::word;
    const word diagonal = Cell::add(ho_diag, score_open);
    e_run = Cell::add_max(e_run, neg_extend, ho_left);
    f = Cell::add_max(f, neg_extend, ho_up);
    const word h = Local ? Cell::max3_relu(diagonal, e_run, f) : Cell::max3(diagonal, e_run, f);
    ho_left = Cell::add(h, neg_open);
    return h;
}

// The local cell: affine_cell<Cell, true> with every value plus a bias B = open
// (H = 0 is held as B), so that Ho = H - open is one 32-bit IMAD (add_imad of
// minus_open_word = -splat(open) as a 32-bit word): with every biased H at
// least open, the low lane never borrows from the high one. Four DPX
// instructions and one IMAD per register. zero = splat(B). Down the rows the
// chain is still F, H, Ho: max(Ho_diag + s', B) and E do not wait on the row
// above.
template <class Cell>
ALIGNSCOPE_CELL_FN typename Cell::word affine_cell_biased(typename Cell::word& ho_left, typename Cell::word& e_run,
                                                          typename Cell::word& f, typename Cell::word ho_up,
                                                          typename Cell::word ho_diag, typename Cell::word score_open,
                                                          typename Cell::word zero, typename Cell::word neg_extend,
                                                          typename Cell::word minus_open_word,
                                                          typename Cell::word one) {
    using word = typename Cell::word;
    const word diagonal = Cell::add_max(ho_diag, score_open, zero);
    e_run = Cell::add_max(e_run, neg_extend, ho_left);
    f = Cell::add_max(f, neg_extend, ho_up);
    const word h = Cell::max3(diagonal, e_run, f);
    ho_left = Cell::add_imad(h, minus_open_word, one);
    return h;
}

}  // namespace alignscope::kernels::dp
