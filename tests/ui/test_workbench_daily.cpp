// The workbench as a daily tool, driven off-screen through its real widgets:
// File › Paste Sequences with an empty clipboard, the Job panel at laptop
// window sizes, progress that names its phase, the visible job queue with its
// per-job cancel, and the demo opened as a fresh copy.
#include <demo_project.hpp>
#include <models/jobs_model.hpp>
#include <panels/queue_panel.hpp>
#include <views/heatmap/stepper_view.hpp>
#include <views/job_heatmap_view.hpp>
#include <views/jobs_view.hpp>
#include "project_options.hpp"
#include "workbench_fixture.hpp"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest>

#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <fstream>
#include <memory>
#include <random>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

const QString human = human_globins();
const QString others = other_globins();

// Every visible control of the panel, right edge inside the scroll area's
// viewport: nothing cut off at the side (scrolling down is fine).
QStringList cut_off_controls(QScrollArea& scroll) {
    QStringList cut;
    QWidget* viewport = scroll.viewport();
    for (QWidget* w : scroll.widget()->findChildren<QWidget*>()) {
        if (!w->isVisibleTo(scroll.widget())) continue;
        if (!qobject_cast<QAbstractButton*>(w) && !qobject_cast<QComboBox*>(w) && !qobject_cast<QAbstractSpinBox*>(w) &&
            !qobject_cast<QLabel*>(w))
            continue;
        const int right = w->mapTo(viewport, QPoint(w->width(), 0)).x();
        if (right > viewport->width() + 1)
            cut << QStringLiteral("%1 '%2' ends at %3 of %4")
                       .arg(w->metaObject()->className(), w->objectName())
                       .arg(right)
                       .arg(viewport->width());
    }
    return cut;
}

// A random DNA sequence and a relative with about 10% substitutions and
// some short indels (seeded: the same every run).
void write_dna_pair(const QString& query, const QString& target, int length, unsigned seed) {
    std::mt19937 random(seed);
    const char bases[] = "ACGT";
    std::string a;
    for (int k = 0; k < length; ++k) a += bases[random() % 4];
    std::string b;
    for (char c : a) {
        const unsigned r = random() % 100;
        if (r < 8) b += bases[random() % 4];
        else if (r < 9)
            continue;
        else if (r < 10)
            (b += c) += bases[random() % 4];
        else
            b += c;
    }
    std::ofstream(query.toStdString()) << ">q\n" << a << "\n";
    std::ofstream(target.toStdString()) << ">t\n" << b << "\n";
}

}  // namespace

class WorkbenchDailyTest : public QObject {
    Q_OBJECT
private:
    Workbench bench_;

    QString path(const QString& name) const { return bench_.path(name); }
    std::unique_ptr<MainWindow> openWindow(const QString& project, bool create, QSize size = {1200, 800}) {
        return bench_.openWindow(project, create, size);
    }

private slots:
    void initTestCase() { QVERIFY(bench_.valid()); }

