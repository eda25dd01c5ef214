// Single-linkage and greedy centroid clusters (see clustering.hpp).
#include <alignscope/allvsall/clustering.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <numeric>

namespace alignscope::allvsall {

std::vector<std::uint32_t> single_linkage(std::size_t records, const std::vector<SimilarityEdge>& edges,
                                          double threshold) {
    std::vector<std::uint32_t> parent(records);
    std::iota(parent.begin(), parent.end(), 0u);
    auto find = [&](std::uint32_t x) {
        while (parent[x] != x) {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    };
    for (const SimilarityEdge& e : edges) {
        if (!(e.similarity >= threshold)) continue;
        if (e.a >= records || e.b >= records) throw Error("clustering: an edge names a record out of range");
        const std::uint32_t ra = find(e.a), rb = find(e.b);
        if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
    }
    std::vector<std::uint32_t> number(records, 0), cluster(records);
    std::uint32_t next = 0;
    for (std::uint32_t r = 0; r < records; ++r) {
        const std::uint32_t root = find(r);
        if (number[root] == 0) number[root] = ++next;
        cluster[r] = number[root];
    }
    return cluster;
}

CentroidClusters greedy_centroid(const std::vector<std::size_t>& lengths, const std::vector<SimilarityEdge>& edges,
                                 double threshold) {
    const std::size_t n = lengths.size();
    std::vector<std::vector<std::pair<std::uint32_t, double>>> near(n);
    for (const SimilarityEdge& e : edges) {
        if (!(e.similarity >= threshold)) continue;
        if (e.a >= n || e.b >= n) throw Error("clustering: an edge names a record out of range");
        near[e.a].emplace_back(e.b, e.similarity);
        near[e.b].emplace_back(e.a, e.similarity);
    }
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return lengths[a] > lengths[b]; });
    CentroidClusters out;
    out.cluster.assign(n, 0);
    std::vector<std::uint32_t> centroid_cluster(n, 0);  // cluster number of a record that is a centroid
    for (std::uint32_t r : order) {
        std::uint32_t best_cluster = 0;
        double best = 0;
        for (const auto& [other, similarity] : near[r]) {
            const std::uint32_t c = centroid_cluster[other];
            if (c == 0) continue;
            if (best_cluster == 0 || similarity > best || (similarity == best && c < best_cluster)) {
                best_cluster = c;
                best = similarity;
            }
        }
        if (best_cluster == 0) {
            out.centroids.push_back(r);
            best_cluster = static_cast<std::uint32_t>(out.centroids.size());
            centroid_cluster[r] = best_cluster;
        }
        out.cluster[r] = best_cluster;
    }
    return out;
}

}  // namespace alignscope::allvsall
