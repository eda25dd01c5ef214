// One GPU's pairwise backend: a job runs as the named stages of PairRun:
// the sequences' lengths, plan (pair_plan.hpp: kernel choice, the pairs for
// the exact CPU path, batches under the memory budget), set up, then the
// stream pipeline (encode and pack into a slot's pinned buffers on the host
// while the previous batch runs, the pass chain per batch; a thread of its
// own waits for each batch in order and turns the GPU's results and packed
// CIGAR runs into Alignments meanwhile), the 32-bit recompute of saturated
// pairs, and the CPU path. Several jobs may run at once.
#include "pairwise/cuda_pair_backend.hpp"

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "common/host_parallel.hpp"
#include "common/stream_pool.hpp"
#include "long/cuda_long_runner.hpp"
#include "pairwise/pair_plan.hpp"
#include "pairwise/pass_launch.hpp"
#include "pairwise/path_completion.hpp"
#include "pairwise/result_vector.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace alignscope::kernels {

struct PinnedStaging {
    PinnedBuffer<std::uint8_t> residues;
    PinnedBuffer<PairTask> tasks;
    PinnedBuffer<PairResult> results;
    PinnedBuffer<std::uint32_t> cigar;
    PinnedBuffer<std::uint32_t> counter;

    std::uint64_t bytes() const {
        return residues.capacity() + tasks.capacity() * sizeof(PairTask) + results.capacity() * sizeof(PairResult) +
               (cigar.capacity() + counter.capacity()) * sizeof(std::uint32_t);
    }
};

namespace {

// Keeps a batch short enough for progress reports, prompt cancellation and a
// pipeline in which the host packs and finishes batches while the device runs
// others (a few tens of milliseconds of kernel time each on an H100), yet
// long enough to fill the device with warps. The environment's
// ALIGNSCOPE_GPU_BATCH_CELLS sets another limit, so that bench can compare
// them in one run. Measured on one H100 (bench, 1,000,000 pairs): 2^32 cells
// made traceback and DNA end to end 12-20 % faster, ends 7 % slower, and the
// kernels 1-10 % slower; in align's chunks of 65,536 pairs it makes a second,
// small batch per chunk (kernel time +20 % with ends, +40 % with CIGAR).
// 2^31 was slower still.
constexpr std::uint64_t kMaxBatchCells = std::uint64_t{1} << 34;

std::uint64_t max_batch_cells() {
    if (const char* text = std::getenv("ALIGNSCOPE_GPU_BATCH_CELLS"); text && *text) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end && *end == 0 && value >= (1ull << 20) && value <= (1ull << 40)) return value;
        throw Error("ALIGNSCOPE_GPU_BATCH_CELLS: expected a number of DP cells from 1048576 to 1099511627776, got '" +
                    std::string(text) + "'");
    }
    return kMaxBatchCells;
}

// A job of more cells than one batch holds is planned and run as parts of
// consecutive pairs (batch_plan.hpp: ramp_parts), the first and the last of
// about kRampCells, none over kRampPartCells: the device starts once the
// first part is planned and packed rather than the whole job, the host
// builds a part's results while the device runs the next ones, and what it
// does after the last kernel is one small part's. The environment's
// ALIGNSCOPE_GPU_RAMP_CELLS sets another first size; 0 plans every job
// whole. Measured on one H100 (bench, 1,000,000 pairs, one run each, end to
// end GCUPS): parts up to 2^33 cells against 2^34: score 764 against
// 609-739, ends 1,680 against 1,537-1,760, traceback 279 against 220-263,
// DNA 231 against 160-229; first parts of 2^30 or 2^32 cells did worse.
constexpr std::uint64_t kRampCells = std::uint64_t{1} << 31;
constexpr std::uint64_t kRampPartCells = std::uint64_t{1} << 33;

std::uint64_t ramp_cells() {
    if (const char* text = std::getenv("ALIGNSCOPE_GPU_RAMP_CELLS"); text && *text) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end && *end == 0 && (value == 0 || (value >= (1ull << 20) && value <= (1ull << 40)))) return value;
        throw Error(
            "ALIGNSCOPE_GPU_RAMP_CELLS: expected 0 or a number of DP cells from 1048576 to 1099511627776, "
            "got '" +
            std::string(text) + "'");
    }
    return kRampCells;
}

// With a part size set, a job of at least twice that many pairs is aligned as
// parts of that many (the last takes the rest), kPartsAtOnce at once, as the
// pair pipeline can do with its chunks: one part's encoding, planning, packing
// and results overlap another's copies and kernels. The environment's
// ALIGNSCOPE_GPU_PART_PAIRS sets the size; 0 (the default, until measured to
// pay) aligns every job whole.
constexpr std::size_t kPartPairs = 0;
constexpr int kPartsAtOnce = 3;

std::size_t part_pairs() {
    if (const char* text = std::getenv("ALIGNSCOPE_GPU_PART_PAIRS"); text && *text) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(text, &end, 10);
        if (end && *end == 0 && value <= (1ull << 30)) return static_cast<std::size_t>(value);
        throw Error("ALIGNSCOPE_GPU_PART_PAIRS: expected a number of pairs from 0 to 1073741824, got '" +
                    std::string(text) + "'");
    }
    return kPartPairs;
}

// A span of host work recorded on the job's timeline beside the GPU's
// kernels and copies (device "gpu:N host", category "host"), so a timeline
// shows where end-to-end time goes when the device waits for the host.
using HostPhase = ScopedHostSpan;

std::string describe_job(const PairJob& job) {
    return "a job of " + std::to_string(job.pairs.size()) + " pairs (" + std::string(to_string(job.options.mode)) +
           ", " + (job.scheme.linear() ? "linear" : "affine") + " gaps)";
}

// Staging the backend keeps between jobs when it is no larger than this.
constexpr std::uint64_t kKeptStagingBytes = std::uint64_t{1} << 30;

}  // namespace

// A stream and what it owns: staging and device buffers reused batch after
// batch, and kept from job to job by the backend (a chunked job calls it again
// and again: allocating them anew each time would cost more than its
// kernels). One job at a time holds a slot.
struct StreamSlot {
    cudaStream_t stream = nullptr;
    std::unique_ptr<PinnedStaging> host;
    DeviceBuffer<std::uint8_t> residues;
    DeviceBuffer<PairTask> tasks;
    DeviceBuffer<PairResult> results;
    DeviceBuffer<std::int32_t> boundary;
    DeviceBuffer<std::uint32_t> trace;
    DeviceBuffer<std::uint32_t> cigar_scratch;
    DeviceBuffer<std::uint32_t> cigar_out;
    DeviceBuffer<std::uint32_t> counter;
    cudaEvent_t done = nullptr;
    int lane = 0;
    bool busy = false;
    Batch batch;
    // Its buffers' bytes when it last went back to the pool: what the backend
    // counts under its mutex, since the job holding a slot grows its buffers
    // without that mutex.
    std::uint64_t pooled_host_bytes = 0, pooled_device_bytes = 0;

