// Runs the real alignscope-cli binary (and other programs, such as EMBOSS's
// needle) from Qt Test suites, with helpers to read JSON Lines output.
#pragma once

#include "oracles.hpp"  // have_program

#include <QByteArray>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>
#include <QVector>

#include <string>

struct ProcessResult {
    int exit_code = -1;
    bool crashed = false;
    QByteArray out;
    QByteArray err;
};

inline ProcessResult run_program(const QString& program, const QStringList& arguments, int timeout_ms = 120000,
                                 const QByteArray& input = {}) {
    QProcess process;
    process.start(program, arguments);
    ProcessResult result;
    if (!process.waitForStarted(10000)) {
        result.err = "could not start " + program.toUtf8();
        return result;
    }
    if (!input.isEmpty()) process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        result.err = "timed out: " + program.toUtf8();
        return result;
    }
    result.crashed = process.exitStatus() != QProcess::NormalExit;
    result.exit_code = process.exitCode();
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    return result;
}

inline ProcessResult run_cli(const QStringList& arguments, int timeout_ms = 120000) {
    return run_program(QStringLiteral(ALIGNSCOPE_CLI), arguments, timeout_ms);
}

inline QVector<QJsonObject> parse_json_lines(const QByteArray& text) {
    QVector<QJsonObject> objects;
    for (const QByteArray& line : text.split('\n')) {
        if (line.trimmed().isEmpty()) continue;
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(line, &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) {
            qWarning("not a JSON object: %s", line.constData());
            return {};
        }
        objects.push_back(doc.object());
    }
    return objects;
}

// One FASTA record, 70 residues a line, as DIR/NAME; returns its path.
inline QString write_fasta(const QTemporaryDir& dir, const QString& name, const std::string& id,
                           const std::string& residues) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return path;
    f.write(">" + QByteArray::fromStdString(id) + "\n");
    for (std::size_t k = 0; k < residues.size(); k += 70)
        f.write(QByteArray::fromStdString(residues.substr(k, 70)) + "\n");
    return path;
}
