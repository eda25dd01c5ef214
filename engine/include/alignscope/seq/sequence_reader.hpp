// Streaming FASTA/FASTQ reader. Reads plain or gzip-compressed files (gzip told
// by its magic bytes, inflated by ISA-L), CRLF or LF line ends, wrapped lines,
// very long lines and empty records, one record at a time, so a huge file is read
// once and never held whole. Every error names the file, the 1-based line and
// what was expected.
#pragma once

#include <alignscope/seq/alphabet.hpp>
#include <alignscope/seq/sequence.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace alignscope {

enum class SequenceFormat { Fasta, Fastq };

// What becomes of the blanks and tabs that end a header's description: Trim
// drops them; Keep leaves them as written, as hmmsearch prints descriptions.
// The '\r' of a CRLF line end is never part of a description.
enum class DescriptionBlanks { Trim, Keep };

class SequenceReader {
public:
    // Opens a file; "-" reads standard input. Throws Error when the file cannot be
    // opened. The format is detected from the first non-empty line ('>' FASTA,
    // '@' FASTQ).
    explicit SequenceReader(const std::string& path, DescriptionBlanks blanks = DescriptionBlanks::Trim);
    ~SequenceReader();
    SequenceReader(const SequenceReader&) = delete;
    SequenceReader& operator=(const SequenceReader&) = delete;

    // Reads the next record into `out`; returns false at the end of the file.
    // Throws Error "FILE:LINE: expected ..." on malformed input. Records with an
    // empty sequence are returned as such (the caller decides whether they are an
    // error).
    bool next(Sequence& out);

    const std::string& path() const;
    std::optional<SequenceFormat> format() const;  // known after the first record
    std::uint64_t line() const;                    // 1-based line of the last read
    std::uint64_t bytes_read() const;              // compressed bytes consumed (for progress)
    std::uint64_t file_size() const;               // size on disk (0 for stdin)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

struct ReadOptions {
    std::optional<AlphabetKind> alphabet;  // override; detected from the first records if empty
    bool allow_empty = false;              // empty records are an error unless set
};

struct SequenceSet {
    std::string path;
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::vector<Sequence> records;
    // Records whose id an earlier record has (read_sequences counts them), and
    // the first such record (0-based) with the earlier one it repeats.
    std::uint64_t duplicate_ids = 0;
    std::size_t first_duplicate = 0, first_duplicate_of = 0;
    std::uint64_t residue_count() const;
    // One line saying how many records repeat an id, naming the first; empty when none.
    std::string duplicate_id_warning() const;
};

// Reads every record of a file, normalises residues (see normalise_residues) and
// checks them against the alphabet. Throws Error naming the file, the line of
// the offending letter and the letter. A UTF-8 byte-order mark is skipped. A
// file whose residues would take more than a quarter of the memory the process
// may use (the machine's, a resource limit's or the cgroup's) is refused with an
// Error naming it, as is one that runs out of memory; a device or socket is
// refused at once (files and pipes are read). `progress`, when given, is called with
// (bytes_read, file_size) now and then and may throw Cancelled.
SequenceSet read_sequences(const std::string& path, const ReadOptions& options = {},
                           const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

}  // namespace alignscope