    StreamSlot() = default;
    StreamSlot(const StreamSlot&) = delete;
    StreamSlot& operator=(const StreamSlot&) = delete;
    ~StreamSlot() {
        if (stream) (void)cudaStreamSynchronize(stream);
        if (done) (void)cudaEventDestroy(done);
        if (stream) (void)cudaStreamDestroy(stream);
    }
    std::uint64_t device_bytes() const {
        return residues.bytes() + tasks.bytes() + results.bytes() + boundary.bytes() + trace.bytes() +
               cigar_scratch.bytes() + cigar_out.bytes() + counter.bytes();
    }
};

struct MatrixTable {
    std::vector<std::int32_t> values;
    DeviceBuffer<std::int32_t> device;
};

CudaPairBackend::CudaPairBackend(CudaDevice device) : device_(std::move(device)) {}
CudaPairBackend::~CudaPairBackend() = default;

namespace {

// Device memory the backend keeps between jobs (beyond it, a job's buffers
// go): at least this much, or an eighth of the device's memory. Freeing a
// job's buffers waits for the device and the next job allocates them again;
// a million protein pairs of 300x300 hold about 4 GiB of strip boundaries in
// four slots, and more with the traceback's direction words.
constexpr std::uint64_t kKeptDeviceBytes = std::uint64_t{4} << 30;
std::uint64_t kept_device_bytes(const DeviceInfo& info) { return std::max(kKeptDeviceBytes, info.memory_bytes / 8); }

// A buffer grown with room to spare, so that the next batch or job, a little
// larger, does not free and allocate it again.
constexpr std::uint64_t roomy(std::uint64_t count) { return count + count / 8 + 64; }

void validate(const PairJob& job) {
    if (!job.pairs.empty() && (!job.queries || !job.targets))
        throw Error("pair job has pairs but no query or target sequences");
    const ScoringScheme& scheme = job.scheme;
    if (scheme.matrix.size() == 0) throw Error("scoring scheme has no substitution matrix");
    if (scheme.matrix.size() > 32)
        throw Error("substitution matrix " + scheme.matrix.name() + " has " + std::to_string(scheme.matrix.size()) +
                    " letters; the GPU kernels take at most 32");
    if (scheme.gap_open < 0 || scheme.gap_extend < 0)
        throw Error("gap penalties must not be negative (gap open " + std::to_string(scheme.gap_open) +
                    ", gap extend " + std::to_string(scheme.gap_extend) + ", scaled)");
    if (scheme.gap_extend > scheme.gap_open)
        throw Error("gap extend penalty (" + std::to_string(scheme.gap_extend) +
                    ") is larger than the gap open penalty (" + std::to_string(scheme.gap_open) + ")");
    // Checked on the job's threads first; only a job with a bad pair is
    // walked in order, for the error that names the first one.
    const std::size_t queries = job.queries ? job.queries->size() : 0, targets = job.targets ? job.targets->size() : 0;
    std::atomic<bool> bad{false};
    parallel_chunks(
        job.pairs.size(), job.threads,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t k = begin; k < end && !bad.load(std::memory_order_relaxed); ++k) {
                const auto [qi, ti] = job.pairs[k];
                if (qi >= queries || ti >= targets || (*job.queries)[qi].residues.empty() ||
                    (*job.targets)[ti].residues.empty())
                    bad.store(true, std::memory_order_relaxed);
            }
        },
        65536);
    if (!bad.load()) return;
    for (std::size_t k = 0; k < job.pairs.size(); ++k) {
        const auto [qi, ti] = job.pairs[k];
        if (qi >= job.queries->size() || ti >= job.targets->size())
            throw Error("pair " + std::to_string(k) + " refers to query " + std::to_string(qi) + " / target " +
                        std::to_string(ti) + " but the job has " + std::to_string(job.queries->size()) +
                        " queries and " + std::to_string(job.targets->size()) + " targets");
        if ((*job.queries)[qi].residues.empty())
            throw Error("pair " + std::to_string(k) + ": the query sequence '" + (*job.queries)[qi].id +
                        "' is empty: nothing to align");
        if ((*job.targets)[ti].residues.empty())
            throw Error("pair " + std::to_string(k) + ": the target sequence '" + (*job.targets)[ti].id +
                        "' is empty: nothing to align");
    }
}

// The residues of every sequence: the sequences are encoded as matrix codes
// straight into a batch's pinned staging buffer when it is packed
// (PairRun::pack), not into a buffer of their own first.
std::vector<std::uint32_t> sequence_lengths(const std::vector<Sequence>& sequences) {
    std::vector<std::uint32_t> lengths(sequences.size(), 0);
    for (std::size_t k = 0; k < sequences.size(); ++k)
        lengths[k] = static_cast<std::uint32_t>(sequences[k].residues.size());
    return lengths;
}

}  // namespace

// One job on one GPU, as named stages sharing the job's state. align_pairs
// runs them in order: start, encode, set_up, run_parts (per part: plan, then
// per batch pack, upload, launch, finish), recompute_saturated,
// align_on_host, finish_job.
class PairRun {
public:
    // The results go into `out`, resized to the job's pairs, every field of
    // every element written (a buffer the caller keeps between jobs only
    // lends its storage). `first_pair` and `job_pairs`: where this job sits
    // in a job cut into parts (errors name the whole job's pairs; the kernels
    // are chosen as for the whole job).
    PairRun(CudaPairBackend& backend, const PairJob& job, JobContext& context, std::vector<Alignment>& out,
            std::size_t first_pair = 0, std::size_t job_pairs = 0)
        : backend_(backend),
          job_(job),
          context_(context),
          out_(out),
          first_pair_(first_pair),
          job_pairs_(job_pairs),
          device_id_(backend.device_.info.id),
          site_{device_id_ + " (" + backend.device_.info.name + ")", describe_job(job)},
          options_(job.options),
          scheme_(job.scheme) {}
    PairRun(const PairRun&) = delete;
    PairRun& operator=(const PairRun&) = delete;
    // On any failure, lets the device finish with the slots' buffers, then
    // returns them to the pool.
    ~PairRun() {
        return_slots();
        backend_.keep_lengths(std::move(lengths_));
        for (PairPlan& plan : plans_) backend_.keep_plan(std::move(plan));
    }

    void all() {
        if (!start()) return;
        encode();
        set_up();
        run_parts();
        recompute_saturated();
        std::sort(host_pairs_.begin(), host_pairs_.end());
        align_on_host(host_pairs_);
        finish_job();
    }

private:
    // Where each sequence sits in the current batch's residue buffer (valid
    // where stamp == batch_stamp_).
    struct SequencePlaces {
        std::vector<std::uint32_t> stamp;
        std::vector<std::uint64_t> offset;
        explicit SequencePlaces(std::size_t count = 0) : stamp(count, 0), offset(count, 0) {}
    };
    // Device sizes of one packed batch.
    struct PackedSizes {
        std::uint64_t residue_bytes = 0, boundary = 0, trace = 0, cigar = 0;
    };

