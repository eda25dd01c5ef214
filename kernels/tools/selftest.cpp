// alignscope-kernel-selftest: a developer's check of the CUDA backend without
// the CLI. Aligns random pairs over every mode, gap model, matrix and length
// class on a GPU and compares score, begin and end with align_reference (the
// backend itself re-scores every CIGAR), then times a batch of 300x300
// protein pairs, scores only and with traceback.
//   alignscope-kernel-selftest [--device gpu:0] [--pairs N] [--bench-pairs N] [--kernel NAME]
#include "common/host_parallel.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/kernels/cuda_backend.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace alignscope;

namespace {

struct Case {
    std::string matrix;
    double open, extend;
    AlignmentMode mode;
    FreeEndGaps ends;
    int times = 1;  // the matrix multiplied by this
};

std::string random_residues(std::mt19937_64& rng, bool protein, std::size_t length) {
    static const std::string amino = "ARNDCQEGHILKMFPSTWYV";
    static const std::string bases = "ACGT";
    const std::string& alphabet = protein ? amino : bases;
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string out(length, 'A');
    for (auto& c : out) c = alphabet[pick(rng)];
    return out;
}

// A related copy: substitutions and short indels, so alignments are long.
std::string mutate(std::mt19937_64& rng, const std::string& source, bool protein, double rate) {
    std::uniform_real_distribution<double> u(0, 1);
    std::string out;
    for (char c : source) {
        const double x = u(rng);
        if (x < rate / 3) continue;
        if (x < 2 * rate / 3) out += random_residues(rng, protein, 1 + rng() % 3);
        out += x < rate ? random_residues(rng, protein, 1)[0] : c;
    }
    if (out.empty()) out = random_residues(rng, protein, 1);
    return out;
}

double kernel_seconds(const std::vector<TimelineEvent>& events) {
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    for (const auto& e : events)
        if (e.category == "kernel") spans.emplace_back(e.start_ns, e.end_ns);
    std::sort(spans.begin(), spans.end());
    std::int64_t total = 0, cur_start = 0, cur_end = -1;
    for (auto [s, e] : spans) {
        if (s > cur_end) {
            if (cur_end > cur_start) total += cur_end - cur_start;
            cur_start = s;
            cur_end = e;
        } else {
            cur_end = std::max(cur_end, e);
        }
    }
    if (cur_end > cur_start) total += cur_end - cur_start;
    return static_cast<double>(total) * 1e-9;
}

struct Flags {
    std::string device = "gpu:0", kernel;
    std::size_t pairs_per_case = 300, bench_pairs = 100000;
};

// The cases: every mode, gap model and matrix, then schemes past the 16-bit
// lanes and the 32-bit passes: penalties up to the accepted 1,000,000 (longer
// pairs leave 32 bits and run on the exact CPU path), matrix entries past 16 bits.
std::vector<Case> all_cases() {
    return {
        {"BLOSUM62", 11, 1, AlignmentMode::Local, {}},
        {"BLOSUM62", 10, 0.5, AlignmentMode::Global, {}},
        {"BLOSUM62", 11, 1, AlignmentMode::SemiGlobal, FreeEndGaps::all()},
        {"BLOSUM62", 8, 8, AlignmentMode::Local, {}},
        {"BLOSUM62", 4, 4, AlignmentMode::Global, {}},
        {"PAM30", 9, 1, AlignmentMode::SemiGlobal, FreeEndGaps::parse("qb,qe")},
        {"BLOSUM45", 14, 2, AlignmentMode::SemiGlobal, FreeEndGaps::parse("tb,te")},
        {"BLOSUM80", 10, 1, AlignmentMode::SemiGlobal, FreeEndGaps::parse("qb,te")},
        {"EDNAFULL", 10, 0.5, AlignmentMode::Local, {}},
        {"EDNAFULL", 16, 4, AlignmentMode::Global, {}},
        {"EDNAFULL", 3, 3, AlignmentMode::SemiGlobal, FreeEndGaps::parse("qe,tb")},
        {"EDNAFULL", 0, 0, AlignmentMode::Local, {}},
        {"BLOSUM62", 1000000, 1000000, AlignmentMode::Global, {}},
        {"BLOSUM62", 1000000, 1, AlignmentMode::SemiGlobal, FreeEndGaps::parse("qb,te")},
        {"BLOSUM62", 65536, 65536, AlignmentMode::Local, {}},
        {"BLOSUM62", 11, 1, AlignmentMode::Local, {}, 4096},
        {"EDNAFULL", 999999.5, 999999.5, AlignmentMode::Global, {}, 1000},
    };
}

// One case's random pairs over every length class (a few past 32,767 in score).
void fill_pairs(std::mt19937_64& rng, bool protein, std::size_t count, std::vector<Sequence>& queries,
                std::vector<Sequence>& targets, PairJob& job) {
    for (std::size_t k = 0; k < count; ++k) {
        const std::size_t cls = k % 5;
        std::size_t m = cls == 0   ? 1 + rng() % 8
                        : cls == 1 ? 20 + rng() % 120
                        : cls == 2 ? 200 + rng() % 400
                        : cls == 3 ? 600 + rng() % 1500
                                   : 1 + rng() % 300;
        if (k % 97 == 5) m = 2500 + rng() % 2000;
        Sequence q{"q" + std::to_string(k), "", random_residues(rng, protein, m), ""};
        Sequence t{"t" + std::to_string(k), "",
                   k % 2 ? mutate(rng, q.residues, protein, 0.15)
                         : random_residues(rng, protein, 1 + rng() % (2 * m + 5)),
                   ""};
        if (k % 41 == 3) t.residues = q.residues;                                                 // identical
        if (k % 150 == 7 && protein) q.residues = t.residues = std::string(3000 + k % 400, 'W');  // past 32,767
        queries.push_back(std::move(q));
        targets.push_back(std::move(t));
        job.pairs.emplace_back(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k));
    }
    job.queries = &queries;
    job.targets = &targets;
}

