// `alignscope-cli project FILE.alsproj list|show|export|delete|vacuum|check`:
// the project database without the GUI.
#include "cli_commands.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/store/export.hpp>
#include <alignscope/store/project.hpp>

#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <unistd.h>

namespace alignscope::cli {
namespace {

struct ProjectFlags {
    std::string path;
    std::int64_t job = 0;
    std::string format;
    std::string table = "auto";
    std::string output = "-";
    bool json = false;
};

// Reading commands open the project writable when they may (so an old schema
// is upgraded and dead jobs are marked interrupted), read-only otherwise, and
// read-only when the writable open fails: on a full disk a project can still
// be read (and exported elsewhere). When both fail, the first error is said.
store::Project open_for_reading(const std::string& path) {
    store::ProjectOptions options;
    std::error_code ec;
    const std::filesystem::path folder = std::filesystem::absolute(path, ec).parent_path();
    options.read_only = ::access(path.c_str(), W_OK) != 0 || ::access(folder.c_str(), W_OK) != 0;
    if (options.read_only) return store::Project(path, options);
    try {
        return store::Project(path, options);
    } catch (const Error& writable) {
        options.read_only = true;
        try {
            return store::Project(path, options);
        } catch (const Error&) {
            throw writable;
        }
    }
}

std::string local_time(std::int64_t ms) {
    if (ms <= 0) return "-";
    const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    localtime_r(&seconds, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return text;
}

std::string duration(const store::JobInfo& job) {
    // An interrupted job's end is when its death was noticed, not when it died.
    if (job.state == store::JobState::Interrupted) return "-";
    if (job.started_ms <= 0 || job.ended_ms < job.started_ms) return "-";
    std::ostringstream out;
    const double seconds = double(job.ended_ms - job.started_ms) / 1000.0;
    if (seconds < 60) out << std::fixed << std::setprecision(seconds < 10 ? 2 : 1) << seconds << " s";
    else
        out << int(seconds / 60) << " min " << int(seconds) % 60 << " s";
    return out.str();
}

std::string results_summary(const store::ResultCounts& c) {
    std::vector<std::string> parts;
    auto add = [&parts](std::int64_t n, const char* one, const char* many) {
        if (n > 0) parts.push_back(std::to_string(n) + " " + (n == 1 ? one : many));
    };
    add(c.alignments, "alignment", "alignments");
    add(c.hits, "hit", "hits");
    add(c.long_alignments, "long alignment", "long alignments");
    add(c.heatmaps, "heatmap", "heatmaps");
    add(c.timeline_events, "timeline event", "timeline events");
    add(c.bench_points, "bench point", "bench points");
    add(c.long_pair_stats, "long-pair statistics record", "long-pair statistics records");
    if (parts.empty()) return "none";
    std::string text;
    for (const auto& p : parts) text += (text.empty() ? "" : ", ") + p;
    return text;
}

std::string progress_text(const Progress& p) {
    std::ostringstream out;
    if (p.cells_total > 0)
        out << std::fixed << std::setprecision(1) << 100.0 * double(p.cells_done) / double(p.cells_total) << "% of "
            << p.cells_total << " cells";
    if (p.items_total > 0) out << (p.cells_total ? ", " : "") << p.items_done << "/" << p.items_total << " pairs";
    return out.str().empty() ? "-" : out.str();
}

int run_list(const ProjectFlags& flags) {
    const store::Project project = open_for_reading(flags.path);
    const auto jobs = project.jobs();
    std::cout << std::left << std::setw(6) << "JOB" << std::setw(13) << "STATE" << std::setw(9) << "COMMAND"
              << std::setw(12) << "ALGORITHM" << std::setw(10) << "DEVICES" << std::setw(21) << "CREATED"
              << std::setw(12) << "DURATION"
              << "RESULTS\n";
    for (const auto& job : jobs)
        std::cout << std::left << std::setw(6) << job.id << std::setw(13) << to_string(job.state) << std::setw(9)
                  << job.spec.command << std::setw(12) << (job.spec.algorithm.empty() ? "-" : job.spec.algorithm)
                  << std::setw(10) << (job.spec.devices.empty() ? "-" : job.spec.devices) << std::setw(21)
                  << local_time(job.created_ms) << std::setw(12) << duration(job) << results_summary(job.counts)
                  << '\n';
    const auto inputs = project.inputs();
    std::cout << "\n"
              << jobs.size() << (jobs.size() == 1 ? " job, " : " jobs, ") << inputs.size()
              << (inputs.size() == 1 ? " input" : " inputs") << "\n";
    for (const auto& in : inputs)
        std::cout << "  input " << in.id << ": " << in.path << " (" << to_string(in.kind) << ", " << in.alphabet << ", "
                  << in.record_count << " records, " << (in.embedded ? "kept in the project" : "referenced")
                  << (in.status == store::InputStatus::NotChecked ? "" : ", file " + std::string(to_string(in.status)))
                  << ")\n";
    return 0;
}

int run_show(const ProjectFlags& flags) {
    const store::Project project = open_for_reading(flags.path);
    const store::JobInfo job = project.job(flags.job);
    if (flags.json) {
        // The stored spec plus the job's life, for scripts.
        std::cout << "{\"job\":" << job.id << ",\"state\":\"" << to_string(job.state)
                  << "\",\"created_ms\":" << job.created_ms << ",\"started_ms\":" << job.started_ms
                  << ",\"ended_ms\":" << job.ended_ms << ",\"spec\":" << job.spec.to_json() << "}\n";
        return 0;
    }
    const auto& s = job.spec;
    auto line = [](const char* label, const std::string& value) {
        if (!value.empty()) std::cout << std::left << std::setw(14) << label << value << '\n';
    };
    std::cout << "job " << job.id << ": " << to_string(job.state) << '\n';
    line("command:", s.command);
    line("algorithm:", s.algorithm + (s.mode.empty() ? "" : " (" + s.mode + ")"));
    line("free ends:", s.free_ends);
    line("scoring:", s.scoring);
    std::string devices = s.devices;
    devices += " (streams " + (s.streams ? std::to_string(s.streams) : std::string("default")) + ", threads " +
               (s.threads ? std::to_string(s.threads) : std::string("all")) + ", kernel " +
               (s.kernel.empty() ? std::string("automatic") : s.kernel) + ")";
    line("devices:", devices);
    line("build:", s.build_version);
    line("driver:", s.driver_version);
    line("created:", local_time(job.created_ms));
    line("started:", local_time(job.started_ms));
    line("ended:", local_time(job.ended_ms));
    line("duration:", duration(job));
    line("progress:", progress_text(job.progress));
    line("process:", std::to_string(job.owner_pid) + " on " + job.owner_host);
    line("error:", job.error);
    line("results:", results_summary(job.counts));
    for (const auto& link : job.inputs) {
        const store::InputInfo in = project.input(link.input_id);
        line((link.role + ":").c_str(), "input " + std::to_string(in.id) + " " + in.path + " (" + in.alphabet + ", " +
                                            std::to_string(in.record_count) + " records, " +
                                            std::to_string(in.residue_count) + " residues, sha256 " +
                                            in.sha256.substr(0, 16) + "...)");
    }
    line("command line:", s.command_line);
    for (const auto& [key, value] : s.parameters) line((key + ":").c_str(), value);
    return 0;
}

int run_export(const ProjectFlags& flags) {
    // SIGINT, SIGTERM and SIGHUP stop it between pages: no temporary file left.
    const CancellationToken& cancel = interrupt_token();
    refuse_overlapping_files({{"the project", flags.path}}, {{"-o", flags.output}});
    const store::Project project = open_for_reading(flags.path);
    const store::ExportFormat format = store::parse_export_format(flags.format);
    const store::ExportTable table = store::parse_export_table(flags.table);
    // Resolve (and refuse) before creating the output file.
    const store::ExportTable resolved = store::resolve_export_table(project, flags.job, format, table);
    AtomicOutput out(flags.output);
    const std::int64_t rows = store::export_job(project, flags.job, format, out.stream(), resolved, &cancel);
    out.commit();
    if (flags.output != "-")
        std::cerr << "wrote " << rows << " " << to_string(resolved) << " rows of job " << flags.job << " to "
                  << flags.output << '\n';
    return 0;
}

int run_delete(const ProjectFlags& flags) {
    store::Project project(flags.path);
    const store::JobInfo job = project.job(flags.job);
    project.delete_job(flags.job);
    std::cout << "deleted job " << job.id << " (" << results_summary(job.counts) << ")\n";
    return 0;
}

int run_vacuum(const ProjectFlags& flags) {
    store::Project project(flags.path);
    const std::int64_t saved = project.vacuum();
    std::cout << "vacuumed " << flags.path << ": " << (saved > 0 ? saved : 0) << " bytes freed\n";
    return 0;
}

int run_check(const ProjectFlags& flags) {
    std::error_code ec;
    if (!std::filesystem::exists(flags.path, ec)) throw Error("no project " + flags.path + " (no such file)");
    // A file that cannot even be opened as a project is what check is there to
    // find: reported as its problem, exit 1 as for any other, and without the
    // advice to run check that other commands give.
    std::optional<store::Project> opened;
    store::CheckReport report;
    try {
        opened.emplace(open_for_reading(flags.path));
        report = opened->check();
    } catch (const Error& e) {
        std::string problem = e.what();
        const std::size_t advice = problem.find("; run `alignscope-cli project ");
        if (advice != std::string::npos) problem = problem.substr(0, advice) + "; restore it from a backup";
        std::cout << "problem: " << problem << '\n' << flags.path << ": 1 problem found\n";
        return 1;
    }
    store::Project& project = *opened;
    for (const auto& note : report.notes) std::cout << "note: " << note << '\n';
    for (const auto& problem : report.problems) std::cout << "problem: " << problem << '\n';
    if (report.ok()) {
        std::cout << flags.path << ": ok (schema version " << store::Project::schema_version << ", "
                  << project.jobs().size() << " jobs)\n";
        return 0;
    }
    std::cout << flags.path << ": " << report.problems.size() << " problem" << (report.problems.size() == 1 ? "" : "s")
              << " found\n";
    return 1;
}

}  // namespace

void add_project_command(CLI::App& app, CliContext& context) {
    auto flags = std::make_shared<ProjectFlags>();
    CLI::App* command =
        app.add_subcommand("project",
                           "Look into a project file (.alsproj): list, show, export, delete jobs; vacuum; check");
    command->add_option("file", flags->path, "Project file (.alsproj)")->required();
    command->require_subcommand(1);

    auto add = [&](const char* name, const char* help, int (*run)(const ProjectFlags&), bool takes_job) {
        CLI::App* sub = command->add_subcommand(name, help);
        if (takes_job)
            sub->add_option("job", flags->job, "Job number (see list)")
                ->required()
                ->transform(strict_number<std::int64_t>())
                ->check(CLI::Validator(
                    [](const std::string& text) {
                        return text.front() == '-' || text == "0" ? "job numbers start at 1 (see list), got " + text
                                                                  : std::string();
                    },
                    "", "job number"));
        sub->callback([flags, run, &context] { context.action = [flags, run] { return run(*flags); }; });
        return sub;
    };
    add("list", "List the project's jobs and inputs", &run_list, false);
    CLI::App* show = add("show", "Show one job: settings, state, inputs, result counts", &run_show, true);
    show->add_flag("--json", flags->json, "Print the job's stored specification as JSON");
    CLI::App* exporter = add("export", "Write a job's results to a file", &run_export, true);
    exporter->add_option("--format", flags->format, "json (JSON Lines), tsv, pair, chrome-trace or csv")->required();
    exporter
        ->add_option("--table", flags->table,
                     "Which results: auto, alignments, hits, long-alignments, timeline or bench")
        ->capture_default_str();
    exporter->add_option("-o,--output", flags->output, "Output file, written whole or not at all [default: stdout]");
    add("delete", "Delete a job and all its results", &run_delete, true);
    add("vacuum", "Rebuild the file without free space", &run_vacuum, false);
    add("check", "Check the file's integrity, result counts and input files (exit 1 on problems)", &run_check, false);
}

}  // namespace alignscope::cli
