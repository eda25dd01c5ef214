// A developer tool for the GPU machine: the GPU's envelope rescoring
// (CudaProfileScanner::rescore_envelopes()) against the CPU reference
// (rescore_envelope_reference(), the domain stage's own calls), outcome for
// outcome, over the envelopes the CPU pipeline finds for a model in a FASTA
// file, and both timed: the CPU on --threads workers, the GPU's kernels and
// its whole call. --repeat R rescores every envelope R times (the envelopes
// of the database repeated R times). Exit status 1 on any difference.
// --batch N hands the GPU N envelopes a call (default: all in one).
//   alignscope-envelope-selftest --db DB.fasta [--limit N] [--repeat R] [--threads T] [--runs K] [--batch N]
//                                MODEL.hmm
#include "profile/cuda_profile_scanner.hpp"

#include <alignscope/error.hpp>
#include <alignscope/kernels/profile_scanners.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_search.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace ap = alignscope::profile;
namespace kp = alignscope::kernels::profile;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// "" when the outcomes agree bit for bit, else what differs.
std::string difference(const ap::EnvelopeOutcome& a, const ap::EnvelopeOutcome& b) {
    if (a.error != b.error) return "error '" + a.error + "' vs '" + b.error + "'";
    if (!same_bits(a.env_score, b.env_score)) return "envelope score";
    if (a.decoded != b.decoded) return "decoded";
    if (!same_bits(a.accuracy, b.accuracy)) return "accuracy";
    if (a.trace.size() != b.trace.size())
        return "trace length " + std::to_string(a.trace.size()) + " vs " + std::to_string(b.trace.size());
    for (std::size_t z = 0; z < a.trace.size(); ++z) {
        const ap::TraceStep &s = a.trace[z], &t = b.trace[z];
        if (s.state != t.state || s.k != t.k || s.i != t.i || !same_bits(s.posterior, t.posterior))
            return "trace step " + std::to_string(z);
    }
    if (a.null2.size() != b.null2.size() ||
        (!a.null2.empty() && std::memcmp(a.null2.data(), b.null2.data(), a.null2.size() * sizeof(float)) != 0))
        return "null2";
    return {};
}

