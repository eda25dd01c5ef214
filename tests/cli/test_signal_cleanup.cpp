// SIGTERM and SIGHUP (kill's default, a closed terminal) end every writing
// command as Ctrl-C does: exit status 128 + the signal, "cancelled" on stderr,
// the earlier output file as it was and no temporary file left, whether the
// signal comes while the inputs load or while the output is being written
// (the test waits for the command's temporary output file when it makes one).
#include "cli_runner.hpp"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <csignal>
#include <random>

namespace {

const QString kDatabase = QStringLiteral("/usr/share/doc/mmseqs2/example-data/DB.fasta.gz");
const QString kPkinase = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial/Pkinase.hmm");

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

QStringList entries(const QString& dir) {
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
}

// A temporary output of AtomicOutput (".NAME.tmp.PID.N") in `dir`.
bool has_temporary(const QString& dir) {
    for (const QString& name : entries(dir))
        if (name.startsWith('.') && name.contains(".tmp.")) return true;
    return false;
}

}  // namespace

class TestSignalCleanup : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kPkinase), "Pkinase.hmm is missing (Debian package hmmer-examples)");
        // A project with 30,000 short DNA alignments (three export pages),
        // and the first queries of the search database.
        std::mt19937 rng(23);
        auto dna = [&](int n) {
            std::string s;
            for (int k = 0; k < n; ++k) s += "ACGT"[rng() % 4];
            return s;
        };
        QFile q(path("q.fa")), t(path("t.fa"));
        QVERIFY(q.open(QIODevice::WriteOnly) && t.open(QIODevice::WriteOnly));
        for (int k = 0; k < 30; ++k)
            q.write(">q" + QByteArray::number(k) + "\n" + QByteArray::fromStdString(dna(40)) + "\n");
        for (int k = 0; k < 1000; ++k)
            t.write(">t" + QByteArray::number(k) + "\n" + QByteArray::fromStdString(dna(40)) + "\n");
        q.close();
        t.close();
        const ProcessResult made = run_cli({"align", path("q.fa"), path("t.fa"), "--device", "cpu", "--project",
                                            path("p.alsproj"), "-o", "/dev/null"});
        QVERIFY2(made.exit_code == 0, made.err.constData());
        const ProcessResult queries =
            run_program("sh", {"-c", "zcat " + kDatabase + " | head -n 200 > " + path("queries.fa")});
        QVERIFY(queries.exit_code == 0);
    }

    void stopsCleanly_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<int>("signal");
        QTest::newRow("hmmsearch -o, SIGTERM") << QStringList{"hmmsearch", "-o", "OUT", kPkinase, kDatabase} << SIGTERM;
        QTest::newRow("hmmsearch --tblout, SIGHUP")
            << QStringList{"hmmsearch", "-o", "/dev/null", "--tblout", "OUT", kPkinase, kDatabase} << SIGHUP;
        QTest::newRow("project export, SIGTERM")
            << QStringList{"project", "p.alsproj", "export", "1", "--format", "pair", "-o", "OUT"} << SIGTERM;
        QTest::newRow("project export, SIGHUP")
            << QStringList{"project", "p.alsproj", "export", "1", "--format", "json", "-o", "OUT"} << SIGHUP;
        QTest::newRow("search -o, SIGTERM")
            << QStringList{"search", "-q",         "queries.fa", "-d", kDatabase, "--device",
                           "cpu",    "--db-cache", "off",        "-o", "OUT"}
            << SIGTERM;
        QTest::newRow("allvsall -o, SIGTERM")
            << QStringList{"allvsall", "t.fa", "--device", "cpu", "-o", "OUT"} << SIGTERM;
        QTest::newRow("verify --timeline, SIGHUP")
            << QStringList{"verify", "--device", "cpu", "--pairs", "100000", "--timeline", "OUT"} << SIGHUP;
        QTest::newRow("bench --json, SIGTERM") << QStringList{"bench", "--device", "cpu", "--json", "OUT"} << SIGTERM;
    }

    void stopsCleanly() {
        QFETCH(QStringList, arguments);
        QFETCH(int, signal);
        const QString work = path("work");
        QDir(work).removeRecursively();
        QVERIFY(QDir().mkpath(work));
        const QString out = work + "/out.txt";
        const QByteArray earlier = "an earlier output, to be kept as it is\n";
        {
            QFile f(out);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(earlier);
        }
        for (QString& a : arguments) {
            if (a == "OUT") a = out;
            else if (a.endsWith(".fa") || a.endsWith(".alsproj"))
                a = path(a);
        }
        const QStringList before = entries(work);

        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("TMPDIR", work);  // allvsall's spool too
        process.setProcessEnvironment(env);
        process.start(QStringLiteral(ALIGNSCOPE_CLI), arguments);
        QVERIFY(process.waitForStarted(10000));
        // While the output is being written when the command makes a
        // temporary file for it (soon after its inputs load), else after 0.3 s.
        QElapsedTimer clock;
        clock.start();
        while (process.state() == QProcess::Running && !has_temporary(work) && clock.elapsed() < 300)
            QThread::msleep(2);
        QVERIFY2(process.state() == QProcess::Running, "the command ended before the signal: give it more work");
        ::kill(static_cast<pid_t>(process.processId()), signal);
        QVERIFY(process.waitForFinished(60000));
        const QByteArray err = process.readAllStandardError();
        QVERIFY2(process.exitStatus() == QProcess::NormalExit, "killed by the signal: no handler was installed");
        QVERIFY2(process.exitCode() == 128 + signal, err.constData());
        QVERIFY2(err.contains("cancelled"), err.constData());
        QCOMPARE(read_all(out), earlier);
        QCOMPARE(entries(work), before);
    }
};

QTEST_GUILESS_MAIN(TestSignalCleanup)
#include "test_signal_cleanup.moc"
