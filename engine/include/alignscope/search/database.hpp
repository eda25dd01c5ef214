// A sequence database prepared for search: parsed once, sorted by length,
// packed into one residue buffer, and cached on disk next to the FASTA so a
// second search skips parsing. The cache is keyed by the FASTA's size, mtime
// and CRC-32 and carries a CRC-32 of its own contents; a stale or damaged
// cache is detected, reported and rebuilt, never trusted.
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/seq/sequence.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace alignscope {

// Sequences in ascending length order (ties in file order). "Position" below
// means the place in that order; `file_index` maps back to the FASTA record.
struct PreparedDatabase {
    std::string source;  // the FASTA path, or a description for generated data
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::string residues;                // normalised letters of every sequence, concatenated
    std::vector<std::uint64_t> offsets;  // size() + 1 entries into residues
    std::vector<std::uint32_t> file_index;
    std::vector<std::string> ids;
    std::vector<std::string> descriptions;

    std::size_t size() const { return file_index.size(); }
    bool empty() const { return file_index.empty(); }
    std::uint64_t residue_count() const { return residues.size(); }
    std::uint32_t length(std::size_t position) const {
        return static_cast<std::uint32_t>(offsets[position + 1] - offsets[position]);
    }
    std::uint32_t max_length() const { return empty() ? 0 : length(size() - 1); }
    std::string_view residues_of(std::size_t position) const {
        return std::string_view(residues).substr(offsets[position], length(position));
    }
    Sequence sequence(std::size_t position) const;

    // Consecutive position ranges [first, second) of at most `max_residues`
    // residues each (a single longer sequence gets a range of its own): the
    // batches a device streams when the whole database does not fit.
    std::vector<std::pair<std::size_t, std::size_t>> partitions(std::uint64_t max_residues) const;
    // The sequences at `positions` (ascending) as a database of their own, in
    // the same order; file_index keeps pointing into the original FASTA.
    PreparedDatabase subset(const std::vector<std::size_t>& positions) const;
};

// Sorts and packs records (already normalised, as read_sequences returns them).
PreparedDatabase pack_database(std::vector<Sequence> records, AlphabetKind alphabet, std::string source);

// Residues as matrix indices, in the database's order and offsets. Throws Error
// naming the sequence and the letter when the matrix does not score one.
std::vector<std::uint8_t> encode_database(const PreparedDatabase& database, const SubstitutionMatrix& matrix);

enum class CacheOutcome {
    Disabled,   // caching was off: parsed
    Built,      // no cache existed: parsed and written
    Loaded,     // a valid cache was read; the FASTA was not parsed
    Rebuilt,    // a cache existed but was stale or damaged: parsed and rewritten
    Unwritable  // parsed; the cache could not be written (reason says why)
};
std::string_view to_string(CacheOutcome outcome);

struct DatabaseCacheOptions {
    bool enabled = true;
    // Where the cache lives: empty = "<FASTA>.alsdb" beside the FASTA when that
    // directory is writable, else in the user cache directory
    // ($XDG_CACHE_HOME/alignscope or ~/.cache/alignscope). A directory here
    // puts it there (named after the FASTA and a hash of its absolute path).
    std::string directory;
    std::optional<AlphabetKind> alphabet;  // override detection (part of the cache key)
};

struct PreparedDatabaseLoad {
    PreparedDatabase database;
    CacheOutcome outcome = CacheOutcome::Disabled;
    std::string cache_path;     // empty when disabled
    std::string reason;         // why a cache was rebuilt or could not be written
    std::string duplicate_ids;  // SequenceSet::duplicate_id_warning() of a parsed FASTA; empty otherwise
    double seconds = 0;         // wall time of the whole preparation
};

// Reads `fasta_path` (plain or gzip FASTA/FASTQ), or its cache. `progress`
// receives (bytes_read, file_size) while parsing and may throw Cancelled.
// Throws Error for unreadable or malformed input and for an empty database.
PreparedDatabaseLoad prepare_database(const std::string& fasta_path, const DatabaseCacheOptions& options = {},
                                      const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

// The cache file prepare_database would use for `fasta_path` (for tests and
// for `--db-cache` messages).
std::string database_cache_path(const std::string& fasta_path, const DatabaseCacheOptions& options = {});

// The FASTA identity a cache is keyed by.
struct FastaFingerprint {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint32_t crc32 = 0;  // of the file's bytes as stored (compressed or not)
};
FastaFingerprint fasta_fingerprint(const std::string& path);

}  // namespace alignscope
