// `bench`: throughput of the backends, measured the same way on every device in
// the same run: the standard cases (the batched-pair targets) and sweeps over pair length,
// batch size, stream count and kernel. Each point records cells, the median
// wall time of align_pairs, GCUPS end to end and, where the backend reports
// kernel events, kernel-only GCUPS, with the device and the build.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/store/results.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace alignscope {

// One synthetic workload: every pair has exactly these lengths, so cells are
// pairs x query_length x target_length. Sequences are drawn from a fixed seed
// (see random_residues); targets are mutated copies of the queries, fitted to
// their length, so alignments have realistic paths for the traceback.
struct BenchCase {
    std::string name;  // stable series name, e.g. "protein-300x300-local-score"
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::string matrix = "BLOSUM62";       // built-in name; empty = match/mismatch
    int match = 0, mismatch = 0;           // used when matrix is empty
    double gap_open = 11, gap_extend = 1;  // user units, our convention
    AlignOptions options;
    std::int64_t query_length = 300, target_length = 300;
    double substitution_rate = 0.35;  // of the target against its query
    double indel_rate = 0.02;

    ScoringScheme scheme() const;
    // e.g. "protein BLOSUM62 gap 11/1 local 300x300, score and coordinates"
    std::string describe() const;
};

// The standard cases: protein BLOSUM62 gap 11/1 local 300x300 score-only and with
// traceback; DNA 150-base reads against 250-base windows, local, traceback
// (match 2, mismatch -3, gap 7/2: BLASTN's defaults, 5/2 in BLAST's convention).
std::vector<BenchCase> standard_bench_cases();

struct BenchPoint {
    std::string series;       // the case name, prefixed by the sweep: "length-sweep/protein-local-score"
    std::string device;       // "gpu:0", "cpu", ...
    std::string device_name;  // DeviceInfo::name
    std::string kernel;       // kernel(s) the results name, comma-separated; the forced one in a kernel sweep
    std::string x_name;       // "pairs", "length", "streams" or "kernel"
    double x_value = 0;       // for "kernel": the index in the swept list
    std::uint64_t pairs = 0;
    std::uint64_t cells = 0;
    double seconds = 0;               // median end-to-end wall time of align_pairs, no timeline
    std::vector<double> run_seconds;  // every timed run, in order
    // GPU: the wall times of the runs made with the kernels' timeline on
    // (kernel_seconds and host_seconds come from these).
    std::vector<double> profiled_run_seconds;
    double gcups_e2e = 0;                  // cells / seconds / 1e9
    std::optional<double> kernel_seconds;  // median time any kernel was running (union of intervals)
    std::optional<double> gcups_kernel;    // cells / kernel_seconds / 1e9
    std::string kernel_timing;             // how kernel_seconds was measured, or why there is none
    std::string clock_source;  // the clock of the last timed run's timeline: cupti, cuda-events, steady-clock
    // Host work of the last recorded run by phase (a GPU backend's "host" timeline
    // events: encode, plan, pack, wait, results), seconds summed per phase.
    std::map<std::string, double> host_seconds;
    std::map<std::string, std::string> parameters;  // matrix, gaps, mode, lengths, streams, threads, seed, ...
};

struct BenchOptions {
    std::uint64_t gpu_pairs = 1'000'000;  // pairs per standard case on a GPU
    // Pairs per standard case on a CPU backend; 0 = scaled down so that one run
    // takes about cpu_seconds (measured on a first, warm-up batch).
    std::uint64_t cpu_pairs = 0;
    double cpu_seconds = 1.0;
    bool standard_cases = true;
    std::vector<std::int64_t> lengths;   // length sweep (square protein pairs); empty = none
    std::vector<std::uint64_t> batches;  // batch-size sweep (pairs); empty = none
    std::vector<int> streams;            // stream-count sweep, GPU devices only; empty = none
    std::vector<std::string> kernels;    // kernel sweep (forced kernels); empty = none
    int repeat = 3;                      // timed runs per point; the median is reported
    int warmup = 1;                      // untimed runs before them
    int threads = 0;                     // CPU worker threads; 0 = all cores
    int default_streams = 0;             // GPU streams outside the stream sweep; 0 = backend default
    std::string kernel;                  // forced kernel outside the kernel sweep; empty = automatic
    std::uint64_t gpu_memory_budget = 0;
    std::uint64_t seed = 1;            // synthetic sequences
    TimelineSink* timeline = nullptr;  // receives the events of each point's last timed run
    const CancellationToken* cancel = nullptr;
};

