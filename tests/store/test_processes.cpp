// Real processes against one project file: a writer killed with SIGKILL in the
// middle of a job, two writers at once, and a reader in another process that
// sees new jobs by polling. The children are this test binary started again
// with a "child-..." first argument (see main below).
#include "store_test_support.hpp"

#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>

#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <thread>

using namespace alignscope;
using namespace store_test;

namespace {

constexpr int kCrashBatch = 2000;

// child-crash PROJECT: records one job and writes hits in batches until killed.
int child_crash(const std::string& project) {
    store::RecordingOptions options;
    options.progress_interval = std::chrono::milliseconds(0);
    store::JobRecording job(project, sample_spec("align"), options);
    job.add_alignments(sample_alignments(6));
    job.add_timeline(sample_events(40), "steady-clock");
    job.add_hits(sample_hits(kCrashBatch, 0));
    std::cout << "ready " << job.job_id() << std::endl;  // at least one batch of hits is in
    for (int batch = 1;; ++batch) {
        job.add_hits(sample_hits(kCrashBatch, batch * kCrashBatch));
        job.progress(Progress{std::uint64_t(batch), 1'000'000, 0, 0});
    }
}

// child-writer PROJECT FASTA JOBS: records JOBS complete jobs as fast as it can.
int child_writer(const std::string& project, const std::string& fasta, int jobs) {
    const SequenceSet set = read_sequences(fasta);
    for (int k = 0; k < jobs; ++k) {
        store::RecordingOptions options;
        options.progress_interval = std::chrono::milliseconds(0);
        store::JobRecording job(project, sample_spec("align"), options);
        job.add_input(set, "query");
        job.add_hits(sample_hits(200, k * 200));
        job.progress(Progress{50, 100, 1, 2});
        job.add_timeline(sample_events(50, k * 50), "steady-clock");
        job.progress(Progress{100, 100, 2, 2});
        job.finish_done();
    }
    std::cout << "done" << std::endl;
    return 0;
}

// child-hold PROJECT: begins a job, says so, and finishes it when told to.
int child_hold(const std::string& project) {
    store::JobRecording job(project, sample_spec("align"));
    std::cout << "begun " << job.job_id() << std::endl;
    std::string line;
    std::getline(std::cin, line);
    job.add_hits(sample_hits(5));
    job.finish_done();
    std::cout << "finished" << std::endl;
    return 0;
}

QString wait_for_line(QProcess& process, int timeout_ms = 30000) {
    QElapsedTimer timer;
    timer.start();
    while (!process.canReadLine()) {
        if (timer.elapsed() > timeout_ms || process.state() == QProcess::NotRunning) {
            qWarning("child said nothing; stderr: %s", process.readAllStandardError().constData());
            return {};
        }
        process.waitForReadyRead(100);
    }
    return QString::fromUtf8(process.readLine()).trimmed();
}

void start_child(QProcess& process, const QStringList& arguments) {
    process.start(QCoreApplication::applicationFilePath(), arguments);
    QVERIFY(process.waitForStarted(10000));
}

store::ProjectOptions creating() {
    store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}

}  // namespace

