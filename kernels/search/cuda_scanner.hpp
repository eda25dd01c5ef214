// The CUDA database scanner of one GPU: holds the length-sorted database on
// the device (streamed in partitions when it does not fit) and scans query
// pairs against it with the 16-bit DPX kernel, rescoring saturated pairs with
// 32-bit cells. Local, global and semi-global alignment (any free end gaps),
// affine or linear gaps; see db_scan_bounds.hpp for how the bounded modes'
// scores are read and when their 16-bit scores are exact.
#pragma once

#include "common/cuda_check.hpp"
#include "common/device_memory.hpp"
#include "search/db_scan_launch.hpp"
#include "search/scan_plan.hpp"

#include <alignscope/search/scan.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace alignscope::kernels {

class GpuTimeline;

class CudaScanner : public DatabaseScanner {
public:
    CudaScanner(int device_index, DeviceInfo info);
    ~CudaScanner() override;
    CudaScanner(const CudaScanner&) = delete;
    CudaScanner& operator=(const CudaScanner&) = delete;

    DeviceInfo info() const override { return info_; }
    void load(const PreparedDatabase& database, const ScanSetup& setup, JobContext& context) override;
    void scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
              JobContext& context) override;
    ScanStats last_stats() const override { return stats_; }
    std::string setup_stats() const override;

    // What this scanner can run (registered with the scanner registry).
    static ScanCapability capability(const ScanSetup& setup);

private:
    struct Partition;
    struct Slot;
    struct ScanCall;                        // one call of scan() and its stages
    using Saturated = search::RescorePair;  // a pair to rescore with 32-bit cells

    // Seconds of the last load() and of the scans' buffers, for setup_stats().
    struct LoadStats {
        double seconds = 0;               // the whole load()
        double prepare_seconds = 0;       // host layout of the database (beside the context's start)
        double context_seconds = 0;       // the context's start (cudaFree(nullptr) on a thread of its own)
        double context_wait_seconds = 0;  // what the load waited for it after its host work
        double upload_seconds = 0;        // budget, device buffers, copies, streams
        double buffer_seconds = 0;        // scans: device and pinned buffers grown
    };

    CudaSite site(const std::string& job) const;
    static std::uint64_t describe_partition(Partition& part, const PreparedDatabase& database);
    bool fill_host_partition(Partition& part, const PreparedDatabase& database,
                             const std::array<std::int16_t, 256>& code) const;
    bool compute_target_bests(const PreparedDatabase& database, const std::array<std::int16_t, 256>& code);
    [[noreturn]] void throw_unscored(const PreparedDatabase& database) const;
    void upload_encoded(Partition& part, const PreparedDatabase& database, const std::array<std::int16_t, 256>& code);
    void place_partitions(const PreparedDatabase& database, Partition whole, const std::array<std::int16_t, 256>& code,
                          JobContext& context, const CudaSite& where);
    void select_device() const;
    void upload(Partition& part, GpuTimeline* timeline, cudaStream_t stream);
    void release_slots();
    // One slot (stream, event, work counter) per stream, kept across scans.
    void prepare_slots(const CudaSite& where);
    int blocks_per_sm(const search::DbScanShape& shape, bool explicit_items);
    // Streams (and slots) of a scan: --streams, 2 by default, at most 8.
    int stream_count() const;
    bool bounded() const { return mode_ == search::DbScanMode::Bounded; }
    // Bounded modes: whether a 16-bit score of `query` against database
    // sequence `position` is proven exact (db_scan_bounds.hpp).
    bool bounded_exact16(std::size_t query_length, std::int64_t query_best, std::size_t position) const;
    // Whether the 32-bit cells hold `query` against database sequence
    // `position` exactly (db_scan_bounds.hpp, exact32).
    bool holds32(std::size_t query_length, std::int64_t query_best, std::size_t position) const;
    // The pairs they cannot hold, scored on the host with the 64-bit scalar
    // recurrence (the cpu-ref scanner's) after the GPU's pass; whether there
    // were any.
    bool score_beyond_32_bits(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
                              const std::vector<std::int64_t>& best_of_query);
    void recompute(const std::vector<Saturated>& pairs, const Partition& part,
                   std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
                   GpuTimeline& timeline, cudaStream_t stream);

    int device_;
    DeviceInfo info_;
    const PreparedDatabase* database_ = nullptr;
    ScanSetup setup_;
    int letters_ = 0;
    std::uint8_t pad_code_ = 0;
    int max_score_ = 0;
    int min_score_ = 0;
    bool narrow_ = true;
    search::DbScanMode mode_ = search::DbScanMode::Local;
    int free_ends_ = 0;                      // kFree* bits of a semi-global scan
    const char* mode_prefix_ = "sw";         // kernel names: sw, nw or sg
    std::vector<int> best_as_query_;         // per letter: its best score against any letter (bounded modes)
    std::vector<std::int64_t> target_best_;  // per database position: sum of its residues' best scores
    int saturation_bound_ = 32767;
    int sm_count_ = 1;
    std::uint64_t budget_ = 0;
    std::vector<Partition> partitions_;
    DeviceBuffer<uint2> scratch_;               // strips of the 32-bit rescoring pass
    std::vector<std::unique_ptr<Slot>> slots_;  // one per stream, kept across scans
    DeviceBuffer<std::uint32_t> profiles_;
    DeviceBuffer<std::uint64_t> offsets_;
    DeviceBuffer<std::int32_t> tiles_;
    DeviceBuffer<std::int32_t> lengths_;            // bounded: query lengths of each profile's two lanes
    std::map<int, std::pair<int, int>> occupancy_;  // shape key -> (letters, blocks per SM)
    ScanStats stats_;
    LoadStats load_stats_;
};

}  // namespace alignscope::kernels
