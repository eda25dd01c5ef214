// The text forms of an alignment (CIGAR, mode names, free end gaps), rescoring
// and alignment completion: parsing and printing, malformed text, and scores
// worked out by hand from the matrix and the gap formula.
#include <alignscope/align/alignment.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <string>

using namespace alignscope;

class TestCigar : public QObject {
    Q_OBJECT

    static ScoringScheme dna() { return ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2); }

private slots:
    void round_trip_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("query_span");
        QTest::addColumn<qint64>("target_span");
        QTest::addColumn<qint64>("columns");
        QTest::newRow("mixed") << "3=1X2I4=3D1=" << qint64(11) << qint64(12) << qint64(14);
        QTest::newRow("one match") << "1=" << qint64(1) << qint64(1) << qint64(1);
        QTest::newRow("only insertions") << "7I" << qint64(7) << qint64(0) << qint64(7);
        QTest::newRow("only deletions") << "5D" << qint64(0) << qint64(5) << qint64(5);
        QTest::newRow("M runs") << "10M2D10M" << qint64(20) << qint64(22) << qint64(22);
        QTest::newRow("large count") << "4294967295=" << qint64(4294967295LL) << qint64(4294967295LL)
                                     << qint64(4294967295LL);
        QTest::newRow("empty") << "" << qint64(0) << qint64(0) << qint64(0);
    }
    void round_trip() {
        QFETCH(QString, text);
        QFETCH(qint64, query_span);
        QFETCH(qint64, target_span);
        QFETCH(qint64, columns);
        const Cigar cigar = Cigar::parse(text.toStdString());
        QCOMPARE(QString::fromStdString(cigar.to_string()), text);
        QCOMPARE(qint64(cigar.query_span()), query_span);
        QCOMPARE(qint64(cigar.target_span()), target_span);
        QCOMPARE(qint64(cigar.columns()), columns);
        QCOMPARE(cigar.empty(), text.isEmpty());
    }

    void repeated_operations_merge() {
        QCOMPARE(Cigar::parse("2I3I1=").to_string(), std::string("5I1="));
        Cigar c;
        c.push('=');
        c.push('=', 2);
        c.push('X');
        c.push('D', 0);  // nothing
        c.push('X', 4);
        QCOMPARE(c.to_string(), std::string("3=5X"));
        QCOMPARE(c.ops().size(), std::size_t(2));
        c.reverse();
        QCOMPARE(c.to_string(), std::string("5X3="));
        QVERIFY(c == Cigar::parse("5X3="));
    }

    void malformed_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("operation without count") << "M";
        QTest::newRow("count without operation") << "3";
        QTest::newRow("trailing count") << "3M4";
        QTest::newRow("zero length") << "0M";
        QTest::newRow("unknown operation") << "3Z";
        QTest::newRow("soft clip is not supported") << "3S10M";
        QTest::newRow("negative count") << "-3M";
        QTest::newRow("space inside") << "3 M";
        QTest::newRow("lower case") << "3m";
        QTest::newRow("count over 32 bits") << "4294967296M";
        QTest::newRow("huge count") << "99999999999999999999999M";
        QTest::newRow("operation first") << "=3";
    }
    void malformed() {
        QFETCH(QString, text);
        QVERIFY_THROWS_EXCEPTION(Error, Cigar::parse(text.toStdString()));
        try {
            Cigar::parse(text.toStdString());
        } catch (const Error& e) {
            // The message quotes the text so the user can find it.
            QVERIFY2(std::string(e.what()).find(text.toStdString()) != std::string::npos, e.what());
        }
    }

    void rescore_by_hand_data() {
        QTest::addColumn<QString>("cigar");
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("target");
        QTest::addColumn<qint64>("query_begin");
        QTest::addColumn<qint64>("target_begin");
        QTest::addColumn<qint64>("expected");
        // Match 2, mismatch -3, a gap of length k costs 5 + (k-1)*2.
        // A/A C/C G/- T/T T/T -/G A/A: 5 matches (10), two gaps of 1 (-10).
        QTest::newRow("two single gaps") << "2=1I2=1D1="
                                         << "ACGTTA"
                                         << "ACTTGA" << qint64(1) << qint64(1) << qint64(0);
        // A/A (2), GG/-- (-7), C/T (-3), --/TA (-7).
        QTest::newRow("gaps of two") << "1=2I1X2D"
                                     << "AGGC"
                                     << "ATTA" << qint64(1) << qint64(1) << qint64(-15);
        // An 'I' run right after a 'D' run is a second gap: -5 -5.
        QTest::newRow("adjacent gap kinds") << "1I1D"
                                            << "A"
                                            << "G" << qint64(1) << qint64(1) << qint64(-10);
        // Inside longer sequences: query 3..5 = GTT, target 2..4 = CTT: X = =.
        QTest::newRow("offsets") << "1X2="
                                 << "ACGTTA"
                                 << "ACTTGA" << qint64(3) << qint64(2) << qint64(1);
        // 'M' takes the score of whatever pair it covers: G/T -3, T/T 2.
        QTest::newRow("M runs") << "2M"
                                << "GT"
                                << "TT" << qint64(1) << qint64(1) << qint64(-1);
        // Only gaps on the query side; the target side begins past its end.
        QTest::newRow("gap-only alignment") << "2D"
                                            << "A"
                                            << "GG" << qint64(2) << qint64(1) << qint64(-7);
        QTest::newRow("long gap") << "1=6D1="
                                  << "AC"
                                  << "AGGGGGGC" << qint64(1) << qint64(1) << qint64(2 - (5 + 5 * 2) + 2);
    }
    void rescore_by_hand() {
        QFETCH(QString, cigar);
        QFETCH(QString, query);
        QFETCH(QString, target);
        QFETCH(qint64, query_begin);
        QFETCH(qint64, target_begin);
        QFETCH(qint64, expected);
        const std::int64_t score = rescore(Cigar::parse(cigar.toStdString()), query.toStdString(), target.toStdString(),
                                           query_begin, target_begin, dna());
        QCOMPARE(qint64(score), expected);
    }

    void rescore_protein_half_steps() {
        // BLOSUM62: A/A 4, W/W 11, H/H 8, E/E 5; one gap of length 1.
        const Cigar cigar = Cigar::parse("2=1D2=");
        const ScoringScheme whole = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        QCOMPARE(rescore(cigar, "AWHE", "AWGHE", 1, 1, whole), std::int64_t(4 + 11 + 8 + 5 - 11));
        // 10 / 0.5 is held doubled; in user units 28 - 10 = 18.
        const ScoringScheme half = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 10, 0.5);
        QCOMPARE(half.scale, 2);
        const std::int64_t scaled = rescore(cigar, "AWHE", "AWGHE", 1, 1, half);
        QCOMPARE(half.to_user(scaled), 18.0);
        // A gap of 3 at 10 / 0.5: 28 - 11 = 17.
        QCOMPARE(half.to_user(rescore(Cigar::parse("2=3D2="), "AWHE", "AWGGGHE", 1, 1, half)), 17.0);
    }

    void rescore_accepts_encoded_residues() {
        const ScoringScheme scheme = dna();
        const EncodedSequence q = encode("ACGTTA", scheme.matrix, "query");
        const EncodedSequence t = encode("ACTTGA", scheme.matrix, "target");
        const std::string_view qv(reinterpret_cast<const char*>(q.data()), q.size());
        const std::string_view tv(reinterpret_cast<const char*>(t.data()), t.size());
        QCOMPARE(rescore(Cigar::parse("2=1I2=1D1="), qv, tv, 1, 1, scheme),
                 rescore(Cigar::parse("2=1I2=1D1="), "ACGTTA", "ACTTGA", 1, 1, scheme));
    }

    void rescore_rejects_inconsistent_data() {
        QTest::addColumn<QString>("cigar");
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("target");
        QTest::addColumn<qint64>("query_begin");
        QTest::addColumn<qint64>("target_begin");
        QTest::newRow("past the query") << "7="
                                        << "ACGTTA"
                                        << "ACGTTAC" << qint64(1) << qint64(1);
        QTest::newRow("past the target") << "3D"
                                         << "A"
                                         << "GG" << qint64(1) << qint64(1);
        QTest::newRow("begin 0") << "1="
                                 << "A"
                                 << "A" << qint64(0) << qint64(1);
        QTest::newRow("begin past the end") << "1I"
                                            << "A"
                                            << "A" << qint64(1) << qint64(3);
        QTest::newRow("= on different residues") << "6="
                                                 << "ACGTTA"
                                                 << "ACTTGA" << qint64(1) << qint64(1);
        QTest::newRow("X on identical residues") << "1X"
                                                 << "A"
                                                 << "A" << qint64(1) << qint64(1);
        QTest::newRow("residue the matrix lacks") << "1="
                                                  << "J"
                                                  << "J" << qint64(1) << qint64(1);
    }
    void rescore_rejects_inconsistent() {
        QFETCH(QString, cigar);
        QFETCH(QString, query);
        QFETCH(QString, target);
        QFETCH(qint64, query_begin);
        QFETCH(qint64, target_begin);
        QVERIFY_THROWS_EXCEPTION(Error, rescore(Cigar::parse(cigar.toStdString()), query.toStdString(),
                                                target.toStdString(), query_begin, target_begin, dna()));
    }

    void complete_alignment_fills_rows_and_stats() {
        Alignment a;
        a.cigar = Cigar::parse("2=1I2=1D1=");
        a.query_begin = a.target_begin = 1;
        a.query_end = a.target_end = 6;
        complete_alignment(a, "ACGTTA", "ACTTGA", dna());
        QCOMPARE(a.query_aligned, std::string("ACGTT-A"));
        QCOMPARE(a.target_aligned, std::string("AC-TTGA"));
        QCOMPARE(a.stats.length, std::int64_t(7));
        QCOMPARE(a.stats.identities, std::int64_t(5));
        QCOMPARE(a.stats.similarities, std::int64_t(5));
        QCOMPARE(a.stats.gaps, std::int64_t(2));
        QCOMPARE(a.stats.gap_opens, std::int64_t(2));
        QCOMPARE(a.identity(), 5.0 / 7.0);
    }

    void complete_alignment_resolves_m() {
        Alignment a;
        a.cigar = Cigar::parse("4M2I1D");
        a.query_begin = 2;
        a.target_begin = 1;
        complete_alignment(a, "TACGTGG", "ACCTA", dna());
        QCOMPARE(a.cigar.to_string(), std::string("2=1X1=2I1D"));
        QCOMPARE(a.query_aligned, std::string("ACGTGG-"));
        QCOMPARE(a.target_aligned, std::string("ACCT--A"));
        QCOMPARE(a.stats.identities, std::int64_t(3));
        QCOMPARE(a.stats.gaps, std::int64_t(3));
        QCOMPARE(a.stats.gap_opens, std::int64_t(2));  // the 'I' run and the 'D' run
    }

    void similarities_count_positive_mismatches() {
        // BLOSUM62: I/V = 3, V/I = 3 (similar), K/W = -3 (not).
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        Alignment a;
        a.cigar = Cigar::parse("3M");
        a.query_begin = a.target_begin = 1;
        complete_alignment(a, "IVK", "VIW", scheme);
        QCOMPARE(a.cigar.to_string(), std::string("3X"));
        QCOMPARE(a.stats.identities, std::int64_t(0));
        QCOMPARE(a.stats.similarities, std::int64_t(2));
        QCOMPARE(a.similarity(), 2.0 / 3.0);
    }

    void complete_alignment_rejects_overrun() {
        Alignment a;
        a.cigar = Cigar::parse("5M");
        a.query_begin = a.target_begin = 1;
        QVERIFY_THROWS_EXCEPTION(Error, complete_alignment(a, "ACGT", "ACGTA", dna()));
    }
    void mode_names() {
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal})
            QCOMPARE(parse_mode(to_string(mode)), mode);
        QCOMPARE(to_string(AlignmentMode::SemiGlobal), std::string_view("semiglobal"));
        QCOMPARE(parse_mode("SW"), AlignmentMode::Local);
        QCOMPARE(parse_mode("nw"), AlignmentMode::Global);
        QCOMPARE(parse_mode("Semi-Global"), AlignmentMode::SemiGlobal);
        try {
            parse_mode("banded");
            QFAIL("no error for an unknown mode");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("--mode") != std::string::npos, e.what());
        }
    }

    void free_end_gaps_data() {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("printed");
        QTest::addColumn<int>("bits");  // qb, qe, tb, te = 1, 2, 4, 8
        QTest::newRow("all") << "all"
                             << "all" << 15;
        QTest::newRow("none") << "none"
                              << "none" << 0;
        QTest::newRow("glocal") << "qb,qe"
                                << "qb,qe" << 3;
        QTest::newRow("any order, spaces, case") << " TE , qb"
                                                 << "qb,te" << 9;
        QTest::newRow("every one listed") << "te,tb,qe,qb"
                                          << "all" << 15;
        QTest::newRow("one") << "tb"
                             << "tb" << 4;
        QTest::newRow("repeated") << "qe,qe"
                                  << "qe" << 2;
    }
    void free_end_gaps() {
        QFETCH(QString, spec);
        QFETCH(QString, printed);
        QFETCH(int, bits);
        const FreeEndGaps ends = FreeEndGaps::parse(spec.toStdString());
        QCOMPARE(ends.query_begin, bool(bits & 1));
        QCOMPARE(ends.query_end, bool(bits & 2));
        QCOMPARE(ends.target_begin, bool(bits & 4));
        QCOMPARE(ends.target_end, bool(bits & 8));
        QCOMPARE(QString::fromStdString(ends.to_string()), printed);
        QVERIFY(FreeEndGaps::parse(ends.to_string()) == ends);
    }

    void free_end_gaps_malformed_data() {
        QTest::addColumn<QString>("spec");
        QTest::newRow("empty") << "";
        QTest::newRow("unknown") << "qb,xe";
        QTest::newRow("empty item") << "qb,,te";
        QTest::newRow("trailing comma") << "qb,";
        QTest::newRow("all mixed in") << "all,qb";
    }
    void free_end_gaps_malformed() {
        QFETCH(QString, spec);
        try {
            FreeEndGaps::parse(spec.toStdString());
            QFAIL("no error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("--free-ends") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestCigar)
#include "test_cigar.moc"
