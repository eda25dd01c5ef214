// The null model and the composition bias filter, in the single-precision
// arithmetic HMMER uses for them, so that the filter's pass/fail decisions
// agree with hmmsearch's at the threshold.
#include <alignscope/profile/null_model.hpp>

#include <algorithm>
#include <cmath>

namespace alignscope::profile {

namespace {

// BLOSUM62's background amino acid frequencies, as HMMER uses them.
constexpr float kAminoFrequencies[20] = {0.0787945f, 0.0151600f, 0.0535222f, 0.0668298f, 0.0397062f,
                                         0.0695071f, 0.0229198f, 0.0590092f, 0.0594422f, 0.0963728f,
                                         0.0237718f, 0.0414386f, 0.0482904f, 0.0395639f, 0.0540978f,
                                         0.0683364f, 0.0540687f, 0.0673417f, 0.0114135f, 0.0304133f};

}  // namespace

NullModel::NullModel(ResidueAlphabet alphabet) : alphabet_(alphabet) {
    const int K = ResidueCode::of(alphabet).canonical();
    if (alphabet == ResidueAlphabet::Amino) frequencies_.assign(kAminoFrequencies, kAminoFrequencies + 20);
    else
        frequencies_.assign(static_cast<std::size_t>(K), 1.0f / static_cast<float>(K));
    set_filter(1, std::vector<float>(static_cast<std::size_t>(K), 0.0f));
}

float NullModel::null_score(int L) {
    const float p1 = length_loop(L);
    return static_cast<float>(static_cast<float>(L) * std::log(static_cast<double>(p1)) + std::log(1.0 - p1));
}

void NullModel::set_filter(int model_length, const std::vector<float>& composition) {
    const ResidueCode& code = ResidueCode::of(alphabet_);
    const int K = code.canonical();
    const int Kp = code.all_codes();
    composition_ = composition;
    composition_.resize(static_cast<std::size_t>(K), 0.0f);
    const float L1 = static_cast<float>(model_length) / 8.0f;
    t10_ = 1.0f / (L1 + 1.0f);
    t11_ = L1 / (L1 + 1.0f);
    // Emission odds against the background; degenerate codes take the summed
    // probability over the summed background, the gap and '*' '~' count as 1.
    for (int s = 0; s < 2; ++s) {
        const std::vector<float>& e = s == 0 ? frequencies_ : composition_;
        auto& odds = odds_[s];
        odds.assign(static_cast<std::size_t>(Kp), 0.0f);
        for (int x = 0; x < K; ++x)
            odds[static_cast<std::size_t>(x)] =
                e[static_cast<std::size_t>(x)] / frequencies_[static_cast<std::size_t>(x)];
        odds[static_cast<std::size_t>(code.gap())] = 1.0f;
        odds[static_cast<std::size_t>(code.nonresidue())] = 1.0f;
        odds[static_cast<std::size_t>(code.missing())] = 1.0f;
        for (int x = K + 1; x <= Kp - 3; ++x) {
            float sum = 0.0f, denom = 0.0f;
            for (int y = 0; y < K; ++y)
                if (code.stands_for(x, y)) {
                    sum += e[static_cast<std::size_t>(y)];
                    denom += frequencies_[static_cast<std::size_t>(y)];
                }
            odds[static_cast<std::size_t>(x)] = denom > 0.0f ? sum / denom : 0.0f;
        }
    }
}

float NullModel::filter_score(const std::uint8_t* dsq, int L) const {
    // Forward over the two states with a rescaling of each row; the background
    // state's self-transition carries the target-length distribution.
    const float p1 = length_loop(L);
    const float t00 = p1, t01 = 1.0f - p1;
    const float pi0 = 0.999f, pi1 = 0.001f;
    float logsc = 0.0f;
    float a = odds_[0][dsq[0]] * pi0;
    float b = odds_[1][dsq[0]] * pi1;
    float max = std::max(std::max(a, b), 0.0f);
    a /= max;
    b /= max;
    logsc += static_cast<float>(std::log(static_cast<double>(max)));
    for (int i = 1; i < L; ++i) {
        const std::uint8_t x = dsq[i];
        float na = 0.0f, nb = 0.0f;
        na += a * t00;
        na += b * t10_;
        na *= odds_[0][x];
        nb += a * t01;
        nb += b * t11_;
        nb *= odds_[1][x];
        max = std::max(std::max(na, 0.0f), nb);
        a = na / max;
        b = nb / max;
        logsc += static_cast<float>(std::log(static_cast<double>(max)));
    }
    // Both states end with probability 1 (the length is imposed below).
    float end = 0.0f;
    end += a * 1.0f;
    end += b * 1.0f;
    logsc += static_cast<float>(std::log(static_cast<double>(end)));
    return logsc + static_cast<float>(L) * std::log(p1) + std::log(static_cast<float>(1.0 - p1));
}

}  // namespace alignscope::profile
