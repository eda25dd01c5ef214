// The CUDA database scanner of one GPU (see db_scan_kernel.cuh for the kernel).
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
//    lengths cannot prove exact (bounded_exact16, db_scan_bounds.hpp).
#include "search/cuda_scanner.hpp"

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "common/gpu_timeline.hpp"
#include "common/host_parallel.hpp"
#include "search/db_encode.hpp"
#include "search/db_scan_launch.hpp"
#include "search/scan_plan.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <mutex>
#include <numeric>
#include <set>
#include <tuple>

namespace alignscope::kernels {
namespace {

using search::DbScanMode;
using search::DbScanParams;
using search::DbScanShape;
using search::ProfilePlan;

std::uint64_t round4(std::uint64_t v) { return (v + 3) & ~std::uint64_t{3}; }

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

}  // namespace

CudaScanner::CudaScanner(int device_index, DeviceInfo info) : device_(device_index), info_(std::move(info)) {}

struct CudaScanner::Partition {
    std::size_t first = 0, last = 0;  // database positions
    std::uint64_t residues = 0;
    int max_length = 0;
    double mean_length = 0;
    std::uint64_t code_bytes = 0;                // padded codes and the 16 pad bytes after them
    std::unique_ptr<std::uint8_t[]> host_codes;  // padded codes (kept only when streamed)
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

void CudaScanner::select_device() const { ALIGNSCOPE_CUDA(cudaSetDevice(device_), site("database scan")); }

namespace {

// Per byte its code under `matrix`, or -1 where the matrix does not score it.
std::array<std::int16_t, 256> code_table(const SubstitutionMatrix& matrix) {
    std::array<std::int16_t, 256> code{};
    for (int c = 0; c < 256; ++c)
        code[static_cast<std::size_t>(c)] = static_cast<std::int16_t>(matrix.index_of(static_cast<char>(c)));
    return code;
}

}  // namespace

// The starts (each sequence at a 4-byte boundary), lengths and sizes of the
// partition's positions, on the host; the padded codes' bytes.
std::uint64_t CudaScanner::describe_partition(Partition& part, const PreparedDatabase& database) {
    const std::size_t count = part.last - part.first;
    part.residues = 0;
    part.max_length = 0;
    part.host_starts.resize(count);
    part.host_lengths.resize(count);
    std::uint64_t at = 0;
    for (std::size_t p = part.first; p < part.last; ++p) {
        const std::uint32_t n = database.length(p);
        part.residues += n;
        part.max_length = std::max<int>(part.max_length, static_cast<int>(n));
        part.host_starts[p - part.first] = at;
        part.host_lengths[p - part.first] = static_cast<std::int32_t>(n);
        at += round4(n);
    }
    part.mean_length = static_cast<double>(part.residues) / static_cast<double>(std::max<std::size_t>(count, 1));
    part.code_bytes = at + 16;
    return part.code_bytes;
}

// The partition's padded codes on the host (a partition streamed through a
// device that cannot hold the whole database), written on several cores
// straight from the residues; false when a residue is not scored.
bool CudaScanner::fill_host_partition(Partition& part, const PreparedDatabase& database,
                                      const std::array<std::int16_t, 256>& code) const {
    const std::size_t count = part.last - part.first;
    const std::uint64_t at = part.code_bytes - 16;
    part.host_codes = std::make_unique_for_overwrite<std::uint8_t[]>(part.code_bytes);
    std::uint8_t* codes = part.host_codes.get();
    std::memset(codes + at, pad_code_, 16);
    std::atomic<bool> unscored{false};
    parallel_chunks(
        count, setup_.threads,
        [&](std::size_t from, std::size_t to) {
            bool bad = false;
            for (std::size_t k = from; k < to; ++k) {
                const std::size_t p = part.first + k;
                const std::uint32_t n = database.length(p);
                const auto* in = reinterpret_cast<const unsigned char*>(database.residues.data() + database.offsets[p]);
                std::uint8_t* out = codes + part.host_starts[k];
                for (std::uint32_t j = 0; j < n; ++j) {
                    const std::int16_t c = code[in[j]];
                    bad |= c < 0;
                    out[j] = static_cast<std::uint8_t>(c);
                }
                for (std::uint64_t j = n; j < round4(n); ++j) out[j] = pad_code_;
            }
            if (bad) unscored.store(true);
        },
        1024);
    return !unscored.load();
}

void CudaScanner::load(const PreparedDatabase& database, const ScanSetup& setup, JobContext& context) {
    const auto load_start = std::chrono::steady_clock::now();
    load_stats_ = {};
    const ScanCapability can = capability(setup);
    if (!can.supported) throw Error(info_.id + ": " + can.reason);
    // The device's context starts (tenths of a second) while the host encodes the database.
    std::future<double> started = std::async(std::launch::async, [this] {
        const auto start = std::chrono::steady_clock::now();
        select_device();
        ALIGNSCOPE_CUDA(cudaFree(nullptr), site("start-up"));
        return seconds_between(start, std::chrono::steady_clock::now());
    });
    const CudaSite where = site("loading database " + database.source);
    database_ = &database;
    setup_ = setup;
    const SubstitutionMatrix& matrix = setup.scheme.matrix;
    letters_ = matrix.size() + 1;
    pad_code_ = static_cast<std::uint8_t>(matrix.size());
    max_score_ = std::max(0, matrix.max_score());
    min_score_ = matrix.min_score();
    mode_ = setup.options.mode == AlignmentMode::Local ? DbScanMode::Local : DbScanMode::Bounded;
    mode_prefix_ = setup.options.mode == AlignmentMode::Local    ? "sw"
                   : setup.options.mode == AlignmentMode::Global ? "nw"
                                                                 : "sg";
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
    // The local kernel holds every cell plus a bias of open (db_scan_kernel.cuh),
    // which the 16-bit range pays for.
    saturation_bound_ = 32767 - max_score_ - (mode_ == DbScanMode::Local ? setup.scheme.gap_open : 0);

    // The whole database's layout (starts, lengths) before the device is up:
    // the layout of every database that fits, which is nearly all.
    const std::array<std::int16_t, 256> code = code_table(matrix);
    Partition whole;
    whole.first = 0;
    whole.last = database.size();
    describe_partition(whole, database);
    if (!compute_target_bests(database, code)) throw_unscored(database);
    load_stats_.prepare_seconds = seconds_between(load_start, std::chrono::steady_clock::now());
    const auto waiting = std::chrono::steady_clock::now();
    load_stats_.context_seconds = started.get();
    load_stats_.context_wait_seconds = seconds_between(waiting, std::chrono::steady_clock::now());
    const auto placing = std::chrono::steady_clock::now();
    select_device();
    place_partitions(database, std::move(whole), code, context, where);
    load_stats_.upload_seconds = seconds_between(placing, std::chrono::steady_clock::now());
    load_stats_.seconds = seconds_between(load_start, std::chrono::steady_clock::now());
}

// Bounded modes: per residue the best score it can take part in (as a query
// row and as a target column), and per database position the sum of its
// residues' best, for the upper bound of highest_cell.
// False when a residue is not scored by the matrix.
bool CudaScanner::compute_target_bests(const PreparedDatabase& database, const std::array<std::int16_t, 256>& code) {
    best_as_query_.clear();
    target_best_.clear();
    if (!bounded()) return true;
    const SubstitutionMatrix& matrix = setup_.scheme.matrix;
    const int size = matrix.size();
    best_as_query_.assign(static_cast<std::size_t>(size), 0);
    std::vector<int> best_as_target(static_cast<std::size_t>(size), 0);
    for (int a = 0; a < size; ++a)
        for (int b = 0; b < size; ++b) {
            best_as_query_[static_cast<std::size_t>(a)] =
                std::max(best_as_query_[static_cast<std::size_t>(a)], matrix.score(a, b));
            best_as_target[static_cast<std::size_t>(b)] =
                std::max(best_as_target[static_cast<std::size_t>(b)], matrix.score(a, b));
        }
    target_best_.resize(database.size());
    std::atomic<bool> unscored{false};
    parallel_chunks(
        database.size(), setup_.threads,
        [&](std::size_t from, std::size_t to) {
            for (std::size_t p = from; p < to; ++p) {
                std::int64_t sum = 0;
                for (const char c : database.residues_of(p)) {
                    const int letter = code[static_cast<unsigned char>(c)];
                    if (letter < 0) {
                        unscored.store(true);
                        continue;
                    }
                    sum += best_as_target[static_cast<std::size_t>(letter)];
                }
                target_best_[p] = sum;
            }
        },
        1024);
    return !unscored.load();
}

// The error for a database letter the matrix does not score, naming the
// first such residue and its sequence (encode_database's message).
void CudaScanner::throw_unscored(const PreparedDatabase& database) const {
    (void)encode_database(database, setup_.scheme.matrix);
    throw Error(info_.id + ": database " + database.source + " holds a letter matrix " + setup_.scheme.matrix.name() +
                " does not score");
}

// Once the device is up: the memory budget, the partitions (the whole
// database when it fits, uploaded now), and the scan's streams.
void CudaScanner::place_partitions(const PreparedDatabase& database, Partition whole,
                                   const std::array<std::int16_t, 256>& code, JobContext& context,
                                   const CudaSite& where) {
    if (info_.sm_count > 0) {
        sm_count_ = info_.sm_count;
    } else {
        cudaDeviceProp props{};
        ALIGNSCOPE_CUDA(cudaGetDeviceProperties(&props, device_), where);
        sm_count_ = props.multiProcessorCount;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    ALIGNSCOPE_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes), where);
    // Free memory counts what this scanner holds already (a reload).
    for (const auto& p : partitions_)
        if (p.resident) free_bytes += p.codes.bytes() + p.starts.bytes() + p.lengths.bytes();
    partitions_.clear();
    budget_ = setup_.gpu_memory_budget ? setup_.gpu_memory_budget
                                       : static_cast<std::uint64_t>(0.9 * static_cast<double>(free_bytes));
    // Working memory of a scan: outputs and their host copies, profiles, scratch.
    const std::uint64_t working = std::min<std::uint64_t>(budget_ / 3, 3ull << 30);
    const std::uint64_t for_database = budget_ > working ? budget_ - working : 0;
    std::uint64_t padded_total = 0;
    for (std::size_t p = 0; p < database.size(); ++p) padded_total += round4(database.length(p)) + 12;
    if (for_database < (64ull << 20))
        throw Error(info_.id + ": a GPU memory budget of " + std::to_string(budget_ >> 20) +
                    " MiB leaves too little for the database (raise --gpu-mem)");

