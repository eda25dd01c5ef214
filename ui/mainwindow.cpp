// MainWindow: wiring of the document, the job queue, the panel and the views.
#include "mainwindow.hpp"

#include "analysis/profile_search_view.hpp"
#include "file_dialogs.hpp"
#include "image_export.hpp"
#include "jobs/job_staleness.hpp"
#include "jobs/project_job_recorder.hpp"
#include "panels/job_panel.hpp"
#include "panels/queue_panel.hpp"
#include "views/benchmark_view.hpp"
#include "views/gcups/gcups_view.hpp"
#include "views/job_result_view.hpp"
#include "views/job_timeline_view.hpp"
#include "views/jobs_view.hpp"
#include "views/sequences_view.hpp"
#include "views/view_catalog.hpp"

#include <alignscope/build_identity.hpp>
#include <alignscope/store/job_spec.hpp>

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTextBrowser>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <cmath>

static void ensure_ui_resources() {
    // The resources live in a static library: register them before first use.
    static const bool done = [] {
        Q_INIT_RESOURCE(alignscope);
        return true;
    }();
    (void)done;
}

namespace alignscope::ui {

namespace {

constexpr int max_recent_projects = 8;

QString rate_text(double cells_per_second) {
    if (cells_per_second >= 1e9) return QObject::tr("%1 Gcells/s").arg(cells_per_second / 1e9, 0, 'f', 2);
    if (cells_per_second >= 1e6) return QObject::tr("%1 Mcells/s").arg(cells_per_second / 1e6, 0, 'f', 1);
    return QObject::tr("%1 kcells/s").arg(cells_per_second / 1e3, 0, 'f', 1);
}

QString eta_text(double seconds) {
    if (seconds < 0) return QObject::tr("ETA unknown");
    if (seconds < 60) return QObject::tr("ETA %1 s").arg(std::ceil(seconds));
    const auto s = qint64(std::ceil(seconds));
    if (s < 3600) return QObject::tr("ETA %1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
    return QObject::tr("ETA %1 h %2 min").arg(s / 3600).arg(s / 60 % 60);
}

// The speed of a finished job in the unit that reads well at its size (a
// tiny job's 0.000 GCUPS says nothing).
QString gcups_text(const JobOutcome& outcome) {
    const double rate = outcome.seconds > 0 ? double(outcome.cells) / outcome.seconds : 0;
    if (rate <= 0) return QObject::tr("too quick to time");
    return rate_text(rate);
}

bool is_project_file(const QString& path) { return path.endsWith(".alsproj", Qt::CaseInsensitive); }

// QStatusBar::showMessage and QProgressBar's setters repaint at once, and a
// repaint at once paints every widget of the window that waits for a paint,
// there and then: a burst of job signals painted the window several times in
// one turn of the event loop. With updates off around the change the widget
// only asks for a paint, which Qt does once, with everything else, when the
// event loop next turns (the text and values themselves change at once).
template <class Change>
void change_without_repaint(QWidget* widget, Change&& change) {
    if (!widget->updatesEnabled()) {
        change();
        return;
    }
    widget->setUpdatesEnabled(false);
    change();
    widget->setUpdatesEnabled(true);  // asks for the paint
}

void set_progress(QProgressBar* bar, int minimum, int maximum, int value) {
    if (bar->minimum() == minimum && bar->maximum() == maximum && bar->value() == value) return;
    change_without_repaint(bar, [&] {
        bar->setRange(minimum, maximum);
        bar->setValue(value);
    });
}

}  // namespace

MainWindow::MainWindow(DeviceRegistry& registry, QWidget* parent)
    : MainWindow(registry, make_cpu_scanner_registry(), nullptr, parent) {}

MainWindow::MainWindow(DeviceRegistry& registry, ScannerRegistry& scanners, QWidget* parent)
    : MainWindow(registry, nullptr, &scanners, parent) {}

MainWindow::MainWindow(DeviceRegistry& registry, std::unique_ptr<ScannerRegistry> own, ScannerRegistry* scanners,
                       QWidget* parent)
    : QMainWindow(parent),
      registry_(registry),
      own_scanners_(std::move(own)),
      scanners_(scanners ? *scanners : *own_scanners_),
      queue_(registry, &scanners_) {
    ensure_ui_resources();
    setWindowIcon(QIcon(":/icons/alignscope.svg"));
    setWindowTitle(tr("AlignScope"));
    setAcceptDrops(true);
    setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

    panel_ = new JobPanel(document_, queue_.devices(), &scanners_);
    panel_->setObjectName("jobPanel");
    auto* scroll = new QScrollArea;
    scroll->setObjectName("jobPanelScroll");
    scroll->setWidget(panel_);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    // The panel scrolls down, never sideways: its width is kept (below).
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    panel_->installEventFilter(this);
    auto* dock = new QDockWidget(tr("Job"), this);
    dock->setObjectName("jobDock");
    dock->setWidget(scroll);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);
    fitJobPanel();
    resizeDocks({dock}, {panel_->sizeHint().width() + 24}, Qt::Horizontal);
    // The queue under the panel: every queued or running job, each with its
    // own Cancel.
    queue_panel_ = new QueuePanel(queue_);
    queue_panel_->setObjectName("queuePanel");
    auto* queue_dock = new QDockWidget(tr("Queue"), this);
    queue_dock->setObjectName("queueDock");
    queue_dock->setWidget(queue_panel_);
    queue_dock->setFeatures(dock->features());
    addDockWidget(Qt::LeftDockWidgetArea, queue_dock);
    splitDockWidget(dock, queue_dock, Qt::Vertical);
    resizeDocks({dock, queue_dock}, {600, 140}, Qt::Vertical);