    bool start();
    void encode();
    PairPlan plan(const std::vector<std::size_t>& indices, bool wide);
    std::string describe_pair(std::size_t pair) const;
    void set_up();
    std::uint64_t batch_budget();
    void upload_matrix();
    StreamSlot& next_slot();
    void return_slots();
    void run_parts();
    void run_batches(const std::vector<Batch>& batches);
    // Runs the batches `produce(enqueue)` hands to enqueue (a callable taking
    // a const Batch&) through the stream slots, a finisher thread turning
    // each into Alignments in order meanwhile.
    template <typename Produce>
    void run_pipeline(Produce&& produce);
    void enqueue_batch(StreamSlot& slot, const Batch& batch);
    void finish_in_order();
    void stop_finisher(std::thread& finisher, bool abandon);
    PackedSizes pack(StreamSlot& slot, const Batch& batch);
    void upload(StreamSlot& slot, const Batch& batch, const PackedSizes& sizes, cudaStream_t stream);
    void launch_passes(StreamSlot& slot, const Batch& batch, cudaStream_t stream);
    template <typename Enqueue>
    void timed(cudaStream_t stream, GpuOp op, Enqueue&& enqueue) {
        std::lock_guard lock(timeline_mutex_);
        timeline_->record(stream, std::move(op), std::forward<Enqueue>(enqueue));
    }
    void finish(StreamSlot& slot);
    void unpack(StreamSlot& slot);
    void fill(Alignment& a, const PairResult& r, const StreamSlot& slot, std::size_t index, const PairLengths& lengths,
              const std::string& kernel) const;
    void recompute_saturated();
    void align_on_host(const std::vector<std::size_t>& pairs);
    void finish_job();
    void take_out();
    // Progress as the finisher thread has counted it, reported from the
    // job's own thread only.
    void report() {
        if (!context_.progress) return;
        Progress now;
        {
            std::lock_guard lock(finish_mutex_);
            now = progress_;
        }
        context_.progress(now);
    }

    CudaPairBackend& backend_;
    const PairJob& job_;
    JobContext& context_;
    std::vector<Alignment>& out_;
    const std::size_t first_pair_, job_pairs_;
    const std::string device_id_;
    const CudaSite site_;
    const AlignOptions& options_;
    const ScoringScheme& scheme_;
    FreeEndGaps ends_;
    bool begins_need_pass_ = false;  // begins cost a reverse pass where the alignment may start anywhere
    bool reverse_pass_ = false;
    int letters_ = 0;

    // The result vector, where it is not the job's size already (a million
    // new Alignments are a quarter of a gigabyte to construct and fault in),
    // is resized on a thread of its own while the host plans and the device
    // runs the first batches; waited for at the first results.
    std::future<void> pending_out_;

    std::vector<std::uint32_t> query_lengths_, target_lengths_;  // sequence_lengths
    std::vector<PairLengths> lengths_;                           // (query, target) residues of every job pair
    std::uint64_t total_cells_ = 0;
    std::uint64_t largest_part_cells_ = 0;  // of the job's parts (0: a job not in parts)
    PairPlanRules rules_;
    std::deque<PairPlan> plans_;           // the parts' plans, which their batches point into
    std::vector<std::size_t> host_pairs_;  // for the exact CPU path, from every part's plan

    int stream_count_ = 0;  // slots the job keeps in flight at most
    std::uint64_t budget_ = 0;
    const std::int32_t* matrix_ = nullptr;  // the backend's
    std::optional<GpuTimeline> timeline_;
    std::mutex timeline_mutex_;                 // timeline_: the job's thread and the finisher enqueue timed operations
    std::vector<StreamSlot*> held_;             // slots taken from the pool
    std::optional<PathCompletion> completion_;  // with traceback

    // The finisher thread takes the batches in the order they were enqueued,
    // waits for each, turns it into Alignments and hands its slot back, while
    // the job's thread packs and enqueues the next ones.
    std::mutex finish_mutex_;  // what follows, and progress_
    std::condition_variable finish_changed_;
    std::deque<StreamSlot*> to_finish_;  // enqueued, oldest first (the front one is being finished)
    std::vector<StreamSlot*> finished_;  // held slots free for the next batch
    bool no_more_batches_ = false;       // the finisher stops once to_finish_ is empty
    bool abandoned_ = false;             // the finisher stops at once (the job failed)
    std::exception_ptr finish_failure_;  // what the finisher threw

    Progress progress_;
    std::vector<std::size_t> saturated_;  // pairs a 16-bit pass may have wrapped
    std::mutex saturated_mutex_;

    PassParams base_;
    SequencePlaces query_place_, target_place_;
    std::uint32_t batch_stamp_ = 0;
    struct Copy {
        const Sequence* sequence;
        bool query;
        std::uint64_t offset;  // in the batch's staging buffer
    };
    std::vector<Copy> copies_;
};

bool PairRun::start() {
    std::optional<HostPhase> prepare(std::in_place, context_.timeline, device_id_, "prepare", job_.pairs.size());
    validate(job_);
    prepare.reset();
    if (job_.pairs.empty()) {
        out_.clear();
        return false;
    }
    if (out_.size() != job_.pairs.size())
        pending_out_ = std::async(std::launch::async, [&out = out_, count = job_.pairs.size(), threads = job_.threads] {
            resize_present(out, count, threads, kPopulatedResultBytes);
        });
    check_cuda(cudaSetDevice(backend_.device_.index), "cudaSetDevice", site_);
    const bool local = options_.mode == AlignmentMode::Local;
    const bool semiglobal = options_.mode == AlignmentMode::SemiGlobal;
    ends_ = semiglobal ? options_.free_ends : FreeEndGaps::none();
    begins_need_pass_ = local || (semiglobal && (ends_.query_begin || ends_.target_begin));
    if (!options_.begins && options_.traceback)
        throw Error("the alignment (traceback) starts from the begin positions: turn traceback off to skip them");
    reverse_pass_ = begins_need_pass_ && options_.begins;
    letters_ = scheme_.matrix.size();
    if (options_.traceback) completion_.emplace(scheme_);
    return true;
}

void PairRun::take_out() {
    if (!pending_out_.valid()) return;
    HostPhase phase(context_.timeline, device_id_, "prepare");
    pending_out_.get();
}

// The lengths of the sequences and of every pair (encoded when packed).
void PairRun::encode() {
    query_lengths_ = sequence_lengths(*job_.queries);
    target_lengths_ = sequence_lengths(*job_.targets);
    context_.throw_if_cancelled();
    // A vector an earlier job left (no fresh pages to fault in on this thread).
    lengths_ = backend_.take_lengths();
    resize_present(lengths_, job_.pairs.size(), job_.threads);
    std::atomic<std::uint64_t> total{0};
    parallel_chunks(
        job_.pairs.size(), job_.threads,
        [&](std::size_t begin, std::size_t end) {
            std::uint64_t cells = 0;
            for (std::size_t k = begin; k < end; ++k) {
                const std::uint32_t m = query_lengths_[job_.pairs[k].first], n = target_lengths_[job_.pairs[k].second];
                lengths_[k] = {static_cast<std::int64_t>(m), static_cast<std::int64_t>(n)};
                cells += static_cast<std::uint64_t>(m) * n;
            }
            total.fetch_add(cells, std::memory_order_relaxed);
        },
        65536);
    total_cells_ = total.load();
    rules_.mode = options_.mode;
    rules_.scheme = scheme_;
    rules_.traceback = options_.traceback;
    if (!job_.kernel.empty()) rules_.forced = parse_kernel_name(job_.kernel, options_.mode, scheme_.linear());
    rules_.sm_count = backend_.device_.info.sm_count;
}

