// The long-pair pipeline (see long_pair.hpp): stage 1 forward pass with
// special rows, stage 2 goal-based reverse passes for the crossings, stage 3
// middle-row splits and full-matrix tracebacks of the small pieces.
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/align/linear_space.hpp>
#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/path_scorer.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>

#include "dp_core.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace alignscope::longpair {
namespace {

using I64 = std::int64_t;
using Clock = std::chrono::steady_clock;
constexpr I64 kNoPath = kNegInf / 2;  // a value below this means "no path"

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

// A point the optimal path passes through (forward DP indices); in_gap: it
// arrives there inside a vertical gap ('I' run) that goes on below.
struct Point {
    I64 i = 0, j = 0;
    bool in_gap = false;
};

// The path from `from` to `to`, worth `score` (`to`'s forward value minus `from`'s).
struct Segment {
    Point from, to;
    I64 score = 0;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Edges of a forward pass leaving `p`, and of a reverse pass arriving at `p`.
void forward_edges(PassTask& t, const Point& p) {
    t.top = p.in_gap ? Edge::Closed : Edge::Gap;
    t.left = p.in_gap ? Edge::GapContinue : Edge::Gap;
    t.corner_open = !p.in_gap;
}
void reverse_edges(PassTask& t, const Point& p) {
    t.top = p.in_gap ? Edge::Closed : Edge::Gap;
    t.left = Edge::Gap;
    t.corner_open = !p.in_gap;
}

// Full-matrix traceback of a small segment, with its boundary states: a start
// inside a gap continues it (first 'I' costs extend), an end inside a gap must
// arrive by 'I'. Returns the operations in path order and checks the score.
void traceback_segment(const Segment& seg, const std::uint8_t* q, const std::uint8_t* t, const ScoringScheme& s,
                       std::vector<char>& ops) {
    const I64 h = seg.to.i - seg.from.i, w = seg.to.j - seg.from.j;
    if (h < 0 || w < 0) throw Error("internal error in the long-pair pipeline: a segment runs backwards");
    const I64 open = s.gap_open, extend = s.gap_extend;
    const auto W = static_cast<std::size_t>(w + 1);
    // Direction bits per cell: H source (0 diag, 1 E, 2 F) in bits 0-1; E came
    // from E (extend) in bit 2; F came from F in bit 3.
    std::vector<std::uint8_t> dir(static_cast<std::size_t>(h + 1) * W, 0);
    std::vector<I64> H(W);
    const bool start_gap = seg.from.in_gap;
    H[0] = start_gap ? kNegInf : 0;
    for (I64 j = 1; j <= w; ++j) {
        H[static_cast<std::size_t>(j)] = start_gap ? kNegInf : -(open + (j - 1) * extend);
        dir[static_cast<std::size_t>(j)] = 1 | (j > 1 ? 4 : 0);
    }
    std::vector<I64> Fcol(W, kNegInf);  // F of the row above, per column
    I64 final_f = kNegInf;
    for (I64 i = 1; i <= h; ++i) {
        const int a = q[seg.from.i + i - 1];
        I64 diag = H[0];
        // Column 0: a vertical gap from the corner.
        const I64 f0 = start_gap ? -(i * extend) : -(open + (i - 1) * extend);
        H[0] = f0;
        Fcol[0] = f0;
        dir[static_cast<std::size_t>(i) * W] = 2 | ((i > 1 || start_gap) ? 8 : 0);
        I64 e = kNegInf;
        for (I64 j = 1; j <= w; ++j) {
            const auto J = static_cast<std::size_t>(j);
            std::uint8_t d = 0;
            const I64 e_ext = e - extend, e_open = H[J - 1] - open;
            if (e_ext > e_open) d |= 4;
            e = std::max(e_ext, e_open);
            const I64 f_ext = Fcol[J] - extend, f_open = H[J] - open;
            if (f_ext > f_open) d |= 8;
            const I64 f = std::max(f_ext, f_open);
            const I64 g = diag + s.matrix.score(a, t[seg.from.j + j - 1]);
            I64 v = g;
            if (e > v) { v = e; d = static_cast<std::uint8_t>((d & ~3) | 1); }
            if (f > v) { v = f; d = static_cast<std::uint8_t>((d & ~3) | 2); }
            diag = H[J];
            H[J] = std::max<I64>(v, kNegInf);
            Fcol[J] = std::max<I64>(f, kNegInf);
            dir[static_cast<std::size_t>(i) * W + J] = d;
        }
        if (i == h) final_f = Fcol[static_cast<std::size_t>(w)];
    }
    if (h == 0) final_f = kNegInf;
    const I64 value = seg.to.in_gap ? final_f : H[static_cast<std::size_t>(w)];
    if (value != seg.score)
        throw Error("internal error in the long-pair traceback: a segment of " + std::to_string(h) + " x " +
                    std::to_string(w) + " cells scores " + std::to_string(value) + ", expected " +
                    std::to_string(seg.score));
    // Walk back. state 0 = H, 1 = E, 2 = F.
    std::vector<char> rev;
    I64 i = h, j = w;
    int state = seg.to.in_gap ? 2 : 0;
    while (i > 0 || j > 0) {
        const std::uint8_t d = dir[static_cast<std::size_t>(i) * W + static_cast<std::size_t>(j)];
        if (state == 0) state = d & 3;
        if (i == 0) state = 1;
        if (j == 0) state = 2;
        if (state == 0) {
            rev.push_back(q[seg.from.i + i - 1] == t[seg.from.j + j - 1] ? '=' : 'X');
            --i;
            --j;
        } else if (state == 1) {
            rev.push_back('D');
            state = (d & 4) ? 1 : 0;
            --j;
        } else {
            rev.push_back('I');
            state = (d & 8) ? 2 : 0;
            --i;
        }
    }
    ops.insert(ops.end(), rev.rbegin(), rev.rend());
}

// The end of a streamed path: it must stop at the alignment's end cell and be
// worth the score the DP found; then its statistics are the alignment's.
void finish_streamed_path(Alignment& a, const PathScorer& scorer, const char* who) {
    if (scorer.query_next() - 1 != a.query_end || scorer.target_next() - 1 != a.target_end)
        throw Error(std::string("internal error in ") + who + ": the streamed alignment ends at query " +
                    std::to_string(scorer.query_next() - 1) + ", target " + std::to_string(scorer.target_next() - 1) +
                    ", the DP said " + std::to_string(a.query_end) + ", " + std::to_string(a.target_end));
    if (scorer.score() != a.score)
        throw Error(std::string("internal error in ") + who + ": the alignment re-scores to " +
                    std::to_string(scorer.score()) + ", the DP said " + std::to_string(a.score));
    a.stats = scorer.stats();
}

// Stage 3 with a sink: the base segments' tracebacks on `workers` threads,
// handed to the sink in path order by the calling thread. A thread claims
// segment x only while x < handed + window, so at most `window` tracebacks are
// held (running, or done and waiting for their turn) at any time: memory is
// bounded by the window, not by the alignment's length.
void stream_tracebacks(const std::vector<Segment>& segments, const std::uint8_t* q, const std::uint8_t* t,
                       const ScoringScheme& scheme, unsigned workers, std::size_t window, const JobContext& context,
                       Alignment& a, PathScorer& scorer, AlignmentSink& sink, LongPairStats& stats) {
    const std::size_t count = segments.size();
    struct Slot {
        std::vector<CigarOp> runs;
        std::int64_t columns = 0;
        bool ready = false;
    };
    std::vector<Slot> ring(window);
    std::mutex mutex;
    std::condition_variable claimable, finished;
    std::size_t next = 0, handed = 0;
    std::int64_t held_pieces = 0, held_columns = 0;
    bool stop = false;
    std::exception_ptr failure;
    auto work = [&] {
        std::vector<char> ops;
        for (;;) {
            std::size_t x = 0;
            {
                std::unique_lock<std::mutex> lock(mutex);
                claimable.wait(lock, [&] { return stop || next >= count || next < handed + window; });
                if (stop || next >= count) return;
                x = next++;
                stats.stream_peak_pieces = std::max(stats.stream_peak_pieces, ++held_pieces);
            }
            try {
                if (context.cancelled()) throw Cancelled();
                ops.clear();
                traceback_segment(segments[x], q, t, scheme, ops);
                std::vector<CigarOp> runs;
                for (char op : ops) {
                    if (!runs.empty() && runs.back().op == op) ++runs.back().length;
                    else runs.push_back({op, 1});
                }
                std::lock_guard<std::mutex> lock(mutex);
                Slot& slot = ring[x % window];
                slot.runs = std::move(runs);
                slot.columns = static_cast<std::int64_t>(ops.size());
                slot.ready = true;
                held_columns += slot.columns;
                stats.stream_peak_columns = std::max(stats.stream_peak_columns, held_columns);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                if (!failure) failure = std::current_exception();
                stop = true;
                claimable.notify_all();
                finished.notify_all();
                return;
            }
            finished.notify_all();
        }
    };
    std::vector<std::thread> pool;
    // Whatever ends the hand-over (done, an error, a cancel, the sink
    // throwing), the threads stop and are joined before the ring goes.
    struct Join {
        std::vector<std::thread>& pool;
        std::mutex& mutex;
        bool& stop;
        std::condition_variable& claimable;
        ~Join() {
            {
                std::lock_guard<std::mutex> lock(mutex);
                stop = true;
            }
            claimable.notify_all();
            for (std::thread& th : pool) th.join();
        }
    } join{pool, mutex, stop, claimable};
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);
    for (std::size_t e = 0; e < count; ++e) {
        std::vector<CigarOp> runs;
        {
            std::unique_lock<std::mutex> lock(mutex);
            Slot& slot = ring[e % window];
            // Wake now and then to see a cancel while a long traceback runs.
            while (!stop && !slot.ready && !context.cancelled())
                finished.wait_for(lock, std::chrono::milliseconds(50));
            if (failure) std::rethrow_exception(failure);
            if (!slot.ready) break;  // cancelled (thrown below)
            runs = std::move(slot.runs);
            slot.runs = {};
            slot.ready = false;
            held_columns -= slot.columns;
            --held_pieces;
            handed = e + 1;
        }
        claimable.notify_all();
        context.throw_if_cancelled();
        if (runs.empty()) continue;
        for (const CigarOp& run : runs) {
            scorer.push(run.op, run.length);
            a.cigar.push(run.op, run.length);
        }
        sink.columns(runs);
        ++stats.streamed_pieces;
    }
    context.throw_if_cancelled();
}

void check_ranges(I64 m, I64 n, const ScoringScheme& s) {
    int top = 0;
    for (int v : s.matrix.scores()) top = std::max(top, std::abs(v));
    const I64 worst = static_cast<I64>(top) * std::min(m, n) + s.gap_open + (m + n) * std::max<I64>(s.gap_extend, top);
    if (worst >= (I64{1} << 29))
        throw Error("the pair (" + std::to_string(m) + " x " + std::to_string(n) +
                    " residues) could reach scores beyond the long-pair kernels' 32-bit range with this scheme");
}

}  // namespace

