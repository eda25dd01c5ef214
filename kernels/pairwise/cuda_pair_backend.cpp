// One GPU's pairwise backend: encoding, kernel choice, batch planning under the
// memory budget, the stream pipeline (pack on the host while the previous
// batch runs), the pass chain per batch and turning the GPU's results and
// packed CIGAR runs into Alignments.
#include "pairwise/cuda_pair_backend.hpp"

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "long/cuda_long_runner.hpp"
#include "common/host_parallel.hpp"
#include "common/stream_pool.hpp"
#include "pairwise/batch_plan.hpp"
#include "pairwise/family_layout.hpp"
#include "pairwise/kernel_choice.hpp"
#include "pairwise/pass_launch.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>

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

CudaPairBackend::CudaPairBackend(CudaDevice device) : device_(std::move(device)) {}
CudaPairBackend::~CudaPairBackend() = default;

namespace {

// Keeps a batch short enough for progress reports, prompt cancellation and a
// pipeline in which the host packs and unpacks batches while the device runs
// others (a few tens of milliseconds of kernel time each on an H100), yet
// long enough to fill the device with warps.
constexpr std::uint64_t kMaxBatchCells = std::uint64_t{1} << 34;

// A span of host work recorded on the job's timeline beside the GPU's
// kernels and copies (device "gpu:N host", category "host"), so a timeline
// shows where end-to-end time goes when the device waits for the host.
class HostPhase {
public:
    HostPhase(TimelineSink* sink, const std::string& device, const char* name, std::uint64_t items = 0)
        : sink_(sink), device_(device), name_(name), items_(items), start_(sink ? steady_now_ns() : 0) {}
    ~HostPhase() {
        if (!sink_) return;
        TimelineEvent event;
        event.name = name_;
        event.category = "host";
        event.device = device_ + " host";
        event.start_ns = start_;
        event.end_ns = steady_now_ns();
        event.cells = items_;
        try {
            sink_->record(std::move(event));
        } catch (...) {
            // A timeline that cannot take an event must not fail the job.
        }
    }
    HostPhase(const HostPhase&) = delete;
    HostPhase& operator=(const HostPhase&) = delete;

private:
    TimelineSink* sink_;
    const std::string& device_;
    const char* name_;
    std::uint64_t items_;
    std::int64_t start_;
};

std::string describe_job(const PairJob& job) {
    return "a job of " + std::to_string(job.pairs.size()) + " pairs (" + std::string(to_string(job.options.mode)) +
           ", " + (job.scheme.linear() ? "linear" : "affine") + " gaps)";
}

// The pairs one kernel variant runs, in kernel order (longest first, so each
// warp block holds pairs of similar shape).
struct WorkList {
    KernelVariant variant;
    FamilyLayout layout;
    std::vector<std::size_t> pairs;                                  // job pair indices
    std::vector<std::pair<std::int64_t, std::int64_t>> lengths;     // (m, n) in the same order
    std::vector<std::size_t> unit_first;                             // unit k starts at pairs[unit_first[k]]
    std::vector<UnitCost> units;
};

struct Batch {
    const WorkList* list = nullptr;
    std::size_t first = 0;  // position in list->pairs
    std::size_t count = 0;
    std::uint64_t cells = 0;
};

// Staging the backend keeps between jobs when it is no larger than this.
constexpr std::uint64_t kKeptStagingBytes = std::uint64_t{1} << 30;

}  // namespace

// What one stream owns: staging and device buffers reused batch after batch,
// and kept from job to job by the backend (a chunked job calls it again and
// again: allocating them anew each time would cost more than its kernels).
struct StreamSlot {
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

    StreamSlot() = default;
    StreamSlot(const StreamSlot&) = delete;
    StreamSlot& operator=(const StreamSlot&) = delete;
    ~StreamSlot() {
        if (done) (void)cudaEventDestroy(done);
    }
    std::uint64_t device_bytes() const {
        return residues.bytes() + tasks.bytes() + results.bytes() + boundary.bytes() + trace.bytes() +
               cigar_scratch.bytes() + cigar_out.bytes() + counter.bytes();
    }
};

