// Checking a profile filter scanner (a GPU's, the SIMD CPU one) against the
// scalar reference recurrences, score for score and pass for pass: the MSV
// and Viterbi filter scores of a model over a set of targets (and a device
// Forward's against the CPU's striped forward()), made-up models
// (random ones and extreme ones that push the filters' 8- and 16-bit ranges)
// and made-up targets that reach the filters' corner cases. What
// `verify --profile`, `verify --all-kernels` and the GPU self-test run.
#pragma once

#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace alignscope::profile {

// One filter's comparison over a target set.
struct FilterComparison {
    std::size_t compared = 0, differing = 0;
    // Targets past the filter's threshold (MSV: P <= F1, Viterbi filter:
    // P <= F2, hmmsearch's defaults; null-model scores, no bias filter) by
    // the reference's scores, and targets the scanner's scores decide
    // otherwise.
    std::size_t passed = 0, pass_differing = 0;
    std::size_t overflows = 0;  // reference scores of +infinity (the lanes' range overflowed)
};

struct FilterCheck {
    std::string model, target_set;
    int model_length = 0;
    std::size_t targets = 0, compared = 0, differing = 0;
    std::size_t msv_overflows = 0;  // targets whose MSV score is +infinity (byte overflow)
    FilterComparison msv, viterbi;
    // The scanner's device Forward (the Fwd filter) against forward(): the
    // score and every row's specials bit for bit, the pass at F3 against the
    // null model (forward_checked false: the scanner has no device Forward).
    bool forward_checked = false;
    FilterComparison forward;
    ProfileFilterStats forward_stats;
    double forward_reference_seconds = 0;  // the CPU's forward() over the same targets
    // The scanner's device Backward of every target (given its device
    // Forward's rows) against the CPU's backward_group(): the score, the
    // total scale and every row's specials bit for bit (backward_checked
    // false: no device Backward). The CPU's time is the grouped Backward of
    // the pipeline, eight neighbours of the longest-first order at a time.
    bool backward_checked = false;
    FilterComparison backward;
    ProfileFilterStats backward_stats;
    double backward_reference_seconds = 0;
    int reference_threads = 0;  // the CPU's worker threads
    // The scanner's device envelope rescoring (the domain stage's) against
    // the CPU reference, outcome for outcome (check_device_envelopes();
    // envelopes.checked false: no device rescoring, or a model of more than
    // 1,000 nodes).
    EnvelopeCheck envelopes;
    // Further MSV-family passes the scanner offered (a GPU's MSV kernel over
    // every target), by kernel name.
    std::vector<std::pair<std::string, FilterComparison>> extra;
    std::vector<std::string> mismatches;          // the first few, one line each
    ProfileFilterStats msv_stats, viterbi_stats;  // the scanner's own cost figures
    double reference_seconds = 0;                 // the scalar reference, both filters
    bool passed() const { return differing == 0; }
};

// A scanner's own MSV-family kernel run alone over every loaded target (the
// pipeline runs it only where the kernel before it cannot settle a score):
// `kernel` names it, run() fills scores[t] as ProfileFilterScanner::msv() for
// the targets loaded (given again), or returns false for a model the kernel
// does not take (then nothing is compared).
struct ExtraMsvPass {
    std::string kernel;
    std::function<bool(const MsvProfile& model, const ProfileTargets& loaded, std::span<float> scores)> run;
};

// Random residues of random lengths (every seventh target over all codes,
// degenerate ones included), the model's consensus cut after 1, 2, ... 64
// residues (the scores climb through the lanes' ceilings one residue at a
// time) and repeated one to six times, every single residue, a run of 3,000 of each, one target of
// 100,000 residues. The same seed gives the same targets.
ProfileTargets made_up_profile_targets(const ProfileHmm& hmm, int random_count, std::uint32_t seed);

