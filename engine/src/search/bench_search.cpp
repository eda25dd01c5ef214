// `search --bench`: CUDASW++4.0's three workloads on every device in one run
// (see bench_search.hpp for what is measured and how).
#include <alignscope/bench/verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/bench_search.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace alignscope {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct Workload {
    std::string name, description;
    PreparedDatabase database;
    double prepare_seconds = 0;
    double peer_gcups = 0;
};

PreparedDatabase repeated(const PreparedDatabase& db, int times) {
    PreparedDatabase out;
    out.source = db.source + " x" + std::to_string(times);
    out.alphabet = db.alphabet;
    out.residues.reserve(db.residues.size() * static_cast<std::size_t>(times));
    out.offsets.push_back(0);
    // Each copy of a sequence sits next to the others, keeping length order.
    for (std::size_t p = 0; p < db.size(); ++p) {
        for (int k = 0; k < times; ++k) {
            out.residues.append(db.residues_of(p));
            out.offsets.push_back(out.residues.size());
            out.file_index.push_back(static_cast<std::uint32_t>(db.file_index[p] * static_cast<std::uint32_t>(times) +
                                                                static_cast<std::uint32_t>(k)));
            out.ids.push_back(db.ids[p] + (k ? "/copy" + std::to_string(k + 1) : ""));
            out.descriptions.push_back(db.descriptions[p]);
        }
    }
    return out;
}

PreparedDatabase synthetic(std::size_t count, std::int64_t length, std::uint64_t seed) {
    SeededRandom random(seed);
    std::vector<Sequence> records(count);
    for (std::size_t k = 0; k < count; ++k) {
        records[k].id = "synthetic" + std::to_string(k + 1);
        records[k].residues = random_residues(random, AlphabetKind::Protein, length);
    }
    return pack_database(std::move(records), AlphabetKind::Protein,
                         std::to_string(count) + " random sequences of " + std::to_string(length) + " (seed " +
                             std::to_string(seed) + ")");
}

bool wanted(const SearchBenchOptions& options, const std::string& name) {
    return options.cases.empty() || std::find(options.cases.begin(), options.cases.end(), name) != options.cases.end();
}

// One `search --bench` run: the queries and workloads built once, then one
// measured point per workload and device.
class SearchBench {
public:
    SearchBench(const ScannerRegistry& scanners, DeviceRegistry* aligners, const SearchBenchOptions& options,
                const SearchBenchCallbacks& callbacks)
        : scanners_(scanners),
          aligners_(aligners),
          options_(options),
          callbacks_(callbacks),
          scheme_(ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1)) {}

    SearchBenchReport run();

private:
    void check_options() const;
    void read_queries();
    void build_workloads();
    void measure(const Workload& w, const std::string& spec);
    std::unique_ptr<DatabaseScanner> load_scanner(const Workload& w, const std::string& spec, SearchBenchPoint& point);
    std::size_t queries_to_use(const Workload& w, DatabaseScanner& scanner);
    bool time_scans(const Workload& w, DatabaseScanner& scanner, const std::vector<const EncodedSequence*>& chosen,
                    SearchBenchPoint& point);
    void end_to_end(const Workload& w, const std::string& spec, bool cpu, DatabaseScanner& scanner,
                    const std::vector<const EncodedSequence*>& chosen, SearchBenchPoint& point);
    void note(const std::string& text) {
        report_.notes.push_back(text);
        if (callbacks_.note) callbacks_.note(text);
    }

    const ScannerRegistry& scanners_;
    DeviceRegistry* aligners_;
    const SearchBenchOptions& options_;
    const SearchBenchCallbacks& callbacks_;
    const ScoringScheme scheme_;
    AlignOptions local_;  // the run's alignment mode (named for CUDASW++4.0's, the usual one)
    SearchBenchReport report_;
    std::vector<Sequence> queries_;
    std::vector<EncodedSequence> encoded_;
    std::uint64_t query_residues_ = 0;
    std::vector<Workload> workloads_;
    JobContext context_;
};

SearchBenchReport SearchBench::run() {
    check_options();
    read_queries();
    build_workloads();
    context_.cancel = options_.cancel;
    for (const Workload& w : workloads_) {
        for (const std::string& spec : options_.devices) {
            context_.throw_if_cancelled();
            measure(w, spec);
        }
    }
    return report_;
}

