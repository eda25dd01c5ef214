// `alignscope-cli verify`: runs seeded random pairs on a device and on the CPU
// reference, prints every mismatch and ends with "N passed, N failed"; exit
// status 1 when anything failed.
#include "cli_commands.hpp"
#include "cli_options.hpp"
#include "cli_profile.hpp"
#include "cli_progress.hpp"
#include "cli_project_flag.hpp"

#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/bench/long_verify.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/search/scan.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/cuda_backend.hpp>
#include <alignscope/kernels/profile_scanners.hpp>
#endif

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
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
    bool all_kernels = false;
    std::string max_length = "100k";
    LongFlags long_flags;
    ProfileVerifyFlags profile;
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
int run_verify_all_kernels(const VerifyFlags& flags, CliContext& context);

// verify --profile, once the flags of the other checks are refused.
int run_verify_profile_checked(const VerifyFlags& flags) {
    if (flags.search || flags.long_pair || flags.all_kernels)
        throw Error("--profile is its own check: drop --search, --long and --all-kernels");
    if (flags.reference_option->count() || flags.scores_only_option->count() || flags.max_length_option->count() ||
        flags.long_flags.given() || !flags.device.kernel.empty() || !flags.project.path.empty() ||
        !flags.device.timeline.empty())
        throw Error(
            "verify --profile checks every profile kernel against the scalar reference: drop --reference, "
            "--scores-only, --max-length, --strategy, --kernels, --special-rows-mem, --kernel, --project and "
            "--timeline");
    return run_verify_profile(flags.profile, flags.device.device, flags.pairs_option->count() ? flags.pairs : 200,
                              flags.seed, flags.device.threads, flags.device.gpu_mem);
}

// Erases the progress line (stderr) before a line goes to stdout.
void clear_progress(bool show_progress) {
    if (show_progress) std::cerr << "\r\033[K" << std::flush;
}

// Every mismatch, failed job and refusal printed as it comes; progress on stderr.
VerifyCallbacks printing_callbacks(const std::string& device, bool show_progress) {
    VerifyCallbacks callbacks;
    callbacks.mismatch = [show_progress](const VerifyMismatch& mismatch) {
        clear_progress(show_progress);
        std::cout << mismatch.describe() << std::flush;
    };
    callbacks.job_failure = [device, show_progress](const VerifyJobFailure& failure) {
        clear_progress(show_progress);
        std::cout << "JOB FAILED on " << device << " (" << failure.pairs << " pairs, " << failure.config->describe()
                  << "): " << failure.message << "\n"
                  << std::flush;
    };
    callbacks.refusal = [device, show_progress](const VerifyJobFailure& refusal) {
        clear_progress(show_progress);
        std::cout << "REFUSED on " << device << " (" << refusal.pairs << " pairs, " << refusal.config->describe()
                  << "): " << refusal.message << "\n"
                  << std::flush;
    };
    if (show_progress)
        callbacks.progress = [](std::uint64_t done, std::uint64_t total) {
            std::cerr << "\rverify: " << done << "/" << total << " pairs" << std::flush;
        };
    return callbacks;
}

// The project's record of a verify run: its device, settings and seed.
store::JobSpec verify_spec(const std::string& algorithm, const DeviceInfo& device, const CliContext& context) {
    store::JobSpec spec;
    spec.command = "verify";
    spec.algorithm = algorithm;
    spec.devices = device.id;
    spec.driver_version = device.driver_version;
    spec.command_line = context.command_line;
    return spec;
}

// The run's end in the project (with its timeline) and in --timeline FILE.
void finish_outputs(store::JobRecording* recording, const std::string& timeline_path, const TimelineRecorder& recorder,
                    std::uint64_t passed, std::uint64_t failed) {
    if (recording) {
        if (!timeline_path.empty()) recording->add_timeline(recorder.events(), recorder.clock_source());
        if (failed) recording->finish_failed(std::to_string(passed) + " passed, " + std::to_string(failed) + " failed");
        else
            recording->finish_done();
    }
    if (!timeline_path.empty()) {
        AtomicOutput out(timeline_path);
        write_chrome_trace(out.stream(), recorder.events(), recorder.clock_source());
        out.commit();
    }
}

void print_failures_by_kind(const std::map<std::string, std::uint64_t>& failures) {
    std::cout << "\nfailures by kind:";
    for (const auto& [kind, count] : failures) std::cout << " " << kind << " " << count << ";";
}

