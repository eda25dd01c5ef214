// Seeded long test pairs (see long_pairs.hpp).
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace alignscope {
namespace {

constexpr std::string_view kBases = "ACGT";
constexpr std::int64_t kLambdaLength = 48502;

char complement(char c) {
    switch (c) {
        case 'A': return 'T';
        case 'T': return 'A';
        case 'C': return 'G';
        case 'G': return 'C';
        default: return 'N';
    }
}

void reverse_complement(std::string& s, std::size_t from, std::size_t length) {
    std::reverse(s.begin() + static_cast<std::ptrdiff_t>(from), s.begin() + static_cast<std::ptrdiff_t>(from + length));
    for (std::size_t k = from; k < from + length; ++k) s[k] = complement(s[k]);
}

char other_base(SeededRandom& random, char c) {
    for (;;) {
        const char b = kBases[random.index(4)];
        if (b != c) return b;
    }
}

// How many events of `rate` per residue happen in `length` residues: the
// expectation, its fraction rounded up or down at random.
std::int64_t event_count(SeededRandom& random, double rate, std::int64_t length) {
    const double expected = rate * static_cast<double>(length);
    const auto whole = static_cast<std::int64_t>(std::floor(expected));
    return whole + (random.chance(expected - static_cast<double>(whole)) ? 1 : 0);
}

// `s` brought to exactly `length`: cut, or lengthened with fresh tiled material.
std::string fit(SeededRandom& random, std::string s, std::int64_t length, std::string_view source) {
    const auto size = static_cast<std::int64_t>(s.size());
    if (size > length) {
        s.resize(static_cast<std::size_t>(length));
    } else if (size < length) {
        s += tile_genome(random, source, length - size);
    }
    return s;
}

// A window of `length` of `s`: at a random offset when `length` is well
// below its size, else from the start.
std::string window(SeededRandom& random, const std::string& s, std::int64_t length) {
    const auto size = static_cast<std::int64_t>(s.size());
    if (length >= size) return s;
    const std::int64_t offset = length * 5 < size * 4 ? random.between(0, size - length) : 0;
    return s.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

}  // namespace

void EvolutionCounts::add(const EvolutionCounts& o) {
    substitutions += o.substitutions;
    short_indels += o.short_indels;
    long_indels += o.long_indels;
    moves += o.moves;
    inversions += o.inversions;
}

std::string EvolutionCounts::describe() const {
    return std::to_string(substitutions) + " substitutions, " + std::to_string(short_indels) + " short indels, " +
           std::to_string(long_indels) + " long indels, " + std::to_string(moves) + " block moves, " +
           std::to_string(inversions) + " inversions";
}

SeedGenome load_seed_genome(const std::string& path) {
    SeedGenome genome;
    const std::string file = path.empty() ? std::string(kLambdaGenomePath) : path;
    std::error_code ec;
    if (path.empty() && !std::filesystem::exists(file, ec)) {
        SeededRandom random(0x1a3bda);
        genome.residues = random_residues(random, AlphabetKind::Dna, kLambdaLength);
        genome.source = "seeded random DNA (" + std::to_string(kLambdaLength) + " bp; " + file +
                        " is missing: install Debian's bowtie2-examples for the real lambda genome)";
        return genome;
    }
    SequenceReader reader(file);
    Sequence record;
    if (!reader.next(record)) throw Error(file + ": no sequences");
    std::string residues = record.residues;
    normalise_residues(residues, AlphabetKind::Dna);
    if (residues.empty()) throw Error(file + ": the first record is empty");
    for (char& c : residues)
        if (kBases.find(c) == std::string_view::npos) {
            if (c == 'U') c = 'T';
            else if (std::string_view("NRYKMSWBDHV").find(c) != std::string_view::npos)
                c = 'N';
            else
                throw Error(file + ": the first record ('" + record.id + "') is not DNA (letter '" + std::string(1, c) +
                            "')");
        }
    genome.residues = std::move(residues);
    genome.source = std::filesystem::path(file).filename().string() + " (" + record.id + ", " +
                    std::to_string(genome.residues.size()) + " bp)";
    genome.real = true;
    return genome;
}

std::string tile_genome(SeededRandom& random, std::string_view source, std::int64_t length, double copy_divergence) {
    if (source.empty()) throw Error("tile_genome: the source sequence is empty");
    std::string out;
    out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(length, 0)) + source.size() / 4);
    while (static_cast<std::int64_t>(out.size()) < length) {
        const std::size_t rotation = random.index(source.size());
        std::string copy;
        copy.reserve(source.size());
        copy.append(source.substr(rotation));
        copy.append(source.substr(0, rotation));
        if (random.chance(1.0 / 3)) reverse_complement(copy, 0, copy.size());
        out += mutate_residues(random, AlphabetKind::Dna, copy, copy_divergence, copy_divergence / 10);
    }
    if (static_cast<std::int64_t>(out.size()) > length) {
        const auto size = static_cast<std::int64_t>(out.size());
        // Shorter than one copy: a window anywhere in it; else the prefix.
        const std::int64_t offset =
            length < static_cast<std::int64_t>(source.size()) ? random.between(0, size - length) : 0;
        out = out.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }
    return out;
}

