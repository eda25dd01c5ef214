// One pairwise alignment with everything the views need to show it: the two
// sequences, the scoring scheme and the options it was made with. Read from a
// job in the project, or put together from plain data.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/sequence.hpp>

#include <cstdint>

namespace alignscope::store {
class Project;
}

namespace alignscope::ui {

struct AlignedPair {
    Alignment alignment;
    Sequence query, target;  // residues normalised (upper case, no gaps)
    ScoringScheme scheme;
    AlignOptions options;
};

// Row `row` (0-based, insertion order) of the job's alignments, its sequences
// from the job's inputs (found by id), and the scheme and mode of the job's
// spec. Throws alignscope::Error naming what is missing.
AlignedPair aligned_pair_from_project(const store::Project& project, std::int64_t job_id, std::int64_t row = 0);

}  // namespace alignscope::ui