// The closing lines of a pairwise verify.
void print_verify_summary(const VerifySummary& summary) {
    char times[160];
    std::snprintf(times, sizeof times, "%s %.2f s, %s %.2f s", summary.tested_device.c_str(), summary.tested_seconds,
                  summary.reference_device.c_str(), summary.reference_seconds);
    std::cout << "checked " << summary.cells << " cells in " << summary.jobs << " jobs (" << times << ")";
    if (!summary.tested_kernels.empty()) std::cout << "; kernels: " << summary.tested_kernels;
    if (summary.failed) print_failures_by_kind(summary.failures_by_kind);
    std::cout << "\n" << summary.passed << " passed, " << summary.failed << " failed";
    if (summary.refused) std::cout << ", " << summary.refused << " refused (schemes past the device's limits)";
    std::cout << std::endl;
}

// The options of a pairwise verify from its flags.
VerifyOptions pairwise_options(const VerifyFlags& flags) {
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
    return options;
}

int run_verify(const VerifyFlags& flags, CliContext& context) {
    refuse_overlapping_files({}, {{"--timeline", flags.device.timeline}, {"--project", flags.project.path}});
    if (!flags.search_mode.empty() && !flags.search)
        throw Error("--mode applies to verify --search (the other checks cover every mode)");
    if (flags.profile.enabled) return run_verify_profile_checked(flags);
    if (flags.profile.other_flags_given())
        throw Error("--hmm, --db, --db-limit, --random-models and --no-long apply to verify --profile");
    if (flags.all_kernels) return run_verify_all_kernels(flags, context);
    if (flags.long_pair) {
        if (flags.search) throw Error("--long and --search are different checks: give one");
        return run_verify_long(flags, context);
    }
    if (flags.long_flags.given() || flags.max_length_option->count())
        throw Error("--max-length, --strategy, --kernels and --special-rows-mem apply to verify --long");
    if (flags.search)
        return run_search_verify(flags.device.device, flags.seed, flags.device.threads, flags.device.streams,
                                 flags.device.gpu_mem, flags.search_mode, context);
    const VerifyOptions options = pairwise_options(flags);

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
    const bool show_progress = stderr_is_terminal();
    const VerifyCallbacks callbacks = printing_callbacks(tested_info.id, show_progress);

    store::JobSpec spec = verify_spec("verify", tested_info, context);
    spec.streams = options.streams;
    spec.threads = options.threads;
    spec.kernel = options.kernel;
    spec.gpu_memory_budget = options.gpu_memory_budget;
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
    clear_progress(show_progress);
    finish_outputs(recording.get(), flags.device.timeline, recorder, summary.passed, summary.failed);
    print_verify_summary(summary);
    return summary.failed ? 1 : 0;
}

// The options of verify --long from its flags; the longest sequence depends on
// the device (`gpu`).
LongVerifyOptions long_options(const VerifyFlags& flags, bool gpu) {
    LongVerifyOptions options;
    options.pairs = flags.pairs_option->count() ? flags.pairs : 32;
    options.seed = flags.seed;
    options.settings = flags.long_flags.settings(flags.device);
    options.special_row_budget = flags.long_flags.special_row_budget();
    options.threads = flags.device.threads;
    if (options.pairs == 0) throw Error("--pairs must be at least 1");
    // 100k on GPUs; a CPU aligns a 100k pair in minutes, so 20k there unless asked.
    options.max_length = flags.max_length_option->count() ? parse_length(flags.max_length, "--max-length")
                         : gpu                            ? 100'000
                                                          : 20'000;
    return options;
}

// One line per pair that passed, the whole story of one that failed.
void print_long_result(const LongVerifyResult& r) {
    if (!r.problems.empty()) {
        std::cout << r.describe() << std::flush;
        return;
    }
    if (r.refused) {
        std::cout << "refused " << r.pair->describe() << ": " << r.refusal << "\n" << std::flush;
        return;
    }
    char line[96];
    std::snprintf(line, sizeof line, ": score %s, %.2f s", format_score(r.pair->scheme.to_user(r.tested.score)).c_str(),
                  r.tested_seconds);
    std::cout << "ok " << r.pair->describe() << line << (r.parasail_checked ? ", parasail agrees" : "") << "\n"
              << std::flush;
}

