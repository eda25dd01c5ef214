// Streaming FASTA/FASTQ reader over FileInput (plain files as they are, gzip
// inflated by ISA-L), with its own line buffer so that a line of hundreds of megabytes is copied
// once, straight into the record, and read_sequences() on top of it.
#include <alignscope/error.hpp>
#include <alignscope/seq/record_blocks.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include "seq/file_input.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace alignscope {

namespace {

constexpr std::size_t kBufferBytes = 256 * 1024;
// Residues sampled for alphabet detection, and the progress-report interval.
constexpr std::size_t kDetectionSample = 1 << 20;
constexpr std::uint64_t kProgressInterval = 1 << 20;
// Header (and '+') lines longer than this are not headers: a file of one huge
// line is refused before it fills memory.
constexpr std::size_t kMaxHeaderBytes = std::size_t{64} << 20;

std::string byte_name(unsigned char c) {
    if (c == 0) return "a NUL byte (is this a binary file?)";
    char buf[48];
    if (c >= 0x80) std::snprintf(buf, sizeof buf, "the non-ASCII byte 0x%02X", c);
    else
        std::snprintf(buf, sizeof buf, "the control byte 0x%02X", c);
    return buf;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Length of the valid UTF-8 prefix of `s` (header descriptions may be UTF-8;
// anything else would break the JSON and SQLite layers downstream).
std::size_t valid_utf8_prefix(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        std::uint32_t min = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            min = 0x10000;
        } else
            return i;
        if (i + len > s.size()) return i;
        std::uint32_t cp = c & (0x7F >> len);
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return i;
}

// Memory this process may use: the machine's, or less where a resource limit
// or the container's cgroup says so.
std::uint64_t process_memory_limit() {
    std::uint64_t limit = UINT64_MAX;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) limit = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
        rlimit r{};
        if (getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
            limit = std::min<std::uint64_t>(limit, r.rlim_cur);
    }
    std::ifstream cgroup("/sys/fs/cgroup/memory.max");
    std::uint64_t cgroup_limit = 0;
    if (cgroup >> cgroup_limit && cgroup_limit > 0) limit = std::min(limit, cgroup_limit);
    return limit;
}

std::string gib(std::uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
    return buf;
}

// Where the residue lines of one record lie: runs of lines that keep the same
// number of letters (a wrapped FASTA record is one run and its last line), so
// that an offset into the record names its own line at a few words a record.
struct LineRun {
    std::uint64_t offset;  // letters of the record before the run
    std::uint64_t line;    // 1-based line of the run's first line
    std::uint64_t length;  // letters on each of its lines
};
constexpr std::size_t kMaxLineRuns = 4096;  // past this (ragged lines) the header line is named instead

// The line of the record's letter at `offset`, or 0 when unknown.
std::uint64_t line_of(const std::vector<LineRun>& runs, std::uint64_t offset) {
    const LineRun* found = nullptr;
    for (const LineRun& run : runs)
        if (run.length > 0 && run.offset <= offset) found = &run;
    return found ? found->line + (offset - found->offset) / found->length : 0;
}

// The reader proper; SequenceReader is its public face, and read_sequences()
// uses it directly to report progress from inside a long record.
class FastxParser {
public:
    explicit FastxParser(const std::string& file_path);
    // Parses `text`, whole records of the file `file_path` whose first line is
    // line `first_line`, in memory (no file is opened).
    FastxParser(const std::string& file_path, std::string_view text, std::uint64_t first_line, bool file_start,
                std::optional<SequenceFormat> known_format)
        : path(file_path),
          data(text.data()),
          end(text.size()),
          eof(true),
          line(first_line - 1),
          format(known_format),
          bom_checked(!file_start) {}
    FastxParser(const FastxParser&) = delete;
    FastxParser& operator=(const FastxParser&) = delete;

    std::string path;
    std::unique_ptr<FileInput> file;
    std::vector<char> buffer;
    // The bytes being parsed: `buffer` when reading a file, a block of the
    // file's text (RecordBlock) when parsing one in memory.
    const char* data = nullptr;
    std::size_t pos = 0, end = 0;
    bool eof = false;
    std::uint64_t line = 0;         // lines consumed so far
    std::uint64_t record_line = 0;  // header line of the last record returned
    std::uint64_t size = 0;
    std::optional<SequenceFormat> format;
    // Called with (bytes_read, file_size) whenever another kProgressInterval
    // compressed bytes have been consumed; may throw Cancelled.
    std::function<void(std::uint64_t, std::uint64_t)> progress;
    std::uint64_t last_report = 0;
    // Lines of the last record's residues (empty once past kMaxLineRuns).
    std::vector<LineRun> runs;
    bool runs_complete = true;
    // Letters held: the last record's, or every record's when `keep_all` (read_sequences
    // keeps them all). Past `held_limit` the file is refused before memory runs out.
    bool keep_all = false;
    std::uint64_t held = 0;
    std::uint64_t held_limit = UINT64_MAX;
    DescriptionBlanks description_blanks = DescriptionBlanks::Trim;
    bool bom_checked = false;
    // Parsing a block cut by offset that is not the file's last: its end is
    // no end of the file, so a FASTQ record may not end there without its
    // quality line.
    bool more_follows = false;
    // The file could not be read past `data` (a block that ends at a gzip
    // fault): why, thrown where the text runs out, as the line reader throws it.
    std::string end_fault;

    std::uint64_t bytes_read() const { return file ? file->offset() : end; }

    [[noreturn]] void fail(std::uint64_t at, const std::string& what) const {
        throw Error(path + ":" + std::to_string(at) + ": " + what);
    }

    // Makes at least one byte available; false at the end of the input.
    bool fill() {
        if (pos < end) return true;
        if (eof) {
            if (!end_fault.empty()) throw Error(path + ":" + std::to_string(line + 1) + ": cannot read: " + end_fault);
            return false;
        }
        std::size_t n = 0;
        try {
            n = file->read(buffer.data(), buffer.size());
        } catch (const InputFault& fault) {
            throw Error(path + ":" + std::to_string(line + 1) + ": cannot read: " + fault.why);
        }
        if (n == 0) {
            eof = true;
            return false;
        }
        pos = 0;
        end = n;
        if (progress) {
            const std::uint64_t done = bytes_read();
            if (done - last_report >= kProgressInterval) {
                last_report = done;
                progress(done, size);
            }
        }
        return true;
    }

    // Next byte without consuming it, or -1 at the end of the input.
    int peek() {
        if (!fill()) return -1;
        return static_cast<unsigned char>(data[pos]);
    }

