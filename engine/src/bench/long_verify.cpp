// verify --long (see long_verify.hpp).
#include <alignscope/align/cigar.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/bench/long_verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include "device/parasail_support.hpp"
#include "verify_detail.hpp"

#include <alignscope/bench/verify.hpp>

#include <parasail.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

namespace alignscope {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Config {
    const char* mode;  // "global", "local", "semiglobal", "semiglobal:qb,qe"
    const char* gaps;  // "affine", "linear"
    AlphabetKind alphabet;
};

// Mode fastest, then gaps, then alphabet: the first 8 configurations are DNA.
Config config_of(std::size_t k) {
    static const char* modes[] = {"global", "local", "semiglobal", "semiglobal:qb,qe"};
    static const char* gaps[] = {"affine", "linear"};
    return {modes[k % 4], gaps[(k / 4) % 2], (k / 8) % 2 ? AlphabetKind::Protein : AlphabetKind::Dna};
}

ScoringScheme make_scheme(AlphabetKind alphabet, bool affine, std::string& name) {
    if (alphabet == AlphabetKind::Protein) {
        name = affine ? "BLOSUM62 gap 11/1" : "BLOSUM62 gap 6/6";
        return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), affine ? 11 : 6, affine ? 1 : 6);
    }
    if (affine) {
        name = "EDNAFULL gap 10/0.5";
        return ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
    }
    name = "match 2/-3 gap 4/4";
    return ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 4, 4);
}

// One of pairwise verify's extreme schemes (VerifyPairGenerator::configs())
// of the pair's alphabet and gap model, drawn by the seed, which also draws
// the generator's penalties.
void take_extreme_scheme(std::uint64_t seed, std::uint64_t index, LongVerifyCase& c) {
    const VerifyPairGenerator generator(seed, false, "");
    const bool linear = c.gaps == std::string("linear");
    std::vector<const VerifyConfig*> choices;
    // One configuration per scheme: the global ones (the other modes repeat them).
    for (const VerifyConfig& config : generator.configs())
        if (config.extreme && config.alphabet == c.alphabet && config.scheme.linear() == linear &&
            config.options.mode == AlignmentMode::Global)
            choices.push_back(&config);
    if (choices.empty()) throw Error("verify --long: pairwise verify has no extreme " + c.gaps + " scheme");
    SeededRandom random(seed * 0x2545f4914f6cdd1dull + index * 0x9e3779b97f4a7c15ull + 3);
    const VerifyConfig& pick = *choices[random.index(choices.size())];
    c.scheme = pick.scheme;
    c.scheme_name = pick.matrix + " gap " + detail::format_number(pick.gap_open) + "/" +
                    detail::format_number(pick.gap_extend) + ", extreme";
    c.extreme = true;
}

// Whether every score of the pair's DP (a path has at most m + n columns, each
// adding at most the largest substitution score or penalty in size) stays
// well inside 32 bits, so parasail's 32-bit kernels can answer it.
bool fits_32_bits(const LongVerifyCase& c) {
    const std::int64_t per_column =
        std::max<std::int64_t>({std::abs(c.scheme.matrix.max_score()), std::abs(c.scheme.matrix.min_score()),
                                c.scheme.gap_open, c.scheme.gap_extend});
    const auto columns = static_cast<std::int64_t>(c.query.size() + c.target.size()) + 2;
    return columns * per_column < (std::int64_t{1} << 30);
}

std::string to_letters(std::string_view residues, const SubstitutionMatrix& matrix, const char* what) {
    const EncodedSequence codes = encode(residues, matrix, what);
    std::string out(codes.size(), 'A');
    for (std::size_t k = 0; k < codes.size(); ++k) out[k] = parasail_support::letters[codes[k]];
    return out;
}

std::string coords(const Alignment& a) {
    return std::to_string(a.query_begin) + ".." + std::to_string(a.query_end) + " x " + std::to_string(a.target_begin) +
           ".." + std::to_string(a.target_end);
}

