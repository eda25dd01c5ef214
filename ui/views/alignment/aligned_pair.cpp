// Reading an alignment and its sequences back from a project.
#include "views/alignment/aligned_pair.hpp"

#include <alignscope/error.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/store/project.hpp>

#include <optional>

namespace alignscope::ui {

AlignedPair aligned_pair_from_project(const store::Project& project, std::int64_t job_id, std::int64_t row) {
    const store::JobInfo job = project.job(job_id);
    const auto page = project.alignments(job_id, row, 1);
    if (page.rows.empty())
        throw Error("job " + std::to_string(job_id) + " has no alignment number " + std::to_string(row + 1) +
                    " (it holds " + std::to_string(job.counts.alignments) + ")");
    AlignedPair pair;
    pair.alignment = page.rows.front();
    pair.scheme = job.spec.scheme();
    pair.options.mode = parse_mode(job.spec.mode.empty() ? std::string(to_string(pair.alignment.mode)) : job.spec.mode);
    if (pair.options.mode == AlignmentMode::SemiGlobal && !job.spec.free_ends.empty())
        pair.options.free_ends = FreeEndGaps::parse(job.spec.free_ends);

    // Query-side inputs first for the query, target-side first for the target.
    auto find = [&](const std::string& id, std::initializer_list<const char*> roles) -> std::optional<Sequence> {
        std::vector<store::JobInput> inputs;
        for (const char* role : roles)
            for (const auto& in : job.inputs)
                if (in.role == role) inputs.push_back(in);
        for (const auto& in : job.inputs) inputs.push_back(in);
        for (const auto& in : inputs) {
            const store::InputInfo info = project.input(in.input_id);
            if (info.kind != store::InputKind::SequenceSet) continue;
            for (Sequence& s : project.input_sequences(in.input_id))
                if (s.id == id) {
                    normalise_residues(s.residues, parse_alphabet(info.alphabet));
                    return s;
                }
        }
        return std::nullopt;
    };
    auto query = find(pair.alignment.query_id, {"query"});
    if (!query)
        throw Error("job " + std::to_string(job_id) + ": the query sequence '" + pair.alignment.query_id +
                    "' is not among the job's inputs");
    auto target = find(pair.alignment.target_id, {"target", "database"});
    if (!target)
        throw Error("job " + std::to_string(job_id) + ": the target sequence '" + pair.alignment.target_id +
                    "' is not among the job's inputs");
    pair.query = std::move(*query);
    pair.target = std::move(*target);
    return pair;
}

}  // namespace alignscope::ui
