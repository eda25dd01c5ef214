// `bench`: standard cases and sweeps, measured alike on every backend, and
// parasail's own library on the pairs the CPU device ran, in the same run.
#include <alignscope/bench/bench.hpp>

#include "../device/parasail_support.hpp"

#include <alignscope/bench/verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <parasail.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <ostream>
#include <set>
#include <thread>
#include <utility>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#ifndef ALIGNSCOPE_VERSION
#define ALIGNSCOPE_VERSION "unknown"
#endif

namespace alignscope {

namespace {

std::string format_number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

std::string matrix_label(const BenchCase& c) {
    return c.matrix.empty() ? "match " + std::to_string(c.match) + "/" + std::to_string(c.mismatch) : c.matrix;
}

}  // namespace

ScoringScheme BenchCase::scheme() const {
    const SubstitutionMatrix unscaled =
        matrix.empty() ? SubstitutionMatrix::match_mismatch(match, mismatch) : SubstitutionMatrix::builtin(matrix);
    return ScoringScheme::create(unscaled, gap_open, gap_extend);
}

std::string BenchCase::describe() const {
    return std::string(to_string(alphabet)) + " " + matrix_label(*this) + " gap " + format_number(gap_open) + "/" +
           format_number(gap_extend) + " " + describe_mode(options) + " " + std::to_string(query_length) + "x" +
           std::to_string(target_length) +
           (options.traceback ? ", with traceback"
            : options.begins  ? ", score and coordinates"
                              : ", score and end positions");
}

std::vector<BenchCase> standard_bench_cases() {
    BenchCase protein;
    protein.name = "protein-300x300-local-score";
    protein.options.mode = AlignmentMode::Local;
    protein.options.traceback = false;

    // The "score-and-ends": no reverse pass for the begins.
    BenchCase protein_ends = protein;
    protein_ends.name = "protein-300x300-local-ends";
    protein_ends.options.begins = false;

    BenchCase protein_traceback = protein;
    protein_traceback.name = "protein-300x300-local-traceback";
    protein_traceback.options.traceback = true;

    BenchCase dna;
    dna.name = "dna-150x250-local-traceback";
    dna.alphabet = AlphabetKind::Dna;
    dna.matrix.clear();
    dna.match = 2;
    dna.mismatch = -3;
    dna.gap_open = 7;
    dna.gap_extend = 2;
    dna.options.mode = AlignmentMode::Local;
    dna.options.traceback = true;
    dna.query_length = 150;
    dna.target_length = 250;
    // Reads against the windows they came from: a few sequencing errors.
    dna.substitution_rate = 0.02;
    dna.indel_rate = 0.002;
    return {protein, protein_ends, protein_traceback, dna};
}

// ---------------------------------------------------------------- timing

std::optional<double> busy_seconds(const std::vector<TimelineEvent>& events, const std::string& category) {
    std::vector<std::pair<std::int64_t, std::int64_t>> intervals;
    for (const auto& e : events)
        if (e.category == category && e.end_ns >= e.start_ns) intervals.emplace_back(e.start_ns, e.end_ns);
    if (intervals.empty()) return std::nullopt;
    std::sort(intervals.begin(), intervals.end());
    std::int64_t total = 0;
    std::int64_t start = intervals.front().first, end = intervals.front().second;
    for (const auto& [s, e] : intervals) {
        if (s > end) {
            total += end - start;
            start = s;
            end = e;
        } else {
            end = std::max(end, e);
        }
    }
    total += end - start;
    return static_cast<double>(total) * 1e-9;
}

namespace {

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A pool of distinct pairs reused round-robin: a million pairs need not be a
// million sequences, and the DP does not depend on which letters it sees.
struct BenchData {
    std::vector<Sequence> queries, targets;
    std::size_t pool = 0;
};

BenchData make_data(const BenchCase& c, std::uint64_t pairs, std::uint64_t seed) {
    BenchData data;
    data.pool = static_cast<std::size_t>(std::clamp<std::uint64_t>(pairs, 1, 4096));
    SeededRandom random(seed);
    data.queries.reserve(data.pool);
    data.targets.reserve(data.pool);
    for (std::size_t k = 0; k < data.pool; ++k) {
        Sequence query, target;
        query.id = "q" + std::to_string(k);
        target.id = "t" + std::to_string(k);
        query.residues = random_residues(random, c.alphabet, c.query_length);
        std::string core = mutate_residues(random, c.alphabet, query.residues, c.substitution_rate, c.indel_rate);
        target.residues = fit_to_length(random, c.alphabet, std::move(core), c.target_length);
        data.queries.push_back(std::move(query));
        data.targets.push_back(std::move(target));
    }
    return data;
}

// The point's job: settings.pairs pairs cycling over the data's pool.
PairJob make_job(const BenchData& data, const BenchCase& bench_case, const PointSettings& settings) {
    PairJob job;
    job.queries = &data.queries;
    job.targets = &data.targets;
    job.scheme = bench_case.scheme();
    job.options = bench_case.options;
    job.threads = settings.threads;
    job.streams = settings.streams;
    job.kernel = settings.kernel;
    job.gpu_memory_budget = settings.gpu_memory_budget;
    job.pairs.reserve(static_cast<std::size_t>(settings.pairs));
    for (std::uint64_t k = 0; k < settings.pairs; ++k) {
        const auto index = static_cast<std::uint32_t>(k % data.pool);
        job.pairs.emplace_back(index, index);
    }
    return job;
}

// What the report says of a point's case and settings.
void describe_point(BenchPoint& point, const BenchCase& bench_case, const PointSettings& settings,
                    const DeviceInfo& info, std::size_t pool) {
    const bool is_cpu = info.kind == "cpu";
    auto& p = point.parameters;
    p["alphabet"] = std::string(to_string(bench_case.alphabet));
    p["matrix"] = matrix_label(bench_case);
    p["gap_open"] = format_number(bench_case.gap_open);
    p["gap_extend"] = format_number(bench_case.gap_extend);
    p["mode"] = describe_mode(bench_case.options);
    p["traceback"] = bench_case.options.traceback ? "yes" : "no";
    p["query_length"] = std::to_string(bench_case.query_length);
    p["target_length"] = std::to_string(bench_case.target_length);
    p["substitution_rate"] = format_number(bench_case.substitution_rate);
    p["indel_rate"] = format_number(bench_case.indel_rate);
    p["distinct_pairs"] = std::to_string(pool);
    p["sequences"] = "synthetic, seed " + std::to_string(settings.seed);
    p["threads"] =
        is_cpu ? (settings.threads ? std::to_string(settings.threads) : std::to_string(info.threads) + " (all)") : "-";
    p["streams"] = is_cpu ? "-" : (settings.streams ? std::to_string(settings.streams) : "default");
    p["forced_kernel"] = settings.kernel.empty() ? "automatic" : settings.kernel;
    p["repeat"] = std::to_string(settings.repeat);
    p["warmup"] = std::to_string(settings.warmup);
    p["description"] = bench_case.describe();
}

// One timed run of the job, into results kept from run to run; the
// backend's timeline goes to `recorder` when one is given.
double timed_run(Backend& backend, const PairJob& job, JobContext& context, std::vector<Alignment>& results,
                 TimelineRecorder* recorder) {
    context.throw_if_cancelled();
    context.timeline = recorder;
    const auto start = std::chrono::steady_clock::now();
    backend.align_pairs_into(job, context, results);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    context.timeline = nullptr;
    if (results.size() != job.pairs.size())
        throw Error("bench: device " + backend.info().id + " returned " + std::to_string(results.size()) +
                    " results for " + std::to_string(job.pairs.size()) + " pairs");
    return seconds;
}

// The kernels the results name, comma-separated.
std::string kernels_named(const std::vector<Alignment>& results) {
    std::set<std::string> kernels;
    for (const auto& a : results) kernels.insert(a.kernel);
    std::string out;
    for (const auto& k : kernels) {
        if (k.empty()) continue;
        if (!out.empty()) out += ",";
        out += k;
    }
    return out;
}

// What the point keeps of its last recorded run: the clock, the host stages,
// the kernels named, and the events for --timeline.
void keep_last_run(BenchPoint& point, const TimelineRecorder& recorder, const std::vector<Alignment>& results,
                   const PointSettings& settings) {
    point.clock_source = recorder.clock_source();
    point.host_seconds.clear();
    const auto events = recorder.events();
    for (const auto& e : events)
        if (e.category == "host") point.host_seconds[e.name] += static_cast<double>(e.end_ns - e.start_ns) * 1e-9;
    point.kernel = kernels_named(results);
    if (settings.timeline)
        for (const auto& e : events) settings.timeline->record(e);
}

}  // namespace

BenchPoint measure_point(Backend& backend, const BenchCase& bench_case, const PointSettings& settings) {
    if (settings.pairs == 0) throw Error("bench: a point needs at least one pair");
    if (settings.repeat < 1) throw Error("bench: --repeat must be at least 1");
    if (bench_case.query_length < 1 || bench_case.target_length < 1)
        throw Error("bench: sequence lengths must be at least 1 (got " + std::to_string(bench_case.query_length) + "x" +
                    std::to_string(bench_case.target_length) + ")");
    const DeviceInfo info = backend.info();
    const bool is_cpu = info.kind == "cpu";

    const BenchData data = make_data(bench_case, settings.pairs, settings.seed);
    const PairJob job = make_job(data, bench_case, settings);

    JobContext context;
    context.cancel = settings.cancel;
    // End to end: into a result buffer kept from run to run, as the align
    // pipeline keeps its chunks'. Each timed run writes every field of every
    // result; the warm-up leaves only storage (pages, strings' capacity). On
    // a GPU the warm-up runs as the timed runs do, with the kernels' timeline
    // on (its records dropped): the first job a timeline follows in a process
    // registers with the profiler (CUPTI; 17 ms on an H100 host), which
    // the first timed run of the first case paid before.
    std::vector<Alignment> results;
    for (int w = 0; w < settings.warmup; ++w) {
        context.throw_if_cancelled();
        TimelineRecorder dropped;
        context.timeline = is_cpu ? nullptr : &dropped;
        backend.align_pairs_into(job, context, results);
        context.timeline = nullptr;
    }

    BenchPoint point;
    point.series = bench_case.name;
    point.device = info.id;
    point.device_name = info.name;
    point.x_name = "pairs";
    point.x_value = static_cast<double>(settings.pairs);
    point.pairs = settings.pairs;
    point.cells = job.total_cells();

    // End to end first: what a user's `align` gets, with no profiler attached
    // (the kernels' timeline costs the host time on every launch and copy).
    // A CPU backend's work items say nothing about kernels, so its timeline is
    // only recorded, on the last run, when someone wants the file.
    for (int r = 0; r < settings.repeat; ++r) {
        const bool last = r + 1 == settings.repeat;
        TimelineRecorder recorder;
        const bool recorded = is_cpu && last && settings.timeline;
        point.run_seconds.push_back(timed_run(backend, job, context, results, recorded ? &recorder : nullptr));
        if (recorded) keep_last_run(point, recorder, results, settings);
    }
    // On a GPU, as many runs again with the kernels' timeline on: the
    // kernel-only time (the union of kernel intervals) and the host stages
    // come from these; their wall times are kept beside the others.
    std::vector<double> kernel_runs;
    bool every_run_has_kernels = !is_cpu;
    for (int r = 0; !is_cpu && r < settings.repeat; ++r) {
        TimelineRecorder recorder;
        point.profiled_run_seconds.push_back(timed_run(backend, job, context, results, &recorder));
        const auto busy = busy_seconds(recorder.events(), "kernel");
        if (busy) kernel_runs.push_back(*busy);
        else
            every_run_has_kernels = false;
        if (r + 1 == settings.repeat) keep_last_run(point, recorder, results, settings);
    }
    if (point.kernel.empty()) point.kernel = kernels_named(results);

    point.seconds = median(point.run_seconds);
    point.gcups_e2e = point.seconds > 0 ? static_cast<double>(point.cells) / point.seconds * 1e-9 : 0;
    if (is_cpu) {
        point.kernel_timing = "none: CPU backend, end-to-end only";
    } else if (!every_run_has_kernels) {
        point.kernel_timing = "none: the backend reported no kernel events";
    } else {
        point.kernel_seconds = median(kernel_runs);
        if (*point.kernel_seconds > 0)
            point.gcups_kernel = static_cast<double>(point.cells) / *point.kernel_seconds * 1e-9;
        point.kernel_timing =
            "union of kernel event intervals (" + point.clock_source + "), in runs of their own with the timeline on";
    }

    describe_point(point, bench_case, settings, info, data.pool);
    return point;
}

// ---------------------------------------------------------------- parasail beside

std::optional<ParasailBaseline> measure_parasail_baseline(const BenchCase& bench_case, const PointSettings& settings) {
    // What parasail's one-call sw_striped_16 answers: the score and end
    // positions of a local alignment, no begins, no traceback.
    if (bench_case.options.mode != AlignmentMode::Local || bench_case.options.traceback || bench_case.options.begins)
        return std::nullopt;
    if (settings.pairs == 0 || settings.repeat < 1) return std::nullopt;
    const ScoringScheme scheme = bench_case.scheme();
    const parasail_support::MatrixPtr matrix = parasail_support::make_matrix(scheme.matrix);
    // The same pairs measure_point aligns (same case, count and seed), as
    // parasail letters: handed over untimed, as our device gets parsed records.
    const BenchData data = make_data(bench_case, settings.pairs, settings.seed);
    auto letters = [&scheme](const std::string& residues) {
        std::string out(residues.size(), '\0');
        for (std::size_t k = 0; k < residues.size(); ++k) {
            const int index = scheme.matrix.index_of(residues[k]);
            if (index < 0) throw Error("bench: a residue the matrix does not score");
            out[k] = parasail_support::letters[static_cast<std::size_t>(index)];
        }
        return out;
    };
    std::vector<std::string> queries, targets;
    for (std::size_t k = 0; k < data.pool; ++k) {
        queries.push_back(letters(data.queries[k].residues));
        targets.push_back(letters(data.targets[k].residues));
    }

    ParasailBaseline baseline;
    baseline.threads =
        settings.threads > 0 ? settings.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    baseline.threads =
        static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(baseline.threads), settings.pairs));
    int major = 0, minor = 0, patch = 0;
    parasail_version(&major, &minor, &patch);
    baseline.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    const std::uint64_t n = settings.pairs;
    std::atomic<std::uint64_t> widened{0};
    auto run_once = [&] {
        std::atomic<std::uint64_t> next{0};
        std::atomic<bool> failed{false};
        auto work = [&] {
            constexpr std::uint64_t block = 64;
            while (!failed.load()) {
                const std::uint64_t begin = next.fetch_add(block);
                if (begin >= n) break;
                for (std::uint64_t p = begin; p < std::min(n, begin + block); ++p) {
                    const std::string& q = queries[p % data.pool];
                    const std::string& t = targets[p % data.pool];
                    const int m = static_cast<int>(q.size()), len = static_cast<int>(t.size());
                    parasail_support::ResultPtr r(parasail_sw_striped_16(q.data(), m, t.data(), len, scheme.gap_open,
                                                                         scheme.gap_extend, matrix.get()));
                    if (r && parasail_result_is_saturated(r.get())) {
                        widened.fetch_add(1, std::memory_order_relaxed);
                        r.reset(parasail_sw_striped_32(q.data(), m, t.data(), len, scheme.gap_open, scheme.gap_extend,
                                                       matrix.get()));
                    }
                    if (!r) failed.store(true);
                }
            }
        };
        const auto start = std::chrono::steady_clock::now();
        {
            std::vector<std::jthread> workers;
            for (int w = 0; w < baseline.threads; ++w) workers.emplace_back(work);
        }
        if (failed.load()) throw Error("bench: parasail failed (out of memory?)");
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    if (settings.cancel) settings.cancel->throw_if_cancelled();
    for (int w = 0; w < settings.warmup; ++w) (void)run_once();
    std::vector<double> runs;
    for (int r = 0; r < settings.repeat; ++r) {
        if (settings.cancel) settings.cancel->throw_if_cancelled();
        widened.store(0);
        runs.push_back(run_once());
    }
    baseline.widened = widened.load();
    baseline.seconds = median(runs);
    std::uint64_t cells = 0;
    for (std::uint64_t p = 0; p < n; ++p)
        cells += static_cast<std::uint64_t>(queries[p % data.pool].size()) * targets[p % data.pool].size();
    baseline.gcups = baseline.seconds > 0 ? static_cast<double>(cells) / baseline.seconds * 1e-9 : 0;
    return baseline;
}