    void pasteWithAnEmptyClipboard() {
        // The off-screen platform always has clipboard data; X11's has none
        // when the clipboard is empty, which is what crashed. So this case
        // runs itself again on a virtual X server.
        if (QGuiApplication::platformName() != "xcb") {
            const QString xvfb = QStandardPaths::findExecutable("xvfb-run");
            if (xvfb.isEmpty()) QFAIL("xvfb-run is missing (package xvfb, installed by scripts/check)");
            QProcess child;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("QT_QPA_PLATFORM", "xcb");
            child.setProcessEnvironment(env);
            child.setProcessChannelMode(QProcess::MergedChannels);
            child.start(xvfb, {"-a", QCoreApplication::applicationFilePath(), "pasteWithAnEmptyClipboard"});
            QVERIFY(child.waitForFinished(120'000));
            const QByteArray output = child.readAll();
            if (child.exitStatus() != QProcess::NormalExit || child.exitCode() != 0) qWarning().noquote() << output;
            QCOMPARE(child.exitStatus(), QProcess::NormalExit);
            QCOMPARE(child.exitCode(), 0);
            QVERIFY(output.contains("PASS   : WorkbenchDailyTest::pasteWithAnEmptyClipboard()"));
            return;
        }
        auto window = openWindow(path("paste.alsproj"), true);
        QVERIFY(window);
        QApplication::clipboard()->clear();
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window.get()));
        QTest::keyClick(window.get(), Qt::Key_V, Qt::ControlModifier | Qt::ShiftModifier);
        QDialog* dialog = nullptr;
        QTRY_VERIFY((dialog = window->findChild<QDialog*>("pasteDialog")) != nullptr);
        auto* edit = dialog->findChild<QPlainTextEdit*>();
        QVERIFY(edit);
        QVERIFY(edit->toPlainText().isEmpty());
        QTest::keyClicks(edit, ">p1");
        QTest::keyClick(edit, Qt::Key_Return);
        QTest::keyClicks(edit, "MKVLAAGIVG");
        QSignalSpy idle(&window->document(), &ProjectDocument::loadingIdle);
        auto* buttons = dialog->findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
        QVERIFY(idle.wait(20'000));
        bool found = false;
        for (const auto& input : window->document().inputs())
            if (input.set && input.set->records.size() == 1 && input.set->records[0].id == "p1") found = true;
        QVERIFY(found);
    }

    void jobPanelFitsLaptopWindows_data() {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<int>("algorithm");
        for (QSize size : {QSize(1000, 700), QSize(1366, 768)})
            for (JobAlgorithm a : {JobAlgorithm::Global, JobAlgorithm::SemiGlobal, JobAlgorithm::DatabaseSearch,
                                   JobAlgorithm::LongPair}) {
                const QString name = QStringLiteral("%1x%2 %3")
                                         .arg(size.width())
                                         .arg(size.height())
                                         .arg(QString::fromUtf8(to_string(a).data()));
                QTest::newRow(name.toUtf8()) << size << int(a);
            }
    }

    void jobPanelFitsLaptopWindows() {
        QFETCH(QSize, size);
        QFETCH(int, algorithm);
        auto window = openWindow(path("fit.alsproj"), !QFileInfo::exists(path("fit.alsproj")), size);
        QVERIFY(window);
        if (window->document().inputs().size() < 2) QVERIFY(load_and_wait(*window, {human, others}));
        QVERIFY(QTest::qWaitForWindowExposed(window.get()));
        auto* dock = window->findChild<QDockWidget*>("jobDock");
        QVERIFY(dock);
        auto* scroll = qobject_cast<QScrollArea*>(dock->widget());
        QVERIFY(scroll);
        JobPanel& panel = window->jobPanel();
        panel.setAlgorithm(JobAlgorithm(algorithm));
        QCoreApplication::processEvents();

        // A job shown in the heatmap with its stepper open: the central area
        // must not squeeze the panel.
        QSignalSpy finished(window.get(), &MainWindow::jobNotification);
        panel.setAlgorithm(JobAlgorithm::Global);
        QVERIFY(window->runJob() != 0);
        QVERIFY(finished.wait(60'000));
        panel.setAlgorithm(JobAlgorithm(algorithm));
        window->showView("heatmap");
        auto* heatmap = qobject_cast<JobHeatmapView*>(window->view("heatmap"));
        QVERIFY(heatmap);
        QTRY_VERIFY(heatmap->stepperAvailable());
        heatmap->showStepper();
        for (int round = 0; round < 5; ++round) QCoreApplication::processEvents();

        // The window keeps the asked size (the panel and the views fit in it).
        QVERIFY2(window->width() <= size.width(),
                 qPrintable(QStringLiteral("window %1 px wide: panel needs %2, the views %3")
                                .arg(window->width())
                                .arg(scroll->minimumWidth())
                                .arg(window->centralWidget()->minimumSizeHint().width())));
        const int usable = 260;
        QVERIFY2(dock->width() >= usable, qPrintable(QStringLiteral("dock %1 px").arg(dock->width())));
        QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
        const QStringList cut = cut_off_controls(*scroll);
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join("; ")));
        // Cancel can always be reached: scrolled to, it lies inside the viewport.
        auto* cancel = panel.findChild<QPushButton*>("cancel");
        QVERIFY(cancel);
        scroll->ensureWidgetVisible(cancel);
        const QRect cancel_rect(cancel->mapTo(scroll->viewport(), QPoint(0, 0)), cancel->size());
        QVERIFY2(scroll->viewport()->rect().contains(cancel_rect),
                 qPrintable(QStringLiteral("cancel at %1,%2 %3x%4 in %5x%6")
                                .arg(cancel_rect.x())
                                .arg(cancel_rect.y())
                                .arg(cancel_rect.width())
                                .arg(cancel_rect.height())
                                .arg(scroll->viewport()->width())
                                .arg(scroll->viewport()->height())));

        // Growing the window after a small start gives the panel room again.
        window->resize(1600, 900);
        for (int round = 0; round < 5; ++round) QCoreApplication::processEvents();
        QVERIFY2(dock->width() >= usable, qPrintable(QStringLiteral("dock %1 px").arg(dock->width())));
    }

    void progressNamesEveryPhase() {
        const QString q = path("mm_q.fa"), t = path("mm_t.fa");
        write_dna_pair(q, t, 12'000, 5);  // 144 M cells on the scalar reference: about a second a pass
        auto window = openWindow(path("progress.alsproj"), true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {q, t}));
        JobPanel& panel = window->jobPanel();
        panel.setInputs(input_id(window->document(), "mm_q.fa"), input_id(window->document(), "mm_t.fa"));
        panel.setAlgorithm(JobAlgorithm::LongPair);
        panel.setMatchMismatch(2, -3);
        panel.setGaps(5, 2);
        QVERIFY(panel.setDevice("cpu-ref"));
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));

        // What the window shows, sampled as a user would see it.
        struct Sample {
            QString label, status;
            int maximum, value;
        };
        std::vector<Sample> samples;
        bool started = false;
        auto* bar = window->findChild<QProgressBar*>("jobProgress");
        auto* label = window->findChild<QLabel*>("jobRate");
        QVERIFY(bar && label);
        QTimer sampler;
        connect(&sampler, &QTimer::timeout, this, [&] {
            if (started && bar->isVisible())
                samples.push_back({label->text(), window->statusBar()->currentMessage(), bar->maximum(), bar->value()});
        });
        sampler.start(10);
        connect(&window->queue(), &JobQueue::jobStarted, this, [&started] { started = true; });
        std::vector<JobProgress> reports;
        connect(&window->queue(), &JobQueue::jobProgress, this,
                [&reports](quint64, const JobProgress& p) { reports.push_back(p); });
        QSignalSpy finished(window.get(), &MainWindow::jobNotification);
        QVERIFY(window->runJob());
        QVERIFY(finished.wait(120'000));
        sampler.stop();
        QCOMPARE(JobState(finished.first()[1].toInt()), JobState::Done);

        // Every phase is reported, in order.
        std::vector<JobPhase> phases;
        for (const JobProgress& p : reports)
            if (phases.empty() || phases.back() != p.phase) phases.push_back(p.phase);
        const std::vector<JobPhase> expected{JobPhase::Preparing, JobPhase::LongFirstPass, JobPhase::LongRefining,
                                             JobPhase::Saving};
        QStringList seen;
        for (JobPhase p : phases) seen << display_name(p);
        QVERIFY2(phases == expected, qPrintable(seen.join(" -> ")));
        // A full bar only at the end of the first pass; after it no percentage.
        for (const JobProgress& p : reports) {
            if (p.phase == JobPhase::LongFirstPass) QVERIFY(p.percent() >= 0 && p.percent() <= 100);
            else
                QCOMPARE(p.percent(), -1);
            QCOMPARE(p.eta_seconds(), -1.0);  // no long-pair estimate was measured here
        }
        // On screen: the phase named, a busy bar while Myers-Miller refines,
        // never an ETA, and the status bar never says "Queued" while it runs.
        QVERIFY(!samples.empty());
        bool saw_refining = false;
        for (const Sample& s : samples) {
            QVERIFY2(!s.status.startsWith("Queued"), qPrintable(s.status));
            QVERIFY2(!s.label.contains("ETA"), qPrintable(s.label));
            if (s.label.contains(display_name(JobPhase::LongRefining))) {
                saw_refining = true;
                QCOMPARE(s.maximum, 0);
            }
        }
        QVERIFY(saw_refining);
    }

    void estimatesOnlyFromTheSameKindOfJob() {
        auto window = openWindow(path("estimate.alsproj"), true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {human, others}));
        JobPanel& panel = window->jobPanel();
        QVERIFY(panel.setDevice("cpu"));
        panel.setAlgorithm(JobAlgorithm::Global);
        QSignalSpy finished(window.get(), &MainWindow::jobNotification);
        QVERIFY(window->runJob());
        QVERIFY(finished.wait(60'000));
        QTRY_VERIFY2(panel.estimateText().contains("measured by 1 earlier job"), qPrintable(panel.estimateText()));
        // A search, a local job, or one without traceback was never measured.
        for (JobAlgorithm a : {JobAlgorithm::DatabaseSearch, JobAlgorithm::Local}) {
            panel.setAlgorithm(a);
            QVERIFY2(panel.estimateText().contains("No time estimate"), qPrintable(panel.estimateText()));
        }
        panel.setAlgorithm(JobAlgorithm::Global);
        panel.setTraceback(false);
        QVERIFY2(panel.estimateText().contains("No time estimate"), qPrintable(panel.estimateText()));
        panel.setTraceback(true);
        QVERIFY2(panel.estimateText().contains("measured by 1 earlier job"), qPrintable(panel.estimateText()));
    }

    void queueShowsJobsAndCancelsOneAtATime() {
        const QString q = path("queue_q.fa"), t = path("queue_t.fa");
        write_dna_pair(q, t, 20'000, 6);  // 400 M cells on the scalar reference: seconds
        auto window = openWindow(path("queue.alsproj"), true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {q, t, human, others}));
        JobPanel& panel = window->jobPanel();
        auto* run = panel.findChild<QPushButton*>("run");
        QVERIFY(run);
        QCOMPARE(run->text(), QString("Run"));
        // Job 1: a long pair that runs for seconds.
        panel.setInputs(input_id(window->document(), "queue_q.fa"), input_id(window->document(), "queue_t.fa"));
        panel.setAlgorithm(JobAlgorithm::LongPair);
        panel.setMatchMismatch(2, -3);
        panel.setGaps(5, 2);
        QVERIFY(panel.setDevice("cpu-ref"));
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));
        QTest::mouseClick(run, Qt::LeftButton);
        // Jobs 2 and 3: quick global alignments of the globins, queued behind it.
        QTRY_COMPARE(run->text(), QString("Queue"));
        panel.setInputs(input_id(window->document(), "globins_human.fa"),
                        input_id(window->document(), "globins_others.fa"));
        panel.setAlgorithm(JobAlgorithm::Global);
        panel.setMatrix("BLOSUM62");
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));
        QTest::mouseClick(run, Qt::LeftButton);
        QVERIFY2(window->statusBar()->currentMessage().contains("Queued behind 1 job"),
                 qPrintable(window->statusBar()->currentMessage()));
        QTest::mouseClick(run, Qt::LeftButton);

