// Running a piece of a test in a child process whose address space is capped
// a little above what it already uses (RLIMIT_AS), so that running out of
// memory can be provoked on purpose. Not under the sanitizers (their runtimes
// reserve terabytes: the limit would stop them, not the code under test).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace alignscope::test {

// The process's virtual memory size in bytes (/proc/self/statm, first field).
inline std::uint64_t address_space_in_use() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t pages = 0;
    statm >> pages;
    return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Runs `body` in a child process under an address-space limit of `headroom`
// bytes above what it uses; returns the child's exit status and what it wrote.
template <class Body>
std::pair<int, std::string> in_limited_child(std::uint64_t headroom, Body body) {
    int fds[2];
    if (::pipe(fds) != 0) return {-1, "pipe failed"};
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        const rlim_t limit = static_cast<rlim_t>(address_space_in_use() + headroom);
        rlimit rl{};
        ::getrlimit(RLIMIT_AS, &rl);
        rl.rlim_cur = limit;
        ::setrlimit(RLIMIT_AS, &rl);
        std::string said;
        const int status = body(said);
        const char* p = said.data();
        std::size_t left = said.size();
        while (left > 0) {
            const ssize_t n = ::write(fds[1], p, left);
            if (n <= 0) break;
            p += n;
            left -= static_cast<std::size_t>(n);
        }
        ::_exit(status);
    }
    ::close(fds[1]);
    std::string text;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text};
}

}  // namespace alignscope::test
