// Long-pair alignment (CUDAlign-class): the full alignment of two sequences of
// up to tens of millions of residues in memory linear in their lengths.
//
// The pipeline is written once, here, against an abstract PassRunner that
// computes DP passes over rectangles; the CPU runner (make_cpu_pass_runner)
// and the CUDA runner (kernels/long) implement it, so the same orchestration is
// tested on the CPU in CI and runs on the GPU for real.
//
//   Stage 1  one forward pass over the whole matrix: score and end cell (the
//            reference's tie-break), and "special rows" (H and F of every k-th
//            row) kept by the runner, as many as the memory budget allows.
//   Stage 2  from the end upwards, one reverse pass per band between special
//            rows, anchored at the last crossing point, stopping at the first
//            column where forward + reverse scores prove the goal (Myers-Miller's
//            CC+RR / DD+SS+(open-extend) test against the saved row): the
//            optimal path's crossing point and state (diagonal/any, or inside a
//            vertical gap) on every special row, and its begin.
//   Stage 3  every segment between consecutive crossings is split in the
//            middle row (one forward and one reverse pass per segment, all
//            segments of a level in one runner call) until segments are small,
//            then finished by a full-matrix traceback on CPU threads. With a
//            sink (LongPairOptions::sink) the tracebacks go to it in path order
//            as they finish, a bounded window ahead, and no aligned text is built.
//
// Each split is checked: the best split score must equal the segment's score
// known from the level above, and the final CIGAR is re-scored against the
// stage-1 score, so a wrong kernel cannot produce a wrong alignment silently.
//
// This header is the job API (options, statistics, align_long); the pass
// interface is in long_pass.hpp, the runner over several devices in
// long_split_runner.hpp, and the stages' decisions in long_plan.hpp.
#pragma once

#include <alignscope/align/alignment.hpp>
#include <alignscope/align/alignment_sink.hpp>
#include <alignscope/align/long_pass.hpp>
#include <alignscope/align/long_split_runner.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope {
class Backend;
struct LongRunnerSettings;
}  // namespace alignscope

