// Substitution matrices and scoring schemes: the built-in set against parasail's
// and EMBOSS's copies, the parser against a corpus of malformed files, letter
// stand-ins, match/mismatch matrices, and gap-penalty validation and scaling.
#include "oracles.hpp"

#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <parasail.h>

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <sys/stat.h>
#include <unistd.h>

using namespace alignscope;

namespace {

const QString kMalformed = QStringLiteral(ALIGNSCOPE_TEST_DATA "/malformed/");

std::string sorted(std::string s) {
    std::sort(s.begin(), s.end());
    return s;
}

// Runs `f`, which must throw Error; returns the message.
template <typename F>
QString error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no error>");
}

// Every pair of letters that both matrices score must score the same, and both
// must have the same letters.
void compare_matrices(const SubstitutionMatrix& ours, const SubstitutionMatrix& theirs) {
    QCOMPARE(sorted(ours.letters()), sorted(theirs.letters()));
    for (char a : theirs.letters())
        for (char b : theirs.letters())
            QVERIFY2(ours.score(ours.index_of(a), ours.index_of(b)) ==
                         theirs.score(theirs.index_of(a), theirs.index_of(b)),
                     qPrintable(QString("%1/%2").arg(a).arg(b)));
}

}  // namespace

class TestSubstitutionMatrix : public QObject {
    Q_OBJECT
private slots:
    void builtin_names() {
        const auto names = SubstitutionMatrix::builtin_names();
        const std::vector<std::string> expected{"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80",
                                                "EDNAFULL", "PAM250",   "PAM30",    "PAM70"};
        QCOMPARE(names, expected);
    }

    void against_parasail_data() {
        QTest::addColumn<QString>("ours");
        QTest::addColumn<QString>("parasail");
        for (const auto& name : SubstitutionMatrix::builtin_names()) {
            QString p = QString::fromStdString(name).toLower();
            if (p == "ednafull") p = "dnafull";
            QTest::newRow(name.c_str()) << QString::fromStdString(name) << p;
        }
    }
    // parasail ships its own copies of the NCBI matrices: every pair of letters
    // (24 x 24 for BLOSUM62) must agree, and so must the extremes.
    void against_parasail() {
        QFETCH(QString, ours);
        QFETCH(QString, parasail);
        const SubstitutionMatrix m = SubstitutionMatrix::builtin(ours.toStdString());
        const parasail_matrix_t* p = parasail_matrix_lookup(parasail.toLatin1().constData());
        QVERIFY(p);
        const std::string alphabet = p->alphabet;
        QCOMPARE(static_cast<int>(alphabet.size()), p->size);
        QCOMPARE(sorted(m.letters()), sorted(alphabet));
        QCOMPARE(m.size(), p->size);
        for (int i = 0; i < p->size; ++i) {
            for (int j = 0; j < p->size; ++j) {
                const int row = m.index_of(alphabet[static_cast<std::size_t>(i)]);
                const int col = m.index_of(alphabet[static_cast<std::size_t>(j)]);
                QVERIFY(row >= 0 && col >= 0);
                QVERIFY2(m.score(row, col) == p->matrix[i * p->size + j],
                         qPrintable(QString("%1/%2")
                                        .arg(alphabet[static_cast<std::size_t>(i)])
                                        .arg(alphabet[static_cast<std::size_t>(j)])));
            }
        }
        QCOMPARE(m.max_score(), p->max);
        QCOMPARE(m.min_score(), p->min);
        QCOMPARE(m.name(), ours.toStdString());
    }