std::string PairRun::describe_pair(std::size_t pair) const {
    const auto [m, n] = lengths_[pair];
    return "pair " + std::to_string(first_pair_ + pair) + " (query '" + (*job_.queries)[job_.pairs[pair].first].id +
           "', " + std::to_string(m) + " residues, x target '" + (*job_.targets)[job_.pairs[pair].second].id + "', " +
           std::to_string(n) + " residues)";
}

PairPlan PairRun::plan(const std::vector<std::size_t>& indices, bool wide) {
    HostPhase phase(context_.timeline, device_id_, "plan", indices.size());
    rules_.job_pairs = wide ? 0 : job_pairs_;  // the recompute's pairs are chosen for as they are
    return PairPlan::make(lengths_, indices, rules_, wide, [this](std::size_t k) { return describe_pair(k); });
}

// Streams, the memory budget of one batch, the substitution table and the
// progress totals.
void PairRun::set_up() {
    std::optional<HostPhase> setup(std::in_place, context_.timeline, device_id_, "setup");
    stream_count_ = job_.streams > 0 ? job_.streams : default_stream_count(backend_.device_.info.sm_count);
    if (stream_count_ < 1 || stream_count_ > 64)
        throw Error("--streams " + std::to_string(stream_count_) + " on " + site_.device +
                    ": expected 1 to 64 streams");
    budget_ = batch_budget();
    upload_matrix();
    timeline_.emplace(context_.timeline, device_id_, site_);
    setup.reset();

    progress_.cells_total = total_cells_;
    progress_.items_total = job_.pairs.size();
    report();

    base_.letters = letters_;
    base_.matrix = matrix_;
    base_.gap_open = scheme_.gap_open;
    base_.gap_extend = scheme_.gap_extend;
    base_.max_score = scheme_.matrix.max_score();
    query_place_ = SequencePlaces(query_lengths_.size());
    target_place_ = SequencePlaces(target_lengths_.size());
}

std::uint64_t PairRun::batch_budget() {
    if (job_.gpu_memory_budget) return budget_per_batch(job_.gpu_memory_budget, stream_count_);
    std::size_t free_bytes = 0, total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", site_);
    // The slots' buffers are the batches' to reuse: count them as free.
    free_bytes += backend_.slot_device_bytes();
    return default_batch_budget(std::min<std::uint64_t>(free_bytes, total_bytes), total_bytes, stream_count_);
}

// The substitution table, [target letter][query letter], padding code scoring 0.
void PairRun::upload_matrix() {
    const int dim = letters_ + 1;
    std::vector<std::int32_t> table(static_cast<std::size_t>(dim * dim), 0);
    for (int qc = 0; qc < letters_; ++qc)
        for (int tc = 0; tc < letters_; ++tc)
            table[static_cast<std::size_t>(tc * dim + qc)] = scheme_.matrix.score(qc, tc);
    matrix_ = backend_.matrix_table(table, site_);
}

// The slot for the next batch: one the finisher gave back, else a free one
// from the pool while the job holds fewer than its streams, else the next one
// the finisher gives back (a job holding slots never waits for another job's).
StreamSlot& PairRun::next_slot() {
    for (;;) {
        {
            std::lock_guard lock(finish_mutex_);
            if (finish_failure_) std::rethrow_exception(finish_failure_);
            if (!finished_.empty()) {
                StreamSlot* slot = finished_.back();
                finished_.pop_back();
                return *slot;
            }
        }
        if (static_cast<int>(held_.size()) < stream_count_) {
            if (StreamSlot* slot = backend_.acquire_slot(stream_count_, held_.empty(), site_)) {
                held_.push_back(slot);
                return *slot;
            }
        }
        report();
        std::unique_lock lock(finish_mutex_);
        finish_changed_.wait(lock, [this] { return !finished_.empty() || finish_failure_; });
    }
}

// Lets the device finish with the held slots' buffers, then returns them. The
// whole stream is waited for, not only a recorded batch: a batch that threw
// while being enqueued has copies or kernels on it but no event yet, and the
// next job to take the slot writes its pinned staging at once.
void PairRun::return_slots() {
    for (StreamSlot* slot : held_) {
        (void)cudaStreamSynchronize(slot->stream);
        slot->busy = false;
        backend_.release_slot(slot);
    }
    held_.clear();
    std::lock_guard lock(finish_mutex_);
    to_finish_.clear();
    finished_.clear();
}

template <typename Produce>
void PairRun::run_pipeline(Produce&& produce) {
    {
        std::lock_guard lock(finish_mutex_);
        no_more_batches_ = abandoned_ = false;
        finish_failure_ = nullptr;
    }
    std::thread finisher([this] { finish_in_order(); });
    try {
        produce([this](const Batch& batch) {
            StreamSlot& slot = next_slot();
            context_.throw_if_cancelled();
            enqueue_batch(slot, batch);
        });
    } catch (...) {
        stop_finisher(finisher, true);
        throw;
    }
    stop_finisher(finisher, false);
    if (finish_failure_) std::rethrow_exception(finish_failure_);
    report();
    return_slots();
}

// The job's pairs as the consecutive parts of ramp_parts, each planned (its
// kernels chosen as for the whole job) and its batches enqueued while the
// device runs the parts before it.
void PairRun::run_parts() {
    const std::uint64_t batch_cells = max_batch_cells();
    const std::vector<std::uint64_t> parts =
        total_cells_ > batch_cells ? ramp_parts(total_cells_, ramp_cells(), std::min(batch_cells, kRampPartCells))
                                   : std::vector<std::uint64_t>{total_cells_};
    largest_part_cells_ = parts.size() > 1 ? *std::max_element(parts.begin(), parts.end()) : 0;
    rules_.job_pairs = job_pairs_ ? job_pairs_ : job_.pairs.size();
    const auto describe = [this](std::size_t k) { return describe_pair(k); };
    // The pairs [first, end) of the next part: up to the cells the parts so
    // far add up to (`cells` counts what earlier parts took).
    const std::size_t pairs = lengths_.size();
    std::size_t next = 0, part = 0;
    std::uint64_t target = 0, cells = 0;
    auto next_range = [&]() -> std::pair<std::size_t, std::size_t> {
        while (part < parts.size() && next < pairs) {
            target += parts[part];
            std::size_t end = part + 1 == parts.size() ? pairs : next;
            ++part;
            for (; end < pairs && cells < target; ++end)
                cells +=
                    static_cast<std::uint64_t>(lengths_[end].first) * static_cast<std::uint64_t>(lengths_[end].second);
            if (end == next) continue;  // a pair of earlier parts holds this part's cells
            const std::pair<std::size_t, std::size_t> range{next, end};
            next = end;
            return range;
        }
        return {pairs, pairs};
    };
    // A part's plan, made on a thread of its own while the job's thread packs
    // and enqueues the part before (planning and packing, one after the
    // other, took longer than the kernels of a score-and-ends job).
    auto plan_ahead = [&](std::pair<std::size_t, std::size_t> range) {
        return std::async(std::launch::async, [this, range, &describe] {
            const std::size_t count = range.second - range.first;
            HostPhase phase(context_.timeline, device_id_, "plan", count);
            PairPlan spare = backend_.take_plan(count);
            return PairPlan::make_range(lengths_, range.first, count, rules_, false, describe, &spare);
        });
    };
    run_pipeline([&](auto&& enqueue) {
        std::pair<std::size_t, std::size_t> range = next_range();
        std::future<PairPlan> ahead;
        if (range.first < range.second) ahead = plan_ahead(range);
        while (ahead.valid()) {
            PairPlan planned = ahead.get();
            range = next_range();
            if (range.first < range.second) ahead = plan_ahead(range);
            const PairPlan& plan = plans_.emplace_back(std::move(planned));
            host_pairs_.insert(host_pairs_.end(), plan.host_pairs().begin(), plan.host_pairs().end());
            for (const Batch& batch : plan.batches(budget_, max_batch_cells(), describe)) enqueue(batch);
        }
    });
}