// Which path each pair of an extreme case took: a kernel of the GPU, or the CPU reference's.
void print_paths(const Case& c, const PairJob& job, bool traceback, const std::vector<Alignment>& got) {
    std::map<std::string, std::size_t> kernels_used;
    for (const Alignment& a : got) ++kernels_used[a.kernel];
    std::cout << "selftest: " << job.scheme.describe() << ' ' << to_string(c.mode) << " traceback=" << traceback << ':';
    for (const auto& [name, count] : kernels_used) std::cout << ' ' << name << " x" << count;
    std::cout << '\n';
}

// Score, begin and end of every pair against align_reference; the first 20
// differences (over the whole run: `failed`) printed.
void compare(const Case& c, const PairJob& job, bool traceback, const std::vector<Alignment>& got, std::size_t& passed,
             std::size_t& failed) {
    const std::vector<Sequence>& queries = *job.queries;
    const std::vector<Sequence>& targets = *job.targets;
    AlignOptions options = job.options;
    options.traceback = false;
    std::vector<char> ok(job.pairs.size(), 1);
    kernels::parallel_chunks(
        job.pairs.size(), 0,
        [&](std::size_t b, std::size_t e) {
            for (std::size_t k = b; k < e; ++k) {
                const Alignment want = align_reference(queries[k].residues, targets[k].residues, job.scheme, options);
                const Alignment& g = got[k];
                if (want.score != g.score || want.query_begin != g.query_begin || want.query_end != g.query_end ||
                    want.target_begin != g.target_begin || want.target_end != g.target_end ||
                    (traceback && want.score != 0 && g.cigar.empty() && c.mode == AlignmentMode::Local)) {
                    ok[k] = 0;
                }
            }
        },
        8);
    for (std::size_t k = 0; k < job.pairs.size(); ++k) {
        if (ok[k]) {
            ++passed;
            continue;
        }
        if (++failed > 20) continue;
        const Alignment want = align_reference(queries[k].residues, targets[k].residues, job.scheme, options);
        const Alignment& g = got[k];
        std::cout << "MISMATCH " << c.matrix << ' ' << to_string(c.mode) << " traceback=" << traceback << " pair " << k
                  << " (" << queries[k].residues.size() << " x " << targets[k].residues.size() << ") kernel "
                  << g.kernel << ": gpu " << g.score << " [" << g.query_begin << "-" << g.query_end << ", "
                  << g.target_begin << "-" << g.target_end << "] reference " << want.score << " [" << want.query_begin
                  << "-" << want.query_end << ", " << want.target_begin << "-" << want.target_end << "]\n";
    }
}

// Every case, scores only and with traceback; returns the failed pairs.
std::size_t run_cases(Backend& gpu, const Flags& flags, std::mt19937_64& rng) {
    std::size_t passed = 0, failed = 0;
    for (const Case& c : all_cases()) {
        for (bool traceback : {false, true}) {
            const bool protein = c.matrix != "EDNAFULL";
            std::vector<Sequence> queries, targets;
            PairJob job;
            fill_pairs(rng, protein, flags.pairs_per_case, queries, targets, job);
            const SubstitutionMatrix matrix = SubstitutionMatrix::builtin(c.matrix);
            job.scheme = ScoringScheme::create(c.times == 1 ? matrix : matrix.scaled(c.times), c.open, c.extend);
            job.options.mode = c.mode;
            job.options.free_ends = c.ends;
            job.options.traceback = traceback;
            job.kernel = flags.kernel;
            JobContext context;
            std::vector<Alignment> got;
            try {
                got = gpu.align_pairs(job, context);
            } catch (const std::exception& e) {
                std::cout << "FAIL " << c.matrix << ' ' << to_string(c.mode) << ": " << e.what() << '\n';
                failed += job.pairs.size();
                continue;
            }
            if (c.times > 1 || c.open > 4096) print_paths(c, job, traceback, got);
            compare(c, job, traceback, got, passed, failed);
        }
    }
    std::printf("selftest: %zu passed, %zu failed\n", passed, failed);
    return failed;
}

