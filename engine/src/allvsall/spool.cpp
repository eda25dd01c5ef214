// The ordered result spool and its checkpoint (see spool.hpp).
#include <alignscope/allvsall/spool.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include "../io/crc32.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace alignscope::allvsall {
namespace {

constexpr const char* kManifestTitle = "alignscope allvsall checkpoint 1";

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const char* p, std::size_t size, const std::string& path) {
    while (size > 0) {
        const ssize_t w = ::write(fd, p, size);
        if (w < 0) {
            if (errno == EINTR) continue;
            throw Error("allvsall: cannot write " + path + " (" + write_failure_reason(errno) + ")");
        }
        p += w;
        size -= static_cast<std::size_t>(w);
    }
}

void read_all(int fd, char* p, std::size_t size, std::uint64_t offset, const std::string& path) {
    while (size > 0) {
        const ssize_t r = ::pread(fd, p, size, static_cast<off_t>(offset));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) throw Error("allvsall: cannot read " + path + (r < 0 ? " (" + errno_text() + ")" : ": cut short"));
        p += r;
        size -= static_cast<std::size_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
}

std::uint32_t set_crc(const std::vector<Sequence>& set) {
    std::uint32_t crc = 0;
    for (const Sequence& s : set) {
        crc = io::crc32_of(s.id.data(), s.id.size(), crc);
        crc = io::crc32_of("\n", 1, crc);
        crc = io::crc32_of(s.residues.data(), s.residues.size(), crc);
        crc = io::crc32_of("\n", 1, crc);
    }
    return crc;
}

std::string number(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
}

std::string hex(std::uint32_t v) {
    char text[16];
    std::snprintf(text, sizeof text, "%08x", v);
    return text;
}

void sync_directory(const std::string& dir) {
    const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

// "key rest" -> key
std::string key_of(const std::string& line) { return line.substr(0, line.find(' ')); }

bool better(const std::int64_t sa, std::uint32_t pa, const std::int64_t sb, std::uint32_t pb) {
    return sa > sb || (sa == sb && pa < pb);
}

}  // namespace

std::vector<std::string> checkpoint_identity(const Problem& p) {
    std::vector<std::string> lines;
    lines.push_back("rows " + std::to_string(p.rows->size()) + " " + hex(set_crc(*p.rows)));
    if (p.triangle()) lines.push_back("columns same");
    else
        lines.push_back("columns " + std::to_string(p.columns->size()) + " " + hex(set_crc(*p.columns)));
    std::uint32_t matrix_crc = io::crc32_of(p.scheme.matrix.letters().data(), p.scheme.matrix.letters().size());
    for (int a = 0; a < p.scheme.matrix.size(); ++a)
        for (int b = 0; b < p.scheme.matrix.size(); ++b) {
            const int s = p.scheme.matrix.score(a, b);
            matrix_crc = io::crc32_of(&s, sizeof s, matrix_crc);
        }
    lines.push_back("matrix " + p.scheme.matrix.name() + " " + hex(matrix_crc));
    lines.push_back("gaps " + std::to_string(p.scheme.gap_open) + " " + std::to_string(p.scheme.gap_extend) + " " +
                    std::to_string(p.scheme.scale));
    lines.push_back("mode " + describe_mode(p.options));
    lines.push_back("tile " + std::to_string(p.tiling.tile_size()));
    lines.push_back(std::string("trace min_score=") + (p.trace.min_score ? number(*p.trace.min_score) : "none") +
                    " min_normalised=" + (p.trace.min_normalised ? number(*p.trace.min_normalised) : "none") +
                    " all=" + (p.trace.all ? "1" : "0"));
    return lines;
}

