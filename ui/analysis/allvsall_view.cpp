// AllVsAllView: controls above; the matrix heatmap on the left; the score
// histogram, the hovered or chosen pair and its alignment on the right.
#include "analysis/allvsall_view.hpp"

#include "analysis/saved_analyses.hpp"
#include "file_dialogs.hpp"
#include "image_export.hpp"
#include "project_document.hpp"
#include "views/alignment/alignment_view.hpp"

#include <alignscope/error.hpp>

#include <qcustomplot.h>

#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace alignscope::ui {

namespace {

QDoubleSpinBox* spin(double low, double high, double step, double value, int decimals, const QString& tip) {
    auto* box = new QDoubleSpinBox;
    box->setRange(low, high);
    box->setSingleStep(step);
    box->setDecimals(decimals);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}

QPushButton* button(const QString& text, const QString& tip) {
    auto* b = new QPushButton(text);
    b->setToolTip(tip);
    return b;
}

}  // namespace

AllVsAllView::AllVsAllView(ProjectDocument& document, QWidget* parent) : ResultView(document, parent) {
    makeSettings();
    makeMatrixPlot();
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(plot_);
    split->addWidget(makePairPanel());
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({620, 620});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(settingsGrid());
    auto* progress_row = new QHBoxLayout;
    progress_row->addWidget(progress_);
    progress_row->addWidget(status_, 1);
    layout->addLayout(progress_row);
    layout->addLayout(shownRow());
    layout->addWidget(split, 1);
    // The window may be narrower than the controls' row: the tab must not
    // widen the window (the controls then share what there is).
    setMinimumSize(320, 240);

    connectSettings();
    connectJob();
    connect(&document, &ProjectDocument::opened, this, [this] {
        refreshInputs();
        refreshSaved();
    });
    connect(&document, &ProjectDocument::inputsChanged, this, &AllVsAllView::refreshInputs);
    refreshInputs();
    refreshSaved();
}

void AllVsAllView::makeSettings() {
    set_ = new QComboBox;
    set_->setToolTip(tr("The loaded sequence set whose pairs are all aligned"));
    mode_ = new QComboBox;
    mode_->setToolTip(tr("Global (Needleman-Wunsch), local (Smith-Waterman) or semi-global (free end gaps)"));
    mode_->addItem(tr("global"), int(AlignmentMode::Global));
    mode_->addItem(tr("local"), int(AlignmentMode::Local));
    mode_->addItem(tr("semi-global"), int(AlignmentMode::SemiGlobal));
    matrix_ = new QLineEdit(QStringLiteral("BLOSUM62"));
    matrix_->setObjectName(QStringLiteral("allvsallMatrix"));
    matrix_->setToolTip(tr("Substitution matrix: a built-in name (BLOSUM62, EDNAFULL, ...) or a matrix file"));
    gap_open_ = spin(0, 100, 0.5, 10, 1, tr("Gap open: a gap of length k costs open + (k-1) x extend"));
    gap_extend_ = spin(0, 100, 0.5, 1, 1, tr("Gap extend: the cost of each further gap position"));
    threshold_ = spin(-1, 1, 0.05, 0.5, 2,
                      tr("Normalised score (score / the smaller self-score) at which pairs are traced back and "
                         "records cluster (single linkage)"));
    device_ = new QComboBox;
    device_->setToolTip(tr("The device that aligns the pairs"));
    for (const auto& d : analysis_devices().devices())
        if (d.available) device_->addItem(QString::fromStdString(d.id + "  " + d.name), QString::fromStdString(d.id));
    if (const int cpu = device_->findData(QStringLiteral("cpu")); cpu >= 0) device_->setCurrentIndex(cpu);
    run_ = button(tr("Run"), tr("Align every pair of the set on a worker thread"));
    cancel_ = button(tr("Cancel"), tr("Stop the running all-against-all job"));
    cancel_->setEnabled(false);
    progress_ = new QProgressBar;
    progress_->setRange(0, 100);
    status_ = new QLabel;
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
}

