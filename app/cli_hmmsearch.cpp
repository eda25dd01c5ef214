// `alignscope-cli hmmsearch [options] PROFILES.hmm DATABASE.fa`: profile HMM
// search with hmmsearch's arguments, thresholds and outputs (text report,
// --tblout, --domtblout, --pfamtblout, -A Stockholm, --acc), every model of the profile file in
// turn against every database sequence; --format json for programs; the run's
// timeline (--timeline) and its results kept in a project (--project) as the
// workbench's profile search keeps them.
#include "cli_commands.hpp"
#include "cli_exit.hpp"
#include "cli_gpu_teardown.hpp"
#include "cli_options.hpp"
#include "cli_profile.hpp"
#include "cli_progress.hpp"
#include "cli_project_flag.hpp"

#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/hmmsearch_output.hpp>
#include <alignscope/profile/profile_search.hpp>
#include <alignscope/profile/stored_search.hpp>
#include <alignscope/store/project.hpp>

#include <nlohmann/json.hpp>

#include <malloc.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

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
    std::string gpu_mem;  // --gpu-mem, e.g. "4G"; empty: 90 % of the free memory
    std::string format = "text";
    int textw = 120;
    bool notextw = false;
    bool timings = false;
    std::string db_cache = "off";  // a directory, "auto" or "off"
    std::string timeline;          // --timeline FILE: Chrome trace of the run
    ProjectFlag project;           // --project FILE.alsproj
    CLI::Option* seed_option = nullptr;
    CLI::Option* textw_option = nullptr;
};

void check_positive(const std::optional<double>& v, const char* flag) {
    if (v && !(*v > 0)) throw Error(std::string(flag) + " must be positive, not " + std::to_string(*v));
}

// Tuning of the device split, for measurements (each a whole number; an
// unset or unreadable one leaves the default):
// ALIGNSCOPE_PROFILE_DEVICE_LENGTH (the longest target the device's Forward
// takes, whatever the model's length), ALIGNSCOPE_PROFILE_DEVICE_BATCH (its
// first batch), ALIGNSCOPE_PROFILE_DEVICE_ENVELOPES (envelopes it rescores at
// a time) and ALIGNSCOPE_PROFILE_CPU_ENVELOPES (0: the worker threads leave
// waiting envelopes to the device).
void tune_from_environment(profile::PipelineSettings& s) {
    const auto number = [](const char* name) -> std::optional<long long> {
        const char* v = std::getenv(name);
        if (v == nullptr || *v == '\0') return std::nullopt;
        char* end = nullptr;
        const long long n = std::strtoll(v, &end, 10);
        if (*end != '\0' || n < 0) return std::nullopt;
        return n;
    };
    if (auto n = number("ALIGNSCOPE_PROFILE_DEVICE_LENGTH"))
        s.device_length = s.device_length_long_model =
            static_cast<int>(std::min<long long>(*n, std::numeric_limits<int>::max()));
    if (auto n = number("ALIGNSCOPE_PROFILE_DEVICE_BATCH")) s.device_batch = static_cast<std::size_t>(*n);
    if (auto n = number("ALIGNSCOPE_PROFILE_DEVICE_ENVELOPES")) s.device_envelopes = static_cast<std::size_t>(*n);
    if (auto n = number("ALIGNSCOPE_PROFILE_CPU_ENVELOPES")) s.cpu_takes_envelopes = *n != 0;
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
    tune_from_environment(s);
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
        "Viterbi filter %.4f s (kernels %.4f s; %llu past the bias filter); rest (bias, Forward, domains) %.4f s",
        hmm.name.c_str(), scanner.info().id.c_str(), seconds, s.msv_seconds, s.msv_kernel_seconds,
        static_cast<double>(s.msv_cells) /
            std::max(1e-9, s.msv_kernel_seconds > 0 ? s.msv_kernel_seconds : s.msv_seconds) / 1e9,
        static_cast<unsigned long long>(s.msv_rescored), s.viterbi_seconds, s.viterbi_kernel_seconds,
        static_cast<unsigned long long>(result.counts.past_bias), seconds - s.msv_seconds - s.viterbi_seconds);
    err << line;
    if (s.target_slices > 1) err << "; targets in " << s.target_slices << " slices (--gpu-mem)";
    const profile::PipelineStages& t = result.stages;
    const auto stage = [&](const char* name, const profile::StageCost& c) {
        std::snprintf(line, sizeof line, "%s %.4f s (CPU %.3f s, %llu page faults)", name, c.seconds, c.cpu_seconds,
                      static_cast<unsigned long long>(c.page_faults));
        return std::string(line);
    };
    err << "\ntimings " << hmm.name << " stages: " << stage("MSV", t.msv) << ", " << stage("bias", t.bias) << ", "
        << stage("Viterbi", t.viterbi) << ", " << stage("survivors", t.survivors);
    std::snprintf(line, sizeof line,
                  " (device Forward %.4f s and Backward %.4f s in %d batches, %llu envelopes rescored in %.4f s, "
                  "%llu taken by the worker threads; worker threads waited %.4f s in all)",
                  t.device_forward, t.device_backward, t.device_batches,
                  static_cast<unsigned long long>(t.envelopes_on_device), t.device_envelopes,
                  static_cast<unsigned long long>(t.envelopes_on_cpu), t.worker_wait);
    err << line;
    err << '\n';
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

