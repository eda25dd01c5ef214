// The full H/E/F matrices of a small problem for the teaching views. The fill is
// a plain triple of recurrences over the whole matrix; the alignment and its
// path come from align_reference, so the views show exactly what it returns.
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include "dp_core.hpp"

#include <algorithm>
#include <cstdio>

namespace alignscope {

namespace {

std::string millions(std::uint64_t cells) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f M", static_cast<double>(cells) / 1e6);
    return text;
}

}  // namespace

DpMatrices compute_dp_matrices(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                               const AlignOptions& options, std::uint64_t cell_limit) {
    detail::check_scheme(scheme);
    const auto rows = static_cast<std::uint64_t>(query.size()) + 1;
    const auto cols = static_cast<std::uint64_t>(target.size()) + 1;
    if (rows * cols > cell_limit)
        throw Error("the DP matrices of a " + std::to_string(query.size()) + " x " + std::to_string(target.size()) +
                    " residue pair have " + millions(rows * cols) + " cells, more than the limit of " +
                    millions(cell_limit) + " cells; choose shorter sequences or a region of them");

    DpMatrices d;
    AlignOptions with_path = options;
    with_path.traceback = true;
    d.alignment = align_reference(query, target, scheme, with_path);  // also checks emptiness and residues
    const EncodedSequence q = encode(query, scheme.matrix, "the query");
    const EncodedSequence t = encode(target, scheme.matrix, "the target");

    d.rows = static_cast<std::int64_t>(rows);
    d.cols = static_cast<std::int64_t>(cols);
    const std::int64_t o = scheme.gap_open;
    const std::int64_t e = scheme.gap_extend;
    constexpr std::int64_t none = DpMatrices::minus_infinity;
    const bool local = options.mode == AlignmentMode::Local;
    const bool semi = options.mode == AlignmentMode::SemiGlobal;
    // Free boundaries score 0 and are not gap states: the residues they skip are
    // outside the alignment.
    const bool row0_free = local || (semi && options.free_ends.query_begin);
    const bool col0_free = local || (semi && options.free_ends.target_begin);
    const auto size = static_cast<std::size_t>(rows * cols);
    d.H.assign(size, none);
    d.E.assign(size, none);
    d.F.assign(size, none);
    auto at = [&d](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * d.cols + j); };

    d.H[at(0, 0)] = 0;
    for (std::int64_t j = 1; j < d.cols; ++j) {
        const std::int64_t boundary = row0_free ? 0 : -(o + (j - 1) * e);
        d.H[at(0, j)] = boundary;
        if (!row0_free) d.E[at(0, j)] = boundary;
    }
    for (std::int64_t i = 1; i < d.rows; ++i) {
        const std::int64_t boundary = col0_free ? 0 : -(o + (i - 1) * e);
        d.H[at(i, 0)] = boundary;
        if (!col0_free) d.F[at(i, 0)] = boundary;
    }
    for (std::int64_t i = 1; i < d.rows; ++i) {
        for (std::int64_t j = 1; j < d.cols; ++j) {
            const std::int64_t e_cell = std::max(d.H[at(i, j - 1)] - o, d.E[at(i, j - 1)] - e);
            const std::int64_t f_cell = std::max(d.H[at(i - 1, j)] - o, d.F[at(i - 1, j)] - e);
            const std::int64_t diag = d.H[at(i - 1, j - 1)] + scheme.matrix.score(q[static_cast<std::size_t>(i - 1)],
                                                                                  t[static_cast<std::size_t>(j - 1)]);
            std::int64_t h = std::max({diag, e_cell, f_cell});
            if (local) h = std::max<std::int64_t>(h, 0);
            d.H[at(i, j)] = h;
            d.E[at(i, j)] = e_cell;
            d.F[at(i, j)] = f_cell;
        }
    }

    // The path: the cell after each alignment column, preceded by the cell the
    // alignment starts from (a boundary or (0, 0)) except in local mode, where
    // the alignment starts fresh at its first cell.
    const Alignment& a = d.alignment;
    if (!a.cigar.empty()) {
        std::int64_t i = a.query_begin - 1;
        std::int64_t j = a.target_begin - 1;
        if (!local) d.path.emplace_back(i, j);
        for (const CigarOp& op : a.cigar.ops()) {
            for (std::uint32_t k = 0; k < op.length; ++k) {
                if (op.op != 'D') ++i;
                if (op.op != 'I') ++j;
                d.path.emplace_back(i, j);
            }
        }
    }
    if (!options.traceback) {
        d.alignment.cigar = Cigar();
        d.alignment.query_aligned.clear();
        d.alignment.target_aligned.clear();
        d.alignment.stats = AlignmentStats();
    }
    return d;
}

}  // namespace alignscope
