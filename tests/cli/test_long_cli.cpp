// The long-pair commands end to end through the real binary: `align --long`
// against `align` (the full-matrix reference) on a generated 5 kb pair and
// against EMBOSS stretcher (global, linear space) on a mutated slice of the
// lambda phage genome; the automatic choice of the long path; `verify --long`
// and `bench --long` on the CPU; bad input as one line on stderr, exit 2.
#include "cli_runner.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace alignscope;

namespace {

QString write_fasta(const QTemporaryDir& dir, const QString& name,
                    const std::vector<std::pair<std::string, std::string>>& records) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return path;
    for (const auto& [id, residues] : records) {
        f.write(">" + QByteArray::fromStdString(id) + "\n");
        for (std::size_t k = 0; k < residues.size(); k += 70)
            f.write(QByteArray::fromStdString(residues.substr(k, 70)) + "\n");
    }
    return path;
}

QString text_of(const ProcessResult& r) { return QString::fromUtf8(r.out.right(3000) + "\n" + r.err.right(3000)); }

// "# Score: 1234.5" of an EMBOSS pair report.
double emboss_score(const QByteArray& out) {
    static const QRegularExpression score(QStringLiteral(R"(# Score:\s*(-?[0-9.]+))"));
    const auto m = score.match(QString::fromLatin1(out));
    return m.hasMatch() ? m.captured(1).toDouble() : qQNaN();
}

}  // namespace

class TestLongCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string query_, target_;
    QString query_path_, target_path_, two_records_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const SeedGenome genome = load_seed_genome();
        const LongPair pair = generate_long_pair(2024, genome.residues, 5000, 5300);
        query_ = pair.query;
        target_ = pair.target;
        query_path_ = write_fasta(dir_, "q.fa", {{"q5k", query_}});
        target_path_ = write_fasta(dir_, "t.fa", {{"t5k", target_}});
        two_records_ = write_fasta(dir_, "two.fa", {{"first", query_}, {"second", target_}});
    }

    // align --long on the CPU (Myers-Miller in linear space) gives the full-matrix
    // reference's score and end; its CIGAR re-scores to the score.
    void long_equals_reference_data() {
        QTest::addColumn<QStringList>("flags");
        QTest::addColumn<QString>("scheme");  // matrix open extend
        QTest::newRow("global") << QStringList{"--mode", "global"} << "EDNAFULL 10 0.5";
        QTest::newRow("local") << QStringList{"--mode", "local"} << "EDNAFULL 10 0.5";
        QTest::newRow("semiglobal") << QStringList{"--mode", "semiglobal"} << "EDNAFULL 10 0.5";
        QTest::newRow("semiglobal qb,qe linear")
            << QStringList{"--mode", "semiglobal", "--free-ends", "qb,qe", "--gap-open", "6", "--gap-extend", "6"}
            << "EDNAFULL 6 6";
        QTest::newRow("local 16/4") << QStringList{"--mode", "local", "--gap-open", "16", "--gap-extend", "4"}
                                    << "EDNAFULL 16 4";
    }
    void long_equals_reference() {
        QFETCH(QStringList, flags);
        QFETCH(QString, scheme);
        const ProcessResult ref =
            run_cli(QStringList{"align", query_path_, target_path_, "--device", "cpu-ref", "--format", "json"} + flags);
        QVERIFY2(ref.exit_code == 0, ref.err.constData());
        const ProcessResult got = run_cli(QStringList{"align", "--long", query_path_, target_path_, "--device",
                                                      "cpu-ref", "--format", "json", "--stats"} +
                                          flags);
        QVERIFY2(got.exit_code == 0, got.err.constData());
        const auto r = parse_json_lines(ref.out), g = parse_json_lines(got.out);
        QCOMPARE(r.size(), 1);
        QCOMPARE(g.size(), 1);
        QVERIFY(!r[0].contains("long_pair"));  // 5 kb: the ordinary path unless asked
        for (const char* key : {"score", "query_end", "target_end", "query_length", "target_length"})
            QVERIFY2(r[0][key] == g[0][key],
                     qPrintable(QString("%1: %2 vs %3").arg(key).arg(r[0][key].toDouble()).arg(g[0][key].toDouble())));
        QVERIFY(g[0]["kernel"].toString().contains("myersmiller"));
        const QJsonObject stats = g[0]["long_pair"].toObject();
        QCOMPARE(stats["stage_seconds"].toArray().size(), 3);
        QCOMPARE(stats["stage_cells"].toArray().at(0).toDouble(), 5000.0 * 5300.0);
        QCOMPARE(stats["automatic"].toBool(), false);
        QVERIFY2(got.err.contains("align --long: 5000 x 5300 on cpu-ref"), got.err.constData());

        const QStringList parts = scheme.split(' ');
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::builtin(parts[0].toStdString()),
                                                      parts[1].toDouble(), parts[2].toDouble());
        const Cigar cigar = Cigar::parse(g[0]["cigar"].toString().toStdString());
        const std::int64_t path =
            rescore(cigar, query_, target_, g[0]["query_begin"].toInteger(), g[0]["target_begin"].toInteger(), s);
        QCOMPARE(s.to_user(path), g[0]["score"].toDouble());
    }

    // One pair of >= 20,000 residues each takes the long path by itself; two
    // records do not.
    void long_path_is_chosen_for_one_long_pair() {
        const SeedGenome genome = load_seed_genome();
        const LongPair pair = generate_long_pair(5, genome.residues, 20000, 20500);
        const QString q = write_fasta(dir_, "q20k.fa", {{"q20k", pair.query}});
        const QString t = write_fasta(dir_, "t20k.fa", {{"t20k", pair.target}});
        const ProcessResult r =
            run_cli({"align", q, t, "--device", "cpu-ref", "--format", "json", "--no-traceback", "--mode", "local"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const auto rows = parse_json_lines(r.out);
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0]["long_pair"].toObject()["automatic"].toBool(), true);
        QVERIFY2(r.err.contains("long-pair path"), r.err.constData());

        const ProcessResult many =
            run_cli({"align", two_records_, t, "--device", "cpu-ref", "--format", "tsv", "--no-traceback"});
        QVERIFY2(many.exit_code == 0, many.err.constData());
        QCOMPARE(many.out.count('\n'), 3);  // header and two rows: the ordinary path
        QVERIFY(!many.err.contains("long-pair"));

        // --long with several records: the first of each file, said on stderr.
        const ProcessResult first = run_cli({"align", "--long", two_records_, two_records_, "--device", "cpu-ref",
                                             "--format", "json", "--no-traceback", "--mode", "local"});
        QVERIFY2(first.exit_code == 0, first.err.constData());
        const auto one = parse_json_lines(first.out);
        QCOMPARE(one.size(), 1);
        QCOMPARE(one[0]["query"].toString(), QString("first"));
        QCOMPARE(one[0]["target"].toString(), QString("first"));
        QVERIFY(first.err.contains("aligning its first"));
    }

    // --project records the job, its alignment and the pipeline's statistics.
    void project_records_the_long_job() {
        const QString project = dir_.filePath("align.alsproj");
        const ProcessResult r = run_cli({"align", "--long", query_path_, target_path_, "--device", "cpu-ref", "--mode",
                                         "local", "--project", project, "-o", dir_.filePath("out.txt")});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const ProcessResult list = run_cli({"project", project, "list"});
        QVERIFY2(list.out.contains("done"), list.out.constData());
        QVERIFY2(list.out.contains("1 alignment, 1 long-pair statistics record"), list.out.constData());
        const ProcessResult show = run_cli({"project", project, "show", "1"});
        QVERIFY2(show.out.contains("long:") && show.out.contains("yes"), show.out.constData());
    }

    // EMBOSS stretcher (Myers-Miller, global) on real DNA: the lambda genome's
    // 8 kb slice against a mutated copy, with stretcher's DNA defaults (EDNAFULL,
    // gap 16/4) and with explicit penalties.
    void stretcher_on_lambda_data() {
        QTest::addColumn<QStringList>("stretcher_flags");
        QTest::addColumn<QString>("open");
        QTest::addColumn<QString>("extend");
        QTest::newRow("defaults 16/4") << QStringList{} << "16"
                                       << "4";
        QTest::newRow("12/2") << QStringList{"-gapopen", "12", "-gapextend", "2"} << "12"
                              << "2";
    }
    void stretcher_on_lambda() {
        QFETCH(QStringList, stretcher_flags);
        QFETCH(QString, open);
        QFETCH(QString, extend);
        ALIGNSCOPE_REQUIRE_ORACLE(have_program("stretcher"), "stretcher is not installed (Debian package emboss)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kLambdaGenomePath),
                                  "the lambda genome is missing (Debian package bowtie2-examples)");
        const SeedGenome genome = load_seed_genome();
        QVERIFY(genome.real);
        const std::string slice = genome.residues.substr(20000, 8000);
        SeededRandom random(77);
        Evolution e;
        e.long_indel_rate = 2e-4;  // a long indel or so besides the small ones
        const std::string copy = evolve(random, slice, e);
        const QString a = write_fasta(dir_, "lambda_a.fa", {{"lambda_20001_28000", slice}});
        const QString b = write_fasta(dir_, "lambda_b.fa", {{"lambda_mutated", copy}});
        const ProcessResult s =
            run_program("stretcher",
                        QStringList{"-asequence", a, "-bsequence", b, "-outfile", "stdout", "-auto"} + stretcher_flags);
        QVERIFY2(s.exit_code == 0, s.err.constData());
        if (stretcher_flags.isEmpty()) {
            QVERIFY2(s.out.contains("# Matrix: EDNAFULL"), s.out.left(800).constData());
            QVERIFY2(s.out.contains("# Gap_penalty: 16"), s.out.left(800).constData());
            QVERIFY2(s.out.contains("# Extend_penalty: 4"), s.out.left(800).constData());
        }
        const double expected = emboss_score(s.out);
        QVERIFY(!qIsNaN(expected));
        for (const char* device : {"cpu-ref", "cpu"}) {
            const ProcessResult ours =
                run_cli({"align", "--long", a, b, "--mode", "global", "--matrix", "EDNAFULL", "--gap-open", open,
                         "--gap-extend", extend, "--device", device, "--format", "json"});
            QVERIFY2(ours.exit_code == 0, ours.err.constData());
            const auto rows = parse_json_lines(ours.out);
            QCOMPARE(rows.size(), 1);
            QVERIFY2(
                rows[0]["score"].toDouble() == expected,
                qPrintable(
                    QString("%1: stretcher %2, ours %3").arg(device).arg(expected).arg(rows[0]["score"].toDouble())));
        }
    }

    void verify_long_passes() {
        const ProcessResult r = run_cli(
            {"verify", "--long", "--pairs", "20", "--max-length", "3000", "--device", "cpu-ref", "--seed", "3"});
        QVERIFY2(r.exit_code == 0, qPrintable(text_of(r)));
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        // Pairs of extreme schemes may be refused with a clear error, never failed.
        const QRegularExpression last(
            "^(\\d+) passed, 0 failed(, (\\d+) refused \\(schemes past the device's limits\\))?$");
        const QRegularExpressionMatch counts = last.match(lines.last());
        QVERIFY2(counts.hasMatch(), qPrintable(lines.last()));
        const int passed = counts.captured(1).toInt(), refused = counts.captured(3).toInt();
        QCOMPARE(passed + refused, 20);
        int ok = 0;
        for (const QString& line : lines) ok += line.startsWith("ok #");
        QCOMPARE(ok, passed);
        for (const char* what : {"global", "local", "semiglobal[all]", "semiglobal[qb,qe]", "(affine)", "(linear)",
                                 "planted", "genome", "protein", "parasail agrees"})
            QVERIFY2(r.out.contains(what), what);
        QVERIFY(r.out.contains("parasail checked 20"));
    }

    void bench_long_quick() {
        const QString json = dir_.filePath("bench.json"), project = dir_.filePath("bench.alsproj");
        const ProcessResult r =
            run_cli({"bench", "--long", "--quick", "--device", "cpu-ref", "--json", json, "--project", project});
        QVERIFY2(r.exit_code == 0, qPrintable(text_of(r)));
        QVERIFY(r.out.contains("stage-1 GCUPS"));
        QVERIFY(r.out.contains("linear-space"));
        // Two lengths: the run-time model with two parameters (a rate and a fixed cost).
        QVERIFY2(r.out.contains("model linear-space on cpu-ref (full alignment): t = ") &&
                     r.out.contains("2 points at 2 sizes, 2 parameters") && r.out.contains("; 5 Mbp x 5 Mbp: "),
                 r.out.constData());
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray points = QJsonDocument::fromJson(f.readAll()).object()["points"].toArray();
        QCOMPARE(points.size(), 2);
        for (int k = 0; k < 2; ++k) {
            const QJsonObject p = points[k].toObject();
            const double length = k == 0 ? 3000 : 6000;
            QCOMPARE(p["x_value"].toDouble(), length);
            QCOMPARE(p["cells"].toDouble(), length * length);
            QVERIFY(p["seconds"].toDouble() > 0);
        }
        const ProcessResult list = run_cli({"project", project, "list"});
        QVERIFY2(list.out.contains("2 bench points"), list.out.constData());
    }

    void bad_input_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("expected");  // in the one stderr line
        const QString empty = dir_.filePath("empty.fa");
        QFile(empty).open(QIODevice::WriteOnly);
        const QString empty_record = dir_.filePath("empty_record.fa");
        {
            QFile f(empty_record);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(">e\n\n");
        }
        QTest::newRow("empty file") << QStringList{"align", "--long", empty, target_path_} << "empty.fa";
        QTest::newRow("empty record") << QStringList{"align", "--long", empty_record, target_path_} << "empty";
        QTest::newRow("one sequence file") << QStringList{"align", "--long", query_path_} << "targets";
        QTest::newRow("no files") << QStringList{"align", "--long"} << "queries";
        QTest::newRow("strategy bogus") << QStringList{"align",      "--long",     query_path_,
                                                       target_path_, "--strategy", "bogus"}
                                        << "--strategy";
        QTest::newRow("kernels negative")
            << QStringList{"align", "--long", query_path_, target_path_, "--kernels", "-3"} << "--kernels";
        QTest::newRow("special rows size")
            << QStringList{"align", "--long", query_path_, target_path_, "--special-rows-mem", "lots"}
            << "--special-rows-mem";
        QTest::newRow("stats without --long") << QStringList{"align", query_path_, target_path_, "--stats"} << "--long";
        QTest::newRow("strategy without --long")
            << QStringList{"align", query_path_, target_path_, "--strategy", "strips"} << "--long";
        QTest::newRow("verify max length") << QStringList{"verify", "--long", "--max-length", "0"} << "--max-length";
        QTest::newRow("verify reference")
            << QStringList{"verify", "--long", "--reference", "cpu", "--device", "cpu-ref"} << "--reference";
        QTest::newRow("verify max length without --long")
            << QStringList{"verify", "--max-length", "10k", "--device", "cpu"} << "--long";
        QTest::newRow("bench lengths") << QStringList{"bench", "--long", "--lengths", "10q", "--device", "cpu-ref"}
                                       << "--lengths";
        QTest::newRow("bench strategies")
            << QStringList{"bench", "--long", "--strategies", "bogus", "--device", "cpu-ref"} << "--strategies";
        QTest::newRow("bench strategies without --long")
            << QStringList{"bench", "--strategies", "strips", "--device", "cpu-ref"} << "--long";
    }
    void bad_input() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, expected);
        const ProcessResult r = run_cli(arguments);
        QVERIFY2(!r.crashed, "crashed");
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.out.isEmpty(), r.out.constData());
        const QByteArray err = r.err.trimmed();
        QVERIFY2(!err.contains('\n'), err.constData());
        QVERIFY2(err.contains(expected.toUtf8()), err.constData());
    }
};

QTEST_GUILESS_MAIN(TestLongCli)
#include "test_long_cli.moc"