// What is wrong with `got` (with or without traceback) against the reference
// and parasail.
void check(const LongVerifyCase& c, const Alignment& got, const Alignment& ref, const LongVerifyResult& r,
           bool traceback, std::vector<std::string>& problems) {
    const std::string run = traceback ? "with traceback" : "without traceback";
    if (got.score != ref.score)
        problems.push_back(run + ": score " + std::to_string(got.score) + ", reference " + std::to_string(ref.score));
    if (got.query_end != ref.query_end || got.target_end != ref.target_end)
        problems.push_back(run + ": end (" + std::to_string(got.query_end) + ", " + std::to_string(got.target_end) +
                           "), reference (" + std::to_string(ref.query_end) + ", " + std::to_string(ref.target_end) +
                           ")");
    if (r.parasail_checked) {
        if (got.score != r.parasail_score)
            problems.push_back(run + ": score " + std::to_string(got.score) + ", parasail " +
                               std::to_string(r.parasail_score));
        if (!(c.options.mode == AlignmentMode::Local && r.parasail_score <= 0) &&
            (got.query_end != r.parasail_query_end || got.target_end != r.parasail_target_end))
            problems.push_back(run + ": end (" + std::to_string(got.query_end) + ", " + std::to_string(got.target_end) +
                               "), parasail (" + std::to_string(r.parasail_query_end) + ", " +
                               std::to_string(r.parasail_target_end) + ")");
    }
    if (got.query_length != static_cast<std::int64_t>(c.query.size()) ||
        got.target_length != static_cast<std::int64_t>(c.target.size()))
        problems.push_back(run + ": lengths " + std::to_string(got.query_length) + " x " +
                           std::to_string(got.target_length) + " reported");
    if (c.options.mode == AlignmentMode::Global && (got.query_begin != 1 || got.target_begin != 1))
        problems.push_back(run + ": a global alignment begins at (" + std::to_string(got.query_begin) + ", " +
                           std::to_string(got.target_begin) + ")");
    if (!traceback) return;
    const bool empty_local = c.options.mode == AlignmentMode::Local && got.score == 0;
    if (empty_local) return;
    if (got.cigar.empty() && !(got.query_begin > got.query_end && got.target_begin > got.target_end)) {
        problems.push_back(run + ": no CIGAR");
        return;
    }
    if (got.query_begin + got.cigar.query_span() - 1 != got.query_end ||
        got.target_begin + got.cigar.target_span() - 1 != got.target_end) {
        problems.push_back(run + ": the CIGAR spans " + std::to_string(got.cigar.query_span()) + " x " +
                           std::to_string(got.cigar.target_span()) + " but the region is " + coords(got));
        return;
    }
    try {
        const std::int64_t path = rescore(got.cigar, c.query, c.target, got.query_begin, got.target_begin, c.scheme);
        if (path != got.score)
            problems.push_back(run + ": the CIGAR re-scores to " + std::to_string(path) + ", reported " +
                               std::to_string(got.score));
    } catch (const std::exception& e) {
        problems.push_back(run + ": the CIGAR does not re-score: " + e.what());
    }
}

void add_kernel(std::string& list, const std::string& kernel) {
    if (kernel.empty()) return;
    std::size_t at = 0;
    while (at <= list.size()) {
        const std::size_t comma = list.find(',', at);
        const std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (item == kernel) return;
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    list += (list.empty() ? "" : ",") + kernel;
}

}  // namespace

std::string LongVerifyCase::describe() const {
    return "#" + std::to_string(index) + " " + kind + " " + (alphabet == AlphabetKind::Protein ? "protein " : "DNA ") +
           format_length(static_cast<std::int64_t>(query.size())) + " x " +
           format_length(static_cast<std::int64_t>(target.size())) + ", " + describe_mode(options) + ", " +
           scheme_name + " (" + gaps + ")";
}

std::string LongVerifyResult::describe() const {
    std::ostringstream out;
    out << "MISMATCH " << pair->describe() << "\n  pair: " << pair->description << "\n";
    for (const auto& p : problems) out << "  " << p << "\n";
    out << "  scores below are scaled by " << pair->scheme.scale << "\n";
    out << "  tested " << tested.device << " " << tested.kernel << ": score " << tested.score << " region "
        << coords(tested) << "\n  reference: score " << reference.score << " region " << coords(reference) << "\n";
    if (parasail_checked)
        out << "  parasail: score " << parasail_score << " end (" << parasail_query_end << ", " << parasail_target_end
            << ")\n";
    return out.str();
}

