// Preparing a search database: parse, sort by length, pack; and its on-disk
// cache.
//
// Cache layout (little-endian, version 1):
//   0   magic "ALSDB\x01\r\n" (8 bytes; the CR LF catches text-mode damage)
//   8   u32 version, u32 alphabet
//   16  u64 FASTA size, i64 FASTA mtime (ns), u32 FASTA CRC-32, u32 zero
//   40  u64 sequences, u64 residue bytes, u64 name bytes
//   64  u64 offsets[sequences + 1], u32 file_index[sequences], zero padding to
//       a multiple of 8, residues, names ("id\0description\0" per sequence)
//   end u32 CRC-32 of every byte before it, "END1"
// Every field is checked on reading, sizes against the file before anything
// is allocated, and the contents against what a parse can give (residues of
// the alphabet, no empty sequence, ids and descriptions as the reader makes
// them); the first failure names the cause and the cache is rebuilt.
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/search/database.hpp>
#include <alignscope/seq/record_blocks.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include "../io/crc32.hpp"
#include "parallel_tasks.hpp"
#include "present_pages.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <numeric>
#include <optional>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace alignscope {

Sequence PreparedDatabase::sequence(std::size_t position) const {
    Sequence s;
    s.id = ids[position];
    s.description = descriptions[position];
    s.residues = std::string(residues_of(position));
    return s;
}

std::vector<std::pair<std::size_t, std::size_t>> PreparedDatabase::partitions(std::uint64_t max_residues) const {
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    if (max_residues == 0) max_residues = 1;
    std::size_t first = 0;
    while (first < size()) {
        std::size_t last = first + 1;
        while (last < size() && offsets[last + 1] - offsets[first] <= max_residues) ++last;
        ranges.emplace_back(first, last);
        first = last;
    }
    return ranges;
}

PreparedDatabase PreparedDatabase::subset(const std::vector<std::size_t>& positions) const {
    PreparedDatabase part;
    part.source = source;
    part.alphabet = alphabet;
    std::uint64_t total = 0;
    for (std::size_t p : positions) {
        if (p >= size())
            throw Error("database subset: position " + std::to_string(p) + " of a database of " +
                        std::to_string(size()) + " sequences");
        total += length(p);
    }
    part.residues.reserve(total);
    part.offsets.reserve(positions.size() + 1);
    part.offsets.push_back(0);
    for (std::size_t p : positions) {
        part.residues.append(residues_of(p));
        part.offsets.push_back(part.residues.size());
        part.file_index.push_back(file_index[p]);
        part.ids.push_back(ids[p]);
        part.descriptions.push_back(descriptions[p]);
    }
    return part;
}

PreparedDatabase pack_database(std::vector<Sequence> records, AlphabetKind alphabet, std::string source) {
    if (records.size() > 0xFFFFFFFFull) throw Error(source + ": more than 4,294,967,295 sequences");
    std::vector<std::uint32_t> order(records.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return records[a].residues.size() < records[b].residues.size();
    });
    PreparedDatabase db;
    db.source = std::move(source);
    db.alphabet = alphabet;
    std::uint64_t total = 0;
    for (const auto& r : records) total += r.residues.size();
    db.residues.reserve(total);
    db.offsets.reserve(records.size() + 1);
    db.offsets.push_back(0);
    db.file_index = order;
    db.ids.reserve(records.size());
    db.descriptions.reserve(records.size());
    for (std::uint32_t k : order) {
        Sequence& r = records[k];
        if (r.residues.size() > 0x7FFFFFFFull)
            throw Error(db.source + ": sequence '" + r.id + "' is longer than 2,147,483,647 residues");
        db.residues.append(r.residues);
        db.offsets.push_back(db.residues.size());
        db.ids.push_back(std::move(r.id));
        db.descriptions.push_back(std::move(r.description));
        std::string().swap(r.residues);
    }
    return db;
}

std::vector<std::uint8_t> encode_database(const PreparedDatabase& database, const SubstitutionMatrix& matrix) {
    std::array<std::int16_t, 256> code{};
    for (int c = 0; c < 256; ++c)
        code[static_cast<std::size_t>(c)] = static_cast<std::int16_t>(matrix.index_of(static_cast<char>(c)));
    std::vector<std::uint8_t> out;
    out.reserve(database.residues.size());
    search_memory::make_present(out.data(), database.residues.size());
    out.resize(database.residues.size());
    const char* in = database.residues.data();
    // In pieces of 4 MiB on several cores: this is on a device's load, the
    // search's critical path.
    constexpr std::size_t piece = 4 << 20;
    std::atomic<bool> bad{false};
    search_tasks::run_tasks((out.size() + piece - 1) / piece, [&](std::size_t p) {
        bool unscored = false;
        for (std::size_t k = p * piece; k < std::min(out.size(), (p + 1) * piece); ++k) {
            const std::int16_t c = code[static_cast<unsigned char>(in[k])];
            unscored |= c < 0;
            out[k] = static_cast<std::uint8_t>(c);
        }
        if (unscored) bad.store(true);
    });
    if (bad.load()) {
        for (std::size_t p = 0; p < database.size(); ++p) {
            const std::string_view r = database.residues_of(p);
            for (std::size_t k = 0; k < r.size(); ++k)
                if (code[static_cast<unsigned char>(r[k])] < 0)
                    throw Error("residue '" + std::string(1, r[k]) + "' at position " + std::to_string(k + 1) +
                                " of database sequence '" + database.ids[p] + "' is not scored by matrix " +
                                matrix.name());
        }
    }
    return out;
}

