// The CUDA PassRunner of the long-pair pipeline: every runner call becomes one
// launch (or, for the "streams" strategy, several kernels on several streams)
// of the strip kernel over all of the call's tasks; the sequences (forward and
// reversed), the scores and the stage-1 special rows stay on the GPU.
#include "long/cuda_long_runner.hpp"

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "common/stream_pool.hpp"
#include "long/long_launch.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <thread>

namespace alignscope::kernels {

namespace {

using longpair::Edge;
using longpair::edge_value;
using longpair::left_e_value;
using longpair::left_f_value;
using longpair::left_value;
using longpair::top_f_value;
using longpair::top_value;
using longpair::GoalHit;
using longpair::PassTask;
using longpair::Score;
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
// its mode and gap model) or the older "r8"/"r16"; 0 when none is forced.
int forced_strip_rows(const std::string& kernel) {
    if (kernel.empty()) return 0;
    if (kernel == "r8") return 8;
    if (kernel == "r16") return 16;
    const std::optional<KernelName> name = KernelName::try_parse(kernel);
    if (name && name->family == "strips" && (name->group == 8 || name->group == 16) &&
        name->width == KernelWidth::S32)
        return name->group;
    throw Error::about("kernel", "'" + kernel + "' is not a GPU long-pair kernel (strips8 or strips16 with 32-bit "
                                 "cells, e.g. sw_affine_strips16_s32)");
}

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
        if (m >= (1ll << 30) - 64 || n >= (1ll << 30) - 64)
            throw Error("a sequence of " + std::to_string(std::max(m, n)) +
                        " residues is longer than the GPU long-pair kernel's limit of 2^30 - 64");
        scheme_ = scheme;
        m_ = m;
        n_ = n;
        alphabet_ = scheme.matrix.size();
        std::vector<std::int8_t> scores(static_cast<std::size_t>(alphabet_ * alphabet_));
        for (int a = 0; a < alphabet_; ++a)
            for (int b = 0; b < alphabet_; ++b) {
                const int v = scheme.matrix.score(a, b);
                if (v < -127 || v > 127)
                    throw Error("substitution score " + std::to_string(v) +
                                " is outside -127..127, which the GPU long-pair kernel holds in bytes; use --device cpu");
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
        check_cuda(cudaMemcpy(profile_.data(), scores.data(), scores.size(), cudaMemcpyHostToDevice), "cudaMemcpy", site_);
        control_.reserve(4, site_);  // ticket, abort
        saved_rows_.clear();
        special_cols_ = 0;
        kernel_name_.clear();
        cudaDeviceProp prop{};
        check_cuda(cudaGetDeviceProperties(&prop, device_index_), "cudaGetDeviceProperties", site_);
        sm_count_ = prop.multiProcessorCount;
        int per_sm = 0;
        check_cuda(longpass::prepare_kernel(16, false, false, false, alphabet_, &per_sm), "cudaFuncSetAttribute", site_);
        resident_warps_ = sm_count_ * per_sm * (longpass::block_threads() / 32);
        int per_sm_slice = 0;  // the column-slice kernels run fewer blocks per SM
        check_cuda(longpass::prepare_kernel(16, false, false, true, alphabet_, &per_sm_slice), "cudaFuncSetAttribute", site_);
        resident_slice_warps_ = std::max(1, sm_count_ * per_sm_slice * (longpass::block_threads() / 32));
    }

    // Every strip of a stage-2 band must run at once (R = 16), with a margin.
    std::int64_t max_band_rows() const override {
        return static_cast<std::int64_t>(resident_warps_) * longpass::strip_rows(16) * 9 / 10;
    }
    // A slice pass (the kernels with an explicit left edge) with a strip for
    // every resident warp keeps the GPU busy; more strips run in waves.
    std::int64_t busy_rows() const override {
        return static_cast<std::int64_t>(resident_slice_warps_) * longpass::strip_rows(16);
    }
    // Special rows are bottoms of strips of 256 or 512 rows.
    std::int64_t special_row_granularity() const override { return longpass::strip_rows(16); }

