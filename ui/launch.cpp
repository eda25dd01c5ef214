// Command line of `alignscope`, the off-screen screenshot, and the normal start.
#include "launch.hpp"

#include "demo_project.hpp"
#include "image_export.hpp"
#include "mainwindow.hpp"
#include "views/jobs_view.hpp"
#include "views/result_view.hpp"
#include "views/view_catalog.hpp"

#include <alignscope/error.hpp>

#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QPixmap>
#include <QRegularExpression>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace alignscope::ui {

void prepare_platform(int argc, char** argv) {
    // --help and --version print and exit; they need no display either.
    bool headless = false;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        if (std::strcmp(a, "--screenshot") == 0 || std::strncmp(a, "--screenshot=", 13) == 0 ||
            std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0 || std::strcmp(a, "--version") == 0 ||
            std::strcmp(a, "-v") == 0)
            headless = true;
    }
    if (headless && std::getenv("QT_QPA_PLATFORM") == nullptr) setenv("QT_QPA_PLATFORM", "offscreen", 1);
}

void set_application_identity() {
    QApplication::setOrganizationName("AlignScope");
    QApplication::setApplicationName("alignscope");
    QApplication::setApplicationDisplayName("AlignScope");
    QApplication::setApplicationVersion(ALIGNSCOPE_VERSION);
    QApplication::setDesktopFileName("alignscope");
}

namespace {

void add_options(QCommandLineParser& parser) {
    parser.setApplicationDescription("AlignScope: GPU sequence-alignment workbench");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({
        {"project", "Open this project (.alsproj).", "FILE"},
        {"demo",
         "Open a fresh copy of the demo project (the globins and one finished job); what you change "
         "stays in that copy."},
        {"screenshot",
         "Render the window off-screen to this file and exit (needs --project); the extension picks the format: "
         ".png, or .svg and .pdf as vector drawings.",
         "FILE"},
        {"view", "With --screenshot: render only this view: " + view_help() + ".", "ID"},
        {"job",
         "With --screenshot: the job to show [default: the most recent one with data for the view; for gcups, "
         "the project's whole benchmark series].",
         "ID"},
        {"size", "With --screenshot: the image size [default: 1280x800].", "WxH"},
    });
    parser.addPositionalArgument("files", "A project (.alsproj) to open and sequence files to load into it.",
                                 "[PROJECT.alsproj] [FILES...]");
}

void settle(const std::vector<const ResultView*>& views = {}) {
    // Layout and paint events chain; a few rounds let every widget settle.
    for (int round = 0; round < 5; ++round) QApplication::processEvents(QEventLoop::AllEvents, 50);
    // Views computing on a worker thread (a large DP heatmap) get up to a minute.
    QElapsedTimer waited;
    waited.start();
    auto busy = [&views] {
        for (const ResultView* v : views)
            if (!v->settled()) return true;
        return false;
    };
    if (!busy()) return;
    while (busy() && waited.elapsed() < 60'000) QApplication::processEvents(QEventLoop::AllEvents, 50);
    for (int round = 0; round < 5; ++round) QApplication::processEvents(QEventLoop::AllEvents, 50);
}

}  // namespace

LaunchOptions parse_launch_options(const QStringList& arguments) {
    QCommandLineParser parser;
    add_options(parser);
    if (!parser.parse(arguments)) throw Error(parser.errorText().toStdString() + " (see alignscope --help)");
    if (parser.isSet("help")) {
        std::fputs(parser.helpText().toLocal8Bit().constData(), stdout);
        std::exit(0);
    }
    if (parser.isSet("version")) {
        std::printf("alignscope %s\n", ALIGNSCOPE_VERSION);
        std::exit(0);
    }
    LaunchOptions o;
    o.project = parser.value("project");
    o.demo = parser.isSet("demo");
    o.screenshot = parser.value("screenshot");
    o.view = parser.value("view");
    for (const QString& arg : parser.positionalArguments()) {
        if (arg.endsWith(".alsproj", Qt::CaseInsensitive) && o.project.isEmpty()) o.project = arg;
        else
            o.files << arg;
    }
    if (parser.isSet("job")) {
        bool ok = false;
        o.job = parser.value("job").toLongLong(&ok);
        if (!ok || o.job <= 0)
            throw Error("--job: expected a job number, got '" + parser.value("job").toStdString() + "'");
    }
    if (parser.isSet("size")) {
        const QRegularExpression pattern("^(\\d{2,5})x(\\d{2,5})$");
        const auto match = pattern.match(parser.value("size"));
        if (!match.hasMatch())
            throw Error("--size: expected WIDTHxHEIGHT such as 1280x800, got '" + parser.value("size").toStdString() +
                        "'");
        o.size = QSize(match.captured(1).toInt(), match.captured(2).toInt());
        if (o.size.width() > 8192 || o.size.height() > 8192) throw Error("--size: at most 8192x8192");
    }
    if (o.screenshot.isEmpty()) {
        for (const char* name : {"view", "job", "size"})
            if (parser.isSet(name)) throw Error(std::string("--") + name + " needs --screenshot");
    } else {
        if (o.project.isEmpty()) throw Error("--screenshot needs --project FILE.alsproj");
        if (o.demo) throw Error("--screenshot and --demo cannot be used together; use --project");
    }
    if (!o.view.isEmpty() && !find_view(o.view))
        throw Error("--view: view '" + o.view.toStdString() +
                    "' is not available in this build (available: " + view_ids().join(", ").toStdString() + ")");
    return o;
}

void take_screenshot(DeviceRegistry& registry, const LaunchOptions& options) {
    if (!QFileInfo::exists(options.project))
        throw Error("--project: " + options.project.toStdString() + ": no such file");
    try {
        image_format_for(options.screenshot);
    } catch (const std::exception& e) {
        throw Error(std::string("--screenshot: ") + e.what());
    }
    const ViewSpec* spec = options.view.isEmpty() ? nullptr : find_view(options.view);
    if (!options.view.isEmpty() && !spec)
        throw Error("--view: view '" + options.view.toStdString() + "' is not available in this build");

    MainWindow window(registry);
    window.setConfirmCloseWhileRunning(false);
    QString failure;
    QObject::connect(&window.document(), &ProjectDocument::openFailed, &window,
                     [&failure](const QString&, const QString& message) { failure = message; });
    // Sequence files that cannot be read do not stop the picture, but are said.
    QObject::connect(&window, &MainWindow::userMessage, &window, [](int, const QString& title, const QString& text) {
        std::fprintf(stderr, "alignscope: %s: %s\n", title.toLocal8Bit().constData(), text.toLocal8Bit().constData());
    });
    window.openProject(options.project);
    QEventLoop loop;
    QObject::connect(&window, &MainWindow::projectReady, &loop, &QEventLoop::quit);
    QObject::connect(&window.document(), &ProjectDocument::openFailed, &loop, &QEventLoop::quit);
    QTimer::singleShot(300'000, &loop, [&] {
        failure = "timed out after 5 minutes opening the project and reading its sequences";
        loop.quit();
    });
    loop.exec();
    if (!failure.isEmpty()) throw Error(failure.toStdString());

