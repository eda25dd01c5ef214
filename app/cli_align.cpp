// `alignscope-cli align A.fa B.fa`: every record of A against every record of B
// (or record i with record i under --zip), on the chosen device, written as
// pair, JSON Lines, TSV or SAM.
#include "cli_commands.hpp"
#include "cli_options.hpp"
#include "cli_project_flag.hpp"
#include "cli_progress.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <iostream>

namespace alignscope::cli {
namespace {

struct AlignFlags {
    std::string query_path, target_path;
    bool zip = false;
    bool no_traceback = false;
    std::string format = "pair";
    std::string output = "-";
    ScoringFlags scoring;
    DeviceFlags device;
    ProjectFlag project;
};

bool is_nucleotide(AlphabetKind kind) { return kind != AlphabetKind::Protein; }

int run_and_write(const AlignFlags& flags, CliContext& context, const PairJob& job, Backend& backend,
                  const SequenceSet& queries, const SequenceSet& targets, OutputFormat format,
                  store::JobRecording* recording);

int run_align(const AlignFlags& flags, CliContext& context) {
    const OutputFormat format = parse_output_format(flags.format);
    AlignOptions options = flags.scoring.align_options();
    options.traceback = !flags.no_traceback;
    if (format == OutputFormat::Sam && !options.traceback)
        throw Error("--format sam needs the alignment; drop --no-traceback");

    ReadOptions read_options;
    read_options.alphabet = flags.scoring.alphabet_override();
    const SequenceSet queries = read_sequences(flags.query_path, read_options);
    const SequenceSet targets = read_sequences(flags.target_path, read_options);
    if (queries.records.empty()) throw Error(flags.query_path + ": no sequences");
    if (targets.records.empty()) throw Error(flags.target_path + ": no sequences");
    if (is_nucleotide(queries.alphabet) != is_nucleotide(targets.alphabet))
        throw Error(flags.query_path + " holds " + std::string(to_string(queries.alphabet)) + " but " +
                    flags.target_path + " holds " + std::string(to_string(targets.alphabet)) +
                    " sequences (use --alphabet to override detection)");

    PairJob job;
    job.queries = &queries.records;
    job.targets = &targets.records;
    job.scheme = flags.scoring.scheme(queries.alphabet);
    job.options = options;
    flags.device.apply(job);
    if (flags.zip) {
        if (queries.records.size() != targets.records.size())
            throw Error("--zip pairs record i with record i, but " + flags.query_path + " has " +
                        std::to_string(queries.records.size()) + " records and " + flags.target_path + " has " +
                        std::to_string(targets.records.size()));
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
    out.commit();
    if (timeline_out) {
        write_chrome_trace(timeline_out->stream(), timeline.events(), timeline.clock_source());
        timeline_out->commit();
    }
    if (recording) {
        recording->add_alignments(results);
        recording->add_timeline(timeline.events(), timeline.clock_source());
        recording->finish_done();
    }
    return 0;
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
    command->add_option("--format", flags->format, "Output: pair, json (JSON Lines), tsv or sam")
        ->capture_default_str();
    command->add_option("-o,--output", flags->output, "Output file [default: standard output]");
    flags->scoring.add_to(*command);
    flags->device.add_to(*command, "cpu");
    flags->project.add_to(*command);
    command->callback([flags, &context] { context.action = [flags, &context] { return run_align(*flags, context); }; });
}

}  // namespace alignscope::cli