// ---- --timeline ------------------------------------------------------------

// A host stage of the run on the timeline ("host" device, category "host"),
// beside the device's kernels and copies, as align and search show theirs.
void record_host_stage(TimelineSink* sink, const char* name, int lane, std::int64_t start_ns, std::int64_t end_ns,
                       std::uint64_t cells = 0, const std::string& detail = {}) {
    if (!sink) return;
    TimelineEvent event;
    event.name = name;
    event.category = "host";
    event.device = "host";
    event.lane = lane;
    event.start_ns = start_ns;
    event.end_ns = end_ns;
    event.cells = cells;
    event.detail = detail;
    sink->record(std::move(event));
}

// The scanner the pipeline calls, with the pipeline's stages timed around its
// calls: the filters as the scanner runs them, the pipeline's own work before,
// between and after them, the model's name as each stage's detail. Lane 0 is
// the pipeline's thread; lane 1 the device thread's Forward, Backward and
// envelope rescoring, which run beside the CPU threads' domain stages.
// Without a sink it only passes the calls on (every one of them: a call it
// did not pass on would run on the CPU instead).
class StageTimedScanner final : public profile::ProfileFilterScanner {
public:
    StageTimedScanner(profile::ProfileFilterScanner& inner, TimelineSink* sink, bool bias_filter)
        : inner_(inner), sink_(sink), bias_filter_(bias_filter) {}

    // Around each search_profile(): the model's stages start here, and what
    // follows the Viterbi filter (Forward, Backward, domains) ends at end_model().
    void begin_model(const std::string& name) {
        model_ = name;
        mark_ = steady_now_ns();
    }
    void end_model() { stage("Forward, domains"); }

