// alignscope-cli hmmsearch through the real binary, against the real hmmsearch
// run on the same files with the same options: --tblout and --domtblout rows
// identical byte for byte, the report's sequence table, domain
// tables, alignments and pipeline counts identical, several models per file,
// -Z/--domZ and bit score thresholds, -A as hmmsearch writes it (and readable
// by hmmbuild), JSON, threads, the run's timeline (--timeline) and its
// results kept in a project (--project) as the workbench keeps a profile search,
// and bad input refused with exit status 2 and one line.
#include "hmmsearch_oracle.hpp"

#include <alignscope/store/project.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace alignscope::test;

namespace {

// The lines of a report section, from the line starting with `from` up to (not
// including) the line starting with `to`.
QStringList section(const QByteArray& report, const QByteArray& from, const QByteArray& to) {
    QStringList lines;
    bool in = false;
    for (QByteArray line : report.split('\n')) {
        if (line.startsWith(from)) in = true;
        else if (in && line.startsWith(to))
            break;
        if (!in) continue;
        lines << QString::fromUtf8(line);
    }
    return lines;
}

// Residues of a FASTA file, counted from its sequence lines.
qulonglong fasta_residues(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return 0;
    qulonglong n = 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.startsWith('>')) n += qulonglong(line.trimmed().size());
    return n;
}

// Each model's NAME and LENG line of a HMMER3 text file, in file order.
QVector<QPair<QString, qulonglong>> model_lengths(const QString& path) {
    QVector<QPair<QString, qulonglong>> models;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return models;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QList<QByteArray> words = line.simplified().split(' ');
        if (words.size() < 2) continue;
        if (words[0] == "NAME") models.push_back({QString::fromUtf8(words[1]), 0});
        else if (words[0] == "LENG" && !models.isEmpty())
            models.back().second = words[1].toULongLong();
    }
    return models;
}

// The ref.tbl rows of one query: target name -> full-sequence bit score.
QMap<QString, double> table_hits(const QStringList& rows, const QString& query) {
    QMap<QString, double> hits;
    for (const QString& row : rows) {
        const QStringList c = row.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (c.size() > 5 && c[2] == query) hits[c[0]] = c[5].toDouble();
    }
    return hits;
}

}  // namespace

class TestHmmsearchCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("Pkinase");
        db_ = database_slice(dir_, QStringLiteral("slice.fa"), 2500);
        // Three models in one file, as Pfam ships them.
        models_ = three_tutorial_models(dir_, QStringLiteral("three.hmm"));
        QVERIFY(!models_.isEmpty());
    }

    void same_output_as_hmmsearch_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("three models") << "three" << QStringList{};
        QTest::newRow("-Z and --domZ") << "Pkinase" << QStringList{"-Z", "45000000", "--domZ", "1000"};
        QTest::newRow("bit score thresholds")
            << "three" << QStringList{"-T", "15", "--domT", "12", "--incT", "25", "--incdomT", "20"};
        QTest::newRow("E-value thresholds")
            << "fn3" << QStringList{"-E", "1e-3", "--domE", "0.5", "--incE", "1e-6", "--incdomE", "1e-4"};
        QTest::newRow("--nobias --F2 0.01") << "Pkinase" << QStringList{"--nobias", "--F2", "0.01"};
    }

    void same_output_as_hmmsearch() {
        QFETCH(QString, model);
        QFETCH(QStringList, options);
        const QString model_path = model == "three" ? models_ : kTutorial + "/" + model + ".hmm";
        QTemporaryDir dir;
        auto run = [&](const QString& program, const QString& tag, QStringList extra) {
            QStringList args;
            if (program == QStringLiteral(ALIGNSCOPE_CLI)) args << "hmmsearch";
            args << options << "--seed"
                 << "42"
                 << "--tblout" << dir.filePath(tag + ".tbl") << "--domtblout" << dir.filePath(tag + ".dom") << "-o"
                 << dir.filePath(tag + ".out") << extra << model_path << db_;
            const ProcessResult r = run_program(program, args);
            if (r.exit_code != 0) qWarning("%s: %s", qPrintable(program), r.err.constData());
            QFile f(dir.filePath(tag + ".out"));
            (void)f.open(QIODevice::ReadOnly);
            return std::make_pair(r.exit_code, f.readAll());
        };
        const auto [ref_status, ref] = run(QStringLiteral("hmmsearch"), QStringLiteral("ref"), {"--cpu", "1"});
        const auto [our_status, ours] = run(QStringLiteral(ALIGNSCOPE_CLI), QStringLiteral("ours"), {"--threads", "2"});
        QCOMPARE(ref_status, 0);
        QCOMPARE(our_status, 0);
        const QStringList ref_tbl = table_rows(dir.filePath("ref.tbl")), our_tbl = table_rows(dir.filePath("ours.tbl"));
        QVERIFY(!ref_tbl.isEmpty());
        QCOMPARE(our_tbl, ref_tbl);
        QCOMPARE(table_rows(dir.filePath("ours.dom")), table_rows(dir.filePath("ref.dom")));
        QCOMPARE(passed_counts(ours), passed_counts(ref));
        QCOMPARE(section(ours, "Query:", "Internal pipeline"), section(ref, "Query:", "Internal pipeline"));
        QCOMPARE(section(ours, "Initial search space", "# "), section(ref, "Initial search space", "# "));
    }

    // --db-cache: the first search builds the cache, the second reads it
    // instead of the FASTA, a damaged one is said on standard error and
    // rebuilt; every time the tables and counts are hmmsearch's.
    void database_cache() {
        QTemporaryDir dir;
        const QString fn3 = kTutorial + "/fn3.hmm";
        const ProcessResult ref =
            run_program(QStringLiteral("hmmsearch"),
                        {"--cpu", "1", "--tblout", dir.filePath("ref.tbl"), "-o", dir.filePath("ref.out"), fn3, db_});
        QCOMPARE(ref.exit_code, 0);
        QByteArray err;
        auto search = [&](const QByteArray& expected) {
            const ProcessResult r = run_cli({"hmmsearch", "--db-cache", dir.filePath("cache"), "--timings", "--tblout",
                                             dir.filePath("ours.tbl"), "-o", dir.filePath("ours.out"), fn3, db_});
            err = r.err;
            QCOMPARE(r.exit_code, 0);
            QVERIFY2(r.err.contains("(cache " + expected), r.err.constData());
            QCOMPARE(table_rows(dir.filePath("ours.tbl")), table_rows(dir.filePath("ref.tbl")));
            QFile ours(dir.filePath("ours.out")), theirs(dir.filePath("ref.out"));
            QVERIFY(ours.open(QIODevice::ReadOnly) && theirs.open(QIODevice::ReadOnly));
            QCOMPARE(passed_counts(ours.readAll()), passed_counts(theirs.readAll()));
        };
        search("built");
        search("loaded");
        const QStringList caches = QDir(dir.filePath("cache")).entryList({"*.alspt"}, QDir::Files);
        QCOMPARE(caches.size(), 1);
        QFile cache(dir.filePath("cache/" + caches.front()));
        QVERIFY(cache.open(QIODevice::ReadWrite));
        QVERIFY(cache.seek(cache.size() - 20));
        QVERIFY(cache.putChar('\x7f'));
        cache.close();
        search("rebuilt");
        QVERIFY2(err.contains("damaged"), err.constData());
        search("loaded");
    }

    void noali_json_threads_and_alignment() {
        QTemporaryDir dir;
        const QString pk = kTutorial + "/Pkinase.hmm";
        ProcessResult one = run_cli({"hmmsearch", "--threads", "1", "--noali", pk, db_});
        ProcessResult two = run_cli({"hmmsearch", "--threads", "2", "--noali", pk, db_});
        QCOMPARE(one.exit_code, 0);
        QVERIFY(!one.out.contains("Alignments for each domain"));
        const auto strip_time = [](const QByteArray& t) {
            QByteArrayList keep;
            for (const QByteArray& l : t.split('\n'))
                if (!l.startsWith("# Elapsed") && !l.startsWith("# Mc/sec") && !l.startsWith("# number of worker"))
                    keep << l;
            return keep.join('\n');
        };
        QCOMPARE(strip_time(two.out), strip_time(one.out));

        const ProcessResult json =
            run_cli({"hmmsearch", "--format", "json", "--tblout", dir.filePath("j.tbl"), pk, db_});
        QCOMPARE(json.exit_code, 0);
        const QJsonObject doc = QJsonDocument::fromJson(json.out).object();
        const QJsonArray results = doc["results"].toArray();
        QCOMPARE(results.size(), 1);
        const QJsonObject r = results[0].toObject();
        QCOMPARE(r["hits"].toArray().size(), table_rows(dir.filePath("j.tbl")).size());
        QCOMPARE(r["pipeline"].toObject()["targets"].toInt(), 2500);

        // -A: as many aligned domains as hmmsearch's own -A, and hmmbuild reads the file.
        const ProcessResult ref = run_program(QStringLiteral("hmmsearch"),
                                              {"-A", dir.filePath("ref.sto"), "-o", dir.filePath("ref.out"), pk, db_});
        QCOMPARE(ref.exit_code, 0);
        const ProcessResult ours =
            run_cli({"hmmsearch", "-A", dir.filePath("ours.sto"), "-o", dir.filePath("ours.out"), pk, db_});
        QCOMPARE(ours.exit_code, 0);
        auto saved = [](const QString& path) {
            QFile f(path);
            (void)f.open(QIODevice::ReadOnly);
            for (const QByteArray& l : f.readAll().split('\n'))
                if (l.startsWith("# Alignment of ")) return l.split(' ')[3].toInt();
            return -1;
        };
        QVERIFY(saved(dir.filePath("ref.out")) > 0);
        QCOMPARE(saved(dir.filePath("ours.out")), saved(dir.filePath("ref.out")));
        const ProcessResult build =
            run_program(QStringLiteral("hmmbuild"), {"-o", dir.filePath("build.log"), "--amino",
                                                     dir.filePath("rebuilt.hmm"), dir.filePath("ours.sto")});
        QVERIFY2(build.exit_code == 0, build.err.constData());
        // Line for line hmmsearch's Stockholm file, but for the #=GF AU (author) line.
        auto stockholm = [](const QString& path) {
            QStringList lines;
            QFile f(path);
            (void)f.open(QIODevice::ReadOnly);
            for (const QByteArray& line : f.readAll().split('\n'))
                if (!line.startsWith("#=GF AU")) lines << QString::fromUtf8(line);
            return lines;
        };
        QCOMPARE(stockholm(dir.filePath("ours.sto")), stockholm(dir.filePath("ref.sto")));
    }

    void bad_input_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString pk = kTutorial + "/Pkinase.hmm";
        QTest::newRow("no such model file")
            << QStringList{"hmmsearch", "/nonexistent/x.hmm", "DB"} << "/nonexistent/x.hmm: cannot open";
        QTest::newRow("F1 above 1") << QStringList{"hmmsearch", "--F1", "2", pk, "DB"}
                                    << "--F1 must be a P-value threshold";
        QTest::newRow("negative E") << QStringList{"hmmsearch", "-E", "-1", pk, "DB"} << "-E must be positive";
        QTest::newRow("not a number") << QStringList{"hmmsearch", "--domE", "x", pk, "DB"} << "--domE";
        QTest::newRow("DNA model, protein targets")
            << QStringList{"hmmsearch", kTutorial + "/MADE1.hmm", "DB"} << "not in the DNA alphabet";
        QTest::newRow("unknown device") << QStringList{"hmmsearch", "--device", "tpu", pk, "DB"}
                                        << "--device: no profile search device 'tpu'";
        QTest::newRow("bad format") << QStringList{"hmmsearch", "--format", "xml", pk, "DB"}
                                    << "--format must be text or json";
        QTest::newRow("--gpu-mem not a size")
            << QStringList{"hmmsearch", "--gpu-mem", "lots", pk, "DB"} << "--gpu-mem: 'lots' is not a size";
        QTest::newRow("--gpu-mem zero") << QStringList{"hmmsearch", "--gpu-mem", "0", pk, "DB"}
                                        << "--gpu-mem: '0' is not a positive size";
        QTest::newRow("empty database") << QStringList{"hmmsearch", pk, "EMPTY"} << "no sequences in the file";
        QTest::newRow("unwritable table")
            << QStringList{"hmmsearch", "--tblout", "/nonexistent/dir/t.tbl", pk, "DB"} << "/nonexistent/dir/t.tbl";
        QTest::newRow("timeline over the database")
            << QStringList{"hmmsearch", "--timeline", "DB", pk, "DB"} << "is the same file as DATABASE";
        QTest::newRow("project not a project")
            << QStringList{"hmmsearch", "--project", kTutorial + "/globins4.hmm", pk, "DB"}
            << "is not an AlignScope project";
    }

    // --timeline on the CPU device: a Chrome trace of the host stages, one lane,
    // in the pipeline's order for each model, the filters' cells those of the
    // files (residues counted here, lengths from the LENG lines).
    void timeline_of_the_cpu_run() {
        QTemporaryDir dir;
        const QString globins = kTutorial + "/globins45.fa";
        const QString trace = dir.filePath(QStringLiteral("run.json"));
        const ProcessResult r = run_cli({"hmmsearch", "--device", "cpu", "--noali", "--timeline", trace, "-o",
                                         dir.filePath(QStringLiteral("out.txt")), models_, globins});
        QCOMPARE(r.exit_code, 0);
        QFile file(trace);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QStringList names;
        double end = -1;
        const qulonglong residues = fasta_residues(globins);
        const auto models = model_lengths(models_);
        QCOMPARE(models.size(), 3);
        int msv = 0;
        for (const QJsonValue& v : doc.object()["traceEvents"].toArray()) {
            const QJsonObject e = v.toObject();
            if (e["ph"].toString() != QLatin1String("X")) continue;
            const QJsonObject args = e["args"].toObject();
            QCOMPARE(args["device"].toString(), QStringLiteral("host"));
            QCOMPARE(args["lane"].toInt(), 0);
            QVERIFY(e["dur"].toDouble() >= 0);
            QVERIFY2(e["ts"].toDouble() >= end - 1e-3, qPrintable(e["name"].toString()));  // one after another
            end = e["ts"].toDouble() + e["dur"].toDouble();
            names << e["name"].toString();
            if (e["name"].toString() == QLatin1String("MSV filter")) {
                QVERIFY(msv < models.size());
                QCOMPARE(args["detail"].toString(), models[msv].first);
                QCOMPARE(qulonglong(args["cells"].toDouble()), residues * models[msv].second);
                ++msv;
            }
        }
        QStringList expected{"read profiles", "read database", "load targets"};
        for (int m = 0; m < 3; ++m)
            expected << "configure model"
                     << "MSV filter"
                     << "bias filter"
                     << "Viterbi filter"
                     << "Forward, domains"
                     << "output";
        QCOMPARE(names, expected);
    }

    // --project: the search kept as the workbench keeps a profile search (an
    // analysis of kind profile_search, "alignscope profile search 1"), the
    // profile file as an input; its hits and pipeline counts hmmsearch's own.
    void project_keeps_the_search() {
        QTemporaryDir dir;
        const QString globins = kTutorial + "/globins45.fa";
        const QString project = dir.filePath(QStringLiteral("p.alsproj"));
        const ProcessResult ref = run_program(QStringLiteral("hmmsearch"),
                                              {"--cpu", "1", "--tblout", dir.filePath("ref.tbl"), models_, globins});
        QCOMPARE(ref.exit_code, 0);
        for (int run = 1; run <= 2; ++run) {
            const ProcessResult r = run_cli(
                {"hmmsearch", "--device", "cpu", "--noali", "--project", project, "-o", "/dev/null", models_, globins});
            QCOMPARE(r.exit_code, 0);
        }
        alignscope::store::ProjectOptions read_only;
        read_only.read_only = true;
        const alignscope::store::Project p(project.toStdString(), read_only);
        const auto analyses = p.analyses();
        QCOMPARE(int(analyses.size()), 2);  // each run adds its search
        QCOMPARE(analyses[0].kind, std::string("profile_search"));
        QCOMPARE(analyses[0].title, std::string("three.hmm against globins45.fa"));
        const auto inputs = p.inputs();
        QCOMPARE(int(inputs.size()), 1);  // the same profile file once
        QCOMPARE(inputs[0].record_count, std::uint64_t(3));
        const QJsonObject doc =
            QJsonDocument::fromJson(QByteArray::fromStdString(p.analysis_results(analyses[1].id))).object();
        QCOMPARE(doc["format"].toString(), QStringLiteral("alignscope profile search 1"));
        QCOMPARE(doc["device"].toString(), QStringLiteral("cpu"));
        const QVector<qulonglong> counts = passed_counts(ref.out);
        const QStringList rows = table_rows(dir.filePath("ref.tbl"));
        const QJsonArray models = doc["models"].toArray();
        QCOMPARE(models.size(), 3);
        QCOMPARE(counts.size(), 12);
        for (int m = 0; m < 3; ++m) {
            const QJsonObject model = models[m].toObject();
            const QJsonObject pipeline = model["pipeline"].toObject();
            QCOMPARE(pipeline["targets"].toInt(), 45);
            QCOMPARE(qulonglong(pipeline["passed_msv"].toDouble()), counts[4 * m]);
            QCOMPARE(qulonglong(pipeline["passed_bias"].toDouble()), counts[4 * m + 1]);
            QCOMPARE(qulonglong(pipeline["passed_viterbi"].toDouble()), counts[4 * m + 2]);
            QCOMPARE(qulonglong(pipeline["passed_forward"].toDouble()), counts[4 * m + 3]);
            const QMap<QString, double> expected = table_hits(rows, model["name"].toString());
            const QJsonArray hits = model["hits"].toArray();
            QCOMPARE(hits.size(), expected.size());
            for (const QJsonValue& h : hits) {
                const QString name = h["name"].toString();
                QVERIFY2(expected.contains(name), qPrintable(name));
                QVERIFY(std::fabs(h["score"].toDouble() - expected[name]) <= 0.05);
                QVERIFY(!h["domains"].toArray().isEmpty());
            }
        }
    }

    // A run whose output files cannot be written fails, and keeps no search
    // in the project (as align: the files first, then the project).
    void project_untouched_when_outputs_fail() {
        if (!QFile::exists(QStringLiteral("/dev/full"))) QSKIP("/dev/full does not exist on this system");
        QTemporaryDir dir;
        const QString project = dir.filePath(QStringLiteral("p.alsproj"));
        const ProcessResult r =
            run_cli({"hmmsearch", "--device", "cpu", "--noali", "--project", project, "-o", "/dev/null", "--tblout",
                     "/dev/full", kTutorial + "/globins4.hmm", kTutorial + "/globins45.fa"});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("/dev/full: write failed"), r.err.constData());
        alignscope::store::ProjectOptions read_only;
        read_only.read_only = true;
        const alignscope::store::Project p(project.toStdString(), read_only);
        QCOMPARE(int(p.analyses().size()), 0);
    }

    void bad_input() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        args.replaceInStrings(QRegularExpression(QStringLiteral("^DB$")), db_);
        QTemporaryDir dir;
        const QString empty = dir.filePath(QStringLiteral("empty.fa"));
        QFile(empty).open(QIODevice::WriteOnly);
        args.replaceInStrings(QRegularExpression(QStringLiteral("^EMPTY$")), empty);
        const QString out = dir.filePath(QStringLiteral("report.txt"));
        const ProcessResult r = run_cli(QStringList(args) << "-o" << out);
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!r.crashed);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(message.toUtf8()), r.err.constData());
        QVERIFY2(!QFile::exists(out), "a failed run left a report");
    }

    void pressed_file_refused() {
        ALIGNSCOPE_REQUIRE_ORACLE(have_program(QStringLiteral("hmmpress")),
                                  "hmmpress is not installed (Debian package hmmer)");
        QTemporaryDir dir;
        const QString model = dir.filePath(QStringLiteral("globins4.hmm"));
        QFile::copy(kTutorial + "/globins4.hmm", model);
        QCOMPARE(run_program(QStringLiteral("hmmpress"), {model}).exit_code, 0);
        const ProcessResult r = run_cli({"hmmsearch", model + ".h3m", db_});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("not supported; give the text .hmm file"), r.err.constData());
    }

private:
    QTemporaryDir dir_;
    QString db_, models_;
};

QTEST_GUILESS_MAIN(TestHmmsearchCli)
#include "test_hmmsearch_cli.moc"
