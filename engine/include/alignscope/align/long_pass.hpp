// The long-pair pipeline's unit of work: a DP pass over a rectangle (PassTask:
// its edges, what it is asked for, what it returns) and the PassRunner
// interface that computes passes on a device (the CPU reference, a GPU).
#pragma once

#include <alignscope/device/job.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace alignscope::longpair {

using Score = std::int32_t;
// Far below any reachable score; penalties can be subtracted from it many
// times without leaving the int32 range.
inline constexpr Score kNegInf = -(1 << 30);

// How a pass enters its rectangle on the top row (row 0) or left column (0).
enum class Edge : std::uint8_t {
    Zero,         // H = 0: the alignment may start anywhere on this edge
    Gap,          // H = -(open + (k-1)*extend) at distance k >= 1 from the corner
    GapContinue,  // left edge only: H = -(k*extend), a vertical gap already open goes on
    Closed,       // no path enters through this edge
    Explicit,     // top: row 0 given by PassTask::top_h/top_f (a resumed stage 1);
                  // left: column 0 given by PassTask::left_h/left_e/left_f (a column slice)
};

// H on an edge at distance k >= 1 from the corner (kNegInf when Closed).
inline std::int64_t edge_value(Edge edge, std::int64_t k, std::int64_t open, std::int64_t extend) {
    switch (edge) {
        case Edge::Zero: return 0;
        case Edge::Gap: return -(open + (k - 1) * extend);
        case Edge::GapContinue: return -(k * extend);
        case Edge::Closed: return kNegInf;
        case Edge::Explicit: return kNegInf;  // see top_value() and left_value()
    }
    return kNegInf;
}

// The best cell of a pass (track_best): highest H, then smallest column j, then
// smallest row i (the reference's end rule). Coordinates are the pass's own,
// 1-based (i in 1..rows, j in 1..cols); score kNegInf when nothing was seen.
struct BestCell {
    Score score = kNegInf;
    std::int64_t i = 0, j = 0;
};

// What a goal search found: the first candidate in (column, row, kind) order.
struct GoalHit {
    enum class Kind : std::uint8_t { Begin = 0, CrossH = 1, CrossF = 2 };
    bool found = false;
    Kind kind = Kind::Begin;
    std::int64_t i = 0, j = 0;           // pass coordinates, 0-based DP indices (0..rows, 0..cols)
    Score forward_h = 0, forward_f = 0;  // crossing row's values at the hit's column
};

// Which row a goal search compares its last row with.
inline constexpr int kRowZero = -2;  // the forward matrix's row 0 (from crossing_edge)
inline constexpr int kNoRow = -1;
inline constexpr int kExplicitRow = -3;  // PassTask::crossing_h/crossing_f (a row loaded from a checkpoint)

// Stage 1 so far, as a checkpoint needs it: every cell of pass rows 1..row is
// final, and so are the first `special_rows` rows of saved_rows() (the last of
// them is row_begin + row). Coordinates are the pass's own.
struct RowsDone {
    std::int64_t row = 0;
    std::size_t special_rows = 0;
    BestCell best;         // track_best: the best cell of rows 1..row
    BestCell last_column;  // want_last_column: the highest H of the last column in rows 1..row (smallest i); j = cols
    // Overview (when asked for): the grid as it stands, complete for rows
    // 1..row; on a GPU it may already hold values of rows below `row` (they are
    // real cells of the pass, so a max over them stays right when the rows
    // below are computed again).
    const std::vector<Score>* overview = nullptr;
    const std::vector<std::int64_t>* overview_row_edges = nullptr;
};
using RowsDoneCallback = std::function<void(const RowsDone&)>;

// A streamed column split: the channel over which one column slice of a pass
// hands its last column (H and E) to the next slice's pass while both run,
// made by the producer's runner (PassRunner::link_to) and used once. What it
// is (device memory written by a peer GPU, pinned host memory, a host
// buffer) is the runners' business.
class BoundaryLink {
public:
    virtual ~BoundaryLink() = default;
};

