// Reading and digitising the targets of a profile search, and their cache.
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/profile_targets.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include "../io/crc32.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace alignscope::profile {

ProfileTargets read_profile_targets(const std::string& path, ResidueAlphabet alphabet, std::size_t limit) {
    const ResidueCode& code = ResidueCode::of(alphabet);
    ProfileTargets targets;
    targets.alphabet = alphabet;
    targets.path = path;
    targets.offsets.push_back(0);
    SequenceReader reader(path, DescriptionBlanks::Keep);  // hmmsearch prints trailing blanks
    Sequence record;
    std::vector<std::uint8_t> codes;
    try {
        while ((limit == 0 || targets.size() < limit) && reader.next(record)) {
            const std::size_t bad = code.digitise(record.residues, codes);
            if (bad != std::string::npos)
                throw Error(path + ":" + std::to_string(reader.line()) + ": sequence '" + record.id + "' has '" +
                            std::string(1, record.residues[bad]) + "' at residue " + std::to_string(bad + 1) +
                            ", which is not in the " + std::string(code.name()) + " alphabet of the profile");
            if (codes.size() > 100000)
                throw Error(path + ":" + std::to_string(reader.line()) + ": sequence '" + record.id + "' is " +
                            std::to_string(codes.size()) +
                            " residues long; profile search takes targets of up to 100,000 residues (as hmmsearch)");
            targets.names.push_back(record.id);
            targets.descriptions.push_back(record.description);
            targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
            targets.offsets.push_back(targets.residues.size());
        }
    } catch (const std::bad_alloc&) {
        const std::size_t count = targets.size(), residues = targets.residues.size();
        targets = {};
        throw Error(path + ": out of memory after " + std::to_string(count) + " targets (" +
                    std::to_string(residues >> 20) +
                    " MiB of residues); split the database into smaller files, "
                    "or use a machine with more memory");
    }
    if (targets.size() == 0) throw Error(path + ": no sequences in the file (expected FASTA or FASTQ records)");
    return targets;
}

}  // namespace alignscope::profile

