// The workbench's all against all, off-screen on real widgets, a real project
// file and the real engine: every pair of HMMER's 45 tutorial globins scored
// and checked against the engine's scalar reference aligner pair by pair (run
// here, outside the tile machinery), the clusters against a union-find over
// those scores, the traced pairs against the threshold; hover and click on the
// matrix (a pair traced when clicked), the histogram and its threshold line,
// PHYLIP read back and equal byte for byte to `alignscope-cli allvsall
// --matrix-out`, CSV, PNG and SVG; the run kept in the project; cancel and
// bad settings.
#include <analysis/allvsall_view.hpp>
#include <views/alignment/alignment_view.hpp>
#include "workbench_fixture.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <numeric>
#include <set>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

const QString globins = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial/globins45.fa");

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

void mouse(QWidget* widget, QEvent::Type type, QPoint at) {
    QMouseEvent event(type, QPointF(at), QPointF(widget->mapToGlobal(at)), Qt::LeftButton,
                      type == QEvent::MouseButtonRelease ? Qt::NoButton : Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(widget, &event);
}

}  // namespace

class TestAllVsAllView : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString project_;

    bool openProject(ProjectDocument& document) { return open_document(document, project_); }
    static bool load(ProjectDocument& document, const QString& path) { return load_into(document, {path}); }
    static int setIndex(const AllVsAllView& view, const QString& name) {
        for (int k = 0; k < view.setChoice()->count(); ++k)
            if (view.setChoice()->itemText(k).startsWith(name)) return k;
        return -1;
    }

