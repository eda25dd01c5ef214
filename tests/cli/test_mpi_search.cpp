// `mpirun -np 3 alignscope-cli search` on the CPU devices of one machine: every
// rank searches a slice of a real database (a cut of mmseqs2-examples' DB.fasta
// with copies of one record spread through it, so that hits tie across ranks)
// and rank 0 writes files that must be byte for byte those of one process; the
// ties must go to the earlier FASTA records; a rank whose device fails ends the
// run with one message naming the rank and the host. Needs Open MPI's mpirun
// (Debian openmpi-bin) and mmseqs2-examples, both installed by scripts/check.
#include "cli_runner.hpp"

#include <QDir>
#include <QtTest>

#include <zlib.h>

#include <unistd.h>

namespace {

const QString kExamples = QStringLiteral("/usr/share/doc/mmseqs2/example-data/");

QByteArray slurp(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The first `count` FASTA records of a gzip file, each as its header line and
// its sequence lines.
QList<QByteArray> gz_records(const QString& path, int count) {
    QList<QByteArray> records;
    gzFile in = gzopen(path.toLocal8Bit().constData(), "rb");
    if (!in) return records;
    char line[65536];
    while (gzgets(in, line, sizeof line)) {
        if (line[0] == '>') {
            if (records.size() == count) break;
            records.push_back({});
        }
        if (!records.isEmpty()) records.back() += line;
    }
    gzclose(in);
    return records;
}

QByteArray record_id(const QByteArray& record) {
    const QByteArray header = record.left(record.indexOf('\n')).mid(1);
    const int space = header.indexOf(' ');
    return space < 0 ? header : header.left(space);
}

QByteArray with_id(const QByteArray& record, const QByteArray& id) {
    return ">" + id + record.mid(record.indexOf('\n'));
}

QStringList mpirun_args(int ranks) {
    return {"--allow-run-as-root", "--oversubscribe", "-np", QString::number(ranks), ALIGNSCOPE_CLI};
}

ProcessResult run_mpi(int ranks, const QStringList& args) {
    return run_program(QStandardPaths::findExecutable("mpirun"), mpirun_args(ranks) + args, 120000);
}

// Lines of a pair-format report but the run's date.
QByteArray without_rundate(const QByteArray& text) {
    QByteArray out;
    for (const QByteArray& line : text.split('\n'))
        if (!line.startsWith("# Rundate:")) out += line + '\n';
    return out;
}

}  // namespace

class TestMpiSearch : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString database_, queries_;
    QByteArray tied_id_;          // the record copied through the database
    QList<QByteArray> tied_ids_;  // it and its copies, in FASTA order

    QStringList search_args(const QString& output) const {
        return {"search",   "-q",  queries_,    "-d", database_, "--db-cache", "off",
                "--device", "cpu", "--threads", "1",  "--quiet", "-o",         output};
    }

private slots:
    void initTestCase() {
        if (!have_program("mpirun"))
            QFAIL("mpirun is not installed: install the Debian packages openmpi-bin and libopenmpi-dev");
        if (!QFile::exists(kExamples + "DB.fasta.gz"))
            QFAIL("mmseqs2-examples is not installed (scripts/check installs it)");
        QVERIFY(dir_.isValid());
        // 1,200 real proteins; record 8 is copied five times, spread through
        // the file: six identical sequences, which the length sort puts side
        // by side and the ranks' slices then split among all three ranks.
        const QList<QByteArray> db = gz_records(kExamples + "DB.fasta.gz", 1200);
        QCOMPARE(db.size(), 1200);
        const QByteArray tied = db[7];
        tied_id_ = record_id(tied);
        tied_ids_ = {tied_id_};
        QFile out(dir_.filePath("db.fa"));
        QVERIFY(out.open(QIODevice::WriteOnly));
        int copies = 0;
        for (int i = 0; i < db.size(); ++i) {
            out.write(db[i]);
            if (i == 150 || i == 450 || i == 700 || i == 950 || i == 1199) {
                const QByteArray id = "copy" + QByteArray::number(++copies) + "_of_record_8";
                out.write(with_id(tied, id));
                tied_ids_.push_back(id);
            }
        }
        out.close();
        database_ = out.fileName();
        // Six real queries and the copied record itself.
        QFile q(dir_.filePath("queries.fa"));
        QVERIFY(q.open(QIODevice::WriteOnly));
        for (const QByteArray& r : gz_records(kExamples + "QUERY.fasta.gz", 6)) q.write(r);
        q.write(with_id(tied, "record_8_as_query"));
        q.close();
        queries_ = q.fileName();
    }

