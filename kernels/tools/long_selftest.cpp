// alignscope-long-selftest: the GPU long-pair runner against the CPU
// reference on random pairs (every mode, DNA and protein, affine and linear);
// explicit-top-row passes (a resumed stage 1) and the special rows, best cells
// and last column they report while running, against the CPU pass runner;
// checkpoint and resume across runners and strategies; then stage-1 and
// end-to-end timings of long DNA pairs.
//   alignscope-long-selftest [--device gpu:0] [--rounds N] [--bench 1000000,5000000]
//                            [--strategy strips|streams] [--kernels K] [--streams S] [--no-check] [--overview N]
//                            [--checkpoint-rounds N (default: rounds / 5, at least 1)]
//                            [--split N] [--split-slices K] [--split-block-rows R]
//   alignscope-long-selftest --write-pair L DIR   (DIR/query.fa, DIR/target.fa: the bench's pair of length L)
// On a CPU device (no GPU runner) the checks run the CPU pass runner against
// itself: a check of the checks.
// Several GPUs (--device gpu:0,1) test their split runner (one pair's columns
// split among the GPUs); --split N tests a split over N runners of the one
// device named (N runners sharing one GPU: the multi-GPU path on one GPU).
// --split-slices K: column slices per runner (default 1); --split-block-rows R:
// rows per pipeline block (default: what fills the GPU).
#include <alignscope/kernels/cuda_backend.hpp>

#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <alignscope/align/cigar.hpp>

#include <algorithm>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

std::string random_residues(std::mt19937_64& rng, const std::string& alphabet, std::size_t length) {
    std::string s(length, 'A');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

// ~8 % substitutions, ~2 % short indels, rare long indels.
std::string mutate(std::mt19937_64& rng, const std::string& s, const std::string& alphabet) {
    std::string out;
    out.reserve(s.size() + s.size() / 20);
    for (std::size_t k = 0; k < s.size(); ++k) {
        const unsigned r = static_cast<unsigned>(rng() % 100000);
        if (r < 8000) out += alphabet[rng() % alphabet.size()];
        else if (r < 9000)
            continue;
        else if (r < 10000)
            out += s[k] + random_residues(rng, alphabet, 1 + rng() % 4);
        else if (r < 10005)
            k += 100 + rng() % 2000;
        else if (r < 10010)
            out += s[k] + random_residues(rng, alphabet, 100 + rng() % 2000);
        else
            out += s[k];
    }
    return out;
}

double peak_rss_gib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);
}

// The GPU's stage-1 overview against the CPU runner's full matrix, pooled
// over the GPU's row blocks (the column blocks are defined alike).
bool overview_matches(const std::string& q, const std::string& t, const ScoringScheme& scheme,
                      const AlignOptions& align, const LongPairOverview& gpu) {
    if (gpu.empty()) return false;
    const EncodedSequence eq = encode(q, scheme.matrix, "query"), et = encode(t, scheme.matrix, "target");
    const auto m = static_cast<std::int64_t>(eq.size()), n = static_cast<std::int64_t>(et.size());
    auto cpu = make_cpu_pass_runner();
    cpu->prepare(eq.data(), m, et.data(), n, scheme);
    std::vector<PassTask> tasks(1);
    PassTask& p = tasks[0];
    p.row_end = m;
    p.col_end = n;
    const bool local = align.mode == AlignmentMode::Local, semi = align.mode == AlignmentMode::SemiGlobal;
    p.local = local;
    p.top = local || (semi && align.free_ends.query_begin) ? Edge::Zero : Edge::Gap;
    p.left = local || (semi && align.free_ends.target_begin) ? Edge::Zero : Edge::Gap;
    p.overview_rows = static_cast<int>(m);  // one block per row
    p.overview_cols = gpu.grid_cols;
    cpu->run(tasks, {}, {});
    const auto blocks = static_cast<std::int64_t>(gpu.row_edges.size());
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t lo = gpu.row_edges[static_cast<std::size_t>(b)];
        const std::int64_t hi = b + 1 < blocks ? gpu.row_edges[static_cast<std::size_t>(b + 1)] : m + 1;
        for (int c = 0; c < gpu.grid_cols; ++c) {
            Score expect = kNegInf;
            for (std::int64_t i = lo; i < hi; ++i)
                expect = std::max(expect, p.overview[static_cast<std::size_t>((i - 1) * gpu.grid_cols + c)]);
            if (gpu.max_h[static_cast<std::size_t>(b * gpu.grid_cols + c)] != expect) return false;
        }
    }
    return true;
}

using RunnerFactory = std::function<std::unique_ptr<PassRunner>()>;

