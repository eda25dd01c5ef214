// `bench --long`: the long-pair path (align_long_on) on pairs of growing length
// grown from a real genome (generate_long_pair), per strategy and stream
// count. Each point runs the pair twice: without traceback (stage 1 and the
// stage-2 search for the begin) and with it (the full alignment), and reports
// stage-1 GCUPS (m x n / stage-1 seconds), end-to-end seconds, the stages 2-3
// time as a multiple of stage 1, and the host's peak resident memory.
//
// Scheme: CUDAlign's (match +1, mismatch -3, gap of length k costs 5 + 2(k-1)),
// local by default. On backends without a long-pair runner (CPU: Myers-Miller
// in linear space) there are no stages: "stage 1" is the run without
// traceback and "stages 2-3" the rest of the run with it.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/bench/bench.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace alignscope {

struct LongBenchOptions {
    std::vector<std::int64_t> lengths;                         // square pairs; empty = default_long_lengths(device)
    std::vector<std::string> strategies{"strips", "streams"};  // GPU runners only
    std::vector<int> streams{1, 2, 4};                         // the "streams" strategy's stream counts
    int kernels = 0;                                           // kernels of the "streams" strategy; 0 = backend default
    std::uint64_t gpu_memory_budget = 0;
    std::uint64_t special_row_budget = 0;  // 0 = LongPairOptions' default
    std::string kernel;                    // forced variant; empty = automatic
    AlignOptions align = [] {
        AlignOptions o;
        o.mode = AlignmentMode::Local;
        return o;
    }();
    int threads = 0;  // CPU threads (stage 3 tracebacks); 0 = all cores
    std::uint64_t seed = 1;
    std::string seed_genome;  // FASTA; empty = the lambda genome
};

// 10k, 100k, 1M, 5M on GPUs; 10k, 30k on CPUs (seconds, not hours).
std::vector<std::int64_t> default_long_lengths(const DeviceInfo& device);

// The scheme bench --long uses.
ScoringScheme long_bench_scheme();

struct LongBenchPoint {
    std::int64_t length = 0;
    std::string strategy;  // "strips", "streams", or "linear-space" (CPU)
    int streams = 0;       // 0: not applicable / backend default
    std::string device, device_name, kernel;
    std::string mode;         // describe_mode(): "local", ...
    std::uint64_t cells = 0;  // m x n
    std::int64_t score = 0;   // scaled
    double stage1_seconds = 0;
    double score_only_seconds = 0;  // end to end, without traceback
    double full_seconds = 0;        // end to end, with traceback
    double later_seconds = 0;       // stages 2-3 of the full run
    double stage1_gcups = 0;
    double later_ratio = 0;  // later_seconds / stage1_seconds
    std::uint64_t peak_rss_bytes = 0;
    std::string rss_measure;  // "VmHWM reset per point" or "process peak (getrusage)"
    longpair::LongPairStats score_only_stats, full_stats;
};

struct LongBenchReport {
    DeviceInfo device;
    std::string seed_genome;
    std::vector<LongBenchPoint> points;
    std::vector<std::string> notes;
};

struct LongBenchCallbacks {
    std::function<void(const LongBenchPoint&)> point;
    std::function<void(const std::string&)> note;
    std::function<void(const std::string&)> starting;  // "100k streams s=2: without traceback"
};

// Runs every length x strategy (x stream count for "streams") on `backend`.
// `context` carries progress (per run), cancel and timeline. Throws Error for
// bad options, Cancelled.
LongBenchReport run_long_bench(Backend& backend, const LongBenchOptions& options, const LongBenchCallbacks& callbacks,
                               const JobContext& context);

// The point as a bench point (JSON report, project): series
// "long/<strategy>[/s<streams>]", x = length, cells, seconds = full run,
// gcups_e2e = cells / full seconds, gcups_kernel = stage-1 GCUPS; the rest in
// parameters.
BenchPoint to_bench_point(const LongBenchPoint& point);

// Peak resident memory of this process since the last reset_peak_rss(), in
// bytes, and how it was measured.
void reset_peak_rss();
std::uint64_t peak_rss_bytes(std::string* how = nullptr);

}  // namespace alignscope
