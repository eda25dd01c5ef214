// Host side of the GPU profile filters (filter_kernels.cuh for the kernels).
//  - load(): the memory budget settled and planned (memory_plan.hpp); the
//    targets' residues, offsets and work order (longest target first, so the
//    long tails start early) uploaded once when they fit, else a slice of
//    consecutive targets at a time, each call going over the slices it needs.
//  - msv(): the model's striped byte costs to the device, the SSV kernel over
//    every target, then the MSV kernel over the targets SSV could not settle;
//    codes back to the host and turned into scores by msv_score_of().
//  - viterbi(): the list and its longest-first order to the device, the
//    Viterbi filter kernel, codes back, scores by viterbi_score_of().
//  - forward() / backward(): the parser Forward of a list and the parser
//    Backward of entries of it, four threads a target, every row's specials
//    back (Backward given the Forward's scale factors, packed).
// Each call's kernels (by KernelName) and copies go on the job's timeline.
#include "profile/cuda_profile_scanner.hpp"
#include "profile/envelope_outcome.hpp"

#include "profile/filter_layout.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/msv_striped.hpp>
#include <alignscope/profile/viterbi_striped.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string_view>
#include <thread>

namespace alignscope::kernels::profile {

namespace ap = alignscope::profile;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether the filter kernels take a model of `nodes` nodes on this device:
// a compiled segment count, and its tables within the block's opt-in shared
// memory (the largest need 118 KB for MSV and 151 KB for the Viterbi filter,
// more than GPUs of compute capability 8.6 and 8.9 give; 0 = not known yet).
bool msv_fits(int nodes, int codes, std::size_t shared_optin) {
    const int q = segments_for(nodes, 64);
    return q > 0 && (shared_optin == 0 || msv_shared_bytes(q, codes) <= shared_optin);
}

bool viterbi_fits(int nodes, int codes, std::size_t shared_optin) {
    const int q = segments_for(nodes, 32);
    return q > 0 && (shared_optin == 0 || viterbi_shared_bytes(q, codes) <= shared_optin);
}

}  // namespace

bool gpu_stage_switched_off(const char* name) {
    const char* v = std::getenv(name);
    return v && std::string_view(v) == "0";
}

bool narrow_rows_allowed() {
    static const bool disabled = gpu_stage_switched_off("ALIGNSCOPE_GPU_NARROW_ROWS");
    return !disabled;
}

CudaProfileScanner::CudaProfileScanner(int device_index, DeviceInfo info, int threads)
    : device_(device_index), info_(std::move(info)), threads_(threads) {
    // Forward and the domain stage run on the CPU threads beside the GPU.
    info_.threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    select_device();
    ALIGNSCOPE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), site("profile filters"));
    ALIGNSCOPE_CUDA(cudaEventCreate(&start_), site("profile filters"));
    ALIGNSCOPE_CUDA(cudaEventCreate(&stop_), site("profile filters"));
    // The kernels' code now (the scanner is made while the targets are read):
    // loaded lazily, the first launches of a search took some 100 ms more.
    ALIGNSCOPE_CUDA(load_filter_kernels(), site("load the profile kernels"));
    ALIGNSCOPE_CUDA(load_forward_kernels(), site("load the profile kernels"));
    ALIGNSCOPE_CUDA(load_backward_kernels(), site("load the profile kernels"));
}

CudaProfileScanner::~CudaProfileScanner() {
    (void)cudaSetDevice(device_);
    if (start_) (void)cudaEventDestroy(start_);
    if (stop_) (void)cudaEventDestroy(stop_);
    if (stream_) (void)cudaStreamDestroy(stream_);
}

CudaSite CudaProfileScanner::site(const char* job) const { return {info_.id + " (" + info_.name + ")", job}; }

void CudaProfileScanner::select_device() const { ALIGNSCOPE_CUDA(cudaSetDevice(device_), site("profile filters")); }

void CudaProfileScanner::copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, const char* name,
                              GpuTimeline& timeline, const CudaSite& where) {
    timeline.record(stream_, GpuOp{name, "copy", 0, bytes, 0},
                    [&] { ALIGNSCOPE_CUDA(cudaMemcpyAsync(to, from, bytes, kind, stream_), where); });
}

void CudaProfileScanner::flush(GpuTimeline& timeline, JobContext& context) {
    timeline.flush();
    if (context.timeline) context.timeline->set_clock_source(timeline.clock_source());
}

int CudaProfileScanner::blocks_for(std::uint32_t items) const {
    const std::uint32_t wanted = (items + kFilterWarps - 1) / kFilterWarps;
    const std::uint32_t most = static_cast<std::uint32_t>(std::max(1, info_.sm_count) * 8);
    return static_cast<int>(std::max<std::uint32_t>(1, std::min(wanted, most)));
}

