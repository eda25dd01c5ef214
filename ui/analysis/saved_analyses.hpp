// The "Saved" choice of the analysis views (profile search, all against all):
// the project's analyses of one kind, listed as "ID: title" with the id as
// the item's data.
#pragma once

#include <QComboBox>
#include <QString>

#include <string>

namespace alignscope::store {
class Project;
}

namespace alignscope::ui {

// Empties `box`, then lists the analyses of `kind` in `project` (none when
// there is no project). Returns the error reading them, or an empty string.
QString list_saved_analyses(QComboBox& box, const store::Project* project, const std::string& kind);

}  // namespace alignscope::ui
