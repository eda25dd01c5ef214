// `alignscope-cli bench --profile`: profile HMM search (hmmsearch's whole
// pipeline) timed on the device under test (a GPU when there is one) and the
// CPU device in one run, on the models of one file and one database, with
// hmmsearch's own wall time in the same run when it is on the PATH. GCUPS =
// model length x residues / seconds. The devices and hmmsearch must agree on
// the pipeline counts and the reported hits; exit status 1 when they do not.
// --gpu-mem: the GPUs measured within that budget, scanning in slices.
#include "cli_options.hpp"
#include "cli_profile.hpp"
#include "cli_progress.hpp"

#include <alignscope/bench/bench.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace alignscope::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

// What one model's search gave on one device (or hmmsearch, per model).
struct ModelRun {
    std::string model;
    int length = 0;
    double search_seconds = 0;            // median of the runs
    profile::ProfileFilterStats filters;  // of the last run
    profile::PipelineCounts counts;
    int reported = 0;
};

struct DeviceRun {
    std::string device, name;
    double load_seconds = 0;  // targets onto the device
    std::vector<ModelRun> models;
    // The most slices a model's scan took (a GPU within --gpu-mem; 0 on the CPU).
    std::uint64_t target_slices() const {
        std::uint64_t most = 0;
        for (const ModelRun& m : models) most = std::max(most, m.filters.target_slices);
        return most;
    }
    double search_seconds() const {
        double s = 0;
        for (const ModelRun& m : models) s += m.search_seconds;
        return s;
    }
};

// hmmsearch's own run: the process's wall time (median), its counts and hits.
struct HmmsearchRun {
    std::string program;
    int threads = 0;
    double seconds = 0;
    std::vector<std::array<std::uint64_t, 4>> counts;  // per model: MSV, bias, Vit, Fwd passes
    std::vector<int> reported;                         // per model: --tblout rows
};

struct BenchInputs {
    std::vector<profile::ProfileHmm> models;
    profile::ProfileTargets targets;
    double read_seconds = 0;
    std::string database_for_hmmsearch;  // the --db file, or the first --db-limit records written out
};

std::string program_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    for (std::string_view rest = path ? path : ""; !rest.empty();) {
        const std::size_t colon = rest.find(':');
        const std::string folder(rest.substr(0, colon));
        rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        std::error_code ec;
        const std::filesystem::path candidate = std::filesystem::path(folder.empty() ? "." : folder) / name;
        if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate.string();
    }
    return {};
}

std::string shell_quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The targets as FASTA again (for hmmsearch over the same first --db-limit records).
void write_targets(const profile::ProfileTargets& targets, const std::string& path) {
    const profile::ResidueCode& code = profile::ResidueCode::of(targets.alphabet);
    std::ofstream out(path);
    for (std::size_t t = 0; t < targets.size(); ++t) {
        out << '>' << targets.names[t];
        if (!targets.descriptions[t].empty()) out << ' ' << targets.descriptions[t];
        out << '\n';
        for (int i = 0; i < targets.length(t); ++i) out << code.symbol(targets.codes(t)[i]);
        out << '\n';
    }
    if (!out) throw Error(path + ": could not write the targets for hmmsearch");
}

BenchInputs read_bench_inputs(const ProfileBenchFlags& flags) {
    if (flags.hmm.empty() || flags.database.empty())
        throw Error("bench --profile needs --hmm MODELS.hmm and --db DATABASE.fa");
    BenchInputs in;
    in.models = profile::read_hmm_file(flags.hmm);
    for (const profile::ProfileHmm& m : in.models)
        if (m.alphabet != in.models.front().alphabet)
            throw Error(flags.hmm + ":" + std::to_string(m.line) + ": model '" + m.name +
                        "' has another alphabet than the first model; one search takes one alphabet");
    const auto start = Clock::now();
    in.targets = read_targets_for(flags.database, in.models.front().alphabet, flags.db_limit);
    in.read_seconds = seconds_since(start);
    in.database_for_hmmsearch = flags.database;
    return in;
}