LongVerifyCase long_verify_case(const LongVerifyOptions& options, std::uint64_t index, const std::string& seed_genome) {
    if (options.max_length < 1) throw Error("--max-length must be at least 1");
    LongVerifyCase c;
    c.index = index;
    const Config config = config_of(index / 2);
    const bool genome = index % 2 == 1;
    c.kind = genome ? "genome" : "planted";
    c.alphabet = genome ? AlphabetKind::Dna : config.alphabet;
    c.gaps = config.gaps;
    c.scheme = make_scheme(c.alphabet, c.gaps == std::string("affine"), c.scheme_name);
    const std::string mode = config.mode;
    const auto colon = mode.find(':');
    c.options.mode = parse_mode(mode.substr(0, colon));
    if (colon != std::string::npos) c.options.free_ends = FreeEndGaps::parse(mode.substr(colon + 1));
    c.options.traceback = true;

    // Lengths from their own stream, so they do not depend on the pair's content.
    SeededRandom random(options.seed * 0x9e3779b97f4a7c15ull + index * 0x2545f4914f6cdd1dull + 17);
    const double top = static_cast<double>(options.max_length);
    const double bottom = std::max(1.0, top / 20);
    auto draw = [&] {
        const double log_length = std::log(bottom) + random.unit() * (std::log(top) - std::log(bottom));
        return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(log_length)), 1, options.max_length);
    };
    std::int64_t m = draw(), n = draw();
    if (random.chance(0.25)) m = std::max<std::int64_t>(1, m / 10);
    const std::uint64_t pair_seed = random.next();
    const LongPair pair =
        genome ? generate_long_pair(pair_seed, seed_genome, m, n) : planted_pair(pair_seed, c.alphabet, m, n, 3, 0.15);
    c.query = pair.query;
    c.target = pair.target;
    c.description = pair.description;
    if (index % 3 == 2) take_extreme_scheme(options.seed, index, c);
    return c;
}

ParasailAnswer parasail_score_and_end(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                                      const AlignOptions& options) {
    const std::string q = to_letters(query, scheme.matrix, "the query");
    const std::string t = to_letters(target, scheme.matrix, "the target");
    const parasail_support::MatrixPtr matrix = parasail_support::make_matrix(scheme.matrix);
    const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
    const FreeEndGaps fe = options.free_ends;
    using Function = parasail_result_t* (*)(const char*, int, const char*, int, int, int, const parasail_matrix_t*);
    Function function = nullptr;
    bool rowcol = false;
    switch (options.mode) {
        case AlignmentMode::Global: function = parasail_nw_scan_32; break;
        case AlignmentMode::Local: function = parasail_sw_scan_32; break;
        case AlignmentMode::SemiGlobal:
            // Our query begin/end are parasail's db/de, our target begin/end its qb/qe.
            rowcol = true;
            if (fe == FreeEndGaps::all()) function = parasail_sg_rowcol_scan_32;
            else if (fe == FreeEndGaps::parse("qb,qe"))
                function = parasail_sg_dx_rowcol_scan_32;
            else
                throw Error("parasail_score_and_end: free ends " + fe.to_string() + " are not wired here");
            break;
    }
    parasail_support::ResultPtr result(
        function(q.data(), m, t.data(), n, scheme.gap_open, scheme.gap_extend, matrix.get()));
    if (!result) throw Error("parasail failed (out of memory?)");
    if (parasail_result_is_saturated(result.get())) throw Error("parasail's 32-bit scores saturated");
    ParasailAnswer a;
    a.score = result->score;
    if (options.mode == AlignmentMode::Global) {
        a.query_end = m;
        a.target_end = n;
    } else if (options.mode == AlignmentMode::Local) {
        a.query_end = result->end_query + 1;
        a.target_end = result->end_ref + 1;
    } else if (rowcol) {
        const int* row = parasail_result_get_score_row(result.get());  // H(m, j)
        const int* col = parasail_result_get_score_col(result.get());  // H(i, n)
        if (!row || !col) throw Error("parasail returned no last row and column");
        // The reference's end rule: highest score, then smallest j, then smallest i.
        std::int64_t best = row[n - 1], bi = m, bj = n;
        auto consider = [&](std::int64_t v, std::int64_t i, std::int64_t j) {
            if (v > best || (v == best && (j < bj || (j == bj && i < bi)))) {
                best = v;
                bi = i;
                bj = j;
            }
        };
        if (fe.query_end)
            for (int j = 1; j <= n; ++j) consider(row[j - 1], m, j);
        if (fe.target_end)
            for (int i = 1; i <= m; ++i) consider(col[i - 1], i, n);
        if (best != a.score)
            throw Error("parasail's semi-global score " + std::to_string(a.score) +
                        " is not the best of its last row and column (" + std::to_string(best) + ")");
        a.query_end = bi;
        a.target_end = bj;
    }
    return a;
}