void SearchBench::check_options() const {
    for (const std::string& c : options_.cases)
        if (c != "mmseqs" && c != "mmseqs-x10" && c != "synthetic")
            throw Error::about("bench_cases", "unknown case '" + c + "' (expected mmseqs, mmseqs-x10, synthetic)");
    if (options_.repeat < 1) throw Error("--repeat must be at least 1");
    for (const std::string& d : options_.devices) (void)scanners_.resolve(d);
}

void SearchBench::read_queries() {
    ReadOptions read_options;
    read_options.alphabet = AlphabetKind::Protein;
    queries_ = read_sequences(options_.query_path, read_options).records;
    if (options_.max_queries && queries_.size() > options_.max_queries) queries_.resize(options_.max_queries);
    if (queries_.empty()) throw Error(options_.query_path + ": no queries");
    local_.mode = options_.mode;
    local_.free_ends = options_.free_ends;
    report_.mode = describe_mode(local_);
    if (options_.mode != AlignmentMode::Local)
        note("mode " + report_.mode + ": CUDASW++4.0's figures (peer column) are for local alignment");
    for (const Sequence& q : queries_) encoded_.push_back(encode(q.residues, scheme_.matrix, "query '" + q.id + "'"));
    for (const Sequence& q : queries_) query_residues_ += q.residues.size();
}

// The workloads, built once and shared by every device.
void SearchBench::build_workloads() {
    PreparedDatabase mmseqs;
    double parse_seconds = 0;
    if (wanted(options_, "mmseqs") || wanted(options_, "mmseqs-x10")) {
        DatabaseCacheOptions no_cache;
        no_cache.enabled = false;
        no_cache.alphabet = AlphabetKind::Protein;
        const auto start = std::chrono::steady_clock::now();
        mmseqs = prepare_database(options_.database_path, no_cache).database;
        parse_seconds = seconds_since(start);
    }
    if (wanted(options_, "mmseqs"))
        workloads_.push_back({"mmseqs",
                              std::to_string(queries_.size()) + " queries x " + std::to_string(mmseqs.size()) +
                                  " sequences of " + options_.database_path,
                              mmseqs, parse_seconds, 1020});
    if (wanted(options_, "mmseqs-x10")) {
        const auto start = std::chrono::steady_clock::now();
        PreparedDatabase x10 = repeated(mmseqs, 10);
        workloads_.push_back({"mmseqs-x10",
                              std::to_string(queries_.size()) + " queries x " + options_.database_path + " x10 (" +
                                  std::to_string(x10.size()) + " sequences)",
                              std::move(x10), parse_seconds + seconds_since(start), 3560});
    }
    if (wanted(options_, "synthetic")) {
        const auto start = std::chrono::steady_clock::now();
        PreparedDatabase s = synthetic(options_.synthetic_sequences, options_.synthetic_length, options_.seed);
        workloads_.push_back({"synthetic", std::to_string(queries_.size()) + " queries x " + s.source, std::move(s),
                              seconds_since(start), 4980});
    }
}

// One point: load, choose the queries, time the scans, and the end-to-end
// search when asked. A device that cannot load or scan is a note, not a point.
void SearchBench::measure(const Workload& w, const std::string& spec) {
    SearchBenchPoint point;
    point.case_name = w.name;
    point.description = w.description;
    point.sequences = w.database.size();
    point.residues = w.database.residue_count();
    point.peer_gcups = w.peer_gcups;
    point.prepare_seconds = w.prepare_seconds;
    std::unique_ptr<DatabaseScanner> scanner = load_scanner(w, spec, point);
    if (!scanner) return;
    const bool cpu = scanner->info().kind == "cpu";
    const std::size_t used = cpu ? queries_to_use(w, *scanner) : encoded_.size();
    // An even spread of the query lengths when only some are used.
    std::vector<const EncodedSequence*> chosen;
    for (std::size_t k = 0; k < used; ++k) chosen.push_back(&encoded_[k * encoded_.size() / used]);
    point.queries = chosen.size();
    for (const EncodedSequence* q : chosen) point.cells += q->size() * w.database.residue_count();
    if (used < encoded_.size())
        point.note = "scanned " + std::to_string(used) + " of " + std::to_string(encoded_.size()) +
                     " queries (evenly spread) to keep a run near " +
                     std::to_string(static_cast<int>(options_.cpu_seconds)) + " s";
    if (!time_scans(w, *scanner, chosen, point)) return;
    if (options_.end_to_end && aligners_) end_to_end(w, spec, cpu, *scanner, chosen, point);
    report_.points.push_back(point);
    if (callbacks_.point) callbacks_.point(point);
}