// Each model searched `repeat` times on one device; the median time counts.
// A GPU plans its memory to `gpu_memory` bytes (0: its default).
DeviceRun run_device(profile::ProfileScannerRegistry& registry, const std::string& device, const BenchInputs& in,
                     int threads, int repeat, std::uint64_t gpu_memory) {
    DeviceRun run;
    const std::unique_ptr<profile::ProfileFilterScanner> scanner = registry.create(device, threads);
    scanner->set_memory_budget(gpu_memory);
    run.device = device;
    run.name = scanner->info().name;
    JobContext job;
    job.cancel = &interrupt_token();
    const auto start = Clock::now();
    scanner->load(in.targets, job);
    run.load_seconds = seconds_since(start);
    profile::PipelineSettings settings;
    settings.threads = threads;
    settings.alignments = false;  // hmmsearch runs with --noali beside it
    for (const profile::ProfileHmm& hmm : in.models) {
        ModelRun m;
        m.model = hmm.name;
        m.length = hmm.length;
        std::vector<double> times;
        for (int r = 0; r < repeat; ++r) {
            const auto t0 = Clock::now();
            const profile::ModelSearch result = profile::search_profile(hmm, in.targets, *scanner, settings, job);
            times.push_back(seconds_since(t0));
            m.filters = scanner->last_stats();
            m.counts = result.counts;
            m.reported = result.reported;
        }
        m.search_seconds = median(times);
        run.models.push_back(m);
    }
    return run;
}

// "Passed MSV filter: N" ... per model of hmmsearch's report, in order.
std::vector<std::array<std::uint64_t, 4>> passed_counts(const std::string& report) {
    std::vector<std::array<std::uint64_t, 4>> out;
    std::istringstream in(report);
    int field = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("Passed ", 0) != 0) continue;
        if (field == 0) out.emplace_back();
        out.back()[static_cast<std::size_t>(field)] = std::strtoull(line.c_str() + line.find(':') + 1, nullptr, 10);
        field = (field + 1) % 4;
    }
    return out;
}

// --tblout rows per query, in the order of the models.
std::vector<int> table_rows(const std::string& table, const std::vector<profile::ProfileHmm>& models) {
    std::vector<int> out(models.size(), 0);
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string target, accession, query;
        fields >> target >> accession >> query;
        for (std::size_t m = 0; m < models.size(); ++m)
            if (models[m].name == query) ++out[m];
    }
    return out;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// hmmsearch --cpu T --noali over the same models and targets, `repeat` times.
