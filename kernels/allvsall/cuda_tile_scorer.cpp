// The GPU scorer of all-against-all tiles (allvsall_scorer.hpp).
//
// Made once per job: every sequence is encoded once; the columns go to the
// GPU as one residue array in tiling order (longest first, each padded to 4);
// the rows are paired (two rows of similar length per 16-bit lane pair, see
// tile_items.hpp), each pair gets the tile shape that wastes the fewest
// cells, and its query profile (the database scanner's layout, s + open per
// letter and row) is built on the host threads and uploaded once.
// Per tile: only a list of work items (profile, first column) goes to the GPU;
// one launch per shape on the slot's stream, the 16-bit results come back,
// and take() puts them into the tile's pair order. Two slots alternate, so
// one tile's kernels run while the host maps the previous tile and its last
// items overlap the next tile's first. Scores the lengths cannot prove exact
// (global, semi-global: db_scan_bounds.hpp) or that reach the saturation bound
// (local) are rescored on the pairwise backend, which recomputes at 32 bits.
#include <alignscope/kernels/allvsall_scorer.hpp>

#include "allvsall/allvsall_launch.hpp"
#include "allvsall/tile_items.hpp"
#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "common/host_parallel.hpp"
#include "pairwise/cuda_pair_backend.hpp"
#include "search/db_scan_bounds.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>

namespace alignscope::kernels {
namespace {

using allvsall_gpu::Item;
using allvsall_gpu::ProfileIndex;
using allvsall_gpu::ScanParams;
using allvsall_gpu::TileOrder;
using allvsall_gpu::TileSpan;
using search::DbScanShape;

std::uint64_t round4(std::uint64_t v) { return (v + 3) & ~std::uint64_t{3}; }

// Issue slots per column for a profile of `rows` rows on `shape`: padded rows
// x (per-row work + per-step overhead / R) x the wavefront's ramp, and a
// charge per extra tile (the strip's traffic, a block barrier). The database
// scanner's model, which its measurements set.
double shape_cost(const DbScanShape& shape, int rows, double mean_length) {
    const int tile = shape.tile_rows();
    const int tiles = (rows + tile - 1) / tile;
    const double padded = static_cast<double>(tiles) * tile;
    const double per_row = 5.5 + 24.0 / shape.rows;
    const double ramp = 1.0 + (shape.threads + 5.0) / std::max(8.0, mean_length);
    return padded * per_row * ramp * (1.0 + 0.02 * (tiles - 1));
}

bool symmetric(const SubstitutionMatrix& m) {
    for (int a = 0; a < m.size(); ++a)
        for (int b = 0; b < a; ++b)
            if (m.score(a, b) != m.score(b, a)) return false;
    return true;
}

class CudaTileScorer final : public allvsall::TileScorer {
public:
    CudaTileScorer(const allvsall::Problem& problem, Backend& backend, int device, DeviceInfo info, JobContext& context)
        : problem_(problem),
          backend_(backend),
          device_(device),
          info_(std::move(info)),
          site_{info_.id + " (" + info_.name + ")", "all-against-all scores"},
          timeline_(context.timeline, info_.id, site_) {}

    ~CudaTileScorer() override {
        (void)cudaSetDevice(device_);
        for (auto& s : slots_) {
            if (s.stream) {
                (void)cudaStreamSynchronize(s.stream);
                (void)cudaStreamDestroy(s.stream);
            }
            if (s.done) (void)cudaEventDestroy(s.done);
        }
    }

    // Encodes the set, builds the profiles and uploads both. False (with the
    // reason) when they would not fit the memory budget.
    bool load(std::string* why_not);

    std::size_t depth() const override { return slots_.size(); }
    void submit(std::uint64_t tile, JobContext& context) override;
    std::vector<std::int32_t> take(JobContext& context) override;
    void abandon() override {
        for (auto& s : slots_) {
            (void)cudaStreamSynchronize(s.stream);
            s.busy = false;
        }
        queue_.clear();
    }
    std::string describe() const override { return info_.id + ", " + kernel_name_; }

private:
    struct Launch {
        std::size_t shape = 0;  // index into shapes_
        std::size_t item_first = 0, item_count = 0, out_first = 0;
    };
    struct Slot {
        cudaStream_t stream = nullptr;
        cudaEvent_t done = nullptr;
        PinnedBuffer<int2> items;
        PinnedBuffer<std::uint32_t> out;
        DeviceBuffer<int2> device_items;
        DeviceBuffer<std::uint32_t> device_out;
        DeviceBuffer<unsigned int> counters;
        DeviceBuffer<uint2> scratch;
        std::vector<Launch> launches;
        std::uint64_t tile = 0;
        TileSpan span;
        bool busy = false;
    };

