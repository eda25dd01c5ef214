// The host-side plan of one database scan call, decided before anything runs
// on the GPU: which queries share a profile (two per 16-bit lane pair, one
// with 32-bit cells), the tile shape of each profile, where its words sit in
// the packed profile buffer, and how the profiles are cut into launches;
// and the plan of the 32-bit rescoring of the pairs the 16-bit scan saturates.
#pragma once

#include "db_scan_bounds.hpp"
#include "db_scan_shape.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace alignscope::kernels::search {

namespace detail {

inline std::uint64_t round4(std::uint64_t v) { return (v + 3) & ~std::uint64_t{3}; }

}  // namespace detail

// Databases whose longest sequence is at most this long have short strips:
// multi-tile profiles may then use groups of any width (4 threads: 64 strips
// a block, about 140 MB of strips per stream on 132 SMs at this length, which
// must also fit the scan's working memory) and an extra tile costs less, its
// strip staying in cache. Longer ones keep multi-tile profiles to groups of
// 16 or 32, whose strips are fewer.
constexpr int kShortStripLength = 1024;
constexpr double kTargetLaunchCells = 3e11;              // ~100 ms at 3 TCUPS
constexpr std::uint64_t kMaxOutputBytes = 256ull << 20;  // scores of one launch

// One profile (a pair of queries in 16-bit lanes, or one query in 32-bit).
struct ProfilePlan {
    int a = -1, b = -1;  // query indices in the scan call (b = -1: none)
    int rows = 0;        // longest of the two (bounded modes: plus the DP's row 0)
    DbScanShape shape;
    int tiles = 0;
    std::uint64_t offset = 0;  // in words
};

// What the plan is made from: the queries' lengths and what the device and
// the database allow.
struct ScanPlanInputs {
    std::vector<std::size_t> query_lengths;  // in the scan call's order
    bool narrow = true;                      // 16-bit lane pairs (else 32-bit cells, one query a profile)
    bool bounded = false;                    // global or semi-global: the bounded row layout
    double mean_length = 0;                  // of the database sequences
    bool short_strips = false;               // see kShortStripLength
    int letters = 0;                         // profile letters (the matrix's and the pad letter)
    // The compiled shapes of the cell width, and the resident blocks per
    // multiprocessor of each (0: it cannot run).
    std::vector<DbScanShape> shapes;
    std::function<int(const DbScanShape&)> blocks_per_sm;
    std::string device;  // names the device in errors
};

struct ScanPlan {
    std::vector<ProfilePlan> profiles;  // same shapes next to each other, offsets set
    std::uint64_t words = 0;            // of the packed profile buffer
};

// Cost of one database column for a query pair of `rows` rows on `shape`,
// in issue slots: padded rows x (per-row work + per-step overhead / R), with
// the wavefront's ramp (G - 1 + rounding steps per sequence of mean length)
// and a charge for every extra tile (strip traffic, block barrier).
// Measured on an H200 (synthetic 1,000,000 x 256 against the 500
// mmseqs2-examples queries, total scan GCUPS): groups of 16 or 32 and 3% a
// tile 4,886; short strips (groups down to 4, 1% a tile) 5,237: a long query
// on 256-residue sequences then runs as more tiles of narrow groups, whose
// wavefront ramp (G - 1 steps a tile) is shorter.
inline double shape_cost(const DbScanShape& shape, int rows, double mean_length, bool short_strips) {
    const int tile = shape.tile_rows();
    const int tiles = (rows + tile - 1) / tile;
    const double padded = static_cast<double>(tiles) * tile;
    const double per_row = 5.5 + 24.0 / shape.rows;
    const double ramp = 1.0 + (shape.threads + 5.0) / std::max(8.0, mean_length);
    if (tiles > 1 && shape.threads < ScanPolicy::full_group && !short_strips) return 1e300;
    return padded * per_row * ramp * (1.0 + (short_strips ? 0.01 : 0.03) * (tiles - 1));
}

