// Long-pair stage-1 checkpoints (see long_checkpoint.hpp): atomic, checksummed
// files and their validation.
#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/error.hpp>
#include "../io/crc32.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace alignscope::longpair {
namespace {

namespace fs = std::filesystem;
using I64 = std::int64_t;

constexpr char kMagic[8] = {'A', 'L', 'S', 'C', 'K', 'P', 'T', '1'};
constexpr std::uint32_t kKindManifest = 1, kKindRow = 2;
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8;
constexpr const char* kRowPrefix = "long-pair-row-";
constexpr const char* kRowSuffix = ".bin";

std::string errno_text() { return std::strerror(errno); }

// A file written piece by piece to a temporary name, with a running CRC-32;
// commit() appends the CRC, fsyncs, renames over `path` and fsyncs the directory.
class AtomicWriter {
public:
    AtomicWriter(const std::string& path, std::uint32_t kind, std::uint64_t payload_bytes) : path_(path) {
        const fs::path p(path);
        temp_ = (p.parent_path() / ("." + p.filename().string() + ".tmp." + std::to_string(::getpid()))).string();
        fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd_ < 0) throw Error("checkpoint: cannot write " + temp_ + " (" + errno_text() + ")");
        try {
            put(kMagic, sizeof kMagic);
            put_value(kCheckpointVersion);
            put_value(kind);
            put_value(payload_bytes);
        } catch (...) {  // (a full disk) no destructor runs for a constructor that throws
            ::close(fd_);
            ::unlink(temp_.c_str());
            throw;
        }
    }
    ~AtomicWriter() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(temp_.c_str());
    }
    AtomicWriter(const AtomicWriter&) = delete;
    AtomicWriter& operator=(const AtomicWriter&) = delete;

    void put(const void* data, std::size_t size) {
        crc_ = io::crc32_of(data, size, crc_);
        const char* p = static_cast<const char*>(data);
        while (size > 0) {
            const ssize_t w = ::write(fd_, p, size);
            if (w < 0) {
                if (errno == EINTR) continue;
                throw Error("checkpoint: cannot write " + temp_ + " (" + errno_text() + ")");
            }
            p += w;
            size -= static_cast<std::size_t>(w);
        }
    }
    template <typename T>
    void put_value(T v) {
        put(&v, sizeof v);
    }
    template <typename T>
    void put_vector(const std::vector<T>& v) {
        if (!v.empty()) put(v.data(), v.size() * sizeof(T));
    }

    void commit() {
        const std::uint32_t crc = crc_;
        put(&crc, sizeof crc);
        if (::fsync(fd_) != 0) throw Error("checkpoint: cannot write " + temp_ + " to disk (" + errno_text() + ")");
        if (::close(fd_) != 0) {
            fd_ = -1;
            throw Error("checkpoint: cannot write " + temp_ + " (" + errno_text() + ")");
        }
        fd_ = -1;
        if (::rename(temp_.c_str(), path_.c_str()) != 0)
            throw Error("checkpoint: cannot rename " + temp_ + " to " + path_ + " (" + errno_text() + ")");
        committed_ = true;
        const std::string dir = fs::path(path_).parent_path().string();
        const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            ::fsync(dfd);
            ::close(dfd);
        }
    }

private:
    std::string path_, temp_;
    int fd_ = -1;
    std::uint32_t crc_ = 0;
    bool committed_ = false;
};

// A whole checkpoint file, checked: header, size, kind and CRC.
struct FileBytes {
    std::string path;
    std::vector<char> bytes;  // the payload
};

