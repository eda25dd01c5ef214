// `alignscope-cli search` end to end through the real binary, on the CPU: JSON
// Lines parsed back (ranks, scores in order, statistics fields, db_size equal
// to the residues counted here), a database sequence used as a query finds
// itself, TSV and pair output, the cache beside the FASTA, the timeline,
// `search --verify` passing on the CPU SIMD scanner, a short `search --bench`,
// and bad input: one line on stderr and exit status 2.
#include "cli_runner.hpp"

#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

namespace {

const QString example = QStringLiteral("/usr/share/doc/mmseqs2/example-data/");

// Records of a FASTA file: (id, residues), counted here without the engine.
QVector<QPair<QString, QString>> fasta_records(const QString& path) {
    QFile file(path);
    QVector<QPair<QString, QString>> records;
    if (!file.open(QIODevice::ReadOnly)) return records;
    for (const QByteArray& raw : file.readAll().split('\n')) {
        const QByteArray line = raw.trimmed();
        if (line.startsWith('>')) records.push_back({QString::fromUtf8(line.mid(1).split(' ').first()), QString()});
        else if (!records.isEmpty())
            records.back().second += QString::fromUtf8(line);
    }
    // A translated stop at the end is not part of the protein (normalise_residues).
    for (auto& r : records)
        if (r.second.endsWith('*')) r.second.chop(1);
    return records;
}

}  // namespace

class TestSearchCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString queries_, database_;

