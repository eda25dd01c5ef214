// Target sequences of a profile search, digitised once in the model's residue
// code and held back to back (the layout a GPU scanner uploads as it is).
#pragma once

#include <alignscope/profile/residue_code.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::profile {

struct ProfileTargets {
    ResidueAlphabet alphabet = ResidueAlphabet::Amino;
    std::string path;
    std::vector<std::string> names, descriptions;
    std::vector<std::uint8_t> residues;  // every target's codes, back to back
    std::vector<std::uint64_t> offsets;  // target t is residues[offsets[t], offsets[t+1])
    std::uint64_t residue_count() const { return residues.size(); }
    std::size_t size() const { return names.size(); }
    const std::uint8_t* codes(std::size_t t) const { return residues.data() + offsets[t]; }
    int length(std::size_t t) const { return static_cast<int>(offsets[t + 1] - offsets[t]); }
};

// Reads FASTA/FASTQ (plain or gzip; "-" standard input) and digitises it for
// `alphabet`. Throws Error naming the file, the record and the letter that is
// not in the alphabet, a target over 100,000 residues (hmmsearch's limit), or
// a file without records.
ProfileTargets read_profile_targets(const std::string& path, ResidueAlphabet alphabet, std::size_t limit = 0);

}  // namespace alignscope::profile