// Reads `size` bytes at `offset`; a file shorter than that is truncated.
void read_exactly(int fd, const std::string& path, char* to, std::size_t size, std::uint64_t offset) {
    while (size > 0) {
        const ssize_t r = ::pread(fd, to, size, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw Error("checkpoint: cannot read " + path + " (" + errno_text() + ")");
        if (r == 0) throw Error("checkpoint: " + path + " is shorter than it was a moment ago (truncated)");
        to += r;
        size -= static_cast<std::size_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
}

// The header is read and checked against the file's size before the rest is
// read, so a file is never read further than its header says it goes.
FileBytes read_checked(const std::string& path, std::uint32_t kind) {
    FileBytes out;
    out.path = path;
    // Non-blocking: a FIFO of that name would otherwise wait for a writer forever.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error("checkpoint: cannot read " + path + " (" + errno_text() + ")");
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw Error("checkpoint: cannot read " + path + " (" + errno_text() + ")");
    if (!S_ISREG(st.st_mode))
        throw Error("checkpoint: " + path + " is not a regular file (" +
                    (S_ISFIFO(st.st_mode)  ? "a FIFO"
                     : S_ISDIR(st.st_mode) ? "a directory"
                                           : "a device or socket") +
                    "); a checkpoint is written as regular files only");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    char header[kHeaderBytes];
    if (size >= kHeaderBytes + 4) read_exactly(fd, path, header, kHeaderBytes, 0);
    if (size < kHeaderBytes + 4 || std::memcmp(header, kMagic, sizeof kMagic) != 0)
        throw Error("checkpoint: " + path + " is not an AlignScope long-pair checkpoint file" +
                    (size < kHeaderBytes + 4 ? " (" + std::to_string(size) + " bytes)" : std::string()));
    std::uint32_t version = 0, file_kind = 0;
    std::uint64_t payload = 0;
    std::memcpy(&version, header + 8, 4);
    std::memcpy(&file_kind, header + 12, 4);
    std::memcpy(&payload, header + 16, 8);
    if (version != kCheckpointVersion)
        throw Error("checkpoint: " + path + " has format version " + std::to_string(version) +
                    "; this AlignScope reads version " + std::to_string(kCheckpointVersion));
    if (file_kind != kind)
        throw Error("checkpoint: " + path + " is a " + (file_kind == kKindRow ? "row file" : "manifest") +
                    ", expected a " + (kind == kKindRow ? "row file" : "manifest"));
    if (payload != size - kHeaderBytes - 4)
        throw Error("checkpoint: " + path + " is " + std::to_string(size) + " bytes, its header says " +
                    (payload > size ? "a payload of " + std::to_string(payload) + " bytes"
                                    : std::to_string(kHeaderBytes + payload + 4)) +
                    " (truncated or damaged)");
    std::vector<char> all;
    try {
        all.resize(static_cast<std::size_t>(size));
    } catch (const std::bad_alloc&) {
        throw Error("checkpoint: " + path + " is " + std::to_string(size) +
                    " bytes, more than the memory available to read it (out of memory)");
    }
    std::memcpy(all.data(), header, kHeaderBytes);
    read_exactly(fd, path, all.data() + kHeaderBytes, all.size() - kHeaderBytes, kHeaderBytes);
    std::uint32_t stored = 0;
    std::memcpy(&stored, all.data() + all.size() - 4, 4);
    if (io::crc32_of(all.data(), all.size() - 4) != stored)
        throw Error("checkpoint: " + path + " is damaged (its CRC-32 does not match its contents)");
    out.bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(kHeaderBytes), all.end() - 4);
    return out;
}

// Scores a job can have written: the kernels compute in 32 bits with every
// real score under 2^29 (check_ranges in long_pair.cpp) and "none" at kNegInf;
// anything outside [kNegInf - 2^29, 2^29] came from somewhere else.
bool possible_score(std::int64_t v) { return v >= I64{kNegInf} - (I64{1} << 29) && v <= (I64{1} << 29); }

// Reads values from a checked payload; running off its end is a malformed file.
class Reader {
public:
    explicit Reader(const FileBytes& f) : f_(f) {}
    template <typename T>
    T get() {
        T v{};
        need(sizeof v);
        std::memcpy(&v, f_.bytes.data() + at_, sizeof v);
        at_ += sizeof v;
        return v;
    }
    template <typename T>
    void get_vector(std::vector<T>& v, std::uint64_t count) {
        if (count > (f_.bytes.size() - at_) / sizeof(T)) malformed();
        v.resize(static_cast<std::size_t>(count));
        if (count) std::memcpy(v.data(), f_.bytes.data() + at_, v.size() * sizeof(T));
        at_ += v.size() * sizeof(T);
    }
    std::string get_string() {
        const auto len = get<std::uint32_t>();
        need(len);
        std::string s(f_.bytes.data() + at_, len);
        at_ += len;
        return s;
    }
    void end() const {
        if (at_ != f_.bytes.size()) malformed();
    }
    [[noreturn]] void malformed() const {
        throw Error("checkpoint: " + f_.path +
                    " is malformed (its checksum is right, its contents are not: written by another program?)");
    }

private:
    void need(std::size_t size) const {
        if (size > f_.bytes.size() - at_) malformed();
    }
    const FileBytes& f_;
    std::size_t at_ = 0;
};

void put_best(AtomicWriter& w, const BestCell& b) {
    w.put_value<std::int32_t>(b.score);
    w.put_value<I64>(b.i);
    w.put_value<I64>(b.j);
}
BestCell get_best(Reader& r) {
    BestCell b;
    b.score = r.get<std::int32_t>();
    b.i = r.get<I64>();
    b.j = r.get<I64>();
    return b;
}

std::string mode_name(AlignmentMode mode, const FreeEndGaps& fe) {
    AlignOptions o;
    o.mode = mode;
    o.free_ends = fe;
    return describe_mode(o);
}

std::string user_units(int scaled, int scale) {
    std::ostringstream s;
    s << static_cast<double>(scaled) / scale;
    return s.str();
}

// Every way `got` (the checkpoint) differs from `want` (this job), in words.
std::string differences(const CheckpointIdentity& want, const CheckpointIdentity& got) {
    std::vector<std::string> d;
    if (got.m != want.m)
        d.push_back("the query has " + std::to_string(want.m) + " residues here, " + std::to_string(got.m) +
                    " in the checkpoint");
    else if (got.query_crc != want.query_crc)
        d.push_back("the query's residues differ (CRC-32)");
    if (got.n != want.n)
        d.push_back("the target has " + std::to_string(want.n) + " residues here, " + std::to_string(got.n) +
                    " in the checkpoint");
    else if (got.target_crc != want.target_crc)
        d.push_back("the target's residues differ (CRC-32)");
    if (got.matrix != want.matrix)
        d.push_back("the matrix is " + want.matrix + " here, " + got.matrix + " in the checkpoint");
    else if (got.matrix_crc != want.matrix_crc || got.scale != want.scale)
        d.push_back("the matrix " + want.matrix + "'s scores differ");
    if (static_cast<I64>(got.gap_open) * want.scale != static_cast<I64>(want.gap_open) * got.scale)
        d.push_back("gap open is " + user_units(want.gap_open, want.scale) + " here, " +
                    user_units(got.gap_open, got.scale) + " in the checkpoint");
    if (static_cast<I64>(got.gap_extend) * want.scale != static_cast<I64>(want.gap_extend) * got.scale)
        d.push_back("gap extend is " + user_units(want.gap_extend, want.scale) + " here, " +
                    user_units(got.gap_extend, got.scale) + " in the checkpoint");
    if (got.mode != want.mode || !(got.free_ends == want.free_ends))
        d.push_back("the mode is " + mode_name(want.mode, want.free_ends) + " here, " +
                    mode_name(got.mode, got.free_ends) + " in the checkpoint");
    std::string out;
    for (const std::string& s : d) out += (out.empty() ? "" : "; ") + s;
    return out;
}

// What a checkpoint whose checksums are right but whose values are not this
// job's gets said about it (the DP values below, or stage 2 and 3 later).
constexpr const char* kNotThisJob =
    " (its checksums are right, its values are not this job's: written by another program, or edited); "
    "delete the checkpoint or run without --resume";

// Necessary conditions on a saved row r (H and F, columns 0..n) of this job's
// stage 1, cheap to check and exact (the values of every runner, CPU or GPU,
// split or not, are the DP's): column 0 is the left edge of stage 1, no H is
// below its F (H is a maximum over F), none falls by more than a gap opening
// from its left neighbour (H >= E >= H(j-1) - open), none is negative in a
// local alignment; the best cells of the manifest are at least as high as
// every H of the rows (local) and of column n (free target end) they cover.
// Values that pass can still be wrong: stage 2 and 3 then find that the
// rows do not fit together (align_long names the checkpoint then).
void check_row_values(const CheckpointIdentity& id, const CheckpointState& s, std::size_t k,
                      const std::vector<Score>& h, const std::vector<Score>& f, const std::string& path,
                      const std::string& manifest) {
    const I64 r = s.rows[k];
    const I64 open = id.gap_open, extend = id.gap_extend;
    const bool local = id.mode == AlignmentMode::Local;
    const bool zero_left = local || (id.mode == AlignmentMode::SemiGlobal && id.free_ends.target_begin);
    auto clamped = [](I64 v) { return std::max<I64>(v, kNegInf); };
    auto bad = [&](const std::string& what) {
        throw Error("checkpoint: " + path + " does not match this job: row " + std::to_string(r) + " " + what +
                    kNotThisJob);
    };
    const I64 edge_h = zero_left ? 0 : clamped(-(open + (r - 1) * extend));
    const I64 edge_f = zero_left ? I64{kNegInf} : edge_h;
    if (h[0] != edge_h || f[0] != edge_f)
        bad("has H " + std::to_string(h[0]) + " and F " + std::to_string(f[0]) +
            " in column 0, where this job's left edge has " + std::to_string(edge_h) + " and " +
            std::to_string(edge_f));
    I64 top = h[0];
    for (std::size_t j = 0; j < h.size(); ++j) {
        const std::string at = " at column " + std::to_string(j);
        if (h[j] < f[j]) bad("has H " + std::to_string(h[j]) + " below F " + std::to_string(f[j]) + at);
        if (local && h[j] < 0) bad("has a negative H (" + std::to_string(h[j]) + ") in a local alignment" + at);
        if (j > 0 && h[j] < clamped(I64{h[j - 1]} - open))
            bad("has H falling from " + std::to_string(h[j - 1]) + " to " + std::to_string(h[j]) + at +
                ", by more than a gap opening (" + std::to_string(open) + ")");
        top = std::max<I64>(top, h[j]);
    }
    if (local && s.best.score < top)
        throw Error("checkpoint: " + manifest + " does not match this job: it records a best score of " +
                    std::to_string(s.best.score) + ", but row " + std::to_string(r) + " (" + path + ") holds H " +
                    std::to_string(top) + kNotThisJob);
    const bool free_target_end = id.mode == AlignmentMode::SemiGlobal && id.free_ends.target_end;
    if (free_target_end && s.last_column.score < h.back())
        throw Error("checkpoint: " + manifest + " does not match this job: it records a best score of " +
                    std::to_string(s.last_column.score) + " in the last column, but row " + std::to_string(r) + " (" +
                    path + ") holds H " + std::to_string(h.back()) + " there" + kNotThisJob);
}

}  // namespace