    // Consumes one line (without its '\n'), handing it to `sink` in chunks as
    // they lie in the buffer, so a huge line is never copied twice. Returns false
    // at the end of the input.
    template <typename Sink>
    bool consume_line(Sink&& sink) {
        if (!fill()) return false;
        ++line;
        while (fill()) {
            const char* begin = data + pos;
            const std::size_t avail = end - pos;
            const void* nl = std::memchr(begin, '\n', avail);
            if (nl) {
                const auto n = static_cast<std::size_t>(static_cast<const char*>(nl) - begin);
                sink(begin, n);
                pos += n + 1;
                return true;
            }
            sink(begin, avail);
            pos = end;
        }
        return true;  // the last line had no '\n'
    }

    // A line into a string, '\r' of a CRLF end removed.
    bool read_line(std::string& out) {
        out.clear();
        const std::uint64_t at = line + 1;
        if (!consume_line([&](const char* p, std::size_t n) {
                if (out.size() + n > kMaxHeaderBytes)
                    fail(at, "expected a header line, found a line of more than " +
                                 std::to_string(kMaxHeaderBytes >> 20) + " MiB");
                out.append(p, n);
            }))
            return false;
        if (!out.empty() && out.back() == '\r') out.pop_back();
        return true;
    }

    // Appends a line of residues (or quality letters) to `dst`, dropping
    // whitespace and rejecting control and non-ASCII bytes. Quality lines may not
    // hold spaces, which would shift every later quality value.
    bool append_letters(std::string& dst, bool quality) {
        const std::uint64_t at = line + 1;
        return consume_line([&](const char* p, std::size_t n) {
            const std::size_t old = dst.size();
            dst.resize(old + n);  // libstdc++ grows capacity geometrically: linear overall
            char* w = dst.data() + old;
            for (std::size_t i = 0; i < n; ++i) {
                const auto c = static_cast<unsigned char>(p[i]);
                if (c > 0x20 && c < 0x7f) {
                    *w++ = static_cast<char>(c);
                } else if (c == '\r' || (!quality && is_blank(static_cast<char>(c)))) {
                    continue;
                } else if (quality && c == ' ') {
                    fail(at, "expected quality letters '!' to '~', found a space");
                } else {
                    fail(at, std::string("expected ") + (quality ? "quality letters" : "sequence text") + ", found " +
                                 byte_name(c));
                }
            }
            dst.resize(static_cast<std::size_t>(w - dst.data()));
            held += dst.size() - old;
            if (held > held_limit) too_large();
        });
    }

    [[noreturn]] void too_large() const {
        throw Error(path + ": " + gib(held) + " of residues" + (keep_all ? " read so far" : " in one record") +
                    ", more than a quarter of the memory this process may use (" + gib(held_limit * 4) +
                    "); reading keeps every residue in memory: split the file into smaller ones, or use a machine "
                    "with more memory");
    }

    // One line of residues, its line recorded in `runs`.
    void append_residue_line(std::string& dst) {
        const std::uint64_t at = line + 1;
        const std::uint64_t before = dst.size();
        append_letters(dst, false);
        const std::uint64_t length = dst.size() - before;
        if (!runs_complete) return;
        if (!runs.empty()) {
            const LineRun& last = runs.back();
            if (last.length == length && last.offset + (at - last.line) * last.length == before) return;
        }
        if (runs.size() == kMaxLineRuns) {
            runs.clear();
            runs_complete = false;
            return;
        }
        runs.push_back({before, at, length});
    }

    // A UTF-8 byte-order mark before the first record is skipped (editors on
    // Windows write one).
    void skip_byte_order_mark() {
        bom_checked = true;
        if (!fill() || end - pos < 3) return;
        if (static_cast<unsigned char>(data[pos]) == 0xEF && static_cast<unsigned char>(data[pos + 1]) == 0xBB &&
            static_cast<unsigned char>(data[pos + 2]) == 0xBF)
            pos += 3;
    }

    // Splits a header line (marker already removed) into id and description.
    void parse_header(std::string_view text, char marker, Sequence& out) const {
        for (char ch : text) {
            const auto c = static_cast<unsigned char>(ch);
            if (c < 0x20 && ch != '\t') fail(line, "expected a header of text, found " + byte_name(c));
        }
        std::size_t i = 0;
        while (i < text.size() && is_blank(text[i])) ++i;
        std::size_t j = i;
        while (j < text.size() && !is_blank(text[j])) ++j;
        if (i == j) fail(line, std::string("expected a sequence id after '") + marker + "'");
        out.id.assign(text.substr(i, j - i));
        for (char ch : out.id)
            if (static_cast<unsigned char>(ch) >= 0x80)
                fail(line, "expected an ASCII sequence id, found " + byte_name(static_cast<unsigned char>(ch)));
        while (j < text.size() && is_blank(text[j])) ++j;
        std::size_t k = text.size();
        if (description_blanks == DescriptionBlanks::Trim)
            while (k > j && is_blank(text[k - 1])) --k;
        const std::string_view description = text.substr(j, k - j);
        const std::size_t valid = valid_utf8_prefix(description);
        if (valid != description.size())
            fail(line, "expected UTF-8 text in the header of record '" + out.id + "', found " +
                           byte_name(static_cast<unsigned char>(description[valid])));
        out.description.assign(description);
    }

