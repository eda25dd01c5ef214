// The host-side plan of a pairwise GPU job: which pairs the GPU runs and in
// which kernel (one work list per kernel, longest pairs first, cut into warp
// units with their device bytes), which pairs its 32-bit passes cannot hold
// and go to the exact CPU path instead, and the batches that fit the memory
// budget. Plain C++: the tests build plans without a GPU.
#pragma once

#include "batch_plan.hpp"
#include "family_layout.hpp"
#include "kernel_catalog.hpp"
#include "kernel_choice.hpp"
#include "pass_bounds.hpp"

#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace alignscope::kernels {

using PairLengths = std::pair<std::int64_t, std::int64_t>;  // (query, target) residues

// The pairs one kernel variant runs, in kernel order (longest first, so each
// warp block holds pairs of similar shape).
struct WorkList {
    KernelVariant variant;
    FamilyLayout layout;
    std::vector<std::size_t> pairs;       // job pair indices
    std::vector<PairLengths> lengths;     // (m, n) in the same order
    std::vector<std::size_t> unit_first;  // unit k starts at pairs[unit_first[k]]
    std::vector<UnitCost> units;
};

// A run of consecutive units of one work list that one stream takes at once.
struct Batch {
    const WorkList* list = nullptr;
    std::size_t first = 0;  // position in list->pairs
    std::size_t count = 0;
    std::uint64_t cells = 0;
};

// What the plan needs to know of the job and the device.
struct PairPlanRules {
    AlignmentMode mode = AlignmentMode::Local;
    ScoringScheme scheme;
    bool traceback = false;
    std::optional<KernelVariant> forced;  // --kernel, parsed
    int sm_count = 1;
    // Pairs of the whole job when a part of it is planned (the kernel choice
    // counts them, so a job cut into parts runs the kernels it would whole);
    // 0 = the pairs planned.
    std::size_t job_pairs = 0;
};

class PairPlan {
public:
    PairPlan() = default;
    PairPlan(const PairPlan&) = delete;
    PairPlan& operator=(const PairPlan&) = delete;
    PairPlan(PairPlan&&) = default;  // the lists' nodes, which batches point at, move along
    PairPlan& operator=(PairPlan&&) = default;

    // Plans the pairs `indices` of a job whose pair k is lengths[k] residues.
    // Pairs of the same shape get the same kernel; with `wide` every pair runs
    // at 32 bits (the recompute of pairs a 16-bit pass may have saturated).
    // A pair the 32-bit passes cannot hold (s32_can_hold) goes to
    // host_pairs(), or, with a forced kernel, is refused with an Error naming
    // --kernel. `describe_pair(k)` names pair k in errors.
    static PairPlan make(const std::vector<PairLengths>& lengths, const std::vector<std::size_t>& indices,
                         const PairPlanRules& rules, bool wide,
                         const std::function<std::string(std::size_t)>& describe_pair) {
        return build(
            lengths, indices.size(), [&indices](std::size_t p) { return indices[p]; }, rules, wide, describe_pair);
    }
    // Plans every pair of the job (no list of indices made for it).
    static PairPlan make_all(const std::vector<PairLengths>& lengths, const PairPlanRules& rules, bool wide,
                             const std::function<std::string(std::size_t)>& describe_pair) {
        return build(
            lengths, lengths.size(), [](std::size_t p) { return p; }, rules, wide, describe_pair);
    }
    // Plans the `count` consecutive job pairs from `first` on (a part of a job
    // run in parts: rules.job_pairs should then count the whole job's pairs).
    // With `reuse`, a plan done with, its lists' storage is taken for this
    // one (a job's plans reuse an earlier job's memory instead of faulting in
    // fresh pages); `reuse` is left empty.
    static PairPlan make_range(const std::vector<PairLengths>& lengths, std::size_t first, std::size_t count,
                               const PairPlanRules& rules, bool wide,
                               const std::function<std::string(std::size_t)>& describe_pair,
                               PairPlan* reuse = nullptr) {
        return build(
            lengths, count, [first](std::size_t p) { return first + p; }, rules, wide, describe_pair, reuse);
    }

    // Pairs the plan's lists have room for (what make_range's `reuse` lends).
    std::size_t capacity() const {
        std::size_t pairs = 0;
        for (const auto& [name, list] : lists_) pairs += list.pairs.capacity();
        return pairs;
    }