struct PassTask {
    // The rectangle: query residues [row_begin, row_end) down the rows, target
    // residues [col_begin, col_end) across, 0-based forward positions. A
    // reversed pass runs from the bottom-right corner up and to the left, on
    // both sequences reversed; its coordinates count from that corner.
    std::int64_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
    bool reversed = false;
    Edge top = Edge::Gap, left = Edge::Gap;
    bool corner_open = true;  // H(0,0) = 0; else no path starts at the corner itself
    // top == Explicit: H and F of row 0, columns 0..cols. The corner is
    // top_h[0] (corner_open is ignored) and the left edge goes on from it:
    // H(i, 0) = top_h[0] + edge_value(left, i) (left: Zero, GapContinue or Closed).
    std::vector<Score> top_h, top_f;
    // left == Explicit: H, E (horizontal gap, the state a column hands to the
    // next) and F (vertical gap) of column 0, rows 0..rows; entry 0 is not read
    // (the corner is the top edge's). This is exactly what want_last_column(_state)
    // returns for the last column, so a pass over columns [a, b) and one over
    // [b, c) with the first's last column as its left edge give the same cells
    // as one pass over [a, c), in every mode (a split of the columns).
    std::vector<Score> left_h, left_e, left_f;
    // A streamed column split (see BoundaryLink): with left_link, left is
    // Explicit and column 0 (rows 1..rows) arrives through the link while the
    // pass runs, left_h/e/f stay empty (its F is not needed: a pass reads H
    // and E of column 0; a runner may leave F of column 0 in last_f[0] as
    // kNegInf); with right_link, the last column's H and E leave through it
    // as they are final (want_last_column is not needed for it).
    std::shared_ptr<BoundaryLink> left_link, right_link;
    bool local = false;  // H is clamped at 0 (stage 1 of a local alignment)

    // Requests.
    bool want_last_row = false;     // last_h, last_f: H and F of the last row, columns 0..cols
    bool want_last_column = false;  // last_col_h: H of the last column, rows 0..rows
    // With want_last_column: last_col_e and last_col_f too, E and F of the last
    // column (entry 0: the top edge's F there, E = kNegInf): the state the next
    // slice of a column split takes as its explicit left edge.
    bool want_last_column_state = false;
    bool track_best = false;  // best: over every cell (local alignment)
    // Stage 1: keep H and F of rows at a spacing of at least this many rows
    // (the runner rounds up to its own granularity); they replace any kept
    // before and are listed by PassRunner::saved_rows().
    std::int64_t special_every = 0;
    // Stage 1 with a checkpoint: called on the thread that called run(), in
    // ascending order, each time more special rows are final (at least at each
    // special row's completion; the runner may bundle several). The callee may
    // read those rows with PassRunner::read_special_row.
    RowsDoneCallback on_rows_done;

    // Overview (stage 1): the highest H of every block of a grid of about
    // overview_rows x overview_cols blocks, for the heatmap of a long job.
    // Column block of column j: (j - 1) * overview_cols / cols. Rows are
    // binned at the runner's granularity: overview_row_edges[b] is the first
    // row (1-based) of row block b; overview is row-major, kNegInf where empty.
    int overview_rows = 0, overview_cols = 0;
    // A pass over a slice of a wider pass bins its columns as that pass does:
    // column block of column j is (overview_col_offset + j - 1) * C /
    // overview_col_total, C = min(overview_cols, overview_col_total), and the
    // grid is C wide (0 = the pass's own columns: offset 0, total cols).
    std::int64_t overview_col_offset = 0, overview_col_total = 0;

    // Goal search (reverse passes of stage 2): the pass may stop at the first
    // column holding a candidate, i.e. a cell (i, j) with
    //   - goal_any_cell and H(i,j) == goal                          -> Begin
    //   - i == rows and Hf[c] + H(i,j) == goal                     -> CrossH
    //   - i == rows and Ff[c] + F(i,j) + (open - extend) == goal   -> CrossF
    // where Hf, Ff are the saved row `crossing_row` (or the forward row 0 built
    // from crossing_edge when kRowZero) and c = col_end - j is the forward column.
    // Ties: smallest j, then smallest i, then Begin < CrossH < CrossF.
    bool goal_search = false;
    Score goal = 0;
    bool goal_any_cell = false;
    int crossing_row = kNoRow;
    Edge crossing_edge = Edge::Gap;
    std::vector<Score> crossing_h, crossing_f;  // crossing_row == kExplicitRow: forward columns 0..col_end

    // Results.
    std::vector<Score> last_h, last_f, last_col_h, last_col_e, last_col_f;
    BestCell best;
    GoalHit hit;
    std::vector<Score> overview;
    std::vector<std::int64_t> overview_row_edges;
    std::uint64_t cells = 0;  // cells computed (a stopped goal search counts what it did)

    std::int64_t rows() const { return row_end - row_begin; }
    std::int64_t cols() const { return col_end - col_begin; }
};

