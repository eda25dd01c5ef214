// The project's jobs as a table (state, algorithm, inputs, device, time,
// GCUPS, progress), drawn from the project document's job list, with the live
// progress of the jobs this window runs laid over it between the store's
// throttled updates. The model keeps only the jobs' ids and reads each row
// from the list it is given (no copy per job). Rows are in id order and change
// one by one (inserted, changed, removed), so a sorted view over a long list
// keeps its place and does no work per job that grows with the list.
#pragma once

#include "jobs/job_queue.hpp"

#include <alignscope/store/project.hpp>

#include <QAbstractTableModel>

#include <functional>
#include <map>
#include <vector>

namespace alignscope::ui {

class JobsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Id,
        State,
        Mode,
        Scoring,
        Inputs,
        Pairs,
        Device,
        Started,
        Time,
        Gcups,
        Percent,
        Message,
        ColumnCount
    };
    static constexpr int JobIdRole = Qt::UserRole + 1;    // qint64 job id, any column
    static constexpr int PercentRole = Qt::UserRole + 2;  // int 0-100, -1 when unknown
    static constexpr int SortRole = Qt::UserRole + 3;     // numbers for numeric columns

    // Where the rows come from: the job with this id, or null when there is
    // none (the project document's job(), or a list a test keeps).
    using JobLookup = std::function<const store::JobInfo*(qint64 id)>;
    explicit JobsModel(JobLookup lookup, QObject* parent = nullptr);

    // The whole list (a reset: another project, or read again).
    void setJobs(std::vector<qint64> ids);
    // Rows for these jobs: a job the model lists changes in place
    // (dataChanged), a new one is inserted at its place by id (at the end
    // for a job newer than all others).
    void updateJobs(const std::vector<qint64>& ids);
    void removeJobs(const std::vector<qint64>& ids);
    // File names of the project's inputs, for jobs that name theirs by id.
    void setInputNames(std::map<qint64, QString> names);
    // The ids listed, in order: all the model keeps per job.
    const std::vector<qint64>& ids() const { return ids_; }
    void setLiveProgress(qint64 job_id, const JobProgress& progress);
    void clearLiveProgress(qint64 job_id);
    int rowOf(qint64 job_id) const;  // -1 when absent; a binary search

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // A queued job that ended (cancelled, failed) without ever starting.
    static bool neverRan(const store::JobInfo& job);
    // Seconds the job ran (until now while it runs); 0 when it never started.
    static double seconds(const store::JobInfo& job);
    // What the job was, in the task's words: "global", "database search",
    // "long pair, local", "profile search", "benchmark".
    static QString taskText(const store::JobSpec& spec);
    // "global BLOSUM62 10/0.5" from a stored spec.
    static QString scoringText(const store::JobSpec& spec);
    static QString inputsText(const store::JobInfo& job, const std::map<qint64, QString>& input_names = {});

private:
    JobLookup lookup_;
    std::vector<qint64> ids_;  // ascending
    std::map<qint64, JobProgress> live_;
    std::map<qint64, QString> input_names_;
};

}  // namespace alignscope::ui
