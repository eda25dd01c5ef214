// Job requests: naming, checking and turning them into engine jobs.
#include "jobs/job_request.hpp"

#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace alignscope::ui {

std::string_view to_string(JobAlgorithm algorithm) {
    switch (algorithm) {
        case JobAlgorithm::Global: return "global";
        case JobAlgorithm::Local: return "local";
        case JobAlgorithm::SemiGlobal: return "semiglobal";
        case JobAlgorithm::DatabaseSearch: return "search";
        case JobAlgorithm::LongPair: return "long";
    }
    return "global";
}

std::string display_name(JobAlgorithm algorithm) {
    switch (algorithm) {
        case JobAlgorithm::Global: return "Global (Needleman-Wunsch)";
        case JobAlgorithm::Local: return "Local (Smith-Waterman)";
        case JobAlgorithm::SemiGlobal: return "Semi-global (free end gaps)";
        case JobAlgorithm::DatabaseSearch: return "Database search (local, best hits per query)";
        case JobAlgorithm::LongPair: return "Long pair (linear space)";
    }
    return {};
}

JobAlgorithm parse_algorithm(std::string_view name) {
    for (JobAlgorithm a : available_algorithms())
        if (to_string(a) == name) return a;
    if (name == "semi-global") return JobAlgorithm::SemiGlobal;
    if (name == "database search") return JobAlgorithm::DatabaseSearch;
    if (name == "long pair" || name == "long-pair") return JobAlgorithm::LongPair;
    throw Error("unknown algorithm '" + std::string(name) + "' (expected global, local, semiglobal, search or long)");
}

const std::vector<JobAlgorithm>& available_algorithms() {
    static const std::vector<JobAlgorithm> list{JobAlgorithm::Global, JobAlgorithm::Local, JobAlgorithm::SemiGlobal,
                                                JobAlgorithm::DatabaseSearch, JobAlgorithm::LongPair};
    return list;
}

namespace {

std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

// An engine error in the panel's words: an error about one parameter names
// the field by its label ("gap open: expected ..."), not by the command-line
// flag that what() names.
std::string panel_wording(const Error& e) {
    if (e.parameter().empty()) return e.what();
    const std::pair<std::string_view, std::string_view> labels[] = {{"gap_open", "gap open"},
                                                                    {"gap_extend", "gap extend"},
                                                                    {"matrix", "matrix"},
                                                                    {"device", "device"}};
    std::string label = e.parameter();
    for (const auto& [parameter, field] : labels)
        if (label == parameter) label = field;
    std::replace(label.begin(), label.end(), '_', ' ');
    return label + ": " + e.detail();
}

bool nucleotide(AlphabetKind kind) { return kind != AlphabetKind::Protein; }

}  // namespace

ScoringScheme ScoringChoice::scheme() const {
    try {
        SubstitutionMatrix unscaled =
            match_mismatch ? SubstitutionMatrix::match_mismatch(match, mismatch) : SubstitutionMatrix::resolve(matrix);
        return ScoringScheme::create(unscaled, gap_open, gap_extend);
    } catch (const Error& e) {
        throw Error(panel_wording(e));
    }
}

std::string ScoringChoice::summary() const {
    const std::string gaps = number(gap_open) + "/" + number(gap_extend);
    if (match_mismatch) return "match " + std::to_string(match) + "/" + std::to_string(mismatch) + ", gaps " + gaps;
    std::string name = matrix;
    if (const auto slash = name.find_last_of('/'); slash != std::string::npos) name = name.substr(slash + 1);
    return name + " " + gaps;
}

AlignOptions JobRequest::align_options() const {
    AlignOptions options;
    switch (algorithm) {
        case JobAlgorithm::Global: options.mode = AlignmentMode::Global; break;
        case JobAlgorithm::Local: options.mode = AlignmentMode::Local; break;
        case JobAlgorithm::SemiGlobal: options.mode = AlignmentMode::SemiGlobal; break;
        case JobAlgorithm::DatabaseSearch: options.mode = AlignmentMode::Local; break;
        case JobAlgorithm::LongPair: options.mode = long_mode; break;
    }
    if (options.mode == AlignmentMode::SemiGlobal) options.free_ends = free_ends;
    options.traceback = traceback;
    return options;
}

std::uint64_t JobRequest::pair_count() const {
    if (is_long_pair()) return queries.size() > 0 && targets.size() > 0 ? 1 : 0;
    if (pairing == Pairing::RecordByRecord && !is_search()) return std::min(queries.size(), targets.size());
    return std::uint64_t(queries.size()) * targets.size();
}

