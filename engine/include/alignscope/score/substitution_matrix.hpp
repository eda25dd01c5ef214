// Substitution matrices: parsing the NCBI/EMBOSS text layout, the built-in set
// (BLOSUM45/50/62/80, PAM30/70/250, EDNAFULL, compiled from resources/matrices),
// simple match/mismatch matrices for nucleotides, and residue encoding.
#pragma once

#include <alignscope/error.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {

class SubstitutionMatrix {
public:
    SubstitutionMatrix() = default;

    // Parses the NCBI/EMBOSS layout: '#' comment lines, a header line of column
    // letters, then one row per letter starting with that letter. The matrix must
    // be square and each row letter must match its column. `source` names the
    // file in error messages ("FILE:LINE: expected ...").
    static SubstitutionMatrix parse(std::string_view text, std::string name, const std::string& source);
    static SubstitutionMatrix from_file(const std::string& path);
    // Built-in matrix by name, case-insensitive; an EMBOSS "E" prefix is accepted
    // (EBLOSUM62 = BLOSUM62, DNAFULL = EDNAFULL). Throws Error listing the names.
    static SubstitutionMatrix builtin(std::string_view name);
    static std::vector<std::string> builtin_names();
    // A built-in name, or else a path to a matrix file.
    static SubstitutionMatrix resolve(std::string_view name_or_path);
    // Nucleotide matrix over ACGTURYSWKMBDHVN: `match` for identical unambiguous
    // bases (T and U are identical), `mismatch` for every other pair, N included.
    static SubstitutionMatrix match_mismatch(int match, int mismatch);

    const std::string& name() const { return name_; }
    const std::string& letters() const { return letters_; }  // row/column order
    int size() const { return static_cast<int>(letters_.size()); }
    int score(int row, int col) const { return scores_[static_cast<std::size_t>(row) * letters_.size() + col]; }
    const std::vector<int>& scores() const { return scores_; }  // row-major size()*size()
    int max_score() const;
    int min_score() const;
    bool is_nucleotide() const;  // every letter is a nucleotide IUPAC code

    // Index of a residue (case-insensitive) or -1 when the matrix does not score
    // it. Letters without their own row map to a documented stand-in:
    // protein U (selenocysteine) -> C, O (pyrrolysine) -> K, J (I or L) -> X;
    // nucleotide U -> T and T -> U when only one of them has a row.
    int index_of(char c) const { return index_[static_cast<unsigned char>(c)]; }

    // A copy with every score multiplied by `factor` (for half-step penalties).
    SubstitutionMatrix scaled(int factor) const;

private:
    void build_index();
    std::string name_;
    std::string letters_;
    std::vector<int> scores_;
    std::array<std::int16_t, 256> index_{};
};

// Residues as matrix indices, ready for the DP.
using EncodedSequence = std::vector<std::uint8_t>;

// Encodes residues for `matrix`. Throws Error "residue 'J' at position 12 of
// <what> is not scored by matrix EDNAFULL" for a letter the matrix lacks.
EncodedSequence encode(std::string_view residues, const SubstitutionMatrix& matrix, std::string_view what);

// Encodes residues into `out` (room for residues.size() codes). Returns
// std::string_view::npos, or the position of the first letter the matrix lacks
// (for unscored_residue to word); what is before it is written.
std::size_t encode_into(std::string_view residues, const SubstitutionMatrix& matrix, std::uint8_t* out);

// encode's error for the letter at `position` of residues.
Error unscored_residue(std::string_view residues, std::size_t position, const SubstitutionMatrix& matrix,
                       std::string_view what);

}  // namespace alignscope