namespace alignscope::longpair {

struct LongPairOptions {
    AlignOptions align;
    std::uint64_t special_row_budget = 2ull << 30;  // bytes of special rows for stage 1
    std::int64_t min_band_rows = 4096;              // stage-1 special rows at least this far apart
    std::int64_t base_rows = 48;                    // segments this short are finished on the CPU...
    std::uint64_t base_cells = 1u << 20;            // ...or this small
    int threads = 0;                                // CPU threads for stage 3; 0 = all cores
    int overview_size = 0;                          // stage-1 overview grid (blocks per side); 0 = none
    // Checkpoint and resume (stage 1; see long_checkpoint.hpp). A directory
    // turns it on: every checkpoint_every seconds (0 = at every special row)
    // the special rows finished since the last one go to files there with a
    // manifest. resume: start from the last row of the checkpoint found there.
    std::string checkpoint_dir;
    double checkpoint_every = 300;
    bool resume = false;
    bool keep_checkpoint = false;  // leave it behind after a successful run (else its files are removed)
    // Streaming (stage 3): with a sink, the alignment's columns go to it in
    // path order as the base segments are traced back (one columns() call per
    // segment), and the result holds score, coordinates, CIGAR and statistics
    // but no aligned text: memory for the path is its run-length CIGAR plus
    // at most `sink_window` segments' tracebacks (running or done, not yet
    // handed over). The re-scoring check runs on the streamed columns (a
    // PathScorer) before sink->end(). Without a sink nothing changes.
    AlignmentSink* sink = nullptr;
    int sink_window = 0;  // segments traced ahead of the sink; 0 = 8 per thread
};

// The max-pooled picture of the whole DP matrix that stage 1 leaves behind:
// what the heatmap view shows for a long-pair job without recomputing it.
struct LongPairOverview {
    std::int64_t rows = 0, cols = 0;      // the matrix (query x target residues)
    int grid_cols = 0;                    // column blocks: column j in block (j-1)*grid_cols/cols
    std::vector<std::int64_t> row_edges;  // first row (1-based) of each row block
    std::vector<Score> max_h;             // row_edges.size() x grid_cols, row-major; kNegInf = empty
    bool empty() const { return max_h.empty(); }
};

struct LongPairStats {
    // How the pair was aligned: the pass runner's strategy (PassRunner::strategy)
    // or "linear-space" (Myers-Miller in 64-bit cells on the CPU: CPU backends
    // without checkpoints, and pairs a pipeline cannot hold; see wider_path).
    std::string strategy;
    // Why the pair took the 64-bit linear-space path instead of the pass
    // pipeline it was meant for (LongRoute::wider_reason); empty when it did not.
    std::string wider_path;
    double stage_seconds[3] = {0, 0, 0};
    std::uint64_t stage_cells[3] = {0, 0, 0};
    std::int64_t special_rows = 0;      // kept in stage 1
    std::int64_t crossings = 0;         // found in stage 2
    int split_levels = 0;               // stage 3 levels of middle-row splits
    std::int64_t base_segments = 0;     // finished by full-matrix traceback
    std::int64_t resumed_from_row = 0;  // --resume: stage 1 started below this row (0: from the top)
    int checkpoints = 0;                // manifests written
    double checkpoint_seconds = 0;      // spent writing them
    LongPairOverview overview;          // when LongPairOptions::overview_size > 0
    // With a sink (LongPairOptions::sink): the columns() calls made, the window,
    // and the most segment tracebacks held at once (claimed by a thread and not
    // yet handed to the sink, at most the window) and the most columns held in
    // finished ones.
    std::int64_t streamed_pieces = 0;
    int stream_window = 0;
    std::int64_t stream_peak_pieces = 0;
    std::int64_t stream_peak_columns = 0;
};

// Stage names for progress and timelines.
inline constexpr const char* kStageNames[3] = {"stage 1: score and special rows", "stage 2: crossings",
                                               "stage 3: splits and traceback"};

// Aligns query against target (letters, normalised as for align_reference).
// Same score and end cell as align_reference; the begin is an optimal one
// (the reference's when the optimum is unique); the CIGAR re-scores to the
// score. `context.progress` receives cells done / estimated total.
// Throws Error (bad input, or scores that could leave 32 bits) or Cancelled.
Alignment align_long(std::string_view query, std::string_view target, const ScoringScheme& scheme,
                     const LongPairOptions& options, PassRunner& runner, const JobContext& context = {},
                     LongPairStats* stats = nullptr);

// Where align_long_on runs a pair (letters, as for align_long), settled
// before any work from the lengths, the scheme's bounds and the options:
//   Runner       the backend's pass runner (GPUs);
//   CpuPasses    the scalar pass runner: a CPU backend with a checkpoint;
//   LinearSpace  Myers-Miller in 64-bit cells on the CPU, in this process:
//                CPU backends without a checkpoint, and every pair that the
//                runner above cannot hold (PassRunner::cannot_hold), unless a
//                kernel is forced (then it is refused with an Error), or a
//                forced "..._myersmiller_s64" kernel on a backend with a runner.
// The 64-bit path keeps no checkpoint: a pair that lands there for want of
// range with --checkpoint DIR leaves DIR untouched (not created, nothing
// written or removed), and with --resume a checkpoint found there (another
// job's: none of this one can exist) is refused here, with what differs.
// Throws Error for those refusals.
struct LongRoute {
    enum class Path { Runner, CpuPasses, LinearSpace };
    Path path = Path::LinearSpace;
    std::unique_ptr<PassRunner> runner;  // Runner and CpuPasses
    // Set when the pair was meant for a pass pipeline and takes the 64-bit
    // path instead: why, in a user's words.
    std::string wider_reason;
    std::string kernel;         // LinearSpace: the kernel name the alignment will carry
    bool checkpointed = false;  // the job asked for a checkpoint (--checkpoint or --resume)
    // The 64-bit path stands in for a pipeline and the job's checkpoint is not kept.
    bool checkpoint_skipped() const { return checkpointed && !wider_reason.empty(); }
};
LongRoute route_long_pair(Backend& backend, std::string_view query, std::string_view target,
                          const ScoringScheme& scheme, const LongPairOptions& options,
                          const LongRunnerSettings& settings);

// The long-pair path on any backend, as route_long_pair says: its pass
// runner when it has one (GPUs) and it can hold the pair, else
// align_linear_space with the same options. The device field is the
// backend's, the kernel and the statistics' strategy tell which ran. With a
// sink on the 64-bit path, Myers-Miller leaves the CIGAR only (no aligned
// text), which then goes to the sink in chunks through the same re-scoring
// check.
Alignment align_long_on(Backend& backend, std::string_view query, std::string_view target, const ScoringScheme& scheme,
                        const LongPairOptions& options, const LongRunnerSettings& settings,
                        const JobContext& context = {}, LongPairStats* stats = nullptr);

}  // namespace alignscope::longpair
