// --gpu-mem of the profile commands through the real binary: verify --profile
// and bench --profile read it with hmmsearch's parser, so a value that is not
// a positive size is refused by all three with the same one line (exit status
// 2, before any work). Given a size, verify and bench say the budget; where
// none of their devices is a GPU they say it goes unused and run as without
// it (every score still equal to the reference, the counts still
// hmmsearch's); where a GPU runs the profile filters, its lines say how many
// slices the targets took and still pass.
#include "hmmsearch_oracle.hpp"
#include "oracles.hpp"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

using namespace alignscope::test;

class TestProfileGpuMemCli : public QObject {
    Q_OBJECT

    // The command lines that take --gpu-mem, without it.
    static QList<QStringList> commands() {
        const QString fn3 = kTutorial + "/fn3.hmm", globins = kTutorial + "/globins45.fa";
        return {{"hmmsearch", "--device", "cpu", "-o", "/dev/null", fn3, globins},
                {"verify", "--profile", "--device", "cpu", "--no-long", "--random-models", "0", "--pairs", "2"},
                {"bench", "--profile", "--device", "cpu", "--hmm", fn3, "--db", globins, "--no-hmmsearch", "--repeat",
                 "1"}};
    }

private slots:
    void initTestCase() { ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("fn3"); }

    void refused_alike_data() {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("says");
        QTest::newRow("not a size") << "lots"
                                    << "--gpu-mem: 'lots' is not a size (e.g. 512M, 4G)";
        QTest::newRow("zero") << "0"
                              << "--gpu-mem: '0' is not a positive size";
        QTest::newRow("negative") << "-2G"
                                  << "--gpu-mem: '-2G' is not a positive size";
        QTest::newRow("unknown unit") << "3X"
                                      << "--gpu-mem: unknown unit 'X' in '3X' (use K, M or G)";
        QTest::newRow("past any machine") << "99999999999999G"
                                          << "--gpu-mem: '99999999999999G' is too large (at most 1048576G)";
    }

    // hmmsearch, verify --profile and bench --profile: the same line.
    void refused_alike() {
        QFETCH(QString, value);
        QFETCH(QString, says);
        for (const QStringList& command : commands()) {
            const ProcessResult r = run_cli(command + QStringList{"--gpu-mem=" + value});
            QVERIFY(!r.crashed);
            QVERIFY2(r.exit_code == 2, qPrintable(command.first() + ": " + r.err));
            QCOMPARE(QString::fromUtf8(r.err), "alignscope-cli: error: " + says + "\n");
            QVERIFY2(r.out.isEmpty(), r.out.constData());  // before any work
        }
    }

    // verify --profile with a budget on every device this machine has: the
    // budget said (and nothing of one without it); the CPU's lines as
    // without it; a GPU's lines say their slices where the targets took more
    // than one (3M holds the longest made-up target, 100,000 residues, beside
    // a model of up to 400 nodes).
    void verify_with_a_budget() {
        QTemporaryDir dir;
        const QString db = database_slice(dir, QStringLiteral("slice.fa"), 200);
        const QStringList args{"verify",
                               "--profile",
                               "--device",
                               "auto",
                               "--threads",
                               "2",
                               "--pairs",
                               "4",
                               "--random-models",
                               "1",
                               "--no-long",
                               "--hmm",
                               kTutorial + "/fn3.hmm",
                               "--db",
                               db};
        const ProcessResult r = run_cli(args + QStringList{"--gpu-mem", "3M"});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        QVERIFY(lines.size() > 3);
        QVERIFY2(lines[1].startsWith("GPU memory budget 3145728 bytes (--gpu-mem 3M): the targets that do not fit "
                                     "are scanned a slice at a time"),
                 qPrintable(lines[1]));
        const bool gpu = lines[0].contains(QRegularExpression(QStringLiteral("\\bgpu:\\d")));
        QCOMPARE(lines[1].endsWith("; no GPU among the devices here, so it goes unused"), !gpu);
        QStringList cpu_lines;
        int cases = 0;
        for (const QString& line : lines) {
            if (!line.startsWith("ok ") && !line.startsWith("FAILED ")) continue;
            QVERIFY2(line.startsWith("ok "), qPrintable(line));
            ++cases;
            const bool on_gpu = line.contains(QRegularExpression(QStringLiteral("^ok +gpu:")));
            const auto slices = QRegularExpression(QStringLiteral("; targets in (\\d+) slices")).match(line);
            if (slices.hasMatch()) QVERIFY2(on_gpu && slices.captured(1).toInt() > 1, qPrintable(line));
            if (!on_gpu) cpu_lines << line;
        }
        QVERIFY(cases > 0 && !cpu_lines.isEmpty());
        QVERIFY2(lines.last() == QString("%1 passed, 0 failed").arg(cases), qPrintable(lines.last()));

        const ProcessResult without = run_cli(args);
        QVERIFY2(without.exit_code == 0, (without.out + without.err).constData());
        QVERIFY(!without.out.contains("GPU memory budget"));
        QStringList cpu_without;
        for (const QString& line : QString::fromUtf8(without.out).split('\n', Qt::SkipEmptyParts))
            if (line.contains(QRegularExpression(QStringLiteral("^ok +cpu")))) cpu_without << line;
        QCOMPARE(cpu_lines, cpu_without);
    }

    // bench --profile with a budget: the budget in its JSON and notes, each
    // model's slices (none on the CPU device), and the counts hmmsearch gives.
    void bench_with_a_budget() {
        const QString globins = kTutorial + "/globins4.hmm", targets = kTutorial + "/globins45.fa";
        const ProcessResult r = run_cli({"bench", "--profile", "--device", "auto", "--hmm", globins, "--db", targets,
                                         "--threads", "2", "--repeat", "1", "--gpu-mem", "64M", "--json", "-"});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const QJsonObject report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(report["gpu_memory_budget"].toDouble(), 64.0 * 1024 * 1024);
        QStringList notes;
        for (const QJsonValue& n : report["notes"].toArray()) notes << n.toString();
        const QJsonArray devices = report["devices"].toArray();
        QVERIFY(!devices.isEmpty());
        bool gpu = false;
        for (const QJsonValue& d : devices) {
            const bool on_gpu = d["device"].toString().startsWith("gpu");
            gpu = gpu || on_gpu;
            for (const QJsonValue& m : d["models"].toArray()) {
                QVERIFY(m.toObject().contains("target_slices"));
                if (!on_gpu) QCOMPARE(m["target_slices"].toInt(), 0);
            }
        }
        const QString note =
            "GPU memory budget 67108864 bytes (--gpu-mem 64M): the targets that do not fit are "
            "scanned a slice at a time" +
            QString(gpu ? "" : "; no GPU among the devices here, so it goes unused");
        QVERIFY2(notes.contains(note), qPrintable(notes.join('\n')));
        QVERIFY2(!r.err.contains("DIFFER"), r.err.constData());  // every device's counts are hmmsearch's
        QVERIFY(report["hmmsearch"].isObject());
    }
};

QTEST_GUILESS_MAIN(TestProfileGpuMemCli)
#include "test_profile_gpu_mem_cli.moc"