// ---------------------------------------------------------------- the run

namespace {

std::uint64_t round_to_two_digits(double value) {
    if (value < 100) return static_cast<std::uint64_t>(std::max(1.0, std::round(value)));
    const double magnitude = std::pow(10.0, std::floor(std::log10(value)) - 1);
    return static_cast<std::uint64_t>(std::round(value / magnitude) * magnitude);
}

class BenchRun {
public:
    BenchRun(const BenchOptions& options, const BenchCallbacks& callbacks, BenchReport& report)
        : options_(options), callbacks_(callbacks), report_(report) {}

    void note(const std::string& text) {
        report_.notes.push_back(text);
        if (callbacks_.note) callbacks_.note(text);
    }

    PointSettings settings(std::uint64_t pairs) const {
        PointSettings s;
        s.pairs = pairs;
        s.repeat = options_.repeat;
        s.warmup = options_.warmup;
        s.threads = options_.threads;
        s.streams = options_.default_streams;
        s.kernel = options_.kernel;
        s.gpu_memory_budget = options_.gpu_memory_budget;
        s.seed = options_.seed;
        s.timeline = options_.timeline;
        s.cancel = options_.cancel;
        return s;
    }

    // Pairs for a case on a backend: the GPU count, or on a CPU a count scaled
    // to about cpu_seconds per run, measured on a first batch.
    std::uint64_t pairs_for(Backend& backend, const BenchCase& c) {
        const DeviceInfo info = backend.info();
        if (info.kind != "cpu") return options_.gpu_pairs;
        if (options_.cpu_pairs) return std::min(options_.cpu_pairs, options_.gpu_pairs);
        const auto key = info.id + "/" + c.name;
        if (auto found = calibrated_.find(key); found != calibrated_.end()) return found->second;

        const int threads = options_.threads ? options_.threads
                                             : (info.threads ? info.threads : int(std::thread::hardware_concurrency()));
        const std::uint64_t cells_per_pair = static_cast<std::uint64_t>(c.query_length * c.target_length);
        // About 20 M cells per worker thread per second of target run time:
        // long enough to time, short enough for the scalar reference.
        const double probe_cells = 20e6 * std::max(threads, 1) * std::min(options_.cpu_seconds, 1.0);
        const std::uint64_t probe = std::clamp<std::uint64_t>(
            static_cast<std::uint64_t>(probe_cells / static_cast<double>(std::max<std::uint64_t>(cells_per_pair, 1))),
            16, options_.gpu_pairs);
        PointSettings s = settings(probe);
        s.repeat = 1;
        s.warmup = 0;
        s.timeline = nullptr;
        const BenchPoint trial = measure_point(backend, c, s);
        const double rate = static_cast<double>(probe) / std::max(trial.seconds, 1e-6);
        const std::uint64_t pairs =
            std::clamp<std::uint64_t>(round_to_two_digits(rate * options_.cpu_seconds),
                                      std::min<std::uint64_t>(16, options_.gpu_pairs), options_.gpu_pairs);
        calibrated_[key] = pairs;
        if (pairs < options_.gpu_pairs)
            note(info.id + ": " + c.name + " scaled down to " + std::to_string(pairs) + " pairs (about " +
                 format_number(options_.cpu_seconds) + " s per run here; a GPU runs " +
                 std::to_string(options_.gpu_pairs) +
                 " in a standard case); GCUPS is per cell, so the figures compare");
        return pairs;
    }