void print_long_summary(const LongVerifySummary& summary) {
    char times[200];
    std::snprintf(times, sizeof times, "%s %.2f s, reference %.2f s, parasail %.2f s (CPU time)",
                  summary.tested_device.c_str(), summary.tested_seconds, summary.reference_seconds,
                  summary.parasail_seconds);
    std::cout << "checked " << summary.cells << " cells in " << (summary.passed + summary.failed + summary.refused)
              << " pairs (" << times << "); parasail checked " << summary.parasail_checked << "; genome pairs from "
              << summary.seed_genome;
    if (!summary.tested_kernels.empty()) std::cout << "; kernels: " << summary.tested_kernels;
    if (summary.extreme) std::cout << "; " << summary.extreme << " pairs of extreme schemes";
    if (summary.failed) print_failures_by_kind(summary.failures_by_kind);
    std::cout << "\n" << summary.passed << " passed, " << summary.failed << " failed";
    if (summary.refused) std::cout << ", " << summary.refused << " refused (schemes past the device's limits)";
    std::cout << std::endl;
}

// verify --long: see long_verify.hpp.
int run_verify_long(const VerifyFlags& flags, CliContext& context) {
    if (flags.reference_option->count())
        throw Error("--reference: verify --long checks against the CPU reference and parasail, not another device");
    if (flags.scores_only_option->count())
        throw Error("--scores-only: verify --long checks every pair with and without traceback");
    Backend& tested = context.registry->select(flags.device.device);
    const DeviceInfo info = tested.info();
    const LongVerifyOptions options = long_options(flags, info.kind == "gpu");
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
    job_context.progress = [&progress](const Progress& p) {
        if (progress) (*progress)(p);
    };
    LongVerifyCallbacks callbacks;
    callbacks.note = [](const std::string& text) { std::cout << "note: " << text << "\n" << std::flush; };
    callbacks.result = [&progress](const LongVerifyResult& r) {
        progress.reset();
        print_long_result(r);
    };
    callbacks.starting = [&](const LongVerifyCase& c) {
        progress.reset();
        if (show_progress && c.index < options.pairs)
            progress.emplace("verify --long: pair " + std::to_string(c.index + 1) + "/" + std::to_string(options.pairs),
                             TerminalProgress::Unit::Cells);
    };

    store::JobSpec spec = verify_spec("verify-long", info, context);
    spec.streams = options.settings.streams;
    spec.threads = options.threads;
    spec.kernel = options.settings.kernel;
    spec.gpu_memory_budget = options.settings.gpu_memory_budget;
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
    finish_outputs(recording.get(), flags.device.timeline, recorder, summary.passed, summary.failed);
    print_long_summary(summary);
    return summary.failed ? 1 : 0;
}

// ---------------------------------------------------------------- --all-kernels

// The devices --device names for verify --all-kernels: "auto" is every usable
// device, "gpu" every GPU; otherwise the one device given.
std::vector<std::string> devices_to_check(const std::string& spec, const DeviceRegistry& registry) {
    std::vector<std::string> out;
    for (const DeviceInfo& d : registry.devices()) {
        if (!d.available) continue;
        if (spec == "auto" || d.id == spec || (spec == "gpu" && d.kind == "gpu")) out.push_back(d.id);
    }
    if (out.empty())
        throw Error("--device: no usable device '" + spec +
                    "' for verify --all-kernels (give auto, gpu, or a device "
                    "`alignscope-cli devices` lists)");
    return out;
}

bool family_runs_on(const KernelFamilyEntry& family, const std::string& device) {
    return family.device == device || (family.device == "gpu" && device.rfind("gpu:", 0) == 0);
}

// Refuses the flags that do not apply to a catalog run before any work.
void refuse_flags_of_other_checks(const VerifyFlags& flags) {
    if (flags.search || flags.long_pair)
        throw Error(
            "--all-kernels runs the pairwise, search, long-pair and profile kernels itself: drop --search and --long");
    if (!flags.device.kernel.empty())
        throw Error("--kernel: --all-kernels runs every kernel; to check one, drop --all-kernels");
    if (flags.long_flags.given() || flags.max_length_option->count() || flags.scores_only_option->count() ||
        flags.reference_option->count())
        throw Error(
            "--all-kernels checks against the CPU reference with its own settings: drop --reference, "
            "--scores-only, --max-length, --strategy, --kernels and --special-rows-mem");
}

