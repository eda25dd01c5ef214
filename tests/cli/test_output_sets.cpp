// The outputs of one command are put in place together: when one of them
// cannot be written (here /dev/full, which fails every write), none of the
// others is put in place either — an earlier file of that name stays as it
// was and a new one is not made — so a failed run never leaves a set of
// outputs of which some are new and some old or missing. One row per command
// family, through the real binary, with the failing output second and first.
#include "cli_runner.hpp"
#include "oracles.hpp"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString kTutorial = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial");

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

void write_file(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(bytes);
}

}  // namespace

class TestOutputSets : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/globins4.hmm"),
                                  "the HMMER tutorial models are missing (Debian package hmmer-examples)");
    }

    // arguments: run with q.fa, t.fa (two records each) in a fresh folder;
    // "FIRST" is replaced by the folder's file "first" (the output that could
    // be written), "FAIL" by /dev/full.
    void aFailedOutputKeepsTheOthersBack_data() {
        QTest::addColumn<QStringList>("arguments");
        const QString globins = kTutorial + "/globins4.hmm", hbb = kTutorial + "/HBB_HUMAN";
        QTest::newRow("align -o, --timeline")
            << QStringList{"align", "q.fa", "t.fa", "-o", "FIRST", "--timeline", "FAIL"};
        QTest::newRow("align --timeline, -o")
            << QStringList{"align", "q.fa", "t.fa", "-o", "FAIL", "--timeline", "FIRST"};
        QTest::newRow("align --zip -o, --timeline")
            << QStringList{"align", "--zip", "q.fa", "t.fa", "-o", "FIRST", "--timeline", "FAIL"};
        QTest::newRow("align --long -o, --timeline")
            << QStringList{"align", "--long", "q.fa", "t.fa", "-o", "FIRST", "--timeline", "FAIL"};
        QTest::newRow("align --long --timeline, -o")
            << QStringList{"align", "--long", "q.fa", "t.fa", "-o", "FAIL", "--timeline", "FIRST"};
        QTest::newRow("search -o, --timeline")
            << QStringList{"search",     "-q",  "q.fa", "-d",    "t.fa",       "--device", "cpu",
                           "--db-cache", "off", "-o",   "FIRST", "--timeline", "FAIL"};
        QTest::newRow("search --timeline, -o")
            << QStringList{"search",     "-q",  "q.fa", "-d",   "t.fa",       "--device", "cpu",
                           "--db-cache", "off", "-o",   "FAIL", "--timeline", "FIRST"};
        QTest::newRow("allvsall -o, --timeline")
            << QStringList{"allvsall", "q.fa", "--device", "cpu", "-q", "-o", "FIRST", "--timeline", "FAIL"};
        QTest::newRow("allvsall --timeline, -o")
            << QStringList{"allvsall", "q.fa", "--device", "cpu", "-q", "-o", "FAIL", "--timeline", "FIRST"};
        QTest::newRow("allvsall --clusters, -o")
            << QStringList{"allvsall", "q.fa", "--device", "cpu", "-q", "-o", "FAIL", "--clusters", "FIRST"};
        QTest::newRow("allvsall -o, --clusters")
            << QStringList{"allvsall", "q.fa", "--device", "cpu", "-q", "-o", "FIRST", "--clusters", "FAIL"};
        QTest::newRow("hmmsearch -o, --tblout")
            << QStringList{"hmmsearch", "-o", "FIRST", "--tblout", "FAIL", globins, hbb};
        QTest::newRow("hmmsearch --tblout, --domtblout")
            << QStringList{"hmmsearch", "-o", "/dev/null", "--tblout", "FIRST", "--domtblout", "FAIL", globins, hbb};
        QTest::newRow("hmmsearch --domtblout, -A")
            << QStringList{"hmmsearch", "-o", "/dev/null", "--domtblout", "FIRST", "-A", "FAIL", globins, hbb};
        QTest::newRow("hmmsearch -A, -o") << QStringList{"hmmsearch", "-o", "FAIL", "-A", "FIRST", globins, hbb};
        QTest::newRow("bench --json, --timeline")
            << QStringList{"bench",       "--device", "cpu",    "--cpu-device", "none",       "--lengths", "64",
                           "--cpu-pairs", "10",       "--json", "FIRST",        "--timeline", "FAIL"};
        QTest::newRow("bench --timeline, --json")
            << QStringList{"bench",       "--device", "cpu",    "--cpu-device", "none",       "--lengths", "64",
                           "--cpu-pairs", "10",       "--json", "FAIL",         "--timeline", "FIRST"};
    }

    void aFailedOutputKeepsTheOthersBack() {
        QFETCH(QStringList, arguments);
        if (!QFile::exists("/dev/full")) QSKIP("/dev/full does not exist on this system");
        // An earlier file named like the output that could be written, and none.
        for (const bool earlier : {true, false}) {
            QTemporaryDir tmp;
            QVERIFY(tmp.isValid());
            const QString dir = tmp.path();
            write_file(dir + "/q.fa",
                       ">q\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA\n"
                       ">r\nVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVL\n");
            write_file(dir + "/t.fa",
                       ">t\nVQLSGEEKAAVLALWDKVNEEEVGGEALGRLLVVYPWTQRFFDSFGDLSNPGAVMGNPKVKAHGKKVLHSF\n"
                       ">u\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLG\n");
            const QByteArray previous = "an earlier output, to be kept as it is\n";
            if (earlier) write_file(dir + "/first", previous);
            const QStringList before = QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
            QStringList args;
            for (const QString& a : arguments) {
                if (a == "FIRST") args << dir + "/first";
                else if (a == "FAIL")
                    args << "/dev/full";
                else if (a.endsWith(".fa") && !a.contains('/'))
                    args << dir + "/" + a;
                else
                    args << a;
            }
            const ProcessResult r = run_cli(args);
            const QByteArray context = (earlier ? "with an earlier file: " : "without an earlier file: ") + r.err;
            QVERIFY2(!r.crashed && r.exit_code == 2, context.constData());
            QCOMPARE(r.err.count("error:"), 1);
            QVERIFY2(r.err.contains("/dev/full: write failed"), context.constData());
            // The output that could have been written was not put in place.
            if (earlier) QCOMPARE(read_all(dir + "/first"), previous);
            else
                QVERIFY2(!QFile::exists(dir + "/first"), context.constData());
            // And no temporary file is left beside it.
            QCOMPARE(QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), before);
        }
    }

    // The same commands with every output writable put every one in place
    // (the rule holds back nothing that succeeded).
    void everyOutputWrittenWhenAllSucceed() {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.path();
        write_fasta(tmp, "q.fa", "q", "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA");
        const QString globins = kTutorial + "/globins4.hmm", hbb = kTutorial + "/HBB_HUMAN";
        const ProcessResult a = run_cli({"align", dir + "/q.fa", dir + "/q.fa", "-o", dir + "/a.tsv", "--format", "tsv",
                                         "--timeline", dir + "/a.json"});
        QVERIFY2(a.exit_code == 0, a.err.constData());
        QVERIFY(read_all(dir + "/a.tsv").contains("\tq\t"));
        QVERIFY(read_all(dir + "/a.json").contains("traceEvents"));
        const ProcessResult h = run_cli({"hmmsearch", "-o", dir + "/h.out", "--tblout", dir + "/h.tbl", "--domtblout",
                                         dir + "/h.dom", "-A", dir + "/h.sto", globins, hbb});
        QVERIFY2(h.exit_code == 0, h.err.constData());
        for (const char* name : {"h.out", "h.tbl", "h.dom", "h.sto"})
            QVERIFY2(read_all(dir + "/" + name).contains("HBB_HUMAN"), name);
    }
};

QTEST_GUILESS_MAIN(TestOutputSets)
#include "test_output_sets.moc"
