// The teaching stepper's model: the DP fill of a small pair revealed one cell,
// one row or one anti-diagonal (the GPU's wavefront order) at a time, each cell
// explained by its recurrence with the numbers filled in, then the traceback
// step by step. The values come from the stepper's own fill of the recurrences
// (checked cell by cell against compute_dp_matrices); the path is the engine's.
#pragma once

#include <alignscope/align/dp_heatmap.hpp>
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace alignscope::ui {

enum class FillStep { Cell, Row, AntiDiagonal };

// Where a cell's H came from (several when they tie).
struct CellOrigin {
    bool diagonal = false;  // H(i-1,j-1) + s(q_i, t_j)
    bool left = false;      // E(i,j): a gap in the query, from H/E(i,j-1)
    bool up = false;        // F(i,j): a gap in the target, from H/F(i-1,j)
    bool zero = false;      // local mode's restart
    bool boundary = false;  // row 0 or column 0
};

// One term of a cell's recurrence: the cell and matrix it reads, the term's
// value with its score or penalty applied, and whether it gave the maximum.
struct DpDependency {
    DpState state = DpState::H;  // the matrix read
    std::int64_t i = 0, j = 0;
    std::int64_t term = 0;  // scaled, e.g. H(i,j-1) - open
    bool used = false;
    std::string label;  // "H(2,3) - open"
};

// A path cell of the traceback through the three matrices: the matrix the
// path arrives in (from the alignment's end) and the one it leaves by (towards
// its start). They differ where the path switches, e.g. H(i,j) = E(i,j) where
// a gap ends.
struct TraceCell {
    std::int64_t i = 0, j = 0;
    DpState enter = DpState::H;
    DpState leave = DpState::H;
    bool switches() const { return enter != leave; }
};

class DpStepper {
public:
    // Pairs up to `cell_limit` cells; residues normalised. Throws Error.
    DpStepper(std::string query, std::string target, const ScoringScheme& scheme, const AlignOptions& options,
              std::uint64_t cell_limit = 250'000);

    const std::string& query() const { return query_; }
    const std::string& target() const { return target_; }
    std::int64_t rows() const { return rows_; }  // query length + 1
    std::int64_t cols() const { return cols_; }
    const ScoringScheme& scheme() const { return scheme_; }
    const AlignOptions& options() const { return options_; }
    const DpMatrices& reference() const { return reference_; }  // the engine's matrices, path and alignment

    // The fill. Cells of row 0 and column 0 are filled from the start; the
    // order (row by row, or anti-diagonal by anti-diagonal) follows the step.
    void setStep(FillStep step);
    FillStep step() const { return step_; }
    std::int64_t innerCells() const { return (rows_ - 1) * (cols_ - 1); }
    std::int64_t filled() const { return filled_; }  // inner cells filled so far
    // One step of the current kind forward (+1) or back (-1); in the traceback
    // phase one path cell. Returns false at either end.
    bool advance(int direction);
    void toStart();
    void toFillEnd();  // all filled, traceback not begun
    void toEnd();      // traceback done
    bool isFilled(std::int64_t i, std::int64_t j) const;
    // The cell filled last (nullopt before the first); in the traceback, the
    // path cell reached last.
    std::optional<std::pair<std::int64_t, std::int64_t>> current() const;

    // The inner cells the last step filled: one cell, the filled part of a
    // row, or the whole anti-diagonal (all cells one GPU wavefront step
    // computes); empty before the first step and in the traceback.
    std::vector<std::pair<std::int64_t, std::int64_t>> lastStepCells() const;
    // The terms of inner cell (i, j) of `state`'s recurrence: H reads the
    // diagonal H, E and F of its cell; E reads H and E of the cell to the left;
    // F reads H and F of the cell above (affine gaps; linear gaps read H only).
    std::vector<DpDependency> dependencies(DpState state, std::int64_t i, std::int64_t j) const;

    // The stepper's own values (scaled); minus infinity where impossible.
    std::int64_t value(DpState state, std::int64_t i, std::int64_t j) const;
    CellOrigin origin(std::int64_t i, std::int64_t j) const;
    // The recurrence of cell (i, j) with its numbers, in user units.
    std::string explain(std::int64_t i, std::int64_t j) const;

    // The traceback, walked from the path's last cell back to its first.
    bool inTraceback() const { return traceback_ > 0; }
    std::int64_t tracebackSteps() const { return static_cast<std::int64_t>(reference_.path.size()); }
    std::int64_t tracebackDone() const { return traceback_; }
    // Path cells visited so far, last cell first.
    std::vector<std::pair<std::int64_t, std::int64_t>> tracedCells() const;
    // The whole path with its matrices, last cell first (tracedCells' order);
    // the first tracebackDone() entries are the ones walked so far.
    const std::vector<TraceCell>& trace() const { return trace_; }
    std::string explainTraceback() const;  // what the last traceback step did and why

    // "-∞" or the score in user units ("12", "-3.5").
    std::string format(std::int64_t scaled) const;

private:
    std::pair<std::int64_t, std::int64_t> cellAt(std::int64_t k) const;
    void buildTrace();  // k-th inner cell in the current order
    std::int64_t rankOf(std::int64_t i, std::int64_t j) const;
    std::size_t at(std::int64_t i, std::int64_t j) const { return static_cast<std::size_t>(i * cols_ + j); }

    std::string query_, target_;
    ScoringScheme scheme_;
    AlignOptions options_;
    std::int64_t rows_ = 0, cols_ = 0;
    std::vector<std::int64_t> H_, E_, F_;
    std::vector<std::uint8_t> q_, t_;
    DpMatrices reference_;
    std::vector<TraceCell> trace_;
    FillStep step_ = FillStep::Cell;
    std::int64_t filled_ = 0;
    std::int64_t traceback_ = 0;
};

}  // namespace alignscope::ui
