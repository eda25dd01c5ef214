// The rescoring of one envelope as the domain stage does it (its unihit
// Forward and Backward, posterior decoding, optimal accuracy alignment and
// null2), as a value: what a device's ProfileFilterScanner::rescore_envelopes()
// returns per envelope, and the CPU reference it must equal bit for bit.
#pragma once

#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>
#include <alignscope/profile/residue_code.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::profile {

struct EnvelopeOutcome {
    float env_score = 0;   // nats: the envelope's unihit Forward score (the domain stage's envsc)
    bool decoded = false;  // false: the posteriors underflowed (decode_and_align() gave nothing); nothing below set
    float accuracy = 0;    // the optimal accuracy score (decode_and_align()'s value)
    // The optimal accuracy trace as the traceback gives it: S first, T last,
    // positions i relative to the envelope (1..j-i+1; 0 where a step emits
    // nothing), before the domain stage adds i - 1.
    std::vector<TraceStep> trace;
    std::vector<float> null2;  // odds per residue code (Kp), as decode_and_align() gives them; empty unless asked
    // Not empty: the CPU's rescoring of this envelope throws Error with this
    // message (a Forward or Backward under- or overflow, say).
    std::string error;
};

// The CPU's rescoring of envelope job.i..job.j of target dsq[0..L-1] with
// the model's unihit profile, exactly as the domain stage does it (one
// envelope at a time, under FlushSubnormals). Throws Error when the envelope
// is not within the target.
EnvelopeOutcome rescore_envelope_reference(const ForwardProfile& unihit, ResidueAlphabet alphabet,
                                           const std::uint8_t* dsq, int L, const EnvelopeJob& job);

// The domain stage's optimal accuracy traceback over the posteriors `pp` and
// the optimal accuracy matrix `ox` of decode_and_align(): S first, T last.
std::vector<TraceStep> accuracy_traceback(const ForwardProfile& om, const LengthModel& length, const DpMatrix& pp,
                                          const DpMatrix& ox);

// null2 odds per residue code (Kp of them) from those of the canonical
// residues (null2[0..K-1] set): the degenerate codes' means and 1 for the
// gap, nonresidue and missing codes, as decode_and_align() completes them.
void complete_null2(std::vector<float>& null2, ResidueAlphabet alphabet);

// What differs between two outcomes, bit for bit (empty: nothing).
std::string envelope_outcome_difference(const EnvelopeOutcome& ours, const EnvelopeOutcome& reference);

// A scanner's device envelope rescoring against the CPU reference: the
// envelopes the CPU pipeline finds for the model in the targets (hmmsearch's
// thresholds) and every target of at most 2,000 residues whole (up to 120),
// half of them with null2 asked; outcome for outcome, bit for bit.
struct EnvelopeCheck {
    bool checked = false;  // false: the scanner has no device rescoring
    std::size_t compared = 0, differing = 0;
    std::vector<std::string> mismatches;  // the first few, one line each
    ProfileFilterStats stats;             // the scanner's call
    double reference_seconds = 0;         // the CPU reference over the same envelopes
};
EnvelopeCheck check_device_envelopes(ProfileFilterScanner& scanner, const ProfileHmm& hmm,
                                     const ProfileTargets& targets, int threads, JobContext& context);

}  // namespace alignscope::profile
