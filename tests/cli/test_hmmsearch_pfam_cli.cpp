// alignscope-cli hmmsearch --pfamtblout and --acc through the real binary,
// against the real hmmsearch (HMMER 3.3.2) run on the same files with the same
// options: the Pfam-style table line for line (every header, rule and row of
// every model; the commented tail aside), the report's alignments naming the
// model by its accession, and the report's header naming both options in
// hmmsearch's order; and descriptions printed as the FASTA headers have them
// (trailing blanks and tabs kept) in every output, byte for byte.
#include "hmmsearch_oracle.hpp"
#include "oracles.hpp"

#include <QtTest>

using namespace alignscope::test;

namespace {

// The lines of a file, as written, up to the commented tail
// ("#" then "# Program:") that names the program and the date.
QStringList lines_before_tail(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QStringList lines;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.startsWith("# Program:")) {
            if (!lines.isEmpty() && lines.last() == "#") lines.removeLast();
            break;
        }
        lines << QString::fromUtf8(line);
    }
    return lines;
}

// The report from "Query:" to the pipeline statistics.
QStringList hits_section(const QByteArray& report) {
    QStringList lines;
    bool in = false;
    for (const QByteArray& line : report.split('\n')) {
        if (line.startsWith("Query:")) in = true;
        if (line.startsWith("Internal pipeline")) in = false;
        if (!in) continue;
        lines << QString::fromUtf8(line);
    }
    return lines;
}

// The labels of the report header's option lines ("# per-seq hits tabular
// output"), in order; not the worker threads (hmmsearch names them only for a
// --cpu other than its default, we always do).
QStringList header_labels(const QByteArray& report) {
    QStringList labels;
    for (const QByteArray& line : report.split('\n')) {
        if (line.startsWith("Query:")) break;
        const int colon = line.indexOf(':');
        if (line.startsWith("# ") && colon > 0 && !line.contains("HMMER") && !line.contains("hmmsearch ::") &&
            !line.startsWith("# number of worker threads"))
            labels << QString::fromUtf8(line.left(colon));
    }
    return labels;
}

// globins45.fa of the HMMER tutorial with headers that test how a description
// is cut from its header: trailing blanks and tabs, inner runs of blanks, CRLF
// line ends, no description or one of blanks only, blanks before the name, and
// one longer than the report's text width. As DIR/tricky.fa; empty on failure.
QString tricky_headers(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("tricky.fa"));
    const QByteArray long_description = QByteArray("a long description, ").repeated(8) + "  ";
    const QList<QByteArray> tails = {" trailing blank ",
                                     "\tafter a tab\t\t",
                                     "   several   inner  blanks   x  ",
                                     " CRLF line end \r",
                                     "",
                                     " ",
                                     "   \t ",
                                     " a\tb  tab inside \r",
                                     " " + long_description,
                                     " ends in a tab\t",
                                     " ends in two blanks  \r"};
    alignscope::SequenceReader reader((kTutorial + "/globins45.fa").toStdString());
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly)) return {};
    alignscope::Sequence s;
    for (const QByteArray& tail : tails) {
        if (!reader.next(s)) return {};
        const QByteArray end = tail.endsWith('\r') ? "\r\n" : "\n";
        const QByteArray lead = tail == " " ? "  " : "";  // blanks before the name
        out.write(">" + lead + QByteArray::fromStdString(s.id) + tail.chopped(tail.endsWith('\r') ? 1 : 0) + end);
        out.write(QByteArray::fromStdString(s.residues) + end);
    }
    return path;
}

}  // namespace

class TestHmmsearchPfamCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("Pkinase");
        db_ = database_slice(dir_, QStringLiteral("slice.fa"), 1500);
        // Two models with accessions and one without, in one file.
        models_ = three_tutorial_models(dir_, QStringLiteral("three.hmm"));
        QVERIFY(!models_.isEmpty());
    }

    void same_as_hmmsearch_data() {
        QTest::addColumn<QStringList>("options");
        QTest::newRow("defaults") << QStringList{};
        QTest::newRow("-Z") << QStringList{"-Z", "2000000"};
        // Few reported targets, and longer names among those that are not.
        QTest::newRow("-E 1e-70") << QStringList{"-E", "1e-70", "--domE", "1e-60"};
        QTest::newRow("bit score thresholds") << QStringList{"-T", "18", "--domT", "15", "--incT", "25"};
        QTest::newRow("--noali and the filters' options")
            << QStringList{"--noali",  "--F1",   "0.03", "--F2",   "0.002", "--F3",     "2e-5",
                           "--nobias", "--domZ", "40",   "--seed", "7",     "--notextw"};
    }

    void same_as_hmmsearch() {
        QFETCH(QStringList, options);
        QTemporaryDir dir;
        auto run = [&](const QString& program, const QString& tag, const QStringList& extra) {
            QStringList args;
            if (program == QStringLiteral(ALIGNSCOPE_CLI)) args << "hmmsearch";
            args << options << "--acc"
                 << "--pfamtblout" << dir.filePath(tag + ".pfam") << "-o" << dir.filePath(tag + ".out") << extra
                 << models_ << db_;
            const ProcessResult r = run_program(program, args);
            if (r.exit_code != 0) qWarning("%s: %s", qPrintable(program), r.err.constData());
            QFile f(dir.filePath(tag + ".out"));
            (void)f.open(QIODevice::ReadOnly);
            return std::make_pair(r.exit_code, f.readAll());
        };
        const auto [ref_status, ref] = run(QStringLiteral("hmmsearch"), QStringLiteral("ref"), {"--cpu", "1"});
        const auto [our_status, ours] = run(QStringLiteral(ALIGNSCOPE_CLI), QStringLiteral("ours"), {"--threads", "2"});
        QCOMPARE(ref_status, 0);
        QCOMPARE(our_status, 0);

        const QStringList ref_pfam = lines_before_tail(dir.filePath("ref.pfam"));
        QCOMPARE(ref_pfam.count("# Sequence scores"), 3);  // one block pair per model
        QVERIFY(ref_pfam.size() > 30);
        QCOMPARE(lines_before_tail(dir.filePath("ours.pfam")), ref_pfam);

        QCOMPARE(header_labels(ours), header_labels(ref));
        QVERIFY(header_labels(ours).contains("# prefer accessions over names"));
        QCOMPARE(hits_section(ours), hits_section(ref));
        if (!options.contains("--noali")) {
            // The alignments name Pkinase by its accession, globins4 (none) by its name.
            QVERIFY(hits_section(ours).join('\n').contains("  PF00069.17 "));
            QVERIFY(hits_section(ours).join('\n').contains("  globins4 "));
        }
    }

    // Descriptions as hmmsearch prints them: everything after the name and the
    // blanks that follow it, up to the line end (a CRLF's '\r' not included),
    // trailing blanks and tabs kept; "-" in the tables and the name in -A's
    // "#=GS ... DE" line when there is none; cut to the text width in -o.
    void descriptions_as_hmmsearch_prints_them() {
        QTemporaryDir dir;
        const QString fasta = tricky_headers(dir);
        QVERIFY(!fasta.isEmpty());
        auto run = [&](const QString& program, const QString& tag) {
            QStringList args;
            if (program == QStringLiteral(ALIGNSCOPE_CLI)) args << "hmmsearch";
            args << "-o" << dir.filePath(tag + ".out") << "-A" << dir.filePath(tag + ".sto");
            for (const char* table : {"tblout", "domtblout", "pfamtblout"})
                args << QStringLiteral("--") + table << dir.filePath(tag + "." + table);
            args << kTutorial + "/globins4.hmm" << fasta;
            const ProcessResult r = run_program(program, args);
            QFile f(dir.filePath(tag + ".out"));
            if (r.exit_code != 0 || !f.open(QIODevice::ReadOnly))
                qWarning("%s: %s", qPrintable(tag), r.err.constData());
            return std::make_pair(r.exit_code, f.readAll());
        };
        const auto [ref_status, ref] = run(QStringLiteral("hmmsearch"), QStringLiteral("ref"));
        const auto [our_status, ours] = run(QStringLiteral(ALIGNSCOPE_CLI), QStringLiteral("ours"));
        QCOMPARE(ref_status, 0);
        QCOMPARE(our_status, 0);
        for (const char* table : {"tblout", "domtblout", "pfamtblout"}) {
            const QString tag = QStringLiteral(".") + table;
            const QStringList expected = lines_before_tail(dir.filePath("ref" + tag));
            QCOMPARE(lines_before_tail(dir.filePath("ours" + tag)), expected);
        }
        // The oracle did keep what a trimming reader would drop.
        const QStringList ref_rows = table_rows(dir.filePath(QStringLiteral("ref.tblout")));
        QCOMPARE(ref_rows.size(), 11);
        QVERIFY(ref_rows.filter(QRegularExpression(QStringLiteral(" after a tab\t\t$"))).size() == 1);
        QVERIFY(ref_rows.filter(QRegularExpression(QStringLiteral(" CRLF line end $"))).size() == 1);
        QVERIFY(ref_rows.filter(QRegularExpression(QStringLiteral(" -$"))).size() == 3);
        QCOMPARE(hits_section(ours), hits_section(ref));
        auto stockholm = [&](const QString& tag) {
            QFile f(dir.filePath(tag + ".sto"));
            (void)f.open(QIODevice::ReadOnly);
            QStringList lines;
            for (const QByteArray& line : f.readAll().split('\n'))
                if (!line.startsWith("#=GF AU")) lines << QString::fromUtf8(line);
            return lines;
        };
        QVERIFY(stockholm(QStringLiteral("ref")).filter(QStringLiteral(" DE [subseq from] ")).size() == 11);
        QCOMPARE(stockholm(QStringLiteral("ours")), stockholm(QStringLiteral("ref")));
    }

    void pfamtblout_refused_where_it_cannot_be_written() {
        const ProcessResult r =
            run_cli({"hmmsearch", "--pfamtblout", "/nonexistent/dir/p.txt", kTutorial + "/fn3.hmm", db_});
        QCOMPARE(r.exit_code, 2);
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY2(r.err.contains("/nonexistent/dir/p.txt"), r.err.constData());
    }

    void pfamtblout_may_not_be_an_input() {
        const ProcessResult r = run_cli({"hmmsearch", "--pfamtblout", db_, kTutorial + "/fn3.hmm", db_});
        QCOMPARE(r.exit_code, 2);
        QVERIFY2(r.err.contains("--pfamtblout"), r.err.constData());
    }

private:
    QTemporaryDir dir_;
    QString db_, models_;
};

QTEST_GUILESS_MAIN(TestHmmsearchPfamCli)
#include "test_hmmsearch_pfam_cli.moc"
