// What the job panel asks the worker to run, in user units, and the checks that
// explain an impossible combination before the job starts. A request holds its
// sequences by shared pointer, so the worker thread reads them safely while the
// GUI goes on (sequence sets are never changed once loaded).
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/policy.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/search/scan.hpp>
#include <alignscope/search/search_settings.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/seq/sequence.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::ui {

// The kinds of job the workbench can run. Profile search and all-against-all
// join this list with their issues, each with its own branch in
// JobQueue::run; the panel offers exactly what is listed here. A database
// search scans every query against every database sequence (local alignment,
// score only, on a scanner of the ScannerRegistry) and aligns the K best hits
// of each query in full, as `alignscope-cli search` does. A long pair aligns
// the first query with the first target in memory linear in their lengths
// (longpair::align_long_on: the GPU pipeline, or Myers-Miller on CPU devices),
// in the mode the request's long_mode names, as `alignscope-cli align --long`.
enum class JobAlgorithm { Global, Local, SemiGlobal, DatabaseSearch, LongPair };

std::string_view to_string(JobAlgorithm algorithm);   // "global", "local", "semiglobal", "search", "long"
std::string display_name(JobAlgorithm algorithm);     // "Global (Needleman-Wunsch)", ...
JobAlgorithm parse_algorithm(std::string_view name);  // throws Error
const std::vector<JobAlgorithm>& available_algorithms();

// How the query and target lists are paired.
enum class Pairing {
    AllAgainstAll,   // every query with every target
    RecordByRecord,  // query i with target i
};

// Scoring as the user gives it: a matrix by name, or match/mismatch for
// nucleotides; gap penalties positive, in steps of 0.5; a gap of length k
// costs open + (k-1)*extend.
struct ScoringChoice {
    bool match_mismatch = false;
    std::string matrix = "BLOSUM62";  // built-in name or a matrix file path
    int match = 2;
    int mismatch = -3;
    double gap_open = 10.0;
    double gap_extend = 0.5;

    // Throws Error with a message fit for the panel.
    ScoringScheme scheme() const;
    // e.g. "BLOSUM62 10/0.5" or "match 2/-3, gaps 5/2".
    std::string summary() const;
};

// One side of the job: the sequences and where they came from.
struct SequenceList {
    std::shared_ptr<const std::vector<Sequence>> records;
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::string label;                  // "globins_human.fa", "3 selected sequences"
    std::vector<std::int64_t> set_ids;  // project sequence sets the records come from

    std::size_t size() const { return records ? records->size() : 0; }
};

// Long-pair GPU strategies (LongRunnerSettings::strategy): one persistent
// kernel over row strips, or several kernels on several streams.
inline constexpr const char* long_strategies[] = {"strips", "streams"};
// The stage-1 overview a long-pair job keeps for the DP heatmap: blocks per side.
inline constexpr int long_overview_size = policy::long_pair_overview_blocks;

struct JobRequest {
    JobAlgorithm algorithm = JobAlgorithm::Global;
    std::size_t top = 10;                             // database search: hits kept per query (K)
    FreeEndGaps free_ends;                            // semi-global only (the algorithm, or a long pair's mode)
    AlignmentMode long_mode = AlignmentMode::Global;  // long pair: global, local or semi-global
    std::string strategy = "strips";                  // long pair on a GPU: "strips" or "streams"
    int kernels = 0;  // long pair, "streams" strategy: concurrent kernels; 0 = backend default
    ScoringChoice scoring;
    std::string device = "cpu";  // DeviceRegistry::select spec
    int threads = 0;             // CPU worker threads; 0 = all cores
    int streams = 0;             // GPU streams per device; 0 = backend default
    bool traceback = true;
    Pairing pairing = Pairing::AllAgainstAll;
    SequenceList queries;
    SequenceList targets;  // the database of a search

    bool is_search() const { return algorithm == JobAlgorithm::DatabaseSearch; }
    bool is_long_pair() const { return algorithm == JobAlgorithm::LongPair; }
    AlignOptions align_options() const;
    // Pairs aligned (a long pair: 1), or for a search pairs scanned (queries x
    // database sequences).
    std::uint64_t pair_count() const;
    std::uint64_t cell_count() const;  // sum of |q| * |t| over the pairs
    // One line for the jobs list: "global BLOSUM62 10/0.5, 2 x 5 pairs".
    std::string summary() const;
};

// The most pairs one job may hold (the CLI refuses the same).
inline constexpr std::uint64_t max_pairs_per_job = 100'000'000;

struct JobProblem {
    enum class Severity { Error, Warning };
    Severity severity = Severity::Error;
    std::string message;
};

// Every reason the request cannot run (errors) or may not do what the user
// expects (warnings), checked against the devices that exist (and for a
// database search, the scanners; none: searches cannot run). Empty when fine.
std::vector<JobProblem> check_request(const JobRequest& request, const std::vector<DeviceInfo>& devices,
                                      const ScannerRegistry* scanners = nullptr);
bool has_errors(const std::vector<JobProblem>& problems);

// The gap costs a database search uses when the user has not chosen any:
// BLAST's for the matrix, as `alignscope-cli search` does (search_settings.hpp).
GapCosts search_default_gaps(const ScoringChoice& scoring, AlphabetKind alphabet);
// The scan a search request runs: scheme, local mode, threads, streams.
// Throws Error when the scoring is invalid.
ScanSetup scan_setup(const JobRequest& request);

// The runner settings of a long-pair request (strategy, kernels and streams
// apply to GPU devices; the "strips" strategy uses one kernel on one stream).
LongRunnerSettings long_runner_settings(const JobRequest& request);

// The engine job for a checked request. Throws Error when the scoring is invalid.
PairJob make_pair_job(const JobRequest& request);
// The same without the pair list: the settings a job record keeps.
PairJob job_settings(const JobRequest& request);

}  // namespace alignscope::ui
