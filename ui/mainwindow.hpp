// The workbench window: the job panel in a dock, the views (from the view
// catalog) in tabs, menus with shortcuts, a status bar with the device and the
// progress of jobs and loads, drag and drop of sequence files and projects.
// Everything it does goes into the open project; long work runs on the job
// queue's and the project loader's threads, never on the GUI thread.
#pragma once

#include "event_loop_probe.hpp"
#include "jobs/job_queue.hpp"
#include "jobs/job_staleness.hpp"
#include "project_document.hpp"

#include <alignscope/device/backend.hpp>
#include <alignscope/search/scan.hpp>

#include <QFileDialog>
#include <QLabel>
#include <QMainWindow>
#include <QMap>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>

#include <optional>

namespace alignscope::ui {

class BenchmarkView;
class ExportImageDialog;
class JobPanel;
class QueuePanel;
class JobsView;
class ResultView;
class SequencesView;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The registries outlive the window: `registry` runs pairwise jobs and the
    // GCUPS comparison, `scanners` database searches. Without scanners the
    // window makes the engine's CPU scanners for itself.
    explicit MainWindow(DeviceRegistry& registry, QWidget* parent = nullptr);
    MainWindow(DeviceRegistry& registry, ScannerRegistry& scanners, QWidget* parent = nullptr);
    ~MainWindow() override;

    ProjectDocument& document() { return document_; }
    JobQueue& queue() { return queue_; }
    JobPanel& jobPanel() { return *panel_; }
    ResultView* view(const QString& id) const { return views_.value(id); }
    JobsView& jobsView() const;
    SequencesView& sequencesView() const;
    void showView(const QString& id);  // raises its tab

    // What the menus do, callable directly (the demo, the tests).
    void openProject(const QString& path, bool create = false);
    void loadFiles(const QStringList& paths);
    // Keeps the text as a FASTA file in the data folder (so the project can
    // point at it) and loads it. Residues without a header become one record.
    // Returns the file, or an empty string (and a message) when the text is
    // empty or blank.
    QString pasteSequences(const QString& text);
    // Queues the panel's job; 0 when the panel shows errors.
    quint64 runJob();
    // Cancels running and queued jobs and any file still loading.
    void cancelAll();
    // Cancels the running job only (Esc); the queued ones then run. Without
    // a job, stops a file loading.
    void cancelRunning();
    // Job › Cancel All Jobs: asks first when jobs wait behind the running one.
    void confirmCancelAll();
    QueuePanel& queuePanel() const { return *queue_panel_; }
    // Points every result view at this job and raises the view of its main
    // results (hits, alignments or GCUPS curves).
    void showJobResults(qint64 jobId);
    // Shows a Chrome trace file in the timeline view, read-only; false (and a
    // message) when it cannot be read.
    bool importChromeTrace(const QString& path);
    qint64 currentJob() const { return current_job_; }

    // The one way errors and notices reach the user: emitted (tests observe
    // `userMessage`) and shown in a window-modal box opened with open(), which
    // never blocks the caller.
    void showMessage(QMessageBox::Icon icon, const QString& title, const QString& text);
    QMessageBox* currentMessageBox() const { return message_box_; }

    // Ask before closing while jobs run (the jobs then show as interrupted).
    void setConfirmCloseWhileRunning(bool confirm) { confirm_close_ = confirm; }
    // The longest GUI-thread stall while the last batch of jobs ran (ms).
    double lastJobStallMs() const { return last_stall_ms_; }
    // How much of that stall the GUI thread spent working (see EventLoopProbe).
    double lastJobStallBusyMs() const { return last_stall_busy_ms_; }
    QString deviceText() const { return device_label_->text(); }

    static QStringList recentProjects();

signals:
    void userMessage(int icon, QString title, QString text);
    // A job ended; `text` is what the notification said.
    void jobNotification(qint64 jobId, int state, QString text);
    // A project is open and the sequences it holds are loaded.
    void projectReady(QString path);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    MainWindow(DeviceRegistry& registry, std::unique_ptr<ScannerRegistry> own, ScannerRegistry* scanners,
               QWidget* parent);
    void createViews();
    void fitJobPanel();
    void createMenus();
    void createStatusBar();
    void connectQueue();
    void connectDocument();
    void updateRecentMenu();
    void rememberProject(const QString& path);
    void showAbout();
    void pasteDialog();

public:
    // The file dialogs (opened window-modal, in the folder last used for the
    // kind of file: file_dialogs.hpp); null when there is nothing to do.
    QFileDialog* newProjectDialog();
    QFileDialog* openProjectDialog();
    QFileDialog* saveAsDialog();
    QFileDialog* loadSequencesDialog();
    QFileDialog* importTraceDialog();
    // Help › User Guide: the manual shipped in the program's resources.
    QDialog* showUserGuide();
    // File › Export Image… for the shown view (its plot, or the view itself);
    // the dialog, opened (window-modal), or null when no view is shown.
    ExportImageDialog* exportImageDialog();
    // Help › Keyboard Shortcuts: every menu key, read from the menus.
    QDialog* showShortcuts();

private:
    BenchmarkView* benchmarkView() const;
    void jobProgressed(quint64 ticket, const JobProgress& progress);
    void jobFinished(quint64 ticket, const JobOutcome& outcome);
    void updateRunning();
    void updateStale();
    // QStatusBar::showMessage, painted with the window's next paint instead
    // of at once (see change_without_repaint).
    void showStatus(const QString& text, int timeout = 0);

    DeviceRegistry& registry_;
    std::unique_ptr<ScannerRegistry> own_scanners_;  // when none were given
    ScannerRegistry& scanners_;
    ProjectDocument document_;
    JobQueue queue_;
    EventLoopProbe probe_;
    JobPanel* panel_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QMap<QString, ResultView*> views_;
    QMenu* recent_menu_ = nullptr;
    QAction* run_action_ = nullptr;
    QAction* cancel_action_ = nullptr;
    QAction* cancel_all_action_ = nullptr;
    QueuePanel* queue_panel_ = nullptr;
    QLabel* device_label_ = nullptr;
    QLabel* job_label_ = nullptr;
    QProgressBar* job_progress_ = nullptr;
    QLabel* load_label_ = nullptr;
    QProgressBar* load_progress_ = nullptr;
    QToolButton* load_cancel_ = nullptr;
    QPointer<QMessageBox> message_box_;
    QMap<quint64, qint64> ticket_jobs_;        // queue ticket -> project job id
    QMap<quint64, QString> ticket_summaries_;  // queue ticket -> what the job does
    qint64 current_job_ = 0;
    QTimer* stale_timer_ = nullptr;
    std::optional<PanelSnapshot> panel_snapshot_;  // the panel's settings as a job spec
    bool awaiting_ready_ = false;
    bool confirm_close_ = true;
    bool close_confirmed_ = false;
    double last_stall_ms_ = 0;
    double last_stall_busy_ms_ = 0;
};

}  // namespace alignscope::ui
