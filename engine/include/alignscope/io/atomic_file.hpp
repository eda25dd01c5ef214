// Output files that appear whole or not at all: written to a temporary file in
// the same directory and renamed over the destination on commit(). A failure or
// an exception before commit() leaves any earlier file untouched.
#pragma once

#include <fstream>
#include <ostream>
#include <string>

namespace alignscope {

class AtomicOutput {
public:
    // "-" or empty writes to standard output (nothing to rename).
    explicit AtomicOutput(const std::string& path);
    ~AtomicOutput();  // removes the temporary file unless committed
    AtomicOutput(const AtomicOutput&) = delete;
    AtomicOutput& operator=(const AtomicOutput&) = delete;

    std::ostream& stream();
    // Flushes, checks for write errors (full disk) and renames into place.
    // Throws Error naming the file.
    void commit();
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::string temp_path_;
    std::ofstream file_;
    bool to_stdout_ = false;
    bool committed_ = false;
};

}  // namespace alignscope
