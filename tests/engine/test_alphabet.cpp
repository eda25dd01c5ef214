// Residue alphabets: detection, names, validity of every byte against the IUPAC
// sets written out independently here, and normalisation before alignment.
#include <alignscope/error.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <QtTest>

#include <string>

using namespace alignscope;

Q_DECLARE_METATYPE(alignscope::AlphabetKind)

namespace {
// IUPAC codes as published (nucleotides: NC-IUB 1984; amino acids: IUPAC-IUBMB,
// plus U selenocysteine, O pyrrolysine, J leucine/isoleucine and the stop '*').
const std::string kIupacDna = "ACGTRYSWKMBDHVN";
const std::string kIupacRna = "ACGURYSWKMBDHVN";
const std::string kIupacProtein = "ARNDCQEGHILKMFPSTWYVBZXUOJ*";
}  // namespace

class TestAlphabet : public QObject {
    Q_OBJECT
private slots:
    void detect_data() {
        QTest::addColumn<QString>("residues");
        QTest::addColumn<AlphabetKind>("expected");
        QTest::newRow("dna") << "ACGTTGCAAC" << AlphabetKind::Dna;
        QTest::newRow("dna lower case") << "acgtacgtnn" << AlphabetKind::Dna;
        QTest::newRow("rna") << "ACGUUGCAAC" << AlphabetKind::Rna;
        QTest::newRow("t and u is dna") << "ACGTUGCAAC" << AlphabetKind::Dna;
        QTest::newRow("protein") << "MKTAYIAKQRQISFVKSHFSRQ" << AlphabetKind::Protein;
        QTest::newRow("empty") << "" << AlphabetKind::Dna;
        // X is "any amino acid"; no nucleotide alphabet has it.
        QTest::newRow("only N and X") << "NNNNXXXX" << AlphabetKind::Protein;
        QTest::newRow("only X") << "XXXXXXXX" << AlphabetKind::Protein;
        QTest::newRow("only N") << "NNNNNNNN" << AlphabetKind::Dna;
        QTest::newRow("gaps ignored") << "AC--GT..ACGT**" << AlphabetKind::Dna;
        // 9 of 10 counted letters are ACGT: exactly the 90 % boundary.
        QTest::newRow("90 percent") << "ACGTACGTAENNN" << AlphabetKind::Dna;
        QTest::newRow("80 percent") << "ACGTACGTEE" << AlphabetKind::Protein;
        // A protein made only of Ala, Cys, Gly, Thr is indistinguishable from DNA.
        QTest::newRow("protein of ACGT letters") << "ACGTACGT" << AlphabetKind::Dna;
        // Mostly ambiguity codes: as likely a protein of those letters.
        QTest::newRow("ambiguity codes count against") << "ACGTRYKMSWRYKM" << AlphabetKind::Protein;
        // Every letter a nucleotide code, most of them ACGT: nucleotides.
        QTest::newRow("dna with IUPAC codes") << "acgtACGTacgtNnRy" << AlphabetKind::Dna;
        QTest::newRow("rna with IUPAC codes") << "ACGUACGUYRSWACGU" << AlphabetKind::Rna;
        QTest::newRow("IUPAC codes and a protein letter") << "ACGTACGTACRYE" << AlphabetKind::Protein;
    }
    void detect() {
        QFETCH(QString, residues);
        QFETCH(AlphabetKind, expected);
        QCOMPARE(detect_alphabet(residues.toStdString()), expected);
    }