std::uint64_t JobRequest::cell_count() const {
    if (!queries.records || !targets.records) return 0;
    const auto& q = *queries.records;
    const auto& t = *targets.records;
    if (is_long_pair())
        return q.empty() || t.empty() ? 0 : std::uint64_t(q.front().residues.size()) * t.front().residues.size();
    if (pairing == Pairing::RecordByRecord && !is_search()) {
        std::uint64_t cells = 0;
        for (std::size_t k = 0; k < std::min(q.size(), t.size()); ++k)
            cells += std::uint64_t(q[k].residues.size()) * t[k].residues.size();
        return cells;
    }
    std::uint64_t q_residues = 0, t_residues = 0;
    for (const auto& s : q) q_residues += s.residues.size();
    for (const auto& s : t) t_residues += s.residues.size();
    return q_residues * t_residues;
}

std::string JobRequest::summary() const {
    std::string text = std::string(to_string(algorithm)) + " " + scoring.summary() + ", ";
    if (is_search()) {
        text += std::to_string(queries.size()) + " queries against " + std::to_string(targets.size()) +
                " sequences, top " + std::to_string(top);
        if (!traceback) text += ", scores only";
        return text;
    }
    if (is_long_pair()) {
        text = "long " + std::string(to_string(long_mode)) + " " + scoring.summary() + ", ";
        if (queries.size() > 0 && targets.size() > 0) {
            const Sequence& q = queries.records->front();
            const Sequence& t = targets.records->front();
            text += q.id + " (" + std::to_string(q.residues.size()) + ") x " + t.id + " (" +
                    std::to_string(t.residues.size()) + ")";
        }
        if (!traceback) text += ", score only";
        return text;
    }
    text += std::to_string(queries.size()) + (pairing == Pairing::AllAgainstAll ? " x " : " zip ") +
            std::to_string(targets.size());
    if (!traceback) text += ", scores only";
    return text;
}

namespace {

std::string side_problem(const SequenceList& list, const char* side) {
    if (list.size() > 0) return {};
    std::string text = std::string("No ") + side + " sequences: ";
    if (list.label.empty()) return text + "load a sequence file (Ctrl+L) or paste sequences";
    return text + list.label + " is empty";
}

const DeviceInfo* find_device(const std::vector<DeviceInfo>& devices, const std::string& id) {
    for (const auto& d : devices)
        if (d.id == id) return &d;
    return nullptr;
}

std::string residues(std::size_t n) { return std::to_string(n) + (n == 1 ? " residue" : " residues"); }

// What only a long pair can get wrong: the pair it takes, the runner settings,
// the device that will run it.
template <class ErrorFn, class WarningFn>
void check_long_pair(const JobRequest& request, const std::vector<DeviceInfo>& devices, bool have_both, ErrorFn&& error,
                     WarningFn&& warning) {
    if (have_both && (request.queries.size() > 1 || request.targets.size() > 1)) {
        const Sequence& q = request.queries.records->front();
        const Sequence& t = request.targets.records->front();
        std::string left_out;
        if (request.queries.size() > 1) left_out = std::to_string(request.queries.size() - 1) + " other queries";
        if (request.targets.size() > 1)
            left_out +=
                (left_out.empty() ? "" : " and ") + std::to_string(request.targets.size() - 1) + " other targets";
        warning("A long pair aligns one pair: the first query, " + q.id + " (" + residues(q.residues.size()) +
                "), with the first target, " + t.id + " (" + residues(t.residues.size()) + "); the " + left_out +
                " are not aligned. Select one sequence of each in the Sequences table to choose the pair");
    }
    if (have_both && request.cell_count() > 0 && request.cell_count() < 1'000'000)
        warning("This pair is small (" + std::to_string(request.cell_count()) +
                " cells): the global, local and semi-global algorithms align it as fast, and the DP heatmap "
                "then shows its exact matrix");
    if (std::find_if(std::begin(long_strategies), std::end(long_strategies),
                     [&](const char* s) { return request.strategy == s; }) == std::end(long_strategies))
        error("Unknown long-pair strategy '" + request.strategy + "': expected strips or streams");
    if (request.kernels < 0 || request.kernels > 4096) error("Kernels must be between 1 and 4096 (0 = automatic)");
    const bool gpu = request.device.rfind("gpu", 0) == 0;
    if (!gpu) {
        warning("On " + request.device +
                " a long pair is aligned by Myers-Miller in linear space on one core: no "
                "GPU wavefront, and no overview of the DP matrix is kept for the heatmap");
        return;
    }
    // All GPUs: the registry groups them (GpuGroup), whose long-pair runner
    // splits the pair's columns over them (make_split_pass_runner).
    int gpus = 0;
    std::string ids;
    for (const auto& d : devices)
        if (d.kind == "gpu" && d.available) ids += (gpus++ ? ", " : "") + d.id;
    if (request.device == "gpu" && gpus > 1)
        warning("A long pair on all " + std::to_string(gpus) + " GPUs (" + ids +
                ") is split over them: each computes a slice of the columns (widths by SM count) and hands its "
                "boundary column to the next through host memory; stage 2 runs on one of them, stage 3 on all. "
                "It gains most on pairs many row blocks tall; choose one GPU to leave the others free");
    if (request.strategy == "strips" && (request.kernels > 0 || request.streams > 0))
        warning(
            "The strips strategy runs one persistent kernel on one stream: the kernel and stream counts apply "
            "to the streams strategy only");
    if (request.strategy == "streams" && request.kernels > 0 && request.streams > request.kernels)
        warning(std::to_string(request.streams) + " streams for " + std::to_string(request.kernels) +
                " kernels: at most " + std::to_string(request.kernels) + " streams can be busy");
}

}  // namespace

