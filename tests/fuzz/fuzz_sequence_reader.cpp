// libFuzzer target: arbitrary bytes as a sequence file, plain or gzip. The
// input is handed over as a real path (a memfd under /proc/self/fd), so the
// stat, zlib and buffering code all run as they do on a user's file.
#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

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

    try {
        ReadOptions options;
        options.allow_empty = size % 2 == 0;
        if (size % 3 == 1) options.alphabet = AlphabetKind::Protein;
        const SequenceSet set = read_sequences(path, options);
        for (const auto& record : set.records) {
            require(options.allow_empty || !record.residues.empty());
            for (char c : record.residues) require(is_valid_residue(set.alphabet, c));
        }
    } catch (const Error&) {
    }
    return 0;
}
