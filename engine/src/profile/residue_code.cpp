// Residue codes for profile HMM search: the symbol orders, degeneracies and
// input synonyms of HMMER's amino, DNA and RNA alphabets.
#include <alignscope/profile/residue_code.hpp>

#include <cctype>

namespace alignscope::profile {

ResidueCode::ResidueCode(ResidueAlphabet alphabet) : alphabet_(alphabet) {
    struct Degenerate {
        char symbol;
        const char* members;
    };
    std::vector<Degenerate> degenerate;
    if (alphabet == ResidueAlphabet::Amino) {
        symbols_ = "ACDEFGHIKLMNPQRSTVWY-BJZOUX*~";
        k_ = 20;
        degenerate = {{'B', "ND"}, {'J', "IL"}, {'Z', "QE"}, {'O', "K"}, {'U', "C"}, {'X', "ACDEFGHIKLMNPQRSTVWY"}};
    } else {
        const bool rna = alphabet == ResidueAlphabet::Rna;
        symbols_ = rna ? "ACGU-RYMKSWHBVDN*~" : "ACGT-RYMKSWHBVDN*~";
        k_ = 4;
        // The same sets for DNA and RNA, with U in place of T.
        degenerate = rna ? std::vector<Degenerate>{{'R', "AG"},  {'Y', "CU"},  {'M', "AC"},  {'K', "GU"},
                                                   {'S', "CG"},  {'W', "AU"},  {'H', "ACU"}, {'B', "CGU"},
                                                   {'V', "ACG"}, {'D', "AGU"}, {'N', "ACGU"}}
                         : std::vector<Degenerate>{{'R', "AG"},  {'Y', "CT"},  {'M', "AC"},  {'K', "GT"},
                                                   {'S', "CG"},  {'W', "AT"},  {'H', "ACT"}, {'B', "CGT"},
                                                   {'V', "ACG"}, {'D', "AGT"}, {'N', "ACGT"}};
    }
    kp_ = static_cast<int>(symbols_.size());
    input_.fill(-1);
    degeneracy_.assign(static_cast<std::size_t>(kp_), {});
    for (int x = 0; x < kp_; ++x) {
        const auto c = static_cast<unsigned char>(symbols_[static_cast<std::size_t>(x)]);
        input_[c] = static_cast<std::int16_t>(x);
        input_[static_cast<unsigned char>(std::tolower(c))] = static_cast<std::int16_t>(x);
        if (x < k_) degeneracy_[static_cast<std::size_t>(x)][static_cast<std::size_t>(x)] = 1;
    }
    for (const auto& d : degenerate) {
        const int x = input_[static_cast<unsigned char>(d.symbol)];
        for (const char* m = d.members; *m; ++m)
            degeneracy_[static_cast<std::size_t>(x)][static_cast<std::size_t>(input_[static_cast<unsigned char>(*m)])] =
                1;
    }
    auto synonym = [this](char from, char to) {
        input_[static_cast<unsigned char>(from)] = input_[static_cast<unsigned char>(to)];
        input_[static_cast<unsigned char>(std::tolower(from))] = input_[static_cast<unsigned char>(to)];
    };
    synonym('.', '-');
    synonym('_', '-');
    if (alphabet != ResidueAlphabet::Amino) {
        synonym(alphabet == ResidueAlphabet::Rna ? 'T' : 'U', alphabet == ResidueAlphabet::Rna ? 'U' : 'T');
        synonym('X', 'N');
        synonym('I', 'A');
    }
}

const ResidueCode& ResidueCode::of(ResidueAlphabet alphabet) {
    static const ResidueCode amino(ResidueAlphabet::Amino);
    static const ResidueCode dna(ResidueAlphabet::Dna);
    static const ResidueCode rna(ResidueAlphabet::Rna);
    switch (alphabet) {
        case ResidueAlphabet::Amino: return amino;
        case ResidueAlphabet::Dna: return dna;
        case ResidueAlphabet::Rna: return rna;
    }
    return amino;
}

std::string_view ResidueCode::name() const {
    switch (alphabet_) {
        case ResidueAlphabet::Amino: return "amino";
        case ResidueAlphabet::Dna: return "DNA";
        case ResidueAlphabet::Rna: return "RNA";
    }
    return "amino";
}

std::size_t ResidueCode::digitise(std::string_view residues, std::vector<std::uint8_t>& out) const {
    out.resize(residues.size());
    for (std::size_t i = 0; i < residues.size(); ++i) {
        const int x = code_of(residues[i]);
        if (x < 0) return i;
        out[i] = static_cast<std::uint8_t>(x);
    }
    return std::string_view::npos;
}

}  // namespace alignscope::profile
