// The CUDA database scanner of one GPU (see dbscan_kernel.cuh for the kernel).
//
// Host side of a scan:
//  - load(): the database is encoded and uploaded once (each sequence padded
//    to 4 residues with the pad letter); when it does not fit the memory
//    budget it is cut into partitions that every scan streams through.
//  - scan(): queries are sorted by length and paired (two per 16-bit lane
//    pair); each pair gets the tile shape that wastes the fewest cells; the
//    packed profiles (s + open, per tile, per letter, per row) are built on
//    the host and uploaded. Launches cover runs of pairs with the same shape,
//    sized to about 100 ms of work so progress and cancellation stay
//    responsive; they alternate over the streams so one launch's tail
//    overlaps the next, and each launch's scores come back while the next
//    runs. Local scores above the saturation bound are rescored with 32-bit
//    cells; so are the global and semi-global pairs whose 16-bit pass the
//    lengths cannot prove exact (bounded_exact16, dbscan_bounds.hpp).
#include "search/cuda_scanner.hpp"

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "common/host_parallel.hpp"
#include "search/dbscan_launch.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>
#include <set>
#include <tuple>

namespace alignscope::kernels {
namespace {

using search::DbscanMode;
using search::DbscanParams;
using search::DbscanShape;

constexpr double kTargetLaunchCells = 3e11;  // ~100 ms at 3 TCUPS
constexpr std::uint64_t kMaxOutputBytes = 256ull << 20;  // scores of one launch

std::uint64_t round4(std::uint64_t v) { return (v + 3) & ~std::uint64_t{3}; }

// Databases whose longest sequence is at most this long have short strips:
// multi-tile profiles may then use groups of any width (4 threads: 64 strips
// a block, about 140 MB of strips per stream on 132 SMs at this length, which
// must also fit the scan's working memory) and an extra tile costs less, its
// strip staying in cache. Longer ones keep multi-tile profiles to groups of
// 16 or 32, whose strips are fewer.
constexpr int kShortStripLength = 1024;

// Cost of one database column for a query pair of `rows` rows on `shape`,
// in issue slots: padded rows x (per-row work + per-step overhead / R), with
// the wavefront's ramp (G - 1 + rounding steps per sequence of mean length)
// and a charge for every extra tile (strip traffic, block barrier).
// Measured on an H200 (synthetic 1,000,000 x 256 against the 500
// mmseqs2-examples queries, total scan GCUPS): groups of 16 or 32 and 3% a
// tile 4,886; short strips (groups down to 4, 1% a tile) 5,237: a long query
// on 256-residue sequences then runs as more tiles of narrow groups, whose
// wavefront ramp (G - 1 steps a tile) is shorter.
double shape_cost(const DbscanShape& shape, int rows, double mean_length, bool short_strips) {
    const int tile = shape.tile_rows();
    const int tiles = (rows + tile - 1) / tile;
    const double padded = static_cast<double>(tiles) * tile;
    const double per_row = 5.5 + 24.0 / shape.rows;
    const double ramp = 1.0 + (shape.threads + 5.0) / std::max(8.0, mean_length);
    if (tiles > 1 && shape.threads < 16 && !short_strips) return 1e300;
    return padded * per_row * ramp * (1.0 + (short_strips ? 0.01 : 0.03) * (tiles - 1));
}

}  // namespace

CudaScanner::CudaScanner(int device_index, DeviceInfo info) : device_(device_index), info_(std::move(info)) {}


struct CudaScanner::Partition {
    std::size_t first = 0, last = 0;  // database positions
    std::uint64_t residues = 0;
    int max_length = 0;
    double mean_length = 0;
    std::vector<std::uint8_t> host_codes;      // padded codes (kept only when streamed)
    std::vector<std::uint64_t> host_starts;
    std::vector<std::int32_t> host_lengths;
    DeviceBuffer<std::uint8_t> codes;
    DeviceBuffer<std::uint64_t> starts;
    DeviceBuffer<std::int32_t> lengths;
    bool resident = false;
};

struct CudaScanner::Slot {
    cudaStream_t stream = nullptr;
    DeviceBuffer<std::uint32_t> out;
    PinnedBuffer<std::uint32_t> host_out;
    DeviceBuffer<unsigned int> counter;
    DeviceBuffer<uint2> scratch;  // strips of multi-tile profiles, one set per stream
    cudaEvent_t done = nullptr;
    bool busy = false;
    // What the pending launch covers.
    std::size_t first_plan = 0, last_plan = 0;
    std::uint64_t cells = 0;
    const Partition* partition = nullptr;
};

void CudaScanner::release_slots() {
    for (auto& s : slots_) {
        if (s->stream) {
            (void)cudaStreamSynchronize(s->stream);
            (void)cudaStreamDestroy(s->stream);
        }
        if (s->done) (void)cudaEventDestroy(s->done);
    }
    slots_.clear();
}

CudaScanner::~CudaScanner() {
    (void)cudaSetDevice(device_);
    release_slots();
}

CudaSite CudaScanner::site(const std::string& job) const { return {info_.id + " (" + info_.name + ")", job}; }

void CudaScanner::select_device() const {
    ALIGNSCOPE_CUDA(cudaSetDevice(device_), site("database scan"));
}

void CudaScanner::load(const PreparedDatabase& database, const ScanSetup& setup, JobContext& context) {
    const ScanCapability can = capability(setup);
    if (!can.supported) throw Error(info_.id + ": " + can.reason);
    select_device();
    const CudaSite where = site("loading database " + database.source);
    database_ = &database;
    setup_ = setup;
    const SubstitutionMatrix& matrix = setup.scheme.matrix;
    letters_ = matrix.size() + 1;
    pad_code_ = static_cast<std::uint8_t>(matrix.size());
    max_score_ = std::max(0, matrix.max_score());
    min_score_ = matrix.min_score();
    mode_ = setup.options.mode == AlignmentMode::Local ? DbscanMode::Local : DbscanMode::Bounded;
    mode_prefix_ = setup.options.mode == AlignmentMode::Local ? "sw" : setup.options.mode == AlignmentMode::Global ? "nw" : "sg";
    free_ends_ = 0;
    if (setup.options.mode == AlignmentMode::SemiGlobal) {
        const FreeEndGaps& ends = setup.options.free_ends;
        free_ends_ = (ends.query_begin ? search::kFreeQueryBegin : 0) | (ends.query_end ? search::kFreeQueryEnd : 0) |
                     (ends.target_begin ? search::kFreeTargetBegin : 0) |
                     (ends.target_end ? search::kFreeTargetEnd : 0);
    }
    // 16-bit pairs hold s + open in the profile and H - open in the cells; keep
    // every such value far from the 16-bit ends so padding stays below them.
    narrow_ = search::scan16_takes_scheme(matrix.min_score(), matrix.max_score(), setup.scheme.gap_open,
                                          setup.scheme.gap_extend);
    // The local kernel holds every cell plus a bias of open (dbscan_kernel.cuh),
    // which the 16-bit range pays for.
    saturation_bound_ = 32767 - max_score_ - (mode_ == DbscanMode::Local ? setup.scheme.gap_open : 0);

    cudaDeviceProp props{};
    ALIGNSCOPE_CUDA(cudaGetDeviceProperties(&props, device_), where);
    sm_count_ = props.multiProcessorCount;
    std::size_t free_bytes = 0, total_bytes = 0;
    ALIGNSCOPE_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), where);
    // Free memory counts what this scanner holds already (a reload).
    for (const auto& p : partitions_)
        if (p.resident) free_bytes += p.codes.bytes() + p.starts.bytes() + p.lengths.bytes();
    partitions_.clear();
    budget_ = setup.gpu_memory_budget ? setup.gpu_memory_budget : static_cast<std::uint64_t>(0.9 * static_cast<double>(free_bytes));
    // Working memory of a scan: outputs and their host copies, profiles, scratch.
    const std::uint64_t working = std::min<std::uint64_t>(budget_ / 3, 3ull << 30);
    const std::uint64_t for_database = budget_ > working ? budget_ - working : 0;
    std::uint64_t padded_total = 0;
    for (std::size_t p = 0; p < database.size(); ++p) padded_total += round4(database.length(p)) + 12;
    if (for_database < (64ull << 20))
        throw Error(info_.id + ": a GPU memory budget of " + std::to_string(budget_ >> 20) +
                    " MiB leaves too little for the database (raise --gpu-mem)");

    const std::vector<std::uint8_t> codes = encode_database(database, matrix);
    best_as_query_.clear();
    target_best_.clear();
    if (bounded()) {
        // Per residue the best score it can take part in (as a query row and as
        // a target column), for the upper bound of highest_cell.
        const int size = matrix.size();
        best_as_query_.assign(static_cast<std::size_t>(size), 0);
        std::vector<int> best_as_target(static_cast<std::size_t>(size), 0);
        for (int a = 0; a < size; ++a)
            for (int b = 0; b < size; ++b) {
                best_as_query_[static_cast<std::size_t>(a)] = std::max(best_as_query_[static_cast<std::size_t>(a)], matrix.score(a, b));
                best_as_target[static_cast<std::size_t>(b)] = std::max(best_as_target[static_cast<std::size_t>(b)], matrix.score(a, b));
            }
        target_best_.resize(database.size());
        for (std::size_t p = 0; p < database.size(); ++p) {
            std::int64_t sum = 0;
            const std::uint8_t* c = codes.data() + database.offsets[p];
            for (std::uint32_t k = 0; k < database.length(p); ++k) sum += best_as_target[c[k]];
            target_best_[p] = sum;
        }
    }
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    if (padded_total + 64 <= for_database) {
        ranges.emplace_back(0, database.size());
    } else {
        // Each partition must fit together with the next one's upload.
        ranges = database.partitions(for_database / 2);
    }
    partitions_.resize(ranges.size());
    for (std::size_t k = 0; k < ranges.size(); ++k) {
        context.throw_if_cancelled();
        Partition& part = partitions_[k];
        part.first = ranges[k].first;
        part.last = ranges[k].second;
        std::uint64_t bytes = 0;
        for (std::size_t p = part.first; p < part.last; ++p) {
            part.residues += database.length(p);
            part.max_length = std::max<int>(part.max_length, static_cast<int>(database.length(p)));
            bytes += round4(database.length(p));
        }
        part.mean_length = static_cast<double>(part.residues) / static_cast<double>(part.last - part.first);
        part.host_codes.assign(bytes + 16, pad_code_);
        part.host_starts.resize(part.last - part.first);
        part.host_lengths.resize(part.last - part.first);
        std::uint64_t at = 0;
        for (std::size_t p = part.first; p < part.last; ++p) {
            const std::uint32_t n = database.length(p);
            std::memcpy(part.host_codes.data() + at, codes.data() + database.offsets[p], n);
            part.host_starts[p - part.first] = at;
            part.host_lengths[p - part.first] = static_cast<std::int32_t>(n);
            at += round4(n);
        }
    }
    if (partitions_.size() == 1) upload(partitions_.front(), nullptr, nullptr);
}

