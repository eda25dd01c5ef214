// `alignscope-cli devices`: every backend the registry knows, usable or not, and why.
#include "cli_commands.hpp"

#include <alignscope/bench/kernel_checks.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace alignscope::cli {
namespace {

// The kernels of `device` in the catalog, by area ("pairwise", "search",
// "long"), each name once.
std::map<std::string, std::vector<std::string>> kernels_of(const KernelCatalog& catalog, const std::string& device) {
    std::map<std::string, std::vector<std::string>> out;
    for (const KernelFamilyEntry& family : catalog.families()) {
        if (!(family.device == device || (family.device == "gpu" && device.rfind("gpu:", 0) == 0))) continue;
        auto& names = out[family.area];
        for (const KernelName& k : family.variants)
            if (std::find(names.begin(), names.end(), k.format()) == names.end()) names.push_back(k.format());
    }
    return out;
}

// "striped_s8, scan_s16": the family and width parts of `names`, each once
// (the mode and gap model are the job's).
std::string shapes_of(const std::vector<std::string>& names) {
    std::vector<std::string> shapes;
    for (const std::string& name : names) {
        const KernelName k = KernelName::parse(name);
        const std::string shape =
            k.family + (k.group ? std::to_string(k.group) : "") + "_" + std::string(to_string(k.width));
        if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
    }
    std::string out;
    for (const std::string& shape : shapes) out += (out.empty() ? "" : ", ") + shape;
    return out;
}

int run_devices(bool json, CliContext& context) {
    const auto devices = context.registry->devices();
    const KernelCatalog catalog = kernel_catalog();
    if (json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& d : devices) {
            list.push_back(
                {{"id", d.id},
                 {"kind", d.kind},
                 {"name", d.name},
                 {"description", d.description},
                 {"available", d.available},
                 {"unavailable_reason", d.unavailable_reason},
                 {"threads", d.threads},
                 {"sm_count", d.sm_count},
                 {"memory_bytes", d.memory_bytes},
                 {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                 {"driver_version", d.driver_version},
                 {"runtime_version", d.runtime_version},
                 {"kernels", kernels_of(catalog, d.id)}});
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
        for (const auto& [area, names] : kernels_of(catalog, d.id))
            std::printf("         %s kernels: %s (e.g. %s; --json names each)\n", area.c_str(),
                        shapes_of(names).c_str(), names.front().c_str());
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
