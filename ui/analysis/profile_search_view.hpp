// The workbench's profile search: the project's HMMER3 profiles (opened with
// File › Open or dropped on the window), a search of one profile file against
// the loaded sequences or a FASTA database with hmmsearch's thresholds on a
// chosen device (worker thread, progress, cancel), the hits table (target,
// E-value, bit score, bias, domains), each hit's domains, and each domain's
// alignment to the model as hmmsearch prints it. Searches are kept in the
// project and listed for reopening.
#pragma once

#include "analysis/analysis_job.hpp"
#include "analysis/profile_search.hpp"
#include "views/result_view.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>

#include <optional>

class QGridLayout;

namespace alignscope::ui {

// Whether a file is a HMMER profile (by its .hmm or .hmm.gz name, or a plain
// file that starts with HMMER's format tag), for the window's File › Open and drops.
bool is_profile_file(const QString& path);

class ProfileSearchView : public ResultView {
    Q_OBJECT
public:
    explicit ProfileSearchView(ProjectDocument& document, QWidget* parent = nullptr);

    void showJob(qint64) override {}
    bool canShow(const store::JobInfo&) const override { return false; }
    qint64 defaultJob(const std::vector<store::JobInfo>&) const override { return 0; }

    // Reads a .hmm file, records it in the project (when one is open) and
    // selects it. False, with the reason in lastError(), when it cannot be read.
    bool openProfile(const QString& path);
    QString lastError() const { return last_error_; }
    // The FASTA database searched when the target choice is "FASTA file".
    void setDatabase(const QString& path);
    // Starts the search the controls describe; false (lastError) when it cannot.
    bool runSearch();
    void cancel() { job_.cancel(); }
    // hmmsearch's --tblout (domains false) or --domtblout of the shown search;
    // false (lastError) when there is none or the file cannot be written.
    bool exportTable(const QString& path, bool domains);
    // Shows stored search `analysisId` of the project.
    bool showAnalysis(qint64 analysisId);

    AnalysisJob& job() { return job_; }
    const ProfileSearchResults* results() const { return results_ ? &*results_ : nullptr; }
    qint64 shownAnalysis() const { return shown_analysis_; }
    QComboBox* profileChoice() const { return profiles_; }
    QComboBox* targetChoice() const { return targets_; }
    QComboBox* deviceChoice() const { return device_; }
    QComboBox* savedChoice() const { return saved_; }
    QDoubleSpinBox* reportEvalue() const { return report_e_; }
    QDoubleSpinBox* domainEvalue() const { return domain_e_; }
    QTableWidget* hitsTable() const { return hits_; }
    QTableWidget* domainsTable() const { return domains_; }
    QPlainTextEdit* alignmentText() const { return alignment_; }
    QLabel* statusLabel() const { return status_; }
    QProgressBar* progressBar() const { return progress_; }

signals:
    // A search ended (Done: its results are shown and stored).
    void searchFinished(int state, QString message);

private:
    struct LoadedProfile {
        QString label;
        std::vector<profile::ProfileHmm> models;
        qint64 input_id = 0;
    };
    // The parts the constructor assembles: three rows of the settings grid,
    // the hits, domains and alignment, the panel above the domains.
    void addProfileRow(QGridLayout& grid, int row);
    void addTargetsRow(QGridLayout& grid, int row);
    void addSearchRow(QGridLayout& grid, int row);
    void makeResultTables();
    QWidget* makeHitsPanel();
    void connectJob();

    void refreshInputs();
    void refreshSaved();
    void showResults();
    void showHit(int row);
    void showDomain(int hitRow, int domainRow);
    void finished(AnalysisJob::State state, const QString& message, double seconds);
    void updateModelLabel();

    AnalysisJob job_;
    std::vector<LoadedProfile> loaded_;
    std::optional<ProfileSearchResults> results_;
    std::optional<ProfileSearchRequest> pending_;
    std::shared_ptr<ProfileSearchResults> running_results_;
    qint64 shown_analysis_ = 0;
    QString database_;
    QString last_error_;

    QComboBox* profiles_ = nullptr;
    QLabel* model_label_ = nullptr;
    QComboBox* targets_ = nullptr;
    QLineEdit* database_edit_ = nullptr;
    QDoubleSpinBox* report_e_ = nullptr;
    QDoubleSpinBox* domain_e_ = nullptr;
    QComboBox* device_ = nullptr;
    QPushButton* run_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    QComboBox* saved_ = nullptr;
    QLabel* pipeline_ = nullptr;
    QTableWidget* hits_ = nullptr;
    QTableWidget* domains_ = nullptr;
    QPlainTextEdit* alignment_ = nullptr;
};

}  // namespace alignscope::ui
