// The catalog of views: the window's own (jobs, sequences) and the result views
// over the views library (alignment, DP heatmap, timeline, GCUPS, hits).
#include "views/view_catalog.hpp"

#include "analysis/allvsall_view.hpp"
#include "analysis/profile_search_view.hpp"
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
ViewSpec entry(const char* id, const char* title, const char* description) {
    return {id, QCoreApplication::translate("Views", title), QCoreApplication::translate("Views", description),
            [](ProjectDocument& d, QWidget* p) -> ResultView* { return new View(d, p); }};
}

}  // namespace

const std::vector<ViewSpec>& view_catalog() {
    static const std::vector<ViewSpec> catalog{
        entry<JobsView>("jobs", QT_TRANSLATE_NOOP("Views", "Jobs"), QT_TRANSLATE_NOOP("Views", "the jobs list")),
        entry<SequencesView>("sequences", QT_TRANSLATE_NOOP("Views", "Sequences"),
                             QT_TRANSLATE_NOOP("Views", "the loaded sequences")),
        entry<JobAlignmentsView>("alignment", QT_TRANSLATE_NOOP("Views", "Alignment"),
                                 QT_TRANSLATE_NOOP("Views", "a job's alignments over the alignment viewer")),
        entry<JobHeatmapView>("heatmap", QT_TRANSLATE_NOOP("Views", "DP heatmap"),
                              QT_TRANSLATE_NOOP("Views", "the DP matrix of a job's alignment, with the stepper")),
        entry<JobTimelineView>("timeline", QT_TRANSLATE_NOOP("Views", "Timeline"),
                               QT_TRANSLATE_NOOP("Views", "a job's kernel timeline")),
        entry<BenchmarkView>("gcups", QT_TRANSLATE_NOOP("Views", "GCUPS"),
                             QT_TRANSLATE_NOOP("Views", "GCUPS curves of a bench job, or of the whole project")),
        entry<JobHitsView>("hits", QT_TRANSLATE_NOOP("Views", "Hits"),
                           QT_TRANSLATE_NOOP("Views",
                                             "a database search's ranked hits and the selected one's "
                                             "alignment")),
        entry<ProfileSearchView>("profiles", QT_TRANSLATE_NOOP("Views", "Profile search"),
                                 QT_TRANSLATE_NOOP("Views",
                                                   "a HMMER3 profile searched against sequences: hits, "
                                                   "domains and their alignments to the model")),
        entry<AllVsAllView>("allvsall", QT_TRANSLATE_NOOP("Views", "All against all"),
                            QT_TRANSLATE_NOOP("Views",
                                              "every pair of a set: the score matrix by cluster, the score "
                                              "histogram and a pair's alignment")),
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

QString view_help() {
    QStringList parts;
    for (const auto& spec : view_catalog()) parts << spec.id + " (" + spec.description + ")";
    return parts.join(", ");
}

}  // namespace alignscope::ui
