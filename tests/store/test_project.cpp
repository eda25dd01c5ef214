// The project file itself: creating and reopening, refusing what is not ours
// (foreign files, newer versions) without touching it, read-only files, a full
// "disk", inputs (embedded, referenced, re-verified by SHA-256 against Qt's
// own SHA-256), the job life cycle, deletion, change polling, vacuum and check,
// settings kept with the project, and removing an input no job used.
#include "store_test_support.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>

#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

using namespace alignscope;
using namespace store_test;

namespace {

QByteArray read_all(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return file.readAll();
}

void write_file(const QString& path, const QByteArray& bytes) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(file.write(bytes), bytes.size());
}

QString sha256_of(const QString& path) {
    return QString::fromLatin1(QCryptographicHash::hash(read_all(path), QCryptographicHash::Sha256).toHex());
}

// The error message of `f`, or "no error".
template <class F>
QString error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromUtf8(e.what());
    }
    return "no error";
}

// Makes a file read-only for this process. Root ignores permission bits, so
// as root the file is made immutable (chattr +i) instead; undone by the destructor.
class ReadOnlyFile {
public:
    explicit ReadOnlyFile(const QString& path) : path_(path) {
        ::chmod(path.toUtf8().constData(), QFileInfo(path).isDir() ? 0555 : 0444);
        if (::access(path.toUtf8().constData(), W_OK) == 0 && QProcess::execute("chattr", {"+i", path}) == 0)
            immutable_ = true;
        ok_ = ::access(path.toUtf8().constData(), W_OK) != 0;
    }
    ~ReadOnlyFile() {
        if (immutable_) QProcess::execute("chattr", {"-i", path_});
        ::chmod(path_.toUtf8().constData(), QFileInfo(path_).isDir() ? 0755 : 0644);
    }
    bool ok() const { return ok_; }

private:
    QString path_;
    bool immutable_ = false;
    bool ok_ = false;
};

std::string fasta(const QString& path, int records, int length, unsigned seed) {
    std::mt19937 rng(seed);
    QByteArray text;
    for (int k = 0; k < records; ++k) {
        text += ">seq" + QByteArray::number(k) + " sample record " + QByteArray::number(k) + "\n";
        text += QByteArray::fromStdString(random_protein(rng, static_cast<std::size_t>(length))) + "\n";
    }
    write_file(path, text);
    return path.toStdString();
}

store::ProjectOptions creating() {
    store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}

store::ProjectOptions creating_project() {
    store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}

std::string write_text(const QString& path, const std::string& text) {
    std::ofstream(path.toStdString()) << text;
    return path.toStdString();
}

}  // namespace

class TestProject : public QObject {
    Q_OBJECT

private slots:
    void createReopenAndIdentify() {
        QTemporaryDir dir;
        const QString path = dir.filePath("new.alsproj");
        {
            store::Project project(path.toStdString(), creating());
            QCOMPARE(project.found_schema_version(), 0);
            QVERIFY(!project.read_only());
            QVERIFY(project.jobs().empty());
        }
        QVERIFY(QFileInfo::exists(path));
        RawDatabase raw(path);
        QCOMPARE(raw.integer("PRAGMA user_version"), qint64(store::Project::schema_version));
        QCOMPARE(raw.integer("PRAGMA application_id"), qint64(0x414C5350));
        QCOMPARE(raw.column("PRAGMA journal_mode"), QStringList{"wal"});
        store::Project again(path.toStdString());
        QCOMPARE(again.found_schema_version(), store::Project::schema_version);
    }

    void missingFileIsAnError() {
        QTemporaryDir dir;
        const QString path = dir.filePath("absent.alsproj");
        const QString message = error_of([&] { store::Project project(path.toStdString()); });
        QVERIFY2(message.contains("no project") && message.contains(path), qPrintable(message));
        QVERIFY(!QFileInfo::exists(path));
        const QString no_folder = error_of(
            [&] { store::Project project(dir.filePath("no/such/folder/p.alsproj").toStdString(), creating()); });
        QVERIFY2(no_folder.contains("does not exist"), qPrintable(no_folder));
    }

    void foreignFilesAreRefusedUntouched_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("expected");
        // A PNG's signature and header chunk up to its CRC (29 bytes).
        static const char png_start[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\x06\0\0\0";
        QByteArray png(png_start, sizeof png_start - 1);
        png += QByteArray(200, '\x5a');
        QTest::newRow("png") << png << "not an SQLite database";
        QTest::newRow("text") << QByteArray("hello, this is a note\nnot a project\n") << "not an SQLite database";
        QTest::newRow("short") << QByteArray("SQLite") << "not an SQLite database";
        QByteArray garbage("SQLite format 3\0", 16);
        garbage += QByteArray(4096 * 3, '\xee');
        QTest::newRow("sqlite header, garbage pages") << garbage << "not an SQLite database";
    }