std::string_view to_string(CacheOutcome outcome) {
    switch (outcome) {
        case CacheOutcome::Disabled: return "disabled";
        case CacheOutcome::Built: return "built";
        case CacheOutcome::Loaded: return "loaded";
        case CacheOutcome::Rebuilt: return "rebuilt";
        case CacheOutcome::Unwritable: return "unwritable";
    }
    return "unknown";
}

namespace {

constexpr char cache_magic[8] = {'A', 'L', 'S', 'D', 'B', '\x01', '\r', '\n'};
constexpr char cache_end[4] = {'E', 'N', 'D', '1'};
constexpr std::uint32_t cache_version = 1;
constexpr std::size_t header_bytes = 64;

std::string hex32(std::uint32_t v) {
    char text[9];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

std::string user_cache_directory() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/alignscope";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/alignscope";
    return (std::filesystem::temp_directory_path() / "alignscope-cache").string();
}

bool writable_directory(const std::filesystem::path& dir) {
    return ::access(dir.empty() ? "." : dir.c_str(), W_OK | X_OK) == 0;
}

// Appends plain values to a byte buffer.
class ByteWriter {
public:
    template <typename T>
    void put(T value) {
        const auto* p = reinterpret_cast<const char*>(&value);
        bytes_.append(p, sizeof(T));
    }
    void put_bytes(const void* p, std::size_t n) { bytes_.append(static_cast<const char*>(p), n); }
    void pad_to(std::size_t multiple) {
        while (bytes_.size() % multiple) bytes_.push_back('\0');
    }
    std::string& bytes() { return bytes_; }

private:
    std::string bytes_;
};

// The reason a cache cannot be used: a sentence for the user.
struct CacheRejected {
    std::string reason;
};

class ByteReader {
public:
    ByteReader(const std::string& bytes, std::size_t limit) : bytes_(bytes), limit_(limit) {}
    template <typename T>
    T get(const char* what) {
        T value;
        need(sizeof(T), what);
        std::memcpy(&value, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    const char* take(std::size_t n, const char* what) {
        need(n, what);
        const char* p = bytes_.data() + at_;
        at_ += n;
        return p;
    }
    void skip_to_multiple(std::size_t multiple) { at_ = (at_ + multiple - 1) / multiple * multiple; }
    std::size_t at() const { return at_; }

private:
    void need(std::size_t n, const char* what) {
        if (at_ > limit_ || n > limit_ - at_) throw CacheRejected{std::string("damaged: truncated in the ") + what};
    }
    const std::string& bytes_;
    std::size_t limit_;
    std::size_t at_ = 0;
};

// An id as the FASTA/FASTQ reader gives one: printable ASCII, no blanks.
bool reader_id(std::string_view id) {
    if (id.empty()) return false;
    for (char ch : id) {
        const auto c = static_cast<unsigned char>(ch);
        if (c <= 0x20 || c >= 0x80) return false;
    }
    return true;
}

// A description as the reader gives one: UTF-8 text, tabs the only control
// characters (see valid_utf8_prefix in sequence_reader.cpp).
bool reader_description(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c < 0x20 && c != '\t') return false;
            ++i;
            continue;
        }
        const std::size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (len == 0 || i + len > s.size()) return false;
        std::uint32_t cp = c & (0x7Fu >> len);
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3Fu);
        }
        const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