LongCheckpoint::DirLock::DirLock(const std::string& dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw Error("checkpoint: cannot open the directory " + dir + " (" + errno_text() + ")");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const bool busy = errno == EWOULDBLOCK;
        const std::string why = errno_text();
        ::close(fd_);
        fd_ = -1;
        if (busy) throw Error("checkpoint: another job is using the checkpoint directory " + dir);
        throw Error("checkpoint: cannot lock the directory " + dir + " (" + why + ")");
    }
}

LongCheckpoint::DirLock& LongCheckpoint::DirLock::operator=(DirLock&& o) noexcept {
    if (this != &o) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = o.fd_;
        o.fd_ = -1;
    }
    return *this;
}

LongCheckpoint::DirLock::~DirLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

CheckpointIdentity CheckpointIdentity::of(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target,
                                          std::int64_t n, const ScoringScheme& scheme, const AlignOptions& options) {
    CheckpointIdentity id;
    id.m = m;
    id.n = n;
    id.query_crc = io::crc32_of(query, static_cast<std::size_t>(m));
    id.target_crc = io::crc32_of(target, static_cast<std::size_t>(n));
    id.matrix = scheme.matrix.name();
    id.matrix_crc = io::crc32_of(scheme.matrix.letters().data(), scheme.matrix.letters().size());
    id.matrix_crc =
        io::crc32_of(scheme.matrix.scores().data(), scheme.matrix.scores().size() * sizeof(int), id.matrix_crc);
    id.gap_open = scheme.gap_open;
    id.gap_extend = scheme.gap_extend;
    id.scale = scheme.scale;
    id.mode = options.mode;
    id.free_ends = options.mode == AlignmentMode::SemiGlobal ? options.free_ends : FreeEndGaps::none();
    return id;
}