    void add(BenchPoint point, const std::string& series, const std::string& x_name, double x_value) {
        point.series = series;
        point.x_name = x_name;
        point.x_value = x_value;
        if (callbacks_.point) callbacks_.point(point);
        report_.points.push_back(std::move(point));
    }

    // Runs one point; a backend that refuses it (Error) is noted and skipped.
    std::optional<BenchPoint> try_point(Backend& backend, const BenchCase& c, const PointSettings& s) {
        try {
            BenchPoint point = measure_point(backend, c, s);
            if (s.timeline) label_clock(point);
            return point;
        } catch (const Cancelled&) {
            throw;
        } catch (const Error& e) {
            note(backend.info().id + ": " + c.name + " skipped: " + e.what());
            return std::nullopt;
        }
    }

    void run(const std::vector<Backend*>& backends) {
        const auto standard = standard_bench_cases();
        const BenchCase& sweep_case = standard.front();

        if (options_.standard_cases) {
            for (const auto& c : standard)
                for (Backend* backend : backends) {
                    const std::uint64_t pairs = pairs_for(*backend, c);
                    auto point = try_point(*backend, c, settings(pairs));
                    if (!point) continue;
                    const BenchPoint ours = *point;
                    add(std::move(*point), c.name, "pairs", static_cast<double>(pairs));
                    if (ours.device == "cpu") note_parasail_beside(c, ours);
                }
        }

        for (std::int64_t length : options_.lengths) {
            if (length < 1) throw Error("bench: --lengths must be positive (got " + std::to_string(length) + ")");
            BenchCase c = sweep_case;
            c.name = "protein-" + std::to_string(length) + "x" + std::to_string(length) + "-local-score";
            c.query_length = c.target_length = length;
            for (Backend* backend : backends) {
                // Keep the cells of the 300x300 case on this device, with at most
                // as many pairs as a GPU runs in a standard case; on a CPU at most
                // four times its own count, as short pairs cost more than their cells.
                const std::uint64_t base = pairs_for(*backend, sweep_case);
                const double scaled = static_cast<double>(base) * 300.0 * 300.0 / double(length) / double(length);
                const std::uint64_t most =
                    backend->info().kind == "cpu" ? std::min(4 * base, options_.gpu_pairs) : options_.gpu_pairs;
                const std::uint64_t pairs =
                    std::clamp<std::uint64_t>(round_to_two_digits(scaled), 1, std::max<std::uint64_t>(most, 1));
                auto point = try_point(*backend, c, settings(pairs));
                if (point) add(std::move(*point), "length-sweep/protein-local-score", "length", double(length));
            }
        }

        for (std::uint64_t batch : options_.batches) {
            if (batch < 1) throw Error("bench: batch sizes must be positive");
            for (Backend* backend : backends) {
                const DeviceInfo info = backend->info();
                if (info.kind == "cpu") {
                    const std::uint64_t base = pairs_for(*backend, sweep_case);
                    if (batch > base) {
                        note(info.id + ": batch of " + std::to_string(batch) + " pairs skipped (over the " +
                             std::to_string(base) + " pairs this CPU runs in about " +
                             format_number(options_.cpu_seconds) + " s)");
                        continue;
                    }
                }
                auto point = try_point(*backend, sweep_case, settings(batch));
                if (point) add(std::move(*point), "batch-sweep/" + sweep_case.name, "pairs", double(batch));
            }
        }

        if (!options_.streams.empty()) {
            bool any_gpu = false;
            for (Backend* backend : backends) {
                const DeviceInfo info = backend->info();
                if (info.kind == "cpu") continue;
                any_gpu = true;
                for (int streams : options_.streams) {
                    if (streams < 1) throw Error("bench: --streams values must be at least 1");
                    PointSettings s = settings(pairs_for(*backend, sweep_case));
                    s.streams = streams;
                    auto point = try_point(*backend, sweep_case, s);
                    if (point) add(std::move(*point), "stream-sweep/" + sweep_case.name, "streams", double(streams));
                }
            }
            if (!any_gpu) note("stream sweep skipped: no GPU among the devices (CPU backends have no streams)");
        }

        // Every forced kernel on every standard case (all local affine, so a
        // kernel fits all three or none; a backend refusing one is noted).
        for (const auto& c : standard)
            for (std::size_t k = 0; k < options_.kernels.size(); ++k) {
                for (Backend* backend : backends) {
                    PointSettings s = settings(pairs_for(*backend, c));
                    s.kernel = options_.kernels[k];
                    auto point = try_point(*backend, c, s);
                    if (!point) continue;
                    if (point->kernel.empty()) point->kernel = options_.kernels[k];
                    add(std::move(*point), "kernel-sweep/" + c.name, "kernel", double(k));
                }
            }
    }

private:
    // parasail's library on the pairs the "cpu" device (parasail's kernels
    // behind our dispatch) just ran, as a note: the CPU device's yardstick.
    void note_parasail_beside(const BenchCase& c, const BenchPoint& ours) {
        // A point of a few pairs (a test's --cpu-pairs 10) is no measure to set a figure beside.
        if (ours.pairs < 1000 || ours.gcups_e2e <= 0) return;
        PointSettings s = settings(ours.pairs);
        s.timeline = nullptr;
        const std::optional<ParasailBaseline> theirs = measure_parasail_baseline(c, s);
        if (!theirs || theirs->gcups <= 0) return;
        char line[512];
        std::snprintf(line, sizeof line,
                      "parasail %s sw_striped_16 (its library in this run, on the same %llu pairs of %s, %d %s, "
                      "%llu rerun in 32-bit lanes): %.2f GCUPS beside cpu's %.2f GCUPS (%.2fx)",
                      theirs->version.c_str(), static_cast<unsigned long long>(ours.pairs), c.name.c_str(),
                      theirs->threads, theirs->threads == 1 ? "thread" : "threads",
                      static_cast<unsigned long long>(theirs->widened), theirs->gcups, ours.gcups_e2e,
                      ours.gcups_e2e / theirs->gcups);
        note(line);
    }

