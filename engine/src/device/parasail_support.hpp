// What every parasail user in the engine shares (the pairwise "cpu" backend and
// the database scanner): RAII owners for parasail's objects, our scaled matrix as
// a parasail matrix, and the SIMD level parasail dispatches to.
#pragma once

#include <alignscope/score/substitution_matrix.hpp>

#include <parasail.h>

#include <memory>
#include <string>
#include <string_view>

namespace alignscope::parasail_support {

// parasail maps letters to matrix rows case-insensitively; our residues are
// re-encoded as these letters, one per row of our matrix, so parasail sees only
// letters that have rows and aliases (U -> C, ...) are already resolved.
inline constexpr std::string_view letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&()+,./:;<=>?@[]^_{|}~";

struct ResultDeleter {
    void operator()(parasail_result_t* r) const { parasail_result_free(r); }
};
using ResultPtr = std::unique_ptr<parasail_result_t, ResultDeleter>;
struct ProfileDeleter {
    void operator()(parasail_profile_t* p) const { parasail_profile_free(p); }
};
using ProfilePtr = std::unique_ptr<parasail_profile_t, ProfileDeleter>;
struct MatrixDeleter {
    void operator()(parasail_matrix_t* m) const { parasail_matrix_free(m); }
};
using MatrixPtr = std::unique_ptr<parasail_matrix_t, MatrixDeleter>;
struct CigarDeleter {
    void operator()(parasail_cigar_t* c) const { parasail_cigar_free(c); }
};
using CigarPtr = std::unique_ptr<parasail_cigar_t, CigarDeleter>;

// Our (scaled) matrix as a parasail matrix over `letters`. Throws Error when it
// has more rows than there are letters.
MatrixPtr make_matrix(const SubstitutionMatrix& matrix);

// "AVX2 (256-bit)", "SSE4.1 (128-bit)", ...
std::string simd_level();

}  // namespace alignscope::parasail_support
