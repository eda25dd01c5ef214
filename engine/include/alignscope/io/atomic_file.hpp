// Output files that appear whole or not at all, and never at the cost of a
// file the user did not mean to replace. A regular file is written to a
// temporary file beside it and renamed over it on commit() (keeping its mode;
// a read-only file is refused); a symlink is followed and its target replaced;
// a character device or FIFO (/dev/null, a pipe) is written straight through;
// a file with several hard links is rewritten in place at commit() so every
// link sees the new content. Nothing is written to the destination before
// commit(), and a failure or an exception before it leaves any earlier file
// untouched. A command with several outputs puts them in place together
// (commit_together): all of them or none.
#pragma once

#include <fstream>
#include <initializer_list>
#include <memory>
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
    // Flushes and checks for write errors (full disk, file size limit, an
    // input/output error, a closed pipe, /dev/full) without putting the file
    // in place yet. Throws Error naming the file (or "standard output") and
    // saying why, in the system's words and what they mean ("the disk is
    // full"); the temporary file is then gone and the destination unchanged.
    void finish();
    // finish(), then puts the file in place. Throws Error naming the file.
    void commit();
    const std::string& path() const { return path_; }
    // Whether the bytes go straight to their destination (standard output, a
    // character device, a FIFO): such an output cannot be held back.
    bool direct() const { return kind_ == Kind::Stdout || kind_ == Kind::Direct; }

private:
    friend void commit_together(std::initializer_list<AtomicOutput*> outputs);
    enum class Kind { Stdout, Replace, InPlace, Direct };
    class FileBuffer;
    void publish();
    std::string path_;         // as given
    std::string target_path_;  // the file finally written (symlinks followed)
    std::string temp_path_;
    std::unique_ptr<FileBuffer> buffer_;
    std::unique_ptr<std::ostream> file_;
    Kind kind_ = Kind::Replace;
    bool existed_ = false;  // the destination was there before
    bool finished_ = false;
    bool committed_ = false;
};

// The outputs of one command, put in place together: every one is finished
// first (flushed and checked for write errors), and only when all of them
// were written whole is any put in place, so a full disk or a failed device
// while writing any of them leaves every destination as it was (error naming
// the file that failed). Outputs written straight through (standard output,
// /dev/null, a pipe) have their bytes already and cannot be held back; a
// failure to put a file in place after others were (a rename refused) names
// those already written. Null entries (outputs not asked for) are skipped.
void commit_together(std::initializer_list<AtomicOutput*> outputs);

// The end of an error message for a failed write: the system's reason
// (errno) and what it means for the user, e.g. "No space left on device: the
// disk is full".
std::string write_failure_reason(int error_number);

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
