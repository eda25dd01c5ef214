// bench --long (see long_bench.hpp).
#include <alignscope/bench/long_bench.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#if __has_include(<sys/resource.h>)
#include <sys/resource.h>
#define ALIGNSCOPE_HAVE_GETRUSAGE 1
#endif

namespace alignscope {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool g_peak_reset = false;

std::string exact(double value) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", value);
    return text;
}

}  // namespace

void reset_peak_rss() {
    // Linux: writing 5 to clear_refs resets the VmHWM high-water mark.
    std::ofstream clear("/proc/self/clear_refs");
    if (clear) {
        clear << "5";
        clear.close();
        g_peak_reset = static_cast<bool>(clear);
    }
}

std::uint64_t peak_rss_bytes(std::string* how) {
    if (g_peak_reset) {
        std::ifstream status("/proc/self/status");
        std::string line;
        while (std::getline(status, line))
            if (line.rfind("VmHWM:", 0) == 0) {
                if (how) *how = "VmHWM, reset per point";
                return std::stoull(line.substr(6)) * 1024;  // "VmHWM:   123456 kB"
            }
    }
#ifdef ALIGNSCOPE_HAVE_GETRUSAGE
    rusage usage{};
    if (getrusage(RUSAGE_SELF, &usage) == 0) {
        if (how) *how = "process peak (getrusage)";
        return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
    }
#endif
    if (how) *how = "not measured";
    return 0;
}

std::vector<std::int64_t> default_long_lengths(const DeviceInfo& device) {
    if (device.kind == "gpu") return {10'000, 100'000, 1'000'000, 5'000'000};
    return {10'000, 30'000};
}

ScoringScheme long_bench_scheme() { return ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -3), 5, 2); }

