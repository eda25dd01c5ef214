// The GPU envelope rescoring: four threads an envelope, each one lane of
// HMMER's striped four-float layout running envelope_rescore()
// (envelope_lanes.hpp): the unihit Forward and Backward with every row kept
// in the batch's global scratch, posterior decoding and the optimal accuracy
// DP in place over them, null2 and (the group's first thread) the
// traceback. The running recurrence's row sits in shared memory where it
// fits (every row also goes to the global scratch). Every product and sum is the SSE code's, rounded alone (PTX
// .rn, never fused) with subnormals flushed (.ftz: SSE's FTZ/DAZ). The
// model sits in shared memory where it fits; groups take envelopes longest
// first from a global counter.
#include "profile/envelope_launch.hpp"
#include "profile/four_lanes.cuh"

#include <cstdlib>
#include <string_view>

namespace alignscope::kernels::profile {

namespace {

// One lane of an envelope's four. The rows the lanes code points at are in
// the global scratch; with SharedRows the running recurrence's row is also
// kept in one shared-memory row of the group, updated in place (the lanes
// code reads each cell of the previous row before it stores that cell of
// the next), tagged with the global M row it mirrors: every store goes to
// both, every read of that row from shared memory (a few cycles instead of
// a global load's hundreds).
template <bool SharedRows, int Chunk>
struct DeviceEnvelopeLanes : FourLanes {
    static constexpr int kChunk = Chunk;
    float* rows[3];
    const float* before[3];
    int W;                 // 4Q
    float* buffer;         // the group's shared row of M, I, D (3W floats), updated in place
    const float* mirror;   // the global M row it holds
    bool previous_shared;  // the previous row is the one the buffer holds (until overwritten)

