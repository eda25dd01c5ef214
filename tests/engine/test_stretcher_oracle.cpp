// The linear-space global aligner (Myers-Miller) against EMBOSS stretcher, an
// independent linear-space implementation, on longer real DNA built from EMBOSS's
// test data: identical global scores.
#include "cli_runner.hpp"

#include <alignscope/align/linear_space.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

using namespace alignscope;

namespace {

std::string concatenate(const SequenceSet& set, bool reverse_order) {
    std::string all;
    if (reverse_order)
        for (auto it = set.records.rbegin(); it != set.records.rend(); ++it) all += it->residues;
    else
        for (const auto& r : set.records) all += r.residues;
    return all;
}

double stretcher_score(const QString& dir, const std::string& a, const std::string& b, int open, int extend) {
    const QString fa = dir + "/a.fa", fb = dir + "/b.fa";
    for (const auto& [path, seq] : {std::pair{fa, &a}, std::pair{fb, &b}}) {
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) return -1e300;
        f.write(">s\n");
        f.write(seq->data(), qint64(seq->size()));
        f.write("\n");
    }
    const ProcessResult r = run_program("stretcher", {"-asequence", fa, "-bsequence", fb, "-datafile", "EDNAFULL",
                                                      "-gapopen", QString::number(open), "-gapextend",
                                                      QString::number(extend), "-outfile", "stdout", "-auto"});
    const auto m = QRegularExpression(R"(# Score: (-?[0-9.]+))").match(QString::fromLatin1(r.out));
    return m.hasMatch() ? m.captured(1).toDouble() : -1e300;
}

}  // namespace

class TestStretcherOracle : public QObject {
    Q_OBJECT
private slots:
    void linear_space_matches_stretcher_data() {
        QTest::addColumn<QString>("first");
        QTest::addColumn<QString>("second");
        QTest::addColumn<int>("open");
        QTest::addColumn<int>("extend");
        QTest::newRow("tropomyosin vs reordered 16/4") << "tropomyosin.fasta"
                                                       << "tropomyosin.fasta" << 16 << 4;
        QTest::newRow("tropomyosin vs reordered 10/1") << "tropomyosin.fasta"
                                                       << "tropomyosin.fasta" << 10 << 1;
        QTest::newRow("pax6 vs tropomyosin 16/4") << "pax6_cdna.fasta"
                                                  << "tropomyosin.fasta" << 16 << 4;
    }
    void linear_space_matches_stretcher() {
        QFETCH(QString, first);
        QFETCH(QString, second);
        QFETCH(int, open);
        QFETCH(int, extend);
        ALIGNSCOPE_REQUIRE_ORACLE(have_program("stretcher"), "stretcher is not installed (Debian package emboss)");
        const QString data = "/usr/share/EMBOSS/test/data/";
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(data + first), "EMBOSS test data missing (Debian package emboss-test)");
        ReadOptions options;
        options.alphabet = AlphabetKind::Dna;
        const std::string a = concatenate(read_sequences((data + first).toStdString(), options), false);
        const std::string b = concatenate(read_sequences((data + second).toStdString(), options), first == second);
        QVERIFY(a.size() > 1000 && b.size() > 1000);

        QTemporaryDir dir;
        const double expected = stretcher_score(dir.path(), a, b, open, extend);
        QVERIFY2(expected > -1e299, "could not read stretcher's score");

        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), open, extend);
        AlignOptions global;
        global.mode = AlignmentMode::Global;
        const Alignment ours = align_linear_space(a, b, scheme, global);
        QCOMPARE(scheme.to_user(ours.score), expected);
        QCOMPARE(ours.query_begin, qint64(1));
        QCOMPARE(ours.query_end, qint64(a.size()));
        QCOMPARE(ours.target_end, qint64(b.size()));
        QCOMPARE(rescore(ours.cigar, a, b, 1, 1, scheme), ours.score);
    }
};

QTEST_GUILESS_MAIN(TestStretcherOracle)
#include "test_stretcher_oracle.moc"
