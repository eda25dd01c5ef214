// The demo project: the globin sequences bundled in the resources, loaded into
// <user data folder>/demo.alsproj with one global CPU alignment job run
// through the ordinary job queue, so a first start has something to look at.
#pragma once

#include <QString>

namespace alignscope::ui {

class MainWindow;

QString demo_project_path();
// Opens the demo project in the window, building whatever it lacks: the
// project, its two sequence sets, a finished job. Returns at once; the
// window's jobNotification tells when the demo job is done.
void open_demo_project(MainWindow& window);

}  // namespace alignscope::ui
