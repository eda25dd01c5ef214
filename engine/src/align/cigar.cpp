// CIGAR text, and the ksw2-style self-checks: re-scoring an alignment from its
// CIGAR, and deriving the gapped rows and statistics from it.
//
// rescore and complete_alignment take residue letters. They also accept
// residues already encoded as matrix indices (bytes below 0x20, which no letter
// uses), so the aligners can check themselves on their encoded input.
#include <alignscope/align/alignment.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <limits>

namespace alignscope {

namespace {

bool is_cigar_op(char op) { return op == '=' || op == 'X' || op == 'M' || op == 'I' || op == 'D'; }

// Matrix index of one residue of `what` (1-based position `pos`), letter or encoded.
int residue_index(std::string_view residues, std::int64_t pos, const SubstitutionMatrix& matrix,
                  const char* what) {
    const auto c = static_cast<unsigned char>(residues[static_cast<std::size_t>(pos - 1)]);
    if (c < 0x20) {
        if (c >= matrix.size())
            throw Error(std::string("encoded residue ") + std::to_string(c) + " at position " +
                        std::to_string(pos) + " of the " + what + " is outside matrix " + matrix.name());
        return c;
    }
    const int index = matrix.index_of(static_cast<char>(c));
    if (index < 0)
        throw Error(std::string("residue '") + static_cast<char>(c) + "' at position " + std::to_string(pos) +
                    " of the " + what + " is not scored by matrix " + matrix.name());
    return index;
}

char residue_letter(std::string_view residues, std::int64_t pos, const SubstitutionMatrix& matrix) {
    const auto c = static_cast<unsigned char>(residues[static_cast<std::size_t>(pos - 1)]);
    if (c < 0x20 && c < matrix.letters().size()) return matrix.letters()[c];
    return static_cast<char>(c);
}

// The walk shared by rescore and complete_alignment: checks that the CIGAR stays
// inside both sequences and that '='/'X' agree with the residues, and calls
// `column(op, qi, ti, qindex, tindex)` for each column with the resolved
// operation ('M' becomes '=' or 'X') and 1-based positions (0 for a gap side).
template <typename Column>
void walk(const Cigar& cigar, std::string_view query, std::string_view target, std::int64_t query_begin,
          std::int64_t target_begin, const SubstitutionMatrix& matrix, Column&& column) {
    const auto qlen = static_cast<std::int64_t>(query.size());
    const auto tlen = static_cast<std::int64_t>(target.size());
    const std::int64_t qspan = cigar.query_span();
    const std::int64_t tspan = cigar.target_span();
    // A side the CIGAR does not consume may begin just past its sequence
    // (a semi-global alignment made only of gaps on that side).
    auto check_range = [](const char* what, std::int64_t begin, std::int64_t span, std::int64_t length) {
        if (begin < 1 || begin > length + 1 || begin - 1 + span > length)
            throw Error("CIGAR runs past the " + std::string(what) + ": it covers positions " +
                        std::to_string(begin) + ".." + std::to_string(begin - 1 + span) + " of a " +
                        std::string(what) + " of length " + std::to_string(length));
    };
    check_range("query", query_begin, qspan, qlen);
    check_range("target", target_begin, tspan, tlen);

    std::int64_t qi = query_begin;
    std::int64_t ti = target_begin;
    for (const CigarOp& op : cigar.ops()) {
        for (std::uint32_t k = 0; k < op.length; ++k) {
            switch (op.op) {
                case '=':
                case 'X':
                case 'M': {
                    const int a = residue_index(query, qi, matrix, "query");
                    const int b = residue_index(target, ti, matrix, "target");
                    const char resolved = a == b ? '=' : 'X';
                    if (op.op != 'M' && op.op != resolved)
                        throw Error("CIGAR says '" + std::string(1, op.op) + "' at query position " +
                                    std::to_string(qi) + ", target position " + std::to_string(ti) +
                                    " but the residues are " + (a == b ? "identical" : "different"));
                    column(resolved, qi, ti, a, b);
                    ++qi;
                    ++ti;
                    break;
                }
                case 'I':
                    column('I', qi, std::int64_t{0}, residue_index(query, qi, matrix, "query"), -1);
                    ++qi;
                    break;
                case 'D':
                    column('D', std::int64_t{0}, ti, -1, residue_index(target, ti, matrix, "target"));
                    ++ti;
                    break;
                default:
                    throw Error(std::string("CIGAR operation '") + op.op + "' is not one of =, X, M, I, D");
            }
        }
    }
}

}  // namespace

void Cigar::push(char op, std::uint32_t count) {
    if (count == 0) return;
    if (!ops_.empty() && ops_.back().op == op) {
        if (ops_.back().length > std::numeric_limits<std::uint32_t>::max() - count)
            throw Error("CIGAR run of '" + std::string(1, op) + "' is longer than 2^32 - 1 columns");
        ops_.back().length += count;
        return;
    }
    ops_.push_back({op, count});
}

void Cigar::reverse() { std::reverse(ops_.begin(), ops_.end()); }

std::int64_t Cigar::query_span() const {
    std::int64_t span = 0;
    for (const CigarOp& op : ops_)
        if (op.op == '=' || op.op == 'X' || op.op == 'M' || op.op == 'I') span += op.length;
    return span;
}

std::int64_t Cigar::target_span() const {
    std::int64_t span = 0;
    for (const CigarOp& op : ops_)
        if (op.op == '=' || op.op == 'X' || op.op == 'M' || op.op == 'D') span += op.length;
    return span;
}

std::int64_t Cigar::columns() const {
    std::int64_t total = 0;
    for (const CigarOp& op : ops_) total += op.length;
    return total;
}

std::string Cigar::to_string() const {
    std::string out;
    for (const CigarOp& op : ops_) {
        out += std::to_string(op.length);
        out += op.op;
    }
    return out;
}

Cigar Cigar::parse(std::string_view text) {
    Cigar cigar;
    std::size_t pos = 0;
    auto fail = [&text](std::size_t at, const std::string& what) {
        throw Error("CIGAR \"" + std::string(text) + "\": " + what + " at offset " + std::to_string(at));
    };
    while (pos < text.size()) {
        const std::size_t start = pos;
        std::uint64_t count = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
            count = count * 10 + static_cast<std::uint64_t>(text[pos] - '0');
            if (count > std::numeric_limits<std::uint32_t>::max()) fail(start, "run length over 2^32 - 1");
            ++pos;
        }
        if (pos == start) {
            fail(pos, std::string("expected a run length before '") + text[pos] + "'");
        }
        if (pos == text.size()) fail(pos, "run length without an operation");
        const char op = text[pos];
        if (!is_cigar_op(op))
            fail(pos, std::string("unknown operation '") + op + "' (expected =, X, M, I or D)");
        if (count == 0) fail(start, "run of length 0");
        cigar.push(op, static_cast<std::uint32_t>(count));
        ++pos;
    }
    return cigar;
}

