// The teaching stepper on screen: the DP matrix as a table of numbers filling
// cell by cell, row by row or anti-diagonal by anti-diagonal, the three
// neighbours of the current cell marked with the ones it came from, the
// recurrence with its numbers underneath; then the traceback, step by step.
#pragma once

#include "views/heatmap/dp_stepper.hpp"

#include <QWidget>

#include <memory>
#include <optional>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QScrollArea;

namespace alignscope::ui {

class DpStepperGrid;

class DpStepperView : public QWidget {
    Q_OBJECT
public:
    explicit DpStepperView(QWidget* parent = nullptr);
    ~DpStepperView() override;

    // Normalised residues; throws alignscope::Error (too large, bad residue).
    void setPair(const std::string& query, const std::string& target, const ScoringScheme& scheme,
                 const AlignOptions& options);
    DpStepper* stepper() const { return stepper_.get(); }

    void setStep(FillStep step);
    void setShownState(DpState state);  // which matrix the table shows (E and F for affine gaps)
    DpState shownState() const { return shown_; }
    void stepForward();
    void stepBack();
    void toStart();
    void toEnd();
    // Explain a cell of the user's choosing (a click on the table does this).
    void explainCell(std::int64_t i, std::int64_t j);

    QString recurrenceText() const;
    QString statusText() const;
    QWidget* grid() const;
    // The rectangle of cell (i, j) in grid() coordinates.
    QRect cellRect(std::int64_t i, std::int64_t j) const;

    static constexpr int cell_width = 46;
    static constexpr int cell_height = 28;

signals:
    void stepped();

private:
    void refresh();

    std::unique_ptr<DpStepper> stepper_;
    DpState shown_ = DpState::H;
    std::optional<std::pair<std::int64_t, std::int64_t>> explained_;
    DpStepperGrid* grid_ = nullptr;
    QScrollArea* scroll_ = nullptr;
    QComboBox* step_ = nullptr;
    QComboBox* state_ = nullptr;
    QLabel* status_ = nullptr;
    QPlainTextEdit* text_ = nullptr;
};

}  // namespace alignscope::ui
