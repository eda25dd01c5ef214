// The verify pair generator: names of the length classes and gap models, the
// scheme menus (matrices, penalties, modes) and seeded pairs drawn over them.
#include "verify_detail.hpp"

#include <alignscope/bench/verify.hpp>
#include <alignscope/device/kernel_name.hpp>

#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <utility>

namespace alignscope {

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

std::string VerifyConfig::describe() const {
    return std::string(to_string(alphabet)) + " " + matrix + " gap " + detail::format_number(gap_open) + "/" +
           detail::format_number(gap_extend) + " (" + std::string(to_string(gap_model)) + ") " +
           describe_mode(options) + (options.traceback ? " traceback" : " score-only");
}

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
        for (char c : detail::nucleotides) sum += matrix.score(matrix.index_of(c), matrix.index_of(c));
        return sum / 4;
    }
    double sum = 0, total = 0;
    for (std::size_t k = 0; k < detail::amino_acids.size(); ++k) {
        const int index = matrix.index_of(detail::amino_acids[k]);
        sum += detail::amino_acid_frequencies[k] * matrix.score(index, index);
        total += detail::amino_acid_frequencies[k];
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
        // Past the GPU's 32-bit passes and its 16-bit table: BLOSUM62 x4096
        // (entries up to 45,056), and a match and mismatch of 1,000,000 with
        // the largest penalties, whose long pairs leave 32 bits from above
        // and below (a GPU aligns those on its exact CPU path).
        {AlphabetKind::Protein, "BLOSUM62", 0, 0, false, 4096},
        {AlphabetKind::Dna, "", 1000000, -1000000, false, 1, true},
    };

    // Deal the 16 free-end-gap combinations round-robin in a seeded order, so
    // every combination appears in the pool (16 matrices x 4 gap models x 4 slots).
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
                const char c = detail::random_residue(random_, alphabet);
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

}  // namespace alignscope
