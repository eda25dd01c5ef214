// Seeded randomness for verify and bench: a splitmix64-seeded xoshiro256**
// generator, random and mutated residue strings, and cores fitted to a length.
#include "verify_detail.hpp"

#include <alignscope/bench/verify.hpp>

#include <alignscope/error.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace alignscope {

namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
    x += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

SeededRandom::SeededRandom(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (auto& word : state_) word = splitmix64(x);
}

std::uint64_t SeededRandom::next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
}

std::int64_t SeededRandom::between(std::int64_t lo, std::int64_t hi) {
    if (hi < lo) throw Error("SeededRandom::between: empty range");
    const std::uint64_t range = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    if (range == 0) return static_cast<std::int64_t>(next());  // the full 64-bit range
    // Rejection keeps the draw exactly uniform (plain modulo favours small values).
    const std::uint64_t limit =
        std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
    std::uint64_t r = next();
    while (r >= limit) r = next();
    return lo + static_cast<std::int64_t>(r % range);
}

double SeededRandom::unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

bool SeededRandom::chance(double p) { return unit() < p; }

std::string random_residues(SeededRandom& random, AlphabetKind alphabet, std::int64_t length) {
    std::string out;
    out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(length, 0)));
    for (std::int64_t k = 0; k < length; ++k) out.push_back(detail::random_residue(random, alphabet));
    return out;
}

std::string mutate_residues(SeededRandom& random, AlphabetKind alphabet, std::string_view source,
                            double substitution_rate, double indel_rate) {
    std::string out;
    out.reserve(source.size() + source.size() / 8 + 4);
    std::size_t i = 0;
    while (i < source.size()) {
        if (indel_rate > 0 && random.chance(indel_rate)) {
            std::int64_t length = 1;
            while (random.chance(0.5)) ++length;
            if (random.chance(0.5)) {
                i += static_cast<std::size_t>(length);
                continue;
            }
            out += random_residues(random, alphabet, length);
        }
        char c = source[i++];
        if (substitution_rate > 0 && random.chance(substitution_rate)) c = detail::random_residue(random, alphabet);
        out.push_back(c);
    }
    if (out.empty()) out.push_back(detail::random_residue(random, alphabet));
    return out;
}

std::string fit_to_length(SeededRandom& random, AlphabetKind alphabet, std::string core, std::int64_t length) {
    const auto size = static_cast<std::int64_t>(core.size());
    if (size >= length) {
        const std::int64_t start = random.between(0, size - length);
        return core.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(length));
    }
    // Flanks give the local and semi-global modes something to leave out.
    const std::int64_t left = random.between(0, length - size);
    std::string out = random_residues(random, alphabet, left);
    out += core;
    out += random_residues(random, alphabet, length - size - left);
    return out;
}

namespace detail {

char random_residue(SeededRandom& random, AlphabetKind alphabet) {
    if (alphabet != AlphabetKind::Protein) return nucleotides[random.index(4)];
    double u = random.unit();
    double total = 0;
    for (double f : amino_acid_frequencies) total += f;
    u *= total;
    for (std::size_t k = 0; k < amino_acids.size(); ++k) {
        if (u < amino_acid_frequencies[k]) return amino_acids[k];
        u -= amino_acid_frequencies[k];
    }
    return amino_acids.back();
}

}  // namespace detail

}  // namespace alignscope
