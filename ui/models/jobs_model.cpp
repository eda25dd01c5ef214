// JobsModel: the listed ids, and the formatting of the rows they name.
#include "models/jobs_model.hpp"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QLocale>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace alignscope::ui {

JobsModel::JobsModel(JobLookup lookup, QObject* parent) : QAbstractTableModel(parent), lookup_(std::move(lookup)) {}

void JobsModel::setJobs(std::vector<qint64> ids) {
    beginResetModel();
    ids_ = std::move(ids);
    std::sort(ids_.begin(), ids_.end());
    ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
    endResetModel();
}

void JobsModel::updateJobs(const std::vector<qint64>& ids) {
    for (const qint64 id : ids) {
        auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
        const int row = int(it - ids_.begin());
        if (it != ids_.end() && *it == id) {
            emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
            continue;
        }
        beginInsertRows({}, row, row);
        ids_.insert(it, id);
        endInsertRows();
    }
}

void JobsModel::removeJobs(const std::vector<qint64>& ids) {
    for (const qint64 id : ids) {
        const int row = rowOf(id);
        if (row < 0) continue;
        beginRemoveRows({}, row, row);
        ids_.erase(ids_.begin() + row);
        endRemoveRows();
        live_.erase(id);
    }
}

int JobsModel::rowOf(qint64 job_id) const {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), job_id);
    return it != ids_.end() && *it == job_id ? int(it - ids_.begin()) : -1;
}

