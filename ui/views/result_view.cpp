// ResultView: the common base of the window's views.
#include "views/result_view.hpp"

namespace alignscope::ui {

ResultView::ResultView(ProjectDocument& document, QWidget* parent) : QWidget(parent), document_(document) {}

}  // namespace alignscope::ui