void CudaProfileScanner::load(const ap::ProfileTargets& targets, JobContext& context) {
    context.throw_if_cancelled();
    select_device();
    const CudaSite where = site("upload the profile search targets");
    if (targets.size() >= std::numeric_limits<std::uint32_t>::max())
        throw Error("profile search: too many targets for the GPU");
    targets_ = &targets;
    // What this scanner holds counts as free: let go before measuring.
    release_targets();
    forward_model_.release();
    forward_scratch_.release();
    msv_cost_.release();
    viterbi_tables_.release();
    cudaDeviceProp props{};
    ALIGNSCOPE_CUDA(cudaGetDeviceProperties(&props, device_), where);
    shared_optin_ = props.sharedMemPerBlockOptin;
    shared_per_sm_ = props.sharedMemPerMultiprocessor;
    shape_.sm_count = std::max(1, info_.sm_count);
    shape_.forward_threads = forward_threads_per_block();
    shape_.forward_shared = std::min<std::uint64_t>(props.sharedMemPerBlockOptin, props.sharedMemPerMultiprocessor / 2);
    std::size_t free_bytes = 0, total_bytes = 0;
    ALIGNSCOPE_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), where);
    budget_ = requested_budget_ ? requested_budget_ : static_cast<std::uint64_t>(0.9 * static_cast<double>(free_bytes));
    model_reserve_ = 0;
    plan_ = {};
    counter_.reserve(1, where);
    plan_for(0, 0);
    GpuTimeline timeline(context.timeline, info_.id, where);
    load_slice(0, timeline);
    flush(timeline, context);
}

void CudaProfileScanner::release_targets() {
    loaded_slice_ = kNoSlice;
    for (auto* b : {&order_, &list_, &list_order_}) b->release();
    residues_.release();
    offsets_.release();
    tjb_.release();
    ncj_.release();
    out_.release();
    forward_specials_.release();
    forward_length_.release();
    forward_result_.release();
    forward_first_row_.release();
    backward_scales_.release();
}

void CudaProfileScanner::plan_for(int length, int codes) {
    const std::uint64_t model = std::max(model_reserve_, length ? profile_model_bytes(length, codes, shape_) : 0);
    if (model == model_reserve_ && !plan_.slices.empty()) return;
    model_reserve_ = model;
    ProfileMemoryPlan plan = plan_profile_memory(targets_->offsets, budget_, model_reserve_);
    if (plan.slices.empty())
        throw Error(info_.id + ": a GPU memory budget of " + std::to_string(budget_) +
                    " bytes is too small for this profile search: the longest target and the model need " +
                    std::to_string(plan.needed) + " bytes (raise --gpu-mem)");
    // Buffers sized for other slices go, so the device holds what the plan says.
    if (plan.slices != plan_.slices) release_targets();
    if (forward_specials_.bytes() > plan.rows_bytes) forward_specials_.release();
    plan_ = std::move(plan);
}

void CudaProfileScanner::load_slice(std::size_t s, GpuTimeline& timeline) {
    if (s == loaded_slice_) return;
    const CudaSite where = site("upload the profile search targets");
    const TargetSlice& slice = plan_.slices[s];
    const std::size_t n = slice.end - slice.begin;
    const std::uint64_t base = targets_->offsets[slice.begin];
    residues_.reserve(std::max<std::size_t>(slice.residues, 1), where);
    offsets_.reserve(n + 1, where);
    order_.reserve(std::max<std::size_t>(n, 1), where);
    out_.reserve(std::max<std::size_t>(n, 1), where);
    std::vector<std::uint64_t> offsets(n + 1);
    for (std::size_t i = 0; i <= n; ++i) offsets[i] = targets_->offsets[slice.begin + i] - base;
    copy(residues_.data(), targets_->residues.data() + base, slice.residues, cudaMemcpyHostToDevice, "H2D database",
         timeline, where);
    copy(offsets_.data(), offsets.data(), (n + 1) * sizeof(std::uint64_t), cudaMemcpyHostToDevice, "H2D database",
         timeline, where);
    host_order_.resize(n);
    std::iota(host_order_.begin(), host_order_.end(), 0u);
    std::stable_sort(host_order_.begin(), host_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return targets_->length(slice.begin + a) > targets_->length(slice.begin + b);
    });
    copy(order_.data(), host_order_.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice, "H2D work order",
         timeline, where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    loaded_slice_ = s;
    tjb_scale_ = ncj_scale_ = 0;
}

// The per-target length costs depend on the target's length and the model's
// scale only (the same for every model of a search): made once.
void CudaProfileScanner::ensure_length_tables(const ap::MsvProfile* msv, const ap::ViterbiFilterProfile* viterbi,
                                              GpuTimeline& timeline) {
    const TargetSlice& slice = plan_.slices[loaded_slice_];
    const std::size_t n = slice.end - slice.begin;
    const CudaSite where = site("upload the target length costs");
    if (msv && msv->scale != tjb_scale_) {
        std::vector<std::uint8_t> tjb(n);
        for (std::size_t t = 0; t < n; ++t) tjb[t] = msv->tjb(targets_->length(slice.begin + t));
        tjb_.reserve(std::max<std::size_t>(n, 1), where);
        copy(tjb_.data(), tjb.data(), n, cudaMemcpyHostToDevice, "H2D length costs", timeline, where);
        ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
        tjb_scale_ = msv->scale;
    }
    if (viterbi && viterbi->scale != ncj_scale_) {
        std::vector<std::int16_t> ncj(n);
        for (std::size_t t = 0; t < n; ++t) ncj[t] = viterbi->ncj_move(targets_->length(slice.begin + t));
        ncj_.reserve(std::max<std::size_t>(n, 1), where);
        copy(ncj_.data(), ncj.data(), n * sizeof(std::int16_t), cudaMemcpyHostToDevice, "H2D length costs", timeline,
             where);
        ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
        ncj_scale_ = viterbi->scale;
    }
}

