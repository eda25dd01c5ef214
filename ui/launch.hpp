// Starting the workbench from the command line:
//   alignscope [PROJECT.alsproj] [SEQUENCE FILES...]
//   alignscope --demo
//   alignscope --project P.alsproj --screenshot OUT.png|.svg|.pdf [--view ID] [--job ID] [--size WxH]
// The screenshot form renders the window (or one view) off-screen and exits;
// it is how the documentation's pictures and the GUI tests are made.
#pragma once

#include <alignscope/device/backend.hpp>
#include <alignscope/search/scan.hpp>

#include <QApplication>
#include <QSize>
#include <QString>
#include <QStringList>

namespace alignscope::ui {

struct LaunchOptions {
    QString project;
    bool demo = false;
    QString screenshot;  // output file: .png, .svg or .pdf
    QString view;        // empty: the whole window
    qint64 job = 0;      // 0: the most recent job with something to show
    QSize size{1280, 800};
    QStringList files;  // sequence files to load into the project
};

// Before QApplication exists: a screenshot needs no display, so it renders
// off-screen unless the caller chose a platform (QT_QPA_PLATFORM).
void prepare_platform(int argc, char** argv);
// Organisation and application names (settings and data folders), version, icon.
void set_application_identity();

// Throws Error naming the option.
LaunchOptions parse_launch_options(const QStringList& arguments);

// Renders and writes the picture in the format the file's extension names. Throws Error (unknown view, missing project
// or job, unwritable file).
void take_screenshot(DeviceRegistry& registry, const LaunchOptions& options);

// Parses app.arguments() and runs the window (pairwise jobs on `registry`,
// database searches on `scanners`) or the screenshot; the exit status.
int run(QApplication& app, DeviceRegistry& registry, ScannerRegistry& scanners);

}  // namespace alignscope::ui
