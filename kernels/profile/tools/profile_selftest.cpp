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
#include <alignscope/profile/filter_verify.hpp>
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
#include <string>
#include <vector>

namespace ap = alignscope::profile;
namespace kp = alignscope::kernels::profile;

namespace {

// One model over one target set: the scanner's filters against the scalar
// reference (check_profile_filters), then the MSV kernel alone over every
// target (the pipeline only sends it what SSV could not settle).
std::size_t check_model(kp::CudaProfileScanner& gpu, const ap::ProfileHmm& hmm, const ap::ProfileTargets& targets,
                        const char* set) {
    alignscope::JobContext job;
    const ap::FilterCheck check = ap::check_profile_filters(gpu, hmm, targets, set, 0, job);
    std::size_t differing = check.differing;
    for (const std::string& line : check.mismatches) std::printf("MISMATCH %s: %s\n", hmm.name.c_str(), line.c_str());
    if (hmm.length <= 2048) {
        ap::NullModel null_model(hmm.alphabet);
        null_model.set_filter(hmm.length, hmm.composition);
        const ap::ConfiguredProfile profile(hmm, null_model);
        const std::vector<std::int32_t> codes = gpu.msv_codes(profile.msv, true);
        for (std::size_t t = 0; t < codes.size(); ++t) {
            const float ours = codes[t] == kp::kMsvOverflow
                                   ? std::numeric_limits<float>::infinity()
                                   : ap::msv_score_of(profile.msv, codes[t], targets.length(t));
            const float reference = ap::msv_filter(profile.msv, targets.codes(t), targets.length(t));
            if (ours != reference && ++differing <= 10)
                std::printf("MISMATCH %s: %s alone, target %s: %.9g, reference %.9g\n", hmm.name.c_str(),
                            kp::kMsvKernelName, targets.names[t].c_str(), static_cast<double>(ours),
                            static_cast<double>(reference));
        }
    }
    // Kernel GCUPS; a filter the scanner ran on the CPU (model too long for
    // the compiled kernels) says so instead.
    auto rate = [](std::uint64_t cells, double seconds) {
        char text[64];
        if (seconds <= 0) return std::string("on the CPU");
        std::snprintf(text, sizeof text, "%.2f ms, %.0f GCUPS", seconds * 1e3,
                      static_cast<double>(cells) / seconds / 1e9);
        return std::string(text);
    };
    std::printf(
        "%-16s M=%-5d %-8s %7zu targets: %zu scores compared, %zu differ; MSV overflows %zu, SSV->MSV %llu; "
        "kernels SSV+MSV %s, Viterbi %s; CPU scalar both %.2f s\n",
        hmm.name.c_str(), hmm.length, set, check.targets, check.compared, differing, check.msv_overflows,
        static_cast<unsigned long long>(check.msv_stats.msv_rescored),
        rate(check.msv_stats.msv_cells, check.msv_stats.msv_kernel_seconds).c_str(),
        rate(check.viterbi_stats.viterbi_cells, check.viterbi_stats.viterbi_kernel_seconds).c_str(),
        check.reference_seconds);
    return differing;
}

}  // namespace

int main(int argc, char** argv) {
    std::string db;
    std::size_t limit = 0;
    int random_count = 2000;
    std::uint32_t seed = 7;
    std::vector<std::string> files;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        if (arg == "--db" && a + 1 < argc) db = argv[++a];
        else if (arg == "--limit" && a + 1 < argc)
            limit = std::strtoull(argv[++a], nullptr, 10);
        else if (arg == "--random" && a + 1 < argc)
            random_count = std::atoi(argv[++a]);
        else if (arg == "--seed" && a + 1 < argc)
            seed = static_cast<std::uint32_t>(std::strtoul(argv[++a], nullptr, 10));
        else
            files.push_back(arg);
    }
    if (files.empty()) {
        std::fprintf(
            stderr,
            "usage: alignscope-profile-selftest [--db DB.fasta] [--limit N] [--random N] [--seed S] MODEL.hmm...\n");
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
                differing += check_model(gpu, hmm, ap::made_up_profile_targets(hmm, random_count, seed), "made-up");
            }
        std::printf("selftest: %zu models, %zu scores differ: %s\n", models, differing, differing ? "FAILED" : "ok");
        return differing ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "profile selftest: %s\n", e.what());
        return 2;
    }
}