// "local", "global", "semiglobal" or "semiglobal:ENDS" (FreeEndGaps::parse's ends).
AlignOptions parse_mode_text(const std::string& mode_text) {
    AlignOptions align;
    const auto colon = mode_text.find(':');
    align.mode = parse_mode(mode_text.substr(0, colon));
    if (colon != std::string::npos) align.free_ends = FreeEndGaps::parse(mode_text.substr(colon + 1));
    return align;
}

// The scheme, mode and random pair of one explicit-edge round: three schemes
// in turn, four modes from `mode_offset` on, a query of 3,000 to 12,000
// residues and a mutated copy of it as the target (`short_target` when the
// copy is shorter than that).
struct EdgeRound {
    const char* matrix;
    ScoringScheme scheme;
    std::string mode_text;
    AlignOptions align;
    EncodedSequence eq, et;
    std::int64_t m = 0, n = 0;
};

EdgeRound edge_round(std::mt19937_64& rng, int round, int mode_offset, const std::string& short_target) {
    struct Scheme {
        const char* matrix;
        double open, extend;
        const char* alphabet;
    };
    const Scheme schemes[] = {{"EDNAFULL", 10, 0.5, "ACGT"},
                              {"BLOSUM62", 11, 1, "ARNDCQEGHILKMFPSTWYV"},
                              {"EDNAFULL", 4, 4, "ACGT"}};
    const char* modes[] = {"local", "global", "semiglobal:tb,te", "semiglobal:qb,qe"};
    const Scheme& sc = schemes[round % 3];
    const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin(sc.matrix), sc.open, sc.extend);
    const std::string mode_text = modes[(round + mode_offset) % 4];
    const std::size_t len = 3000 + rng() % 9000;
    const std::string q = random_residues(rng, sc.alphabet, len);
    std::string t = mutate(rng, q, sc.alphabet);
    if (t.size() < short_target.size()) t = short_target;
    EdgeRound e{sc.matrix,
                scheme,
                mode_text,
                parse_mode_text(mode_text),
                encode(q, scheme.matrix, "query"),
                encode(t, scheme.matrix, "target")};
    e.m = static_cast<std::int64_t>(e.eq.size());
    e.n = static_cast<std::int64_t>(e.et.size());
    return e;
}

// A round's failures, each printed with what the round checked.
struct RoundFailures {
    std::string what;
    int count = 0;
    void operator()(const std::string& why) {
        ++count;
        std::printf("FAIL %s: %s\n", what.c_str(), why.c_str());
    }
};

// The edges of stage 1 in a mode (as align_long sets them).
void stage1_edges(PassTask& p, const AlignOptions& align) {
    const bool local = align.mode == AlignmentMode::Local, semi = align.mode == AlignmentMode::SemiGlobal;
    p.local = local;
    p.top = local || (semi && align.free_ends.query_begin) ? Edge::Zero : Edge::Gap;
    p.left = local || (semi && align.free_ends.target_begin) ? Edge::Zero : Edge::Gap;
}

bool same_best(const BestCell& a, const BestCell& b) { return a.score == b.score && a.i == b.i && a.j == b.j; }

std::string best_text(const BestCell& b) {
    return std::to_string(b.score) + " at " + std::to_string(b.i) + "," + std::to_string(b.j);
}