    if (padded_total + database.residue_count() + 64 <= for_database) {
        // The letters go up beside the codes' buffer and become codes there.
        partitions_.push_back(std::move(whole));
        upload_encoded(partitions_.front(), database, code);
    } else if (padded_total + 64 <= for_database) {
        partitions_.push_back(std::move(whole));
        if (!fill_host_partition(partitions_.front(), database, code)) throw_unscored(database);
        upload(partitions_.front(), nullptr, nullptr);
    } else {
        // Each partition must fit together with the next one's upload.
        whole = {};
        const std::vector<std::pair<std::size_t, std::size_t>> ranges = database.partitions(for_database / 2);
        partitions_.resize(ranges.size());
        for (std::size_t k = 0; k < ranges.size(); ++k) {
            context.throw_if_cancelled();
            partitions_[k].first = ranges[k].first;
            partitions_[k].last = ranges[k].second;
            describe_partition(partitions_[k], database);
            if (!fill_host_partition(partitions_[k], database, code)) throw_unscored(database);
        }
        if (partitions_.size() == 1) upload(partitions_.front(), nullptr, nullptr);
    }
    prepare_slots(where);
}

// The whole database resident, encoded on the device: its letters (memory
// the host holds already) and offsets go up as they are, the layout's starts
// and lengths beside them, and search::launch_encode_padded writes the codes.
void CudaScanner::upload_encoded(Partition& part, const PreparedDatabase& database,
                                 const std::array<std::int16_t, 256>& code) {
    const CudaSite where = site("uploading the database");
    const std::size_t count = part.last - part.first;
    part.codes.reserve(part.code_bytes, where);
    part.starts.reserve(count, where);
    part.lengths.reserve(count, where);
    DeviceBuffer<char> letters;
    DeviceBuffer<std::uint64_t> offsets;
    DeviceBuffer<unsigned int> unscored;
    letters.reserve(std::max<std::size_t>(database.residue_count(), 1), where);
    offsets.reserve(count + 1, where);
    unscored.reserve(1, where);
    auto h2d = [&](void* to, const void* from, std::size_t bytes) {
        ALIGNSCOPE_CUDA(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), where);
    };
    h2d(letters.data(), database.residues.data(), database.residue_count());
    h2d(offsets.data(), database.offsets.data(), (count + 1) * sizeof(std::uint64_t));
    h2d(part.starts.data(), part.host_starts.data(), count * sizeof(std::uint64_t));
    h2d(part.lengths.data(), part.host_lengths.data(), count * sizeof(std::int32_t));
    ALIGNSCOPE_CUDA(cudaMemset(unscored.data(), 0, sizeof(unsigned int)), where);
    ALIGNSCOPE_CUDA(cudaMemset(part.codes.data() + part.code_bytes - 16, pad_code_, 16), where);
    search::CodeTable table{};
    std::copy(code.begin(), code.end(), table.code);
    ALIGNSCOPE_CUDA(search::launch_encode_padded(letters.data(), offsets.data(), part.starts.data(),
                                                 static_cast<int>(count), table, pad_code_, part.codes.data(),
                                                 unscored.data(), nullptr),
                    where);
    unsigned int bad = 0;
    ALIGNSCOPE_CUDA(cudaMemcpy(&bad, unscored.data(), sizeof bad, cudaMemcpyDeviceToHost), where);
    if (bad) throw_unscored(database);
    part.resident = true;
    std::vector<std::uint64_t>().swap(part.host_starts);
    std::vector<std::int32_t>().swap(part.host_lengths);
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
    part.codes.reserve(part.code_bytes, where);
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
    copy(part.codes.data(), part.host_codes.get(), part.code_bytes);
    copy(part.starts.data(), part.host_starts.data(), part.host_starts.size() * sizeof(std::uint64_t));
    copy(part.lengths.data(), part.host_lengths.data(), part.host_lengths.size() * sizeof(std::int32_t));
    if (stream) ALIGNSCOPE_CUDA(cudaStreamSynchronize(stream), where);
    part.resident = true;
    // A resident whole database needs no host copy.
    if (partitions_.size() == 1) {
        part.host_codes.reset();
        std::vector<std::uint64_t>().swap(part.host_starts);
        std::vector<std::int32_t>().swap(part.host_lengths);
    }
}