    // The set encoded for the matrix: rows, and the columns of a rectangle.
    struct Codes {
        std::vector<EncodedSequence> rows, columns;
        const std::vector<EncodedSequence>& of_columns() const { return columns.empty() ? rows : columns; }
    };
    struct ColumnStats {
        double mean_length = 0;
        int longest = 0;
        std::uint64_t residue_bytes = 16;  // padded residues, and a margin
    };
    // Per profile: its first word, its tiles, and its two rows' lengths (0: none).
    struct ProfilePlan {
        std::vector<std::uint64_t> offsets;
        std::vector<std::int32_t> tiles, lanes;
        std::uint64_t words = 0;
    };
    static constexpr int kSlots = 2;  // tiles in flight

    void take_scheme();
    Codes encode_sets() const;
    ColumnStats measure(const Codes& codes);
    bool choose_shapes(std::string* why_not);
    ProfilePlan plan_profiles(double mean_length);
    bool fits(const ProfilePlan& plan, const ColumnStats& columns, std::string* why_not);
    std::vector<std::uint32_t> fill_profiles(const Codes& codes, const ProfilePlan& plan) const;
    void upload(const Codes& codes, const ProfilePlan& plan, const ColumnStats& columns);

    bool local() const { return problem_.options.mode == AlignmentMode::Local; }
    TileSpan span_of(std::uint64_t tile) const;
    void map_results(const Slot& slot, std::vector<std::int32_t>& scores, std::vector<std::uint64_t>& rescore) const;
    bool exact(std::uint32_t row, std::uint32_t column, std::int32_t score) const;

