// The workbench's profile search, off-screen on real widgets, a real project
// file and the real engine: HMMER's tutorial profiles searched against the
// loaded globins and a FASTA database, every reported sequence and domain
// checked against hmmsearch's own --tblout and --domtblout of the same search
// (run here); the domain alignments checked against the target residues and
// the model coordinates; the search kept in the project and shown again when
// it is reopened; bad profiles, missing inputs and cancelling.
#include <analysis/profile_search_view.hpp>
#include "workbench_fixture.hpp"

#include <alignscope/device/backend.hpp>

#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/project.hpp>

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QMimeData>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <map>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

const QString tutorial = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial");

struct TblRow {
    double evalue = 0, score = 0, bias = 0;
    int reported_domains = 0;
};
struct DomRow {
    double c_evalue = 0, i_evalue = 0, score = 0;
    int hmm_from = 0, hmm_to = 0, ali_from = 0, ali_to = 0, env_from = 0, env_to = 0;
};

// hmmsearch's --tblout and --domtblout, read by their documented columns.
std::map<QString, TblRow> read_tblout(const QString& path) {
    std::map<QString, TblRow> rows;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return rows;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> c = line.simplified().split(' ');
        TblRow r;
        r.evalue = c[4].toDouble();
        r.score = c[5].toDouble();
        r.bias = c[6].toDouble();
        r.reported_domains = c[16].toInt();
        rows[QString(c[0])] = r;
    }
    return rows;
}

std::map<QString, std::vector<DomRow>> read_domtblout(const QString& path) {
    std::map<QString, std::vector<DomRow>> rows;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return rows;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> c = line.simplified().split(' ');
        DomRow r;
        r.c_evalue = c[11].toDouble();
        r.i_evalue = c[12].toDouble();
        r.score = c[13].toDouble();
        r.hmm_from = c[15].toInt();
        r.hmm_to = c[16].toInt();
        r.ali_from = c[17].toInt();
        r.ali_to = c[18].toInt();
        r.env_from = c[19].toInt();
        r.env_to = c[20].toInt();
        rows[QString(c[0])].push_back(r);
    }
    return rows;
}

// hmmsearch prints E-values with two significant digits.
bool same_evalue(double ours, double theirs) { return std::fabs(ours - theirs) <= 0.051 * theirs + 1e-300; }

QString cell(const QTableWidget* t, int row, int column) {
    const QTableWidgetItem* item = t->item(row, column);
    return item ? item->text() : QString();
}
double value(const QTableWidget* t, int row, int column) { return t->item(row, column)->data(Qt::UserRole).toDouble(); }

}  // namespace

class TestProfileView : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString project_, database_;
    std::map<QString, std::string> residues_;  // the database's records, by id

    bool openProject(ProjectDocument& document) { return open_document(document, project_); }

    static qint64 loadGlobins(ProjectDocument& document) {
        load_into(document, {tutorial + "/globins45.fa"});
        for (const auto& in : document.inputs())
            if (in.label() == "globins45.fa" && in.set) return in.info.id;
        return 0;
    }