// What the numbers were measured with.
struct BuildInfo {
    std::string version;       // AlignScope version
    std::string compiler;      // e.g. "GCC 12.2.0"
    std::string build_type;    // "optimised (NDEBUG)" or "assertions on"
    std::string cpu_features;  // instruction sets the engine was compiled for
    std::string host;
    std::string cpu_model;
    int hardware_threads = 0;
    std::string started_utc;  // ISO 8601
};
BuildInfo current_build_info();

struct BenchReport {
    BuildInfo build;
    std::vector<DeviceInfo> devices;
    std::vector<BenchPoint> points;
    std::vector<std::string> notes;  // scaled pair counts, skipped sweeps, kernels refused
};

struct BenchCallbacks {
    std::function<void(const BenchPoint&)> point;  // after each point
    std::function<void(const std::string&)> note;  // as notes arise
};

// Runs the standard cases and the sweeps on every backend, point by point, so
// devices are compared on the same machine state. A backend that rejects a
// point (e.g. an unknown forced kernel) is noted and the run goes on.
BenchReport run_bench(const std::vector<Backend*>& backends, const BenchOptions& options,
                      const BenchCallbacks& callbacks = {});

// Measures one point: `warmup` untimed runs, then `repeat` timed runs of
// align_pairs on `pairs` pairs of `bench_case`.
struct PointSettings {
    std::uint64_t pairs = 0;
    int repeat = 3;
    int warmup = 1;
    int threads = 0;
    int streams = 0;
    std::string kernel;
    std::uint64_t gpu_memory_budget = 0;
    std::uint64_t seed = 1;
    TimelineSink* timeline = nullptr;
    const CancellationToken* cancel = nullptr;
};
BenchPoint measure_point(Backend& backend, const BenchCase& bench_case, const PointSettings& settings);

// parasail's own library on the pairs measure_point(settings) runs for a
// local case without begins or traceback: its one-call sw_striped_16 per pair
// (the query profile built inside), sw_striped_32 where 16-bit lanes saturate,
// on settings.threads threads (0 = all cores), `warmup` untimed runs, the
// median of `repeat`. std::nullopt for any other case.
struct ParasailBaseline {
    std::string version;  // "2.6.0"
    int threads = 1;
    double seconds = 0;  // median wall time
    double gcups = 0;
    std::uint64_t widened = 0;  // pairs rerun in 32-bit lanes (last run)
};
std::optional<ParasailBaseline> measure_parasail_baseline(const BenchCase& bench_case, const PointSettings& settings);

// Seconds during which at least one event of `category` was running: the union
// of their [start, end) intervals, so concurrent kernels on several streams are
// not counted twice. std::nullopt when there is no such event.
std::optional<double> busy_seconds(const std::vector<TimelineEvent>& events, const std::string& category = "kernel");

// The report as JSON: {"tool", "build", "devices", "points", "notes"}.
void write_bench_json(std::ostream& out, const BenchReport& report);

// A point as the project stores it (a GCUPS curve point: x = the swept value,
// y = end-to-end GCUPS); kernel, cells, pairs, seconds and kernel-only GCUPS go
// into its parameters, numbers with every digit.
store::BenchPoint to_store_point(const BenchPoint& point);

}  // namespace alignscope