QGridLayout* AllVsAllView::settingsGrid() {
    // Two rows of settings, Run and Cancel at the end of the second.
    auto* grid = new QGridLayout;
    const std::pair<QString, QWidget*> rows[2][4] = {
        {{tr("Set"), set_}, {tr("Mode"), mode_}, {tr("Matrix"), matrix_}, {tr("Threshold"), threshold_}},
        {{tr("Gap open"), gap_open_}, {tr("Gap extend"), gap_extend_}, {tr("Device"), device_}, {QString(), nullptr}}};
    for (int r = 0; r < 2; ++r)
        for (int k = 0; k < 4; ++k)
            if (rows[r][k].second) {
                grid->addWidget(new QLabel(rows[r][k].first), r, 2 * k);
                grid->addWidget(rows[r][k].second, r, 2 * k + 1);
            }
    grid->addWidget(run_, 1, 6);
    grid->addWidget(cancel_, 1, 7);
    for (int k = 1; k < 8; k += 2) grid->setColumnStretch(k, 1);
    return grid;
}

QHBoxLayout* AllVsAllView::shownRow() {
    // What the matrix colours, which kept run it shows, and its exports.
    value_ = new QComboBox;
    value_->setToolTip(tr("What the matrix colours"));
    value_->addItem(tr("normalised score"));
    value_->addItem(tr("score"));
    value_->addItem(tr("distance (1 - normalised)"));
    saved_ = new QComboBox;
    saved_->setToolTip(tr("All-against-all runs kept in the project"));
    auto* phylip = button(tr("PHYLIP…"), tr("Export the distance matrix as a PHYLIP square matrix"));
    auto* csv = button(tr("CSV…"), tr("Export the distance matrix as CSV"));
    auto* image = button(tr("Image…"), tr("Export the matrix picture as PNG or SVG"));
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Show")));
    row->addWidget(value_);
    row->addWidget(new QLabel(tr("Run")));
    row->addWidget(saved_, 1);
    row->addWidget(phylip);
    row->addWidget(csv);
    row->addWidget(image);

    connect(value_, &QComboBox::currentIndexChanged, this, [this](int i) { setShown(Shown(i)); });
    connect(saved_, &QComboBox::activated, this, [this](int i) {
        const qint64 id = saved_->itemData(i).toLongLong();
        if (id > 0 && id != shown_analysis_) showAnalysis(id);
    });
    auto export_matrix = [this](const QString& filter, const QString& suffix) {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export Distance Matrix"),
                                                          QStringLiteral("distances.") + suffix, filter);
        if (!path.isEmpty() && !exportMatrix(path)) status_->setText(last_error_);
    };
    connect(phylip, &QPushButton::clicked, this,
            [export_matrix] { export_matrix(tr("PHYLIP (*.phy *.phylip)"), "phy"); });
    connect(csv, &QPushButton::clicked, this, [export_matrix] { export_matrix(tr("CSV (*.csv)"), "csv"); });
    connect(image, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export Matrix Image"), QStringLiteral("matrix.png"),
                                                          tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
        if (!path.isEmpty() && !exportImage(path)) status_->setText(last_error_);
    });
    return row;
}

void AllVsAllView::makeMatrixPlot() {
    plot_ = new QCustomPlot;
    plot_->setObjectName(QStringLiteral("allvsallMatrix"));
    plot_->setMinimumSize(300, 300);
    plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot_->setMouseTracking(true);
    plot_->installEventFilter(this);
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    map_->setInterpolate(false);
    scale_ = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(0, 1, scale_);
    map_->setColorScale(scale_);
    map_->setGradient(QCPColorGradient::gpThermal);
    plot_->yAxis->setRangeReversed(true);
    plot_->xAxis->setLabel(tr("record (cluster order)"));
    plot_->yAxis->setLabel(tr("record (cluster order)"));
}

QSplitter* AllVsAllView::makePairPanel() {
    // The histogram of normalised scores above the hovered pair and its alignment.
    histogram_ = new QCustomPlot;
    histogram_->setObjectName(QStringLiteral("allvsallHistogram"));
    histogram_->setMinimumHeight(160);
    bars_ = new QCPBars(histogram_->xAxis, histogram_->yAxis);
    bars_->setPen(Qt::NoPen);
    bars_->setBrush(QColor(70, 110, 180));
    threshold_line_ = new QCPItemStraightLine(histogram_);
    threshold_line_->setPen(QPen(QColor(200, 30, 30), 2, Qt::DashLine));
    histogram_->xAxis->setLabel(tr("normalised score"));
    histogram_->yAxis->setLabel(tr("pairs"));
    pair_label_ = new QLabel(tr("hover over the matrix for a pair; click to open its alignment"));
    pair_label_->setWordWrap(true);
    pair_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    alignment_ = new AlignmentView;
    auto* panel = new QSplitter(Qt::Vertical);
    panel->addWidget(histogram_);
    panel->addWidget(pair_label_);
    panel->addWidget(alignment_);
    panel->setStretchFactor(2, 1);
    return panel;
}

