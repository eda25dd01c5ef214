// What the profile commands share: the profile scanner registry (CPU, and the
// GPUs in a CUDA build), device specs, --gpu-mem, and reading targets for a
// model's alphabet (cli_profile.hpp).
#include "cli_profile.hpp"
#include "cli_options.hpp"

#include <alignscope/error.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/profile_scanners.hpp>
#endif

#include <algorithm>

namespace alignscope::cli {

std::unique_ptr<profile::ProfileScannerRegistry> profile_scanner_registry() {
    auto registry = profile::make_cpu_profile_scanner_registry();
#ifdef ALIGNSCOPE_WITH_CUDA
    kernels::register_cuda_profile_scanners(*registry);
#endif
    return registry;
}

std::vector<std::string> profile_devices(const profile::ProfileScannerRegistry& registry, const std::string& spec,
                                         const std::string& flag) {
    std::vector<std::string> out;
    std::string known;
    for (const DeviceInfo& d : registry.devices()) {
        if (!d.available) continue;
        known += (known.empty() ? "" : ", ") + d.id;
        const bool wanted = spec == "auto" ? d.id != "cpu-ref" : spec == "gpu" ? d.kind == "gpu" : d.id == spec;
        if (wanted) out.push_back(d.id);
    }
    if (out.empty())
        throw Error(flag + ": no profile search device '" + spec + "' (devices: " + known +
                    (spec == "gpu" ? "; this machine or build has no GPU that runs the profile filters" : "") +
                    "; or auto, gpu)");
    return out;
}

std::uint64_t profile_gpu_memory(const std::string& text) {
    return text.empty() ? 0 : parse_byte_size(text, "--gpu-mem");
}

std::string profile_gpu_memory_note(const std::string& text, bool any_gpu) {
    if (text.empty()) return {};
    std::string note = "GPU memory budget " + std::to_string(profile_gpu_memory(text)) + " bytes (--gpu-mem " + text +
                       "): the targets that do not fit are scanned a slice at a time";
    if (!any_gpu) note += "; no GPU among the devices here, so it goes unused";
    return note;
}

profile::ProfileTargets read_targets_for(const std::string& path, profile::ResidueAlphabet alphabet,
                                         std::size_t limit) {
    profile::ProfileTargets targets = profile::read_profile_targets(path, alphabet, limit);
    if (alphabet != profile::ResidueAlphabet::Amino) return targets;
    const profile::ResidueCode& code = profile::ResidueCode::of(alphabet);
    const bool nucleotides = std::all_of(targets.residues.begin(), targets.residues.end(), [&](std::uint8_t c) {
        const char s = code.symbol(c);
        return s == 'A' || s == 'C' || s == 'G' || s == 'T' || s == 'U' || s == 'N';
    });
    if (nucleotides)
        throw Error(path +
                    ": holds nucleotide sequences (only A, C, G, T/U and N), but the profile is a protein "
                    "model: give protein targets, or a DNA/RNA model");
    return targets;
}

}  // namespace alignscope::cli
