// Running HMMER's hmmsearch as the oracle of profile search tests: a slice of
// mmseqs2-examples' DB.fasta.gz as a FASTA file, hmmsearch's pipeline counts
// from its report, and its --tblout/--domtblout rows split into fields.
#pragma once

#include "cli_runner.hpp"
#include "oracles.hpp"

#include <alignscope/seq/sequence_reader.hpp>

#include <QFile>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <array>
#include <string>

namespace alignscope::test {

inline const QString kDatabase = QStringLiteral("/usr/share/doc/mmseqs2/example-data/DB.fasta.gz");
inline const QString kTutorial = QStringLiteral("/usr/share/doc/hmmer/examples/tutorial");

// The three oracles of a profile search test: hmmsearch, the HMMER tutorial's
// models (MODEL.hmm must be there) and mmseqs2-examples' DB.fasta.gz. A
// macro, for QFAIL/QSKIP end the test function that calls it.
#define ALIGNSCOPE_REQUIRE_PROFILE_ORACLES(model)                                                 \
    do {                                                                                          \
        ALIGNSCOPE_REQUIRE_ORACLE(::have_program(QStringLiteral("hmmsearch")),                    \
                                  "hmmsearch is not installed (Debian package hmmer)");           \
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(alignscope::test::kTutorial + "/" model ".hmm"),  \
                                  "tutorial models are missing (Debian package hmmer-examples)"); \
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(alignscope::test::kDatabase),                     \
                                  "DB.fasta.gz is missing (Debian package mmseqs2-examples)");    \
    } while (false)

// Pkinase, fn3 and globins4 (the first two with accessions) in one file, as
// Pfam ships its models, as DIR/NAME; empty when a model cannot be read.
inline QString three_tutorial_models(const QTemporaryDir& dir, const QString& name) {
    const QString path = dir.filePath(name);
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly)) return {};
    for (const char* m : {"Pkinase", "fn3", "globins4"}) {
        QFile in(kTutorial + "/" + m + ".hmm");
        if (!in.open(QIODevice::ReadOnly)) return {};
        out.write(in.readAll());
    }
    return path;
}

// The first `count` records of DB.fasta.gz, headers kept (descriptions with
// their trailing blanks, as hmmsearch prints them), as DIR/NAME.
inline QString database_slice(const QTemporaryDir& dir, const QString& name, std::size_t count) {
    const QString path = dir.filePath(name);
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly)) return path;
    SequenceReader reader(kDatabase.toStdString(), DescriptionBlanks::Keep);
    Sequence s;
    for (std::size_t n = 0; n < count && reader.next(s); ++n) {
        out.write(">" + QByteArray::fromStdString(s.id));
        if (!s.description.empty()) out.write(" " + QByteArray::fromStdString(s.description));
        out.write("\n" + QByteArray::fromStdString(s.residues) + "\n");
    }
    return path;
}

// "Passed MSV filter:" ... "Passed Fwd filter:" counts of one query's report,
// in report order (several queries: every fourth belongs to the same query).
inline QVector<qulonglong> passed_counts(const QByteArray& report) {
    QVector<qulonglong> counts;
    for (const QByteArray& line : report.split('\n'))
        if (line.startsWith("Passed "))
            counts.push_back(line.mid(line.indexOf(':') + 1).simplified().split(' ')[0].toULongLong());
    return counts;
}

// Data rows of a tabular output, as written.
inline QStringList table_rows(const QString& path) {
    QStringList rows;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return rows;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (line.startsWith('#') || line.trimmed().isEmpty()) continue;
        rows << QString::fromUtf8(line);
    }
    return rows;
}

}  // namespace alignscope::test