    bool next(Sequence& out) {
        out.id.clear();
        out.description.clear();
        out.residues.clear();
        out.quality.clear();
        runs.clear();
        runs_complete = true;
        if (!keep_all) held = 0;
        if (!bom_checked) skip_byte_order_mark();

        // Skip blank lines up to the next header; refuse anything else before
        // reading it, so a binary file is rejected after one byte, not one line.
        std::string header;
        for (;;) {
            const int c = peek();
            if (c < 0) return false;
            if (c == '>' || c == '@') break;
            if (c == '\n' || is_blank(static_cast<char>(c))) {
                read_line(header);
                if (header.find_first_not_of(" \t\r\v\f") != std::string::npos)
                    fail(line, "expected a FASTA header '>' or FASTQ header '@'");
                continue;
            }
            fail(line + 1, "expected a FASTA header '>' or FASTQ header '@'");
        }
        const char marker = static_cast<char>(peek());
        const SequenceFormat kind = marker == '>' ? SequenceFormat::Fasta : SequenceFormat::Fastq;
        if (format && *format != kind)
            fail(line + 1, *format == SequenceFormat::Fasta ? "expected a FASTA header '>' (the file began as FASTA)"
                                                            : "expected a FASTQ header '@'");
        read_line(header);
        record_line = line;
        parse_header(std::string_view(header).substr(1), marker, out);
        format = kind;

        if (kind == SequenceFormat::Fasta) {
            for (;;) {
                const int c = peek();
                if (c < 0 || c == '>') break;
                append_residue_line(out.residues);
            }
            return true;
        }

        // FASTQ, four lines per record.
        const std::string where = " of record '" + out.id + "'";
        if (peek() < 0) fail(line + 1, "expected the sequence line" + where + ", found the end of the file");
        append_residue_line(out.residues);
        if (peek() < 0) fail(line + 1, "expected the '+' line" + where + ", found the end of the file");
        if (peek() != '+')
            fail(line + 1, "expected the '+' line" + where +
                               " (a FASTQ record is four lines; multi-line FASTQ is not supported)");
        read_line(header);
        const std::string_view plus_id = std::string_view(header).substr(1);
        if (!plus_id.empty() && plus_id != out.id && plus_id.substr(0, plus_id.find_first_of(" \t")) != out.id)
            fail(line, "expected '+' alone or '+" + out.id + "', found '" + header + "'");
        if (peek() < 0) {
            if (out.residues.empty() && !more_follows)
                return true;  // an empty record's empty quality line may be missing
            fail(line + 1, "expected the quality line" + where + ", found the end of the file");
        }
        append_letters(out.quality, true);
        if (out.quality.size() != out.residues.size())
            fail(line, "expected " + std::to_string(out.residues.size()) + " quality letters" + where +
                           " (one per residue), found " + std::to_string(out.quality.size()));
        return true;
    }
};

FastxParser::FastxParser(const std::string& file_path) : path(file_path) {
    int fd = -1;
    if (path == "-") {
        fd = dup(STDIN_FILENO);
        if (fd < 0) throw Error("-: cannot read standard input: " + std::string(std::strerror(errno)));
    } else {
        struct stat st {};
        if (stat(path.c_str(), &st) != 0) throw Error(path + ": cannot open: " + std::string(std::strerror(errno)));
        if (S_ISDIR(st.st_mode)) throw Error(path + ": cannot open: it is a directory, expected a FASTA or FASTQ file");
        // A file or a pipe (process substitution, a FIFO); a device or socket
        // is not a sequence file (/dev/zero would be read forever).
        const bool descriptor =
            path == "/dev/stdin" || path.rfind("/dev/fd/", 0) == 0 || path.rfind("/proc/self/fd/", 0) == 0;
        if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !descriptor)
            throw Error(path + ": cannot open: it is a device or socket, expected a FASTA or FASTQ file");
        if (S_ISREG(st.st_mode)) size = static_cast<std::uint64_t>(st.st_size);
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw Error(path + ": cannot open: " + std::string(std::strerror(errno)));
    }
    // Small files (most inputs, and every fuzz input) need no large buffers.
    const std::size_t bytes = (size > 0 && size < kBufferBytes) ? std::max<std::size_t>(8192, size) : kBufferBytes;
    file = std::make_unique<FileInput>(path, fd, bytes);
    buffer.resize(bytes);
    data = buffer.data();
}

}  // namespace

struct SequenceReader::Impl : FastxParser {
    using FastxParser::FastxParser;
};

SequenceReader::SequenceReader(const std::string& path, DescriptionBlanks blanks)
    : impl_(std::make_unique<Impl>(path)) {
    impl_->description_blanks = blanks;
    impl_->held_limit = process_memory_limit() / 4;  // one record at a time
}

SequenceReader::~SequenceReader() = default;

bool SequenceReader::next(Sequence& out) { return impl_->next(out); }
const std::string& SequenceReader::path() const { return impl_->path; }
std::optional<SequenceFormat> SequenceReader::format() const { return impl_->format; }
// The header line of the record last returned by next(): the line a caller
// names when it reports a problem with that record.
std::uint64_t SequenceReader::line() const { return impl_->record_line; }
std::uint64_t SequenceReader::bytes_read() const { return impl_->bytes_read(); }
std::uint64_t SequenceReader::file_size() const { return impl_->size; }

std::uint64_t SequenceSet::residue_count() const {
    std::uint64_t n = 0;
    for (const auto& r : records) n += r.residues.size();
    return n;
}

namespace {

// Normalises a record's residues for `alphabet` and checks them and the
// record's shape; `at` is its header line, `runs` where its residue lines lie.
void check_record(Sequence& record, const std::string& path, std::uint64_t at, const std::vector<LineRun>& runs,
                  AlphabetKind alphabet, const ReadOptions& options) {
    // The first letter not valid in the alphabet, as an offset into the
    // record as read (gap characters included, so that it names its line)
    // and as a residue number (gaps removed, as aligned).
    std::size_t raw = std::string::npos, number = std::string::npos;
    const auto has = [&record](char c) {
        return std::memchr(record.residues.data(), c, record.residues.size()) != nullptr;
    };
    if (!has('-') && !has('.')) {  // memchr: a pass at memory speed over a genome
        raw = number = normalise_residues(record.residues, alphabet);
    } else {
        std::size_t n = 0;
        for (std::size_t k = 0; k < record.residues.size(); ++k) {
            const char c = record.residues[k];
            if (c == '-' || c == '.') continue;
            if (!is_valid_residue(alphabet, c)) {
                raw = k;
                number = n;
                break;
            }
            ++n;
        }
        if (raw == std::string::npos) normalise_residues(record.residues, alphabet);
    }
    if (raw != std::string::npos) {
        auto c = static_cast<unsigned char>(record.residues[raw]);
        if (c >= 'a' && c <= 'z') c = static_cast<unsigned char>(c - 'a' + 'A');
        const std::string letter = c >= 0x21 && c < 0x7f ? std::string(1, static_cast<char>(c)) : byte_name(c);
        const std::uint64_t residue_line = line_of(runs, raw);
        throw Error(path + ":" + std::to_string(residue_line ? residue_line : at) + ": record '" + record.id +
                    "': residue '" + letter + "' at position " + std::to_string(number + 1) + " is not valid in a " +
                    std::string(to_string(alphabet)) + " sequence");
    }
    const auto where = [&] { return path + ":" + std::to_string(at) + ": record '" + record.id + "': "; };
    if (record.residues.empty() && !options.allow_empty)
        throw Error(where() + "expected residues, the record is empty");
    // Quality stays aligned with the residues only when nothing was removed.
    if (!record.quality.empty() && record.quality.size() != record.residues.size())
        throw Error(where() + "expected no gap characters or trailing stop in a FASTQ record");
}

// Records whose id an earlier record has: how many, and the first of them
// with the earlier one it repeats. Sorted hashes, 16 bytes a record, rather
// than a set of the ids themselves; `id_of(k)` is record k's id.
struct Repeats {
    std::uint64_t count = 0;
    std::size_t first = 0, first_of = 0;
};

template <typename IdOf>
Repeats find_repeats(std::vector<std::pair<std::size_t, std::size_t>> keys, IdOf&& id_of) {
    Repeats found;
    std::sort(keys.begin(), keys.end());
    for (std::size_t k = 0; k < keys.size();) {
        std::size_t e = k + 1;
        while (e < keys.size() && keys[e].first == keys[k].first) ++e;
        // Within one hash (indices ascending), each record against the earlier ones.
        for (std::size_t i = k + 1; i < e; ++i)
            for (std::size_t j = k; j < i; ++j) {
                const std::size_t later = keys[i].second, earlier = keys[j].second;
                if (id_of(later) != id_of(earlier)) continue;
                ++found.count;
                if (found.count == 1 || later < found.first) {
                    found.first = later;
                    found.first_of = earlier;
                }
                break;
            }
        k = e;
    }
    return found;
}

void find_duplicate_ids(SequenceSet& set) {
    std::vector<std::pair<std::size_t, std::size_t>> keys;  // (hash of the id, record index)
    keys.reserve(set.records.size());
    const std::hash<std::string> hash;
    for (std::size_t k = 0; k < set.records.size(); ++k) keys.emplace_back(hash(set.records[k].id), k);
    const Repeats found =
        find_repeats(std::move(keys), [&](std::size_t k) -> const std::string& { return set.records[k].id; });
    set.duplicate_ids = found.count;
    set.first_duplicate = found.first;
    set.first_duplicate_of = found.first_of;
}

}  // namespace