// The targets' cache (little-endian, version 2; version 1 held descriptions
// without their trailing blanks):
//   0   magic "ALSPT\x01\r\n" (8 bytes; the CR LF catches text-mode damage)
//   8   u32 version, u32 alphabet
//   16  u64 FASTA size, i64 FASTA mtime (ns), u32 FASTA CRC-32, u32 CRC-32 of
//       the alphabet's letter-to-code table (a new table makes caches stale)
//   40  u64 targets, u64 residue bytes, u64 name bytes
//   64  u64 offsets[targets + 1], residue codes, names ("id\0description\0"
//       per target), all in file order
//   end u32 CRC-32 of every byte before it, "END1"
// Sizes are checked against the file before anything is allocated; the
// checksum, then the key, then the contents against what a parse can give.
namespace alignscope::profile {
namespace {

constexpr char kMagic[8] = {'A', 'L', 'S', 'P', 'T', '\x01', '\r', '\n'};
constexpr char kEnd[4] = {'E', 'N', 'D', '1'};
constexpr std::uint32_t kVersion = 2;

struct CacheHeader {
    char magic[8];
    std::uint32_t version, alphabet;
    std::uint64_t fasta_size;
    std::int64_t fasta_mtime_ns;
    std::uint32_t fasta_crc32, code_crc32;
    std::uint64_t targets, residue_bytes, name_bytes;
};
static_assert(sizeof(CacheHeader) == 64);

// Why a cache cannot be used: a sentence for the user.
struct CacheRejected {
    std::string reason;
};

std::uint32_t code_table_crc(const ResidueCode& code) {
    std::array<std::int16_t, 256> table{};
    for (int c = 0; c < 256; ++c)
        table[static_cast<std::size_t>(c)] = static_cast<std::int16_t>(code.code_of(static_cast<char>(c)));
    const std::int32_t kp = code.all_codes();
    return io::crc32_of(&kp, sizeof kp, io::crc32_of(table.data(), sizeof table));
}

// Reads exactly n bytes, adding them to the running checksum.
void read_exact(int fd, void* data, std::size_t n, std::uint32_t& crc, const char* what) {
    auto* p = static_cast<char*>(data);
    std::size_t done = 0;
    while (done < n) {
        const ssize_t got = ::read(fd, p + done, std::min<std::size_t>(n - done, std::size_t{1} << 24));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw CacheRejected{"unreadable: " + std::string(std::strerror(errno))};
        if (got == 0) throw CacheRejected{std::string("damaged: truncated in the ") + what};
        done += static_cast<std::size_t>(got);
    }
    crc = io::crc32_of(p, n, crc);
}

class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    ~FileDescriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

// The names and descriptions a parse gives: an id of printable ASCII without
// blanks, a description without line ends.
void check_names(const std::vector<std::string>& ids, const std::vector<std::string>& descriptions) {
    for (const std::string& id : ids) {
        if (id.empty()) throw CacheRejected{"damaged: an empty sequence name"};
        for (char ch : id)
            if (static_cast<unsigned char>(ch) <= 0x20) throw CacheRejected{"damaged: a sequence name with blanks"};
    }
    for (const std::string& d : descriptions)
        for (char ch : d)  // not find_first_of: a memchr per letter
            if (ch == '\r' || ch == '\n') throw CacheRejected{"damaged: a description with a line end"};
}

// A cache's targets, checked for damage; the key is left to the caller.
ProfileTargets read_cache(const std::string& cache_path, const ResidueCode& code, CacheHeader& header) {
    const FileDescriptor fd(::open(cache_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) throw CacheRejected{"unreadable: " + std::string(std::strerror(errno))};
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw CacheRejected{"is not a regular file"};
    const auto file_size = static_cast<std::uint64_t>(st.st_size);
    if (file_size < sizeof(CacheHeader) + 8) throw CacheRejected{"damaged: shorter than its header"};
    std::uint32_t crc = 0;
    read_exact(fd.get(), &header, sizeof header, crc, "header");
    if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0)
        throw CacheRejected{"damaged: not an AlignScope target cache (bad magic)"};
    const std::uint64_t n = header.targets;
    if (n == 0 || n > file_size / 8 || header.residue_bytes > file_size || header.name_bytes > file_size ||
        sizeof(CacheHeader) + 8 * (n + 1) + header.residue_bytes + header.name_bytes + 8 != file_size)
        throw CacheRejected{"damaged: its sizes do not add up to the file's"};
    ProfileTargets t;
    std::string names;
    try {
        t.offsets.resize(n + 1);
        t.residues.resize(header.residue_bytes);
        names.resize(header.name_bytes);
    } catch (const std::bad_alloc&) {
        throw CacheRejected{"is larger than the memory available to read it"};
    }
    read_exact(fd.get(), t.offsets.data(), 8 * (n + 1), crc, "offsets");
    read_exact(fd.get(), t.residues.data(), t.residues.size(), crc, "residues");
    read_exact(fd.get(), names.data(), names.size(), crc, "names");
    std::uint32_t stored = 0, ignored = 0;
    char end[4];
    read_exact(fd.get(), &stored, 4, ignored, "checksum");
    read_exact(fd.get(), end, 4, ignored, "end marker");
    if (std::memcmp(end, kEnd, 4) != 0) throw CacheRejected{"damaged: no end marker"};
    // Damage first, so a flipped bit in the key is called damage, not staleness.
    if (crc != stored) throw CacheRejected{"damaged: its contents do not match their checksum"};
    if (header.version != kVersion)
        throw CacheRejected{"stale: cache format version " + std::to_string(header.version) + ", this build writes " +
                            std::to_string(kVersion)};
    if (t.offsets.front() != 0 || t.offsets.back() != header.residue_bytes)
        throw CacheRejected{"damaged: offsets do not span the residues"};
    for (std::size_t k = 0; k < n; ++k)
        if (t.offsets[k + 1] < t.offsets[k] || t.offsets[k + 1] - t.offsets[k] > 100000)
            throw CacheRejected{"damaged: a target of impossible length"};
    std::uint8_t largest = 0;
    for (std::uint8_t c : t.residues) largest = std::max(largest, c);
    if (!t.residues.empty() && largest >= code.all_codes())
        throw CacheRejected{"damaged: residue codes outside the " + std::string(code.name()) + " alphabet"};
    t.names.reserve(n);
    t.descriptions.reserve(n);
    const char* p = names.data();
    const char* const last = names.data() + names.size();
    for (std::size_t k = 0; k < 2 * n; ++k) {
        const char* nul = p;
        while (nul != last && *nul != '\0') ++nul;
        if (nul == last) throw CacheRejected{"damaged: the names end early"};
        (k % 2 == 0 ? t.names : t.descriptions).emplace_back(p, nul);
        p = nul + 1;
    }
    if (p != last) throw CacheRejected{"damaged: bytes after the names"};
    check_names(t.names, t.descriptions);
    return t;
}

// The key: the FASTA and the alphabet the cache was made from.
void check_key(const CacheHeader& h, const FastaFingerprint& fp, const ResidueCode& code) {
    if (h.alphabet != static_cast<std::uint32_t>(code.alphabet()))
        throw CacheRejected{"stale: made for another alphabet than the profile's " + std::string(code.name())};
    if (h.code_crc32 != code_table_crc(code))
        throw CacheRejected{"stale: made with another letter-to-code table (another AlignScope version)"};
    if (h.fasta_size != fp.size)
        throw CacheRejected{"stale: the FASTA is now " + std::to_string(fp.size) + " bytes, the cache was made from " +
                            std::to_string(h.fasta_size) + " bytes"};
    if (h.fasta_mtime_ns != fp.mtime_ns) throw CacheRejected{"stale: the FASTA's modification time changed"};
    if (h.fasta_crc32 != fp.crc32) throw CacheRejected{"stale: the FASTA's checksum changed"};
}

void write_cache(const ProfileTargets& t, const FastaFingerprint& fp, const ResidueCode& code,
                 const std::string& cache_path) {
    const auto parent = std::filesystem::path(cache_path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    std::string names;
    for (std::size_t k = 0; k < t.size(); ++k) {
        names += t.names[k];
        names += '\0';
        names += t.descriptions[k];
        names += '\0';
    }
    CacheHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.alphabet = static_cast<std::uint32_t>(code.alphabet());
    h.fasta_size = fp.size;
    h.fasta_mtime_ns = fp.mtime_ns;
    h.fasta_crc32 = fp.crc32;
    h.code_crc32 = code_table_crc(code);
    h.targets = t.size();
    h.residue_bytes = t.residues.size();
    h.name_bytes = names.size();
    AtomicOutput out(cache_path);
    std::uint32_t crc = 0;
    auto put = [&out, &crc](const void* data, std::size_t n) {
        crc = io::crc32_of(data, n, crc);
        out.stream().write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    };
    put(&h, sizeof h);
    put(t.offsets.data(), t.offsets.size() * sizeof(std::uint64_t));
    put(t.residues.data(), t.residues.size());
    put(names.data(), names.size());
    out.stream().write(reinterpret_cast<const char*>(&crc), sizeof crc);
    out.stream().write(kEnd, sizeof kEnd);
    out.commit();
}

bool same_fingerprint(const FastaFingerprint& a, const FastaFingerprint& b) {
    return a.size == b.size && a.mtime_ns == b.mtime_ns && a.crc32 == b.crc32;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string profile_targets_cache_path(const std::string& path, ResidueAlphabet alphabet,
                                       const TargetCacheOptions& options) {
    DatabaseCacheOptions search;
    search.directory = options.directory;
    std::string cache = database_cache_path(path, search);  // "....alsdb": the search cache's place and name
    const std::string_view suffix = ".alsdb";
    if (cache.size() >= suffix.size() && cache.compare(cache.size() - suffix.size(), suffix.size(), suffix) == 0)
        cache.resize(cache.size() - suffix.size());
    std::string name(ResidueCode::of(alphabet).name());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    return cache + "." + name + ".alspt";
}

ProfileTargetsLoad load_profile_targets(const std::string& path, ResidueAlphabet alphabet,
                                        const TargetCacheOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    ProfileTargetsLoad load;
    if (!options.enabled) {
        load.targets = read_profile_targets(path, alphabet);
        load.seconds = seconds_since(start);
        return load;
    }
    if (path == "-") throw Error("a database cache is made for a file, not standard input");
    const ResidueCode& code = ResidueCode::of(alphabet);
    // The FASTA's checksum (a read of the whole file) while the cache is read.
    auto fingerprinting = std::async(std::launch::async, [&path] { return fasta_fingerprint(path); });
    std::optional<FastaFingerprint> fingerprint;
    auto fasta_key = [&]() -> const FastaFingerprint& {
        if (!fingerprint) fingerprint = fingerprinting.get();
        return *fingerprint;
    };
    load.cache_path = profile_targets_cache_path(path, alphabet, options);
    std::error_code ec;
    load.outcome = CacheOutcome::Built;
    if (std::filesystem::exists(load.cache_path, ec)) {
        try {
            CacheHeader header{};
            ProfileTargets cached = read_cache(load.cache_path, code, header);
            check_key(header, fasta_key(), code);
            cached.alphabet = alphabet;
            cached.path = path;
            load.targets = std::move(cached);
            load.outcome = CacheOutcome::Loaded;
            load.seconds = seconds_since(start);
            return load;
        } catch (const CacheRejected& rejected) {
            load.outcome = CacheOutcome::Rebuilt;
            load.reason = "cache " + load.cache_path + " " + rejected.reason;
        }
    }
    const FastaFingerprint fp = fasta_key();
    load.targets = read_profile_targets(path, alphabet);
    const std::string earlier = load.outcome == CacheOutcome::Rebuilt ? load.reason + "; " : "";
    struct stat st {};
    if (!same_fingerprint(fasta_fingerprint(path), fp)) {
        // A concurrent writer changed the FASTA under us: no cache of it.
        load.outcome = CacheOutcome::Unwritable;
        load.reason = earlier + path + " changed while it was read; the cache was not written";
    } else if (::stat(load.cache_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        load.outcome = CacheOutcome::Unwritable;
        load.reason = earlier + "the cache was not written: " + load.cache_path + " is not a regular file";
    } else {
        try {
            write_cache(load.targets, fp, code, load.cache_path);
        } catch (const std::exception& e) {
            load.outcome = CacheOutcome::Unwritable;
            load.reason = earlier + "the cache could not be written: " + e.what();
        }
    }
    load.seconds = seconds_since(start);
    return load;
}

}  // namespace alignscope::profile
