// GCUPS curves: curves and the speedup axis from given points (the ratio is
// checked against a division done here), markers drawn where the points are,
// the log axis for lengths, hover readouts, exports read back (PNG loads, PDF
// header, SVG parses as XML with drawing elements, CSV re-read field by field),
// points read from a project, and a live "Compare CPU and GPU" run through the
// engine's bench code on this machine's CPU, and on its GPU when the suite is
// built with CUDA and one is present (skipped otherwise).
#include "views/gcups/gcups_view.hpp"
#include "workbench_fixture.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/cuda_backend.hpp>
#endif

#include <qcustomplot.h>

#include <QApplication>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

store::BenchPoint point(std::string device, double x, double y,
                        std::string series = "length-sweep/protein-local-score") {
    store::BenchPoint p;
    p.series = std::move(series);
    p.device = std::move(device);
    p.x = x;
    p.y = y;
    p.x_label = "length";
    p.y_label = "GCUPS";
    p.parameters["kernel"] = p.device == "cpu" ? "sw_affine_striped_s16" : "sw_affine_inter_s16,sw_affine_intra_s32";
    return p;
}

// A GPU about 20-40x the CPU over lengths 64..1024.
std::vector<store::BenchPoint> sweep() {
    std::vector<store::BenchPoint> points;
    const double cpu[] = {1.5, 2.1, 2.6, 2.8, 2.9};
    const double gpu[] = {30, 55, 80, 100, 110};
    for (int k = 0; k < 5; ++k) {
        points.push_back(point("cpu", 64 << k, cpu[k]));
        points.push_back(point("gpu:0", 64 << k, gpu[k]));
    }
    return points;
}

bool colour_near(const QImage& image, QPoint p, const QColor& colour) {
    for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx) {
            const QColor c = image.pixelColor(p + QPoint(dx, dy));
            if (std::abs(c.red() - colour.red()) + std::abs(c.green() - colour.green()) +
                    std::abs(c.blue() - colour.blue()) <
                30)
                return true;
        }
    return false;
}

}  // namespace

class TestViewGcups : public QObject {
    Q_OBJECT
private slots:
    void curvesAndSpeedup() {
        GcupsView view;
        view.resize(900, 600);
        view.setPoints(sweep());
        QCOMPARE(view.xKind(), QString("length"));
        QCOMPARE(view.plot()->xAxis->scaleType(), QCPAxis::stLogarithmic);
        const QString cpu = "length-sweep/protein-local-score on cpu";
        const QString gpu = "length-sweep/protein-local-score on gpu:0";
        const QString speedup = gpu + " vs cpu speedup";
        QCOMPARE(view.curveNames().size(), 3);
        QVERIFY(view.curve(cpu) && view.curve(gpu) && view.curve(speedup));
        QCOMPARE(view.curve(speedup)->valueAxis(), view.plot()->yAxis2);
        QVERIFY(view.plot()->yAxis2->visible());
        const auto points = sweep();
        QCOMPARE(view.curve(speedup)->data()->size(), 5);
        for (int k = 0; k < 5; ++k) {
            const auto d = view.curve(speedup)->data()->at(k);
            QCOMPARE(d->key, points[2 * k].x);
            QCOMPARE(d->value, points[2 * k + 1].y / points[2 * k].y);
        }
        // Every point within the axis ranges.
        for (const auto& p : points) {
            QVERIFY(view.plot()->xAxis->range().contains(p.x));
            QVERIFY(view.plot()->yAxis->range().contains(p.y));
        }
    }

