// ResultView: the common base of the window's views.
#include "views/result_view.hpp"

namespace alignscope::ui {

ResultView::ResultView(ProjectDocument& document, QWidget* parent) : QWidget(parent), document_(document) {}

qint64 ResultView::defaultJob(const std::vector<store::JobInfo>& jobs) const {
    for (auto it = jobs.rbegin(); it != jobs.rend(); ++it)
        if (canShow(*it)) return it->id;
    return 0;
}

}  // namespace alignscope::ui