    __device__ void set_rows(float* m, float* i, float* d) {
        rows[0] = m, rows[1] = i, rows[2] = d;
        if constexpr (SharedRows) mirror = m;
    }
    __device__ void set_prev(const float* m, const float* i, const float* d) {
        before[0] = m, before[1] = i, before[2] = d;
        if constexpr (SharedRows) previous_shared = mirror == m;
    }
    // Comparisons as SSE's under DAZ (a subnormal reads as 0).
    __device__ static bool greater(float a, float b) {
        unsigned r;
        asm("{ .reg .pred p; setp.gt.ftz.f32 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a), "f"(b));
        return r != 0;
    }
    // The model's floats: through the read-only cache when the rows are in
    // shared memory (the model is then in global memory), else where it is.
    __device__ float seg(const float* p) const {
        if constexpr (SharedRows) return __ldg(p + lane);
        else
            return p[lane];
    }
    __device__ float at(const float* row, int q) const { return row[q * 4 + lane]; }
    __device__ void store(float* row, int q, float v) const { row[q * 4 + lane] = v; }
    __device__ float shift_up_fill(float a, float fill) const {
        const float v = __shfl_up_sync(mask, a, 1, 4);
        return lane == 0 ? fill : v;
    }
    __device__ static float vmax(float a, float b) { return greater(a, b) ? a : b; }
    __device__ static float gate(float t, float v) { return greater(t, 0.0f) ? v : 0.0f; }
    __device__ float lane_max(float a) const {
        const float t0 = __shfl_sync(mask, a, 0, 4), t1 = __shfl_sync(mask, a, 1, 4);
        const float t2 = __shfl_sync(mask, a, 2, 4), t3 = __shfl_sync(mask, a, 3, 4);
        return envelope_max(envelope_max(t0, t1), envelope_max(t2, t3));
    }
    __device__ static void note_greater(bool& f, float a, float b) { f = f || greater(a, b); }
    __device__ void sync() const { __syncwarp(mask); }
    __device__ float get(int a, int q) const {
        if constexpr (SharedRows) return buffer[a * W + q * 4 + lane];
        else
            return rows[a][q * 4 + lane];
    }
    __device__ void put(int a, int q, float v) {
        if constexpr (SharedRows) buffer[a * W + q * 4 + lane] = v;
        rows[a][q * 4 + lane] = v;
    }
    __device__ float prev(int a, int q) const {
        if constexpr (SharedRows)
            if (previous_shared) return buffer[a * W + q * 4 + lane];
        return before[a][q * 4 + lane];
    }
};

// Shared memory: the groups' row buffers (SharedRows), then the model
// (shared_model). Threads a block: kEnvelopeWideThreads or kEnvelopeNarrowThreads.
template <bool SharedRows, int Chunk, int Threads>
__global__ void __launch_bounds__(Threads)
    envelope_rescore_kernel(EnvelopeBatchView batch, ForwardModelView model, int model_floats, bool shared_model) {
    extern __shared__ float shared_floats[];
    const int W = 4 * model.Q;
    model.striped = block_model(model.striped, shared_floats + (SharedRows ? 3 * W * (Threads / 4) : 0), model_floats,
                                shared_model);
    DeviceEnvelopeLanes<SharedRows, Chunk> g{FourLanes::of_thread()};
    const int lane = g.lane;
    g.W = W;
    float* group_rows = shared_floats + static_cast<std::size_t>(threadIdx.x / 4) * 3 * W;
    g.buffer = group_rows;
    const int Q = model.Q;
    for (;;) {
        const std::uint32_t item = g.next_item(batch.counter);
        if (item >= batch.count) break;
        const EnvelopeItem it = batch.items[item];
        EnvelopeView t;
        t.dsq = batch.residues + it.residues_at;
        t.L = it.L;
        t.loop = it.loop;
        t.move = it.move;
        t.cells = batch.scratch + it.scratch_at;
        t.usage = t.cells + envelope_cell_floats(it.L, Q);
        t.specials = t.usage + envelope_usage_floats(Q);
        t.null2 = it.null2 ? batch.null2 + static_cast<std::size_t>(item) * static_cast<std::size_t>(batch.K) : nullptr;
        t.K = batch.K;
        t.trace = batch.steps + it.trace_at;
        t.trace_room = it.trace_room;
        g.mirror = nullptr;
        g.previous_shared = false;
        EnvelopeResult r = envelope_rescore(g, model, t);
        // The trace (the lead lane's) packed beside the others by all four.
        const int steps = __shfl_sync(g.mask, r.decoded && r.status == kEnvelopeOk ? r.steps : 0, 0, 4);
        std::uint32_t at = 0;
        if (lane == 0 && steps > 0) at = atomicAdd(batch.packed_count, static_cast<std::uint32_t>(steps));
        at = __shfl_sync(g.mask, at, 0, 4);
        g.sync();
        for (int z = lane; z < steps; z += 4) batch.packed[at + static_cast<std::uint32_t>(z)] = t.trace[z];
        if (lane == 0) {
            r.packed_at = at;
            batch.result[item] = r;
        }
    }
}

template <bool SharedRows, int Chunk, int Threads = kEnvelopeWideThreads>
cudaError_t envelope_at(const EnvelopeBatchView& batch, const ForwardModelView& model, int model_floats,
                        bool shared_model, int blocks, cudaStream_t stream) {
    return launch_with_shared(envelope_rescore_kernel<SharedRows, Chunk, Threads>, blocks, Threads,
                              envelope_shared_bytes(model.Q, model_floats, SharedRows, shared_model, Threads), stream,
                              batch, model, model_floats, shared_model);
}

}  // namespace

int envelope_threads_per_block() { return kEnvelopeWideThreads; }

std::size_t envelope_shared_bytes(int segments, int model_floats, bool shared_rows, bool shared_model, int threads) {
    const std::size_t rows = shared_rows ? static_cast<std::size_t>(3) * 4 * static_cast<std::size_t>(segments) *
                                               static_cast<std::size_t>(threads / 4)
                                         : 0;
    return (rows + (shared_model ? static_cast<std::size_t>(model_floats) : 0)) * sizeof(float);
}

// ALIGNSCOPE_ENVELOPE_CHUNK=1: the rows' loads one segment at a time (to
// compare with the default chunks).
cudaError_t launch_envelope_rescore(const EnvelopeBatchView& batch, const ForwardModelView& model, int model_floats,
                                    bool shared_rows, bool shared_model, int blocks, cudaStream_t stream, int threads) {
    static const bool single = [] {
        const char* v = std::getenv("ALIGNSCOPE_ENVELOPE_CHUNK");
        return v && std::string_view(v) == "1";
    }();
    if (threads == kEnvelopeNarrowThreads) {
        if (!shared_rows || shared_model) return cudaErrorInvalidConfiguration;
        return single ? envelope_at<true, 1, kEnvelopeNarrowThreads>(batch, model, model_floats, false, blocks, stream)
                      : envelope_at<true, kEnvelopeChunk, kEnvelopeNarrowThreads>(batch, model, model_floats, false,
                                                                                  blocks, stream);
    }
    if (threads != kEnvelopeWideThreads) return cudaErrorInvalidConfiguration;
    if (single)
        return shared_rows ? envelope_at<true, 1>(batch, model, model_floats, shared_model, blocks, stream)
                           : envelope_at<false, 1>(batch, model, model_floats, shared_model, blocks, stream);
    return shared_rows ? envelope_at<true, kEnvelopeChunk>(batch, model, model_floats, shared_model, blocks, stream)
                       : envelope_at<false, kEnvelopeChunk>(batch, model, model_floats, shared_model, blocks, stream);
}

}  // namespace alignscope::kernels::profile
