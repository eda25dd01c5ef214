// Seeded long test pairs for the long-pair path (verify --long, bench --long,
// tests): DNA pairs of any length grown from a real genome (Debian's
// bowtie2-examples ships the lambda phage, 48.5 kb) by tiling mutated copies
// and then evolving two descendants apart (substitutions, short indels,
// occasional long indels, block moves and inversions), and random pairs with
// planted similar regions. The same seed gives the same pair on every
// platform (SeededRandom).
#pragma once

#include <alignscope/bench/verify.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace alignscope {

// Where Debian's bowtie2-examples installs the lambda phage genome.
inline constexpr const char* kLambdaGenomePath = "/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz";

struct SeedGenome {
    std::string residues;  // normalised DNA
    std::string source;    // e.g. "lambda_virus.fa.gz (gi|9626243|..., 48502 bp)" or why it is synthetic
    bool real = false;     // false: the seeded random stand-in
};

// The first record of `path` (plain or gzip FASTA), which must be DNA. With an
// empty path: the lambda genome, or, when that package is not installed, a
// seeded random DNA sequence of the same length (real = false; source says
// so). Throws Error naming the file when a given path cannot be used.
SeedGenome load_seed_genome(const std::string& path = {});

// What happens to each descendant, per residue of the ancestor.
struct Evolution {
    double substitution_rate = 0.03;
    double short_indel_rate = 0.003;       // lengths 1-10 (geometric, mean about 2)
    double long_indel_rate = 0.00002;      // lengths 50-2,000, uniform
    double rearrangement_rate = 0.000002;  // a block of 500-10,000 moved or inverted (reverse complement)
};

struct EvolutionCounts {
    std::int64_t substitutions = 0, short_indels = 0, long_indels = 0, moves = 0, inversions = 0;
    void add(const EvolutionCounts& other);
    std::string describe() const;  // "1234 substitutions, 56 short indels, ..."
};

// A DNA genome of exactly `length` residues: copies of `source` at random
// rotations (a third of them reverse-complemented), each diverged by
// `copy_divergence` substitutions (and a tenth as many indels), end to end; a
// random window of one such copy when `length` is shorter than the source.
std::string tile_genome(SeededRandom& random, std::string_view source, std::int64_t length,
                        double copy_divergence = 0.05);

// A descendant of a DNA `ancestor`: rearrangements first (block moves and
// inversions, their count drawn from the rate), then one pass of
// substitutions, short and long indels. Adds what it did to `counts`.
std::string evolve(SeededRandom& random, std::string_view ancestor, const Evolution& evolution,
                   EvolutionCounts* counts = nullptr);

struct LongPair {
    std::string query, target;
    std::string description;  // how it was made, for reports
};

// A DNA pair of exactly these lengths: two descendants of one ancestor tiled
// from `seed_genome`. A sequence much shorter than the ancestor is a window at
// a random offset of its descendant (so it lies inside the other sequence);
// otherwise both start at the ancestor's beginning.
LongPair generate_long_pair(std::uint64_t seed, std::string_view seed_genome, std::int64_t query_length,
                            std::int64_t target_length, const Evolution& evolution = {});

// Unrelated random sequences of exactly these lengths with `regions` similar
// regions planted: a stretch of the target (a tenth to a third of the shorter
// length), diverged by `divergence` substitutions and divergence / 10 indels,
// written over the query at a random place.
LongPair planted_pair(std::uint64_t seed, AlphabetKind alphabet, std::int64_t query_length, std::int64_t target_length,
                      int regions = 3, double divergence = 0.15);

// Parses a length such as "5000", "10k", "1.5M", "2G" (decimal: k = 1,000).
// Throws Error naming `flag`.
std::int64_t parse_length(std::string_view text, std::string_view flag);
// "10k", "1.5M", "48502": the short form used in tables.
std::string format_length(std::int64_t length);

}  // namespace alignscope
