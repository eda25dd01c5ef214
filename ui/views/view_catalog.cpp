// The catalog of views: the window's own (jobs, sequences) and the result views
// over the views library (alignment, DP heatmap, timeline, GCUPS, hits).
#include "views/view_catalog.hpp"

#include "views/benchmark_view.hpp"
#include "views/job_alignments_view.hpp"
#include "views/job_heatmap_view.hpp"
#include "views/job_hits_view.hpp"
#include "views/job_timeline_view.hpp"
#include "views/jobs_view.hpp"
#include "views/sequences_view.hpp"

#include <QCoreApplication>

namespace alignscope::ui {

namespace {

template <class View>
ViewSpec entry(const char* id, const char* title) {
    return {id, QCoreApplication::translate("Views", title),
            [](ProjectDocument& d, QWidget* p) -> ResultView* { return new View(d, p); }};
}

}  // namespace

const std::vector<ViewSpec>& view_catalog() {
    static const std::vector<ViewSpec> catalog{
        entry<JobsView>("jobs", QT_TRANSLATE_NOOP("Views", "Jobs")),
        entry<SequencesView>("sequences", QT_TRANSLATE_NOOP("Views", "Sequences")),
        entry<JobAlignmentsView>("alignment", QT_TRANSLATE_NOOP("Views", "Alignment")),
        entry<JobHeatmapView>("heatmap", QT_TRANSLATE_NOOP("Views", "DP heatmap")),
        entry<JobTimelineView>("timeline", QT_TRANSLATE_NOOP("Views", "Timeline")),
        entry<BenchmarkView>("gcups", QT_TRANSLATE_NOOP("Views", "GCUPS")),
        entry<JobHitsView>("hits", QT_TRANSLATE_NOOP("Views", "Hits")),
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
