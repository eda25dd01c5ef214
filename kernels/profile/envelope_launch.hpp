// Launching the envelope rescoring kernel (envelope_kernel.cu) from host
// code: a batch of envelopes as a plain struct, each with its residues, its
// target's unihit length model and its place in the batch's scratch and
// outputs.
#pragma once

#include "profile/envelope_lanes.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace alignscope::kernels::profile {

// One envelope of a batch. Its scratch (cells, then the null2 uses, then
// the specials: envelope_cell_floats(), envelope_usage_floats(),
// envelope_special_floats()) starts at scratch[scratch_at]; its trace at
// steps[trace_at] with room for trace_room steps; its null2 odds at
// null2[item * K] where wanted.
struct EnvelopeItem {
    std::uint64_t residues_at = 0, scratch_at = 0, trace_at = 0;
    int L = 0, trace_room = 0;
    float loop = 0, move = 0;
    int null2 = 0;
};

struct EnvelopeBatchView {
    const std::uint8_t* residues = nullptr;  // the envelopes' residues back to back
    const EnvelopeItem* items = nullptr;     // work item w is items[w] (longest first)
    float* scratch = nullptr;
    EnvelopeStep* steps = nullptr;          // each item's trace room
    EnvelopeStep* packed = nullptr;         // the traces of the items that decoded, back to back
    std::uint32_t* packed_count = nullptr;  // steps packed so far (must be zero)
    float* null2 = nullptr;                 // K floats an item
    EnvelopeResult* result = nullptr;       // per item
    int K = 0;
    std::uint32_t count = 0;
    std::uint32_t* counter = nullptr;  // must be zero
};

// Threads a block: the wide shape (16 envelopes), or the narrow one (4) for
// a model whose wide block's running rows do not fit shared memory but a
// narrow block's do (as the Forward filter's kRowsNarrowThreads).
inline constexpr int kEnvelopeWideThreads = 64;
inline constexpr int kEnvelopeNarrowThreads = 16;
int envelope_threads_per_block();  // the wide shape's
// Shared memory of a launch of `threads` a block: the groups' rows of M, I
// and D (shared_rows) and the model's striped floats (shared_model).
std::size_t envelope_shared_bytes(int segments, int model_floats, bool shared_rows, bool shared_model,
                                  int threads = kEnvelopeWideThreads);
// kEnvelopeNarrowThreads only with the rows shared and the model not.
cudaError_t launch_envelope_rescore(const EnvelopeBatchView& batch, const ForwardModelView& model, int model_floats,
                                    bool shared_rows, bool shared_model, int blocks, cudaStream_t stream,
                                    int threads = kEnvelopeWideThreads);

}  // namespace alignscope::kernels::profile
