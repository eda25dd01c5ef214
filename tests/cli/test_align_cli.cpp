// alignscope-cli align end to end through the real binary: output formats parsed
// back, every kind of bad input ending in one line on stderr and exit status 2,
// and no output file left half-written.
#include "cli_runner.hpp"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <sqlite3.h>

#include <csignal>

#include <sys/stat.h>

namespace {

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& content) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (f.open(QIODevice::WriteOnly)) f.write(content);
    return path;
}

const QByteArray kProtein = ">p1 first\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLL\n>p2\nMVLSPADKTNVKAAWGKVGAHAGEYGAEALERMF\n";
const QByteArray kDna = ">d1\nACGTACGTTAGCATCGATCGATCGGGCTA\n>d2\nACGTTCGTTAGCTCGATCGTTCGGGCTAA\n";

}  // namespace

class TestAlignCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString protein_, dna_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        protein_ = write_file(dir_, "protein.fa", kProtein);
        dna_ = write_file(dir_, "dna.fa", kDna);
    }

    void json_fields() {
        const ProcessResult r = run_cli({"align", protein_, protein_, "--mode", "local", "--format", "json"});
        QCOMPARE(r.exit_code, 0);
        const auto rows = parse_json_lines(r.out);
        QCOMPARE(rows.size(), 4);  // all against all
        for (const auto& o : rows) {
            for (const char* key : {"query", "target", "score", "mode", "query_begin", "query_end", "target_begin",
                                    "target_end", "cigar", "identity", "similarity", "gaps", "length", "device"})
                QVERIFY2(o.contains(key), key);
            QCOMPARE(o["mode"].toString(), QString("local"));
            QCOMPARE(o["device"].toString(), QString("cpu"));
            QVERIFY(o["query_begin"].toInt() >= 1 && o["query_begin"].toInt() <= o["query_end"].toInt());
        }
        // A sequence against itself: the whole sequence, every column identical.
        QCOMPARE(rows[0]["query"].toString(), QString("p1"));
        QCOMPARE(rows[0]["target"].toString(), QString("p1"));
        QCOMPARE(rows[0]["identity"].toDouble(), 1.0);
        QCOMPARE(rows[0]["cigar"].toString(), QString("33="));
    }

    void half_step_scores_in_user_units() {
        // Two DNA sequences whose best global alignment needs gaps: the score must
        // come back in the user's units (a multiple of 0.5), not scaled.
        const ProcessResult r = run_cli({"align", dna_, dna_, "--zip", "--mode", "global", "--format", "json",
                                         "--match", "2", "--mismatch", "-3", "--gap-open", "5", "--gap-extend", "1.5"});
        QCOMPARE(r.exit_code, 0);
        const auto rows = parse_json_lines(r.out);
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0]["score"].toDouble(), 2.0 * 29);
        const double s = rows[1]["score"].toDouble();
        QCOMPARE(s * 2, std::round(s * 2));
    }

    void tsv_and_sam() {
        const ProcessResult tsv = run_cli({"align", dna_, dna_, "--zip", "--format", "tsv"});
        QCOMPARE(tsv.exit_code, 0);
        const auto lines = tsv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[0].startsWith("query\ttarget\tscore"));
        QCOMPARE(lines[1].split('\t').size(), lines[0].split('\t').size());

        const ProcessResult sam = run_cli({"align", dna_, dna_, "--zip", "--mode", "local", "--format", "sam"});
        QCOMPARE(sam.exit_code, 0);
        int records = 0, sq = 0;
        for (const QByteArray& line : sam.out.split('\n')) {
            if (line.startsWith("@SQ")) ++sq;
            if (line.isEmpty() || line.startsWith('@')) continue;
            const auto f = line.split('\t');
            QVERIFY(f.size() >= 11);
            QCOMPARE(f[1], QByteArray("0"));
            // CIGAR query span (=, X, I, S) equals the read length.
            qint64 span = 0, n = 0;
            for (char c : f[5]) {
                if (c >= '0' && c <= '9') n = n * 10 + (c - '0');
                else {
                    if (c == '=' || c == 'X' || c == 'I' || c == 'S' || c == 'M') span += n;
                    n = 0;
                }
            }
            QCOMPARE(span, qint64(f[9].size()));
            ++records;
        }
        QCOMPARE(records, 2);
        QCOMPARE(sq, 2);
    }

    void pair_format_header() {
        const ProcessResult r = run_cli({"align", protein_, protein_, "--zip"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.contains("# Aligned_sequences: 2"));
        QVERIFY(r.out.contains("# Matrix: BLOSUM62"));
        QVERIFY(r.out.contains("# Gap_penalty: 10"));
        QVERIFY(r.out.contains("# Extend_penalty: 0.5"));
        QVERIFY(r.out.contains("# Score: "));
    }

    void output_file_and_timeline() {
        const QString out = dir_.filePath("out.json"), trace = dir_.filePath("trace.json");
        const ProcessResult r = run_cli(
            {"align", protein_, protein_, "--format", "json", "-o", out, "--timeline", trace, "--threads", "2"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(r.out.isEmpty());
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(parse_json_lines(f.readAll()).size(), 4);
        QFile t(trace);
        QVERIFY(t.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(t.readAll());
        QVERIFY(doc.isObject());
        QVERIFY(doc.object()["traceEvents"].toArray().size() > 0);
    }

    void bad_input_data() {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("expected");  // a substring of the one stderr line
        const QString missing = dir_.filePath("missing.fa");
        const QString garbage = write_file(dir_, "garbage.fa", QByteArray("\x89PNG\r\n\x1a\n\0\0\0", 11));
        const QString empty_seq = write_file(dir_, "empty.fa", ">e\n\n>f\nACGT\n");
        const QString bad_letter = write_file(dir_, "bad.fa", ">b\nACGT#ACGT\n");
        QTest::newRow("missing file") << QStringList{"align", missing, dna_} << missing;
        QTest::newRow("garbage bytes") << QStringList{"align", garbage, dna_} << garbage;
        QTest::newRow("empty sequence") << QStringList{"align", empty_seq, dna_} << "empty";
        QTest::newRow("invalid residue") << QStringList{"align", bad_letter, dna_} << "'#'";
        QTest::newRow("unknown matrix") << QStringList{"align", protein_, protein_, "--matrix", "BLOSUM99"}
                                        << "BLOSUM99";
        QTest::newRow("protein with DNA matrix")
            << QStringList{"align", protein_, protein_, "--matrix", "EDNAFULL"} << "EDNAFULL";
        QTest::newRow("match/mismatch on protein")
            << QStringList{"align", protein_, protein_, "--match", "1", "--mismatch", "-1"} << "--match";
        QTest::newRow("negative gap open") << QStringList{"align", dna_, dna_, "--gap-open", "-3"} << "--gap-open";
        QTest::newRow("quarter step") << QStringList{"align", dna_, dna_, "--gap-extend", "0.25"} << "--gap-extend";
        QTest::newRow("extend above open")
            << QStringList{"align", dna_, dna_, "--gap-open", "1", "--gap-extend", "2"} << "--gap-extend";
        QTest::newRow("unknown mode") << QStringList{"align", dna_, dna_, "--mode", "fitting"} << "--mode";
        QTest::newRow("unknown format") << QStringList{"align", dna_, dna_, "--format", "xml"} << "--format";
        QTest::newRow("unknown device") << QStringList{"align", dna_, dna_, "--device", "tpu"} << "--device";
        QTest::newRow("zip count mismatch")
            << QStringList{"align", dna_, write_file(dir_, "one.fa", ">x\nACGT\n"), "--zip"} << "--zip";
        QTest::newRow("DNA against protein") << QStringList{"align", dna_, protein_} << "protein";
        QTest::newRow("unknown flag") << QStringList{"align", dna_, dna_, "--frobnicate"} << "frobnicate";
        QTest::newRow("begins off with traceback")
            << QStringList{"align", dna_, dna_, "--zip", "--no-begins"} << "--no-begins needs --no-traceback";
        QTest::newRow("output into a missing folder")
            << QStringList{"align", dna_, dna_, "-o", dir_.filePath("nope/out.txt")} << "nope";
        // Numbers are echoed as typed, and a size past any machine is called too large.
        QTest::newRow("penalty echoed as typed") << QStringList{"align", dna_, dna_, "--gap-open", "1000000.5"}
                                                 << "--gap-open: expected a penalty of at most 1000000, got 1000000.5";
        QTest::newRow("gap extend inf") << QStringList{"align", dna_, dna_, "--gap-extend", "inf"}
                                        << "--gap-extend: expected a finite number, got 'inf'";
        QTest::newRow("gpu memory past any machine") << QStringList{"align", dna_, dna_, "--gpu-mem", "99999999999999G"}
                                                     << "--gpu-mem: '99999999999999G' is too large";
        QTest::newRow("streams past int") << QStringList{"align", dna_, dna_, "--streams", "2147483648"}
                                          << "--streams: '2147483648' is too large (at most 2147483647)";
        QTest::newRow("threads with a unit")
            << QStringList{"align", dna_, dna_, "--threads", "4k"} << "--threads: expected a whole number, got '4k'";
        // Settings that would be ignored or contradict the documentation are refused.
        QTest::newRow("positive mismatch")
            << QStringList{"align", dna_, dna_, "--match", "1", "--mismatch", "3"} << "--mismatch must be negative";
        QTest::newRow("free ends in global mode")
            << QStringList{"align", dna_, dna_, "--free-ends", "qb"} << "--free-ends applies to --mode semiglobal";
        QTest::newRow("free ends in local mode")
            << QStringList{"align", dna_, dna_, "--mode", "local", "--free-ends", "all"} << "--free-ends";
    }
    void bad_input() {
        QFETCH(QStringList, arguments);
        QFETCH(QString, expected);
        const ProcessResult r = run_cli(arguments);
        QVERIFY2(!r.crashed, "crashed");
        QCOMPARE(r.exit_code, 2);
        QVERIFY(r.out.isEmpty());
        const QByteArray err = r.err.trimmed();
        QVERIFY2(!err.contains('\n'), err.constData());
        QVERIFY2(err.contains(expected.toUtf8()), err.constData());
    }

    // --kernel in the database scan's former family word is read as today's
    // name, said in one warning line; the backend then judges today's name
    // (cpu-ref runs no database-scan kernel for a pair job).
    void former_kernel_name_is_read_as_today() {
        const ProcessResult r =
            run_cli({"align", dna_, dna_, "--device", "cpu-ref", "--kernel", "nw_affine_dbscan_s32"});
        QVERIFY2(!r.crashed, "crashed");
        QCOMPARE(r.exit_code, 2);
        const QStringList lines = QString::fromUtf8(r.err).trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0], QString("alignscope-cli: warning: --kernel 'nw_affine_dbscan_s32' is the former name of "
                                   "nw_affine_search_s32; read as nw_affine_search_s32"));
        QVERIFY2(lines[1].contains("--kernel 'nw_affine_search_s32'"), qPrintable(lines[1]));
        QVERIFY2(!lines[1].contains("dbscan"), qPrintable(lines[1]));
    }

    // An input read from a pipe (a FIFO, process substitution) cannot be read
    // again to hash or embed it: the project records it as what was read.
    void project_records_a_piped_input() {
        QTemporaryDir run_dir;
        QVERIFY(run_dir.isValid());
        const QString fifo = run_dir.filePath("queries.fifo");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QProcess writer;
        writer.start("sh", {"-c", "cat \"$0\" > \"$1\"", dna_, fifo});
        QVERIFY(writer.waitForStarted(10000));
        const QString project = run_dir.filePath("p.alsproj");
        const ProcessResult r = run_cli({"align", fifo, dna_, "--project", project, "--format", "tsv"}, 30000);
        QVERIFY(writer.waitForFinished(10000));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(r.out.trimmed().split('\n').size(), 1 + 4);
        const ProcessResult listed = run_cli({"project", project, "list"});
        QCOMPARE(listed.exit_code, 0);
        QVERIFY2(listed.out.contains("2 inputs"), listed.out.constData());
    }

    // Records that repeat an id: one warning line per file on stderr, however
    // often the file is given; the alignments are made all the same.
    void duplicate_ids_warned_once() {
        const QString dup = write_file(dir_, "dup.fa", ">x\nACGTACGT\n>y\nACGTTCGT\n>x\nACGAACGT\n");
        const ProcessResult r = run_cli({"align", dup, dup, "--format", "tsv"});
        QCOMPARE(r.exit_code, 0);
        QCOMPARE(r.out.trimmed().split('\n').size(), 1 + 9);
        const QList<QByteArray> lines = r.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines[0].startsWith(
                     "alignscope-cli: warning: " + dup.toUtf8() +
                     ": 1 record repeats the id of an earlier one (the first: record 3, 'x', as record 1)"),
                 r.err.constData());
        QVERIFY(run_cli({"align", dna_, dna_}).err.isEmpty());
    }

    // Output that could not be written is an error: exit 2 and one line, not 0.
    void write_error_on_standard_output() {
        if (!QFile::exists("/dev/full")) QSKIP("no /dev/full on this system");
        for (const QStringList& arguments : {QStringList{"align", dna_, dna_}, QStringList{"devices"},
                                             QStringList{"align", dna_, dna_, "--format", "json"}}) {
            QProcess process;
            process.setStandardOutputFile("/dev/full");
            process.start(QStringLiteral(ALIGNSCOPE_CLI), arguments);
            QVERIFY(process.waitForFinished(60000));
            QCOMPARE(process.exitStatus(), QProcess::NormalExit);
            QCOMPARE(process.exitCode(), 2);
            const QByteArray err = process.readAllStandardError().trimmed();
            QVERIFY2(err.startsWith("alignscope-cli: error: ") && err.contains("standard output") &&
                         !err.contains('\n'),
                     err.constData());
        }
        // The same commands succeed where output can be written.
        QCOMPARE(run_cli({"align", dna_, dna_}).exit_code, 0);
    }

    // A project another process holds locked: the command says that it waits,
    // for whom (a live job's pid and host) and how long, then gives up with one
    // error; once the lock is gone the same command records its job.
    void project_locked_by_another_process() {
        QTemporaryDir run_dir;
        QVERIFY(run_dir.isValid());
        const QString project = run_dir.filePath("p.alsproj");
        QCOMPARE(run_cli({"align", dna_, dna_, "--project", project}).exit_code, 0);
        // A live job of another process: verify, recording as it runs.
        QProcess live;
        live.start(QStringLiteral(ALIGNSCOPE_CLI),
                   {"verify", "--device", "cpu-ref", "--pairs", "100000000", "--project", project});
        QVERIFY(live.waitForStarted(10000));
        const qint64 live_pid = live.processId();
        QElapsedTimer clock;
        clock.start();
        auto jobs = [&project] { return run_cli({"project", project, "list"}).out.count("running"); };
        while (jobs() == 0 && clock.elapsed() < 20000) QThread::msleep(50);
        QVERIFY2(jobs() == 1, "the verify job did not start");
        // This test's connection holds the write lock, as a sqlite3 shell would.
        sqlite3* holder = nullptr;
        QCOMPARE(sqlite3_open(project.toUtf8().constData(), &holder), SQLITE_OK);
        sqlite3_busy_timeout(holder, 10000);
        QCOMPARE(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
        clock.restart();
        const ProcessResult waited = run_cli({"align", dna_, dna_, "--project", project, "--project-wait", "2"});
        const qint64 elapsed = clock.elapsed();
        sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
        sqlite3_close(holder);
        ::kill(static_cast<pid_t>(live_pid), SIGTERM);
        QVERIFY(live.waitForFinished(30000));
        QCOMPARE(waited.exit_code, 2);
        const QList<QByteArray> lines = waited.err.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        const QByteArray who = "job 2, verify, pid " + QByteArray::number(live_pid) + " on ";
        QVERIFY2(lines[0].contains(project.toUtf8() + " is locked by another process (running there: " + who) &&
                     lines[0].contains("waiting up to 2 s"),
                 waited.err.constData());
        QVERIFY2(lines[1].contains("is busy: another process kept it locked for more than 2 s"),
                 waited.err.constData());
        QVERIFY2(elapsed >= 1900 && elapsed < 15000, qPrintable(QString::number(elapsed)));
        // Free again: recorded, with nothing said about waiting.
        const ProcessResult free = run_cli({"align", dna_, dna_, "--project", project, "--project-wait", "2"});
        QCOMPARE(free.exit_code, 0);
        QVERIFY2(!free.err.contains("locked"), free.err.constData());
    }

    void failed_run_leaves_earlier_output_untouched() {
        const QString out = write_file(dir_, "keep.txt", "earlier result\n");
        const ProcessResult r = run_cli({"align", dna_, dna_, "--matrix", "NOPE", "-o", out});
        QCOMPARE(r.exit_code, 2);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("earlier result\n"));
        // No temporary files are left behind.
        const QStringList leftovers = QDir(dir_.path()).entryList({".keep.txt.tmp*"}, QDir::Hidden | QDir::Files);
        QVERIFY2(leftovers.isEmpty(), qPrintable(leftovers.join(',')));
    }

    void devices_lists_cpu_backends() {
        const ProcessResult r = run_cli({"devices", "--json"});
        QCOMPARE(r.exit_code, 0);
        const QJsonArray list = QJsonDocument::fromJson(r.out).array();
        QStringList ids;
        for (const auto& v : list) ids << v.toObject()["id"].toString();
        QVERIFY(ids.contains("cpu-ref"));
        QVERIFY(ids.contains("cpu"));
        bool has_gpu_entry = false;
        for (const auto& v : list)
            if (v.toObject()["kind"].toString() == "gpu") {
                has_gpu_entry = true;
                if (!v.toObject()["available"].toBool())
                    QVERIFY(!v.toObject()["unavailable_reason"].toString().isEmpty());
            }
        QVERIFY2(has_gpu_entry, "devices must say what became of the GPU");
    }
};

QTEST_GUILESS_MAIN(TestAlignCli)
#include "test_align_cli.moc"
