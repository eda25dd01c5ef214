// `verify`: seeded random pairs over every mode, gap model, matrix and length
// class, run on a backend and on the CPU reference, and compared pair by pair.
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/kernel_name.hpp>

#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace alignscope {

// ---------------------------------------------------------------- randomness

namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
    x += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Robinson & Robinson (1991) amino-acid background frequencies, the ones
// BLAST uses for composition; verify and bench draw protein residues from them
// so substitution scores average as they do on real proteins.
constexpr std::string_view amino_acids = "ARNDCQEGHILKMFPSTWYV";
constexpr std::array<double, 20> amino_acid_frequencies{0.07805, 0.05129, 0.04487, 0.05364, 0.01925, 0.04264, 0.06295,
                                                        0.07377, 0.02199, 0.05142, 0.09019, 0.05744, 0.02243, 0.03856,
                                                        0.05203, 0.07120, 0.05841, 0.01330, 0.03216, 0.06441};
constexpr std::string_view nucleotides = "ACGT";

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
    for (std::int64_t k = 0; k < length; ++k) out.push_back(random_residue(random, alphabet));
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
        if (substitution_rate > 0 && random.chance(substitution_rate)) c = random_residue(random, alphabet);
        out.push_back(c);
    }
    if (out.empty()) out.push_back(random_residue(random, alphabet));
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

// ---------------------------------------------------------------- names

std::string_view to_string(LengthClass length_class) {
    switch (length_class) {
        case LengthClass::One: return "one";
        case LengthClass::Tiny: return "tiny";
        case LengthClass::Short: return "short";
        case LengthClass::Medium: return "medium";
        case LengthClass::Long: return "long";
        case LengthClass::IdenticalLong: return "identical-long";
        case LengthClass::Unrelated: return "unrelated";
        case LengthClass::OneVersusLong: return "one-vs-long";
        case LengthClass::GapLong: return "gap-long";
    }
    return "?";
}

std::string_view to_string(GapModel model) {
    switch (model) {
        case GapModel::Linear: return "linear";
        case GapModel::Affine: return "affine";
        case GapModel::HalfStep: return "half-step";
        case GapModel::GapFavouring: return "gap-favouring";
    }
    return "?";
}

namespace {

// Penalties as typed: 1000000 and 999999.5, not 1e+06.
std::string format_number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.12g", value);
    return buffer;
}

}  // namespace

std::string VerifyConfig::describe() const {
    return std::string(to_string(alphabet)) + " " + matrix + " gap " + format_number(gap_open) + "/" +
           format_number(gap_extend) + " (" + std::string(to_string(gap_model)) + ") " + describe_mode(options) +
           (options.traceback ? " traceback" : " score-only");
}

// ---------------------------------------------------------------- generator

namespace {

struct MatrixChoice {
    AlphabetKind alphabet;
    std::string builtin;  // empty for match/mismatch
    int match = 0, mismatch = 0;
    // Heavy gap penalties (its own menu): one residue against 3000 in global
    // mode then scores below -32,768, the other side of 16-bit saturation.
    bool heavy_gaps = false;
    // Schemes past the lane widths' limits: the matrix multiplied by `times`
    // (or a match score of 32 and more), penalties up to the accepted maximum.
    int times = 1;
    bool extreme_gaps = false;
};

struct GapChoice {
    double open, extend;
};

// Penalty menus per alphabet and gap model; the seed picks one per scheme.
// Open/extend in user units, our convention (a gap of length k costs open + (k-1)*extend).
std::vector<GapChoice> gap_menu(AlphabetKind alphabet, GapModel model, bool heavy, bool extreme) {
    const bool protein = alphabet == AlphabetKind::Protein;
    if (extreme) {
        // Around 2^15 and 2^16, and the largest penalties accepted (1,000,000).
        switch (model) {
            case GapModel::Linear: return {{32768, 32768}, {65536, 65536}, {1000000, 1000000}, {5000, 5000}};
            case GapModel::Affine: return {{1000000, 1}, {65536, 2}, {40000, 20000}, {32767, 1}};
            case GapModel::HalfStep: return {{65536.5, 0.5}, {999999.5, 0.5}, {16383.5, 8191.5}};
            case GapModel::GapFavouring: break;
        }
    }
    if (heavy && model != GapModel::GapFavouring) {
        switch (model) {
            case GapModel::Linear: return {{12, 12}, {14, 14}};
            case GapModel::Affine: return {{30, 12}, {24, 13}};
            case GapModel::HalfStep: return {{20.5, 12.5}, {25, 11.5}};
            case GapModel::GapFavouring: break;
        }
    }
    switch (model) {
        case GapModel::Linear:
            return protein ? std::vector<GapChoice>{{2, 2}, {3, 3}, {4, 4}, {6, 6}, {8, 8}}
                           : std::vector<GapChoice>{{1, 1}, {2, 2}, {3, 3}, {5, 5}};
        case GapModel::Affine:
            return protein ? std::vector<GapChoice>{{11, 1}, {12, 1}, {10, 2}, {8, 2}, {15, 3}, {6, 1}, {9, 1}, {14, 2}}
                           : std::vector<GapChoice>{{5, 2}, {6, 1}, {16, 4}, {10, 1}, {7, 2}, {3, 1}};
        case GapModel::HalfStep:
            return protein ? std::vector<GapChoice>{{10, 0.5}, {8, 0.5}, {12, 1.5}, {5.5, 0.5}, {7, 2.5}, {11, 0.5}}
                           : std::vector<GapChoice>{{10, 0.5}, {2.5, 0.5}, {4.5, 1.5}, {6, 2.5}};
        case GapModel::GapFavouring:
            return protein ? std::vector<GapChoice>{{1, 0.5}, {0.5, 0.5}, {1, 1}, {2, 0.5}, {1.5, 0.5}}
                           : std::vector<GapChoice>{{0.5, 0.5}, {1, 0.5}, {1, 1}};
    }
    return {};
}

// Mean diagonal (identity) score per residue under a scaled matrix, weighted
// by the composition random_residues draws from.
double mean_identity_score(const SubstitutionMatrix& matrix, AlphabetKind alphabet) {
    if (alphabet != AlphabetKind::Protein) {
        double sum = 0;
        for (char c : nucleotides) sum += matrix.score(matrix.index_of(c), matrix.index_of(c));
        return sum / 4;
    }
    double sum = 0, total = 0;
    for (std::size_t k = 0; k < amino_acids.size(); ++k) {
        const int index = matrix.index_of(amino_acids[k]);
        sum += amino_acid_frequencies[k] * matrix.score(index, index);
        total += amino_acid_frequencies[k];
    }
    return sum / total;
}

constexpr std::int64_t saturation_length_cap = 3000;

}  // namespace

