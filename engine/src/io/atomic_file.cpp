// Output files written safely: see atomic_file.hpp for the rules by file kind.
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <streambuf>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace alignscope {

namespace fs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

// The file a path finally names: symlinks followed (a dangling link names
// the file it points to, which will be created).
std::string resolve_links(const std::string& path) {
    std::error_code ec;
    fs::path p(path);
    for (int hops = 0; hops < 40; ++hops) {
        if (!fs::is_symlink(fs::symlink_status(p, ec))) return p.string();
        const fs::path link = fs::read_symlink(p, ec);
        if (ec) throw Error(path + ": cannot read the symbolic link (" + ec.message() + ")");
        p = link.is_absolute() ? link : p.parent_path() / link;
    }
    throw Error(path + ": too many levels of symbolic links");
}

// Copies the temporary file's bytes over `target` in place (its inode, so
// every hard link sees them), then syncs it.
void rewrite_in_place(const std::string& temp, const std::string& target, const std::string& shown) {
    std::ifstream in(temp, std::ios::binary);
    const int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (!in || fd < 0) throw Error(shown + ": cannot rewrite the file (" + errno_text() + ")");
    char buffer[1 << 16];
    bool ok = true;
    while (ok && (in.read(buffer, sizeof buffer) || in.gcount() > 0)) {
        const char* p = buffer;
        std::streamsize left = in.gcount();
        while (left > 0) {
            const ssize_t n = ::write(fd, p, static_cast<std::size_t>(left));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ok = false;
                break;
            }
            p += n;
            left -= n;
        }
    }
    const std::string why = errno_text();
    if (ok) ok = ::fsync(fd) == 0 || errno == EINVAL;
    ::close(fd);
    if (!ok || in.bad()) throw Error(shown + ": write failed (" + why + "); the file may be incomplete");
}

}  // namespace

// The bytes of a file output, written with write(2) so that the first
// failure's errno is kept (an ofstream forgets why it failed).
class AtomicOutput::FileBuffer : public std::streambuf {
public:
    explicit FileBuffer(int fd) : fd_(fd), buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
    ~FileBuffer() override { close(); }
    FileBuffer(const FileBuffer&) = delete;
    FileBuffer& operator=(const FileBuffer&) = delete;

