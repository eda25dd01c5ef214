// The database search job: every query is scanned against every database
// sequence (score only, on a DatabaseScanner), the K best hits per query are
// kept, and those K are aligned in full by a pairwise Backend (the GPU's own
// traceback when the device is a GPU), with bit scores and E-values where
// published parameters exist (statistics.hpp).
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/search/database.hpp>
#include <alignscope/search/scan.hpp>
#include <alignscope/search/statistics.hpp>
#include <alignscope/seq/sequence.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace alignscope {

struct SearchOptions {
    std::size_t top = 10;              // K hits per query (fewer when fewer pass the filters)
    std::optional<double> min_score;   // user units: hits scoring below are dropped
    std::optional<double> max_evalue;  // needs statistics; hits above are dropped
    bool traceback = true;             // full alignments for the hits (else score and ids only)
    // Queries per scan call (bounds the score buffer: queries x database
    // sequences x 8 bytes); 0 = as many as fit in about 1 GiB.
    std::size_t query_batch = 0;
    // Residues of the whole database, when `database` is one slice of it (a
    // rank of a distributed search): E-values and the --evalue threshold use
    // this size, so that a slice reports what the whole database would.
    std::optional<std::uint64_t> statistics_residues;
};

struct SearchHit {
    std::size_t position = 0;      // in the prepared database
    std::uint32_t file_index = 0;  // record index in the database FASTA
    int rank = 0;                  // 1-based within the query
    std::int64_t score = 0;        // scaled (user units: scheme.to_user)
    std::optional<double> bits;
    std::optional<double> evalue;
    // With traceback: the full alignment from the pairwise backend. Without:
    // ids, mode, lengths and score only.
    Alignment alignment;
};

struct QueryHits {
    std::size_t query_index = 0;  // into the queries given to run_search
    std::vector<SearchHit> hits;  // by rank
};

struct SearchSummary {
    std::uint64_t queries = 0;
    std::uint64_t database_sequences = 0;
    std::uint64_t database_residues = 0;
    std::uint64_t cells = 0;         // scanned: sum over queries of length x database residues
    double load_seconds = 0;         // scanner.load (encode, upload)
    double scan_seconds = 0;         // wall time of all scan calls
    double scan_kernel_seconds = 0;  // device time in scan kernels (ScanStats::kernel_seconds, summed)
    double select_seconds = 0;       // top-K selection
    double traceback_seconds = 0;
    double total_seconds = 0;
    std::uint64_t recomputed = 0;  // pairs rescored at 32 bits
    std::uint64_t hits = 0;
    std::string scan_device, scan_kernels, traceback_device;
    std::string setup_stats;  // DatabaseScanner::setup_stats() after the last scan
    std::optional<KarlinAltschul> statistics;
    std::string statistics_note;  // why there are none, when there are none
};

struct SearchCallbacks {
    // Each query's hits, in query order, as soon as its traceback is done.
    std::function<void(const QueryHits&)> query_done;
    // A line for the user (cache, batches, statistics); optional.
    std::function<void(const std::string&)> note;
};

// The K best positions of one query's scores, best first; ties in score go
// to the earlier FASTA record. Scores below `min_score` (scaled) are skipped.
std::vector<std::size_t> top_positions(std::span<const std::int64_t> scores, const PreparedDatabase& database,
                                       std::size_t k, std::optional<std::int64_t> min_score = std::nullopt);

// Queries per scan call when SearchOptions::query_batch is 0: as many as fit
// about 1 GiB of scores against `database_size` sequences.
std::size_t default_query_batch(std::size_t queries, std::size_t database_size);

// Runs the whole search. `scanner` is loaded here with the database;
// `aligner` aligns the hits (required when options.traceback). Progress goes
// to context.progress (cells scanned and queries finished, per batch of
// queries and per database batch), cancellation is honoured within a second,
// and the scanner's and aligner's events go to context.timeline. Throws Error
// when a traceback score differs from its scan score (a device fault).
SearchSummary run_search(const std::vector<Sequence>& queries, const PreparedDatabase& database,
                         const ScoringScheme& scheme, const AlignOptions& options, DatabaseScanner& scanner,
                         Backend* aligner, const SearchOptions& search, const SearchCallbacks& callbacks,
                         JobContext& context, int threads = 0, int streams = 0, std::uint64_t gpu_memory_budget = 0);

}  // namespace alignscope
