// The profile filter scanner of one GPU: the targets uploaded once (residue
// codes back to back, longest first as work order), then per model the SSV
// kernel over every target, the MSV kernel over the few whose J state could
// matter, and the Viterbi filter kernel over the targets the pipeline lists.
// Scores equal the CPU scanners' bit for bit (same integer recurrences, same
// final float step). Models too long for the compiled kernels are filtered on
// the CPU threads instead, with the same scores. forward(): the parser
// Forward of the Viterbi filter's survivors, four threads a target, the CPU's
// float arithmetic in the CPU's order (forward_lanes.hpp), the same scores;
// backward(): the parser Backward of those past the Fwd filter the same way
// (backward_lanes.hpp), every row's specials the CPU's.
// Memory: a budget (set_memory_budget, default 90 % of the free memory) is
// planned on the host (memory_plan.hpp); targets that do not fit it are
// loaded and scanned in slices of consecutive targets, longest first within
// each slice, with the same scores.
#pragma once

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "profile/envelope_launch.hpp"
#include "profile/filter_launch.hpp"
#include "profile/memory_plan.hpp"

#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/filter_scan.hpp>

#include <cstdint>
#include <vector>

namespace alignscope::kernels::profile {

// Whether the environment variable `name` is "0": the GPU stage it names
// (ALIGNSCOPE_GPU_FORWARD, _BACKWARD, _ENVELOPES) then runs on the CPU
// threads, to compare the two. The runs_*() functions read it once.
bool gpu_stage_switched_off(const char* name);
// ALIGNSCOPE_GPU_NARROW_ROWS=0: a large model's Forward, Backward and
// envelope rows without the narrow blocks (the same results; to compare the
// shapes' speed).
bool narrow_rows_allowed();

class CudaProfileScanner final : public alignscope::profile::ProfileFilterScanner {
public:
    CudaProfileScanner(int device_index, DeviceInfo info, int threads);
    ~CudaProfileScanner() override;
    CudaProfileScanner(const CudaProfileScanner&) = delete;
    CudaProfileScanner& operator=(const CudaProfileScanner&) = delete;

    DeviceInfo info() const override { return info_; }
    void set_memory_budget(std::uint64_t bytes) override { requested_budget_ = bytes; }
    void load(const alignscope::profile::ProfileTargets& targets, JobContext& context) override;
    void msv(const alignscope::profile::MsvProfile& model, std::span<float> scores, JobContext& context) override;
    void viterbi(const alignscope::profile::ViterbiFilterProfile& model, std::span<const std::uint32_t> targets,
                 std::span<float> scores, JobContext& context) override;
    bool forward(const alignscope::profile::ForwardProfile& model, std::span<const std::uint32_t> targets,
                 alignscope::profile::ForwardScores& out, JobContext& context) override;
    bool runs_forward() const override;
    bool backward(const alignscope::profile::ForwardProfile& model, std::span<const std::uint32_t> forward_targets,
                  const alignscope::profile::ForwardScores& forward, std::span<const std::uint32_t> positions,
                  alignscope::profile::BackwardScores& out, JobContext& context) override;
    bool runs_backward() const override;
    // The domain stage's envelope rescoring (cuda_envelopes.cpp, envelope_lanes.hpp).
    bool rescore_envelopes(const alignscope::profile::ForwardProfile& unihit,
                           std::span<const alignscope::profile::EnvelopeJob> jobs,
                           std::vector<alignscope::profile::EnvelopeOutcome>& out, JobContext& context) override;
    bool runs_envelopes() const override;
    alignscope::profile::ProfileFilterStats last_stats() const override { return stats_; }

    // The plan the scanner works to for the last model it saw.
    const ProfileMemoryPlan& memory_plan() const { return plan_; }