// One explicit-top-row pass (rows r..m below a row r computed by the CPU
// runner) on the tested runner against the CPU runner: last row (H and F),
// last column, best cell, the special rows it keeps (each against a CPU pass
// down to that row), and what on_rows_done reported while it ran (ascending,
// every special row, best cell and last-column best of the rows above the
// last reported row). Returns the failures, printed.
int explicit_top_round(const RunnerFactory& tested, std::mt19937_64& rng, int round) {
    const EdgeRound e = edge_round(rng, round, 0, "A");
    const ScoringScheme& scheme = e.scheme;
    const AlignOptions& align = e.align;
    const EncodedSequence &eq = e.eq, &et = e.et;
    const std::int64_t m = e.m, n = e.n;
    const std::int64_t r = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(m - 1));
    RoundFailures fail{"explicit-top round " + std::to_string(round) + " " + e.mode_text + " " + e.matrix + " " +
                       std::to_string(m) + "x" + std::to_string(n) + " from row " + std::to_string(r)};

    auto cpu = make_cpu_pass_runner();
    cpu->prepare(eq.data(), m, et.data(), n, scheme);
    // Row r as stage 1 leaves it.
    std::vector<PassTask> above(1);
    above[0].row_end = r;
    above[0].col_end = n;
    stage1_edges(above[0], align);
    above[0].want_last_row = true;
    cpu->run(above, {}, {});
    // The pass below it, as a resumed stage 1 sets it up.
    PassTask below;
    below.row_begin = r;
    below.row_end = m;
    below.col_end = n;
    stage1_edges(below, align);
    below.top = Edge::Explicit;
    below.top_h = above[0].last_h;
    below.top_f = above[0].last_f;
    if (below.left == Edge::Gap) below.left = Edge::GapContinue;
    below.track_best = below.local;
    below.want_last_row = true;
    below.want_last_column = true;
    below.special_every = std::max<std::int64_t>(1, (m - r) / 5);

    std::vector<PassTask> on_cpu(1, below);
    cpu->run(on_cpu, {}, {});
    auto gpu = tested();
    gpu->prepare(eq.data(), m, et.data(), n, scheme);
    std::vector<PassTask> on_gpu(1, below);
    std::vector<RowsDone> reports;
    on_gpu[0].on_rows_done = [&](const RowsDone& d) { reports.push_back(d); };
    gpu->run(on_gpu, {}, {});
    const PassTask& c = on_cpu[0];
    const PassTask& g = on_gpu[0];
    if (g.last_h != c.last_h || g.last_f != c.last_f) fail("the last row differs");
    if (g.last_col_h != c.last_col_h) fail("the last column differs");
    if (c.track_best && !same_best(g.best, c.best)) fail("best " + best_text(g.best) + ", CPU " + best_text(c.best));

    // Its special rows, each against a CPU pass from row r down to it.
    const std::vector<std::int64_t> rows = gpu->saved_rows();
    if (rows.empty() && m - r > 2048) fail("no special rows");
    for (std::size_t k = 0; k < rows.size(); ++k)
        if (rows[k] <= r || rows[k] >= m || (k > 0 && rows[k] <= rows[k - 1]))
            fail("special rows out of order or range");
    auto cpu_down_to = [&](std::int64_t row) {
        std::vector<PassTask> part(1, below);
        part[0].row_end = row;
        part[0].special_every = 0;
        cpu->run(part, {}, {});
        return part[0];
    };
    for (std::size_t k : {std::size_t{0}, rows.size() / 2, rows.size() - 1}) {
        if (k >= rows.size()) continue;
        std::vector<Score> h, f;
        gpu->read_special_row(k, h, f);
        const PassTask part = cpu_down_to(rows[k]);
        if (h != part.last_h || f != part.last_f) fail("special row " + std::to_string(rows[k]) + " differs");
    }
    // What it reported while running.
    if (!rows.empty()) {
        if (reports.empty() || reports.back().special_rows != rows.size()) {
            fail("on_rows_done reported " + std::to_string(reports.empty() ? 0 : reports.back().special_rows) + " of " +
                 std::to_string(rows.size()) + " special rows");
        } else {
            for (std::size_t x = 0; x < reports.size(); ++x) {
                const RowsDone& d = reports[x];
                if (d.special_rows == 0 || (x > 0 && d.special_rows <= reports[x - 1].special_rows) ||
                    d.row != rows[d.special_rows - 1] - r)
                    fail("on_rows_done report " + std::to_string(x) + " out of order");
            }
            const RowsDone& d = reports.front();  // the earliest: most likely taken while the kernel ran
            const PassTask part = cpu_down_to(r + d.row);
            if (below.track_best && !same_best(d.best, part.best))
                fail("best of rows above " + std::to_string(r + d.row) + ": " + best_text(d.best) + ", CPU " +
                     best_text(part.best));
            BestCell col;
            for (std::int64_t i = 1; i <= d.row; ++i) {
                const BestCell x{part.last_col_h[static_cast<std::size_t>(i)], i, n};
                if (better_cell(x, col)) col = x;
            }
            if (!same_best(d.last_column, col))
                fail("last-column best above " + std::to_string(r + d.row) + ": " + best_text(d.last_column) +
                     ", CPU " + best_text(col));
        }
    }
    return fail.count;
}

// Stage 1 from row r over all columns: its top edge row r as a CPU pass down
// to it leaves it (stage 1's own top edge when r = 0).
PassTask stage1_from_row(PassRunner& cpu, const EdgeRound& e, std::int64_t r) {
    PassTask whole;
    whole.row_begin = r;
    whole.row_end = e.m;
    whole.col_end = e.n;
    stage1_edges(whole, e.align);
    if (r > 0) {
        std::vector<PassTask> above(1);
        above[0].row_end = r;
        above[0].col_end = e.n;
        stage1_edges(above[0], e.align);
        above[0].want_last_row = true;
        cpu.run(above, {}, {});
        whole.top = Edge::Explicit;
        whole.top_h = above[0].last_h;
        whole.top_f = above[0].last_f;
        if (whole.left == Edge::Gap) whole.left = Edge::GapContinue;
    }
    return whole;
}

