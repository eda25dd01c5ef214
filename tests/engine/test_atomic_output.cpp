// The outputs of one command put in place together (commit_together): a
// write that fails in any of them (/dev/full) keeps every file back; a file
// that cannot be put in place after others were (its name is now a folder)
// is an error naming the ones already written; and a failed write says why
// in the system's words and the user's.
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>
#include <string>

using namespace alignscope;

namespace {

QByteArray read_all(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<unreadable>");
}

template <class Body>
QString error_of(Body body) {
    try {
        body();
    } catch (const Error& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

class TestAtomicOutput : public QObject {
    Q_OBJECT

private slots:
    void aFailedWriteKeepsEveryFileBack() {
        if (!QFile::exists("/dev/full")) QSKIP("/dev/full does not exist on this system");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string first = dir.filePath("first").toStdString(), third = dir.filePath("third").toStdString();
        QFile earlier(dir.filePath("third"));
        QVERIFY(earlier.open(QIODevice::WriteOnly));
        earlier.write("earlier\n");
        earlier.close();
        const QString message = error_of([&] {
            AtomicOutput a(first), full("/dev/full"), c(third);
            a.stream() << "first\n";
            full.stream() << std::string(1 << 17, 'x');  // past the buffer: the write fails now
            c.stream() << "third\n";
            commit_together({&a, &full, &c});
        });
        QCOMPARE(message, QString("/dev/full: write failed (No space left on device: the disk is full)"));
        QVERIFY(!QFile::exists(dir.filePath("first")));
        QCOMPARE(read_all(dir.filePath("third")), QByteArray("earlier\n"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 QStringList{"third"});
    }

    void aFileNotPutInPlaceNamesThoseWritten() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string first = dir.filePath("first").toStdString(), second = dir.filePath("second").toStdString();
        const QString message = error_of([&] {
            AtomicOutput a(first), b(second);
            a.stream() << "first\n";
            b.stream() << "second\n";
            // The second's name becomes a folder that holds a file: no rename can replace it.
            QVERIFY(QDir(dir.path()).mkpath("second/inside"));
            commit_together({&a, nullptr, &b});
        });
        QVERIFY2(message.startsWith(QString::fromStdString(second) + ": cannot replace the file ("),
                 qPrintable(message));
        QVERIFY2(message.endsWith("; already written: " + QString::fromStdString(first)), qPrintable(message));
        QCOMPARE(read_all(dir.filePath("first")), QByteArray("first\n"));
    }

    void everyOutputInPlaceWhenAllAreWhole() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        AtomicOutput a(dir.filePath("a").toStdString()), b(dir.filePath("b").toStdString());
        a.stream() << "a\n";
        b.stream() << "b\n";
        commit_together({&a, &b});
        QCOMPARE(read_all(dir.filePath("a")), QByteArray("a\n"));
        QCOMPARE(read_all(dir.filePath("b")), QByteArray("b\n"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
                 (QStringList{"a", "b"}));
    }

    void reasonsInTheUsersWords() {
        QVERIFY(QString::fromStdString(write_failure_reason(ENOSPC)).endsWith(": the disk is full"));
        QVERIFY(QString::fromStdString(write_failure_reason(EFBIG)).contains("file size limit"));
        QVERIFY(
            QString::fromStdString(write_failure_reason(EIO)).contains("the disk or the network file system failed"));
        QVERIFY(QString::fromStdString(write_failure_reason(EDQUOT)).contains("quota"));
    }
};

QTEST_GUILESS_MAIN(TestAtomicOutput)
#include "test_atomic_output.moc"
