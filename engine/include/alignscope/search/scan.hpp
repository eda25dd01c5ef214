// Score-only database scans: a DatabaseScanner holds one prepared database on
// its device and computes the best alignment score of each query against every
// database sequence. A ScannerRegistry knows the devices that can scan: the
// engine registers the CPU scanners ("cpu-ref" scalar, "cpu" parasail SIMD);
// the CUDA scanners ("gpu:N") are registered by kernels/ at start-up, the same
// way as the pairwise backends.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/search/database.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

// What a scan computes and with what resources.
struct ScanSetup {
    ScoringScheme scheme;
    AlignOptions options;                 // mode and free end gaps; traceback is ignored
    int threads = 0;                      // CPU worker threads; 0 = all cores
    int streams = 0;                      // GPU streams; 0 = the scanner's default
    std::uint64_t gpu_memory_budget = 0;  // bytes per device; 0 = 90 % of free memory
};

// How the last scan() went.
struct ScanStats {
    std::uint64_t cells = 0;  // sum of query length x database sequence length
    double seconds = 0;       // wall time of scan()
    // Time the device spent in the scan's kernels (GPU: first kernel start to
    // last kernel end of each launch, from CUDA events); equals `seconds` on CPUs.
    double kernel_seconds = 0;
    std::uint64_t recomputed = 0;  // query-sequence pairs rescored at 32 bits after 16-bit saturation
    std::string kernels;           // kernel/variant names used, comma-separated
};

class DatabaseScanner {
public:
    virtual ~DatabaseScanner() = default;
    virtual DeviceInfo info() const = 0;

    // Takes `database` for the following scans under `setup`: encodes it for
    // the matrix and, on a GPU, uploads it (once; it stays resident across
    // scans while it fits the memory budget, else it is streamed in
    // partitions during each scan). The database must outlive the scans.
    // Throws Error when the device cannot run this setup (e.g. an alignment
    // mode it does not implement), naming the device and the reason.
    virtual void load(const PreparedDatabase& database, const ScanSetup& setup, JobContext& context) = 0;

    // Scores (scaled) of every query against every database sequence:
    // scores[q * database.size() + position], 64-bit because a score may pass
    // 2^31 (long sequences under large substitution scores or penalties): a
    // device's narrower cells decide per pair whether they hold it and leave
    // the others to a 64-bit path. Queries are encoded for the setup's matrix.
    // Reports progress (cells, items = queries) and honours cancellation
    // within a second; kernels and copies go to the timeline.
    virtual void scan(std::span<const EncodedSequence* const> queries, std::span<std::int64_t> scores,
                      JobContext& context) = 0;

    virtual ScanStats last_stats() const = 0;

    // Returns once the last load() is done, raising its error: a scanner may
    // load in the background (the split scanner's devices each on a thread of
    // their own), and then its first scan waits for the load instead.
    virtual void wait_loaded() {}

    // Where load() and the scans' set-up spent their time, for --stats (e.g.
    // a GPU's context start, the database's layout and upload); empty where
    // the scanner does not say.
    virtual std::string setup_stats() const { return {}; }
};

// Whether a scanner family implements a mode; the reason when it does not.
struct ScanCapability {
    bool supported = true;
    std::string reason;
};

class ScannerRegistry {
public:
    using Factory = std::function<std::unique_ptr<DatabaseScanner>()>;
    using Capability = std::function<ScanCapability(const ScanSetup&)>;

    // One device ("cpu-ref", "cpu", "gpu:0", ...); `capability` (optional)
    // says up front which setups it can scan.
    void add(DeviceInfo info, Factory factory, Capability capability = {});
    // A device kind that exists but cannot scan, and why.
    void add_unavailable(DeviceInfo info);

    std::vector<DeviceInfo> devices() const;
    bool has(std::string_view id) const;
    // "cpu-ref", "cpu", "gpu" (all GPUs), "gpu:N", "gpu:0,2", or "auto" (all
    // GPUs if any, else "cpu"). Several devices give one scanner that splits
    // the database among them and merges the scores. Throws Error naming
    // `flag` (the option that gave the spec) and listing the devices.
    std::unique_ptr<DatabaseScanner> create(std::string_view spec, std::string_view flag = "--device") const;
    // The device ids `spec` selects, without creating anything.
    std::vector<std::string> resolve(std::string_view spec, std::string_view flag = "--device") const;
    ScanCapability capability(std::string_view id, const ScanSetup& setup) const;

private:
    struct Entry {
        DeviceInfo info;
        Factory factory;
        Capability capability;
    };
    std::vector<Entry> entries_;
    std::vector<DeviceInfo> unavailable_;
};

// The engine's scanners: "cpu-ref" (the scalar reference recurrence, threaded
// over database sequences) and "cpu" (parasail striped/scan SIMD, 8 -> 16 ->
// 32-bit lanes on saturation, 64-bit scalar past them, threaded over database
// sequences).
std::unique_ptr<ScannerRegistry> make_cpu_scanner_registry();

// One scanner over several devices. When each can hold the whole database,
// every device loads it and a scan's queries are dealt out in chunks (big
// ones first) to whichever device is free, each writing its rows in place;
// otherwise the database is dealt out (every k-th sequence of the length
// order, so each gets the same mix of lengths) and the scores are merged.
// The environment's ALIGNSCOPE_SPLIT_SCAN ("queries" or "sequences") forces one.
std::unique_ptr<DatabaseScanner> make_split_scanner(std::vector<std::unique_ptr<DatabaseScanner>> parts);

}  // namespace alignscope
