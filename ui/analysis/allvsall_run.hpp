// An all-against-all job as the workbench runs it: every pair of one loaded
// set scored through the engine's tiles (allvsall::run_tiles on a backend of
// the device registry), the pairs at or above a normalised score traced back
// (lazy traceback), single-linkage clusters at that threshold and the order
// the matrix view draws (cluster by cluster); the distance matrix as PHYLIP or
// CSV, and the whole result as a JSON document for the project.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/allvsall/tile_result.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/sequence.hpp>

#include <QByteArray>
#include <QString>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace alignscope::ui {

struct AllVsAllRequest {
    std::shared_ptr<const std::vector<Sequence>> records;
    std::string label;                // "globins45.fa"
    std::string matrix = "BLOSUM62";  // substitution matrix name or file
    double gap_open = 10, gap_extend = 1;
    AlignmentMode mode = AlignmentMode::Global;
    double threshold = 0.5;  // normalised score: pairs at or above are traced and linked
    std::string device = "cpu";
    int threads = 0;
};

// A traced pair's summary (1-based inclusive coordinates).
struct TracedSummary {
    std::int64_t query_begin = 0, query_end = 0, target_begin = 0, target_end = 0;
    AlignmentStats stats;
    std::string cigar;
};

struct AllVsAllResults {
    std::string label, device, matrix, mode;
    double gap_open = 0, gap_extend = 0, threshold = 0, seconds = 0;
    std::vector<std::string> ids;
    std::vector<std::size_t> lengths;
    std::vector<double> scores;          // n x n, user units, symmetric; the diagonal holds the self-scores
    std::vector<std::uint32_t> cluster;  // by record, 1-based (single linkage at the threshold)
    std::vector<std::uint32_t> order;    // records as drawn: by cluster, then file order
    std::map<std::pair<std::uint32_t, std::uint32_t>, TracedSummary> traced;  // (i < j)

    std::size_t size() const { return ids.size(); }
    double score(std::size_t i, std::size_t j) const { return scores[i * size() + j]; }
    // score / min(self-score of each); 0 when that minimum is not positive.
    double normalised(std::size_t i, std::size_t j) const;
    // 1 - normalised score, at least 0 (0 on the diagonal), as allvsall --distance score.
    double distance(std::size_t i, std::size_t j) const;
    // Where cluster boundaries fall in `order` (positions where a new cluster starts, 0 excluded).
    std::vector<std::size_t> boundaries() const;
};

ScoringScheme allvsall_scheme(const AllVsAllRequest& request);  // throws Error naming matrix or gaps

// Runs the job (worker thread). Progress counts pairs and cells. Throws Error or Cancelled.
AllVsAllResults run_allvsall(const AllVsAllRequest& request, JobContext& context);

// One pair aligned with traceback on the request's device (worker thread).
Alignment align_pair(const AllVsAllRequest& request, std::uint32_t i, std::uint32_t j, JobContext& context);

// The distance matrix (file order) as PHYLIP (square: the count, then each id
// and its distances) or CSV (a header of ids, then one row per record), with
// six decimals, like `alignscope-cli allvsall --matrix-out`. Throws Error
// naming the file when it cannot be written.
void write_distance_matrix(const AllVsAllResults& results, const QString& path);

QByteArray to_json(const AllVsAllResults& results);
QByteArray parameters_json(const AllVsAllResults& results);
AllVsAllResults allvsall_results_from_json(const QByteArray& json);  // throws Error

}  // namespace alignscope::ui