    const allvsall::Problem& problem_;
    Backend& backend_;
    int device_;
    DeviceInfo info_;
    CudaSite site_;
    GpuTimeline timeline_;
    std::string kernel_name_;
    int letters_ = 0, open_ = 0, extend_ = 0, max_score_ = 0, min_score_ = 0, free_ends_ = 0, sm_count_ = 1;
    int saturation_bound_ = 32767;
    ProfileIndex profiles_;
    std::vector<std::size_t> profile_shape_;  // per profile: index into shapes_
    std::vector<DbScanShape> shapes_;
    std::vector<int> blocks_per_sm_;                    // per shape
    std::vector<int> row_length_, column_length_;       // by position
    std::vector<std::int64_t> row_best_, column_best_;  // by position: sums of each residue's best score
    DeviceBuffer<std::uint8_t> residues_;
    DeviceBuffer<std::uint64_t> starts_;
    DeviceBuffer<std::int32_t> lengths_;
    DeviceBuffer<std::uint32_t> profile_words_;
    DeviceBuffer<std::uint64_t> profile_offsets_;
    DeviceBuffer<std::int32_t> profile_tiles_, profile_lengths_;
    int scratch_columns_ = 0;
    std::uint64_t scratch_strips_ = 0;
    std::vector<Slot> slots_;
    std::deque<std::size_t> queue_;  // slots in flight, oldest first
    std::size_t next_slot_ = 0;
};

bool CudaTileScorer::load(std::string* why_not) {
    ALIGNSCOPE_CUDA(cudaSetDevice(device_), site_);
    take_scheme();
    const Codes codes = encode_sets();
    const ColumnStats columns = measure(codes);
    if (!choose_shapes(why_not)) return false;
    const ProfilePlan plan = plan_profiles(columns.mean_length);
    if (!fits(plan, columns, why_not)) return false;
    upload(codes, plan, columns);
    return true;
}

void CudaTileScorer::take_scheme() {
    const ScoringScheme& scheme = problem_.scheme;
    const SubstitutionMatrix& matrix = scheme.matrix;
    letters_ = matrix.size() + 1;
    open_ = scheme.gap_open;
    extend_ = scheme.gap_extend;
    max_score_ = std::max(0, matrix.max_score());
    min_score_ = matrix.min_score();
    saturation_bound_ = 32767 - max_score_ - (local() ? open_ : 0);
    const AlignOptions& options = problem_.options;
    if (options.mode == AlignmentMode::SemiGlobal) {
        const FreeEndGaps& f = options.free_ends;
        free_ends_ = (f.query_begin ? search::kFreeQueryBegin : 0) | (f.query_end ? search::kFreeQueryEnd : 0) |
                     (f.target_begin ? search::kFreeTargetBegin : 0) | (f.target_end ? search::kFreeTargetEnd : 0);
    }
    const char* prefix = local() ? "sw" : options.mode == AlignmentMode::Global ? "nw" : "sg";
    kernel_name_ = allvsall_gpu::scan_kernel_name(scheme.linear(), prefix);
    cudaDeviceProp props{};
    ALIGNSCOPE_CUDA(cudaGetDeviceProperties(&props, device_), site_);
    sm_count_ = props.multiProcessorCount;
}

CudaTileScorer::Codes CudaTileScorer::encode_sets() const {
    // Each sequence encoded once (the triangle's rows are its columns).
    const SubstitutionMatrix& matrix = problem_.scheme.matrix;
    auto encode_all = [&](const std::vector<Sequence>& set, const char* role) {
        std::vector<EncodedSequence> out(set.size());
        parallel_chunks(
            set.size(), problem_.threads,
            [&](std::size_t from, std::size_t to) {
                for (std::size_t k = from; k < to; ++k)
                    out[k] = encode(set[k].residues, matrix, std::string(role) + " '" + set[k].id + "'");
            },
            64);
        return out;
    };
    Codes codes;
    codes.rows = encode_all(*problem_.rows, "sequence");
    if (!problem_.triangle()) codes.columns = encode_all(*problem_.columns, "--against sequence");
    return codes;
}

// Lengths and sums of each residue's best score, by position (the saturation
// rule's bounds), and what the columns need on the device.
CudaTileScorer::ColumnStats CudaTileScorer::measure(const Codes& codes) {
    const SubstitutionMatrix& matrix = problem_.scheme.matrix;
    const std::vector<std::uint32_t>& row_order = problem_.tiling.row_order();
    const std::vector<std::uint32_t>& column_order = problem_.tiling.column_order();
    std::vector<int> best_as_query(static_cast<std::size_t>(matrix.size()), 0);
    std::vector<int> best_as_target(static_cast<std::size_t>(matrix.size()), 0);
    for (int a = 0; a < matrix.size(); ++a)
        for (int b = 0; b < matrix.size(); ++b) {
            best_as_query[static_cast<std::size_t>(a)] =
                std::max(best_as_query[static_cast<std::size_t>(a)], matrix.score(a, b));
            best_as_target[static_cast<std::size_t>(b)] =
                std::max(best_as_target[static_cast<std::size_t>(b)], matrix.score(a, b));
        }
    auto best_sum = [](const EncodedSequence& s, const std::vector<int>& best) {
        std::int64_t sum = 0;
        for (std::uint8_t c : s) sum += best[c];
        return sum;
    };
    row_length_.resize(row_order.size());
    row_best_.resize(row_order.size());
    for (std::size_t p = 0; p < row_order.size(); ++p) {
        row_length_[p] = static_cast<int>(codes.rows[row_order[p]].size());
        row_best_[p] = best_sum(codes.rows[row_order[p]], best_as_query);
    }
    column_length_.resize(column_order.size());
    column_best_.resize(column_order.size());
    ColumnStats stats;
    for (std::size_t q = 0; q < column_order.size(); ++q) {
        const EncodedSequence& s = codes.of_columns()[column_order[q]];
        column_length_[q] = static_cast<int>(s.size());
        column_best_[q] = best_sum(s, best_as_target);
        stats.mean_length += static_cast<double>(s.size());
        stats.longest = std::max(stats.longest, static_cast<int>(s.size()));
        stats.residue_bytes += round4(s.size());
    }
    stats.mean_length /= static_cast<double>(std::max<std::size_t>(1, column_order.size()));
    return stats;
}

// The shapes this device can run with this matrix.
bool CudaTileScorer::choose_shapes(std::string* why_not) {
    for (const DbScanShape& shape : allvsall_gpu::scan_shapes()) {
        const int blocks = allvsall_gpu::scan_blocks_per_sm(shape, local(), letters_);
        if (blocks == 0) continue;
        shapes_.push_back(shape);
        blocks_per_sm_.push_back(blocks);
    }
    if (shapes_.empty() && why_not)
        *why_not = "no all-against-all scan kernel fits " + std::to_string(letters_) + " matrix letters";
    return !shapes_.empty();
}

// The rows paired into profiles, each with the shape that wastes the fewest cells.
CudaTileScorer::ProfilePlan CudaTileScorer::plan_profiles(double mean_length) {
    profiles_ = ProfileIndex::pair_rows(problem_.tiling.rows(), problem_.tiling.tile_size());
    const std::size_t count = profiles_.first_row.size();
    profile_shape_.resize(count);
    ProfilePlan plan;
    plan.offsets.resize(count);
    plan.tiles.resize(count);
    plan.lanes.resize(2 * count);
    for (std::size_t p = 0; p < count; ++p) {
        const std::uint32_t r = profiles_.first_row[p];
        const int a = row_length_[r], b = profiles_.lanes[p] == 2 ? row_length_[r + 1] : 0;
        const int needed = local() ? std::max(a, b) : search::bounded_rows(std::max(a, b));
        std::size_t best = 0;
        for (std::size_t s = 1; s < shapes_.size(); ++s)
            if (shape_cost(shapes_[s], needed, mean_length) < shape_cost(shapes_[best], needed, mean_length)) best = s;
        profile_shape_[p] = best;
        const int tile_rows = shapes_[best].tile_rows();
        plan.tiles[p] = (needed + tile_rows - 1) / tile_rows;
        plan.offsets[p] = plan.words;
        plan.lanes[2 * p] = a;
        plan.lanes[2 * p + 1] = b;
        plan.words += static_cast<std::uint64_t>(plan.tiles[p]) * static_cast<std::uint64_t>(letters_) * tile_rows;
    }
    return plan;
}

// Whether the profiles, the columns and every stream's strips fit the memory budget.
bool CudaTileScorer::fits(const ProfilePlan& plan, const ColumnStats& columns, std::string* why_not) {
    // Strips of multi-tile profiles: per stream, every resident group of the widest launch.
    scratch_columns_ = static_cast<int>(round4(static_cast<std::uint64_t>(columns.longest)) + 4);
    for (std::size_t s = 0; s < shapes_.size(); ++s)
        scratch_strips_ = std::max<std::uint64_t>(scratch_strips_, static_cast<std::uint64_t>(blocks_per_sm_[s]) *
                                                                       sm_count_ * shapes_[s].groups_per_block());
    const std::uint64_t scratch_bytes = kSlots * scratch_strips_ * static_cast<std::uint64_t>(scratch_columns_) * 8;
    const std::uint64_t needed = plan.words * 4 + columns.residue_bytes + problem_.tiling.columns() * 12 +
                                 plan.tiles.size() * 24 + scratch_bytes + (64ull << 20);
    std::size_t free_bytes = 0, total_bytes = 0;
    ALIGNSCOPE_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), site_);
    const std::uint64_t budget = problem_.gpu_memory_budget
                                     ? std::min<std::uint64_t>(problem_.gpu_memory_budget, free_bytes)
                                     : static_cast<std::uint64_t>(0.8 * static_cast<double>(free_bytes));
    if (needed <= budget) return true;
    if (why_not)
        *why_not = "the set's query profiles need " + std::to_string(needed >> 20) + " MiB of GPU memory, more than " +
                   std::to_string(budget >> 20) + " MiB";
    return false;
}

