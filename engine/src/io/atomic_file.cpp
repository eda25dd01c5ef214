// Output files written safely: see atomic_file.hpp for the rules by file kind.
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>

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

AtomicOutput::AtomicOutput(const std::string& path) : path_(path) {
    if (path.empty() || path == "-") {
        kind_ = Kind::Stdout;
        return;
    }
    target_path_ = resolve_links(path);
    const fs::path target(target_path_);
    struct stat st {};
    const bool exists = ::stat(target_path_.c_str(), &st) == 0;
    if (exists) {
        if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, expected an output file name");
        if (S_ISBLK(st.st_mode)) throw Error(path + ": is a block device (a disk); refusing to write to it");
        if (S_ISSOCK(st.st_mode)) throw Error(path + ": is a socket, expected an output file name");
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            // /dev/null, /dev/stdout, a named pipe: written straight through,
            // never replaced by a regular file.
            kind_ = Kind::Direct;
            file_.open(target_path_, std::ios::binary | std::ios::out);
            if (!file_) throw Error(path + ": cannot write here (" + errno_text() + ")");
            return;
        }
        // Root may write anywhere: a file without write permission bits is
        // read-only for everyone, as far as we are concerned.
        if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || ::access(target_path_.c_str(), W_OK) != 0)
            throw Error(path + ": the file is read-only; it was not overwritten (make it writable or choose another "
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
    file_.open(temp_path_, std::ios::binary | std::ios::trunc);
    if (!file_) throw Error(path + ": cannot write here (" + errno_text() + ")");
    if (exists && kind_ == Kind::Replace) {
        // The replacement keeps the file's mode and, where allowed, its owner.
        ::chmod(temp_path_.c_str(), st.st_mode & 07777);
        if (::chown(temp_path_.c_str(), st.st_uid, st.st_gid) != 0) {
            // Not the owner's to give: the file becomes ours, as with any editor.
        }
    }
}

AtomicOutput::~AtomicOutput() {
    if (!temp_path_.empty() && !committed_) {
        file_.close();
        std::remove(temp_path_.c_str());
    }
}

std::ostream& AtomicOutput::stream() { return kind_ == Kind::Stdout ? std::cout : static_cast<std::ostream&>(file_); }

void AtomicOutput::commit() {
    if (committed_) return;
    if (kind_ == Kind::Stdout) {
        std::cout.flush();
        if (!std::cout) throw Error("standard output: write failed (disk full, or the reader went away)");
        committed_ = true;
        return;
    }
    file_.flush();
    const bool ok = static_cast<bool>(file_);
    const std::string why = errno_text();
    file_.close();
    if (kind_ == Kind::Direct) {
        if (!ok || file_.fail()) throw Error(path_ + ": write failed (" + why + ")");
        committed_ = true;
        return;
    }
    if (!ok || file_.fail()) {
        std::remove(temp_path_.c_str());
        throw Error(path_ + ": write failed (disk full?); the file was not changed");
    }
    if (kind_ == Kind::InPlace) {
        try {
            rewrite_in_place(temp_path_, target_path_, path_);
        } catch (...) {
            std::remove(temp_path_.c_str());
            throw;
        }
        std::remove(temp_path_.c_str());
        committed_ = true;
        return;
    }
    if (std::rename(temp_path_.c_str(), target_path_.c_str()) != 0) {
        const std::string failed = errno_text();
        std::remove(temp_path_.c_str());
        throw Error(path_ + ": cannot replace the file (" + failed + ")");
    }
    committed_ = true;
}

void refuse_overlapping_files(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs) {
    struct Identity {
        const FileRole* file;
        std::optional<std::pair<dev_t, ino_t>> inode;  // when it exists and is not a character device or FIFO
        std::string resolved;                           // weakly canonical path
        bool special = false;                           // standard output, a character device, a FIFO
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
            else id.inode = std::make_pair(st.st_dev, st.st_ino);
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
                            outs[p].file->role + " (" + outs[p].file->path +
                            "); each output needs a file of its own");
    }
}

}  // namespace alignscope