std::string serialise(const PreparedDatabase& db, const FastaFingerprint& fp) {
    ByteWriter w;
    w.put_bytes(cache_magic, sizeof cache_magic);
    w.put<std::uint32_t>(cache_version);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(db.alphabet));
    w.put<std::uint64_t>(fp.size);
    w.put<std::int64_t>(fp.mtime_ns);
    w.put<std::uint32_t>(fp.crc32);
    w.put<std::uint32_t>(0);
    std::uint64_t name_bytes = 0;
    for (std::size_t k = 0; k < db.size(); ++k) name_bytes += db.ids[k].size() + db.descriptions[k].size() + 2;
    w.put<std::uint64_t>(db.size());
    w.put<std::uint64_t>(db.residues.size());
    w.put<std::uint64_t>(name_bytes);
    w.bytes().reserve(header_bytes + 12 * db.size() + db.residues.size() + name_bytes + 16);
    w.put_bytes(db.offsets.data(), db.offsets.size() * sizeof(std::uint64_t));
    w.put_bytes(db.file_index.data(), db.file_index.size() * sizeof(std::uint32_t));
    w.pad_to(8);
    w.put_bytes(db.residues.data(), db.residues.size());
    for (std::size_t k = 0; k < db.size(); ++k) {
        w.put_bytes(db.ids[k].data(), db.ids[k].size());
        w.put<char>('\0');
        w.put_bytes(db.descriptions[k].data(), db.descriptions[k].size());
        w.put<char>('\0');
    }
    const std::uint32_t crc = io::crc32_of(w.bytes().data(), w.bytes().size());
    w.put<std::uint32_t>(crc);
    w.put_bytes(cache_end, sizeof cache_end);
    return std::move(w.bytes());
}

// The header's fields after the magic, in the order a reader checks them:
// version, alphabet, the FASTA's fingerprint (the key) and an --alphabet
// override. Returns the cached alphabet.
AlphabetKind check_header(ByteReader& r, const FastaFingerprint& fp, const std::optional<AlphabetKind>& alphabet) {
    if (const auto version = r.get<std::uint32_t>("version"); version != cache_version)
        throw CacheRejected{"stale: cache format version " + std::to_string(version) + ", this build writes " +
                            std::to_string(cache_version)};
    const auto alphabet_code = r.get<std::uint32_t>("alphabet");
    if (alphabet_code > static_cast<std::uint32_t>(AlphabetKind::Protein))
        throw CacheRejected{"damaged: unknown alphabet code"};
    const auto cached_alphabet = static_cast<AlphabetKind>(alphabet_code);
    const auto size = r.get<std::uint64_t>("header");
    const auto mtime = r.get<std::int64_t>("header");
    const auto crc = r.get<std::uint32_t>("header");
    (void)r.get<std::uint32_t>("header");
    if (size != fp.size)
        throw CacheRejected{"stale: the FASTA is now " + std::to_string(fp.size) + " bytes, the cache was made from " +
                            std::to_string(size) + " bytes"};
    if (mtime != fp.mtime_ns) throw CacheRejected{"stale: the FASTA's modification time changed"};
    if (crc != fp.crc32)
        throw CacheRejected{"stale: the FASTA's checksum changed (CRC-32 " + hex32(fp.crc32) + ", cache made from " +
                            hex32(crc) + ")"};
    if (alphabet && *alphabet != cached_alphabet)
        throw CacheRejected{"stale: the cache was made for " + std::string(to_string(cached_alphabet)) +
                            " and --alphabet asks for " + std::string(to_string(*alphabet))};
    return cached_alphabet;
}

// The ids and descriptions of `count` sequences from the names block
// ("id\0description\0" each), checked as the reader makes them, on several
// threads: the block is cut into ranges, each range's fields (those whose
// terminating NUL lies in it) taken by one thread. The first failure in file
// order is the one reported, as a reading from the front would report it.
void read_names(PreparedDatabase& db, std::size_t count, const char* names, std::uint64_t name_bytes) {
    constexpr std::uint64_t range_bytes = 1 << 20;
    const std::size_t ranges =
        static_cast<std::size_t>(std::max<std::uint64_t>(1, (name_bytes + range_bytes - 1) / range_bytes));
    auto range_begin = [&](std::size_t t) { return std::min<std::uint64_t>(name_bytes, t * range_bytes); };
    std::vector<std::uint64_t> nuls(ranges + 1, 0), last_nul(ranges, 0);
    std::vector<std::uint8_t> has_nul(ranges, 0);  // not vector<bool>: each range's thread writes its own
    search_tasks::run_tasks(ranges, [&](std::size_t t) {
        const char* p = names + range_begin(t);
        const char* end = names + range_begin(t + 1);
        std::uint64_t n = 0;
        while (const void* nul = std::memchr(p, '\0', static_cast<std::size_t>(end - p))) {
            ++n;
            last_nul[t] = static_cast<std::uint64_t>(static_cast<const char*>(nul) - names);
            p = static_cast<const char*>(nul) + 1;
        }
        nuls[t + 1] = n;
        has_nul[t] = n > 0;
    });
    std::vector<std::uint64_t> first_start(ranges, 0);  // where the first field ending in range t starts
    std::uint64_t start = 0;
    for (std::size_t t = 0; t < ranges; ++t) {
        first_start[t] = start;
        nuls[t + 1] += nuls[t];
        if (has_nul[t]) start = last_nul[t] + 1;
    }
    const std::uint64_t fields = 2 * static_cast<std::uint64_t>(count);
    db.ids.resize(count);
    db.descriptions.resize(count);
    std::vector<std::uint64_t> first_bad(ranges, UINT64_MAX);
    search_tasks::run_tasks(ranges, [&](std::size_t t) {
        std::uint64_t field = nuls[t];
        std::uint64_t at = first_start[t];
        const std::uint64_t end = range_begin(t + 1);
        while (field < fields && field < nuls[t + 1]) {
            const void* nul = std::memchr(names + at, '\0', static_cast<std::size_t>(end - at));
            const auto length = static_cast<std::size_t>(static_cast<const char*>(nul) - (names + at));
            const std::string_view text(names + at, length);
            const bool id = field % 2 == 0;
            if (id ? !reader_id(text) : !reader_description(text)) {
                first_bad[t] = field;
                return;
            }
            (id ? db.ids : db.descriptions)[field / 2].assign(text);
            at += length + 1;
            ++field;
        }
    });
    for (const std::uint64_t bad : first_bad)
        if (bad != UINT64_MAX)
            throw CacheRejected{std::string("damaged: a sequence ") + (bad % 2 == 0 ? "id" : "description") +
                                " the FASTA reader would not give"};
    if (nuls[ranges] < fields) throw CacheRejected{"damaged: names end early"};
    // The position after the last field's NUL must be the block's end.
    if (nuls[ranges] > fields || (name_bytes > 0 && names[name_bytes - 1] != '\0'))
        throw CacheRejected{"damaged: extra bytes after the names"};
}

