// The long-pair pipeline (see long_pair.hpp): stage 1 forward pass with
// special rows, stage 2 goal-based reverse passes for the crossings, stage 3
// middle-row splits and full-matrix tracebacks of the small pieces, and the
// checkpoint session around stage 1. The stages' decisions (sizes, spacing,
// which cell, which column) are in long_plan.cpp, the tracebacks in
// long_traceback.cpp.
#include <alignscope/align/cigar.hpp>
#include <alignscope/align/linear_space.hpp>
#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/long_plan.hpp>
#include <alignscope/align/path_scorer.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include "dp_core.hpp"
#include "long_traceback.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <thread>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;
using Clock = std::chrono::steady_clock;

// The runner's kernel named in today's grammar with the job's mode and gap
// model (a runner's kernel runs every mode; its own name may be an older one);
// a name that is not a kernel's (several devices' kernels joined) stays as is.
std::string long_kernel_name(const std::string& runner_kernel, AlignmentMode mode, bool linear) {
    std::optional<KernelName> name = read_stored_kernel_name(runner_kernel);
    if (!name) return runner_kernel;
    name->mode = mode;
    name->linear = linear;
    return name->format();
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Edges of a forward pass leaving `p`, and of a reverse pass arriving at `p`.
void forward_edges(PassTask& t, const PathPoint& p) {
    t.top = p.in_gap ? Edge::Closed : Edge::Gap;
    t.left = p.in_gap ? Edge::GapContinue : Edge::Gap;
    t.corner_open = !p.in_gap;
}
void reverse_edges(PassTask& t, const PathPoint& p) {
    t.top = p.in_gap ? Edge::Closed : Edge::Gap;
    t.left = Edge::Gap;
    t.corner_open = !p.in_gap;
}

void check_input(std::string_view query, std::string_view target, const ScoringScheme& s) {
    if (query.empty()) throw Error("the query sequence is empty: nothing to align");
    if (target.empty()) throw Error("the target sequence is empty: nothing to align");
    if (s.gap_open < 0 || s.gap_extend < 0 || s.gap_extend > s.gap_open)
        throw Error("gap penalties must satisfy 0 <= extend <= open");
}

BestCell shifted_down(BestCell c, I64 rows) {
    if (c.score > kNegInf) c.i += rows;
    return c;
}
BestCell better_of(const BestCell& a, const BestCell& b) { return better_cell(b, a) ? b : a; }

}  // namespace

void check_explicit_edges(const PassTask& t) {
    const auto row = static_cast<std::size_t>(t.cols() + 1), column = static_cast<std::size_t>(t.rows() + 1);
    if (t.top == Edge::Explicit && (t.top_h.size() != row || t.top_f.size() != row))
        throw Error("internal error: long-pair pass with an explicit top row of the wrong length");
    if (t.left == Edge::Explicit &&
        (t.left_h.size() != column || t.left_e.size() != column || t.left_f.size() != column))
        throw Error("internal error: long-pair pass with an explicit left column of the wrong length");
}

std::int64_t pass_score_bound(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) {
    I64 top = 0;
    for (int v : scheme.matrix.scores()) top = std::max<I64>(top, std::abs(static_cast<I64>(v)));
    return top * std::min(m, n) + (m + n) * std::max<I64>(scheme.gap_extend, top) + 3 * I64{scheme.gap_open};
}

std::string passes_cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) {
    const I64 bound = pass_score_bound(m, n, scheme);
    if (bound < kPassScoreLimit) return {};
    return "the pair (" + std::to_string(m) + " x " + std::to_string(n) +
           " residues) could reach scores past the long-pair passes' 32-bit cells with this scheme (a bound of " +
           std::to_string(bound) + (scheme.scale == 2 ? " half-points" : "") + "; they hold less than 2^29)";
}

std::string PassRunner::cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) const {
    return passes_cannot_hold(m, n, scheme);
}

void PassRunner::read_special_row(std::size_t, std::vector<Score>&, std::vector<Score>&) {
    throw Error("the long-pair runner of " + device() + " cannot hand out its special rows, so it cannot checkpoint");
}

namespace {

// Where a resumed job's stage 1 starts from: the checkpoint's directory and
// the rows it holds (last_row 0: not resumed).
struct ResumedFrom {
    std::string dir;
    I64 first_row = 0, last_row = 0;
};

// One job as every stage sees it: the pair (letters and codes), the scheme,
// the options, the runner and the context, and the statistics they fill.
struct PipelineJob {
    PipelineJob(std::string_view query_, std::string_view target_, const ScoringScheme& scheme_,
                const LongPairOptions& options_, PassRunner& runner_, const JobContext& context_)
        : query(query_),
          target(target_),
          scheme(scheme_),
          options(options_),
          runner(runner_),
          context(context_),
          q(encode(query_, scheme_.matrix, "the query")),
          t(encode(target_, scheme_.matrix, "the target")),
          m(static_cast<I64>(q.size())),
          n(static_cast<I64>(t.size())),
          mode(options_.align.mode),
          local(mode == AlignmentMode::Local) {
        if (const std::string why = runner.cannot_hold(m, n, scheme); !why.empty()) throw Error(why);
    }