std::string LongCheckpoint::manifest_path() const { return (fs::path(dir_) / kCheckpointManifest).string(); }

std::string LongCheckpoint::row_path(std::int64_t row) const {
    char name[64];
    std::snprintf(name, sizeof name, "%s%012lld%s", kRowPrefix, static_cast<long long>(row), kRowSuffix);
    return (fs::path(dir_) / name).string();
}

LongCheckpoint LongCheckpoint::start(const std::string& dir, const CheckpointIdentity& id) {
    if (dir.empty()) throw Error("checkpoint: no directory given");
    LongCheckpoint c(dir, id);
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw Error("checkpoint: " + dir + " exists and is not a directory");
    if (!fs::exists(dir, ec)) {
        if (!fs::create_directories(dir, ec) || ec)
            throw Error("checkpoint: cannot create the directory " + dir + " (" + (ec ? ec.message() : "failed") + ")");
        c.created_dir_ = true;
    }
    c.lock_ = DirLock(dir);
    if (fs::exists(c.manifest_path(), ec))
        throw Error("checkpoint: " + dir + " already holds a long-pair checkpoint (" + kCheckpointManifest +
                    "): add --resume to go on from it, or give another directory");
    // Can we write here? (A probe file, removed at once.)
    const std::string probe = (fs::path(dir) / (".long-pair.probe." + std::to_string(::getpid()))).string();
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("checkpoint: cannot write files in " + dir + " (" + errno_text() + ")");
    ::close(fd);
    ::unlink(probe.c_str());
    return c;
}

