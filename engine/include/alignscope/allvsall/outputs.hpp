// The files of an all-against-all job, written in one pass over its spool:
// the pair table (TSV), the distance matrix (PHYLIP square or CSV) and the
// clusters. Each is written to a temporary file and renamed (AtomicOutput).
#pragma once

#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/spool.hpp>

#include <map>
#include <string>

namespace alignscope {
class AtomicOutput;
}

namespace alignscope::allvsall {

// score: distance = 1 - normalised score (at least 0); identity: 1 - identity
// of the traced alignment (every pair must be traced).
enum class Distance { Score, Identity };
Distance parse_distance(const std::string& name);  // throws Error naming --distance

struct OutputFiles {
    std::string table;   // TSV of every pair; "-" = standard output; empty = none
    std::string matrix;  // *.phy / *.phylip (square; the triangle only) or *.csv; empty = none
    Distance distance = Distance::Score;
    std::string clusters;            // TSV of clusters (the triangle only); empty = none
    double cluster_threshold = 0.9;  // on the similarity: normalised score, or identity with Distance::Identity
    // Another output of the command (the timeline), written by the caller:
    // put in place with these, all of them or none (commit_together).
    AtomicOutput* with = nullptr;
};

// Checks the paths and combinations before any work (matrix extension,
// clusters of a rectangle). Throws Error naming the flag.
void check_outputs(const Problem& problem, const OutputFiles& files);

// Writes every requested file. `late` holds the pairs traced after all scores
// (--top), by (row, column) record.
void write_outputs(const Problem& problem, const ResultSpool& spool, const std::map<PairIndex, TracedPair>& late,
                   const OutputFiles& files);

}  // namespace alignscope::allvsall
