// The workbench keeping a project's state and explaining itself, driven
// off-screen through the real window on real project files: the Job panel's
// settings saved in the project and restored when it is opened again, a
// tooltip on every control, the User Guide from the resources, file dialogs
// that remember their folder per kind of file, extension-less EMBOSS matrices
// in the matrix dialog, warnings for repeated ids and mixed alphabets,
// removing loaded files, and views that say what would fill them or that the
// panel changed since the job they show.
#include <views/gcups/gcups_view.hpp>
#include <views/heatmap/heatmap_view.hpp>
#include <views/job_heatmap_view.hpp>
#include <views/job_result_view.hpp>
#include <views/jobs_view.hpp>
#include <views/sequences_view.hpp>
#include "workbench_fixture.hpp"

#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QLineEdit>
#include <QListView>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTabBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QToolButton>
#include <QtTest>

#include <fstream>
#include <memory>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

const QString human = human_globins();
const QString others = other_globins();

// The project's setting as another connection reads it from the file.
std::string stored_setting(const QString& project, const char* key) {
    store::ProjectOptions reading;
    reading.read_only = true;
    reading.verify_inputs = false;
    store::Project file(project.toStdString(), reading);
    return file.setting(key).value_or(std::string());
}

// Controls a user acts on; the parts of composite widgets (a spin box's line
// edit, a combo box's list, a tab bar's scroll buttons, a dock's title
// buttons) are their owners' business.
bool is_control(QWidget* w) {
    if (!qobject_cast<QAbstractButton*>(w) && !qobject_cast<QComboBox*>(w) && !qobject_cast<QAbstractSpinBox*>(w) &&
        !qobject_cast<QLineEdit*>(w))
        return false;
    for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
        if (qobject_cast<QAbstractSpinBox*>(p) || qobject_cast<QComboBox*>(p) || qobject_cast<QTabBar*>(p) ||
            qobject_cast<QMessageBox*>(p) || qobject_cast<QFileDialog*>(p))
            return false;
    if (qobject_cast<QDockWidget*>(w->parentWidget())) return false;  // the dock's float/close buttons
    // Qt's own parts: a table's corner button, a line edit's clear button,
    // the menu bar's overflow button.
    if (qobject_cast<QAbstractItemView*>(w->parentWidget()) || qobject_cast<QLineEdit*>(w->parentWidget()) ||
        qobject_cast<QMenuBar*>(w->parentWidget()))
        return false;
    return true;
}

}  // namespace

class WorkbenchProjectTest : public QObject {
    Q_OBJECT
private:
    Workbench bench_;

    QString path(const QString& name) const { return bench_.path(name); }
    std::unique_ptr<MainWindow> openWindow(const QString& project, bool create, QStringList* messages = nullptr) {
        return bench_.openWindow(project, create, {1200, 800}, messages);
    }

private slots:
    void initTestCase() {
        QSettings().clear();
        QVERIFY(bench_.valid());
    }

    // Set up, closed, opened again: the panel is as it was left, read from
    // the project file (another connection sees the setting there).
    void panelSettingsKeptWithTheProject() {
        const QString project = path("settings.alsproj");
        {
            auto window = openWindow(project, true);
            QVERIFY(window);
            QVERIFY(load_and_wait(*window, {human, others}));
            JobPanel& panel = window->jobPanel();
            panel.setInputs(input_id(window->document(), "globins_others.fa"),
                            input_id(window->document(), "globins_human.fa"));
            panel.setAlgorithm(JobAlgorithm::SemiGlobal);
            panel.setFreeEnds(FreeEndGaps{true, false, false, true});
            panel.setMatrix("PAM250");
            panel.setGaps(13, 2);
            panel.setTraceback(false);
            panel.setPairing(Pairing::RecordByRecord);
            panel.setThreads(2);
            QTRY_VERIFY_WITH_TIMEOUT(stored_setting(project, JobPanel::settings_key).find("PAM250") !=
                                         std::string::npos,
                                     5000);
        }
        const std::string saved = stored_setting(project, JobPanel::settings_key);
        QVERIFY2(saved.find("\"gap_open\":13") != std::string::npos, saved.c_str());
        auto window = openWindow(project, false);
        QVERIFY(window);
        const JobRequest r = window->jobPanel().request();
        QCOMPARE(r.algorithm, JobAlgorithm::SemiGlobal);
        QCOMPARE(r.free_ends.query_begin, true);
        QCOMPARE(r.free_ends.query_end, false);
        QCOMPARE(r.free_ends.target_begin, false);
        QCOMPARE(r.free_ends.target_end, true);
        QCOMPARE(r.scoring.matrix, std::string("PAM250"));
        QCOMPARE(r.scoring.gap_open, 13.0);
        QCOMPARE(r.scoring.gap_extend, 2.0);
        QCOMPARE(r.traceback, false);
        QCOMPARE(r.pairing, Pairing::RecordByRecord);
        QCOMPARE(r.threads, 2);
        QCOMPARE(r.queries.label, std::string("globins_others.fa"));
        QCOMPARE(r.targets.label, std::string("globins_human.fa"));
        // A project of its own keeps its own settings.
        auto other = openWindow(path("fresh.alsproj"), true);
        QVERIFY(other);
        QCOMPARE(other->jobPanel().request().scoring.gap_open, 10.0);
    }

