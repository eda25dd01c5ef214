// The CPU reference aligners: Needleman-Wunsch (global), Smith-Waterman (local)
// and semi-global (free end gaps, each end configurable), each with linear or
// affine (Gotoh) gaps. Scalar code written to be read and taught from; every
// faster backend is checked against it.
//
// Recurrences (query down i, target across j, s = substitution, o = open,
// e = extend; linear when o == e):
//   E(i,j) = max(H(i,j-1) - o, E(i,j-1) - e)    gap in the query  ('D', move right)
//   F(i,j) = max(H(i-1,j) - o, F(i-1,j) - e)    gap in the target ('I', move down)
//   H(i,j) = max(H(i-1,j-1) + s(q_i, t_j), E(i,j), F(i,j) [, 0 when local])
//
// Tie-break (deterministic, and parasail's, so that scores and end positions
// agree with it exactly; checked in tests/engine/test_reference_vs_parasail.cpp):
//  - End: the cell with the highest score; among equal scores the smallest
//    target position j, then the smallest query position i. Local: any cell.
//    Semi-global: the cells (m, j >= 1) when the last row is free, (i >= 1, n)
//    when the last column is free, and (m, n).
//  - Begin: among optimal alignments ending there, the largest target begin,
//    then the largest query begin (the end rule run on the reversed sequences),
//    so the alignment is as short as it can be.
//  - Path: the region begin..end is aligned globally; the traceback walks from
//    its end and prefers, at each step, diagonal over 'D' (E) over 'I' (F), and
//    inside a gap extending over opening.
// Local alignments never start or end with a gap; a local score of 0 gives the
// empty alignment. A semi-global alignment may consist of gaps on one side
// only; that side's begin is then its end + 1.
//
// FreeEndGaps and parasail's sg_* names (s1 = query, s2 = target/database):
// our query_begin/query_end are parasail's db/de (free target residues before
// and after the query), our target_begin/target_end are parasail's qb/qe.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <string_view>

namespace alignscope {

// Aligns normalised residues. With traceback, the path is kept in a full
// direction matrix up to `traceback_cell_limit` cells and recovered in linear
// space (align_linear_space) above it, so memory stays bounded. Without
// traceback, one forward pass gives score and end, one reverse pass the begin.
// Throws Error for an empty sequence or a residue the matrix does not score.
Alignment align_reference(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                          const AlignOptions& options, std::uint64_t traceback_cell_limit = 1ull << 28);

// Score and end cell of the optimal alignment from one forward pass in O(n)
// memory. Ends are 1-based; (0, 0) for an empty local alignment.
struct ScoreAndEnd {
    std::int64_t score = 0;
    std::int64_t query_end = 0;
    std::int64_t target_end = 0;
};
ScoreAndEnd score_forward(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                          const ScoringScheme& scheme, const AlignOptions& options);

}  // namespace alignscope