void PairRun::run_batches(const std::vector<Batch>& batches) {
    if (batches.empty()) return;
    run_pipeline([&](auto&& enqueue) {
        for (const Batch& batch : batches) enqueue(batch);
    });
}

// Packs a batch into the slot, enqueues its copies and passes, and hands it
// to the finisher.
void PairRun::enqueue_batch(StreamSlot& slot, const Batch& batch) {
    slot.batch = batch;
    {
        HostPhase phase(context_.timeline, device_id_, "pack", batch.count);
        const PackedSizes sizes = pack(slot, batch);
        upload(slot, batch, sizes, slot.stream);
        launch_passes(slot, batch, slot.stream);
    }
    check_cuda(cudaEventRecord(slot.done, slot.stream), "cudaEventRecord", site_);
    slot.busy = true;
    {
        std::lock_guard lock(finish_mutex_);
        to_finish_.push_back(&slot);
    }
    finish_changed_.notify_all();
}

// The finisher thread: each enqueued batch in order, waited for and turned
// into Alignments; its slot then goes back to the job's thread.
void PairRun::finish_in_order() {
    try {
        check_cuda(cudaSetDevice(backend_.device_.index), "cudaSetDevice", site_);
        for (;;) {
            StreamSlot* slot = nullptr;
            {
                std::unique_lock lock(finish_mutex_);
                finish_changed_.wait(lock, [this] { return !to_finish_.empty() || no_more_batches_ || abandoned_; });
                if (abandoned_ || to_finish_.empty()) return;
                slot = to_finish_.front();
            }
            finish(*slot);
            {
                std::lock_guard lock(finish_mutex_);
                to_finish_.pop_front();
                finished_.push_back(slot);
                progress_.cells_done += slot->batch.cells;
                progress_.items_done += slot->batch.count;
            }
            finish_changed_.notify_all();
        }
    } catch (...) {
        {
            std::lock_guard lock(finish_mutex_);
            finish_failure_ = std::current_exception();
            abandoned_ = true;
        }
        finish_changed_.notify_all();
    }
}

// Lets the finisher finish what was enqueued (or, with `abandon`, stop at
// once: the job failed, and return_slots waits for the device) and joins it.
void PairRun::stop_finisher(std::thread& finisher, bool abandon) {
    {
        std::lock_guard lock(finish_mutex_);
        no_more_batches_ = true;
        abandoned_ = abandoned_ || abandon;
    }
    finish_changed_.notify_all();
    finisher.join();
}

// Offsets of everything the batch's pairs own on the device, written straight
// into the pinned staging buffer, and the residues encoded there (each
// sequence padded with code `letters`). A sequence several pairs of the batch
// share (one query against many targets) goes once.
PairRun::PackedSizes PairRun::pack(StreamSlot& slot, const Batch& batch) {
    const WorkList& list = *batch.list;
    // Tasks follow the 32-bit layout (the traceback pass's); a 16-bit group
    // of pairs 2g, 2g+1 uses pair 2g's boundary slots.
    const FamilyLayout layout = traceback_layout_of(list.variant);
    slot.host->tasks.reserve(roomy(batch.count), site_);
    PairTask* tasks = slot.host->tasks.data();
    PackedSizes sizes;
    ++batch_stamp_;
    copies_.clear();
    auto place = [&](SequencePlaces& places, std::size_t index, bool query) {
        if (places.stamp[index] != batch_stamp_) {
            places.stamp[index] = batch_stamp_;
            places.offset[index] = sizes.residue_bytes;
            const Sequence& sequence = query ? (*job_.queries)[index] : (*job_.targets)[index];
            copies_.push_back({&sequence, query, sizes.residue_bytes});
            sizes.residue_bytes += padded_residues(static_cast<std::int64_t>(sequence.residues.size()));
        }
        return places.offset[index];
    };
    const std::size_t per_block = static_cast<std::size_t>(layout.pairs_per_warp());
    for (std::size_t block = 0; block < batch.count; block += per_block) {
        const std::size_t in_block = std::min(per_block, batch.count - block);
        BlockShape shape = shape_of(list.lengths, batch.first + block, in_block);
        if (in_block == 1 && block + 1 < batch.count)  // intra: room for the partner's columns too
            shape.max_target = std::max(shape.max_target, list.lengths[batch.first + block + 1].second);
        if (in_block == 1 && block % 2 == 1)
            shape.max_target = std::max(shape.max_target, list.lengths[batch.first + block - 1].second);
        const std::uint64_t steps = static_cast<std::uint64_t>(shape.max_target) + layout.group_threads - 1;
        for (std::size_t g = 0; g < in_block; ++g) {
            PairTask& task = tasks[block + g];
            const auto [m, n] = list.lengths[batch.first + block + g];
            const auto [qi, ti] = job_.pairs[list.pairs[batch.first + block + g]];
            task.query_offset = place(query_place_, qi, true);
            task.target_offset = place(target_place_, ti, false);
            task.query_length = static_cast<std::int32_t>(m);
            task.target_length = static_cast<std::int32_t>(n);
            task.boundary_base = sizes.boundary + g;
            task.trace_base = sizes.trace + g * static_cast<std::uint64_t>(layout.group_threads);
            task.trace_steps = static_cast<std::uint32_t>(steps);
            task.cigar_base = sizes.cigar;
            sizes.cigar += static_cast<std::uint64_t>(m + n + 2);
        }
        sizes.boundary += boundary_slots(layout, shape);
        if (options_.traceback) sizes.trace += trace_words(layout, shape);
    }

    slot.host->residues.reserve(roomy(sizes.residue_bytes), site_);
    slot.host->results.reserve(roomy(batch.count), site_);
    slot.host->counter.reserve(roomy(1), site_);
    parallel_chunks(
        copies_.size(), job_.threads,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t k = begin; k < end; ++k) {
                const Copy& copy = copies_[k];
                const std::string& residues = copy.sequence->residues;
                std::uint8_t* to = slot.host->residues.data() + copy.offset;
                if (const std::size_t bad = encode_into(residues, scheme_.matrix, to); bad != std::string_view::npos)
                    throw unscored_residue(residues, bad, scheme_.matrix,
                                           std::string(copy.query ? "query" : "target") + " '" + copy.sequence->id +
                                               "'");
                std::memset(to + residues.size(), letters_,
                            padded_residues(static_cast<std::int64_t>(residues.size())) - residues.size());
            }
        },
        1024);
    return sizes;
}

