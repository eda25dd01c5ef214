// CIGAR text, and the ksw2-style self-checks: re-scoring an alignment from its
// CIGAR, and deriving the gapped rows and statistics from it.
//
// rescore and complete_alignment take residue letters. They also accept
// residues already encoded as matrix indices (bytes below 0x20, which no letter
// uses), so the aligners can check themselves on their encoded input.
#include <alignscope/align/alignment.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/align/path_scorer.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <limits>

namespace alignscope {

namespace {

bool is_cigar_op(char op) { return op == '=' || op == 'X' || op == 'M' || op == 'I' || op == 'D'; }

[[noreturn, gnu::noinline]] void bad_residue(unsigned char c, std::int64_t pos, const SubstitutionMatrix& matrix,
                                             const char* what) {
    if (c < 0x20)
        throw Error(std::string("encoded residue ") + std::to_string(c) + " at position " + std::to_string(pos) +
                    " of the " + what + " is outside matrix " + matrix.name());
    throw Error(std::string("residue '") + static_cast<char>(c) + "' at position " + std::to_string(pos) + " of the " +
                what + " is not scored by matrix " + matrix.name());
}

// Matrix index of one residue of `what` (1-based position `pos`), letter or encoded.
inline int residue_index(std::string_view residues, std::int64_t pos, const SubstitutionMatrix& matrix,
                         const char* what) {
    const auto c = static_cast<unsigned char>(residues[static_cast<std::size_t>(pos - 1)]);
    const int index = c < 0x20 ? (c < matrix.size() ? c : -1) : matrix.index_of(static_cast<char>(c));
    if (index < 0) bad_residue(c, pos, matrix, what);
    return index;
}

inline char residue_letter(std::string_view residues, std::int64_t pos, const SubstitutionMatrix& matrix) {
    const auto c = static_cast<unsigned char>(residues[static_cast<std::size_t>(pos - 1)]);
    if (c < 0x20 && c < matrix.letters().size()) return matrix.letters()[c];
    return static_cast<char>(c);
}

// Checks that the CIGAR stays inside both sequences. A side the CIGAR does not
// consume may begin just past its sequence (a semi-global alignment made only
// of gaps on that side).
void check_ranges(const Cigar& cigar, std::string_view query, std::string_view target, std::int64_t query_begin,
                  std::int64_t target_begin) {
    auto check = [](const char* what, std::int64_t begin, std::int64_t span, std::int64_t length) {
        if (begin < 1 || begin > length + 1 || begin - 1 + span > length)
            throw Error("CIGAR runs past the " + std::string(what) + ": it covers positions " + std::to_string(begin) +
                        ".." + std::to_string(begin - 1 + span) + " of a " + std::string(what) + " of length " +
                        std::to_string(length));
    };
    check("query", query_begin, cigar.query_span(), static_cast<std::int64_t>(query.size()));
    check("target", target_begin, cigar.target_span(), static_cast<std::int64_t>(target.size()));
}

// The walk shared by rescore and complete_alignment: checks that the CIGAR stays
// inside both sequences and that '='/'X' agree with the residues, and calls
// `column(op, qi, ti, qindex, tindex)` for each column with the resolved
// operation ('M' becomes '=' or 'X') and 1-based positions (0 for a gap side).
template <typename Column>
void walk(const Cigar& cigar, std::string_view query, std::string_view target, std::int64_t query_begin,
          std::int64_t target_begin, const SubstitutionMatrix& matrix, Column&& column) {
    check_ranges(cigar, query, target, query_begin, target_begin);

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
                default: throw Error(std::string("CIGAR operation '") + op.op + "' is not one of =, X, M, I, D");
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
        if (!is_cigar_op(op)) fail(pos, std::string("unknown operation '") + op + "' (expected =, X, M, I or D)");
        if (count == 0) fail(start, "run of length 0");
        cigar.push(op, static_cast<std::uint32_t>(count));
        ++pos;
    }
    return cigar;
}

std::int64_t rescore(const Cigar& cigar, std::string_view query, std::string_view target, std::int64_t query_begin,
                     std::int64_t target_begin, const ScoringScheme& scheme) {
    std::int64_t score = 0;
    char previous = 0;
    walk(cigar, query, target, query_begin, target_begin, scheme.matrix,
         [&](char op, std::int64_t, std::int64_t, int a, int b) {
             if (op == 'I' || op == 'D') score -= op == previous ? scheme.gap_extend : scheme.gap_open;
             else
                 score += scheme.matrix.score(a, b);
             previous = op;
         });
    return score;
}

std::int64_t complete_alignment(Alignment& a, std::string_view query, std::string_view target,
                                const ScoringScheme& scheme) {
    // The same checks and columns as walk(), written as one loop per CIGAR run
    // with the rows filled in place: the GPU backends complete a million
    // alignments per job, so this runs at a few nanoseconds per column.
    const SubstitutionMatrix& matrix = scheme.matrix;
    check_ranges(a.cigar, query, target, a.query_begin, a.target_begin);
    for (const CigarOp& op : a.cigar.ops())
        if (!is_cigar_op(op.op))
            throw Error(std::string("CIGAR operation '") + op.op + "' is not one of =, X, M, I, D");

    const auto columns = static_cast<std::size_t>(a.cigar.columns());
    std::string qrow(columns, '-');
    std::string trow(columns, '-');
    char* qout = qrow.data();
    char* tout = trow.data();
    Cigar resolved;
    AlignmentStats stats;
    stats.length = static_cast<std::int64_t>(columns);
    std::int64_t score = 0;
    char previous = 0;  // the previous column's (resolved) operation
    char run_op = 0;
    std::uint32_t run_length = 0;
    auto emit = [&](char op, std::uint32_t count) {
        if (op == run_op) {
            run_length += count;
            return;
        }
        if (run_length) resolved.push(run_op, run_length);
        run_op = op;
        run_length = count;
    };
    std::int64_t qi = a.query_begin, ti = a.target_begin;
    for (const CigarOp& op : a.cigar.ops()) {
        if (op.op == 'I' || op.op == 'D') {
            const bool insertion = op.op == 'I';
            for (std::uint32_t k = 0; k < op.length; ++k) {
                if (insertion) {
                    (void)residue_index(query, qi, matrix, "query");
                    *qout++ = residue_letter(query, qi, matrix);
                    ++tout;
                    ++qi;
                } else {
                    (void)residue_index(target, ti, matrix, "target");
                    ++qout;
                    *tout++ = residue_letter(target, ti, matrix);
                    ++ti;
                }
            }
            score -= (previous == op.op ? scheme.gap_extend : scheme.gap_open) +
                     static_cast<std::int64_t>(op.length - 1) * scheme.gap_extend;
            stats.gaps += op.length;
            if (previous != op.op) ++stats.gap_opens;
            emit(op.op, op.length);
            previous = op.op;
            continue;
        }
        for (std::uint32_t k = 0; k < op.length; ++k) {
            const int x = residue_index(query, qi, matrix, "query");
            const int y = residue_index(target, ti, matrix, "target");
            const char column = x == y ? '=' : 'X';
            if (op.op != 'M' && op.op != column)
                throw Error("CIGAR says '" + std::string(1, op.op) + "' at query position " + std::to_string(qi) +
                            ", target position " + std::to_string(ti) + " but the residues are " +
                            (x == y ? "identical" : "different"));
            const int s = matrix.score(x, y);
            score += s;
            stats.identities += x == y;
            // Identities count as similar even where the matrix scores them <= 0
            // (N against N in a match/mismatch matrix), so identities <= similarities.
            stats.similarities += (x == y || s > 0);
            *qout++ = residue_letter(query, qi, matrix);
            *tout++ = residue_letter(target, ti, matrix);
            emit(column, 1);
            previous = column;
            ++qi;
            ++ti;
        }
    }
    if (run_length) resolved.push(run_op, run_length);
    a.cigar = std::move(resolved);
    a.query_aligned = std::move(qrow);
    a.target_aligned = std::move(trow);
    a.stats = stats;
    return score;
}

PathScorer::PathScorer(std::string_view query, std::string_view target, std::int64_t query_begin,
                       std::int64_t target_begin, const ScoringScheme& scheme)
    : query_(query), target_(target), scheme_(scheme), qi_(query_begin), ti_(target_begin) {
    auto check = [](const char* what, std::int64_t begin, std::int64_t length) {
        if (begin < 1 || begin > length + 1)
            throw Error("the alignment begins at position " + std::to_string(begin) + " of a " + what + " of length " +
                        std::to_string(length));
    };
    check("query", query_begin, static_cast<std::int64_t>(query.size()));
    check("target", target_begin, static_cast<std::int64_t>(target.size()));
}

void PathScorer::push(char op, std::uint32_t count) {
    if (count == 0) return;
    if (!is_cigar_op(op)) throw Error(std::string("CIGAR operation '") + op + "' is not one of =, X, M, I, D");
    const bool uses_query = op != 'D', uses_target = op != 'I';
    auto past = [](const char* what, std::int64_t last, std::size_t length) {
        throw Error("CIGAR runs past the " + std::string(what) + ": it reaches position " + std::to_string(last) +
                    " of a " + what + " of length " + std::to_string(length));
    };
    if (uses_query && qi_ - 1 + count > static_cast<std::int64_t>(query_.size()))
        past("query", qi_ - 1 + count, query_.size());
    if (uses_target && ti_ - 1 + count > static_cast<std::int64_t>(target_.size()))
        past("target", ti_ - 1 + count, target_.size());
    const SubstitutionMatrix& matrix = scheme_.matrix;
    stats_.length += count;
    if (op == 'I' || op == 'D') {
        const bool insertion = op == 'I';
        for (std::uint32_t k = 0; k < count; ++k) {
            if (insertion) (void)residue_index(query_, qi_++, matrix, "query");
            else
                (void)residue_index(target_, ti_++, matrix, "target");
        }
        score_ -= (previous_ == op ? scheme_.gap_extend : scheme_.gap_open) +
                  static_cast<std::int64_t>(count - 1) * scheme_.gap_extend;
        stats_.gaps += count;
        if (previous_ != op) ++stats_.gap_opens;
        previous_ = op;
        return;
    }
    for (std::uint32_t k = 0; k < count; ++k) {
        const int x = residue_index(query_, qi_, matrix, "query");
        const int y = residue_index(target_, ti_, matrix, "target");
        const char column = x == y ? '=' : 'X';
        if (op != 'M' && op != column)
            throw Error("CIGAR says '" + std::string(1, op) + "' at query position " + std::to_string(qi_) +
                        ", target position " + std::to_string(ti_) + " but the residues are " +
                        (x == y ? "identical" : "different"));
        const int s = matrix.score(x, y);
        score_ += s;
        stats_.identities += x == y;
        stats_.similarities += (x == y || s > 0);
        previous_ = column;
        ++qi_;
        ++ti_;
    }
}

}  // namespace alignscope
