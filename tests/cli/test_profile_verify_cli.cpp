// `alignscope-cli verify --profile` through the real binary: the CPU's profile
// filter kernels against the scalar reference over the made-up models (random,
// extreme, one node; amino and DNA) and targets, and over a real model and real targets,
// where the number of targets past the MSV filter must equal hmmsearch's own
// "Passed MSV filter" count on the same file (hmmsearch counts it before the
// bias filter, against the null model, as verify does); bad input refused with
// exit status 2 and one line.
#include "hmmsearch_oracle.hpp"
#include "oracles.hpp"

#include <alignscope/profile/filter_verify.hpp>

#include <QRegularExpression>
#include <QtTest>

using namespace alignscope;
using namespace alignscope::test;

namespace {

// The per-model lines of a verify --profile run, by "model target-set".
QMap<QString, QString> case_lines(const QByteArray& out) {
    QMap<QString, QString> lines;
    const QRegularExpression line(R"(^(ok|FAILED) +(\S+) +(\S+) +M=(\d+) +(\S+) +(\d+) targets: )");
    for (const QString& l : QString::fromUtf8(out).split('\n')) {
        const auto m = line.match(l);
        if (m.hasMatch()) lines.insert(m.captured(3) + " " + m.captured(5), l);
    }
    return lines;
}

// "MSV N equal (P past F1, O overflow)": N, P and O of the MSV or Viterbi part.
std::array<int, 3> figures(const QString& line, const QString& filter) {
    const QRegularExpression part(filter + R"( (\d+) equal \((\d+) past F\d, (\d+) overflow\))");
    const auto m = part.match(line);
    if (!m.hasMatch()) return {-1, -1, -1};
    return {m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).toInt()};
}

}  // namespace

class TestProfileVerifyCli : public QObject {
    Q_OBJECT

private slots:
    // Every made-up model on "cpu", each line ok with every score compared;
    // the extreme models really reach the lanes' ceilings.
    void made_up_models_pass_on_the_cpu() {
        const ProcessResult r = run_cli({"verify", "--profile", "--device", "cpu", "--threads", "2", "--pairs", "8",
                                         "--random-models", "2", "--no-long", "--seed", "5"});
        QVERIFY2(!r.crashed, r.err.constData());
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const QMap<QString, QString> lines = case_lines(r.out);
        auto models = profile::made_up_profile_models(2, false, 5);
        for (profile::ProfileHmm& hmm : profile::made_up_profile_models(0, false, 5, profile::ResidueAlphabet::Dna))
            models.push_back(std::move(hmm));
        QCOMPARE(lines.size(), int(models.size()));
        for (const profile::ProfileHmm& hmm : models) {
            const QString line = lines.value(QString::fromStdString(hmm.name) + " made-up");
            QVERIFY2(line.startsWith("ok "), qPrintable(QString::fromUtf8(r.out)));
            const int targets = int(profile::made_up_profile_targets(hmm, 8, 5).size());
            QVERIFY2(line.contains(QString(" %1 targets: ").arg(targets)), qPrintable(line));
            QCOMPARE(figures(line, "MSV")[0], targets);
            QCOMPARE(figures(line, "Viterbi")[0], targets);
        }
        // One-node models, and the peaked ones overflow both MSV's bytes and the
        // Viterbi filter's words on some targets but not on all.
        QVERIFY(lines.contains("tiny_M1 made-up") && lines.contains("tiny_peaked_M1 made-up"));
        for (const char* name : {"peaked_M40 made-up", "peaked_M300 made-up", "dna_peaked_M300 made-up"}) {
            const QString line = lines.value(name);
            for (const char* filter : {"MSV", "Viterbi"}) {
                const auto f = figures(line, filter);
                QVERIFY2(f[2] > 0 && f[2] < f[0], qPrintable(line));
            }
        }
        QVERIFY(r.out.contains("kernels: sw_linear_msv_s8, sw_affine_vitfilter_s16"));
        QVERIFY(r.out.endsWith(QString("%1 passed, 0 failed\n").arg(models.size()).toUtf8()));
    }