SequenceSet read_sequences(const std::string& path, const ReadOptions& options,
                           const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    FastxParser reader(path);
    SequenceSet set;
    set.path = path;
    if (progress) progress(0, reader.size);
    reader.progress = progress;
    // Every record stays in memory; strings grow by doubling while they are
    // read, so a quarter of what the process may use is where a file is refused.
    reader.keep_all = true;
    reader.held_limit = process_memory_limit() / 4;

    // Records read before the alphabet is known: their header lines and residue lines.
    std::vector<std::uint64_t> pending_lines;
    std::vector<std::vector<LineRun>> pending_runs;
    std::optional<AlphabetKind> alphabet = options.alphabet;
    std::size_t sampled = 0;

    const auto check = [&](Sequence& record, std::uint64_t at, const std::vector<LineRun>& runs) {
        check_record(record, path, at, runs, *alphabet, options);
    };
    const auto detect = [&]() {
        std::string sample;
        sample.reserve(std::min(sampled, kDetectionSample));
        for (const auto& r : set.records) {
            sample.append(r.residues, 0, std::min(r.residues.size(), kDetectionSample - sample.size()));
            if (sample.size() >= kDetectionSample) break;
        }
        alphabet = detect_alphabet(sample);
        for (std::size_t i = 0; i < set.records.size(); ++i) check(set.records[i], pending_lines[i], pending_runs[i]);
        pending_lines.clear();
        pending_runs.clear();
    };

    try {
        Sequence record;
        while (reader.next(record)) {
            if (alphabet) {
                check(record, reader.record_line, reader.runs);
            } else {
                pending_lines.push_back(reader.record_line);
                pending_runs.push_back(reader.runs);
                sampled += record.residues.size();
            }
            set.records.push_back(std::move(record));
            record = Sequence{};
            if (!alphabet && sampled >= kDetectionSample) detect();
        }
        if (!alphabet) detect();
    } catch (const std::bad_alloc&) {
        const std::size_t count = set.records.size();
        set.records = {};
        throw Error(path + ": out of memory after " + std::to_string(count) + " records (" + gib(reader.held) +
                    " of residues); split the file into smaller ones, or use a machine with "
                    "more memory");
    }
    if (set.records.empty() && !options.allow_empty)
        throw Error(path + ": expected FASTA ('>') or FASTQ ('@') records, found none");
    set.alphabet = *alphabet;
    find_duplicate_ids(set);
    if (progress) progress(reader.bytes_read(), reader.size);
    return set;
}

std::string SequenceSet::duplicate_id_warning() const {
    if (duplicate_ids == 0) return {};
    return duplicate_id_line(path, duplicate_ids, first_duplicate, first_duplicate_of, records[first_duplicate].id);
}

std::string duplicate_id_line(const std::string& path, std::uint64_t count, std::size_t first, std::size_t first_of,
                              const std::string& id) {
    return path + ": " + std::to_string(count) + (count == 1 ? " record repeats" : " records repeat") +
           " the id of an earlier one (the first: record " + std::to_string(first + 1) + ", '" + id + "', as record " +
           std::to_string(first_of + 1) + "); results name records by id, so theirs cannot be told apart";
}

// ---- Blocks of whole records (record_blocks.hpp) ----

// A plain file cut by offset: its descriptor, where each block starts and,
// once known, how many line ends each holds (for the line an error names).
class BlockSource {
public:
    BlockSource(std::string path, int fd, std::uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
    ~BlockSource() { ::close(fd_); }
    BlockSource(const BlockSource&) = delete;
    BlockSource& operator=(const BlockSource&) = delete;

    std::uint64_t size() const { return size_; }

    // Up to `n` bytes at `offset`, fewer only at the end of the file.
    std::size_t read_some(std::uint64_t offset, char* dst, std::size_t n) const {
        std::size_t got = 0;
        while (got < n) {
            const ssize_t r = ::pread(fd_, dst + got, n - got, static_cast<off_t>(offset + got));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw Error(path_ + ": cannot read: " + std::strerror(errno));
            if (r == 0) break;
            got += static_cast<std::size_t>(r);
        }
        return got;
    }
    // Exactly `n` bytes at `offset`.
    void read(std::uint64_t offset, char* dst, std::size_t n) const {
        if (read_some(offset, dst, n) != n)
            throw Error(path_ + ": cannot read: the file became shorter while it was read");
    }

    // The cutter's blocks, in order.
    void add_block(std::uint64_t start) {
        std::lock_guard lock(mutex_);
        starts_.push_back(start);
        newlines_.push_back(-1);
    }
    void set_lines(std::uint64_t index, std::uint64_t newlines) {
        std::lock_guard lock(mutex_);
        newlines_.at(index) = static_cast<std::int64_t>(newlines);
    }
    // The 1-based line that block `index` starts on: its predecessors' line
    // ends, counted here for those that no parse has counted yet.
    std::uint64_t first_line(std::uint64_t index) {
        std::lock_guard lock(mutex_);
        std::uint64_t line = 1;
        std::vector<char> buffer;
        for (std::uint64_t k = 0; k < index; ++k) {
            if (newlines_[k] < 0) {
                if (buffer.empty()) buffer.resize(std::size_t{1} << 20);
                std::int64_t count = 0;
                for (std::uint64_t at = starts_[k]; at < starts_[k + 1];) {
                    const auto n =
                        static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), starts_[k + 1] - at));
                    read(at, buffer.data(), n);
                    count += std::count(buffer.data(), buffer.data() + n, '\n');
                    at += n;
                }
                newlines_[k] = count;
            }
            line += static_cast<std::uint64_t>(newlines_[k]);
        }
        return line;
    }

private:
    std::string path_;
    int fd_;
    std::uint64_t size_;
    std::mutex mutex_;
    std::vector<std::uint64_t> starts_;
    std::vector<std::int64_t> newlines_;  // -1: not counted yet
};

