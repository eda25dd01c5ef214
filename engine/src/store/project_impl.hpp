// What Project and JobRecording share inside the store: the connection, the
// owner-lock probe and the project's options, plus small conversions used by
// several store files.
#pragma once

#include "owner_lock.hpp"
#include "sqlite.hpp"

#include <alignscope/store/project.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace alignscope::store {

struct Project::Impl {
    std::string path;       // as the caller named it
    std::string lock_path;  // next to the real file (symbolic links resolved)
    ProjectOptions options;
    std::unique_ptr<sqlite::Connection> db;
    int found_version = 0;
    std::unique_ptr<OwnerProbe> probe;
    std::map<std::int64_t, InputStatus> input_status;

    // The job's state as the world should see it: a queued/running job whose
    // owner lock is free is interrupted.
    JobState effective_state(std::int64_t job_id, JobState stored);
    void require_writable(std::string_view what) const;
    // Who holds the project's write lock, as far as the jobs table tells, and
    // how long a write waits for it (ProjectOptions::on_wait's line).
    std::string waiting_for();
};

inline std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The user-facing number of a job in messages: "job 12".
inline std::string job_name(std::int64_t job_id) { return "job " + std::to_string(job_id); }

}  // namespace alignscope::store
