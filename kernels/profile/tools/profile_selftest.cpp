// A developer tool for the GPU machine: the GPU profile filters against the
// CPU's scalar reference, score for score, for every model of the given .hmm
// files over real targets (a FASTA file) and made-up ones (random residues,
// the model's own consensus repeated so that MSV overflows or needs its J
// state, single residues, a 100,000-residue target). Each kernel is checked
// on its own (SSV+MSV as the pipeline runs them, MSV alone over everything,
// the Viterbi filter over everything). Exit status 1 on any difference.
//   alignscope-profile-selftest [--db DB.fasta] [--limit N] [--random N] [--seed S] MODEL.hmm...
#include "profile/cuda_profile_scanner.hpp"
#include "profile/filter_launch.hpp"

#include <alignscope/error.hpp>
#include <alignscope/kernels/profile_scanners.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace ap = alignscope::profile;
namespace kp = alignscope::kernels::profile;

namespace {

void add_target(ap::ProfileTargets& targets, const std::string& name, const std::vector<std::uint8_t>& codes)
{
    targets.names.push_back(name);
    targets.descriptions.emplace_back();
    targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
    targets.offsets.push_back(targets.residues.size());
}

// Made-up targets for one model: random canonical residues of random lengths,
// the consensus repeated 1-6 times (MSV's J state, byte overflow), single
// residues, a run of one letter, and one target of 100,000 residues.
ap::ProfileTargets made_up_targets(const ap::ProfileHmm& hmm, int count, std::uint32_t seed)
{
    const ap::ResidueCode& code = ap::ResidueCode::of(hmm.alphabet);
    ap::ProfileTargets targets;
    targets.alphabet = hmm.alphabet;
    targets.offsets.push_back(0);
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> residue(0, code.canonical() - 1), any(0, code.all_codes() - 3);
    std::uniform_int_distribution<int> length(1, 2000);
    for (int n = 0; n < count; ++n) {
        std::vector<std::uint8_t> codes(static_cast<std::size_t>(length(random)));
        for (auto& c : codes) c = static_cast<std::uint8_t>(n % 7 == 0 ? any(random) : residue(random));
        add_target(targets, "random" + std::to_string(n), codes);
    }
    std::vector<std::uint8_t> consensus;
    code.digitise(hmm.consensus.size() > 1 ? hmm.consensus.substr(1) : std::string("A"), consensus);
    for (auto& c : consensus)
        if (c >= code.canonical()) c = 0;
    for (int copies = 1; copies <= 6; ++copies) {
        std::vector<std::uint8_t> codes;
        for (int k = 0; k < copies; ++k) codes.insert(codes.end(), consensus.begin(), consensus.end());
        add_target(targets, "consensus" + std::to_string(copies), codes);
    }
    for (int x = 0; x < code.canonical(); ++x) {
        add_target(targets, "single" + std::to_string(x), {static_cast<std::uint8_t>(x)});
        add_target(targets, "run" + std::to_string(x), std::vector<std::uint8_t>(3000, static_cast<std::uint8_t>(x)));
    }
    std::vector<std::uint8_t> longest(100000);
    for (auto& c : longest) c = static_cast<std::uint8_t>(residue(random));
    add_target(targets, "longest", longest);
    return targets;
}

struct Tally {
    std::size_t compared = 0, differing = 0;
};

void compare(const char* what, const std::string& model, const ap::ProfileTargets& targets,
             const std::vector<float>& gpu, const std::vector<float>& cpu, Tally& tally)
{
    for (std::size_t t = 0; t < gpu.size(); ++t) {
        ++tally.compared;
        const bool same = gpu[t] == cpu[t] || (std::isnan(gpu[t]) && std::isnan(cpu[t]));
        if (same) continue;
        if (++tally.differing <= 20)
            std::printf("MISMATCH %s %s target %s (L=%d): gpu %.9g cpu %.9g\n", what, model.c_str(),
                        targets.names[t].c_str(), targets.length(t), static_cast<double>(gpu[t]),
                        static_cast<double>(cpu[t]));
    }
}

// Every filter of one model against one target set; returns the differences.
std::size_t check_model(kp::CudaProfileScanner& gpu, const ap::ProfileHmm& hmm, const ap::ProfileTargets& targets,
                        const char* set)
{
    alignscope::JobContext job;
    ap::NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ap::ConfiguredProfile profile(hmm, null_model);
    const std::size_t n = targets.size();
    gpu.load(targets, job);

    std::vector<float> cpu_msv(n), cpu_vit(n), gpu_msv(n), gpu_full(n), gpu_vit(n);
    auto t0 = std::chrono::steady_clock::now();
    ap::parallel_for(n, 0, [&](std::size_t t) {
        cpu_msv[t] = ap::msv_filter(profile.msv, targets.codes(t), targets.length(t));
        cpu_vit[t] = ap::viterbi_filter(profile.viterbi, targets.codes(t), targets.length(t));
    });
    const double cpu_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gpu.msv(profile.msv, gpu_msv, job);
    const auto ssv_stats = gpu.last_stats();
    Tally tally;
    compare(kp::kSsvKernelName, hmm.name, targets, gpu_msv, cpu_msv, tally);
    if (hmm.length <= 2048) {
        const std::vector<std::int32_t> codes = gpu.msv_codes(profile.msv, true);
        for (std::size_t t = 0; t < n; ++t)
            gpu_full[t] = codes[t] == kp::kMsvOverflow ? std::numeric_limits<float>::infinity()
                                                       : ap::msv_score_of(profile.msv, codes[t], targets.length(t));
        compare(kp::kMsvKernelName, hmm.name, targets, gpu_full, cpu_msv, tally);
    }
    std::vector<std::uint32_t> all(n);
    for (std::size_t t = 0; t < n; ++t) all[t] = static_cast<std::uint32_t>(t);
    gpu.viterbi(profile.viterbi, all, gpu_vit, job);
    const auto vit_stats = gpu.last_stats();
    compare(kp::kViterbiKernelName, hmm.name, targets, gpu_vit, cpu_vit, tally);
    std::size_t overflow = 0;
    for (float s : cpu_msv) overflow += std::isinf(s) ? 1 : 0;
    // Kernel GCUPS; a filter the scanner ran on the CPU (model too long for
    // the compiled kernels) says so instead.
    auto rate = [](std::uint64_t cells, double seconds) {
        char text[64];
        if (seconds <= 0) return std::string("on the CPU");
        std::snprintf(text, sizeof text, "%.2f ms, %.0f GCUPS", seconds * 1e3, static_cast<double>(cells) / seconds / 1e9);
        return std::string(text);
    };
    std::printf("%-16s M=%-5d %-10s %7zu targets: %zu scores compared, %zu differ; MSV overflows %zu, SSV->MSV %llu; "
                "kernels SSV+MSV %s, Viterbi %s; CPU scalar both %.2f s\n",
                hmm.name.c_str(), hmm.length, set, n, tally.compared, tally.differing, overflow,
                static_cast<unsigned long long>(ssv_stats.msv_rescored),
                rate(ssv_stats.msv_cells, ssv_stats.msv_kernel_seconds).c_str(),
                rate(vit_stats.viterbi_cells, vit_stats.viterbi_kernel_seconds).c_str(), cpu_seconds);
    return tally.differing;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string db;
    std::size_t limit = 0;
    int random_count = 2000;
    std::uint32_t seed = 7;
    std::vector<std::string> files;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--db" && a + 1 < argc) db = argv[++a];
        else if (arg == "--limit" && a + 1 < argc) limit = std::strtoull(argv[++a], nullptr, 10);
        else if (arg == "--random" && a + 1 < argc) random_count = std::atoi(argv[++a]);
        else if (arg == "--seed" && a + 1 < argc) seed = static_cast<std::uint32_t>(std::strtoul(argv[++a], nullptr, 10));
        else files.push_back(arg);
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: alignscope-profile-selftest [--db DB.fasta] [--limit N] [--random N] [--seed S] MODEL.hmm...\n");
        return 2;
    }
    try {
        ap::ProfileScannerRegistry registry;
        alignscope::kernels::register_cuda_profile_scanners(registry);
        if (registry.devices().empty()) {
            std::printf("profile selftest: no CUDA device that runs the filter kernels\n");
            return 1;
        }
        const auto info = registry.devices().front();
        std::printf("profile selftest on %s (%s)\n", info.id.c_str(), info.name.c_str());
        kp::CudaProfileScanner gpu(0, info, 0);
        std::size_t differing = 0, models = 0;
        std::optional<ap::ProfileTargets> real;
        for (const std::string& file : files)
            for (const ap::ProfileHmm& hmm : ap::read_hmm_file(file)) {
                ++models;
                if (!db.empty() && hmm.alphabet == ap::ResidueAlphabet::Amino) {
                    if (!real) real = ap::read_profile_targets(db, ap::ResidueAlphabet::Amino, limit);
                    differing += check_model(gpu, hmm, *real, "real");
                }
                differing += check_model(gpu, hmm, made_up_targets(hmm, random_count, seed), "made-up");
            }
        std::printf("selftest: %zu models, %zu scores differ: %s\n", models, differing, differing ? "FAILED" : "ok");
        return differing ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "profile selftest: %s\n", e.what());
        return 2;
    }
}