    createViews();
    createMenus();
    createStatusBar();
    connectQueue();
    connectDocument();

    panel_->setSelectionProvider([this](bool* mixed) { return sequencesView().selection(mixed); });
    connect(&sequencesView(), &SequencesView::selectionChanged, panel_, &JobPanel::revalidate);
    connect(panel_, &JobPanel::runRequested, this, [this] { runJob(); });
    connect(panel_, &JobPanel::cancelRequested, this, &MainWindow::cancelRunning);
    connect(panel_, &JobPanel::validityChanged, run_action_, &QAction::setEnabled);
    connect(panel_, &JobPanel::deviceChanged, this, [this](const QString& id, const QString& name) {
        device_label_->setText(tr("Device: %1").arg(name));
        device_label_->setToolTip(id);
    });
    const JobRequest initial = panel_->request();
    if (auto d = queue_.device(initial.device)) {
        device_label_->setText(tr("Device: %1").arg(QString::fromStdString(d->name)));
        device_label_->setToolTip(QString::fromStdString(d->id));
    }
    run_action_->setEnabled(panel_->canRun());

    // Views mark themselves stale when the panel or the inputs changed since
    // the job they show ran (checked shortly after the changes settle).
    stale_timer_ = new QTimer(this);
    stale_timer_->setSingleShot(true);
    stale_timer_->setInterval(150);
    connect(stale_timer_, &QTimer::timeout, this, &MainWindow::updateStale);
    connect(panel_, &JobPanel::validityChanged, stale_timer_, qOverload<>(&QTimer::start));
    connect(&document_, &ProjectDocument::inputsChanged, stale_timer_, qOverload<>(&QTimer::start));
    for (ResultView* v : std::as_const(views_))
        if (auto* job_view = qobject_cast<JobResultView*>(v))
            job_view->setStaleCheck([this](const store::JobInfo& job) {
                if (!panel_snapshot_) return QStringList();
                std::vector<store::InputInfo> inputs;
                for (const SequenceInput& in : document_.inputs()) inputs.push_back(in.info);
                return stale_reasons(job, *panel_snapshot_, inputs);
            });

    QSettings settings;
    restoreGeometry(settings.value("window/geometry").toByteArray());
    restoreState(settings.value("window/state").toByteArray());
    if (!settings.contains("window/geometry")) resize(1280, 800);
}

MainWindow::~MainWindow() = default;

void MainWindow::updateStale() {
    // What the panel would record now; nothing to compare with while it has
    // no sequences on a side.
    panel_snapshot_.reset();
    const JobRequest request = panel_->request();
    if (request.queries.size() > 0 && request.targets.size() > 0) {
        std::optional<DeviceInfo> device = queue_.device(request.device);
        if (!device && request.device == "gpu")
            for (const DeviceInfo& d : queue_.devices())
                if (d.kind == "gpu" && d.available) {
                    device = d;
                    break;
                }
        if (device) {
            try {
                panel_snapshot_ = PanelSnapshot{ProjectJobRecorder::spec_for(request, *device), request.queries.set_ids,
                                                request.targets.set_ids};
            } catch (const std::exception&) {
                panel_snapshot_.reset();  // a request the panel itself refuses
            }
        }
    }
    for (ResultView* v : std::as_const(views_))
        if (auto* job_view = qobject_cast<JobResultView*>(v)) job_view->updateStale();
}

void MainWindow::fitJobPanel() {
    // The dock never gets narrower than the panel's content (whatever the
    // views in the central area ask for), so no control is cut off at the
    // side; the height scrolls.
    auto* scroll =
        qobject_cast<QScrollArea*>(panel_->parentWidget() ? panel_->parentWidget()->parentWidget() : nullptr);
    if (!scroll) return;
    const int width =
        panel_->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 2 * scroll->frameWidth();
    if (scroll->minimumWidth() != width) scroll->setMinimumWidth(width);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == panel_ && event->type() == QEvent::LayoutRequest) fitJobPanel();
    return QMainWindow::eventFilter(watched, event);
}

JobsView& MainWindow::jobsView() const { return *qobject_cast<JobsView*>(views_.value("jobs")); }

SequencesView& MainWindow::sequencesView() const { return *qobject_cast<SequencesView*>(views_.value("sequences")); }

void MainWindow::createViews() {
    tabs_ = new QTabWidget(this);
    tabs_->setObjectName("views");
    tabs_->setDocumentMode(true);
    for (const ViewSpec& spec : view_catalog()) {
        ResultView* v = spec.create(document_, tabs_);
        v->setObjectName(spec.id + "View");
        views_.insert(spec.id, v);
        tabs_->addTab(v, spec.title);
        connect(v, &ResultView::jobActivated, this, &MainWindow::showJobResults);
        // One pair chosen in one view (the alignment list) is the pair the
        // others about one pair (the DP heatmap) show.
        connect(v, &ResultView::alignmentRowChosen, this, [this, v](qint64 job, qint64 row) {
            for (auto* other : std::as_const(views_))
                if (other != v) other->showAlignmentRow(job, row);
        });
    }
    setCentralWidget(tabs_);
    if (BenchmarkView* bench = benchmarkView()) {
        bench->setDeviceRegistry(&registry_);
        connect(bench, &BenchmarkView::comparingChanged, this, &MainWindow::updateRunning);
    }

    JobsView& jobs = jobsView();
    connect(&jobs, &JobsView::jobSelected, this, [this](qint64 id) {
        if (!id) return;
        current_job_ = id;
        for (auto* v : std::as_const(views_))
            if (v != views_.value("jobs") && v->shownJob() != id) v->showJob(id);
    });
    connect(&jobs, &JobsView::cancelRequested, this, [this](qint64 id) {
        for (auto it = ticket_jobs_.cbegin(); it != ticket_jobs_.cend(); ++it)
            if (it.value() == id) queue_.cancel(it.key());
    });
    connect(&jobs, &JobsView::deleteRequested, this, [this](qint64 id) { document_.deleteJob(id); });
}

