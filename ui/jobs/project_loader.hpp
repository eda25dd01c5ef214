// Everything slow about a project, on a worker thread: opening it (migration,
// marking dead jobs interrupted), reading sequence files (FASTA/FASTQ, plain or
// gzip) with progress and cancel, registering them with the project (which
// hashes the file), and reading the sequences of the inputs a project already
// holds. The GUI thread only ever gets results as queued signals.
#pragma once

#include "jobs/task_thread.hpp"

#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/project.hpp>

#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace alignscope::ui {

class ProjectLoader : public QObject {
    Q_OBJECT
public:
    explicit ProjectLoader(QObject* parent = nullptr);
    ~ProjectLoader() override;  // cancels and joins

    // Opens (or creates) a project; `projectOpened` hands the connection to the
    // GUI thread, which from then on is its only user.
    void openProject(const QString& path, bool create);
    // Reads files and, when `projectPath` is not empty, adds them to that project.
    void loadFiles(const QStringList& paths, const QString& projectPath, const ReadOptions& options = {});
    // Reads the sequences of inputs the project already holds.
    void loadInputs(const QString& projectPath, const std::vector<store::InputInfo>& inputs);
    // Copies the project to a file (store::Project::copy_to: a consistent copy,
    // even while jobs write, put in place atomically; refused over an open project).
    void copyProject(const QString& from, const QString& to);

    // Deletes a finished job and its results.
    void deleteJob(const QString& projectPath, qint64 jobId);

    // Cancels the read in progress and every read still waiting.
    void cancel();
    bool busy() const { return pending_.load() > 0; }

signals:
    void projectOpened(QString path, std::shared_ptr<alignscope::store::Project> project);
    void projectOpenFailed(QString path, QString message);
    void loadStarted(QString path);
    void loadProgress(QString path, quint64 bytesRead, quint64 fileSize);
    // `inputId` is the set's id in the project at `projectPath` (0 and empty
    // when the file was only read).
    void loaded(QString path, std::shared_ptr<const alignscope::SequenceSet> set, qint64 inputId, QString projectPath);
    void loadFailed(QString path, QString message, qint64 inputId);
    void loadCancelled(QString path);
    void projectCopied(QString from, QString to);
    void projectCopyFailed(QString to, QString message);
    void jobDeleted(qint64 jobId);
    void jobDeleteFailed(qint64 jobId, QString message);
    // Nothing more to do.
    void idle();

private:
    void post(std::function<void()> task);
    void readFile(const QString& path, const QString& projectPath, const ReadOptions& options,
                  std::uint64_t generation);
    void readInput(const QString& projectPath, const store::InputInfo& input, std::uint64_t generation);
    // The worker's own connection to `path` (opened on first use, kept).
    store::Project& connection(const QString& path);

    std::atomic<std::uint64_t> generation_{0};  // bumped by cancel(): older reads stop
    std::atomic<int> pending_{0};
    std::unique_ptr<store::Project> connection_;  // worker thread only
    QString connection_path_;                     // worker thread only
    std::unique_ptr<TaskThread> worker_;          // last: joined first
};

}  // namespace alignscope::ui

Q_DECLARE_METATYPE(std::shared_ptr<const alignscope::SequenceSet>)
Q_DECLARE_METATYPE(std::shared_ptr<alignscope::store::Project>)
