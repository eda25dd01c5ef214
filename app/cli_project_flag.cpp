// --project: recording a CLI job into a project file.
#include "cli_project_flag.hpp"

#include <alignscope/error.hpp>

#include <exception>
#include <string>

namespace alignscope::cli {

void ProjectFlag::add_to(CLI::App& command) {
    command.add_option("--project", path,
                       "Record the job, its inputs and results in this project file (.alsproj; created when missing)");
}

std::unique_ptr<store::JobRecording> ProjectFlag::begin(const store::JobSpec& spec) const {
    if (path.empty()) return nullptr;
    store::RecordingOptions options;
    options.project.create_if_missing = true;
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
        else recording->finish_failed(message);
    } catch (...) {
        // Could not write the outcome (e.g. the disk is full): the recording's
        // lock goes with it and the job will read as interrupted.
    }
}

}  // namespace alignscope::cli
