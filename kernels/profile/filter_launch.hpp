// Launching the profile filter kernels (filter_kernels.cuh) from host code:
// the kernels' arguments as plain structs, and one launcher per kernel family
// that picks the instantiation compiled for the model's segment count.
#pragma once

#include "profile/backward_lanes.hpp"
#include "profile/filter_layout.hpp"
#include "profile/forward_lanes.hpp"

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

// The Forward filter over a list of targets (forward_kernel.cu): list
// position j scores target list[j]; work item w is position order[w].
struct ForwardBatchView {
    const std::uint8_t* residues = nullptr;  // every loaded target's codes
    const std::uint64_t* offsets = nullptr;
    const std::uint32_t* list = nullptr;
    const std::uint32_t* order = nullptr;      // longest first
    const float2* length = nullptr;            // per position: the LengthModel's loop, move
    const std::uint64_t* first_row = nullptr;  // per position: its rows 0..L in `specials`
    float* specials = nullptr;                 // kForwardSpecials floats a row
    float2* result = nullptr;                  // per position: xC, total scale
    float* scratch = nullptr;                  // rows not in shared memory: 3 * Q floats a thread, interleaved
                                               // over `stride` threads
    std::uint32_t stride = 0;
    std::uint32_t count = 0;
    std::uint32_t* counter = nullptr;  // must be zero
};

// Threads a block of the Forward filter and the parser Backward: the wide
// shape (16 targets a block), or the narrow one (4 targets) for a model whose
// wide block's rows do not fit shared memory but a narrow block's rows and the
// model together do. Rows in the global scratch leave every step of a row
// waiting on an L2 load (SMC_N's 1,142 nodes: about 0.2 ms a row); in shared
// memory a step waits tens of cycles.
inline constexpr int kRowsWideThreads = 64;
inline constexpr int kRowsNarrowThreads = 16;
int forward_threads_per_block();  // the wide shape's
// Shared memory of a launch of `threads` a block: the block's rows
// (shared_rows) and the model's `model_floats` striped floats (shared_model).
std::size_t forward_shared_bytes(int segments, int model_floats, bool shared_rows, bool shared_model,
                                 int threads = kRowsWideThreads);
// Rows in shared memory (shared_rows) or in batch.scratch; the model copied
// to shared memory (shared_model) or read from global. `threads` a block:
// kRowsWideThreads, or kRowsNarrowThreads with the rows and the model shared.
cudaError_t launch_forward_filter(const ForwardBatchView& batch, const ForwardModelView& model, int model_floats,
                                  bool shared_rows, bool shared_model, int blocks, cudaStream_t stream,
                                  int threads = kRowsWideThreads);

// The parser Backward of targets past the Fwd filter (backward_kernel.cu,
// kBackwardKernelName): four threads a target, as the Forward filter.
// List position j runs target list[j]; work item w is position order[w].
struct BackwardBatchView {
    const std::uint8_t* residues = nullptr;  // every loaded target's codes
    const std::uint64_t* offsets = nullptr;
    const std::uint32_t* list = nullptr;
    const std::uint32_t* order = nullptr;      // longest first
    const float2* length = nullptr;            // per position: the LengthModel's loop, move
    const std::uint64_t* first_row = nullptr;  // per position: its rows 0..L in `specials`
    // The Forward's scale factors of a position's rows 0..L start at
    // scales[first_row * scale_step]: packed (step 1), or (step
    // kForwardSpecials, a launch of one target) the first L + 1 floats of
    // its own rows in `specials`, each read before a row overwrites it.
    const float* scales = nullptr;
    std::uint32_t scale_step = 1;
    float* specials = nullptr;  // kForwardSpecials floats a row
    float2* result = nullptr;   // per position: row 0's N, total scale
    float* scratch = nullptr;   // rows not in shared memory: as ForwardBatchView's
    std::uint32_t stride = 0;
    std::uint32_t count = 0;
    std::uint32_t* counter = nullptr;  // must be zero
};

// As launch_forward_filter (the same rows, shared memory and threads a block).
cudaError_t launch_backward_parser(const BackwardBatchView& batch, const ForwardModelView& model, int model_floats,
                                   bool shared_rows, bool shared_model, int blocks, cudaStream_t stream,
                                   int threads = kRowsWideThreads);

// The filter, Forward and Backward kernels' code loaded onto the current
// device now rather than at their first launch (CUDA loads modules lazily):
// the scanner does it while the targets are read, off the search's path.
cudaError_t load_filter_kernels();
cudaError_t load_forward_kernels();
cudaError_t load_backward_kernels();

}  // namespace alignscope::kernels::profile
