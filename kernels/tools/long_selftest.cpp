// alignscope-long-selftest: the GPU long-pair runner against the CPU
// reference on random pairs (every mode, DNA and protein, affine and linear),
// then stage-1 and end-to-end timings of long DNA pairs.
//   alignscope-long-selftest [--device gpu:0] [--rounds N] [--bench 1000000,5000000]
//                            [--strategy strips|streams] [--kernels K] [--streams S] [--no-check] [--overview N]
#include <alignscope/kernels/cuda_backend.hpp>
#include "long/cuda_long_runner.hpp"

#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <algorithm>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

std::string random_residues(std::mt19937_64& rng, const std::string& alphabet, std::size_t length) {
    std::string s(length, 'A');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

// ~8 % substitutions, ~2 % short indels, rare long indels.
std::string mutate(std::mt19937_64& rng, const std::string& s, const std::string& alphabet) {
    std::string out;
    out.reserve(s.size() + s.size() / 20);
    for (std::size_t k = 0; k < s.size(); ++k) {
        const unsigned r = static_cast<unsigned>(rng() % 100000);
        if (r < 8000) out += alphabet[rng() % alphabet.size()];
        else if (r < 9000) continue;
        else if (r < 10000) out += s[k] + random_residues(rng, alphabet, 1 + rng() % 4);
        else if (r < 10005) k += 100 + rng() % 2000;
        else if (r < 10010) out += s[k] + random_residues(rng, alphabet, 100 + rng() % 2000);
        else out += s[k];
    }
    return out;
}

double peak_rss_gib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);
}

