// What the host hands the pairwise kernels and what they hand back: one task
// and one result per pair, and the parameters of a pass. Plain structs shared
// by host C++ and device code.
//
// A pair goes through up to three passes on the device, all chained on one
// stream: the forward pass (score and end cell), the reverse pass over the
// reversed prefixes (begin cell, as the CPU reference finds it), and with
// traceback a global pass over the aligned region that stores 4-bit directions
// and walks them into a run-length CIGAR.
#pragma once

#include <cstdint>

namespace alignscope::kernels {

// "Minus infinity" of the 32-bit passes: far below any value they hold
// (pass_bounds.hpp decides which pairs that is), and safe to subtract a
// penalty from without wrapping.
inline constexpr std::int32_t kS32Neg = -(1 << 29);

struct PairTask {
    std::uint64_t query_offset = 0;  // into the batch's residue buffer
    std::uint64_t target_offset = 0;
    std::int32_t query_length = 0;
    std::int32_t target_length = 0;
    std::uint64_t boundary_base = 0;  // strip-boundary slot of column 0 of its group
    std::uint64_t trace_base = 0;     // first direction word of its group (warp block + lane)
    std::uint64_t cigar_base = 0;     // first slot of its CIGAR scratch (query + target length + 2 slots)
    std::uint32_t trace_steps = 0;    // wavefront steps per strip in its warp block
    std::uint32_t reserved = 0;
};

enum PairFlags : std::uint32_t {
    kSaturated = 1,      // a 16-bit pass may have overflowed: recompute at 32 bits
    kEmpty = 2,          // local alignment with score 0
    kPassMismatch = 4,   // reverse pass disagreed with the forward score (a bug)
    kCigarOverflow = 8,  // traceback ran past its scratch (a bug)
};

struct PairResult {
    std::int32_t score = 0;
    std::int32_t query_end = 0, target_end = 0;      // 1-based
    std::int32_t query_begin = 0, target_begin = 0;  // 1-based; begin = end + 1 on a side not consumed
    std::uint32_t flags = 0;
    std::uint32_t cigar_offset = 0, cigar_count = 0;  // run-length ops in the batch's CIGAR buffer
    std::int32_t max_seen = 0;                        // largest 16-bit value met (saturation check)
    std::int32_t reserved = 0;
};

// A CIGAR run as the GPU writes it: length << 2 | op.
enum CigarCode : std::uint32_t { kCigarM = 0, kCigarI = 1, kCigarD = 2 };

enum class PassKind : std::int32_t { Forward, Reverse, Traceback };

struct PassParams {
    const std::uint8_t* residues = nullptr;
    const PairTask* tasks = nullptr;
    PairResult* results = nullptr;
    std::int32_t count = 0;    // pairs
    std::int32_t letters = 0;  // matrix size; code `letters` pads sequences and scores 0
    // (letters+1)^2, [target letter][query letter]; 32-bit, so that matrix
    // entries past 16 bits reach the 32-bit passes whole (the 16-bit passes
    // run only on schemes whose entries are small, s16_can_hold).
    const std::int32_t* matrix = nullptr;
    std::int32_t* boundary = nullptr;  // two ints (H, F) per slot
    std::uint32_t* trace = nullptr;
    std::uint32_t* cigar_scratch = nullptr;
    std::uint32_t* cigar_out = nullptr;
    std::uint32_t* cigar_counter = nullptr;
    std::int32_t gap_open = 0, gap_extend = 0;  // scaled, >= 0
    std::int32_t max_score = 0;                 // largest substitution score (16-bit saturation rule)
    std::int32_t one = 1;                       // always 1: the IMAD multiplier of dp::affine_cell_biased
    // The longest target of the batch: local 16-bit passes of longer ones than
    // device::kLocalS16MaxColumns run in intra_s16 (unknown: the maximum).
    std::int32_t longest_target = 0x7fffffff;
    PassKind kind = PassKind::Forward;
    // Boundary of this pass (dp_core's Boundary): free row 0 / column 0 score
    // 0, free last row / column let the alignment end anywhere in them, and
    // boundary_ends adds (m, 0) and (0, n) as candidates (reverse pass).
    bool row0_free = false, col0_free = false, last_row_free = false, last_col_free = false, boundary_ends = false;
};

}  // namespace alignscope::kernels