VerifyPairGenerator::VerifyPairGenerator(std::uint64_t seed, bool traceback_too, std::string_view kernel)
    : random_(seed) {
    const std::vector<MatrixChoice> matrices{
        {AlphabetKind::Protein, "BLOSUM62"},
        {AlphabetKind::Protein, "BLOSUM50"},
        {AlphabetKind::Protein, "BLOSUM45"},
        {AlphabetKind::Protein, "BLOSUM80"},
        {AlphabetKind::Protein, "PAM30"},
        {AlphabetKind::Protein, "PAM250"},
        {AlphabetKind::Dna, "EDNAFULL"},
        {AlphabetKind::Dna, "", 1, -1},
        {AlphabetKind::Dna, "", 2, -3},
        // High match scores: identical sequences pass 32,767 well within 3000
        // residues; heavy gaps: one residue against a long sequence falls below -32,768.
        {AlphabetKind::Dna, "", 15, -12, true},
        // Extreme schemes: substitution scores at and past the narrow lanes'
        // limits, and penalties up to the accepted maximum.
        {AlphabetKind::Dna, "", 64, -1},
        {AlphabetKind::Protein, "BLOSUM62", 0, 0, false, 64},
        {AlphabetKind::Protein, "BLOSUM62", 0, 0, false, 1, true},
        {AlphabetKind::Dna, "", 2, -3, false, 1, true},
    };

    // Deal the 16 free-end-gap combinations round-robin in a seeded order, so
    // every combination appears in the pool (10 matrices x 4 gap models x 4 slots).
    std::vector<int> combos(16);
    for (int k = 0; k < 16; ++k) combos[static_cast<std::size_t>(k)] = k;
    for (std::size_t k = combos.size() - 1; k > 0; --k) std::swap(combos[k], combos[random_.index(k + 1)]);
    std::size_t next_combo = 0;

    for (const auto& choice : matrices) {
        const SubstitutionMatrix plain = choice.builtin.empty()
                                             ? SubstitutionMatrix::match_mismatch(choice.match, choice.mismatch)
                                             : SubstitutionMatrix::builtin(choice.builtin);
        const SubstitutionMatrix unscaled = choice.times == 1 ? plain : plain.scaled(choice.times);
        const std::string matrix_label =
            (choice.builtin.empty() ? "match " + std::to_string(choice.match) + "/" + std::to_string(choice.mismatch)
                                    : choice.builtin) +
            (choice.times == 1 ? "" : " x" + std::to_string(choice.times));
        for (GapModel model : all_gap_models) {
            const auto menu = gap_menu(choice.alphabet, model, choice.heavy_gaps, choice.extreme_gaps);
            const GapChoice gaps = menu[random_.index(menu.size())];
            VerifyConfig base;
            base.alphabet = choice.alphabet;
            base.matrix = matrix_label;
            base.gap_model = model;
            base.gap_open = gaps.open;
            base.gap_extend = gaps.extend;
            base.scheme = ScoringScheme::create(unscaled, gaps.open, gaps.extend);
            base.extreme = choice.times > 1 || std::abs(choice.match) >= 32 || choice.extreme_gaps;
            base.can_saturate =
                mean_identity_score(base.scheme.matrix, choice.alphabet) * static_cast<double>(saturation_length_cap) >=
                36'000.0;
            base.can_saturate_negative =
                base.scheme.gap_cost(saturation_length_cap - 1) >= 34'000 + base.scheme.matrix.max_score();

            std::vector<AlignOptions> variants;
            AlignOptions global;
            global.mode = AlignmentMode::Global;
            variants.push_back(global);
            AlignOptions local;
            local.mode = AlignmentMode::Local;
            variants.push_back(local);
            for (int slot = 0; slot < 4; ++slot) {
                const int bits = combos[next_combo++ % combos.size()];
                AlignOptions semi;
                semi.mode = AlignmentMode::SemiGlobal;
                semi.free_ends = FreeEndGaps{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0};
                variants.push_back(semi);
            }
            for (const auto& variant : variants) {
                for (bool traceback : {false, true}) {
                    if (traceback && !traceback_too) continue;
                    VerifyConfig config = base;
                    config.options = variant;
                    config.options.traceback = traceback;
                    configs_.push_back(std::move(config));
                }
            }
        }
    }
    for (std::size_t k = 0; k < configs_.size(); ++k) {
        if (!kernel_can_run(kernel, configs_[k])) continue;
        const auto mode = static_cast<std::size_t>(configs_[k].options.mode);
        by_mode_[mode].push_back(k);
        if (configs_[k].can_saturate) saturating_by_mode_[mode].push_back(k);
        if (configs_[k].can_saturate_negative && configs_[k].options.mode == AlignmentMode::Global)
            negative_saturating_.push_back(k);
    }
    for (std::size_t mode = 0; mode < 3; ++mode) {
        if (!by_mode_[mode].empty()) modes_.push_back(mode);
        if (!saturating_by_mode_[mode].empty()) saturating_modes_.push_back(mode);
    }
    if (modes_.empty())
        throw Error("verify: --kernel '" + std::string(kernel) + "' runs none of the test configurations");
}

