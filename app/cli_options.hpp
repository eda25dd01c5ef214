// Flags shared by several alignscope-cli commands: scoring (matrix, penalties,
// mode), device selection, and output. One definition so every command spells
// and documents them the same way.
#pragma once

#include "cli_numbers.hpp"

#include <CLI/CLI.hpp>

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/policy.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace alignscope::cli {

struct ScoringFlags {
    std::string mode = "global";
    std::string free_ends = "all";
    std::string matrix;  // empty: BLOSUM62 for protein, EDNAFULL for nucleotides
    std::optional<double> match, mismatch;
    std::optional<double> gap_open, gap_extend;  // default 10 / 0.5 (EMBOSS needle/water)
    std::string alphabet;                        // empty: detect
    CLI::Option* free_ends_option = nullptr;

    void add_to(CLI::App& command, const std::string& default_mode = "global");
    // Mode and free end gaps; --free-ends given outside semi-global mode is an error.
    AlignOptions align_options() const;
    std::optional<AlphabetKind> alphabet_override() const;
    // Builds the scheme for sequences of `alphabet`; throws Error naming the flag.
    ScoringScheme scheme(AlphabetKind alphabet) const;
};

struct DeviceFlags {
    std::string device = "auto";
    int threads = 0;
    int streams = 0;
    std::string kernel;
    std::string gpu_mem;   // e.g. "4G", "512M"; empty = backend default
    std::string timeline;  // Chrome trace output path

    void add_to(CLI::App& command, const std::string& default_device = "auto");
    std::uint64_t gpu_memory_bytes() const;  // throws Error naming --gpu-mem
    void apply(PairJob& job) const;
};

// The long-pair path's settings (align --long, verify --long, bench --long).
struct LongFlags {
    std::string strategy;          // "strips" or "streams"; empty = the backend's choice
    int kernels = 0;               // kernels of the "streams" strategy; 0 = backend default
    std::string special_rows_mem;  // e.g. "2G"; empty = LongPairOptions' default
    CLI::Option* strategy_option = nullptr;
    CLI::Option* kernels_option = nullptr;
    CLI::Option* special_rows_option = nullptr;

    // with_strategy: bench --long sweeps --strategies instead.
    void add_to(CLI::App& command, bool with_strategy = true);
    bool given() const;  // any of them on the command line
    // Strategy, kernels, streams, GPU memory and forced kernel; throws Error naming the flag.
    LongRunnerSettings settings(const DeviceFlags& device) const;
    std::uint64_t special_row_budget() const;  // 0 = default; throws Error naming --special-rows-mem
};

// min(m, n) from which `align` takes the long-pair path by itself when given one pair.
inline constexpr std::int64_t kLongPairThreshold = policy::long_pair_residues;

// Parses sizes like "512M", "4G", "1.5GiB", "1000000" into bytes; a size past
// what any machine has is called too large.
std::uint64_t parse_byte_size(const std::string& text, const std::string& flag);

// For --kernel: a name in a family word of an earlier version
// ("sw_affine_dbscan_s16x2") is read as today's ("sw_affine_search_s16x2"),
// with a warning on stderr saying so; any other text is left to the backend.
CLI::Validator kernel_of_today();

}  // namespace alignscope::cli
