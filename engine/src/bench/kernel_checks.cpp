// The kernel catalog, the engine's checks of one variant against the CPU
// reference (pairwise, long pair, database scan) and the CPU backends' own
// families.
#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/bench/long_verify.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/verify_search.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace alignscope {

namespace {

constexpr std::size_t kProblemLines = 3;  // problems kept per variant

void note(KernelCheckOutcome& out, std::string line) {
    if (out.problems.size() < kProblemLines) out.problems.push_back(std::move(line));
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Each comma-separated name in `list` that is a kernel name, parsed.
std::vector<KernelName> kernels_in(const std::string& list) {
    std::vector<KernelName> out;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        item.erase(0, item.find_first_not_of(' '));
        if (auto name = read_stored_kernel_name(item)) out.push_back(*name);
    }
    return out;
}

// A device that ran other kernels than the one forced fails: the line would
// claim a variant that was never run. One exception, the GPU's documented
// widening: a pair whose scores a 16-bit lane cannot be shown to hold (or that
// saturated it) runs again at 32 bits in the same variant; that is allowed
// when the forced variant itself ran too.
void require_only(KernelCheckOutcome& out, const std::string& ran, const KernelName& forced) {
    const std::vector<KernelName> kernels = kernels_in(ran);
    const bool forced_ran = std::find(kernels.begin(), kernels.end(), forced) != kernels.end();
    for (const KernelName& k : kernels) {
        if (k == forced) continue;
        KernelName narrowed = k;
        narrowed.width = forced.width;
        if (forced_ran && narrowed == forced && bits_of(k.width) > bits_of(forced.width)) continue;
        note(out, forced_ran ? "the device ran " + k.format() + " when " + forced.format() + " was forced"
                             : "the device ran " + k.format() + ", never " + forced.format() + ", which was forced");
        out.failed += std::max<std::uint64_t>(out.passed, 1);
        out.passed = 0;
        return;
    }
}

}  // namespace

void KernelCatalog::add(KernelFamilyEntry entry) {
    if (entry.area.empty() || entry.device.empty() || !entry.check)
        throw Error("internal error: a kernel family needs an area, a device and a check");
    families_.push_back(std::move(entry));
}

std::vector<KernelName> KernelCatalog::names() const {
    std::vector<KernelName> out;
    for (const KernelFamilyEntry& f : families_)
        for (const KernelName& k : f.variants)
            if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return out;
}

std::vector<KernelName> kernel_variants(const std::vector<FamilyShape>& families,
                                        const std::vector<KernelWidth>& widths) {
    std::vector<KernelName> out;
    for (AlignmentMode mode : {AlignmentMode::Local, AlignmentMode::Global, AlignmentMode::SemiGlobal})
        for (bool linear : {false, true})
            for (const FamilyShape& f : families)
                for (KernelWidth w : widths) out.push_back({mode, linear, f.family, f.group, w});
    return out;
}

KernelCheckOutcome check_pairwise_kernel(const KernelCheckRequest& request) {
    VerifyOptions options;
    options.device = request.device;
    options.reference_device = "cpu-ref";
    // Most pairs overflow 8-bit lanes (a global pair of 20 residues can): an
    // 8-bit variant gets 8 times the pairs, so that the short ones it holds
    // come up.
    options.pairs = bits_of(request.kernel.width) <= 8 ? request.pairs * 8 : request.pairs;
    options.seed = request.seed;
    options.threads = request.threads;
    options.kernel = request.kernel.format();
    options.forced_kernel_may_refuse = true;
    options.job_per_pair = true;
    KernelCheckOutcome out;
    VerifyCallbacks callbacks;
    callbacks.mismatch = [&out](const VerifyMismatch& m) {
        note(out, m.config->describe() + ": " + (m.problems.empty() ? "mismatch" : m.problems.front()));
    };
    callbacks.job_failure = [&out](const VerifyJobFailure& f) { note(out, first_line(f.message)); };
    std::string first_refusal;
    callbacks.refusal = [&first_refusal](const VerifyJobFailure& f) {
        if (first_refusal.empty()) first_refusal = first_line(f.message);
    };
    JobContext fallback;
    JobContext& context = request.context ? *request.context : fallback;
    const VerifySummary summary = verify_device(*request.devices, options, callbacks, context);
    out.pairs = options.pairs;
    out.passed = summary.passed;
    out.failed = summary.failed;
    out.refused = summary.refused;
    if (out.passed == 0 && !first_refusal.empty()) note(out, "every pair refused: " + first_refusal);
    require_only(out, summary.tested_kernels, request.kernel);
    return out;
}