// What the cache holds must be what a parse gives (read_sequences and
// pack_database): the checksum only says the bytes are the ones written.
// The offsets, the record order and the residues are in `db`; the names are
// read into it from `names`.
void check_contents(PreparedDatabase& db, std::size_t count, const char* names, std::uint64_t name_bytes) {
    const std::uint64_t residue_bytes = db.residues.size();
    if (db.offsets.front() != 0 || db.offsets.back() != residue_bytes)
        throw CacheRejected{"damaged: offsets do not span the residues"};
    std::vector<bool> seen(count, false);
    for (std::size_t k = 0; k < count; ++k) {
        if (db.offsets[k + 1] <= db.offsets[k]) throw CacheRejected{"damaged: an empty sequence"};
        if (db.offsets[k + 1] - db.offsets[k] > 0x7FFFFFFFull) throw CacheRejected{"damaged: a sequence too long"};
        if (k > 0 && db.length(k) < db.length(k - 1)) throw CacheRejected{"damaged: sequences out of length order"};
        if (db.file_index[k] >= count || seen[db.file_index[k]])
            throw CacheRejected{"damaged: the record order is not a permutation"};
        seen[db.file_index[k]] = true;
    }
    std::array<bool, 256> letter{};
    for (char c : alphabet_letters(db.alphabet)) letter[static_cast<unsigned char>(c)] = true;
    constexpr std::uint64_t piece = 4 << 20;
    const std::size_t pieces = static_cast<std::size_t>((residue_bytes + piece - 1) / piece);
    std::atomic<bool> foreign{false};
    search_tasks::run_tasks(pieces, [&](std::size_t k) {
        const std::uint64_t first = k * piece, last = std::min(residue_bytes, first + piece);
        bool bad = false;
        for (std::uint64_t i = first; i < last; ++i) bad |= !letter[static_cast<unsigned char>(db.residues[i])];
        if (bad) foreign.store(true);
    });
    if (foreign.load()) throw CacheRejected{"damaged: residues that are not " + std::string(to_string(db.alphabet))};
    read_names(db, count, names, name_bytes);
}

PreparedDatabase deserialise(const std::string& bytes, const FastaFingerprint& fp,
                             const std::optional<AlphabetKind>& alphabet, const std::string& source) {
    if (bytes.size() < header_bytes + 8) throw CacheRejected{"damaged: shorter than its header"};
    if (std::memcmp(bytes.data(), cache_magic, sizeof cache_magic) != 0)
        throw CacheRejected{"damaged: not an AlignScope database cache (bad magic)"};
    const std::size_t body = bytes.size() - 8;
    std::uint32_t stored_crc;
    std::memcpy(&stored_crc, bytes.data() + body, 4);
    if (std::memcmp(bytes.data() + body + 4, cache_end, 4) != 0)
        throw CacheRejected{"damaged: truncated (no end marker)"};
    // Damage first, so a flipped bit in the key is called damage, not staleness.
    if (io::crc32_of(bytes.data(), body) != stored_crc)
        throw CacheRejected{"damaged: its contents do not match their checksum"};
    ByteReader r(bytes, body);
    (void)r.take(sizeof cache_magic, "magic");
    const AlphabetKind cached_alphabet = check_header(r, fp, alphabet);
    const auto count = r.get<std::uint64_t>("header");
    const auto residue_bytes = r.get<std::uint64_t>("header");
    const auto name_bytes = r.get<std::uint64_t>("header");
    // Every size is checked against the bytes there before anything is
    // allocated for it: a count of 2^32 - 1 must not cost 48 GiB first.
    if (count == 0 || count > 0xFFFFFFFFull || residue_bytes > bytes.size() || name_bytes > bytes.size() ||
        (count + 1) * 8 + count * 4 > body - r.at())
        throw CacheRejected{"damaged: impossible sizes in the header"};

    PreparedDatabase db;
    db.source = source;
    db.alphabet = cached_alphabet;
    const char* offsets = r.take((count + 1) * 8, "offsets");
    db.offsets.resize(count + 1);
    std::memcpy(db.offsets.data(), offsets, (count + 1) * 8);
    const char* order = r.take(count * 4, "record order");
    db.file_index.resize(count);
    std::memcpy(db.file_index.data(), order, count * 4);
    r.skip_to_multiple(8);
    db.residues.assign(r.take(residue_bytes, "residues"), residue_bytes);
    const char* names = r.take(name_bytes, "names");
    if (r.at() != body) throw CacheRejected{"damaged: unexpected bytes after the names"};
    check_contents(db, static_cast<std::size_t>(count), names, name_bytes);
    return db;
}