    void three_ranks_write_the_bytes_of_one_process_data() {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<QStringList>("extra");
        QTest::newRow("tsv, top 5, E-values") << 3 << QStringList{"--top", "5"};
        QTest::newRow("json, top 20, --evalue 1e-5")
            << 3 << QStringList{"--format", "json", "--top", "20", "--evalue", "1e-5"};
        QTest::newRow("pair, top 3") << 3 << QStringList{"--format", "pair", "--top", "3"};
        QTest::newRow("score only, 2 ranks") << 2 << QStringList{"--no-traceback", "--top", "8"};
        QTest::newRow("global, batches of 3 queries")
            << 3 << QStringList{"--mode", "global", "--query-batch", "3", "--top", "4"};
    }
    void three_ranks_write_the_bytes_of_one_process() {
        QFETCH(int, ranks);
        QFETCH(QStringList, extra);
        // Both runs write the same path (the pair format names its command line).
        const QString output = dir_.filePath("hits.out");
        ProcessResult one = run_cli(search_args(output) + extra);
        QVERIFY2(one.exit_code == 0, one.err.constData());
        const QByteArray expected = slurp(output);
        QVERIFY(QFile::remove(output));
        ProcessResult mpi = run_mpi(ranks, search_args(output) + extra);
        QVERIFY2(mpi.exit_code == 0, mpi.err.constData() + QByteArray(mpi.out));
        const QByteArray got = slurp(output);
        QVERIFY(QFile::remove(output));
        QVERIFY(expected.count('\n') > 10);
        QVERIFY(expected.contains(tied_id_));
        QCOMPARE(without_rundate(got), without_rundate(expected));
    }

    // A database of two sequences leaves rank 2 without any: it reports no
    // hits, and the output is still one process's. Scores only: the kernel
    // column names the scan kernels of the whole database, and only the rank
    // that holds record 8 (which its copy as a query matches beyond 8-bit
    // lanes) rescored at 16 bits.
    void more_ranks_than_database_sequences() {
        const QList<QByteArray> db_records = gz_records(kExamples + "DB.fasta.gz", 8);
        QFile db(dir_.filePath("two.fa"));
        QVERIFY(db.open(QIODevice::WriteOnly));
        db.write(db_records[0]);
        db.write(db_records[7]);
        db.close();
        QStringList args = search_args(dir_.filePath("two.tsv")) + QStringList{"--no-traceback"};
        args.replace(args.indexOf(database_), db.fileName());
        ProcessResult one = run_cli(args);
        QVERIFY2(one.exit_code == 0, one.err.constData());
        const QByteArray expected = slurp(dir_.filePath("two.tsv"));
        ProcessResult mpi = run_mpi(3, args);
        QVERIFY2(mpi.exit_code == 0, mpi.err.constData());
        QCOMPARE(expected.count('\n'), 1 + 2 * 7);
        QVERIFY2(expected.contains("_s8,") && expected.contains("_s16"), expected.constData());
        QCOMPARE(slurp(dir_.filePath("two.tsv")), expected);
    }