// Profile words: the database scanner's layout (db_scan_bounds.hpp for global and semi-global).
std::vector<std::uint32_t> CudaTileScorer::fill_profiles(const Codes& codes, const ProfilePlan& plan) const {
    const SubstitutionMatrix& matrix = problem_.scheme.matrix;
    const std::vector<std::uint32_t>& row_order = problem_.tiling.row_order();
    std::vector<std::uint32_t> host_words(plan.words);
    const bool free_query_begin = (free_ends_ & search::kFreeQueryBegin) != 0;
    const bool is_local = local();
    parallel_chunks(
        plan.tiles.size(), problem_.threads,
        [&](std::size_t from, std::size_t to) {
            for (std::size_t p = from; p < to; ++p) {
                const std::uint32_t r = profiles_.first_row[p];
                const EncodedSequence* qa = &codes.rows[row_order[r]];
                const EncodedSequence* qb = profiles_.lanes[p] == 2 ? &codes.rows[row_order[r + 1]] : nullptr;
                const int tile = shapes_[profile_shape_[p]].tile_rows();
                const int padded = plan.tiles[p] * tile;
                std::uint32_t* out = host_words.data() + plan.offsets[p];
                auto value = [&](const EncodedSequence* q, int i, int letter) {
                    if (!q) return search::kPad16;
                    if (is_local) {
                        if (i >= static_cast<int>(q->size()) || letter == letters_ - 1) return search::kPad16;
                        return matrix.score((*q)[static_cast<std::size_t>(i)], letter) + open_;
                    }
                    const int z = search::zero_row(padded, static_cast<int>(q->size()));
                    const int real = i > z && letter != letters_ - 1
                                         ? matrix.score((*q)[static_cast<std::size_t>(i - z - 1)], letter) + open_
                                         : search::kPad16;
                    return search::profile_entry(i, z, real, free_query_begin, search::kPad16, search::kNeg16);
                };
                for (int k = 0; k < plan.tiles[p]; ++k)
                    for (int letter = 0; letter < letters_; ++letter) {
                        std::uint32_t* row = out + (static_cast<std::size_t>(k) * letters_ + letter) * tile;
                        for (int t = 0; t < tile; ++t) {
                            const int i = k * tile + t;
                            const std::uint32_t lo = static_cast<std::uint32_t>(value(qa, i, letter)) & 0xffffu;
                            const std::uint32_t hi = static_cast<std::uint32_t>(value(qb, i, letter)) & 0xffffu;
                            row[t] = lo | (hi << 16);
                        }
                    }
            }
        },
        16);
    return host_words;
}