// The cache as it is on disk: only a regular file (a cache symlinked to
// /dev/zero or a FIFO would be read forever), and never more than the size it
// had when opened (a file that grows meanwhile is being written by another).
class CacheFile {
public:
    explicit CacheFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)) {
        if (fd_ < 0) throw CacheRejected{"unreadable: " + std::string(std::strerror(errno))};
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
            ::close(fd_);
            throw CacheRejected{"is not a regular file"};
        }
        size_ = static_cast<std::uint64_t>(st.st_size);
    }
    ~CacheFile() { ::close(fd_); }
    CacheFile(const CacheFile&) = delete;
    CacheFile& operator=(const CacheFile&) = delete;
    std::uint64_t size() const { return size_; }

    // Exactly `bytes` bytes at `at`; safe to call from several threads at once.
    void read_at(char* to, std::uint64_t bytes, std::uint64_t at) const {
        std::uint64_t done = 0;
        while (done < bytes) {
            const ssize_t got =
                ::pread(fd_, to + done, std::min<std::uint64_t>(bytes - done, 1 << 24), static_cast<off_t>(at + done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0)
                throw CacheRejected{got < 0 ? "unreadable: " + std::string(std::strerror(errno))
                                            : "is shorter than its size said (changed while read)"};
            done += static_cast<std::uint64_t>(got);
        }
    }

private:
    int fd_;
    std::uint64_t size_ = 0;
};

std::string read_whole_file(const CacheFile& file) {
    std::string bytes;
    try {
        bytes.resize(static_cast<std::size_t>(file.size()));
    } catch (const std::bad_alloc&) {
        throw CacheRejected{"is larger than the memory available to read it"};
    }
    file.read_at(bytes.data(), bytes.size(), 0);
    return bytes;
}

// Where each part of a cache lies when its header accounts for every byte of
// the file (any other file is read whole and judged by deserialise).
struct CacheLayout {
    std::uint64_t count = 0, residue_bytes = 0, name_bytes = 0;
    std::uint64_t index_at = 0, pad_at = 0, residues_at = 0, names_at = 0, body = 0;
};

std::optional<CacheLayout> exact_layout(const char* header, std::uint64_t file_size) {
    if (std::memcmp(header, cache_magic, sizeof cache_magic) != 0) return std::nullopt;
    CacheLayout l;
    std::memcpy(&l.count, header + 40, 8);
    std::memcpy(&l.residue_bytes, header + 48, 8);
    std::memcpy(&l.name_bytes, header + 56, 8);
    // Each bounded by the file size (below 2^63) first: the sums cannot overflow.
    if (l.count == 0 || l.count > 0xFFFFFFFFull || l.residue_bytes > file_size || l.name_bytes > file_size)
        return std::nullopt;
    l.index_at = header_bytes + (l.count + 1) * 8;
    l.pad_at = l.index_at + l.count * 4;
    l.residues_at = (l.pad_at + 7) / 8 * 8;
    l.names_at = l.residues_at + l.residue_bytes;
    l.body = l.names_at + l.name_bytes;
    if (l.body + 8 != file_size) return std::nullopt;
    return l;
}

// A cache as read from disk, before it is judged: either its parts already in
// the buffers they end in (the database's offsets, record order and residues;
// the names block), with the CRC-32 of every byte before the last eight, or
// (a file whose header does not account for it exactly) the whole file.
struct CacheRead {
    std::string whole;
    std::string header;
    CacheLayout layout;
    PreparedDatabase db;
    std::unique_ptr<char[]> names;
    std::uint32_t crc = 0;
    std::array<char, 8> tail{};
};

template <typename T>
char* as_bytes(std::vector<T>& v) {
    return reinterpret_cast<char*>(v.data());
}

