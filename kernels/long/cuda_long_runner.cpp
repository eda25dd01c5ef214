// The CUDA PassRunner of the long-pair pipeline: every runner call becomes one
// launch (or, for the "streams" strategy, several kernels on several streams)
// of the strip kernel over all of the call's tasks; the sequences (forward and
// reversed), the scores and the stage-1 special rows stay on the GPU.
#include "long/cuda_long_runner.hpp"

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "common/stream_pool.hpp"
#include "long/long_batch_plan.hpp"
#include "long/long_launch.hpp"
#include "long/long_runner_limits.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace alignscope::kernels {

namespace {

using longpair::Edge;
using longpair::edge_value;
using longpair::GoalHit;
using longpair::left_e_value;
using longpair::left_f_value;
using longpair::left_value;
using longpair::PassTask;
using longpair::Score;
using longpair::top_f_value;
using longpair::top_value;
using I64 = long long;

std::int8_t edge_code(Edge e) {
    switch (e) {
        case Edge::Zero: return longpass::kEdgeZero;
        case Edge::Gap: return longpass::kEdgeGap;
        case Edge::GapContinue: return longpass::kEdgeGapContinue;
        case Edge::Closed: return longpass::kEdgeClosed;
        case Edge::Explicit: return longpass::kEdgeExplicit;
    }
    return longpass::kEdgeClosed;
}

// The strip height a forced kernel asks for (LongRunnerSettings::kernel): a
// strip kernel's name ("sw_affine_strips16_s32"; align_long_on has checked
// its mode and gap model); 0 when none is forced.
int forced_strip_rows(const std::string& kernel) {
    if (kernel.empty()) return 0;
    using longpass::StripPolicy;
    const std::optional<KernelName> name = KernelName::try_parse(kernel);
    if (name && name->family == "strips" &&
        (name->group == StripPolicy::short_rows || name->group == StripPolicy::tall_rows) &&
        name->width == KernelWidth::S32)
        return name->group;
    throw Error::about("kernel", "'" + kernel +
                                     "' is not a GPU long-pair kernel (strips8 or strips16 with 32-bit "
                                     "cells, e.g. sw_affine_strips16_s32)");
}

// The CUDA runners' link of a streamed split (longpair::BoundaryLink): the
// consumer's column 0, H then E (rows + 1 each), and a flag per strip, in
// the consumer GPU's memory when the producer GPU can write it directly (the
// same GPU, or peer access), else in pinned host memory both GPUs map. The
// producer's kernel writes its last column there strip by strip and raises
// each strip's flag; the consumer's kernel waits for the flags.
class CudaLink final : public longpair::BoundaryLink {
public:
    CudaLink(int producer, int consumer, I64 rows, I64 strip_height, const CudaSite& site)
        : producer_(producer), consumer_(consumer), rows_(rows), site_(site) {
        strips_ = (rows + strip_height - 1) / strip_height;
        int current = 0;
        check_cuda(cudaGetDevice(&current), "cudaGetDevice", site_);
        int can = producer == consumer ? 1 : 0;
        if (producer != consumer)
            check_cuda(cudaDeviceCanAccessPeer(&can, producer, consumer), "cudaDeviceCanAccessPeer", site_);
        peer_ = can != 0;
        if (peer_ && producer != consumer) enable_peer_access(producer, consumer);
        const std::size_t bytes = words() * sizeof(std::int32_t) + static_cast<std::size_t>(strips_) * sizeof(int);
        check_cuda(cudaSetDevice(consumer), "cudaSetDevice", site_);
        if (peer_) {
            check_cuda(cudaMalloc(&base_, bytes), "cudaMalloc", site_);
            check_cuda(cudaMemset(base_, 0, bytes), "cudaMemset", site_);
            check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site_);  // made before the slices run
        } else {
            check_cuda(cudaHostAlloc(&base_, bytes, cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc",
                       site_);
            std::memset(base_, 0, bytes);
        }
        check_cuda(cudaSetDevice(current), "cudaSetDevice", site_);
    }
    ~CudaLink() override {
        if (!base_) return;
        int current = 0;
        (void)cudaGetDevice(&current);
        (void)cudaSetDevice(consumer_);
        (void)(peer_ ? cudaFree(base_) : cudaFreeHost(base_));
        (void)cudaSetDevice(current);
    }
    // The producer GPU may write the consumer's memory: enabled once per pair
    // and process (asking again is an error CUDA records).
    void enable_peer_access(int producer, int consumer) {
        static std::mutex mutex;
        static std::set<std::pair<int, int>> enabled;
        std::lock_guard lock(mutex);
        if (enabled.count({producer, consumer})) return;
        check_cuda(cudaSetDevice(producer), "cudaSetDevice", site_);
        const cudaError_t e = cudaDeviceEnablePeerAccess(consumer, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
        else
            check_cuda(e, "cudaDeviceEnablePeerAccess", site_);
        enabled.insert({producer, consumer});
    }
    CudaLink(const CudaLink&) = delete;
    CudaLink& operator=(const CudaLink&) = delete;

    int producer() const { return producer_; }
    int consumer() const { return consumer_; }
    I64 rows() const { return rows_; }
    bool peer() const { return peer_; }
    std::int32_t* h() const { return static_cast<std::int32_t*>(base_); }
    std::int32_t* e() const { return h() + rows_ + 1; }
    int* ready() const { return reinterpret_cast<int*>(h() + words()); }

private:
    std::size_t words() const { return 2 * static_cast<std::size_t>(rows_ + 1); }
    int producer_, consumer_;
    I64 rows_, strips_ = 0;
    bool peer_ = false;
    void* base_ = nullptr;
    CudaSite site_;
};

class CudaLongRunner final : public longpair::PassRunner {
public:
    CudaLongRunner(int device_index, DeviceInfo info, LongRunnerSettings settings)
        : device_index_(device_index), info_(std::move(info)), settings_(std::move(settings)) {
        if (settings_.strategy.empty()) settings_.strategy = "strips";
        if (settings_.strategy != "strips" && settings_.strategy != "streams")
            throw Error("unknown --strategy '" + settings_.strategy + "': expected strips or streams");
        forced_rows_ = forced_strip_rows(settings_.kernel);
        site_ = {info_.id + " (" + info_.name + ")", "long-pair alignment"};
    }

