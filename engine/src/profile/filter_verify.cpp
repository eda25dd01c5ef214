// A profile filter scanner against the scalar reference, the made-up models
// and targets it is checked on, and the profile kernels' catalog entries
// (filter_verify.hpp).
#include <alignscope/error.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/profile_search.hpp>

#include "forward_pair.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

namespace alignscope::profile {

namespace {

constexpr double kLog2 = 0.69314718055994529;
constexpr std::size_t kMismatchLines = 10;

void add_target(ProfileTargets& targets, const std::string& name, const std::vector<std::uint8_t>& codes) {
    targets.names.push_back(name);
    targets.descriptions.emplace_back();
    targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
    targets.offsets.push_back(targets.residues.size());
}

// Whether a filter score (nats) passes hmmsearch's threshold P <= F against
// the null model alone.
bool passes(float score, int L, double mu, double lambda, double F) {
    if (L == 0) return false;
    const float bits = static_cast<float>((score - NullModel::null_score(L)) / kLog2);
    return gumbel_survival(bits, mu, lambda) <= F;
}

// Scores of one filter, the scanner's against the reference's.
FilterComparison compare(const std::string& filter, const ProfileTargets& targets, const std::vector<float>& ours,
                         const std::vector<float>& reference, double mu, double lambda, double F, FilterCheck& check) {
    FilterComparison out;
    for (std::size_t t = 0; t < ours.size(); ++t) {
        ++out.compared;
        const int L = targets.length(t);
        const bool reference_passes = passes(reference[t], L, mu, lambda, F);
        out.passed += reference_passes ? 1 : 0;
        out.overflows += std::isinf(reference[t]) && reference[t] > 0 ? 1 : 0;
        if (passes(ours[t], L, mu, lambda, F) != reference_passes) ++out.pass_differing;
        if (std::memcmp(&ours[t], &reference[t], sizeof(float)) == 0) continue;
        ++out.differing;
        if (check.mismatches.size() >= kMismatchLines) continue;
        char line[400];
        std::snprintf(line, sizeof line, "%s, model %s (M=%d), target %s (%d residues): %.9g, reference %.9g",
                      filter.c_str(), check.model.c_str(), check.model_length, targets.names[t].c_str(), L,
                      static_cast<double>(ours[t]), static_cast<double>(reference[t]));
        check.mismatches.emplace_back(line);
    }
    check.compared += out.compared;
    check.differing += out.differing;
    return out;
}

// The scanner's device Forward of every target against the CPU's forward():
// scores and every row's specials bit for bit, and the F3 decision (null
// model only). Nothing is compared when the scanner has no device Forward.
void check_device_forward(ProfileFilterScanner& scanner, const ConfiguredProfile& profile,
                          const ProfileTargets& targets, int threads, JobContext& context, FilterCheck& check,
                          ForwardScores& device) {
    const std::size_t n = targets.size();
    std::vector<std::uint32_t> all(n);
    for (std::size_t t = 0; t < n; ++t) all[t] = static_cast<std::uint32_t>(t);
    if (!scanner.forward(profile.multihit, all, device, context)) return;
    check.forward_checked = true;
    check.forward_stats = scanner.last_stats();
    std::vector<float> reference(n);
    std::vector<char> rows_differ(n, 0);
    const auto start = std::chrono::steady_clock::now();
    parallel_for(
        n, threads,
        [&](std::size_t t) {
            if ((t & 63) == 0) context.throw_if_cancelled();
            const FlushSubnormals flush;
            thread_local DpMatrix fwd;
            const int L = targets.length(t);
            try {
                reference[t] =
                    forward(profile.multihit, LengthModel::for_target(L, true), targets.codes(t), L, fwd, false);
            } catch (const Error&) {
                reference[t] = std::numeric_limits<float>::quiet_NaN();  // no score (underflow): the rows still compare
            }
            const std::size_t count = (static_cast<std::size_t>(L) + 1) * DpMatrix::Specials;
            const float* ours = device.specials.data() + device.first_row[t] * DpMatrix::Specials;
            rows_differ[t] = std::memcmp(ours, fwd.xmx.data(), count * sizeof(float)) != 0 ||
                             std::memcmp(&device.total_scale[t], &fwd.total_scale, sizeof(float)) != 0;
        },
        1);
    check.forward_reference_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ProfileStatistics& stats = profile.plan7.statistics;
    const double F3 = PipelineSettings{}.F3;
    FilterComparison& out = check.forward;
    for (std::size_t t = 0; t < n; ++t) {
        ++out.compared;
        const int L = targets.length(t);
        auto passes_f3 = [&](float score) {
            if (L == 0) return false;
            const float bits = static_cast<float>((score - NullModel::null_score(L)) / kLog2);
            return std::exp(exponential_log_survival(bits, stats.forward_tau, stats.forward_lambda)) <= F3;
        };
        const bool reference_passes = passes_f3(reference[t]);
        out.passed += reference_passes ? 1 : 0;
        if (passes_f3(device.scores[t]) != reference_passes) ++out.pass_differing;
        const bool same_score = (std::isnan(device.scores[t]) && std::isnan(reference[t])) ||
                                std::memcmp(&device.scores[t], &reference[t], sizeof(float)) == 0;
        const bool same = same_score && !rows_differ[t];
        if (same) continue;
        ++out.differing;
        if (check.mismatches.size() >= kMismatchLines) continue;
        char line[400];
        std::snprintf(line, sizeof line,
                      "Forward filter, model %s (M=%d), target %s (%d residues): %.9g, reference %.9g%s",
                      check.model.c_str(), check.model_length, targets.names[t].c_str(), L,
                      static_cast<double>(device.scores[t]), static_cast<double>(reference[t]),
                      rows_differ[t] ? " (row specials differ)" : "");
        check.mismatches.emplace_back(line);
    }
    check.compared += out.compared;
    check.differing += out.differing;
}

// The CPU's Backward of every target as the pipeline runs it: backward_group()
// over eight neighbours of the longest-first order at a time on `threads`,
// each target's Forward rows loaded from `forward` (the device's, checked
// before); a group that throws runs its targets one at a time. Rows and
// scores (NaN where backward() throws) as a device's; returns the seconds.
double reference_backward(const ForwardProfile& om, const ProfileTargets& targets, const ForwardScores& forward,
                          int threads, JobContext& context, BackwardScores& out, std::vector<char>& own_scales) {
    const std::size_t n = targets.size();
    own_scales.assign(n, 0);
    out.scores.assign(n, 0.0f);
    out.total_scale.assign(n, 0.0f);
    out.first_row.assign(n, 0);
    std::uint64_t rows = 0;
    for (std::size_t t = 0; t < n; ++t) {
        out.first_row[t] = rows;
        rows += static_cast<std::uint64_t>(targets.length(t)) + 1;
    }
    out.specials.assign(rows * DpMatrix::Specials, 0.0f);
    std::vector<std::size_t> order(n);
    for (std::size_t t = 0; t < n; ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return targets.length(a) > targets.length(b); });
    const std::size_t groups = (n + kGroupTargets - 1) / kGroupTargets;
    const auto start = std::chrono::steady_clock::now();
    parallel_for(
        groups, threads,
        [&](std::size_t g) {
            if ((g & 15) == 0) context.throw_if_cancelled();
            const FlushSubnormals flush;
            thread_local DpMatrix fwd[kGroupTargets], bck[kGroupTargets];
            PairTarget group[kGroupTargets];
            const int k = static_cast<int>(std::min<std::size_t>(kGroupTargets, n - g * kGroupTargets));
            for (int j = 0; j < k; ++j) {
                const std::size_t t = order[g * kGroupTargets + static_cast<std::size_t>(j)];
                const int L = targets.length(t);
                fwd[j].resize(om.length, L, false);
                const float* from = forward.specials.data() + forward.first_row[t] * DpMatrix::Specials;
                std::copy_n(from, (static_cast<std::size_t>(L) + 1) * DpMatrix::Specials, fwd[j].xmx.begin());
                fwd[j].total_scale = forward.total_scale[t];
                group[j] = PairTarget{targets.codes(t), L, LengthModel::for_target(L, true), &fwd[j], &bck[j]};
            }
            float scores[kGroupTargets];
            bool failed = false;
            try {
                backward_group(om, group, k, false, scores);
            } catch (const Error&) {
                failed = true;
            }
            for (int j = 0; j < k; ++j) {
                const std::size_t t = order[g * kGroupTargets + static_cast<std::size_t>(j)];
                if (failed) {
                    try {
                        scores[j] = backward(om, group[j].length, group[j].dsq, group[j].L, fwd[j], bck[j], false);
                    } catch (const Error&) {
                        scores[j] = std::numeric_limits<float>::quiet_NaN();
                    }
                }
                out.scores[t] = scores[j];
                out.total_scale[t] = bck[j].total_scale;
                own_scales[t] = bck[j].own_scales;
                if (group[j].L > 0)
                    std::copy_n(bck[j].xmx.begin(), (static_cast<std::size_t>(group[j].L) + 1) * DpMatrix::Specials,
                                out.specials.begin() +
                                    static_cast<std::ptrdiff_t>(out.first_row[t] * DpMatrix::Specials));
            }
        },
        1);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Whether target t's device Backward rows go to the CPU in the pipeline
// (device_backward_needs_cpu()), given its device Forward's rows.
bool device_rows_need_cpu(const ForwardScores& forward, const BackwardScores& device, std::size_t t, int M, int L) {
    thread_local DpMatrix fwd, bck;
    fwd.resize(M, L, false);
    std::copy_n(forward.specials.data() + forward.first_row[t] * DpMatrix::Specials,
                (static_cast<std::size_t>(L) + 1) * DpMatrix::Specials, fwd.xmx.begin());
    load_device_backward(device, t, M, L, bck);
    return device_backward_needs_cpu(fwd, bck);
}

// The scanner's device Backward of every target, given its device Forward's
// rows, against reference_backward(): scores, total scales and every row's
// specials bit for bit (an empty target's score only: backward() writes no
// row for it). Nothing is compared when the scanner has no device Backward.
void check_device_backward(ProfileFilterScanner& scanner, const ConfiguredProfile& profile,
                           const ProfileTargets& targets, const ForwardScores& forward, int threads,
                           JobContext& context, FilterCheck& check) {
    const std::size_t n = targets.size();
    std::vector<std::uint32_t> all(n);
    for (std::size_t t = 0; t < n; ++t) all[t] = static_cast<std::uint32_t>(t);
    BackwardScores device, reference;
    std::vector<char> own_scales;
    if (!scanner.backward(profile.multihit, all, forward, all, device, context)) return;
    check.backward_checked = true;
    check.backward_stats = scanner.last_stats();
    check.backward_reference_seconds =
        reference_backward(profile.multihit, targets, forward, threads, context, reference, own_scales);
    check.reference_threads =
        threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    FilterComparison& out = check.backward;
    for (std::size_t t = 0; t < n; ++t) {
        ++out.compared;
        const int L = targets.length(t);
        const std::size_t floats = L > 0 ? (static_cast<std::size_t>(L) + 1) * DpMatrix::Specials : 0;
        const bool same_score = (std::isnan(device.scores[t]) && std::isnan(reference.scores[t])) ||
                                std::memcmp(&device.scores[t], &reference.scores[t], sizeof(float)) == 0;
        const bool same_rows = std::memcmp(&device.total_scale[t], &reference.total_scale[t], sizeof(float)) == 0 &&
                               std::memcmp(device.specials.data() + device.first_row[t] * DpMatrix::Specials,
                                           reference.specials.data() + reference.first_row[t] * DpMatrix::Specials,
                                           floats * sizeof(float)) == 0;
        if (same_score && same_rows) continue;
        // Where the CPU's Backward took scale factors of its own, the device's
        // (the Forward's throughout) differs: right when its rows say so, as
        // the pipeline then redoes the target on the CPU.
        if (own_scales[t] && L > 0 && device_rows_need_cpu(forward, device, t, profile.multihit.length, L)) continue;
        ++out.differing;
        if (check.mismatches.size() >= kMismatchLines) continue;
        char line[400];
        std::snprintf(line, sizeof line, "Backward, model %s (M=%d), target %s (%d residues): %.9g, reference %.9g%s",
                      check.model.c_str(), check.model_length, targets.names[t].c_str(), L,
                      static_cast<double>(device.scores[t]), static_cast<double>(reference.scores[t]),
                      same_rows ? "" : " (row specials differ)");
        check.mismatches.emplace_back(line);
    }
    check.compared += out.compared;
    check.differing += out.differing;
}

// ------------------------------------------------------------ made-up models

// A model of M nodes with every probability still zero, a typical calibration
// and no composition line.
ProfileHmm blank_model(const std::string& name, int M, ResidueAlphabet alphabet) {
    ProfileHmm hmm;
    hmm.format = "HMMER3/f";
    hmm.name = name;
    hmm.length = M;
    hmm.alphabet = alphabet;
    hmm.path = "made-up models";
    const std::size_t K = static_cast<std::size_t>(hmm.canonical()), nodes = static_cast<std::size_t>(M) + 1;
    hmm.match.assign(nodes * K, 0.0f);
    hmm.insert.assign(nodes * K, 0.0f);
    hmm.transitions.assign(nodes * kTransitions, 0.0f);
    // Typical of Pfam models (STATS LOCAL lines in bits).
    hmm.statistics = ProfileStatistics{-9.5, 0.71, -10.2, 0.71, -4.0, 0.71};
    return hmm;
}

void set_transitions(ProfileHmm& hmm, int k, float mm, float mi, float md, float im, float ii, float dm, float dd) {
    float* t = hmm.transitions.data() + static_cast<std::size_t>(k) * kTransitions;
    t[kMM] = mm, t[kMI] = mi, t[kMD] = md, t[kIM] = im, t[kII] = ii, t[kDM] = dm, t[kDD] = dd;
}

// Node 0 has no delete state and node M no next node: Plan7's fixed entries.
void close_ends(ProfileHmm& hmm) {
    float* t0 = hmm.transitions.data();
    t0[kDM] = 1.0f, t0[kDD] = 0.0f;
    float* tM = hmm.transitions.data() + static_cast<std::size_t>(hmm.length) * kTransitions;
    tM[kMM] = 1.0f - tM[kMI], tM[kMD] = 0.0f, tM[kDM] = 1.0f, tM[kDD] = 0.0f;
}

// Background insert emissions and the consensus (each node's likeliest residue).
void finish_model(ProfileHmm& hmm) {
    const ResidueCode& code = ResidueCode::of(hmm.alphabet);
    const NullModel null_model(hmm.alphabet);
    const int K = hmm.canonical();
    for (int k = 0; k <= hmm.length; ++k)
        for (int x = 0; x < K; ++x)
            hmm.insert[static_cast<std::size_t>(k * K + x)] = null_model.frequencies()[static_cast<std::size_t>(x)];
    hmm.consensus = " ";
    for (int k = 1; k <= hmm.length; ++k) {
        int best = 0;
        for (int x = 1; x < K; ++x)
            if (hmm.match_probability(k, x) > hmm.match_probability(k, best)) best = x;
        hmm.consensus += code.symbol(best);
    }
    close_ends(hmm);
}

// Probabilities proportional to Gamma(shape) draws, summing to 1.
void random_distribution(std::mt19937& random, float shape, float* out, int n) {
    std::gamma_distribution<float> gamma(shape, 1.0f);
    float sum = 0;
    for (int i = 0; i < n; ++i) sum += out[i] = gamma(random) + 1e-6f;
    for (int i = 0; i < n; ++i) out[i] /= sum;
}

ProfileHmm random_model(const std::string& name, int M, ResidueAlphabet alphabet, std::mt19937& random) {
    ProfileHmm hmm = blank_model(name, M, alphabet);
    const int K = hmm.canonical();
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    const float shape = unit(random) < 0.5f ? 0.1f : 1.0f;  // peaked or spread emissions
    for (int k = 1; k <= M; ++k)
        random_distribution(random, shape, hmm.match.data() + static_cast<std::size_t>(k * K), K);
    for (int k = 0; k <= M; ++k) {
        const float mm = 0.5f + 0.499f * unit(random), mi = (1.0f - mm) * unit(random);
        const float ii = 0.05f + 0.85f * unit(random), dd = 0.05f + 0.85f * unit(random);
        set_transitions(hmm, k, mm, mi, 1.0f - mm - mi, 1.0f - ii, ii, 1.0f - dd, dd);
    }
    finish_model(hmm);
    return hmm;
}

// Each node emits one residue (at random) with probability 1 - 1e-6.
ProfileHmm peaked_model(const std::string& name, int M, ResidueAlphabet alphabet, std::mt19937& random) {
    ProfileHmm hmm = blank_model(name, M, alphabet);
    const int K = hmm.canonical();
    std::uniform_int_distribution<int> residue(0, K - 1);
    for (int k = 1; k <= M; ++k) {
        const int x = residue(random);
        for (int y = 0; y < K; ++y)
            hmm.match[static_cast<std::size_t>(k * K + y)] = y == x ? 1.0f - 1e-6f : 1e-6f / static_cast<float>(K - 1);
        set_transitions(hmm, k, 1.0f - 1e-6f, 5e-7f, 5e-7f, 0.5f, 0.5f, 0.5f, 0.5f);
    }
    set_transitions(hmm, 0, 1.0f - 1e-6f, 5e-7f, 5e-7f, 0.5f, 0.5f, 1.0f, 0.0f);
    finish_model(hmm);
    return hmm;
}

// Three residues a node, every other emission exactly 0; every other node
// with no way into its insert or delete state.
ProfileHmm zeros_model(const std::string& name, int M, ResidueAlphabet alphabet, std::mt19937& random) {
    ProfileHmm hmm = blank_model(name, M, alphabet);
    const int K = hmm.canonical();
    std::uniform_int_distribution<int> residue(0, K - 1);
    for (int k = 1; k <= M; ++k) {
        for (int n = 0; n < 3; ++n) hmm.match[static_cast<std::size_t>(k * K + residue(random))] += 1.0f / 3.0f;
        if (k % 2) set_transitions(hmm, k, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f);
        else
            set_transitions(hmm, k, 0.6f, 0.2f, 0.2f, 1e-3f, 1.0f - 1e-3f, 0.0f, 1.0f);
    }
    set_transitions(hmm, 0, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f);
    finish_model(hmm);
    return hmm;
}

// Emissions at the background frequencies: every match score near 0.
ProfileHmm flat_model(const std::string& name, int M, ResidueAlphabet alphabet) {
    ProfileHmm hmm = blank_model(name, M, alphabet);
    const NullModel null_model(alphabet);
    const int K = hmm.canonical();
    for (int k = 1; k <= M; ++k) {
        for (int x = 0; x < K; ++x)
            hmm.match[static_cast<std::size_t>(k * K + x)] = null_model.frequencies()[static_cast<std::size_t>(x)];
    }
    for (int k = 0; k <= M; ++k) set_transitions(hmm, k, 0.9f, 0.05f, 0.05f, 0.6f, 0.4f, 0.6f, 0.4f);
    finish_model(hmm);
    return hmm;
}

// Delete and insert states preferred over matches.
ProfileHmm gappy_model(const std::string& name, int M, ResidueAlphabet alphabet, std::mt19937& random) {
    ProfileHmm hmm = random_model(name, M, alphabet, random);
    for (int k = 0; k <= M; ++k) set_transitions(hmm, k, 0.2f, 0.3f, 0.5f, 0.1f, 0.9f, 0.05f, 0.95f);
    close_ends(hmm);
    return hmm;
}

}  // namespace

ProfileTargets made_up_profile_targets(const ProfileHmm& hmm, int random_count, std::uint32_t seed) {
    const ResidueCode& code = ResidueCode::of(hmm.alphabet);
    ProfileTargets targets;
    targets.alphabet = hmm.alphabet;
    targets.path = "made-up targets";
    targets.offsets.push_back(0);
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> residue(0, code.canonical() - 1), any(0, code.all_codes() - 3);
    std::uniform_int_distribution<int> length(1, 2000);
    for (int n = 0; n < random_count; ++n) {
        std::vector<std::uint8_t> codes(static_cast<std::size_t>(length(random)));
        for (auto& c : codes) {
            int x = n % 7 == 0 ? any(random) : residue(random);
            if (x == code.gap()) x = code.nonresidue();
            c = static_cast<std::uint8_t>(x);
        }
        add_target(targets, "random" + std::to_string(n), codes);
    }
    std::vector<std::uint8_t> consensus;
    code.digitise(hmm.consensus.size() > 1 ? hmm.consensus.substr(1) : std::string(1, code.symbol(0)), consensus);
    for (auto& c : consensus)
        if (c >= code.canonical()) c = 0;
    // Prefixes of the consensus, one residue longer each: somewhere among them
    // MSV's bytes and the Viterbi filter's words reach their ceiling.
    for (std::size_t n = 1; n <= std::min<std::size_t>(consensus.size(), 64); ++n)
        add_target(targets, "consensus_prefix" + std::to_string(n),
                   std::vector<std::uint8_t>(consensus.begin(), consensus.begin() + static_cast<std::ptrdiff_t>(n)));
    std::vector<std::uint8_t> repeated;
    for (int copies = 1; copies <= 6; ++copies) {
        repeated.insert(repeated.end(), consensus.begin(), consensus.end());
        add_target(targets, "consensus_x" + std::to_string(copies), repeated);
    }
    for (int x = 0; x < code.canonical(); ++x) {
        add_target(targets, std::string("single_") + code.symbol(x), {static_cast<std::uint8_t>(x)});
        add_target(targets, std::string("run_") + code.symbol(x),
                   std::vector<std::uint8_t>(3000, static_cast<std::uint8_t>(x)));
    }
    std::vector<std::uint8_t> longest(100000);
    for (auto& c : longest) c = static_cast<std::uint8_t>(residue(random));
    add_target(targets, "longest", longest);
    return targets;
}

std::vector<ProfileHmm> made_up_profile_models(int random_count, bool long_models, std::uint32_t seed,
                                               ResidueAlphabet alphabet) {
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> length(2, 400);
    // Nucleotide models' names say so ("dna_peaked_M40"), so that they never
    // share a name with the amino ones in one run.
    std::string prefix = alphabet == ResidueAlphabet::Amino ? "" : std::string(ResidueCode::of(alphabet).name()) + "_";
    for (char& c : prefix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto named = [&prefix](const std::string& name) { return prefix + name; };
    std::vector<ProfileHmm> models;
    for (int n = 0; n < random_count; ++n) {
        const int M = length(random);
        models.push_back(
            random_model(named("random" + std::to_string(n + 1) + "_M" + std::to_string(M)), M, alphabet, random));
    }
    models.push_back(peaked_model(named("peaked_M40"), 40, alphabet, random));
    models.push_back(peaked_model(named("peaked_M300"), 300, alphabet, random));
    models.push_back(zeros_model(named("zeros_M50"), 50, alphabet, random));
    models.push_back(flat_model(named("flat_M120"), 120, alphabet));
    models.push_back(gappy_model(named("gappy_M80"), 80, alphabet, random));
    models.push_back(random_model(named("tiny_M1"), 1, alphabet, random));
    models.push_back(peaked_model(named("tiny_peaked_M1"), 1, alphabet, random));
    if (long_models) {
        models.push_back(random_model(named("long_M1100"), 1100, alphabet, random));
        models.push_back(random_model(named("long_M2100"), 2100, alphabet, random));
    }
    return models;
}

FilterReference reference_filter_scores(const ProfileHmm& hmm, const ProfileTargets& targets, int threads,
                                        JobContext& context) {
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);
    const std::size_t n = targets.size();
    FilterReference reference{std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f), 0.0};
    const auto start = std::chrono::steady_clock::now();
    parallel_for(
        n, threads,
        [&](std::size_t t) {
            if ((t & 63) == 0) context.throw_if_cancelled();
            reference.msv[t] = msv_filter(profile.msv, targets.codes(t), targets.length(t));
            reference.viterbi[t] = viterbi_filter(profile.viterbi, targets.codes(t), targets.length(t));
        },
        1);
    reference.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return reference;
}