    void run(std::vector<PassTask>& tasks, const JobContext& context, const longpair::PassProgress& progress) override {
        check_cuda(cudaSetDevice(device_index_), "cudaSetDevice", site_);
        // Batches whose buses fit the memory budget (a level of many tasks).
        const std::uint64_t budget = settings_.gpu_memory_budget ? settings_.gpu_memory_budget / 4 : (1ull << 30);
        std::size_t first = 0;
        while (first < tasks.size()) {
            std::size_t last = first;
            std::uint64_t bytes = 0;
            do {
                bytes += static_cast<std::uint64_t>(tasks[last].cols() + 1) * 8 +
                         static_cast<std::uint64_t>(tasks[last].rows() + 1) * 4;
                ++last;
            } while (last < tasks.size() && bytes < budget);
            run_batch(tasks, first, last, context, progress);
            first = last;
        }
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

    std::string device() const override { return info_.id; }
    std::string kernel() const override { return kernel_name_.empty() ? "long_strips" : kernel_name_; }
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
        const std::size_t offset = static_cast<std::size_t>(t.crossing_row) * static_cast<std::size_t>(special_cols_ + 1) +
                                   static_cast<std::size_t>(c);
        check_cuda(cudaMemcpy(&hf[0], special_h_.data() + offset, 4, cudaMemcpyDeviceToHost), "cudaMemcpy", site_);
        check_cuda(cudaMemcpy(&hf[1], special_f_.data() + offset, 4, cudaMemcpyDeviceToHost), "cudaMemcpy", site_);
        return {hf[0], hf[1]};
    }

