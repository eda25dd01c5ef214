// Pictures of a view: PNG at a chosen size and resolution, SVG and PDF as
// vector drawings (QCustomPlot's own painter for plots, the widget's paint
// code through QSvgGenerator / QPdfWriter otherwise). Used by File › Export
// Image… and `alignscope --screenshot`, which pick the format by extension.
#pragma once

#include <QDialog>
#include <QSize>
#include <QString>

class QLineEdit;
class QSpinBox;
class QLabel;

namespace alignscope::ui {

enum class ImageFormat { Png, Svg, Pdf };

// By the file's extension (.png, .svg, .pdf; case-insensitive). Throws
// alignscope::Error naming the file otherwise.
ImageFormat image_format_for(const QString& path);

// The part of a view worth a picture: its plot when it shows one (the
// heatmap, the GCUPS curves, the timeline), else the view itself.
QWidget* image_content(QWidget* view);

// Writes `widget` (laid out at `size` pixels for the drawing; PNG pixels are
// size × dpi/96) to `path` in the format its extension names. Throws
// alignscope::Error (unknown extension, unwritable file).
void write_widget_image(QWidget* widget, const QString& path, QSize size, int dpi = 96);

// File › Export Image…: the file (its extension picks the format), the size
// and, for PNG, the resolution.
class ExportImageDialog : public QDialog {
    Q_OBJECT
public:
    ExportImageDialog(QWidget* content, const QString& suggested_path, QWidget* parent = nullptr);
    QString path() const;
    QSize imageSize() const;
    int dpi() const;
    // Writes the picture; false (and the reason in error()) when it cannot.
    bool save();
    QString error() const { return error_; }

private:
    QWidget* content_;
    QLineEdit* path_;
    QSpinBox* width_;
    QSpinBox* height_;
    QSpinBox* dpi_;
    QLabel* note_;
    QString error_;
};

}  // namespace alignscope::ui