std::optional<HmmsearchRun> run_hmmsearch(const ProfileBenchFlags& flags, BenchInputs& in, int threads, int repeat,
                                          std::vector<std::string>& notes) {
    HmmsearchRun run;
    run.program = flags.no_hmmsearch ? std::string() : program_on_path("hmmsearch");
    if (run.program.empty()) {
        notes.push_back(flags.no_hmmsearch
                            ? "hmmsearch left out (--no-hmmsearch)"
                            : "hmmsearch is not on the PATH: no figure of its own (Debian package hmmer)");
        return std::nullopt;
    }
    run.threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::error_code ec;
    const std::filesystem::path folder =
        std::filesystem::temp_directory_path(ec) / ("alignscope-bench-hmmsearch-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder, ec);
    if (ec) throw Error(folder.string() + ": could not make a folder for hmmsearch's outputs: " + ec.message());
    struct RemoveOnExit {
        std::filesystem::path folder;
        ~RemoveOnExit() {
            std::error_code ignored;
            std::filesystem::remove_all(folder, ignored);
        }
    } remove{folder};
    if (flags.db_limit) {
        in.database_for_hmmsearch = (folder / "targets.fa").string();
        write_targets(in.targets, in.database_for_hmmsearch);
    }
    const std::string command = shell_quoted(run.program) + " --cpu " + std::to_string(run.threads) + " --noali -o " +
                                shell_quoted((folder / "report.txt").string()) + " --tblout " +
                                shell_quoted((folder / "hits.tbl").string()) + " " + shell_quoted(flags.hmm) + " " +
                                shell_quoted(in.database_for_hmmsearch) + " </dev/null 2>&1";
    std::vector<double> times;
    for (int r = 0; r < repeat; ++r) {
        interrupt_token().throw_if_cancelled();
        const auto start = Clock::now();
        const int status = std::system(command.c_str());
        times.push_back(seconds_since(start));
        if (status != 0) {
            notes.push_back("hmmsearch failed (status " + std::to_string(status) + "): no figure of its own");
            return std::nullopt;
        }
    }
    run.seconds = median(times);
    run.counts = passed_counts(read_file(folder / "report.txt"));
    run.reported = table_rows(read_file(folder / "hits.tbl"), in.models);
    return run;
}

// The table: one row per model and device, then each device's whole run
// (reading, loading, every model) and hmmsearch's process.
void print_table(std::ostream& out, const BenchInputs& in, const std::vector<DeviceRun>& runs,
                 const std::optional<HmmsearchRun>& hmmsearch) {
    const double residues = static_cast<double>(in.targets.residue_count());
    char line[512];
    std::snprintf(line, sizeof line, "%-14s %5s %-10s %9s %8s %9s %9s %9s %10s  %-27s %6s\n", "model", "M", "device",
                  "search s", "GCUPS", "MSV s", "MSV GCUPS", "kern s", "kern GCUPS", "passed MSV/bias/Vit/Fwd", "hits");
    out << line << std::string(128, '-') << "\n";
    for (const DeviceRun& run : runs)
        for (const ModelRun& m : run.models) {
            const double cells = residues * m.length;
            const double kernel = m.filters.msv_kernel_seconds + m.filters.viterbi_kernel_seconds;
            const std::string passed = std::to_string(m.counts.past_msv) + "/" + std::to_string(m.counts.past_bias) +
                                       "/" + std::to_string(m.counts.past_viterbi) + "/" +
                                       std::to_string(m.counts.past_forward);
            std::snprintf(line, sizeof line, "%-14s %5d %-10s %9.4f %8.2f %9.4f %9.2f %9s %10s  %-27s %6d\n",
                          m.model.substr(0, 14).c_str(), m.length, run.device.c_str(), m.search_seconds,
                          cells / std::max(1e-9, m.search_seconds) / 1e9, m.filters.msv_seconds,
                          static_cast<double>(m.filters.msv_cells) / std::max(1e-9, m.filters.msv_seconds) / 1e9,
                          kernel > 0 ? std::to_string(kernel).substr(0, 8).c_str() : "-",
                          kernel > 0 ? std::to_string(static_cast<double>(m.filters.msv_cells) /
                                                      std::max(1e-9, m.filters.msv_kernel_seconds) / 1e9)
                                           .substr(0, 8)
                                           .c_str()
                                     : "-",
                          passed.c_str(), m.reported);
            out << line;
        }
    double model_length = 0;
    for (const profile::ProfileHmm& hmm : in.models) model_length += hmm.length;
    out << "\nwhole runs (" << in.models.size() << " model(s), " << in.targets.size() << " targets, "
        << in.targets.residue_count() << " residues; end to end = read + load + search):\n";
    for (const DeviceRun& run : runs) {
        const double e2e = in.read_seconds + run.load_seconds + run.search_seconds();
        std::snprintf(line, sizeof line,
                      "  %-10s read %.3f s, load %.3f s, search %.3f s: %.3f s end to end, %.2f GCUPS (%s)",
                      run.device.c_str(), in.read_seconds, run.load_seconds, run.search_seconds(), e2e,
                      residues * model_length / std::max(1e-9, e2e) / 1e9, run.name.c_str());
        out << line;
        if (const std::uint64_t slices = run.target_slices(); slices > 1)
            out << "; targets in " << slices << " slices (--gpu-mem)";
        out << "\n";
    }
    if (hmmsearch) {
        std::snprintf(line, sizeof line, "  %-10s %.3f s end to end (its process, --cpu %d --noali), %.2f GCUPS (%s)\n",
                      "hmmsearch", hmmsearch->seconds, hmmsearch->threads,
                      residues * model_length / std::max(1e-9, hmmsearch->seconds) / 1e9, hmmsearch->program.c_str());
        out << line;
        for (const DeviceRun& run : runs) {
            const double e2e = in.read_seconds + run.load_seconds + run.search_seconds();
            std::snprintf(line, sizeof line, "  %-10s %.2fx hmmsearch's speed\n", run.device.c_str(),
                          hmmsearch->seconds / std::max(1e-9, e2e));
            out << line;
        }
    }
}

nlohmann::json json_of(const ProfileBenchFlags& flags, const BenchInputs& in, const std::vector<DeviceRun>& runs,
                       const std::optional<HmmsearchRun>& hmmsearch, const std::vector<std::string>& notes,
                       std::uint64_t gpu_memory) {
    const double residues = static_cast<double>(in.targets.residue_count());
    double model_length = 0;
    for (const profile::ProfileHmm& hmm : in.models) model_length += hmm.length;
    nlohmann::json j;
    j["tool"] = "alignscope-cli bench --profile";
    j["hmm"] = flags.hmm;
    j["database"] = flags.database;
    j["targets"] = in.targets.size();
    j["residues"] = in.targets.residue_count();
    j["read_seconds"] = in.read_seconds;
    j["gpu_memory_budget"] = gpu_memory;  // bytes; 0: the GPUs' default
    const BuildInfo build = current_build_info();
    j["build"] = {{"version", build.version},
                  {"compiler", build.compiler},
                  {"host", build.host},
                  {"cpu_model", build.cpu_model},
                  {"hardware_threads", build.hardware_threads}};
    j["devices"] = nlohmann::json::array();
    for (const DeviceRun& run : runs) {
        nlohmann::json models = nlohmann::json::array();
        for (const ModelRun& m : run.models)
            models.push_back(
                {{"model", m.model},
                 {"length", m.length},
                 {"search_seconds", m.search_seconds},
                 {"gcups", residues * m.length / std::max(1e-9, m.search_seconds) / 1e9},
                 {"msv_seconds", m.filters.msv_seconds},
                 {"msv_kernel_seconds", m.filters.msv_kernel_seconds},
                 {"viterbi_seconds", m.filters.viterbi_seconds},
                 {"viterbi_kernel_seconds", m.filters.viterbi_kernel_seconds},
                 {"passed", {m.counts.past_msv, m.counts.past_bias, m.counts.past_viterbi, m.counts.past_forward}},
                 {"reported", m.reported},
                 {"target_slices", m.filters.target_slices}});
        const double e2e = in.read_seconds + run.load_seconds + run.search_seconds();
        j["devices"].push_back({{"device", run.device},
                                {"name", run.name},
                                {"load_seconds", run.load_seconds},
                                {"search_seconds", run.search_seconds()},
                                {"e2e_seconds", e2e},
                                {"gcups_e2e", residues * model_length / std::max(1e-9, e2e) / 1e9},
                                {"models", models}});
    }
    if (hmmsearch)
        j["hmmsearch"] = {{"program", hmmsearch->program},
                          {"threads", hmmsearch->threads},
                          {"e2e_seconds", hmmsearch->seconds},
                          {"gcups_e2e", residues * model_length / std::max(1e-9, hmmsearch->seconds) / 1e9},
                          {"passed", hmmsearch->counts},
                          {"reported", hmmsearch->reported}};
    else
        j["hmmsearch"] = nullptr;
    j["notes"] = notes;
    return j;
}

// Notes for every device (and hmmsearch) whose counts or hits differ from the
// first device's; returns whether all agree.
bool agree(const std::vector<DeviceRun>& runs, const std::optional<HmmsearchRun>& hmmsearch,
           std::vector<std::string>& notes) {
    bool same = true;
    const DeviceRun& first = runs.front();
    for (std::size_t m = 0; m < first.models.size(); ++m) {
        const ModelRun& a = first.models[m];
        const std::array<std::uint64_t, 4> expected{a.counts.past_msv, a.counts.past_bias, a.counts.past_viterbi,
                                                    a.counts.past_forward};
        for (const DeviceRun& run : runs) {
            const ModelRun& b = run.models[m];
            const std::array<std::uint64_t, 4> got{b.counts.past_msv, b.counts.past_bias, b.counts.past_viterbi,
                                                   b.counts.past_forward};
            if (got == expected && b.reported == a.reported) continue;
            same = false;
            notes.push_back("DIFFER: " + a.model + " on " + run.device + " passes or reports otherwise than on " +
                            first.device);
        }
        if (hmmsearch && (m >= hmmsearch->counts.size() || hmmsearch->counts[m] != expected ||
                          hmmsearch->reported[m] != a.reported)) {
            same = false;
            notes.push_back("DIFFER: " + a.model + ": hmmsearch passes or reports otherwise than " + first.device);
        }
    }
    return same;
}

// The devices measured: those --device names ("auto": the first GPU, else the
// CPU device), then the CPU device unless it is one of them or "none".
std::vector<std::string> bench_devices(const profile::ProfileScannerRegistry& registry, const std::string& spec,
                                       const std::string& cpu_device) {
    std::vector<std::string> out;
    if (spec == "auto") {
        for (const DeviceInfo& d : registry.devices())
            if (d.kind == "gpu" && d.available) {
                out.push_back(d.id);
                break;
            }
    } else {
        out = profile_devices(registry, spec);
    }
    if (cpu_device != "none") {
        const std::vector<std::string> cpu = profile_devices(registry, cpu_device, "--cpu-device");
        if (cpu.size() != 1 || cpu.front().rfind("gpu", 0) == 0)
            throw Error("--cpu-device: give one CPU device (cpu, cpu-ref) or none");
        if (std::find(out.begin(), out.end(), cpu.front()) == out.end()) out.push_back(cpu.front());
    }
    if (out.empty()) throw Error("--cpu-device none leaves bench --profile no device to measure on this machine");
    return out;
}

}  // namespace