void AllVsAllView::connectSettings() {
    connect(run_, &QPushButton::clicked, this, [this] {
        if (!run()) status_->setText(last_error_);
    });
    connect(cancel_, &QPushButton::clicked, this, [this] { job_.cancel(); });
    connect(set_, &QComboBox::currentIndexChanged, this, [this] {
        // A nucleotide set gets a nucleotide matrix.
        if (const SequenceInput* in = document_input(); in && in->set) {
            const bool protein = in->set->alphabet == AlphabetKind::Protein;
            if (protein && matrix_->text() == "EDNAFULL") matrix_->setText("BLOSUM62");
            if (!protein && matrix_->text() == "BLOSUM62") matrix_->setText("EDNAFULL");
        }
    });
}

void AllVsAllView::connectJob() {
    connect(&job_, &AnalysisJob::progressed, this,
            [this](quint64 pairs, quint64 total, quint64 cells, quint64 cells_total, double seconds) {
                if (cells_total) progress_->setValue(int(100.0 * double(cells) / double(cells_total)));
                QString text = tr("aligning: %1 of %2 pairs, %3 s").arg(pairs).arg(total).arg(seconds, 0, 'f', 1);
                if (cells > 0 && cells_total > cells)
                    text +=
                        tr(", about %1 s left").arg(seconds * double(cells_total - cells) / double(cells), 0, 'f', 0);
                status_->setText(text);
            });
    connect(&job_, &AnalysisJob::finished, this, &AllVsAllView::finished);
}

const SequenceInput* AllVsAllView::document_input() const {
    const qint64 id = set_->currentData().toLongLong();
    return id > 0 ? document().input(id) : nullptr;
}

void AllVsAllView::refreshInputs() {
    const qint64 keep = set_->currentData().toLongLong();
    set_->clear();
    for (const auto& in : document().inputs())
        if (in.set) set_->addItem(tr("%1 (%2)").arg(in.label()).arg(in.set->records.size()), qint64(in.info.id));
    const int i = set_->findData(keep);
    if (i >= 0) set_->setCurrentIndex(i);
}

bool AllVsAllView::run() {
    if (job_.running()) {
        last_error_ = tr("an all-against-all job is running; cancel it or wait");
        return false;
    }
    const SequenceInput* in = document_input();
    if (!in || !in->set) {
        last_error_ = tr("Set: load a sequence file first");
        return false;
    }
    if (in->set->records.size() < 2) {
        last_error_ = tr("Set: %1 holds one sequence; all against all needs two or more").arg(in->label());
        return false;
    }
    auto request = std::make_shared<AllVsAllRequest>();
    request->records = std::shared_ptr<const std::vector<Sequence>>(in->set, &in->set->records);
    request->label = in->label().toStdString();
    if (const QString problem = path_text_problem(matrix_->text().trimmed()); !problem.isEmpty()) {
        last_error_ = tr("Matrix: the text %1").arg(problem);
        return false;
    }
    request->matrix = matrix_->text().trimmed().toStdString();
    request->gap_open = gap_open_->value();
    request->gap_extend = gap_extend_->value();
    request->mode = AlignmentMode(mode_->currentData().toInt());
    request->threshold = threshold_->value();
    request->device = device_->currentData().toString().toStdString();
    if (request->device.empty()) request->device = "cpu";
    try {
        allvsall_scheme(*request);
    } catch (const std::exception& e) {
        last_error_ = tr("Matrix: %1").arg(QString::fromStdString(e.what()));
        return false;
    }
    auto out = std::make_shared<AllVsAllResults>();
    running_ = out;
    request_ = *request;
    records_ = request->records;
    job_.start([request, out](JobContext& context) { *out = run_allvsall(*request, context); });
    run_->setEnabled(false);
    cancel_->setEnabled(true);
    progress_->setValue(0);
    status_->setText(tr("aligning every pair of %1 on %2").arg(in->label(), QString::fromStdString(request->device)));
    return true;
}