// The slice of `whole` from column c on: its top edge cut from the whole
// pass's, its left edge the last column (H, E, F) of a CPU pass over columns
// 0..c of the same rows; special rows, best cell and overview asked for.
PassTask column_slice(PassRunner& cpu, const EdgeRound& e, const PassTask& whole, std::int64_t c) {
    auto clamp = [](std::int64_t v) { return static_cast<Score>(std::max<std::int64_t>(v, kNegInf)); };
    std::vector<PassTask> first(1, whole);  // columns 0..c: the slice's left edge
    first[0].col_end = c;
    if (whole.top == Edge::Explicit) {
        first[0].top_h.resize(static_cast<std::size_t>(c + 1));
        first[0].top_f.resize(static_cast<std::size_t>(c + 1));
    }
    first[0].want_last_column = true;
    first[0].want_last_column_state = true;
    cpu.run(first, {}, {});
    PassTask slice = whole;
    slice.col_begin = c;
    slice.top = Edge::Explicit;
    slice.top_h.clear();
    slice.top_f.clear();
    for (std::int64_t j = c; j <= e.n; ++j) {
        slice.top_h.push_back(clamp(top_value(whole, j, e.scheme.gap_open, e.scheme.gap_extend)));
        slice.top_f.push_back(clamp(top_f_value(whole, j)));
    }
    slice.left = Edge::Explicit;
    slice.left_h = first[0].last_col_h;
    slice.left_e = first[0].last_col_e;
    slice.left_f = first[0].last_col_f;
    slice.track_best = slice.local;
    slice.want_last_row = true;
    slice.want_last_column = true;
    slice.want_last_column_state = true;
    const std::int64_t r = whole.row_begin;
    slice.special_every = std::max<std::int64_t>(512, (e.m - r) / 4 / 512 * 512);
    slice.overview_rows = static_cast<int>(std::min<std::int64_t>(e.m - r, 24));
    slice.overview_cols = 16;
    slice.overview_col_offset = c;
    slice.overview_col_total = e.n;
    return slice;
}

// The tested runner's overview of rows r.. against the CPU's per-row grid
// (`rows` rows of `cols` columns), pooled over the tested runner's row blocks.
bool pooled_overview_matches(const PassTask& tested, const PassTask& cpu, std::int64_t rows, std::size_t cols) {
    bool same = true;
    for (std::size_t b = 0; b < tested.overview_row_edges.size(); ++b) {
        const std::int64_t lo = tested.overview_row_edges[b];
        const std::int64_t hi = b + 1 < tested.overview_row_edges.size() ? tested.overview_row_edges[b + 1] : rows + 1;
        for (std::size_t col = 0; col < cols; ++col) {
            Score expect = kNegInf;
            for (std::int64_t i = lo; i < hi; ++i)
                expect = std::max(expect, cpu.overview[static_cast<std::size_t>(i - 1) * cols + col]);
            same = same && tested.overview[b * cols + col] == expect;
        }
    }
    return same;
}

// One column-slice pass on the tested runner against the CPU runner: rows r..m
// and columns c..n of stage 1, its top edge row r (the CPU's, or stage 1's own
// top edge when r = 0), its left edge the last column (H, E, F) of a CPU pass
// over columns 0..c of the same rows. Compares the last row, the last column
// (H, E, F), the best cell, the special rows and the overview (binned as the
// whole pass's columns). Returns the failures, printed.
int explicit_left_round(const RunnerFactory& tested, std::mt19937_64& rng, int round) {
    const EdgeRound e = edge_round(rng, round, 1, "AC");
    const std::int64_t m = e.m, n = e.n;
    const std::int64_t r = round % 2 ? 0 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(m - 1));
    const std::int64_t c = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - 1));
    RoundFailures fail{"explicit-left round " + std::to_string(round) + " " + e.mode_text + " " + e.matrix + " " +
                       std::to_string(m) + "x" + std::to_string(n) + " rows " + std::to_string(r) + ".., columns " +
                       std::to_string(c) + ".."};
    auto cpu = make_cpu_pass_runner();
    cpu->prepare(e.eq.data(), m, e.et.data(), n, e.scheme);
    const PassTask slice = column_slice(*cpu, e, stage1_from_row(*cpu, e, r), c);

    std::vector<PassTask> on_cpu(1, slice);
    on_cpu[0].overview_rows = static_cast<int>(m - r);  // one block per row, pooled below
    cpu->run(on_cpu, {}, {});
    std::vector<std::int64_t> cpu_rows = cpu->saved_rows();
    std::vector<std::vector<Score>> cpu_h(cpu_rows.size()), cpu_f(cpu_rows.size());
    for (std::size_t k = 0; k < cpu_rows.size(); ++k) cpu->read_special_row(k, cpu_h[k], cpu_f[k]);
    auto gpu = tested();
    gpu->prepare(e.eq.data(), m, e.et.data(), n, e.scheme);
    std::vector<PassTask> on_gpu(1, slice);
    gpu->run(on_gpu, {}, {});
    const PassTask& x = on_cpu[0];
    const PassTask& g = on_gpu[0];
    if (g.last_h != x.last_h || g.last_f != x.last_f) fail("the last row differs");
    if (g.last_col_h != x.last_col_h) fail("the last column's H differs");
    if (g.last_col_e != x.last_col_e) fail("the last column's E differs");
    if (g.last_col_f != x.last_col_f) fail("the last column's F differs");
    if (x.track_best && !same_best(g.best, x.best)) fail("best " + best_text(g.best) + ", CPU " + best_text(x.best));
    if (gpu->saved_rows() != cpu_rows) {
        fail(std::to_string(gpu->saved_rows().size()) + " special rows, CPU " + std::to_string(cpu_rows.size()));
    } else {
        std::vector<Score> h, f;
        for (std::size_t k = 0; k < cpu_rows.size(); ++k) {
            gpu->read_special_row(k, h, f);
            if (h != cpu_h[k] || f != cpu_f[k]) fail("special row " + std::to_string(cpu_rows[k]) + " differs");
        }
    }
    const std::size_t C = static_cast<std::size_t>(std::min<std::int64_t>(slice.overview_cols, n));
    if (g.overview_row_edges.empty() || g.overview.size() != g.overview_row_edges.size() * C ||
        x.overview.size() != static_cast<std::size_t>(m - r) * C)
        fail("the overview has the wrong shape");
    else if (!pooled_overview_matches(g, x, m - r, C))
        fail("the overview differs");
    return fail.count;
}