private slots:
    void initTestCase() {
        // Small real data: a few mmseqs2-examples proteins, or our own fixture.
        database_ = dir_.filePath("db.fa");
        queries_ = dir_.filePath("queries.fa");
        const QString source = QStringLiteral(ALIGNSCOPE_TEST_DATA) + "/seq_proteins.fa";
        QFile in(source);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray text = in.readAll();
        QFile db(database_);
        QVERIFY(db.open(QIODevice::WriteOnly));
        db.write(text);
        db.write(">decoy1 unrelated\nGGGGSGGGGSGGGGSGGGGS\n>decoy2\nPPPPPPPPPPKKKKKKKK\n");
        db.close();
        // Queries: the second record of the database, and a mutated piece of the first.
        const auto records = fasta_records(database_);
        QVERIFY(records.size() >= 3);
        QFile q(queries_);
        QVERIFY(q.open(QIODevice::WriteOnly));
        q.write(">self " + records[1].first.toUtf8() + "\n" + records[1].second.toUtf8() + "\n");
        QString piece = records[0].second.mid(5, 60);
        piece[10] = 'W';
        q.write(">piece\n" + piece.toUtf8() + "\n");
        q.close();
    }

    // --project records the search: its hits, exported again, are the run's own.
    void recordedInProject() {
        const QString project = dir_.filePath("search.alsproj");
        const ProcessResult r = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--format",
                                         "json", "--top", "3", "--db-cache", "off", "--project", project});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto printed = parse_json_lines(r.out);
        QCOMPARE(printed.size(), 6);
        const ProcessResult list = run_cli({"project", project, "list"});
        QCOMPARE(list.exit_code, 0);
        QVERIFY2(list.out.contains("search") && list.out.contains("done") && list.out.contains("6 hits"),
                 list.out.constData());
        const ProcessResult hits = run_cli({"project", project, "export", "1", "--format", "tsv", "--table", "hits"});
        QVERIFY2(hits.exit_code == 0, hits.err.constData());
        const QList<QByteArray> lines = hits.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 7);  // header + 6 hits
        const QList<QByteArray> header = lines[0].split('\t');
        const int rank = header.indexOf("rank"), target = header.indexOf("target");
        QVERIFY(rank >= 0 && target >= 0);
        for (int k = 0; k < 6; ++k) {
            const QList<QByteArray> row = lines[k + 1].split('\t');
            QCOMPARE(row[rank].toInt(), printed[k].value("rank").toInt());
            QCOMPARE(QString::fromUtf8(row[target]), printed[k].value("target").toString());
        }
    }

    void jsonLinesParseBack() {
        const ProcessResult r = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--format",
                                         "json", "--top", "3", "--db-cache", "off"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto hits = parse_json_lines(r.out);
        const auto records = fasta_records(database_);
        qint64 residues = 0;
        for (const auto& rec : records) residues += rec.second.size();
        QCOMPARE(hits.size(), 6);
        QString last_query;
        int expected_rank = 0;
        double previous = 1e300;
        for (const QJsonObject& h : hits) {
            const QString query = h.value("query").toString();
            if (query != last_query) {
                expected_rank = 0;
                previous = 1e300;
                last_query = query;
            }
            QCOMPARE(h.value("rank").toInt(), ++expected_rank);
            const double score = h.value("score").toDouble();
            QVERIFY(score <= previous);
            previous = score;
            QCOMPARE(static_cast<qint64>(h.value("db_size").toDouble()), residues);
            for (const char* field :
                 {"bits", "evalue", "cigar", "query_begin", "target_end", "identity", "device", "kernel"})
                QVERIFY2(h.contains(field), field);
            QCOMPARE(h.value("mode").toString(), QStringLiteral("local"));
            QVERIFY(h.value("evalue").toDouble() >= 0);
        }
        // The database sequence used as a query finds itself, whole and identical.
        const QJsonObject& self = hits[0];
        QCOMPARE(self.value("query").toString(), QStringLiteral("self"));
        QCOMPARE(self.value("target").toString(), records[1].first);
        QCOMPARE(self.value("identity").toDouble(), 1.0);
        QCOMPARE(self.value("query_begin").toInt(), 1);
        QCOMPARE(self.value("query_end").toInt(), records[1].second.size());
        QCOMPARE(hits[3].value("query").toString(), QStringLiteral("piece"));
        QCOMPARE(hits[3].value("target").toString(), records[0].first);
    }

    void tsvAndPairFormats() {
        const ProcessResult tsv = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--top", "2",
                                           "--db-cache", "off", "--quiet"});
        QVERIFY2(tsv.exit_code == 0, tsv.err.constData());
        QVERIFY(tsv.err.isEmpty());
        const QList<QByteArray> lines = tsv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 4);
        QVERIFY(lines[0].contains("\trank\tbits\tevalue"));
        const ProcessResult pair = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--top", "1",
                                            "--format", "pair", "--db-cache", "off"});
        QVERIFY2(pair.exit_code == 0, pair.err.constData());
        QVERIFY(pair.out.contains("# Rank: 1"));
        QVERIFY(pair.out.contains("# E-value:"));
    }

    void scoresOnlyAndFilters() {
        const ProcessResult r =
            run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu-ref", "--format", "json",
                     "--no-traceback", "--top", "50", "--min-score", "30", "--db-cache", "off"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto hits = parse_json_lines(r.out);
        QVERIFY(!hits.isEmpty());
        for (const QJsonObject& h : hits) QVERIFY(h.value("score").toDouble() >= 30);
        const ProcessResult strict = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--format",
                                              "json", "--evalue", "1e-10", "--db-cache", "off"});
        QVERIFY2(strict.exit_code == 0, strict.err.constData());
        for (const QJsonObject& h : parse_json_lines(strict.out)) QVERIFY(h.value("evalue").toDouble() <= 1e-10);
    }

    void cacheBesideTheFastaAndTimeline() {
        const QString trace = dir_.filePath("trace.json");
        const ProcessResult first = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--timeline",
                                             trace, "-o", dir_.filePath("hits.tsv")});
        QVERIFY2(first.exit_code == 0, first.err.constData());
        QVERIFY(first.err.contains("cache built"));
        QVERIFY(QFile::exists(database_ + ".alsdb"));
        const ProcessResult second =
            run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "-o", dir_.filePath("hits2.tsv")});
        QVERIFY2(second.exit_code == 0, second.err.constData());
        QVERIFY(second.err.contains("cache loaded"));
        QFile a(dir_.filePath("hits.tsv")), b(dir_.filePath("hits2.tsv"));
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());
        // A damaged cache is said to be rebuilt, and the result is the same.
        QFile cache(database_ + ".alsdb");
        QVERIFY(cache.open(QIODevice::ReadWrite));
        cache.seek(cache.size() / 2);
        cache.write("garbage");
        cache.close();
        const ProcessResult third =
            run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "-o", dir_.filePath("hits3.tsv")});
        QVERIFY2(third.exit_code == 0, third.err.constData());
        QVERIFY2(third.err.contains("damaged"), third.err.constData());
        QFile c(dir_.filePath("hits3.tsv"));
        QVERIFY(c.open(QIODevice::ReadOnly));
        a.seek(0);
        QCOMPARE(c.readAll(), a.readAll());
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(t.readAll());
        QVERIFY(doc.object().value("traceEvents").toArray().size() > 0);
    }

    // Repeated ids are warned about when the database comes from its cache
    // too, in the same words as when the FASTA is read (records numbered in
    // file order, though the cache keeps them by length).
    void duplicateIdsWarnedFromTheCache() {
        const QString db = dir_.filePath("repeated.fa"), cache = dir_.filePath("repeated-cache");
        QFile f(db);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            ">a first\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFF\n>b\nGGGGSGGGGS\n>c\nPPPPPPPPPPKKKKKKKK\n"
            ">b again\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRL\n>a\nKKKKKAAAAAGGGGG\n");
        f.close();
        auto warning_of = [](const QByteArray& err) {
            for (const QByteArray& line : err.split('\n'))
                if (line.contains("warning:") && line.contains("the id of an earlier one")) return line;
            return QByteArray();
        };
        const QStringList args{"search", "-q",         queries_, "-d", db,         "--device",
                               "cpu",    "--db-cache", cache,    "-o", "/dev/null"};
        const ProcessResult built = run_cli(args);
        QVERIFY2(built.exit_code == 0, built.err.constData());
        QVERIFY2(built.err.contains("cache built"), built.err.constData());
        const QByteArray expected = warning_of(built.err);
        QVERIFY2(expected.contains("2 records repeat the id of an earlier one (the first: record 4, 'b', as record 2)"),
                 built.err.constData());
        const ProcessResult loaded = run_cli(args);
        QVERIFY2(loaded.exit_code == 0, loaded.err.constData());
        QVERIFY2(loaded.err.contains("cache loaded"), loaded.err.constData());
        QCOMPARE(warning_of(loaded.err), expected);
    }

    void verifyPassesOnTheCpu() {
        const ProcessResult r = run_cli({"search", "--verify", "--device", "cpu", "--reference", "cpu-ref",
                                         "--verify-queries", "6", "--verify-sequences", "120", "--seed", "5"});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        QVERIFY2(r.out.contains("33 cases passed, 0 failed, 0 skipped"), r.out.constData());
        // The extreme schemes are among them (scores and penalties past every
        // lane width, a GPU's 32-bit cells and its 16-bit table).
        QVERIFY2(r.out.contains("PASS random protein BLOSUM62 gap 1000000/1000000 local"), r.out.constData());
        QVERIFY2(r.out.contains("PASS random protein BLOSUM62 gap 200000/200000 global"), r.out.constData());
        QVERIFY2(r.out.contains("PASS random protein BLOSUM62 x4096 gap 11/1 semiglobal[qb,te]"), r.out.constData());
        QVERIFY2(r.out.contains("PASS random dna match 64/-1 gap 10/0.5 local"), r.out.constData());
        // Scores past 32 bits, above and below.
        QVERIFY2(r.out.contains("PASS random dna match 1000000/-1000000 gap 1000000/1000000 local"), r.out.constData());
        QVERIFY2(r.out.contains("PASS random dna match 1000000/-1000000 gap 1000000/1000000 global"),
                 r.out.constData());
        QVERIFY(!r.out.contains("MISMATCH"));
    }

    // --mode keeps the random cases of one mode (their data as in the full run)
    // and runs the real data in that mode, with --free-ends.
    void verifyOneMode() {
        const ProcessResult r = run_cli({"search", "--verify", "--device", "cpu", "--reference", "cpu-ref", "--mode",
                                         "global", "--verify-queries", "4", "--verify-sequences", "60", "--seed", "5"});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        QVERIFY2(r.out.contains("8 cases passed, 0 failed, 0 skipped"), r.out.constData());
        QVERIFY(!r.out.contains(" local") && !r.out.contains("semiglobal"));
        if (!QFile::exists(example + "DB.fasta.gz")) return;
        const ProcessResult real = run_cli({"search",
                                            "--verify",
                                            "--device",
                                            "cpu",
                                            "--reference",
                                            "cpu-ref",
                                            "--no-random",
                                            "--mode",
                                            "semiglobal",
                                            "--free-ends",
                                            "qb,te",
                                            "-q",
                                            example + "QUERY.fasta.gz",
                                            "-d",
                                            example + "DB.fasta.gz",
                                            "--real-queries",
                                            "2",
                                            "--real-sequences",
                                            "200",
                                            "--db-cache",
                                            dir_.filePath("cache")});
        QVERIFY2(real.exit_code == 0, (real.out + real.err).constData());
        QVERIFY2(real.out.contains("PASS real 2 queries") && real.out.contains("semiglobal[qb,te]"),
                 real.out.constData());
    }

    // Real data is checked under the user's scoring, not a fixed 11/1: a
    // scheme past the 16-bit lanes' limits must reach the scanners.
    void verifyUsesTheUsersScoring() {
        const QString proteins = QStringLiteral(ALIGNSCOPE_TEST_DATA) + "/seq_proteins.fa";
        const ProcessResult r = run_cli({"search", "--verify", "--device", "cpu", "--reference", "cpu-ref",
                                         "--no-random", "-q", proteins, "-d", proteins, "--gap-open", "65536",
                                         "--gap-extend", "65536", "--db-cache", dir_.filePath("cache")});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        QVERIFY2(r.out.contains("PASS real") && r.out.contains("gap open 65536, extend 65536"), r.out.constData());
        const ProcessResult matrix =
            run_cli({"search", "--verify", "--device", "cpu", "--reference", "cpu-ref", "--no-random", "-q", proteins,
                     "-d", proteins, "--matrix", "PAM30", "--db-cache", dir_.filePath("cache")});
        QVERIFY2(matrix.exit_code == 0, (matrix.out + matrix.err).constData());
        QVERIFY2(matrix.out.contains("PAM30, gap open"), matrix.out.constData());
    }

    void verifyOnRealData() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(example + "DB.fasta.gz"),
                                  "mmseqs2-examples is not installed (scripts/check installs it)");
        const ProcessResult r =
            run_cli({"search", "--verify", "--device", "cpu", "--reference", "cpu-ref", "--no-random", "-q",
                     example + "QUERY.fasta.gz", "-d", example + "DB.fasta.gz", "--real-queries", "3",
                     "--real-sequences", "300", "--db-cache", dir_.filePath("cache")});
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        QVERIFY(r.out.contains("PASS real 3 queries"));
    }

    void benchRunsOnTheCpu() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(example + "DB.fasta.gz"),
                                  "mmseqs2-examples is not installed (scripts/check installs it)");
        const QString json = dir_.filePath("bench.json");
        const ProcessResult r =
            run_cli({"search", "--bench", "--device", "cpu", "--bench-cases", "synthetic", "--synthetic-sequences",
                     "3000", "--bench-queries", "4", "--repeat", "1", "--cpu-seconds", "0.5", "--json", json},
                    120000);
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        QVERIFY(r.out.contains("synthetic"));
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray points = QJsonDocument::fromJson(f.readAll()).object().value("points").toArray();
        QCOMPARE(points.size(), 1);
        const QJsonObject p = points[0].toObject();
        QCOMPARE(p.value("sequences").toInt(), 3000);
        QCOMPARE(p.value("residues").toInt(), 3000 * 256);
        QVERIFY(p.value("gcups_scan").toDouble() > 0);
        const double cells = p.value("cells").toDouble();
        QVERIFY(std::abs(cells / p.value("scan_seconds").toDouble() / 1e9 - p.value("gcups_scan").toDouble()) <
                1e-6 * cells);
    }

    void badInputExitsTwo_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("says");
        const QString db = dir_.filePath("db.fa"), q = dir_.filePath("queries.fa");
        QTest::newRow("no database") << QStringList{"search", "-q", q} << "-d";
        QTest::newRow("missing database file")
            << QStringList{"search", "-q", q, "-d", dir_.filePath("none.fa")} << "none.fa";
        QTest::newRow("top zero") << QStringList{"search", "-q", q, "-d", db, "--top", "0"} << "--top";
        QTest::newRow("negative evalue") << QStringList{"search", "-q", q, "-d", db, "--evalue", "-1"} << "--evalue";
        QTest::newRow("evalue without statistics")
            << QStringList{"search", "-q", q, "-d", db, "--evalue", "1", "--mode", "global", "--device", "cpu"}
            << "global";
        QTest::newRow("sam format") << QStringList{"search", "-q", q, "-d", db, "--format", "sam"} << "sam";
        QTest::newRow("unknown device") << QStringList{"search", "-q", q, "-d", db, "--device", "tpu:1"} << "--device";
        QTest::newRow("unknown matrix") << QStringList{"search", "-q", q, "-d", db, "--matrix", "BLOSUM99"}
                                        << "BLOSUM99";
        QTest::newRow("DNA matrix on protein")
            << QStringList{"search", "-q", q, "-d", db, "--matrix", "EDNAFULL"} << "EDNAFULL";
        QTest::newRow("verify bad reference")
            << QStringList{"search", "--verify", "--reference", "abacus"} << "--reference 'abacus'";
        QTest::newRow("verify bad mode") << QStringList{"search", "--verify", "--mode", "sideways"} << "--mode";
        QTest::newRow("verify --mode without --search") << QStringList{"verify", "--mode", "global"} << "--search";
        // Every number goes through one strict reading: no wrap-around of negatives
        // or overflows into unsigned flags, no inf or nan where a threshold is meant.
        QTest::newRow("negative top") << QStringList{"search", "-q", q, "-d", db, "--top", "-5"}
                                      << "--top: expected a whole number of 0 or more, got '-5'";
        QTest::newRow("top past 64 bits")
            << QStringList{"search", "-q", q, "-d", db, "--top", "18446744073709551616"}
            << "--top: '18446744073709551616' is too large (at most 18446744073709551615)";
        QTest::newRow("negative seed") << QStringList{"search", "--verify", "--seed", "-1"} << "--seed";
        QTest::newRow("top in hex") << QStringList{"search", "-q", q, "-d", db, "--top", "0x10"} << "'0x10'";
        QTest::newRow("min score inf") << QStringList{"search", "-q", q, "-d", db, "--min-score", "inf"}
                                       << "--min-score: expected a finite number, got 'inf'";
        QTest::newRow("min score nan") << QStringList{"search", "-q", q, "-d", db, "--min-score", "nan"}
                                       << "--min-score: expected a finite number, got 'nan'";
        QTest::newRow("min score past a double") << QStringList{"search", "-q", q, "-d", db, "--min-score", "1e400"}
                                                 << "--min-score: '1e400' is out of range";
        QTest::newRow("evalue not a number")
            << QStringList{"search", "-q", q, "-d", db, "--evalue", "1e-3x"} << "--evalue";
        QTest::newRow("repeat past int") << QStringList{"search", "--bench", "--repeat", "4294967297"}
                                         << "--repeat: '4294967297' is too large (at most 2147483647)";
    }
    void badInputExitsTwo() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, says);
        const ProcessResult r = run_cli(arguments);
        QCOMPARE(r.exit_code, 2);
        const QList<QByteArray> lines = r.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        QVERIFY2(r.err.contains(says.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestSearchCli)
#include "test_search_cli.moc"
