// The kernel timeline as a QCustomPlot plottable: keys are microseconds since
// the first event, values are lane numbers. It draws only the spans of the
// visible time range that TimelineIndex hands out (sub-pixel events merged), so
// a million events pan and zoom as fast as a few hundred.
#pragma once

#include "views/timeline/timeline_index.hpp"

#include <qcustomplot.h>

#include <memory>
#include <optional>

namespace alignscope::ui {

class TimelinePlottable : public QCPAbstractPlottable {
    Q_OBJECT
public:
    enum class Colouring { ByKernelName, ByStream };

    TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis);

    void setIndex(std::shared_ptr<const TimelineIndex> index);
    const TimelineIndex* index() const { return index_.get(); }
    void setColouring(Colouring colouring) { colouring_ = colouring; }
    Colouring colouring() const { return colouring_; }
    void setSelectedEvent(std::optional<std::uint32_t> event) { selected_ = event; }
    std::optional<std::uint32_t> selectedEvent() const { return selected_; }
    QColor colourOf(std::uint32_t event) const;
    // Rectangles the last draw() painted (merged runs count once).
    std::size_t lastDrawnSpans() const { return drawn_spans_; }

    // Half the height of a lane's bars, in lane units.
    static constexpr double bar_half_height = 0.38;

    double selectTest(const QPointF& pos, bool onlySelectable, QVariant* details = nullptr) const override;
    QCPRange getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool& foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange& inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter* painter) override;
    void drawLegendIcon(QCPPainter* painter, const QRectF& rect) const override;

private:
    std::shared_ptr<const TimelineIndex> index_;
    Colouring colouring_ = Colouring::ByKernelName;
    std::optional<std::uint32_t> selected_;
    std::size_t drawn_spans_ = 0;
    mutable std::vector<TimelineSpan> spans_;  // reused between draws
};

}  // namespace alignscope::ui
