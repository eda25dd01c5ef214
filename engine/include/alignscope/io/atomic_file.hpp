// Output files that appear whole or not at all, and never at the cost of a
// file the user did not mean to replace. A regular file is written to a
// temporary file beside it and renamed over it on commit() (keeping its mode;
// a read-only file is refused); a symlink is followed and its target replaced;
// a character device or FIFO (/dev/null, a pipe) is written straight through;
// a file with several hard links is rewritten in place at commit() so every
// link sees the new content. Nothing is written to the destination before
// commit(), and a failure or an exception before it leaves any earlier file
// untouched.
#pragma once

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace alignscope {

class AtomicOutput {
public:
    // "-" or empty writes to standard output (nothing to rename). Throws Error
    // naming the path when it cannot be written: a directory, a block device
    // or socket, a read-only file, a missing folder.
    explicit AtomicOutput(const std::string& path);
    ~AtomicOutput();  // removes the temporary file unless committed
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;

    std::ostream& stream();
    // Flushes, checks for write errors (full disk, a closed pipe, /dev/full)
    // and puts the file in place. Throws Error naming the file (or "standard
    // output").
    void commit();
    const std::string& path() const { return path_; }

private:
    enum class Kind { Stdout, Replace, InPlace, Direct };
    std::string path_;         // as given
    std::string target_path_;  // the file finally written (symlinks followed)
    std::string temp_path_;
    std::ofstream file_;
    Kind kind_ = Kind::Replace;
    bool committed_ = false;
};

// A file a command reads or writes, named as the user gave it: `role` is the
// flag or argument ("-o", "--timeline", "QUERIES", "--project").
struct FileRole {
    std::string role;
    std::string path;
};

// Throws Error when an output is the same file as an input (the project
// included) or as another output: compared by device and inode where the
// files exist (so symlinks and hard links count), by resolved path where an
// output does not exist yet. Standard output ("-" or empty) and character
// devices (/dev/null) are never in conflict.
void refuse_overlapping_files(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs);

}  // namespace alignscope
