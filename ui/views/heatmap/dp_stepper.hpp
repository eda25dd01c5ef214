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
    std::string explainTraceback() const;  // what the last traceback step did and why

    // "-∞" or the score in user units ("12", "-3.5").
    std::string format(std::int64_t scaled) const;

private:
    std::pair<std::int64_t, std::int64_t> cellAt(std::int64_t k) const;  // k-th inner cell in the current order
    std::int64_t rankOf(std::int64_t i, std::int64_t j) const;
    std::size_t at(std::int64_t i, std::int64_t j) const { return static_cast<std::size_t>(i * cols_ + j); }

    std::string query_, target_;
    ScoringScheme scheme_;
    AlignOptions options_;
    std::int64_t rows_ = 0, cols_ = 0;
    std::vector<std::int64_t> H_, E_, F_;
    std::vector<std::uint8_t> q_, t_;
    DpMatrices reference_;
    FillStep step_ = FillStep::Cell;
    std::int64_t filled_ = 0;
    std::int64_t traceback_ = 0;
};

}  // namespace alignscope::ui