    void run_batch(std::vector<PassTask>& tasks, std::size_t first, std::size_t last, const JobContext& context,
                   const longpair::PassProgress& progress) {
        const I64 open = scheme_.gap_open, extend = scheme_.gap_extend;
        bool local = false;
        I64 total_rows = 0;
        for (std::size_t x = first; x < last; ++x) {
            local = local || tasks[x].local;
            total_rows += tasks[x].rows();
        }
        for (std::size_t x = first; x < last; ++x)
            if (tasks[x].local != local) throw Error("internal error: local and non-local long-pair passes in one launch");
        // Rows per lane: 16 when there are strips enough to fill the GPU, else 8.
        bool overview = false, goal_batch = false, slice = false;
        for (std::size_t x = first; x < last; ++x) {
            overview = overview || (tasks[x].overview_rows > 0 && tasks[x].overview_cols > 0);
            goal_batch = goal_batch || tasks[x].goal_search;
            slice = slice || tasks[x].left == Edge::Explicit || (tasks[x].want_last_column && tasks[x].want_last_column_state);
        }
        const int resident_guess = slice ? resident_slice_warps_ : sm_count_ * 16;
        const int R = overview ? 16
                      : forced_rows_ ? forced_rows_
                      : (total_rows / longpass::strip_rows(16) >= resident_guess ||
                         (goal_batch && total_rows / longpass::strip_rows(8) > resident_warps_))
                            ? 16
                            : 8;
        const I64 SH = longpass::strip_rows(R);

        // Lay out the tasks and their buffers.
        std::vector<longpass::LongTask> dev(last - first);
        std::size_t bus_words = 0, col_words = 0, hits = 0;
        int tickets = 0;
        std::vector<std::size_t> bus_at(last - first), col_at(last - first), hit_at(last - first), goal_at(last - first),
            left_at(last - first);
        std::size_t left_words = 0;
        std::size_t goal_words = 0;
        bool uploads = false;  // host rows copied to the GPU (explicit top or crossing rows)
        std::vector<char> skip(last - first, 0);
        for (std::size_t x = first; x < last; ++x) {
            PassTask& t = tasks[x];
            const std::size_t k = x - first;
            t.best = {};
            t.hit = {};
            t.cells = 0;
            const I64 h = t.rows(), w = t.cols();
            if (h < 1 || w < 0 || t.row_end > m_ || t.col_end > n_ || t.row_begin < 0 || t.col_begin < 0)
                throw Error("internal error: long-pair pass outside the matrix");
            longpair::check_explicit_edges(t);
            if (t.goal_search && t.crossing_row == longpair::kExplicitRow &&
                (t.crossing_h.size() < static_cast<std::size_t>(t.col_end + 1) || t.crossing_f.size() != t.crossing_h.size()))
                throw Error("internal error: long-pair goal search with a short explicit crossing row");
            if (t.on_rows_done && last - first != 1)
                throw Error("internal error: a checkpointed long-pair pass shares its launch");
            // A goal search may be settled at column 0 (a vertical path from the anchor).
            if (t.goal_search) {
                const I64 c = t.col_end;
                const auto fwd = forward_at(t, c);
                const I64 h0 = left_value(t, h, open, extend);
                const I64 f0 = left_f_value(t, h, open, extend);
                GoalHit::Kind kind;
                bool match = true;
                if (fwd.first > longpair::kNegInf / 2 && fwd.first + h0 == t.goal) kind = GoalHit::Kind::CrossH;
                else if (fwd.second > longpair::kNegInf / 2 && f0 > longpair::kNegInf / 2 && fwd.second + f0 + open - extend == t.goal)
                    kind = GoalHit::Kind::CrossF;
                else match = false;
                if (match) {
                    t.hit = {true, kind, h, 0, static_cast<Score>(fwd.first), static_cast<Score>(fwd.second)};
                    skip[k] = 1;
                }
            }
            if (w == 0) skip[k] = 1;
            bus_at[k] = bus_words;
            bus_words += static_cast<std::size_t>(w + 1) * 2;
            col_at[k] = col_words;
            if (t.want_last_column) col_words += 2 * static_cast<std::size_t>(h + 1);  // H, then E (slice kernels)
            left_at[k] = left_words;
            if (t.left == Edge::Explicit) left_words += 3 * static_cast<std::size_t>(h + 1);
            hit_at[k] = hits;
            if (t.goal_search) ++hits;
            goal_at[k] = goal_words;
            if (t.goal_search && t.crossing_row == longpair::kExplicitRow) goal_words += 2 * t.crossing_h.size();
            longpass::LongTask& d = dev[k];
            d = {};
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
            d.strips = skip[k] ? 0 : static_cast<std::int32_t>((h + SH - 1) / SH);
            tickets += d.strips;
        }
        // Tasks without strips are dropped from the device list (the search needs
        // first_ticket to rise strictly).
        std::vector<longpass::LongTask> launch_tasks;
        hits_.reserve(std::max<std::size_t>(hits, 1), site_);
        // cudaMemset may return before it is done, and the kernels run on
        // non-blocking streams that do not wait for the default stream.
        check_cuda(cudaMemset(hits_.data(), 0xff, hits_.capacity() * sizeof(unsigned long long)), "cudaMemset", site_);
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site_);
        bus_.reserve(std::max<std::size_t>(bus_words, 1), site_);
        last_col_.reserve(std::max<std::size_t>(col_words, 1), site_);
        left_.reserve(std::max<std::size_t>(left_words, 1), site_);
        goal_rows_.reserve(std::max<std::size_t>(goal_words, 1), site_);
        progress_.reserve(static_cast<std::size_t>(std::max(tickets, 1)), site_);
        best_.reserve(static_cast<std::size_t>(std::max(tickets, 1)), site_);
        for (std::size_t x = first; x < last; ++x) {
            PassTask& t = tasks[x];
            const std::size_t k = x - first;
            longpass::LongTask& d = dev[k];
            const I64 w = t.cols();
            d.bus_h = bus_.data() + bus_at[k];
            d.bus_f = d.bus_h + (w + 1);
            d.last_col = t.want_last_column ? last_col_.data() + col_at[k] : nullptr;  // H, then E
            if (t.left == Edge::Explicit && d.strips > 0) {  // column 0 (H, E, F); H[0] is the corner
                std::int32_t* col = left_.data() + left_at[k];
                const auto words = static_cast<std::size_t>(t.rows() + 1);
                std::vector<std::int32_t> h0 = t.left_h;
                h0[0] = static_cast<Score>(std::max<I64>(top_value(t, 0, open, extend), longpair::kNegInf));
                check_cuda(cudaMemcpy(col, h0.data(), words * sizeof(Score), cudaMemcpyHostToDevice), "cudaMemcpy", site_);
                check_cuda(cudaMemcpy(col + words, t.left_e.data(), words * sizeof(Score), cudaMemcpyHostToDevice),
                           "cudaMemcpy", site_);
                check_cuda(cudaMemcpy(col + 2 * words, t.left_f.data(), words * sizeof(Score), cudaMemcpyHostToDevice),
                           "cudaMemcpy", site_);
                d.left_h = col;
                d.left_e = col + words;
                d.left_f = col + 2 * words;
                uploads = true;
            }
            d.hit = t.goal_search ? hits_.data() + hit_at[k] : nullptr;
            if (t.top == Edge::Explicit && d.strips > 0) {  // row 0 waits in the bus for strip 0
                check_cuda(cudaMemcpy(d.bus_h, t.top_h.data(), t.top_h.size() * sizeof(Score), cudaMemcpyHostToDevice),
                           "cudaMemcpy", site_);
                check_cuda(cudaMemcpy(d.bus_f, t.top_f.data(), t.top_f.size() * sizeof(Score), cudaMemcpyHostToDevice),
                           "cudaMemcpy", site_);
                uploads = true;
            }
            if (t.goal_search && t.crossing_row == longpair::kExplicitRow) {
                std::int32_t* row = goal_rows_.data() + goal_at[k];
                const std::size_t words = t.crossing_h.size();
                check_cuda(cudaMemcpy(row, t.crossing_h.data(), words * sizeof(Score), cudaMemcpyHostToDevice), "cudaMemcpy", site_);
                check_cuda(cudaMemcpy(row + words, t.crossing_f.data(), words * sizeof(Score), cudaMemcpyHostToDevice),
                           "cudaMemcpy", site_);
                d.goal_h = row;
                d.goal_f = row + words;
                uploads = true;
            } else if (t.goal_search && t.crossing_row >= 0) {
                if (static_cast<std::size_t>(t.crossing_row) >= saved_rows_.size())
                    throw Error("internal error: long-pair goal search names an unknown special row");
                if (special_col_begin_ != 0 || special_cols_ < t.col_end)
                    throw Error("internal error: long-pair goal search on special rows of a column slice");
                d.goal_h = special_h_.data() + static_cast<std::size_t>(t.crossing_row) * static_cast<std::size_t>(special_cols_ + 1);
                d.goal_f = special_f_.data() + static_cast<std::size_t>(t.crossing_row) * static_cast<std::size_t>(special_cols_ + 1);
            }
            if (t.special_every > 0) {
                if (t.reversed) throw Error("internal error: special rows from a reversed pass");
                const I64 every = std::max<I64>(1, (t.special_every + SH - 1) / SH);
                saved_rows_.clear();
                for (I64 s = every - 1; (s + 1) * SH < t.rows(); s += every) saved_rows_.push_back(t.row_begin + (s + 1) * SH);
                special_cols_ = w;
                special_col_begin_ = t.col_begin;
                const std::size_t words = std::max<std::size_t>(saved_rows_.size(), 1) * static_cast<std::size_t>(w + 1);
                special_h_.reserve(words, site_);
                special_f_.reserve(words, site_);
                d.special_h = special_h_.data();
                d.special_f = special_f_.data();
                d.special_every = static_cast<std::int32_t>(every);
            }
            if (t.overview_rows > 0 && t.overview_cols > 0 && d.strips > 0) {
                // Columns binned as in the pass this one is a slice of, when it is one.
                d.ov_total = t.overview_col_total > 0 ? t.overview_col_total : w;
                d.ov_offset = t.overview_col_total > 0 ? t.overview_col_offset : 0;
                if (d.ov_offset < 0 || d.ov_offset + w > d.ov_total)
                    throw Error("internal error: a long-pair overview slice outside its pass");
                d.ov_rows = std::min<std::int32_t>(t.overview_rows, d.strips);
                d.ov_cols = static_cast<std::int32_t>(std::min<I64>(t.overview_cols, d.ov_total));
                const std::vector<std::int32_t> empty(static_cast<std::size_t>(d.ov_rows) * static_cast<std::size_t>(d.ov_cols),
                                                      longpass::kNeg);
                overview_.reserve(empty.size(), site_);
                check_cuda(cudaMemcpy(overview_.data(), empty.data(), empty.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice),
                           "cudaMemcpy", site_);
                d.overview = overview_.data();
            }
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
            rw.SH = SH;
            watch = [this, &rw](const int* snapshot) { poll_rows(rw, snapshot); };
        }