namespace {

constexpr std::size_t kWindowBytes = 64 * 1024;                  // read around a block's end to find the next record
constexpr std::size_t kPlainRecordBytes = std::size_t{1} << 20;  // past this, the memory limit is looked up

// Sixteen bytes as one vector (SSE2 on x86-64, NEON on Arm).
using Bytes16 = unsigned char __attribute__((vector_size(16)));

// Upper-cases `n` letters into `dst` by the alphabet's table (residue_letters);
// nonzero when one is not valid. Sixteen at a time where all sixteen are the
// alphabet's usual letters (protein: A to Z and '*', all valid; DNA: ACGTN;
// RNA: ACGUN), checked by vector compares; the table otherwise.
template <AlphabetKind kind>
unsigned copy_letters_as(const unsigned char* src, std::size_t n, unsigned char* dst,
                         const std::array<unsigned char, 256>& letters) {
    unsigned invalid = 0;
    std::size_t k = 0;
    for (; k + 16 <= n; k += 16) {
        Bytes16 c;
        std::memcpy(&c, src + k, 16);
        const Bytes16 lower = __builtin_convertvector((c >= 'a') & (c <= 'z'), Bytes16);
        const Bytes16 u = c - (lower & 0x20);
        Bytes16 usual;
        if constexpr (kind == AlphabetKind::Protein)
            usual = __builtin_convertvector(((u >= 'A') & (u <= 'Z')) | (u == '*'), Bytes16);
        else
            usual = __builtin_convertvector((u == 'A') | (u == 'C') | (u == 'G') |
                                                (u == (kind == AlphabetKind::Dna ? 'T' : 'U')) | (u == 'N'),
                                            Bytes16);
        std::uint64_t halves[2];
        std::memcpy(halves, &usual, 16);
        if ((halves[0] & halves[1]) == ~std::uint64_t{0}) {
            std::memcpy(dst + k, &u, 16);
            continue;
        }
        for (std::size_t j = k; j < k + 16; ++j) {
            const unsigned char letter = letters[src[j]];
            dst[j] = letter;
            invalid |= letter == 0 ? 1u : 0u;
        }
    }
    for (; k < n; ++k) {
        const unsigned char letter = letters[src[k]];
        dst[k] = letter;
        invalid |= letter == 0 ? 1u : 0u;
    }
    return invalid;
}

unsigned copy_letters(AlphabetKind alphabet, const char* src, std::size_t n, unsigned char* dst,
                      const std::array<unsigned char, 256>& letters) {
    const auto* s = reinterpret_cast<const unsigned char*>(src);
    switch (alphabet) {
        case AlphabetKind::Dna: return copy_letters_as<AlphabetKind::Dna>(s, n, dst, letters);
        case AlphabetKind::Rna: return copy_letters_as<AlphabetKind::Rna>(s, n, dst, letters);
        case AlphabetKind::Protein: break;
    }
    return copy_letters_as<AlphabetKind::Protein>(s, n, dst, letters);
}

// The id and description of a header line [begin, end) (its marker at
// begin, no line end) when it is printable ASCII; false otherwise.
bool plain_header(const char* d, std::size_t begin, std::size_t end, Sequence& record) {
    if (end - begin >= kMaxHeaderBytes) return false;
    for (std::size_t k = begin + 1; k < end; ++k) {
        const auto c = static_cast<unsigned char>(d[k]);
        if (c < 0x20 || c > 0x7e) return false;
    }
    std::size_t i = begin + 1;
    while (i < end && d[i] == ' ') ++i;
    std::size_t j = i;
    while (j < end && d[j] != ' ') ++j;
    if (i == j) return false;
    std::size_t k = j;
    while (k < end && d[k] == ' ') ++k;
    std::size_t e = end;
    while (e > k && d[e - 1] == ' ') --e;
    record.id.assign(d + i, j - i);
    record.description.assign(d + k, e - k);
    return true;
}

// The lines of a block, counted: [begin, end) without the '\n' (nor a '\r'
// before it); false at the block's end.
struct PlainLines {
    const char* d;
    std::size_t n;
    std::size_t pos = 0;
    std::uint64_t newlines = 0;
    bool next(std::size_t& begin, std::size_t& end) {
        if (pos >= n) return false;
        const auto* nl = static_cast<const char*>(std::memchr(d + pos, '\n', n - pos));
        begin = pos;
        end = nl ? static_cast<std::size_t>(nl - d) : n;
        pos = nl ? end + 1 : n;
        newlines += nl ? 1 : 0;
        if (end > begin && d[end - 1] == '\r') --end;
        return true;
    }
};

// Residues as parsed, before the alphabet's last word: a trailing stop, an
// empty record. False where the full parser has to say more.
bool plain_residues_done(std::string& residues, AlphabetKind alphabet, const ReadOptions& options,
                         std::uint64_t& held_limit) {
    if (residues.size() > kPlainRecordBytes) {
        if (held_limit == 0) held_limit = process_memory_limit() / 4;  // looked up for long records only
        if (residues.size() > held_limit) return false;
    }
    if (alphabet == AlphabetKind::Protein && !residues.empty() && residues.back() == '*') residues.pop_back();
    return !residues.empty() || options.allow_empty;
}

// The records of a block of FASTA text of the common shape: each header line
// printable ASCII ('>', an id, a description), then lines of letters valid in
// the alphabet (any case, a CRLF end allowed), every record non-empty unless
// empty ones are allowed. Parsed with one memchr a line and vector compares
// (or a table load) a letter. False for anything else (blank lines before the
// first record, a byte-order mark, tabs, gaps, UTF-8, a fault...): the full
// parser then reads the block, and names the fault. `newlines`: the block's
// line ends.
bool parse_plain_fasta(std::string_view text, AlphabetKind alphabet, const ReadOptions& options,
                       std::vector<Sequence>& records, std::uint64_t& newlines) {
    PlainLines lines{text.data(), text.size()};
    const char* d = text.data();
    const std::size_t n = text.size();
    if (n > 0 && d[0] != '>') return false;
    const std::array<unsigned char, 256>& letters = residue_letters(alphabet);
    std::uint64_t held_limit = 0;
    std::size_t begin = 0, end = 0;
    while (lines.next(begin, end)) {
        Sequence& record = records.emplace_back();
        if (!plain_header(d, begin, end, record)) return false;
        // Residue lines up to the next line that opens with '>'. A '>'
        // anywhere else is no residue: the full parser names it.
        const std::size_t body = lines.pos;
        const auto* gt = static_cast<const char*>(std::memchr(d + body, '>', n - body));
        const std::size_t body_end = gt ? static_cast<std::size_t>(gt - d) : n;
        if (gt && d[body_end - 1] != '\n') return false;
        record.residues.resize(body_end - body);
        auto* w = reinterpret_cast<unsigned char*>(record.residues.data());
        unsigned invalid = 0;
        PlainLines body_lines{d, body_end, body};
        while (body_lines.next(begin, end)) {
            invalid |= copy_letters(alphabet, d + begin, end - begin, w, letters);
            w += end - begin;
        }
        if (invalid) return false;
        record.residues.resize(static_cast<std::size_t>(w - reinterpret_cast<unsigned char*>(record.residues.data())));
        if (!plain_residues_done(record.residues, alphabet, options, held_limit)) return false;
        lines.pos = body_end;
        lines.newlines += body_lines.newlines;
    }
    newlines = lines.newlines;
    return true;
}

// The same for FASTQ: four lines a record (header, letters, '+' alone or
// with the id, as many quality letters '!' to '~'), no blank line between.
bool parse_plain_fastq(std::string_view text, AlphabetKind alphabet, const ReadOptions& options,
                       std::vector<Sequence>& records, std::uint64_t& newlines) {
    PlainLines lines{text.data(), text.size()};
    const char* d = text.data();
    const std::array<unsigned char, 256>& letters = residue_letters(alphabet);
    std::uint64_t held_limit = 0;
    std::size_t begin = 0, end = 0;
    while (lines.next(begin, end)) {
        if (d[begin] != '@') return false;
        Sequence& record = records.emplace_back();
        if (!plain_header(d, begin, end, record)) return false;
        if (!lines.next(begin, end)) return false;
        record.residues.resize(end - begin);
        if (copy_letters(alphabet, d + begin, end - begin, reinterpret_cast<unsigned char*>(record.residues.data()),
                         letters))
            return false;
        if (!lines.next(begin, end) || d[begin] != '+') return false;
        const std::string_view plus(d + begin + 1, end - begin - 1);
        if (!plus.empty() && plus != record.id) return false;
        if (!lines.next(begin, end) || end - begin != record.residues.size()) return false;
        unsigned outside = 0;
        for (std::size_t k = begin; k < end; ++k) {
            const auto c = static_cast<unsigned char>(d[k]);
            outside |= (c < '!' || c > '~') ? 1u : 0u;
        }
        if (outside) return false;
        record.quality.assign(d + begin, end - begin);
        const std::size_t length = record.residues.size();
        if (!plain_residues_done(record.residues, alphabet, options, held_limit) || record.residues.size() != length)
            return false;
    }
    newlines = lines.newlines;
    return true;
}

// The full parser over a loaded block whose first line is `first_line`.
std::vector<Sequence> parse_block_text(const RecordBlock& block, std::uint64_t first_line, const std::string& path,
                                       std::optional<SequenceFormat> format, AlphabetKind alphabet,
                                       const ReadOptions& options) {
    FastxParser parser(path, block.text, first_line, block.file_start, format);
    parser.held_limit = process_memory_limit() / 4;
    parser.more_follows = block.source && block.offset + block.size < block.source->size();
    parser.end_fault = block.fault;
    std::vector<Sequence> records;
    try {
        Sequence record;
        while (parser.next(record)) {
            check_record(record, path, parser.record_line, parser.runs, alphabet, options);
            records.push_back(std::move(record));
            record = Sequence{};
        }
    } catch (const std::bad_alloc&) {
        records = {};
        throw Error(path + ": out of memory at line " + std::to_string(parser.line) +
                    "; split the file into smaller ones, or use a machine with more memory");
    }
    return records;
}

// The fault the line reader meets first in the file `path`, thrown. A FASTQ
// block cut by offset that fails may have been cut inside a record of a
// malformed file, so the fault is looked for again from the file's start (a
// failing file is read twice); `fallback` when none is found.
[[noreturn]] void throw_first_fault(const std::string& path, AlphabetKind alphabet, const ReadOptions& options,
                                    const Error& fallback) {
    FastxParser parser(path);
    parser.held_limit = process_memory_limit() / 4;
    Sequence record;
    while (parser.next(record)) check_record(record, path, parser.record_line, parser.runs, alphabet, options);
    throw fallback;
}

// The residues read_sequences samples to detect the alphabet, read from the
// file's start by the line reader, which throws the first fault of shape it
// meets on the way: where a FASTQ block cut by offset fails while the
// alphabet is detected.
std::string sample_in_order(const std::string& path) {
    FastxParser parser(path);
    parser.held_limit = process_memory_limit() / 4;
    std::string sample;
    Sequence record;
    while (sample.size() < kDetectionSample && parser.next(record))
        sample.append(record.residues, 0, std::min(record.residues.size(), kDetectionSample - sample.size()));
    return sample;
}

}  // namespace