    // SSV then MSV (full = false), or the MSV kernel alone over every target
    // (full = true): the raw per-target codes, for verification.
    std::vector<std::int32_t> msv_codes(const alignscope::profile::MsvProfile& model, bool full_only);

private:
    CudaSite site(const char* job) const;
    void select_device() const;
    int blocks_for(std::uint32_t items) const;
    void ensure_length_tables(const alignscope::profile::MsvProfile* msv,
                              const alignscope::profile::ViterbiFilterProfile* viterbi, GpuTimeline& timeline);
    // Runs one MSV-family launch over `count` items of `order` (device array)
    // and returns the kernel's milliseconds; `cells` for the timeline.
    float run_msv(int segments, const std::uint32_t* order, std::uint32_t count, bool full, std::uint64_t cells,
                  GpuTimeline& timeline);
    std::vector<std::int32_t> msv_codes(const alignscope::profile::MsvProfile& model, bool full_only,
                                        GpuTimeline& timeline);
    // One slice's SSV (and MSV) codes into codes[slice.begin, slice.end).
    float msv_slice(const alignscope::profile::MsvProfile& model, int segments, bool full_only,
                    std::vector<std::int32_t>& codes, GpuTimeline& timeline);
    // Plans the slices for a model of `length` nodes (throws Error naming
    // --gpu-mem where not even one target fits); a new plan drops the loaded slice.
    void plan_for(int length, int codes);
    // Lets go of the targets' buffers (a new plan or a new load).
    void release_targets();
    // Makes slice s the loaded one (residues, offsets from 0, longest-first order).
    void load_slice(std::size_t s, GpuTimeline& timeline);
    // The Viterbi filter kernel over targets of the loaded slice (local
    // indices), codes in list order; returns the kernel's milliseconds.
    float viterbi_slice(const alignscope::profile::ViterbiFilterProfile& model, int segments,
                        const std::vector<std::uint32_t>& local, std::vector<std::int32_t>& codes,
                        GpuTimeline& timeline);
    // Forward over positions of the list whose targets lie in the loaded
    // slice (rows within the plan's room); their specials into out at
    // out.first_row. Returns the kernel's milliseconds.
    float forward_chunk(const alignscope::profile::ForwardProfile& model, std::span<const std::uint32_t> targets,
                        const std::vector<std::uint32_t>& positions, alignscope::profile::ForwardScores& out,
                        std::vector<float2>& result, GpuTimeline& timeline);
    // Backward over entries `items` of out (forward_targets[positions[j]] for
    // j in items, all in the loaded slice, rows within the plan's room); their
    // specials into out at out.first_row, row 0's N and the total scale into
    // result[j]. Returns the kernel's milliseconds.
    float backward_chunk(const alignscope::profile::ForwardProfile& model,
                         std::span<const std::uint32_t> forward_targets,
                         const alignscope::profile::ForwardScores& forward, std::span<const std::uint32_t> positions,
                         const std::vector<std::uint32_t>& items, alignscope::profile::BackwardScores& out,
                         std::vector<float2>& result, GpuTimeline& timeline);
    // One chunk of the Forward or Backward kernel laid out as the kernels
    // read it: per entry (chunk order) its target's multihit length model,
    // the first of its rows in the chunk's specials and its index in the
    // loaded slice; the entries longest first; the launch's shape (rows and
    // model in shared memory where two blocks still fit an SM).
    struct RowsChunk {
        std::vector<float2> length;
        std::vector<std::uint64_t> first_row;
        std::vector<std::uint32_t> local, order;
        std::uint64_t rows = 0, cells = 0;
        int model_floats = 0, blocks = 0;
        std::uint32_t stride = 0;
        bool shared_rows = false, shared_model = false;
        int threads = kRowsWideThreads;  // a block's, or kRowsNarrowThreads
    };
    // The chunk of `targets` (loaded targets, all in the loaded slice).
    RowsChunk rows_chunk(const alignscope::profile::ForwardProfile& model,
                         const std::vector<std::uint32_t>& targets) const;
    // The model and the chunk's list to the device (the buffers grown to
    // fit; the rows' own buffers are the caller's), the work counter zeroed.
    void upload_rows_chunk(const alignscope::profile::ForwardProfile& model, const RowsChunk& chunk,
                           GpuTimeline& timeline, const CudaSite& where);
    // A ForwardBatchView or BackwardBatchView over the uploaded chunk (a
    // Backward's scale factors are the caller's to set).
    template <class Batch>
    Batch rows_batch(const RowsChunk& chunk) const;
    // The end of a Forward or Backward chunk whose kernel (timed by start_
    // and stop_) is queued: the results and the rows' specials back (rows
    // straight into `specials` when the chunk is the whole list in its
    // order); chunk entry c's result into result[entries[c]], its rows
    // (first_row[c] up to the next entry's, or `rows`) into `specials` from
    // out_first_row[entries[c]]. Returns the kernel's milliseconds.
    float rows_back(const std::vector<std::uint32_t>& entries, const std::vector<std::uint64_t>& first_row,
                    std::uint64_t rows, bool whole, std::vector<float>& specials,
                    const std::vector<std::uint64_t>& out_first_row, std::vector<float2>& result, GpuTimeline& timeline,
                    const CudaSite& where);
    // A host-to-device or device-to-host copy on the stream, on the timeline as `name`.
    void copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, const char* name,
              GpuTimeline& timeline, const CudaSite& where);
    // The Forward kernel's results turned into scores (forward_score_of).
    void forward_scores(std::span<const std::uint32_t> targets, const std::vector<float2>& result,
                        alignscope::profile::ForwardScores& out) const;
    // One batch of rescore_envelopes(): jobs[batch[c]] on the GPU, outcomes
    // into out; those whose traceback had no room onto on_cpu. Returns the
    // kernel's milliseconds.
    float envelope_batch(const alignscope::profile::ForwardProfile& unihit,
                         std::span<const alignscope::profile::EnvelopeJob> jobs,
                         const std::vector<std::uint32_t>& batch,
                         std::vector<alignscope::profile::EnvelopeOutcome>& out, std::vector<std::uint32_t>& on_cpu,
                         GpuTimeline& timeline);
    void release_envelope_buffers();
    // The envelope kernel's launch shape for a model of Q segments.
    struct EnvelopeShape {
        bool shared_rows = false, shared_model = false;
        int threads = kEnvelopeWideThreads;  // a block's, or kEnvelopeNarrowThreads
        std::size_t per_sm = 32;             // blocks an SM at most
    };
    EnvelopeShape envelope_shape(int Q, int model_floats) const;
    // Blocks of `shared_bytes` dynamic shared memory each (and the 1 KiB the
    // device reserves a block) that fit an SM at once; at least one.
    std::size_t blocks_per_sm(std::size_t shared_bytes) const;
    // Hands the call's timeline to the job's sink (the device idle).
    static void flush(GpuTimeline& timeline, JobContext& context);

