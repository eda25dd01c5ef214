// Splitting a job into batches that fit a device-memory budget. The job's
// pairs come in "units" (a warp's worth of pairs for the inter-sequence
// kernels, one pair for the intra-sequence ones), each with the device bytes
// it needs; a batch is a run of consecutive units whose bytes fit the budget.
// Plain C++: the tests check it without a GPU.
#pragma once

#include <alignscope/error.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace alignscope::kernels {

struct BatchRange {
    std::size_t first = 0;  // first unit
    std::size_t count = 0;  // units
    std::uint64_t bytes = 0;
    std::uint64_t cells = 0;
};

struct UnitCost {
    std::uint64_t bytes = 0;  // device memory the unit needs while it runs
    std::uint64_t cells = 0;  // DP cells it computes
};

// Greedy in unit order: each batch takes units while their bytes fit `budget`
// and their cells stay within `max_cells` (so a batch is short enough for
// prompt progress and cancellation; 0 = no limit). A unit larger than the
// budget on its own cannot run: `describe_unit(k)` names it in the Error
// (e.g. "pair 17 (query 52,000 x target 61,000 residues)").
inline std::vector<BatchRange> plan_batches(const std::vector<UnitCost>& units, std::uint64_t budget,
                                            std::uint64_t max_cells,
                                            const std::function<std::string(std::size_t)>& describe_unit) {
    std::vector<BatchRange> batches;
    BatchRange current;
    for (std::size_t k = 0; k < units.size(); ++k) {
        const UnitCost& unit = units[k];
        if (unit.bytes > budget)
            throw Error(describe_unit(k) + " needs " + std::to_string((unit.bytes + (1u << 20) - 1) >> 20) +
                        " MiB of GPU memory, more than the budget of " + std::to_string(budget >> 20) +
                        " MiB per batch; it is too long for this device (align it on the CPU, or raise --gpu-mem)");
        const bool full = current.bytes + unit.bytes > budget || (max_cells && current.cells + unit.cells > max_cells);
        if (current.count && full) {
            batches.push_back(current);
            current = BatchRange{};
        }
        if (!current.count) current.first = k;
        ++current.count;
        current.bytes += unit.bytes;
        current.cells += unit.cells;
    }
    if (current.count) batches.push_back(current);
    return batches;
}

// The sizes in cells of the consecutive parts a job of `total` cells is
// planned and run in, so that the device starts on a small first part while
// the host plans the next, and the host's work on the results of the last
// part (after the last kernel) is short: from `first` doubling up to `most`,
// the same mirrored at the end, what is left between them cut into equal
// parts of at most `most`. One part, the whole job, where `first` is 0 or the
// job is no larger than `most`.
inline std::vector<std::uint64_t> ramp_parts(std::uint64_t total, std::uint64_t first, std::uint64_t most) {
    if (first == 0 || most == 0 || total <= most) return {total};
    std::vector<std::uint64_t> front, back;
    std::uint64_t left = total, size = std::min(first, most);
    while (size < most && left > 2 * size) {
        front.push_back(size);
        back.push_back(size);
        left -= 2 * size;
        size = std::min(size * 2, most);
    }
    const std::uint64_t pieces = (left + most - 1) / most;
    for (std::uint64_t k = 0; k < pieces; ++k) front.push_back(left / pieces + (k < left % pieces ? 1 : 0));
    front.insert(front.end(), back.rbegin(), back.rend());
    return front;
}

// The budget for one batch when the job says nothing: what is free on the
// device, less a reserve for the runtime, shared by the streams in flight.
inline std::uint64_t default_batch_budget(std::uint64_t free_bytes, std::uint64_t total_bytes, int streams) {
    const std::uint64_t reserve = std::max<std::uint64_t>(total_bytes / 16, std::uint64_t{256} << 20);
    const std::uint64_t usable = free_bytes > reserve ? free_bytes - reserve : free_bytes / 2;
    return usable / static_cast<std::uint64_t>(streams > 0 ? streams : 1);
}

// The budget per batch when the user sets --gpu-mem for the whole job.
inline std::uint64_t budget_per_batch(std::uint64_t job_budget, int streams) {
    return job_budget / static_cast<std::uint64_t>(streams > 0 ? streams : 1);
}

}  // namespace alignscope::kernels