    // The logarithmic length axis labels its ticks over any range: lengths
    // all under 250 (where powers of ten leave one tick or none), a narrow
    // range inside one decade, and four decades. Every label is the plain
    // number at its tick, inside the axis range; none is empty.
    void logAxisTicksReadable_data() {
        QTest::addColumn<QList<double>>("lengths");
        QTest::addColumn<int>("least");
        QTest::newRow("16-200") << QList<double>{16, 32, 64, 128, 200} << 4;
        QTest::newRow("60-90") << QList<double>{60, 70, 80, 90} << 3;
        QTest::newRow("110-240") << QList<double>{110, 150, 240} << 3;
        QTest::newRow("10-100000") << QList<double>{10, 100, 1000, 10000, 100000} << 4;
    }
    void logAxisTicksReadable() {
        QFETCH(QList<double>, lengths);
        QFETCH(int, least);
        GcupsView view;
        view.resize(900, 600);
        view.show();
        std::vector<store::BenchPoint> points;
        for (double x : lengths) points.push_back(point("cpu", x, 1 + x / 1000));
        view.setPoints(points);
        QCustomPlot* plot = view.plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QVector<double> ticks = plot->xAxis->tickVector();
        const QVector<QString> labels = plot->xAxis->tickVectorLabels();
        QCOMPARE(ticks.size(), labels.size());
        QVERIFY2(ticks.size() >= least, qPrintable(QString("%1 ticks").arg(ticks.size())));
        QVERIFY(ticks.size() <= 24);
        for (int k = 0; k < ticks.size(); ++k) {
            QVERIFY(plot->xAxis->range().contains(ticks[k]));
            bool number = false;
            const double shown = plot->locale().toDouble(labels[k], &number);
            QVERIFY2(number, qPrintable(labels[k]));
            QCOMPARE(shown, ticks[k]);
        }
        // Labels apart on screen: no two closer than their own width.
        for (int k = 1; k < ticks.size(); ++k) {
            const double gap = plot->xAxis->coordToPixel(ticks[k]) - plot->xAxis->coordToPixel(ticks[k - 1]);
            QVERIFY2(gap >= QFontMetrics(plot->xAxis->tickLabelFont()).horizontalAdvance(labels[k]) * 0.6,
                     qPrintable(labels[k - 1] + " " + labels[k]));
        }
        QVERIFY(view.emptyText().isEmpty());
        QVERIFY(plot->legend->visible());
        if (QTest::currentDataTag() == QStringLiteral("16-200")) keep_screenshot(view, "gcups-short-lengths");
    }

    // No points: no legend box, and a line in the plot saying what fills it.
    void emptyPlotSaysWhatFillsIt() {
        GcupsView view;
        view.resize(700, 500);
        view.show();
        view.setPoints({});
        QVERIFY(!view.plot()->legend->visible());
        QVERIFY(view.emptyText().contains("Compare CPU and GPU"));
        keep_screenshot(view, "gcups-empty");
        view.setPoints(sweep());
        QVERIFY(view.emptyText().isEmpty());
        QVERIFY(view.plot()->legend->visible());
    }

    void markersWhereThePointsAre() {
        GcupsView view;
        view.resize(900, 600);
        view.show();
        QApplication::processEvents();
        view.setPoints(sweep());
        QCustomPlot* plot = view.plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QImage image = plot->toPixmap(plot->width(), plot->height()).toImage();
        for (const QString& name : view.curveNames()) {
            const QCPGraph* g = view.curve(name);
            for (auto d = g->data()->constBegin(); d != g->data()->constEnd(); ++d) {
                const QPoint p(int(g->keyAxis()->coordToPixel(d->key)), int(g->valueAxis()->coordToPixel(d->value)));
                QVERIFY2(colour_near(image, p, g->pen().color()), qPrintable(name + QString(" at %1").arg(d->key)));
            }
        }
        // A spot far from every curve is background.
        const QPoint empty(int(plot->xAxis->coordToPixel(180)),
                           int(plot->yAxis->coordToPixel(plot->yAxis->range().upper * 0.27)));
        QCOMPARE(image.pixelColor(empty), QColor(Qt::white));
        // Hover readout over the GPU's 256-residue point.
        const QCPGraph* g = view.curve("length-sweep/protein-local-score on gpu:0");
        const QPointF at(g->keyAxis()->coordToPixel(256), g->valueAxis()->coordToPixel(80));
        const QString text = view.readoutAt(at + QPointF(2, 1));
        QVERIFY2(text.contains("gpu:0") && text.contains("256") && text.contains("80 GCUPS"), qPrintable(text));
        QVERIFY(view.readoutAt(QPointF(empty)).isEmpty());
    }