    DeviceInfo info() const override { return inner_.info(); }
    void set_memory_budget(std::uint64_t bytes) override { inner_.set_memory_budget(bytes); }
    void load(const profile::ProfileTargets& targets, JobContext& context) override {
        targets_ = &targets;
        const std::int64_t start = steady_now_ns();
        inner_.load(targets, context);
        record_host_stage(sink_, "load targets", 0, start, steady_now_ns(), 0, inner_.info().id);
    }
    void msv(const profile::MsvProfile& model, std::span<float> scores, JobContext& context) override {
        stage("configure model");
        inner_.msv(model, scores, context);
        stage("MSV filter", targets_->residue_count() * static_cast<std::uint64_t>(model.length));
    }
    void viterbi(const profile::ViterbiFilterProfile& model, std::span<const std::uint32_t> targets,
                 std::span<float> scores, JobContext& context) override {
        stage(bias_filter_ ? "bias filter" : "MSV threshold");
        inner_.viterbi(model, targets, scores, context);
        stage("Viterbi filter", cells_of(targets, model.length));
    }
    bool forward(const profile::ForwardProfile& model, std::span<const std::uint32_t> targets,
                 profile::ForwardScores& out, JobContext& context) override {
        const std::int64_t start = steady_now_ns();
        const bool ran = inner_.forward(model, targets, out, context);
        if (ran)
            record_host_stage(sink_, "Forward filter", 1, start, steady_now_ns(), cells_of(targets, model.length),
                              model_);
        return ran;
    }
    bool runs_forward() const override { return inner_.runs_forward(); }
    bool backward(const profile::ForwardProfile& model, std::span<const std::uint32_t> forward_targets,
                  const profile::ForwardScores& forward, std::span<const std::uint32_t> positions,
                  profile::BackwardScores& out, JobContext& context) override {
        const std::int64_t start = steady_now_ns();
        const bool ran = inner_.backward(model, forward_targets, forward, positions, out, context);
        if (ran) record_host_stage(sink_, "Backward", 1, start, steady_now_ns(), 0, model_);
        return ran;
    }
    bool runs_backward() const override { return inner_.runs_backward(); }
    bool rescore_envelopes(const profile::ForwardProfile& unihit, std::span<const profile::EnvelopeJob> jobs,
                           std::vector<profile::EnvelopeOutcome>& out, JobContext& context) override {
        const std::int64_t start = steady_now_ns();
        const bool ran = inner_.rescore_envelopes(unihit, jobs, out, context);
        if (ran) record_host_stage(sink_, "envelopes", 1, start, steady_now_ns(), 0, model_);
        return ran;
    }
    bool runs_envelopes() const override { return inner_.runs_envelopes(); }
    profile::ProfileFilterStats last_stats() const override { return inner_.last_stats(); }

private:
    void stage(const char* name, std::uint64_t cells = 0) {
        const std::int64_t now = steady_now_ns();
        record_host_stage(sink_, name, 0, mark_, now, cells, model_);
        mark_ = now;
    }
    std::uint64_t cells_of(std::span<const std::uint32_t> targets, int model_length) const {
        std::uint64_t residues = 0;
        for (std::uint32_t t : targets)
            if (t < targets_->size()) residues += static_cast<std::uint64_t>(targets_->length(t));
        return residues * static_cast<std::uint64_t>(model_length);
    }

    profile::ProfileFilterScanner& inner_;
    TimelineSink* sink_;
    bool bias_filter_;
    const profile::ProfileTargets* targets_ = nullptr;
    std::string model_;
    std::int64_t mark_ = 0;
};

// ---- --project -------------------------------------------------------------

// The project, opened (created when missing) before the search, so that a
// file that is not a project fails before the work.
std::unique_ptr<store::Project> open_project(const ProjectFlag& flag) {
    if (!flag.enabled()) return nullptr;
    if (!(flag.wait_seconds > 0) || flag.wait_seconds > 86400)
        throw Error("--project-wait must be between 0 and 86400 seconds");
    store::ProjectOptions options;
    options.create_if_missing = true;
    const double total_ms = flag.wait_seconds * 1000;
    options.busy_timeout_ms = std::max(1, static_cast<int>((total_ms - std::min(1000.0, total_ms / 7)) / 6));
    options.on_wait = [](const std::string& line) { std::cerr << "alignscope-cli: " << line << std::endl; };
    return std::make_unique<store::Project>(flag.path, options);
}

AlphabetKind alphabet_kind(profile::ResidueAlphabet a) {
    switch (a) {
        case profile::ResidueAlphabet::Dna: return AlphabetKind::Dna;
        case profile::ResidueAlphabet::Rna: return AlphabetKind::Rna;
        case profile::ResidueAlphabet::Amino: break;
    }
    return AlphabetKind::Protein;
}