std::vector<std::uint64_t> long_verify_indices(AlignmentMode mode, bool linear, std::uint64_t count) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t index = 0; out.size() < count && index < 64 * (count + 1); ++index) {
        const Config config = config_of(index / 2);
        const std::string mode_word = config.mode;
        if (parse_mode(mode_word.substr(0, mode_word.find(':'))) == mode &&
            (std::string(config.gaps) == "linear") == linear)
            out.push_back(index);
    }
    return out;
}

namespace {

// One chunk of pairs and everything found about them: the CPU's answers
// (reference, parasail), the device's, and what went wrong on each side.
struct LongVerifyChunk {
    std::vector<LongVerifyCase> cases;
    std::vector<LongVerifyResult> results;
    std::vector<std::string> reference_errors, parasail_errors, tested_errors;
    std::vector<char> tested_error_said;  // the device's failure was an Error (a refusal), not a crash of another kind
    std::vector<double> reference_seconds, parasail_seconds;
    std::vector<Alignment> score_only, pipeline;  // the device without traceback; the scalar-runner pipeline
    std::vector<char> pipeline_ran;               // the scalar runner could hold the pair (not past its 32 bits)

    explicit LongVerifyChunk(std::vector<LongVerifyCase> c) : cases(std::move(c)) {
        const std::size_t n = cases.size();
        results.resize(n);
        reference_errors.resize(n);
        parasail_errors.resize(n);
        tested_errors.resize(n);
        tested_error_said.assign(n, 0);
        reference_seconds.assign(n, 0);
        parasail_seconds.assign(n, 0);
        score_only.resize(n);
        pipeline.resize(n);
        pipeline_ran.assign(n, 0);
        for (std::size_t k = 0; k < n; ++k) results[k].pair = &cases[k];
    }
};

// The CPU's answers, on `workers` threads while the device runs: task 2k is
// pair k's reference, 2k+1 its parasail answer.
class CpuAnswers {
public:
    CpuAnswers(LongVerifyChunk& chunk, const LongVerifyOptions& options, const JobContext& context, unsigned workers)
        : chunk_(chunk), options_(options), context_(context) {
        for (unsigned w = 0; w < workers; ++w) pool_.emplace_back([this] { work(); });
    }
    CpuAnswers(const CpuAnswers&) = delete;
    CpuAnswers& operator=(const CpuAnswers&) = delete;
    ~CpuAnswers() { join(true); }

    // Waits for the threads; `stop`: after their current check.
    void join(bool stop) {
        if (stop) next_task_ = 2 * chunk_.cases.size();
        for (std::thread& th : pool_)
            if (th.joinable()) th.join();
    }

private:
    void work() {
        const std::uint64_t tasks = 2 * chunk_.cases.size();
        for (std::uint64_t task; (task = next_task_.fetch_add(1)) < tasks;) {
            if (context_.cancelled()) return;
            const std::size_t k = static_cast<std::size_t>(task / 2);
            try {
                if (task % 2 == 0) reference(k);
                else
                    parasail(k);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(error_mutex_);
                (task % 2 ? chunk_.parasail_errors : chunk_.reference_errors)[k] =
                    std::string(task % 2 ? "parasail" : "the reference") + " failed: " + e.what();
            }
        }
    }
    void reference(std::size_t k) {
        const LongVerifyCase& c = chunk_.cases[k];
        const auto t0 = Clock::now();
        AlignOptions score_only = c.options;
        score_only.traceback = false;  // score, end and begin in O(n) memory
        chunk_.results[k].reference = align_reference(c.query, c.target, c.scheme, score_only);
        chunk_.reference_seconds[k] = seconds_since(t0);
    }
    void parasail(std::size_t k) {
        const LongVerifyCase& c = chunk_.cases[k];
        if (static_cast<std::int64_t>(std::max(c.query.size(), c.target.size())) > options_.parasail_max_length) return;
        if (!fits_32_bits(c)) return;
        const auto t0 = Clock::now();
        const ParasailAnswer p = parasail_score_and_end(c.query, c.target, c.scheme, c.options);
        LongVerifyResult& r = chunk_.results[k];
        r.parasail_checked = true;
        r.parasail_score = p.score;
        r.parasail_query_end = p.query_end;
        r.parasail_target_end = p.target_end;
        chunk_.parasail_seconds[k] = seconds_since(t0);
    }

