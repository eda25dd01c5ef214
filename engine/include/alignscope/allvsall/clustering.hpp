// Clusters of one sequence set from its all-against-all similarities: single
// linkage (connected components of the pairs at or above a threshold) and
// greedy centroid clustering (longest sequence first, each joins its most
// similar centroid at or above the threshold, or becomes a centroid itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace alignscope::allvsall {

// A pair of records (0-based) and their similarity (normalised score or identity).
struct SimilarityEdge {
    std::uint32_t a = 0, b = 0;
    double similarity = 0;
};

// Cluster number of every record (1-based, numbered in the order of each
// cluster's first record in the file). Edges below `threshold` are ignored.
std::vector<std::uint32_t> single_linkage(std::size_t records, const std::vector<SimilarityEdge>& edges,
                                          double threshold);

struct CentroidClusters {
    std::vector<std::uint32_t> cluster;    // by record, 1-based, numbered in the order the centroids were chosen
    std::vector<std::uint32_t> centroids;  // record of each cluster's centroid (cluster c: centroids[c - 1])
};

// Records in order of decreasing length (ties: file order); each joins the
// centroid chosen so far that is most similar to it at or above `threshold`
// (ties: the earlier centroid), else becomes a new centroid. Pairs without an
// edge count as below the threshold.
CentroidClusters greedy_centroid(const std::vector<std::size_t>& lengths, const std::vector<SimilarityEdge>& edges,
                                 double threshold);

}  // namespace alignscope::allvsall