// Queries sorted by length (stable) and paired when narrow; each profile gets
// the runnable shape of least cost; then profiles of one shape are put next
// to each other (stable) and given their offsets. Throws Error when no shape
// can run with the letters.
inline ScanPlan plan_scan(const ScanPlanInputs& in) {
    const std::vector<std::size_t>& lengths = in.query_lengths;
    std::vector<int> order(lengths.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return lengths[x] < lengths[y]; });

    ScanPlan plan;
    const std::size_t step = in.narrow ? 2 : 1;
    for (std::size_t k = 0; k < order.size(); k += step) {
        ProfilePlan p;
        p.a = order[k];
        p.b = in.narrow && k + 1 < order.size() ? order[k + 1] : -1;
        p.rows = static_cast<int>(std::max(lengths[p.a], p.b >= 0 ? lengths[p.b] : 0));
        if (in.bounded) p.rows = bounded_rows(p.rows);
        double best = 0;
        bool first = true;
        for (const DbScanShape& shape : in.shapes) {
            if (in.blocks_per_sm(shape) == 0) continue;  // too much shared memory for this matrix
            const double cost = shape_cost(shape, p.rows, in.mean_length, in.short_strips);
            if (first || cost < best) {
                best = cost;
                p.shape = shape;
                first = false;
            }
        }
        if (first) throw Error(in.device + ": no scan kernel fits " + std::to_string(in.letters) + " matrix letters");
        p.tiles = (p.rows + p.shape.tile_rows() - 1) / p.shape.tile_rows();
        plan.profiles.push_back(p);
    }
    // Same shapes next to each other, so one launch covers a run of them.
    std::stable_sort(plan.profiles.begin(), plan.profiles.end(), [](const ProfilePlan& x, const ProfilePlan& y) {
        return std::tie(x.shape.threads, x.shape.rows) < std::tie(y.shape.threads, y.shape.rows);
    });
    for (ProfilePlan& p : plan.profiles) {
        p.offset = plan.words;
        plan.words += static_cast<std::uint64_t>(p.tiles) * in.letters * p.shape.tile_rows();
    }
    return plan;
}

// Whether the narrow groups' strips of every stream fit half the working
// memory a scan keeps (a third of the budget, at most 3 GiB) for a database
// whose longest sequence is `longest`: short strips need both.
inline bool short_strips_fit(int longest, int narrow_blocks_per_sm, int streams, int sm_count, std::uint64_t budget) {
    if (longest > kShortStripLength) return false;
    const std::uint64_t strips = static_cast<std::uint64_t>(streams) * static_cast<std::uint64_t>(sm_count) *
                                 static_cast<std::uint64_t>(narrow_blocks_per_sm) *
                                 (ScanPolicy::block_threads / ScanPolicy::narrowest_group);
    const std::uint64_t bytes = strips * (detail::round4(static_cast<std::uint64_t>(longest)) + 4) * 2 *
                                sizeof(std::uint32_t) /* a strip cell: H and E */;
    return bytes <= std::min<std::uint64_t>(budget / 3, 3ull << 30) / 2;
}

// One launch: profiles [first, last) of one shape.
struct LaunchRun {
    std::size_t first = 0, last = 0;
    bool multi_tile = false;  // some profile has more than one tile: strips needed
};

// The launches over a partition of `count` sequences and `residues` residues:
// runs of one shape, each at most kMaxOutputBytes of scores and closed once
// it holds kTargetLaunchCells (a run always takes at least one profile).
inline std::vector<LaunchRun> plan_launches(const std::vector<ProfilePlan>& profiles, std::size_t count,
                                            std::uint64_t residues) {
    std::vector<LaunchRun> runs;
    const std::size_t max_plans = std::max<std::size_t>(1, kMaxOutputBytes / (count * 4));
    std::size_t k = 0;
    while (k < profiles.size()) {
        const DbScanShape shape = profiles[k].shape;
        LaunchRun run;
        run.first = k;
        std::size_t end = k;
        double cells = 0;
        while (end < profiles.size() && profiles[end].shape.threads == shape.threads &&
               profiles[end].shape.rows == shape.rows && end - k < max_plans &&
               (end == k || cells < kTargetLaunchCells)) {
            cells += 2.0 * profiles[end].tiles * shape.tile_rows() * static_cast<double>(residues);
            run.multi_tile |= profiles[end].tiles > 1;
            ++end;
        }
        run.last = end;
        runs.push_back(run);
        k = end;
    }
    return runs;
}