    void otherSweeps() {
        GcupsView view;
        std::vector<store::BenchPoint> points;
        for (int s = 1; s <= 8; s *= 2) {
            auto p = point("gpu:0", s, 50 + s, "stream-sweep/protein-300x300-local-score");
            p.x_label = "streams";
            points.push_back(p);
        }
        for (int k = 0; k < 3; ++k) {
            auto p = point("gpu:0", k, 10 * (k + 1), "kernel-sweep/protein-300x300-local-score");
            p.x_label = "kernel";
            p.parameters["kernel"] = "sw_affine_k" + std::to_string(k);
            points.push_back(p);
        }
        view.setPoints(points);
        QCOMPARE(view.xKinds(), (QStringList{"streams", "kernel"}));
        QCOMPARE(view.xKind(), QString("streams"));
        QCOMPARE(view.plot()->xAxis->scaleType(), QCPAxis::stLinear);
        QCOMPARE(view.curveNames().size(), 1);
        QCOMPARE(view.curve(view.curveNames()[0])->data()->size(), 4);
        QVERIFY(!view.plot()->yAxis2->visible());  // no CPU, no speedup
        view.setXKind("kernel");
        auto* ticker = dynamic_cast<QCPAxisTickerText*>(view.plot()->xAxis->ticker().data());
        QVERIFY(ticker);
        QCOMPARE(ticker->ticks().value(2), QString("sw_affine_k2"));
    }

