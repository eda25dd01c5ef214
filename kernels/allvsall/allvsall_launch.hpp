// Launching the all-against-all scan kernel (allvsall_scan.cu) from plain
// C++: the database-scan recurrence of search/db_scan_kernel.cuh (16-bit
// query-pair profiles, DPX instructions, persistent blocks), fed with work
// items of one tile (a profile of two rows against a run of columns of the
// same set) instead of a profile against a whole database.
#pragma once

#include "search/db_scan_launch.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::kernels::allvsall_gpu {

struct ScanParams {
    // Columns of the set in tiling order: residue codes (each sequence at a
    // 4-byte boundary, padded with the pad letter to a multiple of 4), the
    // byte offset and the length of each column position.
    const std::uint8_t* residues = nullptr;
    const std::uint64_t* starts = nullptr;
    const std::int32_t* lengths = nullptr;
    int column_end = 0;  // positions at or past this hold no pair of the launch
    // Profiles of every row pair, made once (search::DbScanParams' layout).
    const std::uint32_t* profiles = nullptr;
    const std::uint64_t* profile_offsets = nullptr;
    const std::int32_t* profile_tiles = nullptr;
    const std::int32_t* profile_lengths = nullptr;  // bounded: the two rows' lengths (0: no second row)
    int letters = 0;                                // matrix letters + the pad letter
    // Work: item k = profile items[k].x against positions items[k].y + group.
    const int2* items = nullptr;
    int item_count = 0;
    std::uint32_t* out = nullptr;       // out[k * groups + group]: a 16-bit pair
    unsigned int* next_item = nullptr;  // zeroed before the launch
    uint2* scratch = nullptr;           // per (block, group) a strip of scratch_columns (Ho, F) pairs
    int scratch_columns = 0;
    int open = 0, extend = 0;
    int one = 1;        // the local kernel's multiplier (see db_scan_kernel.cuh)
    int free_ends = 0;  // search::kFree* bits of a semi-global job
};

// The compiled tile shapes (16-bit pairs), the same for every mode.
const std::vector<search::DbScanShape>& scan_shapes();

// "nw_affine_allvsall_s16x2" and the like (prefix sw, nw or sg).
std::string scan_kernel_name(bool linear, const char* mode_prefix);

// Resident blocks per multiprocessor; 0 when the shape cannot run with `letters`.
int scan_blocks_per_sm(const search::DbScanShape& shape, bool local, int letters);

cudaError_t launch_scan(const search::DbScanShape& shape, bool local, const ScanParams& params, int blocks,
                        cudaStream_t stream);

}  // namespace alignscope::kernels::allvsall_gpu
