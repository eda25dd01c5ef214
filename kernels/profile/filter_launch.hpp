// Launching the profile filter kernels (filter_kernels.cuh) from host code:
// the kernels' arguments as plain structs, and one launcher per kernel family
// that picks the instantiation compiled for the model's segment count.
#pragma once

#include "profile/filter_layout.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace alignscope::kernels::profile {

inline constexpr int kFilterWarps = 8;  // warps per block, one target per warp at a time

struct TargetView {
    const std::uint8_t* residues = nullptr;  // every target's codes back to back
    const std::uint64_t* offsets = nullptr;  // target t: residues[offsets[t], offsets[t+1])
    const std::uint32_t* order = nullptr;    // work item -> target (MSV) or list position (Viterbi), longest first
    std::uint32_t count = 0;                 // work items
};

struct MsvParams {
    int base = 0, bias = 0, tec = 0, tbm = 0;
    int codes = 0;
};

struct ViterbiParams {
    int base = 0, e_loop = 0, e_move = 0;
    int codes = 0;
};

// Shared memory a launch needs for its model table.
std::size_t msv_shared_bytes(int segments, int codes);
std::size_t viterbi_shared_bytes(int segments, int codes);

// SSV (full = false) or MSV over targets; out[t] = xJ or kMsvOverflow /
// kMsvNeedsFull. `counter` must be zero. Returns the launch's error status.
cudaError_t launch_msv_filter(int segments, const TargetView& targets, const std::uint32_t* cost,
                              const MsvParams& params, const std::uint8_t* tjb, std::int32_t* out,
                              std::uint32_t* counter, bool full, int blocks, cudaStream_t stream);

// The Viterbi filter over list[0..count); out[j] = xC of list[j] or kViterbiOverflow.
cudaError_t launch_viterbi_filter(int segments, const TargetView& targets, const std::int16_t* tables,
                                  const ViterbiParams& params, const std::uint32_t* list, const std::int16_t* ncj,
                                  std::int32_t* out, std::uint32_t* counter, int blocks, cudaStream_t stream);

}  // namespace alignscope::kernels::profile