FilterCheck check_profile_filters(ProfileFilterScanner& scanner, const ProfileHmm& hmm, const ProfileTargets& targets,
                                  const std::string& target_set, int threads, JobContext& context,
                                  const std::vector<ExtraMsvPass>& extra, const FilterReference* reference) {
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);
    const ProfileStatistics& stats = profile.plan7.statistics;
    const PipelineSettings thresholds;
    const std::size_t n = targets.size();
    FilterCheck check;
    check.model = hmm.name;
    check.model_length = hmm.length;
    check.target_set = target_set;
    check.targets = n;

    std::optional<FilterReference> made;
    if (!reference) reference = &made.emplace(reference_filter_scores(hmm, targets, threads, context));
    if (reference->msv.size() != n || reference->viterbi.size() != n)
        throw Error("internal error: the reference scores are of another target set");
    const std::vector<float>& msv_reference = reference->msv;
    const std::vector<float>& viterbi_reference = reference->viterbi;
    check.reference_seconds = made ? reference->seconds : 0;
    std::vector<float> msv(n), viterbi(n);

    scanner.load(targets, context);
    scanner.msv(profile.msv, msv, context);
    check.msv_stats = scanner.last_stats();
    std::vector<std::uint32_t> all(n);
    for (std::size_t t = 0; t < n; ++t) all[t] = static_cast<std::uint32_t>(t);
    scanner.viterbi(profile.viterbi, all, viterbi, context);
    check.viterbi_stats = scanner.last_stats();
    check.msv =
        compare("MSV filter", targets, msv, msv_reference, stats.msv_mu, stats.msv_lambda, thresholds.F1, check);
    check.viterbi = compare("Viterbi filter", targets, viterbi, viterbi_reference, stats.viterbi_mu,
                            stats.viterbi_lambda, thresholds.F2, check);
    check.msv_overflows = check.msv.overflows;
    context.throw_if_cancelled();
    ForwardScores device_forward;
    check_device_forward(scanner, profile, targets, threads, context, check, device_forward);
    if (check.forward_checked) {
        context.throw_if_cancelled();
        check_device_backward(scanner, profile, targets, device_forward, threads, context, check);
    }
    for (const ExtraMsvPass& pass : extra) {
        context.throw_if_cancelled();
        std::vector<float> alone(n);
        if (!pass.run(profile.msv, targets, alone)) continue;
        check.extra.emplace_back(pass.kernel, compare(pass.kernel + " alone", targets, alone, msv_reference,
                                                      stats.msv_mu, stats.msv_lambda, thresholds.F1, check));
    }
    if (hmm.length <= 1000) {
        context.throw_if_cancelled();
        check.envelopes = check_device_envelopes(scanner, hmm, targets, threads, context);
        check.compared += check.envelopes.compared;
        check.differing += check.envelopes.differing;
        for (const std::string& line : check.envelopes.mismatches)
            if (check.mismatches.size() < kMismatchLines) check.mismatches.push_back(line);
    }
    return check;
}