    std::string_view query, target;
    const ScoringScheme& scheme;
    const LongPairOptions& options;
    PassRunner& runner;
    const JobContext& context;
    const EncodedSequence q, t;
    const I64 m, n;
    const AlignmentMode mode;
    const bool local;
    LongPairStats stats;
};

// Progress of the whole job: stage 1 is the part of the matrix still to
// compute; stages 2 and 3 add a few percent.
class JobProgress {
public:
    JobProgress(const JobContext& context, std::uint64_t estimate) : context_(context), estimate_(estimate) {}
    void report(std::uint64_t cells_done) const {
        if (!context_.progress) return;
        Progress p;
        p.cells_done = std::min(done_before_ + cells_done, estimate_);
        p.cells_total = estimate_;
        p.items_total = 1;
        context_.progress(p);
    }
    // Cells of a finished stage: the next stage's reports count on from them.
    void add_done(std::uint64_t cells) { done_before_ += cells; }
    PassProgress pass() const {
        return [this](std::uint64_t cells, std::uint64_t) { report(cells); };
    }

private:
    const JobContext& context_;
    std::uint64_t estimate_;
    std::uint64_t done_before_ = 0;
};

// The checkpoint of a job's stage 1 (long_checkpoint.hpp) for the job's
// lifetime: started, or resumed and checked against the pair and the scheme
// before any work; written as special rows finish (the rows since the last
// one, then the manifest) when the schedule says so; removed after a
// successful job unless kept. A job that fails before its first checkpoint
// leaves no empty directory behind. Inactive without a directory.
class CheckpointSession {
public:
    CheckpointSession(const PipelineJob& job, ResumedFrom& resumed)
        : options_(job.options), m_(job.m), schedule_(job.options.checkpoint_every) {
        const LongPairOptions& options = job.options;
        if (options.resume && options.checkpoint_dir.empty())
            throw Error("--resume needs the checkpoint directory (--checkpoint DIR)");
        if (options.checkpoint_dir.empty()) return;
        if (!(options.checkpoint_every >= 0)) throw Error("the checkpoint interval must be 0 seconds or more");
        const CheckpointIdentity id =
            CheckpointIdentity::of(job.q.data(), job.m, job.t.data(), job.n, job.scheme, options.align);
        if (options.resume) {
            ckpt_.emplace(LongCheckpoint::resume(options.checkpoint_dir, id));
            resumed.dir = options.checkpoint_dir;
            resumed.first_row = ckpt_->state().rows.front();
            resumed.last_row = ckpt_->state().last_row();
        } else {
            ckpt_.emplace(LongCheckpoint::start(options.checkpoint_dir, id));
        }
        const CheckpointState& loaded = ckpt_->state();
        resumed_row_ = loaded.last_row();
        loaded_rows_ = loaded.rows.size();
        loaded_best_ = loaded.best;
        loaded_last_column_ = loaded.last_column;
    }
    ~CheckpointSession() {
        if (ckpt_ && std::uncaught_exceptions() > exceptions_) ckpt_->remove_empty_directory();
    }
    CheckpointSession(const CheckpointSession&) = delete;
    CheckpointSession& operator=(const CheckpointSession&) = delete;

    bool active() const { return ckpt_.has_value(); }
    // Stage 1 goes on below this row (0: from the top; m: it is done).
    I64 resumed_row() const { return resumed_row_; }
    std::size_t loaded_rows() const { return loaded_rows_; }
    const BestCell& loaded_best() const { return loaded_best_; }
    const BestCell& loaded_last_column() const { return loaded_last_column_; }
    // The rows saved so far, ascending (the loaded ones first).
    const std::vector<std::int64_t>& rows() const { return ckpt_->state().rows; }
    void read_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) const { ckpt_->read_row(k, h, f); }

    // How the overview of the rows above the pass is joined with the pass's:
    // the checkpoint's as it was loaded (later commits change the state).
    OverviewJoin overview_join(int grid_cols) const {
        OverviewJoin join;
        join.grid_cols = grid_cols;
        join.resumed_row = resumed_row_;
        if (ckpt_ && grid_cols > 0) {
            join.loaded_cols = ckpt_->state().overview_cols;
            join.loaded_edges = ckpt_->state().overview_row_edges;
            join.loaded_grid = ckpt_->state().overview;
        }
        return join;
    }

    bool due() const { return ckpt_ && schedule_.due(); }
    // Of the runner's special rows, those already in the checkpoint.
    std::size_t rows_written() const { return rows_written_; }

