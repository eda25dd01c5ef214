// The real 16S rRNA set of Debian's microbiomeutil-data (5,181 sequences,
// 1,205-1,655 bp) and slices of it as FASTA files, for the all-against-all
// suites.
#pragma once

#include <QFile>
#include <QString>
#include <QTemporaryDir>

inline constexpr const char* k16S = "/usr/share/microbiomeutil-data/RESOURCES/rRNA16S.gold.fasta";

// The first `count` records of the 16S set (or `skip` records on) as the FASTA
// file `name` in `dir`; empty when the set or the file cannot be opened.
inline QString subset(const QTemporaryDir& dir, const QString& name, int count, int skip = 0) {
    QFile in(k16S);
    if (!in.open(QIODevice::ReadOnly)) return {};
    QFile out(dir.filePath(name));
    if (!out.open(QIODevice::WriteOnly)) return {};
    int record = -1;
    while (!in.atEnd()) {
        const QByteArray line = in.readLine();
        if (line.startsWith('>')) ++record;
        if (record >= skip + count) break;
        if (record >= skip) out.write(line);
    }
    return out.fileName();
}
