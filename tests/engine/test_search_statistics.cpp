// Karlin-Altschul statistics against the published values: for known raw
// scores, bit scores and E-values by the textbook formulas with lambda and K
// written out here from NCBI BLAST's gapped tables (blast_stat.c), so a wrong
// row, a convention slip (BLAST existence/extension vs our open/extend) or a
// formula error shows. Also every case without parameters says why.
#include <alignscope/error.hpp>
#include <alignscope/search/statistics.hpp>

#include <QtTest>

#include <cmath>

using namespace alignscope;

namespace {

ScoringScheme scheme(const std::string& matrix, double open, double extend) {
    return ScoringScheme::create(SubstitutionMatrix::builtin(matrix), open, extend);
}

AlignmentMode local = AlignmentMode::Local;

}  // namespace

class TestSearchStatistics : public QObject {
    Q_OBJECT

private slots:
    void publishedParameters_data() {
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");  // our convention
        QTest::addColumn<double>("extend");
        QTest::addColumn<double>("lambda");  // BLAST's table, existence = open - extend
        QTest::addColumn<double>("K");
        QTest::newRow("BLOSUM62 BLAST 11/1 (blastp default)") << "BLOSUM62" << 12.0 << 1.0 << 0.267 << 0.041;
        QTest::newRow("BLOSUM62 BLAST 10/1 (CUDASW++ 11/1 here)") << "BLOSUM62" << 11.0 << 1.0 << 0.243 << 0.024;
        QTest::newRow("BLOSUM62 BLAST 9/2") << "BLOSUM62" << 11.0 << 2.0 << 0.279 << 0.058;
        QTest::newRow("BLOSUM45 BLAST 14/2") << "BLOSUM45" << 16.0 << 2.0 << 0.195 << 0.032;
        QTest::newRow("BLOSUM50 BLAST 13/2") << "BLOSUM50" << 15.0 << 2.0 << 0.193 << 0.035;
        QTest::newRow("BLOSUM80 BLAST 10/1") << "BLOSUM80" << 11.0 << 1.0 << 0.299 << 0.071;
        QTest::newRow("PAM30 BLAST 9/1") << "PAM30" << 10.0 << 1.0 << 0.294 << 0.11;
        QTest::newRow("PAM70 BLAST 10/1") << "PAM70" << 11.0 << 1.0 << 0.291 << 0.091;
        QTest::newRow("PAM250 BLAST 14/2") << "PAM250" << 16.0 << 2.0 << 0.182 << 0.024;
        QTest::newRow("EDNAFULL as 5/-4, BLAST 10/6") << "EDNAFULL" << 16.0 << 6.0 << 0.163 << 0.068;
    }
    void publishedParameters() {
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(double, lambda);
        QFETCH(double, K);
        std::string why;
        const auto p = karlin_altschul_for(scheme(matrix.toStdString(), open, extend), local, &why);
        QVERIFY2(p.has_value(), why.c_str());
        QCOMPARE(p->lambda, lambda);
        QCOMPARE(p->K, K);
        QVERIFY(!p->source.empty());
        for (std::int64_t score : {20, 37, 55, 100, 250, 1000}) {
            const double bits = (lambda * static_cast<double>(score) - std::log(K)) / std::log(2.0);
            QVERIFY(std::abs(bit_score(*p, score) - bits) < 1e-9);
            const double m = 350, n = 9'055'569;
            const double e = K * m * n * std::exp(-lambda * static_cast<double>(score));
            QVERIFY(std::abs(evalue(*p, score, 350, 9'055'569) - e) <= 1e-12 * std::max(1.0, e));
            // E = m n 2^-bits: the two are the same statistic.
            QVERIFY(std::abs(evalue(*p, score, 350, 9'055'569) - m * n * std::pow(2.0, -bit_score(*p, score))) <=
                    1e-9 * std::max(1e-300, e));
        }
    }

    void knownValues() {
        // BLOSUM62 11/1 (BLAST): a raw score of 100 is (0.267*100 + 3.19418...)/0.693147 bits.
        const auto p = karlin_altschul_for(scheme("BLOSUM62", 12, 1), local);
        QVERIFY(p);
        QVERIFY(std::abs(bit_score(*p, 100) - 43.1287) < 1e-3);
        QVERIFY(std::abs(bit_score(*p, 0) - 4.6082) < 1e-3);
        // 300 x 1,000,000 at raw 50: 0.041 * 3e8 * e^-13.35 = 19.5918 (computed apart, in Python)
        QVERIFY(std::abs(evalue(*p, 50, 300, 1'000'000) - 19.59177) < 1e-4);
    }