// One line per variant: area, device, name, pairs and what came of them.
void print_variant(const KernelFamilyEntry& family, const std::string& device, const KernelName& kernel,
                   const KernelCheckOutcome& outcome) {
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-8s %-26s %5llu pairs: %llu passed, %llu failed, %llu refused  %s",
                  family.area.c_str(), device.c_str(), kernel.format().c_str(),
                  static_cast<unsigned long long>(outcome.pairs), static_cast<unsigned long long>(outcome.passed),
                  static_cast<unsigned long long>(outcome.failed), static_cast<unsigned long long>(outcome.refused),
                  outcome.failed_check() ? "FAILED"
                  : outcome.not_run      ? "NOT RUN"
                                         : "ok");
    std::cout << line << "\n";
    for (const std::string& problem : outcome.problems) std::cout << "    " << problem << "\n";
    std::cout << std::flush;
}

// verify --all-kernels: every variant the catalog holds, on each device that
// runs it, against the CPU reference; exit status 1 when any failed.
int run_verify_all_kernels(const VerifyFlags& flags, CliContext& context) {
    refuse_flags_of_other_checks(flags);
    PairJob settings;  // validates --threads the way every command does
    flags.device.apply(settings);
    const KernelCatalog catalog = kernel_catalog();
    const std::unique_ptr<ScannerRegistry> scanners = scanner_registry();
    const std::vector<std::string> devices = devices_to_check(flags.device.device, *context.registry);
    const std::uint64_t pairs = flags.pairs_option->count() ? flags.pairs : 24;
    if (pairs == 0) throw Error("--pairs must be at least 1");
    std::cout << "verify --all-kernels: " << catalog.names().size() << " kernels in the catalog; " << pairs
              << " pairs a variant, seed " << flags.seed << ", against the CPU reference" << std::endl;

    JobContext job_context;
    job_context.cancel = &interrupt_token();
    std::uint64_t variants = 0, failed = 0, not_run = 0;
    for (const std::string& device : devices)
        for (const KernelFamilyEntry& family : catalog.families()) {
            if (!family_runs_on(family, device)) continue;
            for (const KernelName& kernel : family.variants) {
                KernelCheckRequest request{context.registry.get(), scanners.get(), device, kernel, pairs, flags.seed,
                                           settings.threads,       &job_context};
                KernelCheckOutcome outcome;
                try {
                    outcome = family.check(request);
                } catch (const Cancelled&) {
                    throw;
                } catch (const std::exception& e) {
                    outcome.failed = outcome.pairs = pairs;
                    outcome.problems = {std::string("the check stopped: ") + e.what()};
                }
                print_variant(family, device, kernel, outcome);
                ++variants;
                if (outcome.failed_check()) ++failed;
                else if (outcome.not_run)
                    ++not_run;
            }
        }
    std::cout << variants << " variants: " << (variants - failed - not_run) << " ok, " << failed << " failed";
    if (not_run) std::cout << ", " << not_run << " not run (the scanner chose other kernels)";
    std::cout << std::endl;
    return failed ? 1 : 0;
}

}  // namespace

KernelCatalog kernel_catalog() {
    KernelCatalog catalog;
    add_cpu_kernel_families(catalog);
    profile::add_cpu_profile_kernel_families(catalog);
#ifdef ALIGNSCOPE_WITH_CUDA
    kernels::add_cuda_kernel_families(catalog);
    kernels::add_cuda_profile_kernel_families(catalog);
#endif
    return catalog;
}

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
    flags->scores_only_option =
        command->add_flag("--scores-only", flags->scores_only, "Check scores and coordinates only (no traceback jobs)");
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
    command->add_flag(
        "--all-kernels", flags->all_kernels,
        "Check every kernel variant the catalog holds (pairwise modes x gaps x families x widths, the "
        "database scanners' kernels, the long-pair strips, the profile filters) on each device that runs it (--device: "
        "auto = all, gpu = every GPU, or one device) against the CPU reference, --pairs a variant "
        "[default: 24]; one line per variant");
    flags->max_length_option =
        command->add_option("--max-length", flags->max_length,
                            "verify --long: longest sequence, e.g. 3000, 20k [default: 100k on GPUs, 20k on CPUs]");
    flags->long_flags.add_to(*command);
    flags->profile.add_to(*command);
    command->callback(
        [flags, &context] { context.action = [flags, &context] { return run_verify(*flags, context); }; });
}

}  // namespace alignscope::cli
