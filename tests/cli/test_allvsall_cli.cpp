// `alignscope-cli allvsall` end to end through the real binary on real 16S
// rRNA sequences (microbiomeutil-data): pair table and PHYLIP/CSV matrices
// read back and checked against parasail's scores; --top and --distance
// identity; a run killed (SIGKILL) or interrupted (SIGINT) mid-way resumes to
// the same bytes as a run left alone; --project keeps the traced pairs as
// alignments; bad input gets one line and exit 2.
#include "cli_runner.hpp"
#include "rrna16s.hpp"

#include <QtTest>

#include <parasail.h>

#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/project.hpp>

#include <cmath>
#include <csignal>
#include <map>

namespace {

std::vector<alignscope::Sequence> records(const QString& path) {
    return alignscope::read_sequences(path.toStdString()).records;
}

int parasail_nw(const std::string& q, const std::string& t) {
    const parasail_matrix_t* nuc44 = parasail_matrix_lookup("nuc44");
    const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
    parasail_result_t* r = parasail_nw_striped_16(q.c_str(), m, t.c_str(), n, 10, 1, nuc44);
    if (parasail_result_is_saturated(r)) {
        parasail_result_free(r);
        r = parasail_nw_scan_32(q.c_str(), m, t.c_str(), n, 10, 1, nuc44);
    }
    const int score = r->score;
    parasail_result_free(r);
    return score;
}

QByteArray slurp(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList scoring() { return {"--gap-open", "10", "--gap-extend", "1", "--quiet"}; }

// Tiles committed in a checkpoint's manifest (0 while there is none).
int manifest_tiles(const QString& dir) {
    for (const QByteArray& line : slurp(dir + "/allvsall.manifest").split('\n'))
        if (line.startsWith("tiles ")) return line.mid(6).toInt();
    return 0;
}

}  // namespace

class TestAllVsAllCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!QFile::exists(k16S))
            QFAIL("rRNA16S.gold.fasta is missing: install the Debian package microbiomeutil-data");
    }

    void table_and_phylip_match_parasail() {
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 16);
        const QString table = dir.filePath("pairs.tsv"), phylip = dir.filePath("d.phy");
        const ProcessResult r = run_cli(QStringList{"allvsall", set, "--device", "cpu", "--tile", "5", "--min-score",
                                                    "6000", "-o", table, "--matrix-out", phylip} +
                                        scoring());
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const std::vector<alignscope::Sequence> seqs = records(set);
        const int n = static_cast<int>(seqs.size());
        std::vector<int> self(static_cast<std::size_t>(n));
        for (int k = 0; k < n; ++k) self[k] = parasail_nw(seqs[k].residues, seqs[k].residues);

        // The pair table: every pair once, its score parasail's; traced exactly at >= 6000.
        const QList<QByteArray> lines = slurp(table).split('\n');
        QVERIFY(lines.first().startsWith("i\tj\tquery\ttarget\tscore\tnormalised\tidentity"));
        std::map<std::pair<int, int>, int> score;
        int traced = 0;
        for (int k = 1; k < lines.size(); ++k) {
            if (lines[k].isEmpty()) continue;
            const QList<QByteArray> f = lines[k].split('\t');
            QCOMPARE(f.size(), 14);
            const int i = f[0].toInt() - 1, j = f[1].toInt() - 1;
            QVERIFY(i < j && j < n);
            QCOMPARE(f[2].toStdString(), seqs[i].id);
            QCOMPARE(f[3].toStdString(), seqs[j].id);
            const int want = parasail_nw(seqs[i].residues, seqs[j].residues);
            QCOMPARE(f[4].toInt(), want);
            QVERIFY(score.emplace(std::make_pair(i, j), want).second);
            const bool has = f[6] != "-";
            QCOMPARE(has, want >= 6000);
            if (has) {
                ++traced;
                QCOMPARE(f[9].toInt(), 1);
                QCOMPARE(f[10].toInt(), int(seqs[i].residues.size()));
                QVERIFY(f[13] != "*");
            }
        }
        QCOMPARE(int(score.size()), n * (n - 1) / 2);
        QVERIFY(traced > 0);

        // PHYLIP square matrix read back: names in file order, 1 - score / min(self) from parasail.
        QList<QByteArray> rows = slurp(phylip).split('\n');
        QCOMPARE(rows.first().trimmed().toInt(), n);
        for (int i = 0; i < n; ++i) {
            const QList<QByteArray> f = rows[i + 1].split(' ');
            QCOMPARE(f.size(), n + 1);
            QCOMPARE(f[0].toStdString(), seqs[i].id);
            for (int j = 0; j < n; ++j) {
                const double d = f[j + 1].toDouble();
                double want = 0;
                if (i != j) {
                    const int s = score.at({std::min(i, j), std::max(i, j)});
                    want = std::max(0.0, 1.0 - double(s) / std::min(self[i], self[j]));
                }
                if (std::fabs(d - want) > 2e-6)
                    QFAIL(qPrintable(QString("d(%1,%2) = %3, expected %4").arg(i).arg(j).arg(d).arg(want)));
            }
        }
    }

    void rectangle_csv_and_identity_distance() {
        QTemporaryDir dir;
        const QString a = subset(dir, "a.fa", 5), b = subset(dir, "b.fa", 7, 5);
        const QString csv = dir.filePath("d.csv"), table = dir.filePath("t.tsv");
        ProcessResult r = run_cli(QStringList{"allvsall", a, "--against", b, "--device", "cpu", "--distance",
                                              "identity", "--matrix-out", csv, "-o", table} +
                                  scoring());
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const std::vector<alignscope::Sequence> sa = records(a), sb = records(b);
        const QList<QByteArray> rows = slurp(csv).split('\n');
        QCOMPARE(rows[0].split(',').size(), 8);
        QCOMPARE(rows[0].split(',')[1].toStdString(), sb[0].id);
        // Every pair traced; the matrix holds 1 - identity of each.
        std::map<std::pair<int, int>, double> identity;
        for (const QByteArray& line : slurp(table).split('\n').mid(1)) {
            if (line.isEmpty()) continue;
            const QList<QByteArray> f = line.split('\t');
            QVERIFY(f[6] != "-");
            QCOMPARE(f[4].toInt(), parasail_nw(sa[f[0].toInt() - 1].residues, sb[f[1].toInt() - 1].residues));
            identity[{f[0].toInt() - 1, f[1].toInt() - 1}] = f[6].toDouble();
        }
        QCOMPARE(int(identity.size()), 35);
        for (int i = 0; i < 5; ++i) {
            const QList<QByteArray> f = rows[i + 1].split(',');
            QCOMPARE(f[0].toStdString(), sa[i].id);
            for (int j = 0; j < 7; ++j) QVERIFY(std::fabs(f[j + 1].toDouble() - (1 - identity[{i, j}])) < 1e-4);
        }
        // PHYLIP is square: refused with --against, before any work.
        r = run_cli(QStringList{"allvsall", a, "--against", b, "--matrix-out", dir.filePath("x.phy")} + scoring());
        QCOMPARE(r.exit_code, 2);
        QVERIFY(r.err.contains("--matrix-out"));
    }

    void clusters_file() {
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 12);
        const QString clusters = dir.filePath("c.tsv");
        const ProcessResult r = run_cli(QStringList{"allvsall", set, "--device", "cpu", "-o", dir.filePath("t.tsv"),
                                                    "--clusters", clusters, "--cluster-threshold", "0.8"} +
                                        scoring());
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const QList<QByteArray> rows = slurp(clusters).split('\n');
        QCOMPARE(rows[0], QByteArray("record\tid\tlength\tsingle_linkage\tcentroid_cluster\tcentroid"));
        // Single linkage from the pair table: pairs at normalised >= 0.8 share a cluster.
        std::map<int, int> single;
        for (int k = 1; k <= 12; ++k) single[k] = rows[k].split('\t')[3].toInt();
        for (const QByteArray& line : slurp(dir.filePath("t.tsv")).split('\n').mid(1)) {
            if (line.isEmpty()) continue;
            const QList<QByteArray> f = line.split('\t');
            if (f[5].toDouble() >= 0.8) QCOMPARE(single[f[0].toInt()], single[f[1].toInt()]);
        }
    }

    void project_keeps_the_traced_pairs() {
        // --project: the job is done, with its set as input, and the pairs traced
        // back (and only those) are its alignments: score parasail's, CIGAR and
        // coordinates the pair table's.
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 12, 40);
        const QString table = dir.filePath("pairs.tsv"), project = dir.filePath("runs.alsproj");
        const ProcessResult r = run_cli(QStringList{"allvsall", set, "--device", "cpu", "--tile", "4",
                                                    "--min-normalised", "0.66", "-o", table, "--project", project} +
                                        scoring());
        QVERIFY2(r.exit_code == 0, r.err.constData());
        std::map<std::pair<std::string, std::string>, QList<QByteArray>> traced;
        for (const QByteArray& line : slurp(table).split('\n')) {
            const QList<QByteArray> f = line.split('\t');
            if (f.size() == 14 && f[0] != "i" && f[13] != "*") traced[{f[2].toStdString(), f[3].toStdString()}] = f;
        }
        QVERIFY(traced.size() >= 3);
        alignscope::store::ProjectOptions options;
        options.read_only = true;
        const alignscope::store::Project p(project.toStdString(), options);
        const std::vector<alignscope::store::JobInfo> jobs = p.jobs();
        QCOMPARE(jobs.size(), std::size_t(1));
        QCOMPARE(int(jobs[0].state), int(alignscope::store::JobState::Done));
        QCOMPARE(jobs[0].spec.command, std::string("allvsall"));
        QCOMPARE(jobs[0].inputs.size(), std::size_t(1));
        const auto page = p.alignments(jobs[0].id, 0, 1000);
        QCOMPARE(page.rows.size(), traced.size());
        std::map<std::string, std::string> residues;
        for (const alignscope::Sequence& s : records(set)) residues[s.id] = s.residues;
        for (const alignscope::Alignment& a : page.rows) {
            const auto it = traced.find({a.query_id, a.target_id});
            QVERIFY2(it != traced.end(), (a.query_id + " x " + a.target_id).c_str());
            const QList<QByteArray>& f = it->second;
            QCOMPARE(a.score, std::int64_t(parasail_nw(residues[a.query_id], residues[a.target_id])));
            QCOMPARE(QByteArray::number(qlonglong(a.score)), f[4]);
            QCOMPARE(QByteArray::fromStdString(a.cigar.to_string()), f[13]);
            QCOMPARE(QByteArray::number(qlonglong(a.query_end)), f[10]);
            QCOMPARE(QByteArray::number(qlonglong(a.target_end)), f[12]);
        }
    }

    void killed_run_resumes_to_the_same_file() {
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 24);
        const QStringList common =
            QStringList{"allvsall", set, "--device", "cpu-ref", "--tile", "3", "--min-normalised", "0.85"} + scoring();
        ProcessResult r = run_cli(common + QStringList{"--matrix-out", dir.filePath("whole.phy"), "-o",
                                                       dir.filePath("whole.tsv"), "--threads", "2"});
        QVERIFY2(r.exit_code == 0, r.err.constData());

        const QString checkpoint = dir.filePath("ckpt");
        const QStringList cut =
            common + QStringList{"--matrix-out", dir.filePath("cut.phy"), "-o", dir.filePath("cut.tsv"), "--checkpoint",
                                 checkpoint,     "--checkpoint-every",    "0"};
        QProcess p;
        p.start(ALIGNSCOPE_CLI, cut + QStringList{"--threads", "1"});
        QVERIFY(p.waitForStarted());
        QElapsedTimer clock;
        clock.start();
        while (manifest_tiles(checkpoint) < 3 && clock.elapsed() < 60000 && p.state() == QProcess::Running)
            QTest::qWait(20);
        QVERIFY2(p.state() == QProcess::Running, "the run ended before it could be killed");
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        p.waitForFinished();
        const int done = manifest_tiles(checkpoint);
        QVERIFY(done >= 3 && done < 36);
        QVERIFY(!QFile::exists(dir.filePath("cut.tsv")));

        // A new run may not overwrite it; --resume goes on (another thread count) and gives the same bytes.
        r = run_cli(cut);
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--resume"), r.err.constData());
        r = run_cli(cut + QStringList{"--resume", "--threads", "2"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QVERIFY2(r.err.contains("resuming"), r.err.constData());
        QCOMPARE(slurp(dir.filePath("cut.tsv")), slurp(dir.filePath("whole.tsv")));
        QCOMPARE(slurp(dir.filePath("cut.phy")), slurp(dir.filePath("whole.phy")));
        QVERIFY(!QFile::exists(checkpoint));
    }

    void interrupted_run_keeps_its_checkpoint() {
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 20);
        const QString checkpoint = dir.filePath("ckpt");
        const QStringList args =
            QStringList{"allvsall", set, "--device",     "cpu-ref",  "--threads", "1",
                        "--tile",   "2", "--checkpoint", checkpoint, "-o",        dir.filePath("t.tsv")} +
            scoring();
        QProcess p;
        p.start(ALIGNSCOPE_CLI, args + QStringList{"--checkpoint-every", "0"});
        QVERIFY(p.waitForStarted());
        QElapsedTimer clock;
        clock.start();
        while (manifest_tiles(checkpoint) < 2 && clock.elapsed() < 60000 && p.state() == QProcess::Running)
            QTest::qWait(20);
        QVERIFY(p.state() == QProcess::Running);
        clock.restart();
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(10000));
        QVERIFY2(clock.elapsed() < 2000, "cancel took longer than 2 s");
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains("--resume"), err.constData());
        QVERIFY(!QFile::exists(dir.filePath("t.tsv")));
        QVERIFY(manifest_tiles(checkpoint) >= 2);
        const ProcessResult r = run_cli(args + QStringList{"--resume"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(slurp(dir.filePath("t.tsv")).count('\n'), 1 + 20 * 19 / 2);
    }

    void bad_input_is_one_line_and_exit_2_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("names");
        QTest::newRow("missing file") << QStringList{"allvsall", "/nonexistent/x.fa"} << "/nonexistent/x.fa";
        QTest::newRow("matrix extension") << QStringList{"allvsall", "SET", "--matrix-out", "m.txt"} << "--matrix-out";
        QTest::newRow("resume without checkpoint") << QStringList{"allvsall", "SET", "--resume"} << "--checkpoint";
        QTest::newRow("tile 0") << QStringList{"allvsall", "SET", "--tile", "0"} << "--tile";
        QTest::newRow("distance") << QStringList{"allvsall", "SET", "--distance", "kimura"} << "--distance";
        QTest::newRow("format") << QStringList{"allvsall", "SET", "--format", "sam"} << "--format";
        QTest::newRow("one record") << QStringList{"allvsall", "ONE"} << "two";
    }
    void bad_input_is_one_line_and_exit_2() {
        QFETCH(QStringList, args);
        QFETCH(QString, names);
        QTemporaryDir dir;
        const QString set = subset(dir, "set.fa", 4), one = subset(dir, "one.fa", 1);
        for (QString& a : args) {
            if (a == "SET") a = set;
            if (a == "ONE") a = one;
        }
        const ProcessResult r = run_cli(args);
        QCOMPARE(r.exit_code, 2);
        QVERIFY(!r.crashed);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains(names.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestAllVsAllCli)
#include "test_allvsall_cli.moc"