private slots:
    void initTestCase() {
        QVERIFY2(!QStandardPaths::findExecutable("hmmsearch").isEmpty(),
                 "hmmsearch (Debian package hmmer) is the oracle of this suite");
        QVERIFY(QFile::exists(tutorial + "/fn3.hmm"));
        project_ = dir_.filePath("profiles.alsproj");
        // A database: the sevenless receptor (many fibronectin type III
        // domains and a kinase domain; from its Swiss-Prot entry) and the 45 globins.
        database_ = dir_.filePath("sevenless_and_globins.fa");
        QFile swiss(tutorial + "/7LESS_DROME");
        QVERIFY(swiss.open(QIODevice::ReadOnly));
        QByteArray sevenless;
        bool in_sequence = false;
        for (const QByteArray& line : swiss.readAll().split('\n')) {
            if (line.startsWith("SQ ")) in_sequence = true;
            else if (line.startsWith("//"))
                in_sequence = false;
            else if (in_sequence)
                sevenless += QByteArray(line).replace(' ', "");
        }
        QCOMPARE(sevenless.size(), 2554);
        QFile globins(tutorial + "/globins45.fa");
        QVERIFY(globins.open(QIODevice::ReadOnly));
        QFile out(database_);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(">7LESS_DROME Protein sevenless\n" + sevenless + "\n" + globins.readAll());
        out.close();
        for (const auto& s : read_sequences(database_.toStdString()).records)
            residues_[QString::fromStdString(s.id)] = s.residues;
    }

    void hitsAndDomainsAreHmmsearchs_data() {
        QTest::addColumn<QString>("profile");
        QTest::addColumn<bool>("loaded");  // the loaded globins, or the FASTA database
        QTest::addColumn<double>("evalue");
        QTest::newRow("globins4, loaded globins") << "globins4.hmm" << true << 10.0;
        QTest::newRow("fn3, database") << "fn3.hmm" << false << 10.0;
        QTest::newRow("Pkinase, database, E 1e-3") << "Pkinase.hmm" << false << 1e-3;
    }

    void hitsAndDomainsAreHmmsearchs() {
        QFETCH(QString, profile);
        QFETCH(bool, loaded);
        QFETCH(double, evalue);
        ProjectDocument document;
        QVERIFY(openProject(document));
        QVERIFY(loadGlobins(document));
        ProfileSearchView view(document);
        view.resize(1100, 800);
        view.show();
        QVERIFY2(view.openProfile(tutorial + "/" + profile), qPrintable(view.lastError()));
        if (!loaded) view.setDatabase(database_);
        else
            QVERIFY(view.targetChoice()->currentData().toLongLong() > 0);
        view.reportEvalue()->setValue(evalue);
        view.domainEvalue()->setValue(evalue);
        QSignalSpy finished(&view, &ProfileSearchView::searchFinished);
        QVERIFY2(view.runSearch(), qPrintable(view.lastError()));
        QVERIFY(finished.wait(120'000));
        QCOMPARE(finished.first().at(0).toInt(), int(AnalysisJob::State::Done));

        // The oracle: hmmsearch on the same model, targets and thresholds.
        const QString tbl = dir_.filePath("t.tbl"), dom = dir_.filePath("t.dom");
        QProcess hmmsearch;
        hmmsearch.start("hmmsearch", {"--cpu", "1", "-o", "/dev/null", "--tblout", tbl, "--domtblout", dom, "-E",
                                      QString::number(evalue), "--domE", QString::number(evalue),
                                      tutorial + "/" + profile, loaded ? tutorial + "/globins45.fa" : database_});
        QVERIFY(hmmsearch.waitForFinished(120'000));
        QCOMPARE(hmmsearch.exitCode(), 0);
        const auto expected = read_tblout(tbl);
        const auto expected_domains = read_domtblout(dom);
        QVERIFY(!expected.empty());

        const ProfileSearchResults* results = view.results();
        QVERIFY(results && results->models.size() == 1);
        const profile::ModelSearch& search = results->models[0].search;
        const QTableWidget* hits = view.hitsTable();
        QCOMPARE(hits->rowCount(), int(expected.size()));
        int multi_domain_row = -1;
        for (int row = 0; row < hits->rowCount(); ++row) {
            const QString target = cell(hits, row, 1);
            const auto it = expected.find(target);
            QVERIFY2(it != expected.end(), qPrintable(target + " is not among hmmsearch's hits"));
            QVERIFY2(
                same_evalue(value(hits, row, 2), it->second.evalue),
                qPrintable(
                    QString("%1: E %2, hmmsearch %3").arg(target).arg(value(hits, row, 2)).arg(it->second.evalue)));
            QVERIFY2(
                std::fabs(value(hits, row, 3) - it->second.score) <= 0.051,
                qPrintable(
                    QString("%1: %2 bits, hmmsearch %3").arg(target).arg(value(hits, row, 3)).arg(it->second.score)));
            QVERIFY(std::fabs(value(hits, row, 4) - it->second.bias) <= 0.051);
            QCOMPARE(int(value(hits, row, 5)), it->second.reported_domains);
            if (row > 0) QVERIFY(value(hits, row, 3) <= value(hits, row - 1, 3) + 1e-6);  // best first

            // Its domains, coordinates exact, and each alignment's lines.
            view.hitsTable()->setCurrentCell(row, 1);
            const QTableWidget* domains = view.domainsTable();
            const auto& want = expected_domains.at(target);
            QCOMPARE(domains->rowCount(), int(want.size()));
            if (want.size() > 2) multi_domain_row = row;
            for (int d = 0; d < domains->rowCount(); ++d) {
                const DomRow& w = want[std::size_t(d)];
                QVERIFY(std::fabs(value(domains, d, 1) - w.score) <= 0.051);
                QVERIFY(same_evalue(value(domains, d, 3), w.c_evalue));
                QVERIFY(same_evalue(value(domains, d, 4), w.i_evalue));
                const int coordinates[] = {w.hmm_from, w.hmm_to, w.ali_from, w.ali_to, w.env_from, w.env_to};
                for (int c = 0; c < 6; ++c)
                    QVERIFY2(int(value(domains, d, 5 + c)) == coordinates[c],
                             qPrintable(QString("%1 domain %2 column %3: %4, hmmsearch %5")
                                            .arg(target)
                                            .arg(d + 1)
                                            .arg(c)
                                            .arg(value(domains, d, 5 + c))
                                            .arg(coordinates[c])));
                // The target line is the target's own residues ali from..to; the
                // model line spans hmm from..to in match columns.
                const auto& hit = search.hits.at(std::size_t(row));
                const auto& r = hit.domains.at(std::size_t(reported_domains(hit).at(std::size_t(d)))).alignment;
                QString target_residues = QString::fromStdString(r.target).remove('-').toUpper();
                QCOMPARE(target_residues,
                         QString::fromStdString(residues_.at(target).substr(std::size_t(w.ali_from - 1),
                                                                            std::size_t(w.ali_to - w.ali_from + 1)))
                             .toUpper());
                QCOMPARE(int(QString::fromStdString(r.model).remove('.').size()), w.hmm_to - w.hmm_from + 1);
                QCOMPARE(r.model.size(), r.posterior.size());
                QVERIFY(view.alignmentText()->toPlainText().contains(QString("== domain %1").arg(d + 1)));
            }
        }
        // The exported tables are hmmsearch's, row for row and byte for byte
        // (the commented header and tail aside).
        for (bool domains : {false, true}) {
            const QString ours = dir_.filePath(domains ? "ours.dom" : "ours.tbl");
            QVERIFY2(view.exportTable(ours, domains), qPrintable(view.lastError()));
            auto rows = [](const QString& path) {
                QFile f(path);
                QByteArrayList out;
                if (f.open(QIODevice::ReadOnly))
                    for (const QByteArray& line : f.readAll().split('\n'))
                        if (!line.isEmpty() && !line.startsWith('#')) out << line;
                return out;
            };
            const QByteArrayList mine = rows(ours), theirs = rows(domains ? dom : tbl);
            QVERIFY(!theirs.isEmpty());
            QCOMPARE(mine, theirs);
        }
        if (profile == "fn3.hmm") {
            QVERIFY(multi_domain_row >= 0);
            view.hitsTable()->setCurrentCell(multi_domain_row, 1);
            view.domainsTable()->setCurrentCell(1, 0);
            QVERIFY(view.alignmentText()->toPlainText().startsWith(">> 7LESS_DROME"));
            QVERIFY(view.alignmentText()->toPlainText().contains("== domain 2 "));
            keep_screenshot(view, "profile_search_fn3");
            // With the screenshots, the project too (alignscope --screenshot --view profiles draws it).
            if (const QString keep = qEnvironmentVariable("ALIGNSCOPE_SCREENSHOT_DIR"); !keep.isEmpty())
                document.project()->copy_to((keep + "/profiles.alsproj").toStdString());
        }
        if (profile == "globins4.hmm") keep_screenshot(view, "profile_search_globins4");

        // Kept in the project: the file lists it, and a new window shows it again.
        QVERIFY(view.shownAnalysis() > 0);
        const qint64 id = view.shownAnalysis();
        QStringList shown;
        for (int row = 0; row < hits->rowCount(); ++row)
            for (int c = 0; c < hits->columnCount(); ++c) shown << cell(hits, row, c);
        ProjectDocument again;
        QVERIFY(openProject(again));
        ProfileSearchView reopened(again);
        QCOMPARE(reopened.shownAnalysis(), id);                     // the latest search of the project
        QVERIFY(reopened.profileChoice()->findText(profile) >= 0);  // the profile is a project input
        QStringList restored;
        for (int row = 0; row < reopened.hitsTable()->rowCount(); ++row)
            for (int c = 0; c < reopened.hitsTable()->columnCount(); ++c)
                restored << cell(reopened.hitsTable(), row, c);
        QCOMPARE(restored, shown);
    }

    // The window: File › Open (loadFiles) and a drop send .hmm files to the
    // profile search (shown), sequences still to the project's sets; a
    // profile named otherwise is known by its format tag.
    void windowOpensAndDropsProfiles() {
        auto registry = make_cpu_registry();
        MainWindow window(*registry);
        window.setConfirmCloseWhileRunning(false);
        QVERIFY(open_and_wait(window, dir_.filePath("window.alsproj"), true));
        auto* view = qobject_cast<ProfileSearchView*>(window.view("profiles"));
        QVERIFY(view);
        QVERIFY(window.view("allvsall"));
        // Job › Profile Search… and All Against All… raise their tabs.
        auto* tabs = window.findChild<QTabWidget*>();
        QVERIFY(tabs);
        auto* all_against_all = window.findChild<QAction*>("allAgainstAll");
        auto* profile_search = window.findChild<QAction*>("profileSearch");
        QVERIFY(all_against_all && profile_search);
        all_against_all->trigger();
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(window.view("allvsall")));
        profile_search->trigger();
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(view));
        window.showView("sequences");
        QSignalSpy idle(&window.document(), &ProjectDocument::loadingIdle);
        window.loadFiles({tutorial + "/fn3.hmm", tutorial + "/globins45.fa"});
        QVERIFY(view->profileChoice()->findText("fn3.hmm") >= 0);
        QVERIFY(idle.wait(30'000));
        QTRY_VERIFY(!window.document().inputs().empty() &&
                    window.document().inputs().front().label() == "globins45.fa");

        const QString renamed = dir_.filePath("pkinase_model.txt");
        QFile::remove(renamed);
        QVERIFY(QFile::copy(tutorial + "/Pkinase.hmm", renamed));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QMimeData data;
        data.setUrls({QUrl::fromLocalFile(renamed)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        QVERIFY(view->profileChoice()->findText("pkinase_model.txt") >= 0);
        QCOMPARE(view->profileChoice()->currentText(), QString("pkinase_model.txt"));
        QCOMPARE(tabs->currentWidget(), static_cast<QWidget*>(view));
        // Both profiles are project inputs now.
        int profiles = 0;
        for (const auto& in : window.document().project()->inputs()) profiles += in.kind == store::InputKind::Profile;
        QCOMPARE(profiles, 2);
        // A broken one is explained, not loaded as sequences.
        QSignalSpy message(&window, &MainWindow::userMessage);
        const QString broken = dir_.filePath("empty.hmm");
        QFile(broken).open(QIODevice::WriteOnly);
        window.loadFiles({broken});
        QCOMPARE(message.size(), 1);
        QVERIFY2(message.first().at(2).toString().contains("empty.hmm"), qPrintable(message.first().at(2).toString()));
        QCOMPARE(window.document().inputs().size(), std::size_t(1));
    }

    void badInputsAreExplained() {
        ProjectDocument document;
        QVERIFY(openProject(document));
        ProfileSearchView view(document);
        // A broken model names its file and line.
        const QString broken = dir_.filePath("broken.hmm");
        {
            QFile in(tutorial + "/globins4.hmm");
            QVERIFY(in.open(QIODevice::ReadOnly));
            QByteArray text = in.readAll();
            text.replace("LENG  149", "LENG  abc");
            QFile out(broken);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(text);
        }
        QVERIFY(!view.openProfile(broken));
        QVERIFY2(view.lastError().contains("broken.hmm:") && view.lastError().contains("LENG"),
                 qPrintable(view.lastError()));
        QVERIFY(!view.openProfile(dir_.filePath("absent.hmm")));
        QVERIFY(view.lastError().contains("absent.hmm"));
        // A search needs a profile, then a database.
        const int profiles = view.profileChoice()->count();
        if (profiles == 0) {
            QVERIFY(!view.runSearch());
            QVERIFY(view.lastError().contains("profile"));
        }
        QVERIFY(view.openProfile(tutorial + "/fn3.hmm"));
        view.targetChoice()->setCurrentIndex(view.targetChoice()->findData(qint64(-1)));
        QVERIFY(!view.runSearch());
        QVERIFY(view.lastError().contains("FASTA"));
        // A database that cannot be read fails the search with its name.
        view.setDatabase(dir_.filePath("absent.fa"));
        QSignalSpy finished(&view, &ProfileSearchView::searchFinished);
        QVERIFY(view.runSearch());
        QVERIFY(finished.wait(30'000));
        QCOMPARE(finished.first().at(0).toInt(), int(AnalysisJob::State::Failed));
        QVERIFY(finished.first().at(1).toString().contains("absent.fa"));
        QVERIFY(view.statusLabel()->text().contains("failed"));
    }

    void cancelStopsTheSearch() {
        // Cancelled as soon as it is started, the search ends as cancelled
        // (the worker checks between its stages and between targets), keeps
        // nothing in the project, and the view can search again at once.
        const QString big = dir_.filePath("big.fa");
        {
            QFile globins(tutorial + "/globins45.fa");
            QVERIFY(globins.open(QIODevice::ReadOnly));
            const QByteArray text = globins.readAll();
            QFile out(big);
            QVERIFY(out.open(QIODevice::WriteOnly));
            for (int k = 0; k < 400; ++k) out.write(QByteArray(text).replace(">", QString(">c%1_").arg(k).toUtf8()));
        }
        ProjectDocument document;
        QVERIFY(openProject(document));
        ProfileSearchView view(document);
        QVERIFY(view.openProfile(tutorial + "/Pkinase.hmm"));
        const int reference = view.deviceChoice()->findData(QString("cpu-ref"));
        QVERIFY(reference >= 0);
        view.deviceChoice()->setCurrentIndex(reference);
        view.setDatabase(big);
        QSignalSpy finished(&view, &ProfileSearchView::searchFinished);
        const auto analyses_before = document.project()->analyses().size();
        QVERIFY(view.runSearch());
        QVERIFY(!view.runSearch());  // one search at a time
        QVERIFY(view.lastError().contains("running"));
        view.cancel();
        QVERIFY(finished.wait(30'000));
        QCOMPARE(finished.first().at(0).toInt(), int(AnalysisJob::State::Cancelled));
        QVERIFY(view.statusLabel()->text().contains("cancelled"));
        QCOMPARE(document.project()->analyses().size(), analyses_before);  // nothing half-kept
        // The same search, not cancelled, runs to its end with progress shown.
        QSignalSpy progress(&view.job(), &AnalysisJob::progressed);
        QVERIFY(view.runSearch());
        QVERIFY(finished.wait(120'000));
        QCOMPARE(finished.last().at(0).toInt(), int(AnalysisJob::State::Done));
        QVERIFY(!progress.isEmpty());
        QCOMPARE(view.progressBar()->value(), 100);
        QCOMPARE(document.project()->analyses().size(), analyses_before + 1);
        const ProfileSearchResults* results = view.results();
        QVERIFY(results && !results->models.empty());
        QCOMPARE(results->models[0].search.counts.targets, std::uint64_t(45 * 400));
    }
};

QTEST_MAIN(TestProfileView)
#include "test_profile_view.moc"