void MainWindow::createMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* create =
        file->addAction(QIcon(":/icons/new.svg"), tr("&New Project…"), this, &MainWindow::newProjectDialog);
    create->setShortcut(QKeySequence::New);
    QAction* open =
        file->addAction(QIcon(":/icons/open.svg"), tr("&Open Project…"), this, &MainWindow::openProjectDialog);
    open->setShortcut(QKeySequence::Open);
    QAction* save_as =
        file->addAction(QIcon(":/icons/save.svg"), tr("Save Project &As…"), this, &MainWindow::saveAsDialog);
    // Not every platform theme has a key for QKeySequence::SaveAs.
    save_as->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    recent_menu_ = file->addMenu(tr("Open &Recent"));
    updateRecentMenu();
    file->addSeparator();
    QAction* load =
        file->addAction(QIcon(":/icons/load.svg"), tr("&Load Sequences…"), this, &MainWindow::loadSequencesDialog);
    load->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    QAction* paste =
        file->addAction(QIcon(":/icons/paste.svg"), tr("&Paste Sequences…"), this, &MainWindow::pasteDialog);
    paste->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
    if (views_.contains("timeline"))
        file->addAction(tr("&Import Chrome Trace…"), this, &MainWindow::importTraceDialog)
            ->setObjectName("importTrace");
    QAction* export_image = file->addAction(tr("Export &Image…"), this, &MainWindow::exportImageDialog);
    export_image->setObjectName("exportImage");
    export_image->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    export_image->setToolTip(tr("The shown view's picture as PNG (size and resolution), SVG or PDF"));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quit->setMenuRole(QAction::QuitRole);

    QMenu* job = menuBar()->addMenu(tr("&Job"));
    run_action_ = job->addAction(QIcon(":/icons/run.svg"), tr("&Run"), this, [this] { runJob(); });
    run_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    // Esc stops what runs now, never the jobs waiting behind it; stopping
    // them all asks first.
    cancel_action_ =
        job->addAction(QIcon(":/icons/cancel.svg"), tr("&Cancel Running Job"), this, &MainWindow::cancelRunning);
    cancel_action_->setObjectName("cancelRunning");
    cancel_action_->setShortcuts({QKeySequence(Qt::Key_Escape), QKeySequence(Qt::CTRL | Qt::Key_Period)});
    cancel_action_->setEnabled(false);
    cancel_all_action_ = job->addAction(tr("Cancel &All Jobs…"), this, &MainWindow::confirmCancelAll);
    cancel_all_action_->setObjectName("cancelAll");
    cancel_all_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period));
    cancel_all_action_->setEnabled(false);
    // Profile searches and all-against-all runs have their own tabs (their
    // settings, progress and results together); these raise them.
    job->addSeparator();
    job->addAction(tr("&Profile Search…"), this, [this] { showView("profiles"); })->setObjectName("profileSearch");
    job->addAction(tr("All A&gainst All…"), this, [this] { showView("allvsall"); })->setObjectName("allAgainstAll");

    QMenu* view = menuBar()->addMenu(tr("&View"));
    int n = 1;
    for (const ViewSpec& spec : view_catalog()) {
        QAction* a = view->addAction(spec.title, this, [this, id = spec.id] { showView(id); });
        if (n <= 9) a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + n)));
        ++n;
    }
    view->addSeparator();
    if (auto* dock = findChild<QDockWidget*>("jobDock")) view->addAction(dock->toggleViewAction());

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* guide = help->addAction(tr("&User Guide"), this, &MainWindow::showUserGuide);
    guide->setObjectName("userGuide");
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts)->setObjectName("keyboardShortcuts");
    QAction* about = help->addAction(tr("&About AlignScope"), this, &MainWindow::showAbout);
    about->setMenuRole(QAction::AboutRole);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

void MainWindow::createStatusBar() {
    load_label_ = new QLabel(this);
    load_progress_ = new QProgressBar(this);
    load_progress_->setObjectName("loadProgress");
    load_progress_->setMaximumWidth(160);
    load_cancel_ = new QToolButton(this);
    load_cancel_->setIcon(QIcon(":/icons/cancel.svg"));
    load_cancel_->setToolTip(tr("Stop loading"));
    connect(load_cancel_, &QToolButton::clicked, &document_, &ProjectDocument::cancelLoading);
    job_label_ = new QLabel(this);
    job_label_->setObjectName("jobRate");
    job_progress_ = new QProgressBar(this);
    job_progress_->setObjectName("jobProgress");
    job_progress_->setMaximumWidth(200);
    job_progress_->setRange(0, 100);
    device_label_ = new QLabel(this);
    device_label_->setObjectName("deviceLabel");
    for (QWidget* w : std::initializer_list<QWidget*>{load_label_, load_progress_, load_cancel_, job_label_,
                                                      job_progress_, device_label_})
        statusBar()->addPermanentWidget(w);
    for (QWidget* w :
         std::initializer_list<QWidget*>{load_label_, load_progress_, load_cancel_, job_label_, job_progress_})
        w->hide();
}

