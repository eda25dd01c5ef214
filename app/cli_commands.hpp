// The alignscope-cli subcommands. cli_main.cpp builds the CLI11 app and calls
// each add_*_command; each command lives in its own cli_<name>.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <alignscope/device/backend.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace alignscope {
class KernelCatalog;
class ScannerRegistry;
}  // namespace alignscope

namespace alignscope::cli {

// Shared state: the device registry (CPU backends + CUDA when built in).
struct CliContext {
    std::unique_ptr<DeviceRegistry> registry;
    std::string command_line;  // the whole invocation, for output headers
    // Set by the chosen subcommand's callback; run after parsing. Returns the exit status.
    std::function<int()> action;
};

void add_align_command(CLI::App& app, CliContext& context);
void add_devices_command(CLI::App& app, CliContext& context);
void add_verify_command(CLI::App& app, CliContext& context);
void add_bench_command(CLI::App& app, CliContext& context);
void add_project_command(CLI::App& app, CliContext& context);
void add_search_command(CLI::App& app, CliContext& context);
void add_allvsall_command(CLI::App& app, CliContext& context);
void add_hmmsearch_command(CLI::App& app, CliContext& context);

// Every device that can scan a database: the CPU scanners and, in a CUDA
// build, the GPUs'.
std::unique_ptr<ScannerRegistry> scanner_registry();

// Every kernel variant this build has, by family and device (CPU families,
// and the GPU's in a CUDA build): what verify --all-kernels runs and
// `devices` lists. Defined in cli_verify.cpp.
KernelCatalog kernel_catalog();

// `verify --search` and `bench --search`: the search command's --verify and
// --bench (defined in cli_search.cpp) with their defaults and these settings;
// `mode` (local, global, semiglobal; empty = all) limits the checked cases.
int run_search_verify(const std::string& device, std::uint64_t seed, int threads, int streams,
                      const std::string& gpu_mem, const std::string& mode, CliContext& context);
int run_search_bench(const std::string& device, bool quick, int threads, const std::string& json, CliContext& context);

}  // namespace alignscope::cli
