// `alignscope-cli hmmsearch [options] PROFILES.hmm DATABASE.fa`: profile HMM
// search with hmmsearch's arguments, thresholds and outputs (text report,
// --tblout, --domtblout, --pfamtblout, -A Stockholm, --acc), every model of the profile file in
// turn against every database sequence; --format json for programs.
#include "cli_commands.hpp"
#include "cli_options.hpp"
#include "cli_profile.hpp"
#include "cli_progress.hpp"

#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/hmmsearch_output.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <nlohmann/json.hpp>

#include <malloc.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <iostream>
#include <memory>
#include <optional>

namespace alignscope::cli {
namespace {

struct HmmsearchFlags {
    std::string profiles, database;
    std::string output = "-";
    std::string tblout, domtblout, pfamtblout, alignment;
    bool noali = false, acc = false;
    std::optional<double> E, T, domE, domT, incE, incT, incdomE, incdomT, Z, domZ;
    bool max = false, nobias = false, nonull2 = false;
    std::optional<double> F1, F2, F3;
    std::int64_t seed = 42;
    int threads = 0;
    std::string device = "auto";
    std::string format = "text";
    int textw = 120;
    bool notextw = false;
    bool timings = false;
    std::string db_cache = "off";  // a directory, "auto" or "off"
    CLI::Option* seed_option = nullptr;
    CLI::Option* textw_option = nullptr;
};

void check_positive(const std::optional<double>& v, const char* flag) {
    if (v && !(*v > 0)) throw Error(std::string(flag) + " must be positive, not " + std::to_string(*v));
}

profile::PipelineSettings settings_of(const HmmsearchFlags& f) {
    profile::PipelineSettings s;
    if (f.max) s.set_max();
    if (f.F1) s.F1 = *f.F1;
    if (f.F2) s.F2 = *f.F2;
    if (f.F3) s.F3 = *f.F3;
    if (f.nobias) s.bias_filter = false;
    if (f.nonull2) s.null2 = false;
    for (auto [v, name] : {std::pair{f.F1, "--F1"}, std::pair{f.F2, "--F2"}, std::pair{f.F3, "--F3"}})
        if (v && !(*v > 0 && *v <= 1))
            throw Error(std::string(name) + " must be a P-value threshold in (0, 1], not " + std::to_string(*v));
    check_positive(f.E, "-E");
    check_positive(f.domE, "--domE");
    check_positive(f.incE, "--incE");
    check_positive(f.incdomE, "--incdomE");
    check_positive(f.Z, "-Z");
    check_positive(f.domZ, "--domZ");
    if (f.E) s.report_E = *f.E;
    if (f.domE) s.domain_E = *f.domE;
    if (f.incE) s.include_E = *f.incE;
    if (f.incdomE) s.include_domain_E = *f.incdomE;
    s.report_T = f.T;
    s.domain_T = f.domT;
    s.include_T = f.incT;
    s.include_domain_T = f.incdomT;
    s.Z = f.Z;
    s.domZ = f.domZ;
    if (f.seed < 0 || f.seed > 4294967295LL) throw Error("--seed must be between 0 and 4294967295");
    s.seed = static_cast<std::uint32_t>(f.seed);
    if (f.threads < 0) throw Error("--threads must be 0 (all cores) or more");
    s.threads = f.threads;
    s.alignments = true;
    return s;
}

nlohmann::json json_of(const profile::ProfileHmm& hmm, const profile::ModelSearch& r) {
    nlohmann::json hits = nlohmann::json::array();
    for (const auto& h : r.hits) {
        if (!h.reported) continue;
        nlohmann::json domains = nlohmann::json::array();
        for (const auto& d : h.domains) {
            if (!d.reported) continue;
            domains.push_back(
                {{"score", d.score},
                 {"bias", d.bias},
                 {"c_evalue", std::exp(d.lnP) * r.domZ},
                 {"i_evalue", std::exp(d.lnP) * r.Z},
                 {"hmm_from", d.alignment.hmm_from},
                 {"hmm_to", d.alignment.hmm_to},
                 {"ali_from", d.alignment.target_from},
                 {"ali_to", d.alignment.target_to},
                 {"env_from", d.env_from},
                 {"env_to", d.env_to},
                 {"acc", d.expected_accuracy / (1.0 + std::fabs(static_cast<float>(d.env_to - d.env_from)))},
                 {"included", d.included},
                 {"model_line", d.alignment.model},
                 {"match_line", d.alignment.match},
                 {"target_line", d.alignment.target},
                 {"pp_line", d.alignment.posterior}});
        }
        hits.push_back({{"name", h.name},
                        {"description", h.description},
                        {"length", h.length},
                        {"evalue", std::exp(h.lnP) * r.Z},
                        {"score", h.score},
                        {"bias", h.pre_score - h.score},
                        {"expected_domains", h.expected_domains},
                        {"included", h.included},
                        {"domains", domains}});
    }
    const auto& c = r.counts;
    return {{"query", hmm.name},
            {"accession", hmm.accession},
            {"length", hmm.length},
            {"pipeline",
             {{"targets", c.targets},
              {"residues", c.residues},
              {"passed_msv", c.past_msv},
              {"passed_bias", c.past_bias},
              {"passed_viterbi", c.past_viterbi},
              {"passed_forward", c.past_forward},
              {"Z", r.Z},
              {"domZ", r.domZ}}},
            {"reported", r.reported},
            {"included", r.included},
            {"seconds", r.seconds},
            {"hits", hits}};
}

// --timings: where one model's search time went, on standard error.
void write_timings(std::ostream& err, const profile::ProfileFilterScanner& scanner, const profile::ProfileHmm& hmm,
                   const profile::ModelSearch& result, double seconds) {
    const profile::ProfileFilterStats s = scanner.last_stats();
    char line[512];
    std::snprintf(
        line, sizeof line,
        "timings %s on %s: search %.4f s; MSV %.4f s (kernels %.4f s, %.1f GCUPS, %llu rescored by MSV); "
        "Viterbi filter %.4f s (kernels %.4f s; %llu past the bias filter); rest (bias, Forward, domains) %.4f s\n",
        hmm.name.c_str(), scanner.info().id.c_str(), seconds, s.msv_seconds, s.msv_kernel_seconds,
        static_cast<double>(s.msv_cells) /
            std::max(1e-9, s.msv_kernel_seconds > 0 ? s.msv_kernel_seconds : s.msv_seconds) / 1e9,
        static_cast<unsigned long long>(s.msv_rescored), s.viterbi_seconds, s.viterbi_kernel_seconds,
        static_cast<unsigned long long>(result.counts.past_bias), seconds - s.msv_seconds - s.viterbi_seconds);
    err << line;
}

// The report's opening lines: the files, then each option given, worded and
// ordered as hmmsearch writes them.
void write_report_header(std::ostream& out, const HmmsearchFlags& flags, int threads) {
    out << "# alignscope-cli hmmsearch :: search profile(s) against a sequence database\n";
    out << "# AlignScope " << ALIGNSCOPE_VERSION << "; HMMER 3.3.2 hmmsearch's pipeline, scores and formats\n";
    out << "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n";
    out << "# query HMM file:                  " << flags.profiles << "\n";
    out << "# target sequence database:        " << flags.database << "\n";
    if (flags.output != "-") out << "# output directed to file:         " << flags.output << "\n";
    if (!flags.alignment.empty()) out << "# MSA of all hits saved to file:   " << flags.alignment << "\n";
    if (!flags.tblout.empty()) out << "# per-seq hits tabular output:     " << flags.tblout << "\n";
    if (!flags.domtblout.empty()) out << "# per-dom hits tabular output:     " << flags.domtblout << "\n";
    if (!flags.pfamtblout.empty()) out << "# pfam-style tabular hit output:   " << flags.pfamtblout << "\n";
    if (flags.acc) out << "# prefer accessions over names:    yes\n";
    if (flags.noali) out << "# show alignments in output:       no\n";
    if (flags.notextw) out << "# max ASCII text line length:      unlimited\n";
    else if (flags.textw_option && flags.textw_option->count())
        out << "# max ASCII text line length:      " << flags.textw << "\n";
    char line[128];
    auto threshold = [&](const std::optional<double>& value, const char* words) {
        if (!value) return;
        std::snprintf(line, sizeof line, "# %s %g\n", words, *value);
        out << line;
    };
    threshold(flags.E, "sequence reporting threshold:    E-value <=");
    threshold(flags.T, "sequence reporting threshold:    score >=");
    threshold(flags.domE, "domain reporting threshold:      E-value <=");
    threshold(flags.domT, "domain reporting threshold:      score >=");
    threshold(flags.incE, "sequence inclusion threshold:    E-value <=");
    threshold(flags.incT, "sequence inclusion threshold:    score >=");
    threshold(flags.incdomE, "domain inclusion threshold:      E-value <=");
    threshold(flags.incdomT, "domain inclusion threshold:      score >=");
    if (flags.max) out << "# Max sensitivity mode:            on [all heuristic filters off]\n";
    threshold(flags.F1, "MSV filter P threshold:       <=");
    threshold(flags.F2, "Vit filter P threshold:       <=");
    threshold(flags.F3, "Fwd filter P threshold:       <=");
    if (flags.nobias) out << "# biased composition HMM filter:   off\n";
    if (flags.nonull2) out << "# null2 bias corrections:          off\n";
    if (flags.Z) {
        std::snprintf(line, sizeof line, "# sequence search space set to:    %.0f\n", *flags.Z);
        out << line;
    }
    if (flags.domZ) {
        std::snprintf(line, sizeof line, "# domain search space set to:      %.0f\n", *flags.domZ);
        out << line;
    }
    if (flags.seed_option && flags.seed_option->count()) {
        // hmmsearch 3.3.2 writes both lines for --seed 0.
        if (flags.seed == 0) out << "# random number seed:              one-time arbitrary\n";
        out << "# random number seed set to:       " << flags.seed << "\n";
    }
    out << "# number of worker threads:        " << threads << "\n";
    out << "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n\n";
}

int run_hmmsearch(const HmmsearchFlags& flags, CliContext& context) {
    // SIGINT, SIGTERM and SIGHUP end the search between targets, the
    // temporary outputs removed and earlier files untouched.
    const CancellationToken& cancel = interrupt_token();
    refuse_overlapping_files({{"PROFILES", flags.profiles}, {"DATABASE", flags.database}},
                             {{"-o", flags.output},
                              {"--tblout", flags.tblout},
                              {"--domtblout", flags.domtblout},
                              {"--pfamtblout", flags.pfamtblout},
                              {"-A", flags.alignment}});
    if (flags.format != "text" && flags.format != "json")
        throw Error("--format must be text or json, not '" + flags.format + "'");
    if (flags.textw < 120 && !flags.notextw) throw Error("--textw must be at least 120");
    const profile::PipelineSettings settings = settings_of(flags);
    // The domain stage's worker threads each grow their own malloc arena to a
    // few megabytes of matrices; growing it a page at a time and trimming it
    // back after each target cost one mprotect/madvise (the process-wide
    // mapping lock) after another: 567 mprotect calls for Pkinase on
    // DB.fasta with 16 threads, 73 with these settings.
    mallopt(M_TOP_PAD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    const auto models = profile::read_hmm_file(flags.profiles);
    for (const auto& m : models)
        if (m.alphabet != models.front().alphabet)
            throw Error(flags.profiles + ":" + std::to_string(m.line) + ": model '" + m.name +
                        "' has another alphabet than the first model; one search takes one alphabet");
    // The device (a GPU's context takes a few hundred milliseconds to start)
    // is made while the targets are read.
    auto made = std::async(std::launch::async,
                           [&flags] { return profile_scanner_registry()->create(flags.device, flags.threads); });
    profile::TargetCacheOptions cache;
    cache.enabled = flags.db_cache != "off";
    if (cache.enabled && flags.db_cache != "auto") cache.directory = flags.db_cache;
    profile::ProfileTargetsLoad load = profile::load_profile_targets(flags.database, models.front().alphabet, cache);
    if (load.outcome == CacheOutcome::Rebuilt || load.outcome == CacheOutcome::Unwritable)
        std::cerr << "hmmsearch: " << load.reason << '\n';
    if (flags.timings)
        std::cerr << "timings database " << flags.database << ": " << load.targets.size() << " targets, "
                  << load.targets.residue_count() << " residues in " << load.seconds << " s (cache "
                  << to_string(load.outcome) << (load.cache_path.empty() ? "" : " " + load.cache_path) << ")\n";
    const profile::ProfileTargets targets = std::move(load.targets);
    const std::unique_ptr<profile::ProfileFilterScanner> scanner = made.get();
    JobContext job;
    job.cancel = &cancel;
    scanner->load(targets, job);

    // Outputs are opened first (a bad path fails before the work) and
    // committed together at the end (nothing half-written on failure).
    AtomicOutput main_out(flags.output);
    std::optional<AtomicOutput> tbl, domtbl, pfamtbl, ali;
    if (!flags.tblout.empty()) tbl.emplace(flags.tblout);
    if (!flags.domtblout.empty()) domtbl.emplace(flags.domtblout);
    if (!flags.pfamtblout.empty()) pfamtbl.emplace(flags.pfamtblout);
    if (!flags.alignment.empty()) ali.emplace(flags.alignment);
    std::ostream& out = main_out.stream();
    const bool json = flags.format == "json";
    nlohmann::json results = nlohmann::json::array();
    if (!json) write_report_header(out, flags, scanner->info().threads);
    bool first = true;
    for (const auto& hmm : models) {
        const auto start = std::chrono::steady_clock::now();
        const profile::ModelSearch result = profile::search_profile(hmm, targets, *scanner, settings, job);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (flags.timings) write_timings(std::cerr, *scanner, hmm, result, seconds);
        if (json) {
            results.push_back(json_of(hmm, result));
        } else {
            profile::TextReportOptions options;
            options.alignments = !flags.noali;
            options.line_width = flags.notextw ? 0 : flags.textw;
            options.seconds = seconds;
            options.accessions = flags.acc;
            profile::write_search_report(out, hmm, result, settings, options);
        }
        if (tbl) profile::write_target_table(tbl->stream(), hmm, result, first);
        if (domtbl) profile::write_domain_table(domtbl->stream(), hmm, result, first);
        if (pfamtbl) profile::write_pfam_table(pfamtbl->stream(), result, settings);
        if (ali) {
            const int n = profile::write_domain_alignment(ali->stream(), hmm, result, targets);
            if (!json) {
                if (n > 0)
                    out << "# Alignment of " << n
                        << " hits satisfying inclusion thresholds saved to: " << flags.alignment << "\n";
                else
                    out << "# No hits satisfy inclusion thresholds; no alignment saved\n";
            }
        }
        first = false;
    }
    if (json) out << nlohmann::json{{"program", "alignscope-cli hmmsearch"}, {"results", results}}.dump(1) << "\n";
    else
        out << "[ok]\n";
    if (tbl)
        profile::write_table_tail(tbl->stream(), "alignscope-cli hmmsearch", flags.profiles, flags.database,
                                  context.command_line);
    if (domtbl)
        profile::write_table_tail(domtbl->stream(), "alignscope-cli hmmsearch", flags.profiles, flags.database,
                                  context.command_line);
    if (pfamtbl)
        profile::write_table_tail(pfamtbl->stream(), "alignscope-cli hmmsearch", flags.profiles, flags.database,
                                  context.command_line);
    commit_together({&main_out, tbl ? &*tbl : nullptr, domtbl ? &*domtbl : nullptr, pfamtbl ? &*pfamtbl : nullptr,
                     ali ? &*ali : nullptr});
    return 0;
}

}  // namespace

void add_hmmsearch_command(CLI::App& app, CliContext& context) {
    auto flags = std::make_shared<HmmsearchFlags>();
    CLI::App* command = app.add_subcommand(
        "hmmsearch",
        "Search a sequence database with profile HMMs (HMMER3 text .hmm files): hmmsearch's pipeline, scores, "
        "E-values, domain definition and output formats");
    command
        ->add_option("profiles", flags->profiles,
                     "HMMER3 profile file (text .hmm, plain or gzip; several models allowed)")
        ->required();
    command->add_option("database", flags->database, "FASTA/FASTQ target sequences (plain or gzip)")->required();
    command->add_option("-o", flags->output, "Direct the main report to this file [default: standard output]");
    command->add_option("--tblout", flags->tblout,
                        "Save the per-sequence hit table (hmmsearch's columns) to this file");
    command->add_option("--domtblout", flags->domtblout,
                        "Save the per-domain hit table (hmmsearch's columns) to this file");
    command->add_option("--pfamtblout", flags->pfamtblout,
                        "Save Pfam-style tables (per model: sequence scores, then domain scores) to this file");
    command->add_option("-A", flags->alignment, "Save the included domains as a Stockholm alignment to this file");
    command->add_flag("--acc", flags->acc,
                      "Prefer accessions over names in the output (the model's, in the alignments)");
    command->add_flag("--noali", flags->noali, "Leave the alignments out of the main report");
    command->add_option("-E", flags->E, "Report sequences with E-value <= this [default: 10]");
    command->add_option("-T", flags->T, "Report sequences with bit score >= this (instead of -E)");
    command->add_option("--domE", flags->domE, "Report domains with conditional E-value <= this [default: 10]");
    command->add_option("--domT", flags->domT, "Report domains with bit score >= this (instead of --domE)");
    command->add_option("--incE", flags->incE, "Include sequences with E-value <= this [default: 0.01]");
    command->add_option("--incT", flags->incT, "Include sequences with bit score >= this (instead of --incE)");
    command->add_option("--incdomE", flags->incdomE,
                        "Include domains with conditional E-value <= this [default: 0.01]");
    command->add_option("--incdomT", flags->incdomT, "Include domains with bit score >= this (instead of --incdomE)");
    command->add_option("-Z", flags->Z, "Number of comparisons for E-values [default: the number of targets]");
    command->add_option("--domZ", flags->domZ,
                        "Number of significant sequences for domain E-values [default: those reported]");
    command->add_flag("--max", flags->max,
                      "Turn off every filter (F1 = F2 = F3 = 1, no bias filter): slower, more sensitive");
    command->add_option("--F1", flags->F1, "MSV filter P-value threshold [default: 0.02]");
    command->add_option("--F2", flags->F2, "Viterbi filter P-value threshold [default: 1e-3]");
    command->add_option("--F3", flags->F3, "Forward filter P-value threshold [default: 1e-5]");
    command->add_flag("--nobias", flags->nobias, "Turn off the composition bias filter");
    command->add_flag("--nonull2", flags->nonull2, "Turn off the null2 composition score correction");
    flags->seed_option = command
                             ->add_option("--seed", flags->seed,
                                          "Seed of the domain stage's stochastic clustering, the same for every region "
                                          "(0: an arbitrary seed each run)")
                             ->capture_default_str();
    command->add_option("--threads,--cpu", flags->threads, "CPU worker threads [default: all cores]")
        ->transform(strict_number<int>());
    command
        ->add_option("--device", flags->device,
                     "Device for the MSV and Viterbi filters: auto (the first GPU, else cpu), gpu:N, cpu (SSV/MSV in "
                     "AVX2 or SSE, chosen at run time), cpu-ref (scalar reference); Forward and the domain stage "
                     "use the CPU threads")
        ->capture_default_str();
    command
        ->add_option("--db-cache", flags->db_cache,
                     "Cache of the database's digitised targets, so later searches skip parsing the FASTA: a "
                     "directory, 'auto' (beside the FASTA, else ~/.cache/alignscope) or 'off'; a stale or damaged "
                     "cache is rebuilt")
        ->capture_default_str();
    command->add_flag("--timings", flags->timings,
                      "Say on standard error where each model's time went (filters, their kernels, the rest)");
    command->add_option("--format", flags->format, "Main output: text (hmmsearch's report) or json")
        ->capture_default_str();
    flags->textw_option = command->add_option("--textw", flags->textw, "Line width of the text report (at least 120)")
                              ->capture_default_str()
                              ->transform(strict_number<int>());
    command->add_flag("--notextw", flags->notextw, "No line width limit in the text report");
    command->callback(
        [flags, &context] { context.action = [flags, &context] { return run_hmmsearch(*flags, context); }; });
}

}  // namespace alignscope::cli
