// Drawing the visible part of a kernel timeline.
#include "views/timeline/timeline_plottable.hpp"

#include <QFontMetrics>
#include <QHash>

#include <algorithm>
#include <cmath>

namespace alignscope::ui {

TimelinePlottable::TimelinePlottable(QCPAxis* keyAxis, QCPAxis* valueAxis) : QCPAbstractPlottable(keyAxis, valueAxis) {
    setSelectable(QCP::stNone);  // selection is the view's own (one event, not data ranges)
    setAntialiasedFill(false);
}

void TimelinePlottable::setIndex(std::shared_ptr<const TimelineIndex> index) {
    index_ = std::move(index);
    selected_.reset();
}

QColor TimelinePlottable::colourOf(std::uint32_t event) const {
    const TimelineEvent& e = index_->events()[event];
    int hue = 0;
    if (colouring_ == Colouring::ByStream) {
        hue = (index_->lane_of(event) * 137) % 360;  // golden-angle steps keep neighbours apart
    } else {
        hue = static_cast<int>(qHash(QString::fromStdString(e.name)) % 360u);
    }
    // Copies are pale so kernels stand out.
    if (e.category == "copy") return QColor::fromHsv(hue, 70, 235);
    return QColor::fromHsv(hue, 170, 215);
}

double TimelinePlottable::selectTest(const QPointF& pos, bool onlySelectable, QVariant* details) const {
    Q_UNUSED(details)
    if (onlySelectable || !index_ || !mKeyAxis || !mValueAxis) return -1;
    const int lane = static_cast<int>(std::lround(mValueAxis->pixelToCoord(pos.y())));
    const double t = mKeyAxis->pixelToCoord(pos.x()) * 1000.0;
    const double tolerance = std::abs(mKeyAxis->pixelToCoord(pos.x() + 3) - mKeyAxis->pixelToCoord(pos.x())) * 1000.0;
    return index_->event_at(lane, t, tolerance) ? 0.0 : -1.0;
}

QCPRange TimelinePlottable::getKeyRange(bool& foundRange, QCP::SignDomain inSignDomain) const {
    Q_UNUSED(inSignDomain)
    foundRange = index_ && !index_->events().empty();
    return foundRange ? QCPRange(0, std::max(index_->span_ns(), 1.0) / 1000.0) : QCPRange();
}

QCPRange TimelinePlottable::getValueRange(bool& foundRange, QCP::SignDomain inSignDomain,
                                          const QCPRange& inKeyRange) const {
    Q_UNUSED(inSignDomain)
    Q_UNUSED(inKeyRange)
    foundRange = index_ && !index_->lanes().empty();
    return foundRange ? QCPRange(-0.5, double(index_->lanes().size()) - 0.5) : QCPRange();
}

void TimelinePlottable::draw(QCPPainter* painter) {
    drawn_spans_ = 0;
    if (!index_ || index_->events().empty()) return;
    QCPAxis* key = mKeyAxis.data();
    QCPAxis* value = mValueAxis.data();
    const QCPRange keys = key->range();
    TimeMapping mapping;
    mapping.time_lo = keys.lower * 1000.0;
    mapping.time_hi = keys.upper * 1000.0;
    mapping.pixel_lo = key->coordToPixel(keys.lower);
    mapping.pixel_hi = key->coordToPixel(keys.upper);
    if (mapping.pixel_hi <= mapping.pixel_lo || mapping.time_hi <= mapping.time_lo) return;

    const QRect clip = clipRect();
    const QFontMetrics metrics(painter->font());
    painter->setRenderHint(QPainter::Antialiasing, false);
    const int lanes = static_cast<int>(index_->lanes().size());
    const QCPRange shown = value->range();
    const int lane_lo = std::max(0, static_cast<int>(std::floor(std::min(shown.lower, shown.upper))));
    const int lane_hi = std::min(lanes - 1, static_cast<int>(std::ceil(std::max(shown.lower, shown.upper))));
    QRectF selected_rect;
    for (int lane = lane_lo; lane <= lane_hi; ++lane) {
        const double y0 = value->coordToPixel(lane - bar_half_height);
        const double y1 = value->coordToPixel(lane + bar_half_height);
        const double top = std::min(y0, y1), height = std::abs(y1 - y0);
        index_->visible_spans(lane, mapping, 1.0, spans_);
        for (const TimelineSpan& span : spans_) {
            // Clamped to the clip so far-off coordinates never reach the painter.
            const double x0 = std::max(mapping.to_pixel(span.start), double(clip.left()) - 1);
            const double x1 = std::min(mapping.to_pixel(span.end), double(clip.right()) + 1);
            const QRectF rect(x0, top, std::max(x1 - x0, 1.0), height);
            const QColor colour = colourOf(span.first);
            painter->fillRect(rect, span.count > 1 ? colour.darker(115) : colour);
            ++drawn_spans_;
            if (span.count == 1 && rect.width() > 24) {
                const QString name = QString::fromStdString(index_->events()[span.first].name);
                const QString text = metrics.elidedText(name, Qt::ElideRight, static_cast<int>(rect.width()) - 6);
                if (text.size() > 1) {
                    painter->setPen(colour.lightness() > 150 ? Qt::black : Qt::white);
                    painter->drawText(rect.adjusted(3, 0, -3, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
                }
            }
            if (selected_ && span.count == 1 && span.first == *selected_) selected_rect = rect;
        }
    }
    if (selected_ && selected_rect.isNull()) {
        // The selected event may sit inside a merged run: outline it on its own.
        const std::uint32_t e = *selected_;
        const int lane = index_->lane_of(e);
        if (lane >= lane_lo && lane <= lane_hi) {
            const double x0 = mapping.to_pixel(index_->start_of(e)), x1 = mapping.to_pixel(index_->end_of(e));
            const double y0 = value->coordToPixel(lane - bar_half_height),
                         y1 = value->coordToPixel(lane + bar_half_height);
            selected_rect = QRectF(QPointF(std::max(x0, double(clip.left()) - 3), std::min(y0, y1)),
                                   QPointF(std::min(std::max(x1, x0 + 1), double(clip.right()) + 3), std::max(y0, y1)));
        }
    }
    if (!selected_rect.isNull()) {
        painter->setPen(QPen(Qt::black, 2));
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(selected_rect.adjusted(-1, -1, 1, 1));
    }
}

void TimelinePlottable::drawLegendIcon(QCPPainter* painter, const QRectF& rect) const {
    painter->fillRect(rect.adjusted(1, 3, -1, -3), QColor::fromHsv(200, 170, 215));
}

}  // namespace alignscope::ui
