// `alignscope-cli bench`: the standard cases and the sweeps on the GPU (if any)
// and the CPU SIMD backend in the same run; a table on the terminal and the
// whole report as JSON.
#include "cli_commands.hpp"
#include "cli_options.hpp"
#include "cli_profile.hpp"
#include "cli_progress.hpp"
#include "cli_project_flag.hpp"

#include <alignscope/bench/bench.hpp>
#include <alignscope/bench/long_bench.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/bench/runtime_model.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace alignscope::cli {

namespace {

struct BenchFlags {
    std::string device = "auto";
    std::string cpu_device = "cpu";
    std::uint64_t pairs = 1'000'000;
    std::uint64_t cpu_pairs = 0;
    double cpu_seconds = 1.0;
    std::vector<std::int64_t> lengths{64, 128, 256, 512, 1024};
    std::vector<std::string> length_texts;  // --lengths as given (10k, 1M, ...)
    std::vector<std::uint64_t> batches;     // default: decades from 1000 up to --pairs
    std::vector<int> streams{1, 2, 4, 8};
    std::vector<std::string> kernels;
    int repeat = 3;
    int threads = 0;
    std::uint64_t seed = 1;
    std::string gpu_mem;
    std::string json;
    std::string timeline;
    ProjectFlag project;
    bool search = false;
    bool quick = false;
    bool no_sweeps = false;
    // --long
    bool long_pair = false;
    std::vector<std::string> strategies{"strips", "streams"};
    std::string mode = "local";
    LongFlags long_flags;       // --kernels, --special-rows-mem
    ProfileBenchFlags profile;  // --profile, --hmm, --db, --db-limit, --no-hmmsearch
    CLI::Option* strategies_option = nullptr;
    CLI::Option* mode_option = nullptr;

    // Whether the user gave these, so --quick does not override them.
    CLI::Option* pairs_option = nullptr;
    CLI::Option* cpu_seconds_option = nullptr;
    CLI::Option* lengths_option = nullptr;
    CLI::Option* batches_option = nullptr;
    CLI::Option* streams_option = nullptr;
    CLI::Option* repeat_option = nullptr;
};

std::string fixed(double value, int decimals) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
}

