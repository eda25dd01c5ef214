// align --zip streamed from file to file, through the real binary: the output
// in input order across many tiny chunks and the same bytes as the in-memory
// path (the one a --project run takes), gzip input, Ctrl-C in the middle
// leaving no file, repeated ids and unequal files still reported, and memory
// that stays flat while the input grows.
#include "cli_runner.hpp"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <zlib.h>

#include <csignal>
#include <random>

#include <sys/resource.h>

namespace {

// Pairs of related random proteins (a fixed seed): query k is "qk", target k "tk".
QByteArray proteins(int count, int min_length, int max_length, unsigned seed, char prefix, bool mutate) {
    std::mt19937 rng(seed);
    const char* letters = "ACDEFGHIKLMNPQRSTVWY";
    QByteArray text;
    text.reserve(count * (max_length + 16));
    for (int k = 0; k < count; ++k) {
        std::mt19937 pair_rng(seed * 7919u + static_cast<unsigned>(k));
        const int length =
            min_length + static_cast<int>(pair_rng() % static_cast<unsigned>(max_length - min_length + 1));
        text += '>';
        text += prefix;
        text += QByteArray::number(k);
        text += " pair ";
        text += QByteArray::number(k);
        text += '\n';
        for (int i = 0; i < length; ++i) {
            char c = letters[pair_rng() % 20];
            if (mutate && rng() % 5 == 0) c = letters[rng() % 20];
            text += c;
        }
        text += '\n';
    }
    return text;
}

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& content) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (f.open(QIODevice::WriteOnly)) f.write(content);
    return path;
}

QString write_gzip(const QTemporaryDir& dir, const QString& name, const QByteArray& content) {
    const QString path = dir.filePath(name);
    gzFile f = gzopen(path.toLocal8Bit().constData(), "wb");
    if (f) {
        gzwrite(f, content.constData(), static_cast<unsigned>(content.size()));
        gzclose(f);
    }
    return path;
}

// The lines of an output that do not name the command or the time it ran.
QByteArray without_run_lines(const QByteArray& text) {
    QByteArray kept;
    for (const QByteArray& line : text.split('\n'))
        if (!line.startsWith("@PG") && !line.startsWith("# Commandline") && !line.startsWith("# Rundate"))
            kept += line + '\n';
    return kept;
}

class ChunkSize {
public:
    explicit ChunkSize(int pairs) { qputenv("ALIGNSCOPE_PAIR_CHUNK", QByteArray::number(pairs)); }
    ~ChunkSize() { qunsetenv("ALIGNSCOPE_PAIR_CHUNK"); }
};

long children_max_rss_kb() {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return usage.ru_maxrss;
}

}  // namespace

class TestAlignPipelineCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString queries_, targets_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        queries_ = write_file(dir_, "q.fa", proteins(300, 5, 90, 3, 'q', false));
        targets_ = write_file(dir_, "t.fa", proteins(300, 5, 90, 3, 't', true));
    }

    // Chunks of 1, 3 and 64 pairs, the default, and the in-memory path: one output.
    void ordered_across_chunks_data() {
        QTest::addColumn<QString>("format");
        for (const char* format : {"tsv", "json", "sam", "pair"}) QTest::newRow(format) << format;
    }
    void ordered_across_chunks() {
        QFETCH(QString, format);
        const QStringList job{"align", queries_,   targets_, "--zip",     "--mode",
                              "local", "--format", format,   "--threads", "2"};
        const QString project = dir_.filePath("in_memory_" + format + ".alsproj");
        const ProcessResult in_memory = run_cli(job + QStringList{"--project", project});
        QVERIFY2(in_memory.exit_code == 0, in_memory.err.constData());
        const QByteArray expected = without_run_lines(in_memory.out);
        for (int chunk : {1, 3, 64, 0}) {
            std::optional<ChunkSize> size;
            if (chunk) size.emplace(chunk);
            const ProcessResult streamed = run_cli(job);
            QVERIFY2(streamed.exit_code == 0, streamed.err.constData());
            QVERIFY2(without_run_lines(streamed.out) == expected,
                     qPrintable(format + " in chunks of " + QString::number(chunk)));
        }
        if (format == "tsv") {
            // Row k is pair k.
            const QList<QByteArray> rows = expected.trimmed().split('\n');
            QCOMPARE(rows.size(), 301);
            for (int k = 1; k < rows.size(); ++k) {
                const QList<QByteArray> fields = rows[k].split('\t');
                QCOMPARE(fields[0], "q" + QByteArray::number(k - 1));
                QCOMPARE(fields[1], "t" + QByteArray::number(k - 1));
            }
        }
    }

    void gzip_input_same_as_plain() {
        ChunkSize size(7);
        const QString gz_queries = write_gzip(dir_, "q.fa.gz", proteins(300, 5, 90, 3, 'q', false));
        const QString gz_targets = write_gzip(dir_, "t.fa.gz", proteins(300, 5, 90, 3, 't', true));
        const ProcessResult plain = run_cli({"align", queries_, targets_, "--zip", "--format", "tsv"});
        const ProcessResult gzipped = run_cli({"align", gz_queries, gz_targets, "--zip", "--format", "tsv"});
        QVERIFY2(plain.exit_code == 0 && gzipped.exit_code == 0, gzipped.err.constData());
        QCOMPARE(gzipped.out, plain.out);
        // A truncated gzip file: one error naming it, nothing written.
        QFile whole(gz_targets);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QString truncated = write_file(dir_, "cut.fa.gz", whole.readAll().left(2000));
        const ProcessResult cut = run_cli({"align", queries_, truncated, "--zip", "--format", "tsv"});
        QCOMPARE(cut.exit_code, 2);
        QVERIFY(cut.out.isEmpty());
        QVERIFY2(cut.err.contains("cut.fa.gz") && cut.err.contains("truncated") && !cut.err.trimmed().contains('\n'),
                 cut.err.constData());
    }

    // Read whole, the job would have said these before aligning; streamed, it
    // says them once the files are read, and writes nothing on a failure.
    void unequal_files_and_repeated_ids() {
        ChunkSize size(5);
        const QString out = dir_.filePath("unequal.tsv");
        const QString shorter = write_file(dir_, "short.fa", proteins(299, 5, 90, 3, 't', true));
        const ProcessResult unequal = run_cli({"align", queries_, shorter, "--zip", "--format", "tsv", "-o", out});
        QCOMPARE(unequal.exit_code, 2);
        QVERIFY2(unequal.err.trimmed() == "alignscope-cli: error: --zip pairs record i with record i, but " +
                                              queries_.toUtf8() + " has 300 records and " + shorter.toUtf8() +
                                              " has 299",
                 unequal.err.constData());
        QVERIFY(!QFile::exists(out));
        QByteArray repeated = proteins(40, 5, 30, 9, 'q', false);
        repeated.replace(">q17 ", ">q3 ");
        const QString dup = write_file(dir_, "dup.fa", repeated);
        const ProcessResult warned = run_cli({"align", dup, dup, "--zip", "--format", "tsv"});
        QCOMPARE(warned.exit_code, 0);
        QCOMPARE(warned.out.trimmed().split('\n').size(), 41);
        QCOMPARE(warned.err.trimmed(), "alignscope-cli: warning: " + dup.toUtf8() +
                                           ": 1 record repeats the id of an earlier one (the first: record 18, 'q3', "
                                           "as record 4); results name records by id, so theirs cannot be told apart");
    }

    // Ctrl-C in the middle of a streamed job: exit 130, no output file, no
    // temporary file left beside it.
    void interrupt_leaves_no_file_data() {
        QTest::addColumn<QString>("format");
        QTest::newRow("tsv") << "tsv";
        QTest::newRow("sam") << "sam";
    }
    void interrupt_leaves_no_file() {
        QFETCH(QString, format);
        QTemporaryDir run_dir;
        QVERIFY(run_dir.isValid());
        const QString queries = write_file(run_dir, "q.fa", proteins(3000, 300, 400, 5, 'q', false));
        const QString targets = write_file(run_dir, "t.fa", proteins(3000, 300, 400, 5, 't', true));
        const QString out = run_dir.filePath("out." + format);
        ChunkSize size(20);
        QProcess process;
        process.start(QStringLiteral(ALIGNSCOPE_CLI), {"align", queries, targets, "--zip", "--device", "cpu-ref",
                                                       "--threads", "1", "--format", format, "-o", out});
        QVERIFY(process.waitForStarted(10000));
        // Until the first chunks are written (the temporary file beside the output grows).
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 20000 && process.state() == QProcess::Running) {
            const QStringList temporary = QDir(run_dir.path()).entryList({".out.*"}, QDir::Hidden | QDir::Files);
            if (!temporary.isEmpty()) break;
            QThread::msleep(20);
        }
        QThread::msleep(300);
        QVERIFY2(process.state() == QProcess::Running, "the job ended before it could be interrupted");
        ::kill(static_cast<pid_t>(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(20000));
        QCOMPARE(process.exitCode(), 130);
        QVERIFY(!QFile::exists(out));
        const QStringList left = QDir(run_dir.path()).entryList(QDir::Hidden | QDir::Files | QDir::NoDotAndDotDot);
        QCOMPARE(left, QStringList({"q.fa", "t.fa"}));
    }

    // 60,000 and then 240,000 short pairs in chunks of 8,192: held whole, the
    // second would take over 100 MB more than the first (records and
    // alignments, some 600 bytes a pair); streamed, about 40 MB more (the ids
    // kept for the repeated-id warning, output held back until 16 MiB, the
    // allocator's slack). The largest resident set of any child so far: this
    // suite's earlier jobs are smaller.
    void memory_stays_bounded() {
        QTemporaryDir run_dir;
        QVERIFY(run_dir.isValid());
        ChunkSize size(8192);
        long rss_kb[2] = {0, 0};
        const int pairs[2] = {60000, 240000};
        for (int run = 0; run < 2; ++run) {
            const QString queries = write_file(run_dir, "q.fa", proteins(pairs[run], 20, 40, 21, 'q', false));
            const QString targets = write_file(run_dir, "t.fa", proteins(pairs[run], 20, 40, 21, 't', true));
            const QString out = run_dir.filePath("out.tsv");
            const ProcessResult r = run_cli({"align", queries, targets, "--zip", "--mode", "local", "--no-traceback",
                                             "--format", "tsv", "-o", out, "--threads", "2"},
                                            240000);
            QVERIFY2(r.exit_code == 0, r.err.constData());
            QFile f(out);
            QVERIFY(f.open(QIODevice::ReadOnly));
            qint64 lines = 0;
            while (!f.atEnd()) lines += f.readLine().isEmpty() ? 0 : 1;
            QCOMPARE(lines, qint64(pairs[run] + 1));
            rss_kb[run] = children_max_rss_kb();
        }
        QVERIFY2(rss_kb[1] < rss_kb[0] + 70 * 1024,
                 qPrintable(QString("largest resident set %1 MiB after 60,000 pairs, %2 MiB after 240,000")
                                .arg(rss_kb[0] / 1024)
                                .arg(rss_kb[1] / 1024)));
    }
};

QTEST_GUILESS_MAIN(TestAlignPipelineCli)
#include "test_align_pipeline_cli.moc"