void CudaScanner::upload(Partition& part, GpuTimeline* timeline, cudaStream_t stream) {
    const CudaSite where = site("uploading the database");
    if (part.resident) return;
    // Streamed partitions share one set of device buffers: free the others'.
    for (auto& other : partitions_) {
        if (&other != &part && other.resident) {
            other.codes.release();
            other.starts.release();
            other.lengths.release();
            other.resident = false;
        }
    }
    part.codes.reserve(part.host_codes.size(), where);
    part.starts.reserve(part.host_starts.size(), where);
    part.lengths.reserve(part.host_lengths.size(), where);
    auto copy = [&](void* to, const void* from, std::size_t bytes) {
        if (timeline && stream) {
            timeline->record(stream, {"H2D database", "copy", 0, bytes, 0}, [&] {
                ALIGNSCOPE_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream), where);
            });
        } else {
            ALIGNSCOPE_CUDA(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), where);
        }
    };
    copy(part.codes.data(), part.host_codes.data(), part.host_codes.size());
    copy(part.starts.data(), part.host_starts.data(), part.host_starts.size() * sizeof(std::uint64_t));
    copy(part.lengths.data(), part.host_lengths.data(), part.host_lengths.size() * sizeof(std::int32_t));
    if (stream) ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream), where);
    part.resident = true;
    // A resident whole database needs no host copy.
    if (partitions_.size() == 1) {
        std::vector<std::uint8_t>().swap(part.host_codes);
        std::vector<std::uint64_t>().swap(part.host_starts);
        std::vector<std::int32_t>().swap(part.host_lengths);
    }
}