class TestProcesses : public QObject {
    Q_OBJECT

private slots:
    void killedWriterLeavesAnInterruptedJob() {
        QTemporaryDir dir;
        const QString path = dir.filePath("crash.alsproj");
        const auto earlier_hits = sample_hits(500);
        std::int64_t earlier = 0;
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec("search"));
            job->add_hits(earlier_hits);
            job->finish_done();
            earlier = job->job_id();
        }
        QProcess child;
        start_child(child, {"child-crash", path});
        const QString ready = wait_for_line(child);
        QVERIFY2(ready.startsWith("ready "), qPrintable(ready));
        const std::int64_t killed = ready.section(' ', 1).toLongLong();
        // While the child lives, nobody may call its job interrupted.
        {
            store::Project project(path.toStdString());
            QCOMPARE(project.job(killed).state, store::JobState::Running);
            QCOMPARE(project.mark_interrupted_jobs(), 0);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(400));  // let it write many batches
        child.kill();                                                 // SIGKILL
        QVERIFY(child.waitForFinished(10000));
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);

        QCOMPARE(integrity(path), QString("ok"));
        store::Project project(path.toStdString());
        const store::JobInfo info = project.job(killed);
        QCOMPARE(info.state, store::JobState::Interrupted);
        QVERIFY(info.error.find("killed") != std::string::npos);
        QVERIFY(info.ended_ms > 0);
        // Whole batches only, and the counters agree with the rows.
        QVERIFY2(info.counts.hits > 0, "the child was killed before it wrote any hits");
        qInfo("killed after %lld committed batches of hits", static_cast<long long>(info.counts.hits / kCrashBatch));
        QCOMPARE(info.counts.hits % kCrashBatch, std::int64_t{0});
        QCOMPARE(RawDatabase(path).integer(
                     ("SELECT count(*) FROM hits WHERE job_id = " + std::to_string(killed)).c_str()),
                 qint64(info.counts.hits));
        QCOMPARE(info.counts.alignments, std::int64_t{6});
        QCOMPARE(info.counts.timeline_events, std::int64_t{40});
        const auto last = project.hits(killed, info.counts.hits - 1, 10).rows;
        QVERIFY(last.size() == 1 && last[0] == sample_hits(1, int(info.counts.hits) - 1)[0]);
        // The earlier job is untouched.
        QCOMPARE(project.job(earlier).state, store::JobState::Done);
        QVERIFY(project.hits(earlier, 0, 1000).rows == earlier_hits);
        QVERIFY(project.check().ok());
        // And the project keeps working.
        auto next = project.begin_job(sample_spec());
        next->finish_done();
        QCOMPARE(project.job(next->job_id()).state, store::JobState::Done);
    }

    void twoWritersLoseNothing() {
        QTemporaryDir dir;
        const QString path = dir.filePath("shared.alsproj");
        const QString fasta = dir.filePath("reads.fa");
        {
            QFile file(fasta);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(">r1\nMKTAYIAKQRQISFVKSHFSRQ\n>r2\nMKVLAAGIVGLLLAAQPAMA\n");
        }
        // This process reads meanwhile, as the GUI would.
        store::Project viewer(path.toStdString(), creating());
        std::int64_t seen = viewer.data_version();
        int changes = 0;
        constexpr int kJobs = 25;
        QProcess a, b;
        start_child(a, {"child-writer", path, fasta, QString::number(kJobs)});
        start_child(b, {"child-writer", path, fasta, QString::number(kJobs)});
        while (a.state() != QProcess::NotRunning || b.state() != QProcess::NotRunning) {
            if (viewer.changed_since(seen)) {
                ++changes;
                for (const auto& job : viewer.jobs()) QVERIFY(job.state != store::JobState::Interrupted);
            }
            a.waitForFinished(20);
            b.waitForFinished(20);
        }
        if (viewer.changed_since(seen)) ++changes;
        QCOMPARE(a.exitCode(), 0);
        QCOMPARE(b.exitCode(), 0);
        QCOMPARE(QString::fromUtf8(a.readAllStandardOutput()).trimmed(), QString("done"));
        QCOMPARE(QString::fromUtf8(b.readAllStandardOutput()).trimmed(), QString("done"));
        QVERIFY(changes > 0);

        const auto jobs = viewer.jobs();
        QCOMPARE(jobs.size(), std::size_t(2 * kJobs));
        std::set<std::int64_t> pids;
        for (const auto& job : jobs) {
            QCOMPARE(job.state, store::JobState::Done);
            QCOMPARE(job.counts.hits, std::int64_t{200});
            QCOMPARE(job.counts.timeline_events, std::int64_t{50});
            QCOMPARE(job.progress.items_done, std::uint64_t{2});
            QCOMPARE(job.inputs.size(), std::size_t{1});
            pids.insert(job.owner_pid);
        }
        QCOMPARE(pids.size(), std::size_t{2});
        QCOMPARE(viewer.inputs().size(), std::size_t{1});  // both registered the same file once
        RawDatabase raw(path);
        QCOMPARE(raw.integer("SELECT count(*) FROM hits"), qint64(2 * kJobs * 200));
        QCOMPARE(raw.integer("SELECT count(*) FROM timeline_events"), qint64(2 * kJobs * 50));
        QVERIFY(viewer.check().ok());
    }

    void anotherProcessesJobIsSeenWithoutReopening() {
        QTemporaryDir dir;
        const QString path = dir.filePath("gui.alsproj");
        store::Project viewer(path.toStdString(), creating());
        std::int64_t seen = viewer.data_version();
        QProcess child;
        start_child(child, {"child-hold", path});
        const QString begun = wait_for_line(child);
        QVERIFY2(begun.startsWith("begun "), qPrintable(begun));
        const std::int64_t id = begun.section(' ', 1).toLongLong();
        QVERIFY(viewer.changed_since(seen));
        QCOMPARE(viewer.jobs().size(), std::size_t{1});
        QCOMPARE(viewer.job(id).state, store::JobState::Running);  // its owner lives in the other process
        QCOMPARE(viewer.job(id).owner_pid, std::int64_t(child.processId()));
        QVERIFY(!viewer.changed_since(seen));
        child.write("go\n");
        QCOMPARE(wait_for_line(child), QString("finished"));
        QVERIFY(child.waitForFinished(10000));
        QVERIFY(viewer.changed_since(seen));
        QCOMPARE(viewer.job(id).state, store::JobState::Done);
        QCOMPARE(viewer.hits(id).rows.size(), std::size_t{5});
    }
};

int main(int argc, char** argv) {
    if (argc >= 2 && std::string(argv[1]).rfind("child-", 0) == 0) {
        const std::string role = argv[1];
        try {
            if (role == "child-crash" && argc == 3) return child_crash(argv[2]);
            if (role == "child-writer" && argc == 5) return child_writer(argv[2], argv[3], std::atoi(argv[4]));
            if (role == "child-hold" && argc == 3) return child_hold(argv[2]);
        } catch (const std::exception& e) {
            std::cerr << role << ": " << e.what() << std::endl;
            return 2;
        }
        std::cerr << "unknown child role " << role << std::endl;
        return 2;
    }
    QCoreApplication app(argc, argv);
    TestProcesses test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_processes.moc"