float CudaProfileScanner::run_msv(int segments, const std::uint32_t* order, std::uint32_t count, bool full,
                                  std::uint64_t cells, GpuTimeline& timeline) {
    const CudaSite where = site(full ? "MSV filter kernel" : "SSV filter kernel");
    TargetView view;
    view.residues = residues_.data();
    view.offsets = offsets_.data();
    view.order = order;
    view.count = count;
    ALIGNSCOPE_CUDA(cudaMemsetAsync(counter_.data(), 0, sizeof(std::uint32_t), stream_), where);
    ALIGNSCOPE_CUDA(cudaEventRecord(start_, stream_), where);
    static const KernelName ssv = KernelName::parse(kSsvKernelName), msv = KernelName::parse(kMsvKernelName);
    timeline.record(stream_, kernel_op(full ? msv : ssv, 0, cells), [&] {
        ALIGNSCOPE_CUDA(launch_msv_filter(segments, view, msv_cost_.data(), msv_params_, tjb_.data(), out_.data(),
                                          counter_.data(), full, blocks_for(count), stream_),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(stop_, stream_), where);
    ALIGNSCOPE_CUDA(cudaEventSynchronize(stop_), where);
    float ms = 0;
    ALIGNSCOPE_CUDA(cudaEventElapsedTime(&ms, start_, stop_), where);
    return ms;
}

std::vector<std::int32_t> CudaProfileScanner::msv_codes(const ap::MsvProfile& model, bool full_only) {
    select_device();
    GpuTimeline none(nullptr, info_.id, site("MSV filter"));
    return msv_codes(model, full_only, none);
}

std::vector<std::int32_t> CudaProfileScanner::msv_codes(const ap::MsvProfile& model, bool full_only,
                                                        GpuTimeline& timeline) {
    if (!targets_) throw Error("profile filter scanner: no targets loaded");
    const int segments = segments_for(model.length, 64);
    if (!msv_fits(model.length, model.codes, shared_optin_))
        throw Error("profile filters: model of " + std::to_string(model.length) + " nodes is longer than the " +
                    info_.id + " MSV kernels take (2,048 nodes, and the tables within the shared memory of a block)");
    select_device();
    plan_for(model.length, model.codes);
    const CudaSite where = site("MSV filter");
    const MsvStripes stripes = make_msv_stripes(model, segments);
    msv_cost_.reserve(stripes.negated_cost.size(), where);
    copy(msv_cost_.data(), stripes.negated_cost.data(), stripes.negated_cost.size() * sizeof(std::uint32_t),
         cudaMemcpyHostToDevice, "H2D model", timeline, where);
    msv_params_ = {model.base, model.bias, model.tec, model.tbm, model.codes};
    stats_ = {};
    stats_.msv_cells = targets_->residue_count() * static_cast<std::uint64_t>(model.length);
    std::vector<std::int32_t> codes(targets_->size());
    float ms = 0;
    // The loaded slice first: a resident database is never uploaded again.
    const std::size_t slices = plan_.slices.size(), first = loaded_slice_ < slices ? loaded_slice_ : 0;
    for (std::size_t k = 0; k < slices; ++k) {
        load_slice((first + k) % slices, timeline);
        ms += msv_slice(model, segments, full_only, codes, timeline);
    }
    stats_.msv_kernel_seconds = ms / 1000.0;
    stats_.target_slices = slices;
    return codes;
}

float CudaProfileScanner::msv_slice(const ap::MsvProfile& model, int segments, bool full_only,
                                    std::vector<std::int32_t>& codes, GpuTimeline& timeline) {
    const CudaSite where = site("MSV filter");
    const TargetSlice& slice = plan_.slices[loaded_slice_];
    const std::size_t n = slice.end - slice.begin;
    ensure_length_tables(&model, nullptr, timeline);
    const std::uint64_t slice_cells = slice.residues * static_cast<std::uint64_t>(model.length);
    float ms = run_msv(segments, order_.data(), static_cast<std::uint32_t>(n), full_only, slice_cells, timeline);
    std::int32_t* local = codes.data() + slice.begin;
    copy(local, out_.data(), n * sizeof(std::int32_t), cudaMemcpyDeviceToHost, "D2H scores", timeline, where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    if (full_only) return ms;
    // The targets SSV could not settle, still longest first.
    std::vector<std::uint32_t> rescore;
    std::uint64_t cells = 0;
    for (std::uint32_t t : host_order_)
        if (local[t] == kMsvNeedsFull) {
            rescore.push_back(t);
            cells += static_cast<std::uint64_t>(targets_->length(slice.begin + t)) *
                     static_cast<std::uint64_t>(model.length);
        }
    stats_.msv_rescored += rescore.size();
    if (rescore.empty()) return ms;
    list_.reserve(rescore.size(), where);
    copy(list_.data(), rescore.data(), rescore.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice, "H2D list",
         timeline, where);
    ms += run_msv(segments, list_.data(), static_cast<std::uint32_t>(rescore.size()), true, cells, timeline);
    copy(local, out_.data(), n * sizeof(std::int32_t), cudaMemcpyDeviceToHost, "D2H scores", timeline, where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    return ms;
}

void CudaProfileScanner::msv(const ap::MsvProfile& model, std::span<float> scores, JobContext& context) {
    if (!targets_) throw Error("profile filter scanner: no targets loaded");
    if (scores.size() != targets_->size())
        throw Error("profile filter scanner: score array does not match the targets");
    context.throw_if_cancelled();
    const auto start = std::chrono::steady_clock::now();
    if (!msv_fits(model.length, model.codes, shared_optin_)) {
        // Longer than the compiled kernels or the device's shared memory: the
        // CPU's striped filter, same scores.
        stats_ = {};
        const ap::StripedMsvProfile striped = ap::make_striped_msv_profile(model);
        ap::parallel_for(targets_->size(), threads_, [&](std::size_t t) {
            scores[t] = ap::msv_filter_striped(striped, targets_->codes(t), targets_->length(t));
        });
        stats_.msv_seconds = seconds_since(start);
        return;
    }
    select_device();
    GpuTimeline timeline(context.timeline, info_.id, site("MSV filter"));
    const std::vector<std::int32_t> codes = msv_codes(model, false, timeline);
    flush(timeline, context);
    for (std::size_t t = 0; t < codes.size(); ++t)
        scores[t] = codes[t] == kMsvOverflow ? kInf : ap::msv_score_of(model, codes[t], targets_->length(t));
    stats_.msv_seconds = seconds_since(start);
}

void CudaProfileScanner::viterbi(const ap::ViterbiFilterProfile& model, std::span<const std::uint32_t> targets,
                                 std::span<float> scores, JobContext& context) {
    if (!targets_) throw Error("profile filter scanner: no targets loaded");
    if (scores.size() != targets.size()) throw Error("profile filter scanner: score array does not match the list");
    context.throw_if_cancelled();
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t cells = 0;
    for (std::uint32_t t : targets) {
        if (t >= targets_->size()) throw Error("profile filter scanner: target index out of range");
        cells += static_cast<std::uint64_t>(targets_->length(t)) * static_cast<std::uint64_t>(model.length);
    }
    stats_.viterbi_cells += cells;
    const int segments = segments_for(model.length, 32);
    if (targets.empty()) return;
    if (!viterbi_fits(model.length, model.codes, shared_optin_)) {
        const ap::StripedViterbiProfile striped = ap::make_striped_viterbi_profile(model);
        ap::parallel_for(targets.size(), threads_, [&](std::size_t i) {
            scores[i] = ap::viterbi_filter_striped(striped, targets_->codes(targets[i]), targets_->length(targets[i]));
        });
        stats_.viterbi_seconds += seconds_since(start);
        return;
    }
    select_device();
    plan_for(model.length, model.codes);
    const CudaSite where = site("Viterbi filter kernel");
    GpuTimeline timeline(context.timeline, info_.id, where);
    const ViterbiStripes stripes = make_viterbi_stripes(model, segments);
    std::vector<std::int16_t> tables(stripes.transitions);
    tables.insert(tables.end(), stripes.match.begin(), stripes.match.end());
    viterbi_tables_.reserve(tables.size(), where);
    copy(viterbi_tables_.data(), tables.data(), tables.size() * sizeof(std::int16_t), cudaMemcpyHostToDevice,
         "H2D model", timeline, where);
    // The list's positions by slice, the loaded slice first.
    const std::size_t slices = plan_.slices.size(), first = loaded_slice_ < slices ? loaded_slice_ : 0;
    std::vector<std::vector<std::uint32_t>> positions(slices);
    for (std::size_t i = 0; i < targets.size(); ++i)
        positions[slice_of(plan_.slices, targets[i])].push_back(static_cast<std::uint32_t>(i));
    float ms = 0;
    std::vector<std::uint32_t> local;
    std::vector<std::int32_t> codes;
    for (std::size_t k = 0; k < slices; ++k) {
        const std::size_t s = (first + k) % slices;
        if (positions[s].empty()) continue;
        load_slice(s, timeline);
        local.clear();
        for (std::uint32_t i : positions[s]) local.push_back(targets[i] - plan_.slices[s].begin);
        ms += viterbi_slice(model, segments, local, codes, timeline);
        for (std::size_t j = 0; j < local.size(); ++j) {
            const std::uint32_t i = positions[s][j];
            scores[i] = codes[j] == kViterbiOverflow
                            ? kInf
                            : ap::viterbi_score_of(model, codes[j], targets_->length(targets[i]));
        }
    }
    flush(timeline, context);
    stats_.viterbi_kernel_seconds += ms / 1000.0;
    stats_.viterbi_seconds += seconds_since(start);
}

float CudaProfileScanner::viterbi_slice(const ap::ViterbiFilterProfile& model, int segments,
                                        const std::vector<std::uint32_t>& local, std::vector<std::int32_t>& codes,
                                        GpuTimeline& timeline) {
    const CudaSite where = site("Viterbi filter kernel");
    const std::uint32_t begin = plan_.slices[loaded_slice_].begin;
    ensure_length_tables(nullptr, &model, timeline);
    const std::size_t count = local.size();
    std::uint64_t cells = 0;
    for (std::uint32_t t : local)
        cells += static_cast<std::uint64_t>(targets_->length(begin + t)) * static_cast<std::uint64_t>(model.length);
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return targets_->length(begin + local[a]) > targets_->length(begin + local[b]);
    });
    list_.reserve(count, where);
    list_order_.reserve(count, where);
    copy(list_.data(), local.data(), count * sizeof(std::uint32_t), cudaMemcpyHostToDevice, "H2D list", timeline,
         where);
    copy(list_order_.data(), order.data(), count * sizeof(std::uint32_t), cudaMemcpyHostToDevice, "H2D list", timeline,
         where);
    ALIGNSCOPE_CUDA(cudaMemsetAsync(counter_.data(), 0, sizeof(std::uint32_t), stream_), where);
    TargetView view;
    view.residues = residues_.data();
    view.offsets = offsets_.data();
    view.order = list_order_.data();
    view.count = static_cast<std::uint32_t>(count);
    const ViterbiParams params{model.base, model.e_loop, model.e_move, model.codes};
    ALIGNSCOPE_CUDA(cudaEventRecord(start_, stream_), where);
    static const KernelName kernel = KernelName::parse(kViterbiKernelName);
    timeline.record(stream_, kernel_op(kernel, 0, cells), [&] {
        ALIGNSCOPE_CUDA(launch_viterbi_filter(segments, view, viterbi_tables_.data(), params, list_.data(), ncj_.data(),
                                              out_.data(), counter_.data(), blocks_for(view.count), stream_),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(stop_, stream_), where);
    codes.resize(count);
    copy(codes.data(), out_.data(), count * sizeof(std::int32_t), cudaMemcpyDeviceToHost, "D2H scores", timeline,
         where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    float ms = 0;
    ALIGNSCOPE_CUDA(cudaEventElapsedTime(&ms, start_, stop_), where);
    return ms;
}

}  // namespace alignscope::kernels::profile

namespace alignscope::kernels::profile {

// ALIGNSCOPE_GPU_FORWARD=0: Forward on the CPU threads (to compare the two).
bool CudaProfileScanner::runs_forward() const {
    static const bool disabled = gpu_stage_switched_off("ALIGNSCOPE_GPU_FORWARD");
    return !disabled;
}

// The parser Forward of the listed targets: per slice of the plan, in chunks
// whose rows fit the plan's room, the model's striped floats to the device
// (rows and model in shared memory where they fit), per position the target's
// length model and where its rows' specials go, the kernel, then scores by
// forward_score_of() and the specials back for Backward and the domain stage.
bool CudaProfileScanner::forward(const ap::ForwardProfile& model, std::span<const std::uint32_t> targets,
                                 ap::ForwardScores& out, JobContext& context) {
    if (!targets_) throw Error("profile filter scanner: no targets loaded");
    if (!runs_forward()) return false;
    context.throw_if_cancelled();
    const auto start = std::chrono::steady_clock::now();
    const std::size_t count = targets.size();
    out.scores.assign(count, 0.0f);
    out.total_scale.assign(count, 0.0f);
    out.first_row.assign(count, 0);
    stats_.forward_cells = 0;
    std::uint64_t rows = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t t = targets[i];
        if (t >= targets_->size()) throw Error("profile filter scanner: target index out of range");
        const int L = targets_->length(t);
        out.first_row[i] = rows;
        rows += static_cast<std::uint64_t>(L) + 1;
        stats_.forward_cells += static_cast<std::uint64_t>(L) * static_cast<std::uint64_t>(model.length);
    }
    out.specials.assign(rows * kForwardSpecials, 0.0f);
    if (count == 0) return true;
    select_device();
    plan_for(model.length, model.codes);
    GpuTimeline timeline(context.timeline, info_.id, site("Forward filter kernel"));
    const std::size_t slices = plan_.slices.size(), first = loaded_slice_ < slices ? loaded_slice_ : 0;
    std::vector<std::vector<std::uint32_t>> positions(slices);
    for (std::size_t i = 0; i < count; ++i)
        positions[slice_of(plan_.slices, targets[i])].push_back(static_cast<std::uint32_t>(i));
    std::vector<float2> result(count);
    std::vector<std::uint32_t> chunk;
    float ms = 0;
    for (std::size_t k = 0; k < slices; ++k) {
        const std::size_t s = (first + k) % slices;
        if (positions[s].empty()) continue;
        load_slice(s, timeline);
        // Chunks whose rows fit the room the plan leaves (the longest target's at least).
        std::uint64_t chunk_bytes = 0;
        chunk.clear();
        for (std::uint32_t i : positions[s]) {
            const std::uint64_t bytes =
                (static_cast<std::uint64_t>(targets_->length(targets[i])) + 1) * kForwardRowBytes;
            if (!chunk.empty() && chunk_bytes + bytes > plan_.rows_bytes) {
                ms += forward_chunk(model, targets, chunk, out, result, timeline);
                chunk.clear();
                chunk_bytes = 0;
            }
            chunk.push_back(i);
            chunk_bytes += bytes;
        }
        ms += forward_chunk(model, targets, chunk, out, result, timeline);
    }
    flush(timeline, context);
    forward_scores(targets, result, out);
    stats_.forward_kernel_seconds = ms / 1000.0;
    stats_.forward_seconds = seconds_since(start);
    return true;
}

float CudaProfileScanner::forward_chunk(const ap::ForwardProfile& model, std::span<const std::uint32_t> targets,
                                        const std::vector<std::uint32_t>& positions, ap::ForwardScores& out,
                                        std::vector<float2>& result, GpuTimeline& timeline) {
    const CudaSite where = site("Forward filter kernel");
    // The whole list in its order: the rows come back straight into out.specials.
    const bool whole = positions.size() == targets.size();
    std::vector<std::uint32_t> chunk_targets(positions.size());
    for (std::size_t j = 0; j < positions.size(); ++j) chunk_targets[j] = targets[positions[j]];
    const RowsChunk chunk = rows_chunk(model, chunk_targets);
    forward_specials_.reserve(std::max<std::size_t>(chunk.rows * kForwardSpecials, 1), where);
    upload_rows_chunk(model, chunk, timeline, where);
    const ForwardBatchView batch = rows_batch<ForwardBatchView>(chunk);
    const ForwardModelView view = envelope_model_view(model, forward_model_.data());
    ALIGNSCOPE_CUDA(cudaEventRecord(start_, stream_), where);
    static const KernelName kernel = KernelName::parse(kForwardKernelName);
    timeline.record(stream_, kernel_op(kernel, 0, chunk.cells), [&] {
        ALIGNSCOPE_CUDA(launch_forward_filter(batch, view, chunk.model_floats, chunk.shared_rows, chunk.shared_model,
                                              chunk.blocks, stream_, chunk.threads),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(stop_, stream_), where);
    return rows_back(positions, chunk.first_row, chunk.rows, whole, out.specials, out.first_row, result, timeline,
                     where);
}

void CudaProfileScanner::forward_scores(std::span<const std::uint32_t> targets, const std::vector<float2>& result,
                                        ap::ForwardScores& out) const {
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const int L = targets_->length(targets[i]);
        out.total_scale[i] = result[i].y;
        try {
            out.scores[i] = ap::forward_score_of(ap::LengthModel::for_target(L, true), result[i].x, result[i].y, L);
        } catch (const Error&) {
            out.scores[i] = std::numeric_limits<float>::quiet_NaN();  // the caller says why (forward_score_of)
        }
    }
}

}  // namespace alignscope::kernels::profile

namespace alignscope::kernels::profile {

namespace {

// The Forward's scale factor of every row of the entries `items`, packed in
// the order of their rows (entry items[c]'s rows from first_row[c]).
std::vector<float> packed_scales(const ap::ForwardScores& forward, std::span<const std::uint32_t> positions,
                                 const std::vector<std::uint32_t>& items, const std::vector<std::uint64_t>& first_row,
                                 std::uint64_t rows) {
    std::vector<float> scales(rows);
    for (std::size_t c = 0; c < items.size(); ++c) {
        const std::uint64_t end = c + 1 < items.size() ? first_row[c + 1] : rows;
        const float* from = forward.specials.data() + forward.first_row[positions[items[c]]] * kForwardSpecials;
        for (std::uint64_t i = 0; first_row[c] + i < end; ++i)
            scales[first_row[c] + i] = from[i * kForwardSpecials + 5];
    }
    return scales;
}

}  // namespace

// ALIGNSCOPE_GPU_BACKWARD=0: Backward on the CPU threads (to compare the two).
bool CudaProfileScanner::runs_backward() const {
    static const bool disabled = gpu_stage_switched_off("ALIGNSCOPE_GPU_BACKWARD");
    return !disabled;
}

// The parser Backward of the listed entries of a Forward's list: per slice of
// the plan, in chunks whose rows (specials out, Forward scale factors in)
// fit the plan's room, then scores by backward_score_of(). A target whose
// rows alone do not fit it that way runs alone with its scale factors in its
// own rows (the Forward's room: six floats a row).
bool CudaProfileScanner::backward(const ap::ForwardProfile& model, std::span<const std::uint32_t> forward_targets,
                                  const ap::ForwardScores& forward, std::span<const std::uint32_t> positions,
                                  ap::BackwardScores& out, JobContext& context) {
    if (!targets_) throw Error("profile filter scanner: no targets loaded");
    if (!runs_backward()) return false;
    const std::size_t listed = forward_targets.size();
    if (forward.first_row.size() != listed || forward.total_scale.size() != listed)
        throw Error("profile filter scanner: the Forward rows given to Backward are of another target list");
    context.throw_if_cancelled();
    const auto start = std::chrono::steady_clock::now();
    const std::size_t count = positions.size();
    out.scores.assign(count, 0.0f);
    out.total_scale.assign(count, 0.0f);
    out.first_row.assign(count, 0);
    stats_.backward_cells = 0;
    std::uint64_t rows = 0;
    for (std::size_t j = 0; j < count; ++j) {
        const std::uint32_t p = positions[j];
        if (p >= listed || forward_targets[p] >= targets_->size())
            throw Error("profile filter scanner: Backward target index out of range");
        const auto L = static_cast<std::uint64_t>(targets_->length(forward_targets[p]));
        if ((forward.first_row[p] + L + 1) * kForwardSpecials > forward.specials.size())
            throw Error("profile filter scanner: the Forward rows given to Backward are too few");
        out.first_row[j] = rows;
        rows += L + 1;
        stats_.backward_cells += L * static_cast<std::uint64_t>(model.length);
    }
    out.specials.assign(rows * kForwardSpecials, 0.0f);
    if (count == 0) return true;
    select_device();
    plan_for(model.length, model.codes);
    GpuTimeline timeline(context.timeline, info_.id, site("Backward parser kernel"));
    const std::size_t slices = plan_.slices.size(), first = loaded_slice_ < slices ? loaded_slice_ : 0;
    std::vector<std::vector<std::uint32_t>> by_slice(slices);
    for (std::size_t j = 0; j < count; ++j)
        by_slice[slice_of(plan_.slices, forward_targets[positions[j]])].push_back(static_cast<std::uint32_t>(j));
    std::vector<float2> result(count);
    std::vector<std::uint32_t> chunk;
    float ms = 0;
    auto run = [&] {
        if (!chunk.empty())
            ms += backward_chunk(model, forward_targets, forward, positions, chunk, out, result, timeline);
        chunk.clear();
    };
    for (std::size_t k = 0; k < slices; ++k) {
        const std::size_t s = (first + k) % slices;
        if (by_slice[s].empty()) continue;
        load_slice(s, timeline);
        std::uint64_t chunk_bytes = 0;
        for (std::uint32_t j : by_slice[s]) {
            const std::uint64_t bytes =
                (static_cast<std::uint64_t>(targets_->length(forward_targets[positions[j]])) + 1) *
                (kForwardRowBytes + sizeof(float));
            if (!chunk.empty() && chunk_bytes + bytes > plan_.rows_bytes) run(), chunk_bytes = 0;
            chunk.push_back(j);
            chunk_bytes += bytes;
        }
        run();
    }
    // The packed scale factors go: forward() plans its rows without them.
    backward_scales_.release();
    flush(timeline, context);
    for (std::size_t j = 0; j < count; ++j) {
        const int L = targets_->length(forward_targets[positions[j]]);
        out.total_scale[j] = result[j].y;
        try {
            out.scores[j] = ap::backward_score_of(result[j].x, result[j].y, L);
        } catch (const Error&) {
            out.scores[j] = std::numeric_limits<float>::quiet_NaN();  // the caller says why (backward_score_of)
        }
    }
    stats_.backward_kernel_seconds = ms / 1000.0;
    stats_.backward_seconds = seconds_since(start);
    return true;
}

float CudaProfileScanner::backward_chunk(const ap::ForwardProfile& model,
                                         std::span<const std::uint32_t> forward_targets,
                                         const ap::ForwardScores& forward, std::span<const std::uint32_t> positions,
                                         const std::vector<std::uint32_t>& items, ap::BackwardScores& out,
                                         std::vector<float2>& result, GpuTimeline& timeline) {
    const CudaSite where = site("Backward parser kernel");
    // Every entry, in out's order: the rows come back straight into out.specials.
    const bool whole = items.size() == positions.size();
    std::vector<std::uint32_t> chunk_targets(items.size());
    for (std::size_t c = 0; c < items.size(); ++c) chunk_targets[c] = forward_targets[positions[items[c]]];
    const RowsChunk chunk = rows_chunk(model, chunk_targets);
    const std::uint64_t rows = chunk.rows;
    const std::vector<float> scales = packed_scales(forward, positions, items, chunk.first_row, rows);
    const std::uint64_t specials_bytes = rows * kForwardRowBytes;
    const bool in_place = specials_bytes + rows * sizeof(float) > plan_.rows_bytes;  // one target, alone
    // The rows' buffers within the plan's room: what is held from earlier
    // calls goes first where keeping it would pass the room.
    const std::uint64_t scale_bytes = in_place ? 0 : rows * sizeof(float);
    if (std::max<std::uint64_t>(forward_specials_.bytes(), specials_bytes) +
            std::max<std::uint64_t>(backward_scales_.bytes(), scale_bytes) >
        plan_.rows_bytes) {
        forward_specials_.release();
        backward_scales_.release();
    }
    forward_specials_.reserve(std::max<std::size_t>(rows * kForwardSpecials, 1), where);
    if (!in_place) backward_scales_.reserve(std::max<std::size_t>(rows, 1), where);
    upload_rows_chunk(model, chunk, timeline, where);
    float* scales_at = in_place ? forward_specials_.data() : backward_scales_.data();
    copy(scales_at, scales.data(), rows * sizeof(float), cudaMemcpyHostToDevice, "H2D scale factors", timeline, where);
    BackwardBatchView batch = rows_batch<BackwardBatchView>(chunk);
    batch.scales = scales_at;
    batch.scale_step = in_place ? static_cast<std::uint32_t>(kForwardSpecials) : 1u;
    const ForwardModelView view = envelope_model_view(model, forward_model_.data());
    ALIGNSCOPE_CUDA(cudaEventRecord(start_, stream_), where);
    static const KernelName kernel = KernelName::parse(kBackwardKernelName);
    timeline.record(stream_, kernel_op(kernel, 0, chunk.cells), [&] {
        ALIGNSCOPE_CUDA(launch_backward_parser(batch, view, chunk.model_floats, chunk.shared_rows, chunk.shared_model,
                                               chunk.blocks, stream_, chunk.threads),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(stop_, stream_), where);
    return rows_back(items, chunk.first_row, rows, whole, out.specials, out.first_row, result, timeline, where);
}

std::size_t CudaProfileScanner::blocks_per_sm(std::size_t shared_bytes) const {
    return std::max<std::size_t>(1, shared_per_sm_ / (shared_bytes + 1024));
}

CudaProfileScanner::RowsChunk CudaProfileScanner::rows_chunk(const ap::ForwardProfile& model,
                                                             const std::vector<std::uint32_t>& targets) const {
    const std::uint32_t begin = plan_.slices[loaded_slice_].begin;
    const std::size_t count = targets.size();
    RowsChunk chunk;
    chunk.length = std::vector<float2>(count);
    chunk.first_row = std::vector<std::uint64_t>(count);
    chunk.local = std::vector<std::uint32_t>(count);
    for (std::size_t c = 0; c < count; ++c) {
        const std::uint32_t t = targets[c];
        const int L = targets_->length(t);
        const ap::LengthModel lm = ap::LengthModel::for_target(L, true);
        chunk.length[c] = float2{lm.loop, lm.move};
        chunk.first_row[c] = chunk.rows;
        chunk.rows += static_cast<std::uint64_t>(L) + 1;
        chunk.local[c] = t - begin;
        chunk.cells += static_cast<std::uint64_t>(L) * static_cast<std::uint64_t>(model.length);
    }
    chunk.model_floats = static_cast<int>(model.striped.size());
    // Rows (and the model) in shared memory where two blocks still fit an SM;
    // else, where a narrow block's rows and the model fit, narrow blocks.
    const std::size_t half = shape_.forward_shared;
    const int Q = model.segments;
    chunk.shared_rows = forward_shared_bytes(Q, chunk.model_floats, true, false) <= half;
    chunk.shared_model = forward_shared_bytes(Q, chunk.model_floats, chunk.shared_rows, true) <=
                         (chunk.shared_rows ? half : shared_optin_);
    const std::size_t narrow = forward_shared_bytes(Q, chunk.model_floats, true, true, kRowsNarrowThreads);
    std::size_t per_sm = 16;
    if (!chunk.shared_rows && narrow <= shared_optin_ && narrow_rows_allowed()) {
        chunk.threads = kRowsNarrowThreads;
        chunk.shared_rows = chunk.shared_model = true;
        // The blocks that fit the SMs at once (each copies the model in).
        per_sm = blocks_per_sm(narrow);
    }
    const auto threads = static_cast<std::size_t>(chunk.threads);
    chunk.blocks =
        static_cast<int>(std::min<std::size_t>((count * 4 + threads - 1) / threads,
                                               static_cast<std::size_t>(std::max(1, info_.sm_count)) * per_sm));
    chunk.stride = static_cast<std::uint32_t>(static_cast<std::size_t>(chunk.blocks) * threads);
    chunk.order = std::vector<std::uint32_t>(count);
    std::iota(chunk.order.begin(), chunk.order.end(), 0u);
    std::stable_sort(chunk.order.begin(), chunk.order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return targets_->length(begin + chunk.local[a]) > targets_->length(begin + chunk.local[b]);
    });
    return chunk;
}

void CudaProfileScanner::upload_rows_chunk(const ap::ForwardProfile& model, const RowsChunk& chunk,
                                           GpuTimeline& timeline, const CudaSite& where) {
    const std::size_t count = chunk.local.size();
    forward_model_.reserve(static_cast<std::size_t>(chunk.model_floats), where);
    if (!chunk.shared_rows)
        forward_scratch_.reserve(static_cast<std::size_t>(3) * static_cast<std::size_t>(model.segments) * chunk.stride,
                                 where);
    forward_length_.reserve(count, where);
    forward_result_.reserve(count, where);
    forward_first_row_.reserve(count, where);
    list_.reserve(count, where);
    list_order_.reserve(count, where);
    auto put = [&](void* to, const void* from, std::size_t bytes, const char* name) {
        copy(to, from, bytes, cudaMemcpyHostToDevice, name, timeline, where);
    };
    put(forward_model_.data(), model.striped.data(), model.striped.size() * sizeof(float), "H2D model");
    put(forward_length_.data(), chunk.length.data(), count * sizeof(float2), "H2D list");
    put(forward_first_row_.data(), chunk.first_row.data(), count * sizeof(std::uint64_t), "H2D list");
    put(list_.data(), chunk.local.data(), count * sizeof(std::uint32_t), "H2D list");
    put(list_order_.data(), chunk.order.data(), count * sizeof(std::uint32_t), "H2D list");
    ALIGNSCOPE_CUDA(cudaMemsetAsync(counter_.data(), 0, sizeof(std::uint32_t), stream_), where);
}

template <class Batch>
Batch CudaProfileScanner::rows_batch(const RowsChunk& chunk) const {
    Batch batch;
    batch.residues = residues_.data();
    batch.offsets = offsets_.data();
    batch.list = list_.data();
    batch.order = list_order_.data();
    batch.length = forward_length_.data();
    batch.first_row = forward_first_row_.data();
    batch.specials = forward_specials_.data();
    batch.result = forward_result_.data();
    batch.scratch = forward_scratch_.data();
    batch.stride = chunk.stride;
    batch.count = static_cast<std::uint32_t>(chunk.local.size());
    batch.counter = counter_.data();
    return batch;
}

float CudaProfileScanner::rows_back(const std::vector<std::uint32_t>& entries,
                                    const std::vector<std::uint64_t>& first_row, std::uint64_t rows, bool whole,
                                    std::vector<float>& specials, const std::vector<std::uint64_t>& out_first_row,
                                    std::vector<float2>& result, GpuTimeline& timeline, const CudaSite& where) {
    const std::size_t count = entries.size();
    std::vector<float2> chunk_result(count);
    std::vector<float> chunk_rows(whole ? 0 : rows * kForwardSpecials);
    float* rows_to = whole ? specials.data() : chunk_rows.data();
    copy(chunk_result.data(), forward_result_.data(), count * sizeof(float2), cudaMemcpyDeviceToHost, "D2H scores",
         timeline, where);
    copy(rows_to, forward_specials_.data(), rows * kForwardSpecials * sizeof(float), cudaMemcpyDeviceToHost,
         "D2H specials", timeline, where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream_), where);
    float ms = 0;
    ALIGNSCOPE_CUDA(cudaEventElapsedTime(&ms, start_, stop_), where);
    for (std::size_t c = 0; c < count; ++c) {
        const std::uint32_t e = entries[c];
        result[e] = chunk_result[c];
        if (whole) continue;
        // Entry c's rows: up to the next entry's first (the chunk's end for the last).
        const std::uint64_t end = c + 1 < count ? first_row[c + 1] : rows;
        std::copy_n(chunk_rows.data() + first_row[c] * kForwardSpecials, (end - first_row[c]) * kForwardSpecials,
                    specials.data() + out_first_row[e] * kForwardSpecials);
    }
    return ms;
}

}  // namespace alignscope::kernels::profile