    const std::map<std::string, WorkList>& lists() const { return lists_; }
    // Job pair indices for the exact CPU path, in job order.
    const std::vector<std::size_t>& host_pairs() const { return host_pairs_; }

    // The work lists cut into batches of at most `budget` device bytes and
    // `max_cells` cells each (plan_batches), list by list in name order.
    // `describe_pair(k)` names job pair k when one unit alone is over the budget.
    std::vector<Batch> batches(std::uint64_t budget, std::uint64_t max_cells,
                               const std::function<std::string(std::size_t)>& describe_pair) const {
        std::vector<Batch> out;
        for (const auto& [name, list] : lists_) {
            const auto ranges = plan_batches(list.units, budget, max_cells, [&](std::size_t unit) {
                return describe_pair(list.pairs[list.unit_first[unit]]);
            });
            for (const BatchRange& range : ranges) {
                Batch batch;
                batch.list = &list;
                batch.first = list.unit_first[range.first];
                const std::size_t last_unit = range.first + range.count;
                const std::size_t end =
                    last_unit < list.unit_first.size() ? list.unit_first[last_unit] : list.pairs.size();
                batch.count = end - batch.first;
                batch.cells = range.cells;
                out.push_back(batch);
            }
        }
        return out;
    }

private:
    static constexpr std::uint8_t kHost = 0xff;  // a pair's list: the CPU path
    static constexpr std::size_t kKeptListOfPairs = std::size_t{1} << 22;
    struct ShapeEntry {
        std::uint8_t list = kHost;  // into build()'s lists
        std::size_t pairs = 0;
    };

    // make() over `count` pairs, the p-th being job pair index_of(p).
    template <typename IndexOf>
    static PairPlan build(const std::vector<PairLengths>& lengths, std::size_t count, IndexOf index_of,
                          const PairPlanRules& rules, bool wide,
                          const std::function<std::string(std::size_t)>& describe_pair, PairPlan* reuse = nullptr) {
        PairPlan plan;
        const SchemeBounds bounds = SchemeBounds::of(rules.scheme);
        std::vector<WorkList> spare;  // reuse's lists, emptied, their storage kept
        if (reuse) {
            for (auto& [name, list] : reuse->lists_) {
                list.pairs.clear();
                list.lengths.clear();
                list.unit_first.clear();
                list.units.clear();
                spare.push_back(std::move(list));
            }
            reuse->lists_.clear();
            plan.host_pairs_ = std::move(reuse->host_pairs_);
            plan.host_pairs_.clear();
            reuse->host_pairs_.clear();
        }
        std::map<std::pair<int, int>, WorkList> by_key;  // (threads per pair, width)
        // Each pair's list, found once per shape (a job's pairs mostly come
        // in runs of one shape, so the last one is kept): an index into
        // `lists` (few: one per threads per pair and width), kHost for the
        // CPU path.
        std::map<PairLengths, ShapeEntry> chosen;
        std::vector<WorkList*> lists;
        // Each pair's list: the thread's scratch kept from plan to plan (a
        // job's parts are planned one after another on its thread), a vector
        // of its own for a plan over a few million pairs.
        thread_local std::vector<std::uint8_t> kept_list_of;
        std::vector<std::uint8_t> own_list_of;
        std::vector<std::uint8_t>& list_of_storage = count <= kKeptListOfPairs ? kept_list_of : own_list_of;
        if (list_of_storage.size() < count) list_of_storage.resize(count);
        std::uint8_t* const list_of = list_of_storage.data();
        std::optional<PairLengths> last_shape;
        ShapeEntry* last = nullptr;
        for (std::size_t p = 0; p < count; ++p) {
            const std::size_t k = index_of(p);
            const PairLengths shape = lengths[k];
            if (!last_shape || shape != *last_shape) {
                auto [it, fresh] = chosen.try_emplace(shape);
                if (fresh) {
                    const std::optional<KernelVariant> variant =
                        choose(shape, rules.job_pairs ? rules.job_pairs : count, rules, bounds, wide, describe_pair, k);
                    if (variant) {
                        auto [made, fresh_list] = by_key.try_emplace(
                            {variant->threads_per_pair(), variant->width == LaneWidth::S16 ? 16 : 32});
                        if (fresh_list && !spare.empty()) {
                            made->second = std::move(spare.back());
                            spare.pop_back();
                        }
                        WorkList& list = made->second;
                        list.variant = *variant;
                        const auto at = std::find(lists.begin(), lists.end(), &list);
                        it->second.list = static_cast<std::uint8_t>(at - lists.begin());
                        if (at == lists.end()) lists.push_back(&list);
                    }
                }
                last_shape = shape;
                last = &it->second;
            }
            ++last->pairs;
            list_of[p] = last->list;
        }
        std::vector<std::size_t> counts(lists.size(), 0);
        std::size_t host_count = 0;
        for (const auto& [shape, entry] : chosen)
            (entry.list == kHost ? host_count : counts[entry.list]) += entry.pairs;
        for (std::size_t l = 0; l < lists.size(); ++l) {
            lists[l]->pairs.reserve(counts[l]);
            lists[l]->lengths.reserve(counts[l]);
        }
        plan.host_pairs_.reserve(host_count);
        for (std::size_t p = 0; p < count; ++p) {
            const std::size_t k = index_of(p);
            if (list_of[p] == kHost) {
                plan.host_pairs_.push_back(k);
                continue;
            }
            WorkList& list = *lists[list_of[p]];
            list.pairs.push_back(k);
            list.lengths.push_back(lengths[k]);
        }
        for (auto& [key, list] : by_key) {
            list.layout = layout_of(list.variant);
            order_longest_first(list);
            cut_units(list, rules.traceback);
            plan.lists_[list.variant.name()] = std::move(list);
        }
        return plan;
    }