    // The timeline file holds every device's events but names one clock: name
    // each device's when they differ (a GPU's CUPTI beside a CPU's steady clock).
    void label_clock(const BenchPoint& point) {
        clocks_[point.device] = point.clock_source;
        std::set<std::string> distinct;
        for (const auto& [device, clock] : clocks_) distinct.insert(clock);
        std::string label;
        if (distinct.size() == 1) {
            label = *distinct.begin();
        } else {
            for (const auto& [device, clock] : clocks_)
                label += (label.empty() ? "" : ", ") + clock + " (" + device + ")";
        }
        options_.timeline->set_clock_source(label);
    }

    const BenchOptions& options_;
    const BenchCallbacks& callbacks_;
    BenchReport& report_;
    std::map<std::string, std::uint64_t> calibrated_;
    std::map<std::string, std::string> clocks_;  // device -> clock of its timeline events
};

}  // namespace

BenchReport run_bench(const std::vector<Backend*>& backends, const BenchOptions& options,
                      const BenchCallbacks& callbacks) {
    if (backends.empty()) throw Error("bench: no device to run on");
    if (options.repeat < 1) throw Error("bench: --repeat must be at least 1");
    if (options.warmup < 0) throw Error("bench: warm-up runs cannot be negative");
    if (options.gpu_pairs < 1) throw Error("bench: --pairs must be at least 1");
    if (!(options.cpu_seconds > 0)) throw Error("bench: the CPU run time must be positive");
    BenchReport report;
    report.build = current_build_info();
    for (Backend* backend : backends) report.devices.push_back(backend->info());
    BenchRun run(options, callbacks, report);
    run.note(
        "end to end: align_pairs into a result buffer the caller keeps between calls, as the align pipeline "
        "does (every field of every result written in each timed run; the warm-up, not timed, leaves only "
        "the buffer's storage, and on a GPU runs with the kernels' timeline on, as the timed runs do)");
    for (const auto& info : report.devices)
        if (info.kind == "cpu") run.note(info.id + ": CPU backend: GCUPS end-to-end only (no kernel events on a CPU)");
    run.run(backends);
    return report;
}

