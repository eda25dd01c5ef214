// Residue alphabets (DNA, RNA, protein) with IUPAC ambiguity codes:
// detection from sequence content, explicit override, and normalisation of
// residues (upper case, gaps and terminal stops) before alignment.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace alignscope {

enum class AlphabetKind { Dna, Rna, Protein };

// "dna", "rna", "protein".
std::string_view to_string(AlphabetKind kind);

// Accepts "dna", "rna", "protein" (case-insensitive; also "nucleotide" = dna,
// "aa"/"amino" = protein). Throws Error naming the parameter otherwise.
AlphabetKind parse_alphabet(std::string_view name);

// Guesses the alphabet of a residue string. Nucleotide when at least 90 % of the
// letters (ignoring N, X, gaps and stops) are A, C, G, T or U, or when every
// letter is a nucleotide code (IUPAC ambiguity codes R Y S W K M B D H V
// included), at least half are A, C, G, T or U and there is no X; RNA when U
// occurs and T does not; protein otherwise. Letters that are only N are DNA,
// only X (or N and X) protein; an empty string is DNA.
AlphabetKind detect_alphabet(std::string_view residues);

// Letters valid in the alphabet, upper case, including the IUPAC ambiguity codes
// (DNA: ACGTRYSWKMBDHVN, RNA: ACGURYSWKMBDHVN, protein: the 20 amino acids plus
// B Z X U O J and '*').
std::string_view alphabet_letters(AlphabetKind kind);

// True when the upper-cased letter is valid in the alphabet.
bool is_valid_residue(AlphabetKind kind, char c);

// For every byte: the upper-cased letter when it is valid in the alphabet, 0
// otherwise (gap characters, blanks and control bytes included): upper-casing
// and checking a residue in one load.
const std::array<unsigned char, 256>& residue_letters(AlphabetKind kind);

// Normalises residues in place for alignment: upper case; alignment gap
// characters '-' and '.' are removed (an input that is itself an alignment is
// aligned as plain sequence); one trailing '*' (a translated stop) is removed
// from protein. Returns the 0-based offset of the first letter not valid in the
// alphabet, or std::string::npos when all are valid.
std::size_t normalise_residues(std::string& residues, AlphabetKind kind);

}  // namespace alignscope