KernelCheckOutcome check_long_kernel(const KernelCheckRequest& request) {
    Backend& tested = request.devices->select(request.device);
    LongVerifyOptions options;
    options.seed = request.seed;
    options.indices =
        long_verify_indices(request.kernel.mode, request.kernel.linear, std::max<std::uint64_t>(1, request.pairs / 8));
    options.max_length = 3000;  // long enough for several strips, quick on a CPU
    options.threads = request.threads;
    options.cpu_pipeline_too = false;
    // A GPU's strip kernels are forced by name; a CPU has one way
    // (Myers-Miller) and takes no forced kernel.
    if (request.kernel.family != "myersmiller") options.settings.kernel = request.kernel.format();
    KernelCheckOutcome out;
    LongVerifyCallbacks callbacks;
    callbacks.result = [&out](const LongVerifyResult& r) {
        if (!r.problems.empty()) note(out, r.pair->describe() + ": " + r.problems.front());
    };
    JobContext fallback;
    const LongVerifySummary summary =
        verify_long(tested, options, callbacks, request.context ? *request.context : fallback);
    out.pairs = options.indices.size();
    out.passed = summary.passed;
    out.failed = summary.failed;
    out.refused = summary.refused;  // extreme schemes past the kernel's limits, said as such
    require_only(out, summary.tested_kernels, request.kernel);
    return out;
}

KernelCheck make_search_kernel_check() {
    // The cases of one (device, mode), run once for all the variants asking.
    struct Cache {
        std::mutex mutex;
        std::map<std::string, SearchVerifySummary> runs;
    };
    auto cache = std::make_shared<Cache>();
    return [cache](const KernelCheckRequest& request) {
        if (!request.scanners) throw Error("verify: no database scanners are known here");
        const std::string key = request.device + " " + std::string(mode_word(request.kernel.mode));
        std::lock_guard lock(cache->mutex);
        auto run = cache->runs.find(key);
        if (run == cache->runs.end()) {
            SearchVerifyOptions options;
            options.device = request.device;
            options.reference = "cpu-ref";
            options.seed = request.seed;
            options.modes = {request.kernel.mode};
            options.random_queries = std::max<std::size_t>(2, static_cast<std::size_t>(request.pairs / 6));
            options.random_sequences = 150;
            options.spot_checks = 1;
            options.threads = request.threads;
            JobContext fallback;
            run = cache->runs
                      .emplace(key, verify_search(*request.scanners, options, {},
                                                  request.context ? *request.context : fallback))
                      .first;
        }
        KernelCheckOutcome out;
        bool ran = false;
        for (const SearchVerifyCase& c : run->second.cases) {
            if (c.skipped) continue;
            const std::vector<KernelName> used = kernels_in(c.tested_kernels);
            const bool same_model = std::any_of(used.begin(), used.end(), [&](const KernelName& k) {
                return k.mode == request.kernel.mode && k.linear == request.kernel.linear;
            });
            if (!same_model) continue;
            ran = ran || std::find(used.begin(), used.end(), request.kernel) != used.end();
            out.pairs += c.scores_compared;
            const std::uint64_t bad = std::min(c.scores_compared, c.score_mismatches + c.spot_failed);
            out.failed += bad;
            out.passed += c.scores_compared - bad;
            if (!c.passed()) note(out, c.name + ": " + std::to_string(c.score_mismatches) + " scores differ");
        }
        if (!ran) {
            note(out, "the scanner chose other kernels for every case of this mode and gap model");
            out.not_run = true;
            out.passed = 0;
        }
        return out;
    };
}

void add_cpu_kernel_families(KernelCatalog& catalog) {
    const std::vector<KernelName> scalar = kernel_variants({{"scalar"}, {"myersmiller"}}, {KernelWidth::S64});
    catalog.add({"pairwise", "cpu-ref", scalar, check_pairwise_kernel});
    // parasail: its striped kernels are wrong with linear gaps and its 8-bit
    // local scan kernel with long queries, so the "cpu" device refuses those
    // (parasail_backend.cpp): they are not variants it has.
    std::vector<KernelName> parasail;
    for (const KernelName& k :
         kernel_variants({{"striped"}, {"scan"}}, {KernelWidth::S8, KernelWidth::S16, KernelWidth::S32})) {
        if (k.family == "striped" && k.linear) continue;
        if (k.family == "scan" && k.width == KernelWidth::S8 && k.mode == AlignmentMode::Local) continue;
        parasail.push_back(k);
    }
    catalog.add({"pairwise", "cpu", parasail, check_pairwise_kernel});
    catalog.add({"long", "cpu", kernel_variants({{"myersmiller"}}, {KernelWidth::S64}), check_long_kernel});
    // The CPU database scanners: parasail's score-only kernels on "cpu" (striped
    // for local affine gaps, from 8-bit lanes; scan otherwise, from 16), the
    // scalar recurrence on "cpu-ref".
    std::vector<KernelName> scan;
    for (const KernelName& k : kernel_variants({{"striped"}, {"scan"}}, {KernelWidth::S8, KernelWidth::S16})) {
        const bool striped = k.mode == AlignmentMode::Local && !k.linear;
        if ((k.family == "striped") != striped) continue;
        if (k.width == KernelWidth::S8 && !striped) continue;
        scan.push_back(k);
    }
    catalog.add({"search", "cpu", scan, make_search_kernel_check()});
    catalog.add(
        {"search", "cpu-ref", kernel_variants({{"reference"}}, {KernelWidth::S64}), make_search_kernel_check()});
}

}  // namespace alignscope