    void foreignFilesAreRefusedUntouched() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath("foreign.alsproj");
        write_file(path, bytes);
        for (bool read_only : {false, true}) {
            store::ProjectOptions options;
            options.read_only = read_only;
            const QString message = error_of([&] { store::Project project(path.toStdString(), options); });
            QVERIFY2(message.contains(expected) && message.contains(path), qPrintable(message));
        }
        QCOMPARE(read_all(path), bytes);
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"foreign.alsproj"});
    }

    void otherProgramsDatabaseIsRefused() {
        QTemporaryDir dir;
        const QString path = dir.filePath("other.db");
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
        QCOMPARE(sqlite3_exec(db,
                              "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); "
                              "INSERT INTO notes (text) VALUES ('mine')",
                              nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(db);
        const QByteArray before = read_all(path);
        const QString message = error_of([&] { store::Project project(path.toStdString()); });
        QVERIFY2(message.contains("another program"), qPrintable(message));
        QCOMPARE(read_all(path), before);
        QCOMPARE(RawDatabase(path).column("SELECT text FROM notes"), QStringList{"mine"});
    }

    void damagedProjectGivesOneClearError() {
        QTemporaryDir dir;
        const QString path = dir.filePath("damaged.alsproj");
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec());
            job->add_hits(sample_hits(20000));
            job->finish_done();
        }
        QByteArray bytes = read_all(path);
        QVERIFY(bytes.size() > 40 * 4096);
        // Overwrite pages in the middle (hit rows) with noise.
        for (qsizetype k = 20 * 4096; k < 30 * 4096; ++k) bytes[k] = char((k * 131) & 0xff);
        write_file(path, bytes);
        QString failure;
        try {
            store::Project project(path.toStdString());
            const auto jobs = project.jobs();
            for (std::int64_t from = 0;;) {
                const auto page = project.hits(jobs.at(0).id, from, 5000);
                if (!page.more) break;
                from = page.next();
            }
            const auto report = project.check();
            if (!report.ok()) failure = QString::fromStdString(report.problems.front());
        } catch (const Error& e) {
            failure = QString::fromUtf8(e.what());
        }
        QVERIFY2(failure.contains("damaged") || failure.contains("integrity") || failure.contains("malformed"),
                 qPrintable(failure));
    }

    void newerVersionIsRefusedUntouched() {
        QTemporaryDir dir;
        const QString path = dir.filePath("future.alsproj");
        { store::Project project(path.toStdString(), creating()); }
        {
            RawDatabase raw(path, true);
            QVERIFY(raw.execute("PRAGMA user_version = 99"));
        }
        const QByteArray before = read_all(path);
        const QString message = error_of([&] { store::Project project(path.toStdString()); });
        QVERIFY2(message.contains("newer AlignScope") && message.contains("99") &&
                     message.contains(QString::number(store::Project::schema_version)),
                 qPrintable(message));
        QCOMPARE(read_all(path), before);
    }

    void readOnlyFile() {
        QTemporaryDir dir;
        const QString path = dir.filePath("locked.alsproj");
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec());
            job->add_alignments(sample_alignments(5));
            job->finish_done();
        }
        const QByteArray before = read_all(path);
        ReadOnlyFile guard(path);
        if (!guard.ok()) QSKIP("cannot make a file read-only here (root without chattr)");
        const QString message = error_of([&] { store::Project project(path.toStdString()); });
        QVERIFY2(message.contains("read-only") && message.contains(path), qPrintable(message));
        const QString record = error_of([&] { store::JobRecording recording(path.toStdString(), sample_spec()); });
        QVERIFY2(record.contains("read-only"), qPrintable(record));

        store::ProjectOptions options;
        options.read_only = true;
        store::Project viewer(path.toStdString(), options);
        QVERIFY(viewer.read_only());
        const auto jobs = viewer.jobs();
        QCOMPARE(jobs.size(), std::size_t{1});
        QCOMPARE(viewer.alignments(jobs[0].id).rows.size(), std::size_t{5});
        const QString begin = error_of([&] { viewer.begin_job(sample_spec()); });
        QVERIFY2(begin.contains("read-only"), qPrintable(begin));
        const QString erase = error_of([&] { viewer.delete_job(jobs[0].id); });
        QVERIFY2(erase.contains("read-only"), qPrintable(erase));
        QCOMPARE(read_all(path), before);
    }

    // Read-only media: the file could be written but its folder cannot take
    // the -wal, -shm and -lock files.
    void readOnlyFolder() {
        QTemporaryDir dir;
        const QString folder = dir.filePath("media");
        QVERIFY(QDir().mkpath(folder));
        const QString path = folder + "/disc.alsproj";
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec());
            job->add_hits(sample_hits(12));
            job->finish_done();
        }
        QFile::remove(store::Project::lock_path(path.toStdString()).c_str());
        const QStringList files_before = QDir(folder).entryList(QDir::Files);
        QCOMPARE(files_before, QStringList{"disc.alsproj"});
        ReadOnlyFile guard(folder);
        if (!guard.ok()) QSKIP("cannot make a folder read-only here (root without chattr)");
        const QString message = error_of([&] { store::Project project(path.toStdString()); });
        QVERIFY2(message.contains("read-only") && message.contains("folder"), qPrintable(message));
        store::ProjectOptions options;
        options.read_only = true;
        store::Project viewer(path.toStdString(), options);
        const auto jobs = viewer.jobs();
        QCOMPARE(jobs.size(), std::size_t{1});
        QCOMPARE(jobs[0].state, store::JobState::Done);
        QCOMPARE(viewer.hits(jobs[0].id).rows.size(), std::size_t{12});
        QCOMPARE(QDir(folder).entryList(QDir::Files), files_before);
    }

    // SQLite's max_page_count stands in for a full disk: it fails writes with
    // SQLITE_FULL exactly as a full file system does.
    void fullDiskKeepsEverythingElse() {
        QTemporaryDir dir;
        const QString path = dir.filePath("full.alsproj");
        std::int64_t first_job = 0;
        const auto alignments = sample_alignments(20);
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec());
            first_job = job->job_id();
            job->add_alignments(alignments);
            job->finish_done();
        }
        const qint64 pages = RawDatabase(path).integer("PRAGMA page_count");
        store::RecordingOptions options;
        options.project.max_page_count = static_cast<std::uint64_t>(pages + 4);
        std::int64_t second_job = 0;
        {
            store::JobRecording job(path.toStdString(), sample_spec(), options);
            second_job = job.job_id();
            job.add_timeline(sample_events(10), "steady-clock");
            const QString message = error_of([&] { job.add_hits(sample_hits(50000)); });
            QVERIFY2(message.contains("disk is full") && message.contains(path), qPrintable(message));
            // The failed batch left nothing behind; the job can still end.
            job.add_timeline(sample_events(5, 10), "steady-clock");
            job.finish_failed("out of space");
        }
        QCOMPARE(integrity(path), QString("ok"));
        store::Project project(path.toStdString());
        const store::JobInfo first = project.job(first_job);
        QCOMPARE(first.state, store::JobState::Done);
        QCOMPARE(first.counts.alignments, std::int64_t{20});
        const auto stored = project.alignments(first_job, 0, 100).rows;
        QCOMPARE(stored.size(), alignments.size());
        for (std::size_t k = 0; k < stored.size(); ++k) QCOMPARE(stored[k].cigar, alignments[k].cigar);
        const store::JobInfo second = project.job(second_job);
        QCOMPARE(second.state, store::JobState::Failed);
        QCOMPARE(second.counts.hits, std::int64_t{0});
        QCOMPARE(second.counts.timeline_events, std::int64_t{15});
        QCOMPARE(RawDatabase(path).integer("SELECT count(*) FROM hits"), qint64(0));
        QVERIFY(project.check().ok());
        // Without the limit the same write succeeds.
        auto again = project.begin_job(sample_spec());
        again->add_hits(sample_hits(50000));
        again->finish_done();
        QCOMPARE(project.job(again->job_id()).counts.hits, std::int64_t{50000});
    }

    // Found by fuzz_project: a record count no rows bear out (here far beyond
    // any vector) is one clear error naming the project, not std::length_error.
    void embeddedInputWithAWrongRecordCountIsDamage() {
        QTemporaryDir dir;
        const std::string fa_path = fasta(dir.filePath("few.fa"), 3, 40, 5);
        const QString path = dir.filePath("count.alsproj");
        std::int64_t id = 0;
        {
            store::Project project(path.toStdString(), creating());
            id = project.add_sequence_set(read_sequences(fa_path));
        }
        for (const char* count : {"-1", "4611686018427387904", "2", "4"}) {
            {
                RawDatabase raw(path, true);
                QVERIFY(raw.execute(QString("UPDATE inputs SET record_count = %1 WHERE id = %2")
                                        .arg(count)
                                        .arg(id)
                                        .toUtf8()
                                        .constData()));
            }
            store::Project project(path.toStdString());
            const QString message = error_of([&] { project.input_sequences(id); });
            QVERIFY2(message.contains("damaged") && message.contains(path) && message.contains("holds 3 sequences"),
                     qPrintable(message));
        }
        {
            RawDatabase raw(path, true);
            QVERIFY(
                raw.execute(QString("UPDATE inputs SET record_count = 3 WHERE id = %1").arg(id).toUtf8().constData()));
        }
        store::Project project(path.toStdString());
        QCOMPARE(project.input_sequences(id).size(), std::size_t{3});
    }

    void embeddedInputsSurviveTheFile() {
        QTemporaryDir dir;
        const QString fa = dir.filePath("proteins.fa");
        const std::string fa_path = fasta(fa, 12, 80, 3);
        const SequenceSet set = read_sequences(fa_path);
        const QString path = dir.filePath("inputs.alsproj");
        std::int64_t id = 0;
        {
            store::Project project(path.toStdString(), creating());
            id = project.add_sequence_set(set);
            QCOMPARE(project.add_sequence_set(set), id);  // same file, same digest: same input
            const store::InputInfo info = project.input(id);
            QCOMPARE(QString::fromStdString(info.sha256), sha256_of(fa));
            QCOMPARE(info.size_bytes, std::uint64_t(QFileInfo(fa).size()));
            QCOMPARE(info.record_count, std::uint64_t{12});
            QCOMPARE(info.residue_count, std::uint64_t{12 * 80});
            QCOMPARE(info.alphabet, std::string("protein"));
            QVERIFY(info.embedded);
            QCOMPARE(QString::fromStdString(info.path), QFileInfo(fa).absoluteFilePath());
            QCOMPARE(info.kind, store::InputKind::SequenceSet);
        }
        QVERIFY(QFile::remove(fa));
        store::Project project(path.toStdString());
        QCOMPARE(project.inputs().size(), std::size_t{1});
        const auto records = project.input_sequences(id);
        QCOMPARE(records.size(), set.records.size());
        for (std::size_t k = 0; k < records.size(); ++k) {
            QCOMPARE(records[k].id, set.records[k].id);
            QCOMPARE(records[k].description, set.records[k].description);
            QCOMPARE(records[k].residues, set.records[k].residues);
        }
        const auto report = project.check();
        QVERIFY(report.ok());
        QCOMPARE(report.notes.size(), std::size_t{1});  // the file is gone, the project keeps a copy
    }

    void referencedInputsAreReverified() {
        QTemporaryDir dir;
        const QString fa = dir.filePath("big.fa");
        const SequenceSet set = read_sequences(fasta(fa, 5, 60, 11));
        const QString path = dir.filePath("refs.alsproj");
        store::ProjectOptions small = creating();
        small.embed_limit_bytes = 100;  // anything larger is referenced
        std::int64_t id = 0;
        {
            store::Project project(path.toStdString(), small);
            id = project.add_sequence_set(set);
            QVERIFY(!project.input(id).embedded);
        }
        {
            store::Project project(path.toStdString());
            QCOMPARE(project.input(id).status, store::InputStatus::Unchanged);
            QCOMPARE(project.input_sequences(id).size(), std::size_t{5});
        }
        {
            // Same size, one letter changed: only the checksum can tell.
            QByteArray bytes = read_all(fa);
            const qsizetype at = bytes.lastIndexOf('\n', bytes.size() - 2) + 3;
            bytes[at] = bytes[at] == 'W' ? 'Y' : 'W';
            write_file(fa, bytes);
            store::Project project(path.toStdString());
            QCOMPARE(project.input(id).status, store::InputStatus::Changed);
            const QString message = error_of([&] { project.input_sequences(id); });
            QVERIFY2(message.contains("changed"), qPrintable(message));
            QVERIFY(!project.check().ok());
        }
        QVERIFY(QFile::remove(fa));
        store::Project project(path.toStdString());
        QCOMPARE(project.input(id).status, store::InputStatus::Missing);
        const QString message = error_of([&] { project.input_sequences(id); });
        QVERIFY2(message.contains("missing"), qPrintable(message));
    }

    void standardInputAndProfileInputs() {
        QTemporaryDir dir;
        const QString path = dir.filePath("p.alsproj");
        store::Project project(path.toStdString(), creating());
        SequenceSet piped;
        piped.path = "-";
        piped.alphabet = AlphabetKind::Dna;
        piped.records = {Sequence{"r1", "", "ACGTACGT", "IIIIIIII"}, Sequence{"r2", "x y", "GGCC", "!!!!"}};
        const std::int64_t id = project.add_sequence_set(piped);
        QCOMPARE(project.add_sequence_set(piped), id);
        piped.records[1].residues = "GGCA";
        QVERIFY(project.add_sequence_set(piped) != id);  // other content from standard input: another input
        const auto records = project.input_sequences(id);
        QCOMPARE(records.size(), std::size_t{2});
        QCOMPARE(records[0].quality, std::string("IIIIIIII"));
        QCOMPARE(records[1].description, std::string("x y"));

        const QString hmm = dir.filePath("globin.hmm");
        const QByteArray text = "HMMER3/f [3.3 | Nov 2019]\nNAME  globins4\nLENG  149\n//\n";
        write_file(hmm, text);
        const std::int64_t profile = project.add_profile(hmm.toStdString(), AlphabetKind::Protein, 1, 149);
        QCOMPARE(project.input(profile).kind, store::InputKind::Profile);
        QCOMPARE(QByteArray::fromStdString(project.input_content(profile)), text);
        QCOMPARE(QString::fromStdString(project.input(profile).sha256), sha256_of(hmm));
        const QString wrong = error_of([&] { project.input_sequences(profile); });
        QVERIFY2(wrong.contains("profile"), qPrintable(wrong));
    }

    void jobLifeCycle() {
        QTemporaryDir dir;
        const QString path = dir.filePath("life.alsproj");
        store::Project project(path.toStdString(), creating());
        store::RecordingOptions queued;
        queued.queued = true;
        queued.progress_interval = std::chrono::milliseconds(0);
        auto job = project.begin_job(sample_spec(), queued);
        const std::int64_t id = job->job_id();
        QCOMPARE(project.job(id).state, store::JobState::Queued);
        QCOMPARE(project.job(id).started_ms, std::int64_t{0});
        QCOMPARE(project.job(id).owner_pid, std::int64_t(::getpid()));
        job->start();
        QCOMPARE(project.job(id).state, store::JobState::Running);
        QVERIFY(project.job(id).started_ms > 0);
        job->progress(Progress{500, 1000, 5, 10});
        QCOMPARE(project.job(id).progress.cells_done, std::uint64_t{500});
        QCOMPARE(project.job(id).progress.items_total, std::uint64_t{10});
        job->finish_done();
        const QString twice = error_of([&] { job->finish_failed("again"); });
        QVERIFY2(twice.contains("already finished"), qPrintable(twice));
        const store::JobInfo done = project.job(id);
        QCOMPARE(done.state, store::JobState::Done);
        QVERIFY(done.ended_ms >= done.started_ms);
        QVERIFY(done.error.empty());
        const QString late = error_of([&] { job->add_hits(sample_hits(1)); });
        QVERIFY2(late.contains("finished"), qPrintable(late));

        // The spec survives as recorded, and the scheme is rebuilt exactly.
        const store::JobSpec spec = sample_spec();
        QCOMPARE(done.spec.to_json(), [&] {
            store::JobSpec filled = spec;
            filled.build_version = store::build_version();
            return filled.to_json();
        }());
        const ScoringScheme rebuilt = done.spec.scheme();
        const ScoringScheme original = blosum62_half();
        QCOMPARE(rebuilt.scale, original.scale);
        QCOMPARE(rebuilt.gap_open, original.gap_open);
        QCOMPARE(rebuilt.gap_extend, original.gap_extend);
        QCOMPARE(rebuilt.matrix.letters(), original.matrix.letters());
        QVERIFY(rebuilt.matrix.scores() == original.matrix.scores());

        auto failed = project.begin_job(sample_spec());
        failed->finish_failed("kernel launch failed on gpu:0");
        QCOMPARE(project.job(failed->job_id()).state, store::JobState::Failed);
        QCOMPARE(project.job(failed->job_id()).error, std::string("kernel launch failed on gpu:0"));
        auto cancelled = project.begin_job(sample_spec());
        cancelled->finish_cancelled();
        QCOMPARE(project.job(cancelled->job_id()).state, store::JobState::Cancelled);
        std::int64_t abandoned = 0;
        {
            auto dropped = project.begin_job(sample_spec());
            abandoned = dropped->job_id();
        }
        QCOMPARE(project.job(abandoned).state, store::JobState::Failed);
        QVERIFY(project.job(abandoned).error.find("without reporting") != std::string::npos);
        QCOMPARE(project.jobs().size(), std::size_t{4});
    }

    void progressIsThrottled() {
        QTemporaryDir dir;
        const QString path = dir.filePath("throttle.alsproj");
        store::Project project(path.toStdString(), creating());
        store::RecordingOptions options;
        options.progress_interval = std::chrono::hours(1);
        auto job = project.begin_job(sample_spec(), options);
        job->progress(Progress{1, 100, 0, 0});  // the first update is written at once
        for (std::uint64_t k = 2; k <= 50; ++k) job->progress(Progress{k, 100, 0, 0});
        QCOMPARE(project.job(job->job_id()).progress.cells_done, std::uint64_t{1});
        job->finish_done();  // carries the last value
        QCOMPARE(project.job(job->job_id()).progress.cells_done, std::uint64_t{50});
    }

    void liveOwnerIsNotInterruptedButDeadOneIs() {
        QTemporaryDir dir;
        const QString path = dir.filePath("owners.alsproj");
        { store::Project project(path.toStdString(), creating()); }
        store::JobRecording live(path.toStdString(), sample_spec());
        {
            // Another connection of the same process must see the lock.
            store::Project project(path.toStdString());
            QCOMPARE(project.job(live.job_id()).state, store::JobState::Running);
            QCOMPARE(project.mark_interrupted_jobs(), 0);
        }
        {
            // A 'running' row nobody holds a lock for: its owner is gone.
            RawDatabase raw(path, true);
            QVERIFY2(raw.execute("INSERT INTO jobs (command, algorithm, mode, scoring, score_scale, devices, streams, "
                                 "threads, kernel, build_version, driver_version, spec, state, created_ms, "
                                 "started_ms, owner_pid, owner_host) VALUES ('align', 'sw_affine', 'local', '', 1, "
                                 "'cpu', 0, 0, '', '', '', '{}', 'running', 1, 1, 999999, 'elsewhere')"),
                     qPrintable(raw.error()));
        }
        store::Project project(path.toStdString());
        const auto jobs = project.jobs();
        QCOMPARE(jobs.size(), std::size_t{2});
        QCOMPARE(jobs[0].state, store::JobState::Running);
        QCOMPARE(jobs[1].state, store::JobState::Interrupted);
        QCOMPARE(RawDatabase(path).column("SELECT state FROM jobs ORDER BY id"),
                 (QStringList{"running", "interrupted"}));
        live.finish_done();
        QCOMPARE(project.job(live.job_id()).state, store::JobState::Done);
    }

    void deleteJob() {
        QTemporaryDir dir;
        const QString path = dir.filePath("delete.alsproj");
        store::Project project(path.toStdString(), creating());
        auto keep = project.begin_job(sample_spec());
        keep->add_alignments(sample_alignments(3));
        keep->finish_done();
        auto drop = project.begin_job(sample_spec());
        drop->add_alignments(sample_alignments(4));
        drop->add_hits(sample_hits(10));
        drop->add_timeline(sample_events(10), "cupti");
        drop->add_bench_points(sample_bench(4));
        drop->add_long_alignment(sample_long_alignment());
        drop->add_heatmap(store::Heatmap::downsample({1, 2, 3, 4}, 2, 2, 1, 1, 1, -100));
        const QString busy = error_of([&] { project.delete_job(drop->job_id()); });
        QVERIFY2(busy.contains("still running"), qPrintable(busy));
        drop->finish_done();
        project.delete_job(drop->job_id());
        const QString gone = error_of([&] { project.job(drop->job_id()); });
        QVERIFY2(gone.contains("no job"), qPrintable(gone));
        RawDatabase raw(path);
        for (const char* table : {"hits", "timeline_events", "bench_points", "long_alignments", "heatmaps"})
            QCOMPARE(raw.integer((std::string("SELECT count(*) FROM ") + table).c_str()), qint64(0));
        QCOMPARE(raw.integer("SELECT count(*) FROM alignments"), qint64(3));
        QCOMPARE(project.alignments(keep->job_id()).rows.size(), std::size_t{3});
        QVERIFY(project.check().ok());
        // Job numbers are never reused.
        auto next = project.begin_job(sample_spec());
        QVERIFY(next->job_id() > drop->job_id());
        next->finish_done();
    }

    void changesOfOtherConnectionsAreSeen() {
        QTemporaryDir dir;
        const QString path = dir.filePath("poll.alsproj");
        store::Project viewer(path.toStdString(), creating());
        std::int64_t seen = viewer.data_version();
        QVERIFY(!viewer.changed_since(seen));
        auto job = viewer.begin_job(sample_spec());  // its own connection
        QVERIFY(viewer.changed_since(seen));
        QVERIFY(!viewer.changed_since(seen));
        job->add_hits(sample_hits(3));
        QVERIFY(viewer.changed_since(seen));
        QCOMPARE(viewer.job(job->job_id()).counts.hits, std::int64_t{3});
        job->finish_done();
        QVERIFY(viewer.changed_since(seen));
        QCOMPARE(viewer.jobs().back().state, store::JobState::Done);
    }

    void vacuumAndCheck() {
        QTemporaryDir dir;
        const QString path = dir.filePath("vacuum.alsproj");
        store::Project project(path.toStdString(), creating());
        auto job = project.begin_job(sample_spec());
        job->add_hits(sample_hits(30000));
        job->finish_done();
        auto small = project.begin_job(sample_spec());
        small->add_hits(sample_hits(7));
        small->finish_done();
        project.delete_job(job->job_id());
        QVERIFY(project.vacuum() > 0);
        QVERIFY(project.check().ok());
        QCOMPARE(project.hits(small->job_id()).rows.size(), std::size_t{7});
        {
            RawDatabase raw(path, true);
            QVERIFY(raw.execute("UPDATE jobs SET hit_count = 9"));
        }
        const store::CheckReport report = project.check();
        QCOMPARE(report.problems.size(), std::size_t{1});
        QVERIFY2(report.problems[0].find("9 hits recorded but 7 stored") != std::string::npos,
                 report.problems[0].c_str());
    }

    void specFromPairJob() {
        std::vector<Sequence> queries{Sequence{"q", "", "ACGTACGT", ""}};
        std::vector<Sequence> targets{Sequence{"t", "", "ACGTTT", ""}, Sequence{"u", "", "ACG", ""}};
        PairJob job;
        job.queries = &queries;
        job.targets = &targets;
        job.pairs = {{0, 0}, {0, 1}};
        job.scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        job.options.mode = AlignmentMode::SemiGlobal;
        job.options.free_ends = FreeEndGaps::parse("qb,qe");
        job.streams = 4;
        job.kernel = "sg_affine_inter_s16";
        DeviceInfo device;
        device.id = "gpu:0";
        device.name = "NVIDIA H100";
        device.driver_version = "550.54";
        device.runtime_version = "13.0";
        const store::JobSpec spec = store::JobSpec::for_pair_job("align", job, device);
        QCOMPARE(spec.algorithm, std::string("sg_affine"));
        QCOMPARE(spec.mode, std::string("semiglobal"));
        QCOMPARE(spec.free_ends, FreeEndGaps::parse("qb,qe").to_string());
        QCOMPARE(spec.devices, std::string("gpu:0"));
        QCOMPARE(spec.streams, 4);
        QCOMPARE(spec.kernel, std::string("sg_affine_inter_s16"));
        QVERIFY(spec.driver_version.find("550.54") != std::string::npos);
        QCOMPARE(spec.parameters.at("pairs"), std::string("2"));
        QCOMPARE(spec.parameters.at("cells"), std::string("72"));  // 8*6 + 8*3
        const store::JobSpec back = store::JobSpec::from_json(spec.to_json(), "test");
        QCOMPARE(back.to_json(), spec.to_json());
        const ScoringScheme rebuilt = back.scheme();
        QVERIFY(rebuilt.matrix.scores() == job.scheme.matrix.scores());
        QCOMPARE(rebuilt.gap_open, job.scheme.gap_open);
        const QString bad = error_of([] { store::JobSpec::from_json("[1, 2", "spec.json"); });
        QVERIFY2(bad.contains("spec.json"), qPrintable(bad));
    }

    // Whole-number fields of a stored spec that no job writes (found by
    // fuzz_json: "streams": 1.8e20 was converted to int out of range, undefined
    // behaviour; others were wrapped or cut silently): each is an Error naming
    // the field.
    void specNumbersOutOfRangeAreRefused_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("field");
        QTest::newRow("streams 1.8e20") << R"({"streams": 184467440737095516152})"
                                        << "streams";
        QTest::newRow("threads 2^32") << R"({"threads": 4294967296})"
                                      << "threads";
        QTest::newRow("score_scale 2.5") << R"({"score_scale": 2.5})"
                                         << "score_scale";
        QTest::newRow("negative memory budget") << R"({"gpu_memory_budget": -1})"
                                                << "gpu_memory_budget";
        QTest::newRow("memory budget 1e30") << R"({"gpu_memory_budget": 1e30})"
                                            << "gpu_memory_budget";
    }
    void specNumbersOutOfRangeAreRefused() {
        QFETCH(QString, json);
        QFETCH(QString, field);
        const std::string text = json.toStdString();
        const QString message = error_of([&] { store::JobSpec::from_json(text, "p.alsproj: job 3"); });
        QVERIFY2(message.startsWith("p.alsproj: job 3: ") && message.contains("\"" + field + "\""),
                 qPrintable(message));
        // In range, the same fields load.
        const store::JobSpec ok = store::JobSpec::from_json(
            R"({"streams": 4, "threads": 0, "score_scale": 2, "gpu_memory_budget": 18446744073709551615})", "ok");
        QCOMPARE(ok.streams, 4);
        QCOMPARE(ok.gpu_memory_budget, std::uint64_t(18446744073709551615ull));
    }
    // Settings (schema version 3): values per key across reopening, seen by
    // another connection, refused on a read-only project; long and odd values.
    void settingsPersist() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("s.alsproj").toStdString();
        const std::string odd = "line one\nline 'two' with \"quotes\" and ünïcödé\t" + std::string(100'000, 'x');
        {
            store::Project project(path, creating_project());
            QVERIFY(!project.setting("workbench/job_panel"));
            project.set_setting("workbench/job_panel", "{\"matrix\":\"PAM250\"}");
            project.set_setting("odd", odd);
            project.set_setting("workbench/job_panel", "{\"matrix\":\"BLOSUM62\"}");  // replaced
            QCOMPARE(project.setting("workbench/job_panel").value_or(""), std::string("{\"matrix\":\"BLOSUM62\"}"));
            // Another connection sees the committed value at once.
            store::ProjectOptions reading;
            reading.read_only = true;
            store::Project other(path, reading);
            QCOMPARE(other.setting("odd").value_or(""), odd);
        }
        QCOMPARE(RawDatabase(QString::fromStdString(path)).integer("SELECT count(*) FROM settings"), qint64(2));
        store::ProjectOptions reading;
        reading.read_only = true;
        store::Project project(path, reading);
        QCOMPARE(project.setting("workbench/job_panel").value_or(""), std::string("{\"matrix\":\"BLOSUM62\"}"));
        QVERIFY(!project.setting("workbench/job_panel/"));  // keys are exact, not prefixes
        bool refused = false;
        try {
            project.set_setting("x", "y");
        } catch (const Error& e) {
            refused = QString(e.what()).contains("read-only");
        }
        QVERIFY(refused);
    }

    // Analyses (schema version 4): kept across reopening with their results
    // byte for byte; a bad kind, parameters that are not an object and an
    // unknown id each give one clear error; read-only projects refuse writes.
    void analysesPersist() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("a.alsproj").toStdString();
        const std::string big(3'000'000, 'r');
        std::int64_t first = 0;
        {
            store::Project project(path, creating_project());
            QVERIFY(project.analyses().empty());
            first = project.add_analysis("profile_search", "fn3.hmm against 7 sequences", R"({"E":1e-3})", big);
            project.add_analysis("allvsall", "12 sequences", "{}", std::string("a\0b", 3));
            auto refused = [&](auto&& call, const char* words) {
                QString message;
                try {
                    call();
                } catch (const Error& e) {
                    message = e.what();
                }
                QVERIFY2(message.contains(words), qPrintable(message));
            };
            refused([&] { project.add_analysis("blast", "t", "{}", ""); }, "profile_search or allvsall");
            refused([&] { project.add_analysis("allvsall", "t", "[1]", ""); }, "JSON object");
            refused([&] { project.add_analysis("allvsall", "t", "{oops", ""); }, "JSON object");
            refused([&] { project.analysis_results(999); }, "no analysis 999");
            refused([&] { project.delete_analysis(999); }, "no analysis 999");
        }
        {
            store::Project project(path);
            const auto all = project.analyses();
            QCOMPARE(all.size(), std::size_t(2));
            QCOMPARE(all[0].id, first);
            QCOMPARE(all[0].title, std::string("fn3.hmm against 7 sequences"));
            QCOMPARE(all[0].parameters, std::string(R"({"E":1e-3})"));
            QCOMPARE(project.analysis_results(first), big);
            QCOMPARE(project.analysis_results(all[1].id), std::string("a\0b", 3));
            project.delete_analysis(first);
            QCOMPARE(project.analyses().size(), std::size_t(1));
            QVERIFY(project.check().ok());
        }
        store::ProjectOptions reading;
        reading.read_only = true;
        store::Project project(path, reading);
        bool refused = false;
        try {
            project.add_analysis("allvsall", "t", "{}", "");
        } catch (const Error& e) {
            refused = QString(e.what()).contains("read-only");
        }
        QVERIFY(refused);
    }

    // An input no job used is removed with its embedded records; one a job
    // used is refused with the job named, until the job is deleted.
    void deleteInput() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("i.alsproj").toStdString();
        store::Project project(path, creating_project());
        const auto a =
            project.add_sequence_set(read_sequences(write_text(dir.filePath("a.fa"), ">a1\nMKV\n>a2\nMKL\n")));
        const auto b = project.add_sequence_set(read_sequences(write_text(dir.filePath("b.fa"), ">b1\nMKW\n")));
        QCOMPARE(project.inputs().size(), std::size_t{2});
        auto job = project.begin_job(sample_spec());
        job->link_input(b, "query");
        job->finish_done();
        const std::int64_t job_id = job->job_id();
        job.reset();

        project.delete_input(a);
        QCOMPARE(project.inputs().size(), std::size_t{1});
        QCOMPARE(project.inputs().front().id, b);
        // Its embedded records went with it.
        QCOMPARE(RawDatabase(QString::fromStdString(path))
                     .integer(("SELECT count(*) FROM input_sequences WHERE input_id = " + std::to_string(a)).c_str()),
                 qint64(0));
        QString message;
        try {
            project.delete_input(b);
        } catch (const Error& e) {
            message = e.what();
        }
        QVERIFY2(message.contains(QStringLiteral("used by job %1").arg(job_id)) &&
                     message.contains("delete those jobs first"),
                 qPrintable(message));
        QCOMPARE(project.inputs().size(), std::size_t{1});
        message.clear();
        try {
            project.delete_input(a);
        } catch (const Error& e) {
            message = e.what();
        }
        QVERIFY2(message.contains("no input"), qPrintable(message));
        // After the job is gone, so can its input be.
        project.delete_job(job_id);
        project.delete_input(b);
        QVERIFY(project.inputs().empty());
        QVERIFY(project.check().ok());
    }
};

QTEST_GUILESS_MAIN(TestProject)
#include "test_project.moc"