        if (tickets > 0) launch(launch_tasks, tickets, R, local, overview, slice, cells_total, context, progress, watch);

        // Results.
        std::vector<std::int32_t> bus_host, col_host;
        std::vector<unsigned long long> hit_host(hits);
        std::vector<longpass::StripBest> best_host;
        bool any_row = false, any_best = false;
        for (std::size_t x = first; x < last; ++x) {
            any_row = any_row || tasks[x].want_last_row;
            any_best = any_best || tasks[x].track_best;
        }
        if (any_row && bus_words) {
            bus_host.resize(bus_words);
            copy_back(bus_host.data(), bus_.data(), bus_words);
        }
        if (col_words) {
            col_host.resize(col_words);
            copy_back(col_host.data(), last_col_.data(), col_words);
        }
        if (hits) copy_back(hit_host.data(), hits_.data(), hits);
        if (any_best && tickets) {
            best_host.resize(static_cast<std::size_t>(tickets));
            copy_back(best_host.data(), best_.data(), best_host.size());
        }
        for (std::size_t x = first; x < last; ++x) {
            PassTask& t = tasks[x];
            const std::size_t k = x - first;
            const longpass::LongTask& d = dev[k];
            const I64 h = t.rows(), w = t.cols();
            const I64 left0 = left_value(t, h, open, extend);
            const I64 left0_f = left_f_value(t, h, open, extend);
            if (t.want_last_row) {
                t.last_h.assign(static_cast<std::size_t>(w + 1), longpair::kNegInf);
                t.last_f.assign(static_cast<std::size_t>(w + 1), longpair::kNegInf);
                if (d.strips > 0) {
                    std::copy_n(bus_host.begin() + static_cast<std::ptrdiff_t>(bus_at[k]), w + 1, t.last_h.begin());
                    std::copy_n(bus_host.begin() + static_cast<std::ptrdiff_t>(bus_at[k] + static_cast<std::size_t>(w + 1)),
                                w + 1, t.last_f.begin());
                }
                t.last_h[0] = static_cast<Score>(std::max<I64>(left0, longpair::kNegInf));
                t.last_f[0] = static_cast<Score>(std::max<I64>(left0_f, longpair::kNegInf));
            }
            if (t.want_last_column) {
                auto clamp = [](I64 v) { return static_cast<Score>(std::max<I64>(v, longpair::kNegInf)); };
                const auto H = static_cast<std::size_t>(h + 1);
                t.last_col_h.assign(H, longpair::kNegInf);
                t.last_col_e.assign(H, longpair::kNegInf);  // (filled by the slice kernels)
                t.last_col_f.assign(H, longpair::kNegInf);
                if (d.strips > 0) {
                    const auto at = static_cast<std::ptrdiff_t>(col_at[k]);
                    for (std::size_t i = 1; i < H; ++i) {
                        t.last_col_h[i] = clamp(col_host[static_cast<std::size_t>(at) + i]);
                        t.last_col_e[i] = clamp(col_host[static_cast<std::size_t>(at) + H + i]);
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
                        t.last_col_f[i] = clamp(std::max<I64>(I64{t.last_col_f[i - 1]} - extend, I64{t.last_col_h[i - 1]} - open));
                } else {
                    t.last_col_f[0] = clamp(top_f_value(t, w));
                    for (I64 i = 1; i <= h; ++i) t.last_col_f[static_cast<std::size_t>(i)] = clamp(left_f_value(t, i, open, extend));
                }
            } else {
                t.last_col_e.clear();
                t.last_col_f.clear();
            }
            t.overview.clear();
            t.overview_row_edges.clear();
            if (d.overview) {
                t.overview.resize(static_cast<std::size_t>(d.ov_rows) * static_cast<std::size_t>(d.ov_cols));
                copy_back(t.overview.data(), overview_.data(), t.overview.size());
                for (I64 b = 0; b < d.ov_rows; ++b) {
                    const I64 first_strip = (b * d.strips + d.ov_rows - 1) / d.ov_rows;  // smallest s with s*rows/strips >= b
                    t.overview_row_edges.push_back(first_strip * SH + 1);
                }
            }
            if (t.track_best) {
                t.best = {};
                for (int s = 0; s < d.strips; ++s) {
                    const longpass::StripBest& b = best_host[static_cast<std::size_t>(d.first_ticket + s)];
                    if (b.score > t.best.score ||
                        (b.score == t.best.score && (b.j < t.best.j || (b.j == t.best.j && b.i < t.best.i))))
                        t.best = {b.score, b.i, b.j};
                }
            }
            if (t.goal_search && !t.hit.found) {
                const unsigned long long key = hit_host[hit_at[k]];
                if (key != ~0ull) {
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
            }
            // Cells: a stopped search did about as many columns as its hit's.
            const I64 done_cols = (t.goal_search && t.hit.found) ? std::min<I64>(w, t.hit.j + 64) : w;
            t.cells = static_cast<std::uint64_t>(h) * static_cast<std::uint64_t>(done_cols);
        }
    }

    template <typename T>
    void copy_back(T* host, const T* device, std::size_t count) {
        if (side_) {  // during a launch: beside the running kernels
            check_cuda(cudaMemcpyAsync(host, device, count * sizeof(T), cudaMemcpyDeviceToHost, side_), "cudaMemcpyAsync", site_);
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
        int complete = 0;           // strips 0..complete-1 have written everything
        std::size_t reported = 0;   // special rows handed over
        int best_strips = 0;        // strips merged into best
        longpair::BestCell best, last_column;
        I64 last_col_rows = 0;      // rows of the last column merged into last_column
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
            w.overview_row_edges.clear();
            for (I64 b = 0; b < d.ov_rows; ++b)
                w.overview_row_edges.push_back((b * d.strips + d.ov_rows - 1) / d.ov_rows * w.SH + 1);
            done.overview = &w.overview;
            done.overview_row_edges = &w.overview_row_edges;
        }
        w.reported = count;
        w.task->on_rows_done(done);
    }

    void launch(const std::vector<longpass::LongTask>& tasks, int tickets, int R, bool local, bool overview, bool slice,
                std::uint64_t cells_total, const JobContext& context, const longpair::PassProgress& progress,
                const std::function<void(const int*)>& watch) {
        int per_sm = 0;
        check_cuda(longpass::prepare_kernel(R, local, overview, slice, alphabet_, &per_sm), "cudaFuncSetAttribute", site_);
        if (per_sm < 1)
            throw Error("the long-pair kernel does not fit on " + info_.id + " with an alphabet of " +
                        std::to_string(alphabet_) + " letters");
        const int warps_per_block = longpass::block_threads() / 32;
        const int resident = sm_count_ * per_sm;
        const int blocks_needed = (tickets + warps_per_block - 1) / warps_per_block;
        int blocks = std::min(resident, blocks_needed);
        // A goal search must have all its strips resident at once (it stops early
        // only then), so it always runs as one persistent kernel.
        bool goal = false;
        for (const longpass::LongTask& t : tasks) goal = goal || t.goal_search;
        const bool streams_strategy = settings_.strategy == "streams" && !goal;
        const int kernels = streams_strategy ? std::max(1, settings_.kernels > 0 ? settings_.kernels : 4) : 1;
        const int stream_count = streams_strategy ? std::max(1, settings_.streams > 0 ? settings_.streams : kernels) : 1;
        blocks = std::max(blocks, kernels);
        kernel_name_ = "long_strips_r" + std::to_string(R) + (local ? "_local" : "") +
                       (streams_strategy ? "_k" + std::to_string(kernels) + "s" + std::to_string(stream_count) : "");

        task_buf_.reserve(tasks.size(), site_);
        StreamPool pool(stream_count + 1, site_);  // the last stream polls and cancels
        cudaStream_t side = pool[stream_count];
        struct SideStream {  // copy_back goes through it while the kernels run
            cudaStream_t& slot;
            ~SideStream() { slot = nullptr; }
        } side_guard{side_};
        GpuTimeline timeline(context.timeline, info_.id, site_);
        check_cuda(cudaMemcpyAsync(task_buf_.data(), tasks.data(), tasks.size() * sizeof(longpass::LongTask),
                                   cudaMemcpyHostToDevice, pool[0]),
                   "cudaMemcpyAsync", site_);
        check_cuda(cudaMemsetAsync(control_.data(), 0, 4 * sizeof(int), pool[0]), "cudaMemsetAsync", site_);
        check_cuda(cudaMemsetAsync(progress_.data(), 0, static_cast<std::size_t>(tickets) * sizeof(int), pool[0]),
                   "cudaMemsetAsync", site_);
        cudaEvent_t ready = nullptr;
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

        std::vector<cudaEvent_t> done(static_cast<std::size_t>(kernels), nullptr);
        const std::uint64_t cells_per_kernel = cells_total / static_cast<std::uint64_t>(kernels);
        for (int kx = 0; kx < kernels; ++kx) {
            cudaStream_t stream = pool[kx % stream_count];
            check_cuda(cudaStreamWaitEvent(stream, ready, 0), "cudaStreamWaitEvent", site_);
            const int b = blocks / kernels + (kx < blocks % kernels ? 1 : 0);
            timeline.record(stream, {kernel_name_, "kernel", kx % stream_count, 0, cells_per_kernel}, [&] {
                check_cuda(longpass::launch_strip_kernel(R, local, overview, slice, params, std::max(b, 1), stream), "strip_kernel launch",
                           site_);
            });
            check_cuda(cudaEventCreateWithFlags(&done[static_cast<std::size_t>(kx)], cudaEventDisableTiming),
                       "cudaEventCreate", site_);
            check_cuda(cudaEventRecord(done[static_cast<std::size_t>(kx)], stream), "cudaEventRecord", site_);
        }

        // Wait, reporting progress and watching for cancellation.
        PinnedBuffer<int> snapshot;
        const bool report = static_cast<bool>(progress) && tasks.size() == 1;
        if (report || watch) snapshot.reserve(static_cast<std::size_t>(tickets), site_);
        std::exception_ptr watch_failure;  // a checkpoint that could not be written: stop the kernels, then throw
        auto take_snapshot = [&] {
            check_cuda(cudaMemcpyAsync(snapshot.data(), progress_.data(), static_cast<std::size_t>(tickets) * sizeof(int),
                                       cudaMemcpyDeviceToHost, side),
                       "cudaMemcpyAsync", site_);
            check_cuda(cudaStreamSynchronize(side), "cudaStreamSynchronize", site_);
        };
        auto run_watch = [&] {
            if (!watch || watch_failure) return;
            side_ = side;
            try {
                watch(snapshot.data());
            } catch (...) {
                watch_failure = std::current_exception();
            }
        };
        const I64 SH = longpass::strip_rows(R);
        bool cancelled = false;
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
            if (!cancelled && (context.cancelled() || watch_failure)) {
                static const int one = 1;
                check_cuda(cudaMemcpyAsync(control_.data() + 1, &one, sizeof(int), cudaMemcpyHostToDevice, side),
                           "cudaMemcpyAsync", site_);
                cancelled = true;
            }
            const auto now = std::chrono::steady_clock::now();
            if ((report || watch) && !cancelled && now - last_report > std::chrono::milliseconds(100)) {
                last_report = now;
                take_snapshot();
                run_watch();
                if (!report) continue;
                const longpass::LongTask& t = tasks[0];
                std::uint64_t cells = 0;
                for (int s = 0; s < tickets; ++s) {
                    const I64 cols = std::min<I64>(std::max(snapshot[static_cast<std::size_t>(s)], 0), t.n);
                    const I64 rows = std::min<I64>(SH, t.m - s * SH);
                    cells += static_cast<std::uint64_t>(cols) * static_cast<std::uint64_t>(rows);
                }
                progress(cells, cells_total);
            }
        }
        for (cudaEvent_t e : done) cudaEventDestroy(e);
        cudaEventDestroy(ready);
        check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", site_);
        timeline.flush();
        if (watch_failure) std::rethrow_exception(watch_failure);
        if (cancelled) throw Cancelled();
        if (watch) {  // the special rows finished since the last poll
            take_snapshot();
            run_watch();
            if (watch_failure) std::rethrow_exception(watch_failure);
        }
        if (progress) progress(cells_total, cells_total);
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
