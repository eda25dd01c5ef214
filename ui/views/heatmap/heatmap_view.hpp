// The DP heatmap: H (or E, F) as a colour map with the optimal path drawn over
// it, cell values on hover, the sequences along the axes. Small pairs show the
// exact matrices; larger ones a grid of block maxima that the engine computes
// for the visible region at screen resolution (compute_dp_heatmap) and
// computes again, finer, when the user zooms. Heatmaps a job saved are shown
// as saved; those with blocks of unequal size (a long-pair job's stage-1
// overview) are drawn one colour-map cell per block, the axes in block units
// with ticks at sequence positions mapped through the blocks' edges, so
// opening one costs only its grid, however large the pair.
#pragma once

#include "views/alignment/aligned_pair.hpp"

#include <alignscope/align/dp_heatmap.hpp>
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/store/results.hpp>

#include <QColor>
#include <QWidget>

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPCurve;
class QComboBox;
class QLabel;
class QMouseEvent;
class QThread;
class QTimer;

namespace alignscope::ui {

class DpHeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit DpHeatmapView(QWidget* parent = nullptr);
    ~DpHeatmapView() override;  // cancels and joins a computation in flight

    // Pairs up to this many DP cells are shown exactly.
    static constexpr std::uint64_t exact_cell_limit = 1'000'000;

    // The exact matrices of a small pair; `query`/`target` label the axes.
    void setMatrices(DpMatrices dp, std::string query, std::string target, int scale);
    // Any pair (normalised residues): exact when small, else downsampled by the
    // engine and refined on zoom. The path is the alignment's (computed when
    // none is given and the pair is small enough to align here).
    void setPair(std::string query, std::string target, const ScoringScheme& scheme, const AlignOptions& options,
                 std::optional<Alignment> alignment = std::nullopt);
    void setAlignedPair(const AlignedPair& pair);
    void loadFromProject(const store::Project& project, std::int64_t job_id, std::int64_t row = 0);
    // A heatmap the project saved (already block maxima, no refinement).
    void setStoredHeatmap(const store::Heatmap& heatmap);
    // Nothing shown; `message` in the status line.
    void clear(const QString& message = {});
    // The saved heatmap on screen, if any.
    const store::Heatmap* storedHeatmap() const { return stored_ ? &*stored_ : nullptr; }
    // Plot coordinates of a DP cell (row i, column j) under the current mode
    // (block units for a saved heatmap with edges).
    QPointF plotPoint(double i, double j) const;
    // Rows of the current large pair saved by an earlier pass (a long-pair
    // job's special rows): each zoomed pass starts from the nearest one above
    // the region instead of row 0.
    void setSavedRows(std::vector<DpRowCheckpoint> rows);

    void setState(DpState state);  // H, E or F
    DpState state() const { return state_; }
    bool isDownsampled() const { return mode_ != Mode::Exact; }
    // A downsampled grid is being computed, or will be once a resize settles.
    bool busy() const;
    // The downsampled grid on screen (large pairs).
    const DpHeatmap* currentHeatmap() const { return heatmap_.get(); }
    // Zooms to a region of the matrix (rows = query, columns = target); large
    // pairs compute it again at screen resolution.
    void setVisibleRegion(const DpRegion& region);

    QCustomPlot* plot() const { return plot_; }
    QCPColorMap* colourMap() const { return map_; }
    QCPCurve* pathCurve() const { return path_; }
    QString hoverText(const QPointF& pos) const;
    static QColor pathColour() { return {230, 20, 20}; }

signals:
    void heatmapReady();  // a downsampled grid arrived
    void failed(QString message);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    enum class Mode { Empty, Exact, Large, Stored };
    void showExact();
    void showGrid();
    void requestRegion();
    void setPathFromAlignment(const Alignment& alignment);
    void updateSequenceTicks();
    void setBlockTickers(const store::Heatmap* heatmap);  // null: plain position tickers
    void onMouseMove(QMouseEvent* event);
    void cancelWork();

    QCustomPlot* plot_ = nullptr;
    QCPColorMap* map_ = nullptr;
    QCPColorScale* scale_bar_ = nullptr;
    QCPCurve* path_ = nullptr;
    QComboBox* states_ = nullptr;
    QLabel* status_ = nullptr;
    QTimer* refine_ = nullptr;

    Mode mode_ = Mode::Empty;
    DpState state_ = DpState::H;
    std::string query_, target_;
    int scale_ = 1;
    std::optional<DpMatrices> dp_;
    // Large pairs.
    std::shared_ptr<const std::string> large_query_, large_target_;
    ScoringScheme scheme_;
    AlignOptions options_;
    std::shared_ptr<DpHeatmap> heatmap_;
    std::shared_ptr<const std::vector<DpRowCheckpoint>> saved_rows_;
    std::optional<store::Heatmap> stored_;
    std::array<std::int64_t, 7> pending_{};  // region, grid and state being computed
    std::uint64_t generation_ = 0;
    std::shared_ptr<CancellationToken> cancel_;
    QThread* worker_ = nullptr;      // the newest pass, while it runs
    std::vector<QThread*> threads_;  // every pass not yet finished (older ones were cancelled)
    // One pass computes at a time: a new pass waits here for the cancelled one.
    std::shared_ptr<std::mutex> pass_lock_ = std::make_shared<std::mutex>();
};

}  // namespace alignscope::ui
