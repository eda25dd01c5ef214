// The null (background) model of profile HMM search: i.i.d. residues at
// background frequencies with a geometric length distribution, and the
// two-state "bias filter" HMM that lets a stretch of the target take the
// model's own composition (so that low-complexity targets do not pass on
// composition alone). Scores are in nats.
#pragma once

#include <alignscope/profile/residue_code.hpp>

#include <cstdint>
#include <vector>

namespace alignscope::profile {

class NullModel {
public:
    // Background frequencies: BLOSUM62's for amino acids, uniform for nucleotides.
    explicit NullModel(ResidueAlphabet alphabet);

    // Sets the bias filter's second state to `composition` (the model's COMPO
    // line; zeros when absent) with mean segment length M/8.
    void set_filter(int model_length, const std::vector<float>& composition);

    const std::vector<float>& frequencies() const { return frequencies_; }
    ResidueAlphabet alphabet() const { return alphabet_; }
    // Probability of one more residue for a target of length L: L/(L+1).
    static float length_loop(int L) { return static_cast<float>(L) / static_cast<float>(L + 1); }
    // log P(target | null) of a target of length L (the residues cancel in log-odds).
    static float null_score(int L);
    // log P(target | bias filter HMM), with the same length distribution.
    float filter_score(const std::uint8_t* dsq, int L) const;
    // The null2 mixing weight: the prior that a hit is biased composition.
    static constexpr float kOmega = 1.0f / 256.0f;

private:
    ResidueAlphabet alphabet_;
    std::vector<float> frequencies_;
    std::vector<float> composition_;
    // Two-state HMM: transitions between states, and emission odds per residue code.
    float t01_ = 0, t10_ = 0, t11_ = 0;
    std::vector<float> odds_[2];
};

}  // namespace alignscope::profile
