// Reading HMMER3 save files: every model hmmer-examples ships (tutorial and
// testsuite, plain and gzip, HMMER3/e and 3/f, amino and DNA) against what
// HMMER's own hmmstat says of them; a 3/e file against hmmconvert's 3/f copy
// of it; several models in one file; and damaged copies of a small model,
// each refused with the file, the line and what was wrong.
#include "cli_runner.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/hmm_file.hpp>

#include <zlib.h>

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace alignscope;
using namespace alignscope::profile;

namespace {

const QString kExamples = QStringLiteral("/usr/share/doc/hmmer/examples");
const QString kTiny = QStringLiteral(ALIGNSCOPE_TEST_DATA "/profile/tiny.hmm");

std::string read_text(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_text(const QString& path, const std::string& text) {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out << text;
}

QString error_of(const std::string& path) {
    try {
        read_hmm_file(path);
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no error>");
}

struct StatRow {
    QString name;
    int nseq = 0;
    int M = 0;
};

// hmmstat's per-model rows: idx name accession nseq eff_nseq M ...
QVector<StatRow> hmmstat(const QString& path) {
    QVector<StatRow> rows;
    const ProcessResult r = run_program(QStringLiteral("hmmstat"), {path});
    for (const QByteArray& line : r.out.split('\n')) {
        if (line.startsWith('#') || line.trimmed().isEmpty()) continue;
        const QList<QByteArray> f = line.simplified().split(' ');
        if (f.size() < 6) continue;
        rows.push_back({QString::fromLatin1(f[1]), f[3].toInt(), f[5].toInt()});
    }
    return rows;
}

QStringList example_models() {
    QStringList files;
    for (const QString& sub : {QStringLiteral("tutorial"), QStringLiteral("testsuite")}) {
        QDir dir(kExamples + "/" + sub);
        for (const QString& f :
             dir.entryList({QStringLiteral("*.hmm"), QStringLiteral("*.hmm.gz")}, QDir::Files, QDir::Name))
            files << dir.filePath(f);
    }
    return files;
}

void check_sums(const ProfileHmm& hmm) {
    const int K = hmm.canonical();
    for (int k = 1; k <= hmm.length; ++k) {
        double match = 0, insert = 0;
        for (int x = 0; x < K; ++x) {
            match += hmm.match_probability(k, x);
            insert += hmm.insert[static_cast<std::size_t>(k * K + x)];
        }
        QVERIFY2(
            std::fabs(match - 1.0) < 1e-3,
            qPrintable(
                QStringLiteral("%1 node %2 match sum %3").arg(QString::fromStdString(hmm.name)).arg(k).arg(match)));
        QVERIFY(std::fabs(insert - 1.0) < 1e-3);
        if (k < hmm.length) {
            QVERIFY(std::fabs(hmm.transition(k, kMM) + hmm.transition(k, kMI) + hmm.transition(k, kMD) - 1.0) < 1e-3);
            QVERIFY(std::fabs(hmm.transition(k, kIM) + hmm.transition(k, kII) - 1.0) < 1e-3);
            QVERIFY(std::fabs(hmm.transition(k, kDM) + hmm.transition(k, kDD) - 1.0) < 1e-3);
        }
    }
}

}  // namespace

class TestProfileHmmFile : public QObject {
    Q_OBJECT

private slots:
    void examples_match_hmmstat() {
        ALIGNSCOPE_REQUIRE_ORACLE(have_program(QStringLiteral("hmmstat")),
                                  "hmmstat is not installed (Debian package hmmer)");
        const QStringList files = example_models();
        ALIGNSCOPE_REQUIRE_ORACLE(files.size() >= 10,
                                  "hmmer-examples' models are missing (Debian package hmmer-examples)");
        int models = 0, dna = 0, older = 0;
        for (const QString& file : files) {
            const auto read = read_hmm_file(file.toStdString());
            const QVector<StatRow> stat = hmmstat(file);
            QCOMPARE(static_cast<int>(read.size()), static_cast<int>(stat.size()));
            for (int i = 0; i < stat.size(); ++i) {
                const ProfileHmm& m = read[static_cast<std::size_t>(i)];
                QCOMPARE(QString::fromStdString(m.name), stat[i].name);
                QCOMPARE(m.length, stat[i].M);
                QCOMPARE(m.sequences, stat[i].nseq);
                QVERIFY2(m.statistics.has_value(), qPrintable(file));
                QVERIFY(m.statistics->msv_lambda > 0 && m.statistics->forward_lambda > 0);
                QCOMPARE(static_cast<int>(m.consensus.size()), m.length + 1);
                check_sums(m);
                ++models;
                dna += m.alphabet != ResidueAlphabet::Amino;
                older += m.format != "HMMER3/f";
            }
        }
        QVERIFY(models >= 15);
        QVERIFY(dna >= 2);    // MADE1, 2OG-FeII_Oxy_3-nt, ecori, ...
        QVERIFY(older >= 5);  // HMMER3/e files of the testsuite
    }

    // The same model as HMMER3/e and as hmmconvert's HMMER3/f: same numbers.
    void three_e_equals_converted_three_f() {
        ALIGNSCOPE_REQUIRE_ORACLE(have_program(QStringLiteral("hmmconvert")),
                                  "hmmconvert is not installed (Debian package hmmer)");
        const QString source = kExamples + "/testsuite/PSE.hmm";
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(source), "PSE.hmm is missing (Debian package hmmer-examples)");
        QTemporaryDir dir;
        const ProcessResult r = run_program(QStringLiteral("hmmconvert"), {source});
        QCOMPARE(r.exit_code, 0);
        const QString converted = dir.filePath(QStringLiteral("pse3f.hmm"));
        write_text(converted, r.out.toStdString());
        const auto a = read_hmm_file(source.toStdString());
        const auto b = read_hmm_file(converted.toStdString());
        QCOMPARE(a.size(), std::size_t(1));
        QCOMPARE(b.size(), std::size_t(1));
        QCOMPARE(a[0].format, std::string("HMMER3/e"));
        QCOMPARE(b[0].format, std::string("HMMER3/f"));
        QCOMPARE(a[0].length, b[0].length);
        QCOMPARE(a[0].consensus, b[0].consensus);
        QCOMPARE(a[0].statistics->viterbi_mu, b[0].statistics->viterbi_mu);
        for (std::size_t i = 0; i < a[0].match.size(); ++i) QVERIFY(std::fabs(a[0].match[i] - b[0].match[i]) < 1e-5f);
        for (std::size_t i = 0; i < a[0].transitions.size(); ++i)
            QVERIFY(std::fabs(a[0].transitions[i] - b[0].transitions[i]) < 1e-5f);
    }

    // Several models in one file, plain and gzip, in file order.
    void several_models_in_one_file() {
        QTemporaryDir dir;
        std::string all;
        for (const char* m : {"Pkinase", "fn3", "globins4", "MADE1"}) {
            const QString path = kExamples + "/tutorial/" + m + ".hmm";
            ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(path),
                                      "hmmer-examples' tutorial models are missing (Debian package hmmer-examples)");
            all += read_text(path);
        }
        const QString plain = dir.filePath(QStringLiteral("four.hmm"));
        write_text(plain, all);
        const QString packed = dir.filePath(QStringLiteral("four.hmm.gz"));
        gzFile gz = gzopen(packed.toLocal8Bit().constData(), "wb");
        gzwrite(gz, all.data(), static_cast<unsigned>(all.size()));
        gzclose(gz);
        for (const QString& file : {plain, packed}) {
            const auto models = read_hmm_file(file.toStdString());
            QCOMPARE(models.size(), std::size_t(4));
            QCOMPARE(models[0].name, std::string("Pkinase"));
            QCOMPARE(models[0].accession, std::string("PF00069.17"));
            QCOMPARE(models[0].description, std::string("Protein kinase domain"));
            QCOMPARE(models[1].name, std::string("fn3"));
            QCOMPARE(models[2].name, std::string("globins4"));
            QCOMPARE(models[3].alphabet, ResidueAlphabet::Dna);
            QVERIFY(models[1].line > models[0].line && models[3].line > models[2].line);
            QCOMPARE(models[2].composition.size(), std::size_t(20));
        }
    }

