// What a job was asked to do, recorded with the job so every stored result can
// be traced to its exact settings (and its scores converted and re-printed
// without the original command line), and the states a job goes through.
#pragma once

#include <alignscope/score/scoring_scheme.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace alignscope {
struct PairJob;
struct DeviceInfo;
}  // namespace alignscope

namespace alignscope::store {

// queued -> running -> done | failed | cancelled. `interrupted` is set by the
// store, never by a job: a queued or running job whose owning process is gone
// (killed, crashed, power lost), detected through the owner's lock.
enum class JobState { Queued, Running, Done, Failed, Cancelled, Interrupted };

std::string_view to_string(JobState state);       // "queued", "running", ...
JobState parse_job_state(std::string_view name);  // throws Error
bool is_final(JobState state);                    // done, failed, cancelled, interrupted

struct JobSpec {
    std::string command;    // "align", "search", "verify", "bench", "gui", ...
    std::string algorithm;  // mode x gap model, e.g. "sw_affine", "nw_linear", "sg_affine"
    std::string mode;       // "global", "local", "semiglobal"
    std::string free_ends;  // semi-global only: FreeEndGaps::to_string()
    std::string scoring;    // ScoringScheme::describe(), for people
    // The substitution matrix, unscaled, in NCBI layout, with the penalties in
    // user units: enough to rebuild the exact scheme (see scheme()).
    std::string matrix_name;
    std::string matrix_text;
    double gap_open = 0;
    double gap_extend = 0;
    int score_scale = 1;                  // stored scores are scaled by this (ScoringScheme::scale)
    std::string devices;                  // as selected: "cpu", "gpu:0", "gpu:0,1"
    int streams = 0;                      // 0 = backend default
    int threads = 0;                      // 0 = all cores
    std::string kernel;                   // forced kernel/variant; empty = automatic
    std::uint64_t gpu_memory_budget = 0;  // bytes per device; 0 = backend default
    std::string build_version;            // filled in by the store when empty
    std::string driver_version;           // GPU driver and runtime; empty on CPU
    std::string command_line;
    std::map<std::string, std::string> parameters;  // anything else worth keeping (input paths, --zip, ...)

    // The spec of a pairwise job on `device`: mode, free ends, scheme (matrix
    // included), threads, streams, kernel and memory budget from the PairJob;
    // device id and driver/runtime versions from the DeviceInfo.
    static JobSpec for_pair_job(std::string command, const PairJob& job, const DeviceInfo& device);
    // Fills the scheme fields (scoring, matrix_*, gap_*, score_scale).
    void set_scheme(const ScoringScheme& scheme);
    bool has_scheme() const { return !matrix_text.empty(); }
    // The scheme the job ran with, rebuilt from matrix_text and the penalties.
    // Throws Error when the spec holds none.
    ScoringScheme scheme() const;

    // The full specification as one JSON object (the jobs.spec column).
    std::string to_json() const;
    // Throws Error naming `source` when the text is not a job spec.
    static JobSpec from_json(std::string_view json, const std::string& source);
};

// "AlignScope 0.1.0 (GCC 12.2.0, Release)": what built this engine.
std::string build_version();

}  // namespace alignscope::store