void MainWindow::connectQueue() {
    connect(&queue_, &JobQueue::jobQueued, this, [this](quint64 ticket, const QString& summary) {
        ticket_summaries_.insert(ticket, summary);
        const int ahead = int(queue_.activeTickets().size()) - 1;
        if (ahead > 0)
            showStatus(tr("Queued behind %n job(s) (see the queue in the Jobs view): %1", nullptr, ahead).arg(summary),
                       8000);
        else
            showStatus(tr("Starting: %1").arg(summary), 5000);
        updateRunning();
    });
    connect(&queue_, &JobQueue::jobRecorded, this, [this](quint64 ticket, qint64 id) {
        ticket_jobs_.insert(ticket, id);
        document_.poll();
    });
    connect(&queue_, &JobQueue::jobStarted, this, [this](quint64 ticket) {
        set_progress(job_progress_, 0, 100, 0);
        // The "Queued" notice gives way to what runs now.
        const qint64 id = ticket_jobs_.value(ticket);
        const QString summary = ticket_summaries_.value(ticket);
        showStatus(id ? tr("Running job %1: %2").arg(id).arg(summary) : tr("Running: %1").arg(summary));
        document_.poll();
    });
    connect(&queue_, &JobQueue::jobProgress, this, &MainWindow::jobProgressed);
    connect(&queue_, &JobQueue::jobFinished, this, &MainWindow::jobFinished);
    connect(&queue_, &JobQueue::idle, this, [this] {
        probe_.stop();
        last_stall_ms_ = probe_.maxStallMs();
        last_stall_busy_ms_ = probe_.busyInMaxGapMs();
        updateRunning();
    });
}

void MainWindow::connectDocument() {
    connect(&document_, &ProjectDocument::opened, this, [this](const QString& path) {
        setWindowTitle(tr("%1 — AlignScope").arg(QFileInfo(path).fileName()));
        setWindowFilePath(path);
        queue_.setRecorderFactory(document_.recorderFactory());
        rememberProject(path);
        current_job_ = 0;
        // Ready once the sequences it holds are read (the loader's next idle).
        awaiting_ready_ = true;
        showStatus(tr("Opened %1").arg(path), 5000);
    });
    connect(&document_, &ProjectDocument::openFailed, this, [this](const QString& path, const QString& message) {
        awaiting_ready_ = false;
        showMessage(QMessageBox::Critical, tr("Cannot open the project"),
                    message.isEmpty() ? tr("%1 could not be opened.").arg(path) : message);
    });
    connect(&document_, &ProjectDocument::saveFailed, this, [this](const QString&, const QString& message) {
        showMessage(QMessageBox::Critical, tr("Cannot save the project"), message);
    });
    connect(&document_, &ProjectDocument::deleteFailed, this, [this](qint64, const QString& message) {
        showMessage(QMessageBox::Warning, tr("Cannot delete the job"), message);
    });
    connect(&document_, &ProjectDocument::loadStarted, this, [this](const QString& path) {
        load_label_->setText(tr("Loading %1").arg(QFileInfo(path).fileName()));
        set_progress(load_progress_, 0, 0, 0);
        for (QWidget* w : {static_cast<QWidget*>(load_label_), static_cast<QWidget*>(load_progress_),
                           static_cast<QWidget*>(load_cancel_)})
            w->show();
        updateRunning();
    });
    connect(&document_, &ProjectDocument::loadProgress, this, [this](const QString&, quint64 read, quint64 size) {
        if (size == 0) return;
        set_progress(load_progress_, 0, 1000, int(1000.0 * double(read) / double(size)));
    });
    connect(&document_, &ProjectDocument::loadFailed, this, [this](const QString& path, const QString& message) {
        showMessage(QMessageBox::Warning, tr("Cannot load %1").arg(QFileInfo(path).fileName()), message);
    });
    connect(&document_, &ProjectDocument::loadWarning, this, [this](const QString& path, const QString& message) {
        showMessage(QMessageBox::Warning, tr("Check %1").arg(QFileInfo(path).fileName()), message);
    });
    connect(&document_, &ProjectDocument::loadCancelled, this, [this](const QString& path) {
        showStatus(tr("Loading %1 cancelled").arg(QFileInfo(path).fileName()), 5000);
    });
    connect(&document_, &ProjectDocument::loadingIdle, this, [this] {
        for (QWidget* w : {static_cast<QWidget*>(load_label_), static_cast<QWidget*>(load_progress_),
                           static_cast<QWidget*>(load_cancel_)})
            w->hide();
        updateRunning();
        if (awaiting_ready_ && document_.isOpen()) {
            awaiting_ready_ = false;
            emit projectReady(document_.path());
        }
    });
}

void MainWindow::showView(const QString& id) {
    if (ResultView* v = views_.value(id)) tabs_->setCurrentWidget(v);
}

void MainWindow::openProject(const QString& path, bool create) {
    awaiting_ready_ = true;
    document_.open(path, create);
}