void AllVsAllView::finished(AnalysisJob::State state, const QString& message, double seconds) {
    run_->setEnabled(true);
    cancel_->setEnabled(false);
    if (state == AnalysisJob::State::Done) {
        results_ = *running_;
        shown_analysis_ = 0;
        progress_->setValue(100);
        QString note =
            tr("%1 pairs in %2 s on %3; %4 traced at normalised score ≥ %5; %6 clusters")
                .arg(results_->size() * (results_->size() - 1) / 2)
                .arg(results_->seconds, 0, 'f', 2)
                .arg(QString::fromStdString(results_->device))
                .arg(results_->traced.size())
                .arg(results_->threshold)
                .arg(results_->cluster.empty() ? 0
                                               : *std::max_element(results_->cluster.begin(), results_->cluster.end()));
        if (store::Project* project = document().project(); project && !project->read_only()) {
            try {
                shown_analysis_ =
                    project->add_analysis("allvsall",
                                          results_->label + " (" + std::to_string(results_->size()) + " sequences, " +
                                              results_->mode + ")",
                                          parameters_json(*results_).toStdString(), to_json(*results_).toStdString());
            } catch (const std::exception& e) {
                note += tr("; not kept in the project: %1").arg(QString::fromStdString(e.what()));
            }
        }
        status_->setText(note);
        refreshSaved();
        draw();
    } else {
        progress_->setValue(0);
        status_->setText(state == AnalysisJob::State::Cancelled
                             ? tr("all against all cancelled after %1 s").arg(seconds, 0, 'f', 1)
                             : tr("all against all failed: %1").arg(message));
    }
    running_.reset();
    emit runFinished(int(state), message);
}

void AllVsAllView::refreshSaved() {
    const store::Project* project = document().project();
    const QString error = list_saved_analyses(*saved_, project, "allvsall");
    if (!error.isEmpty()) status_->setText(error);
    if (!project) return;
    if (!shown_analysis_ && !results_ && saved_->count() && !job_.running()) {
        showAnalysis(saved_->itemData(saved_->count() - 1).toLongLong());
        return;
    }
    saved_->setCurrentIndex(saved_->findData(shown_analysis_));
}

bool AllVsAllView::showAnalysis(qint64 id) {
    store::Project* project = document().project();
    if (!project) return false;
    try {
        results_ = allvsall_results_from_json(QByteArray::fromStdString(project->analysis_results(id)));
        shown_analysis_ = id;
    } catch (const std::exception& e) {
        last_error_ = QString::fromStdString(e.what());
        status_->setText(last_error_);
        return false;
    }
    // Pairs can be traced when the set is loaded (same file name, same ids).
    records_.reset();
    request_.reset();
    for (const auto& in : document().inputs()) {
        if (!in.set || in.label().toStdString() != results_->label || in.set->records.size() != results_->size())
            continue;
        bool same = true;
        for (std::size_t k = 0; same && k < results_->size(); ++k) same = in.set->records[k].id == results_->ids[k];
        if (!same) continue;
        records_ = std::shared_ptr<const std::vector<Sequence>>(in.set, &in.set->records);
        AllVsAllRequest r;
        r.records = records_;
        r.label = results_->label;
        r.matrix = results_->matrix;
        r.gap_open = results_->gap_open;
        r.gap_extend = results_->gap_extend;
        r.mode = parse_mode(results_->mode);
        r.threshold = results_->threshold;
        r.device = results_->device;
        request_ = r;
        break;
    }
    saved_->setCurrentIndex(saved_->findData(id));
    draw();
    return true;
}

double AllVsAllView::valueOf(std::size_t i, std::size_t j) const {
    switch (shown_) {
        case Shown::Score: return results_->score(i, j);
        case Shown::Distance: return results_->distance(i, j);
        case Shown::Normalised: break;
    }
    return i == j ? 1.0 : results_->normalised(i, j);
}

void AllVsAllView::setShown(Shown shown) {
    shown_ = shown;
    if (value_->currentIndex() != int(shown)) value_->setCurrentIndex(int(shown));
    draw();
}