std::string clip(const std::string& text, std::size_t width) {
    return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

std::string case_label(const BenchPoint& point) {
    if (point.series.find('/') == std::string::npos) return point.series;
    std::string label = point.series + " " + point.x_name + "=";
    if (point.x_name == "kernel") return label + point.kernel;
    return label + fixed(point.x_value, 0);
}

void print_header(std::ostream& out) {
    char line[256];
    std::snprintf(line, sizeof line, "%-58s %-8s %-28s %9s %14s %9s %10s %12s", "case", "device", "kernel", "pairs",
                  "cells", "s", "GCUPS e2e", "GCUPS kernel");
    out << line << "\n" << std::string(157, '-') << "\n";
}

void print_row(std::ostream& out, const BenchPoint& p) {
    char line[512];
    std::snprintf(line, sizeof line, "%-58s %-8s %-28s %9llu %14llu %9.4f %10s %12s", clip(case_label(p), 58).c_str(),
                  clip(p.device, 8).c_str(), clip(p.kernel.empty() ? "-" : p.kernel, 28).c_str(),
                  static_cast<unsigned long long>(p.pairs), static_cast<unsigned long long>(p.cells), p.seconds,
                  fixed(p.gcups_e2e, 2).c_str(), p.gcups_kernel ? fixed(*p.gcups_kernel, 2).c_str() : "-");
    out << line << "\n" << std::flush;
}

// The end both bench commands share: the build line, the JSON report, the
// timeline file and the project's job.
int finish_bench(std::ostream& table, const BenchReport& report, const BenchFlags& flags, bool json_to_stdout,
                 std::optional<AtomicOutput>& json_out, std::optional<AtomicOutput>& timeline_out,
                 const TimelineRecorder& recorder, store::JobRecording* recording) {
    table << "build: AlignScope " << report.build.version << ", " << report.build.compiler << ", "
          << report.build.build_type << "; host " << report.build.host << " (" << report.build.cpu_model << ", "
          << report.build.hardware_threads << " hardware threads)\n";
    if (json_to_stdout) {
        write_bench_json(std::cout, report);
    } else if (json_out) {
        write_bench_json(json_out->stream(), report);
    }
    if (timeline_out) write_chrome_trace(timeline_out->stream(), recorder.events(), recorder.clock_source());
    commit_together({json_out ? &*json_out : nullptr, timeline_out ? &*timeline_out : nullptr});
    if (json_out) table << "wrote " << flags.json << "\n";
    if (recording) {
        if (!flags.timeline.empty()) recording->add_timeline(recorder.events(), recorder.clock_source());
        recording->finish_done();
        table << "recorded as job " << recording->job_id() << " in " << flags.project.path << "\n";
    }
    table << std::flush;
    return 0;
}

int run_bench_long(BenchFlags flags, CliContext& context);
std::string parasail_figure(const BenchReport& report, int threads);

// The benchmarks other than the standard cases (--long, --search,
// --profile), each refusing the flags it does not take; nullopt when none is
// asked for.
std::optional<int> run_other_bench(BenchFlags& flags, CliContext& context) {
    const int others = int(flags.long_pair) + int(flags.search) + int(flags.profile.enabled);
    if (others > 1) throw Error("--long, --search and --profile are different benchmarks: give one");
    if (flags.long_pair) return run_bench_long(std::move(flags), context);
    if (flags.strategies_option->count() || flags.mode_option->count() || flags.long_flags.given())
        throw Error("--strategies, --mode, --kernels and --special-rows-mem apply to bench --long");
    if (!flags.profile.enabled && (!flags.profile.hmm.empty() || !flags.profile.database.empty() ||
                                   flags.profile.db_limit || flags.profile.no_hmmsearch))
        throw Error("--hmm, --db, --db-limit and --no-hmmsearch apply to bench --profile");
    if (flags.search) return run_search_bench(flags.device, flags.quick, flags.threads, flags.json, context);
    if (flags.profile.enabled) {
        if (flags.pairs_option->count() || flags.cpu_pairs || flags.cpu_seconds_option->count() ||
            flags.lengths_option->count() || flags.batches_option->count() || flags.streams_option->count() ||
            !flags.kernels.empty() || !flags.timeline.empty() || !flags.project.path.empty() || flags.no_sweeps)
            throw Error(
                "bench --profile measures whole searches: drop --pairs, --cpu-pairs, --cpu-seconds, --lengths, "
                "--batches, --streams, --kernel, --no-sweeps, --timeline and --project");
        const int repeat = flags.repeat_option->count() ? flags.repeat : flags.quick ? 1 : 3;
        return run_bench_profile(flags.profile, flags.device, flags.cpu_device, flags.threads, repeat, flags.gpu_mem,
                                 flags.json, context);
    }
    return std::nullopt;
}

// --quick's sizes, the default batch sweep, --no-sweeps; then the checks.
void apply_sweep_defaults(BenchFlags& flags) {
    if (flags.quick) {
        // A CI-sized run: every kind of point once, each in well under a second.
        if (!flags.pairs_option->count()) flags.pairs = 20'000;
        if (!flags.cpu_seconds_option->count()) flags.cpu_seconds = 0.1;
        if (!flags.lengths_option->count()) flags.lengths = {64, 256};
        if (!flags.batches_option->count()) flags.batches.clear();
        if (!flags.streams_option->count()) flags.streams = {1, 4};
        if (!flags.repeat_option->count()) flags.repeat = 2;
    } else if (!flags.batches_option->count()) {
        for (std::uint64_t batch = 1000; batch < flags.pairs; batch *= 10) flags.batches.push_back(batch);
        flags.batches.push_back(flags.pairs);
    }
    if (flags.no_sweeps) {
        // Only the sweeps named on the command line (a kernel sweep has no default).
        if (!flags.lengths_option->count()) flags.lengths.clear();
        if (!flags.batches_option->count()) flags.batches.clear();
        if (!flags.streams_option->count()) flags.streams.clear();
    }
    if (flags.pairs == 0) throw Error("--pairs must be at least 1");
    if (flags.repeat < 1) throw Error("--repeat must be at least 1");
    if (flags.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    if (!(flags.cpu_seconds > 0)) throw Error("--cpu-seconds must be positive");
}

// The device under test, then the CPU device beside it (unless the same or 'none').
std::vector<Backend*> bench_backends(const BenchFlags& flags, CliContext& context) {
    std::vector<Backend*> backends;
    Backend& device = context.registry->select(flags.device);
    backends.push_back(&device);
    if (flags.cpu_device != "none") {
        Backend& cpu = context.registry->select(flags.cpu_device, "--cpu-device");
        if (&cpu != &device) backends.push_back(&cpu);
    }
    return backends;
}

// Why there is no GPU point, when --device auto found none.
std::vector<std::string> no_gpu_preamble(const BenchFlags& flags, const Backend& device, const CliContext& context) {
    std::vector<std::string> preamble;
    if (flags.device == "auto" && device.info().kind != "gpu") {
        for (const auto& info : context.registry->devices())
            if (!info.available && info.kind == "gpu")
                preamble.push_back("no GPU: " + info.id + ": " + info.unavailable_reason);
        if (preamble.empty()) preamble.push_back("no GPU in this build or on this machine: running on the CPU only");
    }
    return preamble;
}

BenchOptions bench_options(const BenchFlags& flags, TimelineRecorder& recorder) {
    BenchOptions options;
    options.gpu_pairs = flags.pairs;
    options.cpu_pairs = flags.cpu_pairs;
    options.cpu_seconds = flags.cpu_seconds;
    options.lengths = flags.lengths;
    options.batches = flags.batches;
    options.streams = flags.streams;
    options.kernels = flags.kernels;
    options.repeat = flags.repeat;
    options.threads = flags.threads;
    options.seed = flags.seed;
    options.gpu_memory_budget = flags.gpu_mem.empty() ? 0 : parse_byte_size(flags.gpu_mem, "--gpu-mem");
    options.cancel = &interrupt_token();
    if (!flags.timeline.empty()) options.timeline = &recorder;
    return options;
}

// The project's record of the run.
store::JobSpec bench_spec(const BenchFlags& flags, const DeviceInfo& device, const BenchOptions& options,
                          const CliContext& context) {
    store::JobSpec spec;
    spec.command = "bench";
    spec.algorithm = "bench";
    spec.devices = device.id;
    spec.threads = flags.threads;
    spec.gpu_memory_budget = options.gpu_memory_budget;
    spec.driver_version = device.driver_version;
    spec.command_line = context.command_line;
    spec.parameters["cpu_device"] = flags.cpu_device;
    spec.parameters["pairs"] = std::to_string(flags.pairs);
    spec.parameters["repeat"] = std::to_string(flags.repeat);
    spec.parameters["seed"] = std::to_string(flags.seed);
    return spec;
}

// The standard cases and sweeps: devices, options, the table as points come,
// notes (parasail's figure beside ours), the JSON, timeline and project.
int run_bench_command(BenchFlags flags, CliContext& context) {
    refuse_overlapping_files({}, {{"--json", flags.json},
                                  {"--timeline", flags.timeline},
                                  {"--project", flags.project.path}});
    if (flags.lengths_option->count()) {
        flags.lengths.clear();
        for (const auto& text : flags.length_texts) flags.lengths.push_back(parse_length(text, "--lengths"));
    }
    if (std::optional<int> status = run_other_bench(flags, context)) return *status;
    apply_sweep_defaults(flags);
    const std::vector<Backend*> backends = bench_backends(flags, context);
    const Backend& device = *backends.front();

    // With --json -, the JSON owns standard output and the table goes to stderr.
    const bool json_to_stdout = flags.json == "-";
    std::ostream& table = json_to_stdout ? std::cerr : std::cout;
    const std::vector<std::string> preamble = no_gpu_preamble(flags, device, context);
    TimelineRecorder recorder;
    const BenchOptions options = bench_options(flags, recorder);

    for (Backend* backend : backends) {
        const DeviceInfo info = backend->info();
        table << "device " << info.id << ": " << info.name << (info.description.empty() ? "" : " - " + info.description)
              << "\n";
    }
    for (const auto& line : preamble) table << line << "\n";
    table << "\n";
    print_header(table);

    std::unique_ptr<store::JobRecording> recording =
        flags.project.begin(bench_spec(flags, device.info(), options, context));
    // Open the outputs before the work so a bad path fails fast; they appear whole or not at all.
    std::optional<AtomicOutput> json_out, timeline_out;
    if (!flags.json.empty() && !json_to_stdout) json_out.emplace(flags.json);
    if (!flags.timeline.empty()) timeline_out.emplace(flags.timeline);

    BenchCallbacks callbacks;
    callbacks.point = [&table, &recording](const BenchPoint& point) {
        print_row(table, point);
        if (recording) recording->add_bench_points({to_store_point(point)});  // the GUI sees points as they arrive
    };
    BenchReport report;
    try {
        report = run_bench(backends, options, callbacks);
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }

    table << "\n";
    for (const auto& line : preamble) table << "note: " << line << "\n";
    for (const auto& note : report.notes) table << "note: " << note << "\n";
    BenchReport with_preamble = report;
    with_preamble.notes.insert(with_preamble.notes.begin(), preamble.begin(), preamble.end());
    // Not in a --quick run (CI's): parasail's run takes a second or two of its own.
    if (const std::string parasail = flags.quick ? std::string() : parasail_figure(report, flags.threads);
        !parasail.empty()) {
        table << "note: " << parasail << "\n";
        with_preamble.notes.push_back(parasail);
    }
    return finish_bench(table, with_preamble, flags, json_to_stdout, json_out, timeline_out, recorder, recording.get());
}

// parasail's own command-line aligner, when installed, on the protein case our
// CPU device just ran that asks what sw_striped_16 gives (300 x 300, BLOSUM62
// 11/1, local, score and end positions):
// sw_striped_16 over all pairs of K random queries and K random targets (as
// many pairs as ours, at least 200 x 200 so that its start-up does not weigh:
// GCUPS is per cell, so the figures compare). Its figure: the cells it reports over its process's
// wall time (reading included, as in our end-to-end figure; its own timer
// reads 0 s in the Debian build). Empty when it is not installed.
std::string parasail_figure(const BenchReport& report, int threads) {
    const BenchPoint* ours = nullptr;
    for (const BenchPoint& p : report.points)
        if (p.series == "protein-300x300-local-ends" && p.device.rfind("cpu", 0) == 0) ours = &p;
    // A point of a few pairs (--cpu-pairs 10) is no measure to set a figure beside.
    if (!ours || ours->seconds <= 0 || ours->pairs < 1000) return {};
    std::string program;
    if (const char* path = std::getenv("PATH"))
        for (std::string_view rest = path; !rest.empty();) {
            const std::size_t colon = rest.find(':');
            const std::string folder(rest.substr(0, colon));
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
            std::error_code ec;
            const std::filesystem::path candidate =
                std::filesystem::path(folder.empty() ? "." : folder) / "parasail_aligner";
            if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
                program = candidate.string();
                break;
            }
        }
    if (program.empty()) return {};
    const int workers = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const std::uint64_t side =
        std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::sqrt(static_cast<double>(ours->pairs))), 200, 1000);
    std::error_code ec;
    const std::filesystem::path folder =
        std::filesystem::temp_directory_path(ec) / ("alignscope-bench-parasail-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder, ec);
    if (ec) return {};
    struct RemoveOnExit {
        std::filesystem::path folder;
        ~RemoveOnExit() {
            std::error_code ignored;
            std::filesystem::remove_all(folder, ignored);
        }
    } remove{folder};
    std::mt19937_64 rng(7);
    const char* letters = "ACDEFGHIKLMNPQRSTVWY";
    for (const char* name : {"q.fa", "t.fa"}) {
        std::ofstream file(folder / name);
        for (std::uint64_t k = 0; k < side; ++k) {
            file << '>' << name[0] << k << '\n';
            for (int i = 0; i < 300; ++i) file << letters[rng() % 20];
            file << '\n';
        }
        if (!file) return {};
    }
    const std::string command = "'" + program + "' -a sw_striped_16 -x -m blosum62 -o 11 -e 1 -t " +
                                std::to_string(workers) + " -q '" + (folder / "q.fa").string() + "' -f '" +
                                (folder / "t.fa").string() + "' -g '" + (folder / "out.csv").string() +
                                "' -v 0<&- 2>&1";
    const auto t0 = std::chrono::steady_clock::now();
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return {};
    std::string output;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    const int status = ::pclose(pipe);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::size_t work = output.find("work:");
    if (status != 0 || work == std::string::npos || seconds <= 0) return {};
    const double cells = std::strtod(output.c_str() + work + 5, nullptr);
    if (!(cells > 0)) return {};
    char line[400];
    std::snprintf(line, sizeof line,
                  "parasail_aligner sw_striped_16 (parasail's own CLI, %d threads, %llu x %llu random 300-residue "
                  "proteins, BLOSUM62 11/1 local): %.2f GCUPS for its whole process (%.3g cells in %.3f s), beside "
                  "%s's %.2f GCUPS end to end on %s",
                  workers, static_cast<unsigned long long>(side), static_cast<unsigned long long>(side),
                  cells / seconds / 1e9, cells, seconds, ours->device.c_str(),
                  double(ours->cells) / ours->seconds / 1e9, ours->series.c_str());
    return line;
}

