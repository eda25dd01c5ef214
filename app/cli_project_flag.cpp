// --project: recording a CLI job into a project file.
#include "cli_project_flag.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <string>

namespace alignscope::cli {

void ProjectFlag::add_to(CLI::App& command) {
    command.add_option("--project", path,
                       "Record the job, its inputs and results in this project file (.alsproj; created when missing)");
    command.add_option("--project-wait", wait_seconds,
                       "Seconds a write to the project waits while another process holds its lock, then the "
                       "command gives up [default: 60]");
}

std::unique_ptr<store::JobRecording> ProjectFlag::begin(const store::JobSpec& spec) const {
    if (path.empty()) return nullptr;
    store::RecordingOptions options;
    options.project.create_if_missing = true;
    if (!(wait_seconds > 0) || wait_seconds > 86400) throw Error("--project-wait must be between 0 and 86400 seconds");
    // A first try of at most a second, then six of this (store::sqlite's
    // attempts): wait_seconds in all.
    const double total_ms = wait_seconds * 1000;
    options.project.busy_timeout_ms = std::max(1, static_cast<int>((total_ms - std::min(1000.0, total_ms / 7)) / 6));
    options.project.on_wait = [](const std::string& line) { std::cerr << "alignscope-cli: " << line << std::endl; };
    return std::make_unique<store::JobRecording>(path, spec, options);
}

void ProjectFlag::record_failure(store::JobRecording* recording) noexcept {
    if (!recording || recording->finished()) return;
    bool cancelled = false;
    std::string message = "the command ended without finishing the job";
    try {
        if (const std::exception_ptr error = std::current_exception()) std::rethrow_exception(error);
    } catch (const Cancelled&) {
        cancelled = true;
    } catch (const std::exception& e) {
        message = e.what();
    } catch (...) {
        message = "unknown error";
    }
    try {
        if (cancelled) recording->finish_cancelled();
        else
            recording->finish_failed(message);
    } catch (...) {
        // Could not write the outcome (e.g. the disk is full): the recording's
        // lock goes with it and the job will read as interrupted.
    }
}

}  // namespace alignscope::cli
