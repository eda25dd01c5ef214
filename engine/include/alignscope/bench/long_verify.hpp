// `verify --long`: the long-pair path (align_long_on) on a device against
// independent answers, pair by pair: seeded random pairs with planted similar
// regions and pairs grown from a real genome (long_pairs.hpp), over global,
// local and semi-global modes and affine and linear gaps, DNA and protein.
//
// For every pair the device's result, with and without traceback, must have
// the CPU reference's score and end cell (align_reference: full matrix up to
// its cell limit, Myers-Miller above), and parasail's (32-bit scan kernels;
// semi-global ends picked from its last row and column with the reference's
// rule) when both sequences are at most `parasail_max_length`; the CIGAR must
// span exactly begin..end and re-score to the score (which proves the begin
// an optimal one: the pipeline may pick another begin than the reference when
// several are optimal); global alignments begin at (1, 1). On backends
// without a long-pair runner (CPU), the pipeline is also run on the scalar
// pass runner with special rows a few hundred rows apart, so every stage of
// the orchestration is checked there too (on the pairs its 32-bit cells
// hold). A pair that a device's pipeline cannot hold takes the 64-bit
// linear-space path (align_long_on) and is checked like any other.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace alignscope {

struct LongVerifyOptions {
    std::uint64_t pairs = 32;
    std::uint64_t seed = 1;
    std::int64_t max_length = 100'000;           // longest sequence drawn
    std::int64_t parasail_max_length = 100'000;  // parasail checks pairs whose sequences are all this short
    LongRunnerSettings settings;                 // strategy, kernels, streams, memory budget, forced kernel
    std::uint64_t special_row_budget = 0;        // 0 = LongPairOptions' default
    int threads = 0;               // CPU threads for the reference and parasail checks (and stage 3); 0 = all cores
    bool cpu_pipeline_too = true;  // on backends without a runner, also the pipeline on the scalar runner
    std::string seed_genome;       // FASTA file; empty = the lambda genome (load_seed_genome)
    // The indices of the seeded stream to run (long_verify_indices); empty =
    // the first `pairs`. When given, `pairs` is their count.
    std::vector<std::uint64_t> indices;
};

// The first `count` indices of the seeded stream whose pairs have this mode
// and gap model (both kinds, planted and genome, as they come).
std::vector<std::uint64_t> long_verify_indices(AlignmentMode mode, bool linear, std::uint64_t count);

// One pair of the seeded stream.
struct LongVerifyCase {
    std::uint64_t index = 0;
    std::string kind;         // "planted" or "genome"
    std::string description;  // how the pair was made
    AlphabetKind alphabet = AlphabetKind::Dna;
    std::string gaps;         // "affine" or "linear"
    std::string scheme_name;  // e.g. "EDNAFULL gap 10/0.5"
    ScoringScheme scheme;
    // A scheme past some lane width's limits (pairwise verify's extreme
    // schemes): the long-pair path answers it (in 64-bit linear space where
    // a pipeline cannot hold it); a device that still refuses it with an
    // Error is counted apart (refused), one that answers it wrongly fails.
    bool extreme = false;
    AlignOptions options;  // traceback on
    std::string query, target;

    std::string describe() const;  // "#3 genome DNA 41k x 39k, local, EDNAFULL gap 10/0.5 (affine)"
};

// The seeded stream: pair k takes kind k % 2 and configuration (k / 2) % 16
// (mode global, local, semiglobal, semiglobal[qb,qe] x affine, linear x DNA,
// protein; genome pairs are DNA), so the first 32 pairs cover every
// configuration with planted pairs and every DNA one with genome pairs too. Lengths are log-uniform in
// [max_length / 20, max_length]; one pair in four has a query of a tenth of that.
// Pairs k with k % 3 == 2 (a third, over every kind and configuration in 96
// pairs) take one of pairwise verify's extreme schemes of their alphabet and
// gap model instead (VerifyPairGenerator::configs(): substitution scores of
// 64 and more, penalties up to 1,000,000), drawn by the seed.
LongVerifyCase long_verify_case(const LongVerifyOptions& options, std::uint64_t index, const std::string& seed_genome);

struct LongVerifyResult {
    const LongVerifyCase* pair = nullptr;
    std::vector<std::string> problems;  // empty: passed
    Alignment tested, reference;
    bool parasail_checked = false;  // false also where 32-bit scores could not hold the pair's
    bool refused = false;           // an extreme scheme the device refused with an Error (not a failure)
    std::string refusal;            // its message
    std::int64_t parasail_score = 0, parasail_query_end = 0, parasail_target_end = 0;
    double tested_seconds = 0;      // both tested runs (with and without traceback)
    longpair::LongPairStats stats;  // of the tested run with traceback

    std::string describe() const;  // several lines, for a failure
};

struct LongVerifySummary {
    std::uint64_t passed = 0, failed = 0;
    std::uint64_t refused = 0;  // pairs of extreme schemes the device refused with an Error
    std::uint64_t extreme = 0;  // pairs of extreme schemes run (refused ones included)
    std::uint64_t cells = 0;    // m x n summed over the pairs
    double tested_seconds = 0, reference_seconds = 0, parasail_seconds = 0;
    std::uint64_t parasail_checked = 0;
    std::string tested_device, tested_kernels, seed_genome;
    std::map<std::string, std::uint64_t> failures_by_kind;  // "mode local", "gaps linear", "kind genome", ...
};

struct LongVerifyCallbacks {
    std::function<void(const LongVerifyResult&)> result;  // after every pair
    std::function<void(std::uint64_t done, std::uint64_t total)> progress;
    std::function<void(const LongVerifyCase&)> starting;  // before the device runs a pair
    std::function<void(const std::string&)> note;         // e.g. the seed genome is synthetic
};

// Runs the pairs on `tested` (one at a time, with `context`: progress, cancel,
// timeline) while CPU threads compute the reference and parasail answers.
// Throws Error for bad options, Cancelled when cancelled.
LongVerifySummary verify_long(Backend& tested, const LongVerifyOptions& options, const LongVerifyCallbacks& callbacks,
                              const JobContext& context);

// parasail's score and end cell for a pair (32-bit scan kernels; semi-global
// ends by the reference's rule over its last row and column). Throws Error.
struct ParasailAnswer {
    std::int64_t score = 0, query_end = 0, target_end = 0;
};
ParasailAnswer parasail_score_and_end(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                                      const AlignOptions& options);

}  // namespace alignscope