// The GPU's stage-1 overview against the CPU runner's full matrix, pooled
// over the GPU's row blocks (the column blocks are defined alike).
bool overview_matches(const std::string& q, const std::string& t, const ScoringScheme& scheme, const AlignOptions& align,
                      const LongPairOverview& gpu) {
    if (gpu.empty()) return false;
    const EncodedSequence eq = encode(q, scheme.matrix, "query"), et = encode(t, scheme.matrix, "target");
    const auto m = static_cast<std::int64_t>(eq.size()), n = static_cast<std::int64_t>(et.size());
    auto cpu = make_cpu_pass_runner();
    cpu->prepare(eq.data(), m, et.data(), n, scheme);
    std::vector<PassTask> tasks(1);
    PassTask& p = tasks[0];
    p.row_end = m;
    p.col_end = n;
    const bool local = align.mode == AlignmentMode::Local, semi = align.mode == AlignmentMode::SemiGlobal;
    p.local = local;
    p.top = local || (semi && align.free_ends.query_begin) ? Edge::Zero : Edge::Gap;
    p.left = local || (semi && align.free_ends.target_begin) ? Edge::Zero : Edge::Gap;
    p.overview_rows = static_cast<int>(m);  // one block per row
    p.overview_cols = gpu.grid_cols;
    cpu->run(tasks, {}, {});
    const auto blocks = static_cast<std::int64_t>(gpu.row_edges.size());
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t lo = gpu.row_edges[static_cast<std::size_t>(b)];
        const std::int64_t hi = b + 1 < blocks ? gpu.row_edges[static_cast<std::size_t>(b + 1)] : m + 1;
        for (int c = 0; c < gpu.grid_cols; ++c) {
            Score expect = kNegInf;
            for (std::int64_t i = lo; i < hi; ++i)
                expect = std::max(expect, p.overview[static_cast<std::size_t>((i - 1) * gpu.grid_cols + c)]);
            if (gpu.max_h[static_cast<std::size_t>(b * gpu.grid_cols + c)] != expect) return false;
        }
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    std::string device = "gpu:0", strategy = "strips", bench_list = "1000000";
    int rounds = 40, kernels_n = 0, streams_n = 0, overview = 0;
    bool check = true;
    for (int k = 1; k < argc; ++k) {
        const std::string flag = argv[k];
        auto value = [&] {
            if (k + 1 >= argc) throw Error(flag + " needs a value");
            return std::string(argv[++k]);
        };
        if (flag == "--device") device = value();
        else if (flag == "--rounds") rounds = std::stoi(value());
        else if (flag == "--bench") bench_list = value();
        else if (flag == "--strategy") strategy = value();
        else if (flag == "--kernels") kernels_n = std::stoi(value());
        else if (flag == "--streams") streams_n = std::stoi(value());
        else if (flag == "--no-check") check = false;
        else if (flag == "--overview") overview = std::stoi(value());
        else {
            std::fprintf(stderr, "unknown option %s\n", flag.c_str());
            return 2;
        }
    }
    try {
        auto registry = make_cpu_registry();
        kernels::register_cuda_backends(*registry);
        Backend& backend = registry->select(device);
        LongRunnerSettings settings;
        settings.strategy = strategy;
        settings.kernels = kernels_n;
        settings.streams = streams_n;
        std::printf("long-selftest on %s (%s)\n", backend.info().id.c_str(), backend.info().name.c_str());
        int failures = 0, checked = 0;
        if (check) {
            std::mt19937_64 rng(20261121);
            struct Scheme {
                const char* matrix;
                double open, extend;
                const char* alphabet;
            };
            const Scheme schemes[] = {{"EDNAFULL", 10, 0.5, "ACGT"}, {"EDNAFULL", 4, 4, "ACGT"},
                                      {"BLOSUM62", 11, 1, "ARNDCQEGHILKMFPSTWYV"}, {"EDNAFULL", 16, 4, "ACGTN"}};
            const char* modes[] = {"global", "local", "semiglobal", "semiglobal:qb,qe", "semiglobal:tb,te"};
            for (int round = 0; round < rounds; ++round) {
                const Scheme& sc = schemes[round % 4];
                const ScoringScheme scheme =
                    ScoringScheme::create(SubstitutionMatrix::builtin(sc.matrix), sc.open, sc.extend);
                const std::string mode_text = modes[(round / 4) % 5];
                AlignOptions align;
                const auto colon = mode_text.find(':');
                align.mode = parse_mode(mode_text.substr(0, colon));
                if (colon != std::string::npos) align.free_ends = FreeEndGaps::parse(mode_text.substr(colon + 1));
                align.traceback = round % 7 != 3;
                const std::size_t len = round % 3 == 0 ? 1 + rng() % 300 : 2000 + rng() % 12000;
                std::string q = random_residues(rng, sc.alphabet, len);
                std::string t = round % 5 == 4 ? random_residues(rng, sc.alphabet, 1 + rng() % 9000) : mutate(rng, q, sc.alphabet);
                if (t.empty()) t = "A";
                if (round % 2) std::swap(q, t);
                LongPairOptions options;
                options.align = align;
                options.min_band_rows = 1;  // as many special rows as the runner's granularity allows
                options.base_rows = 16;
                options.base_cells = 1024;
                options.overview_size = round % 2 ? 48 : 0;
                auto runner = kernels::make_cuda_long_runner(0, backend.info(), settings);
                LongPairStats stats;
                const Alignment got = align_long(q, t, scheme, options, *runner, {}, &stats);
                const Alignment ref = align_reference(q, t, scheme, align);
                ++checked;
                if (options.overview_size > 0 && !overview_matches(q, t, scheme, align, stats.overview)) {
                    ++failures;
                    std::printf("FAIL round %d %s %s %zux%zu: the stage-1 overview differs from the CPU's\n", round,
                                mode_text.c_str(), sc.matrix, q.size(), t.size());
                }
                if (got.score != ref.score || got.query_end != ref.query_end || got.target_end != ref.target_end) {
                    ++failures;
                    std::printf("FAIL round %d %s %s %zux%zu: score %lld end %lld,%lld; reference %lld end %lld,%lld\n",
                                round, mode_text.c_str(), sc.matrix, q.size(), t.size(),
                                static_cast<long long>(got.score), static_cast<long long>(got.query_end),
                                static_cast<long long>(got.target_end), static_cast<long long>(ref.score),
                                static_cast<long long>(ref.query_end), static_cast<long long>(ref.target_end));
                }
            }
            std::printf("check: %d pairs, %d failed (kernel %s)\n", checked, failures, "long_strips");
        }

        // Timings on long DNA pairs.
        std::stringstream lengths(bench_list);
        std::string item;
        std::printf("%10s %10s %-28s %12s %10s %10s %10s %8s %10s\n", "length", "score", "kernel", "stage1 GCUPS",
                    "stage1 s", "score+beg s", "full s", "full/s1", "host GiB");
        while (std::getline(lengths, item, ',')) {
            const std::size_t L = std::stoull(item);
            std::mt19937_64 rng(L);
            const std::string q = random_residues(rng, "ACGT", L);
            const std::string t = mutate(rng, q, "ACGT");
            const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
            for (int traceback = 0; traceback < 2; ++traceback) {
                LongPairOptions options;
                options.align.mode = AlignmentMode::Local;
                options.align.traceback = traceback == 1;
                options.overview_size = overview;
                auto runner = kernels::make_cuda_long_runner(0, backend.info(), settings);
                LongPairStats stats;
                const auto t0 = std::chrono::steady_clock::now();
                const Alignment a = align_long(q, t, scheme, options, *runner, {}, &stats);
                const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const double cells = static_cast<double>(q.size()) * static_cast<double>(t.size());
                std::printf("%10zu %10lld %-28s %12.1f %10.3f %10s %10s %8s %10.2f   (stage2 %.3f s %llu cells, stage3 %.3f s %llu cells, %lld rows, %d levels)\n",
                            L, static_cast<long long>(a.score), a.kernel.c_str(),
                            cells / stats.stage_seconds[0] / 1e9, stats.stage_seconds[0],
                            traceback ? "" : std::to_string(total).c_str(), traceback ? std::to_string(total).c_str() : "",
                            traceback ? std::to_string(total / stats.stage_seconds[0]).c_str() : "", peak_rss_gib(),
                            stats.stage_seconds[1], static_cast<unsigned long long>(stats.stage_cells[1]),
                            stats.stage_seconds[2], static_cast<unsigned long long>(stats.stage_cells[2]),
                            static_cast<long long>(stats.special_rows), stats.split_levels);
                std::fflush(stdout);
            }
        }
        return failures == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "long-selftest: %s\n", e.what());
        return 1;
    }
}
