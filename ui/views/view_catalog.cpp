// The catalog of views. Heatmap, timeline and GCUPS views are added here by
// the views issue, each from its own file in views/.
#include "views/view_catalog.hpp"

#include "views/alignment_text_view.hpp"
#include "views/jobs_view.hpp"
#include "views/sequences_view.hpp"

#include <QCoreApplication>

namespace alignscope::ui {

const std::vector<ViewSpec>& view_catalog() {
    static const std::vector<ViewSpec> catalog{
        {"jobs", QCoreApplication::translate("Views", "Jobs"),
         [](ProjectDocument& d, QWidget* p) -> ResultView* { return new JobsView(d, p); }},
        {"sequences", QCoreApplication::translate("Views", "Sequences"),
         [](ProjectDocument& d, QWidget* p) -> ResultView* { return new SequencesView(d, p); }},
        {"alignment", QCoreApplication::translate("Views", "Alignment"),
         [](ProjectDocument& d, QWidget* p) -> ResultView* { return new AlignmentTextView(d, p); }},
    };
    return catalog;
}

const ViewSpec* find_view(const QString& id) {
    for (const auto& spec : view_catalog())
        if (spec.id == id) return &spec;
    return nullptr;
}

QStringList view_ids() {
    QStringList ids;
    for (const auto& spec : view_catalog()) ids << spec.id;
    return ids;
}

}  // namespace alignscope::ui
