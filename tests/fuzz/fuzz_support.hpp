// Helpers shared by the libFuzzer targets that read files from a directory:
// a scratch directory (tmpfs when there is one), whole-file writes, and the
// tests' CRC-32 (crc32_of) to write and check the files' checksums with.
#pragma once

#include "../common/crc32.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include <cerrno>
#include <csignal>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace alignscope::fuzz {

// An invariant the code under test promises was broken: a crash for libFuzzer.
inline void require(bool condition) {
    if (!condition) std::abort();
}

// A fresh directory for this process, alignscope-fuzz-<pid> on tmpfs when
// /dev/shm is writable (the targets write files on every input). libFuzzer
// leaves without running exit handlers (at -max_total_time, on a crash), so
// the directories of processes that are gone are removed when a new one is made.
inline const std::string& scratch_directory() {
    static const std::string dir = [] {
        const char* bases[] = {"/dev/shm", std::getenv("TMPDIR"), "/tmp"};
        for (const char* base : bases) {
            if (!base || !*base || ::access(base, W_OK | X_OK) != 0) continue;
            std::error_code ec;
            for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
                const std::string name = e.path().filename().string();
                if (name.rfind("alignscope-fuzz-", 0) != 0) continue;
                const std::string digits = name.substr(16);
                if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
                    continue;
                if (::kill(static_cast<pid_t>(std::stol(digits)), 0) != 0 && errno == ESRCH)
                    std::filesystem::remove_all(e.path(), ec);
            }
            const std::string path = std::string(base) + "/alignscope-fuzz-" + std::to_string(::getpid());
            std::filesystem::remove_all(path, ec);
            if (::mkdir(path.c_str(), 0700) == 0) return path;
        }
        std::abort();
    }();
    return dir;
}

inline void write_file(const std::string& path, std::string_view bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    require(fd >= 0);
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        require(n > 0);
        done += static_cast<std::size_t>(n);
    }
    require(::close(fd) == 0);
}

// Removes every entry of `dir` (not the directory itself).
inline void empty_directory(const std::string& dir) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) std::filesystem::remove_all(e.path(), ec);
}

template <typename T>
T load_le(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <typename T>
void store_le(char* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

}  // namespace alignscope::fuzz