    void against_emboss_data() {
        QTest::addColumn<QString>("builtin");
        QTest::addColumn<QString>("emboss_file");
        QTest::newRow("EDNAFULL") << "EDNAFULL"
                                  << "/usr/share/EMBOSS/data/EDNAFULL";
        QTest::newRow("BLOSUM62") << "BLOSUM62"
                                  << "/usr/share/EMBOSS/data/EBLOSUM62";
    }
    // Also proves the parser reads EMBOSS's own files.
    void against_emboss() {
        QFETCH(QString, builtin);
        QFETCH(QString, emboss_file);
        ALIGNSCOPE_REQUIRE_ORACLE(QFileInfo::exists(emboss_file),
                                  emboss_file + " is absent (install emboss-data to compare with EMBOSS)");
        const SubstitutionMatrix emboss = SubstitutionMatrix::from_file(emboss_file.toStdString());
        compare_matrices(SubstitutionMatrix::builtin(builtin.toStdString()), emboss);
        QCOMPARE(QString::fromStdString(emboss.name()), QFileInfo(emboss_file).completeBaseName());
    }

    void aliases_data() {
        QTest::addColumn<QString>("alias");
        QTest::addColumn<QString>("name");
        QTest::newRow("exact") << "BLOSUM62"
                               << "BLOSUM62";
        QTest::newRow("lower") << "blosum62"
                               << "BLOSUM62";
        QTest::newRow("mixed") << "Blosum45"
                               << "BLOSUM45";
        QTest::newRow("emboss prefix") << "EBLOSUM62"
                                       << "BLOSUM62";
        QTest::newRow("emboss prefix lower") << "eblosum80"
                                             << "BLOSUM80";
        QTest::newRow("epam") << "EPAM30"
                              << "PAM30";
        QTest::newRow("dnafull") << "DNAFULL"
                                 << "EDNAFULL";
        QTest::newRow("dnafull lower") << "dnafull"
                                       << "EDNAFULL";
        QTest::newRow("ednafull") << "ednafull"
                                  << "EDNAFULL";
    }
    void aliases() {
        QFETCH(QString, alias);
        QFETCH(QString, name);
        QCOMPARE(QString::fromStdString(SubstitutionMatrix::builtin(alias.toStdString()).name()), name);
        QCOMPARE(QString::fromStdString(SubstitutionMatrix::resolve(alias.toStdString()).name()), name);
    }

    void unknown_builtin() {
        for (const char* bad : {"BLOSUM63", "", "E", "EE", "PAM", "DNA", "EBLOSUM"}) {
            const QString message = error_of([bad] { SubstitutionMatrix::builtin(bad); });
            QVERIFY2(message.contains(QString("unknown built-in matrix '%1'").arg(bad)), qPrintable(message));
            QVERIFY2(message.contains("BLOSUM62") && message.contains("EDNAFULL"), qPrintable(message));
        }
        const QString message = error_of([] { SubstitutionMatrix::resolve("no/such/matrix.mat"); });
        QVERIFY2(message.contains("no/such/matrix.mat") && message.contains("BLOSUM62"), qPrintable(message));
    }

    void resolve_path() {
        const std::string path = ALIGNSCOPE_SOURCE_DIR "/resources/matrices/PAM70.mat";
        const SubstitutionMatrix m = SubstitutionMatrix::resolve(path);
        QCOMPARE(m.name(), std::string("PAM70"));
        compare_matrices(m, SubstitutionMatrix::builtin("PAM70"));
    }

