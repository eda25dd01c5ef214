// Readers that run out of memory say which file, through the real binary
// under an address-space limit (ulimit -v): an endless HMMER3 profile on
// standard input, an endless target database for hmmsearch, and a long-pair
// checkpoint manifest whose (sparse) size is past any memory. Each is one
// error line naming the file and what to do, exit status 2, never a bare
// "out of memory" or a crash. A NUL byte ends the reading of a profile file
// (/dev/zero is refused at once, not read forever).
#include "cli_runner.hpp"

#include <alignscope/align/long_checkpoint.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include <unistd.h>

namespace {

const QString kGlobins = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial/globins4.hmm");

// `command` in sh with the address space limited to 600 MB.
ProcessResult limited_shell(const QString& command) {
    return run_program("sh", {"-c", "ulimit -v 600000 && " + command}, 120000);
}

}  // namespace

class TestReaderMemory : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString cli_ = QStringLiteral(ALIGNSCOPE_CLI);

    void expect_one_error(const ProcessResult& r, const QByteArray& expected) {
        QVERIFY2(!r.crashed && r.exit_code == 2, r.err.constData());
        QCOMPARE(r.err.count("error:"), 1);
        QVERIFY2(r.err.contains(expected), r.err.constData());
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kGlobins), "globins4.hmm is missing (Debian package hmmer-examples)");
        QVERIFY(have_program("perl"));
        QFile t(dir_.filePath("t.fa"));
        QVERIFY(t.open(QIODevice::WriteOnly));
        t.write(">t\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGA\n");
    }

    void endlessProfileFile() {
        const ProcessResult r =
            limited_shell("yes ACDEFGHIKLMNPQRSTVWY | '" + cli_ + "' hmmsearch - '" + dir_.filePath("t.fa") + "'");
        expect_one_error(r, "-: out of memory after reading ");
        QVERIFY(r.err.contains("MiB of the profile file"));
    }

    void profileFileOfZeros() {
        const ProcessResult r = run_cli({"hmmsearch", "/dev/zero", dir_.filePath("t.fa")}, 20000);
        expect_one_error(r, "/dev/zero: ");
    }

    void endlessTargetDatabase() {
        // Records of 50,000 residues (under hmmsearch's 100,000), without end.
        const ProcessResult r =
            limited_shell("perl -e 'print \">x\\n\", \"ACDEFGHIKLMNPQRSTVWY\" x 2500, \"\\n\" while 1' | '" + cli_ +
                          "' hmmsearch '" + kGlobins + "' -");
        expect_one_error(r, "-: out of memory after ");
        QVERIFY(r.err.contains(" targets ("));
    }

    void checkpointPastMemory() {
        const QString ck = dir_.filePath("ck"), q = dir_.filePath("q.fa");
        QVERIFY(QDir().mkpath(ck));
        write_fasta(dir_, "q.fa", "q", std::string(3000, 'A'));
        // A manifest whose header agrees with its size: 1 TiB, sparse.
        const QString manifest = ck + "/" + alignscope::longpair::kCheckpointManifest;
        const std::uint64_t size = std::uint64_t{1} << 40;
        QByteArray header("ALSCKPT1", 8);
        const std::uint32_t version = alignscope::longpair::kCheckpointVersion, kind = 1;
        const std::uint64_t payload = size - 24 - 4;
        header.append(reinterpret_cast<const char*>(&version), 4);
        header.append(reinterpret_cast<const char*>(&kind), 4);
        header.append(reinterpret_cast<const char*>(&payload), 8);
        QFile f(manifest);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(header);
        f.close();
        QVERIFY(::truncate(manifest.toLocal8Bit().constData(), static_cast<off_t>(size)) == 0);
        const ProcessResult r = limited_shell("'" + cli_ + "' align --long '" + q + "' '" + q + "' --checkpoint '" +
                                              ck + "' --resume -o /dev/null");
        expect_one_error(r, "checkpoint: " + manifest.toUtf8() + " is 1099511627776 bytes, more than the memory");
    }
};

QTEST_GUILESS_MAIN(TestReaderMemory)
#include "test_reader_memory.moc"
