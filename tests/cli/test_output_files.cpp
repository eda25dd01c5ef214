// Output files through the real binary: no command may destroy an input, the
// project or another output (same name, symlink or hard link), replace a
// device node, FIFO or symlink with a regular file, overwrite a read-only file,
// change a file's mode, or break its hard links; a failed write to standard
// output is an error.
#include "../common/cli_runner.hpp"

#include <QFile>
#include <QFileInfo>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <thread>

namespace {

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

struct stat stat_of(const QString& path) {
    struct stat st {};
    ::lstat(path.toLocal8Bit().constData(), &st);
    return st;
}

}  // namespace

class TestOutputFiles : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString query_, target_;

    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        query_ =
            write_fasta(dir_, "q.fa", "q", "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA");
        target_ =
            write_fasta(dir_, "t.fa", "t", "VQLSGEEKAAVLALWDKVNEEEVGGEALGRLLVVYPWTQRFFDSFGDLSNPGAVMGNPKVKAHGKKVLHSF");
    }

    // Every way of naming an input or the project as an output is refused
    // before anything is written, and the file is left as it was.
    void outputsNeverReplaceInputs_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("victim");
        QTest::addColumn<QString>("message");
        QTest::newRow("align -o QUERIES") << QStringList{"align", "q.fa", "t.fa", "-o", "q.fa"} << "q.fa"
                                          << "is the same file as QUERIES";
        QTest::newRow("align -o TARGETS by another name")
            << QStringList{"align", "q.fa", "t.fa", "-o", "./sub/../t.fa"} << "t.fa"
            << "is the same file as TARGETS";
        QTest::newRow("align -o a symlink to the query")
            << QStringList{"align", "q.fa", "t.fa", "-o", "link-to-q.fa"} << "q.fa"
            << "is the same file as QUERIES";
        QTest::newRow("align -o a hard link of the target")
            << QStringList{"align", "q.fa", "t.fa", "-o", "hard-t.fa"} << "t.fa"
            << "is the same file as TARGETS";
        QTest::newRow("align --timeline QUERIES")
            << QStringList{"align", "q.fa", "t.fa", "--timeline", "q.fa"} << "q.fa"
            << "is the same file as QUERIES";
        QTest::newRow("align -o the project")
            << QStringList{"align", "q.fa", "t.fa", "--project", "p.alsproj", "-o", "p.alsproj"} << "p.alsproj"
            << "is the same file as -o";
        QTest::newRow("align --timeline the project")
            << QStringList{"align", "q.fa", "t.fa", "--project", "p.alsproj", "--timeline", "p.alsproj"} << "p.alsproj"
            << "is the same file as --timeline";
        QTest::newRow("search -o DATABASE") << QStringList{"search", "-q", "q.fa", "-d", "t.fa", "-o", "t.fa"} << "t.fa"
                                            << "is the same file as -d";
        QTest::newRow("project export onto itself")
            << QStringList{"project", "p.alsproj", "export", "1", "--format", "tsv", "-o", "p.alsproj"} << "p.alsproj"
            << "is the same file as the project";
        QTest::newRow("two outputs, one file")
            << QStringList{"align", "q.fa", "t.fa", "-o", "out.txt", "--timeline", "out.txt"} << "q.fa"
            << "out.txt: is the same file as -o";
        QTest::newRow("hmmsearch --tblout DATABASE")
            << QStringList{"hmmsearch", "--tblout", "t.fa", "/usr/share/doc/hmmer/examples/tutorial/fn3.hmm", "t.fa"}
            << "t.fa"
            << "is the same file as DATABASE";
        QTest::newRow("allvsall -o SET") << QStringList{"allvsall", "q.fa", "--against", "t.fa", "-o", "t.fa"} << "t.fa"
                                         << "is the same file as --against";
        QTest::newRow("allvsall two outputs")
            << QStringList{"allvsall", "q.fa", "--against", "t.fa", "-o", "out.txt", "--matrix-out", "out.txt"}
            << "q.fa"
            << "out.txt: is the same file as -o";
        QTest::newRow("bench --json the project")
            << QStringList{"bench", "--device", "cpu", "--project", "p.alsproj", "--json", "p.alsproj"} << "p.alsproj"
            << "is the same file as --json";
    }

    void outputsNeverReplaceInputs() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, victim);
        QFETCH(QString, message);
        QDir().mkpath(path("sub"));
        QFile::remove(path("link-to-q.fa"));
        QFile::remove(path("hard-t.fa"));
        QVERIFY(QFile::link(path("q.fa"), path("link-to-q.fa")));
        QVERIFY(::link(path("t.fa").toLocal8Bit().constData(), path("hard-t.fa").toLocal8Bit().constData()) == 0);
        if (!QFile::exists(path("p.alsproj"))) {
            const ProcessResult made =
                run_cli({"align", path("q.fa"), path("t.fa"), "--project", path("p.alsproj"), "-o", path("first.txt")});
            QVERIFY2(made.exit_code == 0, made.err.constData());
        }
        const QByteArray before = read_all(path(victim));
        QStringList absolute;
        for (const QString& a : arguments)
            absolute << (!a.startsWith('/') && (a.endsWith(".fa") || a.endsWith(".alsproj") || a.endsWith(".txt"))
                             ? path(a)
                             : a);
        const ProcessResult r = run_cli(absolute);
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);  // one line
        QCOMPARE(read_all(path(victim)), before);
        QVERIFY(!QFile::exists(path("out.txt")));
    }

    // A character device stays a device (as root, -o /dev/null used to
    // replace the system's /dev/null with a regular file); a FIFO is written
    // through and stays a FIFO.
    void devicesAndFifosAreWrittenThrough() {
        const ProcessResult r = run_cli({"align", query_, target_, "-o", "/dev/null", "--timeline", "/dev/null"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QVERIFY(S_ISCHR(stat_of("/dev/null").st_mode));

        const QString fifo = path("pipe");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        QByteArray received;
        std::thread reader([&] {
            QFile f(fifo);
            if (f.open(QIODevice::ReadOnly)) received = f.readAll();
        });
        const ProcessResult w = run_cli({"align", query_, target_, "--format", "tsv", "-o", fifo});
        reader.join();
        QVERIFY2(w.exit_code == 0, w.err.constData());
        QVERIFY(received.startsWith("query\ttarget\tscore"));
        QVERIFY(S_ISFIFO(stat_of(fifo).st_mode));
    }

    // A read-only file is refused and unchanged (even for root); a writable
    // file keeps its mode; a symlink stays a symlink and its target gets the
    // output; hard links all see the new content.
    void regularFilesKeepWhatTheyAre() {
        const QString ro = path("read-only.txt");
        {
            QFile f(ro);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("keep me\n");
        }
        QVERIFY(::chmod(ro.toLocal8Bit().constData(), 0444) == 0);
        ProcessResult r = run_cli({"align", query_, target_, "-o", ro});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("read-only"), r.err.constData());
        QCOMPARE(read_all(ro), QByteArray("keep me\n"));

        const QString secret = path("secret.txt");
        {
            QFile f(secret);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        QVERIFY(::chmod(secret.toLocal8Bit().constData(), 0600) == 0);
        r = run_cli({"align", query_, target_, "--format", "tsv", "-o", secret});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(stat_of(secret).st_mode & 07777, mode_t(0600));
        QVERIFY(read_all(secret).startsWith("query\t"));

        const QString link = path("link.txt");
        QVERIFY(QFile::link(secret, link));
        r = run_cli({"align", query_, target_, "--format", "json", "-o", link});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QVERIFY(S_ISLNK(stat_of(link).st_mode));
        QVERIFY(read_all(secret).startsWith("{"));

        const QString twin = path("twin.txt");
        QVERIFY(::link(secret.toLocal8Bit().constData(), twin.toLocal8Bit().constData()) == 0);
        r = run_cli({"align", query_, target_, "--format", "tsv", "-o", secret});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(stat_of(secret).st_ino, stat_of(twin).st_ino);
        QCOMPARE(stat_of(twin).st_nlink, nlink_t(2));
        QVERIFY(read_all(twin).startsWith("query\t"));
    }

    // A write error on standard output is an error, not exit status 0.
    void fullStandardOutputFails() {
        if (!QFile::exists("/dev/full")) QSKIP("/dev/full does not exist on this system");
        QProcess process;
        process.setStandardOutputFile("/dev/full");
        process.start(QStringLiteral(ALIGNSCOPE_CLI), {"align", query_, target_});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(process.readAllStandardError().contains("standard output: write failed"));
    }
};

QTEST_GUILESS_MAIN(TestOutputFiles)
#include "test_output_files.moc"