// The profile file as an input and the search as a "profile_search" analysis
// (profile/stored_search.hpp, as the workbench keeps one), titled and
// labelled as the workbench does for a search of a FASTA file.
std::int64_t record_in_project(store::Project& project, const HmmsearchFlags& flags,
                               const std::vector<profile::ProfileHmm>& models, profile::StoredSearch search,
                               const std::string& command_line) {
    std::uint64_t states = 0;
    for (const auto& m : models) states += static_cast<std::uint64_t>(m.length);
    project.add_profile(std::filesystem::absolute(flags.profiles).string(), alphabet_kind(models.front().alphabet),
                        models.size(), states);
    search.profile_label = std::filesystem::path(flags.profiles).filename().string();
    search.targets_label = std::filesystem::path(flags.database).filename().string();
    return project.add_analysis("profile_search", search.profile_label + " against " + search.targets_label,
                                profile::stored_search_parameters(search, command_line),
                                profile::stored_search_json(search));
}

// ---- the run -----------------------------------------------------------------

// The output files, opened before the work (a bad path fails first) and
// committed together at the end (nothing half-written on failure).
struct HmmsearchOutputs {
    AtomicOutput main;
    std::optional<AtomicOutput> tbl, domtbl, pfamtbl, ali, timeline;

    explicit HmmsearchOutputs(const HmmsearchFlags& flags) : main(flags.output) {
        if (!flags.tblout.empty()) tbl.emplace(flags.tblout);
        if (!flags.domtblout.empty()) domtbl.emplace(flags.domtblout);
        if (!flags.pfamtblout.empty()) pfamtbl.emplace(flags.pfamtblout);
        if (!flags.alignment.empty()) ali.emplace(flags.alignment);
        if (!flags.timeline.empty()) timeline.emplace(flags.timeline);
    }
    void write_tails(const HmmsearchFlags& flags, const std::string& command_line) {
        for (auto* table : {&tbl, &domtbl, &pfamtbl})
            if (*table)
                profile::write_table_tail((*table)->stream(), "alignscope-cli hmmsearch", flags.profiles,
                                          flags.database, command_line);
    }
    void commit() {
        auto at = [](std::optional<AtomicOutput>& o) { return o ? &*o : nullptr; };
        commit_together({&main, at(tbl), at(domtbl), at(pfamtbl), at(ali), at(timeline)});
    }
};

// One model's results in every output asked for.
void write_model(HmmsearchOutputs& o, const HmmsearchFlags& flags, const profile::ProfileHmm& hmm,
                 const profile::ModelSearch& result, const profile::PipelineSettings& settings,
                 const profile::ProfileTargets& targets, double seconds, bool first, nlohmann::json& json_results) {
    std::ostream& out = o.main.stream();
    const bool json = flags.format == "json";
    if (json) {
        json_results.push_back(json_of(hmm, result));
    } else {
        profile::TextReportOptions options;
        options.alignments = !flags.noali;
        options.line_width = flags.notextw ? 0 : flags.textw;
        options.seconds = seconds;
        options.accessions = flags.acc;
        profile::write_search_report(out, hmm, result, settings, options);
    }
    if (o.tbl) profile::write_target_table(o.tbl->stream(), hmm, result, first);
    if (o.domtbl) profile::write_domain_table(o.domtbl->stream(), hmm, result, first);
    if (o.pfamtbl) profile::write_pfam_table(o.pfamtbl->stream(), result, settings);
    if (o.ali) {
        const int n = profile::write_domain_alignment(o.ali->stream(), hmm, result, targets);
        if (!json) {
            if (n > 0)
                out << "# Alignment of " << n << " hits satisfying inclusion thresholds saved to: " << flags.alignment
                    << "\n";
            else
                out << "# No hits satisfy inclusion thresholds; no alignment saved\n";
        }
    }
}

// The profile file's models, all of one alphabet.
std::vector<profile::ProfileHmm> read_models(const std::string& path) {
    auto models = profile::read_hmm_file(path);
    for (const auto& m : models)
        if (m.alphabet != models.front().alphabet)
            throw Error(path + ":" + std::to_string(m.line) + ": model '" + m.name +
                        "' has another alphabet than the first model; one search takes one alphabet");
    return models;
}