std::vector<JobProblem> check_request(const JobRequest& request, const std::vector<DeviceInfo>& devices,
                                      const ScannerRegistry* scanners) {
    std::vector<JobProblem> problems;
    auto error = [&](std::string message) { problems.push_back({JobProblem::Severity::Error, std::move(message)}); };
    auto warning = [&](std::string message) {
        problems.push_back({JobProblem::Severity::Warning, std::move(message)});
    };

    // Inputs.
    const bool search = request.is_search();
    if (auto p = side_problem(request.queries, "query"); !p.empty()) error(p);
    if (auto p = side_problem(request.targets, search ? "database" : "target"); !p.empty()) error(p);
    const bool have_both = request.queries.size() > 0 && request.targets.size() > 0;
    if (search && request.top < 1) error("Top hits per query must be at least 1");
    const bool long_pair = request.is_long_pair();
    if (have_both && !search && !long_pair && request.pairing == Pairing::RecordByRecord &&
        request.queries.size() != request.targets.size())
        error("Record by record pairs query i with target i, but there are " + std::to_string(request.queries.size()) +
              " queries and " + std::to_string(request.targets.size()) + " targets");
    // A search keeps K hits per query, not one result per pair: no pair limit.
    if (have_both && !search && !long_pair && request.pair_count() > max_pairs_per_job)
        error(std::to_string(request.pair_count()) + " pairs is more than one job may hold (" +
              std::to_string(max_pairs_per_job) + "); pair record by record or select fewer sequences");
    if (have_both && nucleotide(request.queries.alphabet) != nucleotide(request.targets.alphabet))
        error("The queries are " + std::string(to_string(request.queries.alphabet)) + " but the " +
              (search ? "database sequences are " : "targets are ") + std::string(to_string(request.targets.alphabet)) +
              ": both sides must be protein or both nucleotide");

    // Scoring against the alphabet.
    const auto& scoring = request.scoring;
    const bool protein = (request.queries.size() > 0 && !nucleotide(request.queries.alphabet)) ||
                         (request.targets.size() > 0 && !nucleotide(request.targets.alphabet));
    const bool nucleotides = (request.queries.size() > 0 && nucleotide(request.queries.alphabet)) ||
                             (request.targets.size() > 0 && nucleotide(request.targets.alphabet));
    if (scoring.match_mismatch) {
        if (protein)
            error(
                "Match/mismatch scoring is for nucleotides, but the sequences are protein: choose a "
                "substitution matrix such as BLOSUM62");
        if (scoring.match <= 0) error("The match score must be positive (it is " + std::to_string(scoring.match) + ")");
        if (scoring.mismatch >= scoring.match)
            error("The mismatch score (" + std::to_string(scoring.mismatch) + ") must be lower than the match score (" +
                  std::to_string(scoring.match) + ")");
    }
    if (scoring.gap_extend > scoring.gap_open)
        error("Gap extend (" + number(scoring.gap_extend) + ") is larger than gap open (" + number(scoring.gap_open) +
              "): a gap of length k costs open + (k-1)*extend, so a longer gap may not cost less per position "
              "than opening one");
    bool scheme_ok = false;
    bool matrix_is_nucleotide = scoring.match_mismatch;
    std::string matrix_name = scoring.matrix;
    if (!scoring.match_mismatch || (scoring.match > 0 && scoring.mismatch < scoring.match)) {
        try {
            const ScoringScheme scheme = scoring.scheme();
            scheme_ok = true;
            matrix_is_nucleotide = scheme.matrix.is_nucleotide();
            matrix_name = scheme.matrix.name();
        } catch (const Error& e) {
            if (scoring.gap_extend <= scoring.gap_open) error(e.what());
        }
    }
    if (scheme_ok && !scoring.match_mismatch) {
        if (protein && matrix_is_nucleotide)
            error(matrix_name +
                  " scores nucleotides, but the sequences are protein: choose a protein matrix "
                  "such as BLOSUM62");
        else if (nucleotides && !protein && !matrix_is_nucleotide)
            warning(matrix_name +
                    " is a protein matrix but the sequences are nucleotides: EDNAFULL or "
                    "match/mismatch is the usual choice");
    }
    if (request.align_options().mode == AlignmentMode::SemiGlobal && !search &&
        request.free_ends == FreeEndGaps::none())
        warning("Semi-global with no free end gaps is the same as global alignment");
    if (long_pair) check_long_pair(request, devices, have_both, error, warning);

    // Device.
    if (request.device == "gpu") {
        bool any = false;
        std::string reason;
        for (const auto& d : devices) {
            if (d.kind != "gpu") continue;
            if (d.available) any = true;
            else if (reason.empty())
                reason = d.unavailable_reason;
        }
        if (!any) error("No GPU can be used" + (reason.empty() ? std::string() : ": " + reason));
    } else if (const DeviceInfo* d = find_device(devices, request.device)) {
        if (!d->available) error(d->name + " cannot be used: " + d->unavailable_reason);
    } else {
        error("There is no device '" + request.device + "'");
    }
    if (search && scheme_ok) {
        if (!scanners) {
            error("Database search is not available here: no scanners were registered");
        } else {
            try {
                const ScanSetup setup = scan_setup(request);
                for (const std::string& id : scanners->resolve(request.device, "device")) {
                    const ScanCapability can = scanners->capability(id, setup);
                    if (!can.supported) error(id + " cannot scan this: " + can.reason);
                }
            } catch (const Error& e) {
                error(panel_wording(e));
            }
        }
    }
    if (request.threads < 0) error("Threads must be 0 (all cores) or more");
    if (request.streams < 0 || request.streams > 128) error("Streams must be between 1 and 128 (0 = automatic)");
    return problems;
}

