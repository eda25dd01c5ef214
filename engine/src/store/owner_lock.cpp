// Job owner locks on the project's sidecar file (see owner_lock.hpp).
#include "owner_lock.hpp"

#include <alignscope/error.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#if !defined(F_OFD_SETLK) || !defined(F_OFD_GETLK)
#error "the project store needs open-file-description locks (Linux 3.15 or later)"
#endif

namespace alignscope::store {
namespace {

struct flock byte_lock(short type, std::int64_t job_id) {
    struct flock lock {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = static_cast<off_t>(job_id);
    lock.l_len = 1;
    lock.l_pid = 0;  // required for OFD locks
    return lock;
}

}  // namespace

OwnerLock::OwnerLock(const std::string& lock_path, std::int64_t job_id) {
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(lock_path + ": cannot create the project's job lock file (" + std::strerror(errno) + ")");
    struct flock lock = byte_lock(F_WRLCK, job_id);
    if (::fcntl(fd_, F_OFD_SETLK, &lock) != 0) {
        const int error = errno;
        ::close(fd_);
        fd_ = -1;
        throw Error(lock_path + ": cannot lock job " + std::to_string(job_id) + " (" + std::strerror(error) + ")");
    }
}

OwnerLock::~OwnerLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the description releases its locks
}

OwnerProbe::~OwnerProbe() {
    if (fd_ >= 0) ::close(fd_);
}

bool OwnerProbe::held(std::int64_t job_id) {
    if (fd_ < 0) {
        fd_ = ::open(lock_path_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) return errno != ENOENT;
    }
    // Asking for a read lock: an owner's write lock conflicts with it, and a
    // read-only descriptor may ask.
    struct flock lock = byte_lock(F_RDLCK, job_id);
    if (::fcntl(fd_, F_OFD_GETLK, &lock) != 0) return true;
    return lock.l_type != F_UNLCK;
}

}  // namespace alignscope::store
