// stale_reasons: a job's recorded settings against the Job panel's.
#include "jobs/job_staleness.hpp"

#include <QFileInfo>
#include <QObject>

#include <algorithm>
#include <set>

namespace alignscope::ui {

namespace {

std::string parameter(const store::JobSpec& spec, const char* key) {
    const auto it = spec.parameters.find(key);
    return it == spec.parameters.end() ? std::string() : it->second;
}

bool on(const std::string& value) { return value == "on" || value == "true" || value == "yes"; }

QString kind_of(const store::JobSpec& spec) {
    if (spec.parameters.count("search")) return QObject::tr("a database search");
    if (on(parameter(spec, "long"))) return QObject::tr("a long pair (%1)").arg(QString::fromStdString(spec.mode));
    return QObject::tr("%1 alignments").arg(QString::fromStdString(spec.mode));
}

}  // namespace

QStringList stale_reasons(const store::JobInfo& job, const PanelSnapshot& now,
                          const std::vector<store::InputInfo>& inputs) {
    QStringList reasons;
    const store::JobSpec& was = job.spec;
    if (was.command != "gui" && was.command != "align" && was.command != "search") return reasons;
    const QString kind_was = kind_of(was), kind_now = kind_of(now.spec);
    if (kind_was != kind_now) reasons << QObject::tr("algorithm: %1 → %2").arg(kind_was, kind_now);
    if (was.mode == "semiglobal" && now.spec.mode == "semiglobal" && was.free_ends != now.spec.free_ends)
        reasons << QObject::tr("free end gaps: %1 → %2")
                       .arg(QString::fromStdString(was.free_ends), QString::fromStdString(now.spec.free_ends));
    // Scoring in its parts: the matrix, then the gap costs.
    auto number = [](double v) { return QString::number(v, 'g', 6); };
    const bool matrix_differs = was.matrix_name != now.spec.matrix_name;
    const bool gaps_differ = was.gap_open != now.spec.gap_open || was.gap_extend != now.spec.gap_extend;
    if (matrix_differs)
        reasons << QObject::tr("matrix: %1 → %2")
                       .arg(QString::fromStdString(was.matrix_name), QString::fromStdString(now.spec.matrix_name));
    if (gaps_differ)
        reasons << QObject::tr("gap open/extend: %1/%2 → %3/%4")
                       .arg(number(was.gap_open), number(was.gap_extend), number(now.spec.gap_open),
                            number(now.spec.gap_extend));
    if (!matrix_differs && !gaps_differ && was.scoring != now.spec.scoring)
        reasons << QObject::tr("scoring: %1 → %2")
                       .arg(QString::fromStdString(was.scoring), QString::fromStdString(now.spec.scoring));
    if (was.devices != now.spec.devices)
        reasons << QObject::tr("device: %1 → %2")
                       .arg(QString::fromStdString(was.devices), QString::fromStdString(now.spec.devices));
    const std::string tb_was = parameter(was, "traceback"), tb_now = parameter(now.spec, "traceback");
    if (!tb_was.empty() && !tb_now.empty() && on(tb_was) != on(tb_now))
        reasons << QObject::tr("traceback: %1 → %2")
                       .arg(on(tb_was) ? QObject::tr("on") : QObject::tr("off"),
                            on(tb_now) ? QObject::tr("on") : QObject::tr("off"));
    const std::string top_was = parameter(was, "top"), top_now = parameter(now.spec, "top");
    if (!top_was.empty() && !top_now.empty() && top_was != top_now)
        reasons << QObject::tr("hits per query: %1 → %2")
                       .arg(QString::fromStdString(top_was), QString::fromStdString(top_now));

    // The sequences: the same files, and the same records of them.
    std::set<std::int64_t> queries, targets;
    for (const store::JobInput& in : job.inputs) (in.role == "query" ? queries : targets).insert(in.input_id);
    if (!job.inputs.empty()) {
        if (queries != std::set<std::int64_t>(now.queries.begin(), now.queries.end()))
            reasons << QObject::tr("queries: %1 → %2")
                           .arg(QString::fromStdString(parameter(was, "queries")),
                                QString::fromStdString(parameter(now.spec, "queries")));
        else if (parameter(was, "query_ids") != parameter(now.spec, "query_ids") &&
                 !parameter(now.spec, "query_ids").empty())
            reasons << QObject::tr("the query records chosen differ");
        if (targets != std::set<std::int64_t>(now.targets.begin(), now.targets.end()))
            reasons << QObject::tr("targets: %1 → %2")
                           .arg(QString::fromStdString(parameter(was, "targets")),
                                QString::fromStdString(parameter(now.spec, "targets")));
        else if (parameter(was, "target_ids") != parameter(now.spec, "target_ids") &&
                 !parameter(now.spec, "target_ids").empty())
            reasons << QObject::tr("the target records chosen differ");
    }
    for (const store::JobInput& in : job.inputs) {
        const auto it =
            std::find_if(inputs.begin(), inputs.end(), [&](const store::InputInfo& i) { return i.id == in.input_id; });
        if (it == inputs.end()) continue;
        const QString name = QFileInfo(QString::fromStdString(it->path)).fileName();
        if (it->status == store::InputStatus::Changed)
            reasons << QObject::tr("%1 changed on disk since the job ran").arg(name);
        if (it->status == store::InputStatus::Missing) reasons << QObject::tr("%1 is no longer on disk").arg(name);
    }
    return reasons;
}

}  // namespace alignscope::ui