ScanCapability CudaScanner::capability(const ScanSetup& setup) {
    if (setup.scheme.matrix.size() + 1 > search::kMaxLetters)
        return {false, "matrix " + setup.scheme.matrix.name() + " has more than " +
                           std::to_string(search::kMaxLetters - 1) + " letters"};
    const int reach = std::max(std::abs(setup.scheme.matrix.min_score()), setup.scheme.matrix.max_score()) +
                      setup.scheme.gap_open;
    if (reach > (1 << 26) || setup.scheme.gap_extend > (1 << 26))
        return {false, "scores or penalties too large for 32-bit cells"};
    return {};
}

namespace {

// One profile (a pair of queries in 16-bit lanes, or one query in 32-bit).
struct ProfilePlan {
    int a = -1, b = -1;  // query indices in the scan call (b = -1: none)
    int rows = 0;        // longest of the two
    DbscanShape shape;
    int tiles = 0;
    std::uint64_t offset = 0;  // in words
};

// Profile words of one plan: tiles x letters x tile rows; entry = (s + open)
// for lane a in the low half (or the whole word) and lane b in the high half.
// Local: query row i is padded row i, padding below. Bounded: the layout of
// dbscan_bounds.hpp (void rows, the DP's row 0, then the query at the bottom).
void fill_profile(std::uint32_t* out, const ProfilePlan& plan, const EncodedSequence* qa, const EncodedSequence* qb,
                  const SubstitutionMatrix& matrix, int letters, int open, bool wide, bool bounded = false,
                  bool free_query_begin = false) {
    const int tile = plan.shape.tile_rows();
    const int padded = plan.tiles * tile;
    const int pad_letter = letters - 1;
    for (int k = 0; k < plan.tiles; ++k) {
        for (int letter = 0; letter < letters; ++letter) {
            std::uint32_t* row = out + (static_cast<std::size_t>(k) * letters + letter) * tile;
            for (int r = 0; r < tile; ++r) {
                const std::size_t i = static_cast<std::size_t>(k) * tile + r;
                auto value = [&](const EncodedSequence* q, int pad, int neg) {
                    if (!q) return pad;
                    if (!bounded) {
                        if (i >= q->size() || letter == pad_letter) return pad;
                        return matrix.score((*q)[i], letter) + open;
                    }
                    const int x = static_cast<int>(i);
                    const int z = search::zero_row(padded, static_cast<int>(q->size()));
                    const int real = x > z && letter != pad_letter
                                         ? matrix.score((*q)[static_cast<std::size_t>(x - z - 1)], letter) + open
                                         : pad;
                    return search::profile_entry(x, z, real, free_query_begin, pad, neg);
                };
                if (wide) {
                    row[r] = static_cast<std::uint32_t>(value(qa, search::kPad32, search::kNeg32));
                } else {
                    const std::uint32_t lo =
                        static_cast<std::uint32_t>(value(qa, search::kPad16, search::kNeg16)) & 0xffffu;
                    const std::uint32_t hi =
                        static_cast<std::uint32_t>(value(qb, search::kPad16, search::kNeg16)) & 0xffffu;
                    row[r] = lo | (hi << 16);
                }
            }
        }
    }
}

std::int64_t query_best(const EncodedSequence& q, const std::vector<int>& best_as_query) {
    std::int64_t sum = 0;
    for (std::uint8_t c : q) sum += std::max(0, best_as_query[c]);
    return sum;
}

}  // namespace


