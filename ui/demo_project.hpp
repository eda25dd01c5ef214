// The demo project: the globin sequences bundled in the resources, loaded into
// a fresh project of its own with one global CPU alignment job run through
// the ordinary job queue, so a first start (or --demo) has something to look
// at. Every opening makes a new copy: what the user does with it never
// changes the next demo.
#pragma once

#include <QString>

namespace alignscope::ui {

class MainWindow;

// Where demo copies are made (<user data folder>/demo).
QString demo_folder();
// Builds a fresh demo project (demo-<date>-<time>.alsproj in demo_folder()) in
// the window: the project, its two sequence sets, a finished job. Returns its
// path at once; the window's jobNotification tells when the demo job is done.
QString open_demo_project(MainWindow& window);

}  // namespace alignscope::ui