// The database's targets, from the cache when --db-cache has one.
profile::ProfileTargets read_targets(const HmmsearchFlags& flags, profile::ResidueAlphabet alphabet,
                                     TimelineSink* timeline) {
    const std::int64_t start = steady_now_ns();
    profile::TargetCacheOptions cache;
    cache.enabled = flags.db_cache != "off";
    if (cache.enabled && flags.db_cache != "auto") cache.directory = flags.db_cache;
    profile::ProfileTargetsLoad load = profile::load_profile_targets(flags.database, alphabet, cache);
    if (load.outcome == CacheOutcome::Rebuilt || load.outcome == CacheOutcome::Unwritable)
        std::cerr << "hmmsearch: " << load.reason << '\n';
    if (flags.timings)
        std::cerr << "timings database " << flags.database << ": " << load.targets.size() << " targets, "
                  << load.targets.residue_count() << " residues in " << load.seconds << " s (cache "
                  << to_string(load.outcome) << (load.cache_path.empty() ? "" : " " + load.cache_path) << ")\n";
    record_host_stage(timeline, load.outcome == CacheOutcome::Loaded ? "load database cache" : "read database", 0,
                      start, steady_now_ns(), load.targets.residue_count(), flags.database);
    return std::move(load.targets);
}

void check_hmmsearch_flags(const HmmsearchFlags& flags) {
    refuse_overlapping_files({{"PROFILES", flags.profiles}, {"DATABASE", flags.database}},
                             {{"-o", flags.output},
                              {"--tblout", flags.tblout},
                              {"--domtblout", flags.domtblout},
                              {"--pfamtblout", flags.pfamtblout},
                              {"-A", flags.alignment},
                              {"--timeline", flags.timeline},
                              {"--project", flags.project.path}});
    if (flags.format != "text" && flags.format != "json")
        throw Error("--format must be text or json, not '" + flags.format + "'");
    if (flags.textw < 120 && !flags.notextw) throw Error("--textw must be at least 120");
    (void)profile_gpu_memory(flags.gpu_mem);
}

