// The analysis views' list of saved analyses (see saved_analyses.hpp).
#include "analysis/saved_analyses.hpp"

#include <alignscope/store/project.hpp>

#include <exception>

namespace alignscope::ui {

QString list_saved_analyses(QComboBox& box, const store::Project* project, const std::string& kind) {
    box.clear();
    if (!project) return {};
    try {
        for (const auto& a : project->analyses())
            if (a.kind == kind)
                box.addItem(QStringLiteral("%1: %2").arg(a.id).arg(QString::fromStdString(a.title)), qint64(a.id));
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

}  // namespace alignscope::ui
