// The domain stage's work on full striped matrices: posterior decoding, the
// optimal accuracy DP and the null2 composition model, each over HMMER's
// striped segments in its order of floating-point work (null2's sums as its
// SSE code adds them), so that envelopes and bias corrections agree with
// hmmsearch's.
#pragma once

#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>

#include <optional>
#include <vector>

namespace alignscope::profile {

// One pass over the rows of an envelope's full Forward and Backward matrices,
// each row used while it is in the cache:
// - posterior decoding: the posterior probabilities of M and I at each cell
//   (D is left unfilled: no stage reads it) and of the N, J, C loops, in pp;
// - optimal accuracy: the path maximising the summed posteriors of its
//   emitting states, over transitions that are possible (probability > 0),
//   in ox; its score (the expected number of correctly aligned residues) is
//   returned;
// - with `null2`, the null2 odds per residue code (Kp of them) from the
//   expected uses of the states (posteriors summed row after row).
// Nothing when the Backward total underflowed (no usable posteriors).
std::optional<float> decode_and_align(const ForwardProfile& om, const LengthModel& length, const DpMatrix& fwd,
                                      const DpMatrix& bck, DpMatrix& pp, DpMatrix& ox, ResidueAlphabet alphabet,
                                      std::vector<float>* null2);

// null2 odds per residue code (Kp of them) from the states one sampled trace
// uses in tr[zstart..zend].
std::vector<float> null2_by_trace(const ForwardProfile& om, const std::vector<TraceStep>& tr, int zstart, int zend,
                                  ResidueAlphabet alphabet);
// The same for a domain (B to E) given the nodes of its M and I steps, in
// any order: null2_by_trace() of the domain's steps.
std::vector<float> null2_by_nodes(const ForwardProfile& om, const int* nodes, int count, ResidueAlphabet alphabet);

}  // namespace alignscope::profile
