// Telling live jobs from dead ones. The process recording job N holds an
// exclusive open-file-description lock (fcntl F_OFD_SETLK) on byte N of the
// sidecar file "<project>-lock"; the kernel drops it when the process dies,
// however it dies. Anyone can ask (F_OFD_GETLK) whether byte N is held: a
// queued or running job whose byte is free has lost its owner.
//
// Open-file-description locks, unlike classic POSIX record locks, belong to one
// open() and are not dropped when the process closes some other descriptor of
// the same file, and a probe from the owner's own process through a second
// open() sees the lock: the GUI never mistakes its own worker's job for a dead one.
#pragma once

#include <cstdint>
#include <string>

namespace alignscope::store {

class OwnerLock {
public:
    // Creates the sidecar when needed and locks byte `job_id`. Throws Error.
    OwnerLock(const std::string& lock_path, std::int64_t job_id);
    ~OwnerLock();
    OwnerLock(const OwnerLock&) = delete;
    OwnerLock& operator=(const OwnerLock&) = delete;

private:
    int fd_ = -1;
};

class OwnerProbe {
public:
    explicit OwnerProbe(std::string lock_path) : lock_path_(std::move(lock_path)) {}
    ~OwnerProbe();
    OwnerProbe(const OwnerProbe&) = delete;
    OwnerProbe& operator=(const OwnerProbe&) = delete;

    // True when some process holds job `job_id`'s lock. False when the sidecar
    // does not exist (no recording ever ran, so no owner can be alive). When
    // the sidecar exists but cannot be read, answers true: better to show a dead
    // job as running than to mark a live one interrupted.
    bool held(std::int64_t job_id);

private:
    std::string lock_path_;
    int fd_ = -1;
};

}  // namespace alignscope::store
