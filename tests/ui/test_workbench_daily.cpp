// The workbench as a daily tool, driven off-screen through its real widgets:
// File › Paste Sequences with an empty clipboard, the Job panel at laptop
// window sizes, progress that names its phase, the visible job queue with its
// per-job cancel, and the demo opened as a fresh copy.
#include <demo_project.hpp>
#include <mainwindow.hpp>
#include <panels/job_panel.hpp>

#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QPushButton>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

const QString demo_dir = QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo");
const QString human = demo_dir + "/globins_human.fa";
const QString others = demo_dir + "/globins_others.fa";

}  // namespace

class WorkbenchDailyTest : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<DeviceRegistry> registry_;
    std::unique_ptr<QTemporaryDir> dir_;

    QString path(const QString& name) const { return dir_->filePath(name); }

    std::unique_ptr<MainWindow> openWindow(const QString& project, bool create, QSize size = {1200, 800}) {
        auto window = std::make_unique<MainWindow>(*registry_);
        window->setConfirmCloseWhileRunning(false);
        window->resize(size);
        window->show();
        QSignalSpy ready(window.get(), &MainWindow::projectReady);
        window->openProject(project, create);
        if (!ready.wait(20'000)) return nullptr;
        return window;
    }

    bool loadAndWait(MainWindow& window, const QStringList& files) {
        QSignalSpy idle(&window.document(), &ProjectDocument::loadingIdle);
        window.loadFiles(files);
        return idle.wait(30'000);
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        registry_ = make_cpu_registry();
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
    }

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
};

QTEST_MAIN(WorkbenchDailyTest)
#include "test_workbench_daily.moc"