    void malformed_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("message");
        QTest::newRow("no name") << "NAME  tiny\n"
                                 << "" << 16 << "has no NAME line";
        QTest::newRow("zero length") << "LENG  9\n"
                                     << "LENG  0\n"
                                     << 3 << "model length (LENG) must be between 1 and 100000";
        QTest::newRow("bad alphabet") << "ALPH  amino"
                                      << "ALPH  protein" << 4 << "alphabet (ALPH) must be amino, DNA or RNA";
        QTest::newRow("two STATS lines") << "STATS LOCAL FORWARD   -3.4191  0.74669\n"
                                         << "" << 16 << "lacks one of its STATS";
        QTest::newRow("STATS not LOCAL") << "STATS LOCAL MSV"
                                         << "STATS GLOBAL MSV" << 14 << "expected LOCAL";
        QTest::newRow("letters for a number")
            << "      2   4.29855"
            << "      2   4.2x855" << 25 << "expected a number for match emissions of node 2";
        QTest::newRow("negative log probability")
            << "      3   4.51260"
            << "      3   -4.51260" << 28 << "expected a negative log probability";
        QTest::newRow("wrong node number") << "      4   "
                                           << "      5   " << 31 << "expected the match line of node 4";
        QTest::newRow("checksum past 32 bits")
            << "CKSUM 2784999311"
            << "CKSUM 34604300000" << 13 << "the checksum (CKSUM) is a whole number from 0 to 4294967295";
        QTest::newRow("negative checksum") << "CKSUM 2784999311"
                                           << "CKSUM -1" << 13 << "the checksum (CKSUM) is a whole number";
        QTest::newRow("match emissions not summing to 1")
            << "      3   4.51260"
            << "      3   0.51260" << 28 << "the match emissions of node 3 sum to 1.58";
        QTest::newRow("transitions not summing to 1")
            << "          0.01083  4.92694  5.64929  0.61958  0.77255  0.48576  0.95510\n      5"
            << "          2.01083  4.92694  5.64929  0.61958  0.77255  0.48576  0.95510\n      5" << 33
            << "the transitions out of the match state of node 4 sum to 0.14";
        QTest::newRow("HMMER2 file") << "HMMER3/f [3.3.2 | Nov 2020]"
                                     << "HMMER2.0  [2.3.2]" << 1 << "HMMER2 save files are not supported";
        QTest::newRow("unknown tag") << "HMMER3/f [3.3.2 | Nov 2020]"
                                     << "HMMER9/z" << 1 << "expected a HMMER3 format tag";
        QTest::newRow("short transitions")
            << "          0.01083  4.92694  5.64929  0.61958  0.77255  0.48576  0.95510\n      5"
            << "          0.01083  4.92694  5.64929\n      5" << 33
            << "transitions of node 4: expected 7 values, found 3";
    }

    void malformed() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, line);
        QFETCH(QString, message);
        std::string text = read_text(kTiny);
        const std::size_t at = text.find(from.toStdString());
        QVERIFY2(at != std::string::npos, qPrintable(from));
        text.replace(at, static_cast<std::size_t>(from.size()), to.toStdString());
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("damaged.hmm"));
        write_text(path, text);
        const QString error = error_of(path.toStdString());
        QVERIFY2(error.startsWith(path + ":" + QString::number(line) + ": "), qPrintable(error));
        QVERIFY2(error.contains(message), qPrintable(error));
    }

    void truncated_and_empty() {
        QTemporaryDir dir;
        const std::string text = read_text(kTiny);
        const QString cut = dir.filePath(QStringLiteral("cut.hmm"));
        write_text(cut, text.substr(0, text.find("      6 ")));
        QString error = error_of(cut.toStdString());
        QVERIFY2(error.contains(cut + ":") && error.contains("the file ends early: expected node 6 of 9"),
                 qPrintable(error));
        const QString no_end = dir.filePath(QStringLiteral("noend.hmm"));
        write_text(no_end, text.substr(0, text.rfind("//")));
        error = error_of(no_end.toStdString());
        QVERIFY2(error.contains("expected the closing // of model 'tiny'"), qPrintable(error));
        const QString empty = dir.filePath(QStringLiteral("empty.hmm"));
        write_text(empty, "");
        QVERIFY(error_of(empty.toStdString()).contains("no profile HMM in the file"));
        QVERIFY(error_of(dir.filePath(QStringLiteral("absent.hmm")).toStdString()).contains("cannot open"));
    }

    // hmmpress's binary files get one clear error, not a parse of garbage.
    void pressed_binary_refused() {
        ALIGNSCOPE_REQUIRE_ORACLE(have_program(QStringLiteral("hmmpress")),
                                  "hmmpress is not installed (Debian package hmmer)");
        QTemporaryDir dir;
        const QString model = dir.filePath(QStringLiteral("tiny.hmm"));
        QFile::copy(kTiny, model);
        QCOMPARE(run_program(QStringLiteral("hmmpress"), {model}).exit_code, 0);
        for (const char* ext : {".h3m", ".h3p", ".h3f"}) {
            const QString error = error_of((model + ext).toStdString());
            QVERIFY2(error.contains("binary (hmmpress) profile file is not supported; give the text .hmm file"),
                     qPrintable(error));
        }
    }

    void nucleotide_model() {
        const auto models = read_hmm_file(ALIGNSCOPE_TEST_DATA "/profile/tiny_dna.hmm");
        QCOMPARE(models.size(), std::size_t(1));
        QCOMPARE(models[0].alphabet, ResidueAlphabet::Dna);
        QCOMPARE(models[0].canonical(), 4);
        QCOMPARE(models[0].length, 10);
        check_sums(models[0]);
        const ResidueCode& dna = ResidueCode::of(ResidueAlphabet::Dna);
        QCOMPARE(dna.code_of('u'), dna.code_of('T'));
        QCOMPARE(dna.code_of('X'), dna.code_of('N'));
        QVERIFY(dna.stands_for(dna.code_of('R'), dna.code_of('G')));
        QVERIFY(!dna.stands_for(dna.code_of('R'), dna.code_of('C')));
        QCOMPARE(dna.code_of('Q'), -1);
    }
};

QTEST_GUILESS_MAIN(TestProfileHmmFile)
#include "test_profile_hmm_file.moc"