void MainWindow::loadFiles(const QStringList& paths) {
    if (paths.isEmpty()) return;
    if (!document_.isOpen()) {
        showMessage(QMessageBox::Warning, tr("No project"), tr("Open or create a project before loading sequences."));
        return;
    }
    // HMMER profiles go to the profile search; the rest are sequences.
    QStringList sequences;
    for (const QString& path : paths) {
        auto* profiles = qobject_cast<ProfileSearchView*>(view("profiles"));
        if (!profiles || !is_profile_file(path)) {
            sequences << path;
        } else if (profiles->openProfile(path)) {
            showView("profiles");
        } else {
            showMessage(QMessageBox::Warning, tr("Cannot open profile"), profiles->lastError());
        }
    }
    if (sequences.isEmpty()) return;
    document_.loadFiles(sequences);
    showView("sequences");
}

QString MainWindow::pasteSequences(const QString& text) {
    QString body = text.trimmed();
    if (body.isEmpty()) {
        showMessage(QMessageBox::Warning, tr("Nothing to paste"),
                    text.isEmpty() ? tr("The pasted text is empty: copy FASTA or FASTQ records, or plain residues, "
                                        "and paste them again.")
                                   : tr("The pasted text is only blank space (%n character(s)): paste FASTA or FASTQ "
                                        "records, or plain residues.",
                                        nullptr, int(std::min<qsizetype>(text.size(), INT_MAX))));
        return {};
    }
    if (!body.startsWith('>') && !body.startsWith('@')) body = ">pasted\n" + body;
    const QString folder = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/pasted";
    QDir().mkpath(folder);
    const QString path = folder + "/pasted-" + QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss-zzz") + ".fa";
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(body.toUtf8() + "\n") < 0) {
        showMessage(QMessageBox::Critical, tr("Cannot keep the pasted sequences"),
                    tr("%1: %2").arg(path, file.errorString()));
        return {};
    }
    file.close();
    loadFiles({path});
    return path;
}

quint64 MainWindow::runJob() {
    if (BenchmarkView* bench = benchmarkView(); bench && bench->comparing()) {
        // A comparison measures the devices alone, and shares their backends.
        showStatus(tr("A CPU and GPU comparison is running: wait for it, or cancel it in the GCUPS view"), 8000);
        return 0;
    }
    panel_->revalidate();
    if (!panel_->canRun()) {
        showStatus(tr("The job cannot run: see the Job panel"), 5000);
        return 0;
    }
    if (!probe_.running()) probe_.start();
    const quint64 ticket = queue_.enqueue(panel_->request());
    updateRunning();
    return ticket;
}

void MainWindow::cancelAll() {
    queue_.cancelAll();
    if (document_.loading()) document_.cancelLoading();
}

void MainWindow::cancelRunning() {
    // The first active ticket is the one the worker runs (jobs run in order).
    const QList<quint64> tickets = queue_.activeTickets();
    if (!tickets.isEmpty()) {
        queue_.cancel(tickets.first());
        const int waiting = int(tickets.size()) - 1;
        const qint64 id = ticket_jobs_.value(tickets.first());
        showStatus(waiting > 0 ? tr("Cancelling job %1; %n queued job(s) still wait (Job › Cancel All Jobs stops them)",
                                    nullptr, waiting)
                                     .arg(id)
                               : tr("Cancelling job %1").arg(id),
                   8000);
        return;
    }
    if (document_.loading()) document_.cancelLoading();
}

