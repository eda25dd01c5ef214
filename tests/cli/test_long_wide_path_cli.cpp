// `align --long` with a scheme past the long-pair passes' 32-bit cells
// (match 1,000,000, mismatch -1,000,000, gaps 65,536) and a checkpoint asked
// for, through the real binary on the CPU devices: exit status 0 with the
// score of a plain 64-bit Gotoh oracle (tests/common/gotoh64.hpp), the 64-bit
// kernel and strategy named in the record and by --stats, one note line on
// stderr saying why and that the job cannot checkpoint, and no checkpoint
// directory made; with --resume, another job's checkpoint in DIR is refused
// in one line (exit status 2) and left as it was. And `verify --long`
// answers the extreme schemes it draws instead of counting them refused.
#include "cli_runner.hpp"
#include "gotoh64.hpp"
#include "random_relatives.hpp"

#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

namespace {

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool write_fasta(const QString& path, const std::string& id, const std::string& residues) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return false;
    f.write((">" + id + "\n" + residues + "\n").c_str());
    return true;
}

}  // namespace

class TestLongWidePathCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string query_, target_;

    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        std::mt19937 rng(21);
        query_ = random_residues(rng, "ACGT", 300);
        target_ = mutate(rng, query_, "ACGT");
        QVERIFY(write_fasta(path("q.fa"), "q", query_));
        QVERIFY(write_fasta(path("t.fa"), "t", target_));
    }

    void checkpointedJobPast32Bits_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<bool>("resume");
        QTest::newRow("cpu") << "cpu" << false;
        QTest::newRow("cpu-ref") << "cpu-ref" << false;
        QTest::newRow("cpu, --resume with nothing to resume") << "cpu" << true;
    }
    void checkpointedJobPast32Bits() {
        QFETCH(QString, device);
        QFETCH(bool, resume);
        const QString ck = path("ck-" + device + (resume ? "-resume" : ""));
        QStringList arguments{"align",      "--long",   path("q.fa"),   path("t.fa"), "--match",      "1000000",
                              "--mismatch", "-1000000", "--gap-open",   "65536",      "--gap-extend", "65536",
                              "--device",   device,     "--checkpoint", ck,           "--format",     "json",
                              "--stats"};
        if (resume) arguments << "--resume";
        const ProcessResult r = run_cli(arguments);
        QVERIFY2(!r.crashed && r.exit_code == 0, r.err.constData());
        const QVector<QJsonObject> records = parse_json_lines(r.out);
        QCOMPARE(records.size(), 1);
        const QJsonObject& a = records.front();
        const alignscope::test::Gotoh64 oracle{1'000'000, -1'000'000, 65536, 65536};
        QCOMPARE(static_cast<std::int64_t>(a["score"].toDouble()), oracle.score(query_, target_, false));
        QCOMPARE(a["device"].toString(), device);
        QCOMPARE(a["kernel"].toString(), QString("nw_linear_myersmiller_s64"));
        const QJsonObject long_pair = a["long_pair"].toObject();
        QCOMPARE(long_pair["strategy"].toString(), QString("linear-space"));
        QCOMPARE(long_pair["checkpoints"].toInt(), 0);
        QVERIFY(long_pair["wider_path"].toString().contains("32-bit"));

        const QStringList lines = QString::fromUtf8(r.err).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);  // the note and --stats
        QVERIFY2(lines[0].contains("could reach scores past the long-pair passes' 32-bit cells") &&
                     lines[0].contains("aligned on the CPU in 64-bit linear space (nw_linear_myersmiller_s64)") &&
                     lines[0].contains("this job cannot checkpoint: " + ck + " is not used"),
                 qPrintable(lines[0]));
        QVERIFY2(lines[1].contains("(nw_linear_myersmiller_s64)") &&
                     lines[1].endsWith("64-bit linear space on the CPU"),
                 qPrintable(lines[1]));
        QVERIFY(!QFileInfo::exists(ck));
    }

    // A checkpoint of this pair under the default DNA scheme (kept after its
    // job), then --resume with the extreme scheme: refused, untouched.
    void resumeRefusesAnotherJobsCheckpoint() {
        using namespace alignscope;
        const QString ck = path("ck-other");
        longpair::LongPairOptions other;
        other.checkpoint_dir = ck.toStdString();
        other.checkpoint_every = 0;
        other.min_band_rows = 64;
        other.keep_checkpoint = true;
        const ScoringScheme usual = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        (void)longpair::align_long_on(make_cpu_registry()->select("cpu"), query_, target_, usual, other, {});
        const QString manifest = ck + "/" + longpair::kCheckpointManifest;
        const QByteArray before = file_bytes(manifest);
        QVERIFY(!before.isEmpty());
        const ProcessResult r =
            run_cli({"align", "--long", path("q.fa"), path("t.fa"), "--match", "1000000", "--mismatch", "-1000000",
                     "--gap-open", "65536", "--gap-extend", "65536", "--device", "cpu", "--checkpoint", ck, "--resume",
                     "-o", path("resumed.pair")});
        QVERIFY2(!r.crashed && r.exit_code == 2, r.err.constData());
        const QStringList lines = QString::fromUtf8(r.err).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].contains("is for another pair or scheme") && lines[0].contains("64-bit linear space"),
                 qPrintable(lines[0]));
        QCOMPARE(file_bytes(manifest), before);
        QVERIFY(!QFileInfo::exists(path("resumed.pair")));
    }

    // The extreme schemes verify --long draws (pairs #11 and #17 of seed 5 are
    // past the passes' 32 bits) pass against the reference.
    void verifyLongAnswersExtremeSchemes() {
        const ProcessResult r =
            run_cli({"verify", "--long", "--pairs", "18", "--max-length", "1500", "--device", "cpu", "--seed", "5"});
        QVERIFY2(!r.crashed && r.exit_code == 0, (r.out + r.err).constData());
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.last(), QString("18 passed, 0 failed"));
        int extreme = 0;
        for (const QString& line : lines) {
            QVERIFY2(!line.startsWith("refused"), qPrintable(line));
            if (line.startsWith("ok #") && line.contains("match 1000000/-1000000")) ++extreme;
        }
        QVERIFY2(extreme >= 2, r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestLongWidePathCli)
#include "test_long_wide_path_cli.moc"