void check_explicit_edges(const PassTask& t) {
    const auto row = static_cast<std::size_t>(t.cols() + 1), column = static_cast<std::size_t>(t.rows() + 1);
    if (t.top == Edge::Explicit && (t.top_h.size() != row || t.top_f.size() != row))
        throw Error("internal error: long-pair pass with an explicit top row of the wrong length");
    if (t.left == Edge::Explicit && (t.left_h.size() != column || t.left_e.size() != column || t.left_f.size() != column))
        throw Error("internal error: long-pair pass with an explicit left column of the wrong length");
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
    if (query.empty()) throw Error("the query sequence is empty: nothing to align");
    if (target.empty()) throw Error("the target sequence is empty: nothing to align");
    if (scheme.gap_open < 0 || scheme.gap_extend < 0 || scheme.gap_extend > scheme.gap_open)
        throw Error("gap penalties must satisfy 0 <= extend <= open");
    const EncodedSequence q = encode(query, scheme.matrix, "the query");
    const EncodedSequence t = encode(target, scheme.matrix, "the target");
    const auto m = static_cast<I64>(q.size());
    const auto n = static_cast<I64>(t.size());
    check_ranges(m, n, scheme);
    const AlignmentMode mode = options.align.mode;
    const bool local = mode == AlignmentMode::Local;
    const bool semi = mode == AlignmentMode::SemiGlobal;
    const FreeEndGaps fe = semi ? options.align.free_ends : FreeEndGaps::none();
    LongPairStats stats;

    // The checkpoint: a new one, or the one this job resumes from (checked
    // against the pair and the scheme before any work).
    std::optional<LongCheckpoint> ckpt;
    if (options.resume && options.checkpoint_dir.empty())
        throw Error("--resume needs the checkpoint directory (--checkpoint DIR)");
    if (!options.checkpoint_dir.empty()) {
        if (!(options.checkpoint_every >= 0)) throw Error("the checkpoint interval must be 0 seconds or more");
        const CheckpointIdentity id = CheckpointIdentity::of(q.data(), m, t.data(), n, scheme, options.align);
        if (options.resume) {
            ckpt.emplace(LongCheckpoint::resume(options.checkpoint_dir, id));
            resumed.dir = options.checkpoint_dir;
            resumed.first_row = ckpt->state().rows.front();
            resumed.last_row = ckpt->state().last_row();
        }
        else ckpt.emplace(LongCheckpoint::start(options.checkpoint_dir, id));
    }
    // A job that fails before its first checkpoint leaves no empty directory behind.
    struct TidyOnFailure {
        std::optional<LongCheckpoint>& ckpt;
        int exceptions = std::uncaught_exceptions();
        ~TidyOnFailure() {
            if (ckpt && std::uncaught_exceptions() > exceptions) ckpt->remove_empty_directory();
        }
    } tidy{ckpt};
    // Stage 1 goes on below row r0 (0: from the top; m: it is done).
    const I64 r0 = ckpt ? ckpt->state().last_row() : 0;
    const std::size_t loaded_rows = ckpt ? ckpt->state().rows.size() : 0;
    stats.resumed_from_row = r0;
    runner.prepare(q.data(), m, t.data(), n, scheme);

    // Progress: stage 1 is the part of the matrix still to compute; stages 2
    // and 3 add a few percent.
    const std::uint64_t matrix = static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(n);
    std::uint64_t done_before = 0;
    const std::uint64_t estimate = static_cast<std::uint64_t>(m - r0) * static_cast<std::uint64_t>(n) + matrix / 8;
    auto report = [&](std::uint64_t cells_done) {
        if (context.progress) {
            Progress p;
            p.cells_done = std::min(done_before + cells_done, estimate);
            p.cells_total = estimate;
            p.items_total = 1;
            context.progress(p);
        }
    };
    PassProgress pass_progress = [&](std::uint64_t cells, std::uint64_t) { report(cells); };

    // ---- Stage 1.
    auto t0 = Clock::now();
    const Edge top = local ? Edge::Zero : (fe.query_begin ? Edge::Zero : Edge::Gap);
    const Edge left = local ? Edge::Zero : (fe.target_begin ? Edge::Zero : Edge::Gap);
    const int overview_cols = static_cast<int>(std::min<I64>(options.overview_size, n));
    // What stage 1 leaves, in forward coordinates: the best cell (local), the
    // best cell of the last column (semi-global, free target end), the last row.
    BestCell best_cell = ckpt ? ckpt->state().best : BestCell{};
    BestCell last_column = ckpt ? ckpt->state().last_column : BestCell{};
    std::vector<Score> bottom_h;
    std::vector<std::int64_t> overview_edges;  // the overview of the whole matrix (when asked for)
    std::vector<Score> overview_grid;
    CheckpointState loaded_overview;  // the checkpoint's overview as it was loaded (later commits change the state)
    if (ckpt && overview_cols > 0) {
        loaded_overview.overview_cols = ckpt->state().overview_cols;
        loaded_overview.overview_row_edges = ckpt->state().overview_row_edges;
        loaded_overview.overview = ckpt->state().overview;
    }
    // The overview of rows 1..upto: the checkpoint's part (rows 1..r0), then the
    // pass's blocks that start at or above `upto`.
    auto combine_overview = [&](const std::vector<std::int64_t>& pass_edges, const std::vector<Score>& pass_grid,
                                I64 upto, std::vector<std::int64_t>& edges, std::vector<Score>& grid) {
        edges.clear();
        grid.clear();
        if (overview_cols <= 0) return;
        const auto C = static_cast<std::size_t>(overview_cols);
        if (r0 > 0) {
            if (loaded_overview.overview_cols == overview_cols && !loaded_overview.overview_row_edges.empty()) {
                edges = loaded_overview.overview_row_edges;
                grid = loaded_overview.overview;
            } else {  // the checkpoint has none (or another grid): rows 1..r0 show as empty
                edges.push_back(1);
                grid.assign(C, kNegInf);
            }
        }
        for (std::size_t b = 0; b < pass_edges.size() && pass_edges[b] + r0 <= upto; ++b) {
            edges.push_back(pass_edges[b] + r0);
            grid.insert(grid.end(), pass_grid.begin() + static_cast<std::ptrdiff_t>(b * C),
                        pass_grid.begin() + static_cast<std::ptrdiff_t>((b + 1) * C));
        }
    };
    // Checkpoints: the special rows finished since the last one, then the manifest.
    std::size_t rows_in_checkpoint = 0;  // of the runner's special rows
    auto last_checkpoint = Clock::now();
    auto checkpoint_due = [&] {
        return ckpt && (options.checkpoint_every <= 0 || seconds_since(last_checkpoint) >= options.checkpoint_every);
    };
    auto write_checkpoint = [&](std::size_t special_rows, const BestCell& b, const BestCell& lc,
                                const std::vector<std::int64_t>& pass_edges, const std::vector<Score>& pass_grid,
                                I64 upto, const std::vector<Score>* last_h, const std::vector<Score>* last_f) {
        const auto c0 = Clock::now();
        std::vector<Score> h, f;
        for (; rows_in_checkpoint < special_rows; ++rows_in_checkpoint) {
            runner.read_special_row(rows_in_checkpoint, h, f);
            ckpt->add_row(runner.saved_rows()[rows_in_checkpoint], h, f);
        }
        if (last_h) ckpt->add_row(m, *last_h, *last_f);
        std::vector<std::int64_t> edges;
        std::vector<Score> grid;
        combine_overview(pass_edges, pass_grid, upto, edges, grid);
        ckpt->commit(b, lc, overview_cols, edges, grid);
        ++stats.checkpoints;
        stats.checkpoint_seconds += seconds_since(c0);
        last_checkpoint = Clock::now();
    };
    auto shifted = [&](BestCell c) {
        if (c.score > kNegInf) c.i += r0;
        return c;
    };
    auto merged = [&](const BestCell& a, const BestCell& b) { return better_cell(b, a) ? b : a; };

    std::vector<PassTask> tasks(1);
    PassTask& s1 = tasks[0];
    if (r0 < m) {
        PassTask& p = s1;
        const I64 rows = m - r0;
        p.row_begin = r0;
        p.row_end = m;
        p.col_end = n;
        p.top = top;
        p.left = left;
        if (r0 > 0) {  // row r0 from the checkpoint is the top edge; the left edge goes on from its column 0
            p.top = Edge::Explicit;
            ckpt->read_row(loaded_rows - 1, p.top_h, p.top_f);
            if (left == Edge::Gap) p.left = Edge::GapContinue;
        }
        p.local = local;
        p.track_best = local;
        p.want_last_row = !local || ckpt.has_value();
        p.want_last_column = semi && fe.target_end;
        if (overview_cols > 0) {
            p.overview_rows = static_cast<int>(std::clamp<I64>((options.overview_size * rows + m - 1) / m, 1, rows));
            p.overview_cols = overview_cols;
        }
        const std::uint64_t row_bytes = runner.special_row_bytes(n);
        // Rows the budget holds; a resumed job's checkpoint rows count against it.
        const std::uint64_t budget_rows = options.special_row_budget / std::max<std::uint64_t>(row_bytes, 1);
        const std::uint64_t count = std::max<std::uint64_t>(1, budget_rows - std::min<std::uint64_t>(budget_rows, loaded_rows));
        p.special_every = std::max<I64>(options.min_band_rows, (rows + static_cast<I64>(count)) / (static_cast<I64>(count) + 1));
        const I64 cap = runner.max_band_rows();
        if (cap > 0 && p.special_every > cap && (options.align.traceback || mode != AlignmentMode::Global)) {
            p.special_every = cap;
            const std::uint64_t needed = static_cast<std::uint64_t>(rows / cap) * row_bytes;
            if (needed > options.special_row_budget)
                throw Error("this pair needs " + std::to_string(rows / cap) + " special rows of " +
                            std::to_string(row_bytes >> 20) + " MiB (" + std::to_string(needed >> 20) +
                            " MiB) on " + runner.device() + " for its stage-2 bands of at most " + std::to_string(cap) +
                            " rows; the budget is " + std::to_string(options.special_row_budget >> 20) +
                            " MiB: raise --special-rows-mem, or use --device cpu");
        }
        if (ckpt)
            p.on_rows_done = [&](const RowsDone& d) {
                if (!checkpoint_due() || d.special_rows <= rows_in_checkpoint) return;
                static const std::vector<std::int64_t> no_edges;
                static const std::vector<Score> no_grid;
                write_checkpoint(d.special_rows, merged(best_cell, shifted(d.best)), merged(last_column, shifted(d.last_column)),
                                 d.overview_row_edges ? *d.overview_row_edges : no_edges, d.overview ? *d.overview : no_grid,
                                 r0 + d.row, nullptr, nullptr);
            };
        runner.run(tasks, context, pass_progress);
        best_cell = merged(best_cell, shifted(s1.best));
        if (p.want_last_column)
            for (I64 i = 1; i <= rows; ++i)
                last_column = merged(last_column, BestCell{s1.last_col_h[static_cast<std::size_t>(i)], r0 + i, n});
        bottom_h = s1.last_h;
        combine_overview(s1.overview_row_edges, s1.overview, m, overview_edges, overview_grid);
        if (ckpt && checkpoint_due())  // stage 1 done: with the last row, a later resume starts at stage 2
            write_checkpoint(runner.saved_rows().size(), best_cell, last_column, s1.overview_row_edges, s1.overview, m,
                             &s1.last_h, &s1.last_f);
    } else {  // the checkpoint holds all of stage 1
        std::vector<Score> f;
        ckpt->read_row(loaded_rows - 1, bottom_h, f);
        combine_overview({}, {}, m, overview_edges, overview_grid);
    }
    stats.stage_cells[0] = s1.cells;
    stats.stage_seconds[0] = seconds_since(t0);
    // The special rows: the checkpoint's (rows 1..r0, not the last row m) and the runner's (below r0).
    struct CrossingRow {
        I64 row;
        int runner_index, loaded_index;  // one of them is -1
    };
    std::vector<CrossingRow> crossing_rows;
    for (std::size_t k = 0; k < loaded_rows; ++k)
        if (ckpt->state().rows[k] < m) crossing_rows.push_back({ckpt->state().rows[k], -1, static_cast<int>(k)});
    if (r0 < m)
        for (std::size_t k = 0; k < runner.saved_rows().size(); ++k)
            crossing_rows.push_back({runner.saved_rows()[k], static_cast<int>(k), -1});
    stats.special_rows = static_cast<I64>(crossing_rows.size());
    if (!overview_grid.empty()) {
        stats.overview.rows = m;
        stats.overview.cols = n;
        stats.overview.grid_cols = overview_cols;
        stats.overview.row_edges = overview_edges;
        stats.overview.max_h = overview_grid;
    }
    done_before += s1.cells;
    // After a successful job the checkpoint goes (unless asked to keep it).
    auto finish = [&] {
        if (ckpt && !options.keep_checkpoint) ckpt->remove_files();
    };

    I64 score = 0, i_end = 0, j_end = 0;
    if (local) {
        score = best_cell.score;
        i_end = best_cell.i;
        j_end = best_cell.j;
    } else {
        score = bottom_h[static_cast<std::size_t>(n)];
        i_end = m;
        j_end = n;
        if (semi) {
            // The end rule: highest score, then smallest j, then smallest i.
            auto consider = [&](I64 v, I64 i, I64 j) {
                if (v > score || (v == score && (j < j_end || (j == j_end && i < i_end)))) {
                    score = v;
                    i_end = i;
                    j_end = j;
                }
            };
            if (fe.query_end)
                for (I64 j = 1; j <= n; ++j) consider(bottom_h[static_cast<std::size_t>(j)], m, j);
            if (fe.target_end && last_column.score > kNegInf) consider(last_column.score, last_column.i, n);
        }
    }

    Alignment a;
    a.mode = mode;
    a.query_length = m;
    a.target_length = n;
    a.device = runner.device();
    a.kernel = long_kernel_name(runner.kernel(), mode, scheme.linear());
    stats.strategy = runner.strategy();
    if (local && score <= 0) {  // the empty local alignment
        if (options.sink) {
            options.sink->begin(a);
            options.sink->end(a);
        }
        finish();
        if (stats_out) *stats_out = stats;
        return a;
    }
    a.score = score;
    a.query_end = i_end;
    a.target_end = j_end;

    // ---- Stage 2: crossings from the end upwards.
    t0 = Clock::now();
    std::vector<Segment> segments;  // from the end backwards
    Point cur{i_end, j_end, false};
    I64 goal = score;
    I64 leading_d = 0;
    Point start;
    const bool need_path = options.align.traceback;
    if (mode == AlignmentMode::Global && !need_path) {
        start = {0, 0, false};
    } else {
        std::vector<std::int64_t> saved;
        for (const CrossingRow& c : crossing_rows) saved.push_back(c.row);
        int k = static_cast<int>(std::upper_bound(saved.begin(), saved.end(), i_end - 1) - saved.begin()) - 1;
        bool found_start = false;
        while (!found_start) {
            context.throw_if_cancelled();
            const I64 r = k >= 0 ? saved[static_cast<std::size_t>(k)] : 0;
            std::vector<PassTask> band(1);
            PassTask& p = band[0];
            p.reversed = true;
            p.row_begin = r;
            p.row_end = cur.i;
            p.col_begin = 0;
            p.col_end = cur.j;
            reverse_edges(p, cur);
            p.goal_search = true;
            p.goal = static_cast<Score>(goal);
            p.goal_any_cell = local;
            if (k < 0) {
                p.crossing_row = kRowZero;
            } else if (crossing_rows[static_cast<std::size_t>(k)].runner_index >= 0) {
                p.crossing_row = crossing_rows[static_cast<std::size_t>(k)].runner_index;
            } else {  // a row of the checkpoint
                p.crossing_row = kExplicitRow;
                ckpt->read_row(static_cast<std::size_t>(crossing_rows[static_cast<std::size_t>(k)].loaded_index),
                               p.crossing_h, p.crossing_f);
            }
            p.crossing_edge = top;
            p.want_last_column = semi && fe.target_begin;
            runner.run(band, context, {});
            stats.stage_cells[1] += p.cells;
            const I64 h = p.rows(), w = p.cols();
            GoalHit hit = p.hit;
            if (p.want_last_column && (!hit.found || hit.j == w)) {
                // Free column 0: a path may start on it (forward H = 0 there).
                for (I64 i = 0; i <= h; ++i) {
                    if (p.last_col_h[static_cast<std::size_t>(i)] != goal) continue;
                    if (!hit.found || hit.j > w || i < hit.i || (i == hit.i && hit.kind != GoalHit::Kind::Begin)) {
                        hit.found = true;
                        hit.kind = GoalHit::Kind::Begin;
                        hit.i = i;
                        hit.j = w;
                    }
                    break;
                }
            }
            if (!hit.found)
                throw Error("internal error in the long-pair pipeline: no crossing of row " + std::to_string(r) +
                            " reaches the score " + std::to_string(goal));
            const Point at{cur.i - hit.i, cur.j - hit.j, hit.kind == GoalHit::Kind::CrossF};
            if (hit.kind == GoalHit::Kind::Begin) {
                segments.push_back({at, cur, goal});
                start = at;
                found_start = true;
            } else {
                const I64 prefix = hit.kind == GoalHit::Kind::CrossF ? hit.forward_f : hit.forward_h;
                segments.push_back({at, cur, goal - prefix});
                cur = at;
                goal = prefix;
                ++stats.crossings;
                if (k < 0) {  // row 0: the path starts on it
                    if (hit.kind != GoalHit::Kind::CrossH)
                        throw Error("internal error in the long-pair pipeline: a gap crosses row 0");
                    if (top == Edge::Zero) {
                        start = at;
                    } else {  // a leading gap along row 0 from the corner
                        leading_d = at.j;
                        start = {0, 0, false};
                    }
                    found_start = true;
                }
                --k;
            }
        }
        std::reverse(segments.begin(), segments.end());
    }
    stats.stage_seconds[1] = seconds_since(t0);
    done_before += stats.stage_cells[1];
    a.query_begin = start.i + 1;
    a.target_begin = start.j + 1;

    if (need_path) {
        // ---- Stage 3: split every segment in its middle row until it is small.
        t0 = Clock::now();
        const I64 refund = scheme.gap_open - scheme.gap_extend;
        auto small = [&](const Segment& sg) {
            const I64 h = sg.to.i - sg.from.i, w = sg.to.j - sg.from.j;
            return h <= 1 || (h <= options.base_rows &&
                              static_cast<std::uint64_t>(h + 1) * static_cast<std::uint64_t>(w + 1) <= options.base_cells * 64) ||
                   static_cast<std::uint64_t>(h + 1) * static_cast<std::uint64_t>(w + 1) <= options.base_cells;
        };
        for (;;) {
            std::vector<std::size_t> big;
            for (std::size_t x = 0; x < segments.size(); ++x)
                if (!small(segments[x])) big.push_back(x);
            if (big.empty()) break;
            context.throw_if_cancelled();
            ++stats.split_levels;
            std::vector<PassTask> level(big.size() * 2);
            for (std::size_t b = 0; b < big.size(); ++b) {
                const Segment& sg = segments[big[b]];
                const I64 mid = sg.from.i + (sg.to.i - sg.from.i) / 2;
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
            runner.run(level, context, {});
            std::vector<Segment> next;
            next.reserve(segments.size() + big.size());
            std::size_t b = 0;
            for (std::size_t x = 0; x < segments.size(); ++x) {
                if (b >= big.size() || big[b] != x) {
                    next.push_back(segments[x]);
                    continue;
                }
                const Segment& sg = segments[x];
                const PassTask& f = level[2 * b];
                const PassTask& r = level[2 * b + 1];
                stats.stage_cells[2] += f.cells + r.cells;
                ++b;
                const I64 w = sg.to.j - sg.from.j;
                I64 best = kNegInf, best_c = -1, best_prefix = 0;
                bool best_gap = false;
                for (I64 c = 0; c <= w; ++c) {
                    const auto C = static_cast<std::size_t>(c), R = static_cast<std::size_t>(w - c);
                    const I64 hf = f.last_h[C], hr = r.last_h[R], ff = f.last_f[C], fr = r.last_f[R];
                    if (hf > kNoPath && hr > kNoPath && hf + hr > best) {
                        best = hf + hr;
                        best_c = c;
                        best_prefix = hf;
                        best_gap = false;
                    }
                    if (ff > kNoPath && fr > kNoPath && ff + fr + refund > best) {
                        best = ff + fr + refund;
                        best_c = c;
                        best_prefix = ff;
                        best_gap = true;
                    }
                }
                if (best != sg.score)
                    throw Error("internal error in the long-pair pipeline: the split of rows " +
                                std::to_string(sg.from.i) + ".." + std::to_string(sg.to.i) + " scores " +
                                std::to_string(best) + ", expected " + std::to_string(sg.score));
                const Point midp{f.row_end, sg.from.j + best_c, best_gap};
                next.push_back({sg.from, midp, best_prefix});
                next.push_back({midp, sg.to, sg.score - best_prefix});
            }
            segments.swap(next);
        }
        // Full-matrix tracebacks of the small segments, on CPU threads.
        stats.base_segments = static_cast<I64>(segments.size());
        unsigned workers = options.threads > 0 ? static_cast<unsigned>(options.threads) : std::thread::hardware_concurrency();
        workers = std::max(1u, std::min<unsigned>(workers, static_cast<unsigned>(segments.size())));
        if (options.sink) {
            // Streamed: in path order to the sink, checked as the columns go.
            AlignmentSink& sink = *options.sink;
            sink.begin(a.without_path());
            PathScorer scorer(query, target, a.query_begin, a.target_begin, scheme);
            if (leading_d > 0) {
                const CigarOp lead{'D', static_cast<std::uint32_t>(leading_d)};
                scorer.push(lead.op, lead.length);
                a.cigar.push(lead.op, lead.length);
                sink.columns(std::span<const CigarOp>(&lead, 1));
                ++stats.streamed_pieces;
            }
            const std::size_t window = options.sink_window > 0 ? static_cast<std::size_t>(options.sink_window)
                                                               : std::size_t{8} * workers;
            stats.stream_window = static_cast<int>(window);
            stream_tracebacks(segments, q.data(), t.data(), scheme, workers, window, context, a, scorer, sink, stats);
            stats.stage_seconds[2] = seconds_since(t0);
            finish_streamed_path(a, scorer, "the long-pair pipeline");
            sink.end(a);
            report(stats.stage_cells[2]);
            finish();
            if (stats_out) *stats_out = stats;
            return a;
        }
        std::vector<std::vector<char>> pieces(segments.size());
        std::atomic<std::size_t> next_index{0};
        std::exception_ptr failure;
        std::mutex failure_mutex;
        auto work = [&] {
            try {
                for (std::size_t x; (x = next_index.fetch_add(1)) < segments.size();) {
                    if (context.cancelled()) return;
                    traceback_segment(segments[x], q.data(), t.data(), scheme, pieces[x]);
                }
            } catch (...) {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                next_index = segments.size();
            }
        };
        std::vector<std::thread> pool;
        for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
        work();
        for (std::thread& th : pool) th.join();
        if (failure) std::rethrow_exception(failure);
        context.throw_if_cancelled();
        if (leading_d > 0) a.cigar.push('D', static_cast<std::uint32_t>(leading_d));
        for (const std::vector<char>& piece : pieces)
            for (char op : piece) a.cigar.push(op);
        stats.stage_seconds[2] = seconds_since(t0);
        complete_alignment(a, query, target, scheme);
        const std::int64_t path_score = rescore(a.cigar, query, target, a.query_begin, a.target_begin, scheme);
        if (path_score != a.score)
            throw Error("internal error in the long-pair pipeline: the alignment re-scores to " +
                        std::to_string(path_score) + ", the DP said " + std::to_string(a.score));
    } else if (options.sink) {  // no path asked for: the header is all there is
        options.sink->begin(a);
        options.sink->end(a);
    }
    report(stats.stage_cells[2]);
    finish();
    if (stats_out) *stats_out = stats;
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

Alignment align_long_on(Backend& backend, std::string_view query, std::string_view target,
                        const ScoringScheme& scheme, const LongPairOptions& options,
                        const LongRunnerSettings& settings, const JobContext& context, LongPairStats* stats) {
    // A forced kernel named in the grammar must be one of this job's mode and
    // gap model (the runner checks the rest: which kernels it has).
    if (const auto forced = KernelName::try_parse(settings.kernel);
        forced && (forced->mode != options.align.mode || forced->linear != scheme.linear()))
        throw Error::about("kernel", "'" + settings.kernel + "' is a kernel for " +
                                         std::string(to_string(forced->mode)) +
                                         (forced->linear ? " linear" : " affine") + " alignment, but the job is " +
                                         std::string(to_string(options.align.mode)) +
                                         (scheme.linear() ? " linear" : " affine"));
    std::unique_ptr<PassRunner> runner = backend.make_long_runner(settings);
    if (runner) return align_long(query, target, scheme, options, *runner, context, stats);
    if (!options.checkpoint_dir.empty() || options.resume) {
        // Checkpoints live in the pass pipeline: on a CPU backend it runs on the
        // scalar pass runner (slower than Myers-Miller's SIMD passes).
        runner = make_cpu_pass_runner();
        std::optional<DeviceSink> device_sink;
        LongPairOptions with_device = options;
        if (options.sink) with_device.sink = &device_sink.emplace(*options.sink, backend.info().id);
        Alignment a = align_long(query, target, scheme, with_device, *runner, context, stats);
        a.device = backend.info().id;
        return a;
    }
    // CPU backends: Myers-Miller in linear space, progress in cells.
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
    if (stats) {
        *stats = LongPairStats{};
        stats->strategy = "linear-space";
        stats->stage_seconds[0] = seconds_since(t0);
        stats->stage_cells[0] = total;
        stats->streamed_pieces = streamed.streamed_pieces;
    }
    return a;
}

}  // namespace alignscope::longpair
