// `align --long --checkpoint DIR [--checkpoint-every S] [--resume]` through the
// real binary: a job killed with SIGKILL once its first checkpoint is on disk
// and resumed on another CPU device gives the alignment of `align --long`
// without checkpoints (Myers-Miller in linear space: another algorithm), the
// statistics say where it resumed and the checkpoint is gone afterwards;
// Ctrl-C keeps the checkpoint and says how to go on; and every misuse is one
// line on stderr with exit status 2 that leaves an existing checkpoint as it
// was: --resume without --checkpoint, --checkpoint-every without it, the
// flags off the long-pair path, a negative interval, nothing to resume, a
// checkpoint of another pair or mode, a new job into a directory holding a
// checkpoint, and a directory that cannot be made.
#include "cli_runner.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <csignal>

using namespace alignscope;

namespace {

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Starts the CLI, waits until `dir` holds a checkpoint manifest, then sends
// `signal`. Returns the exit status (or -1), with stderr.
int stop_after_first_checkpoint(const QStringList& arguments, const QString& dir, int signal, QByteArray* err) {
    QProcess process;
    process.start(QStringLiteral(ALIGNSCOPE_CLI), arguments);
    if (!process.waitForStarted(10000)) return -1;
    QElapsedTimer clock;
    clock.start();
    while (!QFile::exists(dir + "/long-pair.manifest") && process.state() == QProcess::Running &&
           clock.elapsed() < 60000)
        QThread::msleep(10);
    if (process.state() == QProcess::Running) ::kill(static_cast<pid_t>(process.processId()), signal);
    process.waitForFinished(60000);
    *err = process.readAllStandardError();
    if (process.exitStatus() == QProcess::CrashExit) return -signal;
    return process.exitCode();
}

}  // namespace

class TestLongCheckpointCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string query_, target_;
    QString query_path_, target_path_, other_target_;

    QString path(const QString& name) const { return dir_.filePath(name); }
    QStringList job(const QStringList& more) const {
        return QStringList{"align", "--long", query_path_, target_path_, "--mode", "local", "--format", "json"} + more;
    }
    // A fresh checkpoint of this pair, stopped by Ctrl-C after its first checkpoint.
    QString interrupted_checkpoint(const QString& name) {
        const QString ck = path(name);
        QByteArray err;
        const int code = stop_after_first_checkpoint(job({"--device", "cpu", "--checkpoint", ck, "--checkpoint-every",
                                                          "0", "-o", path(name + ".json")}),
                                                     ck, SIGINT, &err);
        if (code != 130) qWarning("exit %d: %s", code, err.constData());
        return code == 130 ? ck : QString();
    }
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
        const LongPair pair = generate_long_pair(77, genome.residues, 16000, 16300);
        query_ = pair.query;
        target_ = pair.target;
        query_path_ = write_fasta(dir_, "q.fa", "q16k", query_);
        target_path_ = write_fasta(dir_, "t.fa", "t16k", target_);
        std::string other = target_;
        other[100] = other[100] == 'A' ? 'C' : 'A';
        other_target_ = write_fasta(dir_, "other.fa", "t16k", other);
    }

    void killed_and_resumed() {
        // The reference: the long path without checkpoints (Myers-Miller).
        const ProcessResult ref = run_cli(job({"--device", "cpu"}));
        QVERIFY2(ref.exit_code == 0, ref.err.constData());
        const auto r = parse_json_lines(ref.out);
        QCOMPARE(r.size(), 1);
        QVERIFY(r[0]["kernel"].toString().contains("myersmiller"));

        // Killed (SIGKILL) once the first checkpoint is on disk.
        const QString ck = path("killed");
        QByteArray err;
        const int code = stop_after_first_checkpoint(job({"--device", "cpu", "--checkpoint", ck, "--checkpoint-every",
                                                          "0", "-o", path("killed.json")}),
                                                     ck, SIGKILL, &err);
        QVERIFY2(
            code == -SIGKILL,
            qPrintable(
                QString("exit %1 (the job ended before it was killed?): %2").arg(code).arg(QString::fromUtf8(err))));
        QVERIFY(QFile::exists(ck + "/long-pair.manifest"));
        QVERIFY(!QFile::exists(path("killed.json")));

        // Resumed on another CPU device.
        const ProcessResult got = run_cli(
            job({"--device", "cpu-ref", "--checkpoint", ck, "--resume", "--stats", "-o", path("resumed.json")}));
        QVERIFY2(got.exit_code == 0, got.err.constData());
        const auto g = parse_json_lines(file_bytes(path("resumed.json")));
        QCOMPARE(g.size(), 1);
        for (const char* key : {"score", "query_end", "target_end"})
            QVERIFY2(r[0][key] == g[0][key],
                     qPrintable(QString("%1: %2 vs %3").arg(key).arg(r[0][key].toDouble()).arg(g[0][key].toDouble())));
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        const Cigar cigar = Cigar::parse(g[0]["cigar"].toString().toStdString());
        QCOMPARE(scheme.to_user(rescore(cigar, query_, target_, g[0]["query_begin"].toInteger(),
                                        g[0]["target_begin"].toInteger(), scheme)),
                 g[0]["score"].toDouble());
        const QJsonObject stats = g[0]["long_pair"].toObject();
        const qint64 row = stats["resumed_from_row"].toInteger();
        QVERIFY2(row >= 4096 && row < 16000, qPrintable(QString::number(row)));
        QCOMPARE(stats["stage_cells"].toArray().at(0).toDouble(), double(16000 - row) * 16300.0);
        QCOMPARE(stats["strategy"].toString(), QString("cpu-passes"));
        QCOMPARE(g[0]["device"].toString(), QString("cpu-ref"));
        QVERIFY2(got.err.contains(QByteArray("resumed from row ") + QByteArray::number(row)), got.err.constData());
        // Done: the checkpoint (and the directory the first run made) is gone.
        QVERIFY(!QDir(ck).exists());
    }

    void ctrl_c_keeps_the_checkpoint() {
        const QString ck = path("interrupted");
        QByteArray err;
        const int code = stop_after_first_checkpoint(job({"--device", "cpu", "--checkpoint", ck, "--checkpoint-every",
                                                          "0", "-o", path("int.json")}),
                                                     ck, SIGINT, &err);
        QCOMPARE(code, 130);
        QVERIFY2(err.contains("the checkpoint in " + ck.toUtf8() + " is kept") && err.contains("--resume"),
                 err.constData());
        QVERIFY(QFile::exists(ck + "/long-pair.manifest"));
    }

    void misuse_is_one_clear_error() {
        expect_error(job({"--resume"}), "--resume needs --checkpoint DIR");
        expect_error(job({"--checkpoint-every", "10"}), "--checkpoint-every applies with --checkpoint DIR");
        expect_error(job({"--checkpoint", path("neg"), "--checkpoint-every", "-1"}), "--checkpoint-every must be 0");
        // Off the long-pair path (a short pair takes the ordinary one).
        const QString short_path = write_fasta(dir_, "short.fa", "s", query_.substr(0, 300));
        expect_error({"align", short_path, short_path, "--checkpoint", path("x")}, "apply to the long-pair path");
        expect_error({"align", short_path, short_path, "--resume"}, "apply to the long-pair path");
        QVERIFY(!QDir(path("x")).exists());
        // Nothing to resume.
        QVERIFY(QDir().mkpath(path("empty")));
        expect_error(job({"--checkpoint", path("empty"), "--resume"}), "holds no long-pair checkpoint");
        expect_error(job({"--checkpoint", path("missing"), "--resume"}), "is not a directory: nothing to resume");
        // A directory that cannot be made.
        expect_error(job({"--checkpoint", query_path_ + "/sub"}), "cannot create the directory");

        // A checkpoint of this pair, local mode: not for another target or mode,
        // and not overwritten by a new job; it stays as it was.
        const QString ck = interrupted_checkpoint("kept");
        QVERIFY(!ck.isEmpty());
        const QByteArray manifest = file_bytes(ck + "/long-pair.manifest");
        expect_error({"align", "--long", query_path_, other_target_, "--mode", "local", "--checkpoint", ck, "--resume"},
                     "is for another pair or scheme: the target's residues differ");
        expect_error({"align", "--long", query_path_, target_path_, "--mode", "global", "--checkpoint", ck, "--resume"},
                     "the mode is global here, local in the checkpoint");
        expect_error({"align", "--long", query_path_, target_path_, "--mode", "local", "--gap-open", "12",
                      "--checkpoint", ck, "--resume"},
                     "gap open is 12 here, 10 in the checkpoint");
        expect_error(job({"--checkpoint", ck}), "already holds a long-pair checkpoint");
        QCOMPARE(file_bytes(ck + "/long-pair.manifest"), manifest);
        // A damaged row file: named.
        const QStringList rows = QDir(ck).entryList({"long-pair-row-*.bin"}, QDir::Files);
        QVERIFY(!rows.isEmpty());
        {
            QFile f(ck + "/" + rows.first());
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.resize(f.size() - 100));
        }
        expect_error(job({"--checkpoint", ck, "--resume"}), rows.first() + " is ");
    }
};

QTEST_GUILESS_MAIN(TestLongCheckpointCli)
#include "test_long_checkpoint_cli.moc"
