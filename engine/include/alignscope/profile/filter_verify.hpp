// Checking a profile filter scanner (a GPU's, the SIMD CPU one) against the
// scalar reference recurrences, score for score: the MSV and Viterbi filter
// scores of one model over a set of targets, and made-up targets that reach
// the filters' corner cases (byte overflow, the J state, single residues,
// runs of one letter, a target of 100,000 residues). What `verify --profile`
// and the GPU self-test run.
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::profile {

struct FilterCheck {
    std::string model, target_set;
    int model_length = 0;
    std::size_t targets = 0, compared = 0, differing = 0;
    std::size_t msv_overflows = 0;             // targets whose MSV score is +infinity (byte overflow)
    std::vector<std::string> mismatches;      // the first few, one line each
    ProfileFilterStats msv_stats, viterbi_stats;  // the scanner's own cost figures
    double reference_seconds = 0;             // the scalar reference, both filters
};

// Random residues of random lengths (every seventh target over all codes,
// degenerate ones included), the model's consensus repeated one to six
// times, every single residue, a run of 3,000 of each, one target of
// 100,000 residues. The same seed gives the same targets.
ProfileTargets made_up_profile_targets(const ProfileHmm& hmm, int random_count, std::uint32_t seed);

// The scanner's MSV scores of every target and Viterbi filter scores of every
// target against msv_filter() and viterbi_filter(), bit for bit; the scanner
// is loaded with `targets` here. Reference work runs on `threads` (0 = all).
FilterCheck check_profile_filters(ProfileFilterScanner& scanner, const ProfileHmm& hmm, const ProfileTargets& targets,
                                  const std::string& target_set, int threads, JobContext& context);

}  // namespace alignscope::profile
