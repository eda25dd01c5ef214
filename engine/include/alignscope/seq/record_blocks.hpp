// Reading a FASTA/FASTQ file as blocks of whole records that several threads
// read and parse at once: one thread cuts the file into blocks at record
// boundaries, any thread parses a block. A plain FASTA or FASTQ file is cut by
// offset (the cutter reads only around each boundary; each block is read by the
// thread that parses it); gzip and pipes are read whole by the cutting thread.
// Records and errors are read_sequences' (file, 1-based line, letter), block
// after block in file order.
#pragma once

#include <alignscope/seq/alphabet.hpp>
#include <alignscope/seq/sequence.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

// Where a plain file's blocks lie and how many lines each holds, shared by the
// reader and its blocks (defined in the source).
class BlockSource;

// Whole records as they lie in the file (decompressed).
struct RecordBlock {
    std::string text;
    std::uint64_t first_line = 1;  // 1-based line of text's first line (with `source`: found when needed)
    std::uint64_t index = 0;       // 0-based, in file order
    bool file_start = false;       // the file's first block (a byte-order mark may open it)
    // Where the file could not be read on (corrupt or truncated gzip): why;
    // the block is the file's last, and its parse throws the fault where its
    // text runs out, as the line reader does.
    std::string fault;
    // A block cut by offset from a plain file: `text` is read by
    // load_record_block(), on the thread that parses it; `first_line` is
    // counted only when an error names a line.
    std::shared_ptr<BlockSource> source;
    std::uint64_t offset = 0, size = 0;
    bool loaded = true;
};

// Reads a block cut by offset (any thread; nothing to do for one read by the
// cutter). Throws Error when the file cannot be read.
void load_record_block(RecordBlock& block);

class RecordBlockReader {
public:
    // Opens a file as SequenceReader does, with the same errors; "-" reads
    // standard input. Blocks hold about `block_bytes` (more when one record is
    // longer).
    explicit RecordBlockReader(const std::string& path, std::size_t block_bytes = std::size_t{1} << 20);
    ~RecordBlockReader();
    RecordBlockReader(const RecordBlockReader&) = delete;
    RecordBlockReader& operator=(const RecordBlockReader&) = delete;

    // The next block, or false at the end of the file. One thread at a time.
    // Throws Error when the file cannot be read (truncated or corrupt gzip)
    // past the last block handed out; a fault after text read is the last
    // block's (RecordBlock::fault).
    bool next(RecordBlock& out);
    // The alphabet of the file by read_sequences' rule (the first MiB of
    // residues), reading blocks ahead as needed; they are still returned by
    // next(). Throws the parse errors met on the way.
    AlphabetKind detect_alphabet();
    // From the first byte that is not blank: none for an empty file or one
    // that is neither.
    std::optional<SequenceFormat> format() const { return format_; }
    // After detect_alphabet(): the file holds no record at all.
    bool empty() const { return empty_; }
    const std::string& path() const { return path_; }
    std::uint64_t bytes_read() const;  // compressed bytes consumed
    std::uint64_t file_size() const;   // size on disk (0 for a pipe)

private:
    bool cut(RecordBlock& out);
    bool first_line_judged() const;
    bool cut_by_offset(RecordBlock& out);
    std::uint64_t next_record_start(std::uint64_t from) const;
    void choose_reading();
    std::size_t cut_point() const;
    struct File;
    std::unique_ptr<File> file_;
    std::string path_;
    std::size_t block_bytes_;
    std::string pending_;     // read, not yet handed out
    std::string read_fault_;  // why the file could not be read past pending_
    bool eof_ = false;
    bool format_known_ = false;
    bool empty_ = false;
    std::optional<SequenceFormat> format_;
    std::uint64_t next_line_ = 1, next_index_ = 0;
    std::uint64_t held_limit_ = 0;
    std::deque<RecordBlock> ahead_;  // read by detect_alphabet()
    // Cutting by offset (a plain FASTA or FASTQ file): the next block's start.
    bool reading_chosen_ = false;
    std::shared_ptr<BlockSource> source_;
    std::uint64_t offset_ = 0;
};

// Parses a block into records, normalised and checked against `alphabet` as
// read_sequences() does (the same Error for the same fault). Any thread; a
// block cut by offset is read first when load_record_block() has not been.
std::vector<Sequence> parse_record_block(const RecordBlock& block, const std::string& path,
                                         std::optional<SequenceFormat> format, AlphabetKind alphabet,
                                         const ReadOptions& options);

// Records whose id an earlier record has, counted as they stream past: the ids
// are kept (packed, without descriptions), the records are not.
class RepeatedIds {
public:
    void add(std::string_view id);
    std::uint64_t records() const { return hashes_.size(); }
    // SequenceSet::duplicate_id_warning()'s line for the file `path`, or empty.
    std::string warning(const std::string& path) const;

private:
    std::string ids_;  // each id and a newline
    std::vector<std::uint64_t> hashes_;
};

// The line SequenceSet::duplicate_id_warning() says: `count` records repeat an
// id, the first of them (0-based) `first`, id `id`, repeats record `first_of`.
std::string duplicate_id_line(const std::string& path, std::uint64_t count, std::size_t first, std::size_t first_of,
                              const std::string& id);

}  // namespace alignscope
