// What the verify files share: the amino-acid background frequencies and one
// residue drawn from them (or from ACGT), so generated sequences score as real
// ones do, and penalties and scores printed as typed.
#pragma once

#include <alignscope/bench/verify.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <string_view>

namespace alignscope::detail {

// Robinson & Robinson (1991) amino-acid background frequencies, the ones
// BLAST uses for composition; verify and bench draw protein residues from them
// so substitution scores average as they do on real proteins.
inline constexpr std::string_view amino_acids = "ARNDCQEGHILKMFPSTWYV";
inline constexpr std::array<double, 20> amino_acid_frequencies{0.07805, 0.05129, 0.04487, 0.05364, 0.01925,
                                                               0.04264, 0.06295, 0.07377, 0.02199, 0.05142,
                                                               0.09019, 0.05744, 0.02243, 0.03856, 0.05203,
                                                               0.07120, 0.05841, 0.01330, 0.03216, 0.06441};
inline constexpr std::string_view nucleotides = "ACGT";

char random_residue(SeededRandom& random, AlphabetKind alphabet);

// Penalties as typed: 1000000 and 999999.5, not 1e+06.
inline std::string format_number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.12g", value);
    return buffer;
}

}  // namespace alignscope::detail