ResultSpool::ResultSpool(const Problem& problem, const SpoolOptions& options)
    : problem_(problem), options_(options), last_checkpoint_(std::chrono::steady_clock::now()) {
    if (problem.trace.top > 0) top_.resize(problem.rows->size() + (problem.triangle() ? 0 : problem.columns->size()));
    if (options.checkpoint_dir.empty()) {
        if (options.resume)
            throw Error("--resume needs --checkpoint DIR, the directory of the checkpoint to go on from");
        std::error_code ec;
        const fs::path base = options.temp_dir.empty() ? fs::temp_directory_path(ec) : fs::path(options.temp_dir);
        std::string pattern = (base / "alignscope-allvsall-XXXXXX").string();
        fd_ = ::mkstemp(pattern.data());
        if (fd_ < 0)
            throw Error("allvsall: cannot create a spool file in " + base.string() + " (" + errno_text() + ")");
        // Unlinked at once: the open descriptor is all that reads and writes it,
        // so even a killed job leaves nothing behind.
        ::unlink(pattern.c_str());
        spool_path_ = pattern + " (temporary)";
        temporary_ = true;
        return;
    }
    const std::string& dir = options.checkpoint_dir;
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
        if (options.resume) throw Error("checkpoint: " + dir + " does not exist: there is nothing to resume");
        if (!fs::create_directories(dir, ec) && ec)
            throw Error("checkpoint: cannot create the directory " + dir + " (" + ec.message() + ")");
        created_dir_ = true;
    } else if (!fs::is_directory(dir, ec)) {
        throw Error("checkpoint: " + dir + " is not a directory");
    }
    lock_ = longpair::LongCheckpoint::DirLock(dir);
    manifest_path_ = (fs::path(dir) / kManifestName).string();
    spool_path_ = (fs::path(dir) / kSpoolName).string();
    const bool has_manifest = fs::exists(manifest_path_, ec);
    if (!options.resume) {
        if (has_manifest)
            throw Error("checkpoint: " + dir +
                        " already holds an all-against-all checkpoint: add --resume to go on from it, or choose "
                        "another directory");
        fd_ = ::open(spool_path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd_ < 0) throw Error("checkpoint: cannot write " + spool_path_ + " (" + errno_text() + ")");
        return;
    }
    if (!has_manifest)
        throw Error("checkpoint: " + dir + " holds no all-against-all checkpoint (" + kManifestName + ") to resume");

    // The manifest: title, identity, state, and a CRC-32 of everything above its last line.
    std::ifstream in(manifest_path_, std::ios::binary);
    std::stringstream whole;
    whole << in.rdbuf();
    const std::string text = whole.str();
    const std::size_t crc_at = text.rfind("crc ");
    if (!in || crc_at == std::string::npos || (crc_at > 0 && text[crc_at - 1] != '\n'))
        throw Error("checkpoint: " + manifest_path_ + " is damaged (no checksum line)");
    if (hex(io::crc32_of(text.data(), crc_at)) + "\n" != text.substr(crc_at + 4))
        throw Error("checkpoint: " + manifest_path_ + " is damaged (checksum mismatch)");
    std::vector<std::string> lines;
    std::istringstream body(text.substr(0, crc_at));
    for (std::string line; std::getline(body, line);) lines.push_back(line);
    const std::vector<std::string> want = checkpoint_identity(problem);
    if (lines.size() != want.size() + 5 || lines[0] != kManifestTitle)
        throw Error("checkpoint: " + manifest_path_ + " is not an all-against-all checkpoint of this version");
    for (std::size_t k = 0; k < want.size(); ++k)
        if (lines[k + 1] != want[k])
            throw Error("checkpoint: " + dir + " was written for another job: its " + key_of(want[k]) + " is '" +
                        lines[k + 1].substr(key_of(want[k]).size() + 1) + "', this job's '" +
                        want[k].substr(key_of(want[k]).size() + 1) + "'");
    std::uint64_t tiles = 0, bytes = 0;
    unsigned created = 0, crc = 0;
    char title[32];
    const std::size_t s = want.size() + 1;
    if (std::sscanf(lines[s].c_str(), "created_dir %u", &created) != 1 ||
        std::sscanf(lines[s + 1].c_str(), "tiles %31s", title) != 1 ||
        std::sscanf(lines[s + 2].c_str(), "spool_bytes %31s", title) != 1 ||
        std::sscanf(lines[s + 3].c_str(), "spool_crc %x", &crc) != 1)
        throw Error("checkpoint: " + manifest_path_ + " is damaged");
    tiles = std::strtoull(lines[s + 1].c_str() + 6, nullptr, 10);
    bytes = std::strtoull(lines[s + 2].c_str() + 12, nullptr, 10);
    if (tiles > problem.tiling.tile_count())
        throw Error("checkpoint: " + manifest_path_ + " lists more tiles than this job has");
    created_dir_ = created != 0;

    fd_ = ::open(spool_path_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) throw Error("checkpoint: cannot open " + spool_path_ + " (" + errno_text() + ")");
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < bytes)
        throw Error("checkpoint: " + spool_path_ + " is shorter than its manifest says (" + std::to_string(bytes) +
                    " bytes)");
    {
        std::vector<char> chunk(1 << 22);
        std::uint32_t c = 0;
        for (std::uint64_t at = 0; at < bytes;) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), bytes - at));
            read_all(fd_, chunk.data(), n, at, spool_path_);
            c = io::crc32_of(chunk.data(), n, c);
            at += n;
        }
        if (c != crc) throw Error("checkpoint: " + spool_path_ + " is damaged (checksum mismatch)");
    }
    std::uint64_t seen = 0;
    read_back(bytes, [&](const TileResult& r) {
        ++seen;
        pairs_ += r.scores.size();
        cells_ += problem.tiling.cell_count(r.tile);
        traced_ += r.traced.size();
        note_top(r);
    });
    if (seen != tiles) throw Error("checkpoint: " + spool_path_ + " does not hold the tiles its manifest lists");
    // Anything after the last checkpoint is cut off and computed again.
    if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0 || ::lseek(fd_, 0, SEEK_END) < 0)
        throw Error("checkpoint: cannot truncate " + spool_path_ + " (" + errno_text() + ")");
    tiles_ = resumed_tiles_ = tiles;
    bytes_ = bytes;
    crc_ = crc;
}