    // 0 until a write fails; then that write's errno.
    int error() const { return error_; }
    // Writes what is buffered and closes the file; false on a failure (error()).
    bool close() {
        if (fd_ < 0) return error_ == 0;
        const bool flushed = drain();
        if (::close(fd_) != 0 && flushed && errno != EINTR) error_ = errno;
        fd_ = -1;
        return error_ == 0;
    }

protected:
    int_type overflow(int_type c) override {
        if (!drain()) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override { return drain() ? 0 : -1; }
    // A piece at least as large as the buffer (a streamed job's chunk of
    // text) goes to the file as it is, after what is buffered, instead of
    // being copied through the buffer 64 KiB at a time.
    std::streamsize xsputn(const char* text, std::streamsize n) override {
        if (n < static_cast<std::streamsize>(buffer_.size())) return std::streambuf::xsputn(text, n);
        if (!drain() || !write_all(text, static_cast<std::size_t>(n))) return 0;
        return n;
    }

private:
    bool drain() {
        const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
        setp(buffer_.data(), buffer_.data() + buffer_.size());
        return ok;
    }
    bool write_all(const char* p, std::size_t left) {
        while (left > 0 && error_ == 0) {
            const ssize_t n = ::write(fd_, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                error_ = n < 0 ? errno : EIO;
                break;
            }
            p += n;
            left -= static_cast<std::size_t>(n);
        }
        return error_ == 0;
    }

    int fd_ = -1;
    int error_ = 0;
    std::vector<char> buffer_;
};

std::string write_failure_reason(int error_number) {
    const std::string system = std::strerror(error_number);
    switch (error_number) {
        case ENOSPC: return system + ": the disk is full";
        case EDQUOT: return system + ": the disk quota is used up";
        case EFBIG:
            return system + ": the file size limit was reached (ulimit -f) or the file system holds no larger file";
        case EIO: return system + ": the disk or the network file system failed";
        case EPIPE: return system + ": the reader went away";
        case EROFS: return system + ": the file system is mounted read-only";
        default: return system;
    }
}

AtomicOutput::AtomicOutput(const std::string& path) : path_(path) {
    if (path.empty() || path == "-") {
        kind_ = Kind::Stdout;
        return;
    }
    target_path_ = resolve_links(path);
    const fs::path target(target_path_);
    struct stat st {};
    const bool exists = ::stat(target_path_.c_str(), &st) == 0;
    existed_ = exists;
    auto open_buffer = [this](int fd) {
        buffer_ = std::make_unique<FileBuffer>(fd);
        file_ = std::make_unique<std::ostream>(buffer_.get());
    };
    if (exists) {
        if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, expected an output file name");
        if (S_ISBLK(st.st_mode)) throw Error(path + ": is a block device (a disk); refusing to write to it");
        if (S_ISSOCK(st.st_mode)) throw Error(path + ": is a socket, expected an output file name");
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            // /dev/null, /dev/stdout, a named pipe: written straight through,
            // never replaced by a regular file.
            kind_ = Kind::Direct;
            const int fd = ::open(target_path_.c_str(), O_WRONLY | O_CLOEXEC);
            if (fd < 0) throw Error(path + ": cannot write here (" + errno_text() + ")");
            open_buffer(fd);
            return;
        }
        // Root may write anywhere: a file without write permission bits is
        // read-only for everyone, as far as we are concerned.
        if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || ::access(target_path_.c_str(), W_OK) != 0)
            throw Error(path +
                        ": the file is read-only; it was not overwritten (make it writable or choose another "
                        "name)");
        if (st.st_nlink > 1) kind_ = Kind::InPlace;
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(path + ": the directory " + dir.string() + " does not exist");
    std::random_device rd;
    temp_path_ = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                         std::to_string(rd() % 1000000)))
                     .string();
    const int fd = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        const std::string why = errno == ENOSPC || errno == EDQUOT || errno == EIO || errno == EROFS
                                    ? write_failure_reason(errno)
                                    : errno_text();
        temp_path_.clear();
        throw Error(path + ": cannot write here (" + why + ")");
    }
    open_buffer(fd);
    if (exists && kind_ == Kind::Replace) {
        // The replacement keeps the file's mode and, where allowed, its owner.
        ::chmod(temp_path_.c_str(), st.st_mode & 07777);
        if (::chown(temp_path_.c_str(), st.st_uid, st.st_gid) != 0) {
            // Not the owner's to give: the file becomes ours, as with any editor.
        }
    }
}

AtomicOutput::~AtomicOutput() {
    file_.reset();
    buffer_.reset();
    if (!temp_path_.empty() && !committed_) std::remove(temp_path_.c_str());
}

std::ostream& AtomicOutput::stream() { return kind_ == Kind::Stdout ? std::cout : *file_; }

void AtomicOutput::finish() {
    if (finished_ || committed_) return;
    if (kind_ == Kind::Stdout) {
        std::cout.flush();
        if (!std::cout) throw Error("standard output: write failed (disk full, or the reader went away)");
        finished_ = true;
        return;
    }
    file_->flush();
    const bool ok = buffer_->close() && static_cast<bool>(*file_);
    // A stream error with no failed write: a writer put the stream in a
    // failed state (a formatting error): the output is not whole either.
    const std::string why =
        buffer_->error() ? write_failure_reason(buffer_->error()) : "the output was not written whole";
    if (!ok) {
        if (kind_ == Kind::Direct) throw Error(path_ + ": write failed (" + why + ")");
        std::remove(temp_path_.c_str());
        temp_path_.clear();
        throw Error(path_ + ": write failed (" + why + "); " +
                    (existed_ ? "the file was not changed" : "no file was written"));
    }
    finished_ = true;
}