std::int64_t rescore(const Cigar& cigar, std::string_view query, std::string_view target,
                     std::int64_t query_begin, std::int64_t target_begin, const ScoringScheme& scheme) {
    std::int64_t score = 0;
    char previous = 0;
    walk(cigar, query, target, query_begin, target_begin, scheme.matrix,
         [&](char op, std::int64_t, std::int64_t, int a, int b) {
             if (op == 'I' || op == 'D')
                 score -= op == previous ? scheme.gap_extend : scheme.gap_open;
             else
                 score += scheme.matrix.score(a, b);
             previous = op;
         });
    return score;
}

void complete_alignment(Alignment& a, std::string_view query, std::string_view target,
                        const ScoringScheme& scheme) {
    Cigar resolved;
    std::string qrow;
    std::string trow;
    AlignmentStats stats;
    char previous = 0;
    const auto columns = static_cast<std::size_t>(a.cigar.columns());
    qrow.reserve(columns);
    trow.reserve(columns);
    walk(a.cigar, query, target, a.query_begin, a.target_begin, scheme.matrix,
         [&](char op, std::int64_t qi, std::int64_t ti, int qa, int tb) {
             resolved.push(op);
             qrow += op == 'D' ? '-' : residue_letter(query, qi, scheme.matrix);
             trow += op == 'I' ? '-' : residue_letter(target, ti, scheme.matrix);
             ++stats.length;
             if (op == '=') ++stats.identities;
             // Identities count as similar even where the matrix scores them <= 0
             // (N against N in a match/mismatch matrix), so identities <= similarities.
             if (op == '=' || (op == 'X' && scheme.matrix.score(qa, tb) > 0)) ++stats.similarities;
             if (op == 'I' || op == 'D') {
                 ++stats.gaps;
                 // One open per maximal run of one gap kind, as the gap cost counts them.
                 if (op != previous) ++stats.gap_opens;
             }
             previous = op;
         });
    a.cigar = std::move(resolved);
    a.query_aligned = std::move(qrow);
    a.target_aligned = std::move(trow);
    a.stats = stats;
}

}  // namespace alignscope