    // The copied record as a query scores the same against itself and its five
    // copies (a local self-alignment is the best any target can give under
    // BLOSUM62, whose diagonal is each row's maximum): --top 4 must report the
    // four earliest of the six in the FASTA, though the six lie on all ranks.
    void ties_go_to_the_earlier_records() {
        const QString output = dir_.filePath("ties.tsv");
        ProcessResult mpi = run_mpi(3, search_args(output) + QStringList{"--top", "4"});
        QVERIFY2(mpi.exit_code == 0, mpi.err.constData());
        const QList<QByteArray> lines = slurp(output).split('\n');
        QVERIFY(QFile::remove(output));
        const QList<QByteArray> header = lines.front().split('\t');
        const int target = static_cast<int>(header.indexOf("target")),
                  score = static_cast<int>(header.indexOf("score")), rank = static_cast<int>(header.indexOf("rank")),
                  evalue = static_cast<int>(header.indexOf("evalue"));
        QVERIFY(target >= 0 && score >= 0 && rank >= 0 && evalue >= 0);
        QList<QList<QByteArray>> self;
        for (const QByteArray& line : lines)
            if (line.startsWith("record_8_as_query\t")) self.push_back(line.split('\t'));
        QCOMPARE(self.size(), 4);
        for (int k = 0; k < 4; ++k) {
            QCOMPARE(self[k][target], tied_ids_[k]);
            QCOMPARE(self[k][rank], QByteArray::number(k + 1));
            QCOMPARE(self[k][score], self[0][score]);
            QCOMPARE(self[k][evalue], self[0][evalue]);
        }
    }

    // --project records the same hits and alignments as one process.
    void the_project_holds_the_hits_of_one_process() {
        QStringList exports;
        for (const QString& tag : {QStringLiteral("one"), QStringLiteral("mpi")}) {
            const QString project = dir_.filePath(tag + ".alsproj");
            const QStringList args = search_args(dir_.filePath(tag + ".tsv")) + QStringList{"--project", project};
            const ProcessResult r = tag == "one" ? run_cli(args) : run_mpi(3, args);
            QVERIFY2(r.exit_code == 0, r.err.constData());
            for (const QString& table : {QStringLiteral("hits"), QStringLiteral("alignments")}) {
                const QString file = dir_.filePath(tag + "." + table + ".tsv");
                const ProcessResult e =
                    run_cli({"project", project, "export", "1", "--format", "tsv", "--table", table, "-o", file});
                QVERIFY2(e.exit_code == 0, e.err.constData());
                exports << file;
            }
        }
        QVERIFY(slurp(exports[0]).count('\n') > 10);
        QCOMPARE(slurp(exports[2]), slurp(exports[0]));
        QCOMPARE(slurp(exports[3]), slurp(exports[1]));
    }

    // Each rank opens its own --device (hosts may differ): rank 2 is given a
    // GPU that no machine has, fails there, and rank 0 ends the run naming it;
    // no output is left behind.
    void a_failing_rank_is_named_with_its_host() {
        QTemporaryDir out_dir;
        const QString output = out_dir.filePath("hits.tsv");
        QStringList args = mpirun_args(2) + search_args(output);
        args << ":"
             << "-np"
             << "1" << ALIGNSCOPE_CLI << search_args(output);
        args.replace(args.lastIndexOf("cpu"), "gpu:99");
        const ProcessResult r = run_program(QStandardPaths::findExecutable("mpirun"), args, 60000);
        QVERIFY(r.exit_code != 0);
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        const QByteArray expected = "alignscope-cli: error: rank 2 on " + QByteArray(host) + ": --device 'gpu:99'";
        QVERIFY2(r.err.contains(expected), r.err.constData());
        QCOMPARE(r.err.count("alignscope-cli: error:"), 1);
        QVERIFY2(QDir(out_dir.path()).entryList(QDir::Files | QDir::Hidden).isEmpty(), "an output was left behind");
    }

    void verify_and_bench_refuse_mpirun() {
        const ProcessResult r = run_mpi(2, {"search", "--verify", "--device", "cpu", "--verify-queries", "1"});
        QVERIFY(r.exit_code != 0);
        QVERIFY2(r.err.contains("run them without mpirun"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestMpiSearch)
#include "test_mpi_search.moc"
