// A project's connections keep their locks while this process opens the same
// file again (a JobRecording, a second Project, a copy_to onto it). POSIX
// record locks belong to the process and any close() of the file drops them
// all: if opening a project read its header with a plain open and close, the
// first connection would lose its lock, and another process closing the
// project would take it for the last user, checkpoint and delete the
// write-ahead log under the live connection (which then reads garbage: "not an
// SQLite database"). Checked with a real second process.
#include "store_test_support.hpp"

#include <QCoreApplication>
#include <QFileInfo>
#include <QProcess>

using namespace alignscope;
using namespace store_test;

namespace {

// The other process: opens the project for writing, reads it, closes it.
int run_child(const QString& path) {
    try {
        store::Project project(path.toStdString());
        return project.jobs().empty() ? 3 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        return 4;
    }
}

bool child_opens_and_closes(const QString& path) {
    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("ALIGNSCOPE_LOCK_TEST_CHILD", path);
    child.setProcessEnvironment(env);
    child.setProcessChannelMode(QProcess::ForwardedChannels);
    child.start(QCoreApplication::applicationFilePath(), {});
    return child.waitForFinished(30'000) && child.exitStatus() == QProcess::NormalExit && child.exitCode() == 0;
}

store::ProjectOptions creating() {
    store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}

}  // namespace

class TestConnectionLocks : public QObject {
    Q_OBJECT

private slots:
    void openingAgainKeepsTheFirstConnectionsLocks_data() {
        QTest::addColumn<QString>("again");
        QTest::newRow("a second Project") << "project";
        QTest::newRow("a JobRecording") << "recording";
        QTest::newRow("copy_to onto it") << "copy";
    }

    void openingAgainKeepsTheFirstConnectionsLocks() {
        QFETCH(QString, again);
        QTemporaryDir dir;
        const QString path = dir.filePath("locks.alsproj");
        store::Project project(path.toStdString(), creating());
        {
            auto job = project.begin_job(sample_spec());
            job->add_hits(sample_hits(500));
            job->finish_done();
        }
        QVERIFY(QFileInfo(path + "-wal").size() > 0);

        if (again == "project") {
            store::Project second(path.toStdString());
            QCOMPARE(second.jobs().size(), std::size_t{1});
        } else if (again == "recording") {
            auto job = project.begin_job(sample_spec());
            job->add_hits(sample_hits(10, 1000));
            job->finish_done();
        } else {
            store::Project other(dir.filePath("other.alsproj").toStdString(), creating());
            const QString message = [&] {
                try {
                    other.copy_to(path.toStdString());
                } catch (const Error& e) {
                    return QString::fromUtf8(e.what());
                }
                return QString("no error");
            }();
            QVERIFY2(message.contains("is open"), qPrintable(message));
        }

        // The other process is not the last user: the log stays, and this
        // connection goes on reading and writing a sound file.
        QVERIFY(child_opens_and_closes(path));
        QVERIFY2(QFileInfo::exists(path + "-wal"), "the other process deleted the write-ahead log of an open project");
        const auto jobs = project.jobs();
        QVERIFY(!jobs.empty());
        QCOMPARE(project.hits(jobs.front().id, 0, 1000).rows.size(), std::size_t{500});
        auto more = project.begin_job(sample_spec());
        more->add_hits(sample_hits(3));
        more->finish_done();
        QVERIFY(project.check().ok());
        QCOMPARE(integrity(path), QString("ok"));
    }
};

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsSet("ALIGNSCOPE_LOCK_TEST_CHILD"))
        return run_child(qEnvironmentVariable("ALIGNSCOPE_LOCK_TEST_CHILD"));
    QCoreApplication app(argc, argv);
    TestConnectionLocks test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_connection_locks.moc"