// The columns' residues (tiling order, each padded to 4 with the pad letter),
// the profiles and their tables to the device, and the streams.
void CudaTileScorer::upload(const Codes& codes, const ProfilePlan& plan, const ColumnStats& columns) {
    const std::vector<std::uint32_t> host_words = fill_profiles(codes, plan);
    const std::vector<std::uint32_t>& column_order = problem_.tiling.column_order();
    std::vector<std::uint8_t> residues(columns.residue_bytes, static_cast<std::uint8_t>(letters_ - 1));
    std::vector<std::uint64_t> starts(column_order.size());
    std::uint64_t at = 0;
    for (std::size_t q = 0; q < column_order.size(); ++q) {
        const EncodedSequence& s = codes.of_columns()[column_order[q]];
        std::memcpy(residues.data() + at, s.data(), s.size());
        starts[q] = at;
        at += round4(s.size());
    }
    const std::size_t count = plan.tiles.size();
    residues_.reserve(residues.size(), site_);
    starts_.reserve(starts.size(), site_);
    lengths_.reserve(column_length_.size(), site_);
    profile_words_.reserve(std::max<std::uint64_t>(plan.words, 1), site_);
    profile_offsets_.reserve(count, site_);
    profile_tiles_.reserve(count, site_);
    profile_lengths_.reserve(2 * count, site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(residues_.data(), residues.data(), residues.size(), cudaMemcpyHostToDevice), site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(starts_.data(), starts.data(), starts.size() * 8, cudaMemcpyHostToDevice), site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(lengths_.data(), column_length_.data(), column_length_.size() * 4,
                               cudaMemcpyHostToDevice),
                    site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(profile_words_.data(), host_words.data(), plan.words * 4, cudaMemcpyHostToDevice),
                    site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(profile_offsets_.data(), plan.offsets.data(), count * 8, cudaMemcpyHostToDevice), site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(profile_tiles_.data(), plan.tiles.data(), count * 4, cudaMemcpyHostToDevice), site_);
    ALIGNSCOPE_CUDA(cudaMemcpy(profile_lengths_.data(), plan.lanes.data(), 2 * count * 4, cudaMemcpyHostToDevice),
                    site_);

    slots_.resize(kSlots);
    for (Slot& s : slots_) {
        ALIGNSCOPE_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), site_);
        ALIGNSCOPE_CUDA(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), site_);
        s.counters.reserve(shapes_.size(), site_);
        s.scratch.reserve(scratch_strips_ * static_cast<std::uint64_t>(scratch_columns_), site_);
    }
}

