// `search --bench` (and `bench --search`): database-search throughput measured
// the way CUDASW++4.0 reports it, on its three workloads, for every device in
// the same run:
//   mmseqs      the 500 queries of Debian's mmseqs2-examples QUERY.fasta.gz
//               against DB.fasta.gz (20,000 UniProt proteins, 9.06 M residues)
//   mmseqs-x10  the same queries against that database repeated 10 times
//   synthetic   the same queries against 1,000,000 random sequences of 256
//               residues (seeded; Robinson & Robinson amino-acid frequencies)
// BLOSUM62, gap open 11 / extend 1 (our convention; BLAST 10/1), local, scores
// only. The scan figure is total cells / wall time of every scan call over all
// queries (per-query overhead included, database preparation excluded), the
// median of `repeat` runs after `warmup`; the kernel figure uses the device's
// own kernel time. End to end adds parsing (no cache), loading, top-K and the
// traceback of the K best hits per query.
#pragma once

#include <alignscope/device/backend.hpp>
#include <alignscope/search/scan.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace alignscope {

struct SearchBenchOptions {
    std::vector<std::string> devices = {"auto"};  // scanner specs, measured in turn
    std::vector<std::string> cases;               // "mmseqs", "mmseqs-x10", "synthetic"; empty = all three
    std::string query_path = "/usr/share/doc/mmseqs2/example-data/QUERY.fasta.gz";
    std::string database_path = "/usr/share/doc/mmseqs2/example-data/DB.fasta.gz";
    std::size_t max_queries = 0;  // use only the first N queries; 0 = all
    std::size_t synthetic_sequences = 1'000'000;
    std::int64_t synthetic_length = 256;
    int repeat = 3;
    int warmup = 1;
    // CPU scanners run a subset of the queries sized to take about this long
    // per run (the figure is GCUPS on that subset, said in the point's note).
    double cpu_seconds = 10;
    bool end_to_end = true;  // one search with traceback per point
    std::size_t top = 10;
    std::size_t query_batch = 0;  // queries per scan call; 0 = all that fit in 1 GiB of scores
    int threads = 0;
    int streams = 0;
    std::uint64_t gpu_memory_budget = 0;
    std::uint64_t seed = 1;
    // The alignment mode (CUDASW++4.0's figures are local); free_ends in
    // semi-global mode.
    AlignmentMode mode = AlignmentMode::Local;
    FreeEndGaps free_ends;
    const CancellationToken* cancel = nullptr;
};

struct SearchBenchPoint {
    std::string case_name;    // "mmseqs", ...
    std::string description;  // the workload in words
    std::string device, device_name, kernels;
    std::uint64_t queries = 0, sequences = 0, residues = 0, cells = 0;
    double load_seconds = 0;  // scanner.load (encode, upload)
    double scan_seconds = 0;  // median
    std::vector<double> run_seconds;
    double gcups_scan = 0;
    double kernel_seconds = 0;  // median of the device's kernel time
    double gcups_kernel = 0;
    std::optional<double> prepare_seconds;  // parsing the FASTA (or generating the data)
    std::optional<double> e2e_seconds;      // prepare + load + scan + top-K + traceback
    std::optional<double> gcups_e2e;
    std::optional<double> traceback_seconds;
    std::uint64_t recomputed = 0;
    double peer_gcups = 0;  // CUDASW++4.0 measured on an H200 (November 2026)
    std::string note;
};

struct SearchBenchReport {
    std::vector<SearchBenchPoint> points;
    std::vector<std::string> notes;
    std::string mode = "local";  // describe_mode of the run
};

struct SearchBenchCallbacks {
    std::function<void(const SearchBenchPoint&)> point;
    std::function<void(const std::string&)> note;
};

// `aligners` (optional) supplies the pairwise backend for the end-to-end
// traceback; without it the end-to-end figure is skipped.
SearchBenchReport run_search_bench(const ScannerRegistry& scanners, DeviceRegistry* aligners,
                                   const SearchBenchOptions& options, const SearchBenchCallbacks& callbacks = {});

void write_search_bench_table(std::ostream& out, const SearchBenchReport& report);
void write_search_bench_json(std::ostream& out, const SearchBenchReport& report);

}  // namespace alignscope