    // A checkpoint: the runner's special rows 0..special_rows-1 not yet
    // written, the last row m when given (stage 1 is done), then the manifest
    // with the best cells and the overview of rows 1..upto.
    void write(PassRunner& runner, std::size_t special_rows, const BestCell& best, const BestCell& last_column,
               const OverviewJoin& join, const std::vector<std::int64_t>& pass_edges,
               const std::vector<Score>& pass_grid, I64 upto, const PassTask* last_row, LongPairStats& stats) {
        const auto c0 = Clock::now();
        std::vector<Score> h, f;
        for (; rows_written_ < special_rows; ++rows_written_) {
            runner.read_special_row(rows_written_, h, f);
            ckpt_->add_row(runner.saved_rows()[rows_written_], h, f);
        }
        if (last_row) ckpt_->add_row(m_, last_row->last_h, last_row->last_f);
        std::vector<std::int64_t> edges;
        std::vector<Score> grid;
        join.join(pass_edges, pass_grid, upto, edges, grid);
        ckpt_->commit(best, last_column, join.grid_cols, edges, grid);
        ++stats.checkpoints;
        stats.checkpoint_seconds += seconds_since(c0);
        schedule_.written();
    }

    // After a successful job the checkpoint goes (unless asked to keep it).
    void finish() {
        if (ckpt_ && !options_.keep_checkpoint) ckpt_->remove_files();
    }

private:
    const LongPairOptions& options_;
    const I64 m_;
    std::optional<LongCheckpoint> ckpt_;
    CheckpointSchedule schedule_;
    int exceptions_ = std::uncaught_exceptions();
    I64 resumed_row_ = 0;
    std::size_t loaded_rows_ = 0;
    BestCell loaded_best_, loaded_last_column_;
    std::size_t rows_written_ = 0;
};

Stage1Inputs stage1_inputs(const PipelineJob& job, const CheckpointSession& session) {
    Stage1Inputs in;
    in.m = job.m;
    in.n = job.n;
    in.align = job.options.align;
    in.resumed_row = session.resumed_row();
    in.loaded_rows = session.loaded_rows();
    in.checkpointed = session.active();
    in.overview_size = job.options.overview_size;
    in.special_row_budget = job.options.special_row_budget;
    in.min_band_rows = job.options.min_band_rows;
    in.row_bytes = job.runner.special_row_bytes(job.n);
    in.band_cap = job.runner.max_band_rows();
    in.device = job.runner.device();
    return in;
}

// What stage 1 leaves, in forward coordinates: the best cell (local), the
// best cell of the last column (semi-global, free target end), the last row,
// and the overview of the whole matrix (when asked for).
struct Stage1Result {
    BestCell best_cell, last_column;
    std::vector<Score> bottom_h;
    std::vector<std::int64_t> overview_edges;
    std::vector<Score> overview_grid;
    std::uint64_t cells = 0;
};

// ---- Stage 1: one forward pass below the checkpoint's last row (if any),
// checkpointed as its special rows finish.
Stage1Result run_stage1(PipelineJob& job, Stage1Plan& plan, CheckpointSession& session, const OverviewJoin& join,
                        const JobProgress& progress) {
    Stage1Result out;
    out.best_cell = session.loaded_best();
    out.last_column = session.loaded_last_column();
    const I64 r0 = session.resumed_row();
    if (!plan.runs) {  // the checkpoint holds all of stage 1
        std::vector<Score> f;
        session.read_row(session.loaded_rows() - 1, out.bottom_h, f);
        join.join({}, {}, job.m, out.overview_edges, out.overview_grid);
        return out;
    }
    std::vector<PassTask> tasks(1);
    tasks[0] = std::move(plan.pass);
    PassTask& s1 = tasks[0];
    if (s1.top == Edge::Explicit) session.read_row(session.loaded_rows() - 1, s1.top_h, s1.top_f);
    if (session.active())
        s1.on_rows_done = [&](const RowsDone& d) {
            if (!session.due() || d.special_rows <= session.rows_written()) return;
            static const std::vector<std::int64_t> no_edges;
            static const std::vector<Score> no_grid;
            session.write(job.runner, d.special_rows, better_of(out.best_cell, shifted_down(d.best, r0)),
                          better_of(out.last_column, shifted_down(d.last_column, r0)), join,
                          d.overview_row_edges ? *d.overview_row_edges : no_edges, d.overview ? *d.overview : no_grid,
                          r0 + d.row, nullptr, job.stats);
        };
    job.runner.run(tasks, job.context, progress.pass());
    out.best_cell = better_of(out.best_cell, shifted_down(s1.best, r0));
    if (s1.want_last_column)
        for (I64 i = 1; i <= s1.rows(); ++i)
            out.last_column =
                better_of(out.last_column, BestCell{s1.last_col_h[static_cast<std::size_t>(i)], r0 + i, job.n});
    out.bottom_h = s1.last_h;
    join.join(s1.overview_row_edges, s1.overview, job.m, out.overview_edges, out.overview_grid);
    if (session.due())  // stage 1 done: with the last row, a later resume starts at stage 2
        session.write(job.runner, job.runner.saved_rows().size(), out.best_cell, out.last_column, join,
                      s1.overview_row_edges, s1.overview, job.m, &s1, job.stats);
    out.cells = s1.cells;
    return out;
}

// A special row for stage 2: the checkpoint's (loaded_index) or the runner's
// (runner_index, an index into saved_rows()); the other index is -1.
struct CrossingRow {
    I64 row;
    int runner_index, loaded_index;
};