// A runner that stops stage 1 (as a kill would) right after the pipeline has
// taken its first checkpoint.
class KilledAfterCheckpoint final : public PassRunner {
public:
    explicit KilledAfterCheckpoint(std::unique_ptr<PassRunner> inner) : inner_(std::move(inner)) {}
    void prepare(const std::uint8_t* q, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                 const ScoringScheme& s) override {
        inner_->prepare(q, m, t, n, s);
    }
    void run(std::vector<PassTask>& tasks, const JobContext& c, const PassProgress& p) override {
        for (PassTask& task : tasks)
            if (task.on_rows_done) {
                RowsDoneCallback pipeline = task.on_rows_done;
                task.on_rows_done = [pipeline](const RowsDone& d) {
                    pipeline(d);
                    throw Cancelled();
                };
            }
        inner_->run(tasks, c, p);
    }
    const std::vector<std::int64_t>& saved_rows() const override { return inner_->saved_rows(); }
    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        inner_->read_special_row(k, h, f);
    }
    std::int64_t max_band_rows() const override { return inner_->max_band_rows(); }
    std::string device() const override { return inner_->device(); }
    std::string kernel() const override { return inner_->kernel(); }

private:
    std::unique_ptr<PassRunner> inner_;
};

// Stage 1 killed after its first checkpoint on one runner and resumed on
// another (GPU -> GPU with other strategy and kernels, CPU -> GPU, GPU -> CPU):
// the reference's score and end, the CIGAR re-scores to the score.
int checkpoint_round(const RunnerFactory& gpu_strips, const RunnerFactory& gpu_other, std::mt19937_64& rng, int round) {
    const char* modes[] = {"local", "global", "semiglobal", "semiglobal:tb,te"};
    const std::string mode_text = modes[round % 4];
    AlignOptions align;
    const auto colon = mode_text.find(':');
    align.mode = parse_mode(mode_text.substr(0, colon));
    if (colon != std::string::npos) align.free_ends = FreeEndGaps::parse(mode_text.substr(colon + 1));
    const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
    const std::string q = random_residues(rng, "ACGT", 8000 + rng() % 8000);
    const std::string t = mutate(rng, q, "ACGT");
    const Alignment ref = align_reference(q, t, scheme, align);
    const RunnerFactory cpu = [] { return make_cpu_pass_runner(); };
    struct Leg {
        const char* name;
        const RunnerFactory* killed;
        const RunnerFactory* resumed;
    };
    const Leg legs[] = {{"gpu strips -> gpu other", &gpu_strips, &gpu_other},
                        {"cpu -> gpu", &cpu, &gpu_strips},
                        {"gpu -> cpu", &gpu_other, &cpu}};
    int failures = 0;
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("alignscope-long-selftest-" + std::to_string(::getpid()) + "-" + std::to_string(round)))
                                .string();
    for (const Leg& leg : legs) {
        const std::string what = "checkpoint round " + std::to_string(round) + " " + mode_text + " " +
                                 std::to_string(q.size()) + "x" + std::to_string(t.size()) + " " + leg.name;
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
        LongPairOptions o;
        o.align = align;
        o.min_band_rows = 512;  // the GPU's strips are 256 or 512 rows
        o.base_rows = 16;
        o.base_cells = 1024;
        o.checkpoint_dir = dir;
        o.checkpoint_every = 0;
        o.overview_size = round % 2 ? 32 : 0;
        try {
            KilledAfterCheckpoint killed((*leg.killed)());
            align_long(q, t, scheme, o, killed);
            ++failures;
            std::printf("FAIL %s: the killed run was not stopped\n", what.c_str());
            continue;
        } catch (const Cancelled&) {
        }
        o.resume = true;
        auto runner = (*leg.resumed)();
        LongPairStats stats;
        const Alignment got = align_long(q, t, scheme, o, *runner, {}, &stats);
        const std::int64_t path = rescore(got.cigar, q, t, got.query_begin, got.target_begin, scheme);
        const auto m = static_cast<std::int64_t>(q.size());
        if (got.score != ref.score || got.query_end != ref.query_end || got.target_end != ref.target_end ||
            path != got.score || stats.resumed_from_row <= 0 || stats.resumed_from_row >= m ||
            stats.stage_cells[0] != static_cast<std::uint64_t>(m - stats.resumed_from_row) * t.size()) {
            ++failures;
            std::printf(
                "FAIL %s: score %lld end %lld,%lld (rescored %lld), reference %lld end %lld,%lld; resumed from row "
                "%lld, "
                "stage-1 cells %llu\n",
                what.c_str(), static_cast<long long>(got.score), static_cast<long long>(got.query_end),
                static_cast<long long>(got.target_end), static_cast<long long>(path), static_cast<long long>(ref.score),
                static_cast<long long>(ref.query_end), static_cast<long long>(ref.target_end),
                static_cast<long long>(stats.resumed_from_row), static_cast<unsigned long long>(stats.stage_cells[0]));
        }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return failures;
}