LongCheckpoint LongCheckpoint::resume(const std::string& dir, const CheckpointIdentity& id) {
    if (dir.empty()) throw Error("--resume needs the checkpoint directory (--checkpoint DIR)");
    LongCheckpoint c(dir, id);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error("checkpoint: " + dir + " is not a directory: nothing to resume");
    c.lock_ = DirLock(dir);
    if (!fs::exists(c.manifest_path(), ec))
        throw Error("checkpoint: " + dir + " holds no long-pair checkpoint (no " + kCheckpointManifest +
                    "): nothing to resume; run without --resume to start one");
    const FileBytes f = read_checked(c.manifest_path(), kKindManifest);
    Reader r(f);
    CheckpointIdentity got;
    got.m = r.get<I64>();
    got.n = r.get<I64>();
    got.query_crc = r.get<std::uint32_t>();
    got.target_crc = r.get<std::uint32_t>();
    got.matrix = r.get_string();
    got.matrix_crc = r.get<std::uint32_t>();
    got.gap_open = r.get<std::int32_t>();
    got.gap_extend = r.get<std::int32_t>();
    got.scale = r.get<std::int32_t>();
    const auto mode = r.get<std::uint8_t>();
    if (mode > 2) r.malformed();
    got.mode = static_cast<AlignmentMode>(mode);
    got.free_ends.query_begin = r.get<std::uint8_t>() != 0;
    got.free_ends.query_end = r.get<std::uint8_t>() != 0;
    got.free_ends.target_begin = r.get<std::uint8_t>() != 0;
    got.free_ends.target_end = r.get<std::uint8_t>() != 0;
    c.created_dir_ = r.get<std::uint8_t>() != 0;
    const std::string diff = differences(id, got);
    if (!diff.empty()) throw Error("checkpoint: " + c.manifest_path() + " is for another pair or scheme: " + diff);
    CheckpointState& s = c.state_;
    const auto count = r.get<std::uint64_t>();
    if (count == 0 || count > static_cast<std::uint64_t>(id.m)) r.malformed();
    for (std::uint64_t k = 0; k < count; ++k) {
        const auto row = r.get<I64>();
        if (row < 1 || row > id.m || (!s.rows.empty() && row <= s.rows.back())) r.malformed();
        s.rows.push_back(row);
        s.row_crcs.push_back(r.get<std::uint32_t>());
    }
    s.best = get_best(r);
    s.last_column = get_best(r);
    s.overview_cols = r.get<std::int32_t>();
    const auto blocks = r.get<std::uint64_t>();
    if (s.overview_cols < 0 || (s.overview_cols == 0 && blocks != 0)) r.malformed();
    r.get_vector(s.overview_row_edges, blocks);
    r.get_vector(s.overview, blocks * static_cast<std::uint64_t>(s.overview_cols));
    r.end();
    for (std::size_t b = 0; b < s.overview_row_edges.size(); ++b)
        if (s.overview_row_edges[b] < 1 || s.overview_row_edges[b] > s.last_row() ||
            (b > 0 && s.overview_row_edges[b] <= s.overview_row_edges[b - 1]))
            r.malformed();
    // The running cells lie in the rows saved (stage 2 starts from them), the
    // last column's on column n; no score is one a job could not have.
    auto cell_inside = [&](const BestCell& b) {
        return possible_score(b.score) && b.i >= 0 && b.i <= s.last_row() && b.j >= 0 && b.j <= id.n;
    };
    if (!cell_inside(s.best) || (s.best.score > 0 && (s.best.i < 1 || s.best.j < 1)) || !cell_inside(s.last_column) ||
        (s.last_column.score > kNegInf && (s.last_column.i < 1 || s.last_column.j != id.n)) || s.overview_cols > id.n ||
        !std::all_of(s.overview.begin(), s.overview.end(), possible_score))
        r.malformed();
    // Every row file: there, whole, the one the manifest names, and values
    // this job's stage 1 can have left.
    std::vector<Score> h, f2;
    for (std::size_t k = 0; k < s.rows.size(); ++k) {
        c.read_row(k, h, f2);
        check_row_values(id, s, k, h, f2, c.row_path(s.rows[k]), c.manifest_path());
    }
    return c;
}

