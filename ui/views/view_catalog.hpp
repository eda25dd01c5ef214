// The views this build offers, by the name `--view` takes: the window makes one
// tab per entry, in this order, and --screenshot renders one of them alone.
// A view that is not listed here does not exist in this build.
#pragma once

#include "views/result_view.hpp"

#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

namespace alignscope::ui {

struct ViewSpec {
    QString id;           // "jobs", "sequences", "alignment", ...
    QString title;        // the tab's title
    QString description;  // what it shows, for `alignscope --help`
    std::function<ResultView*(ProjectDocument& document, QWidget* parent)> create;
};

const std::vector<ViewSpec>& view_catalog();
const ViewSpec* find_view(const QString& id);
QStringList view_ids();
// "jobs (the jobs list), sequences (...), ...": the --view ids with what each shows.
QString view_help();

}  // namespace alignscope::ui