ResultSpool::~ResultSpool() {
    if (fd_ >= 0) ::close(fd_);
    if (temporary_) {
        // unlinked when made
    } else if (!manifest_path_.empty() && !fs::exists(manifest_path_)) {
        // No checkpoint was ever written: nothing to resume, leave nothing behind.
        ::unlink(spool_path_.c_str());
        if (created_dir_) ::rmdir(options_.checkpoint_dir.c_str());
    }
}

void ResultSpool::put(TileResult&& result) {
    if (result.tile >= problem_.tiling.tile_count() || result.tile < tiles_ || pending_.count(result.tile))
        throw Error("allvsall: tile " + std::to_string(result.tile) + " arrived twice or out of range");
    if (result.scores.size() != problem_.tiling.pair_count(result.tile))
        throw Error("allvsall: tile " + std::to_string(result.tile) + " has " + std::to_string(result.scores.size()) +
                    " scores, not " + std::to_string(problem_.tiling.pair_count(result.tile)));
    pending_.emplace(result.tile, std::move(result));
    while (!pending_.empty() && pending_.begin()->first == tiles_) {
        append(pending_.begin()->second);
        note_top(pending_.begin()->second);
        pending_.erase(pending_.begin());
        ++tiles_;
        dirty_ = true;
    }
    if (!options_.checkpoint_dir.empty() && dirty_) {
        const auto now = std::chrono::steady_clock::now();
        if (options_.checkpoint_every <= 0 || complete() ||
            std::chrono::duration<double>(now - last_checkpoint_).count() >= options_.checkpoint_every)
            checkpoint();
    }
}

void ResultSpool::append(const TileResult& r) {
    buffer_.assign(8, '\0');
    encode_tile(r, buffer_);
    const std::uint64_t length = buffer_.size() - 8;
    std::memcpy(buffer_.data(), &length, 8);
    try {
        write_all(fd_, buffer_.data(), buffer_.size(), spool_path_);
    } catch (const Error& e) {
        if (!temporary_) throw;
        throw Error(std::string(e.what()) +
                    "; the pairs' scores wait there for the outputs: set TMPDIR to a folder with room, or give "
                    "--checkpoint DIR");
    }
    crc_ = io::crc32_of(buffer_.data(), buffer_.size(), crc_);
    bytes_ += buffer_.size();
    pairs_ += r.scores.size();
    cells_ += problem_.tiling.cell_count(r.tile);
    traced_ += r.traced.size();
}

void ResultSpool::note_top(const TileResult& r) {
    if (top_.empty()) return;
    const std::size_t offset = problem_.triangle() ? 0 : problem_.rows->size();
    const std::uint32_t n = problem_.trace.top;
    auto worse_first = [](const Partner& a, const Partner& b) {
        return better(a.score, a.partner, b.score, b.partner);
    };
    auto offer = [&](std::vector<Partner>& heap, const Partner& p) {
        if (heap.size() < n) {
            heap.push_back(p);
            std::push_heap(heap.begin(), heap.end(), worse_first);
        } else if (better(p.score, p.partner, heap.front().score, heap.front().partner)) {
            std::pop_heap(heap.begin(), heap.end(), worse_first);
            heap.back() = p;
            std::push_heap(heap.begin(), heap.end(), worse_first);
        }
    };
    std::size_t t = 0;
    for (std::size_t k = 0; k < r.scores.size(); ++k) {
        while (t < r.traced.size() && r.traced[t].index < k) ++t;
        const bool traced = t < r.traced.size() && r.traced[t].index == k;
        const PairScore& p = r.scores[k];
        offer(top_[p.i], Partner{p.score, p.j, traced, {p.i, p.j}});
        offer(top_[offset + p.j], Partner{p.score, p.i, traced, {p.i, p.j}});
    }
}

