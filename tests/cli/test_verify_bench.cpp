// `alignscope-cli verify` and `bench` end to end through the real binary: the
// CPU SIMD backend passes verify against the reference, bad input is one line
// on stderr and exit status 2, and a quick bench prints its table and writes
// JSON whose figures agree with the case definitions.
#include <QtTest/QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

namespace {

struct Run {
    int exit_code = -1;
    QString out, err;
};

Run run_cli(const QStringList& arguments, int timeout_ms = 180'000) {
    QProcess process;
    process.start(QStringLiteral(ALIGNSCOPE_CLI), arguments);
    Run run;
    if (!process.waitForStarted(10'000)) {
        run.err = "could not start " + QStringLiteral(ALIGNSCOPE_CLI);
        return run;
    }
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        run.err = "timed out";
        return run;
    }
    run.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

QStringList lines_of(const QString& text) { return text.split('\n', Qt::SkipEmptyParts); }

}  // namespace

class TestVerifyBench : public QObject {
    Q_OBJECT

private slots:
    void verifyPassesOnTheCpuBackend() {
        const Run run = run_cli({"verify", "--device", "cpu", "--pairs", "2000", "--seed", "7"});
        QVERIFY2(run.exit_code == 0, qPrintable(run.out.right(4000) + run.err));
        const QStringList lines = lines_of(run.out);
        QVERIFY(!lines.isEmpty());
        QCOMPARE(lines.last(), QStringLiteral("2000 passed, 0 failed"));
        QVERIFY(!run.out.contains("MISMATCH"));
    }

    void verifyWritesATimeline() {
        QTemporaryDir dir;
        const QString path = dir.filePath("verify-trace.json");
        // On the reference itself: this checks the file, not the SIMD backend.
        const Run run = run_cli({"verify", "--device", "cpu-ref", "--pairs", "40", "--timeline", path});
        QVERIFY2(run.exit_code == 0, qPrintable(run.out + run.err));
        QCOMPARE(lines_of(run.out).last(), QStringLiteral("40 passed, 0 failed"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        const QJsonArray events = doc.object().value("traceEvents").toArray();
        int work_items = 0;
        for (const auto& e : events)
            if (e.toObject().value("ph").toString() == "X") ++work_items;
        QVERIFY2(work_items > 0, "the CPU jobs' work items must be on the timeline");
    }

    void badInputExitsTwoWithOneLine_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("says");  // a substring of the one stderr line
        QTest::newRow("zero pairs") << QStringList{"verify", "--device", "cpu", "--pairs", "0"} << "--pairs";
        QTest::newRow("pairs not a number") << QStringList{"verify", "--device", "cpu", "--pairs", "many"} << "--pairs";
        QTest::newRow("negative pairs") << QStringList{"verify", "--device", "cpu", "--pairs", "-1"}
                                        << "--pairs: expected a whole number of 0 or more, got '-1'";
        QTest::newRow("pairs past 64 bits")
            << QStringList{"verify", "--device", "cpu", "--pairs", "99999999999999999999"} << "is too large";
        QTest::newRow("negative seed") << QStringList{"verify", "--device", "cpu", "--seed", "-1"} << "--seed";
        QTest::newRow("unknown device") << QStringList{"verify", "--device", "tpu:3", "--pairs", "10"} << "--device";
        QTest::newRow("unknown reference")
            << QStringList{"verify", "--device", "cpu", "--reference", "bogus"} << "--reference 'bogus'";
        QTest::newRow("negative threads") << QStringList{"verify", "--device", "cpu", "--threads", "-1"} << "--threads";
        QTest::newRow("threads past int") << QStringList{"verify", "--device", "cpu", "--threads", "99999999999"}
                                          << "--threads: '99999999999' is too large (at most 2147483647)";
        QTest::newRow("gpu memory past any machine")
            << QStringList{"verify", "--device", "cpu", "--gpu-mem", "99999999999999G"}
            << "--gpu-mem: '99999999999999G' is too large";
        QTest::newRow("unknown flag") << QStringList{"verify", "--frobnicate"} << "frobnicate";
        QTest::newRow("bench zero repeat")
            << QStringList{"bench", "--quick", "--device", "cpu", "--repeat", "0"} << "--repeat";
        QTest::newRow("bench bad length")
            << QStringList{"bench", "--quick", "--device", "cpu", "--lengths", "64,x"} << "--lengths";
        QTest::newRow("bench unknown device") << QStringList{"bench", "--quick", "--device", "gpu:99"} << "gpu:99";
        QTest::newRow("bench unknown CPU device")
            << QStringList{"bench", "--quick", "--device", "cpu", "--cpu-device", "bogus"} << "--cpu-device 'bogus'";
        QTest::newRow("bench stream count not a number")
            << QStringList{"bench", "--quick", "--streams", "1,2x"} << "'2x'";
        QTest::newRow("bench cpu seconds nan")
            << QStringList{"bench", "--quick", "--cpu-seconds", "nan"} << "--cpu-seconds: expected a finite number";
    }

    void badInputExitsTwoWithOneLine() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, says);
        const Run run = run_cli(arguments, 60'000);
        QCOMPARE(run.exit_code, 2);
        const QStringList err = lines_of(run.err);
        QVERIFY2(err.size() == 1, qPrintable("stderr: " + run.err));
        QVERIFY2(err.front().contains(says), qPrintable("stderr: " + run.err));
    }

