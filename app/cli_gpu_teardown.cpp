// The GPU teardown helper of cli_gpu_teardown.hpp: a forked child that only
// collects the files it is sent and closes them once the command has ended.
#include "cli_gpu_teardown.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#ifdef __linux__
#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#endif

namespace alignscope::cli {

#ifdef __linux__
namespace {

constexpr int kFilesPerMessage = 250;  // under the kernel's SCM_MAX_FD (253)
constexpr int kMostFiles = 1024;

int helper_socket = -1;

// The helper's whole life. Only system calls after the fork (the command may
// have threads, whose locks the child must not touch).
[[noreturn]] void helper_main(int socket) {
    // Nothing of the command's: not its terminal, pipes or files.
    if (socket > 0) (void)::close_range(0, static_cast<unsigned>(socket) - 1, 0);
    (void)::close_range(static_cast<unsigned>(socket) + 1, ~0u, 0);
    static int held[kMostFiles];
    int count = 0;
    while (true) {
        char byte = 0;
        alignas(cmsghdr) static char control[CMSG_SPACE(sizeof(int) * kFilesPerMessage)];
        iovec io{&byte, 1};
        msghdr message{};
        message.msg_iov = &io;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        const ssize_t got = ::recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;  // the command has ended (or failed to send)
        for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            const int files = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int k = 0; k < files; ++k) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
                if (count < kMostFiles) held[count++] = fd;
                else
                    (void)::close(fd);
            }
        }
    }
    // The command is gone: these are the files' last references, and
    // closing them is the driver's teardown. A driver that hangs there does
    // not keep the helper for ever.
    (void)::alarm(30);
    for (int k = 0; k < count; ++k) (void)::close(held[k]);
    ::_exit(0);
}

bool turned_off() {
    const char* value = std::getenv("ALIGNSCOPE_TEARDOWN_HELPER");
    return value && std::string_view(value) == "0";
}

// The /dev/nvidia* files open in this process (at most kMostFiles).
int gpu_files(int* fds) {
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return 0;
    int count = 0;
    while (const dirent* entry = ::readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != 0 || fd == ::dirfd(dir) || fd == helper_socket) continue;
        char link[64], target[256];
        std::snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
        const ssize_t length = ::readlink(link, target, sizeof target - 1);
        if (length <= 0) continue;
        target[length] = 0;
        if (std::strncmp(target, "/dev/nvidia", 11) == 0 && count < kMostFiles) fds[count++] = static_cast<int>(fd);
    }
    ::closedir(dir);
    return count;
}

bool send_files(const int* fds, int count) {
    char byte = 0;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kFilesPerMessage)];
    iovec io{&byte, 1};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<std::size_t>(count));
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    if (!c) return false;
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<std::size_t>(count));
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<std::size_t>(count));
    while (true) {
        const ssize_t sent = ::sendmsg(helper_socket, &message, MSG_NOSIGNAL);
        if (sent == 1) return true;
        if (sent < 0 && errno == EINTR) continue;
        return false;
    }
}

}  // namespace

void start_gpu_teardown_helper() {
    if (helper_socket >= 0 || turned_off()) return;
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) return;
    const pid_t pid = ::fork();
    if (pid == 0) helper_main(ends[1]);
    (void)::close(ends[1]);
    if (pid < 0) {
        (void)::close(ends[0]);
        return;
    }
    helper_socket = ends[0];
}

bool hand_gpu_teardown_to_helper() {
    if (helper_socket < 0) return false;
    static int fds[kMostFiles];
    const int count = gpu_files(fds);
    if (count == 0) return false;
    for (int first = 0; first < count; first += kFilesPerMessage)
        if (!send_files(fds + first, std::min(kFilesPerMessage, count - first))) return false;
    return true;
}

#else

void start_gpu_teardown_helper() {}
bool hand_gpu_teardown_to_helper() { return false; }

#endif

}  // namespace alignscope::cli
