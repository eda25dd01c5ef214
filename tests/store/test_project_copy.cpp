// Project::copy_to (the GUI's Save As): the copy holds everything, including
// commits still in the write-ahead log and the rows of a job recording at that
// moment; it refuses to write over the project itself or over a database some
// connection has open, leaving both untouched; it replaces a closed file (and a
// stale -wal beside it, which would otherwise be replayed into the copy); and it
// leaves no temporary file behind.
#include "store_test_support.hpp"

#include <alignscope/error.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <filesystem>

using namespace alignscope;
using namespace store_test;

namespace {

store::ProjectOptions creating() {
    store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}

template <class F>
QString error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromUtf8(e.what());
    }
    return "no error";
}

QByteArray read_all(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The rows that matter of every job: id, state, counts and all hits.
struct Snapshot {
    std::vector<std::int64_t> ids;
    std::vector<store::JobState> states;
    std::vector<std::int64_t> hit_counts;
    std::vector<store::Hit> hits;
    std::vector<Alignment> alignments;
};

Snapshot snapshot(const QString& path) {
    store::ProjectOptions options;
    options.read_only = true;
    store::Project project(path.toStdString(), options);
    Snapshot s;
    for (const store::JobInfo& job : project.jobs()) {
        s.ids.push_back(job.id);
        s.states.push_back(job.state);
        s.hit_counts.push_back(job.counts.hits);
        auto hits = project.hits(job.id, 0, 100'000).rows;
        s.hits.insert(s.hits.end(), hits.begin(), hits.end());
        auto alignments = project.alignments(job.id, 0, 100'000).rows;
        s.alignments.insert(s.alignments.end(), alignments.begin(), alignments.end());
    }
    return s;
}

// Files in `dir` whose names contain ".copy-" (the temporary copies).
QStringList temporaries(const QTemporaryDir& dir) {
    return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).filter(".copy-");
}

}  // namespace

class TestProjectCopy : public QObject {
    Q_OBJECT

private slots:
    void copiesEverythingWhileAJobRecords() {
        QTemporaryDir dir;
        const QString source = dir.filePath("source.alsproj");
        const QString copy = dir.filePath("copy.alsproj");
        store::Project project(source.toStdString(), creating());
        auto finished = project.begin_job(sample_spec());
        finished->add_alignments(sample_alignments(12));
        finished->add_hits(sample_hits(40));
        finished->finish_done();
        // Still running, its rows only in the write-ahead log.
        auto running = project.begin_job(sample_spec("search"));
        running->add_hits(sample_hits(25, 100));
        QVERIFY(QFileInfo(source + "-wal").size() > 0);

        project.copy_to(copy.toStdString());
        QVERIFY(temporaries(dir).isEmpty());
        QVERIFY(!QFileInfo::exists(copy + "-wal") || QFileInfo(copy + "-wal").size() == 0);
        QCOMPARE(integrity(copy), QString("ok"));

        const Snapshot got = snapshot(copy);
        QCOMPARE(got.ids, (std::vector<std::int64_t>{finished->job_id(), running->job_id()}));
        QCOMPARE(got.hit_counts, (std::vector<std::int64_t>{40, 25}));
        std::vector<store::Hit> hits = sample_hits(40);
        const auto more = sample_hits(25, 100);
        hits.insert(hits.end(), more.begin(), more.end());
        QVERIFY(got.hits == hits);
        QCOMPARE(got.alignments.size(), std::size_t{12});
        QCOMPARE(got.alignments[5].cigar.to_string(), sample_alignments(12)[5].cigar.to_string());
        // Nobody records the copy's running job: it reads as interrupted there.
        QCOMPARE(got.states[0], store::JobState::Done);
        QCOMPARE(got.states[1], store::JobState::Interrupted);

        // The source goes on as before.
        running->add_hits(sample_hits(5, 200));
        running->finish_done();
        QCOMPARE(project.job(running->job_id()).counts.hits, std::int64_t{30});
        QCOMPARE(project.job(running->job_id()).state, store::JobState::Done);
        QCOMPARE(snapshot(copy).hit_counts, (std::vector<std::int64_t>{40, 25}));
    }

    void refusesToWriteOverItself_data() {
        QTest::addColumn<QString>("spelling");
        QTest::newRow("same path") << "self.alsproj";
        QTest::newRow("through ./") << "./self.alsproj";
        QTest::newRow("symbolic link") << "link.alsproj";
        QTest::newRow("hard link") << "hard.alsproj";
    }

    void refusesToWriteOverItself() {
        QFETCH(QString, spelling);
        QTemporaryDir dir;
        const QString path = dir.filePath("self.alsproj");
        store::Project project(path.toStdString(), creating());
        auto job = project.begin_job(sample_spec());
        job->add_hits(sample_hits(9));
        job->finish_done();
        namespace fs = std::filesystem;
        fs::create_symlink(path.toStdString(), dir.filePath("link.alsproj").toStdString());
        fs::create_hard_link(path.toStdString(), dir.filePath("hard.alsproj").toStdString());
        const QString message = error_of([&] { project.copy_to(dir.filePath(spelling).toStdString()); });
        QVERIFY2(message.contains("onto itself"), qPrintable(message));
        QCOMPARE(project.jobs().size(), std::size_t{1});
        QCOMPARE(project.hits(job->job_id()).rows.size(), std::size_t{9});
        QCOMPARE(integrity(path), QString("ok"));
        QVERIFY(temporaries(dir).isEmpty());
    }

    void refusesAnOpenProject_data() {
        QTest::addColumn<bool>("readOnly");
        QTest::newRow("open for writing") << false;
        QTest::newRow("open read-only") << true;
    }

    void refusesAnOpenProject() {
        QFETCH(bool, readOnly);
        QTemporaryDir dir;
        const QString source = dir.filePath("source.alsproj");
        const QString other = dir.filePath("other.alsproj");
        store::Project project(source.toStdString(), creating());
        {
            store::Project made(other.toStdString(), creating());
            auto job = made.begin_job(sample_spec());
            job->add_hits(sample_hits(3));
            job->finish_done();
        }
        store::ProjectOptions options;
        options.read_only = readOnly;
        store::Project open(other.toStdString(), options);
        QCOMPARE(open.jobs().size(), std::size_t{1});  // a read transaction has come and gone

        const QByteArray before = read_all(other);
        const QString message = error_of([&] { project.copy_to(other.toStdString()); });
        QVERIFY2(message.contains("is open"), qPrintable(message));
        QVERIFY2(message.contains("other.alsproj"), qPrintable(message));
        QCOMPARE(read_all(other), before);
        QCOMPARE(open.jobs().size(), std::size_t{1});
        QCOMPARE(open.hits(open.jobs()[0].id).rows.size(), std::size_t{3});
        QVERIFY(temporaries(dir).isEmpty());
    }

    void replacesAClosedProjectAndItsStaleLog() {
        QTemporaryDir dir;
        const QString source = dir.filePath("source.alsproj");
        const QString other = dir.filePath("other.alsproj");
        store::Project project(source.toStdString(), creating());
        auto job = project.begin_job(sample_spec());
        job->add_hits(sample_hits(11));
        job->finish_done();

        // A closed project at the target, with a write-ahead log of its own
        // beside it as a crash would leave it: replayed into the copy, it would
        // bring back the old project's pages.
        QByteArray stale_log;
        {
            store::Project made(other.toStdString(), creating());
            for (int k = 0; k < 3; ++k) {
                auto old = made.begin_job(sample_spec("old"));
                old->add_hits(sample_hits(50, 1000 * k));
                old->finish_done();
            }
            stale_log = read_all(other + "-wal");
        }
        QVERIFY(stale_log.size() > 0);
        {
            QFile wal(other + "-wal");
            QVERIFY(wal.open(QIODevice::WriteOnly));
            wal.write(stale_log);
        }

        project.copy_to(other.toStdString());
        QVERIFY(temporaries(dir).isEmpty());
        QCOMPARE(integrity(other), QString("ok"));
        const Snapshot got = snapshot(other);
        QCOMPARE(got.ids, std::vector<std::int64_t>{job->job_id()});
        QVERIFY(got.hits == sample_hits(11));
        QCOMPARE(store::Project(other.toStdString()).check().ok(), true);
    }

    void replacesAnotherFileTheUserChose() {
        QTemporaryDir dir;
        const QString source = dir.filePath("source.alsproj");
        const QString target = dir.filePath("notes.alsproj");
        {
            QFile file(target);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write("not a project, but the user chose to replace it\n");
        }
        store::Project project(source.toStdString(), creating());
        project.copy_to(target.toStdString());
        QCOMPARE(integrity(target), QString("ok"));
        QVERIFY(snapshot(target).ids.empty());
    }

    void copiesFromAReadOnlyProject() {
        QTemporaryDir dir;
        const QString source = dir.filePath("source.alsproj");
        {
            store::Project made(source.toStdString(), creating());
            auto job = made.begin_job(sample_spec());
            job->add_alignments(sample_alignments(4));
            job->finish_done();
        }
        store::ProjectOptions options;
        options.read_only = true;
        store::Project project(source.toStdString(), options);
        project.copy_to(dir.filePath("copy.alsproj").toStdString());
        QCOMPARE(snapshot(dir.filePath("copy.alsproj")).alignments.size(), std::size_t{4});
        // The copy is a writable project of its own.
        store::Project copy(dir.filePath("copy.alsproj").toStdString());
        QVERIFY(!copy.read_only());
    }

    void namesAMissingFolder() {
        QTemporaryDir dir;
        store::Project project(dir.filePath("source.alsproj").toStdString(), creating());
        const QString message = error_of([&] { project.copy_to(dir.filePath("absent/copy.alsproj").toStdString()); });
        QVERIFY2(message.contains("absent") && message.contains("does not exist"), qPrintable(message));
        QVERIFY(!QFileInfo::exists(dir.filePath("absent")));
    }
};

QTEST_GUILESS_MAIN(TestProjectCopy)
#include "test_project_copy.moc"
