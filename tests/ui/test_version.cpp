// `--version` of both installed programs: the version, a git commit that is
// really in this checkout's history (read with git, not from our own output),
// the CUDA and MPI lines; the workbench answers without any display.
#include "../common/cli_runner.hpp"

#include <QDir>
#include <QProcessEnvironment>
#include <QtTest>

namespace {

ProcessResult run_without_display(const QString& program, const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(name);
    process.setProcessEnvironment(env);
    process.start(program, arguments);
    ProcessResult result;
    if (!process.waitForStarted(10000) || !process.waitForFinished(30000)) {
        process.kill();
        process.waitForFinished();
        result.err = "did not finish: " + program.toUtf8();
        return result;
    }
    result.crashed = process.exitStatus() == QProcess::CrashExit;
    result.exit_code = process.exitCode();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    return result;
}

int git(const QStringList& arguments, QByteArray* out = nullptr) {
    QProcess process;
    process.start("git", QStringList{"-C", ALIGNSCOPE_SOURCE_DIR} + arguments);
    if (!process.waitForFinished(30000)) return -1;
    if (out) *out = process.readAllStandardOutput().trimmed();
    return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
}

}  // namespace

class TestVersion : public QObject {
    Q_OBJECT

private slots:
    void bothProgramsSayTheirBuild_data() {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("mpi");
        QTest::newRow("alignscope-cli") << QString(ALIGNSCOPE_CLI) << "alignscope-cli"
                                        << "MPI: built in";
        QTest::newRow("alignscope") << QString(ALIGNSCOPE_GUI) << "alignscope"
                                    << "MPI: built into alignscope-cli";
    }
    void bothProgramsSayTheirBuild() {
        QFETCH(QString, program);
        QFETCH(QString, name);
        QFETCH(QString, mpi);
        const ProcessResult r = run_without_display(program, {"--version"});
        QVERIFY2(!r.crashed && r.exit_code == 0, r.err.constData());
        const QStringList lines = QString::fromUtf8(r.out).trimmed().split('\n');
        QCOMPARE(lines.size(), 4);
        QCOMPARE(lines[0], name + " " + ALIGNSCOPE_VERSION);

        // The commit: "unknown" outside a git checkout, else one of HEAD's
        // ancestors (others may commit between the build and this test).
        QVERIFY2(lines[1].startsWith("commit: "), qPrintable(lines[1]));
        QString commit = lines[1].mid(8);
        if (!QDir(QString(ALIGNSCOPE_SOURCE_DIR) + "/.git").exists()) {
            QCOMPARE(commit, QString("unknown"));
        } else {
            if (commit.endsWith("-dirty")) commit.chop(6);
            QCOMPARE(commit.size(), 12);
            QByteArray full;
            QVERIFY2(git({"rev-parse", "--verify", "--quiet", commit + "^{commit}"}, &full) == 0,
                     qPrintable("not a commit of this checkout: " + commit));
            QVERIFY(full.startsWith(commit.toLatin1()));
            QVERIFY2(git({"merge-base", "--is-ancestor", QString::fromLatin1(full), "HEAD"}) == 0,
                     qPrintable(commit + " is not in HEAD's history"));
        }
        QVERIFY2(lines[2].startsWith("CUDA: kernels for architectures ") ||
                     lines[2] == "CUDA: not built in (CPU devices only)",
                 qPrintable(lines[2]));
        // MPI: what the build found; either way the line says it.
        QVERIFY2(lines[3].startsWith(mpi) || lines[3] == "MPI: not built in", qPrintable(lines[3]));
    }

    // Both print the same build (one build_identity()).
    void theSameBuild() {
        const ProcessResult cli = run_without_display(ALIGNSCOPE_CLI, {"--version"});
        const ProcessResult gui = run_without_display(ALIGNSCOPE_GUI, {"--version"});
        const QList<QByteArray> a = cli.out.split('\n'), b = gui.out.split('\n');
        QVERIFY(a.size() >= 3 && b.size() >= 3);
        QCOMPARE(a[1], b[1]);
        QCOMPARE(a[2], b[2]);
    }
};

QTEST_GUILESS_MAIN(TestVersion)
#include "test_version.moc"