std::string megabytes(std::uint64_t bytes) { return fixed(double(bytes) / (1024.0 * 1024.0), 0) + " MiB"; }

void print_long_header(std::ostream& out) {
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-12s %7s %13s %10s %12s %10s %10s %11s %-8s %s", "length", "strategy",
                  "streams", "stage-1 GCUPS", "stage-1 s", "no-trace s", "full s", "2-3 / 1", "peak RSS", "device",
                  "kernel");
    out << line << "\n" << std::string(130, '-') << "\n";
}

void print_long_row(std::ostream& out, const LongBenchPoint& p) {
    char line[512];
    std::snprintf(line, sizeof line, "%-8s %-12s %7s %13s %10.3f %12.3f %10.3f %10s %11s %-8s %s",
                  format_length(p.length).c_str(), p.strategy.c_str(),
                  p.streams ? std::to_string(p.streams).c_str() : "-", fixed(p.stage1_gcups, 2).c_str(),
                  p.stage1_seconds, p.score_only_seconds, p.full_seconds, (fixed(p.later_ratio, 2) + "x").c_str(),
                  megabytes(p.peak_rss_bytes).c_str(), clip(p.device, 8).c_str(),
                  p.kernel.empty() ? "-" : p.kernel.c_str());
    out << line << "\n" << std::flush;
}

