// What the long-pair strip kernel reads and writes: one LongTask per pass
// rectangle (plain data shared by host and device code), and the launch
// parameters common to every task of a launch.
//
// The work unit is a strip: 32 lanes x R rows of a task, swept across all of
// its columns by one warp as an anti-diagonal wavefront inside the warp (lane
// t works on column s - t at step s; values move down by warp shuffles).
// Strips of a task hand their bottom row to the next strip through a bus in
// global memory (H and F per column) and a progress counter per strip (the
// columns published, then n + 1 once everything of the strip is written:
// bottom row, special row, last column and best cell); warps
// take strips by ticket, in order, so a strip only ever waits for a strip that
// a running warp holds: no deadlock, whatever the number of kernels, streams
// and resident blocks.
#pragma once

#include <cstdint>

namespace alignscope::kernels::longpass {

// The strip kernel's tuning, read by the kernel (its block size and
// __launch_bounds__), its launcher and the host plan (long_batch_plan.hpp)
// alike: change a value here and every reader follows.
struct StripPolicy {
    static constexpr int warps_per_block = 4;  // a warp sweeps one strip
    static constexpr int block_threads = 32 * warps_per_block;
    // Rows per lane R of the compiled kernels: the tall strips fill a GPU
    // from fewer rows' worth of work; the short ones keep a short pass busy.
    static constexpr int tall_rows = 16, short_rows = 8;
    // The overview kernels exist only at the tall height.
    static constexpr int overview_rows = tall_rows;
    // Blocks per SM __launch_bounds__ asks for: three for the overview
    // kernels; four otherwise, the slice kernels too, so that a slice of a
    // split pass runs as many strips at once as the pass would on one GPU
    // (at R = 16 and 128 registers, ptxas spills 8 bytes of them, outside the
    // cell loop's hot path).
    static constexpr int min_blocks_per_sm(int /*rows*/, bool overview, bool /*slice*/) { return overview ? 3 : 4; }
    // Warps resident on one SM at the plain kernels' four blocks: the guess
    // of how many strips a GPU runs at once before it has been asked.
    static constexpr int resident_warps_per_sm = 4 * warps_per_block;
};

// Rows per strip for a rows-per-lane setting R (8 or 16).
constexpr int strip_rows(int r) { return 32 * r; }

inline constexpr int kEdgeZero = 0, kEdgeGap = 1, kEdgeGapContinue = 2, kEdgeClosed = 3;
// Top edge: row 0 (H and F, columns 0..n) is in the task's bus when the
// kernel starts (a stage 1 resumed from a checkpoint); the corner is top_corner
// and a left edge of another kind goes on from it (H(i, 0) = top_corner + left
// edge value). Left edge: H, E and F of column 0 are in left_h, left_e, left_f
// (rows 0..m; left_h[0] is the corner), the boundary column of a column slice.
inline constexpr int kEdgeExplicit = 4;
inline constexpr std::int32_t kNeg = -(1 << 30);
inline constexpr std::uint8_t kPadCode = 255;  // residue code of rows below the task

struct StripBest {  // per strip, local stage 1: highest H, smallest j, smallest i
    std::int32_t score;
    std::int32_t pad;
    long long i, j;
};

struct LongTask {
    const std::uint8_t* rows;  // residue of pass row i (1-based) at rows[i - 1]
    const std::uint8_t* cols;  // residue of pass column j at cols[j - 1]
    long long m, n;            // rows, columns (m >= 1, n >= 1)
    std::int32_t* bus_h;       // n + 1 each: the bottom row of the last strip that passed
    std::int32_t* bus_f;
    std::int32_t* last_col;  // 2 (m + 1): H (rows 1..m written), then E of column n (slice kernels only), or null
    // A streamed column split (slice kernels): the slice before raises
    // left_ready[s] (system scope) once its last column's rows of strip s are
    // in left_h / left_e; this task raises right_ready[s] once its own are in
    // last_col (the next slice's link buffer, maybe on another GPU). Null: none.
    const int* left_ready;
    int* right_ready;
    const std::int32_t* left_h;  // left == kEdgeExplicit: column 0, rows 0..m
    const std::int32_t* left_e;
    const std::int32_t* left_f;
    std::int32_t* special_h;  // saved rows, row-major slots of n + 1, or null
    std::int32_t* special_f;
    const std::int32_t* goal_h;  // crossing row (forward columns 0..), or null: row 0 by goal_edge
    const std::int32_t* goal_f;
    unsigned long long* hit;  // goal search: min key (j << 34 | i << 2 | kind), or null
    std::int32_t* overview;   // ov_rows x ov_cols max-pool of H (row block of strip s: s * ov_rows / strips), or null
    std::int32_t ov_rows, ov_cols;
    long long ov_offset, ov_total;  // column block of column j: (ov_offset + j - 1) * ov_cols / ov_total
    long long goal_col_end;         // forward column = goal_col_end - j
    std::int32_t first_ticket;      // global ticket of strip 0
    std::int32_t strips;
    std::int32_t special_every;  // save the bottom row of strip s when (s + 1) % every == 0
    std::int8_t top, left, corner_open, goal_edge;
    std::int8_t track_best, goal_search, goal_any, pad0;
    std::int32_t goal;
    std::int32_t top_corner;  // top == kEdgeExplicit: H(0, 0)
};

struct LaunchParams {
    const LongTask* tasks;
    int task_count;
    int total_strips;
    int* ticket;                        // next strip to take
    int* progress;                      // per ticket: columns published
    StripBest* best;                    // per ticket (tasks that track the best)
    const int* abort;                   // non-zero: stop at once (cancel)
    const std::int8_t* profile_scores;  // alphabet x alphabet, row-major (query code, target code)
    int alphabet;
    int gap_open, gap_extend;
};

}  // namespace alignscope::kernels::longpass
