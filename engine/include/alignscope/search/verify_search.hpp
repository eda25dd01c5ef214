// `search --verify`: checks a scanner against a reference scanner over the
// whole database, query by query: every score must be equal (so the top-K
// scores are too, ties in any order), and each query's best hits are rescored
// by the scalar reference aligner as a third, independent opinion. Seeded
// random cases cover every tile shape of the GPU kernel, 16-bit saturation
// (scores past 32,767 and, in global and semi-global mode, below the 16-bit
// cells' floor), the matrix's rare letters (B, Z, X, *, and U, O, J through
// their stand-ins), several matrices and gap models, local, global and every
// kind of semi-global free end; real data (a query file against a FASTA
// database, e.g. Debian's mmseqs2-examples) can be added, in any mode.
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/search/scan.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace alignscope {

struct SearchVerifyOptions {
    std::string device = "auto";    // the scanner under test (ScannerRegistry::create spec)
    std::string reference = "cpu";  // "cpu" (parasail) or "cpu-ref" (scalar)
    std::size_t top = 10;
    std::uint64_t seed = 1;
    std::size_t random_queries = 24;      // per random case
    std::size_t random_sequences = 2000;  // per random case
    bool random_cases = true;
    // Alignment modes to check; empty = every mode of the random cases, and
    // local alignment on real data. Otherwise only the random cases of these
    // modes, and the real data once in each (semi-global with real_free_ends).
    std::vector<AlignmentMode> modes;
    FreeEndGaps real_free_ends;
    // Real data: queries against a database file; 0 = all records.
    std::string query_path, database_path;
    // The scoring scheme for real data, by the database's alphabet (the
    // user's --matrix and gaps); empty = BLOSUM62 11/1 or EDNAFULL 16/6.
    std::function<ScoringScheme(AlphabetKind)> real_scheme;
    std::size_t real_queries = 0;
    std::size_t real_sequences = 0;
    std::string database_cache_directory;  // for prepare_database; empty = beside the FASTA
    std::size_t spot_checks = 3;           // best hits per query rescored by align_reference
    int threads = 0;
    int streams = 0;
    std::uint64_t gpu_memory_budget = 0;
};

struct SearchVerifyCase {
    std::string name;  // e.g. "random protein BLOSUM62 gap 11/1 local"
    bool skipped = false;
    std::string skip_reason;  // the tested device cannot run this setup
    std::uint64_t queries = 0, sequences = 0, cells = 0;
    std::uint64_t scores_compared = 0;
    std::uint64_t score_mismatches = 0;  // (query, sequence) pairs whose scores differ
    std::uint64_t queries_failed = 0;    // queries with any mismatch or a different top-K score list
    std::uint64_t spot_checked = 0, spot_failed = 0;
    std::uint64_t recomputed = 0;  // 16-bit saturations the tested scanner rescored
    double tested_seconds = 0, reference_seconds = 0;
    std::string tested_kernels;
    bool passed() const { return skipped || (score_mismatches == 0 && queries_failed == 0 && spot_failed == 0); }
};

struct SearchVerifySummary {
    std::string tested_device, reference_device;
    std::vector<SearchVerifyCase> cases;
    bool passed() const;
};

struct SearchVerifyCallbacks {
    std::function<void(const std::string&)> mismatch;        // one line per problem (the first few per case)
    std::function<void(const SearchVerifyCase&)> case_done;  // after each case
};

SearchVerifySummary verify_search(const ScannerRegistry& registry, const SearchVerifyOptions& options,
                                  const SearchVerifyCallbacks& callbacks, JobContext& context);

}  // namespace alignscope