// The run-time model of each strategy (stream count) measured at two lengths
// or more: its coefficients and what it predicts for a 5 Mbp x 5 Mbp pair.
void print_long_models(std::ostream& out, const LongBenchReport& report) {
    std::vector<std::string> series;
    for (const auto& p : report.points) {
        const std::string name = p.strategy + (p.streams ? " s=" + std::to_string(p.streams) : "");
        if (std::find(series.begin(), series.end(), name) == series.end()) series.push_back(name);
    }
    for (const std::string& name : series) {
        std::vector<RuntimeSample> full, score_only;
        for (const auto& p : report.points) {
            if (p.strategy + (p.streams ? " s=" + std::to_string(p.streams) : "") != name) continue;
            const double m = double(p.length);
            if (p.full_seconds > 0) full.push_back({m, m, p.full_seconds});
            if (p.score_only_seconds > 0) score_only.push_back({m, m, p.score_only_seconds});
        }
        const RuntimeModel model = fit_runtime_model(full), score = fit_runtime_model(score_only);
        if (model.sizes < 2) continue;
        auto duration = [](double s) {
            char text[48];
            if (s < 3600) std::snprintf(text, sizeof text, "%.4g s", s);
            else
                std::snprintf(text, sizeof text, "%.4g s (%.1f h)", s, s / 3600);
            return std::string(text);
        };
        const std::string line = "; 5 Mbp x 5 Mbp: " + duration(model.predict(5e6, 5e6)) +
                                 (score.valid() ? ", score only " + duration(score.predict(5e6, 5e6)) : "");
        out << "model " << name << " on " << report.device.id << " (full alignment): " << model.describe() << line
            << "\n";
    }
}