    LongVerifyChunk& chunk_;
    const LongVerifyOptions& options_;
    const JobContext& context_;
    std::atomic<std::uint64_t> next_task_{0};
    std::mutex error_mutex_;
    std::vector<std::thread> pool_;
};

// The device, pair by pair: with traceback, without, and (CPU backends,
// cpu_pipeline_too) the pipeline itself on the scalar runner. Returns the
// Cancelled it met, if any.
std::exception_ptr run_on_device(LongVerifyChunk& chunk, Backend& tested, const LongVerifyOptions& options,
                                 bool has_runner, const LongVerifyCallbacks& callbacks, const JobContext& context) {
    for (std::size_t k = 0; k < chunk.cases.size(); ++k) {
        const LongVerifyCase& c = chunk.cases[k];
        LongVerifyResult& r = chunk.results[k];
        if (callbacks.starting) callbacks.starting(c);
        longpair::LongPairOptions lp;
        lp.align = c.options;
        if (options.special_row_budget) lp.special_row_budget = options.special_row_budget;
        lp.threads = options.threads;
        try {
            const auto t0 = Clock::now();
            r.tested =
                longpair::align_long_on(tested, c.query, c.target, c.scheme, lp, options.settings, context, &r.stats);
            lp.align.traceback = false;
            chunk.score_only[k] =
                longpair::align_long_on(tested, c.query, c.target, c.scheme, lp, options.settings, context);
            r.tested_seconds = seconds_since(t0);
            auto runner = longpair::make_cpu_pass_runner();
            if (!has_runner && options.cpu_pipeline_too &&
                runner
                    ->cannot_hold(static_cast<std::int64_t>(c.query.size()), static_cast<std::int64_t>(c.target.size()),
                                  c.scheme)
                    .empty()) {
                // The pipeline itself, on the scalar runner, special rows a few
                // hundred rows apart (where its 32-bit cells hold the pair: the
                // others took the 64-bit path above, as every long job does).
                longpair::LongPairOptions tight;
                tight.align = c.options;
                tight.min_band_rows = std::max<std::int64_t>(32, static_cast<std::int64_t>(c.query.size()) / 12);
                tight.threads = options.threads;
                chunk.pipeline[k] = longpair::align_long(c.query, c.target, c.scheme, tight, *runner, context);
                chunk.pipeline_ran[k] = 1;
            }
        } catch (const Cancelled&) {
            return std::current_exception();
        } catch (const Error& e) {
            chunk.tested_errors[k] = e.what();
            chunk.tested_error_said[k] = 1;
        } catch (const std::exception& e) {
            chunk.tested_errors[k] = e.what();
        }
    }
    return nullptr;
}

// Pair k's problems: either side failing, or the device's answers against
// the reference's and parasail's.
void judge_pair(LongVerifyChunk& chunk, std::size_t k, bool pipeline_too) {
    const LongVerifyCase& c = chunk.cases[k];
    LongVerifyResult& r = chunk.results[k];
    if (!chunk.reference_errors[k].empty()) r.problems.push_back(chunk.reference_errors[k]);
    if (!chunk.parasail_errors[k].empty()) r.problems.push_back(chunk.parasail_errors[k]);
    if (!chunk.tested_errors[k].empty()) {
        // An extreme scheme may be refused with a clear error; anything else
        // a device fails at is a failure.
        if (c.extreme && chunk.tested_error_said[k] && r.problems.empty()) {
            r.refused = true;
            r.refusal = chunk.tested_errors[k];
            return;
        }
        r.problems.push_back("the device failed: " + chunk.tested_errors[k]);
        return;
    }
    if (!chunk.reference_errors[k].empty()) return;
    check(c, r.tested, r.reference, r, true, r.problems);
    check(c, chunk.score_only[k], r.reference, r, false, r.problems);
    if (!pipeline_too || !chunk.pipeline_ran[k]) return;
    std::vector<std::string> p;
    check(c, chunk.pipeline[k], r.reference, r, true, p);
    for (auto& line : p) r.problems.push_back("pipeline on the scalar runner, " + line);
}

void count_pair(const LongVerifyCase& c, const LongVerifyResult& r, double reference_seconds, double parasail_seconds,
                LongVerifySummary& summary) {
    summary.cells += static_cast<std::uint64_t>(c.query.size()) * static_cast<std::uint64_t>(c.target.size());
    summary.tested_seconds += r.tested_seconds;
    summary.reference_seconds += reference_seconds;
    summary.parasail_seconds += parasail_seconds;
    if (r.parasail_checked) ++summary.parasail_checked;
    add_kernel(summary.tested_kernels, r.tested.kernel);
    if (c.extreme) ++summary.extreme;
    if (r.refused) {
        ++summary.refused;
        return;
    }
    if (r.problems.empty()) {
        ++summary.passed;
        return;
    }
    ++summary.failed;
    ++summary.failures_by_kind["mode " + std::string(to_string(c.options.mode))];
    ++summary.failures_by_kind["gaps " + c.gaps];
    ++summary.failures_by_kind["kind " + c.kind];
    ++summary.failures_by_kind[std::string("alphabet ") + (c.alphabet == AlphabetKind::Protein ? "protein" : "DNA")];
}

}  // namespace