// The special rows: the checkpoint's (rows 1..r0, not the last row m) and the
// runner's (below r0, when stage 1 ran).
std::vector<CrossingRow> crossing_rows(const CheckpointSession& session, const PassRunner& runner, bool ran, I64 m) {
    std::vector<CrossingRow> rows;
    for (std::size_t k = 0; k < session.loaded_rows(); ++k)
        if (session.rows()[k] < m) rows.push_back({session.rows()[k], -1, static_cast<int>(k)});
    if (ran)
        for (std::size_t k = 0; k < runner.saved_rows().size(); ++k)
            rows.push_back({runner.saved_rows()[k], static_cast<int>(k), -1});
    return rows;
}

void record_overview(LongPairStats& stats, const PipelineJob& job, int grid_cols, const Stage1Result& s1) {
    if (s1.overview_grid.empty()) return;
    stats.overview.rows = job.m;
    stats.overview.cols = job.n;
    stats.overview.grid_cols = grid_cols;
    stats.overview.row_edges = s1.overview_edges;
    stats.overview.max_h = s1.overview_grid;
}

// What stage 2 leaves: the segments between consecutive crossings in path
// order, the path's begin, and a leading gap along row 0 from the corner.
struct Stage2Result {
    std::vector<PathSegment> segments;
    PathPoint start;
    I64 leading_d = 0;
};

// Band k's goal search: the reverse pass from `cur` up to special row k
// (row 0 when k < 0), stopping at the first crossing worth `goal`.
PassTask crossing_band(const PipelineJob& job, const CheckpointSession& session, const std::vector<CrossingRow>& rows,
                       int k, I64 r, const PathPoint& cur, I64 goal, Edge top) {
    PassTask p;
    p.reversed = true;
    p.row_begin = r;
    p.row_end = cur.i;
    p.col_begin = 0;
    p.col_end = cur.j;
    reverse_edges(p, cur);
    p.goal_search = true;
    p.goal = static_cast<Score>(goal);
    p.goal_any_cell = job.local;
    if (k < 0) {
        p.crossing_row = kRowZero;
    } else if (rows[static_cast<std::size_t>(k)].runner_index >= 0) {
        p.crossing_row = rows[static_cast<std::size_t>(k)].runner_index;
    } else {  // a row of the checkpoint
        p.crossing_row = kExplicitRow;
        session.read_row(static_cast<std::size_t>(rows[static_cast<std::size_t>(k)].loaded_index), p.crossing_h,
                         p.crossing_f);
    }
    p.crossing_edge = top;
    p.want_last_column = job.mode == AlignmentMode::SemiGlobal && job.options.align.free_ends.target_begin;
    return p;
}

// ---- Stage 2: crossings of the special rows from the end upwards, one band
// at a time, each anchored at the crossing below it.
Stage2Result run_stage2(PipelineJob& job, const CheckpointSession& session, const std::vector<CrossingRow>& rows,
                        const EndCell& end, Edge top) {
    Stage2Result out;
    if (job.mode == AlignmentMode::Global && !job.options.align.traceback) return out;  // begins at the corner
    PathPoint cur{end.i, end.j, false};
    I64 goal = end.score;
    std::vector<std::int64_t> saved;
    for (const CrossingRow& c : rows) saved.push_back(c.row);
    int k = static_cast<int>(std::upper_bound(saved.begin(), saved.end(), end.i - 1) - saved.begin()) - 1;
    for (bool found_start = false; !found_start; --k) {
        job.context.throw_if_cancelled();
        const I64 r = k >= 0 ? saved[static_cast<std::size_t>(k)] : 0;
        std::vector<PassTask> band;
        band.push_back(crossing_band(job, session, rows, k, r, cur, goal, top));
        const PassTask& p = band[0];
        job.runner.run(band, job.context, {});
        job.stats.stage_cells[1] += p.cells;
        const GoalHit hit =
            p.want_last_column ? with_free_column_begin(p.hit, p.last_col_h, p.rows(), p.cols(), goal) : p.hit;
        if (!hit.found)
            throw Error("internal error in the long-pair pipeline: no crossing of row " + std::to_string(r) +
                        " reaches the score " + std::to_string(goal));
        const PathPoint at{cur.i - hit.i, cur.j - hit.j, hit.kind == GoalHit::Kind::CrossF};
        if (hit.kind == GoalHit::Kind::Begin) {
            out.segments.push_back({at, cur, goal});
            out.start = at;
            break;
        }
        const I64 prefix = hit.kind == GoalHit::Kind::CrossF ? hit.forward_f : hit.forward_h;
        out.segments.push_back({at, cur, goal - prefix});
        cur = at;
        goal = prefix;
        ++job.stats.crossings;
        if (k < 0) {  // row 0: the path starts on it
            if (hit.kind != GoalHit::Kind::CrossH)
                throw Error("internal error in the long-pair pipeline: a gap crosses row 0");
            if (top == Edge::Zero) {
                out.start = at;
            } else {  // a leading gap along row 0 from the corner
                out.leading_d = at.j;
                out.start = {0, 0, false};
            }
            found_start = true;
        }
    }
    std::reverse(out.segments.begin(), out.segments.end());
    return out;
}