// bench --long: see long_bench.hpp.
int run_bench_long(BenchFlags flags, CliContext& context) {
    Backend& backend = context.registry->select(flags.device);
    const DeviceInfo info = backend.info();
    LongBenchOptions options;
    options.lengths = flags.lengths_option->count() ? flags.lengths
                      : flags.quick                 ? std::vector<std::int64_t>{3000, 6000}
                                                    : default_long_lengths(info);
    options.strategies = flags.strategies;
    if (flags.streams_option->count()) options.streams = flags.streams;
    options.kernels = flags.long_flags.kernels;
    options.gpu_memory_budget = flags.gpu_mem.empty() ? 0 : parse_byte_size(flags.gpu_mem, "--gpu-mem");
    options.special_row_budget = flags.long_flags.special_row_budget();
    options.align.mode = parse_mode(flags.mode);
    for (const std::string& s : options.strategies)
        if (s != "strips" && s != "streams")
            throw Error("--strategies: unknown strategy '" + s + "' (expected strips or streams)");
    options.threads = flags.threads;
    options.seed = flags.seed;

    const bool json_to_stdout = flags.json == "-";
    std::ostream& table = json_to_stdout ? std::cerr : std::cout;
    table << "device " << info.id << ": " << info.name << (info.description.empty() ? "" : " - " + info.description)
          << "\n";
    if (flags.device == "auto" && info.kind != "gpu")
        table << "no GPU in this build or on this machine: the CPU's linear-space path\n";
    table << "bench --long: " << describe_mode(options.align) << ", " << long_bench_scheme().describe()
          << ", square DNA pairs grown from the lambda genome (or seeded random DNA where it is missing: see the notes "
             "below), seed "
          << options.seed << "\n\n";

    store::JobSpec spec;
    spec.command = "bench";
    spec.algorithm = "bench-long";
    spec.devices = info.id;
    spec.threads = flags.threads;
    spec.gpu_memory_budget = options.gpu_memory_budget;
    spec.driver_version = info.driver_version;
    spec.command_line = context.command_line;
    spec.set_scheme(long_bench_scheme());
    spec.mode = std::string(to_string(options.align.mode));
    spec.parameters["long"] = "yes";
    spec.parameters["seed"] = std::to_string(flags.seed);
    std::unique_ptr<store::JobRecording> recording = flags.project.begin(spec);
    std::optional<AtomicOutput> json_out, timeline_out;
    if (!flags.json.empty() && !json_to_stdout) json_out.emplace(flags.json);
    if (!flags.timeline.empty()) timeline_out.emplace(flags.timeline);

    TimelineRecorder recorder;
    JobContext job_context;
    job_context.cancel = &interrupt_token();
    if (!flags.timeline.empty()) job_context.timeline = &recorder;
    std::optional<TerminalProgress> progress;
    job_context.progress = [&progress](const Progress& p) {
        if (progress) (*progress)(p);
    };
    bool header_printed = false;
    std::vector<std::string> notes;
    LongBenchCallbacks callbacks;
    callbacks.note = [&](const std::string& text) { notes.push_back(text); };
    callbacks.starting = [&](const std::string& label) {
        progress.reset();
        if (!header_printed) {
            print_long_header(table);
            header_printed = true;
        }
        progress.emplace("bench --long " + label, TerminalProgress::Unit::Cells);
    };
    callbacks.point = [&](const LongBenchPoint& p) {
        progress.reset();
        print_long_row(table, p);
        if (recording) {
            store::BenchPoint stored = to_store_point(to_bench_point(p));
            stored.y = p.stage1_gcups;
            stored.y_label = "stage-1 GCUPS";
            recording->add_bench_points({stored});
        }
    };
    LongBenchReport report;
    try {
        report = run_long_bench(backend, options, callbacks, job_context);
    } catch (...) {
        progress.reset();
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    table << "\n";
    for (const auto& note : notes) table << "note: " << note << "\n";
    print_long_models(table, report);
    table << "note: pairs grown from " << report.seed_genome << "\n";
    table << "note: stage-1 GCUPS = m x n / stage-1 seconds of the full run; 2-3 / 1 = its stages 2 and 3 over "
             "stage 1; peak RSS: "
          << (report.points.empty() ? std::string("-") : report.points.front().rss_measure) << "\n";
    BenchReport json_report;
    json_report.build = current_build_info();
    json_report.devices.push_back(info);
    for (const auto& p : report.points) json_report.points.push_back(to_bench_point(p));
    json_report.notes = notes;
    json_report.notes.push_back("pairs grown from " + report.seed_genome);
    return finish_bench(table, json_report, flags, json_to_stdout, json_out, timeline_out, recorder, recording.get());
}

}  // namespace