LongVerifySummary verify_long(Backend& tested, const LongVerifyOptions& given, const LongVerifyCallbacks& callbacks,
                              const JobContext& context) {
    LongVerifyOptions options = given;
    if (!options.indices.empty()) options.pairs = options.indices.size();
    const auto index_of = [&options](std::uint64_t k) { return options.indices.empty() ? k : options.indices[k]; };
    if (options.pairs == 0) throw Error("--pairs must be at least 1");
    if (options.max_length < 1) throw Error("--max-length must be at least 1");
    if (options.threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    const SeedGenome genome = load_seed_genome(options.seed_genome);
    if (!genome.real && callbacks.note) callbacks.note("genome pairs grow from " + genome.source);

    LongVerifySummary summary;
    summary.tested_device = tested.info().id;
    summary.seed_genome = genome.source;
    const bool has_runner = tested.make_long_runner(options.settings) != nullptr;
    const bool pipeline_too = !has_runner && options.cpu_pipeline_too;
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const unsigned workers = options.threads > 0 ? static_cast<unsigned>(options.threads) : hardware;
    // Pairs in chunks: the reference and parasail answers of a chunk are
    // computed on CPU threads while the device runs the chunk's pairs.
    const std::uint64_t chunk_size = std::max<std::uint64_t>(2, workers);

    for (std::uint64_t first = 0; first < options.pairs; first += chunk_size) {
        context.throw_if_cancelled();
        const std::uint64_t count = std::min(chunk_size, options.pairs - first);
        std::vector<LongVerifyCase> cases;
        for (std::uint64_t k = 0; k < count; ++k)
            cases.push_back(long_verify_case(options, index_of(first + k), genome.residues));
        LongVerifyChunk chunk(std::move(cases));
        {
            CpuAnswers cpu(chunk, options, context, workers);
            const std::exception_ptr cancelled = run_on_device(chunk, tested, options, has_runner, callbacks, context);
            cpu.join(cancelled != nullptr);
            if (cancelled) std::rethrow_exception(cancelled);
        }
        context.throw_if_cancelled();
        for (std::size_t k = 0; k < chunk.cases.size(); ++k) {
            judge_pair(chunk, k, pipeline_too);
            count_pair(chunk.cases[k], chunk.results[k], chunk.reference_seconds[k], chunk.parasail_seconds[k],
                       summary);
            if (callbacks.result) callbacks.result(chunk.results[k]);
            if (callbacks.progress) callbacks.progress(first + k + 1, options.pairs);
        }
    }
    return summary;
}

}  // namespace alignscope
