// `alignscope-cli search -q QUERIES -d DATABASE`: every query against every
// database sequence (score-only scan on the chosen device), the K best hits
// per query aligned in full, with bit scores and E-values where published
// Karlin-Altschul parameters exist. Also `search --verify` (the scanner
// against the CPU over whole databases) and `search --bench` (CUDASW++4.0's
// three workloads). Under mpirun (a build with MPI) every rank searches a
// slice of the database and rank 0 merges the hits and writes the outputs.
//
// Defaults differ from `align` on purpose: local mode, and gap penalties that
// BLAST publishes statistics for (the matrix's BLAST default, e.g. BLOSUM62
// open 12 / extend 1 = BLAST 11/1), so that E-values exist out of the box.
#include "cli_commands.hpp"
#include "cli_exit.hpp"
#include "cli_gpu_teardown.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"
#include "cli_project_flag.hpp"

#include <alignscope/align/long_pass.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/search/bench_search.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/search/search_settings.hpp>
#include <alignscope/search/verify_search.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/search_scanners.hpp>
#endif
#ifdef ALIGNSCOPE_WITH_MPI
#include <alignscope/mpi/distributed_search.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <future>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

#ifdef __linux__
#include <unistd.h>
#endif

namespace alignscope::cli {
namespace {

// When this file's statics were made: after the dynamic loader, before main().
const std::chrono::steady_clock::time_point process_started = std::chrono::steady_clock::now();

// Seconds from the process's start (exec) to now, from the kernel's start
// time of the process (in clock ticks, 10 ms apart); -1 where unknown.
double seconds_since_exec() {
#ifdef __linux__
    std::FILE* file = std::fopen("/proc/self/stat", "r");
    if (!file) return -1;
    char text[1024];
    const std::size_t length = std::fread(text, 1, sizeof text - 1, file);
    std::fclose(file);
    text[length] = 0;
    // Field 22 (starttime) counts from the field after the command's ')'.
    const char* at = std::strrchr(text, ')');
    if (!at) return -1;
    unsigned long long start_ticks = 0;
    if (std::sscanf(at + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                    &start_ticks) != 1)
        return -1;
    timespec now{};
    if (::clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
    const long ticks = ::sysconf(_SC_CLK_TCK);
    if (ticks <= 0) return -1;
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9 -
           static_cast<double>(start_ticks) / static_cast<double>(ticks);
#else
    return -1;
#endif
}
// The process's life before this file's statics: the dynamic loader, the
// libraries' and the CUDA runtime's static registrations.
const double before_statics = seconds_since_exec();

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct SearchFlags {
    std::string query_path, database_path;
    std::size_t top = 10;
    std::optional<double> min_score;
    std::optional<double> max_evalue;
    std::string format = "tsv";
    std::string output = "-";
    bool no_traceback = false;
    std::string db_cache;  // directory, or "off"
    std::size_t query_batch = 0;
    bool quiet = false;
    bool stats = false;
    ScoringFlags scoring;
    DeviceFlags device;
    // --verify
    bool verify = false;
    std::uint64_t seed = 1;
    std::size_t verify_queries = 24;
    std::size_t verify_sequences = 2000;
    std::size_t real_queries = 0, real_sequences = 0;
    bool no_random = false;
    std::string reference = "cpu";
    std::string verify_mode;  // --mode given with --verify: only that mode's cases
    // --bench
    bool bench = false;
    std::vector<std::string> bench_devices;
    std::vector<std::string> bench_cases;
    int repeat = 3;
    double cpu_seconds = 10;
    std::size_t bench_queries = 0;
    std::size_t synthetic_sequences = 1'000'000;
    bool quick = false;
    std::string json;
    ProjectFlag project;
};

ScoringScheme search_scheme(const SearchFlags& flags, AlphabetKind alphabet, std::string& note) {
    ScoringFlags scoring = flags.scoring;
    if (!scoring.gap_open && !scoring.gap_extend) {
        const GapCosts gaps = default_search_gaps(scoring.matrix, scoring.match, scoring.mismatch, alphabet, &note);
        scoring.gap_open = gaps.open;
        scoring.gap_extend = gaps.extend;
    }
    return scoring.scheme(alphabet);
}

int run_verify(const SearchFlags& flags) {
    const auto registry = scanner_registry();
    SearchVerifyOptions options;
    options.device = flags.device.device;
    options.reference = flags.reference;
    options.top = flags.top;
    options.seed = flags.seed;
    options.random_queries = flags.verify_queries;
    options.random_sequences = flags.verify_sequences;
    options.random_cases = !flags.no_random;
    if (!flags.verify_mode.empty()) options.modes = {parse_mode(flags.verify_mode)};
    options.real_free_ends = FreeEndGaps::parse(flags.scoring.free_ends);
    options.query_path = flags.query_path;
    options.database_path = flags.database_path;
    // Real data is checked under the scheme search itself would use: the
    // user's --matrix/--match/--mismatch and gaps, or search's defaults.
    options.real_scheme = [&flags](AlphabetKind alphabet) {
        std::string note;
        return search_scheme(flags, alphabet, note);
    };
    options.real_queries = flags.real_queries;
    options.real_sequences = flags.real_sequences;
    if (flags.db_cache != "off") options.database_cache_directory = flags.db_cache;
    if (flags.device.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    options.threads = flags.device.threads;
    options.streams = flags.device.streams;
    options.gpu_memory_budget = flags.device.gpu_memory_bytes();
    (void)registry->resolve(options.reference, "--reference");  // an unknown one blamed on its own flag
    SearchVerifyCallbacks callbacks;
    callbacks.mismatch = [](const std::string& line) { std::cout << "MISMATCH " << line << '\n'; };
    callbacks.case_done = [](const SearchVerifyCase& c) {
        if (c.skipped) {
            std::cout << "SKIPPED " << c.name << ": " << c.skip_reason << '\n';
            return;
        }
        char text[512];
        std::snprintf(text, sizeof text,
                      "%s %s: %llu queries x %llu sequences, %llu scores compared, %llu differ, %llu queries failed, "
                      "%llu/%llu spot checks failed, %llu rescored at 32 bits, %.2f s tested (%s), %.2f s reference",
                      c.passed() ? "PASS" : "FAIL", c.name.c_str(), static_cast<unsigned long long>(c.queries),
                      static_cast<unsigned long long>(c.sequences), static_cast<unsigned long long>(c.scores_compared),
                      static_cast<unsigned long long>(c.score_mismatches),
                      static_cast<unsigned long long>(c.queries_failed), static_cast<unsigned long long>(c.spot_failed),
                      static_cast<unsigned long long>(c.spot_checked), static_cast<unsigned long long>(c.recomputed),
                      c.tested_seconds, c.tested_kernels.c_str(), c.reference_seconds);
        std::cout << text << '\n' << std::flush;
    };
    JobContext context;
    context.cancel = &interrupt_token();
    const SearchVerifySummary summary = verify_search(*registry, options, callbacks, context);
    std::size_t failed = 0, skipped = 0;
    for (const SearchVerifyCase& c : summary.cases) {
        failed += c.passed() ? 0 : 1;
        skipped += c.skipped ? 1 : 0;
    }
    std::cout << summary.cases.size() - failed - skipped << " cases passed, " << failed << " failed, " << skipped
              << " skipped (" << summary.tested_device << " against " << summary.reference_device << ")\n";
    return failed ? 1 : 0;
}

int run_bench(const SearchFlags& flags, CliContext& context) {
    const auto registry = scanner_registry();
    SearchBenchOptions options;
    if (!flags.bench_devices.empty()) options.devices = flags.bench_devices;
    else {
        options.devices = {flags.device.device};
        // Always measure the CPU SIMD scanner beside the chosen device.
        const auto ids = registry->resolve(flags.device.device);
        if (!(ids.size() == 1 && ids.front() == "cpu")) options.devices.push_back("cpu");
    }
    options.cases = flags.bench_cases;
    if (!flags.query_path.empty()) options.query_path = flags.query_path;
    if (!flags.database_path.empty()) options.database_path = flags.database_path;
    options.max_queries = flags.bench_queries;
    options.synthetic_sequences = flags.synthetic_sequences;
    options.repeat = flags.repeat;
    options.cpu_seconds = flags.cpu_seconds;
    options.top = flags.top;
    options.query_batch = flags.query_batch;
    if (flags.quick) {
        options.repeat = 1;
        options.warmup = 0;
        options.cpu_seconds = std::min(options.cpu_seconds, 2.0);
        if (flags.synthetic_sequences == 1'000'000) options.synthetic_sequences = 20'000;
        if (!flags.bench_queries) options.max_queries = 20;
    }
    if (flags.device.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    options.threads = flags.device.threads;
    options.streams = flags.device.streams;
    options.gpu_memory_budget = flags.device.gpu_memory_bytes();
    options.seed = flags.seed;
    options.mode = parse_mode(flags.scoring.mode);
    options.free_ends = FreeEndGaps::parse(flags.scoring.free_ends);
    options.cancel = &interrupt_token();
    std::optional<AtomicOutput> json;
    if (!flags.json.empty()) json.emplace(flags.json);
    SearchBenchCallbacks callbacks;
    callbacks.note = [](const std::string& text) { std::cerr << "search --bench: " << text << '\n'; };
    callbacks.point = [](const SearchBenchPoint& p) {
        std::cerr << "search --bench: " << p.case_name << " on " << p.device << ": " << p.gcups_scan << " GCUPS\n";
    };
    const SearchBenchReport report = run_search_bench(*registry, context.registry.get(), options, callbacks);
    write_search_bench_table(std::cout, report);
    if (json) {
        write_search_bench_json(json->stream(), report);
        json->commit();
    }
    return report.points.empty() ? 2 : 0;
}

// The flags of a plain search that only make sense together; the output format.
OutputFormat check_search_flags(const SearchFlags& flags) {
    if (flags.query_path.empty()) throw Error("search: -q/--queries is required");
    if (flags.database_path.empty()) throw Error("search: -d/--database is required");
    refuse_overlapping_files(
        {{"-q", flags.query_path}, {"-d", flags.database_path}, {"--matrix", flags.scoring.matrix}},
        {{"-o", flags.output}, {"--timeline", flags.device.timeline}, {"--project", flags.project.path}});
    if (flags.top == 0) throw Error("--top must be at least 1");
    if (flags.max_evalue && !(*flags.max_evalue > 0 && std::isfinite(*flags.max_evalue)))
        throw Error("--evalue must be a positive number");
    if (flags.device.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    if (flags.device.streams < 0 || flags.device.streams > 64) throw Error("--streams must be between 1 and 64");
    const OutputFormat format = parse_output_format(flags.format);
    if (format == OutputFormat::Sam) throw Error("--format sam is not offered by search; use tsv, json or pair");
    if (format == OutputFormat::Pair && flags.no_traceback)
        throw Error("--format pair shows alignments; drop --no-traceback or use tsv/json");
    return format;
}

// The queries and the prepared database (from its cache when it has one), of
// one alphabet kind.
struct SearchInputs {
    SequenceSet queries;
    PreparedDatabaseLoad load;
};

// The queries, with their warnings: read before anything else, so that a bad
// query file is reported before the database is touched.
SequenceSet read_search_queries(const SearchFlags& flags) {
    ReadOptions read_options;
    read_options.alphabet = flags.scoring.alphabet_override();
    SequenceSet queries = read_sequences(flags.query_path, read_options);
    if (const std::string warning = queries.duplicate_id_warning(); !warning.empty())
        std::cerr << "alignscope-cli: warning: " << warning << '\n';
    if (queries.records.empty()) throw Error(flags.query_path + ": no sequences");
    return queries;
}

// The database beside the queries already read (the same alphabet kind, or an error).
SearchInputs read_search_database(const SearchFlags& flags, SequenceSet queries,
                                  const std::function<void(const std::string&)>& say) {
    SearchInputs in;
    in.queries = std::move(queries);
    DatabaseCacheOptions cache;
    cache.enabled = flags.db_cache != "off";
    if (cache.enabled) cache.directory = flags.db_cache;
    cache.alphabet = flags.scoring.alphabet_override();
    TerminalProgress parse_progress("reading database");
    in.load = prepare_database(flags.database_path, cache, [&](std::uint64_t done, std::uint64_t total) {
        interrupt_token().throw_if_cancelled();
        Progress p;
        p.cells_done = done;
        p.cells_total = total;
        parse_progress(p);
    });
    parse_progress.finish();
    if (in.load.outcome == CacheOutcome::Rebuilt || in.load.outcome == CacheOutcome::Unwritable)
        say("search: " + in.load.reason);
    if (!in.load.duplicate_ids.empty() && flags.database_path != flags.query_path)
        std::cerr << "alignscope-cli: warning: " << in.load.duplicate_ids << '\n';
    const AlphabetKind database_alphabet = in.load.database.alphabet;
    if ((in.queries.alphabet != AlphabetKind::Protein) != (database_alphabet != AlphabetKind::Protein))
        throw Error(flags.query_path + " holds " + std::string(to_string(in.queries.alphabet)) + " but " +
                    flags.database_path + " holds " + std::string(to_string(database_alphabet)) +
                    " sequences (use --alphabet to override detection)");
    return in;
}

SearchInputs read_search_inputs(const SearchFlags& flags, const std::function<void(const std::string&)>& say) {
    return read_search_database(flags, read_search_queries(flags), say);
}

// The project keeps the queries and the database as a sequence set in file
// order, so that it (and the window) can show the hits' alignments without
// the FASTA.
void record_search_inputs(store::JobRecording& recording, const SequenceSet& queries, const PreparedDatabase& database,
                          const std::string& database_path) {
    recording.add_input(queries, "query");
    SequenceSet database_set;
    database_set.path = database_path;
    database_set.alphabet = database.alphabet;
    std::vector<std::size_t> positions(database.size());
    std::iota(positions.begin(), positions.end(), std::size_t{0});
    std::sort(positions.begin(), positions.end(),
              [&](std::size_t a, std::size_t b) { return database.file_index[a] < database.file_index[b]; });
    database_set.records.reserve(positions.size());
    for (std::size_t position : positions) database_set.records.push_back(database.sequence(position));
    recording.add_input(database_set, "database");
}

// Each query's hits, as they come: to the output file and to the project.
SearchCallbacks hit_callbacks(AlignmentWriter& writer, const SequenceSet& queries, const PreparedDatabase& database,
                              store::JobRecording* recording) {
    SearchCallbacks callbacks;
    callbacks.note = [](const std::string&) {};
    callbacks.query_done = [&writer, &queries, &database, recording](const QueryHits& hits) {
        const Sequence& query = queries.records[hits.query_index];
        for (const SearchHit& hit : hits.hits) {
            AlignmentExtras extras;
            extras.rank = hit.rank;
            extras.bits = hit.bits;
            extras.evalue = hit.evalue;
            extras.db_size = database.residue_count();
            const Sequence target = database.sequence(hit.position);
            writer.write(hit.alignment, query, target, extras);
        }
        if (!recording) return;
        std::vector<store::Hit> rows;
        std::vector<Alignment> alignments;
        for (const SearchHit& hit : hits.hits) {
            rows.push_back(to_store_hit(hit));
            if (hit.alignment.has_traceback()) alignments.push_back(hit.alignment);
        }
        recording->add_hits(rows);
        if (!alignments.empty()) recording->add_alignments(alignments);
    };
    return callbacks;
}

// The closing line on stderr: sizes, hits, and where the time went.
void print_search_summary(const SearchSummary& summary, CacheOutcome cache) {
    char text[512];
    std::snprintf(text, sizeof text,
                  "search: %llu queries x %llu sequences (%llu residues, cache %s), %llu hits; scan %.3f s on %s "
                  "(%.1f GCUPS), traceback %.3f s on %s",
                  static_cast<unsigned long long>(summary.queries),
                  static_cast<unsigned long long>(summary.database_sequences),
                  static_cast<unsigned long long>(summary.database_residues), std::string(to_string(cache)).c_str(),
                  static_cast<unsigned long long>(summary.hits), summary.scan_seconds, summary.scan_device.c_str(),
                  summary.scan_seconds > 0 ? static_cast<double>(summary.cells) / summary.scan_seconds / 1e9 : 0.0,
                  summary.traceback_seconds, summary.traceback_device.empty() ? "-" : summary.traceback_device.c_str());
    std::cerr << text << '\n';
}

// The scan and traceback with every output open: the hits file, the timeline
// and the project's rows; each file is committed only when the search ends well.
SearchSummary scan_and_write(const SearchFlags& flags, CliContext& context, const SearchInputs& in, OutputFormat format,
                             const ScanSetup& setup, DatabaseScanner& scanner, Backend* aligner,
                             const SearchOptions& search, store::JobRecording* recording) {
    const PreparedDatabase& database = in.load.database;
    if (recording) record_search_inputs(*recording, in.queries, database, flags.database_path);
    AtomicOutput out(flags.output);
    std::optional<AtomicOutput> timeline_out;
    if (!flags.device.timeline.empty()) timeline_out.emplace(flags.device.timeline);
    TimelineRecorder timeline;

    WriterContext writer_context;
    writer_context.command_line = context.command_line;
    writer_context.scheme = setup.scheme;
    auto writer = AlignmentWriter::create(format, out.stream(), std::move(writer_context));
    writer->begin();

    TerminalProgress progress("search");
    JobContext job;
    job.cancel = &interrupt_token();
    job.timeline = &timeline;
    auto record_progress = recording ? recording->progress_callback() : std::function<void(const Progress&)>{};
    job.progress = [&progress, &record_progress](const Progress& p) {
        progress(p);
        if (record_progress) record_progress(p);
    };
    const SearchSummary summary =
        run_search(in.queries.records, database, setup.scheme, setup.options, scanner, aligner, search,
                   hit_callbacks(*writer, in.queries, database, recording), job, flags.device.threads,
                   flags.device.streams, flags.device.gpu_memory_bytes());
    progress.finish();
    writer->end();
    if (timeline_out) write_chrome_trace(timeline_out->stream(), timeline.events(), timeline.clock_source());
    commit_together({&out, timeline_out ? &*timeline_out : nullptr});
    if (recording) {
        recording->add_timeline(timeline.events(), timeline.clock_source());
        recording->finish_done();
    }
    return summary;
}

// The devices of a search, made on a thread of their own while the database
// (its cache, or the FASTA) is read: the scheme (from the queries' alphabet),
// device discovery, the scanner and the pairwise backend, and each chosen GPU's
// context and streams started, every GPU at once (a fifth of a second each).
struct SearchDevices {
    ScanSetup setup;
    std::string scheme_note, device_note;
    bool scheme_made = false;
    // The first error, raised by the caller where a serial search raises it
    // (after the database's own errors, the scheme's before its note).
    std::exception_ptr failure;
    std::unique_ptr<ScannerRegistry> registry;
    std::unique_ptr<DatabaseScanner> scanner;
    Backend* aligner = nullptr;
    std::vector<std::future<double>> warm_ups;  // each GPU's start-up, in seconds
    double seconds = 0;                         // from the thread's start to the scanner made
    double registry_seconds = 0;                // of which the scanners' registry (the driver's start)
};

// Each GPU of `spec` started on a thread of its own. Only a head start: a GPU
// that fails here fails again, with its own message, when the scan loads.
void start_gpus(SearchDevices& d, CliContext& context, const std::string& spec) {
    for (const std::string& id : d.registry->resolve(spec)) {
        if (id.rfind("gpu", 0) != 0) continue;
        Backend* backend = nullptr;
        try {
            backend = &context.registry->select(id);
        } catch (const std::exception&) {
            continue;
        }
        d.warm_ups.push_back(std::async(std::launch::async, [backend] {
            const auto start = std::chrono::steady_clock::now();
            try {
                backend->warm_up();
            } catch (...) {
            }
            return seconds_since(start);
        }));
    }
}

SearchDevices make_search_devices(const SearchFlags& flags, CliContext& context, const AlignOptions& options,
                                  AlphabetKind alphabet) {
    const auto start = std::chrono::steady_clock::now();
    SearchDevices d;
    try {
        d.setup.options = options;
        d.setup.scheme = search_scheme(flags, alphabet, d.scheme_note);
        d.scheme_made = true;
        const auto registry_start = std::chrono::steady_clock::now();
        d.registry = scanner_registry();
        d.registry_seconds = seconds_since(registry_start);
        const std::string spec =
            choose_scan_device(*d.registry, flags.device.device, d.setup, &d.device_note, "--device");
        d.scanner = d.registry->create(spec);
        if (!flags.no_traceback) d.aligner = &context.registry->select(spec);
        start_gpus(d, context, spec);
    } catch (...) {
        d.failure = std::current_exception();
    }
    d.seconds = seconds_since(start);
    return d;
}

// The pairwise backend once the GPUs' start-up is over: the traceback never
// runs beside a warm-up of the same device.
class AfterWarmUp final : public Backend {
public:
    AfterWarmUp(Backend& backend, const std::vector<std::future<double>>& warm_ups)
        : backend_(backend), warm_ups_(warm_ups) {}
    DeviceInfo info() const override { return backend_.info(); }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        for (const std::future<double>& w : warm_ups_) w.wait();
        return backend_.align_pairs(job, context);
    }
    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override {
        for (const std::future<double>& w : warm_ups_) w.wait();
        backend_.align_pairs_into(job, context, results);
    }
    void warm_up() override { backend_.warm_up(); }
    std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings& settings) override {
        return backend_.make_long_runner(settings);
    }

private:
    Backend& backend_;
    const std::vector<std::future<double>>& warm_ups_;
};

// The ranks of an mpirun, from the environment mpirun sets (no MPI call).
int ranks_from_environment() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
        if (const char* size = std::getenv(name)) return std::atoi(size);
    return 1;
}

#ifdef ALIGNSCOPE_WITH_MPI

// One rank's scanner and aligner. Several ranks on one host share its GPUs:
// the k-th rank of a host takes its GPU k (modulo their number) when --device
// names all GPUs (gpu, auto).
struct RankDevices {
    std::unique_ptr<ScannerRegistry> registry;
    std::unique_ptr<DatabaseScanner> scanner;
    Backend* aligner = nullptr;
};
RankDevices open_rank_devices(const SearchFlags& flags, CliContext& context, const ScanSetup& setup,
                              const mpi::World& world, bool traceback, std::string* note) {
    RankDevices d;
    d.registry = scanner_registry();
    std::string device = flags.device.device;
    if (device == "gpu" || device == "auto") {
        int gpus = 0;
        for (const DeviceInfo& info : d.registry->devices())
            if (info.kind == "gpu" && info.available && info.id.rfind("gpu:", 0) == 0) ++gpus;
        if (gpus > 0) device = "gpu:" + std::to_string(world.local_rank() % gpus);
    }
    const std::string spec = choose_scan_device(*d.registry, device, setup, note, "--device");
    d.scanner = d.registry->create(spec);
    if (traceback) d.aligner = &context.registry->select(spec);
    return d;
}

// This rank's slice searched with rank 0's settings; each query's hits go to
// `add` (with the scan kernels of its batch), and `batch_done` follows each
// batch of queries.
SearchSummary search_slice(const SearchFlags& flags, const mpi::SearchJob& job, const PreparedDatabase& slice,
                           RankDevices& d, const CancellationToken* cancel,
                           const std::function<void(const QueryHits&, const std::string&)>& add,
                           const std::function<void()>& batch_done) {
    if (slice.empty()) {  // fewer database sequences than ranks: no hits here
        SearchSummary none;
        none.scan_device = d.scanner->info().id;
        for (std::size_t q = 0; q < job.queries.size(); ++q) {
            QueryHits hits;
            hits.query_index = q;
            add(hits, "");
        }
        batch_done();
        return none;
    }
    SearchCallbacks callbacks;
    callbacks.query_done = [&](const QueryHits& hits) { add(hits, d.scanner->last_stats().kernels); };
    JobContext context;
    context.cancel = cancel;
    std::uint64_t batches_done = 0;
    context.progress = [&](const Progress& p) {
        if (p.items_done != batches_done) {
            batches_done = p.items_done;
            batch_done();
        }
    };
    return run_search(job.queries, slice, job.scheme, job.options, *d.scanner, d.aligner, job.search, callbacks,
                      context, flags.device.threads, flags.device.streams, flags.device.gpu_memory_bytes());
}

// Ranks 1..N-1: the job and a slice from rank 0, the hits back to it.
void run_search_rank(const SearchFlags& flags, CliContext& context, const mpi::World& world) {
    std::optional<mpi::RankSearch> rank;
    try {
        rank = mpi::receive_search_job(world);
        if (!rank) return;  // rank 0 could not start and says why
    } catch (const std::exception& e) {
        mpi::RemoteHits(world, true).report_error(e.what());
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // rank 0 ends the run
    }
    mpi::RemoteHits remote(world, rank->job.search.traceback);
    try {
        ScanSetup setup;
        setup.scheme = rank->job.scheme;
        setup.options = rank->job.options;
        RankDevices d = open_rank_devices(flags, context, setup, world, rank->job.search.traceback, nullptr);
        const SearchSummary summary = search_slice(
            flags, rank->job, rank->slice, d, &interrupt_token(),
            [&](const QueryHits& hits, const std::string& kernels) { remote.add(hits, kernels); },
            [&] { remote.flush(); });
        remote.finish(summary);
    } catch (const Cancelled&) {
        std::_Exit(130);  // mpirun passed Ctrl-C on; rank 0 stops too
    } catch (const std::exception& e) {
        remote.report_error(e.what());
        while (true) std::this_thread::sleep_for(std::chrono::seconds(1));  // rank 0 names us and ends the run
    }
}

// Rank 0 once the job is out: its own slice on a thread of its own, every
// rank's hits merged into the outputs (committed only when all went well).
SearchSummary collect_and_write(const SearchFlags& flags, CliContext& context, const SearchInputs& in,
                                OutputFormat format, const mpi::SearchJob& job, RankDevices& d, const mpi::World& world,
                                store::JobRecording* recording) {
    const PreparedDatabase& database = in.load.database;
    if (recording) record_search_inputs(*recording, in.queries, database, flags.database_path);
    std::optional<AtomicOutput> out(std::in_place, flags.output);
    WriterContext writer_context;
    writer_context.command_line = context.command_line;
    writer_context.scheme = job.scheme;
    auto writer = AlignmentWriter::create(format, out->stream(), std::move(writer_context));
    writer->begin();

    CancellationToken stop_local;
    mpi::LocalHits local;
    const PreparedDatabase slice = mpi::database_slice(database, 0, world.size());
    std::thread worker([&] {
        try {
            local.finish(search_slice(
                flags, job, slice, d, &stop_local,
                [&](const QueryHits& hits, const std::string& kernels) { local.add(hits, kernels); }, [] {}));
        } catch (...) {
            local.fail(std::current_exception());
        }
    });

    TerminalProgress progress("search");
    auto record_progress = recording ? recording->progress_callback() : std::function<void(const Progress&)>{};
    Progress whole;
    whole.items_total = in.queries.records.size();
    for (const Sequence& q : in.queries.records) whole.cells_total += q.residues.size() * database.residue_count();
    const SearchCallbacks write = hit_callbacks(*writer, in.queries, database, recording);
    SearchSummary summary;
    try {
        summary = mpi::collect_search_hits(
            world, job, database, local,
            [&](const QueryHits& hits) {
                write.query_done(hits);
                whole.items_done = hits.query_index + 1;
                whole.cells_done += in.queries.records[hits.query_index].residues.size() * database.residue_count();
                progress(whole);
                if (record_progress) record_progress(whole);
            },
            &interrupt_token());
    } catch (...) {
        // The temporary output goes first: when a rank died, mpirun follows
        // its SIGTERM with SIGKILL before long.
        writer.reset();
        out.reset();
        stop_local.cancel();
        worker.join();
        progress.finish();
        throw;
    }
    worker.join();
    progress.finish();
    writer->end();
    out->commit();
    if (recording) recording->finish_done();
    return summary;
}

int run_distributed_search(const SearchFlags& flags, CliContext& context) {
    const auto start = std::chrono::steady_clock::now();
    mpi::World world;
    if (world.rank() != 0) {
        run_search_rank(flags, context, world);
        return 0;
    }
    auto say = [&](const std::string& text) {
        if (!flags.quiet) std::cerr << text << '\n';
    };
    // Rank 0 reads and checks everything before any rank starts.
    OutputFormat format = OutputFormat::Tsv;
    std::optional<SearchInputs> in;
    mpi::SearchJob job;
    RankDevices d;
    ScanSetup setup;
    try {
        if (!flags.device.timeline.empty())
            throw Error("--timeline: one process's kernels only; run without mpirun to record a timeline");
        if (flags.stats) throw Error("--stats: one process's stages only; run without mpirun");
        format = check_search_flags(flags);
        setup.options = flags.scoring.align_options();
        in.emplace(read_search_inputs(flags, say));
        std::string scheme_note;
        setup.scheme = search_scheme(flags, in->queries.alphabet, scheme_note);
        if (!scheme_note.empty()) say(scheme_note);
        std::string device_note;
        d = open_rank_devices(flags, context, setup, world, !flags.no_traceback, &device_note);
        if (!device_note.empty()) say(device_note);
        const PreparedDatabase& database = in->load.database;
        job.queries = in->queries.records;
        job.scheme = setup.scheme;
        job.options = setup.options;
        job.alphabet = database.alphabet;
        job.search.top = flags.top;
        job.search.min_score = flags.min_score;
        job.search.max_evalue = flags.max_evalue;
        job.search.traceback = !flags.no_traceback;
        // The batches of one process, so that a score-only search names the same kernels.
        job.search.query_batch =
            flags.query_batch ? flags.query_batch : default_query_batch(job.queries.size(), database.size());
        job.search.statistics_residues = database.residue_count();
        job.database_sequences = database.size();
    } catch (...) {
        mpi::send_search_failure(world);
        throw;
    }
    SearchSummary summary;
    std::unique_ptr<store::JobRecording> recording;
    try {
        mpi::send_search_job(world, job, in->load.database);
        SearchOptions search = job.search;
        store::JobSpec job_spec = search_job_spec("search", setup, search, d.scanner->info());
        job_spec.command_line = context.command_line;
        job_spec.parameters["database"] = flags.database_path;
        recording = flags.project.begin(job_spec);
        summary = collect_and_write(flags, context, *in, format, job, d, world, recording.get());
    } catch (const std::exception& e) {
        // Every output was discarded; end every rank (mpirun names a rank that died).
        ProjectFlag::record_failure(recording.get());
        recording.reset();
        if (dynamic_cast<const Cancelled*>(&e)) {
            std::cerr << "alignscope-cli: stopped by a signal (Ctrl-C, or mpirun ending the run after a rank died); "
                         "no output written\n";
            std::_Exit(interrupt_exit_status());
        }
        std::string message = e.what();
        for (char& c : message)
            if (c == '\n') c = ' ';
        std::cerr << "alignscope-cli: error: " << message << '\n' << std::flush;
        world.abort(2);
    }
    summary.total_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!summary.statistics) say("search: " + summary.statistics_note);
    if (!flags.quiet) {
        print_search_summary(summary, in->load.outcome);
        std::cerr << "search: " << world.size() << " ranks, the database dealt among them\n";
    }
    return 0;
}

#endif

// Where a search's time went (--stats), in seconds: what ran one after the
// other, and what ran beside the database's reading.
struct SearchStages {
    double start_up = 0;           // from the statics made to the command's start (parsing, registries)
    double queries = 0;            // reading the queries
    double database = 0;           // preparing the database (its cache read, or the FASTA parsed)
    double devices = 0;            // beside the database: scheme, device discovery, scanner, backend
    double registry = 0;           // of which device discovery (the driver's start)
    double devices_wait = 0;       // what the database's end waited for them
    double gpu_start = 0;          // beside everything: the slowest GPU's context and streams
    double outputs = 0;            // after the job: the outputs' ends, commits, the project
    double whole = 0;              // from the statics made to the summary said
    bool teardown_handed = false;  // the GPUs' files went to the teardown helper
};

void print_search_stages(const SearchStages& t, const SearchSummary& s, CacheOutcome cache) {
    const double hand_out =
        std::max(0.0, s.total_seconds - s.load_seconds - s.scan_seconds - s.select_seconds - s.traceback_seconds);
    char text[1024];
    std::snprintf(text, sizeof text,
                  "search: stages: before main %.2f s (exec to the statics, in 10 ms ticks), start-up %.3f s, queries "
                  "%.3f s, database %.3f s (cache %s), devices %.3f s "
                  "beside it (device discovery %.3f s; %.3f s waited for), GPU start-up %.3f s beside them; job "
                  "%.3f s: load %.3f s, scan "
                  "%.3f s, select hits %.3f s, traceback %.3f s, the rest (queries encoded, hits handed out and "
                  "written) %.3f s; outputs opened and committed %.3f s; whole %.3f s",
                  before_statics, t.start_up, t.queries, t.database, std::string(to_string(cache)).c_str(), t.devices,
                  t.registry, t.devices_wait, t.gpu_start, s.total_seconds, s.load_seconds, s.scan_seconds,
                  s.select_seconds, s.traceback_seconds, hand_out, t.outputs, t.whole);
    std::cerr << text << '\n';
    if (!s.setup_stats.empty()) std::cerr << "search: scanner set-up: " << s.setup_stats << '\n';
    if (t.teardown_handed || s.scan_device.rfind("gpu", 0) == 0)
        std::cerr << "search: the GPU driver's teardown "
                  << (t.teardown_handed ? "handed to a helper process (it runs after this one has ended)"
                                        : "runs in this process's exit")
                  << '\n';
}

int run_search_command(const SearchFlags& flags, CliContext& context) {
    if (ranks_from_environment() > 1) {
        if (flags.verify || flags.bench)
            throw Error("search --verify and --bench measure one process; run them without mpirun");
#ifdef ALIGNSCOPE_WITH_MPI
        return run_distributed_search(flags, context);
#else
        throw Error(
            "this alignscope-cli was built without MPI (no libopenmpi-dev, or ALIGNSCOPE_MPI=OFF): it "
            "cannot share work under mpirun; rebuild with MPI or run it once without mpirun");
#endif
    }
    if (flags.verify) return run_verify(flags);
    if (flags.bench) return run_bench(flags, context);
    const OutputFormat format = check_search_flags(flags);
    auto say = [&](const std::string& text) {
        if (!flags.quiet) std::cerr << text << '\n';
    };
    SearchStages stages;
    const auto command_start = std::chrono::steady_clock::now();
    stages.start_up = std::chrono::duration<double>(command_start - process_started).count();
    const AlignOptions options = flags.scoring.align_options();
    SequenceSet queries = read_search_queries(flags);
    stages.queries = seconds_since(command_start);
    // The devices start while the database is read; their errors and notes
    // come after the database's, as in a search that does one after the other.
    std::future<SearchDevices> starting = std::async(std::launch::async, make_search_devices, std::cref(flags),
                                                     std::ref(context), std::cref(options), queries.alphabet);
    auto in = std::make_unique<SearchInputs>(read_search_database(flags, std::move(queries), say));
    stages.database = in->load.seconds;
    const auto waiting = std::chrono::steady_clock::now();
    auto d = std::make_unique<SearchDevices>(starting.get());
    stages.devices_wait = seconds_since(waiting);
    stages.devices = d->seconds;
    stages.registry = d->registry_seconds;
    if (d->failure && !d->scheme_made) std::rethrow_exception(d->failure);
    if (!d->scheme_note.empty()) say(d->scheme_note);
    if (d->failure) std::rethrow_exception(d->failure);
    if (!d->device_note.empty()) say(d->device_note);
    std::optional<AfterWarmUp> aligner;
    if (d->aligner) aligner.emplace(*d->aligner, d->warm_ups);

    SearchOptions search;
    search.top = flags.top;
    search.min_score = flags.min_score;
    search.max_evalue = flags.max_evalue;
    search.traceback = !flags.no_traceback;
    search.query_batch = flags.query_batch;

    store::JobSpec job_spec = search_job_spec("search", d->setup, search, d->scanner->info());
    job_spec.command_line = context.command_line;
    job_spec.parameters["database"] = flags.database_path;
    std::unique_ptr<store::JobRecording> recording = flags.project.begin(job_spec);
    SearchSummary summary;
    const auto job_start = std::chrono::steady_clock::now();
    try {
        summary = scan_and_write(flags, context, *in, format, d->setup, *d->scanner, aligner ? &*aligner : nullptr,
                                 search, recording.get());
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
    recording.reset();
    stages.outputs = std::max(0.0, seconds_since(job_start) - summary.total_seconds);
    if (!summary.statistics) say("search: " + summary.statistics_note);
    if (!flags.quiet) print_search_summary(summary, in->load.outcome);
    for (std::future<double>& w : d->warm_ups) stages.gpu_start = std::max(stages.gpu_start, w.get());
    stages.whole = seconds_since(process_started);
    // The outputs are in place: the GPUs' buffers and contexts, the database
    // and the queries go back with the process, not one by one, and the
    // driver's teardown of the GPUs' files runs in the helper
    // (cli_gpu_teardown.hpp) once the process is gone.
    if (can_skip_teardown()) stages.teardown_handed = hand_gpu_teardown_to_helper();
    if (flags.stats) print_search_stages(stages, summary, in->load.outcome);
    if (can_skip_teardown()) {
        (void)d.release();
        (void)in.release();
        teardown_left_to_exit() = true;
    }
    return 0;
}

}  // namespace

std::unique_ptr<ScannerRegistry> scanner_registry() {
    auto registry = make_cpu_scanner_registry();
#ifdef ALIGNSCOPE_WITH_CUDA
    kernels::register_cuda_scanners(*registry);
#else
    DeviceInfo gpu;
    gpu.id = "gpu";
    gpu.kind = "gpu";
    gpu.name = "CUDA GPUs";
    gpu.unavailable_reason = "this build has no CUDA backend (nvcc was not found, or ALIGNSCOPE_CUDA=OFF)";
    registry->add_unavailable(gpu);
#endif
    return registry;
}

int run_search_verify(const std::string& device, std::uint64_t seed, int threads, int streams,
                      const std::string& gpu_mem, const std::string& mode, CliContext&) {
    SearchFlags flags;
    flags.verify_mode = mode;
    flags.device.device = device;
    flags.device.threads = threads;
    flags.device.streams = streams;
    flags.device.gpu_mem = gpu_mem;
    flags.seed = seed;
    return run_verify(flags);
}

int run_search_bench(const std::string& device, bool quick, int threads, const std::string& json, CliContext& context) {
    SearchFlags flags;
    flags.scoring.mode = "local";  // the search command's default (ScoringFlags' own is align's global)
    flags.device.device = device;
    flags.device.threads = threads;
    flags.quick = quick;
    flags.json = json;
    return run_bench(flags, context);
}

void add_search_command(CLI::App& app, CliContext& context) {
    auto flags = std::make_shared<SearchFlags>();
    CLI::App* command = app.add_subcommand(
        "search",
        "Search a sequence database: the K best hits per query (score-only scan on the device, then full "
        "alignments), with bit scores and E-values. Also --verify (the scanner against the CPU) and --bench "
        "(CUDASW++4.0's workloads)");
    command->add_option("-q,--queries", flags->query_path, "FASTA/FASTQ file (plain or gzip) of query sequences");
    command->add_option("-d,--database", flags->database_path,
                        "FASTA file (plain or gzip) of database sequences; prepared once and cached beside it");
    command->add_option("--top", flags->top, "Hits to report per query (K)")->capture_default_str();
    command->add_option("--min-score", flags->min_score, "Report only hits scoring at least this (user units)");
    command->add_option("--evalue", flags->max_evalue,
                        "Report only hits with an E-value at most this (needs published statistics)");
    command->add_option("--format", flags->format, "Output: tsv, json (JSON Lines) or pair")->capture_default_str();
    command->add_option("-o,--output", flags->output, "Output file [default: standard output]");
    command->add_flag("--no-traceback", flags->no_traceback, "Scores only: no alignments for the hits");
    command->add_option("--db-cache", flags->db_cache,
                        "Directory for the prepared-database cache, or 'off' [default: beside the FASTA, else "
                        "~/.cache/alignscope]");
    command->add_option("--query-batch", flags->query_batch,
                        "Queries per scan call [default: as many as fit 1 GiB of scores]");
    command->add_flag("--quiet", flags->quiet, "No summary or notes on standard error");
    command->add_flag("--stats", flags->stats,
                      "Also say on standard error where the time went: start-up, the queries, the database, the "
                      "devices (beside the database), the job's stages, the outputs; each GPU's load (context "
                      "start, upload) and scan buffers; where the GPU driver's teardown runs");
    flags->scoring.add_to(*command, "local");
    if (CLI::Option* o = command->get_option("--gap-open"))
        o->description(
            "Cost of a gap of length 1; a gap of length k costs open + (k-1)*extend [search default: "
            "BLAST's for the matrix so E-values exist, e.g. BLOSUM62 12 (BLAST 11/1), BLOSUM45/PAM250 16, "
            "PAM30 10, EDNAFULL 16; else 10]");
    if (CLI::Option* o = command->get_option("--gap-extend"))
        o->description(
            "Cost of each further gap position [search default: BLAST's for the matrix, e.g. BLOSUM62 1, "
            "EDNAFULL 6; else 0.5]");
    flags->device.add_to(*command, "auto");
    flags->project.add_to(*command);

    command->add_flag("--verify", flags->verify,
                      "Check the scanner of --device against --reference over whole databases: seeded random cases "
                      "of every mode (only --mode's when given), plus -q/-d as real data when given (local, or "
                      "--mode with --free-ends); exit 1 when any score differs");
    command->add_option("--reference", flags->reference, "Reference scanner for --verify: cpu or cpu-ref")
        ->capture_default_str();
    command->add_option("--seed", flags->seed, "Seed of the random --verify cases and synthetic --bench data")
        ->capture_default_str();
    command->add_option("--verify-queries", flags->verify_queries, "Queries per random --verify case")
        ->capture_default_str();
    command->add_option("--verify-sequences", flags->verify_sequences, "Database sequences per random --verify case")
        ->capture_default_str();
    command->add_option("--real-queries", flags->real_queries,
                        "--verify: use only the first N queries of -q [default: all]");
    command->add_option("--real-sequences", flags->real_sequences,
                        "--verify: use only the first N records of -d [default: all]");
    command->add_flag("--no-random", flags->no_random, "--verify: skip the random cases (real data only)");

    command->add_flag(
        "--bench", flags->bench,
        "Measure scan GCUPS on CUDASW++4.0's workloads (mmseqs2-examples queries against DB, DB x10, and "
        "1,000,000 x 256 synthetic) on --device and the CPU SIMD scanner, in --mode (local unless given)");
    command->add_option("--bench-devices", flags->bench_devices, "Devices to measure [default: --device and cpu]");
    command->add_option("--bench-cases", flags->bench_cases, "Cases: mmseqs, mmseqs-x10, synthetic [default: all]");
    command->add_option("--bench-queries", flags->bench_queries, "Use only the first N queries [default: all 500]");
    command->add_option("--synthetic-sequences", flags->synthetic_sequences, "Sequences of the synthetic case")
        ->capture_default_str();
    command->add_option("--repeat", flags->repeat, "Timed runs per point (the median is reported)")
        ->capture_default_str()
        ->transform(strict_number<int>());
    command->add_option("--cpu-seconds", flags->cpu_seconds, "Approximate seconds per CPU run (a query subset)")
        ->capture_default_str();
    command->add_flag("--quick", flags->quick, "A short bench: 20 queries, 20,000 synthetic sequences, one run");
    command->add_option("--json", flags->json, "Also write the bench report as JSON to this file");
    command->callback([flags, command, &context] {
        if (const CLI::Option* mode = command->get_option_no_throw("--mode"); mode && mode->count())
            flags->verify_mode = flags->scoring.mode;
        // Forked now, before the driver starts (alignscope-cli starts it once
        // the command is parsed): a search that may run on GPUs.
        if (!flags->verify && !flags->bench && ranks_from_environment() <= 1 && can_skip_teardown() &&
            flags->device.device.rfind("cpu", 0) != 0)
            start_gpu_teardown_helper();
        context.action = [flags, &context] { return run_search_command(*flags, context); };
    });
}

}  // namespace alignscope::cli
