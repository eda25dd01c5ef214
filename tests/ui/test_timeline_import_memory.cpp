// Importing a Chrome trace into the timeline view with too little memory: in a
// child process under an address-space limit a few MiB above what it uses, a
// 64 MiB trace cannot be read, and the import must fail with one Error naming
// the file and what the user can do, never a bare std::bad_alloc (the window
// would show "std::bad_alloc"). A device or pipe is refused at once instead
// of being read without end.
#include "sanitizers.hpp"
#include "views/timeline/timeline_view.hpp"

#include <alignscope/error.hpp>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include "memory_limit.hpp"

#include <QtTest>

#include <fstream>
#include <new>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace alignscope;
using namespace alignscope::ui;

class TestTimelineImportMemory : public QObject {
    Q_OBJECT

private slots:
    void importPastMemoryNamesTheFile() {
        if (test::kSanitized) QSKIP("an address-space limit stops the sanitizer's runtime, not the code under test");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath("big-trace.json");
        {
            // 64 MiB (sparse): its bytes do not matter, the memory to hold them does.
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QVERIFY(f.resize(qint64(64) << 20));
        }
        TimelineView view;
        const auto [status, said] = test::in_limited_child(std::uint64_t{16} << 20, [&](std::string& message) {
            message = "imported whole";
            try {
                view.importChromeTrace(path);
            } catch (const Error& e) {
                message = e.what();
                return 0;
            } catch (const std::bad_alloc&) {
                message = "std::bad_alloc escaped";
                return 3;
            } catch (const std::exception& e) {
                message = std::string("another exception: ") + e.what();
                return 5;
            }
            return 4;
        });
        QVERIFY2(status == 0, said.c_str());
        const QString text = QString::fromStdString(said);
        QVERIFY2(text.startsWith(path + ": out of memory importing the Chrome trace"), said.c_str());
        QVERIFY2(text.contains("import a shorter trace"), said.c_str());
    }

    void aDeviceIsRefusedAtOnce() {
        TimelineView view;
        QElapsedTimer timer;
        timer.start();
        QString message;
        try {
            view.importChromeTrace("/dev/zero");
        } catch (const Error& e) {
            message = QString::fromUtf8(e.what());
        }
        QVERIFY2(message.startsWith("/dev/zero: not a regular file"), qPrintable(message));
        QVERIFY(timer.elapsed() < 5000);
    }
};

QTEST_MAIN(TestTimelineImportMemory)
#include "test_timeline_import_memory.moc"