void ResultSpool::write_manifest() {
    std::string text = std::string(kManifestTitle) + "\n";
    for (const std::string& line : checkpoint_identity(problem_)) text += line + "\n";
    text += "created_dir " + std::string(created_dir_ ? "1" : "0") + "\n";
    text += "tiles " + std::to_string(tiles_) + "\n";
    text += "spool_bytes " + std::to_string(bytes_) + "\n";
    text += "spool_crc " + hex(crc_) + "\n";
    text += "crc " + hex(io::crc32_of(text.data(), text.size())) + "\n";
    const std::string temp = manifest_path_ + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("checkpoint: cannot write " + temp + " (" + errno_text() + ")");
    try {
        write_all(fd, text.data(), text.size(), temp);
        if (::fsync(fd) != 0) throw Error("checkpoint: cannot write " + temp + " to disk (" + errno_text() + ")");
    } catch (...) {
        ::close(fd);
        ::unlink(temp.c_str());
        throw;
    }
    ::close(fd);
    if (::rename(temp.c_str(), manifest_path_.c_str()) != 0) {
        ::unlink(temp.c_str());
        throw Error("checkpoint: cannot rename " + temp + " to " + manifest_path_ + " (" + errno_text() + ")");
    }
    sync_directory(options_.checkpoint_dir);
}

void ResultSpool::checkpoint() {
    if (options_.checkpoint_dir.empty() || !dirty_) return;
    if (::fsync(fd_) != 0) throw Error("checkpoint: cannot write " + spool_path_ + " to disk (" + errno_text() + ")");
    write_manifest();
    dirty_ = false;
    last_checkpoint_ = std::chrono::steady_clock::now();
}

std::vector<PairScore> ResultSpool::untraced_top_pairs() const {
    std::map<PairIndex, std::int64_t> pairs;
    for (const auto& heap : top_)
        for (const Partner& p : heap)
            if (!p.traced) pairs.emplace(p.pair, p.score);
    std::vector<PairScore> out;
    out.reserve(pairs.size());
    for (const auto& [pair, score] : pairs) out.push_back(PairScore{pair.first, pair.second, score});
    return out;
}

void ResultSpool::read_back(std::uint64_t bytes, const std::function<void(const TileResult&)>& visit) const {
    // pread on the spool's own descriptor: the append position stays where it is.
    std::string record;
    std::uint64_t expected = 0;
    for (std::uint64_t at = 0; at < bytes;) {
        std::uint64_t length = 0;
        if (bytes - at < 8) throw Error("allvsall: " + spool_path_ + " ends inside a record");
        read_all(fd_, reinterpret_cast<char*>(&length), 8, at, spool_path_);
        at += 8;
        if (length > bytes - at) throw Error("allvsall: " + spool_path_ + " ends inside a record");
        // One tile's record, and its results decoded, are in memory at a
        // time: running out of it here is reading this file, said as such.
        TileResult r;
        std::size_t offset = 0;
        try {
            record.resize(static_cast<std::size_t>(length));
            read_all(fd_, record.data(), record.size(), at, spool_path_);
            r = decode_tile(record, offset, spool_path_);
        } catch (const std::bad_alloc&) {
            record = std::string();
            throw Error("allvsall: " + spool_path_ + ": out of memory reading tile " + std::to_string(expected) +
                        " back (its record is " + std::to_string((length + (1u << 20) - 1) >> 20) +
                        " MiB, and as much again decoded): give the job more memory, or run it with a smaller "
                        "--tile (each tile's results are read back whole)");
        }
        at += length;
        if (offset != record.size() || r.tile != expected)
            throw Error("allvsall: " + spool_path_ + ": tile " + std::to_string(expected) + " is damaged");
        ++expected;
        visit(r);
    }
}

void ResultSpool::for_each(const std::function<void(const TileResult&)>& visit) const { read_back(bytes_, visit); }

void ResultSpool::remove_checkpoint() {
    if (options_.checkpoint_dir.empty()) return;
    ::unlink(manifest_path_.c_str());
    ::unlink(spool_path_.c_str());
    if (created_dir_) ::rmdir(options_.checkpoint_dir.c_str());
}

}  // namespace alignscope::allvsall
