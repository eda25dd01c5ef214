// A TileScorer on the CPU for the all-against-all and MPI dealing suites: it
// holds up to two tiles in flight and scores the oldest with a backend's
// align_pairs when taken, the shape of the GPU scorer without a GPU.
#pragma once

#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/tile_scorer.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

struct CpuTileScorer : alignscope::allvsall::TileScorer {
    const alignscope::allvsall::Problem& problem;
    alignscope::Backend& backend;
    int threads;  // the backend's worker threads per tile; 0 = all cores
    std::deque<std::uint64_t> flight;
    std::size_t most_in_flight = 0;

    CpuTileScorer(const alignscope::allvsall::Problem& p, alignscope::Backend& b, int worker_threads = 0)
        : problem(p), backend(b), threads(worker_threads) {}
    std::size_t depth() const override { return 2; }
    void submit(std::uint64_t tile, alignscope::JobContext&) override {
        flight.push_back(tile);
        most_in_flight = std::max(most_in_flight, flight.size());
    }
    std::vector<std::int32_t> take(alignscope::JobContext& context) override {
        if (flight.empty()) throw alignscope::Error("take with nothing in flight");
        alignscope::PairJob job;
        job.queries = problem.rows;
        job.targets = problem.columns;
        job.scheme = problem.scheme;
        job.options = problem.options;
        job.options.traceback = job.options.begins = false;
        job.threads = threads;
        problem.tiling.pairs(flight.front(), job.pairs);
        flight.pop_front();
        std::vector<std::int32_t> scores;
        for (const alignscope::Alignment& a : backend.align_pairs(job, context))
            scores.push_back(static_cast<std::int32_t>(a.score));
        return scores;
    }
    void abandon() override { flight.clear(); }
    std::string describe() const override { return "cpu test scorer"; }
};
