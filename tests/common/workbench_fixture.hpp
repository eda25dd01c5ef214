// What the GUI suites share when they drive the real workbench: the demo
// files, a window opened on a project with the waits for its loading and its
// jobs, the real `alignscope` binary run off-screen, and screenshots kept for
// the docs. Header only: each suite is one source file.
#pragma once

#include <jobs/job_queue.hpp>
#include <mainwindow.hpp>
#include <panels/job_panel.hpp>
#include <project_document.hpp>

#include <alignscope/device/backend.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QApplication>
#include <QDebug>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QWidget>
#include <QtTest>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

namespace alignscope::ui::fixture {

// A file of resources/demo.
inline QString demo_file(const QString& name) {
    return QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo/") + name;
}
inline QString human_globins() { return demo_file(QStringLiteral("globins_human.fa")); }
inline QString other_globins() { return demo_file(QStringLiteral("globins_others.fa")); }

// The first `count` records of a FASTA/FASTQ file (plain or gzip), written as FASTA.
inline bool write_slice(const QString& from, const QString& to, std::size_t count) {
    const SequenceSet set = read_sequences(from.toStdString());
    std::ofstream out(to.toStdString());
    for (std::size_t k = 0; k < std::min(count, set.records.size()); ++k)
        out << '>' << set.records[k].id << '\n' << set.records[k].residues << '\n';
    return bool(out);
}

// With ALIGNSCOPE_SCREENSHOT_DIR set, the widget as drawn is kept there as
// NAME.png (the docs' screenshots come from these runs).
inline void keep_screenshot(QWidget& widget, const QString& name) {
    const QString dir = qEnvironmentVariable("ALIGNSCOPE_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    QApplication::processEvents();
    widget.grab().save(dir + "/" + name + ".png");
}

// Distinct colours of a picture and the share of the most common one.
inline std::pair<int, double> colour_statistics(const QImage& image) {
    std::map<QRgb, qint64> counts;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) ++counts[image.pixel(x, y)];
    qint64 top = 0;
    for (const auto& [colour, n] : counts) top = std::max(top, n);
    return {int(counts.size()), double(top) / double(qint64(image.width()) * image.height())};
}

// The id of the loaded input whose label is `file_name`; 0 when none is.
inline qint64 input_id(const ProjectDocument& document, const QString& file_name) {
    for (const auto& input : document.inputs())
        if (input.label() == file_name) return input.info.id;
    return 0;
}

// The `alignscope` binary run off-screen to its end (two minutes at most):
// its exit status (-1 when it crashed or did not end) and its stderr.
struct GuiRun {
    int status = -1;
    QString err;
};
inline GuiRun run_gui(const QStringList& arguments) {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(ALIGNSCOPE_GUI), arguments);
    if (!process.waitForFinished(120'000)) return {};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            QString::fromUtf8(process.readAllStandardError())};
}

// Opens `project` in a document without a window (made when there is no such
// file) and waits until it is open; false after 30 s.
inline bool open_document(ProjectDocument& document, const QString& project) {
    QSignalSpy opened(&document, &ProjectDocument::opened);
    document.open(project, !QFile::exists(project));
    return opened.wait(30'000);
}

// Loads `files` into a document and waits until it has read them; false after 30 s.
inline bool load_into(ProjectDocument& document, const QStringList& files) {
    QSignalSpy idle(&document, &ProjectDocument::loadingIdle);
    document.loadFiles(files);
    return idle.wait(30'000);
}

// Opens `project` (made when `create`) in `window` and waits until it is
// ready; false when that takes over a minute.
inline bool open_and_wait(MainWindow& window, const QString& project, bool create = false) {
    QSignalSpy ready(&window, &MainWindow::projectReady);
    window.openProject(project, create);
    return ready.wait(60'000);
}

// Loads `files` and waits until the document has read them (a minute at most).
inline bool load_and_wait(MainWindow& window, const QStringList& files) {
    QSignalSpy idle(&window.document(), &ProjectDocument::loadingIdle);
    window.loadFiles(files);
    return idle.wait(60'000);
}

// A job's end as the window notified it.
struct Finished {
    qint64 job = 0;
    JobState state = JobState::Queued;
    QString text;
};
// Waits for the window's next job notification; job 0 when none came within
// `timeout_ms`.
inline Finished wait_finished(MainWindow& window, int timeout_ms) {
    QSignalSpy spy(&window, &MainWindow::jobNotification);
    if (!spy.wait(timeout_ms)) return {};
    const auto args = spy.takeFirst();
    return {args[0].toLongLong(), JobState(args[1].toInt()), args[2].toString()};
}
// Runs the job the panel describes and waits for its notification; nothing
// when it would not start or did not end within a minute.
inline std::optional<Finished> run_and_wait(MainWindow& window) {
    QSignalSpy done(&window, &MainWindow::jobNotification);
    if (!window.runJob()) return std::nullopt;
    if (!done.wait(60'000)) return std::nullopt;
    const auto args = done.takeFirst();
    return Finished{args[0].toLongLong(), JobState(args[1].toInt()), args[2].toString()};
}

// The GPU entry the application registers in a build without CUDA: listed,
// not available, with the reason.
inline void add_unavailable_gpu(DeviceRegistry& registry) {
    DeviceInfo gpu;
    gpu.id = "gpu";
    gpu.kind = "gpu";
    gpu.name = "CUDA GPUs";
    gpu.available = false;
    gpu.unavailable_reason = "this build has no CUDA backend";
    registry.add_unavailable(gpu);
}

// Where the application's data and settings go in a suite: Qt's test-mode
// paths, or those of the environment (a suite whose main() points the XDG
// folders at a folder of its run, run_isolated).
enum class StandardPaths { TestMode, Environment };

// A suite's workbench: the CPU devices (a suite may register more before its
// first window), a temporary folder for its projects, and windows shown on
// projects there. Every message a window gives the user is logged, and kept
// in `messages` when one is given.
class Workbench {
public:
    explicit Workbench(StandardPaths paths = StandardPaths::TestMode) : registry_(make_cpu_registry()) {
        if (paths == StandardPaths::TestMode) QStandardPaths::setTestModeEnabled(true);
    }

    bool valid() const { return dir_.isValid(); }
    QString folder() const { return dir_.path(); }
    QString path(const QString& name) const { return dir_.filePath(name); }
    DeviceRegistry& registry() { return *registry_; }

    // A window of `size`, shown, that closes without asking about running jobs.
    std::unique_ptr<MainWindow> window(QSize size = {1200, 800}, QStringList* messages = nullptr) {
        auto w = std::make_unique<MainWindow>(*registry_);
        w->setConfirmCloseWhileRunning(false);
        w->resize(size);
        w->show();
        QObject::connect(w.get(), &MainWindow::userMessage, w.get(),
                         [messages](int, const QString& title, const QString& text) {
                             qInfo().noquote() << "message:" << title << text;
                             if (messages) *messages << title + ": " + text;
                         });
        return w;
    }

    // Such a window on `project` (made when `create`), ready; null when it
    // did not get ready within a minute.
    std::unique_ptr<MainWindow> openWindow(const QString& project, bool create, QSize size = {1200, 800},
                                           QStringList* messages = nullptr) {
        auto w = window(size, messages);
        if (!open_and_wait(*w, project, create)) return nullptr;
        return w;
    }

    // A new project `name` with the demo globins loaded and one finished job
    // of `algorithm` on the CPU, made through the window; the job's id, or 0
    // (with the reason as a test warning) when a step failed.
    qint64 makeDemoProject(const QString& name, JobAlgorithm algorithm = JobAlgorithm::Global) {
        auto w = openWindow(path(name), true);
        if (!w) return warn("the project did not open");
        if (!load_and_wait(*w, {human_globins(), other_globins()}) || w->document().inputs().size() != 2)
            return warn("the demo globins did not load");
        w->jobPanel().setAlgorithm(algorithm);
        if (!w->jobPanel().setDevice("cpu")) return warn("no CPU device in the Job panel");
        const auto job = run_and_wait(*w);
        if (!job || job->state != JobState::Done) return warn("the job did not finish");
        return job->job;
    }

private:
    static qint64 warn(const char* what) {
        qWarning("makeDemoProject: %s", what);
        return 0;
    }

    std::unique_ptr<DeviceRegistry> registry_;
    QTemporaryDir dir_;
};

// main() of a suite that must not touch the user's settings, recent projects
// or demo copies: XDG folders of this run, off-screen unless a platform is set;
// the settings under "AlignScopeTest" / `application` when one is given.
template <class Suite>
int run_isolated(int argc, char** argv, const char* application = nullptr) {
    QTemporaryDir home;
    qputenv("XDG_DATA_HOME", (home.path() + "/data").toUtf8());
    qputenv("XDG_CONFIG_HOME", (home.path() + "/config").toUtf8());
    qputenv("XDG_CACHE_HOME", (home.path() + "/cache").toUtf8());
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (application) {
        QApplication::setOrganizationName("AlignScopeTest");
        QApplication::setApplicationName(application);
    }
    Suite suite;
    return QTest::qExec(&suite, argc, argv);
}

}  // namespace alignscope::ui::fixture
