// Parts of the alignment writers shared with the streamed writer
// (alignment_stream.cpp), so that both write the same bytes. Private to
// engine/src/io.
#pragma once

#include <alignscope/io/alignment_format.hpp>

#include <nlohmann/json.hpp>

#include <ostream>

namespace alignscope::detail {

// One column of markup_line: '|' identical, ':' positive score, '.' other
// mismatch, ' ' gap.
inline char markup_char(char a, char b, const SubstitutionMatrix& matrix) {
    if (a == '-' || b == '-') return ' ';
    if (a == b) return '|';
    const int ia = matrix.index_of(a), ib = matrix.index_of(b);
    return (ia >= 0 && ib >= 0 && matrix.score(ia, ib) > 0) ? ':' : '.';
}

// The pair format's file header (program, run date, command line).
void write_pair_preamble(std::ostream& out, const WriterContext& context);
// One alignment's header in the pair format; with `traceback`, the length,
// identity, similarity and gaps lines (from a.stats).
void write_pair_header(std::ostream& out, const Alignment& a, const ScoringScheme& scheme,
                       const AlignmentExtras& extras, bool traceback);
// One alignment's JSON Lines record (nlohmann's object keeps its keys sorted).
nlohmann::json alignment_json(const Alignment& a, const ScoringScheme& scheme, const AlignmentExtras& extras);

}  // namespace alignscope::detail