    void quickBenchPrintsATableAndJson() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bench.json");
        const Run run = run_cli({"bench", "--quick", "--device", "cpu", "--json", path});
        QVERIFY2(run.exit_code == 0, qPrintable(run.out + run.err));
        QVERIFY2(run.out.contains("GCUPS e2e") && run.out.contains("GCUPS kernel"), qPrintable(run.out));
        for (const char* name : {"protein-300x300-local-score", "protein-300x300-local-ends",
                                 "protein-300x300-local-traceback", "dna-150x250-local-traceback"})
            QVERIFY2(run.out.contains(name), name);

        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonParseError error{};
        const QJsonObject doc = QJsonDocument::fromJson(file.readAll(), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(!doc.value("build").toObject().value("version").toString().isEmpty());
        QVERIFY(!doc.value("build").toObject().value("compiler").toString().isEmpty());
        const QJsonArray devices = doc.value("devices").toArray();
        QCOMPARE(devices.size(), 1);
        QCOMPARE(devices[0].toObject().value("id").toString(), QStringLiteral("cpu"));

        const QJsonArray points = doc.value("points").toArray();
        QVERIFY(points.size() >= 6);  // four cases and two lengths
        int standard = 0;
        for (const auto& value : points) {
            const QJsonObject p = value.toObject();
            const QString series = p.value("series").toString();
            const double pairs = p.value("pairs").toDouble();
            const double cells = p.value("cells").toDouble();
            const double seconds = p.value("seconds").toDouble();
            const double gcups = p.value("gcups_e2e").toDouble();
            QVERIFY2(pairs >= 1 && seconds > 0 && gcups > 0, qPrintable(series));
            QCOMPARE(p.value("device").toString(), QStringLiteral("cpu"));
            // The cells follow from the case definitions, not from the program.
            if (series.startsWith("protein-300x300")) {
                QCOMPARE(cells, pairs * 300 * 300);
                ++standard;
            } else if (series == "dna-150x250-local-traceback") {
                QCOMPARE(cells, pairs * 150 * 250);
                ++standard;
            } else if (series.startsWith("length-sweep")) {
                const double length = p.value("x_value").toDouble();
                QCOMPARE(cells, pairs * length * length);
            }
            QVERIFY(qAbs(gcups - cells / seconds / 1e9) <= 1e-6 * gcups);
            QCOMPARE(p.value("run_seconds").toArray().size(), 2);  // --quick repeats twice
            // Runs with the kernels' timeline on are a GPU's only.
            QCOMPARE(p.value("profiled_run_seconds").toArray().size(), 0);
            // A CPU backend has no kernels: end-to-end only, and said so.
            QVERIFY(p.value("gcups_kernel").isNull());
            QVERIFY(p.value("kernel_timing").toString().contains("CPU"));
        }
        QCOMPARE(standard, 4);
    }
};

QTEST_GUILESS_MAIN(TestVerifyBench)
#include "test_verify_bench.moc"
