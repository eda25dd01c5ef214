// `alignscope-cli verify`: runs seeded random pairs on a device and on the CPU
// reference, prints every mismatch and ends with "N passed, N failed"; exit
// status 1 when anything failed.
#include "cli_commands.hpp"
#include "cli_project_flag.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"

#include <alignscope/bench/verify.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#if __has_include(<unistd.h>)
#include <unistd.h>
#define ALIGNSCOPE_HAVE_ISATTY 1
#endif

namespace alignscope::cli {

namespace {

struct VerifyFlags {
    DeviceFlags device;
    std::uint64_t pairs = 10'000;
    std::uint64_t seed = 1;
    bool scores_only = false;
    std::string reference = "cpu-ref";
    bool search = false;
    ProjectFlag project;
};

bool stderr_is_terminal() {
#ifdef ALIGNSCOPE_HAVE_ISATTY
    return isatty(2) != 0;
#else
    return false;
#endif
}

int run_verify(const VerifyFlags& flags, CliContext& context) {
    if (flags.search)
        return run_search_verify(flags.device.device, flags.seed, flags.device.threads, flags.device.streams,
                                 flags.device.gpu_mem, context);
    PairJob settings;  // validates --threads/--streams/--gpu-mem the way every command does
    flags.device.apply(settings);

    VerifyOptions options;
    options.device = flags.device.device;
    options.reference_device = flags.reference;
    options.pairs = flags.pairs;
    options.seed = flags.seed;
    options.threads = settings.threads;
    options.streams = settings.streams;
    options.kernel = settings.kernel;
    options.gpu_memory_budget = settings.gpu_memory_budget;
    options.traceback_too = !flags.scores_only;
    if (options.pairs == 0) throw Error("--pairs must be at least 1");

    Backend& tested = context.registry->select(options.device);
    Backend& reference = context.registry->select(options.reference_device);
    const DeviceInfo tested_info = tested.info();
    const DeviceInfo reference_info = reference.info();
    std::cout << "verify: " << tested_info.id << " (" << tested_info.name << ") against " << reference_info.id << " ("
              << reference_info.name << "), " << options.pairs << " pairs, seed " << options.seed
              << (options.traceback_too ? ", scores and tracebacks" : ", scores only") << std::endl;

    TimelineRecorder recorder;
    JobContext job_context;
    job_context.cancel = &interrupt_token();  // Ctrl-C ends the run between jobs
    if (!flags.device.timeline.empty()) job_context.timeline = &recorder;

    VerifyCallbacks callbacks;
    const bool show_progress = stderr_is_terminal();
    callbacks.mismatch = [&](const VerifyMismatch& mismatch) {
        if (show_progress) std::cerr << "\r\033[K" << std::flush;
        std::cout << mismatch.describe() << std::flush;
    };
    callbacks.job_failure = [&](const VerifyJobFailure& failure) {
        if (show_progress) std::cerr << "\r\033[K" << std::flush;
        std::cout << "JOB FAILED on " << tested_info.id << " (" << failure.pairs << " pairs, "
                  << failure.config->describe() << "): " << failure.message << "\n"
                  << std::flush;
    };
    if (show_progress)
        callbacks.progress = [](std::uint64_t done, std::uint64_t total) {
            std::cerr << "\rverify: " << done << "/" << total << " pairs" << std::flush;
        };

    store::JobSpec spec;
    spec.command = "verify";
    spec.algorithm = "verify";
    spec.devices = tested_info.id;
    spec.streams = options.streams;
    spec.threads = options.threads;
    spec.kernel = options.kernel;
    spec.gpu_memory_budget = options.gpu_memory_budget;
    spec.driver_version = tested_info.driver_version;
    spec.command_line = context.command_line;
    spec.parameters["reference"] = reference_info.id;
    spec.parameters["pairs"] = std::to_string(options.pairs);
    spec.parameters["seed"] = std::to_string(options.seed);
    std::unique_ptr<store::JobRecording> recording = flags.project.begin(spec);
    VerifySummary summary;
    try {
        summary = verify_backend(tested, reference, options, callbacks, job_context);
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    if (recording) {
        if (!flags.device.timeline.empty()) recording->add_timeline(recorder.events(), recorder.clock_source());
        if (summary.failed)
            recording->finish_failed(std::to_string(summary.passed) + " passed, " + std::to_string(summary.failed) +
                                     " failed");
        else
            recording->finish_done();
    }
    if (show_progress) std::cerr << "\r\033[K" << std::flush;

    if (!flags.device.timeline.empty()) {
        std::ofstream out(flags.device.timeline, std::ios::binary);
        if (!out) throw Error("--timeline: cannot write '" + flags.device.timeline + "'");
        write_chrome_trace(out, recorder.events(), recorder.clock_source());
        out.close();
        if (!out) throw Error("--timeline: writing '" + flags.device.timeline + "' failed");
    }

    char times[160];
    std::snprintf(times, sizeof times, "%s %.2f s, %s %.2f s", summary.tested_device.c_str(), summary.tested_seconds,
                  summary.reference_device.c_str(), summary.reference_seconds);
    std::cout << "checked " << summary.cells << " cells in " << summary.jobs << " jobs (" << times << ")";
    if (!summary.tested_kernels.empty()) std::cout << "; kernels: " << summary.tested_kernels;
    if (summary.failed) {
        std::cout << "\nfailures by kind:";
        for (const auto& [kind, count] : summary.failures_by_kind) std::cout << " " << kind << " " << count << ";";
    }
    std::cout << "\n" << summary.passed << " passed, " << summary.failed << " failed" << std::endl;
    return summary.failed ? 1 : 0;
}

}  // namespace

void add_verify_command(CLI::App& app, CliContext& context) {
    auto* command = app.add_subcommand(
        "verify",
        "Check a device against the CPU reference: seeded random DNA and protein pairs over every mode, gap model, "
        "matrix and length class (adversarial ones included); prints each mismatch and ends with 'N passed, N failed'");
    auto flags = std::make_shared<VerifyFlags>();
    flags->device.add_to(*command, "auto");
    command->add_option("--pairs", flags->pairs, "Number of random pairs")->capture_default_str();
    command->add_option("--seed", flags->seed, "Seed of the random pairs (the same seed gives the same pairs)")
        ->capture_default_str();
    command->add_option("--reference", flags->reference, "Device that gives the expected results")
        ->capture_default_str();
    command->add_flag("--scores-only", flags->scores_only,
                      "Check scores and coordinates only (no traceback jobs)");
    command->add_flag("--search", flags->search,
                      "Check the device's database scanner instead: top-K scores over whole random databases "
                      "against the CPU (same as `search --verify`)");
    flags->project.add_to(*command);
    command->callback([flags, &context] { context.action = [flags, &context] { return run_verify(*flags, context); }; });
}

}  // namespace alignscope::cli
