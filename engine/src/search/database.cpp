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

#include <zlib.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>

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
    std::vector<std::uint8_t> out(database.residues.size());
    const char* in = database.residues.data();
    bool bad = false;
    for (std::size_t k = 0; k < out.size(); ++k) {
        const std::int16_t c = code[static_cast<unsigned char>(in[k])];
        bad |= c < 0;
        out[k] = static_cast<std::uint8_t>(c);
    }
    if (bad) {
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

    // What the cache holds must be what a parse gives (read_sequences and
    // pack_database): the checksum only says the bytes are the ones written.
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
    for (char c : alphabet_letters(cached_alphabet)) letter[static_cast<unsigned char>(c)] = true;
    bool foreign = false;
    for (char c : db.residues) foreign |= !letter[static_cast<unsigned char>(c)];
    if (foreign) throw CacheRejected{"damaged: residues that are not " + std::string(to_string(cached_alphabet))};
    db.ids.reserve(count);
    db.descriptions.reserve(count);
    const char* p = names;
    const char* end = names + name_bytes;
    for (std::size_t k = 0; k < count; ++k) {
        for (int field = 0; field < 2; ++field) {
            const void* nul = std::memchr(p, '\0', static_cast<std::size_t>(end - p));
            if (!nul) throw CacheRejected{"damaged: names end early"};
            std::string text(p, static_cast<const char*>(nul));
            if (field == 0 ? !reader_id(text) : !reader_description(text))
                throw CacheRejected{std::string("damaged: a sequence ") + (field == 0 ? "id" : "description") +
                                    " the FASTA reader would not give"};
            (field == 0 ? db.ids : db.descriptions).push_back(std::move(text));
            p = static_cast<const char*>(nul) + 1;
        }
    }
    if (p != end) throw CacheRejected{"damaged: extra bytes after the names"};
    return db;
}

// The cache as it is on disk: only a regular file (a cache symlinked to
// /dev/zero or a FIFO would be read forever), and never more than the size it
// had when opened (a file that grows meanwhile is being written by another).
std::string read_whole_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw CacheRejected{"unreadable: " + std::string(std::strerror(errno))};
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw CacheRejected{"is not a regular file"};
    }
    std::string bytes;
    try {
        bytes.resize(static_cast<std::size_t>(st.st_size));
    } catch (const std::bad_alloc&) {
        ::close(fd);
        throw CacheRejected{"is larger than the memory available to read it"};
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t got = ::read(fd, bytes.data() + done, std::min<std::size_t>(bytes.size() - done, 1 << 24));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            const int error = errno;
            ::close(fd);
            throw CacheRejected{got < 0 ? "unreadable: " + std::string(std::strerror(error))
                                        : "is shorter than its size said (changed while read)"};
        }
        done += static_cast<std::size_t>(got);
    }
    ::close(fd);
    return bytes;
}

}  // namespace

FastaFingerprint fasta_fingerprint(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
    if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
    FastaFingerprint fp;
    fp.size = static_cast<std::uint64_t>(st.st_size);
    fp.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
    // A small FASTA (and every fuzz input's) needs no 1 MiB buffer.
    std::vector<char> buffer(static_cast<std::size_t>(std::clamp<std::uint64_t>(fp.size, 4096, 1 << 20)));
    std::uint32_t crc = 0;
    std::size_t got;
    while ((got = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) crc = io::crc32_of(buffer.data(), got, crc);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) throw Error(path + ": read error while computing its checksum");
    fp.crc32 = crc;
    return fp;
}

namespace {

// The FASTA path's warning about repeated ids, from a cached database: the ids
// back in file order, so the line names the same records.
std::string duplicate_id_warning(const PreparedDatabase& db, const std::string& fasta_path) {
    std::vector<const std::string*> in_file_order(db.size());
    for (std::size_t p = 0; p < db.size(); ++p) in_file_order[db.file_index[p]] = &db.ids[p];
    RepeatedIds repeated;
    for (const std::string* id : in_file_order) repeated.add(*id);
    return repeated.warning(fasta_path);
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
        fp = fasta_fingerprint(fasta_path);
        load.cache_path = database_cache_path(fasta_path, options);
        std::error_code ec;
        if (std::filesystem::exists(load.cache_path, ec)) {
            try {
                const std::string bytes = read_whole_file(load.cache_path);
                load.database = deserialise(bytes, fp, options.alphabet, fasta_path);
                load.duplicate_ids = duplicate_id_warning(load.database, fasta_path);
                load.outcome = CacheOutcome::Loaded;
                load.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                return load;
            } catch (const CacheRejected& rejected) {
                load.outcome = CacheOutcome::Rebuilt;
                load.reason = "cache " + load.cache_path + " " + rejected.reason;
            }
        } else {
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
