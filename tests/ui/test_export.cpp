// Pictures and tables out of the workbench, driven through its real widgets:
// File › Export Image… for every view (PNG at a chosen size and resolution,
// SVG and PDF as vector drawings) and `alignscope --screenshot FILE` with the
// format picked by the file's extension.
#include <image_export.hpp>
#include <mainwindow.hpp>
#include <panels/job_panel.hpp>
#include <views/job_heatmap_view.hpp>

#include <QDialogButtonBox>
#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

const QString demo_dir = QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo");

QByteArray head(const QString& path, int bytes = 400) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.read(bytes);
}

QByteArray all(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

struct Run {
    int code = -1;
    QString err;
};
Run run_gui(const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(ALIGNSCOPE_GUI), arguments);
    if (!process.waitForFinished(120'000)) return {};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardError())};
}

}  // namespace

class ExportTest : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<DeviceRegistry> registry_;
    QTemporaryDir dir_;
    QString project_;

    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        registry_ = make_cpu_registry();
        QVERIFY(dir_.isValid());
        // A project with one finished global job of the demo globins.
        project_ = path("export.alsproj");
        MainWindow window(*registry_);
        window.setConfirmCloseWhileRunning(false);
        window.show();
        QSignalSpy ready(&window, &MainWindow::projectReady);
        window.openProject(project_, true);
        QVERIFY(ready.wait(60'000));
        QSignalSpy idle(&window.document(), &ProjectDocument::loadingIdle);
        window.loadFiles({demo_dir + "/globins_human.fa", demo_dir + "/globins_others.fa"});
        QVERIFY(idle.wait(60'000));
        QSignalSpy done(&window, &MainWindow::jobNotification);
        window.jobPanel().setAlgorithm(JobAlgorithm::Global);
        QVERIFY(window.runJob());
        QVERIFY(done.wait(60'000));
        QCOMPARE(JobState(done.first()[1].toInt()), JobState::Done);
    }

    void exportsEveryViewAsAnImage_data() {
        QTest::addColumn<QString>("view");
        for (const char* id : {"alignment", "heatmap", "stepper", "timeline", "gcups", "hits", "jobs"})
            QTest::newRow(id) << QString(id);
    }

    void exportsEveryViewAsAnImage() {
        QFETCH(QString, view);
        MainWindow window(*registry_);
        window.setConfirmCloseWhileRunning(false);
        window.resize(1280, 800);
        window.show();
        QSignalSpy ready(&window, &MainWindow::projectReady);
        window.openProject(project_);
        QVERIFY(ready.wait(60'000));
        const qint64 job = window.document().jobs().back().id;
        window.showJobResults(job);
        if (view == "stepper") {
            window.showView("heatmap");
            auto* heatmap = qobject_cast<JobHeatmapView*>(window.view("heatmap"));
            QTRY_VERIFY(heatmap->stepperAvailable());
            heatmap->showStepper();
        } else {
            window.showView(view);
        }
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        for (int k = 0; k < 5; ++k) QCoreApplication::processEvents();

        for (const QString& suffix : {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}) {
            const QString file = path(view + "." + suffix);
            // (The off-screen platform does not give the window back its
            // activation when a dialog closes.)
            window.activateWindow();
            QVERIFY(QTest::qWaitForWindowActive(&window));
            QTest::keyClick(&window, Qt::Key_E, Qt::ControlModifier);
            QDialog* dialog = nullptr;
            QTRY_VERIFY((dialog = window.findChild<QDialog*>("exportImageDialog")) != nullptr);
            auto* name = dialog->findChild<QLineEdit*>("imagePath");
            QVERIFY(name);
            name->selectAll();
            QTest::keyClicks(name, file);
            auto set = [dialog](const char* box, int value) {
                auto* spin = dialog->findChild<QSpinBox*>(box);
                spin->selectAll();
                QTest::keyClicks(spin, QString::number(value));
                QTest::keyClick(spin, Qt::Key_Tab);
            };
            set("imageWidth", 640);
            set("imageHeight", 400);
            if (suffix == "png") set("imageDpi", 192);
            auto* buttons = dialog->findChild<QDialogButtonBox*>();
            QTest::mouseClick(buttons->button(QDialogButtonBox::Save), Qt::LeftButton);
            QTRY_VERIFY(window.findChild<QDialog*>("exportImageDialog") == nullptr);
            QVERIFY2(QFile::exists(file), qPrintable(file));
            if (suffix == "png") {
                const QImage image(file);
                QCOMPARE(image.size(), QSize(1280, 800));  // 640 x 400 at 192 dpi
                QCOMPARE(std::lround(image.dotsPerMeterX() * 0.0254), 192L);
                // Not blank: more than one colour.
                QSet<QRgb> colours;
                for (int y = 0; y < image.height() && colours.size() < 3; y += 7)
                    for (int x = 0; x < image.width() && colours.size() < 3; x += 7) colours.insert(image.pixel(x, y));
                QVERIFY(colours.size() >= 2);
            } else if (suffix == "svg") {
                const QByteArray svg = all(file);
                QVERIFY(svg.startsWith("<?xml"));
                QVERIFY(svg.contains("<svg"));
                QVERIFY(svg.contains("viewBox=\"0 0 640 400\""));
                // Drawn as vectors: text stays text (no picture of the view).
                QVERIFY2(svg.contains("<text"), qPrintable(view));
            } else {
                const QByteArray pdf = all(file);
                QVERIFY(pdf.startsWith("%PDF"));
                QVERIFY2(pdf.contains("/Font"), qPrintable(view));  // text as text
            }
        }
    }

    void screenshotPicksTheFormatByExtension() {
        const QString svg = path("shot.svg"), pdf = path("shot.pdf"), png = path("shot.png");
        for (const QString& file : {svg, pdf, png}) {
            const Run r = run_gui({"--project", project_, "--screenshot", file, "--view", "alignment", "--size",
                                   "900x600"});
            QVERIFY2(r.code == 0, qPrintable(r.err));
        }
        QVERIFY(head(svg).startsWith("<?xml"));
        QVERIFY(head(svg).contains("<svg"));
        QVERIFY(head(pdf).startsWith("%PDF"));
        QVERIFY(head(png).startsWith("\x89PNG"));
        QCOMPARE(QImage(png).size(), QSize(900, 600));
        const Run bad = run_gui({"--project", project_, "--screenshot", path("shot.jpg")});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains("shot.jpg") && bad.err.contains(".svg"), qPrintable(bad.err));
        QVERIFY(!QFile::exists(path("shot.jpg")));
    }
};

QTEST_MAIN(ExportTest)
#include "test_export.moc"
