// The digital residue codes of profile HMM search: the canonical residues
// 0..K-1, then the gap, the degenerate codes, the nonresidue '*' and the missing
// '~', in the order HMMER's save files and score tables use.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::profile {

enum class ResidueAlphabet { Amino, Dna, Rna };

class ResidueCode {
public:
    static const ResidueCode& of(ResidueAlphabet alphabet);

    ResidueAlphabet alphabet() const { return alphabet_; }
    std::string_view name() const;         // "amino", "DNA", "RNA" as a save file's ALPH line spells them
    int canonical() const { return k_; }   // K: 20 amino, 4 nucleotide
    int all_codes() const { return kp_; }  // Kp: every code, degenerate included
    int gap() const { return k_; }
    int nonresidue() const { return kp_ - 2; }  // '*'
    int missing() const { return kp_ - 1; }     // '~'
    bool is_degenerate(int code) const { return code > k_ && code < kp_ - 2; }
    // Whether canonical residue y is one of what degenerate (or canonical) code x stands for.
    bool stands_for(int x, int y) const {
        return degeneracy_[static_cast<std::size_t>(x)][static_cast<std::size_t>(y)] != 0;
    }
    char symbol(int code) const { return symbols_[static_cast<std::size_t>(code)]; }

    // Code of a letter as read from a sequence (case-insensitive, synonyms such
    // as '.' for the gap and, for nucleotides, U/T and X/N applied); -1 when the
    // letter is not in the alphabet.
    int code_of(char letter) const { return input_[static_cast<unsigned char>(letter)]; }
    // A whole sequence in codes; returns the 0-based position of the first
    // letter that is not in the alphabet, or npos.
    std::size_t digitise(std::string_view residues, std::vector<std::uint8_t>& out) const;

private:
    explicit ResidueCode(ResidueAlphabet alphabet);
    ResidueAlphabet alphabet_;
    int k_ = 0;
    int kp_ = 0;
    std::string symbols_;
    std::array<std::int16_t, 256> input_{};
    std::vector<std::array<std::uint8_t, 20>> degeneracy_;
};

}  // namespace alignscope::profile
