// What a test does when an independent oracle it compares with (an EMBOSS
// program, parasail, hmmsearch, a Debian package's data files) is missing: on a
// developer's machine it skips, naming the package; where oracles are required
// (ALIGNSCOPE_REQUIRE_ORACLES=1, as scripts/check and so CI set it) it fails.
#pragma once

#include <QByteArray>
#include <QStandardPaths>
#include <QString>
#include <QTest>

inline bool have_program(const QString& name) { return !QStandardPaths::findExecutable(name).isEmpty(); }

namespace alignscope::test {

// Whether this run must have every oracle: ALIGNSCOPE_REQUIRE_ORACLES set to
// anything but empty or 0.
inline bool oracles_required() {
    const QByteArray v = qgetenv("ALIGNSCOPE_REQUIRE_ORACLES");
    return !v.isEmpty() && v != "0";
}

// The message either way: what is missing, and why that is a failure here.
inline QByteArray oracle_missing_message(const QString& what) {
    QString text = what;
    if (oracles_required()) text += " (ALIGNSCOPE_REQUIRE_ORACLES is set: a missing oracle fails the test)";
    return text.toUtf8();
}

}  // namespace alignscope::test

// Unless `available`, skips the test function (QSKIP) or, where oracles are
// required, fails it (QFAIL), saying `what` is missing (a const char* or
// QString naming the program or file and its Debian package). Like QSKIP and
// QFAIL it returns from the function it is written in.
#define ALIGNSCOPE_REQUIRE_ORACLE(available, what)                                                      \
    do {                                                                                                \
        if (!(available)) {                                                                             \
            const QByteArray oracle_message_ = alignscope::test::oracle_missing_message(QString(what)); \
            if (alignscope::test::oracles_required()) QFAIL(oracle_message_.constData());               \
            QSKIP(oracle_message_.constData());                                                         \
        }                                                                                               \
    } while (false)