    const auto& jobs = window.document().jobs();
    if (options.job && !window.document().job(options.job))
        throw Error("--job: " + options.project.toStdString() + " has no job " + std::to_string(options.job));

    QPixmap picture;
    QWidget* drawn = nullptr;
    std::unique_ptr<ResultView> view_holder;
    if (spec) {
        view_holder.reset(spec->create(window.document(), nullptr));
        ResultView* view = view_holder.get();
        qint64 job = options.job;
        if (job && !view->canShow(*window.document().job(job)))
            throw Error("--job: job " + std::to_string(job) + " has nothing the " + options.view.toStdString() +
                        " view shows");
        if (!job) job = view->defaultJob(jobs);
        view->showJob(job);
        view->resize(options.size);
        view->show();
        settle({view});
        drawn = view;
    } else {
        qint64 job = options.job;
        for (auto it = jobs.rbegin(); !job && it != jobs.rend(); ++it)
            if (it->counts.alignments > 0) job = it->id;
        if (!job && !jobs.empty()) job = jobs.back().id;
        window.resize(options.size);
        window.show();
        settle();
        if (job) {
            window.jobsView().showJob(job);
            window.showJobResults(job);
        }
        std::vector<const ResultView*> views;
        for (const QString& id : view_ids()) views.push_back(window.view(id));
        settle(views);
        drawn = &window;
    }
    (void)picture;
    try {
        write_widget_image(drawn, options.screenshot, drawn->size());
    } catch (const std::exception& e) {
        throw Error(std::string("--screenshot: ") + e.what());
    }
}

int run(QApplication& app, DeviceRegistry& registry, ScannerRegistry& scanners) {
    LaunchOptions options;
    try {
        options = parse_launch_options(app.arguments());
        if (!options.screenshot.isEmpty()) {
            take_screenshot(registry, options);
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alignscope: error: %s\n", e.what());
        return 2;
    }

    MainWindow window(registry, scanners);
    window.setWindowIcon(QIcon(":/icons/alignscope.svg"));
    QApplication::setWindowIcon(window.windowIcon());
    window.show();
    if (!options.files.isEmpty()) {
        auto* once = new QObject(&window);
        QObject::connect(&window, &MainWindow::projectReady, once, [&window, once, files = options.files] {
            window.loadFiles(files);
            once->deleteLater();
        });
    }
    const QStringList recent = MainWindow::recentProjects();
    if (options.demo) {
        open_demo_project(window);
    } else if (!options.project.isEmpty()) {
        window.openProject(options.project, !QFileInfo::exists(options.project));
    } else if (!recent.isEmpty() && QFileInfo::exists(recent.first())) {
        window.openProject(recent.first());
    } else {
        open_demo_project(window);  // first start
    }
    return app.exec();
}

}  // namespace alignscope::ui