        // The queue lists all three, in order, with their state.
        QTreeWidget& list = window->queuePanel().list();
        QVERIFY(list.isVisible());
        QCOMPARE(list.topLevelItemCount(), 3);
        QTRY_VERIFY(list.topLevelItem(0)->text(QueuePanel::State).startsWith("running"));
        for (int k : {1, 2}) QCOMPARE(list.topLevelItem(k)->text(QueuePanel::State), display_name(JobPhase::Waiting));
        QTRY_VERIFY(list.topLevelItem(2)->text(QueuePanel::Job) != "…");
        const qint64 first = list.topLevelItem(0)->text(QueuePanel::Job).toLongLong();
        const qint64 second = list.topLevelItem(1)->text(QueuePanel::Job).toLongLong();
        const qint64 third = list.topLevelItem(2)->text(QueuePanel::Job).toLongLong();
        QVERIFY(first > 0 && second > first && third > second);

        // The third job's own Cancel: it alone ends.
        std::map<qint64, JobState> ended;
        connect(window.get(), &MainWindow::jobNotification, this,
                [&ended](qint64 id, int state, const QString&) { ended[id] = JobState(state); });
        auto* cancel_third = qobject_cast<QToolButton*>(list.itemWidget(list.topLevelItem(2), QueuePanel::Cancel));
        QVERIFY(cancel_third);
        QTest::mouseClick(cancel_third, Qt::LeftButton);
        // Esc cancels the running job only; the second then runs to the end.
        QTest::keyClick(window.get(), Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(ended.size() == 3, 60'000);
        QCOMPARE(ended[first], JobState::Cancelled);
        QCOMPARE(ended[second], JobState::Done);
        QCOMPARE(ended[third], JobState::Cancelled);
        QTRY_COMPARE(list.topLevelItemCount(), 0);
        QCOMPARE(run->text(), QString("Run"));

        // A job that never ran has no start time in the jobs list.
        window->document().poll();
        JobsModel& model = window->jobsView().model();
        QTRY_VERIFY(model.rowOf(third) >= 0);
        const store::JobInfo* never = window->document().job(third);
        QVERIFY(never);
        QVERIFY(JobsModel::neverRan(*never));
        QCOMPARE(model.index(model.rowOf(third), JobsModel::Started).data().toString(), QString());
        QVERIFY(model.index(model.rowOf(third), JobsModel::Started)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains("Never started"));
        QVERIFY(!model.index(model.rowOf(second), JobsModel::Started).data().toString().isEmpty());
    }

    void cancelAllAsksFirst() {
        const QString q = path("all_q.fa"), t = path("all_t.fa");
        write_dna_pair(q, t, 20'000, 7);
        auto window = openWindow(path("all.alsproj"), true);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {q, t}));
        JobPanel& panel = window->jobPanel();
        panel.setInputs(input_id(window->document(), "all_q.fa"), input_id(window->document(), "all_t.fa"));
        panel.setAlgorithm(JobAlgorithm::LongPair);
        panel.setMatchMismatch(2, -3);
        panel.setGaps(5, 2);
        QVERIFY(panel.setDevice("cpu-ref"));
        QVERIFY(window->runJob());
        QVERIFY(window->runJob());
        auto* action = window->findChild<QAction*>("cancelAll");
        QVERIFY(action && action->isEnabled());
        action->trigger();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = window->findChild<QMessageBox*>("cancelAllBox")) != nullptr);
        QTest::mouseClick(box->findChild<QPushButton*>("cancelAllNo"), Qt::LeftButton);
        QTest::qWait(200);
        QCOMPARE(window->queue().activeTickets().size(), 2);
        action->trigger();
        QTRY_VERIFY((box = window->findChild<QMessageBox*>("cancelAllBox")) != nullptr);
        QSignalSpy idle(&window->queue(), &JobQueue::idle);
        QTest::mouseClick(box->findChild<QPushButton*>("cancelAllYes"), Qt::LeftButton);
        QVERIFY(idle.wait(20'000));
        QCOMPARE(window->queue().activeTickets().size(), 0);
    }

    void demoOpensAFreshCopy() {
        const auto owned = bench_.window();
        MainWindow& window = *owned;
        QSignalSpy done(&window, &MainWindow::jobNotification);
        const QString first = open_demo_project(window);
        QVERIFY(done.wait(60'000));
        // The user works in it: another job.
        done.clear();
        window.jobPanel().setAlgorithm(JobAlgorithm::Local);
        QVERIFY(window.runJob());
        QVERIFY(done.wait(60'000));
        QCOMPARE(window.document().jobs().size(), std::size_t(2));
        // The next demo is the demo again, in a new file; the first copy keeps the user's work.
        done.clear();
        const QString second = open_demo_project(window);
        QVERIFY(done.wait(60'000));
        QVERIFY(second != first);
        QCOMPARE(window.document().path(), QFileInfo(second).absoluteFilePath());
        QCOMPARE(window.document().jobs().size(), std::size_t(1));
        store::Project kept(first.toStdString(), read_only_project());
        QCOMPARE(kept.jobs().size(), std::size_t(2));
    }

    void jobsAreListedByTheirTask() {
        const QString project = path("tasks.alsproj");
        auto window = openWindow(project, true);
        QVERIFY(window);
        auto record = [&project](const char* command, const char* mode, std::map<std::string, std::string> params) {
            store::JobSpec spec;
            spec.command = command;
            spec.mode = mode;
            spec.devices = "cpu";
            spec.parameters = std::move(params);
            store::JobRecording recording(project.toStdString(), spec);
            recording.finish_done();
        };
        record("search", "local", {{"search", "database"}});
        record("align", "global", {{"long", "yes"}});
        record("hmmsearch", "local", {});
        record("align", "semiglobal", {});
        JobsModel& model = window->jobsView().model();
        QTRY_COMPARE_WITH_TIMEOUT(model.rowCount(), 4, 5000);
        QStringList tasks;
        for (int r = 0; r < 4; ++r) tasks << model.index(r, JobsModel::Mode).data().toString();
        QCOMPARE(tasks, (QStringList{"database search", "long pair, global", "profile search", "semiglobal"}));
        QCOMPARE(model.headerData(JobsModel::Mode, Qt::Horizontal).toString(), QString("Task"));
        // The panel and the stepper name no GPU for a CPU job.
        JobPanel& panel = window->jobPanel();
        panel.setAlgorithm(JobAlgorithm::LongPair);
        QVERIFY(panel.setDevice("cpu"));
        auto* algorithm = panel.findChild<QComboBox*>("algorithm");
        QVERIFY2(!algorithm->currentText().contains("GPU"), qPrintable(algorithm->currentText()));
    }

    void stepperEndStopsAtTheEndOfTheFill() {
        DpStepperView view;
        AlignOptions options;
        options.mode = AlignmentMode::Global;
        view.setPair("HEAGAWGHEE", "PAWHEAE", ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 10, 0.5),
                     options);
        view.show();
        auto* end = view.findChild<QPushButton*>("stepperEnd");
        QVERIFY(end);
        QTest::mouseClick(end, Qt::LeftButton);
        DpStepper& s = *view.stepper();
        QCOMPARE(s.filled(), s.innerCells());
        QVERIFY(!s.inTraceback());
        QVERIFY(view.statusText().startsWith("Fill"));
        QTest::mouseClick(end, Qt::LeftButton);
        QVERIFY(s.inTraceback());
        QCOMPARE(s.tracebackDone(), s.tracebackSteps());
        // The keys the tooltips name step back and forth.
        QVERIFY(view.findChild<QPushButton*>("stepperForward")->toolTip().contains("Right arrow"));
        QVERIFY(view.findChild<QPushButton*>("stepperBack")->toolTip().contains("Left arrow"));
    }

    void helpListsTheKeyboardShortcuts() {
        auto window = openWindow(path("keys.alsproj"), true);
        QVERIFY(window);
        auto* action = window->findChild<QAction*>("keyboardShortcuts");
        QVERIFY(action);
        action->trigger();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = window->findChild<QMessageBox*>("shortcutsBox")) != nullptr);
        const QString text = box->text();
        // Every menu action's keys are listed with its name.
        for (QAction* a : window->findChildren<QAction*>())
            for (const QKeySequence& k : a->shortcuts())
                QVERIFY2(text.contains(k.toString(QKeySequence::NativeText).toHtmlEscaped()), qPrintable(k.toString()));
        for (const char* words : {"Export Image", "Cancel Running Job", "Paste Sequences", "stepper"})
            QVERIFY2(text.contains(words), words);
    }
};

QTEST_MAIN(WorkbenchDailyTest)
#include "test_workbench_daily.moc"
