// Launching the database-scan kernels (db_scan_kernel.cuh) from plain C++: the
// kernel parameters, the compiled tile shapes (G threads x R rows), and the
// dispatch that picks the instantiation. Every shape exists for local
// alignment and for bounded (global and semi-global) alignment; see
// db_scan_bounds.hpp for the latter's profile layout and saturation rule.
#pragma once

#include "search/db_scan_bounds.hpp"
#include "search/db_scan_shape.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::kernels::search {

constexpr int kMaxLetters = 64;  // matrix letters + the pad letter

struct DbScanParams {
    // The database partition on the device: residue codes, each sequence
    // starting at a 4-byte boundary and padded with the pad letter to a
    // multiple of 4; sequences in ascending length order.
    const std::uint8_t* residues = nullptr;
    const std::uint64_t* starts = nullptr;  // byte offset of each sequence
    const std::int32_t* lengths = nullptr;
    int db_count = 0;
    // Profiles: profile p starts at profiles + profile_offsets[p] (in 32-bit
    // words) and holds profile_tiles[p] tiles of [letters][tile rows] words.
    const std::uint32_t* profiles = nullptr;
    const std::uint64_t* profile_offsets = nullptr;
    const std::int32_t* profile_tiles = nullptr;
    int letters = 0;  // matrix letters + 1 (the last is the pad letter)
    int profile_count = 0;
    // Implicit items: item k = profile k / chunks, sequence run k % chunks.
    int chunks = 0;
    // Explicit items (recompute): item k = profile item_profile[k] and the
    // sequences item_positions[k * groups + g] (-1: none).
    const std::int32_t* item_profile = nullptr;
    const std::int32_t* item_positions = nullptr;
    int items = 0;
    // Results: implicit -> out[profile * db_count + position] (a 16-bit pair or
    // an int32); explicit -> out[k * groups + g].
    std::uint32_t* out = nullptr;
    unsigned int* next_item = nullptr;  // zeroed before the launch
    // Scratch for multi-tile profiles: per (block, group) a strip of
    // scratch_columns (Ho, F) pairs; scratch_columns a multiple of 4.
    uint2* scratch = nullptr;
    int scratch_columns = 0;
    int open = 0, extend = 0;  // scaled penalties
    // Always 1: the local kernel's multiplier for H - o, which it computes
    // as an IMAD on the FMA pipe (db_scan_kernel.cuh); a constant 1 would be
    // folded into an IADD on the busier integer pipe.
    int one = 1;
    // Bounded kernels only: the query lengths of each profile (lane a, lane b;
    // 0 for an empty lane) and the free end gaps (kFree* bits; 0 = global).
    const std::int32_t* profile_lengths = nullptr;
    int free_ends = 0;
};

// Which recurrence a kernel runs.
enum class DbScanMode {
    Local,    // Smith-Waterman: the best cell anywhere
    Bounded,  // global or semi-global: the cells params.free_ends allows on the last row and column
};

// Every compiled shape of one cell width.
const std::vector<DbScanShape>& db_scan_shapes(bool wide);

// The kernel's name in the grammar (device/kernel_name.hpp), family "search"
// (kScanFamily): "sw_affine_search_s16x2", "nw_linear_search_s32", "sg_affine_search_s16x2"
// and the like: `mode_prefix` is sw, nw or sg; `linear` names open == extend.
std::string db_scan_kernel_name(const DbScanShape& shape, bool linear, const char* mode_prefix = "sw");

// Dynamic shared memory of one block, bytes.
std::size_t db_scan_shared_bytes(const DbScanShape& shape, int letters);

// Resident blocks per multiprocessor (after raising the shared-memory limit);
// 0 when the shape cannot run with `letters`.
int db_scan_blocks_per_sm(const DbScanShape& shape, DbScanMode mode, bool explicit_items, int letters);

// Enqueues the kernel with `blocks` persistent blocks.
cudaError_t launch_db_scan(const DbScanShape& shape, DbScanMode mode, bool explicit_items, const DbScanParams& params,
                           int blocks, cudaStream_t stream);

}  // namespace alignscope::kernels::search