    void stand_ins() {
        const SubstitutionMatrix b = SubstitutionMatrix::builtin("BLOSUM62");
        QVERIFY(!b.is_nucleotide());
        QCOMPARE(b.index_of('U'), b.index_of('C'));
        QCOMPARE(b.index_of('u'), b.index_of('C'));
        QCOMPARE(b.index_of('O'), b.index_of('K'));
        QCOMPARE(b.index_of('J'), b.index_of('X'));
        QCOMPARE(b.index_of('j'), b.index_of('X'));
        QCOMPARE(b.index_of('w'), b.index_of('W'));
        QCOMPARE(b.index_of('-'), -1);
        QCOMPARE(b.index_of('\0'), -1);
        QVERIFY(b.index_of('*') >= 0);

        // EDNAFULL has rows for both T and U: no stand-in needed.
        const SubstitutionMatrix e = SubstitutionMatrix::builtin("EDNAFULL");
        QVERIFY(e.is_nucleotide());
        QVERIFY(e.index_of('U') != e.index_of('T'));
        QCOMPARE(e.index_of('X'), -1);

        const SubstitutionMatrix t =
            SubstitutionMatrix::parse("  A C G T\nA 1 0 0 0\nC 0 1 0 0\nG 0 0 1 0\nT 0 0 0 1\n", "acgt", "test");
        QVERIFY(t.is_nucleotide());
        QCOMPARE(t.index_of('U'), t.index_of('T'));
        QCOMPARE(t.index_of('u'), t.index_of('T'));
        const SubstitutionMatrix u =
            SubstitutionMatrix::parse("# RNA\n  a c g u\na 1 0 0 0\nc 0 1 0 0\ng 0 0 1 0\nu 0 0 0 1", "acgu", "test");
        QCOMPARE(u.letters(), std::string("ACGU"));  // letters are upper-cased
        QCOMPARE(u.index_of('T'), u.index_of('U'));
        QCOMPARE(u.index_of('t'), u.index_of('U'));
        QCOMPARE(u.index_of('J'), -1);  // J -> X only for protein matrices
    }

    void match_mismatch() {
        const SubstitutionMatrix m = SubstitutionMatrix::match_mismatch(2, -3);
        QVERIFY(m.is_nucleotide());
        QCOMPARE(sorted(m.letters()), sorted("ACGTURYSWKMBDHVN"));
        const std::string plain = "ACGTU";
        for (char a : m.letters()) {
            for (char b : m.letters()) {
                const bool pa = plain.find(a) != std::string::npos, pb = plain.find(b) != std::string::npos;
                const char na = a == 'U' ? 'T' : a, nb = b == 'U' ? 'T' : b;
                const int expected = pa && pb && na == nb ? 2 : -3;
                QVERIFY2(m.score(m.index_of(a), m.index_of(b)) == expected, qPrintable(QString("%1/%2").arg(a).arg(b)));
            }
        }
        QCOMPARE(m.score(m.index_of('t'), m.index_of('u')), 2);
        QCOMPARE(m.score(m.index_of('N'), m.index_of('N')), -3);
        QCOMPARE(m.max_score(), 2);
        QCOMPARE(m.min_score(), -3);
    }

    void scaled() {
        const SubstitutionMatrix m = SubstitutionMatrix::builtin("PAM250");
        const SubstitutionMatrix d = m.scaled(2);
        QCOMPARE(d.letters(), m.letters());
        QCOMPARE(d.name(), m.name());
        for (std::size_t i = 0; i < m.scores().size(); ++i) QCOMPARE(d.scores()[i], 2 * m.scores()[i]);
        for (int c = 0; c < 256; ++c) QCOMPARE(d.index_of(static_cast<char>(c)), m.index_of(static_cast<char>(c)));
    }

    void encode_residues() {
        const SubstitutionMatrix e = SubstitutionMatrix::builtin("EDNAFULL");
        const EncodedSequence codes = encode("AcgTun", e, "query");
        QCOMPARE(codes.size(), std::size_t{6});
        const std::string expected_letters = "ACGTUN";
        for (std::size_t i = 0; i < codes.size(); ++i) QCOMPARE(e.letters()[codes[i]], expected_letters[i]);
        const QString message = error_of([&e] { encode("ACJT", e, "query 'q1'"); });
        QCOMPARE(message, QString("residue 'J' at position 3 of query 'q1' is not scored by matrix EDNAFULL"));
        QVERIFY(encode("", e, "empty").empty());
    }