    void matchMismatchMatricesAndEvenScores() {
        // BLASTN 2/-3 with existence 5, extension 2 (our 7/2): lambda 0.625, K 0.41,
        // and the table holds for even scores only: odd ones round down.
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 7, 2);
        const auto p = karlin_altschul_for(s, local);
        QVERIFY(p);
        QCOMPARE(p->lambda, 0.625);
        QCOMPARE(p->K, 0.41);
        QVERIFY(p->even_scores_only);
        QCOMPARE(bit_score(*p, 41), bit_score(*p, 40));
        QVERIFY(std::abs(bit_score(*p, 40) - (0.625 * 40 - std::log(0.41)) / std::log(2.0)) < 1e-9);
        // 1/-2 with existence 2, extension 2 (our 4/2): 1.33, 0.62.
        const auto q =
            karlin_altschul_for(ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -2), 4, 2), local);
        QVERIFY(q);
        QCOMPARE(q->lambda, 1.33);
        QCOMPARE(q->K, 0.62);
        QVERIFY(!q->even_scores_only);
    }

    void noParameters_data() {
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("reason");
        QTest::newRow("unlisted gap costs") << "BLOSUM62" << 20.0 << 3.0 << 0 << "no parameters for BLOSUM62";
        QTest::newRow("half-step penalties") << "BLOSUM62" << 10.0 << 0.5 << 0 << "half-step";
        QTest::newRow("EMBOSS default on DNA") << "EDNAFULL" << 10.0 << 0.5 << 0 << "half-step";
        QTest::newRow("global search") << "BLOSUM62" << 12.0 << 1.0 << 1 << "global";
        QTest::newRow("semi-global search") << "BLOSUM62" << 12.0 << 1.0 << 2 << "semiglobal";
    }
    void noParameters() {
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(int, mode);
        QFETCH(QString, reason);
        const AlignmentMode modes[] = {AlignmentMode::Local, AlignmentMode::Global, AlignmentMode::SemiGlobal};
        std::string why;
        QVERIFY(!karlin_altschul_for(scheme(matrix.toStdString(), open, extend), modes[mode], &why));
        QVERIFY2(why.find(reason.toStdString()) != std::string::npos, why.c_str());
        QVERIFY2(why.find("no E-values") != std::string::npos, why.c_str());
    }

    void aFileMatrixDoesNotBorrowTheName() {
        // Named BLOSUM62 but with one score changed: not the published matrix.
        SubstitutionMatrix real = SubstitutionMatrix::builtin("BLOSUM62");
        std::string text = "   A  R\nA  5 -1\nR -1  5\n";
        const SubstitutionMatrix fake = SubstitutionMatrix::parse(text, "BLOSUM62", "test");
        std::string why;
        QVERIFY(!karlin_altschul_for(ScoringScheme::create(fake, 12, 1), local, &why));
        QVERIFY2(why.find("built-in") != std::string::npos, why.c_str());
        QVERIFY(karlin_altschul_for(ScoringScheme::create(real, 12, 1), local));
    }

    void minimumScoreForAnEvalue() {
        const auto p = karlin_altschul_for(scheme("BLOSUM62", 12, 1), local);
        QVERIFY(p);
        for (double limit : {1e-30, 1e-5, 0.001, 1.0, 10.0, 1e4}) {
            const std::int64_t s = min_score_for_evalue(*p, limit, 400, 90'000'000);
            QVERIFY(evalue(*p, s, 400, 90'000'000) <= limit);
            QVERIFY(evalue(*p, s - 1, 400, 90'000'000) > limit);
        }
        QVERIFY_THROWS_EXCEPTION(Error, min_score_for_evalue(*p, 0, 400, 1000));
        QVERIFY_THROWS_EXCEPTION(Error, min_score_for_evalue(*p, -1, 400, 1000));
    }

    void tableRowsAreSane() {
        for (const KarlinAltschulRow& row : karlin_altschul_table()) {
            QVERIFY(row.lambda > 0 && row.lambda < 2);
            QVERIFY(row.K > 0 && row.K < 1);
            QVERIFY(row.H > 0);
            QVERIFY(row.extension > 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestSearchStatistics)
#include "test_search_statistics.moc"
