// The job configuration panel: which sequences, which algorithm (pairwise
// modes, a database search with its top-K, or a long pair with its mode and,
// on GPUs, its strategy, kernel and stream counts), which scoring (with the gap
// convention spelled out; a search starts from BLAST's gap costs for the
// matrix, as the CLI does), which device, streams or threads, and traceback. Every change re-checks the request, so an
// impossible combination is explained in the panel before the job starts, and shows a time estimate from the speed
// earlier jobs of the project measured on the chosen device. Its settings are kept in the project, so a project reopens
// as it was left.
#pragma once

#include "jobs/job_request.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <optional>
#include <vector>

class QGroupBox;
class QVBoxLayout;

namespace alignscope::ui {

class ProjectDocument;

class JobPanel : public QWidget {
    Q_OBJECT
public:
    // The combo entry that stands for the Sequences table's selection.
    static constexpr qint64 selection_source = -1;

    // `scanners` (may be null: no database search) outlives the panel.
    JobPanel(ProjectDocument& document, std::vector<DeviceInfo> devices, const ScannerRegistry* scanners = nullptr,
             QWidget* parent = nullptr);

    // Where "selected sequences" come from (the Sequences view).
    void setSelectionProvider(std::function<SequenceList(bool* mixed)> provider);

    JobRequest request() const;
    const std::vector<JobProblem>& problems() const { return problems_; }
    bool canRun() const { return !has_errors(problems_); }
    QString problemText() const;
    QString estimateText() const;

    // Programmatic configuration (the demo, the tests). Inputs by project id
    // or selection_source; a device by its id ("cpu", "gpu:0", "gpu").
    void setInputs(qint64 queries, qint64 targets);
    void setPairing(Pairing pairing);
    void setAlgorithm(JobAlgorithm algorithm);
    void setFreeEnds(const FreeEndGaps& free_ends);
    void setLongPairMode(AlignmentMode mode);   // a long pair's global, local or semi-global
    void setStrategy(const QString& strategy);  // long pair on GPUs: "strips" or "streams"
    void setKernels(int kernels);               // long pair, streams strategy; 0 = automatic
    void setMatrix(const QString& name);
    void setMatchMismatch(int match, int mismatch);
    void setGaps(double open, double extend);  // the user's choice: defaults stop following the matrix
    void setTop(int hits);                     // database search: hits per query
    bool setDevice(const QString& id);         // false when the panel does not offer it
    void setThreads(int threads);
    void setStreams(int streams);
    void setTraceback(bool on);
    void setRunning(bool running);

    // Re-checks now (also done on every edit and when inputs or jobs change).
    void revalidate();

    // The panel's settings as JSON (what the project keeps under
    // settings_key), and back. Unknown or missing fields keep their value;
    // inputs named by id are picked once the project's sets are loaded.
    QString settingsJson() const;
    void applySettingsJson(const QString& json);
    // Writes the settings into the open project now (they are also written
    // shortly after every change).
    void saveSettings();
    static constexpr const char* settings_key = "workbench/job_panel";

signals:
    void runRequested();
    void cancelRequested();
    void validityChanged(bool canRun);
    void deviceChanged(QString id, QString name);

private:
    // The constructor's parts, in order: the four groups of settings, the
    // checks with the buttons, the dock's narrow layout, then the wiring.
    QGroupBox* buildSequences();
    QGroupBox* buildAlgorithm();
    QGroupBox* buildScoring();
    QGroupBox* buildDevice();
    void buildChecksAndActions(QVBoxLayout& layout);
    void fitNarrowDock();
    void connectEdits();
    void connectProject();
    void setToolTips();

    // The time estimate again (the project's jobs changed its measured speed).
    void updateEstimate();
    void rebuildInputs();
    void fillDevices();
    void updateVisibility();
    void inputChanged();
    // Until the user sets gap costs: BLAST's for the matrix in a search, the
    // pairwise default 10/0.5 otherwise.
    void followDefaultGaps();
    SequenceList listFor(const QComboBox& combo, bool* mixed) const;
    void restoreFromProject();
    void chooseMatrixFile();

    ProjectDocument& document_;
    std::vector<DeviceInfo> devices_;
    const ScannerRegistry* scanners_ = nullptr;
    std::function<SequenceList(bool*)> selection_;
    std::vector<JobProblem> problems_;
    bool matrix_chosen_ = false;   // the user picked a matrix: stop following the alphabet
    bool gaps_chosen_ = false;     // the user set gap costs: stop following the defaults
    bool queries_chosen_ = false;  // the user picked the inputs: keep them as sets come and go
    bool targets_chosen_ = false;
    // Settings restored from the project: inputs wait for their sets.
    std::optional<qint64> wanted_queries_, wanted_targets_;
    bool restoring_ = false;
    QString saved_settings_;  // what the project holds now
    QTimer* save_timer_ = nullptr;

    QComboBox* queries_;
    QComboBox* targets_;
    QComboBox* pairing_;
    QSpinBox* top_;
    QComboBox* algorithm_;
    QWidget* free_ends_box_;
    QCheckBox* free_query_begin_;
    QCheckBox* free_query_end_;
    QCheckBox* free_target_begin_;
    QCheckBox* free_target_end_;
    QCheckBox* traceback_;
    QComboBox* long_mode_;
    QComboBox* strategy_;
    QSpinBox* kernels_;
    QComboBox* scoring_kind_;
    QComboBox* matrix_;
    QSpinBox* match_;
    QSpinBox* mismatch_;
    QDoubleSpinBox* gap_open_;
    QDoubleSpinBox* gap_extend_;
    QLabel* gap_convention_;
    QComboBox* device_;
    QSpinBox* threads_;
    QSpinBox* streams_;
    QLabel* problems_label_;
    QLabel* estimate_;
    QPushButton* run_;
    QPushButton* cancel_;
    QFormLayout* sequences_form_;
    QFormLayout* algorithm_form_;
    QFormLayout* scoring_form_;
    QFormLayout* device_form_;
};

}  // namespace alignscope::ui