// The command line: what to check, on which device and runner, and the bench lengths.
struct SelftestOptions {
    std::string device = "gpu:0", strategy = "strips", bench_list = "1000000";
    int rounds = 40, kernels_n = 0, streams_n = 0, overview = 0, checkpoint_rounds = -1, split = 0, split_slices = 0;
    long long split_block_rows = 0;
    bool check = true;
    std::size_t write_pair_length = 0;  // --write-pair L DIR
    std::filesystem::path write_pair_dir;
};

// Reads the flags; returns an exit status for an unknown option, else -1.
int parse_options(int argc, char** argv, SelftestOptions& o) {
    for (int k = 1; k < argc; ++k) {
        const std::string flag = argv[k];
        auto value = [&] {
            if (k + 1 >= argc) throw Error(flag + " needs a value");
            return std::string(argv[++k]);
        };
        if (flag == "--device") o.device = value();
        else if (flag == "--rounds")
            o.rounds = std::stoi(value());
        else if (flag == "--bench")
            o.bench_list = value();
        else if (flag == "--strategy")
            o.strategy = value();
        else if (flag == "--kernels")
            o.kernels_n = std::stoi(value());
        else if (flag == "--streams")
            o.streams_n = std::stoi(value());
        else if (flag == "--no-check")
            o.check = false;
        else if (flag == "--overview")
            o.overview = std::stoi(value());
        else if (flag == "--checkpoint-rounds")
            o.checkpoint_rounds = std::stoi(value());
        else if (flag == "--split")
            o.split = std::stoi(value());
        else if (flag == "--split-slices")
            o.split_slices = std::stoi(value());
        else if (flag == "--split-block-rows")
            o.split_block_rows = std::stoll(value());
        else if (flag == "--write-pair") {
            o.write_pair_length = std::stoull(value());
            o.write_pair_dir = value();
            return -1;
        } else {
            std::fprintf(stderr, "unknown option %s\n", flag.c_str());
            return 2;
        }
    }
    if (o.checkpoint_rounds < 0)
        o.checkpoint_rounds = std::max(1, o.rounds / 5);  // 8 by default, 1 under a sanitizer's --rounds 5
    return -1;
}

// The bench's pair of this length as FASTA, for align --long.
int write_pair(std::size_t L, const std::filesystem::path& dir) {
    std::mt19937_64 rng(L);
    const std::string q = random_residues(rng, "ACGT", L);
    const std::string t = mutate(rng, q, "ACGT");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    for (const auto& [name, s] : {std::pair<const char*, const std::string*>{"query", &q}, {"target", &t}}) {
        const std::filesystem::path path = dir / (std::string(name) + ".fa");
        std::ofstream out(path);
        out << '>' << name << " long-selftest pair " << L << '\n';
        for (std::size_t at = 0; at < s->size(); at += 80) out << s->substr(at, 80) << '\n';
        out.close();
        if (!out) {
            std::fprintf(stderr, "long-selftest: cannot write %s\n", path.string().c_str());
            return 1;
        }
        std::printf("%s: %zu residues\n", path.string().c_str(), s->size());
    }
    return 0;
}