// ------------------------------------------------------------ kernel catalog

namespace {

// The reference scores of the catalog's made-up models, made once for every
// device and family that checks them (`key` names the targets' size and seed).
const FilterReference& shared_reference(const ProfileHmm& hmm, const ProfileTargets& targets, const std::string& key,
                                        int threads, JobContext& context) {
    static std::mutex mutex;
    static std::map<std::string, FilterReference> made;
    std::lock_guard lock(mutex);
    auto it = made.find(hmm.name + "/" + key);
    if (it == made.end())
        it = made.emplace(hmm.name + "/" + key, reference_filter_scores(hmm, targets, threads, context)).first;
    return it->second;
}

// The made-up targets of one model without the last one (the 100,000-residue
// target).
void drop_longest_target(ProfileTargets& targets) {
    if (targets.size() == 0 || targets.names.back() != "longest") return;
    targets.residues.resize(targets.offsets[targets.size() - 1]);
    targets.offsets.pop_back();
    targets.names.pop_back();
    targets.descriptions.pop_back();
}

// Every made-up model of one device checked on its scanner: a few random
// targets a model (--pairs scales them), the corner-case ones always; two
// random models beside the extreme and long ones.
std::vector<FilterCheck> check_made_up_models(const ProfileKernelFamily& family, const KernelCheckRequest& request) {
    JobContext fallback;
    JobContext& context = request.context ? *request.context : fallback;
    const std::unique_ptr<ProfileFilterScanner> scanner = family.make_scanner(request.device, request.threads);
    const std::vector<ExtraMsvPass> extra =
        family.extra_passes ? family.extra_passes(*scanner) : std::vector<ExtraMsvPass>{};
    std::vector<FilterCheck> checks;
    const int random_targets = static_cast<int>(std::clamp<std::uint64_t>(request.pairs, 4, 400));
    const auto seed = static_cast<std::uint32_t>(request.seed);
    const std::string key = std::to_string(random_targets) + "/" + std::to_string(seed) +
                            (family.longest_target ? "" : "/without the longest");
    for (const ProfileHmm& hmm : made_up_profile_models(2, family.long_models, seed)) {
        ProfileTargets targets = made_up_profile_targets(hmm, random_targets, seed);
        if (!family.longest_target) drop_longest_target(targets);
        const FilterReference& reference = shared_reference(hmm, targets, key, request.threads, context);
        checks.push_back(
            check_profile_filters(*scanner, hmm, targets, "made-up", request.threads, context, extra, &reference));
    }
    return checks;
}

// What one model's check says of `kernel`, and the words its mismatch lines
// begin with; nullopt where the model did not run it (an extra pass that
// declines the model, no device Forward, a model too long for the envelopes).
struct KernelComparison {
    FilterComparison comparison;
    std::string label;
};
std::optional<KernelComparison> comparison_of(const ProfileKernelFamily& family, const std::string& kernel,
                                              const FilterCheck& c) {
    for (const auto& [name, extra] : c.extra)
        if (name == kernel) return KernelComparison{extra, name + " alone"};
    if (kernel == family.msv_kernel) return KernelComparison{c.msv, "MSV filter"};
    if (kernel == family.viterbi_kernel) return KernelComparison{c.viterbi, "Viterbi filter"};
    if (!family.forward_kernel.empty() && kernel == family.forward_kernel)
        return c.forward_checked ? std::optional(KernelComparison{c.forward, "Forward filter"}) : std::nullopt;
    if (!family.backward_kernel.empty() && kernel == family.backward_kernel)
        return c.backward_checked ? std::optional(KernelComparison{c.backward, "Backward"}) : std::nullopt;
    if (!family.envelope_kernel.empty() && kernel == family.envelope_kernel && c.envelopes.checked) {
        FilterComparison envelopes;
        envelopes.compared = c.envelopes.compared;
        envelopes.differing = c.envelopes.differing;
        return KernelComparison{envelopes, "envelope rescoring"};
    }
    return std::nullopt;
}

// The variant `kernel` over every model's check.
KernelCheckOutcome kernel_outcome(const ProfileKernelFamily& family, const std::string& kernel,
                                  const std::vector<FilterCheck>& checks) {
    KernelCheckOutcome out;
    for (const FilterCheck& c : checks) {
        const std::optional<KernelComparison> found = comparison_of(family, kernel, c);
        if (!found) continue;
        const FilterComparison& comparison = found->comparison;
        out.pairs += comparison.compared;
        out.failed += comparison.differing;
        out.passed += comparison.compared - comparison.differing;
        if (!comparison.differing || out.problems.size() >= 3) continue;
        // The first mismatch line of this kernel's comparison.
        const auto line = std::find_if(c.mismatches.begin(), c.mismatches.end(),
                                       [&](const std::string& m) { return m.rfind(found->label, 0) == 0; });
        out.problems.push_back(c.model + ": " + std::to_string(comparison.differing) + " of " +
                               std::to_string(comparison.compared) + " differ" +
                               (line == c.mismatches.end() ? "" : " (" + *line + ")"));
    }
    if (out.pairs == 0) out.problems.push_back("no model was checked with " + kernel);
    return out;
}

}  // namespace