int run_hmmsearch(const HmmsearchFlags& flags, CliContext& context) {
    // SIGINT, SIGTERM and SIGHUP end the search between targets, the
    // temporary outputs removed and earlier files untouched.
    const CancellationToken& cancel = interrupt_token();
    check_hmmsearch_flags(flags);
    const profile::PipelineSettings settings = settings_of(flags);
    // The domain stage's worker threads each grow their own malloc arena to a
    // few megabytes of matrices; growing it a page at a time and trimming it
    // back after each target cost one mprotect/madvise (the process-wide
    // mapping lock) after another: 567 mprotect calls for Pkinase on
    // DB.fasta with 16 threads, 73 with these settings.
    mallopt(M_TOP_PAD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    const auto run_start = std::chrono::steady_clock::now();
    TimelineRecorder recorder;
    TimelineSink* timeline = flags.timeline.empty() ? nullptr : &recorder;
    const std::unique_ptr<store::Project> project = open_project(flags.project);
    std::int64_t stage_start = steady_now_ns();
    const auto models = read_models(flags.profiles);
    record_host_stage(timeline, "read profiles", 0, stage_start, steady_now_ns(), 0, flags.profiles);
    // The device (a GPU's context takes a few hundred milliseconds to start)
    // is made while the targets are read.
    auto made = std::async(std::launch::async, [&flags] {
        auto scanner = profile_scanner_registry()->create(flags.device, flags.threads);
        // The worker threads too, so that the search's first stage finds them
        // running (parallel_for keeps them from call to call).
        const int threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::thread::hardware_concurrency());
        profile::parallel_for(
            static_cast<std::size_t>(threads), threads, [](std::size_t) {}, 1);
        return scanner;
    });
    const profile::ProfileTargets targets = read_targets(flags, models.front().alphabet, timeline);
    std::unique_ptr<profile::ProfileFilterScanner> device_scanner = made.get();
    device_scanner->set_memory_budget(profile_gpu_memory(flags.gpu_mem));
    StageTimedScanner scanner(*device_scanner, timeline, settings.bias_filter);
    JobContext job;
    job.cancel = &cancel;
    job.timeline = timeline;
    scanner.load(targets, job);

    HmmsearchOutputs outputs(flags);
    const bool json = flags.format == "json";
    nlohmann::json results = nlohmann::json::array();
    profile::StoredSearch stored;  // for --project
    stored.settings = settings;
    stored.device = scanner.info().id;
    if (!json) write_report_header(outputs.main.stream(), flags, scanner.info().threads);
    bool first = true;
    for (const auto& hmm : models) {
        const auto start = std::chrono::steady_clock::now();
        scanner.begin_model(hmm.name);
        const profile::ModelSearch result = profile::search_profile(hmm, targets, scanner, settings, job);
        scanner.end_model();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (flags.timings) write_timings(std::cerr, scanner, hmm, result, seconds);
        stage_start = steady_now_ns();
        write_model(outputs, flags, hmm, result, settings, targets, seconds, first, results);
        if (project) stored.models.push_back(profile::stored_model(hmm, result));
        record_host_stage(timeline, "output", 0, stage_start, steady_now_ns(), 0, hmm.name);
        first = false;
    }
    if (json)
        outputs.main.stream() << nlohmann::json{{"program", "alignscope-cli hmmsearch"}, {"results", results}}.dump(1)
                              << "\n";
    else
        outputs.main.stream() << "[ok]\n";
    outputs.write_tails(flags, context.command_line);
    if (outputs.timeline) write_chrome_trace(outputs.timeline->stream(), recorder.events(), recorder.clock_source());
    // The files first, then the project (as align): a run whose files fail keeps no search.
    outputs.commit();
    if (project) {
        stored.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
        record_in_project(*project, flags, models, std::move(stored), context.command_line);
    }
    // The outputs are in place: the device's buffers, context and worker
    // threads go back with the process, and the driver's teardown of the
    // GPU's files runs in the helper (cli_gpu_teardown.hpp) once it is gone.
    if (can_skip_teardown()) {
        (void)hand_gpu_teardown_to_helper();
        (void)device_scanner.release();
        teardown_left_to_exit() = true;
    }
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
    command->add_option("--gpu-mem", flags->gpu_mem,
                        "GPU memory the filters may take, e.g. 4G; targets that do not fit are loaded and searched a "
                        "slice at a time, with the same results [default: 90% of free]");
    command
        ->add_option("--db-cache", flags->db_cache,
                     "Cache of the database's digitised targets, so later searches skip parsing the FASTA: a "
                     "directory, 'auto' (beside the FASTA, else ~/.cache/alignscope) or 'off'; a stale or damaged "
                     "cache is rebuilt")
        ->capture_default_str();
    command->add_option("--timeline", flags->timeline,
                        "Write the run's timeline as Chrome trace JSON (Perfetto, chrome://tracing): the host stages "
                        "(reading, filters, Forward and domains, output) and, on a GPU, every kernel and copy");
    flags->project.add_to(*command);
    command->add_flag("--timings", flags->timings,
                      "Say on standard error where each model's time went (filters, their kernels, the rest)");
    command->add_option("--format", flags->format, "Main output: text (hmmsearch's report) or json")
        ->capture_default_str();
    flags->textw_option = command->add_option("--textw", flags->textw, "Line width of the text report (at least 120)")
                              ->capture_default_str()
                              ->transform(strict_number<int>());
    command->add_flag("--notextw", flags->notextw, "No line width limit in the text report");
    command->callback([flags, &context] {
        // Forked now, before the driver starts: a search that may run on a GPU.
        if (can_skip_teardown() && flags->device.rfind("cpu", 0) != 0) start_gpu_teardown_helper();
        context.action = [flags, &context] { return run_hmmsearch(*flags, context); };
    });
}

}  // namespace alignscope::cli