namespace {

// Device memory the backend keeps between jobs (beyond it, a job's buffers go).
constexpr std::uint64_t kKeptDeviceBytes = std::uint64_t{4} << 30;

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
    const int big = std::max({std::abs(scheme.matrix.max_score()), std::abs(scheme.matrix.min_score()),
                              scheme.gap_open, scheme.gap_extend});
    if (big > (1 << 12))
        throw Error("scores and penalties above 4096 (scaled) are not supported on the GPU (largest here: " +
                    std::to_string(big) + ")");
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

// Residues as matrix codes, for every sequence some pair uses.
std::vector<EncodedSequence> encode_used(const std::vector<Sequence>& sequences, const std::vector<char>& used,
                                         const SubstitutionMatrix& matrix, const char* role, int threads) {
    std::vector<EncodedSequence> out(sequences.size());
    parallel_chunks(sequences.size(), threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t k = begin; k < end; ++k)
            if (used[k]) out[k] = encode(sequences[k].residues, matrix, std::string(role) + " '" + sequences[k].id + "'");
    }, 64);
    return out;
}

}  // namespace

std::vector<Alignment> CudaPairBackend::align_pairs(const PairJob& job, JobContext& context) {
    std::lock_guard lock(mutex_);
    const std::string& device_id = device_.info.id;
    const CudaSite site{device_id + " (" + device_.info.name + ")", describe_job(job)};
    std::optional<HostPhase> prepare(std::in_place, context.timeline, device_id, "prepare", job.pairs.size());
    validate(job);
    prepare.reset();
    if (job.pairs.empty()) return {};
    // The result vector (a million Alignments are a quarter of a gigabyte to
    // construct and fault in) is built on a thread of its own while the host
    // plans and the device runs the first batches; taken at the first results.
    std::vector<Alignment> out;
    std::future<std::vector<Alignment>> pending_out =
        std::async(std::launch::async, [count = job.pairs.size()] { return std::vector<Alignment>(count); });
    auto take_out = [&] {
        if (!pending_out.valid()) return;
        HostPhase phase(context.timeline, device_id, "prepare");
        out = pending_out.get();
    };
    check_cuda(cudaSetDevice(device_.index), "cudaSetDevice", site);

    const ScoringScheme& scheme = job.scheme;
    const AlignOptions& options = job.options;
    const bool local = options.mode == AlignmentMode::Local;
    const bool semiglobal = options.mode == AlignmentMode::SemiGlobal;
    const FreeEndGaps ends = semiglobal ? options.free_ends : FreeEndGaps::none();
    // Begins cost a reverse pass where the alignment may start anywhere.
    const bool begins_need_pass = local || (semiglobal && (ends.query_begin || ends.target_begin));
    if (!options.begins && options.traceback)
        throw Error("the alignment (traceback) starts from the begin positions: turn traceback off to skip them");
    const bool reverse_pass = begins_need_pass && options.begins;
    const int letters = scheme.matrix.size();

    // Encode each sequence a pair uses, once.
    std::vector<char> used_queries(job.queries->size()), used_targets(job.targets->size());
    for (const auto& [qi, ti] : job.pairs) {
        used_queries[qi] = 1;
        used_targets[ti] = 1;
    }
    std::vector<EncodedSequence> queries, targets;
    {
        HostPhase phase(context.timeline, device_id, "encode");
        queries = encode_used(*job.queries, used_queries, scheme.matrix, "query", job.threads);
        targets = encode_used(*job.targets, used_targets, scheme.matrix, "target", job.threads);
    }
    context.throw_if_cancelled();

    // Kernel per pair, then one work list per kernel. With `wide`, every pair
    // runs at 32 bits (the recompute of pairs a 16-bit pass may have saturated).
    std::optional<KernelVariant> forced;
    if (!job.kernel.empty()) forced = parse_kernel_name(job.kernel, options.mode, scheme.linear());
    auto build_lists = [&](const std::vector<std::size_t>& indices, bool wide) {
        HostPhase phase(context.timeline, device_id, "plan", indices.size());
        // Pairs of the same shape get the same kernel: one choice per shape,
        // lists keyed by (threads per pair, width).
        std::map<std::pair<int, int>, WorkList> by_key;
        std::map<std::pair<std::int64_t, std::int64_t>, KernelVariant> chosen;
        for (std::size_t k : indices) {
            const auto [qi, ti] = job.pairs[k];
            const auto m = static_cast<std::int64_t>(queries[qi].size());
            const auto n = static_cast<std::int64_t>(targets[ti].size());
            auto [it, fresh] = chosen.try_emplace({m, n});
            if (fresh) {
                KernelVariant& variant = it->second;
                if (forced) {
                    variant = *forced;
                } else {
                    variant.mode = options.mode;
                    variant.linear = scheme.linear();
                    const FamilyChoice family = choose_family(m, n, indices.size(), device_.info.sm_count);
                    variant.family = family.family;
                    variant.group = family.group;
                    variant.width = LaneWidth::S16;
                }
                if (wide || !s16_can_hold(options.mode, m, n, scheme)) variant.width = LaneWidth::S32;
            }
            const KernelVariant& variant = it->second;
            WorkList& list = by_key[{variant.threads_per_pair(), variant.width == LaneWidth::S16 ? 16 : 32}];
            list.variant = variant;
            list.pairs.push_back(k);
        }
        std::map<std::string, WorkList> lists;
        for (auto& [key, list] : by_key) {
            list.layout = layout_of(list.variant);
            // Longest first, ties in job order (a stable sort, done only when
            // the pairs are not in that order already).
            auto length_of = [&](std::size_t k) {
                return std::make_pair(static_cast<std::int64_t>(queries[job.pairs[k].first].size()),
                                      static_cast<std::int64_t>(targets[job.pairs[k].second].size()));
            };
            list.lengths.reserve(list.pairs.size());
            for (std::size_t k : list.pairs) list.lengths.push_back(length_of(k));
            const bool ordered = std::is_sorted(list.lengths.begin(), list.lengths.end(),
                                                [](const auto& x, const auto& y) { return x > y; });
            if (!ordered) {
                std::vector<std::size_t> order(list.pairs.size());
                std::iota(order.begin(), order.end(), std::size_t{0});
                std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
                    if (list.lengths[x] != list.lengths[y]) return list.lengths[x] > list.lengths[y];
                    return x < y;
                });
                std::vector<std::size_t> pairs(order.size());
                std::vector<std::pair<std::int64_t, std::int64_t>> lengths(order.size());
                for (std::size_t k = 0; k < order.size(); ++k) {
                    pairs[k] = list.pairs[order[k]];
                    lengths[k] = list.lengths[order[k]];
                }
                list.pairs = std::move(pairs);
                list.lengths = std::move(lengths);
            }
            const std::size_t per_unit = static_cast<std::size_t>(list.layout.pairs_per_warp());
            for (std::size_t first = 0; first < list.pairs.size(); first += per_unit) {
                const std::size_t count = std::min(per_unit, list.pairs.size() - first);
                UnitCost cost;
                cost.bytes = unit_bytes(list.layout, list.lengths, first, count, options.traceback);
                for (std::size_t k = first; k < first + count; ++k)
                    cost.cells += static_cast<std::uint64_t>(list.lengths[k].first * list.lengths[k].second);
                list.unit_first.push_back(first);
                list.units.push_back(cost);
            }
            lists[list.variant.name()] = std::move(list);
        }
        return lists;
    };
    std::vector<std::size_t> all(job.pairs.size());
    std::iota(all.begin(), all.end(), std::size_t{0});

    // Streams and the memory budget of one batch.
    std::optional<HostPhase> setup(std::in_place, context.timeline, device_id, "setup");
    const int stream_count = job.streams > 0 ? job.streams : default_stream_count(device_.info.sm_count);
    StreamPool& streams = stream_pool(stream_count, site);
    std::uint64_t budget = 0;
    if (job.gpu_memory_budget) {
        budget = budget_per_batch(job.gpu_memory_budget, stream_count);
    } else {
        std::size_t free_bytes = 0, total_bytes = 0;
        check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo", site);
        // Buffers kept from the last job are this job's to reuse: count them as free.
        for (const auto& slot : kept_slots_) free_bytes += slot->device_bytes();
        budget = default_batch_budget(std::min<std::uint64_t>(free_bytes, total_bytes), total_bytes, stream_count);
    }
    auto plan = [&](const std::map<std::string, WorkList>& lists, std::uint64_t& total_cells) {
        std::vector<Batch> batches;
        for (const auto& [name, list] : lists) {
            const auto ranges = plan_batches(list.units, budget, kMaxBatchCells, [&](std::size_t unit) {
                const std::size_t first = list.unit_first[unit];
                const auto [m, n] = list.lengths[first];
                const std::size_t pair = list.pairs[first];
                return "pair " + std::to_string(pair) + " (query '" + (*job.queries)[job.pairs[pair].first].id +
                       "', " + std::to_string(m) + " residues, x target '" +
                       (*job.targets)[job.pairs[pair].second].id + "', " + std::to_string(n) + " residues)";
            });
            for (const BatchRange& range : ranges) {
                Batch batch;
                batch.list = &list;
                batch.first = list.unit_first[range.first];
                const std::size_t last_unit = range.first + range.count;
                const std::size_t end =
                    last_unit < list.unit_first.size() ? list.unit_first[last_unit] : list.pairs.size();
                batch.count = end - batch.first;
                batch.cells = range.cells;
                total_cells += range.cells;
                batches.push_back(batch);
            }
        }
        return batches;
    };
    const auto first_lists = build_lists(all, false);
    std::uint64_t total_cells = 0;
    const std::vector<Batch> first_batches = plan(first_lists, total_cells);

    // The substitution table, [target letter][query letter], padding code scoring 0.
    const int dim = letters + 1;
    std::vector<std::int16_t> table(static_cast<std::size_t>(dim * dim), 0);
    for (int qc = 0; qc < letters; ++qc)
        for (int tc = 0; tc < letters; ++tc)
            table[static_cast<std::size_t>(tc * dim + qc)] = static_cast<std::int16_t>(scheme.matrix.score(qc, tc));
    DeviceBuffer<std::int16_t> matrix;
    matrix.reserve(table.size(), site);
    check_cuda(cudaMemcpy(matrix.data(), table.data(), table.size() * sizeof(std::int16_t), cudaMemcpyHostToDevice),
               "cudaMemcpy(substitution table)", site);

    GpuTimeline timeline(context.timeline, device_id, site);
    std::vector<std::unique_ptr<StreamSlot>> slots(static_cast<std::size_t>(stream_count));
    // On any failure, let the device finish with the buffers before they go.
    // Then keep the slots for the next job, up to kKeptStagingBytes of pinned
    // and kKeptDeviceBytes of device memory.
    struct DrainOnExit {
        std::vector<std::unique_ptr<StreamSlot>>& slots;
        const StreamPool& pool;
        std::vector<std::unique_ptr<StreamSlot>>& kept;
        ~DrainOnExit() {
            for (int s = 0; s < pool.size(); ++s) (void)cudaStreamSynchronize(pool[s]);
            std::uint64_t host_bytes = 0, device_bytes = 0;
            for (auto& slot : slots) {
                if (!slot) continue;
                slot->busy = false;
                if (slot->host && (host_bytes += slot->host->bytes()) > kKeptStagingBytes) slot->host.reset();
                if ((device_bytes += slot->device_bytes()) > kKeptDeviceBytes) continue;
                kept.push_back(std::move(slot));
            }
        }
    } drain{slots, streams, kept_slots_};
    for (std::size_t s = 0; s < slots.size(); ++s) {
        if (!kept_slots_.empty()) {
            slots[s] = std::move(kept_slots_.back());
            kept_slots_.pop_back();
        } else {
            slots[s] = std::make_unique<StreamSlot>();
        }
        slots[s]->lane = static_cast<int>(s);
        if (!slots[s]->host) slots[s]->host = std::make_unique<PinnedStaging>();
    }
    kept_slots_.clear();  // more than this job's streams: let them go
    for (auto& slot : slots)
        if (!slot->done)
            check_cuda(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), "cudaEventCreateWithFlags", site);

    setup.reset();

    Progress progress;
    progress.cells_total = total_cells;
    progress.items_total = job.pairs.size();
    auto report = [&]() {
        if (context.progress) context.progress(progress);
    };
    report();

    std::vector<std::size_t> saturated;  // pairs a 16-bit pass may have wrapped
    std::mutex saturated_mutex;
    // Turns a finished batch into Alignments.
    auto finish = [&](StreamSlot& slot) {
        take_out();
        {
            HostPhase phase(context.timeline, device_id, "wait");
            check_cuda(cudaEventSynchronize(slot.done), "cudaEventSynchronize", site);
        }
        const Batch& batch = slot.batch;
        const WorkList& list = *batch.list;
        if (options.traceback) {
            const std::uint32_t ops = slot.host->counter[0];
            slot.host->cigar.reserve(roomy(std::max<std::uint32_t>(ops, 1)), site);
            if (ops) {
                const cudaStream_t stream = streams[slot.lane];
                timeline.record(stream, {"D2H", "copy", slot.lane, ops * sizeof(std::uint32_t), 0}, [&] {
                    check_cuda(cudaMemcpyAsync(slot.host->cigar.data(), slot.cigar_out.data(),
                                               ops * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream),
                               "cudaMemcpyAsync(CIGAR runs)", site);
                });
                check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize", site);
            }
        }
        const std::string kernel = list.variant.name();
        HostPhase phase(context.timeline, device_id, "results", batch.count);
        parallel_chunks(batch.count, job.threads, [&](std::size_t begin, std::size_t end) {
            for (std::size_t k = begin; k < end; ++k) {
                const PairResult& r = slot.host->results[k];
                const std::size_t index = list.pairs[batch.first + k];
                const Sequence& query = (*job.queries)[job.pairs[index].first];
                const Sequence& target = (*job.targets)[job.pairs[index].second];
                if (r.flags & kSaturated) {
                    std::lock_guard saturated_lock(saturated_mutex);
                    saturated.push_back(index);
                    continue;
                }
                if (r.flags & (kPassMismatch | kCigarOverflow))
                    throw Error("internal error on " + device_id + " in kernel " + kernel + " for pair " +
                                std::to_string(index) + " ('" + query.id + "' x '" + target.id + "'): " +
                                ((r.flags & kPassMismatch) ? "the reverse pass disagreed with the forward score"
                                                           : "the traceback ran past its buffer"));
                Alignment a;
                a.query_id = query.id;
                a.target_id = target.id;
                a.mode = options.mode;
                a.score = r.score;
                a.query_length = list.lengths[batch.first + k].first;
                a.target_length = list.lengths[batch.first + k].second;
                a.device = device_id;
                a.kernel = kernel;
                if (!(r.flags & kEmpty)) {
                    a.query_begin = reverse_pass || !begins_need_pass ? r.query_begin : 0;
                    a.query_end = r.query_end;
                    a.target_begin = reverse_pass || !begins_need_pass ? r.target_begin : 0;
                    a.target_end = r.target_end;
                    if (options.traceback) {
                        for (std::uint32_t c = 0; c < r.cigar_count; ++c) {
                            const std::uint32_t run = slot.host->cigar[r.cigar_offset + c];
                            const std::uint32_t code = run & 3u;
                            a.cigar.push(code == kCigarM ? 'M' : code == kCigarI ? 'I' : 'D', run >> 2);
                        }
                        a.cigar.reserve(r.cigar_count);
                        const std::int64_t path = complete_alignment(a, query.residues, target.residues, scheme);
                        if (path != a.score)
                            throw Error("internal error on " + device_id + " in kernel " + kernel + " for pair " +
                                        std::to_string(index) + ": the GPU's CIGAR " + a.cigar.to_string() +
                                        " scores " + std::to_string(path) + ", the DP " + std::to_string(a.score));
                    }
                }
                out[index] = std::move(a);
            }
        }, 512);
        slot.busy = false;
        progress.cells_done += batch.cells;
        progress.items_done += batch.count;
        report();
    };

    PassParams base;
    base.letters = letters;
    base.matrix = matrix.data();
    base.gap_open = scheme.gap_open;
    base.gap_extend = scheme.gap_extend;
    base.max_score = scheme.matrix.max_score();

    // Where each sequence sits in the current batch's residue buffer
    // (valid where stamp == batch_stamp).
    struct SequencePlaces {
        std::vector<std::uint32_t> stamp;
        std::vector<std::uint64_t> offset;
        explicit SequencePlaces(std::size_t count) : stamp(count, 0), offset(count, 0) {}
    };
    SequencePlaces query_place(queries.size()), target_place(targets.size());
    std::uint32_t batch_stamp = 0;
    std::vector<std::pair<const EncodedSequence*, std::uint64_t>> copies;

    auto run = [&](const std::vector<Batch>& batches) {
    for (std::size_t b = 0; b < batches.size(); ++b) {
        const int lane = static_cast<int>(b % static_cast<std::size_t>(stream_count));
        StreamSlot& slot = *slots[static_cast<std::size_t>(lane)];
        if (slot.busy) finish(slot);
        context.throw_if_cancelled();
        const cudaStream_t stream = streams[lane];
        const Batch& batch = batches[b];
        const WorkList& list = *batch.list;
        // Tasks follow the 32-bit layout (the traceback pass's); a 16-bit group
        // of pairs 2g, 2g+1 uses pair 2g's boundary slots.
        const FamilyLayout layout = traceback_layout_of(list.variant);
        slot.batch = batch;
        HostPhase phase(context.timeline, device_id, "pack", batch.count);

        // Offsets of everything the batch's pairs own on the device, written
        // straight into the pinned staging buffer. A sequence several pairs of
        // the batch share (one query against many targets) goes once.
        slot.host->tasks.reserve(roomy(batch.count), site);
        PairTask* tasks = slot.host->tasks.data();
        std::uint64_t residue_bytes = 0, boundary_total = 0, trace_total = 0, cigar_total = 0;
        ++batch_stamp;
        copies.clear();
        auto place = [&](SequencePlaces& places, std::size_t index, const EncodedSequence& sequence) {
            if (places.stamp[index] != batch_stamp) {
                places.stamp[index] = batch_stamp;
                places.offset[index] = residue_bytes;
                copies.push_back({&sequence, residue_bytes});
                residue_bytes += padded_residues(static_cast<std::int64_t>(sequence.size()));
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
                const auto [qi, ti] = job.pairs[list.pairs[batch.first + block + g]];
                task.query_offset = place(query_place, qi, queries[qi]);
                task.target_offset = place(target_place, ti, targets[ti]);
                task.query_length = static_cast<std::int32_t>(m);
                task.target_length = static_cast<std::int32_t>(n);
                task.boundary_base = boundary_total + g;
                task.trace_base = trace_total + g * static_cast<std::uint64_t>(layout.group_threads);
                task.trace_steps = static_cast<std::uint32_t>(steps);
                task.cigar_base = cigar_total;
                cigar_total += static_cast<std::uint64_t>(m + n + 2);
            }
            boundary_total += boundary_slots(layout, shape);
            if (options.traceback) trace_total += trace_words(layout, shape);
        }

        // Pack residues into pinned staging, padding each sequence with code `letters`.
        slot.host->residues.reserve(roomy(residue_bytes), site);
        slot.host->results.reserve(roomy(batch.count), site);
        slot.host->counter.reserve(roomy(1), site);
        parallel_chunks(copies.size(), job.threads, [&](std::size_t begin, std::size_t end) {
            for (std::size_t k = begin; k < end; ++k) {
                const EncodedSequence& sequence = *copies[k].first;
                std::uint8_t* to = slot.host->residues.data() + copies[k].second;
                std::memcpy(to, sequence.data(), sequence.size());
                std::memset(to + sequence.size(), letters,
                            padded_residues(static_cast<std::int64_t>(sequence.size())) - sequence.size());
            }
        }, 1024);

        slot.residues.reserve(roomy(residue_bytes), site);
        slot.tasks.reserve(roomy(batch.count), site);
        slot.results.reserve(roomy(batch.count), site);
        slot.boundary.reserve(roomy(std::max<std::uint64_t>(boundary_total, 1) * 2), site);
        slot.counter.reserve(roomy(1), site);
        if (options.traceback) {
            slot.trace.reserve(roomy(std::max<std::uint64_t>(trace_total, 1)), site);
            slot.cigar_scratch.reserve(roomy(cigar_total), site);
            slot.cigar_out.reserve(roomy(cigar_total), site);
        }

        timeline.record(stream, {"H2D", "copy", lane, residue_bytes + batch.count * sizeof(PairTask), 0}, [&] {
            check_cuda(cudaMemcpyAsync(slot.residues.data(), slot.host->residues.data(), residue_bytes,
                                       cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync(residues)", site);
            check_cuda(cudaMemcpyAsync(slot.tasks.data(), slot.host->tasks.data(), batch.count * sizeof(PairTask),
                                       cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync(pair tasks)", site);
            check_cuda(cudaMemsetAsync(slot.counter.data(), 0, sizeof(std::uint32_t), stream),
                       "cudaMemsetAsync(CIGAR counter)", site);
        });

        PassParams params = base;
        params.residues = slot.residues.data();
        params.tasks = slot.tasks.data();
        params.results = slot.results.data();
        params.count = static_cast<std::int32_t>(batch.count);
        params.longest_target = 0;
        for (std::size_t k = batch.first; k < batch.first + batch.count; ++k)
            params.longest_target =
                std::max(params.longest_target, static_cast<std::int32_t>(std::min<std::int64_t>(list.lengths[k].second, 0x7fffffff)));
        params.boundary = slot.boundary.data();
        params.trace = slot.trace.data();
        params.cigar_scratch = slot.cigar_scratch.data();
        params.cigar_out = slot.cigar_out.data();
        params.cigar_counter = slot.counter.data();

        const std::string kernel = list.variant.name();
        PassParams forward = params;
        forward.kind = PassKind::Forward;
        forward.row0_free = ends.query_begin;
        forward.col0_free = ends.target_begin;
        forward.last_row_free = ends.query_end;
        forward.last_col_free = ends.target_end;
        timeline.record(stream, {kernel, "kernel", lane, 0, batch.cells}, [&] {
            check_cuda(launch_pass(list.variant, PassKind::Forward, forward, stream), kernel.c_str(), site);
        });
        if (reverse_pass) {
            PassParams reverse = params;
            reverse.kind = PassKind::Reverse;
            reverse.last_row_free = ends.query_begin;
            reverse.last_col_free = ends.target_begin;
            reverse.boundary_ends = true;
            timeline.record(stream, {kernel + ":begin", "kernel", lane, 0, 0}, [&] {
                check_cuda(launch_pass(list.variant, PassKind::Reverse, reverse, stream),
                           (kernel + " (reverse pass)").c_str(), site);
            });
        }
        if (options.traceback) {
            PassParams traceback = params;
            traceback.kind = PassKind::Traceback;
            KernelVariant traceback_variant = list.variant;
            traceback_variant.width = LaneWidth::S32;
            timeline.record(stream, {traceback_variant.name() + ":traceback", "kernel", lane, 0, 0}, [&] {
                check_cuda(launch_pass(traceback_variant, PassKind::Traceback, traceback, stream),
                           (kernel + " (traceback pass)").c_str(), site);
            });
        }
        timeline.record(stream, {"D2H", "copy", lane, batch.count * sizeof(PairResult), 0}, [&] {
            check_cuda(cudaMemcpyAsync(slot.host->results.data(), slot.results.data(), batch.count * sizeof(PairResult),
                                       cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync(results)", site);
            check_cuda(cudaMemcpyAsync(slot.host->counter.data(), slot.counter.data(), sizeof(std::uint32_t),
                                       cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync(CIGAR counter)", site);
        });
        check_cuda(cudaEventRecord(slot.done, stream), "cudaEventRecord", site);
        slot.busy = true;
    }
    for (auto& slot : slots)
        if (slot->busy) finish(*slot);
    };
    run(first_batches);
    if (!saturated.empty()) {
        // Recompute at 32 bits what may have saturated at 16.
        std::sort(saturated.begin(), saturated.end());
        const auto wide_lists = build_lists(saturated, true);
        saturated.clear();
        const std::vector<Batch> wide_batches = plan(wide_lists, progress.cells_total);
        run(wide_batches);
        if (!saturated.empty())
            throw Error("internal error on " + device_id + ": a 32-bit pass reported saturation");
    }
    HostPhase finish_phase(context.timeline, device_id, "finish");
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site);
    timeline.flush();
    take_out();
    return out;
}

StreamPool& CudaPairBackend::stream_pool(int count, const CudaSite& site) {
    if (!streams_ || streams_->size() != count) {
        streams_.reset();
        streams_ = std::make_unique<StreamPool>(count, site);
    }
    return *streams_;
}

void CudaPairBackend::warm_up() {
    std::lock_guard lock(mutex_);
    const CudaSite site{device_.info.id + " (" + device_.info.name + ")", "start-up"};
    check_cuda(cudaSetDevice(device_.index), "cudaSetDevice", site);
    check_cuda(cudaFree(nullptr), "cudaFree (context creation)", site);
    (void)stream_pool(default_stream_count(device_.info.sm_count), site);
}

std::unique_ptr<longpair::PassRunner> CudaPairBackend::make_long_runner(const LongRunnerSettings& settings) {
    return make_cuda_long_runner(device_.index, device_.info, settings);
}

}  // namespace alignscope::kernels