void CudaScanner::scan(std::span<const EncodedSequence* const> queries, std::span<std::int32_t> scores,
                       JobContext& context) {
    if (!database_) throw Error(info_.id + ": scan before load");
    const auto start = std::chrono::steady_clock::now();
    select_device();
    const PreparedDatabase& db = *database_;
    const CudaSite where = site("database scan of " + std::to_string(queries.size()) + " queries against " +
                                std::to_string(db.size()) + " sequences");
    if (scores.size() != queries.size() * db.size()) throw Error(info_.id + ": score buffer of the wrong size");
    stats_ = {};
    for (const EncodedSequence* q : queries) {
        if (q->empty()) throw Error(info_.id + ": empty query");
        stats_.cells += q->size() * db.residue_count();
    }
    if (queries.empty()) return;
    std::vector<std::int64_t> best_of_query(queries.size(), 0);
    if (bounded()) {
        // A lane takes its end cell at its last column: there must be one.
        for (std::size_t p = 0; p < db.size(); ++p)
            if (db.length(p) == 0) throw Error(info_.id + ": database sequence '" + db.ids[p] + "' is empty");
        for (std::size_t q = 0; q < queries.size(); ++q) best_of_query[q] = query_best(*queries[q], best_as_query_);
    }
    const SubstitutionMatrix& matrix = setup_.scheme.matrix;
    const int open = setup_.scheme.gap_open;
    const bool linear = setup_.scheme.linear();

    // Pairs of similar length (or singles with 32-bit cells).
    std::vector<int> order(queries.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return queries[x]->size() < queries[y]->size(); });
    double mean_length = 0;
    for (const Partition& p : partitions_) mean_length += p.mean_length * static_cast<double>(p.last - p.first);
    mean_length /= static_cast<double>(db.size());
    int longest = 0;
    for (const Partition& p : partitions_) longest = std::max(longest, p.max_length);
    // Narrow groups' strips must also fit the working memory the budget keeps
    // for scans (see the constructor): at most half of it, every stream's set.
    bool short_strips = longest <= kShortStripLength;
    if (short_strips) {
        int narrow_blocks = 0;
        for (const DbscanShape& shape : search::dbscan_shapes(!narrow_))
            if (shape.threads < 16) narrow_blocks = std::max(narrow_blocks, blocks_per_sm(shape, false));
        const std::uint64_t streams = static_cast<std::uint64_t>(stream_count());
        const std::uint64_t strips = streams * static_cast<std::uint64_t>(sm_count_) *
                                     static_cast<std::uint64_t>(narrow_blocks) * (search::kBlockThreads / 4);
        const std::uint64_t bytes = strips * (round4(static_cast<std::uint64_t>(longest)) + 4) * sizeof(uint2);
        short_strips = bytes <= std::min<std::uint64_t>(budget_ / 3, 3ull << 30) / 2;
    }
    std::vector<ProfilePlan> plans;
    const std::size_t step = narrow_ ? 2 : 1;
    for (std::size_t k = 0; k < order.size(); k += step) {
        ProfilePlan plan;
        plan.a = order[k];
        plan.b = narrow_ && k + 1 < order.size() ? order[k + 1] : -1;
        plan.rows = static_cast<int>(std::max(queries[plan.a]->size(), plan.b >= 0 ? queries[plan.b]->size() : 0));
        if (bounded()) plan.rows = search::bounded_rows(plan.rows);
        double best = 0;
        bool first = true;
        for (const DbscanShape& shape : search::dbscan_shapes(!narrow_)) {
            if (blocks_per_sm(shape, false) == 0) continue;  // too much shared memory for this matrix
            const double cost = shape_cost(shape, plan.rows, mean_length, short_strips);
            if (first || cost < best) {
                best = cost;
                plan.shape = shape;
                first = false;
            }
        }
        if (first) throw Error(info_.id + ": no scan kernel fits " + std::to_string(letters_) + " matrix letters");
        plan.tiles = (plan.rows + plan.shape.tile_rows() - 1) / plan.shape.tile_rows();
        plans.push_back(plan);
    }
    // Same shapes next to each other, so one launch covers a run of them.
    std::stable_sort(plans.begin(), plans.end(), [](const ProfilePlan& x, const ProfilePlan& y) {
        return std::tie(x.shape.threads, x.shape.rows) < std::tie(y.shape.threads, y.shape.rows);
    });
    std::uint64_t words = 0;
    for (ProfilePlan& plan : plans) {
        plan.offset = words;
        words += static_cast<std::uint64_t>(plan.tiles) * letters_ * plan.shape.tile_rows();
    }
    std::vector<std::uint32_t> host_profiles(words);
    std::vector<std::uint64_t> host_offsets(plans.size());
    std::vector<std::int32_t> host_tiles(plans.size());
    std::vector<std::int32_t> host_lengths(2 * plans.size());
    const bool free_query_begin = (free_ends_ & search::kFreeQueryBegin) != 0;
    parallel_chunks(plans.size(), setup_.threads, [&](std::size_t from, std::size_t to) {
        for (std::size_t k = from; k < to; ++k) {
            const ProfilePlan& plan = plans[k];
            fill_profile(host_profiles.data() + plan.offset, plan, queries[plan.a],
                         plan.b >= 0 ? queries[plan.b] : nullptr, matrix, letters_, open, !narrow_, bounded(),
                         free_query_begin);
            host_offsets[k] = plan.offset;
            host_tiles[k] = plan.tiles;
            host_lengths[2 * k] = static_cast<std::int32_t>(queries[plan.a]->size());
            host_lengths[2 * k + 1] = plan.b >= 0 ? static_cast<std::int32_t>(queries[plan.b]->size()) : 0;
        }
    }, 1);

    GpuTimeline timeline(context.timeline, info_.id, where);
    const int streams = stream_count();
    if (static_cast<int>(slots_.size()) != streams) {
        release_slots();
        for (int k = 0; k < streams; ++k) {
            auto slot = std::make_unique<Slot>();
            ALIGNSCOPE_CUDA(cudaStreamCreateWithFlags(&slot->stream, cudaStreamNonBlocking), where);
            ALIGNSCOPE_CUDA(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), where);
            slot->counter.reserve(1, where);
            slots_.push_back(std::move(slot));
        }
    }
    // An exception leaves no launch running on the buffers of this call.
    struct Drain {
        std::vector<std::unique_ptr<Slot>>& slots;
        ~Drain() {
            for (auto& s : slots) {
                (void)cudaStreamSynchronize(s->stream);
                s->busy = false;
            }
        }
    } drain{slots_};
    cudaEvent_t began = nullptr, ended = nullptr;
    ALIGNSCOPE_CUDA(cudaEventCreate(&began), where);
    ALIGNSCOPE_CUDA(cudaEventCreate(&ended), where);
    struct EventCleanup {
        cudaEvent_t a, b;
        ~EventCleanup() {
            (void)cudaEventDestroy(a);
            (void)cudaEventDestroy(b);
        }
    } event_cleanup{began, ended};

    DeviceBuffer<std::uint32_t>& profiles = profiles_;
    DeviceBuffer<std::uint64_t>& offsets = offsets_;
    DeviceBuffer<std::int32_t>& tiles = tiles_;
    DeviceBuffer<std::int32_t>& lengths = lengths_;
    profiles.reserve(std::max<std::uint64_t>(words, 1), where);
    offsets.reserve(plans.size(), where);
    tiles.reserve(plans.size(), where);
    lengths.reserve(2 * plans.size(), where);
    cudaStream_t first_stream = slots_.front()->stream;
    timeline.record(first_stream, {"H2D profiles", "copy", 0, words * 4, 0}, [&] {
        ALIGNSCOPE_CUDA(cudaMemcpyAsync(profiles.data(), host_profiles.data(), words * 4, cudaMemcpyHostToDevice,
                                        first_stream), where);
    });
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(offsets.data(), host_offsets.data(), plans.size() * 8, cudaMemcpyHostToDevice,
                                    first_stream), where);
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(tiles.data(), host_tiles.data(), plans.size() * 4, cudaMemcpyHostToDevice,
                                    first_stream), where);
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(lengths.data(), host_lengths.data(), host_lengths.size() * 4, cudaMemcpyHostToDevice,
                                    first_stream), where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(first_stream), where);
    ALIGNSCOPE_CUDA(cudaEventRecord(began, first_stream), where);

    std::set<std::string> kernel_names;
    std::uint64_t cells_done = 0;
    std::size_t partitions_done = 0;
    std::size_t queries_finished = 0;  // in the last partition: nothing of theirs is left to scan
    auto report = [&](std::size_t queries_done) {
        if (!context.progress) return;
        Progress p;
        p.cells_done = cells_done;
        p.cells_total = stats_.cells;
        p.items_done = queries_done;
        p.items_total = queries.size();
        context.progress(p);
    };
    std::vector<Saturated> saturated;
    std::mutex saturated_mutex;

    // Turns a finished launch's scores into the caller's layout.
    auto collect = [&](Slot& slot) {
        if (!slot.busy) return;
        ALIGNSCOPE_CUDA(cudaEventSynchronize(slot.done), where);
        slot.busy = false;
        const Partition& part = *slot.partition;
        const std::size_t count = part.last - part.first;
        parallel_chunks(slot.last_plan - slot.first_plan, setup_.threads, [&](std::size_t from, std::size_t to) {
            std::vector<Saturated> found;
            for (std::size_t k = slot.first_plan + from; k < slot.first_plan + to; ++k) {
                const ProfilePlan& plan = plans[k];
                const std::uint32_t* row = slot.host_out.data() + (k - slot.first_plan) * count;
                std::int32_t* out_a = scores.data() + static_cast<std::size_t>(plan.a) * db.size() + part.first;
                if (!narrow_) {
                    for (std::size_t p = 0; p < count; ++p) out_a[p] = static_cast<std::int32_t>(row[p]);
                    continue;
                }
                std::int32_t* out_b =
                    plan.b >= 0 ? scores.data() + static_cast<std::size_t>(plan.b) * db.size() + part.first : nullptr;
                if (bounded()) {
                    // Exactness is proven per pair from the lengths, not read off the score.
                    const std::size_t m_a = queries[plan.a]->size();
                    const std::size_t m_b = plan.b >= 0 ? queries[plan.b]->size() : 0;
                    const std::int64_t best_a = best_of_query[static_cast<std::size_t>(plan.a)];
                    const std::int64_t best_b = plan.b >= 0 ? best_of_query[static_cast<std::size_t>(plan.b)] : 0;
                    for (std::size_t p = 0; p < count; ++p) {
                        const std::size_t position = part.first + p;
                        out_a[p] = static_cast<std::int16_t>(row[p] & 0xffffu);
                        if (!bounded_exact16(m_a, best_a, position)) found.push_back({plan.a, position});
                        if (out_b) {
                            out_b[p] = static_cast<std::int16_t>(row[p] >> 16);
                            if (!bounded_exact16(m_b, best_b, position)) found.push_back({plan.b, position});
                        }
                    }
                    continue;
                }
                for (std::size_t p = 0; p < count; ++p) {
                    const std::int32_t lo = static_cast<std::int16_t>(row[p] & 0xffffu);
                    const std::int32_t hi = static_cast<std::int16_t>(row[p] >> 16);
                    out_a[p] = lo;
                    if (lo > saturation_bound_) found.push_back({plan.a, part.first + p});
                    if (out_b) {
                        out_b[p] = hi;
                        if (hi > saturation_bound_) found.push_back({plan.b, part.first + p});
                    }
                }
            }
            if (!found.empty()) {
                std::lock_guard lock(saturated_mutex);
                saturated.insert(saturated.end(), found.begin(), found.end());
            }
        }, 1);
        cells_done += slot.cells;
        if (&part == &partitions_.back())
            for (std::size_t k = slot.first_plan; k < slot.last_plan; ++k) queries_finished += plans[k].b >= 0 ? 2 : 1;
        report(queries_finished);
    };

    std::size_t next_slot = 0;
    for (Partition& part : partitions_) {
        if (!part.resident) {
            for (auto& s : slots_) collect(*s);
            upload(part, &timeline, first_stream);
        }
        const std::size_t count = part.last - part.first;
        std::uint64_t scratch_columns = round4(static_cast<std::uint64_t>(part.max_length)) + 4;
        // Launches over runs of plans with one shape.
        std::size_t k = 0;
        while (k < plans.size()) {
            context.throw_if_cancelled();
            const DbscanShape shape = plans[k].shape;
            std::size_t end = k;
            double cells = 0;
            bool multi_tile = false;
            const std::size_t max_plans = std::max<std::size_t>(1, kMaxOutputBytes / (count * 4));
            while (end < plans.size() && plans[end].shape.threads == shape.threads &&
                   plans[end].shape.rows == shape.rows && end - k < max_plans &&
                   (end == k || cells < kTargetLaunchCells)) {
                cells += 2.0 * plans[end].tiles * shape.tile_rows() * static_cast<double>(part.residues);
                multi_tile |= plans[end].tiles > 1;
                ++end;
            }
            Slot& slot = *slots_[next_slot];
            const int lane = static_cast<int>(next_slot);
            next_slot = (next_slot + 1) % slots_.size();
            collect(slot);
            const std::size_t n_plans = end - k;
            slot.out.reserve(n_plans * count, where);
            slot.host_out.reserve(n_plans * count, where);
            const int per_sm = blocks_per_sm(shape, false);
            if (per_sm == 0)
                throw Error(info_.id + ": the scan kernel for " + std::to_string(shape.threads) + "x" +
                            std::to_string(shape.rows) + " tiles cannot run with " + std::to_string(letters_) +
                            " letters on this device");
            const int groups = shape.groups_per_block();
            const int chunks = static_cast<int>((count + static_cast<std::size_t>(groups) - 1) / groups);
            const std::uint64_t items = static_cast<std::uint64_t>(n_plans) * static_cast<std::uint64_t>(chunks);
            if (items > 0x7fffffffull) throw Error(info_.id + ": too many scan work items in one launch");
            const int blocks = static_cast<int>(std::min<std::uint64_t>(items, static_cast<std::uint64_t>(per_sm) * sm_count_));
            if (multi_tile) {
                const std::uint64_t strips = static_cast<std::uint64_t>(blocks) * groups;
                slot.scratch.reserve(strips * scratch_columns, where);
            }
            DbscanParams params;
            params.residues = part.codes.data();
            params.starts = part.starts.data();
            params.lengths = part.lengths.data();
            params.db_count = static_cast<int>(count);
            params.profiles = profiles.data();
            params.profile_offsets = offsets.data() + k;
            params.profile_tiles = tiles.data() + k;
            params.letters = letters_;
            params.profile_count = static_cast<int>(n_plans);
            params.chunks = chunks;
            params.out = slot.out.data();
            params.next_item = slot.counter.data();
            params.scratch = multi_tile ? slot.scratch.data() : nullptr;
            params.scratch_columns = static_cast<int>(scratch_columns);
            params.open = open;
            params.extend = setup_.scheme.gap_extend;
            params.profile_lengths = lengths.data() + 2 * k;
            params.free_ends = free_ends_;
            std::uint64_t real_cells = 0;
            for (std::size_t j = k; j < end; ++j)
                real_cells += (queries[plans[j].a]->size() + (plans[j].b >= 0 ? queries[plans[j].b]->size() : 0)) *
                              part.residues;
            const std::string name = search::dbscan_kernel_name(shape, linear, mode_prefix_);
            kernel_names.insert(name);
            ALIGNSCOPE_CUDA(cudaMemsetAsync(slot.counter.data(), 0, sizeof(unsigned int), slot.stream), where);
            timeline.record(slot.stream, {name, "kernel", lane, 0, real_cells}, [&] {
                ALIGNSCOPE_CUDA(search::launch_dbscan(shape, mode_, false, params, blocks, slot.stream), where);
            });
            const std::size_t out_bytes = n_plans * count * sizeof(std::uint32_t);
            timeline.record(slot.stream, {"D2H scores", "copy", lane, out_bytes, 0}, [&] {
                ALIGNSCOPE_CUDA(cudaMemcpyAsync(slot.host_out.data(), slot.out.data(), out_bytes, cudaMemcpyDeviceToHost,
                                                slot.stream), where);
            });
            ALIGNSCOPE_CUDA(cudaEventRecord(slot.done, slot.stream), where);
            slot.busy = true;
            slot.first_plan = k;
            slot.last_plan = end;
            slot.cells = real_cells;
            slot.partition = &part;
            k = end;
        }
        for (auto& s : slots_) collect(*s);
        // Rescoring needs this partition on the device, so it happens now.
        std::vector<Saturated> mine;
        for (const Saturated& s : saturated)
            if (s.position >= part.first && s.position < part.last) mine.push_back(s);
        if (!mine.empty()) {
            recompute(mine, part, queries, scores, timeline, slots_.front()->stream);
            stats_.recomputed += mine.size();
            kernel_names.insert(search::dbscan_kernel_name(DbscanShape{32, 16, true}, linear, mode_prefix_));
        }
        ++partitions_done;
        report(queries_finished);
    }
    for (auto& s : slots_) ALIGNSCOPE_CUDA(cudaEventRecord(ended, s->stream), where);
    ALIGNSCOPE_CUDA(cudaDeviceSynchronize(), where);
    float ms = 0;
    ALIGNSCOPE_CUDA(cudaEventElapsedTime(&ms, began, ended), where);
    timeline.flush();
    if (context.timeline) context.timeline->set_clock_source(timeline.clock_source());
    stats_.kernel_seconds = ms / 1e3;
    if (score_beyond_32_bits(queries, scores, best_of_query))
        kernel_names.insert(KernelName{setup_.options.mode, linear, "reference", 0, KernelWidth::S64}.format());
    for (const std::string& n : kernel_names) stats_.kernels += (stats_.kernels.empty() ? "" : ",") + n;
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool CudaScanner::bounded_exact16(std::size_t query_length, std::int64_t query_best, std::size_t position) const {
    const long long m = static_cast<long long>(query_length);
    const long long n = database_->length(position);
    const long long o = setup_.scheme.gap_open;
    const long long lowest = search::lowest_cell(m, n, o, setup_.scheme.gap_extend, min_score_, free_ends_);
    const long long highest = search::highest_cell(m, n, max_score_, query_best, target_best_[position]);
    return search::bounded_exact(lowest, highest, o, max_score_, search::kNeg16, search::kTop16);
}