// Timing: 300x300 protein, BLOSUM62 11/1, local; and 150-base reads against
// 250-base windows (EDNAFULL 10/0.5, local). Median of three runs after a warm-up.
struct Timing {
    const char* what;
    bool protein;
    std::size_t m, n;
    std::vector<bool> tracebacks;
};

void time_one(Backend& gpu, const Flags& flags, const Timing& timing, PairJob& job, double cells, bool traceback) {
    job.options.traceback = traceback;
    std::vector<double> e2e, kern;
    std::string name, clock;
    for (int run = 0; run < 4; ++run) {
        TimelineRecorder recorder;
        JobContext context;
        context.timeline = &recorder;
        const auto start = std::chrono::steady_clock::now();
        const auto result = gpu.align_pairs(job, context);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        name = result.front().kernel;
        clock = recorder.clock_source();
        if (run == 0) continue;  // warm-up
        e2e.push_back(seconds);
        kern.push_back(kernel_seconds(recorder.events()));
    }
    std::sort(e2e.begin(), e2e.end());
    std::sort(kern.begin(), kern.end());
    std::cout << "bench " << timing.what << (traceback ? " with traceback" : " score+ends") << ", " << flags.bench_pairs
              << " pairs, " << name << ": kernel " << cells / kern[1] * 1e-9 << " GCUPS (" << kern[1] * 1e3 << " ms, "
              << clock << "), end-to-end " << cells / e2e[1] * 1e-9 << " GCUPS (" << e2e[1] * 1e3 << " ms); runs "
              << kern.front() * 1e3 << "-" << kern.back() * 1e3 << " ms kernel" << std::endl;
}

void run_timings(Backend& gpu, const Flags& flags, std::mt19937_64& rng) {
    const std::vector<Timing> timings = {{"300x300 protein local", true, 300, 300, {false, true}},
                                         {"150x250 DNA local", false, 150, 250, {true}}};
    for (const Timing& timing : timings) {
        if (!flags.bench_pairs) break;
        std::vector<Sequence> queries, targets;
        PairJob job;
        for (std::size_t k = 0; k < flags.bench_pairs; ++k) {
            Sequence target{"t", "", random_residues(rng, timing.protein, timing.n), ""};
            Sequence query{"q", "",
                           timing.protein ? random_residues(rng, true, timing.m)
                                          : mutate(rng, target.residues.substr(50, timing.m), false, 0.05),
                           ""};
            queries.push_back(std::move(query));
            targets.push_back(std::move(target));
            job.pairs.emplace_back(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k));
        }
        job.queries = &queries;
        job.targets = &targets;
        job.scheme = timing.protein ? ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1)
                                    : ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        job.options.mode = AlignmentMode::Local;
        job.kernel = flags.kernel;
        double cells = 0;
        for (const auto& [qi, ti] : job.pairs)
            cells += static_cast<double>(queries[qi].residues.size() * targets[ti].residues.size());
        for (bool traceback : timing.tracebacks) time_one(gpu, flags, timing, job, cells, traceback);
    }
}

}  // namespace

int main(int argc, char** argv) {
    Flags flags;
    for (int k = 1; k + 1 < argc; k += 2) {
        const std::string flag = argv[k];
        if (flag == "--device") flags.device = argv[k + 1];
        else if (flag == "--pairs")
            flags.pairs_per_case = std::stoul(argv[k + 1]);
        else if (flag == "--bench-pairs")
            flags.bench_pairs = std::stoul(argv[k + 1]);
        else if (flag == "--kernel")
            flags.kernel = argv[k + 1];
        else {
            std::cerr << "unknown flag " << flag << '\n';
            return 2;
        }
    }
    try {
        auto registry = make_cpu_registry();
        kernels::register_cuda_backends(*registry);
        for (const auto& d : registry->devices())
            std::cout << d.id << ": " << d.name << (d.available ? "" : " (unavailable: " + d.unavailable_reason + ")")
                      << '\n';
        Backend& gpu = registry->select(flags.device);
        std::mt19937_64 rng(12345);
        const std::size_t failed = run_cases(gpu, flags, rng);
        run_timings(gpu, flags, rng);
        return failed ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "selftest: " << e.what() << '\n';
        return 2;
    }
}