    int device_;
    DeviceInfo info_;
    int threads_;
    const alignscope::profile::ProfileTargets* targets_ = nullptr;
    std::uint64_t requested_budget_ = 0;  // 0: 90 % of the free memory at load()
    std::uint64_t budget_ = 0;            // what load() settled on
    std::uint64_t model_reserve_ = 0;     // the largest model part so far (buffers never shrink)
    ProfileDeviceShape shape_;
    ProfileMemoryPlan plan_;
    static constexpr std::size_t kNoSlice = static_cast<std::size_t>(-1);
    std::size_t loaded_slice_ = kNoSlice;
    std::size_t shared_optin_ = 0;   // the device's opt-in shared memory per block
    std::size_t shared_per_sm_ = 0;  // and per multiprocessor
    cudaStream_t stream_ = nullptr;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    DeviceBuffer<std::uint8_t> residues_;
    DeviceBuffer<std::uint64_t> offsets_;
    DeviceBuffer<std::uint32_t> order_;  // every target, longest first
    DeviceBuffer<std::uint8_t> tjb_;     // per target: MSV's N/J->B cost
    DeviceBuffer<std::int16_t> ncj_;     // per target: the Viterbi filter's N/C/J move cost
    DeviceBuffer<std::uint32_t> msv_cost_;
    DeviceBuffer<std::int16_t> viterbi_tables_;
    DeviceBuffer<std::uint32_t> list_, list_order_, counter_;
    DeviceBuffer<std::int32_t> out_;
    // The Forward filter's model, list, per-target length model, rows and results.
    DeviceBuffer<float> forward_model_, forward_specials_, forward_scratch_;
    DeviceBuffer<float2> forward_length_, forward_result_;
    DeviceBuffer<std::uint64_t> forward_first_row_;
    // Backward's Forward scale factors, packed (its rows go to forward_specials_).
    DeviceBuffer<float> backward_scales_;
    // rescore_envelopes()'s batch: scratch, trace rooms and packed traces,
    // null2 odds, residues, the list and results (released after each call).
    DeviceBuffer<float> envelope_scratch_, envelope_null2_;
    DeviceBuffer<EnvelopeStep> envelope_steps_, envelope_packed_;
    DeviceBuffer<std::uint8_t> envelope_residues_;
    DeviceBuffer<EnvelopeItem> envelope_items_;
    DeviceBuffer<EnvelopeResult> envelope_results_;
    std::vector<std::uint32_t> host_order_;  // the loaded slice's targets (local), longest first
    float tjb_scale_ = 0, ncj_scale_ = 0;    // the scales the length tables were made for
    MsvParams msv_params_;                   // the model of the running msv() call
    alignscope::profile::ProfileFilterStats stats_;
};

}  // namespace alignscope::kernels::profile