    void prepare(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                 const ScoringScheme& scheme) override {
        check_cuda(cudaSetDevice(device_index_), "cudaSetDevice", site_);
        if (const std::string why = longpass::cuda_long_cannot_hold(m, n, scheme); !why.empty()) throw Error(why);
        scheme_ = scheme;
        m_ = m;
        n_ = n;
        alphabet_ = scheme.matrix.size();
        std::vector<std::int8_t> scores(static_cast<std::size_t>(alphabet_ * alphabet_));
        for (int a = 0; a < alphabet_; ++a)
            for (int b = 0; b < alphabet_; ++b) {
                const int v = scheme.matrix.score(a, b);  // in -127..127: cuda_long_cannot_hold
                scores[static_cast<std::size_t>(a * alphabet_ + b)] = static_cast<std::int8_t>(v);
            }
        const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n);
        std::vector<std::uint8_t> host(2 * (M + N));
        std::copy(query, query + m, host.begin());
        std::reverse_copy(query, query + m, host.begin() + static_cast<std::ptrdiff_t>(M));
        std::copy(target, target + n, host.begin() + static_cast<std::ptrdiff_t>(2 * M));
        std::reverse_copy(target, target + n, host.begin() + static_cast<std::ptrdiff_t>(2 * M + N));
        residues_.reserve(host.size(), site_);
        profile_.reserve(scores.size(), site_);
        check_cuda(cudaMemcpy(residues_.data(), host.data(), host.size(), cudaMemcpyHostToDevice), "cudaMemcpy", site_);
        check_cuda(cudaMemcpy(profile_.data(), scores.data(), scores.size(), cudaMemcpyHostToDevice), "cudaMemcpy",
                   site_);
        control_.reserve(4, site_);  // ticket, abort
        saved_rows_.clear();
        special_cols_ = 0;
        kernel_name_.clear();
        cudaDeviceProp prop{};
        check_cuda(cudaGetDeviceProperties(&prop, device_index_), "cudaGetDeviceProperties", site_);
        sm_count_ = prop.multiProcessorCount;
        int per_sm = 0;
        check_cuda(longpass::prepare_kernel(longpass::StripPolicy::tall_rows, false, false, false, alphabet_, &per_sm),
                   "cudaFuncSetAttribute", site_);
        resident_warps_ = sm_count_ * per_sm * (longpass::block_threads() / 32);
        int per_sm_slice = 0;  // the column-slice kernels run fewer blocks per SM
        check_cuda(longpass::prepare_kernel(longpass::StripPolicy::tall_rows, false, false, true, alphabet_,
                                            &per_sm_slice),
                   "cudaFuncSetAttribute", site_);
        resident_slice_warps_ = std::max(1, sm_count_ * per_sm_slice * (longpass::block_threads() / 32));
    }

    // Every strip of a stage-2 band must run at once (tall strips), with a margin.
    std::int64_t max_band_rows() const override {
        return static_cast<std::int64_t>(resident_warps_) * longpass::strip_rows(longpass::StripPolicy::tall_rows) * 9 /
               10;
    }
    // A slice pass (the kernels with an explicit left edge) with a strip for
    // every resident warp keeps the GPU busy; more strips run in waves.
    std::int64_t busy_rows() const override {
        return static_cast<std::int64_t>(resident_slice_warps_) *
               longpass::strip_rows(longpass::StripPolicy::tall_rows);
    }
    // To a CUDA runner of another GPU: device to device where the GPUs allow
    // it, else through pinned host memory; both passes run tall strips (a
    // forced short kernel splits through the host instead). Not between two
    // runners of one GPU: the two kernels would run at once on it, and the
    // waiting one could hold every SM.
    std::shared_ptr<longpair::BoundaryLink> link_to(longpair::PassRunner& next, std::int64_t rows) override {
        auto* other = dynamic_cast<CudaLongRunner*>(&next);
        if (!other || other->device_index_ == device_index_ ||
            (forced_rows_ && forced_rows_ != longpass::StripPolicy::tall_rows) ||
            (other->forced_rows_ && other->forced_rows_ != longpass::StripPolicy::tall_rows))
            return nullptr;
        return std::make_shared<CudaLink>(device_index_, other->device_index_, rows,
                                          longpass::strip_rows(longpass::StripPolicy::tall_rows), site_);
    }
    // Special rows are bottoms of strips of 256 or 512 rows.
    std::int64_t special_row_granularity() const override {
        return longpass::strip_rows(longpass::StripPolicy::tall_rows);
    }

    void run(std::vector<PassTask>& tasks, const JobContext& context, const longpair::PassProgress& progress) override {
        check_cuda(cudaSetDevice(device_index_), "cudaSetDevice", site_);
        // Batches whose buses fit the memory budget (a level of many tasks).
        const std::uint64_t budget = settings_.gpu_memory_budget ? settings_.gpu_memory_budget / 4 : (1ull << 30);
        for (const auto& [first, last] : longpass::plan_batches(tasks, budget))
            run_batch(tasks, first, last, context, progress);
    }

    const std::vector<std::int64_t>& saved_rows() const override { return saved_rows_; }

    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        if (k >= saved_rows_.size()) throw Error("internal error: reading an unknown special row");
        check_cuda(cudaSetDevice(device_index_), "cudaSetDevice", site_);
        const auto words = static_cast<std::size_t>(special_cols_ + 1);
        h.resize(words);
        f.resize(words);
        // During a launch (from on_rows_done) on the side stream, beside the running kernels.
        copy_back(h.data(), special_h_.data() + k * words, words);
        copy_back(f.data(), special_f_.data() + k * words, words);
    }