ScanCapability CudaScanner::capability(const ScanSetup& setup) {
    if (setup.scheme.matrix.size() + 1 > search::kMaxLetters)
        return {false, "matrix " + setup.scheme.matrix.name() + " has more than " +
                           std::to_string(search::kMaxLetters - 1) + " letters"};
    const int reach =
        std::max(std::abs(setup.scheme.matrix.min_score()), setup.scheme.matrix.max_score()) + setup.scheme.gap_open;
    if (reach > (1 << 26) || setup.scheme.gap_extend > (1 << 26))
        return {false, "scores or penalties too large for 32-bit cells"};
    return {};
}

namespace {

// Profile words of one plan: tiles x letters x tile rows; entry = (s + open)
// for lane a in the low half (or the whole word) and lane b in the high half.
// Local: query row i is padded row i, padding below. Bounded: the layout of
// db_scan_bounds.hpp (void rows, the DP's row 0, then the query at the bottom).
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

// One call of scan(): its queries, its plan and its running state, with the
// stages that turn them into scores.
struct CudaScanner::ScanCall {
    ScanCall(CudaScanner& s, std::span<const EncodedSequence* const> q, std::span<std::int64_t> out, JobContext& c,
             const PreparedDatabase& d, const CudaSite& w)
        : scanner(s), queries(q), scores(out), context(c), db(d), where(w) {}