bool CudaScanner::holds32(std::size_t query_length, std::int64_t query_best, std::size_t position) const {
    const bool local = !bounded();
    const long long m = static_cast<long long>(query_length);
    const long long n = database_->length(position);
    const long long target_best = local ? m * std::max(0, max_score_) : target_best_[position];
    return search::exact32(local, m, n, setup_.scheme.gap_open, setup_.scheme.gap_extend, min_score_, max_score_,
                           local ? m * std::max(0, max_score_) : query_best, target_best, free_ends_);
}

bool CudaScanner::score_beyond_32_bits(std::span<const EncodedSequence* const> queries, std::span<std::int32_t> scores,
                                       const std::vector<std::int64_t>& best_of_query) {
    const PreparedDatabase& db = *database_;
    std::atomic<bool> any{false};
    for (std::size_t q = 0; q < queries.size(); ++q) {
        const EncodedSequence& query = *queries[q];
        // The whole database at once: the lowest bound falls as the sequence
        // grows, and no pair scores above length x largest score.
        const long long m = static_cast<long long>(query.size());
        const long long cap = m * std::max(0, max_score_);
        if (db.empty() || search::exact32(!bounded(), m, db.max_length(), setup_.scheme.gap_open,
                                          setup_.scheme.gap_extend, min_score_, max_score_, cap, cap, free_ends_))
            continue;
        parallel_chunks(db.size(), setup_.threads, [&](std::size_t begin, std::size_t end) {
            for (std::size_t p = begin; p < end; ++p) {
                if (holds32(query.size(), best_of_query[q], p)) continue;
                const EncodedSequence target = encode(db.residues_of(p), setup_.scheme.matrix, "database sequence");
                const ScoreAndEnd r = score_forward(query.data(), static_cast<std::int64_t>(query.size()), target.data(),
                                                    static_cast<std::int64_t>(target.size()), setup_.scheme,
                                                    setup_.options);
                if (r.score > INT32_MAX || r.score < INT32_MIN)
                    throw Error(info_.id + ": the score of query " + std::to_string(q + 1) +
                                " against database sequence '" + db.ids[p] + "' does not fit in 32 bits");
                scores[q * db.size() + p] = static_cast<std::int32_t>(r.score);
                any.store(true, std::memory_order_relaxed);
            }
        }, 64);
    }
    return any.load();
}