// One level of stage 3: for every big segment, a forward pass over its top
// half and a reverse pass over its bottom half (tasks 2b and 2b + 1).
std::vector<PassTask> split_level_tasks(const std::vector<PathSegment>& segments, const std::vector<std::size_t>& big) {
    std::vector<PassTask> level(big.size() * 2);
    for (std::size_t b = 0; b < big.size(); ++b) {
        const PathSegment& sg = segments[big[b]];
        const I64 mid = middle_row(sg);
        PassTask& f = level[2 * b];
        f.row_begin = sg.from.i;
        f.row_end = mid;
        f.col_begin = sg.from.j;
        f.col_end = sg.to.j;
        forward_edges(f, sg.from);
        f.want_last_row = true;
        PassTask& r = level[2 * b + 1];
        r.reversed = true;
        r.row_begin = mid;
        r.row_end = sg.to.i;
        r.col_begin = sg.from.j;
        r.col_end = sg.to.j;
        reverse_edges(r, sg.to);
        r.want_last_row = true;
    }
    return level;
}

// The segments after a level: each big one replaced by its halves at its
// middle crossing, which must be worth what the level above said.
std::vector<PathSegment> split_at_crossings(const std::vector<PathSegment>& segments,
                                            const std::vector<std::size_t>& big, const std::vector<PassTask>& level,
                                            I64 refund, LongPairStats& stats) {
    std::vector<PathSegment> next;
    next.reserve(segments.size() + big.size());
    std::size_t b = 0;
    for (std::size_t x = 0; x < segments.size(); ++x) {
        if (b >= big.size() || big[b] != x) {
            next.push_back(segments[x]);
            continue;
        }
        const PathSegment& sg = segments[x];
        const PassTask& f = level[2 * b];
        const PassTask& r = level[2 * b + 1];
        stats.stage_cells[2] += f.cells + r.cells;
        ++b;
        const MiddleCrossing mid = best_middle_crossing(sg, f.last_h, f.last_f, r.last_h, r.last_f, refund);
        if (mid.score != sg.score)
            throw Error("internal error in the long-pair pipeline: the split of rows " + std::to_string(sg.from.i) +
                        ".." + std::to_string(sg.to.i) + " scores " + std::to_string(mid.score) + ", expected " +
                        std::to_string(sg.score));
        next.push_back({sg.from, mid.at, mid.prefix});
        next.push_back({mid.at, sg.to, sg.score - mid.prefix});
    }
    return next;
}

// Stage 3's splits: every segment in its middle row, a level at a time (one
// runner call each), until all are small.
void split_segments(PipelineJob& job, std::vector<PathSegment>& segments) {
    const SegmentLimits limits{job.options.base_rows, job.options.base_cells};
    const I64 refund = job.scheme.gap_open - job.scheme.gap_extend;
    for (;;) {
        std::vector<std::size_t> big;
        for (std::size_t x = 0; x < segments.size(); ++x)
            if (!limits.small(segments[x])) big.push_back(x);
        if (big.empty()) break;
        job.context.throw_if_cancelled();
        ++job.stats.split_levels;
        std::vector<PassTask> level = split_level_tasks(segments, big);
        job.runner.run(level, job.context, {});
        segments = split_at_crossings(segments, big, level, refund, job.stats);
    }
}

// Stage 3's end with a sink: the header, a leading gap, then the tracebacks
// in path order, checked as the columns go.
void stream_path(PipelineJob& job, Alignment& a, const Stage2Result& s2, unsigned workers, Clock::time_point t0) {
    AlignmentSink& sink = *job.options.sink;
    sink.begin(a.without_path());
    PathScorer scorer(job.query, job.target, a.query_begin, a.target_begin, job.scheme);
    if (s2.leading_d > 0) {
        const CigarOp lead{'D', static_cast<std::uint32_t>(s2.leading_d)};
        scorer.push(lead.op, lead.length);
        a.cigar.push(lead.op, lead.length);
        sink.columns(std::span<const CigarOp>(&lead, 1));
        ++job.stats.streamed_pieces;
    }
    const std::size_t window =
        job.options.sink_window > 0 ? static_cast<std::size_t>(job.options.sink_window) : std::size_t{8} * workers;
    job.stats.stream_window = static_cast<int>(window);
    stream_tracebacks(s2.segments, job.q.data(), job.t.data(), job.scheme, workers, window, job.context, a, scorer,
                      sink, job.stats);
    job.stats.stage_seconds[2] = seconds_since(t0);
    finish_streamed_path(a, scorer, "the long-pair pipeline");
    sink.end(a);
}

// Stage 3's end in memory: the whole CIGAR, the aligned text, and the
// re-scoring check.
void build_path(PipelineJob& job, Alignment& a, const Stage2Result& s2, unsigned workers, Clock::time_point t0) {
    const std::vector<std::vector<char>> pieces =
        trace_segments(s2.segments, job.q.data(), job.t.data(), job.scheme, workers, job.context);
    if (s2.leading_d > 0) a.cigar.push('D', static_cast<std::uint32_t>(s2.leading_d));
    for (const std::vector<char>& piece : pieces)
        for (char op : piece) a.cigar.push(op);
    job.stats.stage_seconds[2] = seconds_since(t0);
    complete_alignment(a, job.query, job.target, job.scheme);
    const std::int64_t path_score = rescore(a.cigar, job.query, job.target, a.query_begin, a.target_begin, job.scheme);
    if (path_score != a.score)
        throw Error("internal error in the long-pair pipeline: the alignment re-scores to " +
                    std::to_string(path_score) + ", the DP said " + std::to_string(a.score));
}

