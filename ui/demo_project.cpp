// The demo project, built step by step through the window's own actions.
#include "demo_project.hpp"

#include "mainwindow.hpp"
#include "panels/job_panel.hpp"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

namespace alignscope::ui {

namespace {

const char* const demo_files[] = {"globins_human.fa", "globins_others.fa"};

// The bundled FASTA files as real files, so the project can point at them.
QStringList extract_demo_files() {
    QDir().mkpath(demo_folder());
    QStringList paths;
    for (const char* name : demo_files) {
        const QString path = demo_folder() + "/" + name;
        if (!QFileInfo::exists(path)) {
            QFile::copy(QStringLiteral(":/demo/") + name, path);
            QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadOther);
        }
        paths << path;
    }
    return paths;
}

qint64 input_named(const ProjectDocument& document, const QString& name) {
    for (const auto& input : document.inputs())
        if (input.set && input.label() == name) return input.info.id;
    return 0;
}

bool has_finished_job(const ProjectDocument& document) {
    for (const auto& job : document.jobs())
        if (job.state == store::JobState::Done) return true;
    return false;
}

// Steps of the build, each run when the window is ready for it. Lives until
// the demo job is queued (or the window goes).
class DemoBuilder : public QObject {
public:
    DemoBuilder(MainWindow& window, QString path) : QObject(&window), window_(window), path_(std::move(path)) {
        connect(&window_, &MainWindow::projectReady, this, &DemoBuilder::projectReady);
        connect(&window_.document(), &ProjectDocument::loadingIdle, this, &DemoBuilder::inputsLoaded);
        connect(&window_.document(), &ProjectDocument::openFailed, this, &QObject::deleteLater);
    }

private:
    void projectReady(const QString& path) {
        if (path != QFileInfo(path_).absoluteFilePath()) return deleteLater();
        ready_ = true;
        QStringList missing;
        const QStringList files = extract_demo_files();
        for (const QString& file : files)
            if (!input_named(window_.document(), QFileInfo(file).fileName())) missing << file;
        if (missing.isEmpty()) return inputsLoaded();
        window_.loadFiles(missing);
    }

    void inputsLoaded() {
        if (!ready_) return;
        ProjectDocument& document = window_.document();
        const qint64 human = input_named(document, demo_files[0]);
        const qint64 others = input_named(document, demo_files[1]);
        if (!human || !others || document.loading()) return;  // still loading, or a load failed (reported)
        if (!has_finished_job(document)) {
            JobPanel& panel = window_.jobPanel();
            panel.setInputs(human, others);
            panel.setPairing(Pairing::AllAgainstAll);
            panel.setAlgorithm(JobAlgorithm::Global);
            panel.setMatrix("BLOSUM62");
            panel.setGaps(10, 0.5);
            panel.setDevice("cpu");
            panel.setTraceback(true);
            window_.runJob();
        }
        deleteLater();
    }

    MainWindow& window_;
    QString path_;
    bool ready_ = false;
};

}  // namespace

QString demo_folder() { return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/demo"; }

QString open_demo_project(MainWindow& window) {
    QDir().mkpath(demo_folder());
    const QString stem = demo_folder() + "/demo-" + QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss");
    QString path = stem + ".alsproj";
    for (int k = 2; QFileInfo::exists(path); ++k) path = stem + QStringLiteral("-%1.alsproj").arg(k);
    new DemoBuilder(window, path);
    window.openProject(path, true);
    return path;
}

}  // namespace alignscope::ui