bool has_errors(const std::vector<JobProblem>& problems) {
    return std::any_of(problems.begin(), problems.end(),
                       [](const JobProblem& p) { return p.severity == JobProblem::Severity::Error; });
}

GapCosts search_default_gaps(const ScoringChoice& scoring, AlphabetKind alphabet) {
    if (scoring.match_mismatch)
        return default_search_gaps({}, double(scoring.match), double(scoring.mismatch), alphabet);
    return default_search_gaps(scoring.matrix, std::nullopt, std::nullopt, alphabet);
}

ScanSetup scan_setup(const JobRequest& request) {
    ScanSetup setup;
    setup.scheme = request.scoring.scheme();
    setup.options = request.align_options();
    setup.threads = request.threads;
    setup.streams = request.streams;
    return setup;
}

LongRunnerSettings long_runner_settings(const JobRequest& request) {
    LongRunnerSettings settings;
    settings.strategy = request.strategy;
    if (request.strategy == "streams") {
        settings.kernels = request.kernels;
        settings.streams = request.streams;
    }
    return settings;
}

PairJob job_settings(const JobRequest& request) {
    PairJob job;
    job.queries = request.queries.records.get();
    job.targets = request.targets.records.get();
    job.scheme = request.scoring.scheme();
    job.options = request.align_options();
    job.threads = request.threads;
    job.streams = request.streams;
    return job;
}

PairJob make_pair_job(const JobRequest& request) {
    PairJob job = job_settings(request);
    const auto nq = static_cast<std::uint32_t>(request.queries.size());
    const auto nt = static_cast<std::uint32_t>(request.targets.size());
    if (request.pairing == Pairing::RecordByRecord) {
        for (std::uint32_t i = 0; i < std::min(nq, nt); ++i) job.pairs.emplace_back(i, i);
    } else {
        job.pairs.reserve(std::size_t(nq) * nt);
        for (std::uint32_t i = 0; i < nq; ++i)
            for (std::uint32_t j = 0; j < nt; ++j) job.pairs.emplace_back(i, j);
    }
    return job;
}

}  // namespace alignscope::ui