// ---- Stage 3: the segments split until small, then traced back on CPU
// threads into the alignment or to the sink.
void run_stage3(PipelineJob& job, Alignment& a, Stage2Result& s2) {
    const auto t0 = Clock::now();
    split_segments(job, s2.segments);
    job.stats.base_segments = static_cast<I64>(s2.segments.size());
    const LongPairOptions& options = job.options;
    unsigned workers =
        options.threads > 0 ? static_cast<unsigned>(options.threads) : std::thread::hardware_concurrency();
    workers = std::max(1u, std::min<unsigned>(workers, static_cast<unsigned>(s2.segments.size())));
    if (options.sink) stream_path(job, a, s2, workers, t0);
    else
        build_path(job, a, s2, workers, t0);
}

// The alignment before stage 2: what ran, on which device.
Alignment alignment_header(PipelineJob& job) {
    Alignment a;
    a.mode = job.mode;
    a.query_length = job.m;
    a.target_length = job.n;
    a.device = job.runner.device();
    a.kernel = long_kernel_name(job.runner.kernel(), job.mode, job.scheme.linear());
    job.stats.strategy = job.runner.strategy();
    return a;
}

}  // namespace

static Alignment run_pipeline(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                              const LongPairOptions& options, PassRunner& runner, const JobContext& context,
                              LongPairStats* stats_out, ResumedFrom& resumed);

// The pipeline checks itself as it goes (stage 2 finds a crossing of every
// special row, each stage-3 split scores what the level above said, the path
// re-scores to the score). A resumed job builds on the checkpoint's rows, and
// a checkpoint whose checksums are right can still hold values that are not
// this job's (long_checkpoint.cpp refuses those it can tell cheaply): when
// those checks fail after a resume, the checkpoint is named, not the pipeline.
Alignment align_long(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                     const LongPairOptions& options, PassRunner& runner, const JobContext& context,
                     LongPairStats* stats_out) {
    ResumedFrom resumed;
    try {
        return run_pipeline(query, target, scheme, options, runner, context, stats_out, resumed);
    } catch (const Error& e) {
        static constexpr std::string_view kOwn = "internal error in the long-pair ";
        const std::string_view what = e.what();
        if (resumed.last_row <= 0 || what.substr(0, kOwn.size()) != kOwn) throw;
        const auto colon = what.find(": ");
        const std::string detail(colon == std::string_view::npos ? what : what.substr(colon + 2));
        throw Error("the checkpoint in " + resumed.dir + " does not match this job: its stage-1 state for rows " +
                    std::to_string(resumed.first_row) + ".." + std::to_string(resumed.last_row) +
                    " is inconsistent with the sequences and the scoring (" + detail +
                    "; its checksums are right, its values are not this job's: written by another program, or edited); "
                    "delete it or run without --resume");
    }
}

static Alignment run_pipeline(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                              const LongPairOptions& options, PassRunner& runner, const JobContext& context,
                              LongPairStats* stats_out, ResumedFrom& resumed) {
    check_input(query, target, scheme);
    PipelineJob job(query, target, scheme, options, runner, context);
    CheckpointSession session(job, resumed);
    const I64 m = job.m, n = job.n;
    job.stats.resumed_from_row = session.resumed_row();
    runner.prepare(job.q.data(), m, job.t.data(), n, scheme);
    const std::uint64_t matrix = static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(n);
    JobProgress progress(context,
                         static_cast<std::uint64_t>(m - session.resumed_row()) * static_cast<std::uint64_t>(n) +
                             matrix / 8);

    auto t0 = Clock::now();
    Stage1Plan plan = plan_stage1(stage1_inputs(job, session));
    const OverviewJoin join = session.overview_join(plan.overview_cols);
    const Stage1Result s1 = run_stage1(job, plan, session, join, progress);
    job.stats.stage_cells[0] = s1.cells;
    job.stats.stage_seconds[0] = seconds_since(t0);
    const std::vector<CrossingRow> rows = crossing_rows(session, runner, plan.runs, m);
    job.stats.special_rows = static_cast<I64>(rows.size());
    record_overview(job.stats, job, plan.overview_cols, s1);
    progress.add_done(s1.cells);

    const EndCell end = choose_end(options.align, m, n, s1.best_cell, s1.bottom_h, s1.last_column);
    Alignment a = alignment_header(job);
    if (job.local && end.score <= 0) {  // the empty local alignment
        if (options.sink) {
            options.sink->begin(a);
            options.sink->end(a);
        }
        session.finish();
        if (stats_out) *stats_out = job.stats;
        return a;
    }
    a.score = end.score;
    a.query_end = end.i;
    a.target_end = end.j;

    t0 = Clock::now();
    Stage2Result s2 = run_stage2(job, session, rows, end, plan.top);
    job.stats.stage_seconds[1] = seconds_since(t0);
    progress.add_done(job.stats.stage_cells[1]);
    a.query_begin = s2.start.i + 1;
    a.target_begin = s2.start.j + 1;

    if (options.align.traceback) {
        run_stage3(job, a, s2);
    } else if (options.sink) {  // no path asked for: the header is all there is
        options.sink->begin(a);
        options.sink->end(a);
    }
    progress.report(job.stats.stage_cells[2]);
    session.finish();
    if (stats_out) *stats_out = job.stats;
    return a;
}