// F on row 0 (column j >= 0): only an explicit top edge has one.
inline std::int64_t top_f_value(const PassTask& t, std::int64_t j) {
    return t.top == Edge::Explicit ? t.top_f[static_cast<std::size_t>(j)] : kNegInf;
}
// H on the pass's row 0 at column j >= 0, and on its column 0 at row i >= 0
// (kNegInf and below mean no path), for every kind of edge.
inline std::int64_t top_value(const PassTask& t, std::int64_t j, std::int64_t open, std::int64_t extend) {
    if (t.top == Edge::Explicit) return t.top_h[static_cast<std::size_t>(j)];
    if (j == 0) return t.corner_open ? 0 : kNegInf;
    return edge_value(t.top, j, open, extend);
}
inline std::int64_t left_value(const PassTask& t, std::int64_t i, std::int64_t open, std::int64_t extend) {
    if (t.left == Edge::Explicit && i > 0) return t.left_h[static_cast<std::size_t>(i)];
    if (t.left == Edge::Explicit) return top_value(t, 0, open, extend);
    if (t.top == Edge::Explicit) {
        const std::int64_t corner = t.top_h[0];
        return i == 0 ? corner : std::max<std::int64_t>(corner + edge_value(t.left, i, open, extend), kNegInf);
    }
    if (i == 0) return t.corner_open ? 0 : kNegInf;
    return edge_value(t.left, i, open, extend);
}
// F on column 0 (row i >= 1): a vertical gap along the left edge, when it has one.
inline std::int64_t left_f_value(const PassTask& t, std::int64_t i, std::int64_t open, std::int64_t extend) {
    if (t.left == Edge::Explicit) return i == 0 ? top_f_value(t, 0) : t.left_f[static_cast<std::size_t>(i)];
    return (t.left == Edge::Gap || t.left == Edge::GapContinue) ? left_value(t, i, open, extend) : kNegInf;
}
// E on column 0 (row i >= 1): only an explicit left edge has one.
inline std::int64_t left_e_value(const PassTask& t, std::int64_t i) {
    return t.left == Edge::Explicit && i > 0 ? t.left_e[static_cast<std::size_t>(i)] : kNegInf;
}
// Sizes and resets the results a runner fills for a pass of rows x cols
// cells: the last row and column (with its E and F when asked), their corner
// entries from the top edge, the best cell and the goal hit.
inline void reset_pass_results(PassTask& t, std::int64_t open, std::int64_t extend) {
    const auto rows = static_cast<std::size_t>(t.rows()), cols = static_cast<std::size_t>(t.cols());
    auto clamped = [](std::int64_t v) { return static_cast<Score>(std::max<std::int64_t>(v, kNegInf)); };
    if (t.want_last_row) {
        t.last_h.assign(cols + 1, kNegInf);
        t.last_f.assign(cols + 1, kNegInf);
    }
    const bool column_state = t.want_last_column && t.want_last_column_state;
    t.last_col_e.assign(column_state ? rows + 1 : 0, kNegInf);
    t.last_col_f.assign(column_state ? rows + 1 : 0, kNegInf);
    if (t.want_last_column) {
        t.last_col_h.assign(rows + 1, kNegInf);
        t.last_col_h[0] = clamped(top_value(t, t.cols(), open, extend));
        if (column_state) t.last_col_f[0] = clamped(top_f_value(t, t.cols()));
    }
    t.best = BestCell{};
    t.hit = GoalHit{};
}
// Throws an internal Error when an explicit edge has the wrong length.
void check_explicit_edges(const PassTask& t);
// The same for a pass that may be a slice of a streamed split: its left
// column comes through its link (left_h/e/f empty) instead.
inline void check_pass_edges(const PassTask& t) {
    if (!t.left_link) return check_explicit_edges(t);
    if (t.left != Edge::Explicit || !t.left_h.empty() || !t.left_e.empty() || !t.left_f.empty())
        throw Error("internal error: a long-pair pass with a linked left column has another left edge");
    PassTask top_only;
    top_only.row_end = t.rows();
    top_only.col_end = t.cols();
    top_only.top = t.top;
    if (t.top == Edge::Explicit) {
        top_only.top_h.resize(t.top_h.size());
        top_only.top_f.resize(t.top_f.size());
    }
    check_explicit_edges(top_only);
}
// The best-cell order: higher score, then smaller j, then smaller i.
inline bool better_cell(const BestCell& a, const BestCell& b) {
    return a.score > b.score || (a.score == b.score && (a.j < b.j || (a.j == b.j && a.i < b.i)));
}

