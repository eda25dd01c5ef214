// How the multi-GPU backend (gpu_group.cpp) deals a job's pairs to its GPUs,
// as host-only plain data: each GPU's static share of the cells, in job
// order, by its measured throughput, then a tail of small chunks that any GPU
// takes when it is free. Header-only and CUDA-free, so the unit tests run it
// without a GPU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace alignscope::kernels {

// How a job's cells are shared: the first `static_fraction` of the work goes
// to the members in proportion to `throughput` (all alike when it sums to 0).
// Returns each member's fraction of the whole job.
inline std::vector<double> static_shares(const std::vector<double>& throughput, double static_fraction) {
    std::vector<double> shares(throughput.size(), 0.0);
    const double total = std::accumulate(throughput.begin(), throughput.end(), 0.0);
    for (std::size_t k = 0; k < throughput.size(); ++k)
        shares[k] = total > 0 ? static_fraction * throughput[k] / total
                              : static_fraction / static_cast<double>(throughput.size());
    return shares;
}

// Pairs [first, end) of the job.
struct GroupChunk {
    std::size_t first = 0, end = 0;
};

struct GroupCut {
    std::vector<GroupChunk> own;   // per member: its static share
    std::vector<GroupChunk> tail;  // in job order, for whichever member is free
};

// The static share of the job's cells (90 %) by throughput, each member's
// pairs running on in job order until its share of cells is reached, then
// the rest in chunks of about a quarter of the tail's cells per two members:
// each chunk is a job of its own on a member (encode, plan, setup: tens of ms
// of host work), so the tail is kept short, as small chunks cost more than
// imbalance saves. `cells`: per pair, in job order.
inline GroupCut cut_group_job(const std::vector<std::uint64_t>& cells, const std::vector<double>& throughput) {
    GroupCut cut;
    const std::size_t count = cells.size();
    const std::size_t devices = throughput.size();
    const std::uint64_t total = std::accumulate(cells.begin(), cells.end(), std::uint64_t{0});
    const auto shares = static_shares(throughput, 0.9);
    cut.own.resize(devices);
    std::size_t position = 0;
    for (std::size_t d = 0; d < devices; ++d) {
        const auto target = static_cast<std::uint64_t>(shares[d] * static_cast<double>(total));
        std::uint64_t taken = 0;
        cut.own[d].first = position;
        while (position < count && taken < target) taken += cells[position++];
        cut.own[d].end = position;
    }
    std::uint64_t tail_cells = 0;
    for (std::size_t k = position; k < count; ++k) tail_cells += cells[k];
    const std::uint64_t tail_chunk = std::max<std::uint64_t>(1, tail_cells / (2 * std::max<std::size_t>(devices, 1)));
    while (position < count) {
        GroupChunk chunk{position, position};
        std::uint64_t taken = 0;
        while (chunk.end < count && taken < tail_chunk) taken += cells[chunk.end++];
        position = chunk.end;
        cut.tail.push_back(chunk);
    }
    return cut;
}

}  // namespace alignscope::kernels