    // The byte table of scores and the length limit, then the pipeline's.
    std::string cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) const override {
        return longpass::cuda_long_cannot_hold(m, n, scheme);
    }

    std::string device() const override { return info_.id; }
    // The last launch's kernel (long_batch_plan.hpp's strips_kernel_name); before
    // any, the family's name with the scheme's gap model.
    std::string kernel() const override {
        return kernel_name_.empty() ? longpass::strips_kernel_name(0, false, scheme_.linear()).format() : kernel_name_;
    }
    std::string strategy() const override { return settings_.strategy; }  // "strips" or "streams"

private:
    const std::uint8_t* rows_ptr(const PassTask& t) const {
        const std::uint8_t* base = residues_.data();
        return t.reversed ? base + m_ + (m_ - t.row_end) : base + t.row_begin;
    }
    const std::uint8_t* cols_ptr(const PassTask& t) const {
        const std::uint8_t* base = residues_.data() + 2 * m_;
        return t.reversed ? base + n_ + (n_ - t.col_end) : base + t.col_begin;
    }

    // Reads the crossing row's forward H and F at column c.
    std::pair<I64, I64> forward_at(const PassTask& t, I64 c) {
        if (t.crossing_row == longpair::kExplicitRow)
            return {t.crossing_h[static_cast<std::size_t>(c)], t.crossing_f[static_cast<std::size_t>(c)]};
        if (t.crossing_row < 0) {
            if (c == 0) return {0, longpair::kNegInf};
            return {edge_value(t.crossing_edge, c, scheme_.gap_open, scheme_.gap_extend), longpair::kNegInf};
        }
        std::int32_t hf[2];
        const std::size_t offset =
            static_cast<std::size_t>(t.crossing_row) * static_cast<std::size_t>(special_cols_ + 1) +
            static_cast<std::size_t>(c);
        check_cuda(cudaMemcpy(&hf[0], special_h_.data() + offset, 4, cudaMemcpyDeviceToHost), "cudaMemcpy", site_);
        check_cuda(cudaMemcpy(&hf[1], special_f_.data() + offset, 4, cudaMemcpyDeviceToHost), "cudaMemcpy", site_);
        return {hf[0], hf[1]};
    }

    // One launch over tasks [first, last): lay them out, upload what they
    // bring, run the strip kernels, and read their results back.
    void run_batch(std::vector<PassTask>& tasks, std::size_t first, std::size_t last, const JobContext& context,
                   const longpair::PassProgress& progress) {
        const longpass::BatchTraits traits = longpass::batch_traits(tasks, first, last);
        const int R =
            longpass::choose_rows_per_lane(traits, {sm_count_, resident_warps_, resident_slice_warps_, forced_rows_});
        const I64 SH = longpass::strip_rows(R);
        for (std::size_t x = first; x < last; ++x) check_task(tasks[x], last - first);
        const longpass::BatchLayout layout = longpass::plan_batch_layout(tasks, first, last);
        std::vector<longpass::LongTask> dev(last - first);
        int tickets = 0;
        for (std::size_t x = first; x < last; ++x) dev[x - first] = describe(tasks[x], SH, tickets);
        reserve_buffers(layout, tickets);
        // Tasks without strips are dropped from the device list (the search needs
        // first_ticket to rise strictly).
        std::vector<longpass::LongTask> launch_tasks;
        bool uploads = false;  // host rows copied to the GPU (explicit top or crossing rows)
        for (std::size_t x = first; x < last; ++x) {
            longpass::LongTask& d = dev[x - first];
            uploads = bind_buffers(tasks[x], d, layout, x - first, SH) || uploads;
            if (d.strips > 0) launch_tasks.push_back(d);
        }
        // The copies above come from pageable memory: they may still be under way
        // when cudaMemcpy returns, and the kernels' streams do not wait for them.
        if (uploads) check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site_);

        std::uint64_t cells_total = 0;
        for (std::size_t x = first; x < last; ++x)
            cells_total += static_cast<std::uint64_t>(tasks[x].rows()) * static_cast<std::uint64_t>(tasks[x].cols());

        // Stage 1 with a checkpoint: hand over the special rows as their strips finish.
        std::function<void(const int*)> watch;
        RowWatch rw;
        if (tasks[first].on_rows_done && dev[0].strips > 0) {
            rw.task = &tasks[first];
            rw.dev = dev[0];
            if (tasks[first].right_link) rw.dev.last_col = nullptr;  // the next slice's link, not a result
            rw.SH = SH;
            watch = [this, &rw](const int* snapshot) { poll_rows(rw, snapshot); };
        }

        if (tickets > 0) launch(launch_tasks, tickets, R, traits, cells_total, context, progress, watch);
        collect_results(tasks, first, last, dev, layout, tickets, SH);
    }

    // Resets a task's results and refuses one this runner cannot run.
    void check_task(PassTask& t, std::size_t batch_size) const {
        t.best = {};
        t.hit = {};
        t.cells = 0;
        const I64 h = t.rows(), w = t.cols();
        if (h < 1 || w < 0 || t.row_end > m_ || t.col_end > n_ || t.row_begin < 0 || t.col_begin < 0)
            throw Error("internal error: long-pair pass outside the matrix");
        longpair::check_pass_edges(t);
        for (const auto* link : {t.left_link.get(), t.right_link.get()})
            if (link) {
                const auto* l = dynamic_cast<const CudaLink*>(link);
                if (!l || l->rows() != h || w < 1 || t.goal_search || batch_size != 1)
                    throw Error("internal error: a long-pair pass with a link this runner cannot use");
            }
        if (t.goal_search && t.crossing_row == longpair::kExplicitRow &&
            (t.crossing_h.size() < static_cast<std::size_t>(t.col_end + 1) ||
             t.crossing_f.size() != t.crossing_h.size()))
            throw Error("internal error: long-pair goal search with a short explicit crossing row");
        if (t.on_rows_done && batch_size != 1)
            throw Error("internal error: a checkpointed long-pair pass shares its launch");
    }

    // A goal search may be settled at column 0 (a vertical path from the
    // anchor): then its hit is set and it needs no strips.
    bool settle_at_column_zero(PassTask& t) {
        if (!t.goal_search) return false;
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        const I64 h = t.rows();
        const auto fwd = forward_at(t, t.col_end);
        const I64 h0 = left_value(t, h, open, extend);
        const I64 f0 = left_f_value(t, h, open, extend);
        GoalHit::Kind kind = GoalHit::Kind::CrossH;
        if (fwd.first > longpair::kNegInf / 2 && fwd.first + h0 == t.goal) kind = GoalHit::Kind::CrossH;
        else if (fwd.second > longpair::kNegInf / 2 && f0 > longpair::kNegInf / 2 &&
                 fwd.second + f0 + open - extend == t.goal)
            kind = GoalHit::Kind::CrossF;
        else
            return false;
        t.hit = {true, kind, h, 0, static_cast<Score>(fwd.first), static_cast<Score>(fwd.second)};
        return true;
    }

    // A task's launch data without its buffers: rectangle, residues, edges,
    // goal, and its strips (none when settled at column 0 or without
    // columns), numbered from `tickets` on.
    longpass::LongTask describe(PassTask& t, I64 SH, int& tickets) {
        const I64 h = t.rows(), w = t.cols();
        const bool skip = settle_at_column_zero(t) || w == 0;
        longpass::LongTask d{};
        d.m = h;
        d.n = w;
        d.rows = rows_ptr(t);
        d.cols = cols_ptr(t);
        d.top = edge_code(t.top);
        d.left = edge_code(t.left);
        d.corner_open = t.corner_open ? 1 : 0;
        d.goal_edge = edge_code(t.crossing_edge);
        d.track_best = t.track_best ? 1 : 0;
        d.goal_search = t.goal_search ? 1 : 0;
        d.goal_any = t.goal_any_cell ? 1 : 0;
        d.goal = t.goal;
        d.top_corner = t.top == Edge::Explicit ? t.top_h[0] : 0;
        d.goal_col_end = t.col_end;
        d.ov_total = std::max<I64>(w, 1);
        d.first_ticket = tickets;
        d.strips = skip ? 0 : static_cast<std::int32_t>((h + SH - 1) / SH);
        tickets += d.strips;
        return d;
    }

    // The launch's buffers, at least as large as the layout asks; the hit
    // keys start at "none" (all bits set).
    void reserve_buffers(const longpass::BatchLayout& layout, int tickets) {
        hits_.reserve(std::max<std::size_t>(layout.hits, 1), site_);
        // cudaMemset may return before it is done, and the kernels run on
        // non-blocking streams that do not wait for the default stream.
        check_cuda(cudaMemset(hits_.data(), 0xff, hits_.capacity() * sizeof(unsigned long long)), "cudaMemset", site_);
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site_);
        bus_.reserve(std::max<std::size_t>(layout.bus_words, 1), site_);
        last_col_.reserve(std::max<std::size_t>(layout.col_words, 1), site_);
        left_.reserve(std::max<std::size_t>(layout.left_words, 1), site_);
        goal_rows_.reserve(std::max<std::size_t>(layout.goal_words, 1), site_);
        progress_.reserve(static_cast<std::size_t>(std::max(tickets, 1)), site_);
        best_.reserve(static_cast<std::size_t>(std::max(tickets, 1)), site_);
    }

    template <typename T>
    void upload(T* device, const T* host, std::size_t count) {
        check_cuda(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy", site_);
    }

    // Task k's buffers in the launch (layout), with its explicit edges,
    // crossing row, special rows and overview grid. True when host rows were
    // uploaded.
    bool bind_buffers(const PassTask& t, longpass::LongTask& d, const longpass::BatchLayout& layout, std::size_t k,
                      I64 SH) {
        const I64 w = t.cols();
        bool uploads = false;
        d.bus_h = bus_.data() + layout.bus_at[k];
        d.bus_f = d.bus_h + (w + 1);
        d.last_col = t.want_last_column ? last_col_.data() + layout.col_at[k] : nullptr;  // H, then E
        if (t.left_link && d.strips > 0) {  // column 0 streams in; the corner is the top edge's
            const auto& link = static_cast<const CudaLink&>(*t.left_link);
            if (link.consumer() != device_index_) throw Error("internal error: a long-pair link into another GPU");
            const Score corner = static_cast<Score>(
                std::max<I64>(top_value(t, 0, scheme_.gap_open, scheme_.gap_extend), longpair::kNegInf));
            check_cuda(cudaMemcpy(link.h(), &corner, sizeof corner, cudaMemcpyDefault), "cudaMemcpy", site_);
            d.left_h = link.h();
            d.left_e = link.e();
            d.left_f = nullptr;
            d.left_ready = link.ready();
            uploads = true;
        } else if (t.left == Edge::Explicit && d.strips > 0) {  // column 0 (H, E, F); H[0] is the corner
            std::int32_t* col = left_.data() + layout.left_at[k];
            const auto words = static_cast<std::size_t>(t.rows() + 1);
            std::vector<std::int32_t> h0 = t.left_h;
            h0[0] = static_cast<Score>(
                std::max<I64>(top_value(t, 0, scheme_.gap_open, scheme_.gap_extend), longpair::kNegInf));
            upload(col, h0.data(), words);
            upload(col + words, t.left_e.data(), words);
            upload(col + 2 * words, t.left_f.data(), words);
            d.left_h = col;
            d.left_e = col + words;
            d.left_f = col + 2 * words;
            uploads = true;
        }
        if (t.right_link && d.strips > 0) {  // the last column streams out to the next slice
            const auto& link = static_cast<const CudaLink&>(*t.right_link);
            if (link.producer() != device_index_ || t.want_last_column)
                throw Error("internal error: a long-pair link out of another GPU, or a last column asked for twice");
            d.last_col = link.h();
            d.right_ready = link.ready();
        }
        d.hit = t.goal_search ? hits_.data() + layout.hit_at[k] : nullptr;
        if (t.top == Edge::Explicit && d.strips > 0) {  // row 0 waits in the bus for strip 0
            upload(d.bus_h, t.top_h.data(), t.top_h.size());
            upload(d.bus_f, t.top_f.data(), t.top_f.size());
            uploads = true;
        }
        uploads = bind_crossing_row(t, d, layout.goal_at[k]) || uploads;
        if (t.special_every > 0) bind_special_rows(t, d, SH);
        if (t.overview_rows > 0 && t.overview_cols > 0 && d.strips > 0) bind_overview(t, d);
        return uploads;
    }

    // A goal search's crossing row: uploaded when explicit, else one of the
    // special rows kept here. True when uploaded.
    bool bind_crossing_row(const PassTask& t, longpass::LongTask& d, std::size_t goal_at) {
        if (t.goal_search && t.crossing_row == longpair::kExplicitRow) {
            std::int32_t* row = goal_rows_.data() + goal_at;
            const std::size_t words = t.crossing_h.size();
            upload(row, t.crossing_h.data(), words);
            upload(row + words, t.crossing_f.data(), words);
            d.goal_h = row;
            d.goal_f = row + words;
            return true;
        }
        if (t.goal_search && t.crossing_row >= 0) {
            if (static_cast<std::size_t>(t.crossing_row) >= saved_rows_.size())
                throw Error("internal error: long-pair goal search names an unknown special row");
            if (special_col_begin_ != 0 || special_cols_ < t.col_end)
                throw Error("internal error: long-pair goal search on special rows of a column slice");
            const std::size_t row =
                static_cast<std::size_t>(t.crossing_row) * static_cast<std::size_t>(special_cols_ + 1);
            d.goal_h = special_h_.data() + row;
            d.goal_f = special_f_.data() + row;
        }
        return false;
    }

    // A stage-1 pass keeps the bottoms of every every_strips-th strip.
    void bind_special_rows(const PassTask& t, longpass::LongTask& d, I64 SH) {
        if (t.reversed) throw Error("internal error: special rows from a reversed pass");
        const I64 w = t.cols();
        longpass::StripSpecialRows special = longpass::plan_special_rows(t, SH);
        saved_rows_ = std::move(special.rows);
        special_cols_ = w;
        special_col_begin_ = t.col_begin;
        const std::size_t words = std::max<std::size_t>(saved_rows_.size(), 1) * static_cast<std::size_t>(w + 1);
        special_h_.reserve(words, site_);
        special_f_.reserve(words, site_);
        d.special_h = special_h_.data();
        d.special_f = special_f_.data();
        d.special_every = static_cast<std::int32_t>(special.every_strips);
    }

    // The overview grid, empty; columns binned as in the pass this one is a
    // slice of, when it is one.
    void bind_overview(const PassTask& t, longpass::LongTask& d) {
        const I64 w = t.cols();
        d.ov_total = t.overview_col_total > 0 ? t.overview_col_total : w;
        d.ov_offset = t.overview_col_total > 0 ? t.overview_col_offset : 0;
        if (d.ov_offset < 0 || d.ov_offset + w > d.ov_total)
            throw Error("internal error: a long-pair overview slice outside its pass");
        d.ov_rows = std::min<std::int32_t>(t.overview_rows, d.strips);
        d.ov_cols = static_cast<std::int32_t>(std::min<I64>(t.overview_cols, d.ov_total));
        const std::vector<std::int32_t> empty(static_cast<std::size_t>(d.ov_rows) * static_cast<std::size_t>(d.ov_cols),
                                              longpass::kNeg);
        overview_.reserve(empty.size(), site_);
        upload(overview_.data(), empty.data(), empty.size());
        d.overview = overview_.data();
    }

    // What a launch leaves in device memory, copied back once for all tasks.
    struct HostResults {
        std::vector<std::int32_t> bus, col;
        std::vector<unsigned long long> hits;
        std::vector<longpass::StripBest> best;
    };

    void collect_results(std::vector<PassTask>& tasks, std::size_t first, std::size_t last,
                         const std::vector<longpass::LongTask>& dev, const longpass::BatchLayout& layout, int tickets,
                         I64 SH) {
        HostResults host;
        host.hits.resize(layout.hits);
        bool any_row = false, any_best = false;
        for (std::size_t x = first; x < last; ++x) {
            any_row = any_row || tasks[x].want_last_row;
            any_best = any_best || tasks[x].track_best;
        }
        if (any_row && layout.bus_words) {
            host.bus.resize(layout.bus_words);
            copy_back(host.bus.data(), bus_.data(), layout.bus_words);
        }
        if (layout.col_words) {
            host.col.resize(layout.col_words);
            copy_back(host.col.data(), last_col_.data(), layout.col_words);
        }
        if (layout.hits) copy_back(host.hits.data(), hits_.data(), layout.hits);
        if (any_best && tickets) {
            host.best.resize(static_cast<std::size_t>(tickets));
            copy_back(host.best.data(), best_.data(), host.best.size());
        }
        for (std::size_t x = first; x < last; ++x) {
            PassTask& t = tasks[x];
            const std::size_t k = x - first;
            const longpass::LongTask& d = dev[k];
            if (t.want_last_row) collect_last_row(t, d, host.bus, layout.bus_at[k]);
            if (t.want_last_column) {
                collect_last_column(t, d, host.col, layout.col_at[k]);
            } else {
                t.last_col_e.clear();
                t.last_col_f.clear();
            }
            t.overview.clear();
            t.overview_row_edges.clear();
            if (d.overview) {
                t.overview.resize(static_cast<std::size_t>(d.ov_rows) * static_cast<std::size_t>(d.ov_cols));
                copy_back(t.overview.data(), overview_.data(), t.overview.size());
                t.overview_row_edges = longpass::overview_row_edges(d.ov_rows, d.strips, SH);
            }
            if (t.track_best) collect_best(t, d, host.best);
            if (t.goal_search && !t.hit.found) collect_hit(t, host.hits[layout.hit_at[k]]);
            // Cells: a stopped search did about as many columns as its hit's.
            const I64 h = t.rows(), w = t.cols();
            const I64 done_cols = (t.goal_search && t.hit.found) ? std::min<I64>(w, t.hit.j + 64) : w;
            t.cells = static_cast<std::uint64_t>(h) * static_cast<std::uint64_t>(done_cols);
        }
    }

    // H and F of the last row from the bus (column 0 from the left edge; a
    // linked left edge: H from the link, no F, which nothing reads there).
    void collect_last_row(PassTask& t, const longpass::LongTask& d, const std::vector<std::int32_t>& bus,
                          std::size_t at) const {
        const I64 h = t.rows(), w = t.cols();
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        t.last_h.assign(static_cast<std::size_t>(w + 1), longpair::kNegInf);
        t.last_f.assign(static_cast<std::size_t>(w + 1), longpair::kNegInf);
        if (d.strips > 0) {
            std::copy_n(bus.begin() + static_cast<std::ptrdiff_t>(at), w + 1, t.last_h.begin());
            std::copy_n(bus.begin() + static_cast<std::ptrdiff_t>(at + static_cast<std::size_t>(w + 1)), w + 1,
                        t.last_f.begin());
        }
        if (t.left_link && d.strips > 0) {
            check_cuda(cudaMemcpy(t.last_h.data(), static_cast<const CudaLink&>(*t.left_link).h() + h, sizeof(Score),
                                  cudaMemcpyDefault),
                       "cudaMemcpy", site_);
            return;
        }
        t.last_h[0] = static_cast<Score>(std::max<I64>(left_value(t, h, open, extend), longpair::kNegInf));
        t.last_f[0] = static_cast<Score>(std::max<I64>(left_f_value(t, h, open, extend), longpair::kNegInf));
    }

    // H (and with want_last_column_state E and F) of the last column.
    void collect_last_column(PassTask& t, const longpass::LongTask& d, const std::vector<std::int32_t>& col,
                             std::size_t at_words) const {
        const I64 h = t.rows(), w = t.cols();
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        auto clamp = [](I64 v) { return static_cast<Score>(std::max<I64>(v, longpair::kNegInf)); };
        const auto H = static_cast<std::size_t>(h + 1);
        t.last_col_h.assign(H, longpair::kNegInf);
        t.last_col_e.assign(H, longpair::kNegInf);  // (filled by the slice kernels)
        t.last_col_f.assign(H, longpair::kNegInf);
        if (d.strips > 0) {
            const auto at = static_cast<std::ptrdiff_t>(at_words);
            for (std::size_t i = 1; i < H; ++i) {
                t.last_col_h[i] = clamp(col[static_cast<std::size_t>(at) + i]);
                t.last_col_e[i] = clamp(col[static_cast<std::size_t>(at) + H + i]);
            }
        } else {  // no columns: the last column is column 0
            for (I64 i = 1; i <= h; ++i) {
                t.last_col_h[static_cast<std::size_t>(i)] = clamp(left_value(t, i, open, extend));
                t.last_col_e[static_cast<std::size_t>(i)] = clamp(left_e_value(t, i));
            }
        }
        t.last_col_h[0] = clamp(top_value(t, w, open, extend));
        if (!t.want_last_column_state) {
            t.last_col_e.clear();
            t.last_col_f.clear();
        } else if (d.strips > 0) {  // F of the last column follows from its H (the kernel's recurrence)
            t.last_col_f[0] = clamp(top_f_value(t, w));
            for (std::size_t i = 1; i < H; ++i)
                t.last_col_f[i] =
                    clamp(std::max<I64>(I64{t.last_col_f[i - 1]} - extend, I64{t.last_col_h[i - 1]} - open));
        } else {
            t.last_col_f[0] = clamp(top_f_value(t, w));
            for (I64 i = 1; i <= h; ++i)
                t.last_col_f[static_cast<std::size_t>(i)] = clamp(left_f_value(t, i, open, extend));
        }
    }

    // The best cell over the task's strips (highest H, smallest j, smallest i).
    static void collect_best(PassTask& t, const longpass::LongTask& d, const std::vector<longpass::StripBest>& best) {
        t.best = {};
        for (int s = 0; s < d.strips; ++s) {
            const longpass::StripBest& b = best[static_cast<std::size_t>(d.first_ticket + s)];
            if (b.score > t.best.score ||
                (b.score == t.best.score && (b.j < t.best.j || (b.j == t.best.j && b.i < t.best.i))))
                t.best = {b.score, b.i, b.j};
        }
    }

    // A goal search's hit from its key (j << 34 | i << 2 | kind; all bits set: none).
    void collect_hit(PassTask& t, unsigned long long key) {
        if (key == ~0ull) return;
        const I64 h = t.rows();
        t.hit.found = true;
        t.hit.kind = static_cast<GoalHit::Kind>(key & 3);
        t.hit.i = static_cast<I64>((key >> 2) & ((1ull << 32) - 1));
        t.hit.j = static_cast<I64>(key >> 34);
        if (t.hit.kind != GoalHit::Kind::Begin || t.hit.i == h) {
            const auto fwd = forward_at(t, t.col_end - t.hit.j);
            t.hit.forward_h = static_cast<Score>(std::max<I64>(fwd.first, longpair::kNegInf));
            t.hit.forward_f = static_cast<Score>(std::max<I64>(fwd.second, longpair::kNegInf));
        }
    }

    template <typename T>
    void copy_back(T* host, const T* device, std::size_t count) {
        if (side_) {  // during a launch: beside the running kernels
            check_cuda(cudaMemcpyAsync(host, device, count * sizeof(T), cudaMemcpyDeviceToHost, side_),
                       "cudaMemcpyAsync", site_);
            check_cuda(cudaStreamSynchronize(side_), "cudaStreamSynchronize", site_);
            return;
        }
        check_cuda(cudaMemcpy(host, device, count * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy", site_);
    }

    // A stage-1 pass that reports finished special rows (PassTask::on_rows_done).
    struct RowWatch {
        PassTask* task = nullptr;
        longpass::LongTask dev{};  // its launch data (one task: tickets are strips)
        I64 SH = 0;
        int complete = 0;          // strips 0..complete-1 have written everything
        std::size_t reported = 0;  // special rows handed over
        int best_strips = 0;       // strips merged into best
        longpair::BestCell best, last_column;
        I64 last_col_rows = 0;  // rows of the last column merged into last_column
        std::vector<Score> overview;
        std::vector<std::int64_t> overview_row_edges;
    };

    // The strips finished in a progress snapshot (n + 1 each) and the special
    // rows they complete, with the best cells of the rows above them.
    void poll_rows(RowWatch& w, const int* snapshot) {
        const longpass::LongTask& d = w.dev;
        while (w.complete < d.strips && snapshot[w.complete] == static_cast<int>(d.n) + 1) ++w.complete;
        const I64 rows_done = std::min<I64>(static_cast<I64>(w.complete) * w.SH, d.m);
        std::size_t count = w.reported;
        while (count < saved_rows_.size() && saved_rows_[count] - w.task->row_begin <= rows_done) ++count;
        if (count == w.reported) return;
        const I64 row = saved_rows_[count - 1] - w.task->row_begin;  // the bottom of strip row / SH - 1
        const int strips = static_cast<int>(row / w.SH);
        if (w.task->track_best && strips > w.best_strips) {
            std::vector<longpass::StripBest> b(static_cast<std::size_t>(strips - w.best_strips));
            copy_back(b.data(), best_.data() + w.best_strips, b.size());
            for (const longpass::StripBest& x : b) {
                const longpair::BestCell c{x.score, x.i, x.j};
                if (longpair::better_cell(c, w.best)) w.best = c;
            }
            w.best_strips = strips;
        }
        if (d.last_col && row > w.last_col_rows) {
            std::vector<std::int32_t> col(static_cast<std::size_t>(row - w.last_col_rows));
            copy_back(col.data(), d.last_col + w.last_col_rows + 1, col.size());
            for (std::size_t x = 0; x < col.size(); ++x) {
                const longpair::BestCell c{col[x], w.last_col_rows + 1 + static_cast<I64>(x), d.n};
                if (longpair::better_cell(c, w.last_column)) w.last_column = c;
            }
            w.last_col_rows = row;
        }
        longpair::RowsDone done;
        done.row = row;
        done.special_rows = count;
        done.best = w.best;
        done.last_column = w.last_column;
        if (d.overview) {
            w.overview.resize(static_cast<std::size_t>(d.ov_rows) * static_cast<std::size_t>(d.ov_cols));
            copy_back(w.overview.data(), d.overview, w.overview.size());
            w.overview_row_edges = longpass::overview_row_edges(d.ov_rows, d.strips, w.SH);
            done.overview = &w.overview;
            done.overview_row_edges = &w.overview_row_edges;
        }
        w.reported = count;
        w.task->on_rows_done(done);
    }

    // The host side of a running launch: progress snapshots (columns
    // published per strip) through the side stream, the checkpoint watch,
    // and the cancel flag.
    struct LaunchWatch {
        cudaStream_t side = nullptr;
        int tickets = 0;
        PinnedBuffer<int> snapshot;
        const std::function<void(const int*)>* watch = nullptr;
        std::exception_ptr watch_failure;  // a checkpoint that could not be written: stop the kernels, then throw
        bool cancelled = false;
    };

    void launch(const std::vector<longpass::LongTask>& tasks, int tickets, int R, const longpass::BatchTraits& traits,
                std::uint64_t cells_total, const JobContext& context, const longpair::PassProgress& progress,
                const std::function<void(const int*)>& watch) {
        int per_sm = 0;
        check_cuda(longpass::prepare_kernel(R, traits.local, traits.overview, traits.slice, alphabet_, &per_sm),
                   "cudaFuncSetAttribute", site_);
        if (per_sm < 1)
            throw Error("the long-pair kernel does not fit on " + info_.id + " with an alphabet of " +
                        std::to_string(alphabet_) + " letters");
        longpass::LaunchRequest request;
        request.tickets = tickets;
        request.warps_per_block = longpass::block_threads() / 32;
        request.resident_blocks = sm_count_ * per_sm;
        for (const longpass::LongTask& t : tasks) request.goal_search = request.goal_search || t.goal_search;
        request.strategy = settings_.strategy;
        request.kernels = settings_.kernels;
        request.streams = settings_.streams;
        request.rows_per_lane = R;
        request.local = traits.local;
        request.linear = scheme_.linear();
        const longpass::LaunchShape shape = longpass::plan_launch(request);
        kernel_name_ = shape.kernel.format();

        task_buf_.reserve(tasks.size(), site_);
        StreamPool pool(shape.streams + 1, site_);  // the last stream polls and cancels
        LaunchWatch lw;
        lw.side = pool[shape.streams];
        lw.tickets = tickets;
        lw.watch = watch ? &watch : nullptr;
        struct SideStream {  // copy_back goes through it while the kernels run
            cudaStream_t& slot;
            ~SideStream() { slot = nullptr; }
        } side_guard{side_};
        GpuTimeline timeline(context.timeline, info_.id, site_);
        cudaEvent_t ready = nullptr;
        const std::vector<cudaEvent_t> done =
            start_kernels(tasks, tickets, R, traits, shape, pool, timeline, cells_total, ready);

        const bool report = static_cast<bool>(progress) && tasks.size() == 1;
        if (report || watch) lw.snapshot.reserve(static_cast<std::size_t>(tickets), site_);
        wait_for_kernels(lw, done, report ? &tasks[0] : nullptr, R, cells_total, context, progress);
        for (cudaEvent_t e : done) cudaEventDestroy(e);
        cudaEventDestroy(ready);
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site_);
        timeline.flush();
        if (lw.watch_failure) std::rethrow_exception(lw.watch_failure);
        if (lw.cancelled) throw Cancelled();
        if (watch) {  // the special rows finished since the last poll
            take_snapshot(lw);
            run_watch(lw);
            if (lw.watch_failure) std::rethrow_exception(lw.watch_failure);
        }
        if (progress) progress(cells_total, cells_total);
    }

    // Uploads the launch's tasks, clears its ticket, abort flag and progress
    // counters, and enqueues its kernels (each after `ready`). Returns an
    // event per kernel, recorded after it.
    std::vector<cudaEvent_t> start_kernels(const std::vector<longpass::LongTask>& tasks, int tickets, int R,
                                           const longpass::BatchTraits& traits, const longpass::LaunchShape& shape,
                                           StreamPool& pool, GpuTimeline& timeline, std::uint64_t cells_total,
                                           cudaEvent_t& ready) {
        check_cuda(cudaMemcpyAsync(task_buf_.data(), tasks.data(), tasks.size() * sizeof(longpass::LongTask),
                                   cudaMemcpyHostToDevice, pool[0]),
                   "cudaMemcpyAsync", site_);
        check_cuda(cudaMemsetAsync(control_.data(), 0, 4 * sizeof(int), pool[0]), "cudaMemsetAsync", site_);
        check_cuda(cudaMemsetAsync(progress_.data(), 0, static_cast<std::size_t>(tickets) * sizeof(int), pool[0]),
                   "cudaMemsetAsync", site_);
        check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate", site_);
        check_cuda(cudaEventRecord(ready, pool[0]), "cudaEventRecord", site_);

        longpass::LaunchParams params{};
        params.tasks = task_buf_.data();
        params.task_count = static_cast<int>(tasks.size());
        params.total_strips = tickets;
        params.ticket = control_.data();
        params.abort = control_.data() + 1;
        params.progress = progress_.data();
        params.best = best_.data();
        params.profile_scores = profile_.data();
        params.alphabet = alphabet_;
        params.gap_open = scheme_.gap_open;
        params.gap_extend = scheme_.gap_extend;

        std::vector<cudaEvent_t> done(static_cast<std::size_t>(shape.kernels), nullptr);
        const std::uint64_t cells_per_kernel = cells_total / static_cast<std::uint64_t>(shape.kernels);
        for (int kx = 0; kx < shape.kernels; ++kx) {
            cudaStream_t stream = pool[kx % shape.streams];
            check_cuda(cudaStreamWaitEvent(stream, ready, 0), "cudaStreamWaitEvent", site_);
            timeline.record(stream, kernel_op(shape.kernel, kx % shape.streams, cells_per_kernel), [&] {
                check_cuda(longpass::launch_strip_kernel(R, traits.local, traits.overview, traits.slice, params,
                                                         shape.blocks_of(kx), stream),
                           "strip_kernel launch", site_);
            });
            check_cuda(cudaEventCreateWithFlags(&done[static_cast<std::size_t>(kx)], cudaEventDisableTiming),
                       "cudaEventCreate", site_);
            check_cuda(cudaEventRecord(done[static_cast<std::size_t>(kx)], stream), "cudaEventRecord", site_);
        }
        return done;
    }

    void take_snapshot(LaunchWatch& lw) {
        check_cuda(cudaMemcpyAsync(lw.snapshot.data(), progress_.data(),
                                   static_cast<std::size_t>(lw.tickets) * sizeof(int), cudaMemcpyDeviceToHost, lw.side),
                   "cudaMemcpyAsync", site_);
        check_cuda(cudaStreamSynchronize(lw.side), "cudaStreamSynchronize", site_);
    }
    void run_watch(LaunchWatch& lw) {
        if (!lw.watch || lw.watch_failure) return;
        side_ = lw.side;
        try {
            (*lw.watch)(lw.snapshot.data());
        } catch (...) {
            lw.watch_failure = std::current_exception();
        }
    }

    // Waits for the kernels' events, every 2 ms: raises the abort flag on a
    // cancel or a failed watch, and every 100 ms takes a snapshot for the
    // watch and (one task: `reported`) the progress.
    void wait_for_kernels(LaunchWatch& lw, const std::vector<cudaEvent_t>& done, const longpass::LongTask* reported,
                          int R, std::uint64_t cells_total, const JobContext& context,
                          const longpair::PassProgress& progress) {
        const I64 SH = longpass::strip_rows(R);
        auto all_done = [&] {
            for (cudaEvent_t e : done) {
                const cudaError_t q = cudaEventQuery(e);
                if (q == cudaErrorNotReady) return false;
                check_cuda(q, "strip_kernel", site_);
            }
            return true;
        };
        auto last_report = std::chrono::steady_clock::now();
        while (!all_done()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            if (!lw.cancelled && (context.cancelled() || lw.watch_failure)) {
                static const int one = 1;
                check_cuda(cudaMemcpyAsync(control_.data() + 1, &one, sizeof(int), cudaMemcpyHostToDevice, lw.side),
                           "cudaMemcpyAsync", site_);
                lw.cancelled = true;
            }
            const auto now = std::chrono::steady_clock::now();
            if ((reported || lw.watch) && !lw.cancelled && now - last_report > std::chrono::milliseconds(100)) {
                last_report = now;
                take_snapshot(lw);
                run_watch(lw);
                if (!reported) continue;
                progress(longpass::snapshot_cells(lw.snapshot.data(), lw.tickets, reported->m, reported->n, SH),
                         cells_total);
            }
        }
    }

    int device_index_;
    DeviceInfo info_;
    LongRunnerSettings settings_;
    CudaSite site_;
    ScoringScheme scheme_;
    I64 m_ = 0, n_ = 0;
    int alphabet_ = 0;
    int sm_count_ = 1;
    int resident_warps_ = 1;
    int resident_slice_warps_ = 1;
    std::string kernel_name_;
    int forced_rows_ = 0;  // strip height a forced kernel asks for; 0 = automatic
    DeviceBuffer<std::uint8_t> residues_;
    DeviceBuffer<std::int8_t> profile_;
    DeviceBuffer<int> control_, progress_;
    DeviceBuffer<std::int32_t> bus_, last_col_, left_, special_h_, special_f_, overview_, goal_rows_;
    cudaStream_t side_ = nullptr;  // the polling stream while a launch runs
    DeviceBuffer<unsigned long long> hits_;
    DeviceBuffer<longpass::StripBest> best_;
    DeviceBuffer<longpass::LongTask> task_buf_;
    std::vector<std::int64_t> saved_rows_;
    I64 special_cols_ = 0;
    I64 special_col_begin_ = 0;  // the special rows are columns special_col_begin_.. of their pass
};

}  // namespace

std::unique_ptr<longpair::PassRunner> make_cuda_long_runner(int device_index, const DeviceInfo& info,
                                                            const LongRunnerSettings& settings) {
    return std::make_unique<CudaLongRunner>(device_index, info, settings);
}

}  // namespace alignscope::kernels