void MainWindow::confirmCancelAll() {
    const int jobs = int(queue_.activeTickets().size());
    if (jobs <= 1) {
        cancelAll();
        return;
    }
    auto* box = new QMessageBox(QMessageBox::Question, tr("Cancel all jobs"),
                                tr("Cancel the running job and the %n job(s) waiting in the queue?", nullptr, jobs - 1),
                                QMessageBox::NoButton, this);
    box->setObjectName("cancelAllBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton* yes = box->addButton(tr("Cancel all %1").arg(jobs), QMessageBox::DestructiveRole);
    yes->setObjectName("cancelAllYes");
    box->addButton(tr("Keep them"), QMessageBox::RejectRole)->setObjectName("cancelAllNo");
    connect(box, &QMessageBox::finished, this, [this, box, yes] {
        if (box->clickedButton() == yes) cancelAll();
    });
    box->setWindowModality(Qt::WindowModal);
    box->open();
}

void MainWindow::showJobResults(qint64 jobId) {
    current_job_ = jobId;
    for (auto* v : std::as_const(views_))
        if (v->shownJob() != jobId || jobId == 0) v->showJob(jobId);
    const store::JobInfo* job = document_.job(jobId);
    if (!job) return;
    if (job->counts.hits > 0 && views_.contains("hits")) showView("hits");
    else if (job->counts.alignments > 0)
        showView("alignment");
    else if (job->counts.bench_points > 0 && views_.contains("gcups"))
        showView("gcups");
}

bool MainWindow::importChromeTrace(const QString& path) {
    auto* timeline = qobject_cast<JobTimelineView*>(views_.value("timeline"));
    if (!timeline) return false;
    try {
        timeline->importChromeTrace(path);
    } catch (const std::exception& e) {
        showMessage(QMessageBox::Warning, tr("Cannot import %1").arg(QFileInfo(path).fileName()),
                    QString::fromUtf8(e.what()));
        return false;
    }
    showView("timeline");
    return true;
}

QFileDialog* MainWindow::importTraceDialog() {
    return open_file_dialog(this, FileKind::Traces, tr("Import Chrome trace"),
                            tr("Chrome traces (*.json *.trace);;All files (*)"), QFileDialog::AcceptOpen,
                            QFileDialog::ExistingFile,
                            [this](const QStringList& paths) { importChromeTrace(paths.first()); });
}

BenchmarkView* MainWindow::benchmarkView() const { return qobject_cast<BenchmarkView*>(views_.value("gcups")); }

void MainWindow::jobProgressed(quint64 ticket, const JobProgress& progress) {
    // A phase no counter covers shows a busy bar, never a full one.
    const int percent = progress.percent();
    if (percent < 0) set_progress(job_progress_, 0, 0, 0);
    else
        set_progress(job_progress_, 0, 100, percent);
    const qint64 id = ticket_jobs_.value(ticket);
    QStringList parts{id ? tr("Job %1: %2").arg(id).arg(progress.text()) : progress.text()};
    if (progress.counted && progress.cells_done > 0 && progress.seconds > 0)
        parts << rate_text(progress.cells_per_second());
    // Only the job's own measured rate over work its counter covers predicts its end.
    if (const double eta = progress.eta_seconds(); eta >= 0 && progress.cells_done > 0) parts << eta_text(eta);
    job_label_->setText(parts.join(QStringLiteral(" · ")));
    if (auto it = ticket_jobs_.find(ticket); it != ticket_jobs_.end())
        jobsView().model().setLiveProgress(it.value(), progress);
}

void MainWindow::jobFinished(quint64 ticket, const JobOutcome& outcome) {
    const qint64 id = outcome.project_job_id ? outcome.project_job_id : ticket_jobs_.value(ticket);
    ticket_jobs_.remove(ticket);
    ticket_summaries_.remove(ticket);
    if (id) jobsView().model().clearLiveProgress(id);
    document_.poll();
    const QString name = id ? tr("Job %1").arg(id) : tr("The job");
    QString text;
    switch (outcome.state) {
        case JobState::Done:
            if (outcome.search) {
                text = tr("%1 done: %2 hit(s) for %n query(ies) in %3 s on %4 (%5)", nullptr, int(outcome.queries))
                           .arg(name)
                           .arg(outcome.hits)
                           .arg(outcome.seconds, 0, 'f', 2)
                           .arg(QString::fromStdString(outcome.device))
                           .arg(gcups_text(outcome));
                break;
            }
            if (outcome.long_pair) {
                const store::LongPairStats& lp = *outcome.long_pair;
                text = tr("%1 done: long pair %L2 x %L3 in %4 s on %5 (%6; stage 1 %7 s%8)")
                           .arg(name)
                           .arg(lp.query_length)
                           .arg(lp.target_length)
                           .arg(outcome.seconds, 0, 'f', 2)
                           .arg(QString::fromStdString(outcome.device))
                           .arg(gcups_text(outcome))
                           .arg(lp.stage_seconds[0], 0, 'f', 2)
                           .arg(outcome.long_overview ? tr(", overview saved for the DP heatmap") : QString());
                break;
            }
            text = tr("%1 done: %n alignment(s) in %2 s on %3 (%4)", nullptr,
                      int(outcome.alignments ? outcome.alignments->size() : 0))
                       .arg(name)
                       .arg(outcome.seconds, 0, 'f', 2)
                       .arg(QString::fromStdString(outcome.device))
                       .arg(gcups_text(outcome));
            break;
        case JobState::Cancelled: text = tr("%1 cancelled").arg(name); break;
        case JobState::Interrupted: text = tr("%1 interrupted").arg(name); break;
        case JobState::Failed: text = tr("%1 failed: %2").arg(name, QString::fromStdString(outcome.message)); break;
        default: break;
    }
    showStatus(text, 15000);
    if (outcome.state == JobState::Failed)
        showMessage(QMessageBox::Critical, tr("%1 failed").arg(name), QString::fromStdString(outcome.message));
    if (outcome.state == JobState::Done) {
        if (!isActiveWindow()) QApplication::alert(this);
        if (QSystemTrayIcon::isSystemTrayAvailable() && QSystemTrayIcon::supportsMessages() && !isActiveWindow()) {
            auto* tray = findChild<QSystemTrayIcon*>();
            if (!tray) {
                tray = new QSystemTrayIcon(windowIcon(), this);
                tray->show();
            }
            tray->showMessage(tr("AlignScope"), text, QSystemTrayIcon::Information, 8000);
        }
        // The views (and the jobs list's selection, which they follow) move
        // to the new job only when none is shown or the queue has drained:
        // while jobs run, the job a user looks at stays, and no finished job
        // reloads views that will not show it.
        if (id && (!current_job_ || queue_.activeTickets().isEmpty())) {
            showJobResults(id);
            jobsView().showJob(id);
        }
    }
    emit jobNotification(id, int(outcome.state), text);
    updateRunning();
}

void MainWindow::showStatus(const QString& text, int timeout) {
    change_without_repaint(statusBar(), [&] { statusBar()->showMessage(text, timeout); });
}

void MainWindow::updateRunning() {
    const bool jobs = !queue_.activeTickets().isEmpty();
    const bool loading = document_.loading();
    cancel_action_->setEnabled(jobs || loading);
    cancel_all_action_->setEnabled(jobs);
    panel_->setRunning(jobs);
    if (BenchmarkView* bench = benchmarkView())
        bench->gcups().setComparisonAllowed(
            !jobs, tr("Jobs are running: the comparison measures the devices alone, so it waits for them"));
    job_progress_->setVisible(jobs);
    job_label_->setVisible(jobs);
    if (!jobs) job_label_->clear();
}

void MainWindow::showMessage(QMessageBox::Icon icon, const QString& title, const QString& text) {
    emit userMessage(int(icon), title, text);
    // One box at a time: a burst of errors (a folder of bad files) updates it.
    if (QMessageBox* shown = message_box_.data(); shown && shown->isVisible()) {
        shown->setText(shown->text() + "\n\n" + title + ": " + text);
        return;
    }
    auto* box = new QMessageBox(icon, title, text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->setWindowModality(Qt::WindowModal);
    message_box_ = box;
    box->open();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    const bool running = !queue_.activeTickets().isEmpty();
    if (running && confirm_close_ && !close_confirmed_) {
        event->ignore();
        auto* box = new QMessageBox(QMessageBox::Question, tr("Jobs are running"),
                                    tr("Close AlignScope anyway? The running jobs stop and show as interrupted "
                                       "in the project; everything else is kept."),
                                    QMessageBox::NoButton, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        QPushButton* close_button = box->addButton(tr("Close and interrupt"), QMessageBox::DestructiveRole);
        box->addButton(tr("Keep running"), QMessageBox::RejectRole);
        connect(box, &QMessageBox::finished, this, [this, box, close_button] {
            if (box->clickedButton() == close_button) {
                close_confirmed_ = true;
                close();
            }
        });
        box->open();
        return;
    }
    document_.cancelLoading();
    queue_.interruptAll();
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/state", saveState());
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!event->mimeData()->hasUrls()) return;
    for (const QUrl& url : event->mimeData()->urls())
        if (!url.isLocalFile()) return;
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList files;
    QString project;
    for (const QUrl& url : event->mimeData()->urls()) {
        const QString path = url.toLocalFile();
        if (is_project_file(path)) project = path;
        else
            files << path;
    }
    event->acceptProposedAction();
    if (!project.isEmpty()) openProject(project);
    else
        loadFiles(files);
}

QStringList MainWindow::recentProjects() { return QSettings().value("recentProjects").toStringList(); }

void MainWindow::rememberProject(const QString& path) {
    QStringList recent = recentProjects();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > max_recent_projects) recent.removeLast();
    QSettings().setValue("recentProjects", recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    recent_menu_->clear();
    const QStringList recent = recentProjects();
    for (const QString& path : recent)
        recent_menu_->addAction(QFileInfo(path).fileName(), this, [this, path] { openProject(path); })
            ->setToolTip(path);
    recent_menu_->setEnabled(!recent.isEmpty());
}

QFileDialog* MainWindow::newProjectDialog() {
    return open_file_dialog(this, FileKind::Projects, tr("New project"), tr("AlignScope projects (*.alsproj)"),
                            QFileDialog::AcceptSave, QFileDialog::AnyFile, [this](const QStringList& paths) {
                                QString path = paths.first();
                                if (!is_project_file(path)) path += ".alsproj";
                                if (QFileInfo::exists(path)) {
                                    // The dialog asked before overwriting; a project is several files.
                                    for (const char* suffix : {"", "-wal", "-shm", "-lock"})
                                        QFile::remove(path + suffix);
                                }
                                openProject(path, true);
                            });
}

QFileDialog* MainWindow::openProjectDialog() {
    return open_file_dialog(this, FileKind::Projects, tr("Open project"),
                            tr("AlignScope projects (*.alsproj);;All files (*)"), QFileDialog::AcceptOpen,
                            QFileDialog::ExistingFile,
                            [this](const QStringList& paths) { openProject(paths.first()); });
}

QFileDialog* MainWindow::saveAsDialog() {
    if (!document_.isOpen()) return nullptr;
    return open_file_dialog(this, FileKind::Projects, tr("Save project as"), tr("AlignScope projects (*.alsproj)"),
                            QFileDialog::AcceptSave, QFileDialog::AnyFile, [this](const QStringList& paths) {
                                QString path = paths.first();
                                if (!is_project_file(path)) path += ".alsproj";
                                if (QFileInfo(path).absoluteFilePath() == document_.path()) return;
                                // The dialog asked before replacing a file; the store refuses any
                                // project that is open, and saveFailed says why.
                                awaiting_ready_ = true;
                                document_.saveAs(path);
                            });
}

QFileDialog* MainWindow::loadSequencesDialog() {
    return open_file_dialog(this, FileKind::Sequences, tr("Load sequences"),
                            tr("Sequences and profiles (*.fa *.fasta *.fna *.faa *.ffn *.fq *.fastq *.gz *.hmm);;"
                               "All files (*)"),
                            QFileDialog::AcceptOpen, QFileDialog::ExistingFiles,
                            [this](const QStringList& paths) { loadFiles(paths); });
}

void MainWindow::pasteDialog() {
    auto* dialog = new QDialog(this);
    dialog->setObjectName("pasteDialog");
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Paste sequences"));
    auto* edit = new QPlainTextEdit(dialog);
    edit->setPlaceholderText(tr(">id description\nACGT…  (FASTA or FASTQ; plain residues become one record)"));
    edit->setFont(QFont("monospace"));
    // Not QPlainTextEdit::paste(): with an empty X11 clipboard Qt hands it no
    // data at all, which it dereferences. QClipboard::text() checks.
    if (const QClipboard* clipboard = QGuiApplication::clipboard()) edit->setPlainText(clipboard->text());
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, dialog);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(edit);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    connect(dialog, &QDialog::accepted, this, [this, edit] { pasteSequences(edit->toPlainText()); });
    dialog->resize(640, 400);
    dialog->open();
}

ExportImageDialog* MainWindow::exportImageDialog() {
    auto* view = qobject_cast<ResultView*>(tabs_->currentWidget());
    if (!view) return nullptr;
    QString id;
    for (auto it = views_.cbegin(); it != views_.cend(); ++it)
        if (it.value() == view) id = it.key();
    const QString folder = remembered_folder(FileKind::Images);
    const QString name =
        QStringLiteral("%1%2.png").arg(id, current_job_ ? QStringLiteral("-job%1").arg(current_job_) : QString());
    auto* dialog = new ExportImageDialog(image_content(view), QDir(folder).filePath(name), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        remember_folder(FileKind::Images, dialog->path());
        showStatus(tr("Image written: %1").arg(dialog->path()), 8000);
    });
    dialog->open();
    return dialog;
}

