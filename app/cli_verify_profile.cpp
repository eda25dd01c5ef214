// `alignscope-cli verify --profile`: every profile filter kernel of each
// device (the CPU's striped filters; on GPUs SSV, MSV alone and the Viterbi
// filter) against the scalar reference recurrences, score for score and pass
// for pass (a GPU's Forward and parser Backward against the CPU's, every
// row's specials), over real and made-up models (random, extreme, tiny, long) and
// real and made-up targets (random, one residue, 100,000 residues). One line
// per model, target set and device; "N passed, N failed"; exit status 1 when
// anything differs. With --gpu-mem the GPUs scan the targets in slices that
// fit it, and each line says how many it took.
#include "cli_options.hpp"
#include "cli_profile.hpp"
#include "cli_progress.hpp"

#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/filter_verify.hpp>

#ifdef ALIGNSCOPE_WITH_CUDA
#include <alignscope/kernels/profile_scanners.hpp>
#endif

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

namespace alignscope::cli {

namespace {

// The profile kernels of `device` in the catalog, comma-separated.
std::string profile_kernels_of(const std::string& device) {
    std::string out;
    const KernelCatalog catalog = kernel_catalog();
    for (const KernelFamilyEntry& family : catalog.families()) {
        if (family.area != "profile") continue;
        if (!(family.device == device || (family.device == "gpu" && device.rfind("gpu:", 0) == 0))) continue;
        for (const KernelName& k : family.variants) out += (out.empty() ? "" : ", ") + k.format();
    }
    return out.empty() ? "the scalar recurrences" : out;
}

std::string counted(const profile::FilterComparison& c, const char* threshold) {
    char text[160];
    std::snprintf(text, sizeof text, "%zu equal (%zu past %s, %zu overflow)", c.compared - c.differing, c.passed,
                  threshold, c.overflows);
    std::string out = text;
    if (c.differing) out += ", " + std::to_string(c.differing) + " DIFFER";
    if (c.pass_differing) out += ", " + std::to_string(c.pass_differing) + " decided otherwise";
    return out;
}

// One line per model and target set; the mismatches under a failed one.
void print_check(const std::string& device, bool gpu, const profile::FilterCheck& c) {
    char head[200];
    std::snprintf(head, sizeof head, "%-6s %-7s %-19s M=%-5d %-8s %6zu targets: ", c.passed() ? "ok" : "FAILED",
                  device.c_str(), c.model.c_str(), c.model_length, c.target_set.c_str(), c.targets);
    std::cout << head << "MSV " << counted(c.msv, "F1") << "; Viterbi " << counted(c.viterbi, "F2");
    for (const auto& [kernel, comparison] : c.extra)
        std::cout << "; " << kernel << " alone " << comparison.compared - comparison.differing << " equal"
                  << (comparison.differing ? ", " + std::to_string(comparison.differing) + " DIFFER" : "");
    if (gpu && c.msv_stats.msv_kernel_seconds > 0)
        std::cout << "; SSV settled " << c.targets - c.msv_stats.msv_rescored << ", MSV after it "
                  << c.msv_stats.msv_rescored;
    if (gpu && c.msv_stats.msv_kernel_seconds <= 0) std::cout << "; MSV on the CPU (longer than the GPU kernels)";
    if (gpu && c.viterbi_stats.viterbi_kernel_seconds <= 0)
        std::cout << "; Viterbi on the CPU (longer than the GPU kernels)";
    if (gpu && c.msv_stats.target_slices > 1) std::cout << "; targets in " << c.msv_stats.target_slices << " slices";
    if (c.forward_checked) {
        char forward[160];
        std::snprintf(forward, sizeof forward, " (kernel %.1f ms, the CPU's forward() %.1f ms)",
                      c.forward_stats.forward_kernel_seconds * 1e3, c.forward_reference_seconds * 1e3);
        std::cout << "; Forward " << counted(c.forward, "F3") << forward;
    }
    if (c.backward_checked) {
        char backward[200];
        std::snprintf(backward, sizeof backward,
                      "; Backward %zu equal (every row's specials)%s (kernel %.1f ms, call %.1f ms; the CPU's "
                      "backward_group %.1f ms on %d threads)",
                      c.backward.compared - c.backward.differing,
                      c.backward.differing ? (", " + std::to_string(c.backward.differing) + " DIFFER").c_str() : "",
                      c.backward_stats.backward_kernel_seconds * 1e3, c.backward_stats.backward_seconds * 1e3,
                      c.backward_reference_seconds * 1e3, c.reference_threads);
        std::cout << backward;
    }
    if (c.envelopes.checked) {
        char envelopes[240];
        std::snprintf(envelopes, sizeof envelopes,
                      "; envelopes %zu equal%s (kernel %.1f ms, call %.1f ms, %llu redone on the CPU; the CPU "
                      "reference %.1f ms)",
                      c.envelopes.compared - c.envelopes.differing,
                      c.envelopes.differing ? (", " + std::to_string(c.envelopes.differing) + " DIFFER").c_str() : "",
                      c.envelopes.stats.envelope_kernel_seconds * 1e3, c.envelopes.stats.envelope_seconds * 1e3,
                      static_cast<unsigned long long>(c.envelopes.stats.envelopes_on_cpu),
                      c.envelopes.reference_seconds * 1e3);
        std::cout << envelopes;
    }
    std::cout << "\n";
    for (const std::string& line : c.mismatches) std::cout << "    " << line << "\n";
    std::cout << std::flush;
}

struct Totals {
    std::uint64_t scores = 0, cells = 0, passed = 0, failed = 0;
    double seconds = 0, reference_seconds = 0;
};

void add_to_totals(Totals& totals, const profile::FilterCheck& c) {
    totals.scores += c.compared;
    totals.cells += c.msv_stats.msv_cells + c.viterbi_stats.viterbi_cells;
    totals.seconds += c.msv_stats.msv_seconds + c.viterbi_stats.viterbi_seconds;
    (c.passed() ? totals.passed : totals.failed) += 1;
}

}  // namespace

void ProfileVerifyFlags::add_to(CLI::App& command) {
    command.add_flag("--profile", enabled,
                     "Check the profile filter kernels instead (the CPU's striped MSV and Viterbi filters; on GPUs "
                     "SSV, MSV and the Viterbi filter) against the scalar reference, score for score and pass for "
                     "pass, and a GPU's Forward and parser Backward against the CPU's, every row's specials: made-up "
                     "models (random, extreme, one node, 1,100 and 2,100 nodes) and --hmm models, "
                     "over made-up targets (--pairs random ones a model, single residues, runs, 100,000 residues) "
                     "and --db targets; --device auto = every profile device");
    hmm_option = command.add_option("--hmm", hmm_files,
                                    "verify --profile: HMMER3 text model file(s) checked beside the made-up models");
    db_option = command.add_option("--db", database, "verify --profile: real targets (FASTA/FASTQ, plain or gzip)");
    db_limit_option = command.add_option("--db-limit", db_limit,
                                         "verify --profile: use the first N records of --db [default: 2000; 0 = all]");
    random_models_option = command
                               .add_option("--random-models", random_models,
                                           "verify --profile: random models beside the extreme ones [default: 4]")
                               ->transform(strict_number<int>());
    no_long_option =
        command.add_flag("--no-long", no_long,
                         "verify --profile: leave out the 1,100- and 2,100-node models (quicker on a CPU)");
}

bool ProfileVerifyFlags::other_flags_given() const {
    return hmm_option->count() || db_option->count() || db_limit_option->count() || random_models_option->count() ||
           no_long_option->count();
}

namespace {

// The models and real targets of a run, all read before any work so that a
// bad input fails at once.
struct VerifyInputs {
    std::vector<profile::ProfileHmm> models;
    std::size_t real_models = 0;  // the first ones, from --hmm
    std::map<profile::ResidueAlphabet, profile::ProfileTargets> real;
};

VerifyInputs read_verify_inputs(const ProfileVerifyFlags& flags, std::uint32_t seed) {
    VerifyInputs in;
    for (const std::string& file : flags.hmm_files)
        for (profile::ProfileHmm& hmm : profile::read_hmm_file(file)) in.models.push_back(std::move(hmm));
    in.real_models = in.models.size();
    for (profile::ProfileHmm& hmm : profile::made_up_profile_models(flags.random_models, !flags.no_long, seed))
        in.models.push_back(std::move(hmm));
    // DNA models too (four codes a node where the kernels' tables are sized
    // for twenty): the extreme and one-node ones.
    for (profile::ProfileHmm& hmm : profile::made_up_profile_models(0, false, seed, profile::ResidueAlphabet::Dna))
        in.models.push_back(std::move(hmm));
    // --db holds targets of the --hmm models' alphabet (protein without
    // --hmm); models of another alphabet are checked on made-up targets only.
    if (!flags.database.empty()) {
        const profile::ResidueAlphabet alphabet =
            in.real_models ? in.models.front().alphabet : profile::ResidueAlphabet::Amino;
        in.real.emplace(alphabet, read_targets_for(flags.database, alphabet, flags.db_limit));
    }
    return in;
}

void check_verify_flags(const ProfileVerifyFlags& flags, std::uint64_t random_targets, std::uint64_t seed, int threads,
                        const std::string& gpu_mem) {
    (void)profile_gpu_memory(gpu_mem);
    if (random_targets == 0) throw Error("--pairs must be at least 1");
    if (random_targets > 100'000) throw Error("--pairs: verify --profile takes at most 100000 random targets a model");
    if (flags.random_models < 0 || flags.random_models > 1000)
        throw Error("--random-models must be between 0 and 1000");
    if (threads < 0) throw Error("--threads must be 0 (all cores) or positive");
    if (seed > 0xffffffffULL) throw Error("--seed must be between 0 and 4294967295 for verify --profile");
    if (flags.db_limit_option->count() && flags.database.empty()) throw Error("--db-limit applies with --db");
}

}  // namespace

int run_verify_profile(const ProfileVerifyFlags& flags, const std::string& device_spec, std::uint64_t random_targets,
                       std::uint64_t seed, int threads, const std::string& gpu_mem) {
    check_verify_flags(flags, random_targets, seed, threads, gpu_mem);
    const auto registry = profile_scanner_registry();
    const std::vector<std::string> devices = profile_devices(*registry, device_spec);
    const auto seed32 = static_cast<std::uint32_t>(seed);
    const VerifyInputs in = read_verify_inputs(flags, seed32);
    const std::vector<profile::ProfileHmm>& models = in.models;
    const auto& real = in.real;

    std::cout << "verify --profile: ";
    for (std::size_t d = 0; d < devices.size(); ++d) std::cout << (d ? ", " : "") << devices[d];
    std::cout << " against the scalar reference; " << models.size() << " models (" << in.real_models << " from --hmm, "
              << models.size() - in.real_models << " made up: random, extreme, one node"
              << (flags.no_long ? "" : ", long") << ", DNA), made-up targets (" << random_targets
              << " random a model, seed " << seed << ")";
    if (!real.empty()) std::cout << " and " << real.begin()->second.size() << " real targets from " << flags.database;
    std::cout << std::endl;
    const bool any_gpu =
        std::any_of(devices.begin(), devices.end(), [](const std::string& id) { return id.rfind("gpu", 0) == 0; });
    if (!gpu_mem.empty()) std::cout << profile_gpu_memory_note(gpu_mem, any_gpu) << std::endl;

    JobContext job;
    job.cancel = &interrupt_token();
    // Each device's scanner and the kernels it runs alone; the reference
    // scores of a model and target set are made once for every device.
    struct Device {
        std::string id;
        bool gpu = false;
        std::string name;
        std::unique_ptr<profile::ProfileFilterScanner> scanner;
        std::vector<profile::ExtraMsvPass> extra;
        Totals totals;
    };
    std::vector<Device> checked;
    for (const std::string& id : devices) {
        Device d;
        d.id = id;
        d.scanner = registry->create(id, threads);
        d.scanner->set_memory_budget(profile_gpu_memory(gpu_mem));
        d.gpu = d.scanner->info().kind == "gpu";
        d.name = d.scanner->info().name;
#ifdef ALIGNSCOPE_WITH_CUDA
        d.extra = kernels::profile_kernel_passes(*d.scanner);
#endif
        checked.push_back(std::move(d));
    }
    Totals all;
    auto check_on_every_device = [&](const profile::ProfileHmm& hmm, const profile::ProfileTargets& targets,
                                     const char* set) {
        const profile::FilterReference reference = profile::reference_filter_scores(hmm, targets, threads, job);
        all.reference_seconds += reference.seconds;
        for (Device& d : checked) {
            const profile::FilterCheck check =
                profile::check_profile_filters(*d.scanner, hmm, targets, set, threads, job, d.extra, &reference);
            print_check(d.id, d.gpu, check);
            add_to_totals(d.totals, check);
        }
    };
    for (const profile::ProfileHmm& hmm : models) {
        check_on_every_device(hmm, profile::made_up_profile_targets(hmm, static_cast<int>(random_targets), seed32),
                              "made-up");
        if (auto r = real.find(hmm.alphabet); r != real.end()) check_on_every_device(hmm, r->second, "real");
    }
    for (const Device& d : checked) {
        char line[320];
        std::snprintf(line, sizeof line, "checked %llu scores (%.3g cells) on %s (%s) in %.2f s; kernels: ",
                      static_cast<unsigned long long>(d.totals.scores), static_cast<double>(d.totals.cells),
                      d.id.c_str(), d.name.c_str(), d.totals.seconds);
        std::cout << line << profile_kernels_of(d.id) << "\n";
        all.passed += d.totals.passed;
        all.failed += d.totals.failed;
    }
    std::printf("the scalar reference: %.2f s\n", all.reference_seconds);
    std::fflush(stdout);
    std::cout << all.passed << " passed, " << all.failed << " failed" << std::endl;
    return all.failed ? 1 : 0;
}

}  // namespace alignscope::cli