void ProfileBenchFlags::add_to(CLI::App& command) {
    command.add_flag("--profile", enabled,
                     "Profile HMM search instead (hmmsearch's pipeline): every model of --hmm over --db on the device "
                     "under test and the CPU device, and hmmsearch itself when it is on the PATH, in one run; GCUPS = "
                     "model length x residues / s");
    command.add_option("--hmm", hmm, "bench --profile: HMMER3 text model file (every model in it is measured)");
    command.add_option("--db", database, "bench --profile: target sequences (FASTA/FASTQ, plain or gzip)");
    command.add_option("--db-limit", db_limit, "bench --profile: only the first N records of --db [default: all]");
    command.add_flag("--no-hmmsearch", no_hmmsearch, "bench --profile: do not run hmmsearch beside our devices");
}

int run_bench_profile(const ProfileBenchFlags& flags, const std::string& device, const std::string& cpu_device,
                      int threads, int repeat, const std::string& gpu_mem, const std::string& json,
                      CliContext& context) {
    (void)context;
    if (repeat < 1) throw Error("--repeat must be at least 1");
    if (threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    const std::uint64_t gpu_memory = profile_gpu_memory(gpu_mem);
    refuse_overlapping_files({{"--hmm", flags.hmm}, {"--db", flags.database}}, {{"--json", json}});
    const auto registry = profile_scanner_registry();
    const std::vector<std::string> devices = bench_devices(*registry, device, cpu_device);
    BenchInputs in = read_bench_inputs(flags);
    const bool json_to_stdout = json == "-";
    std::optional<AtomicOutput> json_out;
    if (!json.empty() && !json_to_stdout) json_out.emplace(json);
    std::ostream& table = json_to_stdout ? std::cerr : std::cout;
    table << "bench --profile: " << in.models.size() << " model(s) of " << flags.hmm << " over " << in.targets.size()
          << " targets (" << in.targets.residue_count() << " residues) of " << flags.database << "; "
          << (threads ? std::to_string(threads) : std::string("all")) << " CPU threads, median of " << repeat
          << " run(s)\n\n";

    std::vector<std::string> notes;
    std::vector<DeviceRun> runs;
    if (!gpu_mem.empty())
        notes.push_back(
            profile_gpu_memory_note(gpu_mem, std::any_of(devices.begin(), devices.end(), [](const std::string& id) {
                                        return id.rfind("gpu", 0) == 0;
                                    })));
    for (const std::string& id : devices) runs.push_back(run_device(*registry, id, in, threads, repeat, gpu_memory));
    const std::optional<HmmsearchRun> hmmsearch = run_hmmsearch(flags, in, threads, repeat, notes);
    const bool same = agree(runs, hmmsearch, notes);
    if (device == "auto" && runs.front().device.rfind("gpu", 0) != 0)
        notes.insert(notes.begin(), "no GPU that runs the profile filters in this build or on this machine");
    print_table(table, in, runs, hmmsearch);
    for (const std::string& note : notes) table << "note: " << note << "\n";
    table << "note: GCUPS = model length x residues / seconds; search = hmmsearch's pipeline with --noali (filters, "
             "Forward, domains); kern = the filter kernels alone on a GPU\n";
    const nlohmann::json report = json_of(flags, in, runs, hmmsearch, notes, gpu_memory);
    if (json_to_stdout) std::cout << report.dump(2) << "\n";
    if (json_out) {
        json_out->stream() << report.dump(2) << "\n";
        json_out->commit();
        table << "wrote " << json << "\n";
    }
    table << std::flush;
    return same ? 0 : 1;
}

}  // namespace alignscope::cli