KernelCheck make_profile_kernel_check(ProfileKernelFamily family) {
    // Every model of one device, run once for all the variants asking.
    struct Cache {
        std::mutex mutex;
        std::map<std::string, std::vector<FilterCheck>> runs;
    };
    auto cache = std::make_shared<Cache>();
    return [cache, family](const KernelCheckRequest& request) {
        std::lock_guard lock(cache->mutex);
        auto run = cache->runs.find(request.device);
        if (run == cache->runs.end())
            run = cache->runs.emplace(request.device, check_made_up_models(family, request)).first;
        return kernel_outcome(family, request.kernel.format(), run->second);
    };
}

void add_cpu_profile_kernel_families(KernelCatalog& catalog) {
    ProfileKernelFamily cpu;
    cpu.make_scanner = [](const std::string& device, int threads) {
        return make_cpu_profile_scanner_registry()->create(device, threads);
    };
    cpu.msv_kernel = "sw_linear_msv_s8";
    cpu.viterbi_kernel = "sw_affine_vitfilter_s16";
    catalog.add({"profile",
                 "cpu",
                 {KernelName::parse(cpu.msv_kernel), KernelName::parse(cpu.viterbi_kernel)},
                 make_profile_kernel_check(cpu)});
}

}  // namespace alignscope::profile
