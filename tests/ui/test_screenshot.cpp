// `alignscope --project P --screenshot OUT.png [--view ID] [--job ID] [--size WxH]`
// through the real binary: the PNG exists, has the asked size and real content
// (many colours, no single colour covering the picture), and wrong requests
// end with status 2 and one line naming the problem.
#include <views/view_catalog.hpp>
#include "workbench_fixture.hpp"

#include <QImage>
#include <QtTest>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

class ScreenshotTest : public QObject {
    Q_OBJECT
private:
    Workbench bench_{StandardPaths::Environment};  // main() isolates the XDG folders
    QString project_;
    qint64 job_ = 0;

private slots:
    void initTestCase() {
        QVERIFY(bench_.valid());
        // A project with the demo sequences and one finished job, made through the window.
        project_ = bench_.path("shots.alsproj");
        job_ = bench_.makeDemoProject("shots.alsproj");
        QVERIFY(job_ > 0);
    }

    void rendersWindowAndViews_data() {
        QTest::addColumn<QString>("view");
        QTest::addColumn<bool>("withJob");
        QTest::newRow("window") << QString() << false;
        QTest::newRow("window, job given") << QString() << true;
        // The views this issue made; the views issue's own suites shoot theirs.
        for (const char* id : {"jobs", "sequences", "alignment"}) QTest::newRow(id) << QString(id) << false;
        QTest::newRow("alignment, job given") << "alignment" << true;
    }

    void rendersWindowAndViews() {
        QFETCH(QString, view);
        QFETCH(bool, withJob);
        const QString out = bench_.path(QString("shot-%1%2.png").arg(view.isEmpty() ? "window" : view).arg(withJob));
        QStringList args{"--project", project_, "--screenshot", out, "--size", "900x600"};
        if (!view.isEmpty()) args << "--view" << view;
        if (withJob) args << "--job" << QString::number(job_);
        const GuiRun run = run_gui(args);
        QVERIFY2(run.status == 0, qPrintable(run.err));
        QImage image(out);
        QVERIFY2(!image.isNull(), qPrintable(out));
        QCOMPARE(image.size(), QSize(900, 600));
        const auto [colours, top_share] = colour_statistics(image);
        qInfo("%s: %d colours, the most common covers %.0f %%", qPrintable(QFileInfo(out).fileName()), colours,
              100 * top_share);
        QVERIFY2(colours >= 16, qPrintable(QString::number(colours)));
        QVERIFY2(top_share < 0.97, qPrintable(QString::number(top_share)));
    }

    void refusesWhatItCannotShow_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown view") << QStringList{"--view", "sideways"}
                                      << "view 'sideways' is not available in this build";
        QTest::newRow("no such job") << QStringList{"--job", "999"} << "has no job 999";
        QTest::newRow("bad size") << QStringList{"--size", "big"} << "--size";
    }

    void refusesWhatItCannotShow() {
        QFETCH(QStringList, extra);
        QFETCH(QString, message);
        const QString out = bench_.path("refused.png");
        const GuiRun run = run_gui(QStringList{"--project", project_, "--screenshot", out} + extra);
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains(message), qPrintable(run.err));
        QVERIFY(!QFile::exists(out));
    }

    void refusesAMissingProject() {
        const GuiRun run = run_gui({"--project", bench_.path("absent.alsproj"), "--screenshot", bench_.path("x.png")});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("absent.alsproj"), qPrintable(run.err));
    }
};

int main(int argc, char** argv) { return run_isolated<ScreenshotTest>(argc, argv); }

#include "test_screenshot.moc"