    void exportsParseBack() {
        QTemporaryDir dir;
        GcupsView view;
        view.resize(800, 500);
        view.setPoints(sweep());
        view.exportPng(dir.filePath("g.png"), 640, 400);
        QImage png(dir.filePath("g.png"));
        QCOMPARE(png.size(), QSize(640, 400));
        int dark = 0;
        for (int y = 0; y < png.height(); y += 2)
            for (int x = 0; x < png.width(); x += 2)
                if (png.pixelColor(x, y).lightness() < 200) ++dark;
        QVERIFY(dark > 500);  // axes, text and curves, not a blank page

        view.exportPdf(dir.filePath("g.pdf"));
        QFile pdf(dir.filePath("g.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        const QByteArray pdf_bytes = pdf.readAll();
        QVERIFY(pdf_bytes.startsWith("%PDF"));
        QVERIFY(pdf_bytes.trimmed().endsWith("%%EOF"));

        view.exportSvg(dir.filePath("g.svg"));
        QFile svg(dir.filePath("g.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svg);
        int elements = 0, drawing = 0;
        bool svg_root = false;
        while (!xml.atEnd()) {
            if (xml.readNext() == QXmlStreamReader::StartElement) {
                ++elements;
                if (elements == 1) svg_root = xml.name() == QLatin1String("svg");
                if (xml.name() == QLatin1String("path") || xml.name() == QLatin1String("polyline") ||
                    xml.name() == QLatin1String("text"))
                    ++drawing;
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(svg_root);
        QVERIFY2(drawing > 20, qPrintable(QString::number(drawing)));

        auto points = sweep();
        points[0].series = "a \"quoted\", series";  // CSV quoting
        view.setPoints(points);
        view.exportCsv(dir.filePath("g.csv"));
        QFile csv(dir.filePath("g.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), int(points.size()) + 1);
        QVERIFY(lines[0].startsWith("series,device,kernel,x_name,x,gcups"));
        for (std::size_t k = 0; k < points.size(); ++k) {
            // A small RFC 4180 reader.
            QStringList fields;
            QString field;
            bool quoted = false;
            const QString line = lines[int(k) + 1];
            for (int i = 0; i < line.size(); ++i) {
                const QChar c = line[i];
                if (quoted) {
                    if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                        field += '"';
                        ++i;
                    } else if (c == '"')
                        quoted = false;
                    else
                        field += c;
                } else if (c == '"')
                    quoted = true;
                else if (c == ',') {
                    fields << field;
                    field.clear();
                } else
                    field += c;
            }
            fields << field;
            QCOMPARE(fields.size(), 9);
            QCOMPARE(fields[0].toStdString(), points[k].series);
            QCOMPARE(fields[1].toStdString(), points[k].device);
            QCOMPARE(fields[2].toStdString(), points[k].parameters.at("kernel"));
            QCOMPARE(fields[4].toDouble(), points[k].x);
            QCOMPARE(fields[5].toDouble(), points[k].y);
        }
        QVERIFY_THROWS_EXCEPTION(Error, view.exportCsv(dir.filePath("no/such/dir/g.csv")));
    }

    void readsAJobFromTheProject() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("p.alsproj").toStdString();
        store::ProjectOptions options;
        options.create_if_missing = true;
        std::int64_t job_id = 0;
        {
            store::Project project(path, options);
            store::JobSpec spec;
            spec.command = "bench";
            auto job = project.begin_job(spec);
            job->add_bench_points(sweep());
            job_id = job->job_id();
            job->finish_done();
        }
        store::Project project(path);
        GcupsView view;
        view.loadFromProject(project, job_id);
        QCOMPARE(view.points().size(), std::size_t(10));
        QCOMPARE(view.points(), sweep());
        QCOMPARE(view.curveNames().size(), 3);
    }

    void compareCpuAndGpuLive() {
        auto registry = make_cpu_registry();
        GcupsView view;
        BenchOptions options;
        options.standard_cases = false;
        options.lengths = {24, 48, 96};
        options.cpu_pairs = 6;
        options.gpu_pairs = 6;
        options.repeat = 1;
        options.warmup = 0;
        options.threads = 1;
        QSignalSpy finished(&view, &GcupsView::comparisonFinished);
        QSignalSpy failed(&view, &GcupsView::comparisonFailed);
        int updates = 0;
        connect(view.plot(), &QCustomPlot::beforeReplot, this, [&updates] { ++updates; });
        view.startComparison(*registry, options);
        QVERIFY(view.comparisonRunning());
        QVERIFY(finished.wait(120'000) || !failed.isEmpty());
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY(!view.comparisonRunning());
        // The CPU SIMD backend ran every length; no GPU here, so CPU only.
        QCOMPARE(view.points().size(), std::size_t(3));
        for (const auto& p : view.points()) {
            QCOMPARE(p.device, std::string("cpu"));
            QCOMPARE(p.x_label, std::string("length"));
            QVERIFY(p.y > 0);
            // GCUPS is cells over seconds, as the engine measured them.
            const double cells = std::stod(p.parameters.at("cells")), seconds = std::stod(p.parameters.at("seconds"));
            QVERIFY(std::abs(p.y - cells / seconds / 1e9) <= 1e-6 * p.y);
            QCOMPARE(cells, 6.0 * p.x * p.x);
        }
        const QCPGraph* g = view.curve("length-sweep/protein-local-score on cpu");
        QVERIFY(g);
        QCOMPARE(g->data()->size(), 3);
        QVERIFY(finished.first().first().toString().contains("CPU only"));
    }
    void compareCpuAndGpuLiveOnTheGpu() {
        auto registry = make_cpu_registry();
#ifdef ALIGNSCOPE_WITH_CUDA
        kernels::register_cuda_backends(*registry);
#else
        QSKIP("this build has no CUDA backend: the GPU comparison needs ALIGNSCOPE_CUDA=ON and a GPU");
#endif
        const DeviceInfo* gpu = nullptr;
        for (const DeviceInfo& d : registry->devices())
            if (d.kind == "gpu" && d.available && d.id == "gpu:0") gpu = &d;
        if (!gpu) QSKIP("no GPU backend is available here (no CUDA device): the GPU comparison needs one");
        const std::string gpu_name = gpu->name;

        GcupsView view;
        BenchOptions options;
        options.standard_cases = false;
        options.lengths = {64, 256, 1024};
        options.cpu_pairs = 2000;   // enough for sub-second but timeable CPU points
        options.gpu_pairs = 65536;  // enough pairs to fill the GPU
        options.repeat = 3;
        options.warmup = 1;
        options.threads = 0;
        QSignalSpy finished(&view, &GcupsView::comparisonFinished);
        QSignalSpy failed(&view, &GcupsView::comparisonFailed);
        QSignalSpy arrived(&view, &GcupsView::comparisonPoint);
        // Points arrive live: the plot replots while the comparison still runs,
        // with points (some of them the GPU's) already on it.
        int live_replots = 0, live_with_gpu = 0;
        std::size_t most_points_live = 0;
        connect(view.plot(), &QCustomPlot::beforeReplot, this, [&] {
            if (!view.comparisonRunning()) return;
            ++live_replots;
            most_points_live = std::max(most_points_live, view.points().size());
            for (const auto& p : view.points())
                if (p.device == "gpu:0") {
                    ++live_with_gpu;
                    break;
                }
        });
        view.startComparison(*registry, options);
        QVERIFY(view.comparisonRunning());
        QVERIFY(finished.wait(240'000) || !failed.isEmpty());
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
        QVERIFY(!view.comparisonRunning());
        const QString summary = finished.first().first().toString();
        QVERIFY2(summary.contains("gpu:0") && !summary.contains("CPU only"), qPrintable(summary));

        // A point for the CPU and for the GPU at every length, and nothing else.
        QCOMPARE(view.points().size(), std::size_t(6));
        QCOMPARE(arrived.size(), 6);
        std::map<std::string, std::map<double, double>> gcups;
        for (const auto& p : view.points()) {
            QVERIFY2(p.device == "cpu" || p.device == "gpu:0", p.device.c_str());
            QCOMPARE(p.x_label, std::string("length"));
            QVERIFY(p.y > 0);
            const double cells = std::stod(p.parameters.at("cells")), seconds = std::stod(p.parameters.at("seconds"));
            QVERIFY(std::abs(p.y - cells / seconds / 1e9) <= 1e-6 * p.y);
            // The sweep scales the pair count with the length (about the cells of
            // a 300x300 case), capped by the options; every pair is length x length.
            const double pairs = std::stod(p.parameters.at("pairs"));
            QVERIFY(pairs >= 1 && pairs <= (p.device == "cpu" ? 4 * 2000.0 : 65536.0));
            QCOMPARE(cells, pairs * p.x * p.x);
            if (p.device == "gpu:0") QCOMPARE(p.parameters.at("device_name"), gpu_name);
            QVERIFY2(gcups[p.device].emplace(p.x, p.y).second, "two points for one device and length");
            qInfo("%-6s %-28s length %5.0f  %9.3f GCUPS  (%s pairs, %s cells in %s s)", p.device.c_str(),
                  p.parameters.at("device_name").c_str(), p.x, p.y, p.parameters.at("pairs").c_str(),
                  p.parameters.at("cells").c_str(), p.parameters.at("seconds").c_str());
        }
        for (const char* device : {"cpu", "gpu:0"}) {
            QCOMPARE(gcups[device].size(), std::size_t(3));
            for (const double length : {64.0, 256.0, 1024.0}) QVERIFY2(gcups[device].count(length), device);
        }
        const QString series = "length-sweep/protein-local-score";
        for (const char* device : {"cpu", "gpu:0"}) {
            const QCPGraph* g = view.curve(series + " on " + device);
            QVERIFY2(g, device);
            QCOMPARE(g->data()->size(), 3);
        }
        // The speedup curve on the second axis: the GPU's GCUPS over the CPU's,
        // divided here from the points.
        const QString speedup_name = series + " on gpu:0 vs cpu speedup";
        QVERIFY2(view.curveNames().contains(speedup_name), qPrintable(view.curveNames().join(" | ")));
        const QCPGraph* speedup = view.curve(speedup_name);
        QVERIFY(speedup);
        QCOMPARE(speedup->valueAxis(), view.plot()->yAxis2);
        QVERIFY(view.plot()->yAxis2->visible());
        QCOMPARE(speedup->data()->size(), 3);
        for (auto it = speedup->data()->constBegin(); it != speedup->data()->constEnd(); ++it) {
            const double expected = gcups["gpu:0"].at(it->key) / gcups["cpu"].at(it->key);
            QVERIFY(std::abs(it->value - expected) <= 1e-9 * expected);
            qInfo("speedup at length %5.0f: %.2fx", it->key, it->value);
        }
        QVERIFY2(live_replots >= 2 && live_with_gpu >= 1 && most_points_live >= 1 && most_points_live < 6,
                 qPrintable(QString("replots while running: %1, with a GPU point: %2, most points then: %3")
                                .arg(live_replots)
                                .arg(live_with_gpu)
                                .arg(most_points_live)));
    }
};

QTEST_MAIN(TestViewGcups)
#include "test_view_gcups.moc"