// The slot's device buffers grown to the batch, and its residues and tasks copied in.
// A buffer that must grow for a batch of a part smaller than the job's
// largest is made for the largest at once (a part's bytes grow with its
// cells), within the batch budget: growing it again in a later part would
// free it, and freeing device memory waits for the whole device.
void PairRun::upload(StreamSlot& slot, const Batch& batch, const PackedSizes& sizes, cudaStream_t stream) {
    const std::uint64_t boundary = std::max<std::uint64_t>(sizes.boundary, 1) * 2,
                        trace = options_.traceback ? std::max<std::uint64_t>(sizes.trace, 1) : 0,
                        cigar = options_.traceback ? sizes.cigar : 0;
    double scale = 1;
    if (largest_part_cells_ > batch.cells && batch.cells > 0) {
        const std::uint64_t bytes = sizes.residue_bytes + batch.count * (sizeof(PairTask) + sizeof(PairResult)) +
                                    (boundary + trace + 2 * cigar) * 4u;
        scale = std::min(static_cast<double>(largest_part_cells_) / static_cast<double>(batch.cells),
                         0.8 * static_cast<double>(budget_) / static_cast<double>(std::max<std::uint64_t>(bytes, 1)));
    }
    const auto reserve = [&](auto& buffer, std::uint64_t count) {
        const std::uint64_t room = roomy(count);
        if (room <= buffer.capacity()) return;
        buffer.reserve(std::max(room, static_cast<std::uint64_t>(static_cast<double>(room) * scale)), site_);
    };
    reserve(slot.residues, sizes.residue_bytes);
    reserve(slot.tasks, batch.count);
    reserve(slot.results, batch.count);
    reserve(slot.boundary, boundary);
    slot.counter.reserve(roomy(1), site_);
    if (options_.traceback) {
        reserve(slot.trace, trace);
        reserve(slot.cigar_scratch, cigar);
        reserve(slot.cigar_out, cigar);
    }
    timed(stream, {"H2D", "copy", slot.lane, sizes.residue_bytes + batch.count * sizeof(PairTask), 0}, [&] {
        check_cuda(cudaMemcpyAsync(slot.residues.data(), slot.host->residues.data(), sizes.residue_bytes,
                                   cudaMemcpyHostToDevice, stream),
                   "cudaMemcpyAsync(residues)", site_);
        check_cuda(cudaMemcpyAsync(slot.tasks.data(), slot.host->tasks.data(), batch.count * sizeof(PairTask),
                                   cudaMemcpyHostToDevice, stream),
                   "cudaMemcpyAsync(pair tasks)", site_);
        check_cuda(cudaMemsetAsync(slot.counter.data(), 0, sizeof(std::uint32_t), stream),
                   "cudaMemsetAsync(CIGAR counter)", site_);
    });
}

// The pass chain of a batch (forward, reverse for the begins, traceback) and
// the copy of its results.
void PairRun::launch_passes(StreamSlot& slot, const Batch& batch, cudaStream_t stream) {
    const WorkList& list = *batch.list;
    const int lane = slot.lane;
    PassParams params = base_;
    params.residues = slot.residues.data();
    params.tasks = slot.tasks.data();
    params.results = slot.results.data();
    params.count = static_cast<std::int32_t>(batch.count);
    params.longest_target = 0;
    for (std::size_t k = batch.first; k < batch.first + batch.count; ++k)
        params.longest_target =
            std::max(params.longest_target,
                     static_cast<std::int32_t>(std::min<std::int64_t>(list.lengths[k].second, 0x7fffffff)));
    params.boundary = slot.boundary.data();
    params.trace = slot.trace.data();
    params.cigar_scratch = slot.cigar_scratch.data();
    params.cigar_out = slot.cigar_out.data();
    params.cigar_counter = slot.counter.data();

    const std::string kernel = list.variant.name();
    PassParams forward = params;
    forward.kind = PassKind::Forward;
    forward.row0_free = ends_.query_begin;
    forward.col0_free = ends_.target_begin;
    forward.last_row_free = ends_.query_end;
    forward.last_col_free = ends_.target_end;
    timed(stream, {kernel, "kernel", lane, 0, batch.cells, "forward pass"},
          [&] { check_cuda(launch_pass(list.variant, PassKind::Forward, forward, stream), kernel.c_str(), site_); });
    if (reverse_pass_) {
        PassParams reverse = params;
        reverse.kind = PassKind::Reverse;
        reverse.last_row_free = ends_.query_begin;
        reverse.last_col_free = ends_.target_begin;
        reverse.boundary_ends = true;
        timed(stream, {kernel, "kernel", lane, 0, 0, "reverse pass"}, [&] {
            check_cuda(launch_pass(list.variant, PassKind::Reverse, reverse, stream),
                       (kernel + " (reverse pass)").c_str(), site_);
        });
    }
    if (options_.traceback) {
        PassParams traceback = params;
        traceback.kind = PassKind::Traceback;
        KernelVariant traceback_variant = list.variant;
        traceback_variant.width = LaneWidth::S32;
        timed(stream, {traceback_variant.name(), "kernel", lane, 0, 0, "traceback pass"}, [&] {
            check_cuda(launch_pass(traceback_variant, PassKind::Traceback, traceback, stream),
                       (kernel + " (traceback pass)").c_str(), site_);
        });
    }
    timed(stream, {"D2H", "copy", lane, batch.count * sizeof(PairResult), 0}, [&] {
        check_cuda(cudaMemcpyAsync(slot.host->results.data(), slot.results.data(), batch.count * sizeof(PairResult),
                                   cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync(results)", site_);
        check_cuda(cudaMemcpyAsync(slot.host->counter.data(), slot.counter.data(), sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToHost, stream),
                   "cudaMemcpyAsync(CIGAR counter)", site_);
    });
}

// Waits for a batch, fetches its CIGAR runs and turns it into Alignments (on
// the finisher thread).
void PairRun::finish(StreamSlot& slot) {
    take_out();
    {
        HostPhase phase(context_.timeline, device_id_, "wait");
        check_cuda(cudaEventSynchronize(slot.done), "cudaEventSynchronize", site_);
    }
    if (options_.traceback) {
        const std::uint32_t ops = slot.host->counter[0];
        slot.host->cigar.reserve(roomy(std::max<std::uint32_t>(ops, 1)), site_);
        if (ops) {
            const cudaStream_t stream = slot.stream;
            timed(stream, {"D2H", "copy", slot.lane, ops * sizeof(std::uint32_t), 0}, [&] {
                check_cuda(cudaMemcpyAsync(slot.host->cigar.data(), slot.cigar_out.data(), ops * sizeof(std::uint32_t),
                                           cudaMemcpyDeviceToHost, stream),
                           "cudaMemcpyAsync(CIGAR runs)", site_);
            });
            check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize", site_);
        }
    }
    unpack(slot);
    slot.busy = false;
}

void PairRun::unpack(StreamSlot& slot) {
    const Batch& batch = slot.batch;
    const WorkList& list = *batch.list;
    const std::string kernel = list.variant.name();
    HostPhase phase(context_.timeline, device_id_, "results", batch.count);
    parallel_chunks(
        batch.count, job_.threads,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t k = begin; k < end; ++k) {
                const PairResult& r = slot.host->results[k];
                const std::size_t index = list.pairs[batch.first + k];
                if (r.flags & kSaturated) {
                    std::lock_guard saturated_lock(saturated_mutex_);
                    saturated_.push_back(index);
                    continue;
                }
                fill(out_[index], r, slot, index, list.lengths[batch.first + k], kernel);
            }
        },
        512);
}