void AllVsAllView::draw() {
    for (int k = plot_->itemCount() - 1; k >= 0; --k) plot_->removeItem(k);
    boundary_lines_ = 0;
    if (!results_) {
        map_->data()->clear();
        plot_->replot();
        return;
    }
    const int n = int(results_->size());
    map_->data()->setSize(n, n);
    map_->data()->setRange(QCPRange(0, n - 1), QCPRange(0, n - 1));
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            map_->data()->setCell(c, r, valueOf(results_->order[std::size_t(r)], results_->order[std::size_t(c)]));
    map_->rescaleDataRange(true);
    scale_->axis()->setLabel(value_->currentText());
    map_->setGradient(shown_ == Shown::Distance ? QCPColorGradient(QCPColorGradient::gpThermal).inverted()
                                                : QCPColorGradient(QCPColorGradient::gpThermal));
    for (std::size_t b : results_->boundaries()) {
        for (bool vertical : {false, true}) {
            auto* line = new QCPItemLine(plot_);
            line->setPen(QPen(QColor(40, 200, 255), 1.5));
            const double at = double(b) - 0.5;
            line->start->setCoords(vertical ? at : -0.5, vertical ? -0.5 : at);
            line->end->setCoords(vertical ? at : n - 0.5, vertical ? n - 0.5 : at);
        }
        ++boundary_lines_;
    }
    plot_->xAxis->setRange(-0.5, n - 0.5);
    plot_->yAxis->setRange(-0.5, n - 0.5);
    plot_->replot();
    drawHistogram();
}

void AllVsAllView::drawHistogram() {
    const std::size_t n = results_->size();
    std::vector<double> values;
    values.reserve(n * (n - 1) / 2);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) values.push_back(results_->normalised(i, j));
    double low = std::min(results_->threshold, *std::min_element(values.begin(), values.end()));
    double high = std::max(results_->threshold, *std::max_element(values.begin(), values.end()));
    if (high <= low) high = low + 1;
    const int bins = 50;
    const double width = (high - low) / bins;
    QVector<double> keys(bins), counts(bins, 0);
    for (int b = 0; b < bins; ++b) keys[b] = low + (b + 0.5) * width;
    for (double v : values) counts[std::clamp(int((v - low) / width), 0, bins - 1)] += 1;
    bars_->setWidth(width);
    bars_->setData(keys, counts, true);
    threshold_line_->point1->setCoords(results_->threshold, 0);
    threshold_line_->point2->setCoords(results_->threshold, 1);
    histogram_->xAxis->setRange(low - width, high + width);
    histogram_->yAxis->setRange(0, *std::max_element(counts.begin(), counts.end()) * 1.1 + 1);
    histogram_->replot();
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> AllVsAllView::recordsAt(int row, int column) const {
    if (!results_ || row < 0 || column < 0 || row >= int(results_->size()) || column >= int(results_->size()))
        return std::nullopt;
    return std::pair{results_->order[std::size_t(row)], results_->order[std::size_t(column)]};
}

QString AllVsAllView::describeCell(int row, int column) const {
    const auto records = recordsAt(row, column);
    if (!records) return {};
    const auto [i, j] = *records;
    QString text = tr("%1 × %2: score %3, normalised %4, distance %5; clusters %6 and %7")
                       .arg(QString::fromStdString(results_->ids[i]), QString::fromStdString(results_->ids[j]))
                       .arg(results_->score(i, j))
                       .arg(i == j ? 1.0 : results_->normalised(i, j), 0, 'f', 3)
                       .arg(results_->distance(i, j), 0, 'f', 3)
                       .arg(results_->cluster[i])
                       .arg(results_->cluster[j]);
    if (i != j) {
        const auto t = results_->traced.find({std::min(i, j), std::max(i, j)});
        if (t != results_->traced.end() && t->second.stats.length > 0)
            text += tr("; traced: %1 % identity over %2 columns")
                        .arg(100.0 * double(t->second.stats.identities) / double(t->second.stats.length), 0, 'f', 1)
                        .arg(t->second.stats.length);
        else
            text += tr("; not traced yet (click to trace)");
    }
    return text;
}

QPoint AllVsAllView::cellCentre(int row, int column) const {
    return QPoint(int(plot_->xAxis->coordToPixel(column)), int(plot_->yAxis->coordToPixel(row)));
}

std::optional<std::pair<int, int>> AllVsAllView::cellAtPixel(const QPoint& pixel) const {
    if (!results_ || !plot_->axisRect()->rect().contains(pixel)) return std::nullopt;
    const int column = int(std::lround(plot_->xAxis->pixelToCoord(pixel.x())));
    const int row = int(std::lround(plot_->yAxis->pixelToCoord(pixel.y())));
    if (!recordsAt(row, column)) return std::nullopt;
    return std::pair{row, column};
}

