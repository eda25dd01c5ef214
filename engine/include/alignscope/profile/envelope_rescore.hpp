// The rescoring of one envelope as the domain stage does it (its unihit
// Forward and Backward, posterior decoding, optimal accuracy alignment and
// null2), as a value: what a device's ProfileFilterScanner::rescore_envelopes()
// returns per envelope, and the CPU reference it must equal bit for bit.
#pragma once

#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filters.hpp>
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

}  // namespace alignscope::profile
