// The --project FILE.alsproj flag every running command (align, search, verify,
// bench) accepts: it records the job, its inputs, progress and results in the
// project, and its outcome (done, failed with the message, cancelled).
//
// Use in a command:
//   ProjectFlag project;                  // in the command's flags struct
//   project.add_to(*command);
//   ...
//   store::JobSpec spec = store::JobSpec::for_pair_job("align", job, backend.info());
//   spec.command_line = context.command_line;
//   auto recording = project.begin(spec);  // nullptr without --project
//   try {
//       if (recording) recording->add_input(queries, "query"), ...;
//       job_context.progress = both(terminal progress, recording->progress_callback());
//       ... run ...
//       if (recording) { recording->add_alignments(results);
//                        recording->add_timeline(timeline.events(), timeline.clock_source());
//                        recording->finish_done(); }
//   } catch (...) {
//       ProjectFlag::record_failure(recording.get());  // failed or cancelled, then rethrow
//       throw;
//   }
#pragma once

#include <CLI/CLI.hpp>

#include <alignscope/store/job_recording.hpp>

#include <memory>
#include <string>

namespace alignscope::cli {

struct ProjectFlag {
    std::string path;
    double wait_seconds = 60;  // --project-wait: how long a write waits for another process's lock

    void add_to(CLI::App& command);
    bool enabled() const { return !path.empty(); }
    // Opens the project (creating it when there is no file) and begins recording
    // the job as running. Returns nullptr when --project was not given. Throws
    // Error naming the file (read-only, not a project, newer version, ...).
    // While another process holds the project's lock it says on stderr that it
    // waits, for whom, and for how long; then gives up with Error.
    std::unique_ptr<store::JobRecording> begin(const store::JobSpec& spec) const;

    // Call from a catch block: records the exception in flight as the job's
    // outcome (Cancelled -> cancelled, anything else -> failed with its
    // message). Does nothing for nullptr or a finished recording; never throws,
    // so the caller's `throw;` reports the original error.
    static void record_failure(store::JobRecording* recording) noexcept;
};

}  // namespace alignscope::cli