// Made-up models, each with a typical calibration (STATS lines) so that the
// pass decisions are exercised:
//  - `random_count` random models of 2 to 400 nodes (emissions and
//    transitions drawn at random);
//  - the extreme ones: "peaked" (each node emits one residue with
//    probability 1 - 1e-6, match-to-match 1 - 1e-6: MSV overflows its bytes
//    and the Viterbi filter its words within a few dozen residues), "zeros"
//    (most emissions and several transitions exactly 0: every cost saturates),
//    "flat" (emissions at the background: scores near 0), "gappy" (delete and
//    insert states preferred), one-node models (random and peaked);
//  - with `long_models`, 1,100 nodes (the GPU Viterbi filter's 48-segment
//    kernel) and 2,100 nodes (past the GPU MSV and Viterbi filter kernels'
//    2,048: filtered on the CPU).
// Names say the alphabet when it is not amino ("dna_peaked_M40"). The same
// seed gives the same models.
std::vector<ProfileHmm> made_up_profile_models(int random_count, bool long_models, std::uint32_t seed,
                                               ResidueAlphabet alphabet = ResidueAlphabet::Amino);

// The scalar reference's MSV and Viterbi filter scores of one model over a
// target set (msv_filter(), viterbi_filter()), on `threads` (0 = all): made
// once when several devices are checked on the same model and targets.
struct FilterReference {
    std::vector<float> msv, viterbi;
    double seconds = 0;
};
FilterReference reference_filter_scores(const ProfileHmm& hmm, const ProfileTargets& targets, int threads,
                                        JobContext& context);

// The scanner's MSV scores of every target and Viterbi filter scores of every
// target against msv_filter() and viterbi_filter(), bit for bit, and the
// pass decisions they give; the scanner is loaded with `targets` here.
// Reference work runs on `threads` (0 = all), unless `reference` already
// holds it for this model and these targets.
FilterCheck check_profile_filters(ProfileFilterScanner& scanner, const ProfileHmm& hmm, const ProfileTargets& targets,
                                  const std::string& target_set, int threads, JobContext& context,
                                  const std::vector<ExtraMsvPass>& extra = {},
                                  const FilterReference* reference = nullptr);

// The profile filter kernels in the kernel catalog (`verify --all-kernels`):
// each variant is checked by check_profile_filters() over the made-up models
// (random and extreme, the long ones included) and made-up targets, on the
// device's scanner; an MSV-family variant passes when its MSV scores all
// agree, the Viterbi filter variant when its scores do, the Forward,
// Backward and envelope variants when theirs do bit for bit. The models of
// one device run once for all its variants.
//  - `make_scanner` gives the scanner of a device id ("cpu", "gpu:0");
//  - `extra_passes` the kernels that scanner can also run alone (may be null);
//  - `kernel_of` says which kernel name an MSV comparison stands for: the
//    variant whose comparison is `msv` (the pipeline's), or an extra pass's.
struct ProfileKernelFamily {
    std::function<std::unique_ptr<ProfileFilterScanner>(const std::string& device, int threads)> make_scanner;
    std::function<std::vector<ExtraMsvPass>(ProfileFilterScanner&)> extra_passes;
    std::string msv_kernel;      // the kernel the scanner's msv() ends in ("sw_linear_msv_s8")
    std::string viterbi_kernel;  // the kernel of its viterbi() ("sw_affine_vitfilter_s16")
    std::string forward_kernel;  // the kernel of its forward(), if it has one ("sw_affine_fwdfilter4_s32")
    // The kernel of its backward() (judged by every target's score, total
    // scale and row specials, given its own forward()'s rows), and of its
    // rescore_envelopes() (outcome for outcome, models of up to 1,000 nodes:
    // check_device_envelopes()), if it has them.
    std::string backward_kernel;  // "sw_affine_bwdparser4_s32"
    std::string envelope_kernel;  // "sw_affine_envelope4_s32"
    bool long_models = true;      // the 1,100- and 2,100-node models too (most of the check's time)
    bool longest_target = true;   // the 100,000-residue target too (false: a CPU emulation's test)
};
KernelCheck make_profile_kernel_check(ProfileKernelFamily family);

// The CPU's: "cpu" (SSE2 striped, sw_linear_msv_s8 and sw_affine_vitfilter_s16).
void add_cpu_profile_kernel_families(KernelCatalog& catalog);

}  // namespace alignscope::profile
