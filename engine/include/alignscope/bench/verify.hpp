// `verify`: checks a backend against the CPU reference on seeded random pairs
// that cover every alignment mode, gap model, matrix and length class, including
// adversarial ones (16-bit saturation, gap-favouring penalties, length 1). This
// is how the GPU kernels are proven right, and how a user checks their own GPU.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/seq/sequence.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

// A small portable PRNG (xoshiro256**, seeded through splitmix64) with its own
// bounded-integer and real draws, so one seed yields the same pairs with every
// compiler and standard library (std::uniform_int_distribution does not).
class SeededRandom {
public:
    explicit SeededRandom(std::uint64_t seed);
    std::uint64_t next();
    // Uniform in [lo, hi], both inclusive; lo <= hi.
    std::int64_t between(std::int64_t lo, std::int64_t hi);
    double unit();          // uniform in [0, 1)
    bool chance(double p);  // true with probability p
    std::size_t index(std::size_t n) { return static_cast<std::size_t>(between(0, static_cast<std::int64_t>(n) - 1)); }

private:
    std::array<std::uint64_t, 4> state_{};
};

// Random residues: nucleotides uniform over ACGT; amino acids with the
// Robinson & Robinson (1991) background frequencies.
std::string random_residues(SeededRandom& random, AlphabetKind alphabet, std::int64_t length);

// A copy of `source` evolved by substitutions (rate per residue) and indels
// (rate per residue, geometric lengths with mean 2).
std::string mutate_residues(SeededRandom& random, AlphabetKind alphabet, std::string_view source,
                            double substitution_rate, double indel_rate);

// `core` brought to exactly `length` residues: a random window of it when it is
// longer, else embedded at a random offset in random flanks.
std::string fit_to_length(SeededRandom& random, AlphabetKind alphabet, std::string core, std::int64_t length);

// How the lengths and the content of a pair were drawn.
enum class LengthClass {
    One,            // both sequences of length 1
    Tiny,           // 1-8 each
    Short,          // 10-64 each
    Medium,         // 100-400 each
    Long,           // 1000-3000 each (few)
    IdenticalLong,  // identical sequences whose score passes 32,767 (16-bit saturation)
    Unrelated,      // independent sequences of 10-400
    OneVersusLong,  // length 1 against 100-3000, either side
    GapLong,        // length 1 against up to 3000, global, heavy gaps: the score falls below -32,768
};
inline constexpr std::array all_length_classes{LengthClass::One,       LengthClass::Tiny,
                                               LengthClass::Short,     LengthClass::Medium,
                                               LengthClass::Long,      LengthClass::IdenticalLong,
                                               LengthClass::Unrelated, LengthClass::OneVersusLong,
                                               LengthClass::GapLong};
std::string_view to_string(LengthClass length_class);

enum class GapModel {
    Linear,        // open == extend
    Affine,        // integer open > extend
    HalfStep,      // penalties in steps of 0.5 (e.g. 10/0.5): scores held at scale 2
    GapFavouring,  // tiny penalties (e.g. 1/0.5): gaps beat most mismatches
};
inline constexpr std::array all_gap_models{GapModel::Linear, GapModel::Affine, GapModel::HalfStep,
                                           GapModel::GapFavouring};
std::string_view to_string(GapModel model);

// One scoring scheme with one set of options: the unit a PairJob is made of.
struct VerifyConfig {
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::string matrix;  // built-in name, or "match 2/-3"
    GapModel gap_model = GapModel::Affine;
    double gap_open = 0, gap_extend = 0;  // user units
    ScoringScheme scheme;
    AlignOptions options;
    // Identical sequences of at most 3000 residues can pass 32,767 under this scheme.
    bool can_saturate = false;
    // One residue against 3000 scores below -32,768 in global mode.
    bool can_saturate_negative = false;
    // Scores or penalties past some lane width's limits (up to the accepted
    // maximum): a device may refuse the job with a clear error (counted as
    // refused), never answer it wrongly.
    bool extreme = false;

    // e.g. "protein BLOSUM62 gap 11/1 (affine) semiglobal[qb,te] traceback"
    std::string describe() const;
};

struct VerifyPair {
    std::uint64_t index = 0;  // 0-based position in the seeded stream
    std::size_t config = 0;   // index into VerifyPairGenerator::configs()
    LengthClass length_class = LengthClass::Short;
    Sequence query, target;
};

// Whether a forced kernel can run a configuration, judged from the kernel
// naming grammar (mode_gaps_family_width, e.g. "sw_affine_inter_s16"): "sw",
// "nw" and "sg" name local, global and semi-global; "linear" runs only linear
// schemes (open == extend) and "affine" only the others. A name outside the
// grammar (or empty) restricts nothing; the backend then decides.
bool kernel_can_run(std::string_view kernel, const VerifyConfig& config);

// The seeded stream of verify pairs. The configuration pool is fixed in shape
// (every matrix x gap model x mode, with the free-end-gap combinations dealt
// round-robin so all 16 occur) and its penalties are drawn from the seed; pairs
// then pick a mode (a third each), a configuration and a length class.
class VerifyPairGenerator {
public:
    // With `traceback_too`, the pool holds every configuration both without
    // traceback (score and coordinates) and with it (CIGAR as well). With a
    // forced `kernel`, pairs are drawn only from the configurations it can run
    // (kernel_can_run); identical-long pairs become long pairs when none of
    // those can saturate. Throws Error when the kernel can run none.
    explicit VerifyPairGenerator(std::uint64_t seed, bool traceback_too = true, std::string_view kernel = {});