// The CRC-32 of two runs of bytes one after the other, from each one's.
std::uint32_t combine_crc(std::uint32_t first, std::uint32_t second, std::uint64_t second_bytes) {
    return static_cast<std::uint32_t>(::crc32_combine(first, second, static_cast<z_off_t>(second_bytes)));
}

// One contiguous run of the file and the buffer it is read into.
struct FilePiece {
    std::uint64_t at = 0, bytes = 0;
    char* to = nullptr;
};

// The parts read in parallel, in pieces of a few MiB (the page cache copied
// out by several cores, each piece's CRC-32 on the core that read it); each
// part's CRC-32, its pieces' combined in file order.
std::vector<std::uint32_t> read_parts(const CacheFile& file, const std::vector<FilePiece>& parts) {
    constexpr std::uint64_t chunk = 4 << 20;
    std::vector<FilePiece> pieces;
    std::vector<std::size_t> part_of;
    for (std::size_t k = 0; k < parts.size(); ++k)
        for (std::uint64_t done = 0; done < parts[k].bytes; done += chunk) {
            pieces.push_back({parts[k].at + done, std::min(chunk, parts[k].bytes - done), parts[k].to + done});
            part_of.push_back(k);
        }
    std::vector<std::uint32_t> crcs(pieces.size());
    search_tasks::run_tasks(pieces.size(), [&](std::size_t k) {
        file.read_at(pieces[k].to, pieces[k].bytes, pieces[k].at);
        crcs[k] = io::crc32_of(pieces[k].to, pieces[k].bytes);
    });
    std::vector<std::uint32_t> part_crcs(parts.size(), 0);
    for (std::size_t k = 0; k < pieces.size(); ++k)
        part_crcs[part_of[k]] = combine_crc(part_crcs[part_of[k]], crcs[k], pieces[k].bytes);
    return part_crcs;
}

CacheRead read_cache(const std::string& path) {
    const CacheFile file(path);
    CacheRead read;
    std::optional<CacheLayout> layout;
    if (file.size() >= header_bytes + 8) {
        read.header.resize(header_bytes);
        file.read_at(read.header.data(), header_bytes, 0);
        layout = exact_layout(read.header.data(), file.size());
    }
    if (!layout) {
        read.whole = read_whole_file(file);
        return read;
    }
    const CacheLayout& l = *layout;
    read.layout = l;
    std::array<char, 8> pad{};
    try {
        // The residues' buffer (its pages made present on several cores,
        // then zero-filled: a string cannot be sized otherwise) is made
        // while the other parts are read.
        std::future<void> residues = std::async(std::launch::async | std::launch::deferred, [&read, &l] {
            read.db.residues.reserve(l.residue_bytes);
            search_memory::make_present(read.db.residues.data(), l.residue_bytes);
            read.db.residues.resize(l.residue_bytes);
        });
        read.db.offsets.resize(l.count + 1);
        read.db.file_index.resize(l.count);
        read.names = std::make_unique_for_overwrite<char[]>(l.name_bytes);
        const std::vector<FilePiece> parts = {{0, header_bytes, read.header.data()},
                                              {header_bytes, (l.count + 1) * 8, as_bytes(read.db.offsets)},
                                              {l.index_at, l.count * 4, as_bytes(read.db.file_index)},
                                              {l.pad_at, l.residues_at - l.pad_at, pad.data()},
                                              {l.names_at, l.name_bytes, read.names.get()}};
        const std::vector<std::uint32_t> crcs = read_parts(file, parts);
        residues.get();
        const std::uint32_t residues_crc =
            read_parts(file, {{l.residues_at, l.residue_bytes, read.db.residues.data()}}).front();
        for (std::size_t k = 0; k < 4; ++k) read.crc = combine_crc(read.crc, crcs[k], parts[k].bytes);
        read.crc = combine_crc(read.crc, residues_crc, l.residue_bytes);
        read.crc = combine_crc(read.crc, crcs[4], l.name_bytes);
        file.read_at(read.tail.data(), 8, l.body);
    } catch (const std::bad_alloc&) {
        throw CacheRejected{"is larger than the memory available to read it"};
    }
    return read;
}

// The database a cache read holds, judged as deserialise judges a whole
// file, check for check and in the same order.
PreparedDatabase judge_cache(CacheRead& read, const FastaFingerprint& fp, const std::optional<AlphabetKind>& alphabet,
                             const std::string& source) {
    if (read.layout.count == 0) return deserialise(read.whole, fp, alphabet, source);
    std::uint32_t stored_crc;
    std::memcpy(&stored_crc, read.tail.data(), 4);
    if (std::memcmp(read.tail.data() + 4, cache_end, 4) != 0) throw CacheRejected{"damaged: truncated (no end marker)"};
    if (read.crc != stored_crc) throw CacheRejected{"damaged: its contents do not match their checksum"};
    ByteReader r(read.header, header_bytes);
    (void)r.take(sizeof cache_magic, "magic");
    PreparedDatabase db = std::move(read.db);
    db.alphabet = check_header(r, fp, alphabet);
    db.source = source;
    check_contents(db, static_cast<std::size_t>(read.layout.count), read.names.get(), read.layout.name_bytes);
    return db;
}

}  // namespace