bool kernel_can_run(std::string_view kernel, const VerifyConfig& config) {
    const std::optional<KernelName> name = KernelName::try_parse(kernel);
    if (!name) return true;  // not our grammar: the backend decides
    return name->mode == config.options.mode && name->linear == config.scheme.linear();
}

LengthClass VerifyPairGenerator::draw_length_class() {
    // Per mille. Weighted toward short and medium pairs so that the scalar
    // reference keeps up (100,000 pairs in a few minutes on 16 cores); the long
    // classes are few but each is millions of cells.
    static constexpr std::array<std::pair<LengthClass, int>, 9> weights{{
        {LengthClass::One, 30},
        {LengthClass::Tiny, 100},
        {LengthClass::Short, 360},
        {LengthClass::Medium, 330},
        {LengthClass::Long, 10},
        {LengthClass::IdenticalLong, 10},
        {LengthClass::Unrelated, 110},
        {LengthClass::OneVersusLong, 40},
        {LengthClass::GapLong, 10},
    }};
    std::int64_t draw = random_.between(0, 999);
    for (const auto& [length_class, weight] : weights) {
        if (draw < weight) return length_class;
        draw -= weight;
    }
    return LengthClass::Short;
}

std::size_t VerifyPairGenerator::draw_config(LengthClass length_class) {
    // An equal share of the pairs per mode; semi-global has more
    // configurations, so pick the mode first and then a configuration of it.
    if (length_class == LengthClass::GapLong) return negative_saturating_[random_.index(negative_saturating_.size())];
    const bool saturating = length_class == LengthClass::IdenticalLong;
    const auto& modes = saturating ? saturating_modes_ : modes_;
    const std::size_t mode = modes[random_.index(modes.size())];
    const auto& candidates = saturating ? saturating_by_mode_[mode] : by_mode_[mode];
    return candidates[random_.index(candidates.size())];
}

std::string VerifyPairGenerator::draw_ambiguous(std::string residues, const VerifyConfig& config) {
    // A few ambiguity codes (N; X, B, Z) where the matrix scores them.
    const std::string_view codes = config.alphabet == AlphabetKind::Protein ? "XBZ" : "N";
    std::string usable;
    for (char c : codes)
        if (config.scheme.matrix.index_of(c) >= 0) usable.push_back(c);
    if (usable.empty()) return residues;
    for (auto& c : residues)
        if (random_.chance(0.03)) c = usable[random_.index(usable.size())];
    return residues;
}

