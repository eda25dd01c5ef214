// What a backend is asked to do and how it reports back: the pairwise job, its
// progress, its cancellation and its timeline.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/sequence.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace alignscope {

class CancellationToken {
public:
    void cancel() { flag_.store(true, std::memory_order_relaxed); }
    bool cancelled() const { return flag_.load(std::memory_order_relaxed); }
    void throw_if_cancelled() const {
        if (cancelled()) throw Cancelled();
    }

private:
    std::atomic<bool> flag_{false};
};

struct Progress {
    std::uint64_t cells_done = 0;
    std::uint64_t cells_total = 0;
    std::uint64_t items_done = 0;  // pairs
    std::uint64_t items_total = 0;
};

// Backends call progress now and then (at least every 100 ms of work when it is
// long) from any thread, check the token at the same rate (a cancelled job ends
// with Cancelled within 100 ms), and send every kernel/copy/work item to the
// timeline. All three are optional.
struct JobContext {
    std::function<void(const Progress&)> progress;
    const CancellationToken* cancel = nullptr;
    TimelineSink* timeline = nullptr;

    bool cancelled() const { return cancel && cancel->cancelled(); }
    void throw_if_cancelled() const {
        if (cancel) cancel->throw_if_cancelled();
    }
};

// A batch of pairwise alignments: pairs index into queries and targets.
struct PairJob {
    const std::vector<Sequence>* queries = nullptr;
    const std::vector<Sequence>* targets = nullptr;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    ScoringScheme scheme;
    AlignOptions options;
    int threads = 0;                      // CPU worker threads; 0 = all cores
    int streams = 0;                      // GPU streams per device; 0 = backend default
    std::string kernel;                   // force a kernel/variant by name; empty = automatic
    std::uint64_t gpu_memory_budget = 0;  // bytes per device; 0 = backend default

    std::uint64_t total_cells() const;  // sum of |q| * |t| over the pairs
    // The same job over other pairs (a part of it, for a device or a slice).
    PairJob with_pairs(std::vector<std::pair<std::uint32_t, std::uint32_t>> other) const;
};

}  // namespace alignscope
