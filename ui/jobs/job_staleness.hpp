// Whether a finished job still shows what the workbench would compute now: the
// differences between the job's recorded settings and the Job panel's (as the
// spec its request would record), and inputs changed on disk or removed since
// the job ran. The views mark themselves stale with these reasons.
#pragma once

#include <alignscope/store/project.hpp>

#include <QStringList>

#include <cstdint>
#include <map>
#include <vector>

namespace alignscope::ui {

struct PanelSnapshot {
    store::JobSpec spec;                // ProjectJobRecorder::spec_for(the panel's request)
    std::vector<std::int64_t> queries;  // input ids of the queries
    std::vector<std::int64_t> targets;  // of the targets (or the database)
};

// One line per difference, in the user's words ("scoring: BLOSUM62 … → PAM250
// …"); empty when the job is what the panel would run, or when the job is not
// one the panel makes (bench, verify, all-vs-all runs). `inputs` are the
// project's inputs as the window knows them (status, and presence).
QStringList stale_reasons(const store::JobInfo& job, const PanelSnapshot& now,
                          const std::vector<store::InputInfo>& inputs);

}  // namespace alignscope::ui