    CudaScanner& scanner;
    std::span<const EncodedSequence* const> queries;
    std::span<std::int64_t> scores;
    JobContext& context;
    const PreparedDatabase& db;
    const CudaSite& where;
    std::vector<std::int64_t> best_of_query;
    search::ScanPlan plan;
    std::vector<std::uint32_t> host_profiles;
    std::vector<std::uint64_t> host_offsets;
    std::vector<std::int32_t> host_tiles, host_lengths;
    std::set<std::string> kernel_names;
    std::uint64_t cells_done = 0;
    std::size_t partitions_done = 0;
    std::size_t queries_finished = 0;  // in the last partition: nothing of theirs is left to scan
    std::vector<Saturated> saturated;
    std::mutex saturated_mutex;
    std::size_t next_slot = 0;

    void find_query_bests();
    search::ScanPlan make_plan();
    void fill_profiles();
    void upload_profiles(GpuTimeline& timeline, cudaStream_t first_stream);
    void report(std::size_t queries_done);
    void collect(Slot& slot);
    void read_scores(const Slot& slot, const ProfilePlan& profile, std::size_t k, std::vector<Saturated>& found);
    void reserve_buffers();
    void scan_partition(Partition& part, GpuTimeline& timeline, cudaStream_t first_stream);
    void launch(const search::LaunchRun& run, Partition& part, GpuTimeline& timeline);
    void rescore_saturated(const Partition& part, GpuTimeline& timeline);
};

// Bounded modes: every database sequence must have a last column, and each
// query's best score bounds its cells (db_scan_bounds.hpp).
void CudaScanner::ScanCall::find_query_bests() {
    best_of_query.assign(queries.size(), 0);
    if (!scanner.bounded()) return;
    // A lane takes its end cell at its last column: there must be one.
    for (std::size_t p = 0; p < db.size(); ++p)
        if (db.length(p) == 0) throw Error(scanner.info_.id + ": database sequence '" + db.ids[p] + "' is empty");
    for (std::size_t q = 0; q < queries.size(); ++q) best_of_query[q] = query_best(*queries[q], scanner.best_as_query_);
}

// Pairs of similar length (or singles with 32-bit cells), each on its shape.
search::ScanPlan CudaScanner::ScanCall::make_plan() {
    search::ScanPlanInputs in;
    for (const EncodedSequence* q : queries) in.query_lengths.push_back(q->size());
    in.narrow = scanner.narrow_;
    in.bounded = scanner.bounded();
    double mean_length = 0;
    for (const Partition& p : scanner.partitions_) mean_length += p.mean_length * static_cast<double>(p.last - p.first);
    in.mean_length = mean_length / static_cast<double>(db.size());
    int longest = 0;
    for (const Partition& p : scanner.partitions_) longest = std::max(longest, p.max_length);
    // Narrow groups' strips must also fit the working memory the budget keeps
    // for scans (see the constructor): at most half of it, every stream's set.
    in.short_strips = false;
    if (longest <= search::kShortStripLength) {
        int narrow_blocks = 0;
        for (const DbScanShape& shape : search::db_scan_shapes(!scanner.narrow_))
            if (shape.threads < search::ScanPolicy::full_group)
                narrow_blocks = std::max(narrow_blocks, scanner.blocks_per_sm(shape, false));
        in.short_strips = search::short_strips_fit(longest, narrow_blocks, scanner.stream_count(), scanner.sm_count_,
                                                   scanner.budget_);
    }
    in.letters = scanner.letters_;
    in.shapes = search::db_scan_shapes(!scanner.narrow_);
    in.blocks_per_sm = [this](const DbScanShape& shape) { return scanner.blocks_per_sm(shape, false); };
    in.device = scanner.info_.id;
    return search::plan_scan(in);
}

// The packed profiles and their offsets, tiles and lane lengths, on the host.
void CudaScanner::ScanCall::fill_profiles() {
    const std::vector<ProfilePlan>& plans = plan.profiles;
    host_profiles.assign(plan.words, 0);
    host_offsets.assign(plans.size(), 0);
    host_tiles.assign(plans.size(), 0);
    host_lengths.assign(2 * plans.size(), 0);
    const bool free_query_begin = (scanner.free_ends_ & search::kFreeQueryBegin) != 0;
    const SubstitutionMatrix& matrix = scanner.setup_.scheme.matrix;
    const int open = scanner.setup_.scheme.gap_open;
    parallel_chunks(
        plans.size(), scanner.setup_.threads,
        [&](std::size_t from, std::size_t to) {
            for (std::size_t k = from; k < to; ++k) {
                const ProfilePlan& p = plans[k];
                fill_profile(host_profiles.data() + p.offset, p, queries[p.a], p.b >= 0 ? queries[p.b] : nullptr,
                             matrix, scanner.letters_, open, !scanner.narrow_, scanner.bounded(), free_query_begin);
                host_offsets[k] = p.offset;
                host_tiles[k] = p.tiles;
                host_lengths[2 * k] = static_cast<std::int32_t>(queries[p.a]->size());
                host_lengths[2 * k + 1] = p.b >= 0 ? static_cast<std::int32_t>(queries[p.b]->size()) : 0;
            }
        },
        1);
}

void CudaScanner::ScanCall::upload_profiles(GpuTimeline& timeline, cudaStream_t first_stream) {
    const std::uint64_t words = plan.words;
    const std::size_t count = plan.profiles.size();
    DeviceBuffer<std::uint32_t>& profiles = scanner.profiles_;
    DeviceBuffer<std::uint64_t>& offsets = scanner.offsets_;
    DeviceBuffer<std::int32_t>& tiles = scanner.tiles_;
    DeviceBuffer<std::int32_t>& lengths = scanner.lengths_;
    profiles.reserve(std::max<std::uint64_t>(words, 1), where);
    offsets.reserve(count, where);
    tiles.reserve(count, where);
    lengths.reserve(2 * count, where);
    timeline.record(first_stream, {"H2D profiles", "copy", 0, words * 4, 0}, [&] {
        ALIGNSCOPE_CUDA(cudaMemcpyAsync(profiles.data(), host_profiles.data(), words * 4, cudaMemcpyHostToDevice,
                                        first_stream),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(offsets.data(), host_offsets.data(), count * 8, cudaMemcpyHostToDevice,
                                    first_stream),
                    where);
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(tiles.data(), host_tiles.data(), count * 4, cudaMemcpyHostToDevice, first_stream),
                    where);
    ALIGNSCOPE_CUDA(cudaMemcpyAsync(lengths.data(), host_lengths.data(), host_lengths.size() * 4,
                                    cudaMemcpyHostToDevice, first_stream),
                    where);
    ALIGNSCOPE_CUDA(cudaStreamSynchronize(first_stream), where);
}

void CudaScanner::ScanCall::report(std::size_t queries_done) {
    if (!context.progress) return;
    Progress p;
    p.cells_done = cells_done;
    p.cells_total = scanner.stats_.cells;
    p.items_done = queries_done;
    p.items_total = queries.size();
    context.progress(p);
}

// Turns a finished launch's scores into the caller's layout.
void CudaScanner::ScanCall::collect(Slot& slot) {
    if (!slot.busy) return;
    ALIGNSCOPE_CUDA(cudaEventSynchronize(slot.done), where);
    slot.busy = false;
    const Partition& part = *slot.partition;
    parallel_chunks(
        slot.last_plan - slot.first_plan, scanner.setup_.threads,
        [&](std::size_t from, std::size_t to) {
            std::vector<Saturated> found;
            for (std::size_t k = slot.first_plan + from; k < slot.first_plan + to; ++k)
                read_scores(slot, plan.profiles[k], k, found);
            if (!found.empty()) {
                std::lock_guard lock(saturated_mutex);
                saturated.insert(saturated.end(), found.begin(), found.end());
            }
        },
        1);
    cells_done += slot.cells;
    if (&part == &scanner.partitions_.back())
        for (std::size_t k = slot.first_plan; k < slot.last_plan; ++k)
            queries_finished += plan.profiles[k].b >= 0 ? 2 : 1;
    report(queries_finished);
}

// One profile's row of scores (profile k of the slot's launch) into the
// caller's layout; the pairs to rescore at 32 bits go to `found`.
void CudaScanner::ScanCall::read_scores(const Slot& slot, const ProfilePlan& profile, std::size_t k,
                                        std::vector<Saturated>& found) {
    const Partition& part = *slot.partition;
    const std::size_t count = part.last - part.first;
    const std::uint32_t* row = slot.host_out.data() + (k - slot.first_plan) * count;
    std::int64_t* out_a = scores.data() + static_cast<std::size_t>(profile.a) * db.size() + part.first;
    if (!scanner.narrow_) {
        for (std::size_t p = 0; p < count; ++p) out_a[p] = static_cast<std::int32_t>(row[p]);
        return;
    }
    std::int64_t* out_b =
        profile.b >= 0 ? scores.data() + static_cast<std::size_t>(profile.b) * db.size() + part.first : nullptr;
    if (scanner.bounded()) {
        // Exactness is proven per pair from the lengths, not read off the score.
        const std::size_t m_a = queries[profile.a]->size();
        const std::size_t m_b = profile.b >= 0 ? queries[profile.b]->size() : 0;
        const std::int64_t best_a = best_of_query[static_cast<std::size_t>(profile.a)];
        const std::int64_t best_b = profile.b >= 0 ? best_of_query[static_cast<std::size_t>(profile.b)] : 0;
        for (std::size_t p = 0; p < count; ++p) {
            const std::size_t position = part.first + p;
            out_a[p] = static_cast<std::int16_t>(row[p] & 0xffffu);
            if (!scanner.bounded_exact16(m_a, best_a, position)) found.push_back({profile.a, position});
            if (out_b) {
                out_b[p] = static_cast<std::int16_t>(row[p] >> 16);
                if (!scanner.bounded_exact16(m_b, best_b, position)) found.push_back({profile.b, position});
            }
        }
        return;
    }
    for (std::size_t p = 0; p < count; ++p) {
        const std::int32_t lo = static_cast<std::int16_t>(row[p] & 0xffffu);
        const std::int32_t hi = static_cast<std::int16_t>(row[p] >> 16);
        out_a[p] = lo;
        if (lo > scanner.saturation_bound_) found.push_back({profile.a, part.first + p});
        if (out_b) {
            out_b[p] = hi;
            if (hi > scanner.saturation_bound_) found.push_back({profile.b, part.first + p});
        }
    }
}

// Every slot's buffers at the size of the call's largest launch, before the
// first: growing one between launches frees the old buffer, and cudaFree
// waits for the kernels running on the other streams.
void CudaScanner::ScanCall::reserve_buffers() {
    const auto growing = std::chrono::steady_clock::now();
    std::size_t most_scores = 0;
    std::uint64_t most_strips = 0;
    for (const Partition& part : scanner.partitions_) {
        const std::size_t count = part.last - part.first;
        const std::uint64_t scratch_columns = round4(static_cast<std::uint64_t>(part.max_length)) + 4;
        for (const search::LaunchRun& run : search::plan_launches(plan.profiles, count, part.residues)) {
            const std::size_t n_plans = run.last - run.first;
            most_scores = std::max(most_scores, n_plans * count);
            if (!run.multi_tile) continue;
            const DbScanShape shape = plan.profiles[run.first].shape;
            const int per_sm = scanner.blocks_per_sm(shape, false);
            if (per_sm == 0) continue;  // launch() names the shape that cannot run
            const search::LaunchGeometry geometry =
                search::launch_geometry(shape, n_plans, count, per_sm, scanner.sm_count_, scanner.info_.id);
            const std::uint64_t strips = static_cast<std::uint64_t>(geometry.blocks) * shape.groups_per_block();
            most_strips = std::max(most_strips, strips * scratch_columns);
        }
    }
    for (auto& slot : scanner.slots_) {
        slot->out.reserve(most_scores, where);
        slot->host_out.reserve(most_scores, where);
        if (most_strips) slot->scratch.reserve(most_strips, where);
    }
    scanner.load_stats_.buffer_seconds += seconds_between(growing, std::chrono::steady_clock::now());
}

// Every launch over one partition (uploaded first when streamed), then the
// rescoring of its saturated pairs while it is on the device.
void CudaScanner::ScanCall::scan_partition(Partition& part, GpuTimeline& timeline, cudaStream_t first_stream) {
    if (!part.resident) {
        for (auto& s : scanner.slots_) collect(*s);
        scanner.upload(part, &timeline, first_stream);
    }
    // Launches over runs of plans with one shape.
    for (const search::LaunchRun& run : search::plan_launches(plan.profiles, part.last - part.first, part.residues)) {
        context.throw_if_cancelled();
        launch(run, part, timeline);
    }
    for (auto& s : scanner.slots_) collect(*s);
    rescore_saturated(part, timeline);
    ++partitions_done;
    report(queries_finished);
}

// One launch on the next slot (whose previous launch is collected first):
// the kernel over the run's profiles, then its scores back to the host.
void CudaScanner::ScanCall::launch(const search::LaunchRun& run, Partition& part, GpuTimeline& timeline) {
    const std::size_t count = part.last - part.first;
    const std::uint64_t scratch_columns = round4(static_cast<std::uint64_t>(part.max_length)) + 4;
    const DbScanShape shape = plan.profiles[run.first].shape;
    Slot& slot = *scanner.slots_[next_slot];
    const int lane = static_cast<int>(next_slot);
    next_slot = (next_slot + 1) % scanner.slots_.size();
    collect(slot);
    const std::size_t n_plans = run.last - run.first;
    const auto growing = std::chrono::steady_clock::now();
    slot.out.reserve(n_plans * count, where);  // reserve_buffers() made room already
    slot.host_out.reserve(n_plans * count, where);
    const int per_sm = scanner.blocks_per_sm(shape, false);
    if (per_sm == 0)
        throw Error(scanner.info_.id + ": the scan kernel for " + std::to_string(shape.threads) + "x" +
                    std::to_string(shape.rows) + " tiles cannot run with " + std::to_string(scanner.letters_) +
                    " letters on this device");
    const search::LaunchGeometry geometry =
        search::launch_geometry(shape, n_plans, count, per_sm, scanner.sm_count_, scanner.info_.id);
    if (run.multi_tile) {
        const std::uint64_t strips = static_cast<std::uint64_t>(geometry.blocks) * shape.groups_per_block();
        slot.scratch.reserve(strips * scratch_columns, where);
    }
    scanner.load_stats_.buffer_seconds += seconds_between(growing, std::chrono::steady_clock::now());
    DbScanParams params;
    params.residues = part.codes.data();
    params.starts = part.starts.data();
    params.lengths = part.lengths.data();
    params.db_count = static_cast<int>(count);
    params.profiles = scanner.profiles_.data();
    params.profile_offsets = scanner.offsets_.data() + run.first;
    params.profile_tiles = scanner.tiles_.data() + run.first;
    params.letters = scanner.letters_;
    params.profile_count = static_cast<int>(n_plans);
    params.chunks = geometry.chunks;
    params.out = slot.out.data();
    params.next_item = slot.counter.data();
    params.scratch = run.multi_tile ? slot.scratch.data() : nullptr;
    params.scratch_columns = static_cast<int>(scratch_columns);
    params.open = scanner.setup_.scheme.gap_open;
    params.extend = scanner.setup_.scheme.gap_extend;
    params.profile_lengths = scanner.lengths_.data() + 2 * run.first;
    params.free_ends = scanner.free_ends_;
    std::uint64_t real_cells = 0;
    for (std::size_t j = run.first; j < run.last; ++j) {
        const ProfilePlan& p = plan.profiles[j];
        real_cells += (queries[p.a]->size() + (p.b >= 0 ? queries[p.b]->size() : 0)) * part.residues;
    }
    const std::string name = search::db_scan_kernel_name(shape, scanner.setup_.scheme.linear(), scanner.mode_prefix_);
    kernel_names.insert(name);
    ALIGNSCOPE_CUDA(cudaMemsetAsync(slot.counter.data(), 0, sizeof(unsigned int), slot.stream), where);
    timeline.record(slot.stream, {name, "kernel", lane, 0, real_cells}, [&] {
        ALIGNSCOPE_CUDA(search::launch_db_scan(shape, scanner.mode_, false, params, geometry.blocks, slot.stream),
                        where);
    });
    const std::size_t out_bytes = n_plans * count * sizeof(std::uint32_t);
    timeline.record(slot.stream, {"D2H scores", "copy", lane, out_bytes, 0}, [&] {
        ALIGNSCOPE_CUDA(cudaMemcpyAsync(slot.host_out.data(), slot.out.data(), out_bytes, cudaMemcpyDeviceToHost,
                                        slot.stream),
                        where);
    });
    ALIGNSCOPE_CUDA(cudaEventRecord(slot.done, slot.stream), where);
    slot.busy = true;
    slot.first_plan = run.first;
    slot.last_plan = run.last;
    slot.cells = real_cells;
    slot.partition = &part;
}

// Rescoring needs the partition on the device, so it happens before the next.
void CudaScanner::ScanCall::rescore_saturated(const Partition& part, GpuTimeline& timeline) {
    std::vector<Saturated> mine;
    for (const Saturated& s : saturated)
        if (s.position >= part.first && s.position < part.last) mine.push_back(s);
    if (mine.empty()) return;
    scanner.recompute(mine, part, queries, scores, timeline, scanner.slots_.front()->stream);
    scanner.stats_.recomputed += mine.size();
    kernel_names.insert(
        search::db_scan_kernel_name(search::rescore_shape(), scanner.setup_.scheme.linear(), scanner.mode_prefix_));
}

// One slot (stream, event, work counter) per stream, kept across scans.
void CudaScanner::prepare_slots(const CudaSite& where) {
    const int streams = stream_count();
    if (static_cast<int>(slots_.size()) == streams) return;
    release_slots();
    for (int k = 0; k < streams; ++k) {
        auto slot = std::make_unique<Slot>();
        ALIGNSCOPE_CUDA(cudaStreamCreateWithFlags(&slot->stream, cudaStreamNonBlocking), where);
        ALIGNSCOPE_CUDA(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), where);
        slot->counter.reserve(1, where);
        slots_.push_back(std::move(slot));
    }
}

void CudaScanner::scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
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
    ScanCall call(*this, queries, scores, context, db, where);
    call.find_query_bests();
    call.plan = call.make_plan();
    call.fill_profiles();

