// `alignscope-cli align A.fa B.fa`: every record of A against every record of B
// (or record i with record i under --zip), on the chosen device, written as
// pair, JSON Lines, TSV or SAM. With --long (or by itself for one pair whose
// shorter sequence has at least kLongPairThreshold residues): the first record
// of each file through the long-pair path (align_long_on: the GPU pipeline in
// linear memory, Myers-Miller on CPU devices).
#include "cli_commands.hpp"
#include "cli_exit.hpp"
#include "cli_options.hpp"
#include "cli_progress.hpp"
#include "cli_project_flag.hpp"

#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/device/pair_pipeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/alignment_stream.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <malloc.h>

namespace alignscope::cli {
namespace {

struct AlignFlags {
    std::string query_path, target_path;
    bool zip = false;
    bool no_traceback = false;
    bool no_begins = false;
    std::string format = "pair";
    std::string output = "-";
    ScoringFlags scoring;
    DeviceFlags device;
    ProjectFlag project;
    bool long_pair = false;
    bool long_stats = false;
    CLI::Option* stats_option = nullptr;
    LongFlags long_flags;
    // Checkpoint and resume of the long-pair path's stage 1.
    std::string checkpoint_dir;
    double checkpoint_every = 300;
    bool resume = false;
    CLI::Option* checkpoint_option = nullptr;
    CLI::Option* checkpoint_every_option = nullptr;
    CLI::Option* resume_option = nullptr;
    // Streaming the long-pair alignment to --output as it is traced back.
    bool stream = false, no_stream = false;
    CLI::Option* stream_option = nullptr;
    CLI::Option* no_stream_option = nullptr;
};

// align --long streams the alignment to -o FILE by itself when the longer
// sequence has at least this many residues (the alignment then has about as
// many columns or more: global alignments at least that many).
constexpr std::int64_t kStreamResidues = policy::stream_residues;

bool is_nucleotide(AlphabetKind kind) { return kind != AlphabetKind::Protein; }

int run_and_write(const AlignFlags& flags, CliContext& context, const PairJob& job, Backend& backend,
                  const SequenceSet& queries, const SequenceSet& targets, OutputFormat format,
                  store::JobRecording* recording);
int run_long(const AlignFlags& flags, CliContext& context, const SequenceSet& queries, const SequenceSet& targets,
             OutputFormat format, const AlignOptions& options, bool automatic);
std::optional<int> run_zip_streamed(const AlignFlags& flags, CliContext& context, OutputFormat format,
                                    const AlignOptions& options);

// The flags of the long-pair path, refused elsewhere (--stats also applies to --zip).
void refuse_long_flags(const AlignFlags& flags, bool stats_allowed) {
    if (flags.long_flags.given() || (!stats_allowed && flags.stats_option->count()) ||
        flags.checkpoint_option->count() || flags.checkpoint_every_option->count() || flags.resume_option->count() ||
        flags.stream_option->count() || flags.no_stream_option->count())
        throw Error(
            "--strategy, --kernels, --special-rows-mem, --checkpoint, --checkpoint-every, --resume, --stream, "
            "--no-stream and --stats apply to the long-pair path: add --long "
            "(taken by itself only for one pair of at least " +
            std::to_string(kLongPairThreshold) + " residues each; --stats also applies to --zip)");
}

std::string zip_count_mismatch(const AlignFlags& flags, std::uint64_t queries, std::uint64_t targets) {
    return "--zip pairs record i with record i, but " + flags.query_path + " has " + std::to_string(queries) +
           " records and " + flags.target_path + " has " + std::to_string(targets);
}

void refuse_mixed_alphabets(const AlignFlags& flags, AlphabetKind queries, AlphabetKind targets) {
    if (is_nucleotide(queries) != is_nucleotide(targets))
        throw Error(flags.query_path + " holds " + std::string(to_string(queries)) + " but " + flags.target_path +
                    " holds " + std::string(to_string(targets)) + " sequences (use --alphabet to override detection)");
}

int run_align(const AlignFlags& flags, CliContext& context) {
    // Before anything is read or created: no output may be an input, the
    // project, the checkpoint's folder or another output.
    refuse_overlapping_files({{"QUERIES", flags.query_path},
                              {"TARGETS", flags.target_path},
                              {"--matrix", flags.scoring.matrix}},
                             {{"-o", flags.output},
                              {"--timeline", flags.device.timeline},
                              {"--project", flags.project.path},
                              {"--checkpoint", flags.checkpoint_dir}});
    const OutputFormat format = parse_output_format(flags.format);
    AlignOptions options = flags.scoring.align_options();
    options.traceback = !flags.no_traceback;
    options.begins = !flags.no_begins;
    if (format == OutputFormat::Sam && !options.traceback)
        throw Error("--format sam needs the alignment; drop --no-traceback");
    if (!options.begins && options.traceback)
        throw Error("--no-begins needs --no-traceback (the alignment is traced from its begin)");

    // Record i with record i, not recorded in a project: streamed from file to
    // file, never all in memory (unless the files turn out to hold one long pair).
    if (flags.zip && !flags.long_pair && !flags.project.enabled())
        if (const std::optional<int> status = run_zip_streamed(flags, context, format, options)) return *status;

    ReadOptions read_options;
    read_options.alphabet = flags.scoring.alphabet_override();
    const SequenceSet queries = read_sequences(flags.query_path, read_options);
    const SequenceSet targets = read_sequences(flags.target_path, read_options);
    // Once per file, though both may be the same one.
    if (const std::string warning = queries.duplicate_id_warning(); !warning.empty())
        std::cerr << "alignscope-cli: warning: " << warning << '\n';
    if (const std::string warning = targets.duplicate_id_warning();
        !warning.empty() && flags.target_path != flags.query_path)
        std::cerr << "alignscope-cli: warning: " << warning << '\n';
    if (queries.records.empty()) throw Error(flags.query_path + ": no sequences");
    if (targets.records.empty()) throw Error(flags.target_path + ": no sequences");
    refuse_mixed_alphabets(flags, queries.alphabet, targets.alphabet);

    // The long-pair path: asked for, or one pair long enough.
    const std::int64_t shorter = static_cast<std::int64_t>(
        std::min(queries.records.front().residues.size(), targets.records.front().residues.size()));
    const bool one_pair = queries.records.size() == 1 && targets.records.size() == 1;
    const bool automatic = !flags.long_pair && one_pair && shorter >= kLongPairThreshold;
    if (flags.long_pair || automatic) return run_long(flags, context, queries, targets, format, options, automatic);
    refuse_long_flags(flags, false);

    PairJob job;
    job.queries = &queries.records;
    job.targets = &targets.records;
    job.scheme = flags.scoring.scheme(queries.alphabet);
    job.options = options;
    flags.device.apply(job);
    if (flags.zip) {
        if (queries.records.size() != targets.records.size())
            throw Error(zip_count_mismatch(flags, queries.records.size(), targets.records.size()));
        for (std::uint32_t i = 0; i < queries.records.size(); ++i) job.pairs.emplace_back(i, i);
    } else {
        const std::uint64_t count = std::uint64_t(queries.records.size()) * targets.records.size();
        if (count > 100'000'000)
            throw Error("align: " + std::to_string(count) +
                        " pairs (all against all) is too many; use --zip or the search command");
        for (std::uint32_t i = 0; i < queries.records.size(); ++i)
            for (std::uint32_t j = 0; j < targets.records.size(); ++j) job.pairs.emplace_back(i, j);
    }

    Backend& backend = context.registry->select(flags.device.device);
    store::JobSpec spec = store::JobSpec::for_pair_job("align", job, backend.info());
    spec.command_line = context.command_line;
    std::unique_ptr<store::JobRecording> recording = flags.project.begin(spec);
    try {
        return run_and_write(flags, context, job, backend, queries, targets, format, recording.get());
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
}

int run_and_write(const AlignFlags& flags, CliContext& context, const PairJob& job, Backend& backend,
                  const SequenceSet& queries, const SequenceSet& targets, OutputFormat format,
                  store::JobRecording* recording) {
    if (recording) {
        recording->add_input(queries, "query");
        recording->add_input(targets, "target");
    }
    TimelineRecorder timeline;
    TerminalProgress progress("align");
    JobContext job_context;
    job_context.cancel = &interrupt_token();
    auto record_progress = recording ? recording->progress_callback() : std::function<void(const Progress&)>{};
    job_context.progress = [&progress, &record_progress](const Progress& p) {
        progress(p);
        if (record_progress) record_progress(p);
    };
    job_context.timeline = &timeline;
    // Open the outputs before the work so a bad path fails fast.
    AtomicOutput out(flags.output);
    std::optional<AtomicOutput> timeline_out;
    if (!flags.device.timeline.empty()) timeline_out.emplace(flags.device.timeline);

    std::vector<Alignment> results = backend.align_pairs(job, job_context);
    progress.finish();
    if (results.size() != job.pairs.size()) throw Error("internal: backend returned a wrong number of results");

    WriterContext writer_context;
    writer_context.command_line = context.command_line;
    writer_context.scheme = job.scheme;
    for (const auto& t : targets.records) writer_context.references.push_back(&t);
    auto writer = AlignmentWriter::create(format, out.stream(), std::move(writer_context));
    writer->begin();
    for (std::size_t k = 0; k < results.size(); ++k) {
        const Sequence& q = queries.records[job.pairs[k].first];
        const Sequence& t = targets.records[job.pairs[k].second];
        results[k].query_id = q.id;
        results[k].target_id = t.id;
        writer->write(results[k], q, t);
    }
    writer->end();
    if (timeline_out) write_chrome_trace(timeline_out->stream(), timeline.events(), timeline.clock_source());
    commit_together({&out, timeline_out ? &*timeline_out : nullptr});
    if (recording) {
        recording->add_alignments(results);
        recording->add_timeline(timeline.events(), timeline.clock_source());
        recording->finish_done();
    }
    return 0;
}

std::optional<int> run_zip_streamed(const AlignFlags& flags, CliContext& context, OutputFormat format,
                                    const AlignOptions& options) {
    refuse_long_flags(flags, true);
    // Found while the input is read: a GPU's driver may still be starting.
    auto backend = [&]() -> Backend& { return context.registry->select(flags.device.device); };
    PairPipelineSettings settings;
    settings.query_path = flags.query_path;
    settings.target_path = flags.target_path;
    settings.read.alphabet = flags.scoring.alphabet_override();
    settings.format = format;
    settings.writer.command_line = context.command_line;
    settings.stages = flags.long_stats;
    settings.make_job = [&](AlphabetKind queries, AlphabetKind targets) {
        refuse_mixed_alphabets(flags, queries, targets);
        PairJob job;
        job.scheme = flags.scoring.scheme(queries);
        job.options = options;
        flags.device.apply(job);
        return job;
    };
    settings.count_mismatch = [&](std::uint64_t queries, std::uint64_t targets) {
        return zip_count_mismatch(flags, queries, targets);
    };
    settings.warn = [](const std::string& line) { std::cerr << "alignscope-cli: warning: " << line << '\n'; };
    settings.hand_back_single_pair = [](const Sequence& query, const Sequence& target) {
        return static_cast<std::int64_t>(std::min(query.residues.size(), target.residues.size())) >= kLongPairThreshold;
    };

    // Blocks of records, chunks of pairs and results, and pieces of text come
    // and go by the thousand, the same sizes again and again: kept by malloc
    // (neither mapped and unmapped each time nor its heaps trimmed and grown
    // again) they are reused without page faults. Mapped each time, they cost
    // more system time than the parsing itself, and every munmap and mprotect
    // holds up the other threads' page faults. Memory stays at the pipeline's
    // peak (chunks held, the reading ahead); what grows with the input is only
    // the ids kept to find repeated ones.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
    mallopt(M_TRIM_THRESHOLD, 1 << 30);

    TimelineRecorder timeline;
    TerminalProgress progress("align");
    JobContext job_context;
    job_context.cancel = &interrupt_token();
    job_context.progress = [&progress](const Progress& p) { progress(p); };
    if (!flags.device.timeline.empty()) job_context.timeline = &timeline;
    // The outputs open before the work, so that a bad path fails fast.
    AtomicOutput out(flags.output);
    std::optional<AtomicOutput> timeline_out;
    if (!flags.device.timeline.empty()) timeline_out.emplace(flags.device.timeline);
    const PairPipelineStats stats = run_pair_pipeline(settings, backend, job_context, out);
    if (stats.handed_back) return std::nullopt;  // one long pair: the long-pair path
    progress.finish();
    if (timeline_out) write_chrome_trace(timeline_out->stream(), timeline.events(), timeline.clock_source());
    commit_together({&out, timeline_out ? &*timeline_out : nullptr});
    if (flags.long_stats) std::cerr << describe(stats, "align --zip") << '\n';
    teardown_left_to_exit() = true;
    return 0;
}

// The strategy that ran, as the long-pair path recorded it in its statistics
// (the pass runner's "strips", "streams" or "cpu-passes", or "linear-space"),
// never inferred from the kernel's name.
std::string strategy_that_ran(const longpair::LongPairStats& stats) {
    if (stats.strategy.empty()) throw Error("internal error: the long-pair path recorded no strategy");
    return stats.strategy;
}

// The long-pair path's statistics as JSON (the "long_pair" field of --format json).
nlohmann::json stats_json(const longpair::LongPairStats& stats, double seconds, std::uint64_t cells,
                          const std::string& strategy, bool automatic, bool streamed) {
    nlohmann::json j;
    j["seconds"] = seconds;
    j["stage_seconds"] = {stats.stage_seconds[0], stats.stage_seconds[1], stats.stage_seconds[2]};
    j["stage_cells"] = {stats.stage_cells[0], stats.stage_cells[1], stats.stage_cells[2]};
    // Stage 1 computed stage_cells[0] (m x n, or the rows below the checkpoint when resumed).
    (void)cells;
    j["stage1_gcups"] = stats.stage_seconds[0] > 0 ? double(stats.stage_cells[0]) / stats.stage_seconds[0] / 1e9 : 0.0;
    j["special_rows"] = stats.special_rows;
    j["crossings"] = stats.crossings;
    j["split_levels"] = stats.split_levels;
    j["base_segments"] = stats.base_segments;
    j["strategy"] = strategy;
    j["automatic"] = automatic;
    j["resumed_from_row"] = stats.resumed_from_row;
    j["checkpoints"] = stats.checkpoints;
    j["checkpoint_seconds"] = stats.checkpoint_seconds;
    j["streamed"] = streamed;
    j["wider_path"] = stats.wider_path;  // why the 64-bit linear-space path stood in for the pipeline ("": it did not)
    return j;
}

std::string stats_line_core(const longpair::LongPairStats& stats, double seconds, std::uint64_t cells,
                            const Alignment& a) {
    char text[640];
    const double gcups = stats.stage_seconds[0] > 0 ? double(stats.stage_cells[0]) / stats.stage_seconds[0] / 1e9 : 0.0;
    if (stats.special_rows == 0 && stats.stage_cells[1] == 0 && stats.stage_cells[2] == 0) {
        // No stages (a CPU backend's linear-space path, or a pair too small for special rows).
        std::snprintf(text, sizeof text, "align --long: %lld x %lld on %s (%s): %.3f s, %llu cells, %.2f GCUPS",
                      static_cast<long long>(a.query_length), static_cast<long long>(a.target_length), a.device.c_str(),
                      a.kernel.empty() ? "-" : a.kernel.c_str(), seconds, static_cast<unsigned long long>(cells),
                      seconds > 0 ? double(cells) / seconds / 1e9 : 0.0);
        // In place of a pipeline that could not hold the pair (the note on stderr says why).
        if (!stats.wider_path.empty()) return std::string(text) + "; 64-bit linear space on the CPU";
        return text;
    }
    std::snprintf(text, sizeof text,
                  "align --long: %lld x %lld on %s (%s): %.3f s; stage 1 %.3f s, %llu cells, %.2f GCUPS, %lld "
                  "special rows; stage 2 %.3f s, %llu cells, %lld crossings; stage 3 %.3f s, %llu cells, %d split "
                  "levels, %lld base segments",
                  static_cast<long long>(a.query_length), static_cast<long long>(a.target_length), a.device.c_str(),
                  a.kernel.empty() ? "-" : a.kernel.c_str(), seconds, stats.stage_seconds[0],
                  static_cast<unsigned long long>(stats.stage_cells[0]), gcups,
                  static_cast<long long>(stats.special_rows), stats.stage_seconds[1],
                  static_cast<unsigned long long>(stats.stage_cells[1]), static_cast<long long>(stats.crossings),
                  stats.stage_seconds[2], static_cast<unsigned long long>(stats.stage_cells[2]), stats.split_levels,
                  static_cast<long long>(stats.base_segments));
    std::string line = text;
    if (stats.resumed_from_row > 0)
        line += "; resumed from row " + std::to_string(stats.resumed_from_row) + " (stage 1 computed rows " +
                std::to_string(stats.resumed_from_row + 1) + ".." + std::to_string(a.query_length) + " only)";
    if (stats.checkpoints > 0) {
        char more[96];
        std::snprintf(more, sizeof more, "; %d checkpoints written in %.3f s", stats.checkpoints,
                      stats.checkpoint_seconds);
        line += more;
    }
    return line;
}

std::string stats_line(const longpair::LongPairStats& stats, double seconds, std::uint64_t cells, const Alignment& a,
                       const std::string& streamed_to) {
    std::string line = stats_line_core(stats, seconds, cells, a);
    if (!streamed_to.empty()) {
        line += "; alignment streamed to " + streamed_to + " in " + std::to_string(stats.streamed_pieces) + " pieces";
        if (stats.stream_window > 0)
            line += " (at most " + std::to_string(stats.stream_peak_pieces) + " of a window of " +
                    std::to_string(stats.stream_window) + " segment tracebacks held)";
    }
    return line;
}

// Alignments with more columns than this go to the project as a summary
// pointing at the output file, not as a row holding the aligned text.
constexpr std::int64_t kProjectRowColumns = 1'000'000;
// Blocks per side of the stage-1 overview kept for the project's heatmap.
constexpr int kOverviewSize = policy::long_pair_overview_blocks;

// What the long-pair path will do, settled from the flags and the pair
// before any work: the runner's settings, the pipeline's options and whether
// the alignment streams to the output file.
struct LongPlan {
    LongRunnerSettings settings;
    longpair::LongPairOptions options;
    bool streamed = false;
    bool checkpoint_dir_existed = false;
    // The pair takes the 64-bit linear-space path in place of a pipeline that
    // cannot hold it (longpair::LongRoute), and with it no checkpoint.
    bool checkpoint_unused = false;
};

LongPlan plan_long(const AlignFlags& flags, const SequenceSet& queries, const SequenceSet& targets,
                   const AlignOptions& options, bool automatic) {
    LongPlan plan;
    plan.settings = flags.long_flags.settings(flags.device);
    longpair::LongPairOptions& long_options = plan.options;
    long_options.align = options;
    long_options.threads = flags.device.threads;
    if (const std::uint64_t budget = flags.long_flags.special_row_budget()) long_options.special_row_budget = budget;
    if (flags.resume && flags.checkpoint_dir.empty())
        throw Error("--resume needs --checkpoint DIR, the directory of the checkpoint to go on from");
    if (flags.checkpoint_every_option->count() && flags.checkpoint_dir.empty())
        throw Error("--checkpoint-every applies with --checkpoint DIR");
    if (!(flags.checkpoint_every >= 0) || flags.checkpoint_every > 1e9)
        throw Error("--checkpoint-every must be 0 (at every special row) or a number of seconds");
    long_options.checkpoint_dir = flags.checkpoint_dir;
    long_options.checkpoint_every = flags.checkpoint_every;
    long_options.resume = flags.resume;
    // Streaming: asked for, or a pair long enough, written to a file.
    if (flags.stream && flags.no_stream) throw Error("--stream and --no-stream exclude each other");
    const bool to_file = flags.output != "-" && !flags.output.empty();
    if (flags.stream && !to_file)
        throw Error("--stream writes the alignment to a file as it is traced back: add -o FILE");
    if (flags.stream && !options.traceback)
        throw Error("--stream writes the alignment as it is traced back: with --no-traceback there is none");
    const std::int64_t longer = static_cast<std::int64_t>(
        std::max(queries.records.front().residues.size(), targets.records.front().residues.size()));
    const bool large = longer >= kStreamResidues;
    plan.streamed = options.traceback && to_file && (flags.stream || (large && !flags.no_stream));
    // A streamed file is finished (renamed in) only after the pipeline
    // returns, and that last write is the heaviest: the checkpoint stays until
    // it has succeeded, so a full disk then still leaves the job resumable.
    std::error_code exists_ec;
    plan.checkpoint_dir_existed =
        !flags.checkpoint_dir.empty() && std::filesystem::exists(flags.checkpoint_dir, exists_ec);
    if (plan.streamed && !flags.checkpoint_dir.empty()) long_options.keep_checkpoint = true;
    // The stage-1 overview (a max-pooled picture of the whole matrix) for the project's heatmap.
    if (flags.project.enabled()) long_options.overview_size = kOverviewSize;
    const Sequence& q = queries.records.front();
    const Sequence& t = targets.records.front();
    if (automatic)
        std::cerr << "align: one pair of " << q.residues.size() << " x " << t.residues.size()
                  << " residues: the long-pair path (--long; taken from " << kLongPairThreshold << " residues each)\n";
    if (plan.streamed && !flags.stream)
        std::cerr << "align --long: " << longer << " residues: the alignment is streamed to " << flags.output
                  << " as it is traced back (--stream; taken from " << kStreamResidues
                  << " residues, --no-stream to build it in memory)\n";
    else if (large && options.traceback && !to_file && !flags.no_stream)
        std::cerr << "align --long: " << longer << " residues: to standard output the alignment is built whole in "
                  << "memory first; -o FILE streams it to the file as it is traced back\n";
    if (!automatic)
        for (const SequenceSet* set : {&queries, &targets})
            if (set->records.size() > 1)
                std::cerr << "align --long: " << set->path << " holds " << set->records.size()
                          << " records; aligning its first, " << set->records.front().id << "\n";
    return plan;
}

// Where the pair will run, before any work: a pair that the pipeline it was
// meant for cannot hold takes the 64-bit linear-space path, said on stderr in
// one line, and keeps no checkpoint (its directory is not used).
void route_long(const AlignFlags& flags, Backend& backend, const Sequence& q, const Sequence& t,
                const ScoringScheme& scheme, LongPlan& plan) {
    const longpair::LongRoute route =
        longpair::route_long_pair(backend, q.residues, t.residues, scheme, plan.options, plan.settings);
    if (route.wider_reason.empty()) return;
    std::string note =
        "align --long: " + route.wider_reason + "; aligned on the CPU in 64-bit linear space (" + route.kernel + ")";
    if (route.checkpoint_skipped()) {
        plan.checkpoint_unused = true;
        plan.options.keep_checkpoint = false;
        note += "; this job cannot checkpoint: " + flags.checkpoint_dir + " is not used";
    }
    std::cerr << note << "\n";
}

// The project's record of a long-pair job.
store::JobSpec long_job_spec(const AlignFlags& flags, CliContext& context, const PairJob& job, Backend& backend,
                             const LongPlan& plan, bool automatic) {
    store::JobSpec spec = store::JobSpec::for_pair_job("align", job, backend.info());
    spec.command_line = context.command_line;
    spec.parameters["long"] = automatic ? "automatic" : "yes";
    if (!plan.settings.strategy.empty()) spec.parameters["strategy"] = plan.settings.strategy;
    if (plan.settings.kernels) spec.parameters["kernels"] = std::to_string(plan.settings.kernels);
    if (plan.options.special_row_budget)
        spec.parameters["special_row_budget"] = std::to_string(plan.options.special_row_budget);
    if (!flags.checkpoint_dir.empty()) spec.parameters["checkpoint"] = flags.checkpoint_dir;
    if (flags.resume) spec.parameters["resume"] = "yes";
    if (plan.streamed) spec.parameters["stream"] = "yes";
    return spec;
}

// The alignment into its output: the streamed file finished (its columns are
// in it already), or the whole alignment written by the format's writer, the
// JSON object with the pipeline's statistics added.
void write_long_alignment(const AlignFlags& flags, OutputFormat format, const LongPlan& plan,
                          WriterContext writer_context, std::optional<AtomicOutput>& out,
                          std::optional<AlignmentFileStream>& stream, const Alignment& a, const Sequence& q,
                          const Sequence& t, const nlohmann::json& long_pair) {
    if (stream) {
        try {
            if (format == OutputFormat::Json) stream->commit(nlohmann::json{{"long_pair", long_pair}}.dump());
            else
                stream->commit();
        } catch (...) {
            if (plan.options.keep_checkpoint)
                std::cerr << "align --long: the checkpoint in " << flags.checkpoint_dir
                          << " is kept: run the same command with --resume to write the alignment again\n";
            throw;
        }
        if (plan.options.keep_checkpoint)
            longpair::LongCheckpoint::remove_files_in(flags.checkpoint_dir, !plan.checkpoint_dir_existed);
        return;
    }
    if (format == OutputFormat::Json) {
        std::ostringstream line;
        auto writer = AlignmentWriter::create(format, line, std::move(writer_context));
        writer->begin();
        writer->write(a, q, t);
        writer->end();
        nlohmann::json j = nlohmann::json::parse(line.str());
        j["long_pair"] = long_pair;
        out->stream() << j.dump() << '\n';
    } else {
        auto writer = AlignmentWriter::create(format, out->stream(), std::move(writer_context));
        writer->begin();
        writer->write(a, q, t);
        writer->end();
    }
    out->commit();
}

// The project's rows of a finished long-pair job: the alignment (or, when it
// is long or was streamed, a summary pointing at the file), the statistics,
// the stage-1 heatmap and the timeline.
void record_long(const AlignFlags& flags, OutputFormat format, const LongPlan& plan, store::JobRecording& recording,
                 const Alignment& a, const longpair::LongPairStats& stats, double seconds, const ScoringScheme& scheme,
                 const TimelineRecorder& timeline) {
    if (!plan.streamed && a.stats.length <= kProjectRowColumns) {
        recording.add_alignments({a});
    } else {
        store::LongAlignmentSummary summary;
        summary.query_id = a.query_id;
        summary.target_id = a.target_id;
        summary.mode = a.mode;
        summary.score = a.score;
        summary.query_begin = a.query_begin;
        summary.query_end = a.query_end;
        summary.target_begin = a.target_begin;
        summary.target_end = a.target_end;
        summary.query_length = a.query_length;
        summary.target_length = a.target_length;
        summary.stats = a.stats;
        if (flags.output != "-") {
            std::error_code ec;
            const auto absolute = std::filesystem::absolute(flags.output, ec);
            summary.alignment_path = ec ? flags.output : absolute.string();
        }
        summary.alignment_format = std::string(to_string(format));
        summary.device = a.device;
        summary.kernel = a.kernel;
        summary.seconds = seconds;
        recording.add_long_alignment(summary);
    }
    store::LongPairStats stored = store::LongPairStats::from(stats, a, seconds);
    stored.strategy = strategy_that_ran(stats);
    stored.kernels = plan.settings.kernels;
    stored.streams = plan.settings.streams;
    recording.add_long_pair_stats(stored);
    if (!stats.overview.empty())
        recording.add_heatmap(store::Heatmap::from_long_overview(stats.overview, a, scheme.scale));
    recording.add_timeline(timeline.events(), timeline.clock_source());
    recording.finish_done();
}

int run_long(const AlignFlags& flags, CliContext& context, const SequenceSet& queries, const SequenceSet& targets,
             OutputFormat format, const AlignOptions& options, bool automatic) {
    LongPlan plan = plan_long(flags, queries, targets, options, automatic);
    const Sequence& q = queries.records.front();
    const Sequence& t = targets.records.front();
    PairJob job;  // for the project's record of the job
    job.queries = &queries.records;
    job.targets = &targets.records;
    job.pairs.emplace_back(0, 0);
    job.scheme = flags.scoring.scheme(queries.alphabet);
    job.options = options;
    flags.device.apply(job);

    Backend& backend = context.registry->select(flags.device.device);
    route_long(flags, backend, q, t, job.scheme, plan);
    std::unique_ptr<store::JobRecording> recording =
        flags.project.begin(long_job_spec(flags, context, job, backend, plan, automatic));
    try {
        if (recording) {
            recording->add_input(queries, "query");
            recording->add_input(targets, "target");
        }
        TimelineRecorder timeline;
        TerminalProgress progress("align --long", TerminalProgress::Unit::Cells);
        JobContext job_context;
        job_context.cancel = &interrupt_token();
        auto record_progress = recording ? recording->progress_callback() : std::function<void(const Progress&)>{};
        job_context.progress = [&progress, &record_progress](const Progress& p) {
            progress(p);
            if (record_progress) record_progress(p);
        };
        job_context.timeline = &timeline;
        // The outputs open before the work, so that a bad path fails fast.
        WriterContext writer_context;
        writer_context.command_line = context.command_line;
        writer_context.scheme = job.scheme;
        writer_context.references.push_back(&t);
        std::optional<AtomicOutput> out;
        std::optional<AlignmentFileStream> stream;
        if (plan.streamed) {
            stream.emplace(flags.output, format, writer_context, q, t);
            plan.options.sink = &*stream;
        } else {
            out.emplace(flags.output);
        }
        std::optional<AtomicOutput> timeline_out;
        if (!flags.device.timeline.empty()) timeline_out.emplace(flags.device.timeline);

        longpair::LongPairStats stats;
        const auto t0 = std::chrono::steady_clock::now();
        Alignment a;
        try {
            a = longpair::align_long_on(backend, q.residues, t.residues, job.scheme, plan.options, plan.settings,
                                        job_context, &stats);
        } catch (const Cancelled&) {
            std::error_code ec;
            if (!flags.checkpoint_dir.empty() && !plan.checkpoint_unused &&
                std::filesystem::exists(std::filesystem::path(flags.checkpoint_dir) / longpair::kCheckpointManifest,
                                        ec))
                std::cerr << "\nalign --long: the checkpoint in " << flags.checkpoint_dir
                          << " is kept: run the same command with --resume to go on from it\n";
            if (stream) std::cerr << "align --long: " << flags.output << " was not written\n";
            throw;
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        progress.finish();
        a.query_id = q.id;
        a.target_id = t.id;
        const std::uint64_t cells = static_cast<std::uint64_t>(q.residues.size()) * t.residues.size();
        const nlohmann::json long_pair =
            stats_json(stats, seconds, cells, strategy_that_ran(stats), automatic, plan.streamed);
        // The timeline is written and checked before the alignment is put in
        // place and put in place after it: both files or neither.
        if (timeline_out) {
            write_chrome_trace(timeline_out->stream(), timeline.events(), timeline.clock_source());
            timeline_out->finish();
        }
        write_long_alignment(flags, format, plan, std::move(writer_context), out, stream, a, q, t, long_pair);
        if (timeline_out) timeline_out->commit();
        if (flags.long_stats)
            std::cerr << stats_line(stats, seconds, cells, a, plan.streamed ? flags.output : std::string()) << "\n";
        if (recording) record_long(flags, format, plan, *recording, a, stats, seconds, job.scheme, timeline);
        return 0;
    } catch (...) {
        ProjectFlag::record_failure(recording.get());
        throw;
    }
}

}  // namespace

void add_align_command(CLI::App& app, CliContext& context) {
    auto flags = std::make_shared<AlignFlags>();
    CLI::App* command = app.add_subcommand("align", "Align every record of QUERIES against every record of TARGETS");
    command->add_option("queries", flags->query_path, "FASTA/FASTQ file (plain or gzip) of query sequences")
        ->required();
    command->add_option("targets", flags->target_path, "FASTA/FASTQ file (plain or gzip) of target sequences")
        ->required();
    command->add_flag("--zip", flags->zip, "Pair record i of QUERIES with record i of TARGETS");
    command->add_flag("--no-traceback", flags->no_traceback, "Scores and coordinates only, no alignment");
    command->add_flag("--no-begins", flags->no_begins,
                      "With --no-traceback: scores and end positions only; begins that need a pass of their own "
                      "(local, semi-global with free begins) are 0 on a GPU, which skips its reverse pass");
    command->add_option("--format", flags->format, "Output: pair, json (JSON Lines), tsv or sam")
        ->capture_default_str();
    command->add_option("-o,--output", flags->output, "Output file [default: standard output]");
    flags->scoring.add_to(*command);
    flags->device.add_to(*command, "cpu");
    flags->project.add_to(*command);
    command->add_flag("--long", flags->long_pair,
                      "Long-pair path: the first record of each file, aligned in memory linear in the lengths "
                      "(GPU pipeline, or Myers-Miller on CPU devices); taken by itself for one pair of at least "
                      "20000 residues each");
    flags->long_flags.add_to(*command);
    flags->stats_option = command->add_flag(
        "--stats", flags->long_stats,
        "Print on stderr where the time went: the long-pair path's stage timings and cells; with --zip, the busy "
        "seconds of each stage of the streamed pipeline (read, parse, align and inside it pack, copies and kernels, "
        "format, write)");
    flags->checkpoint_option = command->add_option(
        "--checkpoint", flags->checkpoint_dir,
        "Long-pair path: checkpoint stage 1 into DIR (created when missing) so that a killed job can go on with "
        "--resume; removed after a successful run");
    flags->checkpoint_every_option =
        command->add_option("--checkpoint-every", flags->checkpoint_every,
                            "Long-pair path: seconds between checkpoints, 0 = at every special row [default: 300]");
    flags->resume_option = command->add_flag(
        "--resume", flags->resume,
        "Long-pair path: go on from the checkpoint in --checkpoint DIR (any device, strategy or stream count)");
    flags->stream_option = command->add_flag(
        "--stream", flags->stream,
        "Long-pair path: write the alignment to -o FILE as it is traced back, never whole in memory (pair blocks and "
        "the json CIGAR as they come, tsv/sam from the CIGAR; the same bytes; the file appears only on success); "
        "taken by itself with -o FILE when the longer sequence has at least " +
            std::to_string(kStreamResidues) + " residues");
    flags->no_stream_option = command->add_flag("--no-stream", flags->no_stream,
                                                "Long-pair path: build the alignment in memory even when it is long");
    command->callback([flags, &context] { context.action = [flags, &context] { return run_align(*flags, context); }; });
}

}  // namespace alignscope::cli
