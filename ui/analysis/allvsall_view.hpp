// The workbench's all-against-all: every pair of a loaded set scored (global,
// local or semi-global, any matrix; worker thread, progress, cancel), shown as
// a matrix heatmap ordered by the single-linkage clusters at the threshold
// with the cluster boundaries drawn, zoomable to single cells; hovering names
// the pair, clicking opens its alignment (traced then when it was not); the
// histogram of normalised scores with the threshold line; exports of the
// distance matrix (PHYLIP, CSV) and of the picture (PNG, SVG). Each run is
// kept in the project.
#pragma once

#include "analysis/allvsall_run.hpp"
#include "analysis/analysis_job.hpp"
#include "views/result_view.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>

#include <optional>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPBars;
class QCPItemStraightLine;
class QGridLayout;
class QHBoxLayout;
class QSplitter;

namespace alignscope::ui {

class AlignmentView;

class AllVsAllView : public ResultView {
    Q_OBJECT
public:
    enum class Shown { Normalised, Score, Distance };

    explicit AllVsAllView(ProjectDocument& document, QWidget* parent = nullptr);

    void showJob(qint64) override {}
    bool canShow(const store::JobInfo&) const override { return false; }
    qint64 defaultJob(const std::vector<store::JobInfo>&) const override { return 0; }

    // Starts the job the controls describe; false (lastError) when it cannot.
    bool run();
    void cancel() { job_.cancel(); }
    bool showAnalysis(qint64 analysisId);
    void setShown(Shown shown);
    // Opens the alignment of records i and j (file order); false when there is
    // no such pair or a pair is being traced.
    bool openPair(std::uint32_t i, std::uint32_t j);
    // The records drawn at matrix position (row, column) and what hovering there says.
    std::optional<std::pair<std::uint32_t, std::uint32_t>> recordsAt(int row, int column) const;
    QString describeCell(int row, int column) const;
    // Pixel position of the centre of matrix cell (row, column) in plot().
    QPoint cellCentre(int row, int column) const;
    bool exportMatrix(const QString& path);  // .phy, .phylip or .csv
    bool exportImage(const QString& path);   // .png, .svg or .pdf: the matrix plot

    QString lastError() const { return last_error_; }
    AnalysisJob& job() { return job_; }
    AnalysisJob& pairJob() { return pair_job_; }
    const AllVsAllResults* results() const { return results_ ? &*results_ : nullptr; }
    qint64 shownAnalysis() const { return shown_analysis_; }
    QComboBox* setChoice() const { return set_; }
    QComboBox* modeChoice() const { return mode_; }
    QLineEdit* matrixEdit() const { return matrix_; }
    QDoubleSpinBox* gapOpen() const { return gap_open_; }
    QDoubleSpinBox* gapExtend() const { return gap_extend_; }
    QDoubleSpinBox* threshold() const { return threshold_; }
    QComboBox* deviceChoice() const { return device_; }
    QCustomPlot* plot() const { return plot_; }
    QCustomPlot* histogram() const { return histogram_; }
    QCPBars* histogramBars() const { return bars_; }
    QCPItemStraightLine* thresholdLine() const { return threshold_line_; }
    QLabel* pairLabel() const { return pair_label_; }
    QLabel* statusLabel() const { return status_; }
    AlignmentView* alignmentView() const { return alignment_; }
    int boundaryLines() const { return boundary_lines_; }

signals:
    void runFinished(int state, QString message);
    void pairOpened(quint32 i, quint32 j, bool wasTraced);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // The parts the constructor assembles.
    void makeSettings();
    QGridLayout* settingsGrid();
    QHBoxLayout* shownRow();
    void makeMatrixPlot();
    QSplitter* makePairPanel();
    void connectSettings();
    void connectJob();

    const struct SequenceInput* document_input() const;
    void refreshInputs();
    void refreshSaved();
    void finished(AnalysisJob::State state, const QString& message, double seconds);
    void draw();
    void drawHistogram();
    double valueOf(std::size_t i, std::size_t j) const;
    std::optional<std::pair<int, int>> cellAtPixel(const QPoint& pixel) const;

    AnalysisJob job_, pair_job_;
    std::optional<AllVsAllResults> results_;
    std::shared_ptr<AllVsAllResults> running_;
    std::shared_ptr<const std::vector<Sequence>> records_;  // of the shown results, when loaded
    std::optional<AllVsAllRequest> request_;                // what the shown results were run with
    qint64 shown_analysis_ = 0;
    Shown shown_ = Shown::Normalised;
    QString last_error_;
    int boundary_lines_ = 0;

    QComboBox* set_ = nullptr;
    QComboBox* mode_ = nullptr;
    QLineEdit* matrix_ = nullptr;
    QDoubleSpinBox* gap_open_ = nullptr;
    QDoubleSpinBox* gap_extend_ = nullptr;
    QDoubleSpinBox* threshold_ = nullptr;
    QComboBox* device_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QComboBox* value_ = nullptr;
    QComboBox* saved_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QCPColorMap* map_ = nullptr;
    QCPColorScale* scale_ = nullptr;
    QCustomPlot* histogram_ = nullptr;
    QCPBars* bars_ = nullptr;
    QCPItemStraightLine* threshold_line_ = nullptr;
    QLabel* pair_label_ = nullptr;
    AlignmentView* alignment_ = nullptr;
};

}  // namespace alignscope::ui