VerifyPair VerifyPairGenerator::next() {
    VerifyPair pair;
    pair.index = next_index_++;
    pair.length_class = draw_length_class();
    if (pair.length_class == LengthClass::IdenticalLong && saturating_modes_.empty())
        pair.length_class = LengthClass::Long;  // a forced kernel whose schemes cannot saturate
    if (pair.length_class == LengthClass::GapLong && negative_saturating_.empty())
        pair.length_class = LengthClass::OneVersusLong;
    pair.config = draw_config(pair.length_class);
    const VerifyConfig& config = configs_[pair.config];
    const AlphabetKind alphabet = config.alphabet;

    auto related = [&](const std::string& query, std::int64_t target_length) {
        static constexpr std::array substitution_rates{0.0, 0.02, 0.1, 0.25, 0.45};
        static constexpr std::array indel_rates{0.0, 0.01, 0.04, 0.08};
        // Draws in separate statements: argument evaluation order is unspecified,
        // and the stream must not depend on the compiler.
        const double substitution_rate = substitution_rates[random_.index(substitution_rates.size())];
        const double indel_rate = indel_rates[random_.index(indel_rates.size())];
        std::string core = mutate_residues(random_, alphabet, query, substitution_rate, indel_rate);
        return fit_to_length(random_, alphabet, std::move(core), target_length);
    };
    auto related_pair = [&](std::int64_t lo, std::int64_t hi) {
        const std::int64_t query_length = random_.between(lo, hi);
        const std::int64_t target_length = random_.between(lo, hi);
        pair.query.residues = random_residues(random_, alphabet, query_length);
        pair.target.residues = random_.chance(0.85) ? related(pair.query.residues, target_length)
                                                    : random_residues(random_, alphabet, target_length);
    };

    switch (pair.length_class) {
        case LengthClass::One:
            pair.query.residues = random_residues(random_, alphabet, 1);
            pair.target.residues = random_.chance(0.5) ? pair.query.residues : random_residues(random_, alphabet, 1);
            break;
        case LengthClass::Tiny: related_pair(1, 8); break;
        case LengthClass::Short: related_pair(10, 64); break;
        case LengthClass::Medium: related_pair(100, 400); break;
        case LengthClass::Long: related_pair(1000, 3000); break;
        case LengthClass::Unrelated:
            pair.query.residues = random_residues(random_, alphabet, random_.between(10, 400));
            pair.target.residues = random_residues(random_, alphabet, random_.between(10, 400));
            break;
        case LengthClass::OneVersusLong: {
            std::string one = random_residues(random_, alphabet, 1);
            std::string other = random_residues(random_, alphabet, random_.between(100, 3000));
            if (random_.chance(0.5)) std::swap(one, other);
            pair.query.residues = std::move(one);
            pair.target.residues = std::move(other);
            break;
        }
        case LengthClass::GapLong: {
            // The shortest long side whose end-to-end gap costs more than a
            // drawn goal beyond -32,768, whatever the one residue scores.
            const ScoringScheme& scheme = config.scheme;
            const std::int64_t goal = random_.between(34'000, 60'000) + scheme.matrix.max_score();
            std::int64_t gap = 1;
            if (scheme.gap_extend > 0)
                gap =
                    std::max<std::int64_t>(1, 1 + (goal - scheme.gap_open + scheme.gap_extend - 1) / scheme.gap_extend);
            gap = std::min(gap, saturation_length_cap - 1);
            std::string one = random_residues(random_, alphabet, 1);
            std::string other = random_residues(random_, alphabet, gap + 1);
            if (random_.chance(0.5)) std::swap(one, other);
            pair.query.residues = std::move(one);
            pair.target.residues = std::move(other);
            break;
        }
        case LengthClass::IdenticalLong: {
            // Grow one sequence until its self-score passes a drawn goal above
            // 32,767 (scaled), so 16-bit arithmetic must saturate on it.
            const std::int64_t goal = random_.between(34'000, 60'000);
            const SubstitutionMatrix& matrix = config.scheme.matrix;
            std::int64_t score = 0;
            std::string residues;
            while (score < goal && static_cast<std::int64_t>(residues.size()) < saturation_length_cap) {
                const char c = random_residue(random_, alphabet);
                residues.push_back(c);
                score += matrix.score(matrix.index_of(c), matrix.index_of(c));
            }
            pair.query.residues = residues;
            pair.target.residues = std::move(residues);
            break;
        }
    }
    const bool may_be_ambiguous = pair.length_class == LengthClass::Tiny || pair.length_class == LengthClass::Short ||
                                  pair.length_class == LengthClass::Medium || pair.length_class == LengthClass::Long ||
                                  pair.length_class == LengthClass::Unrelated;
    if (may_be_ambiguous && random_.chance(0.05)) {
        pair.query.residues = draw_ambiguous(std::move(pair.query.residues), config);
        pair.target.residues = draw_ambiguous(std::move(pair.target.residues), config);
    }
    pair.query.id = "pair" + std::to_string(pair.index) + ".query";
    pair.target.id = "pair" + std::to_string(pair.index) + ".target";
    return pair;
}

