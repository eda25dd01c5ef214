// Stochastic tracebacks of a full multihit Forward matrix, as hmmsearch draws
// them to cluster a region's domains: the straightforward traceback, and a
// sampler for the many traces of one region that keeps each choice's
// thresholds (and each row's running sums over the states that end a domain)
// once computed, so later traces through the same cells compare their draws
// with them instead of normalising and dividing again. Both draw the same
// random numbers in the same order and give the same traces, bit for bit.
#pragma once

#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace alignscope::profile {

// Appends a step as HMMER's traces record it (N, C, J keep i and a posterior
// only when they emit, i.e. when the step before was the same state).
void append_step(std::vector<TraceStep>& tr, TraceStep::State s, int k, int i, float pp);

// One path sampled from fx (full, multihit), into tr (its storage reused).
void stochastic_trace(DomainRandom& random, const ForwardProfile& om, const LengthModel& length, const DpMatrix& fx,
                      std::vector<TraceStep>& tr);

// The domains of a sampled trace, in target order: the target and model
// extent of their M states, and the nodes of their M and I steps
// (nodes[first .. first + count), in no particular order).
struct TraceDomain {
    int sqfrom = 0, sqto = 0, hmmfrom = 0, hmmto = 0;
    std::size_t first = 0;
    int count = 0;
};
struct TraceDomains {
    std::vector<TraceDomain> domains;
    std::vector<int> nodes;
};

// The traces of one region, one after another, each the same as
// stochastic_trace() with the same generator state. The profile, length model
// and matrix must outlive the sampler and stay unchanged.
class TraceSampler {
public:
    TraceSampler(const ForwardProfile& om, const LengthModel& length, const DpMatrix& fx);
    void trace(DomainRandom& random, std::vector<TraceStep>& tr);
    // The domains of the next trace (the same draws as trace()), without
    // the trace; the walk stops where the rest is N steps, which draw nothing.
    void domains(DomainRandom& random, TraceDomains& out);

    // The choices out of one cell's M, I and D: their cumulative quotients (as
    // Easel's choice compares its draw with them), each computed when first
    // needed. One entry per cell, so that where the next lookup goes does not
    // wait for the state the draw picks.
    struct alignas(64) Cell {
        std::uint64_t key;   // the sampler's generation and the cell
        std::uint32_t have;  // bit per state whose quotients are in
        double m[3], i, d;
    };
    // The same for a row's C, J and B.
    struct RowChoices {
        double q[3];
        std::uint32_t have;
    };

private:
    template <class Sink>
    void walk(DomainRandom& random, Sink& sink);
    std::size_t slot(int i, int k) const;
    const double* cell_choice(int z, int i, int k);
    const double* fill_cell(Cell& c, std::uint64_t key, int z, int i, int k);
    const double* row_choice(TraceStep::State s, int i);
    void end_of_domain(double roll, int i, int& k, TraceStep::State& s);
    const double* end_sums(int i);

    const ForwardProfile& om_;
    const LengthModel& length_;
    const DpMatrix& fx_;
    std::vector<Cell>& cells_;  // direct-mapped, per thread
    std::uint64_t generation_;  // this sampler's keys (high bits)
    std::vector<RowChoices> rows_;
    std::vector<int> end_row_;       // per row: offset in end_pool_, -1 not yet, -2 not kept
    std::vector<double>& end_pool_;  // per thread
};

}  // namespace alignscope::profile