QDialog* MainWindow::showUserGuide() {
    // The guide ships inside the program (resources/guide), so it matches
    // this version and needs no network.
    if (auto* open = findChild<QDialog*>("userGuideWindow")) {
        open->raise();
        open->activateWindow();
        return open;
    }
    ensure_ui_resources();
    QFile file(":/guide/user-guide.md");
    QString text;
    if (file.open(QIODevice::ReadOnly)) text = QString::fromUtf8(file.readAll());
    auto* dialog = new QDialog(this);
    dialog->setObjectName("userGuideWindow");
    dialog->setWindowTitle(tr("AlignScope User Guide"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    auto* browser = new QTextBrowser(dialog);
    browser->setObjectName("userGuideText");
    browser->setOpenExternalLinks(true);
    browser->setMarkdown(text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(browser);
    layout->addWidget(buttons);
    dialog->resize(760, 640);
    dialog->show();
    return dialog;
}

QDialog* MainWindow::showShortcuts() {
    // Every menu action with a key, read from the actions themselves, and the
    // stepper's keys (its buttons are not menu actions).
    QString rows;
    auto row = [&rows](const QString& keys, const QString& what) {
        rows +=
            QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(keys.toHtmlEscaped(), what.toHtmlEscaped());
    };
    for (QAction* menu_action : menuBar()->actions()) {
        QMenu* menu = menu_action->menu();
        if (!menu) continue;
        for (QAction* a : menu->actions()) {
            if (a->shortcuts().isEmpty()) continue;
            QStringList keys;
            for (const QKeySequence& k : a->shortcuts()) keys << k.toString(QKeySequence::NativeText);
            row(keys.join(", "), QString(menu_action->text() + " › " + a->text()).remove('&'));
        }
    }
    // The stepper's keys work anywhere in the window while the stepper is
    // shown, except in a text field (and Space on a button).
    row(tr("Right, Left"), tr("DP stepper (while it is shown): one step forward, one step back"));
    row(tr("Home, End"), tr("DP stepper: back to the empty matrix; to the end of the fill, then of the traceback"));
    row(tr("Space"), tr("DP stepper: play or pause"));
    auto* box = new QMessageBox(QMessageBox::NoIcon, tr("Keyboard shortcuts"),
                                QStringLiteral("<table cellspacing=\"6\">%1</table>").arg(rows), QMessageBox::Ok, this);
    box->setObjectName("shortcutsBox");
    box->setTextFormat(Qt::RichText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return box;
}

void MainWindow::showAbout() {
    QString devices;
    for (const DeviceInfo& d : queue_.devices()) {
        devices +=
            "<li><b>" + QString::fromStdString(d.name).toHtmlEscaped() + "</b> (" + QString::fromStdString(d.id) + ")";
        if (!d.available) {
            devices += tr(": unavailable, %1").arg(QString::fromStdString(d.unavailable_reason).toHtmlEscaped());
        } else {
            if (!d.description.empty()) devices += ": " + QString::fromStdString(d.description).toHtmlEscaped();
            if (d.kind == "gpu") {
                devices += tr("<br>compute capability %1.%2, %3 SMs, %4 GiB")
                               .arg(d.compute_major)
                               .arg(d.compute_minor)
                               .arg(d.sm_count)
                               .arg(double(d.memory_bytes) / double(1ull << 30), 0, 'f', 1);
                devices +=
                    tr("<br>CUDA driver %1, runtime %2")
                        .arg(QString::fromStdString(d.driver_version), QString::fromStdString(d.runtime_version));
            }
        }
        devices += "</li>";
    }
    // The build as `alignscope --version` says it: commit, CUDA architectures, MPI.
    QStringList build = QString::fromStdString(version_text("alignscope", false)).trimmed().split('\n');
    build.removeFirst();
    for (QString& line : build) line = line.toHtmlEscaped();
    const QString text =
        tr("<h3>AlignScope %1</h3><p>GPU sequence-alignment workbench.</p>"
           "<p>Engine: %2<br>Qt %3 (built with %4)</p><p>%6</p><p>Devices:</p><ul>%5</ul>")
            .arg(QStringLiteral(ALIGNSCOPE_VERSION), QString::fromStdString(store::build_version()).toHtmlEscaped(),
                 QString::fromLatin1(qVersion()), QStringLiteral(QT_VERSION_STR), devices, build.join("<br>"));
    auto* box = new QMessageBox(QMessageBox::Information, tr("About AlignScope"), text, QMessageBox::Ok, this);
    box->setObjectName("aboutBox");
    box->setTextFormat(Qt::RichText);
    box->setIconPixmap(QIcon(":/icons/alignscope.svg").pixmap(64, 64));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

}  // namespace alignscope::ui