// ---------------------------------------------------------------- checking

namespace {

std::string user_score(const ScoringScheme& scheme, std::int64_t scaled) {
    return format_number(scheme.to_user(scaled));
}

std::string coordinates(std::int64_t a, std::int64_t b) {
    return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

// Span and rescoring checks of one side's CIGAR; `who` prefixes the sentence.
void check_cigar(const Alignment& a, std::string_view query, std::string_view target, const ScoringScheme& scheme,
                 const std::string& who, std::vector<std::string>& problems) {
    if (a.cigar.empty()) {
        if (a.score != 0)
            problems.push_back(who + "has no CIGAR for an alignment of score " + user_score(scheme, a.score));
        return;
    }
    const std::int64_t query_span = a.query_end - a.query_begin + 1;
    const std::int64_t target_span = a.target_end - a.target_begin + 1;
    if (a.cigar.query_span() != query_span || a.cigar.target_span() != target_span) {
        problems.push_back(who + "CIGAR spans " + std::to_string(a.cigar.query_span()) + " query and " +
                           std::to_string(a.cigar.target_span()) + " target residues, but the coordinates span " +
                           std::to_string(query_span) + " and " + std::to_string(target_span));
        return;
    }
    try {
        const std::int64_t rescored = rescore(a.cigar, query, target, a.query_begin, a.target_begin, scheme);
        if (rescored != a.score)
            problems.push_back(who + "CIGAR rescores to " + user_score(scheme, rescored) + ", not the reported " +
                               user_score(scheme, a.score));
    } catch (const Error& e) {
        problems.push_back(who + "CIGAR does not fit the sequences: " + e.what());
    }
}

}  // namespace

std::vector<std::string> check_alignment(const Alignment& tested, const Alignment& reference, std::string_view query,
                                         std::string_view target, const ScoringScheme& scheme,
                                         const AlignOptions& options) {
    std::vector<std::string> problems;
    if (tested.score != reference.score)
        problems.push_back("score " + user_score(scheme, tested.score) + " but the reference gives " +
                           user_score(scheme, reference.score));
    const auto m = static_cast<std::int64_t>(query.size());
    const auto n = static_cast<std::int64_t>(target.size());
    if (tested.query_length != m || tested.target_length != n)
        problems.push_back("reports lengths " + coordinates(tested.query_length, tested.target_length) +
                           " for sequences of lengths " + coordinates(m, n));
    if (tested.query_end != reference.query_end || tested.target_end != reference.target_end)
        problems.push_back("end " + coordinates(tested.query_end, tested.target_end) + " but the reference gives " +
                           coordinates(reference.query_end, reference.target_end));
    if (tested.query_begin != reference.query_begin || tested.target_begin != reference.target_begin)
        problems.push_back("begin " + coordinates(tested.query_begin, tested.target_begin) +
                           " but the reference gives " + coordinates(reference.query_begin, reference.target_begin));
    if (options.traceback) {
        if (reference.has_traceback() && !tested.has_traceback())
            problems.push_back("no CIGAR although traceback was asked for");
        else
            check_cigar(tested, query, target, scheme, "", problems);
        check_cigar(reference, query, target, scheme, "reference ", problems);
    }
    return problems;
}

namespace {

std::string abbreviate(std::string_view text, std::size_t max_length) {
    if (text.size() <= max_length) return std::string(text);
    const std::size_t half = max_length / 2;
    return std::string(text.substr(0, half)) + "..." + std::string(text.substr(text.size() - half)) + " (" +
           std::to_string(text.size()) + " long)";
}

std::string describe_result(const Alignment& a, const ScoringScheme& scheme, std::size_t max_length) {
    std::string line = "score " + user_score(scheme, a.score) + ", query " + std::to_string(a.query_begin) + "-" +
                       std::to_string(a.query_end) + ", target " + std::to_string(a.target_begin) + "-" +
                       std::to_string(a.target_end);
    if (a.has_traceback()) line += ", CIGAR " + abbreviate(a.cigar.to_string(), max_length);
    if (!a.kernel.empty()) line += " [" + a.kernel + "]";
    return line;
}

}  // namespace

std::string VerifyMismatch::describe(std::size_t max_residues) const {
    std::ostringstream out;
    const ScoringScheme& scheme = config->scheme;
    out << "MISMATCH pair " << pair->index << " (" << to_string(pair->length_class) << "): " << config->describe()
        << "\n";
    out << "  query  " << pair->query.residues.size() << ": " << abbreviate(pair->query.residues, max_residues) << "\n";
    out << "  target " << pair->target.residues.size() << ": " << abbreviate(pair->target.residues, max_residues)
        << "\n";
    for (const auto& problem : problems) out << "  - " << problem << "\n";
    out << "  " << tested_device << ": " << describe_result(tested, scheme, max_residues) << "\n";
    out << "  " << reference_device << ": " << describe_result(reference, scheme, max_residues) << "\n";
    return out.str();
}

// ---------------------------------------------------------------- running

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One configuration's pairs of a chunk, as a job for both sides.
struct VerifyJob {
    const VerifyConfig* config = nullptr;
    std::vector<std::size_t> members;  // indices into the chunk's pairs
    std::vector<Sequence> queries, targets;
    PairJob job;
    std::uint64_t cells = 0;
    std::vector<Alignment> tested, reference;
    std::string tested_failure;
    bool tested_refused = false;  // the job threw an Error (not a wrong result count)
    std::exception_ptr reference_error;
};

// Runs every reference job. A CPU reference gets whole jobs pulled by one
// worker per core, biggest first, each job on one thread: a job's few long
// pairs then no longer hold all cores idle behind them, which is what keeps a
// 100,000-pair check to minutes. Other references run job after job.
class ReferenceRunner {
public:
    ReferenceRunner(Backend& reference, std::vector<VerifyJob>& jobs, int threads, const CancellationToken* cancel,
                    bool concurrent)
        : reference_(reference), jobs_(jobs), cancel_(cancel) {
        order_.reserve(jobs.size());
        for (std::size_t k = 0; k < jobs.size(); ++k) order_.push_back(k);
        std::stable_sort(order_.begin(), order_.end(),
                         [&](std::size_t a, std::size_t b) { return jobs[a].cells > jobs[b].cells; });
        if (!concurrent) {
            sequential_threads_ = threads;
            return;
        }
        const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
        const auto workers = static_cast<std::size_t>(threads > 0 ? threads : static_cast<int>(hardware));
        for (std::size_t w = 0; w < std::min(workers, jobs.size()); ++w) workers_.emplace_back([this] { work(1); });
    }
    ReferenceRunner(const ReferenceRunner&) = delete;
    ReferenceRunner& operator=(const ReferenceRunner&) = delete;
    ~ReferenceRunner() {
        failed_.store(true);  // leaving early (an exception): let the workers finish at once
        for (auto& worker : workers_)
            if (worker.joinable()) worker.join();
    }

