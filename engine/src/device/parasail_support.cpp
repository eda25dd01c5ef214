// Shared parasail glue: matrix conversion and SIMD level.
#include "parasail_support.hpp"

#include <alignscope/error.hpp>

#include <parasail/cpuid.h>

namespace alignscope::parasail_support {

MatrixPtr make_matrix(const SubstitutionMatrix& matrix) {
    const int size = matrix.size();
    if (size <= 0) throw Error("substitution matrix '" + matrix.name() + "' is empty");
    if (static_cast<std::size_t>(size) > letters.size())
        throw Error("substitution matrix '" + matrix.name() + "' has " + std::to_string(size) +
                    " letters; parasail handles at most " + std::to_string(letters.size()));
    const std::string alphabet(letters.substr(0, static_cast<std::size_t>(size)));
    MatrixPtr m(parasail_matrix_create(alphabet.c_str(), 0, 0));
    if (!m) throw Error("parasail could not create a substitution matrix");
    for (int r = 0; r < size; ++r)
        for (int c = 0; c < size; ++c) parasail_matrix_set_value(m.get(), r, c, matrix.score(r, c));
    return m;
}

std::string simd_level() {
    if (parasail_can_use_avx2()) return "AVX2 (256-bit)";
    if (parasail_can_use_sse41()) return "SSE4.1 (128-bit)";
    if (parasail_can_use_sse2()) return "SSE2 (128-bit)";
    if (parasail_can_use_neon()) return "NEON (128-bit)";
    if (parasail_can_use_altivec()) return "AltiVec (128-bit)";
    return "no SIMD (parasail's scalar fallback)";
}

}  // namespace alignscope::parasail_support
