// verify --long draws pairwise verify's extreme schemes too (substitution
// scores of 64 and more, penalties up to the accepted 1,000,000) over every
// kind, mode and gap model, on both CPU devices: each such pair is answered
// with the reference's score (checked against parasail where 32-bit scores
// hold it) or refused with a clear error, never answered wrongly. The engine
// side: the extreme pairs' schemes are exactly schemes of pairwise verify's
// extreme configurations (the same menu, not a copy of it).
#include "cli_runner.hpp"

#include <alignscope/bench/long_verify.hpp>
#include <alignscope/bench/verify.hpp>

#include <QRegularExpression>
#include <QtTest>

using namespace alignscope;

class TestLongVerifyExtreme : public QObject {
    Q_OBJECT

private slots:
    void extremeSchemesComeFromPairwiseVerify() {
        LongVerifyOptions options;
        options.seed = 5;
        options.max_length = 400;
        const VerifyPairGenerator pairwise(options.seed, false, "");
        int extreme = 0;
        bool dna = false, protein = false, linear = false, affine = false, huge_gaps = false, scaled_matrix = false;
        for (std::uint64_t k = 0; k < 48; ++k) {
            const LongVerifyCase c = long_verify_case(options, k, std::string(2000, 'A'));
            QCOMPARE(c.extreme, k % 3 == 2);
            if (!c.extreme) continue;
            ++extreme;
            bool found = false;
            for (const VerifyConfig& config : pairwise.configs())
                found = found ||
                        (config.extreme && config.scheme.gap_open == c.scheme.gap_open &&
                         config.scheme.gap_extend == c.scheme.gap_extend && config.scheme.scale == c.scheme.scale &&
                         config.scheme.matrix.scores() == c.scheme.matrix.scores());
            QVERIFY2(found, c.describe().c_str());
            QVERIFY2(c.scheme.linear() == (c.gaps == "linear"), c.describe().c_str());
            dna = dna || c.alphabet == AlphabetKind::Dna;
            protein = protein || c.alphabet == AlphabetKind::Protein;
            linear = linear || c.scheme.linear();
            affine = affine || !c.scheme.linear();
            huge_gaps = huge_gaps || c.scheme.gap_open >= 32768;
            scaled_matrix = scaled_matrix || c.scheme.matrix.max_score() >= 64;
        }
        QCOMPARE(extreme, 16);
        QVERIFY(dna && protein && linear && affine && huge_gaps && scaled_matrix);
    }

    void cpuDevicesNeverAnswerWrongly_data() {
        QTest::addColumn<QString>("device");
        QTest::newRow("cpu") << "cpu";
        QTest::newRow("cpu-ref") << "cpu-ref";
    }

    void cpuDevicesNeverAnswerWrongly() {
        QFETCH(QString, device);
        const ProcessResult r =
            run_cli({"verify", "--long", "--pairs", "48", "--max-length", "1500", "--device", device, "--seed", "5"});
        QVERIFY2(!r.crashed && r.exit_code == 0, (r.out + r.err).constData());
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
        const QRegularExpression last(
            "^(\\d+) passed, 0 failed(, (\\d+) refused \\(schemes past the device's limits\\))?$");
        const QRegularExpressionMatch counts = last.match(lines.last());
        QVERIFY2(counts.hasMatch(), qPrintable(lines.last()));
        QCOMPARE(counts.captured(1).toInt() + counts.captured(3).toInt(), 48);
        QVERIFY2(r.out.contains("; 16 pairs of extreme schemes"), r.out.constData());
        int extreme_ok = 0, extreme_with_parasail = 0, refused = 0;
        for (const QString& line : lines) {
            if (line.startsWith("ok #") && line.contains(", extreme (")) {
                ++extreme_ok;
                extreme_with_parasail += line.contains("parasail agrees");
            }
            if (line.startsWith("refused #")) {
                ++refused;
                // Only extreme schemes may be refused, and with the reason.
                QVERIFY2(line.contains(", extreme (") && line.contains("): "), qPrintable(line));
            }
        }
        QCOMPARE(refused, counts.captured(3).toInt());
        // Most extreme pairs are answered (the CPU's kernels are 64-bit), and
        // parasail confirms those its 32 bits hold.
        QVERIFY2(extreme_ok >= 8, r.out.constData());
        QVERIFY2(extreme_with_parasail >= 4, r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestLongVerifyExtreme)
#include "test_long_verify_extreme.moc"
