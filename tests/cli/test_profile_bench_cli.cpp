// `alignscope-cli bench --profile` through the real binary: whole profile
// searches timed on the CPU device (and a GPU where there is one) beside
// hmmsearch in the same run. The pipeline counts and hit counts it reports
// must equal those of an hmmsearch run the test makes itself on the same
// files; the residues those of the FASTA the test wrote; GCUPS = model length
// x residues / seconds; --db-limit hands hmmsearch the same first records;
// bad input refused with exit status 2 and one line.
#include "hmmsearch_oracle.hpp"
#include "oracles.hpp"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

using namespace alignscope::test;

namespace {

// hmmsearch's own counts of a report and rows of a --tblout, per query in order.
struct Oracle {
    QVector<QVector<qulonglong>> passed;
    QVector<int> rows;
};

Oracle hmmsearch_oracle(const QTemporaryDir& dir, const QString& models, const QString& db,
                        const QStringList& queries) {
    Oracle o;
    const ProcessResult r =
        run_program(QStringLiteral("hmmsearch"), {"--cpu", "1", "--noali", "-o", dir.filePath("oracle.out"), "--tblout",
                                                  dir.filePath("oracle.tbl"), models, db});
    if (r.exit_code != 0) return o;
    QFile report(dir.filePath("oracle.out"));
    (void)report.open(QIODevice::ReadOnly);
    const QVector<qulonglong> all = passed_counts(report.readAll());
    for (int q = 0; q + 4 <= all.size(); q += 4) o.passed.push_back(all.mid(q, 4));
    const QStringList rows = table_rows(dir.filePath("oracle.tbl"));
    for (const QString& query : queries)
        o.rows.push_back(int(std::count_if(rows.begin(), rows.end(), [&](const QString& row) {
            return row.simplified().split(' ').value(2) == query;
        })));
    return o;
}

qulonglong residues_of(const QString& fasta) {
    QFile f(fasta);
    if (!f.open(QIODevice::ReadOnly)) return 0;
    qulonglong n = 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.startsWith('>')) n += qulonglong(line.trimmed().size());
    return n;
}

}  // namespace

class TestProfileBenchCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("fn3");
        db_ = database_slice(dir_, QStringLiteral("slice.fa"), 1500);
        models_ = dir_.filePath(QStringLiteral("two.hmm"));
        QFile out(models_);
        QVERIFY(out.open(QIODevice::WriteOnly));
        for (const char* m : {"fn3", "globins4"}) {
            QFile in(kTutorial + "/" + m + ".hmm");
            QVERIFY(in.open(QIODevice::ReadOnly));
            out.write(in.readAll());
        }
    }

    void devices_and_hmmsearch_agree_with_the_oracle() {
        QTemporaryDir dir;
        const ProcessResult r = run_cli({"bench", "--profile", "--hmm", models_, "--db", db_, "--threads", "2",
                                         "--repeat", "1", "--json", dir.filePath("bench.json")});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        QFile file(dir.filePath("bench.json"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject report = QJsonDocument::fromJson(file.readAll()).object();
        QCOMPARE(report["targets"].toInt(), 1500);
        const qulonglong residues = residues_of(db_);
        QCOMPARE(qulonglong(report["residues"].toDouble()), residues);

        const Oracle oracle = hmmsearch_oracle(dir, models_, db_, {"fn3", "globins4"});
        QCOMPARE(oracle.passed.size(), 2);
        const QJsonArray devices = report["devices"].toArray();
        QVERIFY(!devices.isEmpty());
        QCOMPARE(devices.last().toObject()["device"].toString(), QString("cpu"));  // the CPU device always runs
        for (const QJsonValue& d : devices) {
            const QJsonArray models = d.toObject()["models"].toArray();
            QCOMPARE(models.size(), 2);
            for (int m = 0; m < 2; ++m) {
                const QJsonObject model = models[m].toObject();
                QVector<qulonglong> passed;
                for (const QJsonValue& v : model["passed"].toArray()) passed << qulonglong(v.toDouble());
                QCOMPARE(passed, oracle.passed[m]);
                QCOMPARE(model["reported"].toInt(), oracle.rows[m]);
                const double gcups =
                    model["length"].toDouble() * double(residues) / model["search_seconds"].toDouble() / 1e9;
                QVERIFY(qAbs(model["gcups"].toDouble() - gcups) <= 1e-6 * gcups);
            }
        }
        const QJsonObject hmmsearch = report["hmmsearch"].toObject();
        QVERIFY(hmmsearch["e2e_seconds"].toDouble() > 0);
        QCOMPARE(hmmsearch["threads"].toInt(), 2);
        QVERIFY(r.out.contains("hmmsearch's speed"));
        QVERIFY(!r.out.contains("DIFFER"));
    }

    // The first 300 records of the gzip database, for us and for hmmsearch alike.
    void db_limit_and_no_hmmsearch() {
        const ProcessResult r = run_cli({"bench", "--profile", "--hmm", kTutorial + "/globins4.hmm", "--db", kDatabase,
                                         "--db-limit", "300", "--threads", "2", "--quick", "--json", "-"});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const QJsonObject report = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(report["targets"].toInt(), 300);
        QVERIFY(report["hmmsearch"].isObject());
        QVERIFY(r.err.contains("whole runs"));  // the table on stderr when the JSON owns stdout

        const ProcessResult alone = run_cli({"bench", "--profile", "--hmm", kTutorial + "/globins4.hmm", "--db", db_,
                                             "--no-hmmsearch", "--quick", "--json", "-"});
        QVERIFY2(alone.exit_code == 0, alone.err.constData());
        const QJsonObject without = QJsonDocument::fromJson(alone.out).object();
        QVERIFY(without["hmmsearch"].isNull());
        QVERIFY(alone.err.contains("hmmsearch left out (--no-hmmsearch)"));
    }

    void bad_input_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::newRow("no model") << QStringList{"--profile", "--db", "DB"} << "needs --hmm";
        QTest::newRow("unknown model file") << QStringList{"--profile", "--hmm", "/nonexistent/x.hmm", "--db", "DB"}
                                            << "/nonexistent/x.hmm: cannot open";
        QTest::newRow("empty database") << QStringList{"--profile", "--hmm", "FN3", "--db", "EMPTY"} << "no sequences";
        QTest::newRow("nucleotide database")
            << QStringList{"--profile", "--hmm", "FN3", "--db", "DNA"} << "holds nucleotide sequences";
        QTest::newRow("unknown device") << QStringList{"--profile", "--hmm", "FN3", "--db", "DB", "--device", "tpu"}
                                        << "--device: no profile search device 'tpu'";
        QTest::newRow("bad CPU device") << QStringList{"--profile", "--hmm",        "FN3",  "--db",
                                                       "DB",        "--cpu-device", "bogus"}
                                        << "--cpu-device: no profile search device 'bogus'";
        QTest::newRow("profile flags alone") << QStringList{"--hmm", "FN3"} << "apply to bench --profile";
        QTest::newRow("with --long") << QStringList{"--profile", "--long"} << "different benchmarks";
        QTest::newRow("with a sweep") << QStringList{"--profile", "--hmm", "FN3", "--db", "DB", "--lengths", "64"}
                                      << "bench --profile measures whole searches";
        QTest::newRow("zero repeats") << QStringList{"--profile", "--hmm", "FN3", "--db", "DB", "--repeat", "0"}
                                      << "--repeat must be at least 1";
    }

    void bad_input() {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString empty = dir.filePath(QStringLiteral("empty.fa"));
        QFile(empty).open(QIODevice::WriteOnly);
        const QString dna = write_fasta(dir, QStringLiteral("dna.fa"), "d1", "ACGTACGTTTGACCAGTNACGT");
        for (auto [from, to] :
             {std::pair{QStringLiteral("EMPTY"), empty}, std::pair{QStringLiteral("DNA"), dna},
              std::pair{QStringLiteral("DB"), db_}, std::pair{QStringLiteral("FN3"), kTutorial + "/fn3.hmm"}})
            args.replaceInStrings(QRegularExpression("^" + from + "$"), to);
        const ProcessResult r = run_cli(QStringList{"bench"} + args);
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!r.crashed);
        const QString err = QString::fromUtf8(r.err).trimmed();
        QVERIFY2(!err.contains('\n'), qPrintable(err));
        QVERIFY2(err.contains(says), qPrintable(err));
    }

private:
    QTemporaryDir dir_;
    QString db_, models_;
};

QTEST_GUILESS_MAIN(TestProfileBenchCli)
#include "test_profile_bench_cli.moc"