void JobsModel::setLiveProgress(qint64 job_id, const JobProgress& progress) {
    live_[job_id] = progress;
    if (const int row = rowOf(job_id); row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void JobsModel::clearLiveProgress(qint64 job_id) {
    live_.erase(job_id);
    if (const int row = rowOf(job_id); row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

int JobsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(ids_.size()); }

int JobsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

double JobsModel::seconds(const store::JobInfo& job) {
    if (job.started_ms <= 0) return 0;
    const std::int64_t end = job.ended_ms > 0                        ? job.ended_ms
                             : job.state == store::JobState::Running ? QDateTime::currentMSecsSinceEpoch()
                                                                     : job.started_ms;
    return double(end - job.started_ms) / 1000.0;
}

bool JobsModel::neverRan(const store::JobInfo& job) {
    if (job.started_ms <= 0) return true;
    // The store stamps a start on every finished job: a job cancelled or
    // failed while still queued starts and ends in the same millisecond,
    // with no work done.
    const bool ended_unrun = job.state == store::JobState::Cancelled || job.state == store::JobState::Failed;
    return ended_unrun && job.ended_ms == job.started_ms && job.progress.cells_done == 0;
}

namespace {

QString number(double value) { return QLocale::c().toString(value, 'g', 6); }

QString duration(double seconds) {
    if (seconds < 1) return QString::number(seconds * 1000, 'f', 0) + " ms";
    if (seconds < 120) return QString::number(seconds, 'f', 2) + " s";
    const auto s = qint64(seconds);
    return QString("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QChar('0')).arg(s % 60, 2, 10, QChar('0'));
}

QColor state_colour(store::JobState state) {
    switch (state) {
        case store::JobState::Done: return QColor(0x1d, 0x7a, 0x3a);
        case store::JobState::Failed: return QColor(0xb0, 0x20, 0x20);
        case store::JobState::Interrupted: return QColor(0xb3, 0x6b, 0x00);
        case store::JobState::Running: return QColor(0x1f, 0x4e, 0x99);
        case store::JobState::Cancelled:
        case store::JobState::Queued: return QColor(0x60, 0x60, 0x60);
    }
    return {};
}

}  // namespace

QString JobsModel::taskText(const store::JobSpec& spec) {
    const auto& p = spec.parameters;
    const QString mode = QString::fromStdString(spec.mode);
    auto has = [&p](const char* key) {
        auto it = p.find(key);
        return it != p.end() && it->second != "no";
    };
    if (spec.command == "hmmsearch" || has("profiles") || has("hmm")) return tr("profile search");
    if (has("search")) return tr("database search");
    if (has("long")) return mode.isEmpty() ? tr("long pair") : tr("long pair, %1").arg(mode);
    if (spec.command == "bench") return tr("benchmark");
    if (spec.command == "verify") return tr("verify");
    return mode;
}

QString JobsModel::scoringText(const store::JobSpec& spec) {
    QString matrix = QString::fromStdString(spec.matrix_name);
    if (matrix.isEmpty()) return QString::fromStdString(spec.scoring);
    return matrix + " " + number(spec.gap_open) + "/" + number(spec.gap_extend);
}

void JobsModel::setInputNames(std::map<qint64, QString> names) {
    input_names_ = std::move(names);
    if (!ids_.empty()) emit dataChanged(index(0, Inputs), index(rowCount() - 1, Inputs));
}

QString JobsModel::inputsText(const store::JobInfo& job, const std::map<qint64, QString>& input_names) {
    const auto& p = job.spec.parameters;
    auto get = [&p](const char* key) {
        auto it = p.find(key);
        return it == p.end() ? QString() : QString::fromStdString(it->second);
    };
    QString queries = get("queries"), targets = get("targets");
    if (queries.isEmpty() && targets.isEmpty()) {
        // Jobs the CLI recorded link their inputs by role.
        QStringList q, t;
        for (const auto& input : job.inputs) {
            auto it = input_names.find(input.input_id);
            const QString name = it != input_names.end() ? it->second : QObject::tr("input %1").arg(input.input_id);
            if (input.role == "query") q << name;
            else if (input.role == "target" || input.role == "database")
                t << name;
        }
        queries = q.join(", ");
        targets = t.join(", ");
    }
    if (queries.isEmpty() && targets.isEmpty()) return QString::fromStdString(job.spec.command);
    const QString join = get("pairing") == "record-by-record" ? QStringLiteral(" zip ") : QStringLiteral(" × ");
    return queries + join + targets;
}

QVariant JobsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const qint64 id = ids_[std::size_t(index.row())];
    if (role == JobIdRole) return id;
    // A job the list no longer holds (deleted, its row about to go) shows nothing.
    const store::JobInfo* row = lookup_ ? lookup_(id) : nullptr;
    if (!row) return {};
    const store::JobInfo& job = *row;

    const auto live = live_.find(job.id);
    const bool running = job.state == store::JobState::Running || job.state == store::JobState::Queued;
    std::uint64_t cells_done = job.progress.cells_done, cells_total = job.progress.cells_total;
    // An interrupted job's end is when the loss was noticed, not when it stopped.
    double secs = job.state == store::JobState::Interrupted ? 0 : seconds(job);
    if (live != live_.end() && running) {
        cells_done = std::max<std::uint64_t>(cells_done, live->second.cells_done);
        cells_total = std::max<std::uint64_t>(cells_total, live->second.cells_total);
        if (live->second.seconds > 0) secs = live->second.seconds;
    }
    const double gcups = secs > 0 && cells_done > 0 ? double(cells_done) / secs / 1e9 : 0;
    std::uint64_t pairs = job.progress.items_total;
    if (auto it = job.spec.parameters.find("pairs"); pairs == 0 && it != job.spec.parameters.end())
        pairs = std::strtoull(it->second.c_str(), nullptr, 10);
    int percent = -1;
    if (job.state == store::JobState::Done) percent = 100;
    else if (cells_total > 0)
        percent = int(100.0 * double(cells_done) / double(cells_total));

    if (role == PercentRole) return percent;
    if (role == SortRole) {
        switch (index.column()) {
            case Id: return qint64(job.id);
            case Pairs: return qulonglong(pairs);
            case Started: return qint64(job.started_ms ? job.started_ms : job.created_ms);
            case Time: return secs;
            case Gcups: return gcups;
            case Percent: return percent;
            default: role = Qt::DisplayRole;
        }
    }
    if (role == Qt::ForegroundRole && index.column() == State) return QBrush(state_colour(job.state));
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
            case Id:
            case Pairs:
            case Time:
            case Gcups: return QVariant(Qt::AlignRight | Qt::AlignVCenter);
            default: return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Message) return QString::fromStdString(job.error);
    if (role == Qt::ToolTipRole && index.column() == Started) {
        if (!neverRan(job)) return {};
        return job.created_ms ? tr("Never started; queued at %1")
                                    .arg(QDateTime::fromMSecsSinceEpoch(job.created_ms).toString("yyyy-MM-dd hh:mm:ss"))
                              : tr("Never started");
    }
    if (role == Qt::ToolTipRole && index.column() == Scoring) return QString::fromStdString(job.spec.scoring);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Id: return qint64(job.id);
        case State: return QString::fromUtf8(store::to_string(job.state).data());
        case Mode: return taskText(job.spec);
        case Scoring: return scoringText(job.spec);
        case Inputs: return inputsText(job, input_names_);
        case Pairs: return pairs ? QVariant(qulonglong(pairs)) : QVariant();
        case Device: return QString::fromStdString(job.spec.devices);
        case Started:
            // A job that never ran has no start time (its queueing time is in the tooltip).
            return neverRan(job) ? QString()
                                 : QDateTime::fromMSecsSinceEpoch(job.started_ms).toString("yyyy-MM-dd hh:mm:ss");
        case Time: return secs > 0 ? duration(secs) : QString();
        case Gcups: return gcups > 0 ? QString::number(gcups, 'f', gcups < 1 ? 3 : 2) : QString();
        case Percent: return percent >= 0 ? QString::number(percent) + " %" : QString();
        case Message: {
            QString text = QString::fromStdString(job.error);
            const int newline = text.indexOf('\n');
            return newline >= 0 ? text.left(newline) + " …" : text;
        }
    }
    return {};
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
        case Id: return tr("Job");
        case State: return tr("State");
        case Mode: return tr("Task");
        case Scoring: return tr("Scoring");
        case Inputs: return tr("Inputs");
        case Pairs: return tr("Pairs");
        case Device: return tr("Device");
        case Started: return tr("Started");
        case Time: return tr("Time");
        case Gcups: return tr("GCUPS");
        case Percent: return tr("Progress");
        case Message: return tr("Message");
    }
    return {};
}

}  // namespace alignscope::ui