// The pipeline's cells are 32-bit, with kNegInf (-2^30) for "no path": every
// value a pass can hold (H, E, F, forward and reverse) must stay below 2^29 in
// size, so that a sum of two of them and the penalties taken off kNegInf stay
// inside 32 bits and apart from it.
inline constexpr std::int64_t kPassScoreLimit = std::int64_t{1} << 29;
// A bound on the size of every value of an m x n pair's passes under
// `scheme` (scaled): the best path's worth, at most the largest substitution
// score in size per column of at most m + n, and the cheapest way in, three
// gap openings and a gap extension per column.
std::int64_t pass_score_bound(std::int64_t m, std::int64_t n, const ScoringScheme& scheme);
// Why the pipeline's 32-bit cells cannot hold an m x n pair under `scheme`
// (pass_score_bound reaches kPassScoreLimit), in a user's words; empty when
// they can. From the lengths and the scheme's bounds alone.
std::string passes_cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme);

// Progress of a runner call: cells computed so far out of those asked for.
using PassProgress = std::function<void(std::uint64_t cells_done, std::uint64_t cells_total)>;

class PassRunner {
public:
    virtual ~PassRunner() = default;
    // Once per pair: the encoded residues (codes of scheme.matrix) and scheme.
    virtual void prepare(const std::uint8_t* query, std::int64_t m, const std::uint8_t* target, std::int64_t n,
                         const ScoringScheme& scheme) = 0;
    // Runs independent tasks and fills their results. Throws Error or Cancelled.
    virtual void run(std::vector<PassTask>& tasks, const JobContext& context, const PassProgress& progress) = 0;
    // Rows (forward, 0..m) of the special rows kept by the last pass that asked
    // for them, ascending; index k is crossing_row k.
    virtual const std::vector<std::int64_t>& saved_rows() const = 0;
    // H and F (columns 0..cols) of special row k (an index into saved_rows()):
    // after run(), and during it from on_rows_done for the rows it reported.
    // Runners that cannot checkpoint keep the default, which throws Error.
    virtual void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f);
    // Bytes one special row takes for a target of n residues.
    virtual std::uint64_t special_row_bytes(std::int64_t n) const { return static_cast<std::uint64_t>(n + 1) * 8; }
    // The tallest band a stage-2 goal search may have (0 = any): a search
    // stops early only when all of a band's strips run at once.
    virtual std::int64_t max_band_rows() const { return 0; }
    // The height of a pass that keeps the device busy (0 = any): a column split
    // cuts its slices into row blocks this tall. After prepare().
    virtual std::int64_t busy_rows() const { return 0; }
    // A link for a streamed column split of a pass of `rows` rows: this
    // runner's slice hands its last column to `next`'s slice (the one right
    // of it) while both run, without a host round trip where the devices
    // allow. Null (the default) when the two runners cannot; then the split
    // hands boundary columns over on the host between row blocks.
    virtual std::shared_ptr<BoundaryLink> link_to(PassRunner& /*next*/, std::int64_t /*rows*/) { return nullptr; }
    // Special rows fall exactly on multiples of special_every when it is a
    // multiple of this (the runner's rounding granularity).
    virtual std::int64_t special_row_granularity() const { return 1; }
    // Why this runner cannot hold an m x n pair under `scheme` (its cells'
    // width, its score table's, its length limits), in a user's words, or
    // empty when it can: decided from the lengths and the scheme's bounds
    // before any work, on the host. align_long refuses such a pair;
    // align_long_on takes the 64-bit linear-space path instead. The default is
    // the pipeline's own limit (passes_cannot_hold).
    virtual std::string cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) const;
    virtual std::string device() const = 0;  // "cpu-ref", "gpu:0"
    // What ran: a kernel name (device/kernel_name.hpp) or one an earlier
    // version wrote ("long_strips_r16"); align_long gives the alignment the
    // name in today's grammar, with the job's mode and gap model.
    virtual std::string kernel() const = 0;
    // How the passes ran, as LongPairStats::strategy says it: "strips" (one
    // persistent kernel), "streams" (several kernels on several streams),
    // "cpu-passes" (the scalar runner's column-major passes on a CPU).
    virtual std::string strategy() const { return "strips"; }
};

// A plain scalar runner (column-major passes in O(rows) memory, special rows in
// host memory): the reference the GPU runner is tested against.
std::unique_ptr<PassRunner> make_cpu_pass_runner();

}  // namespace alignscope::longpair
