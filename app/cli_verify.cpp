// `alignscope-cli verify`: runs seeded random pairs on a device and on the CPU
// reference, prints every mismatch and ends with "N passed, N failed"; exit
// status 1 when anything failed.
#include "cli_commands.hpp"
#include "cli_project_flag.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"

#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/bench/long_verify.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

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
    std::string search_mode;  // verify --search --mode: only that mode's cases
    ProjectFlag project;
    bool long_pair = false;
    std::string max_length = "100k";
    LongFlags long_flags;
    CLI::Option* pairs_option = nullptr;
    CLI::Option* reference_option = nullptr;
    CLI::Option* max_length_option = nullptr;
    CLI::Option* scores_only_option = nullptr;
};

bool stderr_is_terminal() {
#ifdef ALIGNSCOPE_HAVE_ISATTY
    return isatty(2) != 0;
#else
    return false;
#endif
}

int run_verify_long(const VerifyFlags& flags, CliContext& context);

int run_verify(const VerifyFlags& flags, CliContext& context) {
    refuse_overlapping_files({}, {{"--timeline", flags.device.timeline}, {"--project", flags.project.path}});
    if (!flags.search_mode.empty() && !flags.search)
        throw Error("--mode applies to verify --search (the other checks cover every mode)");
    if (flags.long_pair) {
        if (flags.search) throw Error("--long and --search are different checks: give one");
        return run_verify_long(flags, context);
    }
    if (flags.long_flags.given() || flags.max_length_option->count())
        throw Error("--max-length, --strategy, --kernels and --special-rows-mem apply to verify --long");
    if (flags.search)
        return run_search_verify(flags.device.device, flags.seed, flags.device.threads, flags.device.streams,
                                 flags.device.gpu_mem, flags.search_mode, context);
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
    callbacks.refusal = [&](const VerifyJobFailure& refusal) {
        if (show_progress) std::cerr << "\r\033[K" << std::flush;
        std::cout << "REFUSED on " << tested_info.id << " (" << refusal.pairs << " pairs, "
                  << refusal.config->describe() << "): " << refusal.message << "\n"
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
        AtomicOutput out(flags.device.timeline);
        write_chrome_trace(out.stream(), recorder.events(), recorder.clock_source());
        out.commit();
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
    std::cout << "\n" << summary.passed << " passed, " << summary.failed << " failed";
    if (summary.refused) std::cout << ", " << summary.refused << " refused (schemes past the device's limits)";
    std::cout << std::endl;
    return summary.failed ? 1 : 0;
}


// verify --long: see long_verify.hpp.
int run_verify_long(const VerifyFlags& flags, CliContext& context) {
    if (flags.reference_option->count())
        throw Error("--reference: verify --long checks against the CPU reference and parasail, not another device");
    if (flags.scores_only_option->count())
        throw Error("--scores-only: verify --long checks every pair with and without traceback");
    LongVerifyOptions options;
    options.pairs = flags.pairs_option->count() ? flags.pairs : 32;
    options.seed = flags.seed;
    options.settings = flags.long_flags.settings(flags.device);
    options.special_row_budget = flags.long_flags.special_row_budget();
    options.threads = flags.device.threads;
    if (options.pairs == 0) throw Error("--pairs must be at least 1");

    Backend& tested = context.registry->select(flags.device.device);
    const DeviceInfo info = tested.info();
    // 100k on GPUs; a CPU aligns a 100k pair in minutes, so 20k there unless asked.
    options.max_length = flags.max_length_option->count() ? parse_length(flags.max_length, "--max-length")
                         : info.kind == "gpu"              ? 100'000
                                                           : 20'000;
    std::cout << "verify --long: " << info.id << " (" << info.name << ") against the CPU reference and parasail, "
              << options.pairs << " pairs up to " << format_length(options.max_length) << ", seed " << options.seed
              << std::endl;

    TimelineRecorder recorder;
    JobContext job_context;
    job_context.cancel = &interrupt_token();
    if (!flags.device.timeline.empty()) job_context.timeline = &recorder;
    const bool show_progress = stderr_is_terminal();
    // One progress line per pair (its runs on the device), restarted for the next.
    std::optional<TerminalProgress> progress;
    auto start_progress = [&](std::uint64_t next) {
        progress.reset();
        if (show_progress && next < options.pairs)
            progress.emplace("verify --long: pair " + std::to_string(next + 1) + "/" + std::to_string(options.pairs),
                             TerminalProgress::Unit::Cells);
    };
    job_context.progress = [&progress](const Progress& p) {
        if (progress) (*progress)(p);
    };

    LongVerifyCallbacks callbacks;
    callbacks.note = [](const std::string& text) { std::cout << "note: " << text << "\n" << std::flush; };
    callbacks.result = [&](const LongVerifyResult& r) {
        progress.reset();
        if (r.problems.empty()) {
            char line[96];
            std::snprintf(line, sizeof line, ": score %s, %.2f s",
                          format_score(r.pair->scheme.to_user(r.tested.score)).c_str(), r.tested_seconds);
            std::cout << "ok " << r.pair->describe() << line << (r.parasail_checked ? ", parasail agrees" : "")
                      << "\n" << std::flush;
        } else {
            std::cout << r.describe() << std::flush;
        }
    };
    callbacks.starting = [&](const LongVerifyCase& c) { start_progress(c.index); };

    store::JobSpec spec;
    spec.command = "verify";
    spec.algorithm = "verify-long";
    spec.devices = info.id;
    spec.streams = options.settings.streams;
    spec.threads = options.threads;
    spec.kernel = options.settings.kernel;
    spec.gpu_memory_budget = options.settings.gpu_memory_budget;
    spec.driver_version = info.driver_version;
    spec.command_line = context.command_line;
    spec.parameters["long"] = "yes";
    spec.parameters["pairs"] = std::to_string(options.pairs);
    spec.parameters["seed"] = std::to_string(options.seed);
    spec.parameters["max_length"] = std::to_string(options.max_length);
    if (!options.settings.strategy.empty()) spec.parameters["strategy"] = options.settings.strategy;
    std::unique_ptr<store::JobRecording> recording = flags.project.begin(spec);
    LongVerifySummary summary;
    try {
        summary = verify_long(tested, options, callbacks, job_context);
    } catch (...) {
        progress.reset();
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    progress.reset();
    if (recording) {
        if (!flags.device.timeline.empty()) recording->add_timeline(recorder.events(), recorder.clock_source());
        if (summary.failed)
            recording->finish_failed(std::to_string(summary.passed) + " passed, " + std::to_string(summary.failed) +
                                     " failed");
        else
            recording->finish_done();
    }
    if (!flags.device.timeline.empty()) {
        AtomicOutput out(flags.device.timeline);
        write_chrome_trace(out.stream(), recorder.events(), recorder.clock_source());
        out.commit();
    }
    char times[200];
    std::snprintf(times, sizeof times, "%s %.2f s, reference %.2f s, parasail %.2f s (CPU time)",
                  summary.tested_device.c_str(), summary.tested_seconds, summary.reference_seconds,
                  summary.parasail_seconds);
    std::cout << "checked " << summary.cells << " cells in " << (summary.passed + summary.failed) << " pairs ("
              << times << "); parasail checked " << summary.parasail_checked << "; genome pairs from "
              << summary.seed_genome;
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
    flags->pairs_option =
        command->add_option("--pairs", flags->pairs, "Number of random pairs [default: 10000; --long: 32]");
    command->add_option("--seed", flags->seed, "Seed of the random pairs (the same seed gives the same pairs)")
        ->capture_default_str();
    flags->reference_option =
        command->add_option("--reference", flags->reference, "Device that gives the expected results")
            ->capture_default_str();
    flags->scores_only_option = command->add_flag("--scores-only", flags->scores_only,
                                                  "Check scores and coordinates only (no traceback jobs)");
    command->add_flag("--search", flags->search,
                      "Check the device's database scanner instead: top-K scores over whole random databases "
                      "against the CPU (same as `search --verify`)");
    command->add_option("--mode", flags->search_mode,
                        "verify --search: only the cases of this mode (local, global or semiglobal) [default: all]");
    flags->project.add_to(*command);
    command->add_flag("--long", flags->long_pair,
                      "Check the long-pair path (align --long) instead: random pairs with planted similar regions "
                      "and pairs grown from the lambda genome, every mode, affine and linear gaps, against the CPU "
                      "reference and parasail (score, end, CIGAR re-scored)");
    flags->max_length_option = command->add_option(
        "--max-length", flags->max_length, "verify --long: longest sequence, e.g. 3000, 20k [default: 100k on GPUs, 20k on CPUs]");
    flags->long_flags.add_to(*command);
    command->callback([flags, &context] { context.action = [flags, &context] { return run_verify(*flags, context); }; });
}

}  // namespace alignscope::cli