// The runner under test: the device's, or on a device without one (CPU) the
// CPU pass runner itself; with --split, one pass split over several of them.
class TestedRunners {
public:
    TestedRunners(Backend& backend, const SelftestOptions& o) : backend_(backend), split_(o.split) {
        settings_.strategy = o.strategy;
        settings_.kernels = o.kernels_n;
        settings_.streams = o.streams_n;
        settings_.split_slices = o.split_slices;
        settings_.split_block_rows = o.split_block_rows;
        if (o.split == 1 || o.split < 0 || o.split_slices < 0 || o.split_block_rows < 0)
            throw Error("--split takes 2 or more runners; --split-slices and --split-block-rows 0 or more");
        has_runner_ = backend.make_long_runner(settings_) != nullptr;
        if (!has_runner_)
            std::printf("%s has no long-pair runner: checking the CPU pass runner against itself\n", o.device.c_str());
        if (split_ >= 2)
            std::printf("the runner under test: one pass split over %d runners of %s (%s)\n", split_, o.device.c_str(),
                        tested(settings_)->device().c_str());
    }

    const LongRunnerSettings& settings() const { return settings_; }

    std::unique_ptr<PassRunner> one(const LongRunnerSettings& s) const {
        return has_runner_ ? backend_.make_long_runner(s) : make_cpu_pass_runner();
    }

    std::unique_ptr<PassRunner> tested(const LongRunnerSettings& s) const {
        if (split_ < 2) return one(s);
        std::vector<std::unique_ptr<PassRunner>> members;
        for (int k = 0; k < split_; ++k) members.push_back(one(s));
        SplitSettings sp;
        sp.slices_per_member = std::max(1, s.split_slices);
        sp.block_rows = s.split_block_rows;
        return make_split_pass_runner(std::move(members), sp);
    }

private:
    Backend& backend_;
    LongRunnerSettings settings_;
    int split_ = 0;
    bool has_runner_ = false;
};

// Random pairs in every mode and scheme through align_long on the tested
// runner, against align_reference (score and end; the overview against the
// CPU's). Returns the failures, printed.
int random_pair_rounds(const TestedRunners& runners, std::mt19937_64& rng, int rounds) {
    struct Scheme {
        const char* matrix;
        double open, extend;
        const char* alphabet;
    };
    const Scheme schemes[] = {{"EDNAFULL", 10, 0.5, "ACGT"},
                              {"EDNAFULL", 4, 4, "ACGT"},
                              {"BLOSUM62", 11, 1, "ARNDCQEGHILKMFPSTWYV"},
                              {"EDNAFULL", 16, 4, "ACGTN"}};
    const char* modes[] = {"global", "local", "semiglobal", "semiglobal:qb,qe", "semiglobal:tb,te"};
    int failures = 0, checked = 0;
    std::string kernel;
    for (int round = 0; round < rounds; ++round) {
        const Scheme& sc = schemes[round % 4];
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin(sc.matrix), sc.open, sc.extend);
        const std::string mode_text = modes[(round / 4) % 5];
        AlignOptions align = parse_mode_text(mode_text);
        align.traceback = round % 7 != 3;
        const std::size_t len = round % 3 == 0 ? 1 + rng() % 300 : 2000 + rng() % 12000;
        std::string q = random_residues(rng, sc.alphabet, len);
        std::string t =
            round % 5 == 4 ? random_residues(rng, sc.alphabet, 1 + rng() % 9000) : mutate(rng, q, sc.alphabet);
        if (t.empty()) t = "A";
        if (round % 2) std::swap(q, t);
        LongPairOptions options;
        options.align = align;
        options.min_band_rows = 1;  // as many special rows as the runner's granularity allows
        options.base_rows = 16;
        options.base_cells = 1024;
        options.overview_size = round % 2 ? 48 : 0;
        auto runner = runners.tested(runners.settings());
        kernel = runner->kernel();
        LongPairStats stats;
        const Alignment got = align_long(q, t, scheme, options, *runner, {}, &stats);
        const Alignment ref = align_reference(q, t, scheme, align);
        ++checked;
        if (options.overview_size > 0 && !overview_matches(q, t, scheme, align, stats.overview)) {
            ++failures;
            std::printf("FAIL round %d %s %s %zux%zu: the stage-1 overview differs from the CPU's\n", round,
                        mode_text.c_str(), sc.matrix, q.size(), t.size());
        }
        if (got.score != ref.score || got.query_end != ref.query_end || got.target_end != ref.target_end) {
            ++failures;
            std::printf("FAIL round %d %s %s %zux%zu: score %lld end %lld,%lld; reference %lld end %lld,%lld\n", round,
                        mode_text.c_str(), sc.matrix, q.size(), t.size(), static_cast<long long>(got.score),
                        static_cast<long long>(got.query_end), static_cast<long long>(got.target_end),
                        static_cast<long long>(ref.score), static_cast<long long>(ref.query_end),
                        static_cast<long long>(ref.target_end));
        }
    }
    std::printf("check: %d pairs, %d failed (kernel %s)\n", checked, failures, kernel.c_str());
    return failures;
}