std::unique_ptr<DatabaseScanner> SearchBench::load_scanner(const Workload& w, const std::string& spec,
                                                           SearchBenchPoint& point) {
    ScanSetup setup;
    setup.scheme = scheme_;
    setup.options = local_;
    setup.threads = options_.threads;
    setup.streams = options_.streams;
    setup.gpu_memory_budget = options_.gpu_memory_budget;
    std::unique_ptr<DatabaseScanner> scanner;
    try {
        scanner = scanners_.create(spec);
        const DeviceInfo info = scanner->info();
        point.device = info.id;
        point.device_name = info.name;
        const auto load_start = std::chrono::steady_clock::now();
        scanner->load(w.database, setup, context_);
        scanner->wait_loaded();
        point.load_seconds = seconds_since(load_start);
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        note(w.name + " on " + spec + ": skipped: " + e.what());
        return nullptr;
    }
    return scanner;
}

// How many queries a CPU scanner gets: sized from a first, short measurement
// to keep a run near options.cpu_seconds.
std::size_t SearchBench::queries_to_use(const Workload& w, DatabaseScanner& scanner) {
    std::vector<const EncodedSequence*> probe;
    std::uint64_t probe_residues = 0;
    for (std::size_t k = 0; k < encoded_.size() && probe_residues < 600; ++k) {
        probe.push_back(&encoded_[k * 37 % encoded_.size()]);
        probe_residues += probe.back()->size();
    }
    std::vector<std::int64_t> scores(probe.size() * w.database.size());
    const auto t = std::chrono::steady_clock::now();
    scanner.scan(probe, scores, context_);
    const double rate = static_cast<double>(probe_residues * w.database.residue_count()) / seconds_since(t);
    const double per_query = static_cast<double>(query_residues_) / static_cast<double>(encoded_.size()) *
                             static_cast<double>(w.database.residue_count()) / rate;
    return std::clamp<std::size_t>(static_cast<std::size_t>(options_.cpu_seconds / per_query), 1, encoded_.size());
}

// Warm-up and timed runs over the chosen queries, in batches; the medians of
// the timed runs. False (and a note) when a scan fails.
bool SearchBench::time_scans(const Workload& w, DatabaseScanner& scanner,
                             const std::vector<const EncodedSequence*>& chosen, SearchBenchPoint& point) {
    // Queries per scan call: all that fit in about 1 GiB of scores.
    std::size_t batch = options_.query_batch;
    if (!batch) batch = default_query_batch(encoded_.size(), w.database.size());
    std::vector<std::int64_t> scores;
    std::vector<double> kernel_runs;
    try {
        for (int run = 0; run < options_.warmup + options_.repeat; ++run) {
            double wall = 0, kernel = 0;
            for (std::size_t first = 0; first < chosen.size(); first += batch) {
                const std::size_t last = std::min(chosen.size(), first + batch);
                scores.resize((last - first) * w.database.size());
                const auto t = std::chrono::steady_clock::now();
                scanner.scan(std::span(chosen).subspan(first, last - first), scores, context_);
                wall += seconds_since(t);
                const ScanStats stats = scanner.last_stats();
                kernel += stats.kernel_seconds;
                if (run == options_.warmup + options_.repeat - 1) {
                    point.kernels = stats.kernels;
                    point.recomputed += stats.recomputed;
                }
            }
            if (run >= options_.warmup) {
                point.run_seconds.push_back(wall);
                kernel_runs.push_back(kernel);
            }
        }
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        note(w.name + " on " + point.device + ": scan failed: " + e.what());
        return false;
    }
    point.scan_seconds = median(point.run_seconds);
    point.kernel_seconds = median(kernel_runs);
    point.gcups_scan = static_cast<double>(point.cells) / point.scan_seconds / 1e9;
    point.gcups_kernel = point.kernel_seconds > 0 ? static_cast<double>(point.cells) / point.kernel_seconds / 1e9 : 0;
    return true;
}

