// Flags shared by several alignscope-cli commands: scoring (matrix, penalties,
// mode), device selection, and output. One definition so every command spells
// and documents them the same way.
#pragma once

#include <CLI/CLI.hpp>

#include <alignscope/align/alignment.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/seq/alphabet.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace alignscope::cli {

struct ScoringFlags {
    std::string mode = "global";
    std::string free_ends = "all";
    std::string matrix;         // empty: BLOSUM62 for protein, EDNAFULL for nucleotides
    std::optional<double> match, mismatch;
    std::optional<double> gap_open, gap_extend;  // default 10 / 0.5 (EMBOSS needle/water)
    std::string alphabet;       // empty: detect

    void add_to(CLI::App& command, const std::string& default_mode = "global");
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
    std::string gpu_mem;  // e.g. "4G", "512M"; empty = backend default
    std::string timeline; // Chrome trace output path

    void add_to(CLI::App& command, const std::string& default_device = "auto");
    std::uint64_t gpu_memory_bytes() const;  // throws Error naming --gpu-mem
    void apply(PairJob& job) const;
};

// Parses sizes like "512M", "4G", "1.5GiB", "1000000" into bytes.
std::uint64_t parse_byte_size(const std::string& text, const std::string& flag);

}  // namespace alignscope::cli