TileSpan CudaTileScorer::span_of(std::uint64_t tile) const {
    const allvsall::Tiling& tiling = problem_.tiling;
    const auto [a, b] = tiling.blocks(tile);
    const std::uint32_t size = tiling.tile_size();
    TileSpan span;
    span.row_begin = a * size;
    span.row_end = static_cast<std::uint32_t>(std::min<std::uint64_t>(tiling.rows(), std::uint64_t{a} * size + size));
    span.column_begin = b * size;
    span.column_end =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(tiling.columns(), std::uint64_t{b} * size + size));
    span.diagonal = tiling.is_triangle() && a == b;
    return span;
}

void CudaTileScorer::submit(std::uint64_t tile, JobContext& context) {
    context.throw_if_cancelled();
    ALIGNSCOPE_CUDA(cudaSetDevice(device_), site_);
    Slot& slot = slots_[next_slot_];
    if (slot.busy) throw Error("allvsall: internal: more tiles in flight on " + info_.id + " than its depth");
    const std::size_t lane = next_slot_;
    next_slot_ = (next_slot_ + 1) % slots_.size();
    slot.tile = tile;
    slot.span = span_of(tile);
    slot.launches.clear();

    // Items per shape, then one launch per shape.
    std::vector<std::vector<Item>> by_shape(shapes_.size());
    const auto [a, b] = problem_.tiling.blocks(tile);
    (void)b;
    for (std::uint32_t p = profiles_.block_first[a]; p < profiles_.block_first[a + 1]; ++p) {
        const std::size_t s = profile_shape_[p];
        allvsall_gpu::add_items(profiles_, p, slot.span, shapes_[s].groups_per_block(), by_shape[s]);
    }
    std::size_t items = 0, outs = 0;
    for (std::size_t s = 0; s < shapes_.size(); ++s) {
        if (by_shape[s].empty()) continue;
        slot.launches.push_back(Launch{s, items, by_shape[s].size(), outs});
        items += by_shape[s].size();
        outs += by_shape[s].size() * static_cast<std::size_t>(shapes_[s].groups_per_block());
    }
    slot.items.reserve(std::max<std::size_t>(items, 1), site_);
    slot.out.reserve(std::max<std::size_t>(outs, 1), site_);
    slot.device_items.reserve(std::max<std::size_t>(items, 1), site_);
    slot.device_out.reserve(std::max<std::size_t>(outs, 1), site_);
    for (const Launch& l : slot.launches)
        for (std::size_t k = 0; k < l.item_count; ++k)
            slot.items.data()[l.item_first + k] = int2{by_shape[l.shape][k].profile, by_shape[l.shape][k].column};
    if (items == 0) {
        ALIGNSCOPE_CUDA(cudaEventRecord(slot.done, slot.stream), site_);
        slot.busy = true;
        queue_.push_back(lane);
        return;
    }
    const cudaStream_t stream = slot.stream;
    timeline_.record(stream, {"H2D items", "copy", static_cast<int>(lane), items * sizeof(int2), 0}, [&] {
        ALIGNSCOPE_CUDA(cudaMemcpyAsync(slot.device_items.data(), slot.items.data(), items * sizeof(int2),
                                        cudaMemcpyHostToDevice, stream),
                        site_);
    });
    ALIGNSCOPE_CUDA(cudaMemsetAsync(slot.counters.data(), 0, shapes_.size() * sizeof(unsigned int), stream), site_);
    for (const Launch& l : slot.launches) {
        const DbScanShape& shape = shapes_[l.shape];
        ScanParams params;
        params.residues = residues_.data();
        params.starts = starts_.data();
        params.lengths = lengths_.data();
        params.column_end = static_cast<int>(slot.span.column_end);
        params.profiles = profile_words_.data();
        params.profile_offsets = profile_offsets_.data();
        params.profile_tiles = profile_tiles_.data();
        params.profile_lengths = profile_lengths_.data();
        params.letters = letters_;
        params.items = slot.device_items.data() + l.item_first;
        params.item_count = static_cast<int>(l.item_count);
        params.out = slot.device_out.data() + l.out_first;
        params.next_item = slot.counters.data() + l.shape;
        params.scratch = slot.scratch.data();
        params.scratch_columns = scratch_columns_;
        params.open = open_;
        params.extend = extend_;
        params.free_ends = free_ends_;
        const int blocks =
            static_cast<int>(std::min<std::uint64_t>(l.item_count, static_cast<std::uint64_t>(blocks_per_sm_[l.shape]) *
                                                                       static_cast<std::uint64_t>(sm_count_)));
        std::uint64_t cells = 0;
        for (std::size_t k = 0; k < l.item_count; ++k) {
            const Item& it = by_shape[l.shape][k];
            const std::uint32_t r = profiles_.first_row[static_cast<std::size_t>(it.profile)];
            for (int g = 0; g < shape.groups_per_block(); ++g) {
                const std::uint32_t q = static_cast<std::uint32_t>(it.column + g);
                if (q >= slot.span.column_end) break;
                cells += static_cast<std::uint64_t>(column_length_[q]) *
                         static_cast<std::uint64_t>(
                             row_length_[r] +
                             (profiles_.lanes[static_cast<std::size_t>(it.profile)] == 2 ? row_length_[r + 1] : 0));
            }
        }
        timeline_.record(stream, {kernel_name_, "kernel", static_cast<int>(lane), 0, cells}, [&] {
            ALIGNSCOPE_CUDA(allvsall_gpu::launch_scan(shape, local(), params, blocks, stream), site_);
        });
    }
    timeline_.record(stream, {"D2H scores", "copy", static_cast<int>(lane), outs * 4, 0}, [&] {
        ALIGNSCOPE_CUDA(cudaMemcpyAsync(slot.out.data(), slot.device_out.data(), outs * 4, cudaMemcpyDeviceToHost,
                                        stream),
                        site_);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(slot.done, stream), site_);
    slot.busy = true;
    queue_.push_back(lane);
}

bool CudaTileScorer::exact(std::uint32_t row, std::uint32_t column, std::int32_t score) const {
    if (local()) return score <= saturation_bound_;
    const long long m = row_length_[row], n = column_length_[column];
    const long long lowest = search::lowest_cell(m, n, open_, extend_, min_score_, free_ends_);
    const long long highest = search::highest_cell(m, n, max_score_, row_best_[row], column_best_[column]);
    return search::bounded_exact(lowest, highest, open_, max_score_, search::kNeg16, search::kTop16);
}

void CudaTileScorer::map_results(const Slot& slot, std::vector<std::int32_t>& scores,
                                 std::vector<std::uint64_t>& rescore) const {
    const TileOrder order(slot.span);
    scores.assign(order.pair_count(), 0);
    std::mutex merge;
    std::uint64_t filled = 0;
    for (const Launch& l : slot.launches) {
        const int groups = shapes_[l.shape].groups_per_block();
        parallel_chunks(
            l.item_count, problem_.threads,
            [&](std::size_t from, std::size_t to) {
                std::vector<std::uint64_t> mine;
                std::uint64_t count = 0;
                for (std::size_t k = from; k < to; ++k) {
                    const int2 it = slot.items.data()[l.item_first + k];
                    const std::uint32_t r = profiles_.first_row[static_cast<std::size_t>(it.x)];
                    const bool two = profiles_.lanes[static_cast<std::size_t>(it.x)] == 2;
                    const std::uint32_t* words = slot.out.data() + l.out_first + k * static_cast<std::size_t>(groups);
                    for (int g = 0; g < groups; ++g) {
                        const std::uint32_t q = static_cast<std::uint32_t>(it.y + g);
                        if (q >= slot.span.column_end) break;
                        for (int lane = 0; lane < (two ? 2 : 1); ++lane) {
                            const std::int64_t at = order.index(r + static_cast<std::uint32_t>(lane), q);
                            if (at < 0) continue;
                            const std::int32_t v =
                                static_cast<std::int16_t>(lane ? words[g] >> 16 : words[g] & 0xffffu);
                            scores[static_cast<std::size_t>(at)] = v;
                            ++count;
                            if (!exact(r + static_cast<std::uint32_t>(lane), q, v))
                                mine.push_back(static_cast<std::uint64_t>(at));
                        }
                    }
                }
                std::lock_guard lock(merge);
                filled += count;
                rescore.insert(rescore.end(), mine.begin(), mine.end());
            },
            64);
    }
    if (filled != order.pair_count())
        throw Error("allvsall: internal: the scan of tile " + std::to_string(slot.tile) + " on " + info_.id + " gave " +
                    std::to_string(filled) + " scores for " + std::to_string(order.pair_count()) + " pairs");
}

std::vector<std::int32_t> CudaTileScorer::take(JobContext& context) {
    if (queue_.empty()) throw Error("allvsall: internal: no tile in flight on " + info_.id);
    ALIGNSCOPE_CUDA(cudaSetDevice(device_), site_);
    Slot& slot = slots_[queue_.front()];
    ALIGNSCOPE_CUDA(cudaEventSynchronize(slot.done), site_);
    queue_.pop_front();
    slot.busy = false;
    context.throw_if_cancelled();
    std::vector<std::int32_t> scores;
    std::vector<std::uint64_t> rescore;
    map_results(slot, scores, rescore);
    if (!rescore.empty()) {
        // Scores the 16-bit pass cannot vouch for: again on the pairwise backend.
        std::sort(rescore.begin(), rescore.end());
        std::vector<allvsall::PairIndex> pairs;
        problem_.tiling.pairs(slot.tile, pairs);
        PairJob job;
        job.queries = problem_.rows;
        job.targets = problem_.columns;
        job.scheme = problem_.scheme;
        job.options = problem_.options;
        job.options.traceback = false;
        job.options.begins = false;
        job.threads = problem_.threads;
        job.streams = problem_.streams;
        job.gpu_memory_budget = problem_.gpu_memory_budget;
        for (std::uint64_t at : rescore) job.pairs.push_back(pairs[at]);
        JobContext quiet;
        quiet.cancel = context.cancel;
        const std::vector<Alignment> again = backend_.align_pairs(job, quiet);
        if (again.size() != rescore.size())
            throw Error("allvsall: device " + backend_.info().id + " rescored " + std::to_string(again.size()) +
                        " of " + std::to_string(rescore.size()) + " pairs");
        for (std::size_t k = 0; k < rescore.size(); ++k) scores[rescore[k]] = static_cast<std::int32_t>(again[k].score);
    }
    if (queue_.empty()) timeline_.flush();
    return scores;
}

}  // namespace