void add_bench_command(CLI::App& app, CliContext& context) {
    auto* command = app.add_subcommand(
        "bench",
        "Throughput (GCUPS, end-to-end and kernel-only) of the standard cases and of sweeps over pair length, batch "
        "size, stream count and kernel, on the GPU and the CPU SIMD backend in the same run");
    auto flags = std::make_shared<BenchFlags>();
    command->add_option("--device", flags->device, "Device under test: gpu, gpu:N, gpu:0,1, cpu, cpu-ref or auto")
        ->capture_default_str();
    command->add_option("--cpu-device", flags->cpu_device, "CPU device run beside it for comparison, or 'none'")
        ->capture_default_str();
    flags->pairs_option = command->add_option("--pairs", flags->pairs,
                                              "Pairs per standard case on a GPU [default: 1000000; --quick 20000]");
    command->add_option("--cpu-pairs", flags->cpu_pairs,
                        "Pairs per standard case on a CPU [default: scaled to about --cpu-seconds per run]");
    flags->cpu_seconds_option =
        command->add_option("--cpu-seconds", flags->cpu_seconds,
                            "Target run time when scaling CPU pair counts [default: 1; --quick 0.1]");
    flags->lengths_option =
        command
            ->add_option("--lengths", flags->length_texts,
                         "Length sweep: square protein pairs, e.g. 64,128,256 (--long: DNA pairs, e.g. "
                         "10k,100k,1M,5M) [default: 64..1024; --long: 10k,100k,1M,5M on GPUs, 10k,30k on CPUs]")
            ->delimiter(',');
    flags->batches_option = command
                                ->add_option("--batches", flags->batches,
                                             "Batch-size sweep in pairs [default: 1000, 10000, ... up to --pairs]")
                                ->delimiter(',');
    flags->streams_option =
        command
            ->add_option("--streams", flags->streams,
                         "Stream-count sweep on GPUs [default: 1,2,4,8; --long: 1,2,4 for the streams strategy]")
            ->delimiter(',')
            ->transform(strict_number<int>());
    command->add_option("--kernel", flags->kernels, "Kernel sweep: force each of these kernels")
        ->delimiter(',')
        ->transform(kernel_of_today());
    flags->repeat_option =
        command->add_option("--repeat", flags->repeat, "Timed runs per point (median reported) [default: 3; --quick 2]")
            ->transform(strict_number<int>());
    command->add_option("--threads", flags->threads, "CPU worker threads [default: all cores]")
        ->transform(strict_number<int>());
    command->add_option("--seed", flags->seed, "Seed of the synthetic sequences")->capture_default_str();
    command->add_option("--gpu-mem", flags->gpu_mem, "GPU memory budget per device, e.g. 4G");
    command->add_option("--json", flags->json, "Write the report as JSON to this file ('-': standard output)");
    command->add_option("--timeline", flags->timeline,
                        "Write the timeline of each point's last run as Chrome trace JSON to this file");
    command->add_flag("--quick", flags->quick, "A small run for CI: fewer pairs, shorter sweeps (--long: 3k and 6k)");
    command->add_flag(
        "--no-sweeps", flags->no_sweeps,
        "Standard cases only, plus any sweep given explicitly (--lengths, --batches, --streams, --kernel)");
    command->callback(
        [flags, &context] { context.action = [flags, &context] { return run_bench_command(*flags, context); }; });
    command->add_flag("--search", flags->search,
                      "Database search instead: CUDASW++4.0's workloads (mmseqs2-examples queries against DB, "
                      "DB x10, 1,000,000 x 256 synthetic) on the device and the CPU (same as `search --bench`)");
    flags->project.add_to(*command);
    command->add_flag("--long", flags->long_pair,
                      "Long-pair path instead (align --long): one DNA pair per length, without and with traceback; "
                      "stage-1 GCUPS, end-to-end time, stages 2-3 over stage 1 and peak host memory per strategy "
                      "and stream count");
    flags->strategies_option = command
                                   ->add_option("--strategies", flags->strategies,
                                                "bench --long: strategies to compare [default: strips,streams]")
                                   ->delimiter(',');
    flags->mode_option =
        command->add_option("--mode", flags->mode, "bench --long: global, local or semiglobal [default: local]");
    flags->long_flags.add_to(*command, false);
    flags->profile.add_to(*command);
}

}  // namespace alignscope::cli