// The whole search (parse + load + scan + top-K + traceback) over the chosen
// queries; a failure is a note and the point keeps its scan figures.
void SearchBench::end_to_end(const Workload& w, const std::string& spec, bool cpu, DatabaseScanner& scanner,
                             const std::vector<const EncodedSequence*>& chosen, SearchBenchPoint& point) {
    try {
        Backend& aligner = aligners_->select(cpu ? "cpu" : spec);
        std::vector<Sequence> subset;
        for (const EncodedSequence* q : chosen)
            subset.push_back(queries_[static_cast<std::size_t>(q - encoded_.data())]);
        SearchOptions search;
        search.top = options_.top;
        search.query_batch = options_.query_batch;
        const SearchSummary s = run_search(subset, w.database, scheme_, local_, scanner, &aligner, search, {}, context_,
                                           options_.threads, options_.streams, options_.gpu_memory_budget);
        point.e2e_seconds = w.prepare_seconds + s.total_seconds;
        point.gcups_e2e = static_cast<double>(point.cells) / *point.e2e_seconds / 1e9;
        point.traceback_seconds = s.traceback_seconds;
    } catch (const Cancelled&) {
        throw;
    } catch (const std::exception& e) {
        note(w.name + " on " + point.device + ": end-to-end search failed: " + e.what());
    }
}

}  // namespace

SearchBenchReport run_search_bench(const ScannerRegistry& scanners, DeviceRegistry* aligners,
                                   const SearchBenchOptions& options, const SearchBenchCallbacks& callbacks) {
    return SearchBench(scanners, aligners, options, callbacks).run();
}

void write_search_bench_table(std::ostream& out, const SearchBenchReport& report) {
    char line[512];
    std::snprintf(line, sizeof line, "%-11s %-8s %7s %10s %9s %9s %9s %9s %9s %8s  %s\n", "case", "device", "queries",
                  "Gcells", "scan s", "GCUPS", "kern GCUPS", "e2e s", "e2e GCUPS", "peer", "kernels");
    out << line;
    for (const SearchBenchPoint& p : report.points) {
        std::snprintf(line, sizeof line, "%-11s %-8s %7llu %10.1f %9.3f %9.1f %9.1f %9s %9s %8.0f  %s\n",
                      p.case_name.c_str(), p.device.c_str(), static_cast<unsigned long long>(p.queries),
                      static_cast<double>(p.cells) / 1e9, p.scan_seconds, p.gcups_scan, p.gcups_kernel,
                      p.e2e_seconds ? std::to_string(*p.e2e_seconds).substr(0, 7).c_str() : "-",
                      p.gcups_e2e ? std::to_string(*p.gcups_e2e).substr(0, 7).c_str() : "-", p.peer_gcups,
                      p.kernels.c_str());
        out << line;
        if (!p.note.empty()) out << "    " << p.case_name << " on " << p.device << ": " << p.note << '\n';
    }
    for (const std::string& n : report.notes) out << "note: " << n << '\n';
    out << "peer = CUDASW++4.0 measured on an H200 (November 2026); GCUPS = cells / wall time of all scan calls "
           "(median of runs); "
           "kern = cells / device kernel time; e2e = parse + load + scan + top-K + traceback\n";
}

void write_search_bench_json(std::ostream& out, const SearchBenchReport& report) {
    nlohmann::json j;
    j["tool"] = "alignscope-cli search --bench";
    j["scoring"] = "BLOSUM62, gap open 11, extend 1 (BLAST 10/1), " + report.mode + ", scores only";
    j["mode"] = report.mode;
    j["points"] = nlohmann::json::array();
    for (const SearchBenchPoint& p : report.points) {
        nlohmann::json e;
        e["case"] = p.case_name;
        e["description"] = p.description;
        e["device"] = p.device;
        e["device_name"] = p.device_name;
        e["kernels"] = p.kernels;
        e["queries"] = p.queries;
        e["sequences"] = p.sequences;
        e["residues"] = p.residues;
        e["cells"] = p.cells;
        e["load_seconds"] = p.load_seconds;
        e["scan_seconds"] = p.scan_seconds;
        e["run_seconds"] = p.run_seconds;
        e["gcups_scan"] = p.gcups_scan;
        e["kernel_seconds"] = p.kernel_seconds;
        e["gcups_kernel"] = p.gcups_kernel;
        if (p.prepare_seconds) e["prepare_seconds"] = *p.prepare_seconds;
        if (p.e2e_seconds) e["e2e_seconds"] = *p.e2e_seconds;
        if (p.gcups_e2e) e["gcups_e2e"] = *p.gcups_e2e;
        if (p.traceback_seconds) e["traceback_seconds"] = *p.traceback_seconds;
        e["recomputed"] = p.recomputed;
        e["peer_gcups"] = p.peer_gcups;
        if (!p.note.empty()) e["note"] = p.note;
        j["points"].push_back(std::move(e));
    }
    j["notes"] = report.notes;
    out << j.dump(2) << '\n';
}

}  // namespace alignscope