bool AllVsAllView::eventFilter(QObject* watched, QEvent* event) {
    if (watched == plot_ && results_) {
        if (event->type() == QEvent::MouseMove) {
            const auto* e = static_cast<QMouseEvent*>(event);
            if (const auto cell = cellAtPixel(e->position().toPoint())) {
                const QString text = describeCell(cell->first, cell->second);
                pair_label_->setText(text);
                QToolTip::showText(e->globalPosition().toPoint(), text, plot_);
            }
        } else if (event->type() == QEvent::MouseButtonRelease) {
            const auto* e = static_cast<QMouseEvent*>(event);
            // A click, not the end of a drag.
            if (e->button() == Qt::LeftButton) {
                if (const auto cell = cellAtPixel(e->position().toPoint())) {
                    const auto [i, j] = *recordsAt(cell->first, cell->second);
                    if (i != j) openPair(i, j);
                }
            }
        }
    }
    return ResultView::eventFilter(watched, event);
}

bool AllVsAllView::openPair(std::uint32_t i, std::uint32_t j) {
    if (!results_ || i == j || i >= results_->size() || j >= results_->size()) return false;
    if (!records_ || !request_) {
        last_error_ = tr("load %1 to open the alignments of its pairs").arg(QString::fromStdString(results_->label));
        pair_label_->setText(last_error_);
        return false;
    }
    if (pair_job_.running()) {
        last_error_ = tr("a pair is being traced");
        return false;
    }
    const std::uint32_t a = std::min(i, j), b = std::max(i, j);
    const bool was_traced = results_->traced.count({a, b}) > 0;
    pair_label_->setText(tr("%1 × %2: %3")
                             .arg(QString::fromStdString(results_->ids[a]), QString::fromStdString(results_->ids[b]))
                             .arg(was_traced ? tr("opening the alignment") : tr("tracing back now")));
    auto request = std::make_shared<AllVsAllRequest>(*request_);
    auto out = std::make_shared<Alignment>();
    auto connection = std::make_shared<QMetaObject::Connection>();
    *connection =
        connect(&pair_job_, &AnalysisJob::finished, this,
                [this, connection, request, out, a, b, was_traced](AnalysisJob::State state, const QString& message) {
                    disconnect(*connection);
                    if (state != AnalysisJob::State::Done || !results_) {
                        pair_label_->setText(tr("the pair could not be aligned: %1").arg(message));
                        return;
                    }
                    try {
                        alignment_->setAlignment(*out, (*request->records)[a], (*request->records)[b],
                                                 allvsall_scheme(*request));
                    } catch (const std::exception& e) {
                        pair_label_->setText(QString::fromStdString(e.what()));
                        return;
                    }
                    if (!was_traced) {
                        TracedSummary t{out->query_begin, out->query_end, out->target_begin,
                                        out->target_end,  out->stats,     out->cigar.to_string()};
                        results_->traced[{a, b}] = t;
                    }
                    const int row =
                        int(std::find(results_->order.begin(), results_->order.end(), a) - results_->order.begin());
                    const int column =
                        int(std::find(results_->order.begin(), results_->order.end(), b) - results_->order.begin());
                    pair_label_->setText(describeCell(row, column));
                    emit pairOpened(a, b, was_traced);
                });
    pair_job_.start([request, out, a, b](JobContext& context) { *out = align_pair(*request, a, b, context); });
    return true;
}

bool AllVsAllView::exportMatrix(const QString& path) {
    if (!results_) {
        last_error_ = tr("nothing to export: run all against all first");
        return false;
    }
    try {
        write_distance_matrix(*results_, path);
        status_->setText(tr("wrote %1").arg(path));
        return true;
    } catch (const std::exception& e) {
        last_error_ = QString::fromStdString(e.what());
        return false;
    }
}

bool AllVsAllView::exportImage(const QString& path) {
    if (!results_) {
        last_error_ = tr("nothing to export: run all against all first");
        return false;
    }
    try {
        write_widget_image(plot_, path, plot_->size());
        status_->setText(tr("wrote %1").arg(path));
        return true;
    } catch (const std::exception& e) {
        last_error_ = QString::fromStdString(e.what());
        return false;
    }
}

}  // namespace alignscope::ui