int CudaScanner::stream_count() const { return std::clamp(setup_.streams > 0 ? setup_.streams : 2, 1, 8); }

int CudaScanner::blocks_per_sm(const DbscanShape& shape, bool explicit_items) {
    const int key = shape.threads * 1000 + shape.rows * 2 + (shape.wide ? 1 : 0) + (explicit_items ? 100000 : 0) +
                    (bounded() ? 200000 : 0);
    if (auto it = occupancy_.find(key); it != occupancy_.end() && it->second.first == letters_) return it->second.second;
    const int blocks = search::dbscan_blocks_per_sm(shape, mode_, explicit_items, letters_);
    occupancy_[key] = {letters_, blocks};
    return blocks;
}

void CudaScanner::recompute(const std::vector<Saturated>& pairs, const Partition& part,
                            std::span<const EncodedSequence* const> queries, std::span<std::int32_t> scores,
                            GpuTimeline& timeline, cudaStream_t stream) {
    const CudaSite where = site("32-bit rescoring of " + std::to_string(pairs.size()) + " saturated pairs");
    const PreparedDatabase& db = *database_;
    // One 32-bit profile per query involved; items of `groups` sequences of one query.
    std::vector<Saturated> sorted = pairs;
    std::sort(sorted.begin(), sorted.end(), [](const Saturated& x, const Saturated& y) {
        return std::tie(x.query, x.position) < std::tie(y.query, y.position);
    });
    const DbscanShape shape{32, 16, true};
    const int groups = shape.groups_per_block();
    std::vector<ProfilePlan> plans;
    std::vector<std::int32_t> item_profile, item_positions;
    std::vector<std::size_t> entry_of_slot;  // index into sorted, per (item, group) slot; -1 none
    for (std::size_t k = 0; k < sorted.size();) {
        const int q = sorted[k].query;
        ProfilePlan plan;
        plan.a = q;
        plan.rows = static_cast<int>(queries[q]->size());
        if (bounded()) plan.rows = search::bounded_rows(plan.rows);
        plan.shape = shape;
        plan.tiles = (plan.rows + shape.tile_rows() - 1) / shape.tile_rows();
        const int profile = static_cast<int>(plans.size());
        plans.push_back(plan);
        while (k < sorted.size() && sorted[k].query == q) {
            item_profile.push_back(profile);
            for (int g = 0; g < groups; ++g) {
                if (k < sorted.size() && sorted[k].query == q) {
                    item_positions.push_back(static_cast<std::int32_t>(sorted[k].position - part.first));
                    entry_of_slot.push_back(k);
                    ++k;
                } else {
                    item_positions.push_back(-1);
                    entry_of_slot.push_back(static_cast<std::size_t>(-1));
                }
            }
        }
    }
    std::uint64_t words = 0;
    for (ProfilePlan& plan : plans) {
        plan.offset = words;
        words += static_cast<std::uint64_t>(plan.tiles) * letters_ * shape.tile_rows();
    }
    std::vector<std::uint32_t> host_profiles(words);
    std::vector<std::uint64_t> host_offsets;
    std::vector<std::int32_t> host_tiles;
    std::vector<std::int32_t> host_lengths;
    for (const ProfilePlan& plan : plans) {
        fill_profile(host_profiles.data() + plan.offset, plan, queries[plan.a], nullptr, setup_.scheme.matrix, letters_,
                     setup_.scheme.gap_open, true, bounded(), (free_ends_ & search::kFreeQueryBegin) != 0);
        host_offsets.push_back(plan.offset);
        host_tiles.push_back(plan.tiles);
        host_lengths.push_back(static_cast<std::int32_t>(queries[plan.a]->size()));
        host_lengths.push_back(0);
    }
    DeviceBuffer<std::uint32_t> profiles, out;
    DeviceBuffer<std::uint64_t> offsets;
    DeviceBuffer<std::int32_t> tiles, d_lengths, d_item_profile, d_item_positions;
    DeviceBuffer<unsigned int> counter;
    profiles.reserve(words, where);
    offsets.reserve(plans.size(), where);
    tiles.reserve(plans.size(), where);
    d_lengths.reserve(host_lengths.size(), where);
    d_item_profile.reserve(item_profile.size(), where);
    d_item_positions.reserve(item_positions.size(), where);
    out.reserve(item_positions.size(), where);
    counter.reserve(1, where);
    auto h2d = [&](void* to, const void* from, std::size_t bytes) {
        ALIGNSCOPE_CUDA(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream), where);
    };
    h2d(profiles.data(), host_profiles.data(), words * 4);
    h2d(offsets.data(), host_offsets.data(), host_offsets.size() * 8);
    h2d(tiles.data(), host_tiles.data(), host_tiles.size() * 4);
    h2d(d_lengths.data(), host_lengths.data(), host_lengths.size() * 4);
    h2d(d_item_profile.data(), item_profile.data(), item_profile.size() * 4);
    h2d(d_item_positions.data(), item_positions.data(), item_positions.size() * 4);
    ALIGNSCOPE_CUDA(cudaMemsetAsync(counter.data(), 0, sizeof(unsigned int), stream), where);

    const int per_sm = blocks_per_sm(shape, true);
    if (per_sm == 0) throw Error(info_.id + ": the 32-bit rescoring kernel cannot run on this device");
    const int blocks = static_cast<int>(std::min<std::size_t>(item_profile.size(), static_cast<std::size_t>(per_sm) * sm_count_));
    bool multi_tile = false;
    for (const ProfilePlan& plan : plans) multi_tile |= plan.tiles > 1;
    const std::uint64_t scratch_columns = round4(static_cast<std::uint64_t>(part.max_length)) + 4;
    if (multi_tile) scratch_.reserve(static_cast<std::uint64_t>(blocks) * groups * scratch_columns, where);
    DbscanParams params;
    params.residues = part.codes.data();
    params.starts = part.starts.data();
    params.lengths = part.lengths.data();
    params.db_count = static_cast<int>(part.last - part.first);
    params.profiles = profiles.data();
    params.profile_offsets = offsets.data();
    params.profile_tiles = tiles.data();
    params.letters = letters_;
    params.profile_count = static_cast<int>(plans.size());
    params.item_profile = d_item_profile.data();
    params.item_positions = d_item_positions.data();
    params.items = static_cast<int>(item_profile.size());
    params.out = out.data();
    params.next_item = counter.data();
    params.scratch = multi_tile ? scratch_.data() : nullptr;
    params.scratch_columns = static_cast<int>(scratch_columns);
    params.open = setup_.scheme.gap_open;
    params.extend = setup_.scheme.gap_extend;
    params.profile_lengths = d_lengths.data();
    params.free_ends = free_ends_;
    std::uint64_t cells = 0;
    for (const Saturated& s : sorted) cells += queries[s.query]->size() * db.length(s.position);
    timeline.record(stream, {search::dbscan_kernel_name(shape, setup_.scheme.linear(), mode_prefix_), "kernel", 0, 0, cells},
                    [&] { ALIGNSCOPE_CUDA(search::launch_dbscan(shape, mode_, true, params, blocks, stream), where); });
    std::vector<std::uint32_t> host_out(item_positions.size());
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(host_out.data(), out.data(), host_out.size() * 4, cudaMemcpyDeviceToHost, stream),
                    where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream), where);
    for (std::size_t slot = 0; slot < entry_of_slot.size(); ++slot) {
        if (entry_of_slot[slot] == static_cast<std::size_t>(-1)) continue;
        const Saturated& s = sorted[entry_of_slot[slot]];
        scores[static_cast<std::size_t>(s.query) * db.size() + s.position] = static_cast<std::int32_t>(host_out[slot]);
    }
}

}  // namespace alignscope::kernels