// ---------------------------------------------------------------- build info

namespace {

std::string first_line_value(const std::string& path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(" \t"));
        return value;
    }
    return {};
}

}  // namespace

BuildInfo current_build_info() {
    BuildInfo info;
    info.version = ALIGNSCOPE_VERSION;
#if defined(__clang__)
    info.compiler = std::string("Clang ") + __clang_version__;
#elif defined(__GNUC__)
    info.compiler = std::string("GCC ") + __VERSION__;
#elif defined(_MSC_VER)
    info.compiler = "MSVC " + std::to_string(_MSC_VER);
#else
    info.compiler = "unknown";
#endif
#ifdef NDEBUG
    info.build_type = "optimised (NDEBUG)";
#else
    info.build_type = "assertions on";
#endif
    std::string features;
    auto feature = [&features](bool on, const char* name) {
        if (!on) return;
        if (!features.empty()) features += " ";
        features += name;
    };
#ifdef __SSE4_1__
    feature(true, "sse4.1");
#endif
#ifdef __AVX2__
    feature(true, "avx2");
#endif
#ifdef __AVX512F__
    feature(true, "avx512f");
#endif
#ifdef __ARM_NEON
    feature(true, "neon");
#endif
    feature(features.empty(), "baseline");
    info.cpu_features = features + " (compiled for; parasail picks its SIMD level at run time)";
#if __has_include(<unistd.h>)
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) info.host = host;
#endif
    info.cpu_model = first_line_value("/proc/cpuinfo", "model name");
    info.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
    const std::time_t now = std::time(nullptr);
    char stamp[32] = {};
    std::tm utc{};