struct RecordBlockReader::File : FastxParser {
    using FastxParser::FastxParser;
};

RecordBlockReader::RecordBlockReader(const std::string& path, std::size_t block_bytes)
    : file_(std::make_unique<File>(path)), path_(path), block_bytes_(std::max<std::size_t>(block_bytes, 1)) {
    held_limit_ = process_memory_limit() / 4;
}

RecordBlockReader::~RecordBlockReader() = default;

std::uint64_t RecordBlockReader::bytes_read() const { return source_ ? offset_ : file_->bytes_read(); }
std::uint64_t RecordBlockReader::file_size() const { return file_->size; }

// Where the block ends: before the last line that opens a record and of
// which the block holds all earlier lines, or 0 when there is none yet. A
// FASTA record opens at every line starting '>'; a FASTQ record at an '@'
// line met between records (four lines each, blank lines between them), so
// that a quality line starting '@' is no cut.
std::size_t RecordBlockReader::cut_point() const {
    const char* text = pending_.data();
    const std::size_t size = pending_.size();
    if (format_ == SequenceFormat::Fasta) {
        for (std::size_t k = size; k-- > 1;)
            if (text[k] == '>' && text[k - 1] == '\n') return k;
        return 0;
    }
    // A byte-order mark before the file's first line is no part of it.
    const std::size_t first = next_index_ == 0 && size >= 3 && pending_.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    std::size_t cut = 0, at = first;
    int state = 0;  // 0 between records, 1..3 lines of a record read
    while (at < size) {
        const void* nl = std::memchr(text + at, '\n', size - at);
        if (!nl) break;  // an incomplete line: no cut at or after it
        const std::size_t line_end = static_cast<std::size_t>(static_cast<const char*>(nl) - text);
        if (state == 0) {
            if (text[at] == '@') {
                if (at > first) cut = at;
                state = 1;
            }
        } else {
            state = (state + 1) % 4;
        }
        at = line_end + 1;
    }
    return cut;
}

// A plain (not gzip) regular FASTA or FASTQ file is cut by offset; anything
// else (gzip, a pipe) is read through FileInput by this thread.
void RecordBlockReader::choose_reading() {
    reading_chosen_ = true;
    if (path_ == "-" || file_->size == 0) return;
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;  // FileInput's descriptor reads it
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        ::close(fd);
        return;
    }
    auto source = std::make_shared<BlockSource>(path_, fd, static_cast<std::uint64_t>(st.st_size));
    std::string head(std::min<std::size_t>(kWindowBytes, static_cast<std::size_t>(st.st_size)), '\0');
    head.resize(source->read_some(0, head.data(), head.size()));
    if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
        return;  // gzip
    std::size_t k = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (k < head.size() && (head[k] == '\n' || is_blank(head[k]))) ++k;
    if (k == head.size() || (head[k] != '>' && head[k] != '@')) return;
    format_known_ = true;
    format_ = head[k] == '>' ? SequenceFormat::Fasta : SequenceFormat::Fastq;
    source_ = std::move(source);
}