FastaFingerprint fasta_fingerprint(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
    if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
    FastaFingerprint fp;
    fp.size = static_cast<std::uint64_t>(st.st_size);
    fp.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
    // Pieces of a few MiB checksummed on several cores and their CRCs
    // combined; a file cut short meanwhile gives the CRC of what is there.
    constexpr std::uint64_t piece = 8 << 20;
    const std::size_t pieces = static_cast<std::size_t>(std::max<std::uint64_t>(1, (fp.size + piece - 1) / piece));
    std::vector<std::uint32_t> crcs(pieces, 0);
    std::vector<std::uint64_t> lengths(pieces, 0);
    std::atomic<bool> failed{false};
    auto checksum = [&](std::uint64_t at, std::uint64_t bytes, std::uint64_t& length, std::uint64_t buffer_bytes) {
        // A small FASTA (and every fuzz input's) needs no 1 MiB buffer.
        std::vector<char> buffer(static_cast<std::size_t>(std::clamp<std::uint64_t>(buffer_bytes, 4096, 1 << 20)));
        std::uint32_t crc = 0;
        while (length < bytes) {
            const ssize_t got = ::pread(fd, buffer.data(), std::min<std::uint64_t>(buffer.size(), bytes - length),
                                        static_cast<off_t>(at + length));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) failed.store(true);
            if (got <= 0) break;
            crc = io::crc32_of(buffer.data(), static_cast<std::size_t>(got), crc);
            length += static_cast<std::uint64_t>(got);
        }
        return crc;
    };
    try {
        search_tasks::run_tasks(pieces, [&](std::size_t k) {
            const std::uint64_t at = k * piece;
            const std::uint64_t bytes = std::min(piece, fp.size - std::min(fp.size, at));
            crcs[k] = checksum(at, bytes, lengths[k], bytes);
        });
    } catch (...) {
        ::close(fd);
        throw;
    }
    std::uint32_t crc = 0;
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < pieces; ++k) {
        crc = combine_crc(crc, crcs[k], lengths[k]);
        total += lengths[k];
    }
    // Bytes written since the stat (a file that grows) count too, as a
    // reading to the end would count them.
    if (!failed.load() && total == fp.size) {
        std::uint64_t more = 0;
        const std::uint32_t tail = checksum(total, UINT64_MAX - total, more, 4096);
        crc = combine_crc(crc, tail, more);
    }
    ::close(fd);
    if (failed.load()) throw Error(path + ": read error while computing its checksum");
    fp.crc32 = crc;
    return fp;
}

namespace {

// The FASTA path's warning about repeated ids, from a cached database: the
// same line the reader gives (RepeatedIds): how many records repeat the id of
// an earlier one, the first of them and the record whose id it repeats. The
// ids are hashed on several cores and dealt by hash into buckets, each bucket
// sorted and compared on a core of its own.
std::string duplicate_id_warning(const PreparedDatabase& db, const std::string& fasta_path) {
    const std::size_t count = db.size();
    std::vector<const std::string*> in_file_order(count);
    for (std::size_t p = 0; p < count; ++p) in_file_order[db.file_index[p]] = &db.ids[p];
    constexpr std::size_t piece = 1 << 16;
    std::vector<std::uint64_t> hashes(count);
    search_tasks::run_tasks((count + piece - 1) / piece, [&](std::size_t k) {
        for (std::size_t r = k * piece; r < std::min(count, (k + 1) * piece); ++r)
            hashes[r] = std::hash<std::string_view>{}(*in_file_order[r]);
    });
    struct Found {
        std::uint64_t repeats = 0;
        std::size_t first = SIZE_MAX, first_of = 0;
    };
    constexpr int bucket_bits = 6;
    std::vector<Found> found(std::size_t{1} << bucket_bits);
    search_tasks::run_tasks(found.size(), [&](std::size_t bucket) {
        std::vector<std::pair<std::uint64_t, std::size_t>> keys;  // (hash, record), records ascending
        for (std::size_t r = 0; r < count; ++r)
            if (hashes[r] >> (64 - bucket_bits) == bucket) keys.emplace_back(hashes[r], r);
        std::sort(keys.begin(), keys.end());
        Found& f = found[bucket];
        for (std::size_t k = 0, e; k < keys.size(); k = e) {
            for (e = k + 1; e < keys.size() && keys[e].first == keys[k].first;) ++e;
            // Within one hash, each record against the earlier ones: the first equal one is the id's first record.
            for (std::size_t i = k + 1; i < e; ++i)
                for (std::size_t j = k; j < i; ++j) {
                    if (*in_file_order[keys[i].second] != *in_file_order[keys[j].second]) continue;
                    ++f.repeats;
                    if (keys[i].second < f.first) {
                        f.first = keys[i].second;
                        f.first_of = keys[j].second;
                    }
                    break;
                }
        }
    });
    Found all;
    for (const Found& f : found) {
        all.repeats += f.repeats;
        if (f.first < all.first) {
            all.first = f.first;
            all.first_of = f.first_of;
        }
    }
    if (all.repeats == 0) return {};
    return duplicate_id_line(fasta_path, all.repeats, all.first, all.first_of, *in_file_order[all.first]);
}

}  // namespace