#if defined(_WIN32)
    gmtime_s(&utc, &now);
#else
    gmtime_r(&now, &utc);
#endif
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    info.started_utc = stamp;
    return info;
}

// ---------------------------------------------------------------- JSON

void write_bench_json(std::ostream& out, const BenchReport& report) {
    using nlohmann::json;
    auto optional_number = [](const std::optional<double>& value) { return value ? json(*value) : json(nullptr); };
    json doc;
    doc["tool"] = "alignscope-cli bench";
    doc["format"] = 1;
    doc["build"] = {{"version", report.build.version},
                    {"compiler", report.build.compiler},
                    {"build_type", report.build.build_type},
                    {"cpu_features", report.build.cpu_features},
                    {"host", report.build.host},
                    {"cpu_model", report.build.cpu_model},
                    {"hardware_threads", report.build.hardware_threads},
                    {"started_utc", report.build.started_utc}};
    doc["devices"] = json::array();
    for (const auto& d : report.devices) {
        doc["devices"].push_back(
            {{"id", d.id},
             {"kind", d.kind},
             {"name", d.name},
             {"description", d.description},
             {"threads", d.threads},
             {"sm_count", d.sm_count},
             {"memory_bytes", d.memory_bytes},
             {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
             {"driver_version", d.driver_version},
             {"runtime_version", d.runtime_version}});
    }
    doc["points"] = json::array();
    for (const auto& p : report.points) {
        doc["points"].push_back({{"series", p.series},
                                 {"device", p.device},
                                 {"device_name", p.device_name},
                                 {"kernel", p.kernel},
                                 {"x_name", p.x_name},
                                 {"x_value", p.x_value},
                                 {"pairs", p.pairs},
                                 {"cells", p.cells},
                                 {"seconds", p.seconds},
                                 {"run_seconds", p.run_seconds},
                                 {"profiled_run_seconds", p.profiled_run_seconds},
                                 {"gcups_e2e", p.gcups_e2e},
                                 {"kernel_seconds", optional_number(p.kernel_seconds)},
                                 {"gcups_kernel", optional_number(p.gcups_kernel)},
                                 {"kernel_timing", p.kernel_timing},
                                 {"host_seconds", p.host_seconds},
                                 {"parameters", p.parameters}});
    }
    doc["notes"] = report.notes;
    out << doc.dump(2) << "\n";
}

store::BenchPoint to_store_point(const BenchPoint& p) {
    const auto exact = [](double value) {
        char text[40];
        std::snprintf(text, sizeof text, "%.17g", value);
        return std::string(text);
    };
    store::BenchPoint s;
    s.series = p.series;
    s.device = p.device;
    s.x = p.x_value;
    s.y = p.gcups_e2e;
    s.x_label = p.x_name;
    s.y_label = "GCUPS";
    s.parameters = p.parameters;
    s.parameters["kernel"] = p.kernel;
    s.parameters["device_name"] = p.device_name;
    s.parameters["seconds"] = exact(p.seconds);
    s.parameters["cells"] = std::to_string(p.cells);
    s.parameters["pairs"] = std::to_string(p.pairs);
    if (p.gcups_kernel) s.parameters["gcups_kernel"] = exact(*p.gcups_kernel);
    return s;
}

}  // namespace alignscope
