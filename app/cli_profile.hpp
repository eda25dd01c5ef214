// The profile parts of `verify` and `bench`: `verify --profile` (every profile
// filter kernel against the scalar reference) and `bench --profile` (the GPU,
// the CPU device and hmmsearch on one model and one database), with their
// flags, and the profile scanner registry every profile command uses.
#pragma once

#include "cli_commands.hpp"

#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace alignscope::cli {

// The CPU profile scanners and, in a CUDA build, one per usable GPU.
std::unique_ptr<profile::ProfileScannerRegistry> profile_scanner_registry();

// The profile devices a --device spec names: "auto" every usable one but the
// scalar reference, "gpu" every GPU, otherwise the one given. Throws Error
// naming `flag` and listing the devices.
std::vector<std::string> profile_devices(const profile::ProfileScannerRegistry& registry, const std::string& spec,
                                         const std::string& flag = "--device");

// --gpu-mem of the profile commands (hmmsearch, verify --profile, bench
// --profile): the memory the GPU profile scanner plans to, loading and
// scanning the targets that do not fit a slice at a time, with the same
// scores. Empty: 0, the scanner's default (90 % of the free memory). Throws
// Error naming --gpu-mem for text that is not a positive size ("4G", "512M").
std::uint64_t profile_gpu_memory(const std::string& text);

// The line a run gives its --gpu-mem (empty when not given): the budget, and
// where none of the devices is a GPU, that it goes unused.
std::string profile_gpu_memory_note(const std::string& text, bool any_gpu);

// Reads the targets of `path` for `alphabet`, refusing nucleotide sequences
// for protein models (every letter A, C, G, T, U or N) with one clear error.
profile::ProfileTargets read_targets_for(const std::string& path, profile::ResidueAlphabet alphabet,
                                         std::size_t limit = 0);

struct ProfileVerifyFlags {
    bool enabled = false;                // --profile
    std::vector<std::string> hmm_files;  // --hmm: real models beside the made-up ones
    std::string database;                // --db: real targets
    std::uint64_t db_limit = 2000;       // --db-limit: first N records; 0 = all
    int random_models = 4;               // --random-models
    bool no_long = false;                // --no-long: without the 1,100- and 2,100-node models
    CLI::Option* db_option = nullptr;
    CLI::Option* hmm_option = nullptr;
    CLI::Option* db_limit_option = nullptr;
    CLI::Option* random_models_option = nullptr;
    CLI::Option* no_long_option = nullptr;

    void add_to(CLI::App& command);
    bool other_flags_given() const;  // any profile flag but --profile
};

// verify --profile. `random_targets` per model (--pairs), the seed of the
// made-up models and targets, device spec, CPU threads and --gpu-mem (the
// GPUs then scan the targets in slices where they do not fit it).
int run_verify_profile(const ProfileVerifyFlags& flags, const std::string& device, std::uint64_t random_targets,
                       std::uint64_t seed, int threads, const std::string& gpu_mem);

struct ProfileBenchFlags {
    bool enabled = false;        // --profile
    std::string hmm;             // --hmm MODELS.hmm: every model in it is measured
    std::string database;        // --db FASTA
    std::uint64_t db_limit = 0;  // --db-limit: first N records; 0 = all
    bool no_hmmsearch = false;   // --no-hmmsearch
    void add_to(CLI::App& command);
};

// bench --profile: the devices `device` names plus the CPU device, and
// hmmsearch when on the PATH, in one run; a table, and JSON when asked. The
// GPUs work within --gpu-mem `gpu_mem` (empty: their default).
int run_bench_profile(const ProfileBenchFlags& flags, const std::string& device, const std::string& cpu_device,
                      int threads, int repeat, const std::string& gpu_mem, const std::string& json,
                      CliContext& context);

}  // namespace alignscope::cli