    void malformed_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("expected");
        QTest::newRow("empty") << "bad_matrix_empty.mat"
                               << "bad_matrix_empty.mat:1: expected a header line of column letters";
        QTest::newRow("non-square") << "bad_matrix_non_square.mat"
                                    << "bad_matrix_non_square.mat:3: expected 4 scores in row 'A'";
        QTest::newRow("bad number") << "bad_matrix_number.mat"
                                    << "bad_matrix_number.mat:3: expected an integer score in row 'C', found 'x1'";
        QTest::newRow("row letter")
            << "bad_matrix_row_letter.mat"
            << "bad_matrix_row_letter.mat:4: expected row 'G' (rows follow the column order), found 'T'";
        QTest::newRow("duplicate letter")
            << "bad_matrix_duplicate.mat"
            << "bad_matrix_duplicate.mat:1: expected each column letter once, 'A' appears twice";
        QTest::newRow("missing row") << "bad_matrix_missing_row.mat"
                                     << "bad_matrix_missing_row.mat:4: expected row 'T', found the end of the file";
        QTest::newRow("extra row") << "bad_matrix_extra_row.mat"
                                   << "bad_matrix_extra_row.mat:6: expected the end of the matrix after 4 rows";
        QTest::newRow("header word")
            << "bad_matrix_header_word.mat"
            << "bad_matrix_header_word.mat:1: expected a header line of single column letters, found 'GT'";
        QTest::newRow("huge score") << "bad_matrix_huge_score.mat"
                                    << "bad_matrix_huge_score.mat:2: expected a score between -100000 and 100000";
        QTest::newRow("binary") << "bad_matrix_binary.mat"
                                << "bad_matrix_binary.mat:3: expected matrix text, found byte \\x00";
        QTest::newRow("asymmetric")
            << "bad_matrix_asymmetric.mat"
            << "bad_matrix_asymmetric.mat:4: the matrix is not symmetric: row 'C' scores 'A' -3 "
               "but row 'A' (line 3) scores 'C' -4; asymmetric matrices are not supported";
        QTest::newRow("missing file") << "no_such_matrix.mat"
                                      << "no_such_matrix.mat: cannot open the matrix file";
        QTest::newRow("directory") << "."
                                   << "is a directory, expected a substitution matrix file";
    }
    void malformed() {
        QFETCH(QString, file);
        QFETCH(QString, expected);
        const std::string path = (kMalformed + file).toStdString();
        const QString message = error_of([&path] { SubstitutionMatrix::from_file(path); });
        QVERIFY2(message.contains(expected), qPrintable(message));
        // The same text through resolve() reports the same problem.
        if (QFileInfo::exists(QString::fromStdString(path)))
            QCOMPARE(error_of([&path] { SubstitutionMatrix::resolve(path); }), message);
    }

    void parse_in_memory() {
        const SubstitutionMatrix m =
            SubstitutionMatrix::parse("\r\n# comment\r\n   A   L\r\nA  +3  -2\r\n\r\nl -2  7\r\n", "mine", "memory");
        QCOMPARE(m.name(), std::string("mine"));
        QCOMPARE(m.letters(), std::string("AL"));
        QCOMPARE(m.scores(), (std::vector<int>{3, -2, -2, 7}));
        QVERIFY(!m.is_nucleotide());
        const QString message = error_of([] { SubstitutionMatrix::parse("A B\nA 1 2\nB 2 2.5\n", "x", "memory"); });
        QCOMPARE(message, QString("memory:3: expected an integer score in row 'B', found '2.5'"));
    }

    // ---- ScoringScheme ----

    void scheme_scaling_data() {
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<int>("scale");
        QTest::addColumn<QString>("description");
        QTest::newRow("blast 11/1") << 11.0 << 1.0 << 1 << "BLOSUM62, gap open 11, extend 1";
        QTest::newRow("emboss 10/0.5") << 10.0 << 0.5 << 2 << "BLOSUM62, gap open 10, extend 0.5";
        QTest::newRow("half open") << 10.5 << 1.0 << 2 << "BLOSUM62, gap open 10.5, extend 1";
        QTest::newRow("linear") << 4.0 << 4.0 << 1 << "BLOSUM62, gap open 4, extend 4";
        QTest::newRow("zero") << 0.0 << 0.0 << 1 << "BLOSUM62, gap open 0, extend 0";
        QTest::newRow("largest") << 1e6 << 0.5 << 2 << "BLOSUM62, gap open 1000000, extend 0.5";
    }
    void scheme_scaling() {
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(int, scale);
        QFETCH(QString, description);
        const SubstitutionMatrix b = SubstitutionMatrix::builtin("BLOSUM62");
        const ScoringScheme s = ScoringScheme::create(b, open, extend);
        QCOMPARE(s.scale, scale);
        QCOMPARE(static_cast<double>(s.gap_open), open * scale);
        QCOMPARE(static_cast<double>(s.gap_extend), extend * scale);
        QCOMPARE(s.linear(), open == extend);
        for (std::size_t i = 0; i < b.scores().size(); ++i) QCOMPARE(s.matrix.scores()[i], b.scores()[i] * scale);
        QCOMPARE(QString::fromStdString(s.describe()), description + " (a gap of length k costs open + (k-1)*extend)");
        // A gap of length k costs open + (k-1)*extend in user units.
        for (std::int64_t k = 1; k <= 5; ++k)
            QCOMPARE(s.to_user(s.gap_cost(k)), open + static_cast<double>(k - 1) * extend);
        QCOMPARE(s.to_user(s.matrix.score(s.matrix.index_of('W'), s.matrix.index_of('W'))), 11.0);
    }

    void scheme_errors_data() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative open") << -1.0 << 0.0 << "--gap-open: expected a penalty >= 0";
        QTest::newRow("negative extend") << 10.0 << -0.5 << "--gap-extend: expected a penalty >= 0";
        QTest::newRow("not half step open")
            << 10.3 << 1.0 << "--gap-open: expected a whole number or a multiple of 0.5, got 10.3";
        QTest::newRow("not half step extend")
            << 10.0 << 0.25 << "--gap-extend: expected a whole number or a multiple of 0.5, got 0.25";
        QTest::newRow("extend above open")
            << 1.0 << 2.0 << "--gap-extend: expected a value no larger than the gap open penalty (1), got 2";
        QTest::newRow("nan open") << nan << 1.0 << "--gap-open: expected a finite number";
        QTest::newRow("inf extend") << 10.0 << inf << "--gap-extend: expected a finite number";
        QTest::newRow("huge open") << 2e6 << 1.0 << "--gap-open: expected a penalty of at most 1000000, got 2e+06";
        QTest::newRow("huge both") << 1e300 << 1e300 << "--gap-open: expected a penalty of at most 1000000";
    }
    void scheme_errors() {
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(QString, expected);
        const SubstitutionMatrix b = SubstitutionMatrix::builtin("BLOSUM62");
        const QString message = error_of([&] { ScoringScheme::create(b, open, extend); });
        QVERIFY2(message.startsWith(expected), qPrintable(message));
    }

    void scheme_match_mismatch() {
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -2), 2.5, 1.5);
        QCOMPARE(s.scale, 2);
        QCOMPARE(s.gap_open, 5);
        QCOMPARE(s.gap_extend, 3);
        QCOMPARE(s.matrix.max_score(), 2);
        QCOMPARE(s.matrix.min_score(), -4);
        QCOMPARE(QString::fromStdString(s.describe()),
                 QString(
                     "match 1, mismatch -2, gap open 2.5, extend 1.5 (a gap of length k costs open + (k-1)*extend)"));
    }

    // A FIFO named as the matrix file is refused at once (opening it would wait
    // for a writer forever).
    void a_fifo_is_not_read() {
        const std::string fifo =
            (std::filesystem::temp_directory_path() / ("alignscope-matrix-" + std::to_string(::getpid()) + ".fifo"))
                .string();
        std::filesystem::remove(fifo);
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        QString message;
        try {
            SubstitutionMatrix::from_file(fifo);
            message = "(no error)";
        } catch (const alignscope::Error& e) {
            message = e.what();
        }
        std::filesystem::remove(fifo);
        QVERIFY2(message.contains("is not a regular file"), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestSubstitutionMatrix)
#include "test_substitution_matrix.moc"