void LongCheckpoint::read_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) const {
    if (k >= state_.rows.size()) throw Error("internal error: reading an unknown checkpoint row");
    const std::string path = row_path(state_.rows[k]);
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw Error("checkpoint: " + path + " is missing (the manifest " + manifest_path() + " lists row " +
                    std::to_string(state_.rows[k]) + ")");
    // A row file is of one size for this job: anything else is not read.
    const std::uint64_t size = fs::file_size(path, ec);
    const std::uint64_t want = kHeaderBytes + 16 + 2 * static_cast<std::uint64_t>(id_.n + 1) * sizeof(Score) + 4;
    if (!ec && size != want)
        throw Error("checkpoint: " + path + " is " + std::to_string(size) + " bytes, a row of a target of " +
                    std::to_string(id_.n) + " residues takes " + std::to_string(want) + " (truncated or damaged)");
    const FileBytes file = read_checked(path, kKindRow);
    Reader r(file);
    const auto row = r.get<I64>();
    const auto n = r.get<I64>();
    if (row != state_.rows[k] || n != id_.n)
        throw Error("checkpoint: " + path + " holds row " + std::to_string(row) + " of a target of " +
                    std::to_string(n) + " residues, expected row " + std::to_string(state_.rows[k]) + " of " +
                    std::to_string(id_.n));
    r.get_vector(h, static_cast<std::uint64_t>(n + 1));
    r.get_vector(f, static_cast<std::uint64_t>(n + 1));
    r.end();
    std::uint32_t crc = io::crc32_of(h.data(), h.size() * sizeof(Score));
    crc = io::crc32_of(f.data(), f.size() * sizeof(Score), crc);
    if (crc != state_.row_crcs[k])
        throw Error("checkpoint: " + path + " is not the row file the manifest " + manifest_path() +
                    " was written with (its contents differ)");
    if (!std::all_of(h.begin(), h.end(), possible_score) || !std::all_of(f.begin(), f.end(), possible_score))
        r.malformed();
}

void LongCheckpoint::add_row(std::int64_t row, const std::vector<Score>& h, const std::vector<Score>& f) {
    if (h.size() != static_cast<std::size_t>(id_.n + 1) || f.size() != h.size())
        throw Error("internal error: a checkpoint row of the wrong length");
    if (row < 1 || row > id_.m || (!state_.rows.empty() && row <= state_.rows.back()))
        throw Error("internal error: checkpoint rows out of order");
    const std::string path = row_path(row);
    AtomicWriter w(path, kKindRow, 16 + 2 * h.size() * sizeof(Score));
    w.put_value<I64>(row);
    w.put_value<I64>(id_.n);
    w.put_vector(h);
    w.put_vector(f);
    w.commit();
    written_.push_back(path);
    std::uint32_t crc = io::crc32_of(h.data(), h.size() * sizeof(Score));
    crc = io::crc32_of(f.data(), f.size() * sizeof(Score), crc);
    state_.rows.push_back(row);
    state_.row_crcs.push_back(crc);
}