    const std::vector<VerifyConfig>& configs() const { return configs_; }
    VerifyPair next();

private:
    LengthClass draw_length_class();
    std::size_t draw_config(LengthClass length_class);
    std::string draw_ambiguous(std::string residues, const VerifyConfig& config);

    SeededRandom random_;
    std::vector<VerifyConfig> configs_;
    // Configuration indices per mode (global, local, semi-global), all and
    // those that can saturate.
    std::array<std::vector<std::size_t>, 3> by_mode_, saturating_by_mode_;
    std::vector<std::size_t> modes_, saturating_modes_;  // modes with any candidate
    std::vector<std::size_t> negative_saturating_;       // global configurations with heavy gaps
    std::uint64_t next_index_ = 0;
};

struct VerifyOptions {
    std::string device = "auto";  // the backend under test (DeviceRegistry::select spec)
    std::string reference_device = "cpu-ref";
    std::uint64_t pairs = 10'000;
    std::uint64_t seed = 1;
    int threads = 0;  // CPU worker threads for both sides; 0 = all cores
    int streams = 0;  // GPU streams; 0 = backend default
    // Forced kernel for the tested backend (empty = automatic); pairs are then
    // drawn from the configurations it can run (kernel_can_run).
    std::string kernel;
    bool traceback_too = true;  // false: score-and-coordinates jobs only
    // A forced kernel may refuse, with an Error, any job whose values its
    // lanes cannot hold (counted as refused); otherwise only jobs of extreme
    // schemes may be refused.
    bool forced_kernel_may_refuse = false;
    // One job per pair instead of one per configuration: a refusal then
    // covers only the pair refused.
    bool job_per_pair = false;
    std::uint64_t gpu_memory_budget = 0;
    // Pairs generated and checked at a time; bounds memory for very large runs.
    std::uint64_t chunk_pairs = 50'000;
};

// One pair on which the tested backend disagrees with the reference, or whose
// alignment does not hold up on its own (CIGAR rescoring, spans).
struct VerifyMismatch {
    const VerifyPair* pair = nullptr;
    const VerifyConfig* config = nullptr;
    std::vector<std::string> problems;  // each a short sentence
    Alignment tested;
    Alignment reference;
    std::string tested_device, reference_device;

    // Several lines: the pair (sequences abbreviated past `max_residues`), the
    // mode and scheme, each problem, and both results.
    std::string describe(std::size_t max_residues = 120) const;
};

// A whole job of the tested backend failed (threw); all its pairs count as failed.
struct VerifyJobFailure {
    const VerifyConfig* config = nullptr;
    std::uint64_t pairs = 0;
    std::string message;
};

struct VerifySummary {
    std::uint64_t passed = 0;
    std::uint64_t failed = 0;
    std::uint64_t refused = 0;  // pairs of extreme schemes the tested device refused with an error
    std::uint64_t cells = 0;
    std::uint64_t jobs = 0;
    std::string tested_device, reference_device;
    std::string tested_kernels;  // distinct kernel names the tested backend reported, comma-separated
    double tested_seconds = 0;   // wall time inside the tested backend
    // Wall time until the reference had finished; a CPU reference runs whole
    // jobs side by side, alongside the tested device.
    double reference_seconds = 0;
    // Failed pairs counted by what they were, to point at the culprit:
    // "mode global", "gaps linear", "class medium", "matrix BLOSUM62", "traceback yes".
    std::map<std::string, std::uint64_t> failures_by_kind;
};

struct VerifyCallbacks {
    std::function<void(const VerifyMismatch&)> mismatch;
    std::function<void(const VerifyJobFailure&)> job_failure;
    // A job of an extreme scheme refused with an error (not a failure).
    std::function<void(const VerifyJobFailure&)> refusal;
    std::function<void(std::uint64_t pairs_done, std::uint64_t pairs_total)> progress;
};

// Checks one result against the reference result of the same pair. Compares
// score, query/target length, end and begin coordinates; for traceback jobs also
// requires a CIGAR whenever the reference has one, that each CIGAR spans exactly
// the reported coordinates, and that rescoring it (rescore()) gives the reported
// score. Returns the problems found; empty when the result is right.
std::vector<std::string> check_alignment(const Alignment& tested, const Alignment& reference, std::string_view query,
                                         std::string_view target, const ScoringScheme& scheme,
                                         const AlignOptions& options);

// Runs `options.pairs` generated pairs on `tested` and on `reference`, grouped
// into one PairJob per configuration, and checks every result. `context` carries
// the timeline (the tested backend's events go there) and the cancellation token.
VerifySummary verify_backend(Backend& tested, Backend& reference, const VerifyOptions& options,
                             const VerifyCallbacks& callbacks, JobContext& context);

// The same, selecting options.device and options.reference_device in `registry`.
VerifySummary verify_device(DeviceRegistry& registry, const VerifyOptions& options, const VerifyCallbacks& callbacks,
                            JobContext& context);

}  // namespace alignscope
