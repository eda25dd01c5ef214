// Random sequences and mutated relatives for the long-pair tests: a relative
// has substitutions, short indels and now and then a long indel, so that gaps
// cross special rows and split rows. Deterministic for a given generator.
#pragma once

#include <cstddef>
#include <random>
#include <string>

inline std::string random_residues(std::mt19937& rng, const std::string& alphabet, std::size_t length) {
    std::string s(length, 'A');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

inline std::string mutate(std::mt19937& rng, const std::string& s, const std::string& alphabet) {
    std::string out;
    for (std::size_t k = 0; k < s.size(); ++k) {
        const unsigned r = rng() % 1000;
        if (r < 80) out += alphabet[rng() % alphabet.size()];
        else if (r < 100)
            continue;
        else if (r < 120)
            out += s[k] + random_residues(rng, alphabet, 1 + rng() % 4);
        else if (r < 123)
            out += s[k] + random_residues(rng, alphabet, 10 + rng() % 30);
        else if (r < 126)
            k += 10 + rng() % 30;  // a long deletion
        else
            out += s[k];
    }
    return out;
}
