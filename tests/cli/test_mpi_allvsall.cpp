// `mpirun -np 3 alignscope-cli allvsall` on the CPU devices of one machine:
// rank 0 deals tiles to the other ranks and a thread of its own and alone
// writes the files, which must be byte for byte those of one process; a computing rank killed mid-run
// ends the run with a message naming the rank and the host, and --resume
// (under mpirun again) completes to the same bytes. Needs Open MPI's mpirun
// (Debian openmpi-bin, installed by scripts/check): its absence is a failure.
#include "cli_runner.hpp"
#include "rrna16s.hpp"

#include <QDir>
#include <QtTest>

#include <csignal>

#include <unistd.h>

namespace {

QByteArray slurp(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList mpirun(int ranks) {
    return {"--allow-run-as-root", "--oversubscribe", "-np", QString::number(ranks), ALIGNSCOPE_CLI};
}

ProcessResult run_mpi(int ranks, const QStringList& args) {
    return run_program(QStandardPaths::findExecutable("mpirun"), mpirun(ranks) + args, 120000);
}

int manifest_tiles(const QString& dir) {
    for (const QByteArray& line : slurp(dir + "/allvsall.manifest").split('\n'))
        if (line.startsWith("tiles ")) return line.mid(6).toInt();
    return 0;
}

// The process below `ancestor` whose environment says it is MPI rank `rank` (0 if none).
pid_t rank_process(qint64 ancestor, int rank) {
    const QByteArray want = "OMPI_COMM_WORLD_RANK=" + QByteArray::number(rank);
    for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
        bool number = false;
        const pid_t pid = entry.toInt(&number);
        if (!number) continue;
        // Walk up the parents to `ancestor`.
        pid_t p = pid;
        for (int depth = 0; depth < 8 && p > 1 && p != ancestor; ++depth) {
            const QList<QByteArray> stat = slurp("/proc/" + QString::number(p) + "/stat").split(' ');
            p = stat.size() > 3 ? stat[3].toInt() : 0;
        }
        if (p != ancestor || pid == ancestor) continue;
        if (slurp("/proc/" + entry + "/environ").split('\0').contains(want)) return pid;
    }
    return 0;
}

}  // namespace

class TestMpiAllVsAll : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!have_program("mpirun"))
            QFAIL("mpirun is not installed: install the Debian packages openmpi-bin and libopenmpi-dev");
        if (!QFile::exists(k16S))
            QFAIL("rRNA16S.gold.fasta is missing: install the Debian package microbiomeutil-data");
    }

    // Commands that do not share work among ranks refuse to run under mpirun
    // instead of writing the same outputs once per rank (search shares it:
    // test_mpi_search).
    void other_commands_refuse_mpirun() {
        QTemporaryDir dir;
        const QString fa = dir.filePath("a.fa");
        QFile f(fa);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(">a\nACGTACGTAC\n>b\nACGTTCGTAC\n");
        f.close();
        const QString out = dir.filePath("out.tsv");
        for (const QStringList& args :
             {QStringList{"align", fa, fa, "-o", out}, QStringList{"hmmsearch", fa, fa, "-o", out}}) {
            const ProcessResult r = run_mpi(2, args);
            QVERIFY2(r.exit_code != 0, r.out.constData());
            QVERIFY2(r.err.contains(args.front().toUtf8() + " does not run under mpirun"), r.err.constData());
            QVERIFY(!QFile::exists(out));
        }
    }

    void three_ranks_write_the_bytes_of_one_process_data() {
        QTest::addColumn<bool>("against");
        QTest::addColumn<int>("ranks");
        QTest::newRow("triangle, 3 ranks") << false << 3;
        QTest::newRow("triangle, 2 ranks") << false << 2;
        QTest::newRow("rectangle, 3 ranks") << true << 3;
    }
    void three_ranks_write_the_bytes_of_one_process() {
        QFETCH(bool, against);
        QFETCH(int, ranks);
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 30);
        QStringList args{"allvsall",         set,    "--device",   "cpu", "--threads",    "1",
                         "--tile",           "4",    "--gap-open", "10",  "--gap-extend", "1",
                         "--min-normalised", "0.85", "--top",      "1",   "--quiet"};
        QStringList files{"t.tsv"};
        if (against) {
            args << "--against" << subset(dir, "other.fa", 9, 30) << "--matrix-out";
            files << "m.csv";
        } else {
            args << "--matrix-out";
            files << "m.phy"
                  << "c.tsv";
        }
        auto outputs = [&](const QString& tag) {
            QStringList a{dir.filePath(tag + files[1]), "-o", dir.filePath(tag + files[0])};
            if (!against) a << "--clusters" << dir.filePath(tag + files[2]);
            return a;
        };
        ProcessResult one = run_cli(args + outputs("one."));
        QVERIFY2(one.exit_code == 0, one.err.constData());
        ProcessResult three = run_mpi(ranks, args + outputs("mpi."));
        QVERIFY2(three.exit_code == 0, three.err.constData() + QByteArray(three.out));
        for (const QString& f : files) {
            const QByteArray a = slurp(dir.filePath("one." + f)), b = slurp(dir.filePath("mpi." + f));
            QVERIFY(a.count('\n') > 10);
            QVERIFY2(a == b, qPrintable(f));
        }
    }

    void a_killed_rank_is_named_and_the_run_resumes() {
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 24);
        const QString checkpoint = dir.filePath("ckpt");
        const QStringList common{"allvsall",     set, "--device",         "cpu-ref", "--tile", "2", "--gap-open", "10",
                                 "--gap-extend", "1", "--min-normalised", "0.85",    "--quiet"};
        ProcessResult one = run_cli(common + QStringList{"-o", dir.filePath("one.tsv"), "--threads", "2"});
        QVERIFY2(one.exit_code == 0, one.err.constData());

        const QStringList cut =
            common +
            QStringList{
                "-o", dir.filePath("mpi.tsv"), "--checkpoint", checkpoint, "--checkpoint-every", "0", "--threads", "1"};
        QProcess p;
        p.start(QStandardPaths::findExecutable("mpirun"), mpirun(3) + cut);
        QVERIFY(p.waitForStarted());
        QElapsedTimer clock;
        clock.start();
        while (manifest_tiles(checkpoint) < 4 && clock.elapsed() < 60000 && p.state() == QProcess::Running)
            QTest::qWait(20);
        QVERIFY2(p.state() == QProcess::Running, "the run ended before a rank could be killed");
        const pid_t victim = rank_process(p.processId(), 2);
        QVERIFY2(victim > 0, "rank 2 not found among mpirun's processes");
        ::kill(victim, SIGKILL);
        QVERIFY(p.waitForFinished(30000));
        QVERIFY(p.exitCode() != 0);
        const QByteArray err = p.readAllStandardError() + p.readAllStandardOutput();
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        QVERIFY2(err.contains("rank 2") && err.contains(host), err.constData());
        QVERIFY(!QFile::exists(dir.filePath("mpi.tsv")));
        const int done = manifest_tiles(checkpoint);
        QVERIFY(done >= 4);

        const ProcessResult resumed = run_mpi(3, cut + QStringList{"--resume"});
        QVERIFY2(resumed.exit_code == 0, resumed.err.constData());
        QVERIFY2(resumed.err.contains("resuming"), resumed.err.constData());
        QCOMPARE(slurp(dir.filePath("mpi.tsv")), slurp(dir.filePath("one.tsv")));
        QVERIFY(!QFile::exists(checkpoint));
    }
};

QTEST_GUILESS_MAIN(TestMpiAllVsAll)
#include "test_mpi_allvsall.moc"