// Explicit top rows and what a running stage 1 reports, the column-slice
// passes of a split, then checkpoint and resume. Returns the failures.
int edge_and_resume_rounds(const TestedRunners& runners, std::mt19937_64& rng, int rounds) {
    const LongRunnerSettings& settings = runners.settings();
    int explicit_failures = 0;
    for (int round = 0; round < rounds; ++round)
        explicit_failures += explicit_top_round([&] { return runners.tested(settings); }, rng, round);
    std::printf("explicit top row: %d passes, %d failures\n", rounds, explicit_failures);
    int left_failures = 0;  // the column-slice passes of a split, on one runner
    for (int round = 0; round < rounds; ++round)
        left_failures += explicit_left_round([&] { return runners.one(settings); }, rng, round);
    std::printf("explicit left column: %d passes, %d failures\n", rounds, left_failures);
    LongRunnerSettings other = settings;  // resumed with another strategy and kernel count
    other.strategy = settings.strategy == "streams" ? "strips" : "streams";
    other.kernels = 3;
    other.streams = 2;
    int resume_failures = 0;
    for (int round = 0; round < rounds; ++round)
        resume_failures += checkpoint_round([&] { return runners.tested(settings); },
                                            [&] { return runners.tested(other); }, rng, round);
    std::printf("checkpoint and resume: %d pairs x 3 runner pairs, %d failures\n", rounds, resume_failures);
    return explicit_failures + left_failures + resume_failures;
}

// Stage-1 and end-to-end timings of long DNA pairs (local, score only, then
// with traceback).
void bench_long_pairs(const TestedRunners& runners, const std::string& bench_list, int overview) {
    std::stringstream lengths(bench_list);
    std::string item;
    std::printf("%10s %10s %-28s %12s %10s %10s %10s %8s %10s\n", "length", "score", "kernel", "stage1 GCUPS",
                "stage1 s", "score+beg s", "full s", "full/s1", "host GiB");
    while (std::getline(lengths, item, ',')) {
        const std::size_t L = std::stoull(item);
        std::mt19937_64 rng(L);
        const std::string q = random_residues(rng, "ACGT", L);
        const std::string t = mutate(rng, q, "ACGT");
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        for (int traceback = 0; traceback < 2; ++traceback) {
            LongPairOptions options;
            options.align.mode = AlignmentMode::Local;
            options.align.traceback = traceback == 1;
            options.overview_size = overview;
            auto runner = runners.tested(runners.settings());
            LongPairStats stats;
            const auto t0 = std::chrono::steady_clock::now();
            const Alignment a = align_long(q, t, scheme, options, *runner, {}, &stats);
            const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const double cells = static_cast<double>(q.size()) * static_cast<double>(t.size());
            std::printf(
                "%10zu %10lld %-28s %12.1f %10.3f %10s %10s %8s %10.2f   (stage2 %.3f s %llu cells, stage3 %.3f s "
                "%llu cells, %lld rows, %d levels)\n",
                L, static_cast<long long>(a.score), a.kernel.c_str(), cells / stats.stage_seconds[0] / 1e9,
                stats.stage_seconds[0], traceback ? "" : std::to_string(total).c_str(),
                traceback ? std::to_string(total).c_str() : "",
                traceback ? std::to_string(total / stats.stage_seconds[0]).c_str() : "", peak_rss_gib(),
                stats.stage_seconds[1], static_cast<unsigned long long>(stats.stage_cells[1]), stats.stage_seconds[2],
                static_cast<unsigned long long>(stats.stage_cells[2]), static_cast<long long>(stats.special_rows),
                stats.split_levels);
            std::fflush(stdout);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        SelftestOptions o;
        if (const int status = parse_options(argc, argv, o); status >= 0) return status;
        if (o.write_pair_length > 0 || !o.write_pair_dir.empty())
            return write_pair(o.write_pair_length, o.write_pair_dir);
        auto registry = make_cpu_registry();
        kernels::register_cuda_backends(*registry);
        Backend& backend = registry->select(o.device);
        std::printf("long-selftest on %s (%s)\n", backend.info().id.c_str(), backend.info().name.c_str());
        const TestedRunners runners(backend, o);
        int failures = 0;
        if (o.check) {
            std::mt19937_64 rng(20261121);
            failures += random_pair_rounds(runners, rng, o.rounds);
            failures += edge_and_resume_rounds(runners, rng, o.checkpoint_rounds);
        }
        bench_long_pairs(runners, o.bench_list, o.overview);
        return failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "long-selftest: %s\n", e.what());
        return 1;
    }
}