// The first record start at or past `from` (> 0), or the file's size when
// there is none, read a window at a time: a line opening with '>' in FASTA; in
// FASTQ a line opening with '@' whose next line but one opens with '+'. A
// quality line may open with '@', but its next line but one is the next
// record's sequence line, which never opens with '+'.
std::uint64_t RecordBlockReader::next_record_start(std::uint64_t from) const {
    const std::uint64_t size = source_->size();
    const char marker = format_ == SequenceFormat::Fasta ? '>' : '@';
    std::string window(kWindowBytes, '\0');
    // From the byte before the first place a record may start.
    for (std::uint64_t at = from - 1;;) {
        const std::size_t n = source_->read_some(at, window.data(), window.size());
        const char* w = window.data();
        const char* const e = w + n;
        const char* short_of = nullptr;  // a candidate whose lines run past the window
        for (const char* p = w + 1; p < e; ++p) {
            p = static_cast<const char*>(std::memchr(p, marker, static_cast<std::size_t>(e - p)));
            if (!p) break;
            if (p[-1] != '\n') continue;
            if (marker == '>') return at + static_cast<std::uint64_t>(p - w);
            const auto* second = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(e - p)));
            const auto* third =
                second
                    ? static_cast<const char*>(std::memchr(second + 1, '\n', static_cast<std::size_t>(e - second - 1)))
                    : nullptr;
            if (!third || third + 1 >= e) {
                short_of = p;
                break;
            }
            if (third[1] == '+') return at + static_cast<std::uint64_t>(p - w);
        }
        if (at + n >= size) return size;  // no record starts after this one (or none completes)
        if (short_of) {
            // Read again from the candidate, in a larger window where its lines fill this one.
            const std::uint64_t next = at + static_cast<std::uint64_t>(short_of - w) - 1;
            if (next == at) window.resize(window.size() * 2);
            at = next;
        } else {
            at += n - 1;  // the window's last byte is the next one's first
        }
        if (std::max<std::uint64_t>(at - offset_, window.size()) > held_limit_)
            throw Error(path_ + ": " + gib(std::max<std::uint64_t>(at - offset_, window.size())) +
                        " of residues in one record, more than a quarter of the memory this process may use (" +
                        gib(held_limit_ * 4) +
                        "); reading keeps every residue in memory: split the file into smaller ones, or use a "
                        "machine with more memory");
    }
}

// The next block of a file cut by offset: from the last block's end to the
// first record start at or past block_bytes on; the block's text is read
// later, by load_record_block().
bool RecordBlockReader::cut_by_offset(RecordBlock& out) {
    const std::uint64_t size = source_->size();
    if (offset_ >= size) return false;
    const std::uint64_t end = size - offset_ > block_bytes_ ? next_record_start(offset_ + block_bytes_) : size;
    source_->add_block(offset_);
    out.text.clear();
    out.source = source_;
    out.offset = offset_;
    out.size = end - offset_;
    out.loaded = false;
    out.first_line = 0;  // counted when an error needs it
    out.index = next_index_++;
    out.file_start = out.index == 0;
    offset_ = end;
    return true;
}

// Whether the text held shows the parser's first fault of shape without
// more of the file: the first byte that is neither blank nor a line end opens
// its line (judged at that byte), or its line ends within the text.
bool RecordBlockReader::first_line_judged() const {
    const std::size_t mark =
        next_index_ == 0 && pending_.size() >= 3 && pending_.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    std::size_t k = mark;
    while (k < pending_.size() && (pending_[k] == '\n' || is_blank(pending_[k]))) ++k;
    if (k == pending_.size()) return false;
    const std::size_t newline = pending_.rfind('\n', k);
    const std::size_t line_start = newline == std::string::npos ? mark : newline + 1;
    return k == line_start || pending_.find('\n', k) != std::string::npos;
}

bool RecordBlockReader::cut(RecordBlock& out) {
    if (!reading_chosen_) choose_reading();
    if (source_) return cut_by_offset(out);
    for (;;) {
        if (!format_known_) {
            // The format from the first byte that is not blank (after a byte-order mark).
            std::size_t k =
                next_index_ == 0 && pending_.size() >= 3 && pending_.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
            while (k < pending_.size() && (pending_[k] == '\n' || is_blank(pending_[k]))) ++k;
            const bool mark_complete = next_index_ > 0 || pending_.size() >= 3 || eof_;  // a byte-order mark is 3 bytes
            if (k < pending_.size() && mark_complete) {
                format_known_ = true;
                if (pending_[k] == '>') format_ = SequenceFormat::Fasta;
                else if (pending_[k] == '@')
                    format_ = SequenceFormat::Fastq;
            } else if (eof_) {
                format_known_ = true;
            }
        }
        std::size_t at = 0;
        if (eof_) {
            at = pending_.size();
        } else if (format_known_ && !format_) {
            // Neither format: the parser names the first fault. A line that
            // opens with blanks it reads whole before judging it (a read
            // fault met on the way is named first), so it is cut only whole.
            if (eof_ || first_line_judged()) at = pending_.size();
        } else if (format_known_ && pending_.size() >= block_bytes_) {
            at = cut_point();
        }
        if (at > 0 || (eof_ && pending_.empty())) {
            if (at == 0) return false;
            out.text.assign(pending_, 0, at);
            out.fault = at == pending_.size() ? read_fault_ : std::string();
            pending_.erase(0, at);
            out.first_line = next_line_;
            out.index = next_index_++;
            out.file_start = out.index == 0;
            next_line_ += static_cast<std::uint64_t>(std::count(out.text.begin(), out.text.end(), '\n'));
            return true;
        }
        // More text: the block grows past block_bytes only while one record fills it.
        if (pending_.size() > held_limit_)
            throw Error(path_ + ": " + gib(pending_.size()) +
                        " of residues in one record, more than a quarter of the "
                        "memory this process may use (" +
                        gib(held_limit_ * 4) +
                        "); reading keeps every residue in "
                        "memory: split the file into smaller ones, or use a machine with more memory");
        const std::size_t want = std::max(block_bytes_, pending_.size() / 2);
        const std::size_t old = pending_.size();
        pending_.resize(old + want);
        std::size_t got = 0;
        while (got < want) {
            std::size_t n = 0;
            try {
                n = file_->file->read(pending_.data() + old + got, want - got);
            } catch (const InputFault& fault) {
                pending_.resize(old + got);
                // Nothing read since the last block: the line after it is
                // the one the line reader names.
                if (pending_.empty())
                    throw Error(path_ + ":" + std::to_string(next_line_) + ": cannot read: " + fault.why);
                // Else the text read is the last block, and the fault is met
                // where its parse runs out of text, as the line reader meets it.
                read_fault_ = fault.why;
                eof_ = true;
                break;
            }
            if (n == 0) {
                eof_ = true;
                break;
            }
            got += n;
        }
        pending_.resize(old + got);
    }
}