    // A real model over real targets: every score equal, and as many past F1
    // as hmmsearch's own MSV filter passes.
    void real_model_and_targets_match_hmmsearch() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("fn3");
        QTemporaryDir dir;
        const QString db = database_slice(dir, QStringLiteral("slice.fa"), 600);
        for (const char* model : {"fn3", "Pkinase"}) {
            const QString hmm = kTutorial + "/" + model + ".hmm";
            const ProcessResult ref =
                run_program(QStringLiteral("hmmsearch"), {"--cpu", "1", "-o", dir.filePath("ref.out"), hmm, db});
            QCOMPARE(ref.exit_code, 0);
            QFile report(dir.filePath("ref.out"));
            QVERIFY(report.open(QIODevice::ReadOnly));
            const QVector<qulonglong> passed = passed_counts(report.readAll());
            QCOMPARE(passed.size(), 4);

            const ProcessResult r = run_cli({"verify", "--profile", "--device", "cpu", "--threads", "2", "--pairs", "4",
                                             "--random-models", "0", "--no-long", "--hmm", hmm, "--db", db});
            QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
            const QString line = case_lines(r.out).value(QString(model) + " real");
            QVERIFY2(line.startsWith("ok "), qPrintable(QString::fromUtf8(r.out)));
            QVERIFY2(line.contains(" 600 targets: "), qPrintable(line));
            QCOMPARE(figures(line, "MSV")[0], 600);
            QCOMPARE(figures(line, "Viterbi")[0], 600);
            QCOMPARE(qulonglong(figures(line, "MSV")[1]), passed[0]);
        }
    }

    void bad_input_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("unknown model file")
            << QStringList{"--hmm", "/nonexistent/x.hmm"} << "/nonexistent/x.hmm: cannot open";
        QTest::newRow("empty database") << QStringList{"--db", "EMPTY"} << "no sequences";
        QTest::newRow("nucleotide database") << QStringList{"--db", "DNA"} << "holds nucleotide sequences";
        QTest::newRow("unknown device") << QStringList{"--device", "tpu"} << "--device: no profile search device 'tpu'";
        QTest::newRow("no GPU here") << QStringList{"--device", "gpu:9"}
                                     << "--device: no profile search device 'gpu:9'";
        QTest::newRow("no targets") << QStringList{"--pairs", "0"} << "--pairs must be at least 1";
        QTest::newRow("with --search") << QStringList{"--search"} << "--profile is its own check";
        QTest::newRow("with --reference") << QStringList{"--reference", "cpu"} << "drop --reference";
        QTest::newRow("limit without db") << QStringList{"--db-limit", "5"} << "--db-limit applies with --db";
        QTest::newRow("negative random models") << QStringList{"--random-models", "-1"} << "--random-models";
    }

    void bad_input() {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString empty = dir.filePath(QStringLiteral("empty.fa"));
        QFile(empty).open(QIODevice::WriteOnly);
        const QString dna = write_fasta(dir, QStringLiteral("dna.fa"), "d1", "ACGTACGTTTGACCAGTNACGT");
        args.replaceInStrings(QRegularExpression(QStringLiteral("^EMPTY$")), empty);
        args.replaceInStrings(QRegularExpression(QStringLiteral("^DNA$")), dna);
        const ProcessResult r = run_cli(QStringList{"verify", "--profile", "--no-long", "--random-models", "0"} + args);
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!r.crashed);
        const QString err = QString::fromUtf8(r.err).trimmed();
        QVERIFY2(!err.contains('\n'), qPrintable(err));
        QVERIFY2(err.contains(says), qPrintable(err));
        QVERIFY2(r.out.isEmpty(), r.out.constData());  // refused before any work
    }

    // The profile flags belong to --profile.
    void profile_flags_need_profile() {
        const ProcessResult r = run_cli({"verify", "--hmm", kTutorial + "/fn3.hmm", "--pairs", "3"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("apply to verify --profile"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestProfileVerifyCli)
#include "test_profile_verify_cli.moc"
