// The base of the views that draw one job's results from the project
// (alignment, DP heatmap, timeline, GCUPS, hits). A view loads only when it is
// on screen, so moving the jobs list's selection costs nothing for the tabs
// behind, and loads again when the shown job's results or state change (a job
// still running), at most every couple of seconds until the job ends.
#pragma once

#include "views/alignment/aligned_pair.hpp"
#include "views/result_view.hpp"

#include <alignscope/store/project.hpp>

#include <QElapsedTimer>

#include <functional>
#include <optional>

class QLabel;
class QTimer;

namespace alignscope::ui {

class JobResultView : public ResultView {
    Q_OBJECT
public:
    JobResultView(ProjectDocument& document, QWidget* parent = nullptr);

    void showJob(qint64 jobId) final;
    qint64 shownJob() const override { return job_id_; }
    // Whether the view's picture is out of date (it loads when next shown).
    bool loadPending() const { return pending_; }
    // The line above the view: what it shows, or why it shows nothing (and
    // what would fill it).
    QString noteText() const;

    // Stale: the shown job is not what the workbench would compute now (the
    // Job panel's settings or the inputs changed since it ran). `check` says
    // why for a job (empty: not stale); the window sets it and calls
    // updateStale() when the panel or the inputs change.
    void setStaleCheck(std::function<QStringList(const store::JobInfo&)> check);
    void updateStale();
    bool isStale() const { return !stale_.isEmpty(); }
    QStringList staleReasons() const { return stale_; }
    // The empty-state line for no job at all (no project, or no job yet).
    QString noJobText() const;

protected:
    // Draws `job` (null: no job, or job 0) from the project. Runs on the GUI
    // thread when the view is visible; alignscope::Error from here is shown
    // in the note line.
    virtual void load(const store::JobInfo* job) = 0;
    // Whether a change of the shown job calls for a new load.
    virtual bool changed(const store::JobInfo& before, const store::JobInfo& now) const;
    // For views that draw more than the shown job (the GCUPS view's project
    // series): a summary of what they draw from the job list; a new load
    // follows when it changes. Empty by default.
    virtual QString projectSignature() const { return {}; }

    void setNote(const QString& text);
    QLabel* noteLabel() const { return note_; }
    // Loads again now when visible, else when next shown.
    void reload();
    // The view shows something else now (an imported file): no job is shown,
    // so choosing any job, the previous one too, loads it again.
    void forgetJob();
    // Alignment `row` of `job` with its sequences: from the project's loaded
    // sequence sets when they are in memory (no re-reading of the inputs), else
    // read back from the project. Throws alignscope::Error.
    AlignedPair alignedPair(const store::JobInfo& job, qint64 row) const;
    // "Job 12 (local BLOSUM62 12/1, cpu)".
    QString jobTitle(const store::JobInfo& job) const;

    void showEvent(QShowEvent* event) override;

private:
    void loadNow();
    void jobsChanged();

    void showNote();

    QLabel* note_ = nullptr;
    QString note_text_;
    QStringList stale_;
    std::function<QStringList(const store::JobInfo&)> stale_check_;
    qint64 job_id_ = 0;
    bool pending_ = true;
    std::optional<store::JobInfo> loaded_;  // the job as it was when last loaded
    QString signature_;                     // projectSignature() when last loaded
    QElapsedTimer since_load_;
    QTimer* recheck_ = nullptr;  // a throttled reload waiting
};

}  // namespace alignscope::ui