// The Alignment of one pair's result, written into its place in the job's
// vector (no Alignment built and moved per pair), its CIGAR rescored against
// the score. Every field is written: the place may hold an earlier job's
// result, whose strings' and CIGAR's storage is reused.
void PairRun::fill(Alignment& a, const PairResult& r, const StreamSlot& slot, std::size_t index,
                   const PairLengths& lengths, const std::string& kernel) const {
    const Sequence& query = (*job_.queries)[job_.pairs[index].first];
    const Sequence& target = (*job_.targets)[job_.pairs[index].second];
    if (r.flags & (kPassMismatch | kCigarOverflow))
        throw Error("internal error on " + device_id_ + " in kernel " + kernel + " for pair " +
                    std::to_string(first_pair_ + index) + " ('" + query.id + "' x '" + target.id + "'): " +
                    ((r.flags & kPassMismatch) ? "the reverse pass disagreed with the forward score"
                                               : "the traceback ran past its buffer"));
    a.query_id = query.id;
    a.target_id = target.id;
    a.mode = options_.mode;
    a.score = r.score;
    a.query_length = lengths.first;
    a.target_length = lengths.second;
    a.device = device_id_;
    a.kernel = kernel;
    const bool empty = (r.flags & kEmpty) != 0;
    a.query_begin = !empty && (reverse_pass_ || !begins_need_pass_) ? r.query_begin : 0;
    a.query_end = empty ? 0 : r.query_end;
    a.target_begin = !empty && (reverse_pass_ || !begins_need_pass_) ? r.target_begin : 0;
    a.target_end = empty ? 0 : r.target_end;
    if (empty || !options_.traceback) {
        a.cigar.clear();
        a.query_aligned.clear();
        a.target_aligned.clear();
        a.stats = AlignmentStats();
        return;
    }
    const std::int64_t path = completion_->complete(a, slot.host->cigar.data() + r.cigar_offset, r.cigar_count,
                                                    query.residues, target.residues);
    if (path != a.score)
        throw Error("internal error on " + device_id_ + " in kernel " + kernel + " for pair " +
                    std::to_string(first_pair_ + index) + ": the GPU's CIGAR " + a.cigar.to_string() + " scores " +
                    std::to_string(path) + ", the DP " + std::to_string(a.score));
}

// Recomputes at 32 bits what may have saturated at 16.
void PairRun::recompute_saturated() {
    if (saturated_.empty()) return;
    std::sort(saturated_.begin(), saturated_.end());
    const PairPlan wide = plan(saturated_, true);
    saturated_.clear();
    const std::vector<Batch> batches =
        wide.batches(budget_, max_batch_cells(), [this](std::size_t k) { return describe_pair(k); });
    largest_part_cells_ = 0;  // buffers as these batches need them
    run_batches(batches);
    if (!saturated_.empty()) throw Error("internal error on " + device_id_ + ": a 32-bit pass reported saturation");
    align_on_host(wide.host_pairs());  // none: the first plan kept such pairs off the GPU
}

// Pairs the 32-bit passes cannot hold, on the exact CPU path (the 64-bit
// reference, as device cpu-ref runs it) with the job's threads; their
// Alignments keep this device and name the reference's kernel.
void PairRun::align_on_host(const std::vector<std::size_t>& pairs) {
    if (pairs.empty()) return;
    take_out();
    HostPhase phase(context_.timeline, device_id_, "exact CPU path", pairs.size());
    PairJob host;
    host.queries = job_.queries;
    host.targets = job_.targets;
    host.scheme = job_.scheme;
    host.options = job_.options;
    host.threads = job_.threads;
    host.pairs.reserve(pairs.size());
    for (std::size_t k : pairs) host.pairs.push_back(job_.pairs[k]);
    const Progress before = progress_;
    JobContext host_context;
    host_context.cancel = context_.cancel;
    host_context.timeline = context_.timeline;
    if (context_.progress)
        host_context.progress = [&](const Progress& p) {
            Progress now = before;
            now.cells_done += p.cells_done;
            now.items_done += p.items_done;
            context_.progress(now);
        };
    std::vector<Alignment> done = backend_.exact_cpu_path().align_pairs(host, host_context);
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        done[k].device = device_id_;
        out_[pairs[k]] = std::move(done[k]);
        progress_.cells_done += static_cast<std::uint64_t>(lengths_[pairs[k]].first) *
                                static_cast<std::uint64_t>(lengths_[pairs[k]].second);
    }
    progress_.items_done += pairs.size();
    report();
}

void PairRun::finish_job() {
    HostPhase finish_phase(context_.timeline, device_id_, "finish");
    // Every batch was waited for (its event follows its last copy); other
    // jobs may still be running on the device.
    timeline_->flush();
    take_out();
}

std::vector<Alignment> CudaPairBackend::align_pairs(const PairJob& job, JobContext& context) {
    std::vector<Alignment> out;
    align_pairs_into(job, context, out);
    return out;
}

void CudaPairBackend::align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) {
    const std::size_t part = part_pairs();
    if (part == 0 || job.pairs.size() < 2 * part) {
        PairRun run(*this, job, context, results);
        run.all();
        return;
    }
    align_in_parts(job, context, part, results);
}

