// The published Karlin-Altschul parameters and the formulas that use them.
// Every row below is NCBI BLAST's (blast_stat.c, gapped tables; the ungapped
// and greedy rows are left out because our searches are gapped and affine).
// The protein rows were checked one by one against blast_stat.c of the NCBI
// C++ toolkit (src/algo/blast/core: blosum45_values ... pam250_values): same
// gap costs, lambda, K and H, none missing for our built-in matrices
// (BLAST also has BLOSUM90, which we do not build in).
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/search/statistics.hpp>

#include <cmath>
#include <sstream>

namespace alignscope {

namespace {

// BLAST's gapped rows of the BLOSUM matrices.
std::vector<KarlinAltschulRow> blosum_rows() {
    return {
        // BLOSUM45
        {"BLOSUM45", 13, 3, 0.207, 0.049, 0.14},
        {"BLOSUM45", 12, 3, 0.199, 0.039, 0.11},
        {"BLOSUM45", 11, 3, 0.190, 0.031, 0.095},
        {"BLOSUM45", 10, 3, 0.179, 0.023, 0.075},
        {"BLOSUM45", 16, 2, 0.210, 0.051, 0.14},
        {"BLOSUM45", 15, 2, 0.203, 0.041, 0.12},
        {"BLOSUM45", 14, 2, 0.195, 0.032, 0.10},
        {"BLOSUM45", 13, 2, 0.185, 0.024, 0.084},
        {"BLOSUM45", 12, 2, 0.171, 0.016, 0.061},
        {"BLOSUM45", 19, 1, 0.205, 0.040, 0.11},
        {"BLOSUM45", 18, 1, 0.198, 0.032, 0.10},
        {"BLOSUM45", 17, 1, 0.189, 0.024, 0.079},
        {"BLOSUM45", 16, 1, 0.176, 0.016, 0.063},
        // BLOSUM50
        {"BLOSUM50", 13, 3, 0.212, 0.063, 0.19},
        {"BLOSUM50", 12, 3, 0.206, 0.055, 0.17},
        {"BLOSUM50", 11, 3, 0.197, 0.042, 0.14},
        {"BLOSUM50", 10, 3, 0.186, 0.031, 0.11},
        {"BLOSUM50", 9, 3, 0.172, 0.022, 0.082},
        {"BLOSUM50", 16, 2, 0.215, 0.066, 0.20},
        {"BLOSUM50", 15, 2, 0.210, 0.058, 0.17},
        {"BLOSUM50", 14, 2, 0.202, 0.045, 0.14},
        {"BLOSUM50", 13, 2, 0.193, 0.035, 0.12},
        {"BLOSUM50", 12, 2, 0.181, 0.025, 0.095},
        {"BLOSUM50", 19, 1, 0.212, 0.057, 0.18},
        {"BLOSUM50", 18, 1, 0.207, 0.050, 0.15},
        {"BLOSUM50", 17, 1, 0.198, 0.037, 0.12},
        {"BLOSUM50", 16, 1, 0.186, 0.025, 0.10},
        {"BLOSUM50", 15, 1, 0.171, 0.015, 0.063},
        // BLOSUM62
        {"BLOSUM62", 11, 2, 0.297, 0.082, 0.27},
        {"BLOSUM62", 10, 2, 0.291, 0.075, 0.23},
        {"BLOSUM62", 9, 2, 0.279, 0.058, 0.19},
        {"BLOSUM62", 8, 2, 0.264, 0.045, 0.15},
        {"BLOSUM62", 7, 2, 0.239, 0.027, 0.10},
        {"BLOSUM62", 6, 2, 0.201, 0.012, 0.061},
        {"BLOSUM62", 13, 1, 0.292, 0.071, 0.23},
        {"BLOSUM62", 12, 1, 0.283, 0.059, 0.19},
        {"BLOSUM62", 11, 1, 0.267, 0.041, 0.14},
        {"BLOSUM62", 10, 1, 0.243, 0.024, 0.10},
        {"BLOSUM62", 9, 1, 0.206, 0.010, 0.052},
        // BLOSUM80
        {"BLOSUM80", 25, 2, 0.342, 0.17, 0.66},
        {"BLOSUM80", 13, 2, 0.336, 0.15, 0.57},
        {"BLOSUM80", 9, 2, 0.319, 0.11, 0.42},
        {"BLOSUM80", 8, 2, 0.308, 0.090, 0.35},
        {"BLOSUM80", 7, 2, 0.293, 0.070, 0.27},
        {"BLOSUM80", 6, 2, 0.268, 0.045, 0.19},
        {"BLOSUM80", 11, 1, 0.314, 0.095, 0.35},
        {"BLOSUM80", 10, 1, 0.299, 0.071, 0.27},
        {"BLOSUM80", 9, 1, 0.279, 0.048, 0.20},
    };
}

// BLAST's gapped rows of the PAM matrices.
std::vector<KarlinAltschulRow> pam_rows() {
    return {
        // PAM30
        {"PAM30", 7, 2, 0.305, 0.15, 0.87},
        {"PAM30", 6, 2, 0.287, 0.11, 0.68},
        {"PAM30", 5, 2, 0.264, 0.079, 0.45},
        {"PAM30", 10, 1, 0.309, 0.15, 0.88},
        {"PAM30", 9, 1, 0.294, 0.11, 0.61},
        {"PAM30", 8, 1, 0.270, 0.072, 0.40},
        // PAM70
        {"PAM70", 8, 2, 0.301, 0.12, 0.54},
        {"PAM70", 7, 2, 0.286, 0.093, 0.43},
        {"PAM70", 6, 2, 0.264, 0.064, 0.29},
        {"PAM70", 11, 1, 0.305, 0.12, 0.52},
        {"PAM70", 10, 1, 0.291, 0.091, 0.41},
        {"PAM70", 9, 1, 0.270, 0.060, 0.28},
        // PAM250
        {"PAM250", 15, 3, 0.205, 0.049, 0.13},
        {"PAM250", 14, 3, 0.200, 0.043, 0.12},
        {"PAM250", 13, 3, 0.194, 0.036, 0.10},
        {"PAM250", 12, 3, 0.186, 0.029, 0.085},
        {"PAM250", 11, 3, 0.174, 0.020, 0.070},
        {"PAM250", 17, 2, 0.204, 0.047, 0.12},
        {"PAM250", 16, 2, 0.198, 0.038, 0.11},
        {"PAM250", 15, 2, 0.191, 0.031, 0.087},
        {"PAM250", 14, 2, 0.182, 0.024, 0.073},
        {"PAM250", 13, 2, 0.171, 0.017, 0.059},
        {"PAM250", 21, 1, 0.205, 0.045, 0.11},
        {"PAM250", 20, 1, 0.199, 0.037, 0.10},
        {"PAM250", 19, 1, 0.192, 0.029, 0.083},
        {"PAM250", 18, 1, 0.183, 0.021, 0.070},
        {"PAM250", 17, 1, 0.171, 0.014, 0.052},
    };
}

// BLASTN's gapped rows of reward/penalty scoring.
std::vector<KarlinAltschulRow> nucleotide_rows() {
    return {
        // Nucleotide reward/penalty (BLASTN). EDNAFULL scores A/C/G/T +5/-4
        // and is looked up as "match 5/-4".
        {"match 1/-4", 1, 2, 1.36, 0.67, 1.2},     {"match 1/-4", 0, 2, 1.26, 0.43, 0.90},
        {"match 1/-4", 2, 1, 1.35, 0.61, 1.1},     {"match 1/-4", 1, 1, 1.22, 0.35, 0.72},
        {"match 2/-7", 2, 4, 0.68, 0.67, 1.2},     {"match 2/-7", 0, 4, 0.63, 0.43, 0.90},
        {"match 2/-7", 4, 2, 0.675, 0.62, 1.1},    {"match 2/-7", 2, 2, 0.61, 0.35, 0.72},
        {"match 1/-3", 2, 2, 1.37, 0.70, 1.2},     {"match 1/-3", 1, 2, 1.35, 0.64, 1.1},
        {"match 1/-3", 0, 2, 1.25, 0.42, 0.83},    {"match 1/-3", 2, 1, 1.34, 0.60, 1.1},
        {"match 1/-3", 1, 1, 1.21, 0.34, 0.71},    {"match 2/-5", 2, 4, 0.67, 0.59, 1.1},
        {"match 2/-5", 0, 4, 0.62, 0.39, 0.78},    {"match 2/-5", 4, 2, 0.67, 0.61, 1.0},
        {"match 2/-5", 2, 2, 0.56, 0.32, 0.59},    {"match 1/-2", 2, 2, 1.33, 0.62, 1.1},
        {"match 1/-2", 1, 2, 1.30, 0.52, 0.93},    {"match 1/-2", 0, 2, 1.19, 0.34, 0.66},
        {"match 1/-2", 3, 1, 1.32, 0.57, 1.0},     {"match 1/-2", 2, 1, 1.29, 0.49, 0.92},
        {"match 1/-2", 1, 1, 1.14, 0.26, 0.52},    {"match 2/-3", 4, 4, 0.63, 0.42, 0.84},
        {"match 2/-3", 2, 4, 0.615, 0.37, 0.72},   {"match 2/-3", 0, 4, 0.55, 0.21, 0.46},
        {"match 2/-3", 3, 3, 0.615, 0.37, 0.68},   {"match 2/-3", 6, 2, 0.63, 0.42, 0.84},
        {"match 2/-3", 5, 2, 0.625, 0.41, 0.78},   {"match 2/-3", 4, 2, 0.61, 0.35, 0.68},
        {"match 2/-3", 2, 2, 0.515, 0.14, 0.33},   {"match 4/-5", 6, 5, 0.28, 0.21, 0.47},
        {"match 4/-5", 5, 5, 0.27, 0.17, 0.39},    {"match 4/-5", 4, 5, 0.25, 0.10, 0.31},
        {"match 4/-5", 3, 5, 0.23, 0.065, 0.25},   {"match 1/-1", 3, 2, 1.09, 0.31, 0.55},
        {"match 1/-1", 2, 2, 1.07, 0.27, 0.49},    {"match 1/-1", 1, 2, 1.02, 0.21, 0.36},
        {"match 1/-1", 0, 2, 0.80, 0.064, 0.17},   {"match 1/-1", 4, 1, 1.08, 0.28, 0.54},
        {"match 1/-1", 3, 1, 1.06, 0.25, 0.46},    {"match 1/-1", 2, 1, 0.99, 0.17, 0.30},
        {"match 3/-2", 5, 5, 0.208, 0.030, 0.072}, {"match 5/-4", 10, 6, 0.163, 0.068, 0.16},
        {"match 5/-4", 8, 6, 0.146, 0.039, 0.11},
    };
}

}  // namespace

const std::vector<KarlinAltschulRow>& karlin_altschul_table() {
    static const std::vector<KarlinAltschulRow> table = [] {
        std::vector<KarlinAltschulRow> rows = blosum_rows();
        for (auto part : {pam_rows(), nucleotide_rows()}) rows.insert(rows.end(), part.begin(), part.end());
        return rows;
    }();
    return table;
}

namespace {

bool same_scores(const SubstitutionMatrix& a, const SubstitutionMatrix& b) {
    return a.letters() == b.letters() && a.scores() == b.scores();
}

// "match R/-P" when every pair of the unambiguous bases scores R (same) or -P
// (different), else empty. EDNAFULL qualifies (5/-4).
std::string nucleotide_key(const SubstitutionMatrix& m) {
    if (!m.is_nucleotide()) return {};
    const std::string bases = "ACGT";
    int match = 0, mismatch = 0;
    bool first_match = true, first_mismatch = true;
    for (char a : bases) {
        for (char b : bases) {
            const int ia = m.index_of(a), ib = m.index_of(b);
            if (ia < 0 || ib < 0) return {};
            const int s = m.score(ia, ib);
            if (a == b) {
                if (!first_match && s != match) return {};
                match = s;
                first_match = false;
            } else {
                if (!first_mismatch && s != mismatch) return {};
                mismatch = s;
                first_mismatch = false;
            }
        }
    }
    if (match <= 0 || mismatch >= 0) return {};
    return "match " + std::to_string(match) + "/" + std::to_string(mismatch);
}

std::string blast_gap_words(int existence, int extension) {
    return "gap existence " + std::to_string(existence) + ", extension " + std::to_string(extension);
}

}  // namespace

std::optional<KarlinAltschul> karlin_altschul_for(const ScoringScheme& scheme, AlignmentMode mode, std::string* why) {
    auto refuse = [why](std::string text) -> std::optional<KarlinAltschul> {
        if (why) *why = std::move(text);
        return std::nullopt;
    };
    if (mode != AlignmentMode::Local)
        return refuse("no E-values: Karlin-Altschul statistics describe local alignment scores, and this search is " +
                      std::string(to_string(mode)));
    if (scheme.scale != 1)
        return refuse("no E-values: BLAST publishes no parameters for half-step gap penalties (" + scheme.describe() +
                      "); raw scores only");
    const SubstitutionMatrix& matrix = scheme.matrix;
    std::string key;
    if (const std::string nucleotide = nucleotide_key(matrix); !nucleotide.empty()) {
        key = nucleotide;
    } else {
        bool builtin = false;
        for (const std::string& name : SubstitutionMatrix::builtin_names()) {
            if (name != matrix.name()) continue;
            builtin = same_scores(matrix, SubstitutionMatrix::builtin(name));
        }
        if (!builtin)
            return refuse("no E-values: matrix " + matrix.name() +
                          " is not one of the built-in matrices with published parameters; raw scores only");
        key = matrix.name();
    }
    // Our open = BLAST existence + extension.
    const int extension = scheme.gap_extend;
    const int existence = scheme.gap_open - scheme.gap_extend;
    std::vector<std::string> offered;
    for (const KarlinAltschulRow& row : karlin_altschul_table()) {
        if (row.matrix != key) continue;
        if (row.existence == existence && row.extension == extension) {
            KarlinAltschul k;
            k.lambda = row.lambda;
            k.K = row.K;
            k.H = row.H;
            k.even_scores_only = key == "match 2/-3" || key == "match 2/-5" || key == "match 2/-7";
            k.source = "NCBI BLAST gapped parameters for " + key + ", " + blast_gap_words(existence, extension) +
                       " (gap open " + std::to_string(scheme.gap_open) + ", extend " +
                       std::to_string(scheme.gap_extend) + " here)";
            return k;
        }
        offered.push_back(std::to_string(row.existence + row.extension) + "/" + std::to_string(row.extension));
    }
    std::string text = "no E-values: BLAST publishes no parameters for " + key + " with gap open " +
                       std::to_string(scheme.gap_open) + ", extend " + std::to_string(scheme.gap_extend);
    if (offered.empty()) {
        text += " (none for this matrix at all)";
    } else {
        text += " (gap open/extend with parameters:";
        for (std::size_t k = 0; k < offered.size(); ++k) text += (k ? ", " : " ") + offered[k];
        text += ")";
    }
    return refuse(text + "; raw scores only");
}

namespace {
std::int64_t usable_score(const KarlinAltschul& p, std::int64_t raw) {
    if (p.even_scores_only && raw % 2 != 0) return raw - 1;  // down to the even number below
    return raw;
}
}  // namespace

double bit_score(const KarlinAltschul& p, std::int64_t raw_score) {
    const double s = static_cast<double>(usable_score(p, raw_score));
    return (p.lambda * s - std::log(p.K)) / std::log(2.0);
}

double evalue(const KarlinAltschul& p, std::int64_t raw_score, std::uint64_t query_length,
              std::uint64_t database_residues) {
    const double s = static_cast<double>(usable_score(p, raw_score));
    return p.K * static_cast<double>(query_length) * static_cast<double>(database_residues) * std::exp(-p.lambda * s);
}

std::int64_t min_score_for_evalue(const KarlinAltschul& p, double max_evalue, std::uint64_t query_length,
                                  std::uint64_t database_residues) {
    if (!(max_evalue > 0) || !std::isfinite(max_evalue)) throw Error("--evalue must be a positive number");
    const double mn = static_cast<double>(query_length) * static_cast<double>(database_residues);
    // E <= max  <=>  S >= ln(K m n / max) / lambda
    std::int64_t s = static_cast<std::int64_t>(std::floor(std::log(p.K * mn / max_evalue) / p.lambda)) - 2;
    while (evalue(p, s, query_length, database_residues) > max_evalue) ++s;
    while (evalue(p, s - 1, query_length, database_residues) <= max_evalue) --s;
    return s;
}

}  // namespace alignscope
