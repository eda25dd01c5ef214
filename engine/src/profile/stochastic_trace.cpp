// Stochastic tracebacks in hmmsearch's order of draws and arithmetic: each
// choice normalises its path probabilities (Kahan sum, as Easel does), then
// compares one uniform draw with the running sums over the total; the state
// that ends a domain is drawn over the row's M and D cells in HMMER's striped
// order. TraceSampler computes the same quotients and sums, once per cell.
#include "stochastic_trace.hpp"

#include <alignscope/error.hpp>

#include <algorithm>
#include <cstddef>

namespace alignscope::profile {

namespace {

// Sum with Kahan compensation, as Easel normalises a choice vector.
void normalise(float* v, int n) {
    float sum = 0.0f, c = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float y = v[i] - c;
        const float t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    if (sum != 0.0f)
        for (int i = 0; i < n; ++i) v[i] /= sum;
    else
        for (int i = 0; i < n; ++i) v[i] = 1.0f / static_cast<float>(n);
}

// Easel's choice: the first i whose running sum, over the total, passes a
// uniform roll (the last one when none does). The quotients q[0..N-2] do not
// depend on the roll; the choice is the number of them the roll is not below
// (the running sums only grow).
template <int N>
void quotients(const float* p, double* q) {
    double norm = 0.0;
    for (int i = 0; i < N; ++i) norm += p[i];
    double sum = 0.0;
    for (int i = 0; i < N - 1; ++i) {
        sum += static_cast<double>(p[i]);
        q[i] = sum / norm;
    }
}
template <int N>
int pick(double roll, const double* q) {
    int chosen = 0;
    for (int i = 0; i < N - 1; ++i) chosen += !(roll < q[i]);
    return chosen;
}
template <int N>
int choose(DomainRandom& random, const float* p) {
    const double roll = random.uniform();
    double q[N - 1];
    quotients<N>(p, q);
    return pick<N>(roll, q);
}

// The end of a domain at row i for a roll: the first M or D cell, in the
// striped order, where the running sum of the cells over E passes the roll
// (up to 1000 passes over the row while rounding leaves the total short).
bool end_state(const ForwardProfile& om, const DpMatrix& fx, int i, double roll, int& k, TraceStep::State& s) {
    const int M = om.length, Q = striped_segments(M);
    double sum = 0.0;
    const float norm = static_cast<float>(1.0 / fx.x(i, DpMatrix::E));
    for (int pass = 0; pass < 1000; ++pass) {
        for (int q = 0; q < Q; ++q) {
            for (int r = 0; r < 4; ++r) {
                const int kk = r * Q + q + 1;
                sum += kk <= M ? fx.mmx[fx.row(i) + static_cast<std::size_t>(q * 4 + r)] * norm : 0.0f;
                if (roll < sum) return k = kk, s = TraceStep::M, true;
            }
            for (int r = 0; r < 4; ++r) {
                const int kk = r * Q + q + 1;
                sum += kk <= M ? fx.dmx[fx.row(i) + static_cast<std::size_t>(q * 4 + r)] * norm : 0.0f;
                if (roll < sum) return k = kk, s = TraceStep::D, true;
            }
        }
    }
    return false;
}

// The path probabilities of the choice out of state s at (i, k), in the
// order of its successors (successors_of); returns how many.
int paths_of(const ForwardProfile& om, const LengthModel& length, const DpMatrix& fx, TraceStep::State s, int i, int k,
             float* path) {
    switch (s) {
        case TraceStep::M: {
            const std::size_t j = static_cast<std::size_t>(k - 1);
            // Node 0 of the previous row reads as 0.
            const std::size_t prev = k > 1 ? fx.cell(i - 1, k - 1) : 0;
            const auto before = [&](const std::vector<float>& v) { return k > 1 ? v[prev] : 0.0f; };
            path[0] = fx.x(i - 1, DpMatrix::B) * om.bm[j];
            path[1] = before(fx.mmx) * om.mm[j];
            path[2] = before(fx.imx) * om.im[j];
            path[3] = before(fx.dmx) * om.dm[j];
            return 4;
        }
        case TraceStep::D:
            path[0] = path[1] = 0.0f;
            if (k >= 2) {
                path[0] = fx.mmx[fx.cell(i, k - 1)] * om.md[static_cast<std::size_t>(k - 2)];
                path[1] = fx.dmx[fx.cell(i, k - 1)] * om.dd[static_cast<std::size_t>(k - 2)];
            }
            return 2;
        case TraceStep::I: {
            const std::size_t j = static_cast<std::size_t>(k - 1);
            path[0] = fx.mmx[fx.cell(i - 1, k)] * om.mi[j];
            path[1] = fx.imx[fx.cell(i - 1, k)] * om.ii[j];
            return 2;
        }
        case TraceStep::C:
            path[0] = fx.x(i - 1, DpMatrix::C) * length.loop;
            path[1] = fx.x(i, DpMatrix::E) * om.e_move * fx.x(i, DpMatrix::Scale);
            return 2;
        case TraceStep::J:
            path[0] = fx.x(i - 1, DpMatrix::J) * length.loop;
            path[1] = fx.x(i, DpMatrix::E) * om.e_loop * fx.x(i, DpMatrix::Scale);
            return 2;
        case TraceStep::B:
            path[0] = fx.x(i, DpMatrix::N) * length.move;
            path[1] = fx.x(i, DpMatrix::J) * length.move;
            return 2;
        default: throw Error("stochastic traceback reached an impossible state");
    }
}

// The state chosen out of s as the choice's index c (paths_of's order).
TraceStep::State successor(TraceStep::State s, int c) {
    switch (s) {
        case TraceStep::M: {
            constexpr TraceStep::State states[4] = {TraceStep::B, TraceStep::M, TraceStep::I, TraceStep::D};
            return states[c];
        }
        case TraceStep::D: return c == 0 ? TraceStep::M : TraceStep::D;
        case TraceStep::I: return c == 0 ? TraceStep::M : TraceStep::I;
        case TraceStep::C: return c == 0 ? TraceStep::C : TraceStep::E;
        case TraceStep::J: return c == 0 ? TraceStep::J : TraceStep::E;
        default: return c == 0 ? TraceStep::N : TraceStep::J;  // B
    }
}

// Where a choice out of s0 leaves the trace's position: M moves
// diagonally, D along the model, I along the target.
void step_back(TraceStep::State s0, int& i, int& k) {
    if (s0 == TraceStep::M) --k, --i;
    else if (s0 == TraceStep::D)
        --k;
    else if (s0 == TraceStep::I)
        --i;
}
// After the step is recorded: an N, C or J that emits moves along the target.
void emit_back(TraceStep::State s0, TraceStep::State s1, int& i) {
    if ((s1 == TraceStep::N || s1 == TraceStep::J || s1 == TraceStep::C) && s1 == s0) --i;
}

void start_trace(std::vector<TraceStep>& tr) {
    tr.clear();
    tr.push_back({TraceStep::T, 0, 0, 0.0f});
    tr.push_back({TraceStep::C, 0, 0, 0.0f});
}

// append_step() of a sampled step (no posterior).
inline void record(std::vector<TraceStep>& tr, TraceStep::State s, int k, int i) {
    const bool node = s == TraceStep::M || s == TraceStep::I || s == TraceStep::D;
    const bool emits = s == TraceStep::M || s == TraceStep::I ||
                       ((s == TraceStep::N || s == TraceStep::C || s == TraceStep::J) && tr.back().state == s);
    tr.push_back({s, node ? k : 0, emits ? i : 0, 0.0f});
}

std::size_t step_limit(const DpMatrix& fx, int M) { return static_cast<std::size_t>(4 * (fx.L + 2) * (M + 2)); }

// The per-thread stores of TraceSampler: the cells' table (a power of two
// of entries, blocks of kRun cells along a diagonal) and the rows' running
// sums (up to kEndPoolDoubles).
constexpr std::size_t kCells = std::size_t{1} << 16;
constexpr int kRun = 16;
constexpr int kAhead = 6;                                      // cells fetched ahead along a diagonal
constexpr std::size_t kEndPoolDoubles = std::size_t{1} << 19;  // 4 MiB
constexpr int kGenerationShift = 42;                           // keys: generation above, cell below
constexpr std::uint64_t kNoKey = ~std::uint64_t{0};
struct SamplerStore {
    std::vector<TraceSampler::Cell> cells = std::vector<TraceSampler::Cell>(kCells, {kNoKey, 0, {}, 0, 0});
    std::vector<double> end_pool;
    std::uint64_t generation = 0;
};
SamplerStore& sampler_store() {
    thread_local SamplerStore store;
    return store;
}

// The quotients of the choice out of s given its path probabilities.
void fill_quotients(float* path, int n, double* q) {
    normalise(path, n);
    if (n == 4) quotients<4>(path, q);
    else
        quotients<2>(path, q);
}

}  // namespace

void append_step(std::vector<TraceStep>& tr, TraceStep::State s, int k, int i, float pp) {
    TraceStep step{s, 0, 0, 0.0f};
    switch (s) {
        case TraceStep::N:
        case TraceStep::C:
        case TraceStep::J:
            if (tr.back().state == s) {
                step.i = i;
                step.posterior = pp;
            }
            break;
        case TraceStep::D: step.k = k; break;
        case TraceStep::M:
        case TraceStep::I:
            step.k = k;
            step.i = i;
            step.posterior = pp;
            break;
        default: break;
    }
    tr.push_back(step);
}

void stochastic_trace(DomainRandom& random, const ForwardProfile& om, const LengthModel& length, const DpMatrix& fx,
                      std::vector<TraceStep>& tr) {
    const int M = om.length;
    int i = fx.L, k = 0;
    start_trace(tr);
    TraceStep::State s0 = TraceStep::C;
    std::size_t guard = 0;
    while (s0 != TraceStep::S) {
        if (++guard > step_limit(fx, M)) throw Error("stochastic traceback did not end");
        TraceStep::State s1 = TraceStep::S;
        if (s0 == TraceStep::N) {
            s1 = i == 0 ? TraceStep::S : TraceStep::N;
        } else if (s0 == TraceStep::E) {
            if (!end_state(om, fx, i, random.uniform(), k, s1))
                throw Error("stochastic traceback: no end state could be drawn");
        } else {
            float path[4];
            const int n = paths_of(om, length, fx, s0, i, k, path);
            normalise(path, n);
            s1 = successor(s0, n == 4 ? choose<4>(random, path) : choose<2>(random, path));
        }
        step_back(s0, i, k);
        append_step(tr, s1, k, i, 0.0f);
        emit_back(s0, s1, i);
        s0 = s1;
    }
    std::reverse(tr.begin(), tr.end());
}

TraceSampler::TraceSampler(const ForwardProfile& om, const LengthModel& length, const DpMatrix& fx)
    : om_(om),
      length_(length),
      fx_(fx),
      cells_(sampler_store().cells),
      rows_(static_cast<std::size_t>(fx.L) + 1, RowChoices{{}, 0}),
      end_row_(static_cast<std::size_t>(fx.L) + 1, -1),
      end_pool_(sampler_store().end_pool) {
    SamplerStore& store = sampler_store();
    // A new generation of keys, so no entry of an earlier sampler matches.
    if (++store.generation >= (std::uint64_t{1} << (64 - kGenerationShift)) - 1) {
        std::fill(cells_.begin(), cells_.end(), Cell{kNoKey, 0, {}, 0, 0});
        store.generation = 1;
    }
    generation_ = store.generation << kGenerationShift;
    end_pool_.clear();
}

inline std::size_t TraceSampler::slot(int i, int k) const {
    const std::uint64_t block =
        ((static_cast<std::uint64_t>(i - k + om_.length) << 32) | static_cast<std::uint64_t>(i / kRun)) *
        0x9E3779B97F4A7C15ull;
    return (static_cast<std::size_t>(block >> 40) * kRun + static_cast<std::size_t>(i % kRun)) & (kCells - 1);
}

// The quotients of the choice out of C, J or B at row i.
const double* TraceSampler::row_choice(TraceStep::State s, int i) {
    RowChoices& r = rows_[static_cast<std::size_t>(i)];
    const int z = s == TraceStep::C ? 0 : s == TraceStep::J ? 1 : 2;
    if (!(r.have & (1u << z))) {
        float path[4];
        fill_quotients(path, paths_of(om_, length_, fx_, s, i, 0, path), &r.q[z]);
        r.have |= 1u << z;
    }
    return &r.q[z];
}

// The quotients of the choice out of M, I or D (z 0, 1, 2) at (i, k): the
// cell's entry, filled first where it is not yet (fill_cell).
inline const double* TraceSampler::cell_choice(int z, int i, int k) {
    const std::uint64_t key =
        generation_ |
        (static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(om_.length + 1) + static_cast<std::uint64_t>(k));
    Cell& c = cells_[slot(i, k)];
    if (c.key == key && (c.have >> z & 1u)) return z == 0 ? c.m : z == 1 ? &c.i : &c.d;
    return fill_cell(c, key, z, i, k);
}

const double* TraceSampler::fill_cell(Cell& c, std::uint64_t key, int z, int i, int k) {
    if (c.key != key) c.key = key, c.have = 0;
    constexpr TraceStep::State states[3] = {TraceStep::M, TraceStep::I, TraceStep::D};
    double* q = z == 0 ? c.m : z == 1 ? &c.i : &c.d;
    float path[4];
    fill_quotients(path, paths_of(om_, length_, fx_, states[z], i, k, path), q);
    c.have |= 1u << z;
    return q;
}

// Row i's running sums of end_state() over its first pass (8Q of them), or
// nothing when the pool is full or the sums do not grow (NaN).
const double* TraceSampler::end_sums(int i) {
    int& slot = end_row_[static_cast<std::size_t>(i)];
    if (slot >= 0) return end_pool_.data() + slot;
    if (slot == -2) return nullptr;
    const int M = om_.length, Q = striped_segments(M);
    const std::size_t W = static_cast<std::size_t>(Q) * 8, at = end_pool_.size();
    if (at + W > kEndPoolDoubles) return slot = -2, nullptr;
    end_pool_.resize(at + W);
    double* out = end_pool_.data() + at;
    double sum = 0.0;
    const float norm = static_cast<float>(1.0 / fx_.x(i, DpMatrix::E));
    const float* m = fx_.mmx.data() + fx_.row(i);
    const float* d = fx_.dmx.data() + fx_.row(i);
    bool grows = true;
    for (int q = 0; q < Q; ++q) {
        for (int r = 0; r < 4; ++r) {
            const int kk = r * Q + q + 1;
            const double before = sum;
            sum += kk <= M ? m[q * 4 + r] * norm : 0.0f;
            grows = grows && sum >= before;
            out[q * 8 + r] = sum;
        }
        for (int r = 0; r < 4; ++r) {
            const int kk = r * Q + q + 1;
            const double before = sum;
            sum += kk <= M ? d[q * 4 + r] * norm : 0.0f;
            grows = grows && sum >= before;
            out[q * 8 + 4 + r] = sum;
        }
    }
    if (!grows) {
        end_pool_.resize(at);
        return slot = -2, nullptr;
    }
    slot = static_cast<int>(at);
    return out;
}

// The end of a domain at row i for a roll: a binary search in the row's
// running sums, or end_state()'s scan where they are not kept or the roll
// is past their total.
void TraceSampler::end_of_domain(double roll, int i, int& k, TraceStep::State& s) {
    const int Q = striped_segments(om_.length);
    const double* sums = end_sums(i);
    const std::size_t W = static_cast<std::size_t>(Q) * 8;
    const std::size_t e = sums ? static_cast<std::size_t>(std::upper_bound(sums, sums + W, roll) - sums) : W;
    if (e < W) {
        k = static_cast<int>(e & 3) * Q + static_cast<int>(e / 8) + 1;
        s = (e & 4) ? TraceStep::D : TraceStep::M;
    } else if (!end_state(om_, fx_, i, roll, k, s)) {
        throw Error("stochastic traceback: no end state could be drawn");
    }
}

// The steps of a sampled trace, last to first, into a recorded trace.
struct StepsSink {
    std::vector<TraceStep>& tr;
    bool step(TraceStep::State s, int k, int i) {
        record(tr, s, k, i);
        return true;
    }
};

// The same steps into domains: E opens one, M and I add their nodes (the
// first M met is the last in the trace), B closes it; N ends the walk.
struct DomainsSink {
    TraceDomains& out;
    TraceDomain d{};
    bool any_m = false;
    bool step(TraceStep::State s, int k, int i) {
        switch (s) {
            case TraceStep::E:
                d = TraceDomain{0, 0, 0, 0, out.nodes.size(), 0};
                any_m = false;
                break;
            case TraceStep::M:
                if (!any_m) d.sqto = i, d.hmmto = k, any_m = true;
                d.sqfrom = i, d.hmmfrom = k;
                out.nodes.push_back(k);
                break;
            case TraceStep::I: out.nodes.push_back(k); break;
            case TraceStep::B:
                d.count = static_cast<int>(out.nodes.size() - d.first);
                out.domains.push_back(d);
                break;
            case TraceStep::N: return false;
            default: break;
        }
        return true;
    }
};

// Draws one trace from row L back to S, handing each step to the sink
// (until it declines the rest).
template <class Sink>
void TraceSampler::walk(DomainRandom& random, Sink& sink) {
    static constexpr TraceStep::State kAfterM[4] = {TraceStep::B, TraceStep::M, TraceStep::I, TraceStep::D};
    int i = fx_.L, k = 0;
    TraceStep::State s0 = TraceStep::C;
    std::size_t guard = 0;
    const std::size_t limit = step_limit(fx_, om_.length);
    while (s0 != TraceStep::S) {
        if (++guard > limit) throw Error("stochastic traceback did not end");
        TraceStep::State s1 = TraceStep::S;
        switch (s0) {
            case TraceStep::M: {
                const double roll = random.uniform();
                // A run of M steps goes down the diagonal: fetch its cells ahead.
                if (i > kAhead && k > kAhead) __builtin_prefetch(&cells_[slot(i - kAhead, k - kAhead)]);
                s1 = kAfterM[pick<4>(roll, cell_choice(0, i, k))];
                break;
            }
            case TraceStep::I: {
                const double roll = random.uniform();
                s1 = pick<2>(roll, cell_choice(1, i, k)) == 0 ? TraceStep::M : TraceStep::I;
                break;
            }
            case TraceStep::D: {
                const double roll = random.uniform();
                s1 = pick<2>(roll, cell_choice(2, i, k)) == 0 ? TraceStep::M : TraceStep::D;
                break;
            }
            case TraceStep::N: s1 = i == 0 ? TraceStep::S : TraceStep::N; break;
            case TraceStep::E: end_of_domain(random.uniform(), i, k, s1); break;
            default: {  // C, J, B
                const double roll = random.uniform();
                s1 = successor(s0, pick<2>(roll, row_choice(s0, i)));
                break;
            }
        }
        step_back(s0, i, k);
        if (!sink.step(s1, k, i)) return;
        emit_back(s0, s1, i);
        s0 = s1;
    }
}

void TraceSampler::trace(DomainRandom& random, std::vector<TraceStep>& tr) {
    start_trace(tr);
    StepsSink sink{tr};
    walk(random, sink);
    std::reverse(tr.begin(), tr.end());
}

void TraceSampler::domains(DomainRandom& random, TraceDomains& out) {
    out.domains.clear();
    out.nodes.clear();
    DomainsSink sink{out};
    walk(random, sink);
    std::reverse(out.domains.begin(), out.domains.end());
}

}  // namespace alignscope::profile