    // Waits for every job; a sequential runner does all its work here.
    void join() {
        if (sequential_threads_) work(*sequential_threads_);
        sequential_threads_.reset();
        for (auto& worker : workers_)
            if (worker.joinable()) worker.join();
        workers_.clear();
    }

private:
    void work(int threads) {
        JobContext context;
        context.cancel = cancel_;
        for (std::size_t next = next_.fetch_add(1); next < order_.size(); next = next_.fetch_add(1)) {
            VerifyJob& job = jobs_[order_[next]];
            if (failed_.load()) continue;  // an error ends the run; skip what is left
            PairJob reference_job = job.job;
            reference_job.threads = threads;
            reference_job.streams = 0;
            reference_job.kernel.clear();
            try {
                job.reference = reference_.align_pairs(reference_job, context);
            } catch (...) {
                job.reference_error = std::current_exception();
                failed_.store(true);
            }
        }
    }

    Backend& reference_;
    std::vector<VerifyJob>& jobs_;
    const CancellationToken* cancel_;
    std::vector<std::size_t> order_;
    std::vector<std::thread> workers_;
    std::optional<int> sequential_threads_;
    std::atomic<std::size_t> next_{0};
    std::atomic<bool> failed_{false};
};

}  // namespace

namespace {

// A --kernel the device does not know is a usage error, said once before any
// work, not a device that fails every job: one pair of the first
// configuration the name may run, on the tested device. Rethrows the device's
// Error when it is about --kernel; anything else is left to the real run.
void refuse_unknown_kernel(Backend& tested, const std::vector<VerifyConfig>& configs, const VerifyOptions& options,
                           JobContext& context) {
    // A check that counts refusals apart sees an unknown kernel as a variant
    // that passed nothing; the probe would take a narrow kernel's refusal of
    // its one pair for a usage error.
    if (options.kernel.empty() || options.forced_kernel_may_refuse) return;
    const auto config = std::find_if(configs.begin(), configs.end(), [&](const VerifyConfig& c) {
        return !c.extreme && kernel_can_run(options.kernel, c);
    });
    if (config == configs.end()) return;
    const std::vector<Sequence> one{Sequence{"probe", "", "A", ""}};
    PairJob probe;
    probe.queries = &one;
    probe.targets = &one;
    probe.pairs = {{0, 0}};
    probe.scheme = config->scheme;
    probe.options = config->options;
    probe.kernel = options.kernel;
    probe.threads = 1;
    probe.gpu_memory_budget = options.gpu_memory_budget;
    JobContext probe_context;
    probe_context.cancel = context.cancel;
    try {
        (void)tested.align_pairs(probe, probe_context);
    } catch (const Error& e) {
        if (std::string_view(e.what()).find("--kernel") != std::string_view::npos) throw;
    }
}

}  // namespace