std::unique_ptr<allvsall::TileScorer> make_cuda_tile_scorer(const allvsall::Problem& problem, Backend& backend,
                                                            JobContext& context, std::string* why_not) {
    auto refuse = [&](const std::string& reason) -> std::unique_ptr<allvsall::TileScorer> {
        if (why_not) *why_not = reason;
        return nullptr;
    };
    auto* gpu = dynamic_cast<CudaPairBackend*>(&backend);
    if (!gpu) return refuse(backend.info().id + " is not one CUDA GPU");
    if (!problem.kernel.empty()) return refuse("--kernel " + problem.kernel + " names a pairwise kernel");
    const ScoringScheme& scheme = problem.scheme;
    if (scheme.matrix.size() + 1 > search::kMaxLetters)
        return refuse("matrix " + scheme.matrix.name() + " has too many letters for the scan kernels");
    // Past the 16-bit scan's range the pairs go to the pairwise kernels, which
    // take any accepted scheme (32-bit passes, or the exact CPU path).
    if (!search::scan16_takes_scheme(scheme.matrix.min_score(), scheme.matrix.max_score(), scheme.gap_open,
                                     scheme.gap_extend) ||
        scheme.gap_extend > scheme.gap_open)
        return refuse("scores or penalties outside the 16-bit scan kernels' range");
    // Pairs of the triangle swap to (smaller record, larger record): the scan's
    // row-against-column score must be the same both ways.
    if (problem.triangle()) {
        if (!symmetric(scheme.matrix)) return refuse("matrix " + scheme.matrix.name() + " is not symmetric");
        const FreeEndGaps& f = problem.options.free_ends;
        if (problem.options.mode == AlignmentMode::SemiGlobal &&
            (f.query_begin != f.target_begin || f.query_end != f.target_end))
            return refuse("the free end gaps differ between query and target");
    }
    for (const std::vector<Sequence>* set : {problem.rows, problem.columns})
        for (const Sequence& s : *set)
            if (s.residues.empty()) return refuse("sequence '" + s.id + "' is empty");
    auto scorer = std::make_unique<CudaTileScorer>(problem, backend, gpu->device_index(), gpu->info(), context);
    if (!scorer->load(why_not)) return nullptr;
    return scorer;
}

}  // namespace alignscope::kernels