    void names() {
        for (auto kind : {AlphabetKind::Dna, AlphabetKind::Rna, AlphabetKind::Protein})
            QCOMPARE(parse_alphabet(to_string(kind)), kind);
        QCOMPARE(to_string(AlphabetKind::Dna), std::string_view("dna"));
        QCOMPARE(to_string(AlphabetKind::Rna), std::string_view("rna"));
        QCOMPARE(to_string(AlphabetKind::Protein), std::string_view("protein"));
        QCOMPARE(parse_alphabet("DNA"), AlphabetKind::Dna);
        QCOMPARE(parse_alphabet("Nucleotide"), AlphabetKind::Dna);
        QCOMPARE(parse_alphabet("aa"), AlphabetKind::Protein);
        QCOMPARE(parse_alphabet("AMINO"), AlphabetKind::Protein);
        QCOMPARE(parse_alphabet("Rna"), AlphabetKind::Rna);
        for (const char* bad : {"", "prot", "dna ", "xna"}) {
            try {
                parse_alphabet(bad);
                QFAIL(qPrintable(QString("accepted '%1'").arg(bad)));
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find("--alphabet") != std::string::npos, e.what());
            }
        }
    }

    void validity_data() {
        QTest::addColumn<AlphabetKind>("kind");
        QTest::addColumn<QString>("letters");
        QTest::newRow("dna") << AlphabetKind::Dna << QString::fromStdString(kIupacDna);
        QTest::newRow("rna") << AlphabetKind::Rna << QString::fromStdString(kIupacRna);
        QTest::newRow("protein") << AlphabetKind::Protein << QString::fromStdString(kIupacProtein);
    }
    void validity() {
        QFETCH(AlphabetKind, kind);
        QFETCH(QString, letters);
        const std::string set = letters.toStdString();
        std::string published(alphabet_letters(kind));
        std::string sorted_set = set;
        std::sort(published.begin(), published.end());
        std::sort(sorted_set.begin(), sorted_set.end());
        QCOMPARE(published, sorted_set);
        for (int b = 0; b < 256; ++b) {
            const char c = static_cast<char>(b);
            const char up = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c;
            const bool expected = set.find(up) != std::string::npos && c != '\0';
            QVERIFY2(is_valid_residue(kind, c) == expected, qPrintable(QString("byte %1").arg(b)));
        }
    }

    void normalise_data() {
        QTest::addColumn<QString>("input");
        QTest::addColumn<AlphabetKind>("kind");
        QTest::addColumn<QString>("output");
        QTest::addColumn<int>("bad");  // -1: all valid
        QTest::newRow("gaps and case") << "ac-g.T" << AlphabetKind::Dna << "ACGT" << -1;
        QTest::newRow("stop removed") << "mkv*" << AlphabetKind::Protein << "MKV" << -1;
        QTest::newRow("only one stop removed") << "MKV**" << AlphabetKind::Protein << "MKV*" << -1;
        QTest::newRow("inner stop kept") << "MK*V*" << AlphabetKind::Protein << "MK*V" << -1;
        QTest::newRow("stop in dna is invalid") << "ACGT*" << AlphabetKind::Dna << "ACGT*" << 4;
        QTest::newRow("J in dna") << "ac-JT" << AlphabetKind::Dna << "ACJT" << 2;
        QTest::newRow("U in dna") << "ACGU" << AlphabetKind::Dna << "ACGU" << 3;
        QTest::newRow("T in rna") << "ACGT" << AlphabetKind::Rna << "ACGT" << 3;
        QTest::newRow("rna") << "acgu-n" << AlphabetKind::Rna << "ACGUN" << -1;
        QTest::newRow("digit") << "MK1V" << AlphabetKind::Protein << "MK1V" << 2;
        QTest::newRow("empty") << "" << AlphabetKind::Protein << "" << -1;
        QTest::newRow("only gaps") << "--..--" << AlphabetKind::Dna << "" << -1;
    }
    void normalise() {
        QFETCH(QString, input);
        QFETCH(AlphabetKind, kind);
        QFETCH(QString, output);
        QFETCH(int, bad);
        std::string residues = input.toStdString();
        const std::size_t result = normalise_residues(residues, kind);
        QCOMPARE(QString::fromStdString(residues), output);
        QCOMPARE(result, bad < 0 ? std::string::npos : static_cast<std::size_t>(bad));
    }
};

QTEST_GUILESS_MAIN(TestAlphabet)
#include "test_alphabet.moc"