void LongCheckpoint::commit(const BestCell& best, const BestCell& last_column, int overview_cols,
                            const std::vector<std::int64_t>& overview_row_edges, const std::vector<Score>& overview) {
    if (state_.rows.empty()) return;  // nothing to resume from yet
    if (overview.size() != overview_row_edges.size() * static_cast<std::size_t>(std::max(overview_cols, 0)))
        throw Error("internal error: a checkpoint overview of the wrong size");
    state_.best = best;
    state_.last_column = last_column;
    state_.overview_cols = overview_row_edges.empty() ? 0 : overview_cols;
    state_.overview_row_edges = overview_row_edges;
    state_.overview = overview;
    const CheckpointIdentity& id = id_;
    const std::uint64_t bytes = 8 + 8 + 4 + 4 + 4 + id.matrix.size() + 4 + 4 + 4 + 4 + 5 + 1 + 8 +
                                state_.rows.size() * 12 + 2 * 20 + 4 + 8 + overview_row_edges.size() * 8 +
                                overview.size() * 4;
    AtomicWriter w(manifest_path(), kKindManifest, bytes);
    w.put_value<I64>(id.m);
    w.put_value<I64>(id.n);
    w.put_value<std::uint32_t>(id.query_crc);
    w.put_value<std::uint32_t>(id.target_crc);
    w.put_value<std::uint32_t>(static_cast<std::uint32_t>(id.matrix.size()));
    w.put(id.matrix.data(), id.matrix.size());
    w.put_value<std::uint32_t>(id.matrix_crc);
    w.put_value<std::int32_t>(id.gap_open);
    w.put_value<std::int32_t>(id.gap_extend);
    w.put_value<std::int32_t>(id.scale);
    w.put_value<std::uint8_t>(static_cast<std::uint8_t>(id.mode));
    w.put_value<std::uint8_t>(id.free_ends.query_begin);
    w.put_value<std::uint8_t>(id.free_ends.query_end);
    w.put_value<std::uint8_t>(id.free_ends.target_begin);
    w.put_value<std::uint8_t>(id.free_ends.target_end);
    w.put_value<std::uint8_t>(created_dir_ ? 1 : 0);
    w.put_value<std::uint64_t>(state_.rows.size());
    for (std::size_t k = 0; k < state_.rows.size(); ++k) {
        w.put_value<I64>(state_.rows[k]);
        w.put_value<std::uint32_t>(state_.row_crcs[k]);
    }
    put_best(w, best);
    put_best(w, last_column);
    w.put_value<std::int32_t>(state_.overview_cols);
    w.put_value<std::uint64_t>(overview_row_edges.size());
    w.put_vector(overview_row_edges);
    w.put_vector(overview);
    w.commit();
}

void LongCheckpoint::remove_files() {
    std::error_code ec;
    fs::remove(manifest_path(), ec);  // first: a checkpoint without its manifest is no checkpoint
    for (const std::int64_t row : state_.rows) fs::remove(row_path(row), ec);
    for (const std::string& path : written_) fs::remove(path, ec);
    remove_files_in(dir_, created_dir_);
}

void LongCheckpoint::remove_files_in(const std::string& dir, bool remove_dir) {
    std::error_code ec;
    fs::remove(fs::path(dir) / kCheckpointManifest, ec);  // first, as above
    // Row files (also of an earlier run that never made it into a manifest).
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() == std::strlen(kRowPrefix) + 12 + std::strlen(kRowSuffix) && name.rfind(kRowPrefix, 0) == 0 &&
            name.ends_with(kRowSuffix) &&
            std::all_of(name.begin() + static_cast<std::ptrdiff_t>(std::strlen(kRowPrefix)),
                        name.end() - static_cast<std::ptrdiff_t>(std::strlen(kRowSuffix)),
                        [](char ch) { return ch >= '0' && ch <= '9'; }))
            fs::remove(e.path(), ec);
        // Temporary files of a write that a crash interrupted.
        else if (name.rfind(".long-pair", 0) == 0 && name.find(".tmp.") != std::string::npos)
            fs::remove(e.path(), ec);
    }
    if (remove_dir && fs::is_empty(dir, ec)) fs::remove(dir, ec);
}

void LongCheckpoint::remove_empty_directory() {
    std::error_code ec;
    if (created_dir_ && fs::is_empty(dir_, ec) && !ec) fs::remove(dir_, ec);
}

}  // namespace alignscope::longpair