    // The kernel of a pair of `shape`, or nullopt for the CPU path.
    static std::optional<KernelVariant> choose(const PairLengths& shape, std::size_t job_pairs,
                                               const PairPlanRules& rules, const SchemeBounds& bounds, bool wide,
                                               const std::function<std::string(std::size_t)>& describe_pair,
                                               std::size_t pair) {
        const auto [m, n] = shape;
        if (!s32_can_hold(rules.mode, rules.traceback, m, n, bounds)) {
            if (rules.forced)
                throw Error("--kernel " + rules.forced->name() + " cannot hold " + describe_pair(pair) +
                            " under this scheme: its 32-bit cells would overflow (leave --kernel out to align such "
                            "pairs on the exact CPU path)");
            return std::nullopt;
        }
        KernelVariant variant;
        if (rules.forced) {
            variant = *rules.forced;
        } else {
            variant.mode = rules.mode;
            variant.linear = rules.scheme.linear();
            const FamilyChoice family = choose_family(m, n, job_pairs, rules.sm_count);
            variant.family = family.family;
            variant.group = family.group;
            variant.width = LaneWidth::S16;
        }
        if (wide || !s16_can_hold(rules.mode, m, n, rules.scheme)) variant.width = LaneWidth::S32;
        return variant;
    }

    // Longest first, ties in job order (a stable sort, done only when the
    // pairs are not in that order already).
    static void order_longest_first(WorkList& list) {
        const bool ordered = std::is_sorted(list.lengths.begin(), list.lengths.end(),
                                            [](const auto& x, const auto& y) { return x > y; });
        if (ordered) return;
        std::vector<std::size_t> order(list.pairs.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
            if (list.lengths[x] != list.lengths[y]) return list.lengths[x] > list.lengths[y];
            return x < y;
        });
        std::vector<std::size_t> pairs(order.size());
        std::vector<PairLengths> sorted(order.size());
        for (std::size_t k = 0; k < order.size(); ++k) {
            pairs[k] = list.pairs[order[k]];
            sorted[k] = list.lengths[order[k]];
        }
        list.pairs = std::move(pairs);
        list.lengths = std::move(sorted);
    }

    // Warp units (a warp's worth of pairs) with their device bytes and cells.
    static void cut_units(WorkList& list, bool traceback) {
        const std::size_t per_unit = static_cast<std::size_t>(list.layout.pairs_per_warp());
        for (std::size_t first = 0; first < list.pairs.size(); first += per_unit) {
            const std::size_t count = std::min(per_unit, list.pairs.size() - first);
            UnitCost cost;
            cost.bytes = unit_bytes(list.layout, list.lengths, first, count, traceback);
            for (std::size_t k = first; k < first + count; ++k)
                cost.cells += static_cast<std::uint64_t>(list.lengths[k].first * list.lengths[k].second);
            list.unit_first.push_back(first);
            list.units.push_back(cost);
        }
    }

    std::map<std::string, WorkList> lists_;
    std::vector<std::size_t> host_pairs_;
};

}  // namespace alignscope::kernels