namespace {

// The chunk's pairs grouped into one job per configuration (the unit both
// sides run), with their cells counted into the summary.
std::vector<VerifyJob> group_into_jobs(const std::vector<VerifyPair>& pairs, const std::vector<VerifyConfig>& configs,
                                       const VerifyOptions& options, VerifySummary& summary) {
    std::vector<std::vector<std::size_t>> groups;  // pair indices, each group one configuration
    if (options.job_per_pair) {
        for (std::size_t k = 0; k < pairs.size(); ++k) groups.push_back({k});
    } else {
        std::vector<std::vector<std::size_t>> by_config(configs.size());
        for (std::size_t k = 0; k < pairs.size(); ++k) by_config[pairs[k].config].push_back(k);
        for (auto& members : by_config)
            if (!members.empty()) groups.push_back(std::move(members));
    }
    std::vector<VerifyJob> jobs;
    for (auto& members : groups) {
        VerifyJob& j = jobs.emplace_back();
        j.config = &configs[pairs[members.front()].config];
        j.members = std::move(members);
        j.queries.reserve(j.members.size());
        j.targets.reserve(j.members.size());
        for (std::size_t k : j.members) {
            j.job.pairs.emplace_back(static_cast<std::uint32_t>(j.queries.size()),
                                     static_cast<std::uint32_t>(j.targets.size()));
            j.queries.push_back(pairs[k].query);
            j.targets.push_back(pairs[k].target);
        }
    }
    for (auto& j : jobs) {  // pointers into `jobs` only once it has stopped growing
        j.job.queries = &j.queries;
        j.job.targets = &j.targets;
        j.job.scheme = j.config->scheme;
        j.job.options = j.config->options;
        j.job.threads = options.threads;
        j.cells = j.job.total_cells();
        summary.cells += j.cells;
    }
    summary.jobs += jobs.size();
    return jobs;
}

// Both sides run the chunk's jobs: the reference on its runner (side by side
// on a CPU) while the tested device takes them one after the other.
void run_both_sides(Backend& tested, Backend& reference, std::vector<VerifyJob>& jobs, const VerifyOptions& options,
                    bool concurrent_reference, JobContext& context, VerifySummary& summary) {
    JobContext tested_context;
    tested_context.cancel = context.cancel;
    tested_context.timeline = context.timeline;
    const auto reference_start = std::chrono::steady_clock::now();
    ReferenceRunner runner(reference, jobs, options.threads, context.cancel, concurrent_reference);
    for (auto& j : jobs) {
        if (context.cancelled()) break;
        PairJob job = j.job;
        job.streams = options.streams;
        job.kernel = options.kernel;
        job.gpu_memory_budget = options.gpu_memory_budget;
        const auto start = std::chrono::steady_clock::now();
        try {
            j.tested = tested.align_pairs(job, tested_context);
            if (j.tested.size() != j.members.size())
                j.tested_failure = "returned " + std::to_string(j.tested.size()) + " results for " +
                                   std::to_string(j.members.size()) + " pairs";
        } catch (const Cancelled&) {
            break;  // the reference side notices the same token
        } catch (const std::exception& e) {
            j.tested_failure = e.what();
            j.tested_refused = dynamic_cast<const Error*>(&e) != nullptr;
        }
        summary.tested_seconds += seconds_since(start);
    }
    runner.join();
    summary.reference_seconds += seconds_since(reference_start);
}

// A reference that failed ends the run: without it nothing can be judged.
void throw_reference_errors(const std::vector<VerifyJob>& jobs, const VerifySummary& summary) {
    for (const auto& j : jobs) {
        if (j.reference_error) {
            try {
                std::rethrow_exception(j.reference_error);
            } catch (const Cancelled&) {
                throw;
            } catch (const std::exception& e) {
                throw Error("verify: the reference device " + summary.reference_device + " failed on " +
                            j.config->describe() + ": " + e.what());
            }
        }
        if (j.reference.size() != j.members.size())
            throw Error("verify: the reference device " + summary.reference_device + " returned " +
                        std::to_string(j.reference.size()) + " results for " + std::to_string(j.members.size()) +
                        " pairs");
    }
}

// Judges the chunk's jobs: refused, failed as a whole, or pair by pair.
class ChunkJudge {
public:
    ChunkJudge(const VerifyOptions& options, const VerifyCallbacks& callbacks, VerifySummary& summary,
               std::set<std::string>& kernels)
        : options_(options), callbacks_(callbacks), summary_(summary), kernels_(kernels) {}

