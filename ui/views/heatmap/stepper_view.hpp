// The teaching stepper on screen: the DP matrix as a table of numbers filling
// cell by cell, row by row or anti-diagonal by anti-diagonal, the three
// neighbours of the current cell marked with the ones it came from (in the E
// and F tables, the cell each reads), the recurrence with its numbers
// underneath; then the traceback through H, E and F, step by step; played
// at a chosen speed or stepped by key (anywhere in the window while the
// stepper is visible).
#pragma once

#include "views/heatmap/dp_stepper.hpp"

#include <QWidget>

#include <memory>
#include <optional>
#include <vector>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QTimer;
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
    // Play: one step forward every 1/speed seconds until the end of the fill,
    // then pauses (End stops there too); played again, through the traceback.
    void setPlaying(bool playing);
    bool playing() const;
    void setSpeed(double stepsPerSecond);  // one of speeds(); others snap to the nearest
    double speed() const;
    static std::vector<double> speeds();
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
    // The parts the constructor assembles.
    QHBoxLayout* makeChoices();
    QHBoxLayout* makeSteps();
    void makeKeys();
    // One step of Play (its timer's tick).
    void playStep();
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
    QPushButton* play_ = nullptr;
    QComboBox* speed_ = nullptr;
    QTimer* play_timer_ = nullptr;
};

}  // namespace alignscope::ui
