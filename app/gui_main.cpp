// alignscope: the desktop workbench. Wiring only: the device and scanner
// registries (with the CUDA backends when this build has them), the command
// line, then the window or an off-screen screenshot (ui/launch.hpp).
#include <analysis/analysis_job.hpp>
#include <demo_project.hpp>
#include <launch.hpp>
#include <mainwindow.hpp>

#include <alignscope/build_identity.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/scan.hpp>
#include <alignscope/store/job_spec.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/cuda_backend.hpp>
#include <alignscope/kernels/profile_scanners.hpp>
#include <alignscope/kernels/search_scanners.hpp>
#endif

#include <QApplication>
#include <QEventLoop>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

bool has_argument(int argc, char** argv, const char* name) {
    const std::size_t n = std::strlen(name);
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], name) == 0 || (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')) return true;
    return false;
}

// `--demo --screenshot FILE`: builds a fresh demo project (its global CPU job
// runs through the window's job queue), then renders it as --project would.
// This is how the installed package is checked without a display.
int demo_screenshot(QApplication& app, alignscope::DeviceRegistry& registry, alignscope::ScannerRegistry& scanners) {
    using namespace alignscope;
    try {
        QString project;
        {
            ui::MainWindow window(registry, scanners);
            window.setConfirmCloseWhileRunning(false);
            window.show();
            QString failure;
            int state = -1;
            QEventLoop loop;
            QObject::connect(&window, &ui::MainWindow::jobNotification, &loop, [&](qint64, int s, const QString& text) {
                state = s;
                if (s != int(store::JobState::Done)) failure = "the demo job did not finish: " + text;
                loop.quit();
            });
            QObject::connect(&window.document(), &ui::ProjectDocument::openFailed, &loop,
                             [&](const QString&, const QString& message) {
                                 failure = message;
                                 loop.quit();
                             });
            QTimer::singleShot(120'000, &loop, [&] {
                failure = "the demo job took more than 2 minutes";
                loop.quit();
            });
            project = ui::open_demo_project(window);
            loop.exec();
            if (!failure.isEmpty()) throw Error("--demo: " + failure.toStdString());
            if (state < 0) throw Error("--demo: the demo project was not built");
        }
        QStringList arguments = app.arguments();
        arguments.removeAll("--demo");
        arguments.insert(1, "--project");
        arguments.insert(2, project);
        ui::take_screenshot(registry, ui::parse_launch_options(arguments));
        std::printf("alignscope: demo project %s\n", project.toLocal8Bit().constData());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alignscope: error: %s\n", e.what());
        return 2;
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace alignscope;
    // Before any window system is touched: --version works without a display.
    if (has_argument(argc, argv, "--version") || has_argument(argc, argv, "-v")) {
        std::fputs(version_text("alignscope", false).c_str(), stdout);
        return 0;
    }
    ui::prepare_platform(argc, argv);
    QApplication app(argc, argv);
    ui::set_application_identity();
    // The installed desktop entry's name (org.alignscope.AlignScope.desktop):
    // Wayland compositors match the window to it.
    QGuiApplication::setDesktopFileName("org.alignscope.AlignScope");

    std::unique_ptr<DeviceRegistry> registry;
    std::unique_ptr<ScannerRegistry> scanners;
    try {
        registry = make_cpu_registry();
        scanners = make_cpu_scanner_registry();
#ifdef ALIGNSCOPE_WITH_CUDA
        kernels::register_cuda_backends(*registry);
        kernels::register_cuda_scanners(*scanners);
        kernels::register_cuda_profile_scanners(ui::profile_scanners());
#else
        DeviceInfo gpu;
        gpu.id = "gpu";
        gpu.kind = "gpu";
        gpu.name = "CUDA GPUs";
        gpu.available = false;
        gpu.unavailable_reason = "this build has no CUDA backend (nvcc was not found, or ALIGNSCOPE_CUDA=OFF)";
        registry->add_unavailable(gpu);
        scanners->add_unavailable(gpu);
#endif
        // Profile searches and all-against-all jobs run on the same devices.
        ui::use_analysis_devices(*registry);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alignscope: error: %s\n", e.what());
        return 2;
    }
    if (has_argument(argc, argv, "--demo") && has_argument(argc, argv, "--screenshot"))
        return demo_screenshot(app, *registry, *scanners);
    return ui::run(app, *registry, *scanners);
}