// The job as consecutive parts of `part` pairs, kPartsAtOnce at once; their
// progress summed, their results moved into place in job order (`out`
// resized meanwhile on a thread of its own).
void CudaPairBackend::align_in_parts(const PairJob& job, JobContext& context, std::size_t part,
                                     std::vector<Alignment>& out) {
    validate(job);  // errors name the job's pairs, as whole
    const std::size_t n = job.pairs.size(), parts = n / part;
    auto building = std::async(std::launch::async, [&out, n] { out.resize(n); });
    std::vector<std::vector<Alignment>> done(parts);
    std::vector<Progress> progress(parts);
    std::mutex progress_mutex;
    const std::uint64_t cells_total = job.total_cells();
    auto run_part = [&](std::size_t p) {
        const std::size_t first = p * part, end = p + 1 == parts ? n : first + part;
        const PairJob sub = job.with_pairs({job.pairs.begin() + static_cast<std::ptrdiff_t>(first),
                                            job.pairs.begin() + static_cast<std::ptrdiff_t>(end)});
        JobContext sub_context;
        sub_context.cancel = context.cancel;
        sub_context.timeline = context.timeline;
        if (context.progress)
            sub_context.progress = [&, p](const Progress& now) {
                std::lock_guard lock(progress_mutex);
                progress[p] = now;
                Progress sum;
                sum.items_total = n;
                sum.cells_total = cells_total;
                for (const Progress& q : progress) {
                    sum.items_done += q.items_done;
                    sum.cells_done += q.cells_done;
                }
                context.progress(sum);
            };
        PairRun run(*this, sub, sub_context, done[p], first, n);
        run.all();
    };
    std::deque<std::future<void>> running;
    std::exception_ptr failure;
    auto wait_oldest = [&] {
        try {
            running.front().get();
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
        running.pop_front();
    };
    for (std::size_t p = 0; p < parts && !failure; ++p) {
        while (running.size() >= static_cast<std::size_t>(kPartsAtOnce)) wait_oldest();
        if (!failure) running.push_back(std::async(std::launch::async, run_part, p));
    }
    while (!running.empty()) wait_oldest();
    if (failure) std::rethrow_exception(failure);
    building.get();
    parallel_chunks(
        parts, job.threads,
        [&](std::size_t begin, std::size_t end) {
            for (std::size_t p = begin; p < end; ++p)
                std::move(done[p].begin(), done[p].end(), out.begin() + static_cast<std::ptrdiff_t>(p * part));
        },
        1);
}

std::vector<std::pair<std::int64_t, std::int64_t>> CudaPairBackend::take_lengths() {
    std::lock_guard lock(mutex_);
    if (kept_lengths_.empty()) return {};
    const auto most = std::max_element(kept_lengths_.begin(), kept_lengths_.end(),
                                       [](const auto& x, const auto& y) { return x.capacity() < y.capacity(); });
    std::vector<std::pair<std::int64_t, std::int64_t>> taken = std::move(*most);
    kept_lengths_.erase(most);
    return taken;
}

void CudaPairBackend::keep_lengths(std::vector<std::pair<std::int64_t, std::int64_t>>&& lengths) {
    if (lengths.capacity() == 0 || lengths.capacity() > kKeptLengthPairs) return;
    std::lock_guard lock(mutex_);
    if (kept_lengths_.size() < kKeptLengthVectors) kept_lengths_.push_back(std::move(lengths));
}

PairPlan CudaPairBackend::take_plan(std::size_t pairs) {
    std::lock_guard lock(mutex_);
    if (kept_plans_.empty()) return {};
    auto best = kept_plans_.end(), roomiest = kept_plans_.begin();
    for (auto it = kept_plans_.begin(); it != kept_plans_.end(); ++it) {
        const std::size_t room = it->capacity();
        if (room > roomiest->capacity()) roomiest = it;
        if (room >= pairs && (best == kept_plans_.end() || room < best->capacity())) best = it;
    }
    const auto taken_at = best != kept_plans_.end() ? best : roomiest;
    PairPlan taken = std::move(*taken_at);
    kept_plans_.erase(taken_at);
    return taken;
}

void CudaPairBackend::keep_plan(PairPlan&& plan) {
    const std::size_t room = plan.capacity();
    if (room == 0) return;
    std::lock_guard lock(mutex_);
    std::size_t kept = room;
    for (const PairPlan& other : kept_plans_) kept += other.capacity();
    if (kept_plans_.size() < kKeptPlans && kept <= kKeptPlanPairs) kept_plans_.push_back(std::move(plan));
}

Backend& CudaPairBackend::exact_cpu_path() {
    std::lock_guard lock(mutex_);
    if (!cpu_devices_) cpu_devices_ = make_cpu_registry();
    return cpu_devices_->select("cpu-ref");
}

StreamSlot* CudaPairBackend::acquire_slot(int streams, bool wait, const CudaSite& site) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (!free_slots_.empty()) {
            // The one with the most device memory: a job's first batch, packed
            // before the device starts, then finds its buffers made (the slot
            // returned last may have given its buffers back).
            const auto most =
                std::max_element(free_slots_.begin(), free_slots_.end(), [](const auto* x, const auto* y) {
                    return x->pooled_device_bytes < y->pooled_device_bytes;
                });
            StreamSlot* slot = *most;
            free_slots_.erase(most);
            return slot;
        }
        if (static_cast<int>(slots_.size()) < streams) {
            auto slot = std::make_unique<StreamSlot>();
            slot->lane = static_cast<int>(slots_.size());
            slot->host = std::make_unique<PinnedStaging>();
            check_cuda(cudaStreamCreateWithFlags(&slot->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags",
                       site);
            check_cuda(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), "cudaEventCreateWithFlags", site);
            slots_.push_back(std::move(slot));
            return slots_.back().get();
        }
        if (!wait) return nullptr;
        slot_returned_.wait(lock);
    }
}

void CudaPairBackend::release_slot(StreamSlot* slot) {
    {
        std::lock_guard lock(mutex_);
        // This slot as it is, the others as they were when last returned.
        std::uint64_t host_bytes = slot->host ? slot->host->bytes() : 0, device_bytes = slot->device_bytes();
        for (const auto& s : slots_) {
            if (s.get() == slot) continue;
            host_bytes += s->pooled_host_bytes;
            device_bytes += s->pooled_device_bytes;
        }
        if (host_bytes > kKeptStagingBytes) slot->host = std::make_unique<PinnedStaging>();
        if (device_bytes > kept_device_bytes(device_.info)) {
            slot->residues.release();
            slot->tasks.release();
            slot->results.release();
            slot->boundary.release();
            slot->trace.release();
            slot->cigar_scratch.release();
            slot->cigar_out.release();
            slot->counter.release();
        }
        slot->pooled_host_bytes = slot->host ? slot->host->bytes() : 0;
        slot->pooled_device_bytes = slot->device_bytes();
        free_slots_.push_back(slot);
    }
    slot_returned_.notify_one();
}

std::uint64_t CudaPairBackend::slot_device_bytes() {
    std::lock_guard lock(mutex_);
    std::uint64_t bytes = 0;
    for (const auto& slot : slots_) bytes += slot->pooled_device_bytes;
    return bytes;
}

const std::int32_t* CudaPairBackend::matrix_table(const std::vector<std::int32_t>& table, const CudaSite& site) {
    std::lock_guard lock(mutex_);
    for (const auto& kept : tables_)
        if (kept->values == table) return kept->device.data();
    auto made = std::make_unique<MatrixTable>();
    made->values = table;
    made->device.reserve(table.size(), site);
    check_cuda(cudaMemcpy(made->device.data(), table.data(), table.size() * sizeof(std::int32_t),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy(substitution table)", site);
    tables_.push_back(std::move(made));
    return tables_.back()->device.data();
}

void CudaPairBackend::warm_up() {
    const CudaSite site{device_.info.id + " (" + device_.info.name + ")", "start-up"};
    check_cuda(cudaSetDevice(device_.index), "cudaSetDevice", site);
    check_cuda(cudaFree(nullptr), "cudaFree (context creation)", site);
    // The default streams with their slots, made now and returned to the pool.
    const int streams = default_stream_count(device_.info.sm_count);
    std::vector<StreamSlot*> made;
    while (static_cast<int>(made.size()) < streams)
        if (StreamSlot* slot = acquire_slot(streams, false, site)) made.push_back(slot);
        else
            break;
    for (StreamSlot* slot : made) release_slot(slot);
}

std::unique_ptr<longpair::PassRunner> CudaPairBackend::make_long_runner(const LongRunnerSettings& settings) {
    return make_cuda_long_runner(device_.index, device_.info, settings);
}

}  // namespace alignscope::kernels