private slots:
    void initTestCase() {
        QVERIFY2(QFile::exists(globins), "globins45.fa comes with Debian's hmmer-examples");
        project_ = dir_.filePath("allvsall.alsproj");
    }

    void matrixClustersAndExports() {
        ProjectDocument document;
        QVERIFY(openProject(document));
        QVERIFY(load(document, globins));
        AllVsAllView view(document);
        view.resize(1300, 850);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view) || true);
        const int set = setIndex(view, "globins45.fa");
        QVERIFY(set >= 0);
        view.setChoice()->setCurrentIndex(set);
        view.modeChoice()->setCurrentIndex(view.modeChoice()->findData(int(AlignmentMode::Global)));
        view.matrixEdit()->setText("BLOSUM62");
        view.gapOpen()->setValue(10);
        view.gapExtend()->setValue(1);
        view.threshold()->setValue(0.5);
        QSignalSpy finished(&view, &AllVsAllView::runFinished);
        QSignalSpy progress(&view.job(), &AnalysisJob::progressed);
        QVERIFY2(view.run(), qPrintable(view.lastError()));
        QVERIFY(finished.wait(120'000));
        QCOMPARE(finished.first().at(0).toInt(), int(AnalysisJob::State::Done));
        QVERIFY(!progress.isEmpty());
        const AllVsAllResults* r = view.results();
        QVERIFY(r);

        // Every score against the engine's scalar reference, pair by pair.
        const std::vector<Sequence> records = read_sequences(globins.toStdString()).records;
        const std::size_t n = records.size();
        QCOMPARE(r->size(), n);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::resolve("BLOSUM62"), 10, 1);
        AlignOptions global;
        global.mode = AlignmentMode::Global;
        global.traceback = false;
        std::vector<double> expected(n * n);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i; j < n; ++j)
                expected[i * n + j] = expected[j * n + i] =
                    scheme.to_user(align_reference(records[i].residues, records[j].residues, scheme, global).score);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                QVERIFY2(r->score(i, j) == expected[i * n + j], qPrintable(QString("%1 x %2: %3, reference %4")
                                                                               .arg(i)
                                                                               .arg(j)
                                                                               .arg(r->score(i, j))
                                                                               .arg(expected[i * n + j])));
        auto normalised = [&](std::size_t i, std::size_t j) {
            const double low = std::min(expected[i * n + i], expected[j * n + j]);
            return low > 0 ? expected[i * n + j] / low : 0.0;
        };

        // Clusters: single linkage at the threshold, from a union-find here.
        std::vector<std::size_t> parent(n);
        std::iota(parent.begin(), parent.end(), std::size_t{0});
        std::size_t above = 0;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j)
                if (normalised(i, j) >= 0.5) {
                    parent[find_root(parent, i)] = find_root(parent, j);
                    ++above;
                }
        std::set<std::size_t> roots;
        for (std::size_t i = 0; i < n; ++i) {
            roots.insert(find_root(parent, i));
            for (std::size_t j = 0; j < n; ++j)
                QCOMPARE(r->cluster[i] == r->cluster[j], find_root(parent, i) == find_root(parent, j));
        }
        QVERIFY(roots.size() > 1 && roots.size() < n);  // the globins fall into several families
        QCOMPARE(view.boundaryLines(), int(roots.size()) - 1);
        for (std::size_t k = 1; k < n; ++k) QVERIFY(r->cluster[r->order[k]] >= r->cluster[r->order[k - 1]]);
        // Lazy traceback: exactly the pairs at or above the threshold.
        QCOMPARE(r->traced.size(), above);
        for (const auto& [pair, t] : r->traced) {
            QVERIFY(normalised(pair.first, pair.second) >= 0.5);
            QVERIFY(t.stats.length > 0 && !t.cigar.empty());
        }

        // The histogram holds every pair once; the threshold line stands at 0.5.
        double bars = 0;
        for (auto it = view.histogramBars()->data()->constBegin(); it != view.histogramBars()->data()->constEnd(); ++it)
            bars += it->value;
        QCOMPARE(bars, double(n * (n - 1) / 2));
        QCOMPARE(view.thresholdLine()->point1->coords().x(), 0.5);
        QCOMPARE(view.thresholdLine()->point2->coords().x(), 0.5);

        // Hover names the pair under the mouse.
        const int row = 3, column = int(n) - 2;
        const auto records_at = view.recordsAt(row, column);
        QVERIFY(records_at);
        mouse(view.plot(), QEvent::MouseMove, view.cellCentre(row, column));
        QCOMPARE(view.pairLabel()->text(), view.describeCell(row, column));
        QVERIFY(view.pairLabel()->text().contains(QString::fromStdString(records[records_at->first].id)));
        QVERIFY(view.pairLabel()->text().contains(QString::fromStdString(records[records_at->second].id)));

        // A click on a pair that was not traced traces it then and shows it.
        int untraced_row = -1, untraced_column = -1;
        for (int a = 0; a < int(n) && untraced_row < 0; ++a)
            for (int b = 0; b < int(n); ++b) {
                const auto p = view.recordsAt(a, b);
                if (p->first != p->second &&
                    !r->traced.count({std::min(p->first, p->second), std::max(p->first, p->second)})) {
                    untraced_row = a;
                    untraced_column = b;
                    break;
                }
            }
        QVERIFY(untraced_row >= 0);
        const auto pair = *view.recordsAt(untraced_row, untraced_column);
        QVERIFY(view.describeCell(untraced_row, untraced_column).contains("not traced"));
        QSignalSpy opened(&view, &AllVsAllView::pairOpened);
        mouse(view.plot(), QEvent::MouseButtonPress, view.cellCentre(untraced_row, untraced_column));
        mouse(view.plot(), QEvent::MouseButtonRelease, view.cellCentre(untraced_row, untraced_column));
        QVERIFY(opened.wait(30'000));
        QCOMPARE(opened.first().at(2).toBool(), false);
        QVERIFY(view.alignmentView()->hasAlignment());
        const auto key = std::pair{std::min(pair.first, pair.second), std::max(pair.first, pair.second)};
        QVERIFY(r->traced.count(key));
        QVERIFY(view.describeCell(untraced_row, untraced_column).contains("identity"));
        keep_screenshot(view, "allvsall_globins45");
        // With the screenshots, the project too (alignscope --screenshot --view allvsall draws it).
        if (const QString keep = qEnvironmentVariable("ALIGNSCOPE_SCREENSHOT_DIR"); !keep.isEmpty())
            document.project()->copy_to((keep + "/allvsall.alsproj").toStdString());
        // Zoomed to single cells: the range shrinks, cells stay addressable.
        view.plot()->xAxis->setRange(-0.5, 5.5);
        view.plot()->yAxis->setRange(-0.5, 5.5);
        view.plot()->replot();
        mouse(view.plot(), QEvent::MouseMove, view.cellCentre(2, 4));
        QCOMPARE(view.pairLabel()->text(), view.describeCell(2, 4));
        keep_screenshot(view, "allvsall_globins45_zoomed");

        // PHYLIP read back: distances are 1 - normalised reference scores.
        const QString phy = dir_.filePath("d.phy"), csv = dir_.filePath("d.csv");
        QVERIFY2(view.exportMatrix(phy), qPrintable(view.lastError()));
        QFile in(phy);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = in.readAll().split('\n');
        QCOMPARE(lines[0].toInt(), int(n));
        for (std::size_t i = 0; i < n; ++i) {
            const QList<QByteArray> f = lines[int(i) + 1].split(' ');
            QCOMPARE(f.size(), int(n) + 1);
            QCOMPARE(f[0].toStdString(), records[i].id);
            for (std::size_t j = 0; j < n; ++j) {
                const double d = i == j ? 0.0 : std::max(0.0, 1.0 - normalised(i, j));
                // Six decimals of a float (the matrix is held as the command line holds it).
                QVERIFY(std::fabs(f[int(j) + 1].toDouble() - d) <= 1e-6);
            }
        }
        // The same file as the command line writes for the same job.
        const QString cli_phy = dir_.filePath("cli.phy");
        QProcess cli;
        cli.start(ALIGNSCOPE_CLI,
                  {"allvsall", globins, "--mode", "global", "--matrix", "BLOSUM62", "--gap-open", "10", "--gap-extend",
                   "1", "--device", "cpu", "--matrix-out", cli_phy, "-o", "/dev/null", "-q"});
        QVERIFY(cli.waitForFinished(120'000));
        QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
        QFile a(phy), b(cli_phy);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());
        QVERIFY(view.exportMatrix(csv));
        QFile c(csv);
        QVERIFY(c.open(QIODevice::ReadOnly));
        const QList<QByteArray> rows = c.readAll().trimmed().split('\n');
        QCOMPARE(rows.size(), int(n) + 1);
        QVERIFY(rows[0].startsWith("id," + QByteArray::fromStdString(records[0].id)));
        QVERIFY(!view.exportMatrix(dir_.filePath("d.txt")));
        QVERIFY(view.lastError().contains(".phy"));
        // Pictures.
        QVERIFY2(view.exportImage(dir_.filePath("m.png")), qPrintable(view.lastError()));
        QVERIFY(!QImage(dir_.filePath("m.png")).isNull());
        QVERIFY(view.exportImage(dir_.filePath("m.svg")));
        QFile svg(dir_.filePath("m.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(svg.readAll().contains("<svg"));

        // Kept in the project: reopened, the latest run is shown and its pairs open.
        const qint64 id = view.shownAnalysis();
        QVERIFY(id > 0);
        ProjectDocument again;
        QVERIFY(openProject(again));
        QTRY_VERIFY_WITH_TIMEOUT(!again.inputs().empty() && again.inputs().front().set, 30'000);
        AllVsAllView reopened(again);
        QCOMPARE(reopened.shownAnalysis(), id);
        const AllVsAllResults* stored = reopened.results();
        QVERIFY(stored);
        QCOMPARE(stored->scores, r->scores);
        QCOMPARE(stored->cluster, r->cluster);
        QCOMPARE(stored->traced.size(), above);  // the click's trace was not stored
        QSignalSpy reopened_pair(&reopened, &AllVsAllView::pairOpened);
        QVERIFY2(reopened.openPair(pair.first, pair.second), qPrintable(reopened.lastError()));
        QVERIFY(reopened_pair.wait(30'000));
    }

    void cancelAndBadSettings() {
        ProjectDocument document;
        QVERIFY(openProject(document));
        QTRY_VERIFY_WITH_TIMEOUT(!document.inputs().empty() && document.inputs().front().set, 30'000);
        AllVsAllView view(document);
        view.setChoice()->setCurrentIndex(setIndex(view, "globins45.fa"));
        view.matrixEdit()->setText("NOSUCHMATRIX");
        QVERIFY(!view.run());
        QVERIFY2(view.lastError().contains("NOSUCHMATRIX"), qPrintable(view.lastError()));
        view.matrixEdit()->setText("BLOSUM62");
        const auto before = document.project()->analyses().size();
        QSignalSpy finished(&view, &AllVsAllView::runFinished);
        QVERIFY(view.run());
        QVERIFY(!view.run());
        QVERIFY(view.lastError().contains("running"));
        view.cancel();
        QVERIFY(finished.wait(30'000));
        QCOMPARE(finished.first().at(0).toInt(), int(AnalysisJob::State::Cancelled));
        QVERIFY(view.statusLabel()->text().contains("cancelled"));
        QCOMPARE(document.project()->analyses().size(), before);
    }
};

QTEST_MAIN(TestAllVsAllView)
#include "test_allvsall_view.moc"
