// Write-to-temporary-then-rename output files.
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include <unistd.h>

namespace alignscope {

AtomicOutput::AtomicOutput(const std::string& path) : path_(path) {
    if (path.empty() || path == "-") {
        to_stdout_ = true;
        return;
    }
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::error_code ec;
    if (fs::is_directory(target, ec)) throw Error(path + ": is a directory, expected an output file name");
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec)) throw Error(path + ": the directory " + dir.string() + " does not exist");
    std::random_device rd;
    temp_path_ = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                         std::to_string(rd() % 1000000)))
                     .string();
    file_.open(temp_path_, std::ios::binary | std::ios::trunc);
    if (!file_) throw Error(path + ": cannot write here (" + std::strerror(errno) + ")");
}

AtomicOutput::~AtomicOutput() {
    if (!to_stdout_ && !committed_) {
        file_.close();
        std::remove(temp_path_.c_str());
    }
}

std::ostream& AtomicOutput::stream() { return to_stdout_ ? std::cout : static_cast<std::ostream&>(file_); }

void AtomicOutput::commit() {
    if (committed_) return;
    if (to_stdout_) {
        std::cout.flush();
        committed_ = true;
        return;
    }
    file_.flush();
    const bool ok = static_cast<bool>(file_);
    file_.close();
    if (!ok || file_.fail()) {
        std::remove(temp_path_.c_str());
        throw Error(path_ + ": write failed (disk full?); the file was not changed");
    }
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(temp_path_.c_str());
        throw Error(path_ + ": cannot replace the file (" + why + ")");
    }
    committed_ = true;
}

}  // namespace alignscope
