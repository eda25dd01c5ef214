// The tuning of the pairwise kernels as types (CUB's Policy idea): threads per
// block, query rows per thread, resident blocks, the width of a chunk of
// columns, and the per-family choices. Each kernel reads its family's policy
// (PairwisePolicy<G>), and so do the launcher (pass_launch.cu) and the host
// planner (family_layout.hpp: strips and direction words): a value is written
// here once. Plain C++: the tests read it without a GPU.
#pragma once

#include <type_traits>

namespace alignscope::kernels {

// What every pairwise family shares.
struct PairwiseCommonPolicy {
    // Threads per block; the 16-bit passes' query-profile planes are strided
    // by it (one column per thread).
    static constexpr int kBlockThreads = 128;
    // Query rows per thread of the traceback pass: its 4-bit directions are
    // packed a thread's rows to one 32-bit word.
    static constexpr int kTraceRows = 32 / 4;
    // Query rows per thread of the 16-bit passes: their per-thread profile
    // holds s + open of its rows as signed bytes in two 32-bit words. Free to
    // differ from kTraceRows: a 16-bit group hands on only its strip's bottom
    // row, whatever its height.
    static constexpr int kS16Rows = 8;
    // Query rows per thread of the 32-bit score passes (forward, reverse).
    static constexpr int kS32Rows = 8;
    // Columns a chunk of the chunked passes (intra_s16_chunked, intra_s32_chunked) covers:
    // one 32-bit word of residues (common/warp_wavefront.cuh).
    static constexpr int kChunkColumns = 4;
};

// The inter-sequence family: one thread (one 16-bit lane with s16) per pair.
struct PairwiseInterPolicy : PairwiseCommonPolicy {
    static constexpr int kGroupThreads = 1;
    // Whether the 16-bit pass reads its scores from a per-thread query profile
    // in shared memory rather than from the matrix. Measured on an H200
    // (protein 300x300, local, kernel-only GCUPS): the profile loses 40% for
    // one thread per pair, whose rows are rebuilt into the profile every 8
    // rows and whose occupancy the profile's shared memory cuts.
    static constexpr bool kS16Profile = false;
};

// The intra-sequence family: a group of G = 4 .. 32 threads per pair.
struct PairwiseIntraPolicy : PairwiseCommonPolicy {
    // The query profile gains 4-7% for G = 4 and 8 (same measurement).
    static constexpr bool kS16Profile = true;
    // Resident blocks per SM the local 16-bit pass (intra_s16_chunked) is compiled for.
    static constexpr int kLocalS16MinBlocks = 4;
    // Targets longer than this go from intra_s16_chunked to intra_s16: its end-cell
    // key holds 0xffff - j in 16 bits, which must not wrap for the columns of a
    // strip and its padding (up to about this + G + 3).
    static constexpr int kLocalS16MaxColumns = 65000;
};

// The policy of group size G (threads per pair).
template <int G>
using PairwisePolicy = std::conditional_t<G == 1, PairwiseInterPolicy, PairwiseIntraPolicy>;

static_assert(PairwiseCommonPolicy::kTraceRows * 4 == 32, "a thread's directions fill one 32-bit word");
static_assert(PairwiseCommonPolicy::kS16Rows == 8, "the 16-bit profile holds 8 rows in two 32-bit words of bytes");
static_assert(PairwiseCommonPolicy::kBlockThreads % 32 == 0, "whole warps");

}  // namespace alignscope::kernels
