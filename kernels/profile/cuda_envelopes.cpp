// The domain stage's envelope rescoring on the GPU (CudaProfileScanner::
// rescore_envelopes()): envelopes longest first, in batches whose scratch
// (every row of an envelope's Forward, Backward, posteriors and optimal
// accuracy matrices) fits the plan's room for rows; per batch the
// envelopes' residues, the list and the model go up, envelope_kernel.cu runs
// them four threads an envelope, and the scores, null2 odds and the packed
// traceback steps come back and are turned into EnvelopeOutcomes
// (envelope_outcome.hpp). An envelope too large for the room, or whose
// traceback did not fit its room (more than one domain), is redone on the
// CPU by the reference, so every outcome is the CPU's.
#include "profile/cuda_profile_scanner.hpp"
#include "profile/envelope_launch.hpp"
#include "profile/envelope_outcome.hpp"

#include "common/activity_correlation.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/envelope_rescore.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <numeric>
#include <string_view>

namespace alignscope::kernels::profile {

namespace ap = alignscope::profile;

namespace {

// A batch's scratch at most (its rows are written once and read a few
// times: more envelopes at once than the GPU holds threads for gain nothing).
constexpr std::uint64_t kEnvelopeBatchBytes = std::uint64_t{24} << 30;

// Floats of one envelope's scratch, rounded to 32 (128-byte rows' starts).
std::uint64_t envelope_scratch_floats(int L, int Q) {
    const std::uint64_t f = envelope_cell_floats(L, Q) + envelope_usage_floats(Q) + envelope_special_floats(L);
    return (f + 31) / 32 * 32;
}

// Device bytes of one envelope in a batch: scratch, trace room twice (the
// room and the packed copy), null2, residues, the item and its result.
std::uint64_t envelope_bytes(int L, int Q, int M, int K) {
    return envelope_scratch_floats(L, Q) * sizeof(float) +
           2 * static_cast<std::uint64_t>(envelope_trace_room(L, M)) * sizeof(EnvelopeStep) +
           static_cast<std::uint64_t>(K) * sizeof(float) + static_cast<std::uint64_t>(L) + sizeof(EnvelopeItem) +
           sizeof(EnvelopeResult);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// ALIGNSCOPE_GPU_ENVELOPES=0: the envelopes rescored on the CPU threads.
bool CudaProfileScanner::runs_envelopes() const {
    static const bool disabled = gpu_stage_switched_off("ALIGNSCOPE_GPU_ENVELOPES");
    return !disabled;
}

bool CudaProfileScanner::rescore_envelopes(const ap::ForwardProfile& unihit, std::span<const ap::EnvelopeJob> jobs,
                                           std::vector<ap::EnvelopeOutcome>& out, JobContext& context) {
    if (!targets_) throw Error("profile filter scanner: no targets loaded");
    if (!runs_envelopes()) return false;
    for (const ap::EnvelopeJob& job : jobs) {
        if (job.target >= targets_->size()) throw Error("profile filter scanner: envelope target index out of range");
        if (job.i < 1 || job.j < job.i || job.j > targets_->length(job.target))
            throw Error("profile filter scanner: envelope " + std::to_string(job.i) + ".." + std::to_string(job.j) +
                        " is not within target " + std::to_string(job.target));
    }
    context.throw_if_cancelled();
    const auto start = std::chrono::steady_clock::now();
    out.assign(jobs.size(), ap::EnvelopeOutcome{});
    stats_.envelope_cells = 0;
    stats_.envelopes_on_cpu = 0;
    stats_.envelope_kernel_seconds = 0;
    if (jobs.empty()) {
        stats_.envelope_seconds = 0;
        return true;
    }
    select_device();
    plan_for(unihit.length, unihit.codes);
    const int Q = unihit.segments, M = unihit.length;
    const int K = ap::ResidueCode::of(targets_->alphabet).canonical();
    std::vector<std::uint32_t> order(jobs.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return jobs[a].j - jobs[a].i > jobs[b].j - jobs[b].i; });
    // The room: what the plan leaves for rows, less what the other calls hold.
    const std::uint64_t held = forward_specials_.bytes() + backward_scales_.bytes();
    const std::uint64_t room =
        std::min(kEnvelopeBatchBytes, plan_.rows_bytes > held ? plan_.rows_bytes - held : std::uint64_t{0});
    GpuTimeline timeline(context.timeline, info_.id, site("envelope rescoring kernel"));
    std::vector<std::uint32_t> batch, on_cpu;
    std::uint64_t batch_bytes = 0;
    float ms = 0;
    for (std::uint32_t n : order) {
        const int L = jobs[n].j - jobs[n].i + 1;
        stats_.envelope_cells += static_cast<std::uint64_t>(L) * static_cast<std::uint64_t>(M);
        const std::uint64_t bytes = envelope_bytes(L, Q, M, K);
        if (bytes > room) {
            on_cpu.push_back(n);
            continue;
        }
        if (batch_bytes + bytes > room) {
            ms += envelope_batch(unihit, jobs, batch, out, on_cpu, timeline);
            batch.clear();
            batch_bytes = 0;
            context.throw_if_cancelled();
        }
        batch.push_back(n);
        batch_bytes += bytes;
    }
    if (!batch.empty()) ms += envelope_batch(unihit, jobs, batch, out, on_cpu, timeline);
    release_envelope_buffers();
    flush(timeline, context);
    // Too large for the room, or a traceback past its room: the CPU's own.
    ap::parallel_for(
        on_cpu.size(), threads_,
        [&](std::size_t c) {
            const ap::EnvelopeJob& job = jobs[on_cpu[c]];
            out[on_cpu[c]] = ap::rescore_envelope_reference(unihit, targets_->alphabet, targets_->codes(job.target),
                                                            targets_->length(job.target), job);
        },
        1);
    stats_.envelopes_on_cpu = on_cpu.size();
    stats_.envelope_kernel_seconds = ms / 1000.0;
    stats_.envelope_seconds = seconds_since(start);
    return true;
}

void CudaProfileScanner::release_envelope_buffers() {
    envelope_scratch_.release();
    envelope_steps_.release();
    envelope_packed_.release();
    envelope_null2_.release();
    envelope_residues_.release();
    envelope_items_.release();
    envelope_results_.release();
}

CudaProfileScanner::EnvelopeShape CudaProfileScanner::envelope_shape(int Q, int model_floats) const {
    EnvelopeShape shape;
    // Rows in shared memory where two blocks of them fit an SM (the model
    // then read through the cache), else the model there where it fits.
    // ALIGNSCOPE_ENVELOPE_ROWS=global keeps the rows in global memory only.
    static const bool global_rows = [] {
        const char* v = std::getenv("ALIGNSCOPE_ENVELOPE_ROWS");
        return v && std::string_view(v) == "global";
    }();
    shape.shared_rows = !global_rows && envelope_shared_bytes(Q, model_floats, true, false) <= shape_.forward_shared;
    // Else narrow blocks (4 envelopes) whose rows fit, where allowed
    // (ALIGNSCOPE_GPU_NARROW_ROWS=0: not).
    if (!global_rows && !shape.shared_rows && narrow_rows_allowed() &&
        envelope_shared_bytes(Q, model_floats, true, false, kEnvelopeNarrowThreads) <= shape_.forward_shared) {
        shape.shared_rows = true;
        shape.threads = kEnvelopeNarrowThreads;
        // As many blocks an SM as their rows fit. SMC_N on one H100 (DB.fasta
        // x10, 16 threads): 4 an SM rescored 8,155 envelopes in 1.48 s, one an
        // SM (the rest of its memory caching the model) 8,115 in 1.97 s.
        shape.per_sm = blocks_per_sm(envelope_shared_bytes(Q, model_floats, true, false, shape.threads));
    }
    shape.shared_model = !shape.shared_rows && envelope_shared_bytes(Q, model_floats, false, true) <= shared_optin_;
    return shape;
}

float CudaProfileScanner::envelope_batch(const ap::ForwardProfile& unihit, std::span<const ap::EnvelopeJob> jobs,
                                         const std::vector<std::uint32_t>& batch, std::vector<ap::EnvelopeOutcome>& out,
                                         std::vector<std::uint32_t>& on_cpu, GpuTimeline& timeline) {
    const CudaSite where = site("envelope rescoring kernel");
    const int Q = unihit.segments, M = unihit.length;
    const int K = ap::ResidueCode::of(targets_->alphabet).canonical();
    const std::size_t count = batch.size();
    std::vector<EnvelopeItem> items(count);
    std::vector<std::uint8_t> residues;
    std::uint64_t scratch = 0, steps = 0, cells = 0;
    for (std::size_t c = 0; c < count; ++c) {
        const ap::EnvelopeJob& job = jobs[batch[c]];
        const int T = targets_->length(job.target), L = job.j - job.i + 1;
        const ap::LengthModel length = ap::LengthModel::for_target(T, false);
        EnvelopeItem& it = items[c];
        it.residues_at = residues.size();
        it.scratch_at = scratch;
        it.trace_at = steps;
        it.L = L;
        it.trace_room = envelope_trace_room(L, M);
        it.loop = length.loop;
        it.move = length.move;
        it.null2 = job.null2 ? 1 : 0;
        const std::uint8_t* dsq = targets_->codes(job.target) + job.i - 1;
        residues.insert(residues.end(), dsq, dsq + L);
        scratch += envelope_scratch_floats(L, Q);
        steps += static_cast<std::uint64_t>(it.trace_room);
        cells += static_cast<std::uint64_t>(L) * static_cast<std::uint64_t>(M);
    }
    const int model_floats = static_cast<int>(unihit.striped.size());
    const EnvelopeShape shape = envelope_shape(Q, model_floats);
    envelope_scratch_.reserve(scratch, where);
    envelope_steps_.reserve(steps, where);
    envelope_packed_.reserve(steps + 1, where);  // the last one: the packing counter
    envelope_null2_.reserve(count * static_cast<std::size_t>(K), where);
    envelope_residues_.reserve(std::max<std::size_t>(residues.size(), 1), where);
    envelope_items_.reserve(count, where);
    envelope_results_.reserve(count, where);
    forward_model_.reserve(static_cast<std::size_t>(model_floats), where);
    auto put = [&](void* to, const void* from, std::size_t bytes, const char* name) {
        copy(to, from, bytes, cudaMemcpyHostToDevice, name, timeline, where);
    };
    put(forward_model_.data(), unihit.striped.data(), unihit.striped.size() * sizeof(float), "H2D model");
    put(envelope_residues_.data(), residues.data(), residues.size(), "H2D envelopes");
    put(envelope_items_.data(), items.data(), count * sizeof(EnvelopeItem), "H2D envelopes");
    ALIGNSCOPE_CUDA(cudaMemsetAsync(counter_.data(), 0, sizeof(std::uint32_t), stream_), where);
    ALIGNSCOPE_CUDA(cudaMemsetAsync(envelope_packed_.data() + steps, 0, sizeof(EnvelopeStep), stream_), where);
    EnvelopeBatchView view;
    view.residues = envelope_residues_.data();
    view.items = envelope_items_.data();
    view.scratch = envelope_scratch_.data();
    view.steps = envelope_steps_.data();
    view.packed = envelope_packed_.data();
    view.packed_count = reinterpret_cast<std::uint32_t*>(envelope_packed_.data() + steps);
    view.null2 = envelope_null2_.data();
    view.result = envelope_results_.data();
    view.K = K;
    view.count = static_cast<std::uint32_t>(count);
    view.counter = counter_.data();
    const ForwardModelView model = envelope_model_view(unihit, forward_model_.data());
    const int blocks =
        static_cast<int>(std::min<std::size_t>((count * 4 + static_cast<std::size_t>(shape.threads) - 1) /
                                                   static_cast<std::size_t>(shape.threads),
                                               static_cast<std::size_t>(std::max(1, info_.sm_count)) * shape.per_sm));
    ALIGNSCOPE_CUDA(cudaEventRecord(start_, stream_), where);
    static const KernelName kernel = KernelName::parse(kEnvelopeKernelName);
    timeline.record(stream_, kernel_op(kernel, 0, cells), [&] {
        ALIGNSCOPE_CUDA(launch_envelope_rescore(view, model, model_floats, shape.shared_rows, shape.shared_model,
                                                blocks, stream_, shape.threads),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(stop_, stream_), where);
    std::vector<EnvelopeResult> results(count);
    std::uint32_t packed = 0;
    copy(results.data(), envelope_results_.data(), count * sizeof(EnvelopeResult), cudaMemcpyDeviceToHost,
         "D2H envelopes", timeline, where);
    copy(&packed, view.packed_count, sizeof packed, cudaMemcpyDeviceToHost, "D2H envelopes", timeline, where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    if (packed > steps) throw Error(info_.id + ": the envelope kernel packed more trace steps than it had room for");
    std::vector<EnvelopeStep> packed_steps(packed);
    std::vector<float> null2(count * static_cast<std::size_t>(K));
    copy(packed_steps.data(), envelope_packed_.data(), packed * sizeof(EnvelopeStep), cudaMemcpyDeviceToHost,
         "D2H traces", timeline, where);
    copy(null2.data(), envelope_null2_.data(), null2.size() * sizeof(float), cudaMemcpyDeviceToHost, "D2H null2",
         timeline, where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    float ms = 0;
    ALIGNSCOPE_CUDA(cudaEventElapsedTime(&ms, start_, stop_), where);
    std::vector<char> redo(count, 0);
    // (Threads only for large batches: the pipeline's worker threads are busy beside this call.)
    ap::parallel_for(count, count >= 4096 ? threads_ : 1, [&](std::size_t c) {
        const EnvelopeResult& r = results[c];
        const ap::EnvelopeJob& job = jobs[batch[c]];
        if (r.decoded && r.status == kEnvelopeOk &&
            static_cast<std::uint64_t>(r.packed_at) + static_cast<std::uint64_t>(r.steps) > packed)
            throw Error(info_.id + ": an envelope's trace steps lie outside what the kernel packed");
        auto outcome = envelope_outcome(r, packed_steps.data() + r.packed_at,
                                        job.null2 ? null2.data() + c * static_cast<std::size_t>(K) : nullptr,
                                        items[c].L, targets_->alphabet, targets_->length(job.target));
        if (outcome) out[batch[c]] = std::move(*outcome);
        else
            redo[c] = 1;
    });
    for (std::size_t c = 0; c < count; ++c)
        if (redo[c]) on_cpu.push_back(batch[c]);
    return ms;
}

}  // namespace alignscope::kernels::profile