    GpuTimeline timeline(context.timeline, info_.id, where);
    prepare_slots(where);
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
    call.reserve_buffers();
    cudaStream_t first_stream = slots_.front()->stream;
    call.upload_profiles(timeline, first_stream);
    ALIGNSCOPE_CUDA(cudaEventRecord(began, first_stream), where);

    for (Partition& part : partitions_) call.scan_partition(part, timeline, first_stream);
    for (auto& s : slots_) ALIGNSCOPE_CUDA(cudaEventRecord(ended, s->stream), where);
    ALIGNSCOPE_CUDA(cudaDeviceSynchronize(), where);
    float ms = 0;
    ALIGNSCOPE_CUDA(cudaEventElapsedTime(&ms, began, ended), where);
    timeline.flush();
    if (context.timeline) context.timeline->set_clock_source(timeline.clock_source());
    stats_.kernel_seconds = ms / 1e3;
    if (score_beyond_32_bits(queries, scores, call.best_of_query))
        call.kernel_names.insert(
            KernelName{setup_.options.mode, setup_.scheme.linear(), "reference", 0, KernelWidth::S64}.format());
    for (const std::string& n : call.kernel_names) stats_.kernels += (stats_.kernels.empty() ? "" : ",") + n;
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string CudaScanner::setup_stats() const {
    std::uint64_t pinned = 0;
    for (const auto& s : slots_) pinned += s->host_out.bytes();
    char text[320];
    std::snprintf(text, sizeof text,
                  "%s load %.3f s (database laid out %.3f s beside the context's start %.3f s, waited %.3f s for "
                  "it; budget, buffers, upload and streams %.3f s), scan buffers grown %.3f s (%.0f MiB pinned)",
                  info_.id.c_str(), load_stats_.seconds, load_stats_.prepare_seconds, load_stats_.context_seconds,
                  load_stats_.context_wait_seconds, load_stats_.upload_seconds, load_stats_.buffer_seconds,
                  static_cast<double>(pinned) / static_cast<double>(1 << 20));
    return text;
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

bool CudaScanner::score_beyond_32_bits(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
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
        parallel_chunks(
            db.size(), setup_.threads,
            [&](std::size_t begin, std::size_t end) {
                for (std::size_t p = begin; p < end; ++p) {
                    if (holds32(query.size(), best_of_query[q], p)) continue;
                    const EncodedSequence target = encode(db.residues_of(p), setup_.scheme.matrix, "database sequence");
                    const ScoreAndEnd r =
                        score_forward(query.data(), static_cast<std::int64_t>(query.size()), target.data(),
                                      static_cast<std::int64_t>(target.size()), setup_.scheme, setup_.options);
                    scores[q * db.size() + p] = r.score;
                    any.store(true, std::memory_order_relaxed);
                }
            },
            64);
    }
    return any.load();
}

int CudaScanner::stream_count() const { return std::clamp(setup_.streams > 0 ? setup_.streams : 2, 1, 8); }

int CudaScanner::blocks_per_sm(const DbScanShape& shape, bool explicit_items) {
    const int key = shape.threads * 1000 + shape.rows * 2 + (shape.wide ? 1 : 0) + (explicit_items ? 100000 : 0) +
                    (bounded() ? 200000 : 0);
    if (auto it = occupancy_.find(key); it != occupancy_.end() && it->second.first == letters_)
        return it->second.second;
    const int blocks = search::db_scan_blocks_per_sm(shape, mode_, explicit_items, letters_);
    occupancy_[key] = {letters_, blocks};
    return blocks;
}

void CudaScanner::recompute(const std::vector<Saturated>& pairs, const Partition& part,
                            std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
                            GpuTimeline& timeline, cudaStream_t stream) {
    const CudaSite where = site("32-bit rescoring of " + std::to_string(pairs.size()) + " saturated pairs");
    const PreparedDatabase& db = *database_;
    // One 32-bit profile per query involved; items of `groups` sequences of one query.
    std::vector<Saturated> sorted = pairs;
    std::sort(sorted.begin(), sorted.end(), [](const Saturated& x, const Saturated& y) {
        return std::tie(x.query, x.position) < std::tie(y.query, y.position);
    });
    const DbScanShape shape = search::rescore_shape();
    const int groups = shape.groups_per_block();
    std::vector<std::size_t> query_lengths;
    for (const EncodedSequence* q : queries) query_lengths.push_back(q->size());
    const search::RescorePlan rescore =
        search::plan_rescoring(sorted, query_lengths, bounded(), shape, letters_, part.first);
    const std::vector<ProfilePlan>& plans = rescore.profiles;
    const std::vector<std::int32_t>& item_profile = rescore.item_profile;
    const std::vector<std::int32_t>& item_positions = rescore.item_positions;
    const std::vector<std::size_t>& entry_of_slot = rescore.entry_of_slot;
    const std::uint64_t words = rescore.words;
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
    const int blocks =
        static_cast<int>(std::min<std::size_t>(item_profile.size(), static_cast<std::size_t>(per_sm) * sm_count_));
    bool multi_tile = false;
    for (const ProfilePlan& plan : plans) multi_tile |= plan.tiles > 1;
    const std::uint64_t scratch_columns = round4(static_cast<std::uint64_t>(part.max_length)) + 4;
    if (multi_tile) scratch_.reserve(static_cast<std::uint64_t>(blocks) * groups * scratch_columns, where);
    DbScanParams params;
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
    timeline.record(stream,
                    {search::db_scan_kernel_name(shape, setup_.scheme.linear(), mode_prefix_), "kernel", 0, 0, cells},
                    [&] {
                        ALIGNSCOPE_CUDA(search::launch_db_scan(shape, mode_, true, params, blocks, stream), where);
                    });
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
