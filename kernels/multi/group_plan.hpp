// How the multi-GPU backend (gpu_group.cpp) deals a job's pairs to its GPUs,
// as host-only plain data: a small job whole to one GPU, a larger one as each
// GPU's static share of the cells, in job order, by its throughput, and a
// large one with a tail of chunks that any GPU takes when it is free.
// Header-only and CUDA-free, so the unit tests run it without a GPU.
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

// How a job is cut: the fraction of its cells dealt out up front, and the
// fewest cells a tail chunk takes (each tail chunk is a job of its own on a
// member: encode, plan, setup, a last batch whose results the host unpacks
// while that GPU waits).
struct GroupCutRules {
    double static_fraction = 0.9;
    std::uint64_t least_tail_chunk = 1;
};

// The static share of the job's cells by throughput, each member's pairs
// running on in job order until its share of cells is reached, then the
// rest in chunks of about a quarter of the tail's cells per two members, none
// below the rules' least. `cells`: per pair, in job order.
inline GroupCut cut_group_job(const std::vector<std::uint64_t>& cells, const std::vector<double>& throughput,
                              const GroupCutRules& rules = {}) {
    GroupCut cut;
    const std::size_t count = cells.size();
    const std::size_t devices = throughput.size();
    const std::uint64_t total = std::accumulate(cells.begin(), cells.end(), std::uint64_t{0});
    const auto shares = static_shares(throughput, rules.static_fraction);
    cut.own.resize(devices);
    std::size_t position = 0;
    for (std::size_t d = 0; d < devices; ++d) {
        // The last member of a whole static cut takes whatever rounding left.
        const bool last_whole = d + 1 == devices && rules.static_fraction >= 1.0;
        const auto target = static_cast<std::uint64_t>(shares[d] * static_cast<double>(total));
        std::uint64_t taken = 0;
        cut.own[d].first = position;
        while (position < count && (last_whole || taken < target)) taken += cells[position++];
        cut.own[d].end = position;
    }
    std::uint64_t tail_cells = 0;
    for (std::size_t k = position; k < count; ++k) tail_cells += cells[k];
    const std::uint64_t tail_chunk = std::max<std::uint64_t>(std::max<std::uint64_t>(1, rules.least_tail_chunk),
                                                             tail_cells / (2 * std::max<std::size_t>(devices, 1)));
    while (position < count) {
        GroupChunk chunk{position, position};
        std::uint64_t taken = 0;
        while (chunk.end < count && taken < tail_chunk) taken += cells[chunk.end++];
        position = chunk.end;
        cut.tail.push_back(chunk);
    }
    return cut;
}

// A job is split among the members only when it has at least `split_cells`
// cells and its pairs average at least `split_cells_per_pair` cells; any
// other runs whole on one member (a free one). A split job builds every
// Alignment twice (in the member's vector, then in the group's) and runs
// each member's host work (packing, results) beside the other's on the same
// cores: measured on two H100s (32 cores), a million 300 x 300 pairs split
// took 0.24 s for ends and 0.70 s with traceback against 0.16 s and 0.45 s on
// one GPU, whose kernels need 0.035 s and 0.18 s of that. Only pairs long
// enough for their kernels to outweigh that host work gain from a second
// GPU (about 700 x 700 residues and up; not yet measured). The pair
// pipeline's chunks (65,536 pairs) are never split: two of them at once go to
// two GPUs. From `tail_cells` cells on, a tail of chunks of at least
// `least_tail_chunk` cells evens out members that run at different speeds;
// below it the whole job is dealt out up front.
struct GroupSplitRules {
    std::uint64_t split_cells = 20'000'000'000ull;       // about 8 ms of kernels on one H100
    std::uint64_t split_cells_per_pair = 500'000;        // about 700 x 700
    std::uint64_t tail_cells = 500'000'000'000ull;       // about 0.2 s
    std::uint64_t least_tail_chunk = 50'000'000'000ull;  // about 20 ms
};

// Whether a job of `pairs` pairs and `total` cells is split (see GroupSplitRules).
inline bool split_job(std::uint64_t total, std::size_t pairs, const GroupSplitRules& rules) {
    return pairs > 0 && total >= rules.split_cells && total / pairs >= rules.split_cells_per_pair;
}

// The rules' cut for a job of `total` cells (see GroupSplitRules).
inline GroupCutRules cut_rules_for(std::uint64_t total, const GroupSplitRules& rules) {
    GroupCutRules cut;
    if (total < rules.tail_cells) {
        cut.static_fraction = 1.0;
    } else {
        cut.static_fraction = 0.9;
        cut.least_tail_chunk = rules.least_tail_chunk;
    }
    return cut;
}

}  // namespace alignscope::kernels