void AtomicOutput::publish() {
    if (committed_) return;
    if (kind_ == Kind::Stdout || kind_ == Kind::Direct) {
        committed_ = true;
        return;
    }
    if (kind_ == Kind::InPlace) {
        try {
            rewrite_in_place(temp_path_, target_path_, path_);
        } catch (...) {
            std::remove(temp_path_.c_str());
            temp_path_.clear();
            throw;
        }
        std::remove(temp_path_.c_str());
        temp_path_.clear();
        committed_ = true;
        return;
    }
    if (std::rename(temp_path_.c_str(), target_path_.c_str()) != 0) {
        const std::string failed = errno_text();
        std::remove(temp_path_.c_str());
        temp_path_.clear();
        throw Error(path_ + ": cannot replace the file (" + failed + ")");
    }
    committed_ = true;
}

void AtomicOutput::commit() {
    finish();
    publish();
}

void commit_together(std::initializer_list<AtomicOutput*> outputs) {
    // Straight-through outputs first: their failure (a full /dev/full, a closed
    // pipe) then stops the files from being put in place, as any other does.
    for (AtomicOutput* out : outputs)
        if (out && out->direct()) out->finish();
    for (AtomicOutput* out : outputs)
        if (out && !out->direct()) out->finish();
    std::vector<std::string> written;
    for (AtomicOutput* out : outputs) {
        if (!out) continue;
        const bool counts = !out->direct() && !out->committed_;
        try {
            out->publish();
        } catch (const Error& e) {
            if (written.empty()) throw;
            std::string list;
            for (const std::string& w : written) list += (list.empty() ? "" : ", ") + w;
            throw Error(std::string(e.what()) + "; already written: " + list);
        }
        if (counts) written.push_back(out->path());
    }
}

void refuse_overlapping_files(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs) {
    struct Identity {
        const FileRole* file;
        std::optional<std::pair<dev_t, ino_t>> inode;  // when it exists and is not a character device or FIFO
        std::string resolved;                          // weakly canonical path
        bool special = false;                          // standard output, a character device, a FIFO
    };
    auto identify = [](const FileRole& f) {
        Identity id{&f, std::nullopt, {}, false};
        if (f.path.empty() || f.path == "-") {
            id.special = true;
            return id;
        }
        struct stat st {};
        if (::stat(f.path.c_str(), &st) == 0) {
            if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) id.special = true;
            else
                id.inode = std::make_pair(st.st_dev, st.st_ino);
        }
        std::error_code ec;
        id.resolved = fs::weakly_canonical(fs::absolute(f.path, ec), ec).string();
        return id;
    };
    // An input that does not exist cannot be destroyed; two outputs that do
    // not exist yet collide when they resolve to the same path.
    auto same_as_input = [](const Identity& out, const Identity& in) {
        return !out.special && !in.special && out.inode && in.inode && *out.inode == *in.inode;
    };
    auto same_output = [](const Identity& a, const Identity& b) {
        if (a.special || b.special) return false;
        if (a.inode && b.inode) return *a.inode == *b.inode;
        return !a.resolved.empty() && a.resolved == b.resolved;
    };
    std::vector<Identity> ins, outs;
    for (const FileRole& f : inputs) ins.push_back(identify(f));
    for (const FileRole& f : outputs) outs.push_back(identify(f));
    for (std::size_t o = 0; o < outs.size(); ++o) {
        for (const Identity& in : ins)
            if (same_as_input(outs[o], in))
                throw Error(outs[o].file->role + " " + outs[o].file->path + ": is the same file as " + in.file->role +
                            " (" + in.file->path + "); writing it would destroy that input. Choose another name");
        for (std::size_t p = 0; p < o; ++p)
            if (same_output(outs[o], outs[p]))
                throw Error(outs[o].file->role + " " + outs[o].file->path + ": is the same file as " +
                            outs[p].file->role + " (" + outs[p].file->path + "); each output needs a file of its own");
    }
}

}  // namespace alignscope
