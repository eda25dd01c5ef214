// Image export: raster through QWidget::grab at a device pixel ratio, vectors
// through QCustomPlot::toPainter or QWidget::render on a vector paint device.
#include "image_export.hpp"

#include <alignscope/error.hpp>

#include <qcustomplot.h>

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPdfWriter>
#include <QPushButton>
#include <QSpinBox>
#include <QSvgGenerator>
#include <QToolButton>

#include <cmath>

namespace alignscope::ui {

ImageFormat image_format_for(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == "png") return ImageFormat::Png;
    if (suffix == "svg") return ImageFormat::Svg;
    if (suffix == "pdf") return ImageFormat::Pdf;
    throw Error(path.toStdString() + ": unknown image format '." + suffix.toStdString() + "' (use .png, .svg or .pdf)");
}

QWidget* image_content(QWidget* view) {
    if (!view) return nullptr;
    // The largest visible plot: the view's picture without its controls.
    QCustomPlot* best = nullptr;
    for (QCustomPlot* plot : view->findChildren<QCustomPlot*>())
        if (plot->isVisibleTo(view) && (!best || plot->width() * plot->height() > best->width() * best->height()))
            best = plot;
    return best ? static_cast<QWidget*>(best) : view;
}

namespace {

// Lays the widget out at `size` for the drawing, and back afterwards.
class SizedFor {
public:
    SizedFor(QWidget* widget, QSize size) : widget_(widget), old_(widget->size()) {
        if (size.isValid() && size != old_) widget_->resize(size);
        if (auto* plot = qobject_cast<QCustomPlot*>(widget_)) plot->replot(QCustomPlot::rpImmediateRefresh);
    }
    ~SizedFor() {
        if (widget_->size() != old_) widget_->resize(old_);
    }

private:
    QWidget* widget_;
    QSize old_;
};

void paint_vector(QWidget* widget, QPainter& painter, QSize size) {
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        // QCustomPlot draws its layers through the painter: lines and text stay vectors.
        QPaintDevice* device = painter.device();
        painter.end();
        QCPPainter cp;
        if (!cp.begin(device)) throw Error("cannot draw the plot");
        cp.setMode(QCPPainter::pmVectorized);
        cp.setMode(QCPPainter::pmNoCaching);
        plot->toPainter(&cp, size.width(), size.height());
        cp.end();
        return;
    }
    // render() calls the widgets' paint code with this painter (no cached pixmap).
    widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren | QWidget::DrawWindowBackground);
}

}  // namespace

void write_widget_image(QWidget* widget, const QString& path, QSize size, int dpi) {
    if (!widget) throw Error("nothing to draw");
    const ImageFormat format = image_format_for(path);
    if (!size.isValid() || size.width() < 16 || size.height() < 16) size = widget->size();
    if (dpi < 24 || dpi > 2400) throw Error("resolution " + std::to_string(dpi) + " dpi: use 24 to 2400");
    SizedFor sized(widget, size);
    switch (format) {
        case ImageFormat::Png: {
            if (dpi == 96 && !qobject_cast<QCustomPlot*>(widget)) {
                // One image pixel per screen pixel: exactly what the screen shows.
                if (!widget->grab().save(path, "PNG")) throw Error(path.toStdString() + ": cannot write the PNG file");
                return;
            }
            const double ratio = dpi / 96.0;
            QImage image(QSize(int(std::lround(size.width() * ratio)), int(std::lround(size.height() * ratio))),
                         QImage::Format_ARGB32_Premultiplied);
            image.setDevicePixelRatio(ratio);
            image.fill(Qt::white);
            {
                QPainter painter(&image);
                if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
                    QCPPainter cp;
                    painter.end();
                    cp.begin(&image);
                    plot->toPainter(&cp, size.width(), size.height());
                    cp.end();
                } else {
                    widget->render(&painter, QPoint(), QRegion(),
                                   QWidget::DrawChildren | QWidget::DrawWindowBackground);
                }
            }
            image.setDevicePixelRatio(1);
            const int dots_per_metre = int(std::lround(dpi / 0.0254));
            image.setDotsPerMeterX(dots_per_metre);
            image.setDotsPerMeterY(dots_per_metre);
            if (!image.save(path, "PNG")) throw Error(path.toStdString() + ": cannot write the PNG file");
            return;
        }
        case ImageFormat::Svg: {
            QSvgGenerator svg;
            svg.setFileName(path);
            svg.setSize(size);
            svg.setViewBox(QRect(QPoint(0, 0), size));
            svg.setResolution(96);
            svg.setTitle(widget->window()->windowTitle());
            svg.setDescription(QStringLiteral("AlignScope"));
            QPainter painter;
            if (!painter.begin(&svg)) throw Error(path.toStdString() + ": cannot write the SVG file");
            paint_vector(widget, painter, size);
            if (painter.isActive()) painter.end();
            break;
        }
        case ImageFormat::Pdf: {
            QPdfWriter pdf(path);
            pdf.setResolution(96);
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            pdf.setPageSize(
                QPageSize(QSizeF(size.width() * 72.0 / 96.0, size.height() * 72.0 / 96.0), QPageSize::Point));
            pdf.setCreator(QStringLiteral("AlignScope"));
            QPainter painter;
            if (!painter.begin(&pdf)) throw Error(path.toStdString() + ": cannot write the PDF file");
            paint_vector(widget, painter, size);
            if (painter.isActive()) painter.end();
            break;
        }
    }
    if (!QFileInfo(path).exists() || QFileInfo(path).size() == 0)
        throw Error(path.toStdString() + ": cannot write the file");
}