int run(const std::string& model_file, const std::string& db, std::size_t limit, int repeat, int threads, int runs,
        std::size_t batch) {
    const ap::ProfileHmm hmm = ap::read_hmm_file(model_file).front();
    ap::NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ap::ConfiguredProfile profile(hmm, null_model);
    const ap::ProfileTargets targets = ap::read_profile_targets(db, hmm.alphabet, limit);
    alignscope::JobContext context;
    // The envelopes of the CPU pipeline (its domain stage's, decoded ones).
    auto start = std::chrono::steady_clock::now();
    ap::PipelineSettings settings;
    settings.threads = threads;
    settings.alignments = false;
    auto cpu = ap::make_cpu_profile_scanner_registry()->create("cpu", threads);
    cpu->load(targets, context);
    const ap::ModelSearch search = ap::search_profile(hmm, targets, *cpu, settings, context);
    std::vector<ap::EnvelopeJob> jobs;
    std::uint64_t residues = 0;
    int longest = 0;
    for (int r = 0; r < repeat; ++r)
        for (const ap::TargetHit& hit : search.hits)
            for (const ap::DomainHit& d : hit.domains) {
                jobs.push_back({static_cast<std::uint32_t>(hit.target), d.env_from, d.env_to, jobs.size() % 4 != 3});
                residues += static_cast<std::uint64_t>(d.env_to - d.env_from + 1);
                longest = std::max(longest, d.env_to - d.env_from + 1);
            }
    std::printf(
        "%s (M=%d) against %zu targets: %zu hits, %zu envelopes x %d = %zu, %llu residues, the longest %d "
        "(CPU pipeline %.2f s)\n",
        hmm.name.c_str(), hmm.length, targets.size(), search.hits.size(), jobs.size() / std::max(1, repeat), repeat,
        jobs.size(), static_cast<unsigned long long>(residues), longest, seconds_since(start));
    // The CPU reference, twice (the second timed warm).
    std::vector<ap::EnvelopeOutcome> reference(jobs.size());
    double cpu_seconds = 0;
    for (int pass = 0; pass < 2; ++pass) {
        start = std::chrono::steady_clock::now();
        ap::parallel_for(
            jobs.size(), threads,
            [&](std::size_t n) {
                const ap::EnvelopeJob& job = jobs[n];
                reference[n] = ap::rescore_envelope_reference(profile.unihit, hmm.alphabet, targets.codes(job.target),
                                                              targets.length(job.target), job);
            },
            1);
        cpu_seconds = seconds_since(start);
    }
    std::printf("CPU rescoring (reference, %d threads): %.1f ms\n", threads, cpu_seconds * 1000.0);
    ap::ProfileScannerRegistry registry;
    alignscope::kernels::register_cuda_profile_scanners(registry);
    if (registry.devices().empty()) {
        std::printf("envelope selftest: no CUDA device\n");
        return 1;
    }
    const auto info = registry.devices().front();
    kp::CudaProfileScanner gpu(0, info, threads);
    gpu.load(targets, context);
    std::vector<ap::EnvelopeOutcome> ours(jobs.size()), part;
    double best_call = 1e30, best_kernel = 1e30;
    const std::size_t step = batch > 0 ? batch : std::max<std::size_t>(jobs.size(), 1);
    for (int k = 0; k <= runs; ++k) {  // the first warms up
        start = std::chrono::steady_clock::now();
        double kernels = 0, cells = 0;
        std::uint64_t on_cpu = 0;
        for (std::size_t first = 0; first < jobs.size(); first += step) {
            const std::size_t n = std::min(step, jobs.size() - first);
            if (!gpu.rescore_envelopes(profile.unihit, std::span(jobs).subspan(first, n), part, context)) {
                std::printf("envelope selftest: the GPU scanner has no envelope rescoring\n");
                return 1;
            }
            std::move(part.begin(), part.end(), ours.begin() + static_cast<std::ptrdiff_t>(first));
            const ap::ProfileFilterStats stats = gpu.last_stats();
            kernels += stats.envelope_kernel_seconds;
            cells += static_cast<double>(stats.envelope_cells);
            on_cpu += stats.envelopes_on_cpu;
        }
        const double call = seconds_since(start);
        std::printf(
            "GPU %s (%s) run %d, calls of %zu: %.1f ms, kernels %.1f ms, %llu on the CPU, %.1f GCUPS "
            "(kernels)\n",
            info.id.c_str(), info.name.c_str(), k, step, call * 1000.0, kernels * 1000.0,
            static_cast<unsigned long long>(on_cpu), cells / std::max(1e-9, kernels) / 1e9);
        if (k > 0) best_call = std::min(best_call, call), best_kernel = std::min(best_kernel, kernels);
    }
    std::size_t differing = 0;
    for (std::size_t n = 0; n < jobs.size(); ++n) {
        const std::string d = difference(ours[n], reference[n]);
        if (d.empty()) continue;
        if (++differing <= 10)
            std::printf("MISMATCH %s target %s envelope %d..%d: %s\n", hmm.name.c_str(),
                        targets.names[jobs[n].target].c_str(), jobs[n].i, jobs[n].j, d.c_str());
    }
    std::printf(
        "envelope-selftest: %s %zu envelopes, %zu differ; CPU %d threads %.1f ms, GPU kernels %.1f ms, "
        "GPU call %.1f ms (best of %d)\n",
        hmm.name.c_str(), jobs.size(), differing, threads, cpu_seconds * 1000.0, best_kernel * 1000.0,
        best_call * 1000.0, runs);
    return differing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    std::string db, model;
    std::size_t limit = 0;
    int repeat = 1, threads = 16, runs = 3;
    std::size_t batch = 0;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        const bool more = a + 1 < argc;
        if (arg == "--db" && more) db = argv[++a];
        else if (arg == "--limit" && more)
            limit = std::strtoull(argv[++a], nullptr, 10);
        else if (arg == "--repeat" && more)
            repeat = std::max(1, std::atoi(argv[++a]));
        else if (arg == "--threads" && more)
            threads = std::max(1, std::atoi(argv[++a]));
        else if (arg == "--batch" && more)
            batch = std::strtoull(argv[++a], nullptr, 10);
        else if (arg == "--runs" && more)
            runs = std::max(1, std::atoi(argv[++a]));
        else
            model = arg;
    }
    if (db.empty() || model.empty()) {
        std::fprintf(stderr,
                     "usage: alignscope-envelope-selftest --db DB.fasta [--limit N] [--repeat R] [--threads T] "
                     "[--runs K] [--batch N] MODEL.hmm\n");
        return 2;
    }
    try {
        return run(model, db, limit, repeat, threads, runs, batch);
    } catch (const alignscope::Error& e) {
        std::fprintf(stderr, "envelope selftest: %s\n", e.what());
        return 2;
    }
}