LongBenchReport run_long_bench(Backend& backend, const LongBenchOptions& options, const LongBenchCallbacks& callbacks,
                               const JobContext& context) {
    LongBenchReport report;
    report.device = backend.info();
    auto note = [&](const std::string& text) {
        report.notes.push_back(text);
        if (callbacks.note) callbacks.note(text);
    };
    const std::vector<std::int64_t> lengths =
        options.lengths.empty() ? default_long_lengths(report.device) : options.lengths;
    for (std::int64_t length : lengths)
        if (length < 1) throw Error::about("lengths", "every length must be at least 1");
    if (options.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    if (options.kernels < 0) throw Error("--kernels must be 0 (backend default) or positive");
    for (const std::string& s : options.strategies)
        if (s != "strips" && s != "streams")
            throw Error::about("strategies", "unknown strategy '" + s + "' (expected strips or streams)");
    for (int s : options.streams)
        if (s < 1 || s > 128) throw Error::about("streams", "every stream count must be between 1 and 128");

    const SeedGenome genome = load_seed_genome(options.seed_genome);
    report.seed_genome = genome.source;
    if (!genome.real) note("pairs grow from " + genome.source);
    const ScoringScheme scheme = long_bench_scheme();

    // The runs of a point: strategy and streams, or one CPU run.
    struct Setting {
        std::string strategy;
        int streams = 0;
    };
    std::vector<Setting> settings;
    LongRunnerSettings probe;
    probe.gpu_memory_budget = options.gpu_memory_budget;
    const bool has_runner = backend.make_long_runner(probe) != nullptr;
    if (has_runner) {
        for (const std::string& strategy : options.strategies) {
            if (strategy == "streams" && !options.streams.empty()) {
                for (int s : options.streams) settings.push_back({strategy, s});
            } else {
                settings.push_back({strategy, 0});
            }
        }
        if (settings.empty()) throw Error::about("strategies", "nothing to run");
    } else {
        settings.push_back({"linear-space", 0});
        note(report.device.id +
             " has no long-pair runner: Myers-Miller in linear space on one core; "
             "'stage 1' is the run without traceback, 'stages 2-3' the rest of the full run");
    }

    for (std::int64_t length : lengths) {
        context.throw_if_cancelled();
        const LongPair pair =
            generate_long_pair(options.seed + static_cast<std::uint64_t>(length), genome.residues, length, length);
        for (const Setting& setting : settings) {
            LongRunnerSettings runner;
            runner.strategy = has_runner ? setting.strategy : "";
            runner.streams = setting.streams;
            runner.kernels = options.kernels;
            runner.gpu_memory_budget = options.gpu_memory_budget;
            runner.kernel = options.kernel;
            longpair::LongPairOptions lp;
            lp.align = options.align;
            lp.threads = options.threads;
            if (options.special_row_budget) lp.special_row_budget = options.special_row_budget;

            LongBenchPoint p;
            p.length = length;
            p.strategy = setting.strategy;
            p.streams = setting.streams;
            p.device = report.device.id;
            p.device_name = report.device.name;
            p.mode = describe_mode(options.align);
            p.cells = static_cast<std::uint64_t>(length) * static_cast<std::uint64_t>(length);
            const std::string label = format_length(length) + " " + setting.strategy +
                                      (setting.streams ? " s=" + std::to_string(setting.streams) : "");
            reset_peak_rss();

            if (callbacks.starting) callbacks.starting(label + ": without traceback");
            lp.align.traceback = false;
            auto t0 = Clock::now();
            const Alignment score_only = longpair::align_long_on(backend, pair.query, pair.target, scheme, lp, runner,
                                                                 context, &p.score_only_stats);
            p.score_only_seconds = seconds_since(t0);

            if (callbacks.starting) callbacks.starting(label + ": full alignment");
            lp.align.traceback = true;
            t0 = Clock::now();
            const Alignment full =
                longpair::align_long_on(backend, pair.query, pair.target, scheme, lp, runner, context, &p.full_stats);
            p.full_seconds = seconds_since(t0);
            if (full.score != score_only.score)
                throw Error("bench --long: the runs with and without traceback disagree on the score (" +
                            std::to_string(full.score) + " vs " + std::to_string(score_only.score) + ") at length " +
                            std::to_string(length));
            p.peak_rss_bytes = peak_rss_bytes(&p.rss_measure);
            p.score = full.score;
            p.kernel = full.kernel;
            if (has_runner) {
                p.stage1_seconds = p.full_stats.stage_seconds[0];
                p.later_seconds = p.full_stats.stage_seconds[1] + p.full_stats.stage_seconds[2];
            } else {
                p.stage1_seconds = p.score_only_seconds;
                p.later_seconds = std::max(0.0, p.full_seconds - p.score_only_seconds);
            }
            p.stage1_gcups = p.stage1_seconds > 0 ? static_cast<double>(p.cells) / p.stage1_seconds / 1e9 : 0;
            p.later_ratio = p.stage1_seconds > 0 ? p.later_seconds / p.stage1_seconds : 0;
            report.points.push_back(p);
            if (callbacks.point) callbacks.point(p);
        }
    }
    return report;
}

BenchPoint to_bench_point(const LongBenchPoint& p) {
    BenchPoint b;
    b.series = "long/" + p.strategy + (p.streams ? "/s" + std::to_string(p.streams) : "");
    b.device = p.device;
    b.device_name = p.device_name;
    b.kernel = p.kernel;
    b.x_name = "length";
    b.x_value = static_cast<double>(p.length);
    b.pairs = 1;
    b.cells = p.cells;
    b.seconds = p.full_seconds;
    b.run_seconds = {p.full_seconds};
    b.gcups_e2e = p.full_seconds > 0 ? static_cast<double>(p.cells) / p.full_seconds / 1e9 : 0;
    b.kernel_seconds = p.stage1_seconds;
    b.gcups_kernel = p.stage1_gcups;
    b.kernel_timing = "stage 1 of the long-pair pipeline (its own clock)";
    b.parameters["strategy"] = p.strategy;
    b.parameters["streams"] = std::to_string(p.streams);
    b.parameters["length"] = std::to_string(p.length);
    b.parameters["mode"] = p.mode;
    b.parameters["score"] = std::to_string(p.score);
    b.parameters["stage1_seconds"] = exact(p.stage1_seconds);
    b.parameters["stage1_gcups"] = exact(p.stage1_gcups);
    b.parameters["score_only_seconds"] = exact(p.score_only_seconds);
    b.parameters["later_seconds"] = exact(p.later_seconds);
    b.parameters["later_over_stage1"] = exact(p.later_ratio);
    b.parameters["peak_rss_bytes"] = std::to_string(p.peak_rss_bytes);
    b.parameters["rss_measure"] = p.rss_measure;
    for (int s = 0; s < 3; ++s) {
        b.parameters["stage" + std::to_string(s + 1) + "_full_seconds"] = exact(p.full_stats.stage_seconds[s]);
        b.parameters["stage" + std::to_string(s + 1) + "_full_cells"] = std::to_string(p.full_stats.stage_cells[s]);
    }
    b.parameters["special_rows"] = std::to_string(p.full_stats.special_rows);
    b.parameters["crossings"] = std::to_string(p.full_stats.crossings);
    b.parameters["split_levels"] = std::to_string(p.full_stats.split_levels);
    b.parameters["scheme"] = "match 1/-3 gap 5/2 (CUDAlign)";
    return b;
}

}  // namespace alignscope
