// libFuzzer target: arbitrary bytes as a substitution-matrix file, then the
// operations every aligner performs on a parsed matrix.
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace alignscope;

namespace {

void require(bool condition) {
    if (!condition) std::abort();  // an invariant the parser promises was broken
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    // Short inputs double as built-in names: the alias rules must never crash.
    if (size < 24) {
        try {
            require(!SubstitutionMatrix::builtin(text).letters().empty());
        } catch (const Error&) {
        }
    }

    try {
        const SubstitutionMatrix m = SubstitutionMatrix::parse(text, "fuzz", "fuzz-input");
        const auto n = static_cast<std::size_t>(m.size());
        require(n > 0);
        require(m.scores().size() == n * n);
        require(m.min_score() <= m.max_score());
        for (int i = 0; i < m.size(); ++i) require(m.index_of(m.letters()[static_cast<std::size_t>(i)]) == i);
        const EncodedSequence codes = encode(m.letters(), m, "the matrix letters");
        require(codes.size() == n);

        const ScoringScheme scheme = ScoringScheme::create(m, 10, 0.5);
        require(scheme.scale == 2);
        for (std::size_t i = 0; i < n * n; ++i) require(scheme.matrix.scores()[i] == 2 * m.scores()[i]);
        require(!scheme.describe().empty());
    } catch (const Error&) {
    }
    return 0;
}