namespace {

// A checkpointed job on a CPU backend runs on the scalar pass runner, then
// reports the backend as its device: the sink sees that device too.
class DeviceSink final : public AlignmentSink {
public:
    DeviceSink(AlignmentSink& inner, std::string device) : inner_(inner), device_(std::move(device)) {}
    void begin(const Alignment& header) override {
        Alignment h = header;
        h.device = device_;
        inner_.begin(h);
    }
    void columns(std::span<const CigarOp> runs) override { inner_.columns(runs); }
    void end(const Alignment& a) override {
        Alignment b = a;  // its CIGAR: this path is a CPU backend's checkpointed job only
        b.device = device_;
        inner_.end(b);
    }

private:
    AlignmentSink& inner_;
    std::string device_;
};

// A CIGAR made whole by Myers-Miller, handed to a sink in chunks of runs
// through the same check as the pipeline's stage 3 (the aligned text is never
// built).
void stream_cigar(Alignment& a, std::string_view query, std::string_view target, const ScoringScheme& scheme,
                  AlignmentSink& sink, const JobContext& context, LongPairStats& stats) {
    sink.begin(a.without_path());
    if (!a.cigar.empty()) {
        PathScorer scorer(query, target, a.query_begin, a.target_begin, scheme);
        const std::vector<CigarOp>& ops = a.cigar.ops();
        constexpr std::size_t kChunk = 4096;
        for (std::size_t k = 0; k < ops.size(); k += kChunk) {
            context.throw_if_cancelled();
            const std::size_t n = std::min(kChunk, ops.size() - k);
            for (std::size_t x = k; x < k + n; ++x) scorer.push(ops[x].op, ops[x].length);
            sink.columns(std::span<const CigarOp>(ops.data() + k, n));
            ++stats.streamed_pieces;
        }
        finish_streamed_path(a, scorer, "the linear-space aligner");
    }
    sink.end(a);
}

}  // namespace

namespace {

// A forced kernel named in the grammar must be one of this job's mode and gap
// model (the runner checks the rest: which kernels it has).
void check_forced_kernel(const LongRunnerSettings& settings, const LongPairOptions& options,
                         const ScoringScheme& scheme) {
    if (const auto forced = KernelName::try_parse(settings.kernel);
        forced && (forced->mode != options.align.mode || forced->linear != scheme.linear()))
        throw Error::about("kernel",
                           "'" + settings.kernel + "' is a kernel for " + std::string(to_string(forced->mode)) +
                               (forced->linear ? " linear" : " affine") + " alignment, but the job is " +
                               std::string(to_string(options.align.mode)) + (scheme.linear() ? " linear" : " affine"));
}

// A job on the 64-bit path keeps no checkpoint, and none of it can exist (no
// pipeline can hold it): with --resume, a checkpoint found in the directory
// is another job's, refused with what differs as resuming it would be.
void refuse_checkpoint_to_resume(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                                 const LongPairOptions& options) {
    if (!options.resume || options.checkpoint_dir.empty()) return;
    const std::filesystem::path manifest = std::filesystem::path(options.checkpoint_dir) / kCheckpointManifest;
    std::error_code ec;
    if (!std::filesystem::exists(manifest, ec)) return;
    const EncodedSequence q = encode(query, scheme.matrix, "the query");
    const EncodedSequence t = encode(target, scheme.matrix, "the target");
    const CheckpointIdentity id = CheckpointIdentity::of(q.data(), static_cast<I64>(q.size()), t.data(),
                                                         static_cast<I64>(t.size()), scheme, options.align);
    static constexpr const char* kWhy =
        "; this job runs in 64-bit linear space, which keeps no checkpoint: delete it or run without --resume";
    try {
        (void)LongCheckpoint::resume(options.checkpoint_dir, id);
    } catch (const Cancelled&) {
        throw;
    } catch (const Error& e) {
        throw Error(std::string(e.what()) + kWhy);
    }
    throw Error("checkpoint: " + manifest.string() +
                " names this pair and scheme, which the long-pair passes cannot hold, so no long-pair job wrote it" +
                kWhy);
}

// The 64-bit path: Myers-Miller in linear space on the CPU, progress in cells;
// on the timeline as one CPU event when it stands in for a pipeline.
Alignment align_linear_on(Backend& backend, std::string_view query, std::string_view target,
                          const ScoringScheme& scheme, const LongPairOptions& options, const LongRoute& route,
                          const JobContext& context, LongPairStats* stats) {
    const auto total = static_cast<std::uint64_t>(query.size()) * static_cast<std::uint64_t>(target.size());
    std::function<void(std::uint64_t)> cells;
    if (context.progress || context.cancel)
        cells = [&](std::uint64_t done) {
            context.throw_if_cancelled();
            if (context.progress) {
                Progress p;
                p.cells_done = std::min(done, total);
                p.cells_total = total;
                p.items_total = 1;
                context.progress(p);
            }
        };
    const auto t0 = Clock::now();
    const std::int64_t start_ns = steady_now_ns();
    Alignment a;
    LongPairStats streamed;
    if (options.sink) {
        // align_linear_space without the aligned text: the CIGAR goes to the sink.
        detail::CellCounter counter(&cells);
        a = detail::align_pair(query, target, scheme, options.align, 0, counter, /*complete=*/false);
        a.device = backend.info().id;
        stream_cigar(a, query, target, scheme, *options.sink, context, streamed);
    } else {
        a = align_linear_space(query, target, scheme, options.align, cells);
        a.device = backend.info().id;
    }
    if (!route.wider_reason.empty() && context.timeline) {
        TimelineEvent event;
        event.name = a.kernel;
        event.category = "cpu";
        event.device = a.device + " host";
        event.start_ns = start_ns;
        event.end_ns = steady_now_ns();
        event.cells = total;
        context.timeline->record(std::move(event));
    }
    if (stats) {
        *stats = LongPairStats{};
        stats->strategy = "linear-space";
        stats->wider_path = route.wider_reason;
        stats->stage_seconds[0] = seconds_since(t0);
        stats->stage_cells[0] = total;
        stats->streamed_pieces = streamed.streamed_pieces;
    }
    return a;
}

}  // namespace