// Work items and blocks of one launch of `profiles` profiles over `count`
// sequences: a work item is one profile against one block's worth of
// sequences (one per group); blocks fill every multiprocessor at most.
struct LaunchGeometry {
    int chunks = 0;  // work items per profile
    int blocks = 0;
};
inline LaunchGeometry launch_geometry(const DbScanShape& shape, std::size_t profiles, std::size_t count,
                                      int blocks_per_sm, int sm_count, const std::string& device) {
    LaunchGeometry g;
    const int groups = shape.groups_per_block();
    g.chunks = static_cast<int>((count + static_cast<std::size_t>(groups) - 1) / groups);
    const std::uint64_t items = static_cast<std::uint64_t>(profiles) * static_cast<std::uint64_t>(g.chunks);
    if (items > 0x7fffffffull) throw Error(device + ": too many scan work items in one launch");
    g.blocks = static_cast<int>(std::min<std::uint64_t>(items, static_cast<std::uint64_t>(blocks_per_sm) *
                                                                   static_cast<std::uint64_t>(sm_count)));
    return g;
}

// A pair of the scan call to rescore with 32-bit cells.
struct RescorePair {
    int query = 0;             // index in the scan call
    std::size_t position = 0;  // in the database
};

// The 32-bit rescoring of one partition's saturated pairs: one profile per
// query involved, and work items of one query against up to a block's
// groups of its sequences; a slot (item x group) without a pair is -1.
struct RescorePlan {
    std::vector<ProfilePlan> profiles;
    std::vector<std::int32_t> item_profile;    // per item
    std::vector<std::int32_t> item_positions;  // per slot: position in the partition, or -1
    std::vector<std::size_t> entry_of_slot;    // per slot: index into the sorted pairs, or -1
    std::uint64_t words = 0;                   // of the packed profile buffer
};

// `sorted`: the pairs sorted by query, then position, all in the partition
// that starts at database position `first`.
inline RescorePlan plan_rescoring(const std::vector<RescorePair>& sorted, const std::vector<std::size_t>& query_lengths,
                                  bool bounded, const DbScanShape& shape, int letters, std::size_t first) {
    RescorePlan plan;
    const int groups = shape.groups_per_block();
    for (std::size_t k = 0; k < sorted.size();) {
        const int q = sorted[k].query;
        ProfilePlan p;
        p.a = q;
        p.rows = static_cast<int>(query_lengths[static_cast<std::size_t>(q)]);
        if (bounded) p.rows = bounded_rows(p.rows);
        p.shape = shape;
        p.tiles = (p.rows + shape.tile_rows() - 1) / shape.tile_rows();
        const int profile = static_cast<int>(plan.profiles.size());
        plan.profiles.push_back(p);
        while (k < sorted.size() && sorted[k].query == q) {
            plan.item_profile.push_back(profile);
            for (int g = 0; g < groups; ++g) {
                if (k < sorted.size() && sorted[k].query == q) {
                    plan.item_positions.push_back(static_cast<std::int32_t>(sorted[k].position - first));
                    plan.entry_of_slot.push_back(k);
                    ++k;
                } else {
                    plan.item_positions.push_back(-1);
                    plan.entry_of_slot.push_back(static_cast<std::size_t>(-1));
                }
            }
        }
    }
    for (ProfilePlan& p : plan.profiles) {
        p.offset = plan.words;
        plan.words += static_cast<std::uint64_t>(p.tiles) * letters * shape.tile_rows();
    }
    return plan;
}

}  // namespace alignscope::kernels::search
