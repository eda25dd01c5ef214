// `alignscope-cli devices`: every backend the registry knows, usable or not, and why.
#include "cli_commands.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace alignscope::cli {
namespace {

int run_devices(bool json, CliContext& context) {
    const auto devices = context.registry->devices();
    if (json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& d : devices) {
            list.push_back({{"id", d.id}, {"kind", d.kind}, {"name", d.name}, {"description", d.description},
                            {"available", d.available}, {"unavailable_reason", d.unavailable_reason},
                            {"threads", d.threads}, {"sm_count", d.sm_count}, {"memory_bytes", d.memory_bytes},
                            {"compute_capability", std::to_string(d.compute_major) + "." +
                                                       std::to_string(d.compute_minor)},
                            {"driver_version", d.driver_version}, {"runtime_version", d.runtime_version}});
        }
        std::cout << list.dump(2) << '\n';
        return 0;
    }
    for (const auto& d : devices) {
        std::printf("%-8s %-4s %s\n", d.id.c_str(), d.kind.c_str(), d.name.c_str());
        if (!d.description.empty()) std::printf("         %s\n", d.description.c_str());
        if (d.kind == "gpu" && d.available)
            std::printf("         %d SMs, %.1f GiB, compute capability %d.%d, driver %s, runtime %s\n", d.sm_count,
                        double(d.memory_bytes) / (1024.0 * 1024 * 1024), d.compute_major, d.compute_minor,
                        d.driver_version.c_str(), d.runtime_version.c_str());
        if (!d.available) std::printf("         unavailable: %s\n", d.unavailable_reason.c_str());
    }
    return 0;
}

}  // namespace

void add_devices_command(CLI::App& app, CliContext& context) {
    auto json = std::make_shared<bool>(false);
    CLI::App* command = app.add_subcommand("devices", "List the CPU backends and every CUDA device");
    command->add_flag("--json", *json, "Print JSON instead of a table");
    command->callback([json, &context] { context.action = [json, &context] { return run_devices(*json, context); }; });
}

}  // namespace alignscope::cli