std::string database_cache_path(const std::string& fasta_path, const DatabaseCacheOptions& options) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path absolute = fs::absolute(fasta_path, ec);
    if (ec) absolute = fasta_path;
    const std::string name = absolute.filename().string();
    const std::string hashed =
        name + "." + hex32(io::crc32_of(absolute.string().data(), absolute.string().size())) + ".alsdb";
    if (!options.directory.empty()) return (fs::path(options.directory) / hashed).string();
    const fs::path beside = absolute.string() + ".alsdb";
    if (writable_directory(absolute.parent_path()) || fs::exists(beside, ec)) return beside.string();
    return (fs::path(user_cache_directory()) / hashed).string();
}

PreparedDatabaseLoad prepare_database(const std::string& fasta_path, const DatabaseCacheOptions& options,
                                      const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
    const auto start = std::chrono::steady_clock::now();
    PreparedDatabaseLoad load;
    FastaFingerprint fp;
    if (options.enabled) {
        // The FASTA's checksum is taken while the cache is read; its errors
        // (a missing FASTA) still come before anything said of the cache.
        std::future<FastaFingerprint> fingerprinting =
            std::async(std::launch::async | std::launch::deferred,
                       [&fasta_path] { return fasta_fingerprint(fasta_path); });
        load.cache_path = database_cache_path(fasta_path, options);
        std::error_code ec;
        if (std::filesystem::exists(load.cache_path, ec)) {
            std::optional<CacheRead> read;
            std::optional<CacheRejected> unread;
            try {
                read.emplace(read_cache(load.cache_path));
            } catch (CacheRejected& rejected) {
                unread = std::move(rejected);
            }
            fp = fingerprinting.get();
            try {
                if (unread) throw *unread;
                load.database = judge_cache(*read, fp, options.alphabet, fasta_path);
                read.reset();
                load.duplicate_ids = duplicate_id_warning(load.database, fasta_path);
                load.outcome = CacheOutcome::Loaded;
                load.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                return load;
            } catch (const CacheRejected& rejected) {
                load.outcome = CacheOutcome::Rebuilt;
                load.reason = "cache " + load.cache_path + " " + rejected.reason;
            }
        } else {
            fp = fingerprinting.get();
            load.outcome = CacheOutcome::Built;
        }
    }

    ReadOptions read_options;
    read_options.alphabet = options.alphabet;
    SequenceSet set = read_sequences(fasta_path, read_options, progress);
    if (set.records.empty()) throw Error(fasta_path + ": no sequences in the database");
    load.duplicate_ids = set.duplicate_id_warning();
    load.database = pack_database(std::move(set.records), set.alphabet, fasta_path);

    if (options.enabled) {
        // A concurrent writer of the same FASTA would change it under us: the
        // fingerprint must still hold after parsing, or the cache is skipped.
        const FastaFingerprint after = fasta_fingerprint(fasta_path);
        if (after.size != fp.size || after.mtime_ns != fp.mtime_ns || after.crc32 != fp.crc32) {
            load.outcome = CacheOutcome::Unwritable;
            load.reason = fasta_path + " changed while it was read; the cache was not written";
        } else if (struct stat st{}; ::stat(load.cache_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
            // A FIFO would block the write, a device swallow it: a cache is only
            // ever a regular file, so nothing is written there.
            const std::string earlier = load.outcome == CacheOutcome::Rebuilt ? load.reason + "; " : "";
            load.outcome = CacheOutcome::Unwritable;
            load.reason = earlier + "the cache was not written: " + load.cache_path + " is not a regular file";
        } else {
            try {
                const auto parent = std::filesystem::path(load.cache_path).parent_path();
                if (!parent.empty()) std::filesystem::create_directories(parent);
                AtomicOutput out(load.cache_path);
                const std::string bytes = serialise(load.database, fp);
                out.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
                out.commit();
            } catch (const std::exception& e) {
                const std::string earlier = load.outcome == CacheOutcome::Rebuilt ? load.reason + "; " : "";
                load.outcome = CacheOutcome::Unwritable;
                load.reason = earlier + "the cache could not be written: " + e.what();
            }
        }
    }
    load.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return load;
}

}  // namespace alignscope