    // Every button, box, field and spin box of the window, the Job panel and
    // every view says what it does on hover.
    void everyControlHasATooltip() {
        auto window = openWindow(path("tips.alsproj"), true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {human, others}));
        QStringList missing;
        for (QWidget* w : window->findChildren<QWidget*>()) {
            if (!is_control(w) || !w->toolTip().trimmed().isEmpty()) continue;
            missing << QStringLiteral("%1 '%2' (%3) in %4")
                           .arg(w->metaObject()->className(), w->objectName(),
                                qobject_cast<QAbstractButton*>(w) ? qobject_cast<QAbstractButton*>(w)->text()
                                                                  : QString(),
                                w->parentWidget() ? w->parentWidget()->metaObject()->className() : "");
        }
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join('\n')));
    }

    // Help › User Guide: the manual in the program's resources, a real
    // document for a researcher or a lecturer.
    void userGuide() {
        auto window = openWindow(path("guide.alsproj"), true);
        QVERIFY(window);
        auto* action = window->findChild<QAction*>("userGuide");
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(QKeySequence::HelpContents));
        action->trigger();
        QDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window->findChild<QDialog*>("userGuideWindow")) != nullptr);
        auto* text = dialog->findChild<QTextBrowser*>("userGuideText");
        QVERIFY(text);
        const QString guide = text->toPlainText();
        QVERIFY2(guide.size() > 6000, qPrintable(QString::number(guide.size())));
        for (const char* part : {"A first session", "Choosing the algorithm", "Scoring", "Teaching with the DP stepper",
                                 "anti-diagonal", "open + (k−1)·extend", "stale", "Identity", "Space"})
            QVERIFY2(guide.contains(part, Qt::CaseInsensitive), part);
        // Every menu in the guide is one the window has.
        for (const char* item : {"Load Sequences", "Paste Sequences", "Export Image", "Keyboard Shortcuts"}) {
            bool found = false;
            for (QAction* a : window->findChildren<QAction*>()) found = found || a->text().remove('&').startsWith(item);
            QVERIFY2(found, item);
        }
        keep_screenshot(*dialog, "user-guide");
        // Asked again, the same window comes up.
        QCOMPARE(window->showUserGuide(), dialog);
    }

    // Each kind of file has its folder: a sequence file chosen in one folder
    // brings the next sequence dialog there, while projects keep theirs.
    void rememberedFolders() {
        auto window = openWindow(path("folders.alsproj"), true);
        QVERIFY(window);
        QDir(bench_.folder()).mkpath("seqs");
        QDir(bench_.folder()).mkpath("projects");
        const QString seqs = path("seqs"), projects = path("projects");
        QVERIFY(QFile::copy(human, seqs + "/human.fa"));
        QSettings().setValue("folders/projects", projects);
        QSettings().remove("folders/sequences");

        QFileDialog* dialog = window->loadSequencesDialog();
        QVERIFY(dialog);
        QCOMPARE(QDir(dialog->directory()).absolutePath(), QDir::homePath());
        QSignalSpy idle(&window->document(), &ProjectDocument::loadingIdle);
        dialog->selectFile(seqs + "/human.fa");
        static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept checks the name, as the button does
        QVERIFY(idle.wait(30'000));
        QVERIFY(input_id(window->document(), "human.fa"));
        QCOMPARE(QSettings().value("folders/sequences").toString(), seqs);
        dialog = window->loadSequencesDialog();
        QCOMPARE(QDir(dialog->directory()).absolutePath(), seqs);
        dialog->reject();
        dialog = window->openProjectDialog();
        QCOMPARE(QDir(dialog->directory()).absolutePath(), projects);
        dialog->reject();
    }

    // EMBOSS matrices have no extension: the matrix dialog lists them, and
    // one chosen there is what the job is scored with.
    void extensionlessMatrix() {
        auto window = openWindow(path("matrix.alsproj"), true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {human, others}));
        QDir(bench_.folder()).mkpath("matrices");
        const QString folder = path("matrices");
        QVERIFY(QFile::copy(QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/matrices/PAM70.mat"), folder + "/EPAM70"));
        QSettings().setValue("folders/matrices", folder);
        QToolButton* browse = nullptr;
        for (auto* b : window->jobPanel().findChildren<QToolButton*>())
            if (b->text() == QStringLiteral("…")) browse = b;
        QVERIFY(browse);
        browse->click();
        QFileDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window->findChild<QFileDialog*>("matrixDialog")) != nullptr);
        auto* list = dialog->findChild<QListView*>("listView");
        QVERIFY(list);
        auto listed = [list] {
            QStringList names;
            for (int r = 0; r < list->model()->rowCount(list->rootIndex()); ++r)
                names << list->model()->index(r, 0, list->rootIndex()).data().toString();
            return names;
        };
        QTRY_VERIFY2(listed().contains("EPAM70"), qPrintable(listed().join(", ")));
        // Typed as a user would (selectFile leaves a focused name field alone).
        auto* name = dialog->findChild<QLineEdit*>("fileNameEdit");
        QVERIFY(name);
        name->clear();
        QTest::keyClicks(name, "EPAM70");
        QCOMPARE(dialog->selectedFiles(), QStringList{folder + "/EPAM70"});
        static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept checks the name, as the button does  //
                                                  // QFileDialog::accept checks the name, as the button does
        const JobRequest r = window->jobPanel().request();
        QCOMPARE(QString::fromStdString(r.scoring.matrix), folder + "/EPAM70");
        QVERIFY2(window->jobPanel().canRun(), qPrintable(window->jobPanel().problemText()));
        QCOMPARE(QSettings().value("folders/matrices").toString(), folder);
        // Scored with it: the job's matrix is the file's (PAM70's scores).
        QVERIFY(run_and_wait(*window));
        const store::JobInfo job = window->document().jobs().back();
        QCOMPARE(job.state, store::JobState::Done);
        const SubstitutionMatrix want = SubstitutionMatrix::builtin("PAM70");
        const ScoringScheme scheme = window->document().scheme(job.id);  // scores scaled with the half-step gaps
        const SubstitutionMatrix& got = scheme.matrix;
        QCOMPARE(got.size(), want.size());
        for (int a = 0; a < want.size(); ++a)
            for (int b = 0; b < want.size(); ++b) QCOMPARE(got.score(a, b), want.score(a, b) * scheme.scale);
    }

    // A file whose records repeat ids, or mix protein with nucleotides, is
    // loaded with a warning in the window: the engine's own duplicate-id line.
    void loadWarnings() {
        QStringList messages;
        auto window = openWindow(path("warnings.alsproj"), true, &messages);
        QVERIFY(window);
        const QString dup = path("duplicates.fa");
        std::ofstream(dup.toStdString()) << ">a first\nMKTAYIAKQR\n>b\nMKTAYIAKQQ\n>a again\nMKTAYIAKQA\n";
        const std::string engine_line = read_sequences(dup.toStdString()).duplicate_id_warning();
        QVERIFY(!engine_line.empty());
        messages.clear();
        QVERIFY(load_and_wait(*window, {dup}));
        QTRY_VERIFY(!messages.isEmpty());
        QVERIFY2(messages.join('\n').contains(QString::fromStdString(engine_line)), qPrintable(messages.join('\n')));

        const QString mixed = path("mixed.fa");
        std::ofstream(mixed.toStdString()) << ">p1\nMKTAYIAKQRQISFVKSHFSRQ\n>p2\nMVLSPADKTNVKAAWGKVGAHAG\n"
                                              ">n1\nACGTACGTTAGCATCGATCGATCG\n";
        messages.clear();
        QVERIFY(load_and_wait(*window, {mixed}));
        QTRY_VERIFY(!messages.isEmpty());
        QVERIFY2(messages.join('\n').contains("1 of 3 records look like nucleotides (the first is n1)"),
                 qPrintable(messages.join('\n')));
        // A clean file loads without a word.
        messages.clear();
        QVERIFY(load_and_wait(*window, {human}));
        QTest::qWait(100);
        QVERIFY2(messages.isEmpty(), qPrintable(messages.join('\n')));
    }

    // Files can be removed again: gone from the table, the panel and the
    // project file; one a job used stays, and the window says which job.
    void removeLoadedFiles() {
        const QString project = path("remove.alsproj");
        auto window = openWindow(project, true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {human, others}));
        SequencesView& view = window->sequencesView();
        window->showView("sequences");
        QCOMPARE(view.model().rowCount(), 7);
        // Select the rows of globins_others.fa (the last five) and remove it.
        const qint64 others_id = input_id(window->document(), "globins_others.fa");
        view.table().selectAll();
        for (int r = 0; r < view.filter().rowCount(); ++r) {
            const QModelIndex source = view.filter().mapToSource(view.filter().index(r, 0));
            if (view.model().source(source.row()).input_id != others_id)
                view.table().selectionModel()->select(view.filter().index(r, 0),
                                                      QItemSelectionModel::Deselect | QItemSelectionModel::Rows);
        }
        QCOMPARE(view.selectedInputs(), std::vector<qint64>{others_id});
        QMessageBox* box = view.confirmRemoveSelectedFiles();
        QVERIFY(box);
        QVERIFY(box->text().contains("globins_others.fa (5 sequences)"));
        keep_screenshot(*window, "sequences-remove");
        auto* yes = box->findChild<QPushButton*>("removeFilesYes");
        QVERIFY(yes);
        yes->click();
        QTRY_COMPARE(view.model().rowCount(), 2);
        QCOMPARE(input_id(window->document(), "globins_others.fa"), 0);
        {
            store::ProjectOptions reading;
            reading.read_only = true;
            store::Project file(project.toStdString(), reading);
            QCOMPARE(file.inputs().size(), std::size_t{1});
            QVERIFY(QString::fromStdString(file.inputs().front().path).endsWith("globins_human.fa"));
        }
        // Used by a job: kept, and the reason names the job.
        window->jobPanel().setInputs(input_id(window->document(), "globins_human.fa"),
                                     input_id(window->document(), "globins_human.fa"));
        QVERIFY(run_and_wait(*window));
        const qint64 job = window->document().jobs().back().id;
        QVERIFY(!view.removeInputs({input_id(window->document(), "globins_human.fa")}));
        QVERIFY2(view.lastError().contains(QStringLiteral("used by job %1").arg(job)), qPrintable(view.lastError()));
        QCOMPARE(view.model().rowCount(), 2);
    }

    // A job without timeline events: one of the window's is not blamed on a
    // command-line flag; a command-line job's names the flag.
    void emptyTimelineSaysWhy() {
        const QString project = path("timeline.alsproj");
        std::int64_t gui = 0, cli = 0;
        {
            store::ProjectOptions creating;
            creating.create_if_missing = true;
            store::Project file(project.toStdString(), creating);
            store::JobSpec spec;
            spec.command = "gui";
            spec.mode = "global";
            spec.devices = "cpu";
            spec.set_scheme(ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 10, 0.5));
            spec.parameters["long"] = "yes";
            auto a = file.begin_job(spec);
            a->finish_done();
            gui = a->job_id();
            spec.command = "align";
            auto b = file.begin_job(spec);
            b->finish_done();
            cli = b->job_id();
        }
        auto window = openWindow(project, false);
        QVERIFY(window);
        auto* timeline = qobject_cast<JobResultView*>(window->view("timeline"));
        window->showView("timeline");
        window->showJobResults(gui);
        QTRY_VERIFY2(timeline->noteText().contains("recorded no timeline events") &&
                         !timeline->noteText().contains("--timeline"),
                     qPrintable(timeline->noteText()));
        window->showJobResults(cli);
        window->showView("timeline");
        QTRY_VERIFY2(timeline->noteText().contains("--timeline"), qPrintable(timeline->noteText()));
    }

    // Empty views say what would fill them; a view showing a job the panel
    // no longer describes says so and what changed, until the panel is back.
    void emptyAndStaleStates() {
        auto window = openWindow(path("states.alsproj"), true);
        QVERIFY(window);
        auto* alignment = qobject_cast<JobResultView*>(window->view("alignment"));
        auto* heatmap = qobject_cast<JobHeatmapView*>(window->view("heatmap"));
        auto* hits = qobject_cast<JobResultView*>(window->view("hits"));
        QVERIFY(alignment && heatmap && hits);
        for (JobResultView* v : {alignment, static_cast<JobResultView*>(heatmap), hits}) {
            window->showView(v == alignment ? "alignment" : v == hits ? "hits" : "heatmap");
            QTRY_VERIFY2(v->noteText().contains("No job in this project yet") && v->noteText().contains("Run"),
                         qPrintable(v->noteText()));
        }
        QVERIFY2(window->jobsView().emptyText().contains("No jobs yet"), qPrintable(window->jobsView().emptyText()));
        window->showView("sequences");
        QVERIFY2(window->sequencesView().emptyText().contains("Load Sequences"),
                 qPrintable(window->sequencesView().emptyText()));
        keep_screenshot(*window, "workbench-empty");
        auto* gcups = window->findChild<GcupsView*>();
        QVERIFY(gcups);
        QVERIFY(gcups->emptyText().contains("Compare CPU and GPU"));
        QVERIFY(!gcups->plot()->legend->visible());

        QVERIFY(load_and_wait(*window, {human, others}));
        QVERIFY(window->sequencesView().emptyText().isEmpty());
        window->sequencesView().filterEdit().setText("no such id");
        QVERIFY(window->sequencesView().emptyText().contains("No sequence matches"));
        window->sequencesView().filterEdit().clear();

        JobPanel& panel = window->jobPanel();
        panel.setAlgorithm(JobAlgorithm::Local);
        panel.setMatrix("BLOSUM62");
        QVERIFY(run_and_wait(*window));
        const qint64 job = window->document().jobs().back().id;
        QVERIFY(window->jobsView().emptyText().isEmpty());
        window->showJobResults(job);
        window->showView("alignment");
        QTRY_VERIFY(alignment->shownJob() == job);
        QTest::qWait(300);
        QVERIFY2(!alignment->isStale(), qPrintable(alignment->staleReasons().join("; ")));
        // The panel changes: every view of the job says it is stale, and why.
        panel.setMatrix("PAM250");
        QTRY_VERIFY(alignment->isStale());
        QVERIFY2(alignment->staleReasons().join(' ').contains("matrix: BLOSUM62 → PAM250") &&
                     alignment->staleReasons().join(' ').contains("PAM250"),
                 qPrintable(alignment->staleReasons().join("; ")));
        auto* note = alignment->findChild<QLabel*>("note");
        QVERIFY(note->text().contains("Stale"));
        QVERIFY(heatmap->isStale());
        panel.setAlgorithm(JobAlgorithm::Global);
        QTRY_COMPARE(alignment->staleReasons().size(), 2);
        panel.setGaps(11, 1);
        QTRY_VERIFY(alignment->staleReasons().join(' ').contains("gap open/extend: 10/0.5 → 11/1"));
        keep_screenshot(*window, "workbench-stale");
        panel.setGaps(10, 0.5);
        // Back as it was: no longer stale.
        panel.setMatrix("BLOSUM62");
        panel.setAlgorithm(JobAlgorithm::Local);
        QTRY_VERIFY(!alignment->isStale());
        QVERIFY(!note->text().contains("Stale"));

        // No job chosen again: the heatmap draws nothing of the last job.
        window->showView("heatmap");
        QTRY_VERIFY(heatmap->heatmap().pathCurve()->data()->size() > 0);
        window->showJobResults(0);
        QTRY_VERIFY(heatmap->noteText().contains("No job chosen"));
        QCOMPARE(heatmap->heatmap().pathCurve()->data()->size(), 0);
    }
};

QTEST_MAIN(WorkbenchProjectTest)
#include "test_workbench_project.moc"
