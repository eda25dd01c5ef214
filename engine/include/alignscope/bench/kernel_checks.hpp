// The catalog of kernel variants and how each is checked against the CPU
// reference: what `verify --all-kernels` runs. A family of kernels (pairwise,
// database scan, long pair, and any later one) plugs in by registering its
// variants and its check; the command knows no family by name.
#pragma once

#include <alignscope/device/backend.hpp>
#include <alignscope/device/kernel_name.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace alignscope {

class ScannerRegistry;

// What a check is given: where to run, how much, and the shared context.
struct KernelCheckRequest {
    DeviceRegistry* devices = nullptr;
    const ScannerRegistry* scanners = nullptr;  // null when no scanners are known
    std::string device;                         // the device that runs the variant ("cpu", "gpu:0")
    KernelName kernel;
    std::uint64_t pairs = 24;  // pairs (or scan cases' queries) per variant
    std::uint64_t seed = 1;
    int threads = 0;  // CPU threads; 0 = all cores
    JobContext* context = nullptr;
};

// One variant's outcome. A refusal is a clear error the device gave for a pair
// its lanes cannot hold (counted apart: not a wrong answer); a variant that
// passed no pair at all failed (it was never shown to work).
struct KernelCheckOutcome {
    std::uint64_t pairs = 0, passed = 0, failed = 0, refused = 0;
    std::vector<std::string> problems;  // the first few, one line each
    // A device that picks its kernels itself (a scanner) chose others for
    // every case: nothing of this variant to judge. Said apart, not a pass;
    // a failure only when something else failed.
    bool not_run = false;
    bool ok() const { return failed == 0 && passed > 0; }
    bool failed_check() const { return failed > 0 || (!ok() && !not_run); }
};

using KernelCheck = std::function<KernelCheckOutcome(const KernelCheckRequest&)>;

// A family of kernels on one kind of device.
struct KernelFamilyEntry {
    std::string area;  // "pairwise", "search", "long", ...: the line's first word
    // The devices that run it: an exact id ("cpu", "cpu-ref") or "gpu" for
    // every GPU ("gpu:0", "gpu:1", ...).
    std::string device;
    std::vector<KernelName> variants;
    KernelCheck check;
};

class KernelCatalog {
public:
    void add(KernelFamilyEntry entry);
    const std::vector<KernelFamilyEntry>& families() const { return families_; }
    // Every variant name the catalog holds, in registration order, each once.
    std::vector<KernelName> names() const;

private:
    std::vector<KernelFamilyEntry> families_;
};

// Every mode × gap model with each of `families` (family, group) × `widths`:
// how a family lists its variants.
struct FamilyShape {
    std::string family;
    int group = 0;
};
std::vector<KernelName> kernel_variants(const std::vector<FamilyShape>& families,
                                        const std::vector<KernelWidth>& widths);

// The engine's checks, for any family to register with:
//  - pairwise: `verify`'s seeded pairs of the variant's mode and gap model,
//    extreme schemes included, with PairJob::kernel forcing it;
//  - long pair: `verify --long`'s pairs of its mode and gap model (short ones),
//    LongRunnerSettings::kernel forcing the strip height (its group);
//  - search: `verify --search`'s random cases of its mode on the device's
//    scanner (it picks its kernels itself); the variant passes when the cases
//    with its mode and gap model agree on every score and the scanner reports
//    having run it. The cases of one device and mode run once for all its
//    variants: make_search_kernel_check() keeps them.
KernelCheckOutcome check_pairwise_kernel(const KernelCheckRequest& request);
KernelCheckOutcome check_long_kernel(const KernelCheckRequest& request);
KernelCheck make_search_kernel_check();

// The engine's own families: "cpu-ref" (scalar and Myers-Miller, 64-bit),
// "cpu" (parasail striped and scan, 8/16/32-bit lanes), their database
// scanners and their long-pair path.
void add_cpu_kernel_families(KernelCatalog& catalog);

}  // namespace alignscope