    void judge(std::vector<VerifyJob>& jobs, const std::vector<VerifyPair>& pairs) {
        for (auto& j : jobs) {
            if (refusal(j)) {
                // A device may refuse a scheme past its limits (or, forced to
                // a narrow kernel, a pair its lanes cannot hold) with a clear
                // error; it may never answer it wrongly.
                summary_.refused += j.members.size();
                if (callbacks_.refusal) callbacks_.refusal({j.config, j.members.size(), j.tested_failure});
            } else if (!j.tested_failure.empty()) {
                for (std::size_t k : j.members) count_failure(pairs[k], *j.config);
                if (callbacks_.job_failure) callbacks_.job_failure({j.config, j.members.size(), j.tested_failure});
            } else {
                for (std::size_t k = 0; k < j.members.size(); ++k) judge_pair(j, k, pairs[j.members[k]]);
            }
        }
    }

private:
    bool refusal(const VerifyJob& j) const {
        return j.tested_refused && (j.config->extreme || options_.forced_kernel_may_refuse) &&
               j.tested_failure.find("internal error") == std::string::npos;
    }

    void judge_pair(VerifyJob& j, std::size_t k, const VerifyPair& pair) {
        if (!j.tested[k].kernel.empty()) kernels_.insert(j.tested[k].kernel);
        auto problems = check_alignment(j.tested[k], j.reference[k], pair.query.residues, pair.target.residues,
                                        j.config->scheme, j.config->options);
        if (problems.empty()) {
            ++summary_.passed;
            return;
        }
        count_failure(pair, *j.config);
        if (!callbacks_.mismatch) return;
        VerifyMismatch mismatch;
        mismatch.pair = &pair;
        mismatch.config = j.config;
        mismatch.problems = std::move(problems);
        mismatch.tested = std::move(j.tested[k]);
        mismatch.reference = std::move(j.reference[k]);
        mismatch.tested_device = summary_.tested_device;
        mismatch.reference_device = summary_.reference_device;
        callbacks_.mismatch(mismatch);
    }

    void count_failure(const VerifyPair& pair, const VerifyConfig& config) {
        ++summary_.failed;
        ++summary_.failures_by_kind["mode " + std::string(to_string(config.options.mode))];
        ++summary_.failures_by_kind["gaps " + std::string(to_string(config.gap_model))];
        ++summary_.failures_by_kind["class " + std::string(to_string(pair.length_class))];
        ++summary_.failures_by_kind["matrix " + config.matrix];
        ++summary_.failures_by_kind[config.options.traceback ? "traceback yes" : "traceback no"];
    }

    const VerifyOptions& options_;
    const VerifyCallbacks& callbacks_;
    VerifySummary& summary_;
    std::set<std::string>& kernels_;
};

}  // namespace

VerifySummary verify_backend(Backend& tested, Backend& reference, const VerifyOptions& options,
                             const VerifyCallbacks& callbacks, JobContext& context) {
    if (options.pairs == 0) throw Error("verify: --pairs must be at least 1");
    if (options.threads < 0) throw Error("verify: --threads must be 0 (all cores) or positive");
    if (options.streams < 0) throw Error("verify: --streams must be 0 (device default) or positive");

    VerifySummary summary;
    summary.tested_device = tested.info().id;
    const DeviceInfo reference_info = reference.info();
    summary.reference_device = reference_info.id;
    // Whole reference jobs run side by side only on a CPU reference that is not
    // also the device under test (the CPU backends take concurrent jobs).
    const bool concurrent_reference = reference_info.kind == "cpu" && &reference != &tested;
    std::set<std::string> kernels;

    VerifyPairGenerator generator(options.seed, options.traceback_too, options.kernel);
    const auto& configs = generator.configs();
    refuse_unknown_kernel(tested, configs, options, context);
    const std::uint64_t chunk = std::max<std::uint64_t>(options.chunk_pairs, 1);
    ChunkJudge judge(options, callbacks, summary, kernels);

    std::uint64_t done = 0;
    while (done < options.pairs) {
        const std::uint64_t count = std::min(chunk, options.pairs - done);
        std::vector<VerifyPair> pairs;
        pairs.reserve(static_cast<std::size_t>(count));
        for (std::uint64_t k = 0; k < count; ++k) pairs.push_back(generator.next());

        std::vector<VerifyJob> jobs = group_into_jobs(pairs, configs, options, summary);
        run_both_sides(tested, reference, jobs, options, concurrent_reference, context, summary);
        context.throw_if_cancelled();
        throw_reference_errors(jobs, summary);
        judge.judge(jobs, pairs);
        done += count;
        if (callbacks.progress) callbacks.progress(done, options.pairs);
    }
    for (const auto& kernel : kernels) {
        if (!summary.tested_kernels.empty()) summary.tested_kernels += ", ";
        summary.tested_kernels += kernel;
    }
    return summary;
}

VerifySummary verify_device(DeviceRegistry& registry, const VerifyOptions& options, const VerifyCallbacks& callbacks,
                            JobContext& context) {
    Backend& tested = registry.select(options.device);
    Backend& reference = registry.select(options.reference_device);
    return verify_backend(tested, reference, options, callbacks, context);
}

}  // namespace alignscope