bool RecordBlockReader::next(RecordBlock& out) {
    if (!ahead_.empty()) {
        out = std::move(ahead_.front());
        ahead_.pop_front();
        return true;
    }
    return cut(out);
}

AlphabetKind RecordBlockReader::detect_alphabet() {
    std::string sample;
    std::size_t parsed = 0;
    std::uint64_t records = 0;
    for (;;) {
        if (parsed == ahead_.size()) {
            RecordBlock block;
            if (!cut(block)) {
                empty_ = records == 0;
                break;
            }
            ahead_.push_back(std::move(block));
        }
        RecordBlock& block = ahead_[parsed++];
        if (block.source) {
            // Read here, in order: its first line is known, and so are its line ends.
            load_record_block(block);
            block.source->set_lines(block.index,
                                    static_cast<std::uint64_t>(std::count(block.text.begin(), block.text.end(), '\n')));
            block.first_line = block.source->first_line(block.index);
        }
        FastxParser parser(path_, block.text, block.first_line, block.file_start, format_);
        parser.held_limit = held_limit_;
        parser.more_follows = block.source && block.offset + block.size < block.source->size();
        parser.end_fault = block.fault;
        Sequence record;
        try {
            while (sample.size() < kDetectionSample && parser.next(record) && ++records)
                sample.append(record.residues, 0, std::min(record.residues.size(), kDetectionSample - sample.size()));
        } catch (const Error&) {
            if (!block.source || format_ != SequenceFormat::Fastq) throw;
            // The blocks' own parse names the fault that is not one of shape.
            return alignscope::detect_alphabet(sample_in_order(path_));
        }
        if (sample.size() >= kDetectionSample) break;
    }
    return alignscope::detect_alphabet(sample);
}

void load_record_block(RecordBlock& block) {
    if (block.loaded) return;
    block.text.resize(static_cast<std::size_t>(block.size));
    block.source->read(block.offset, block.text.data(), block.text.size());
    block.loaded = true;
}

std::vector<Sequence> parse_record_block(const RecordBlock& block, const std::string& path,
                                         std::optional<SequenceFormat> format, AlphabetKind alphabet,
                                         const ReadOptions& options) {
    if (!block.loaded) {
        RecordBlock loaded = block;
        load_record_block(loaded);
        return parse_record_block(loaded, path, format, alphabet, options);
    }
    if (format && block.fault.empty()) {
        std::vector<Sequence> records;
        std::uint64_t newlines = 0;
        records.reserve(block.text.size() / 256 + 1);
        if (*format == SequenceFormat::Fasta ? parse_plain_fasta(block.text, alphabet, options, records, newlines)
                                             : parse_plain_fastq(block.text, alphabet, options, records, newlines)) {
            if (block.source) block.source->set_lines(block.index, newlines);
            return records;
        }
    }
    if (block.source && format == SequenceFormat::Fastq) {
        std::vector<Sequence> records;
        try {
            records = parse_block_text(block, 1, path, format, alphabet, options);
        } catch (const Error& fault) {
            throw_first_fault(path, alphabet, options, fault);
        }
        block.source->set_lines(block.index,
                                static_cast<std::uint64_t>(std::count(block.text.begin(), block.text.end(), '\n')));
        return records;
    }
    // A block cut by offset knows its first line only when the cutter had to
    // count it: a fault is found first, its line counted after.
    if (!block.source || block.first_line > 0)
        return parse_block_text(block, block.first_line, path, format, alphabet, options);
    std::vector<Sequence> records;
    try {
        records = parse_block_text(block, 1, path, format, alphabet, options);
    } catch (const Error&) {
        return parse_block_text(block, block.source->first_line(block.index), path, format, alphabet, options);
    }
    block.source->set_lines(block.index,
                            static_cast<std::uint64_t>(std::count(block.text.begin(), block.text.end(), '\n')));
    return records;
}

void RepeatedIds::add(std::string_view id) {
    ids_.append(id);
    ids_.push_back('\n');  // ids hold no whitespace
    hashes_.push_back(std::hash<std::string_view>{}(id));
}

namespace {

// Whether two hashes are equal: sorted by a least-significant-digit radix
// sort, eight passes of a byte, all counted in one pass first (under half
// std::sort's time over a million hashes: this runs after the last record is
// read, on the job's critical path).
bool repeats_a_hash(const std::vector<std::uint64_t>& hashes) {
    constexpr int kBits = 8, kPasses = 8;
    constexpr std::size_t kDigits = std::size_t{1} << kBits;
    std::vector<std::uint64_t> keys = hashes, scratch(hashes.size());
    std::vector<std::size_t> counts(kDigits * kPasses, 0);
    for (const std::uint64_t key : keys)
        for (int pass = 0; pass < kPasses; ++pass) ++counts[pass * kDigits + ((key >> (pass * kBits)) & (kDigits - 1))];
    for (int pass = 0; pass < kPasses; ++pass) {
        std::size_t* count = counts.data() + pass * kDigits;
        std::size_t at = 0;
        for (std::size_t digit = 0; digit < kDigits; ++digit) {
            const std::size_t n = count[digit];
            count[digit] = at;
            at += n;
        }
        for (const std::uint64_t key : keys) scratch[count[(key >> (pass * kBits)) & (kDigits - 1)]++] = key;
        keys.swap(scratch);
    }
    return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

}  // namespace

std::string RepeatedIds::warning(const std::string& path) const {
    {
        // Distinct hashes, distinct ids: the usual answer, in 8 bytes a record.
        if (!repeats_a_hash(hashes_)) return {};
    }
    // Where each id starts, found again only now: 8 bytes a record while reading is enough.
    std::vector<std::uint64_t> starts;
    starts.reserve(hashes_.size() + 1);
    starts.push_back(0);
    for (std::size_t k = 0; k < ids_.size(); ++k)
        if (ids_[k] == '\n') starts.push_back(k + 1);
    const auto id_of = [&](std::size_t k) {
        return std::string_view(ids_).substr(starts[k], starts[k + 1] - starts[k] - 1);
    };
    std::vector<std::pair<std::size_t, std::size_t>> keys(hashes_.size());
    for (std::size_t k = 0; k < hashes_.size(); ++k) keys[k] = {hashes_[k], k};
    const Repeats found = find_repeats(std::move(keys), id_of);
    if (found.count == 0) return {};
    return duplicate_id_line(path, found.count, found.first, found.first_of, std::string(id_of(found.first)));
}

}  // namespace alignscope
