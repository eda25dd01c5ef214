// libFuzzer target: arbitrary bytes as a sequence file, plain or gzip. The
// input is handed over as a real path (a memfd under /proc/self/fd), so the
// stat, gzip (ISA-L) and buffering code all run as they do on a user's file. The
// file read in blocks (the pair pipeline's reader, blocks parsed last first)
// gives read_sequences' records or its error.
#include <alignscope/error.hpp>
#include <alignscope/seq/record_blocks.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace alignscope;

namespace {

void require(bool condition) {
    if (!condition) std::abort();  // an invariant the reader promises was broken
}

std::string input_path(const std::uint8_t* data, std::size_t size) {
    static const int fd = memfd_create("alignscope_fuzz_input", 0);
    require(fd >= 0);
    require(ftruncate(fd, 0) == 0);
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
        require(n > 0);
        done += static_cast<std::size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd);
}

bool printable(char c) { return c > ' ' && c < 0x7f; }

// The records of `path` read as the pair pipeline reads them: cut into blocks
// of `block_bytes`, the blocks parsed last first; the first error in file order.
std::vector<Sequence> read_in_blocks(const std::string& path, std::size_t block_bytes, const ReadOptions& options) {
    RecordBlockReader reader(path, block_bytes);
    const AlphabetKind alphabet = options.alphabet ? *options.alphabet : reader.detect_alphabet();
    // A failure to cut (a truncated gzip stream, say) comes after the blocks
    // cut before it, as the pipeline's ordered queue delivers it.
    std::vector<RecordBlock> blocks;
    std::string cut_error;
    try {
        for (RecordBlock block; reader.next(block);) blocks.push_back(std::move(block));
    } catch (const Error& e) {
        cut_error = e.what();
    }
    std::vector<std::vector<Sequence>> parsed(blocks.size());
    std::vector<std::string> errors(blocks.size());
    for (std::size_t k = blocks.size(); k-- > 0;) {
        try {
            parsed[k] = parse_record_block(blocks[k], path, reader.format(), alphabet, options);
        } catch (const Error& e) {
            errors[k] = e.what();
        }
    }
    std::vector<Sequence> records;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        if (!errors[k].empty()) throw Error(errors[k]);
        for (Sequence& s : parsed[k]) records.push_back(std::move(s));
    }
    if (!cut_error.empty()) throw Error(cut_error);
    if (records.empty() && !options.allow_empty)
        throw Error(path + ": expected FASTA ('>') or FASTQ ('@') records, found none");
    return records;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = input_path(data, size);

    try {
        SequenceReader reader(path);
        Sequence record;
        std::uint64_t last_line = 0;
        while (reader.next(record)) {
            require(!record.id.empty());
            require(reader.line() > last_line);
            last_line = reader.line();
            for (char c : record.residues) require(printable(c));
            if (reader.format() == SequenceFormat::Fastq) require(record.quality.size() == record.residues.size());
            else
                require(record.quality.empty());
        }
        require(reader.bytes_read() <= reader.file_size());
    } catch (const Error&) {
    }

    ReadOptions options;
    options.allow_empty = size % 2 == 0;
    if (size % 3 == 1) options.alphabet = AlphabetKind::Protein;
    SequenceSet set;
    std::string error;
    try {
        set = read_sequences(path, options);
        for (const auto& record : set.records) {
            require(options.allow_empty || !record.residues.empty());
            for (char c : record.residues) require(is_valid_residue(set.alphabet, c));
        }
    } catch (const Error& e) {
        error = e.what();
    }

    std::vector<Sequence> blocks;
    std::string block_error;
    try {
        blocks = read_in_blocks(path, 1 + size % 61, options);
    } catch (const Error& e) {
        block_error = e.what();
    }
    require(block_error == error);
    require(blocks.size() == set.records.size());
    for (std::size_t k = 0; k < blocks.size(); ++k)
        require(blocks[k].id == set.records[k].id && blocks[k].description == set.records[k].description &&
                blocks[k].residues == set.records[k].residues && blocks[k].quality == set.records[k].quality);
    return 0;
}
