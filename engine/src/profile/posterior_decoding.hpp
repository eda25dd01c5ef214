// The domain stage's work on full striped matrices: posterior decoding, the
// optimal accuracy DP and the null2 composition model, each over HMMER's
// striped segments in its order of floating-point work (null2's sums as its
// SSE code adds them), so that envelopes and bias corrections agree with
// hmmsearch's.
#pragma once

#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>

#include <vector>

namespace alignscope::profile {

// Posterior probabilities of M and I at each cell (D is left unfilled: no
// stage reads it) and of the N, J, C loops, from full Forward and Backward
// matrices of one envelope.
// False when the Backward total underflowed (no usable posteriors).
bool decode_posteriors(const LengthModel& length, const DpMatrix& fwd, const DpMatrix& bck, DpMatrix& pp);

// Optimal accuracy: the path maximising the summed posteriors of its emitting
// states, over transitions that are possible (probability > 0); fills `ox`
// and returns its score (the expected number of correctly aligned residues).
float optimal_accuracy(const ForwardProfile& om, const LengthModel& length, const DpMatrix& pp, DpMatrix& ox);

// null2 odds per residue code (Kp of them) from the posterior matrix of an
// envelope, or from the states one sampled trace uses in tr[zstart..zend].
std::vector<float> null2_by_expectation(const ForwardProfile& om, const DpMatrix& pp, ResidueAlphabet alphabet);
std::vector<float> null2_by_trace(const ForwardProfile& om, const std::vector<TraceStep>& tr, int zstart, int zend,
                                  ResidueAlphabet alphabet);

}  // namespace alignscope::profile