LongRoute route_long_pair(Backend& backend, std::string_view query, std::string_view target,
                          const ScoringScheme& scheme, const LongPairOptions& options,
                          const LongRunnerSettings& settings) {
    const auto m = static_cast<I64>(query.size()), n = static_cast<I64>(target.size());
    check_forced_kernel(settings, options, scheme);
    if (options.resume && options.checkpoint_dir.empty())
        throw Error("--resume needs the checkpoint directory (--checkpoint DIR)");
    LongRoute route;
    route.checkpointed = !options.checkpoint_dir.empty() || options.resume;
    route.kernel = KernelName{options.align.mode, scheme.linear(), options.align.traceback ? "myersmiller" : "scalar",
                              0, KernelWidth::S64}
                       .format();
    const std::optional<KernelName> forced = KernelName::try_parse(settings.kernel);
    const bool forced_wide = forced && forced->family == "myersmiller" && forced->width == KernelWidth::S64;
    LongRunnerSettings runner_settings = settings;
    if (forced_wide) runner_settings.kernel.clear();  // a runner's kernels are strip kernels
    std::unique_ptr<PassRunner> runner = backend.make_long_runner(runner_settings);
    if (runner && forced_wide) {
        route.wider_reason = "the kernel " + settings.kernel + " is forced (--kernel)";
        refuse_checkpoint_to_resume(query, target, scheme, options);
        return route;
    }
    LongRoute::Path meant = LongRoute::Path::Runner;
    if (!runner && route.checkpointed) {
        // Checkpoints live in the pass pipeline: on a CPU backend it runs on the
        // scalar pass runner (slower than Myers-Miller's SIMD passes).
        runner = make_cpu_pass_runner();
        meant = LongRoute::Path::CpuPasses;
    }
    if (!runner) return route;  // a CPU backend's own path
    std::string why = runner->cannot_hold(m, n, scheme);
    if (why.empty()) {
        route.path = meant;
        route.runner = std::move(runner);
        route.kernel.clear();
        return route;
    }
    if (meant == LongRoute::Path::Runner && !settings.kernel.empty())
        throw Error::about("kernel", "'" + settings.kernel + "' cannot hold this pair: " + why +
                                         "; without --kernel it is aligned on the CPU in 64-bit linear space");
    route.wider_reason = std::move(why);
    refuse_checkpoint_to_resume(query, target, scheme, options);
    return route;
}

Alignment align_long_on(Backend& backend, std::string_view query, std::string_view target, const ScoringScheme& scheme,
                        const LongPairOptions& options, const LongRunnerSettings& settings, const JobContext& context,
                        LongPairStats* stats) {
    LongRoute route = route_long_pair(backend, query, target, scheme, options, settings);
    switch (route.path) {
        case LongRoute::Path::Runner: return align_long(query, target, scheme, options, *route.runner, context, stats);
        case LongRoute::Path::CpuPasses: {
            std::optional<DeviceSink> device_sink;
            LongPairOptions with_device = options;
            if (options.sink) with_device.sink = &device_sink.emplace(*options.sink, backend.info().id);
            Alignment a = align_long(query, target, scheme, with_device, *route.runner, context, stats);
            a.device = backend.info().id;
            return a;
        }
        case LongRoute::Path::LinearSpace: break;
    }
    return align_linear_on(backend, query, target, scheme, options, route, context, stats);
}

}  // namespace alignscope::longpair
