// The CPU reference aligners: linear-memory score passes (Gotoh recurrences in
// 64-bit integers), the reverse pass that finds where an alignment begins, the
// full-matrix traceback, and the pipeline that ties them together.
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include "dp_core.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace alignscope {
namespace detail {

namespace {

// Gap of length k >= 1 (0 for k == 0).
inline std::int64_t gap(std::int64_t open, std::int64_t extend, std::int64_t k) {
    return k > 0 ? open + (k - 1) * extend : 0;
}

// The speed of a score pass is bound by its one dependency along a row, E.
// Since open >= extend, opening a gap right after a gap of the same kind never
// beats extending it, so E(i,j) = max(max(diagonal, F, [0])(i,j-1) - open,
// E(i,j-1) - extend): the chain through E is one subtraction and one max, and
// H's max over E comes last (0.40 -> 0.54 GCUPS measured, 1000 x 1000 protein).
PassEnd local_pass(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                   const ScoringScheme& scheme, CellCounter& counter) {
    const std::int64_t o = scheme.gap_open;
    const std::int64_t e = scheme.gap_extend;
    const int* scores = scheme.matrix.scores().data();
    const int size = scheme.matrix.size();
    const auto width = static_cast<std::size_t>(n) + 1;
    std::vector<std::int64_t> H(width, 0);
    std::vector<std::int64_t> F(width, minus_infinity);
    std::int64_t* h_row = H.data();
    std::int64_t* f_row = F.data();

    PassEnd best;
    for (std::int64_t i = 1; i <= m; ++i) {
        const int* sub = scores + static_cast<std::ptrdiff_t>(query[i - 1]) * size;
        std::int64_t diag = 0;  // H(i-1, j-1)
        std::int64_t e_run = minus_infinity;
        std::int64_t open_e = -o;  // H(i, 0) - o
        std::int64_t row_max = 0;
        for (std::int64_t j = 1; j <= n; ++j) {
            const std::int64_t f = std::max(h_row[j] - o, f_row[j] - e);
            const std::int64_t rest = std::max(std::max(diag + sub[target[j - 1]], std::int64_t{0}), f);
            e_run = std::max(open_e, e_run - e);
            const std::int64_t h = std::max(rest, e_run);
            open_e = rest - o;
            diag = h_row[j];
            h_row[j] = h;
            f_row[j] = f;
            row_max = std::max(row_max, h);
        }
        // Rows are visited in increasing i, so a later row only wins a tie with a
        // smaller j: the first maximum of the row is the candidate.
        if (row_max > 0 && row_max >= best.score) {
            const std::int64_t j = std::find(h_row + 1, h_row + n + 1, row_max) - h_row;
            if (row_max > best.score || j < best.j) best = {row_max, i, j};
        }
        counter.add(static_cast<std::uint64_t>(n));
    }
    return best;
}

PassEnd bounded_pass(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                     const ScoringScheme& scheme, const Boundary& boundary, CellCounter& counter) {
    const std::int64_t o = scheme.gap_open;
    const std::int64_t e = scheme.gap_extend;
    const int* scores = scheme.matrix.scores().data();
    const int size = scheme.matrix.size();
    const auto width = static_cast<std::size_t>(n) + 1;
    std::vector<std::int64_t> H(width);
    std::vector<std::int64_t> F(width, minus_infinity);
    std::int64_t* h_row = H.data();
    std::int64_t* f_row = F.data();
    for (std::int64_t j = 0; j <= n; ++j) h_row[j] = boundary.row0_free ? 0 : -gap(o, e, j);
    const std::int64_t corner_top_right = h_row[n];  // H(0, n)

    // Best of the last column over rows 1..m; the first maximum has the smallest i.
    std::int64_t col_best = minus_infinity;
    std::int64_t col_i = 0;
    for (std::int64_t i = 1; i <= m; ++i) {
        const int* sub = scores + static_cast<std::ptrdiff_t>(query[i - 1]) * size;
        std::int64_t diag = h_row[0];
        h_row[0] = boundary.col0_free ? 0 : -gap(o, e, i);
        std::int64_t e_run = minus_infinity;
        std::int64_t open_e = h_row[0] - o;
        for (std::int64_t j = 1; j <= n; ++j) {
            const std::int64_t f = std::max(h_row[j] - o, f_row[j] - e);
            const std::int64_t rest = std::max(diag + sub[target[j - 1]], f);
            e_run = std::max(open_e, e_run - e);
            const std::int64_t h = std::max(rest, e_run);
            open_e = rest - o;
            diag = h_row[j];
            h_row[j] = h;
            f_row[j] = f;
        }
        if (h_row[n] > col_best) {
            col_best = h_row[n];
            col_i = i;
        }
        counter.add(static_cast<std::uint64_t>(n));
    }

    // Candidates in the order of the tie-break: smallest j first, then smallest i.
    PassEnd best{h_row[n], m, n};
    if (boundary.last_row_free) {
        const std::int64_t* row_max = std::max_element(h_row + 1, h_row + n + 1);  // first maximum
        if (*row_max >= best.score) best = {*row_max, m, row_max - h_row};
        if (boundary.boundary_ends && h_row[0] >= best.score) best = {h_row[0], m, 0};
    }
    if (boundary.last_col_free) {
        if (col_best > best.score || (col_best == best.score && best.j == n && col_i < best.i))
            best = {col_best, col_i, n};
        if (boundary.boundary_ends &&
            (corner_top_right > best.score || (corner_top_right == best.score && best.j == n)))
            best = {corner_top_right, 0, n};
    }
    return best;
}

std::vector<std::uint8_t> reversed_prefix(const std::uint8_t* residues, std::int64_t length) {
    return std::vector<std::uint8_t>(std::make_reverse_iterator(residues + length),
                                     std::make_reverse_iterator(residues));
}

std::string kernel_name(const ScoringScheme& scheme, AlignmentMode mode, const char* family) {
    return KernelName{mode, scheme.linear(), family, 0, KernelWidth::S64}.format();
}

}  // namespace

void check_scheme(const ScoringScheme& scheme) {
    if (scheme.matrix.size() == 0) throw Error("scoring scheme has no substitution matrix");
    if (scheme.gap_open < 0 || scheme.gap_extend < 0)
        throw Error("gap penalties must not be negative (gap open " + std::to_string(scheme.gap_open) +
                    ", gap extend " + std::to_string(scheme.gap_extend) + ", scaled)");
    if (scheme.gap_extend > scheme.gap_open)
        throw Error("gap extend penalty (" + std::to_string(scheme.gap_extend) +
                    ") is larger than the gap open penalty (" + std::to_string(scheme.gap_open) +
                    "): a gap of length k must cost open + (k-1)*extend");
}

PassEnd forward_pass(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                     const ScoringScheme& scheme, bool local, const Boundary& boundary, CellCounter& counter) {
    return local ? local_pass(query, m, target, n, scheme, counter)
                 : bounded_pass(query, m, target, n, scheme, boundary, counter);
}

Region find_region(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                   const ScoringScheme& scheme, const AlignOptions& options, CellCounter& counter) {
    Region region;
    const bool local = options.mode == AlignmentMode::Local;
    Boundary forward;
    Boundary reverse;  // anchored at the end cell; its free last row/column are our free begins
    if (options.mode == AlignmentMode::SemiGlobal) {
        const FreeEndGaps& ends = options.free_ends;
        forward = {ends.query_begin, ends.target_begin, ends.query_end, ends.target_end, false};
        reverse = {false, false, ends.query_begin, ends.target_begin, true};
    }
    const PassEnd end = forward_pass(query, m, target, n, scheme, local, forward, counter);
    region.score = end.score;
    if (local && end.score == 0) {
        region.empty = true;
        return region;
    }
    region.query_end = end.i;
    region.target_end = end.j;
    region.query_begin = 1;
    region.target_begin = 1;
    if (!local && !reverse.last_row_free && !reverse.last_col_free) return region;  // begins at (0, 0)

    // The reverse pass runs the same code on the reversed prefixes, so its end
    // tie-break (smallest j', then smallest i') picks the largest target begin,
    // then the largest query begin. In local mode every optimal alignment inside
    // the prefixes ends at our end cell, because that cell is the tie-break's
    // first among all optimal cells.
    const std::vector<std::uint8_t> q_rev = reversed_prefix(query, end.i);
    const std::vector<std::uint8_t> t_rev = reversed_prefix(target, end.j);
    const PassEnd start = forward_pass(q_rev.data(), end.i, t_rev.data(), end.j, scheme, local, reverse, counter);
    if (start.score != end.score)
        throw Error("internal error in the reference aligner: reverse pass scored " + std::to_string(start.score) +
                    ", forward pass " + std::to_string(end.score));
    // Reversed cell (i', j') is the cell after the begin: begin = end - i' + 1.
    region.query_begin = end.i - start.i + 1;
    region.target_begin = end.j - start.j + 1;
    return region;
}

std::int64_t global_traceback(const std::uint8_t* query, std::int64_t rows, const std::uint8_t* target,
                              std::int64_t cols, const ScoringScheme& scheme, std::int64_t top_open,
                              std::int64_t bottom_open, Cigar& cigar, CellCounter& counter) {
    const std::int64_t o = scheme.gap_open;
    const std::int64_t e = scheme.gap_extend;
    if (rows == 0) {
        cigar.push('D', static_cast<std::uint32_t>(cols));
        return -gap(o, e, cols);
    }
    if (cols == 0) {
        cigar.push('I', static_cast<std::uint32_t>(rows));
        return -gap(std::min(top_open, bottom_open), e, rows);
    }

    // One byte per cell: bits 0-1 where H came from (0 diagonal, 1 E, 2 F),
    // bit 2 E extended a gap, bit 3 F extended a gap.
    enum : std::uint8_t { from_e = 1, from_f = 2, e_extends = 4, f_extends = 8 };
    const int* scores = scheme.matrix.scores().data();
    const int size = scheme.matrix.size();
    const auto width = static_cast<std::size_t>(cols);
    std::vector<std::uint8_t> trace(static_cast<std::size_t>(rows) * width);
    std::vector<std::int64_t> H(width + 1);
    std::vector<std::int64_t> F(width + 1, minus_infinity);
    for (std::int64_t j = 0; j <= cols; ++j) H[static_cast<std::size_t>(j)] = -gap(o, e, j);
    // A run of 'I' into the bottom-right corner may cost bottom_open to open:
    // a separate state for the last column, used only at the corner.
    const bool corner_run = bottom_open != o;
    std::vector<std::uint8_t> corner_extends(corner_run ? static_cast<std::size_t>(rows) + 1 : 0);
    std::int64_t corner_f = minus_infinity;

    for (std::int64_t i = 1; i <= rows; ++i) {
        const int* sub = scores + static_cast<std::ptrdiff_t>(query[i - 1]) * size;
        std::uint8_t* trace_row = trace.data() + static_cast<std::size_t>(i - 1) * width;
        if (corner_run) {
            const std::int64_t open = H[width] - bottom_open;
            const std::int64_t extend = corner_f - e;
            corner_extends[static_cast<std::size_t>(i)] = extend >= open;
            corner_f = std::max(open, extend);
        }
        std::int64_t diag = H[0];
        std::int64_t left = -gap(top_open, e, i);
        H[0] = left;
        std::int64_t e_run = minus_infinity;
        for (std::int64_t j = 1; j <= cols; ++j) {
            const auto col = static_cast<std::size_t>(j);
            std::uint8_t bits = 0;
            const std::int64_t e_open = left - o;
            const std::int64_t e_ext = e_run - e;
            if (e_ext >= e_open) bits |= e_extends;
            e_run = std::max(e_open, e_ext);
            const std::int64_t f_open = H[col] - o;
            const std::int64_t f_ext = F[col] - e;
            if (f_ext >= f_open) bits |= f_extends;
            const std::int64_t f = std::max(f_open, f_ext);
            // Preference on ties: diagonal, then E, then F.
            std::int64_t h = diag + sub[target[j - 1]];
            if (e_run > h) {
                h = e_run;
                bits |= from_e;
            }
            if (f > h) {
                h = f;
                bits = static_cast<std::uint8_t>((bits & ~from_e) | from_f);
            }
            trace_row[j - 1] = bits;
            diag = H[col];
            H[col] = h;
            F[col] = f;
            left = h;
        }
        counter.add(static_cast<std::uint64_t>(cols));
    }

    // Any: at H, free to leave by any move; GapD/GapI: inside an E/F run.
    enum class State { Any, GapD, GapI, CornerGapI };
    State state = State::Any;
    std::int64_t score = H[width];
    if (corner_run && corner_f > score) {
        score = corner_f;
        state = State::CornerGapI;
    }
    Cigar reversed;
    std::int64_t i = rows;
    std::int64_t j = cols;
    while (i > 0 && j > 0) {
        const std::uint8_t bits = trace[static_cast<std::size_t>(i - 1) * width + static_cast<std::size_t>(j - 1)];
        switch (state) {
            case State::Any:
                if ((bits & 3) == 0) {
                    reversed.push(query[i - 1] == target[j - 1] ? '=' : 'X');
                    --i;
                    --j;
                } else {
                    state = (bits & 3) == from_e ? State::GapD : State::GapI;
                }
                break;
            case State::GapD:
                reversed.push('D');
                state = (bits & e_extends) ? State::GapD : State::Any;
                --j;
                break;
            case State::GapI:
                reversed.push('I');
                state = (bits & f_extends) ? State::GapI : State::Any;
                --i;
                break;
            case State::CornerGapI:
                reversed.push('I');
                state = corner_extends[static_cast<std::size_t>(i)] ? State::CornerGapI : State::Any;
                --i;
                break;
        }
    }
    // What is left runs along row 0 or column 0 from the top-left corner.
    reversed.push('I', static_cast<std::uint32_t>(i));
    reversed.push('D', static_cast<std::uint32_t>(j));
    reversed.reverse();
    for (const CigarOp& op : reversed.ops()) cigar.push(op.op, op.length);
    return score;
}

Alignment align_pair(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                     const AlignOptions& options, std::uint64_t matrix_cell_limit, CellCounter& counter,
                     bool complete) {
    check_scheme(scheme);
    if (query.empty()) throw Error("the query sequence is empty: nothing to align");
    if (target.empty()) throw Error("the target sequence is empty: nothing to align");
    const EncodedSequence q = encode(query, scheme.matrix, "the query");
    const EncodedSequence t = encode(target, scheme.matrix, "the target");
    const auto m = static_cast<std::int64_t>(q.size());
    const auto n = static_cast<std::int64_t>(t.size());

    const Region region = find_region(q.data(), m, t.data(), n, scheme, options, counter);
    Alignment a;
    a.mode = options.mode;
    a.score = region.score;
    a.query_begin = region.query_begin;
    a.query_end = region.query_end;
    a.target_begin = region.target_begin;
    a.target_end = region.target_end;
    a.query_length = m;
    a.target_length = n;
    a.device = "cpu-ref";

    const std::int64_t rows = region.query_end - region.query_begin + 1;
    const std::int64_t cols = region.target_end - region.target_begin + 1;
    const auto cells = static_cast<std::uint64_t>(rows + 1) * static_cast<std::uint64_t>(cols + 1);
    const bool full_matrix = cells <= matrix_cell_limit;
    a.kernel = kernel_name(scheme, options.mode, !options.traceback || full_matrix ? "scalar" : "myersmiller");
    if (options.traceback && !region.empty) {
        const std::uint8_t* q_region = q.data() + (region.query_begin - 1);
        const std::uint8_t* t_region = t.data() + (region.target_begin - 1);
        if (full_matrix)
            global_traceback(q_region, rows, t_region, cols, scheme, scheme.gap_open, scheme.gap_open, a.cigar,
                             counter);
        else
            myers_miller(q_region, rows, t_region, cols, scheme, a.cigar, counter);
        if (complete) complete_alignment(a, query, target, scheme);
        // ksw2's self-check: the path must be worth what the passes said.
        const std::int64_t path_score = rescore(a.cigar, query, target, a.query_begin, a.target_begin, scheme);
        if (path_score != a.score)
            throw Error("internal error in the reference aligner: traceback " + a.cigar.to_string() + " scores " +
                        std::to_string(path_score) + ", the DP " + std::to_string(a.score));
    }
    counter.report();
    return a;
}

}  // namespace detail

Alignment align_reference(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                          const AlignOptions& options, std::uint64_t traceback_cell_limit) {
    detail::CellCounter counter;
    return detail::align_pair(query, target, scheme, options, traceback_cell_limit, counter);
}

ScoreAndEnd score_forward(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                          const ScoringScheme& scheme, const AlignOptions& options) {
    detail::check_scheme(scheme);
    if (m <= 0 || n <= 0) throw Error("score_forward: both sequences must be non-empty");
    detail::Boundary boundary;
    if (options.mode == AlignmentMode::SemiGlobal) {
        const FreeEndGaps& ends = options.free_ends;
        boundary = {ends.query_begin, ends.target_begin, ends.query_end, ends.target_end, false};
    }
    detail::CellCounter counter;
    const detail::PassEnd end =
        detail::forward_pass(query, m, target, n, scheme, options.mode == AlignmentMode::Local, boundary, counter);
    return {end.score, end.i, end.j};
}

}  // namespace alignscope
