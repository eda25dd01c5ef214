// Pictures and tables out of the workbench, driven through its real widgets:
// File › Export Image… for every view (PNG at a chosen size and resolution,
// SVG and PDF as vector drawings) and `alignscope --screenshot FILE` with the
// format picked by the file's extension.
#include <image_export.hpp>
#include <views/alignment_export.hpp>
#include <views/hits/hits_view.hpp>
#include <views/job_alignments_view.hpp>
#include <views/job_heatmap_view.hpp>
#include <views/job_hits_view.hpp>
#include "workbench_fixture.hpp"

#include <alignscope/score/substitution_matrix.hpp>

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QRadioButton>
#include <QSpinBox>
#include <QTableView>
#include <QtTest>

#include <memory>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

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

// FASTA records of a file, read here: id -> residues.
std::map<QString, QString> read_fasta(const QString& path) {
    std::map<QString, QString> records;
    QString id;
    for (const QByteArray& raw : all(path).split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        if (line.startsWith('>')) id = line.mid(1).section(' ', 0, 0);
        else if (!id.isEmpty())
            records[id] += line;
    }
    return records;
}

// Score of two aligned rows under BLOSUM62 with affine gaps (a gap of k
// costs open + (k-1) * extend), counted here column by column.
double rescore(const QString& q, const QString& t, double open, double extend) {
    const auto matrix = SubstitutionMatrix::builtin("BLOSUM62");
    const QString letters = QString::fromStdString(matrix.letters());
    double score = 0;
    int in_q_gap = 0, in_t_gap = 0;
    for (int k = 0; k < q.size(); ++k) {
        if (q[k] == '-') {
            score -= in_q_gap++ ? extend : open;
            in_t_gap = 0;
        } else if (t[k] == '-') {
            score -= in_t_gap++ ? extend : open;
            in_q_gap = 0;
        } else {
            score += matrix.score(int(letters.indexOf(q[k])), int(letters.indexOf(t[k])));
            in_q_gap = in_t_gap = 0;
        }
    }
    return score;
}

}  // namespace

class ExportTest : public QObject {
    Q_OBJECT
private:
    Workbench bench_;
    QString project_;

    QString path(const QString& name) const { return bench_.path(name); }

private slots:
    void initTestCase() {
        QVERIFY(bench_.valid());
        // A project with one finished global job of the demo globins.
        project_ = path("export.alsproj");
        QVERIFY(bench_.makeDemoProject("export.alsproj", JobAlgorithm::Global) > 0);
    }

    void exportsEveryViewAsAnImage_data() {
        QTest::addColumn<QString>("view");
        for (const char* id : {"alignment", "heatmap", "stepper", "timeline", "gcups", "hits", "jobs"})
            QTest::newRow(id) << QString(id);
    }