ExportImageDialog::ExportImageDialog(QWidget* content, const QString& suggested_path, QWidget* parent)
    : QDialog(parent), content_(content) {
    setObjectName("exportImageDialog");
    setWindowTitle(tr("Export image"));
    path_ = new QLineEdit(suggested_path, this);
    path_->setObjectName("imagePath");
    path_->setToolTip(tr("The file; its extension picks the format: .png (pixels), .svg or .pdf (vector drawings)"));
    auto* browse = new QToolButton(this);
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Choose the file"));
    auto* path_row = new QHBoxLayout;
    path_row->addWidget(path_, 1);
    path_row->addWidget(browse);
    width_ = new QSpinBox(this);
    width_->setObjectName("imageWidth");
    height_ = new QSpinBox(this);
    height_->setObjectName("imageHeight");
    for (QSpinBox* box : {width_, height_}) {
        box->setRange(16, 8192);
        box->setSuffix(tr(" px"));
    }
    width_->setValue(content ? content->width() : 800);
    height_->setValue(content ? content->height() : 600);
    width_->setToolTip(tr("Width of the drawing, in screen pixels (1/96 inch)"));
    height_->setToolTip(tr("Height of the drawing, in screen pixels (1/96 inch)"));
    dpi_ = new QSpinBox(this);
    dpi_->setObjectName("imageDpi");
    dpi_->setRange(24, 2400);
    dpi_->setValue(96);
    dpi_->setSuffix(tr(" dpi"));
    dpi_->setToolTip(tr("PNG only: 96 dpi gives one image pixel per screen pixel, 300 dpi about three for print"));
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(tr("&File:"), path_row);
    form->addRow(tr("&Width:"), width_);
    form->addRow(tr("&Height:"), height_);
    form->addRow(tr("&Resolution:"), dpi_);
    form->addRow(note_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
    auto update_note = [this] {
        const QString suffix = QFileInfo(path_->text()).suffix().toLower();
        dpi_->setEnabled(suffix == "png");
        if (suffix == "png")
            note_->setText(tr("PNG, %1 × %2 pixels")
                               .arg(std::lround(width_->value() * dpi_->value() / 96.0))
                               .arg(std::lround(height_->value() * dpi_->value() / 96.0)));
        else if (suffix == "svg" || suffix == "pdf")
            note_->setText(tr("%1 vector drawing: lines and text stay sharp at any zoom").arg(suffix.toUpper()));
        else
            note_->setText(tr("Use .png, .svg or .pdf"));
    };
    connect(path_, &QLineEdit::textChanged, this, update_note);
    for (QSpinBox* box : {width_, height_, dpi_}) connect(box, &QSpinBox::valueChanged, this, update_note);
    update_note();
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString chosen =
            QFileDialog::getSaveFileName(this, tr("Export image"), path_->text(),
                                         tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"));
        if (!chosen.isEmpty()) path_->setText(chosen);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (save()) accept();
        else
            note_->setText(QStringLiteral("<span style=\"color:#b02020\">%1</span>").arg(error_.toHtmlEscaped()));
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString ExportImageDialog::path() const { return path_->text(); }
QSize ExportImageDialog::imageSize() const { return {width_->value(), height_->value()}; }
int ExportImageDialog::dpi() const { return dpi_->value(); }

bool ExportImageDialog::save() {
    try {
        write_widget_image(content_, path(), imageSize(), dpi());
        error_.clear();
        return true;
    } catch (const std::exception& e) {
        error_ = QString::fromUtf8(e.what());
        return false;
    }
}

}  // namespace alignscope::ui
