// The window's DP view (id "heatmap"): the DP heatmap (views/heatmap) of one
// of the job's alignments, the one chosen in the alignment list (the first by
// default, or the number in the spin box), and for pairs small enough to teach
// with, a "Step through the DP" tab with the stepper on the same pair. Jobs
// that saved heatmaps of their own show the first of those; a long-pair job
// shows its stage-1 overview with the alignment's path (never its sequences'
// matrix), or when it kept none (CPU devices) the pair recomputed if small.
#pragma once

#include "views/job_result_view.hpp"

class QSpinBox;
class QTabWidget;

namespace alignscope::ui {

class DpHeatmapView;
class DpStepperView;

class JobHeatmapView : public JobResultView {
    Q_OBJECT
public:
    JobHeatmapView(ProjectDocument& document, QWidget* parent = nullptr);

    bool canShow(const store::JobInfo& job) const override {
        return job.counts.alignments > 0 || job.counts.heatmaps > 0;
    }
    void showAlignmentRow(qint64 jobId, qint64 row) override;
    bool settled() const override;

    qint64 row() const { return row_; }
    DpHeatmapView& heatmap() const { return *heatmap_; }
    DpStepperView& stepper() const { return *stepper_; }
    QTabWidget& tabs() const { return *tabs_; }
    // Whether the stepper tab can be used for the pair shown.
    bool stepperAvailable() const;
    void showStepper();

    // Pairs up to this many DP cells can be stepped through (a table of
    // numbers bigger than this teaches nothing).
    static constexpr std::uint64_t stepper_cell_limit = 40'000;
    // A long pair without a saved overview is drawn again from its sequences
    // (block maxima computed on a worker) up to this many cells.
    static constexpr std::uint64_t long_recompute_cell_limit = 1'000'000'000;

protected:
    void load(const store::JobInfo* job) override;

private:
    void prepareStepper();

    QTabWidget* tabs_ = nullptr;
    DpHeatmapView* heatmap_ = nullptr;
    DpStepperView* stepper_ = nullptr;
    QSpinBox* row_box_ = nullptr;
    qint64 row_ = 0;
    qint64 requested_job_ = 0;
    std::optional<AlignedPair> pair_;
    bool stepper_ready_ = false;
};

}  // namespace alignscope::ui