std::string evolve(SeededRandom& random, std::string_view ancestor, const Evolution& e, EvolutionCounts* counts) {
    EvolutionCounts c;
    std::string s(ancestor);
    // Rearrangements: blocks of 500-10,000 residues (at most a quarter of the sequence).
    const std::int64_t rearrangements = event_count(random, e.rearrangement_rate, static_cast<std::int64_t>(s.size()));
    for (std::int64_t r = 0; r < rearrangements; ++r) {
        const auto size = static_cast<std::int64_t>(s.size());
        const std::int64_t top = std::min<std::int64_t>(10'000, size / 4);
        if (top < 2) break;
        const std::int64_t length = random.between(std::min<std::int64_t>(500, top), top);
        const std::int64_t from = random.between(0, size - length);
        if (random.chance(0.5)) {
            reverse_complement(s, static_cast<std::size_t>(from), static_cast<std::size_t>(length));
            ++c.inversions;
        } else {
            std::string block = s.substr(static_cast<std::size_t>(from), static_cast<std::size_t>(length));
            s.erase(static_cast<std::size_t>(from), static_cast<std::size_t>(length));
            const std::int64_t to = random.between(0, size - length);
            s.insert(static_cast<std::size_t>(to), block);
            ++c.moves;
        }
    }
    // Point events in one pass.
    std::string out;
    out.reserve(s.size() + s.size() / 16 + 16);
    std::size_t i = 0;
    while (i < s.size()) {
        if (e.long_indel_rate > 0 && random.chance(e.long_indel_rate)) {
            const std::int64_t length = random.between(50, 2000);
            ++c.long_indels;
            if (random.chance(0.5)) {
                i += static_cast<std::size_t>(length);
                continue;
            }
            out += random_residues(random, AlphabetKind::Dna, length);
        }
        if (e.short_indel_rate > 0 && random.chance(e.short_indel_rate)) {
            std::int64_t length = 1;
            while (length < 10 && random.chance(0.5)) ++length;
            ++c.short_indels;
            if (random.chance(0.5)) {
                i += static_cast<std::size_t>(length);
                continue;
            }
            out += random_residues(random, AlphabetKind::Dna, length);
        }
        char base = s[i++];
        if (e.substitution_rate > 0 && random.chance(e.substitution_rate)) {
            base = other_base(random, base);
            ++c.substitutions;
        }
        out.push_back(base);
    }
    if (out.empty()) out.push_back(kBases[random.index(4)]);
    if (counts) counts->add(c);
    return out;
}

LongPair generate_long_pair(std::uint64_t seed, std::string_view seed_genome, std::int64_t query_length,
                            std::int64_t target_length, const Evolution& evolution) {
    if (query_length < 1 || target_length < 1) throw Error("generate_long_pair: lengths must be at least 1");
    SeededRandom random(seed);
    const std::int64_t longer = std::max(query_length, target_length);
    const std::string ancestor = tile_genome(random, seed_genome, longer + longer / 10 + 100);
    EvolutionCounts counts;
    LongPair pair;
    pair.query = fit(random, window(random, evolve(random, ancestor, evolution, &counts), query_length), query_length,
                     seed_genome);
    pair.target = fit(random, window(random, evolve(random, ancestor, evolution, &counts), target_length),
                      target_length, seed_genome);
    pair.description = "DNA " + format_length(query_length) + " x " + format_length(target_length) +
                       " from tiled seed-genome copies, seed " + std::to_string(seed) + "; " + counts.describe();
    return pair;
}

LongPair planted_pair(std::uint64_t seed, AlphabetKind alphabet, std::int64_t query_length, std::int64_t target_length,
                      int regions, double divergence) {
    if (query_length < 1 || target_length < 1) throw Error("planted_pair: lengths must be at least 1");
    SeededRandom random(seed);
    LongPair pair;
    pair.target = random_residues(random, alphabet, target_length);
    pair.query = random_residues(random, alphabet, query_length);
    const std::int64_t shorter = std::min(query_length, target_length);
    int planted = 0;
    for (int r = 0; r < regions; ++r) {
        const std::int64_t length =
            random.between(std::max<std::int64_t>(1, shorter / 10), std::max<std::int64_t>(1, shorter / 3));
        const std::int64_t from = random.between(0, target_length - length);
        std::string piece = mutate_residues(
            random, alphabet,
            std::string_view(pair.target).substr(static_cast<std::size_t>(from), static_cast<std::size_t>(length)),
            divergence, divergence / 10);
        if (static_cast<std::int64_t>(piece.size()) > query_length)
            piece.resize(static_cast<std::size_t>(query_length));
        const std::int64_t to = random.between(0, query_length - static_cast<std::int64_t>(piece.size()));
        pair.query.replace(static_cast<std::size_t>(to), piece.size(), piece);
        ++planted;
    }
    pair.description =
        std::string(alphabet == AlphabetKind::Protein ? "protein " : "DNA ") + format_length(query_length) + " x " +
        format_length(target_length) + " random, " + std::to_string(planted) + " similar regions planted (" +
        std::to_string(static_cast<int>(divergence * 100)) + "% substitutions), seed " + std::to_string(seed);
    return pair;
}

std::int64_t parse_length(std::string_view text, std::string_view flag) {
    const std::string s(text);
    const std::string what = std::string(flag) + ": '" + s + "' is not a length (e.g. 5000, 10k, 1.5M)";
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(s, &used);
    } catch (const std::exception&) {
        throw Error(what);
    }
    std::string unit = s.substr(used);
    double factor = 1;
    if (unit.empty()) factor = 1;
    else if (unit == "k" || unit == "K")
        factor = 1e3;
    else if (unit == "m" || unit == "M")
        factor = 1e6;
    else if (unit == "g" || unit == "G")
        factor = 1e9;
    else
        throw Error(what);
    const double length = value * factor;
    if (!(length >= 1) || length > 1e11 || length != std::floor(length))
        throw Error(std::string(flag) + ": '" + s + "' is not a whole positive length");
    return static_cast<std::int64_t>(length);
}

std::string format_length(std::int64_t length) {
    char text[32];
    if (length >= 1'000'000 && length % 100'000 == 0)
        std::snprintf(text, sizeof text, "%gM", static_cast<double>(length) / 1e6);
    else if (length >= 1000 && length % 100 == 0)
        std::snprintf(text, sizeof text, "%gk", static_cast<double>(length) / 1e3);
    else
        std::snprintf(text, sizeof text, "%lld", static_cast<long long>(length));
    return text;
}

}  // namespace alignscope
