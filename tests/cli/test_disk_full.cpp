// Every writer of the real binary on a full disk: the command runs with a file
// size limit (RLIMIT_FSIZE, SIGXFSZ ignored: every write to a regular file past
// the limit fails as on a full disk) or writes to /dev/full, and must exit
// non-zero with one error line naming the file, leave an earlier file of that
// name as it was, leave no temporary file behind, and leave the project whole.
#include "../common/cli_runner.hpp"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

#include <sys/resource.h>

#include <csignal>

namespace {

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

void write_file(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(bytes);
}

// Every file under `dir` with its size ("name size"), sorted.
QStringList listing(const QString& dir) {
    QStringList names;
    QDirIterator it(dir, QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                    QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        names << QDir(dir).relativeFilePath(it.filePath()) + " " + QString::number(it.fileInfo().size());
    }
    names.sort();
    return names;
}

// Runs alignscope-cli in `dir` with every regular file limited to `limit`
// bytes (a negative limit: no limit), temporary files in `dir` too.
ProcessResult run_limited(const QString& dir, const QStringList& arguments, qint64 limit) {
    QProcess process;
    process.setWorkingDirectory(dir);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TMPDIR", dir);
    process.setProcessEnvironment(env);
    if (limit >= 0) {
        process.setChildProcessModifier([limit] {
            std::signal(SIGXFSZ, SIG_IGN);
            const rlimit rl{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
            ::setrlimit(RLIMIT_FSIZE, &rl);
        });
    }
    process.start(QStringLiteral(ALIGNSCOPE_CLI), arguments);
    ProcessResult result;
    if (!process.waitForStarted(10000) || !process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
        result.err = "did not start or finish";
        return result;
    }
    result.crashed = process.exitStatus() != QProcess::NormalExit;
    result.exit_code = process.exitCode();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    return result;
}

const QString kTutorial = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial");

}  // namespace

class TestDiskFull : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/globins4.hmm"),
                                  "the HMMER tutorial models are missing (Debian package hmmer-examples)");
    }

    // arguments: run in a fresh folder holding q.fa, t.fa (two records),
    // p.alsproj (one job) and "out" (an earlier output). names: what the
    // error line must contain. limits: the file size limits to run with
    // (bytes; 0 = nothing can be written, >0 = the output starts and then fails).
    void everyWriterOnAFullDisk_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("names");
        const QString globins = kTutorial + "/globins4.hmm", hbb = kTutorial + "/HBB_HUMAN";
        QTest::newRow("align -o") << QStringList{"align", "q.fa", "t.fa", "-o", "out"} << "\\bout: write failed";
        QTest::newRow("align --format sam -o")
            << QStringList{"align", "q.fa", "t.fa", "--format", "sam", "-o", "out"} << "\\bout: write failed";
        QTest::newRow("align --timeline")
            << QStringList{"align", "q.fa", "t.fa", "-o", "/dev/null", "--timeline", "out"} << "\\bout: write failed";
        QTest::newRow("align --long -o") << QStringList{"align", "--long", "q.fa", "t.fa", "-o", "out"}
                                         << "\\bout: write failed";
        QTest::newRow("align --long --checkpoint")
            << QStringList{"align", "--long", "q.fa",     "t.fa", "--checkpoint", "ck", "--checkpoint-every",
                           "0",     "-o",     "/dev/null"}
            << "checkpoint: cannot write ck/";
        QTest::newRow("align --project") << QStringList{"align",     "q.fa", "t.fa",     "--project",
                                                        "p.alsproj", "-o",   "/dev/null"}
                                         << "p.alsproj: the disk is full";
        QTest::newRow("search -o") << QStringList{"search", "-q",         "q.fa", "-d", "t.fa", "--device",
                                                  "cpu",    "--db-cache", "off",  "-o", "out"}
                                   << "\\bout: write failed";
        QTest::newRow("search -o, database cache on")
            << QStringList{"search", "-q", "q.fa", "-d", "t.fa", "--device", "cpu", "--db-cache", "cache", "-o", "out"}
            << "\\bout: write failed";
        QTest::newRow("search --timeline")
            << QStringList{"search",     "-q",  "q.fa", "-d",        "t.fa",       "--device", "cpu",
                           "--db-cache", "off", "-o",   "/dev/null", "--timeline", "out"}
            << "\\bout: write failed";
        // Opening the project (WAL) would write its shared-memory index
        // first: on a full disk the project is read without it, and the
        // error is the output's.
        QTest::newRow("project export -o")
            << QStringList{"project", "p.alsproj", "export", "1", "--format", "tsv", "-o", "out"}
            << "\\bout: write failed";
        QTest::newRow("project export --format json -o")
            << QStringList{"project", "p.alsproj", "export", "1", "--format", "json", "-o", "out"}
            << "\\bout: write failed";
        QTest::newRow("hmmsearch -o") << QStringList{"hmmsearch", "-o", "out", globins, hbb} << "\\bout: write failed";
        QTest::newRow("hmmsearch --tblout")
            << QStringList{"hmmsearch", "-o", "/dev/null", "--tblout", "out", globins, hbb} << "\\bout: write failed";
        QTest::newRow("hmmsearch --domtblout")
            << QStringList{"hmmsearch", "-o", "/dev/null", "--domtblout", "out", globins, hbb}
            << "\\bout: write failed";
        QTest::newRow("hmmsearch -A") << QStringList{"hmmsearch", "-o", "/dev/null", "-A", "out", globins, hbb}
                                      << "\\bout: write failed";
        // The pair spool (in TMPDIR) is the first file allvsall writes.
        QTest::newRow("allvsall -o")
            << QStringList{"allvsall", "t.fa", "--device", "cpu", "-o", "out"}
            << "(allvsall: cannot write .*alignscope-allvsall-.*set TMPDIR|\\bout: write failed)";
        QTest::newRow("verify --timeline")
            << QStringList{"verify", "--device", "cpu", "--pairs", "5", "--timeline", "out"} << "\\bout: write failed";
        QTest::newRow("bench --json") << QStringList{"bench", "--device",    "cpu", "--cpu-device", "none", "--lengths",
                                                     "64",    "--cpu-pairs", "10",  "--json",       "out"}
                                      << "\\bout: write failed";
        QTest::newRow("bench --timeline")
            << QStringList{"bench", "--device",    "cpu", "--cpu-device", "none", "--lengths",
                           "64",    "--cpu-pairs", "10",  "--timeline",   "out"}
            << "\\bout: write failed";
    }

    void everyWriterOnAFullDisk() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, names);
        for (const qint64 limit : {qint64(0), qint64(100)}) {
            QTemporaryDir tmp;
            QVERIFY(tmp.isValid());
            const QString dir = tmp.path();
            write_fasta(tmp, "q.fa", "q", "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA");
            write_file(dir + "/t.fa",
                       ">t\nVQLSGEEKAAVLALWDKVNEEEVGGEALGRLLVVYPWTQRFFDSFGDLSNPGAVMGNPKVKAHGKKVLHSF\n"
                       ">u\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLG\n");
            QVERIFY(QDir(dir).mkdir("cache"));
            const ProcessResult made =
                run_limited(dir, {"align", "q.fa", "t.fa", "--project", "p.alsproj", "-o", "/dev/null"}, -1);
            QVERIFY2(made.exit_code == 0, made.err.constData());
            const QByteArray previous = "an earlier output, to be kept as it is\n";
            write_file(dir + "/out", previous);
            const QByteArray project_before = read_all(dir + "/p.alsproj");
            const QStringList before = listing(dir);

            const ProcessResult r = run_limited(dir, arguments, limit);
            const QByteArray context = "limit " + QByteArray::number(limit) + ": " + r.err;
            QVERIFY2(!r.crashed, context.constData());
            QVERIFY2(r.exit_code != 0, context.constData());
            // One error line, naming the file.
            int error_lines = 0;
            QByteArray error;
            for (const QByteArray& line : r.err.split('\n'))
                if (line.contains("error:")) {
                    ++error_lines;
                    error = line;
                }
            QVERIFY2(error_lines == 1, context.constData());
            QVERIFY2(QString::fromUtf8(error).contains(QRegularExpression(names)), context.constData());
            // ... and why, in the system's words and the user's: a file size
            // limit is "File too large", a full disk "the disk is full".
            QVERIFY2(error.contains("File too large") || error.contains("the disk is full"), context.constData());
            // A file not written is said to be unchanged (or not made), never
            // "maybe": the old one is there as it was.
            if (error.contains(": write failed"))
                QVERIFY2(error.contains("the file was not changed") || error.contains("no file was written"),
                         context.constData());
            // The earlier output is as it was; the project too, and it opens whole.
            QCOMPARE(read_all(dir + "/out"), previous);
            QCOMPARE(read_all(dir + "/p.alsproj"), project_before);
            const ProcessResult check = run_limited(dir, {"project", "p.alsproj", "check"}, -1);
            QVERIFY2(check.exit_code == 0 && check.out.contains("ok"), (check.out + check.err).constData());
            // Nothing left beside it: no temporary file, no partial checkpoint
            // (a checkpoint folder the command made may stay, empty), and
            // SQLite's -wal/-shm are gone once the project was opened again.
            QStringList after = listing(dir);
            after.removeAll("ck 0");
            after.removeAll("ck 4096");
            QCOMPARE(after, before);
        }
    }

    // A project on a full disk can still be read: with no room for SQLite's
    // -shm index it is read with the index in memory, so list and an export
    // to standard output (a pipe, not limited) work, and the project is unchanged.
    void projectReadOnAFullDisk() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.path();
        write_fasta(tmp, "q.fa", "q", "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA");
        write_fasta(tmp, "t.fa", "t", "VQLSGEEKAAVLALWDKVNEEEVGGEALGRLLVVYPWTQRFFDSFGDLSNPGAVMGNPKVKAHGKKVLHSF");
        const ProcessResult made =
            run_limited(dir, {"align", "q.fa", "t.fa", "--project", "p.alsproj", "-o", "/dev/null"}, -1);
        QVERIFY2(made.exit_code == 0, made.err.constData());
        const QByteArray project_before = read_all(dir + "/p.alsproj");
        const QStringList before = listing(dir);
        const ProcessResult list = run_limited(dir, {"project", "p.alsproj", "list"}, 0);
        QVERIFY2(list.exit_code == 0 && list.out.contains("1 job, "), (list.out + list.err).constData());
        const ProcessResult exported = run_limited(dir, {"project", "p.alsproj", "export", "1", "--format", "tsv"}, 0);
        QVERIFY2(exported.exit_code == 0, exported.err.constData());
        QCOMPARE(exported.out.count('\n'), 2);  // the header and the one alignment
        QVERIFY2(exported.out.contains("\tq\t") || exported.out.contains("q\tt"), exported.out.constData());
        QCOMPARE(read_all(dir + "/p.alsproj"), project_before);
        // An empty -shm that SQLite made before it found no room goes with the
        // next open, as after the writers above.
        const ProcessResult check = run_limited(dir, {"project", "p.alsproj", "check"}, -1);
        QVERIFY2(check.exit_code == 0 && check.out.contains("ok"), (check.out + check.err).constData());
        QCOMPARE(listing(dir), before);
    }

    // /dev/full (a character device: written straight through) as each
    // command's output: the write error is an error naming it.
    void devFullIsAnError_data() {
        QTest::addColumn<QStringList>("arguments");
        const QString globins = kTutorial + "/globins4.hmm", hbb = kTutorial + "/HBB_HUMAN";
        QTest::newRow("align -o") << QStringList{"align", "q.fa", "t.fa", "-o", "/dev/full"};
        QTest::newRow("align --timeline")
            << QStringList{"align", "q.fa", "t.fa", "-o", "/dev/null", "--timeline", "/dev/full"};
        QTest::newRow("search -o") << QStringList{"search", "-q",         "q.fa", "-d", "t.fa",     "--device",
                                                  "cpu",    "--db-cache", "off",  "-o", "/dev/full"};
        QTest::newRow("project export -o")
            << QStringList{"project", "p.alsproj", "export", "1", "--format", "tsv", "-o", "/dev/full"};
        QTest::newRow("hmmsearch --tblout")
            << QStringList{"hmmsearch", "-o", "/dev/null", "--tblout", "/dev/full", globins, hbb};
        QTest::newRow("allvsall -o") << QStringList{"allvsall", "t.fa", "--device", "cpu", "-o", "/dev/full"};
        QTest::newRow("allvsall --clusters")
            << QStringList{"allvsall", "t.fa", "--device", "cpu", "-o", "/dev/null", "--clusters", "/dev/full"};
    }

    void devFullIsAnError() {
        QFETCH(QStringList, arguments);
        if (!QFile::exists("/dev/full")) QSKIP("/dev/full does not exist on this system");
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.path();
        write_fasta(tmp, "q.fa", "q", "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA");
        write_file(dir + "/t.fa",
                   ">t\nVQLSGEEKAAVLALWDKVNEEEVGGEALGRLLVVYPWTQRFFDSFGDLSNPGAVMGNPKVKAHGKKVLHSF\n"
                   ">u\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLG\n");
        const ProcessResult made =
            run_limited(dir, {"align", "q.fa", "t.fa", "--project", "p.alsproj", "-o", "/dev/null"}, -1);
        QVERIFY2(made.exit_code == 0, made.err.constData());
        const QStringList before = listing(dir);
        const ProcessResult r = run_limited(dir, arguments, -1);
        QVERIFY2(!r.crashed && r.exit_code != 0, r.err.constData());
        QVERIFY2(r.err.contains("/dev/full: write failed (No space left on device: the disk is full)"),
                 r.err.constData());
        QCOMPARE(r.err.count("error:"), 1);
        QCOMPARE(listing(dir), before);
    }
};

QTEST_GUILESS_MAIN(TestDiskFull)
#include "test_disk_full.moc"