    void exportsEveryViewAsAnImage() {
        QFETCH(QString, view);
        const auto owned = bench_.openWindow(project_, false, {1280, 800});
        QVERIFY(owned);
        MainWindow& window = *owned;
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
            const GuiRun r =
                run_gui({"--project", project_, "--screenshot", file, "--view", "alignment", "--size", "900x600"});
            QVERIFY2(r.status == 0, qPrintable(r.err));
        }
        QVERIFY(head(svg).startsWith("<?xml"));
        QVERIFY(head(svg).contains("<svg"));
        QVERIFY(head(pdf).startsWith("%PDF"));
        QVERIFY(head(png).startsWith("\x89PNG"));
        QCOMPARE(QImage(png).size(), QSize(900, 600));
        const GuiRun bad = run_gui({"--project", project_, "--screenshot", path("shot.jpg")});
        QCOMPARE(bad.status, 2);
        QVERIFY2(bad.err.contains("shot.jpg") && bad.err.contains(".svg"), qPrintable(bad.err));
        QVERIFY(!QFile::exists(path("shot.jpg")));
    }

    void exportsAlignmentsInEveryFormat_data() {
        QTest::addColumn<int>("format");
        QTest::addColumn<QString>("scope");
        for (AlignmentFileFormat f : alignment_file_formats())
            for (const char* scope : {"scopeAll", "scopeSelected", "scopeShown"})
                QTest::newRow(qPrintable(file_suffix(f) + " " + scope)) << int(f) << QString(scope);
    }

    void exportsAlignmentsInEveryFormat() {
        QFETCH(int, format);
        QFETCH(QString, scope);
        const auto owned = bench_.openWindow(project_, false, {1280, 800});
        QVERIFY(owned);
        MainWindow& window = *owned;
        const store::JobInfo& job = window.document().jobs().back();
        window.showJobResults(job.id);
        window.showView("alignment");
        auto* view = qobject_cast<JobAlignmentsView*>(window.view("alignment"));
        QVERIFY(view);
        QTRY_VERIFY(view->model().rowCount() == 10);
        // Select alignments 2 and 4 in the list (click, then Ctrl+click).
        QTableView& table = view->table();
        auto click = [&table](int row, Qt::KeyboardModifiers modifiers) {
            const QRect cell = table.visualRect(table.model()->index(row, 1));
            QTest::mouseClick(table.viewport(), Qt::LeftButton, modifiers, cell.center());
        };
        click(1, Qt::NoModifier);
        click(3, Qt::ControlModifier);
        QCOMPARE(view->selectedRows(), (std::vector<qint64>{1, 3}));
        const qint64 shown = view->currentRow();

        auto* button = view->findChild<QPushButton*>("exportAlignments");
        QVERIFY(button && button->isEnabled());
        QTest::mouseClick(button, Qt::LeftButton);
        QDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = view->findChild<QDialog*>("exportAlignmentsDialog")) != nullptr);
        QTest::mouseClick(dialog->findChild<QRadioButton*>(scope), Qt::LeftButton);
        auto* combo = dialog->findChild<QComboBox*>("alignmentFormat");
        combo->setCurrentIndex(combo->findData(format));
        const QString file = path(
            QStringLiteral("alignments-%1-%2.%3").arg(format).arg(scope, file_suffix(AlignmentFileFormat(format))));
        auto* name = dialog->findChild<QLineEdit*>("alignmentPath");
        name->selectAll();
        QTest::keyClicks(name, file);
        QTest::mouseClick(dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save), Qt::LeftButton);
        QTRY_VERIFY(view->findChild<QDialog*>("exportAlignmentsDialog") == nullptr);
        QVERIFY2(QFile::exists(file), qPrintable(file));

        std::vector<qint64> rows;
        if (scope == "scopeAll")
            for (qint64 k = 0; k < 10; ++k) rows.push_back(k);
        else if (scope == "scopeSelected")
            rows = {1, 3};
        else
            rows = {shown};
        // What each exported alignment must be: the list's ids and scores.
        QStringList queries, targets;
        std::vector<double> scores;
        for (qint64 row : rows) {
            queries << view->model().index(int(row), AlignmentListModel::Query).data().toString();
            targets << view->model().index(int(row), AlignmentListModel::Target).data().toString();
            scores.push_back(view->model().index(int(row), AlignmentListModel::Score).data().toDouble());
        }
        const auto inputs = read_fasta(human_globins());
        auto others = read_fasta(other_globins());
        std::map<QString, QString> residues = inputs;
        residues.insert(others.begin(), others.end());
        const QString text = QString::fromUtf8(all(file));
        QStringList lines = text.split('\n');
        const int n = int(rows.size());

        // Checks an aligned pair of rows named "ID/begin-end" or by id and range.
        auto check_rows = [&](int k, const QString& q_name, const QString& q_row, const QString& t_name,
                              const QString& t_row) {
            QCOMPARE(q_row.size(), t_row.size());
            const QString q_id = q_name.section('/', 0, 0), t_id = t_name.section('/', 0, 0);
            QCOMPARE(q_id, queries[k]);
            QCOMPARE(t_id, targets[k]);
            const int qb = q_name.section('/', 1).section('-', 0, 0).toInt();
            const int qe = q_name.section('/', 1).section('-', 1).toInt();
            const int tb = t_name.section('/', 1).section('-', 0, 0).toInt();
            const int te = t_name.section('/', 1).section('-', 1).toInt();
            QString q_plain = q_row, t_plain = t_row;
            q_plain.remove('-');
            t_plain.remove('-');
            QCOMPARE(q_plain, residues.at(q_id).mid(qb - 1, qe - qb + 1));
            QCOMPARE(t_plain, residues.at(t_id).mid(tb - 1, te - tb + 1));
            QCOMPARE(rescore(q_row, t_row, 10, 0.5), scores[std::size_t(k)]);
        };

        switch (AlignmentFileFormat(format)) {
            case AlignmentFileFormat::Fasta: {
                QStringList names, seqs;
                for (const QString& line : lines) {
                    if (line.startsWith('>')) {
                        // ">ID begin-end/length" as "ID/begin-end"
                        names << line.mid(1).section(' ', 0, 0) + "/" + line.section(' ', 1).section('/', 0, 0);
                        seqs << QString();
                    } else if (!seqs.isEmpty())
                        seqs.back() += line.trimmed();
                }
                QCOMPARE(int(names.size()), 2 * n);
                for (int k = 0; k < n; ++k) check_rows(k, names[2 * k], seqs[2 * k], names[2 * k + 1], seqs[2 * k + 1]);
                break;
            }
            case AlignmentFileFormat::Clustal:
            case AlignmentFileFormat::Stockholm: {
                const bool clustal = AlignmentFileFormat(format) == AlignmentFileFormat::Clustal;
                const QString start = clustal ? "CLUSTAL" : "# STOCKHOLM 1.0";
                QCOMPARE(int(text.count(start)), n);
                if (!clustal) QCOMPARE(int(text.count("\n//\n")), n);
                // One record per alignment: its two rows (in blocks) and, for
                // Clustal, the conservation marks under the residues.
                QStringList records = text.split(start, Qt::SkipEmptyParts);
                QCOMPARE(int(records.size()), n);
                for (int k = 0; k < n; ++k) {
                    QStringList names;
                    std::map<QString, QString> rows_of;
                    QString marks;
                    int width = 0;
                    const QStringList record_lines = records[k].split('\n');
                    for (int l = 1; l < record_lines.size(); ++l) {  // line 0: the rest of the header line
                        const QString& line = record_lines[l];
                        if (line.trimmed().isEmpty() && !line.startsWith(' ')) continue;
                        if (line.startsWith('#') || line == "//") continue;
                        if (line.startsWith(' ')) {
                            marks += line.mid(width).leftJustified(rows_of[names[0]].size() - marks.size(), ' ');
                            continue;
                        }
                        const QString row = line.section(' ', 1, -1, QString::SectionSkipEmpty);
                        width = int(line.size() - row.size());
                        const QString id = line.section(' ', 0, 0);
                        if (!rows_of.count(id)) names << id;
                        rows_of[id] += row;
                    }
                    QCOMPARE(int(names.size()), 2);
                    check_rows(k, names[0], rows_of[names[0]], names[1], rows_of[names[1]]);
                    if (clustal) {
                        const QString& q = rows_of[names[0]];
                        const QString& t = rows_of[names[1]];
                        QCOMPARE(marks.size(), q.size());
                        for (int c = 0; c < q.size(); ++c) QCOMPARE(marks[c] == '*', q[c] == t[c] && q[c] != '-');
                    }
                }
                break;
            }
            case AlignmentFileFormat::Pair:
                QCOMPARE(int(text.count("# Aligned_sequences: 2")), n);
                for (int k = 0; k < n; ++k) {
                    QVERIFY(text.contains("# 1: " + queries[k]));
                    QVERIFY(text.contains("# 2: " + targets[k]));
                }
                break;
            case AlignmentFileFormat::Sam: {
                int records = 0;
                for (const QString& line : lines)
                    if (!line.isEmpty() && !line.startsWith('@')) {
                        const QStringList f = line.split('\t');
                        QCOMPARE(f[0], queries[records]);
                        QCOMPARE(f[2], targets[records]);
                        ++records;
                    }
                QCOMPARE(records, n);
                break;
            }
            case AlignmentFileFormat::Tsv: {
                int records = 0;
                for (const QString& line : lines)
                    if (!line.isEmpty() && !line.startsWith('#') && !line.startsWith("query\t")) {
                        QCOMPARE(line.section('\t', 0, 0), queries[records]);
                        ++records;
                    }
                QCOMPARE(records, n);
                break;
            }
            case AlignmentFileFormat::Json: {
                int records = 0;
                for (const QString& line : lines) {
                    if (line.isEmpty()) continue;
                    const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
                    QCOMPARE(o["query"].toString(), queries[records]);
                    QCOMPARE(o["target"].toString(), targets[records]);
                    QCOMPARE(o["score"].toDouble(), scores[std::size_t(records)]);
                    ++records;
                }
                QCOMPARE(records, n);
                break;
            }
        }
    }

    void hitsGoOutAsTables() {
        const auto owned = bench_.openWindow(path("hits.alsproj"), true, {1280, 800});
        QVERIFY(owned);
        MainWindow& window = *owned;
        QVERIFY(load_and_wait(window, {human_globins(), other_globins()}));
        window.jobPanel().setAlgorithm(JobAlgorithm::DatabaseSearch);
        QVERIFY2(window.jobPanel().canRun(), qPrintable(window.jobPanel().problemText()));
        const auto job = run_and_wait(window);
        QVERIFY(job);
        QCOMPARE(job->state, JobState::Done);
        window.showView("hits");
        auto* view = qobject_cast<JobHitsView*>(window.view("hits"));
        QVERIFY(view);
        HitsView& hits = view->hits();
        QTRY_VERIFY(hits.model()->rowCount() > 4);
        QTableView& table = *hits.table();
        const int rows = hits.model()->rowCount();

        // Ids cut at the end, in full on hover.
        QCOMPARE(table.textElideMode(), Qt::ElideRight);
        for (int r = 0; r < rows; ++r)
            QCOMPARE(hits.model()->index(r, HitTableModel::Target).data(Qt::ToolTipRole).toString(),
                     QString::fromStdString(hits.model()->hit(r).target_id));

        // A score filter typed into its box hides exactly the lower scores.
        std::vector<double> scores;
        for (int r = 0; r < rows; ++r)
            scores.push_back(hits.model()->index(r, HitTableModel::Score).data(Qt::UserRole).toDouble());
        std::vector<double> sorted = scores;
        std::sort(sorted.begin(), sorted.end());
        const double threshold = sorted[sorted.size() / 2];
        auto* min_score = hits.findChild<QDoubleSpinBox*>("minScore");
        QVERIFY(min_score);
        min_score->selectAll();
        QTest::keyClicks(min_score, QString::number(threshold, 'f', 1));
        QTest::keyClick(min_score, Qt::Key_Enter);
        int shown = 0;
        for (int r = 0; r < rows; ++r) {
            QCOMPARE(table.isRowHidden(r), scores[std::size_t(r)] < threshold);
            shown += !table.isRowHidden(r);
        }
        QVERIFY(shown > 0 && shown < rows);

        // TSV and CSV of the shown rows: a header and one line per shown hit.
        for (const QString& name : {QStringLiteral("hits.tsv"), QStringLiteral("hits.csv")}) {
            const QString file = path(name);
            hits.exportTable(file);
            const QString separator = name.endsWith("csv") ? "," : "\t";
            QStringList lines = QString::fromUtf8(all(file)).split('\n', Qt::SkipEmptyParts);
            QCOMPARE(int(lines.size()), shown + 1);
            QVERIFY(lines[0].startsWith("Rank" + separator + "Query" + separator + "Target"));
            int line = 1;
            for (int r = 0; r < rows; ++r) {
                if (table.isRowHidden(r)) continue;
                const QStringList f = lines[line++].split(separator);
                QCOMPARE(int(f.size()), int(HitTableModel::ColumnCount));
                QCOMPARE(f[HitTableModel::Target], QString::fromStdString(hits.model()->hit(r).target_id));
                QVERIFY(f[HitTableModel::Score].toDouble() >= threshold);
            }
        }

        // The right-click menu of a shown row.
        int row = 0;
        while (table.isRowHidden(row)) ++row;
        const QString target = QString::fromStdString(hits.model()->hit(row).target_id);
        std::unique_ptr<QMenu> menu(hits.contextMenu(row));
        menu->findChild<QAction*>("copyId")->trigger();
        QCOMPARE(QApplication::clipboard()->text(), target);
        menu->findChild<QAction*>("copySequence")->trigger();
        const auto others = read_fasta(other_globins());
        auto human = read_fasta(human_globins());
        const QString residues = others.count(target) ? others.at(target) : human.at(target);
        QCOMPARE(QApplication::clipboard()->text(), ">" + target + "\n" + residues.toUpper() + "\n");
        menu->findChild<QAction*>("openAlignment")->trigger();
        QCOMPARE(table.currentIndex().row(), row);
        QVERIFY(menu->findChild<QAction*>("exportSelection"));

        // Export of the selection: two rows chosen by Ctrl+click.
        int second = row + 1;
        while (table.isRowHidden(second)) ++second;
        QTest::mouseClick(table.viewport(), Qt::LeftButton, Qt::ControlModifier,
                          table.visualRect(hits.model()->index(second, 1)).center());
        QCOMPARE(table.selectionModel()->selectedRows().size(), 2);
        const QString selection = path("selection.tsv");
        hits.exportTable(selection, true);
        const QStringList lines = QString::fromUtf8(all(selection)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(int(lines.size()), 3);
        QCOMPARE(lines[1].split('\t')[HitTableModel::Target], target);
        QCOMPARE(lines[2].split('\t')[HitTableModel::Target],
                 QString::fromStdString(hits.model()->hit(second).target_id));
    }

    void hitsSayWhyStatisticsAreMissing() {
        const auto owned = bench_.openWindow(path("nostats.alsproj"), true);
        QVERIFY(owned);
        MainWindow& window = *owned;
        QVERIFY(load_and_wait(window, {human_globins(), other_globins()}));
        JobPanel& panel = window.jobPanel();
        panel.setAlgorithm(JobAlgorithm::DatabaseSearch);
        // A search starts from BLAST's gap costs (existence 11, extension 1:
        // a gap of one costs 12 in this program's convention).
        QCOMPARE(panel.request().scoring.gap_open, 12.0);
        QCOMPARE(panel.request().scoring.gap_extend, 1.0);
        panel.setGaps(10, 0.5);
        QVERIFY(run_and_wait(window));
        window.showView("hits");
        auto* view = qobject_cast<JobHitsView*>(window.view("hits"));
        QTRY_VERIFY(view->hits().model()->rowCount() > 0);
        QVERIFY(!view->hits().model()->hit(0).bits);
        QString note;
        for (QLabel* l : view->findChildren<QLabel*>()) note += l->text() + "\n";
        QVERIFY2(note.contains("no Karlin-Altschul statistics for BLOSUM62 with gaps 10/0.5"), qPrintable(note));
    }
};

QTEST_MAIN(ExportTest)
#include "test_export.moc"
