// SIGKILL at random moments of a long-pair job that records into a project
// and checkpoints often (`align --long --project P --checkpoint DIR
// --checkpoint-every 0.02` on the cpu device): after every kill the project
// opens with integrity ok (`project check`), and the job run again (with
// --resume when a checkpoint is on disk) gives the very score and CIGAR of an
// uninterrupted run, then leaves no checkpoint behind. CI kills at 8 moments;
// ALIGNSCOPE_KILL_POINTS=N kills at N (ALIGNSCOPE_KILL_SEED picks them;
// ALIGNSCOPE_KILL_CLI runs a copy of the binary that a build cannot replace
// half-way through a long run).
#include "cli_runner.hpp"

#include <alignscope/bench/long_pairs.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <csignal>
#include <random>

using namespace alignscope;

namespace {

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

int env_number(const char* name, int fallback) {
    bool ok = false;
    const int v = qEnvironmentVariableIntValue(name, &ok);
    return ok && v > 0 ? v : fallback;
}

QString cli() { return qEnvironmentVariable("ALIGNSCOPE_KILL_CLI", QStringLiteral(ALIGNSCOPE_CLI)); }

ProcessResult run_copy(const QStringList& arguments) { return run_program(cli(), arguments); }

struct Outcome {
    bool killed = false;  // false: the job had ended by itself
    int exit_code = -1;
    QByteArray err;
};

// Starts the CLI and sends SIGKILL after `delay_ms` unless it ended before.
Outcome kill_after(const QStringList& arguments, int delay_ms) {
    QProcess process;
    process.start(cli(), arguments);
    Outcome o;
    if (!process.waitForStarted(10000)) return o;
    if (!process.waitForFinished(delay_ms)) {
        ::kill(static_cast<pid_t>(process.processId()), SIGKILL);
        process.waitForFinished(30000);
        o.killed = process.exitStatus() == QProcess::CrashExit;
    }
    o.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    o.err = process.readAllStandardError();
    return o;
}

}  // namespace

class TestLongKillResume : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString query_, target_;

    QString path(const QString& name) const { return dir_.filePath(name); }
    QStringList job(const QStringList& more) const {
        return QStringList{"align", "--long",   query_, target_,    "--mode",
                           "local", "--format", "json", "--device", "cpu"} +
               more;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const SeedGenome genome = load_seed_genome();
        // About a second on one core of the cpu device.
        const LongPair pair = generate_long_pair(91, genome.residues, 12000, 12200);
        query_ = write_fasta(dir_, "q.fa", "q12k", pair.query);
        target_ = write_fasta(dir_, "t.fa", "t12k", pair.target);
    }

    void killedAnywhereResumesToTheSameAlignment() {
        // Uninterrupted, with the same checkpointing (so the same algorithm
        // and the same co-optimal choice as a resumed run), and the linear-
        // space path without checkpoints for the score and ends.
        QElapsedTimer clock;
        clock.start();
        const ProcessResult whole = run_copy(job({"--checkpoint", path("ck-whole"), "--checkpoint-every", "0.02"}));
        const qint64 whole_ms = clock.elapsed();
        QVERIFY2(whole.exit_code == 0, whole.err.constData());
        const auto expected = parse_json_lines(whole.out);
        QCOMPARE(expected.size(), 1);
        QVERIFY(!QDir(path("ck-whole")).exists());
        const ProcessResult linear = run_copy(job({}));
        QVERIFY2(linear.exit_code == 0, linear.err.constData());
        const auto plain = parse_json_lines(linear.out);
        QCOMPARE(plain.size(), 1);
        for (const char* key : {"score", "query_begin", "query_end", "target_begin", "target_end"})
            QCOMPARE(expected[0][key], plain[0][key]);

        const int points = env_number("ALIGNSCOPE_KILL_POINTS", 8);
        std::mt19937_64 rng(static_cast<std::uint64_t>(env_number("ALIGNSCOPE_KILL_SEED", 17)));
        // Up to 20 % past the whole run's time: some kills come too late.
        std::uniform_int_distribution<int> moment(0, static_cast<int>(whole_ms * 12 / 10));
        const QString project = path("p.alsproj"), ck = path("ck");
        int killed = 0, resumed = 0;
        for (int k = 0; k < points; ++k) {
            const int delay = moment(rng);
            const QStringList run =
                job({"--project", project, "--checkpoint", ck, "--checkpoint-every", "0.02", "-o", path("out.json")});
            const Outcome o = kill_after(run, delay);
            const QByteArray where = "kill " + QByteArray::number(k) + " at " + QByteArray::number(delay) + " ms: ";
            if (!o.killed) {
                QVERIFY2(o.exit_code == 0, (where + o.err).constData());
            } else {
                ++killed;
                const ProcessResult check = run_copy({"project", project, "check"});
                QVERIFY2(check.exit_code == 0 && check.out.contains(": ok"),
                         (where + check.out + check.err).constData());
                // Again, from the checkpoint when there is one.
                const bool has_checkpoint = QFile::exists(ck + "/long-pair.manifest");
                resumed += has_checkpoint;
                QStringList again = run;
                if (has_checkpoint)
                    again << "--resume"
                          << "--stats";
                const ProcessResult r = run_copy(again);
                QVERIFY2(r.exit_code == 0, (where + r.err).constData());
                if (has_checkpoint) QVERIFY2(r.err.contains("resumed from row"), (where + r.err).constData());
            }
            const auto got = parse_json_lines(file_bytes(path("out.json")));
            QVERIFY2(got.size() == 1, where.constData());
            for (const char* key : {"score", "query_begin", "query_end", "target_begin", "target_end", "cigar"})
                QVERIFY2(got[0][key] == expected[0][key],
                         (where + key + ": " + got[0][key].toVariant().toString().left(80).toUtf8()).constData());
            // Finished: no checkpoint left, and the project is whole.
            QVERIFY2(!QDir(ck).exists() || QDir(ck).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                     (where +
                      QDir(ck).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).join(' ').toUtf8())
                         .constData());
            QFile::remove(path("out.json"));
        }
        const ProcessResult check = run_copy({"project", project, "check"});
        QVERIFY2(check.exit_code == 0, (check.out + check.err).constData());
        qInfo("%d moments: %d killed, %d of them resumed from a checkpoint; whole run %lld ms", points, killed, resumed,
              static_cast<long long>(whole_ms));
        QVERIFY(killed > 0);
    }
};

QTEST_GUILESS_MAIN(TestLongKillResume)
#include "test_long_kill_resume.moc"
