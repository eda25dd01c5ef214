// `align --long --stream -o FILE` through the real binary: the streamed file is
// the in-memory path's file byte for byte (every format; the lines that name
// the command line or the time of writing, and the long_pair statistics,
// aside), on the Myers-Miller path and on the pass pipeline (--checkpoint);
// streaming by itself from 1,000,000 residues with -o FILE, not with
// --no-stream or to standard output; misuse and an unwritable path are one
// error naming it; Ctrl-C (and SIGTERM, SIGHUP) leaves no file behind.
#include "cli_runner.hpp"

#include <alignscope/bench/long_pairs.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <csignal>

using namespace alignscope;

namespace {

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing " + path.toUtf8() + ">");
}

// What differs between two runs of different command lines at different
// times: the pair format's command line and run date, SAM's @PG line, and the
// JSON record's long_pair object (timings, and "streamed").
QByteArray comparable(QByteArray text) {
    static const QRegularExpression varying(QStringLiteral("^(# Commandline: |# Rundate: |@PG\t)[^\n]*\n"),
                                            QRegularExpression::MultilineOption);
    static const QRegularExpression long_pair(QStringLiteral("\"long_pair\":\\{[^{}]*\\},"));
    QString s = QString::fromUtf8(text);
    s.remove(varying);
    s.remove(long_pair);
    return s.toUtf8();
}

QJsonObject json_record(const QString& path) { return QJsonDocument::fromJson(file_bytes(path)).object(); }

QStringList files_in(const QString& dir) {
    return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

}  // namespace

class TestLongStreamCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString query_, target_;

    QString path(const QString& name) const { return dir_.filePath(name); }

    void expect_error(const QStringList& arguments, const QString& expected) {
        const ProcessResult r = run_cli(arguments);
        QVERIFY2(r.exit_code == 2, qPrintable(QString("exit %1: %2").arg(r.exit_code).arg(QString::fromUtf8(r.err))));
        QVERIFY2(r.err.contains(expected.toUtf8()), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(r.out.isEmpty());
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const SeedGenome genome = load_seed_genome();
        const LongPair pair = generate_long_pair(31, genome.residues, 6000, 6200);
        query_ = write_fasta(dir_, "q.fa", "query_6k", pair.query);
        target_ = write_fasta(dir_, "t.fa", "target_6k", pair.target);
    }

    void streamed_file_equals_in_memory_file_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QStringList>("flags");
        for (const char* format : {"pair", "json", "tsv", "sam"}) {
            QTest::addRow("%s global cpu", format) << format << QStringList{"--device", "cpu"};
            QTest::addRow("%s local cpu-ref", format)
                << format
                << QStringList{"--device", "cpu-ref", "--mode", "local", "--gap-open", "16", "--gap-extend", "4"};
        }
        // The pass pipeline (stage 3 streamed segment by segment).
        QTest::addRow("pair semiglobal pipeline")
            << "pair" << QStringList{"--device", "cpu", "--mode", "semiglobal", "--checkpoint", "CK"};
        QTest::addRow("json global pipeline") << "json" << QStringList{"--device", "cpu", "--checkpoint", "CK"};
    }
    void streamed_file_equals_in_memory_file() {
        QFETCH(QString, format);
        QFETCH(QStringList, flags);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(' ', '_');
        flags.replaceInStrings(QRegularExpression("^CK$"), path(tag + ".ck"));
        const QStringList base = QStringList{"align", "--long", query_, target_, "--format", format} + flags;
        const ProcessResult plain = run_cli(base + QStringList{"-o", path(tag + ".plain")});
        QVERIFY2(plain.exit_code == 0, plain.err.constData());
        const ProcessResult streamed =
            run_cli(base + QStringList{"-o", path(tag + ".streamed"), "--stream", "--stats"});
        QVERIFY2(streamed.exit_code == 0, streamed.err.constData());
        QVERIFY2(streamed.err.contains("alignment streamed to " + path(tag + ".streamed").toUtf8()),
                 streamed.err.constData());
        const QByteArray a = file_bytes(path(tag + ".plain")), b = file_bytes(path(tag + ".streamed"));
        QVERIFY(a.size() > 1000);
        QCOMPARE(comparable(b), comparable(a));
        if (format == "json") {
            QCOMPARE(json_record(path(tag + ".plain"))["long_pair"].toObject()["streamed"].toBool(), false);
            QCOMPARE(json_record(path(tag + ".streamed"))["long_pair"].toObject()["streamed"].toBool(), true);
        }
        if (format == "pair") QVERIFY(a.contains("# Identity:") && a.contains("|||||"));
    }

    void misuse_and_unwritable_paths_are_one_clear_error() {
        expect_error({"align", "--long", query_, target_, "--stream"}, "--stream writes the alignment to a file");
        expect_error({"align", "--long", query_, target_, "--stream", "--no-stream", "-o", path("x.pair")},
                     "--stream and --no-stream exclude each other");
        expect_error({"align", "--long", query_, target_, "--stream", "--no-traceback", "-o", path("x.pair")},
                     "with --no-traceback there is none");
        const QString missing = path("no/such/dir/out.pair");
        expect_error({"align", "--long", query_, target_, "--stream", "-o", missing}, missing + ": the directory");
        expect_error({"align", "--long", query_, target_, "--stream", "-o", dir_.path()}, "is a directory");
        // Off the long-pair path.
        const QString short_path = write_fasta(dir_, "short.fa", "s", "ACGTACGTAAACCCGGGTTT");
        expect_error({"align", short_path, short_path, "--stream", "-o", path("y.pair")},
                     "apply to the long-pair path");
        QVERIFY(!QFile::exists(path("x.pair")) && !QFile::exists(path("y.pair")));
    }

    // From 1,000,000 residues in the longer sequence, -o FILE streams by itself.
    void streams_by_itself_from_a_million_residues() {
        const SeedGenome genome = load_seed_genome();
        const LongPair pair = generate_long_pair(8, genome.residues, 1000, 1'000'000);
        const std::string read = pair.target.substr(400'000, 150);
        const QString q = write_fasta(dir_, "read.fa", "read", read);
        const QString t = write_fasta(dir_, "million.fa", "million", pair.target);
        const QStringList base{"align", "--long", q, t, "--mode", "local", "--device", "cpu", "--format", "json"};
        const ProcessResult automatic = run_cli(base + QStringList{"-o", path("auto.json")});
        QVERIFY2(automatic.exit_code == 0, automatic.err.constData());
        QVERIFY2(automatic.err.contains("streamed to " + path("auto.json").toUtf8()), automatic.err.constData());
        QCOMPARE(json_record(path("auto.json"))["long_pair"].toObject()["streamed"].toBool(), true);
        QCOMPARE(json_record(path("auto.json"))["target_begin"].toInt(), 400'001);
        const ProcessResult off = run_cli(base + QStringList{"-o", path("off.json"), "--no-stream"});
        QVERIFY2(off.exit_code == 0, off.err.constData());
        QVERIFY(!off.err.contains("streamed"));
        QCOMPARE(json_record(path("off.json"))["long_pair"].toObject()["streamed"].toBool(), false);
        QCOMPARE(comparable(file_bytes(path("auto.json"))), comparable(file_bytes(path("off.json"))));
        // To standard output: built in memory, and said so.
        const ProcessResult out = run_cli(base);
        QVERIFY2(out.exit_code == 0, out.err.constData());
        QVERIFY2(out.err.contains("-o FILE streams it"), out.err.constData());
        QCOMPARE(comparable(out.out), comparable(file_bytes(path("off.json"))));
        // A file of several records still says that only its first is aligned,
        // whether the alignment streams or not (the streaming note once hid it).
        QFile more(t);
        QVERIFY(more.open(QIODevice::Append));
        more.write(">second\nACGTACGTACGT\n");
        more.close();
        for (const QStringList& extra : {QStringList{"-o", path("multi.json")}, QStringList{}}) {
            const ProcessResult multi = run_cli(base + extra);
            QVERIFY2(multi.exit_code == 0, multi.err.constData());
            QVERIFY2(multi.err.contains("holds 2 records; aligning its first, million"), multi.err.constData());
        }
    }

    // A streamed job keeps its checkpoint until the file is in place, then
    // removes it as an in-memory job does: the directory too when the job
    // made it, only the checkpoint's files when it was there before.
    void streamed_job_removes_its_checkpoint_after_the_file() {
        const QStringList base{"align", "--long", query_, target_, "--device", "cpu", "--stream", "--format", "pair"};
        const QString made = path("made.ck");
        const ProcessResult a = run_cli(base + QStringList{"-o", path("ck1.pair"), "--checkpoint", made});
        QVERIFY2(a.exit_code == 0, a.err.constData());
        QVERIFY(QFile::exists(path("ck1.pair")));
        QVERIFY2(!QFileInfo::exists(made), qPrintable(files_in(made).join(' ')));
        QTemporaryDir mine;
        QFile keep(mine.filePath("notes.txt"));
        QVERIFY(keep.open(QIODevice::WriteOnly));
        keep.write("mine");
        keep.close();
        const ProcessResult b = run_cli(base + QStringList{"-o", path("ck2.pair"), "--checkpoint", mine.path()});
        QVERIFY2(b.exit_code == 0, b.err.constData());
        QCOMPARE(files_in(mine.path()), QStringList{"notes.txt"});
        QCOMPARE(comparable(file_bytes(path("ck1.pair"))), comparable(file_bytes(path("ck2.pair"))));
    }

    // Ctrl-C, kill's SIGTERM or a closed terminal's SIGHUP while the job runs:
    // exit 128 + the signal, and neither the file nor its temporary or spool is
    // left; an older file of that name is untouched.
    void stop_signal_leaves_no_file_data() {
        QTest::addColumn<int>("signal");
        QTest::newRow("SIGINT") << int(SIGINT);
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGHUP") << int(SIGHUP);
    }
    void stop_signal_leaves_no_file() {
        QFETCH(int, signal);
        const SeedGenome genome = load_seed_genome();
        const LongPair pair = generate_long_pair(9, genome.residues, 20000, 20000);
        QTemporaryDir run_dir;
        QVERIFY(run_dir.isValid());
        const QString q = write_fasta(run_dir, "q.fa", "q", pair.query);
        const QString t = write_fasta(run_dir, "t.fa", "t", pair.target);
        const QString out = run_dir.filePath("out.pair");
        {
            QFile old(out);
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("older\n");
        }
        QProcess process;
        process.start(QStringLiteral(ALIGNSCOPE_CLI),
                      {"align", "--long", q, t, "--device", "cpu", "--stream", "-o", out});
        QVERIFY(process.waitForStarted(10000));
        QElapsedTimer clock;
        clock.start();
        // The temporary output and the spool exist once the job runs.
        while (files_in(run_dir.path()).size() < 5 && process.state() == QProcess::Running && clock.elapsed() < 20000)
            QThread::msleep(5);
        QThread::msleep(100);
        QVERIFY2(process.state() == QProcess::Running, "the job ended before the signal");
        ::kill(static_cast<pid_t>(process.processId()), signal);
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 128 + signal);
        QVERIFY(process.readAllStandardError().contains("was not written"));
        QCOMPARE(files_in(run_dir.path()), (QStringList{"out.pair", "q.fa", "t.fa"}));
        QCOMPARE(file_bytes(out), QByteArray("older\n"));
    }
};

QTEST_GUILESS_MAIN(TestLongStreamCli)
#include "test_long_stream_cli.moc"
