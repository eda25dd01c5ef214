// Record i of one sequence file against record i of another, streamed from file
// to file: reading, parsing, aligning (chunk after chunk on one backend, whose
// start-up runs while the input is read), formatting and writing run at once
// over chunks of pairs, in bounded memory, with the output in input order.
#pragma once

#include <alignscope/device/backend.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace alignscope {

struct PairPipelineSettings {
    std::string query_path, target_path;
    ReadOptions read;
    OutputFormat format = OutputFormat::Tsv;
    WriterContext writer;  // scheme: the job's; references: the pipeline writes SAM's @SQ lines itself
    // Pairs per chunk; 0 = the default (kDefaultChunkPairs, or the environment's
    // ALIGNSCOPE_PAIR_CHUNK, which tests use to force tiny chunks).
    std::size_t chunk_pairs = 0;
    int threads = 0;  // host threads that parse and format; 0 = all cores
    // Chunks aligned at once (each on a thread of its own: on a GPU, one
    // chunk's encoding, packing and results overlap another's kernels and
    // copies); 0 = the default (kGpuAligningChunks on a GPU, 1 on a CPU, or
    // the environment's ALIGNSCOPE_PAIR_ALIGNERS, which tests use).
    int aligning_chunks = 0;
    bool stages = false;  // time the device's own stages too (PairPipelineStats::device)
    // Called once both files' alphabets are known and before any pair is
    // aligned: the job every chunk copies (scheme, options, device settings).
    // Throws Error to refuse the inputs.
    std::function<PairJob(AlphabetKind queries, AlphabetKind targets)> make_job;
    // The error when the files hold different numbers of records.
    std::function<std::string(std::uint64_t queries, std::uint64_t targets)> count_mismatch;
    // Warnings (records repeating an id), once per file, when reading is done.
    std::function<void(const std::string&)> warn;
    // When the files hold one pair only and this says so, the pipeline
    // aligns and writes nothing and returns with `handed_back` set (the
    // caller has a path of its own for such a pair: a long one).
    std::function<bool(const Sequence& query, const Sequence& target)> hand_back_single_pair;
};

constexpr std::size_t kDefaultChunkPairs = 65536;
// One: on an H100 host (16 cores) three chunks at once made the 1,000,000-pair
// job slower (1.50-1.73 s against 1.28-1.30 s): its host threads are the
// limit there (parsing and formatting take most of them), not the device.
constexpr int kGpuAligningChunks = 1;

// Where the time went. Stages overlap, so each is given as busy seconds
// summed over the threads that ran it, beside the wall time of the whole.
struct PairPipelineStats {
    std::uint64_t pairs = 0, cells = 0, chunks = 0;
    bool handed_back = false;  // see PairPipelineSettings::hand_back_single_pair
    double seconds = 0;        // wall, from the first read to the last byte written
    double read = 0;           // reading (and decompressing) the files
    double parse = 0;          // parsing and checking records
    double align = 0;          // the backend's align_pairs, chunk after chunk
    double format = 0;         // alignments to text
    double write = 0;          // text to the output
    double warm_up = 0;        // device start-up, beside the reading
    double first_align = 0;    // when the first chunk reached the device (s after the start)
    double last_aligned = 0;   // when the last chunk came back from it (s after the start)
    // SAM into a file: when the header (every target's @SQ line, listed from
    // the target file ahead of the pipeline) went out and the body began to
    // follow it as it came; 0 when the body waited for the last pair.
    double sam_head = 0;
    std::size_t peak_chunks = 0;  // chunks held at once, parsed to written
    // With `stages`: the device's own spans inside `align`, summed by name
    // (host "encode", "plan", "pack", "results", "wait"; "copy" and "kernel").
    std::vector<std::pair<std::string, double>> device;
};

// Runs the job, writing every alignment to `out` in input order (not
// committed: the caller commits). Throws Error or Cancelled; then `out` holds
// a partial file the caller drops by not committing it.
PairPipelineStats run_pair_pipeline(const PairPipelineSettings& settings, Backend& backend, JobContext& context,
                                    AtomicOutput& out);
// The same, the backend found by `backend` on the thread that starts the
// device, while the input is read (a registry's GPUs may still be coming up:
// DeviceRegistry::defer). Its errors come before the first chunk is aligned.
PairPipelineStats run_pair_pipeline(const PairPipelineSettings& settings, const std::function<Backend&()>& backend,
                                    JobContext& context, AtomicOutput& out);

// One line of the stats for a terminal: "align --zip: N pairs ... in S s; read ..., parse ...".
std::string describe(const PairPipelineStats& stats, const std::string& label);

}  // namespace alignscope
