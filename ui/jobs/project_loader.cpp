// ProjectLoader: store calls and read_sequences on a TaskThread; progress
// coalesced into queued signals, Cancelled turned into loadCancelled.
#include "jobs/project_loader.hpp"

#include <alignscope/error.hpp>

#include <QFileInfo>
#include <QMetaObject>

#include <chrono>
#include <new>

namespace alignscope::ui {

ProjectLoader::ProjectLoader(QObject* parent) : QObject(parent), worker_(std::make_unique<TaskThread>()) {
    qRegisterMetaType<std::shared_ptr<const SequenceSet>>();
    qRegisterMetaType<std::shared_ptr<store::Project>>();
}

ProjectLoader::~ProjectLoader() {
    cancel();
    worker_.reset();
    connection_.reset();
}

void ProjectLoader::post(std::function<void()> task) {
    ++pending_;
    worker_->post([this, task = std::move(task)] {
        task();
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (--pending_ == 0) emit idle();
            },
            Qt::QueuedConnection);
    });
}

void ProjectLoader::cancel() { ++generation_; }

store::Project& ProjectLoader::connection(const QString& path) {
    if (!connection_ || connection_path_ != path) {
        connection_.reset();
        store::ProjectOptions options;
        options.verify_inputs = false;  // the GUI's own open did that
        connection_ = std::make_unique<store::Project>(path.toStdString(), options);
        connection_path_ = path;
    }
    return *connection_;
}

void ProjectLoader::openProject(const QString& path, bool create) {
    post([this, path, create] {
        try {
            store::ProjectOptions options;
            options.create_if_missing = create;
            // Referenced inputs are checked when their sequences are read.
            options.verify_inputs = false;
            auto project = std::make_shared<store::Project>(path.toStdString(), options);
            QMetaObject::invokeMethod(
                this, [this, path, project] { emit projectOpened(path, project); }, Qt::QueuedConnection);
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            QMetaObject::invokeMethod(
                this, [this, path, message] { emit projectOpenFailed(path, message); }, Qt::QueuedConnection);
        }
    });
}

void ProjectLoader::loadFiles(const QStringList& paths, const QString& projectPath, const ReadOptions& options) {
    const std::uint64_t generation = generation_.load();
    for (const QString& path : paths)
        post([this, path, projectPath, options, generation] { readFile(path, projectPath, options, generation); });
}

void ProjectLoader::loadInputs(const QString& projectPath, const std::vector<store::InputInfo>& inputs) {
    const std::uint64_t generation = generation_.load();
    for (const auto& input : inputs)
        post([this, projectPath, input, generation] { readInput(projectPath, input, generation); });
}

void ProjectLoader::readFile(const QString& path, const QString& projectPath, const ReadOptions& options,
                             std::uint64_t generation) {
    auto emit_later = [this](auto call) { QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection); };
    if (generation != generation_.load()) {
        emit_later([this, path] { emit loadCancelled(path); });
        return;
    }
    emit_later([this, path] { emit loadStarted(path); });
    using clock = std::chrono::steady_clock;
    auto last = clock::now() - std::chrono::seconds(1);
    auto progress_pending = std::make_shared<std::atomic<bool>>(false);
    try {
        const std::string file = QFileInfo(path).absoluteFilePath().toStdString();
        auto set =
            std::make_shared<SequenceSet>(read_sequences(file, options, [&](std::uint64_t read, std::uint64_t size) {
                if (generation != generation_.load()) throw Cancelled();
                const auto now = clock::now();
                if (now - last < std::chrono::milliseconds(50) || progress_pending->exchange(true)) return;
                last = now;
                emit_later([this, path, read, size, progress_pending] {
                    progress_pending->store(false);
                    emit loadProgress(path, read, size);
                });
            }));
        if (set->records.empty()) throw Error(file + ": no sequences in the file");
        std::int64_t input_id = 0;
        if (!projectPath.isEmpty()) {
            if (generation != generation_.load()) throw Cancelled();
            input_id = connection(projectPath).add_sequence_set(*set);
        }
        std::shared_ptr<const SequenceSet> shared = std::move(set);
        emit_later([this, path, shared, input_id, projectPath] { emit loaded(path, shared, input_id, projectPath); });
    } catch (const Cancelled&) {
        emit_later([this, path] { emit loadCancelled(path); });
    } catch (const std::bad_alloc&) {
        emit_later([this, path] { emit loadFailed(path, path + ": out of memory while reading", 0); });
    } catch (const std::exception& e) {
        const QString message = QString::fromStdString(e.what());
        emit_later([this, path, message] { emit loadFailed(path, message, 0); });
    }
}

void ProjectLoader::readInput(const QString& projectPath, const store::InputInfo& input, std::uint64_t generation) {
    const QString path = QString::fromStdString(input.path);
    auto emit_later = [this](auto call) { QMetaObject::invokeMethod(this, std::move(call), Qt::QueuedConnection); };
    if (generation != generation_.load()) {
        emit_later([this, path] { emit loadCancelled(path); });
        return;
    }
    emit_later([this, path] { emit loadStarted(path); });
    const qint64 id = input.id;
    try {
        auto set = std::make_shared<SequenceSet>();
        set->path = input.path;
        set->alphabet = parse_alphabet(input.alphabet.empty() ? "protein" : input.alphabet);
        set->records = connection(projectPath).input_sequences(input.id);
        std::shared_ptr<const SequenceSet> shared = std::move(set);
        emit_later([this, path, shared, id, projectPath] { emit loaded(path, shared, id, projectPath); });
    } catch (const std::bad_alloc&) {
        emit_later([this, path, id] { emit loadFailed(path, path + ": out of memory while reading", id); });
    } catch (const std::exception& e) {
        const QString message = QString::fromStdString(e.what());
        emit_later([this, path, message, id] { emit loadFailed(path, message, id); });
    }
}

void ProjectLoader::copyProject(const QString& from, const QString& to) {
    post([this, from, to] {
        // The store writes a consistent snapshot (commits still in the
        // write-ahead log included) to a temporary file and renames it into
        // place, and refuses to write over the project itself or over one that
        // is open somewhere.
        try {
            store::ProjectOptions options;
            options.read_only = true;
            options.verify_inputs = false;
            store::Project(from.toStdString(), options).copy_to(to.toStdString());
            QMetaObject::invokeMethod(
                this, [this, from, to] { emit projectCopied(from, to); }, Qt::QueuedConnection);
        } catch (const std::exception& e) {
            const QString message = to + ": could not save the project there: " + QString::fromStdString(e.what());
            QMetaObject::invokeMethod(
                this, [this, to, message] { emit projectCopyFailed(to, message); }, Qt::QueuedConnection);
        }
    });
}

void ProjectLoader::deleteJob(const QString& projectPath, qint64 jobId) {
    post([this, projectPath, jobId] {
        try {
            connection(projectPath).delete_job(jobId);
            QMetaObject::invokeMethod(
                this, [this, jobId] { emit jobDeleted(jobId); }, Qt::QueuedConnection);
        } catch (const std::exception& e) {
            const QString message = QString::fromStdString(e.what());
            QMetaObject::invokeMethod(
                this, [this, jobId, message] { emit jobDeleteFailed(jobId, message); }, Qt::QueuedConnection);
        }
    });
}

}  // namespace alignscope::ui
