// Residue alphabets: naming, detection from content, validity and the
// normalisation every sequence goes through before it reaches an aligner.
#include <alignscope/error.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace alignscope {

namespace {

char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

std::string lower_copy(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

constexpr std::string_view kDna = "ACGTRYSWKMBDHVN";
constexpr std::string_view kRna = "ACGURYSWKMBDHVN";
constexpr std::string_view kProtein = "ACDEFGHIKLMNPQRSTVWYBZXUOJ*";

// Lookup tables per alphabet, built once, so validation is a load per residue:
// whether a letter is valid, and each byte's valid upper-case letter (or 0).
struct ValidityTables {
    bool dna[256]{};
    bool rna[256]{};
    bool protein[256]{};
    std::array<unsigned char, 256> dna_letters{}, rna_letters{}, protein_letters{};
    ValidityTables() {
        for (char c : kDna) dna[static_cast<unsigned char>(c)] = true;
        for (char c : kRna) rna[static_cast<unsigned char>(c)] = true;
        for (char c : kProtein) protein[static_cast<unsigned char>(c)] = true;
        for (int b = 0; b < 256; ++b) {
            const auto c = static_cast<unsigned char>(upper(static_cast<char>(b)));
            dna_letters[static_cast<std::size_t>(b)] = dna[c] ? c : 0;
            rna_letters[static_cast<std::size_t>(b)] = rna[c] ? c : 0;
            protein_letters[static_cast<std::size_t>(b)] = protein[c] ? c : 0;
        }
    }
    const bool* table(AlphabetKind kind) const {
        switch (kind) {
            case AlphabetKind::Dna: return dna;
            case AlphabetKind::Rna: return rna;
            case AlphabetKind::Protein: break;
        }
        return protein;
    }
    const std::array<unsigned char, 256>& letters(AlphabetKind kind) const {
        switch (kind) {
            case AlphabetKind::Dna: return dna_letters;
            case AlphabetKind::Rna: return rna_letters;
            case AlphabetKind::Protein: break;
        }
        return protein_letters;
    }
};

const ValidityTables& tables() {
    static const ValidityTables t;
    return t;
}

}  // namespace

std::string_view to_string(AlphabetKind kind) {
    switch (kind) {
        case AlphabetKind::Dna: return "dna";
        case AlphabetKind::Rna: return "rna";
        case AlphabetKind::Protein: break;
    }
    return "protein";
}

AlphabetKind parse_alphabet(std::string_view name) {
    const std::string n = lower_copy(name);
    if (n == "dna" || n == "nucleotide") return AlphabetKind::Dna;
    if (n == "rna") return AlphabetKind::Rna;
    if (n == "protein" || n == "aa" || n == "amino") return AlphabetKind::Protein;
    throw Error::about("alphabet", "unknown alphabet '" + std::string(name) + "' (expected dna, rna or protein)");
}

AlphabetKind detect_alphabet(std::string_view residues) {
    std::size_t counted = 0, nucleotide = 0, ambiguous = 0;
    bool has_t = false, has_u = false, has_x = false;
    for (char raw : residues) {
        const char c = upper(raw);
        if (c < 'A' || c > 'Z') continue;  // gaps, stops, digits, whitespace
        if (c == 'N') continue;            // "unknown" in both alphabets
        if (c == 'X') {                    // "unknown" too, but only an amino acid may be written so
            has_x = true;
            continue;
        }
        ++counted;
        switch (c) {
            case 'T':
                has_t = true;
                ++nucleotide;
                break;
            case 'U':
                has_u = true;
                ++nucleotide;
                break;
            case 'A':
            case 'C':
            case 'G': ++nucleotide; break;
            default:
                if (kDna.find(c) != std::string_view::npos) ++ambiguous;  // R Y S W K M B D H V
                break;
        }
    }
    const AlphabetKind nucleic = (has_u && !has_t) ? AlphabetKind::Rna : AlphabetKind::Dna;
    if (counted == 0) return has_x ? AlphabetKind::Protein : AlphabetKind::Dna;
    // Integer form of nucleotide / counted >= 0.9.
    if (nucleotide * 10 >= counted * 9) return nucleic;
    // Nucleotides with IUPAC ambiguity codes: every letter a nucleotide code,
    // most of them A, C, G, T or U. A protein nearly always has E, F, I, L, P or Q.
    if (!has_x && nucleotide + ambiguous == counted && nucleotide * 2 >= counted) return nucleic;
    return AlphabetKind::Protein;
}

std::string_view alphabet_letters(AlphabetKind kind) {
    switch (kind) {
        case AlphabetKind::Dna: return kDna;
        case AlphabetKind::Rna: return kRna;
        case AlphabetKind::Protein: break;
    }
    return kProtein;
}

bool is_valid_residue(AlphabetKind kind, char c) { return tables().table(kind)[static_cast<unsigned char>(upper(c))]; }

const std::array<unsigned char, 256>& residue_letters(AlphabetKind kind) { return tables().letters(kind); }

std::size_t normalise_residues(std::string& residues, AlphabetKind kind) {
    const bool gaps = std::memchr(residues.data(), '-', residues.size()) != nullptr ||
                      std::memchr(residues.data(), '.', residues.size()) != nullptr;
    if (!gaps) {
        // Most sequences: upper-cased and checked in one pass of a load and a
        // store a letter, without a branch; the first invalid letter is
        // looked for only when there is one.
        const std::array<unsigned char, 256>& letters = tables().letters(kind);
        const std::size_t n = residues.size();
        auto* r = reinterpret_cast<unsigned char*>(residues.data());
        unsigned invalid = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const unsigned char c = letters[r[k]];
            invalid |= c == 0 ? 1u : 0u;
            r[k] = c != 0 ? c : static_cast<unsigned char>(upper(static_cast<char>(r[k])));
        }
        if (kind == AlphabetKind::Protein && n > 0 && residues.back() == '*') residues.pop_back();
        if (!invalid) return std::string::npos;
        const bool* valid = tables().table(kind);
        const auto bad = std::find_if(residues.begin(), residues.end(),
                                      [valid](char c) { return !valid[static_cast<unsigned char>(c)]; });
        return bad == residues.end() ? std::string::npos : static_cast<std::size_t>(bad - residues.begin());
    }
    // One pass that upper-cases and squeezes out gap characters in place.
    std::size_t w = 0;
    for (std::size_t r = 0; r < residues.size(); ++r) {
        const char c = residues[r];
        if (c == '-' || c == '.') continue;
        residues[w++] = upper(c);
    }
    residues.resize(w);
    if (kind == AlphabetKind::Protein && !residues.empty() && residues.back() == '*') residues.pop_back();

    const bool* valid = tables().table(kind);
    const auto bad = std::find_if(residues.begin(), residues.end(),
                                  [valid](char c) { return !valid[static_cast<unsigned char>(c)]; });
    return bad == residues.end() ? std::string::npos : static_cast<std::size_t>(bad - residues.begin());
}

}  // namespace alignscope
