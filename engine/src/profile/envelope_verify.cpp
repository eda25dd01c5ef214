// Checking a device's envelope rescoring against the CPU reference for
// verify --profile: the envelopes of a real search (the CPU pipeline's) and
// whole targets, outcome for outcome, bit for bit.
#include <alignscope/error.hpp>
#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace alignscope::profile {

namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

constexpr std::size_t kMismatchLines = 10;
constexpr int kWholeTargets = 120, kWholeLength = 2000;

}  // namespace

std::string envelope_outcome_difference(const EnvelopeOutcome& ours, const EnvelopeOutcome& reference) {
    const EnvelopeOutcome &a = ours, &b = reference;
    if (a.error != b.error) return "error '" + a.error + "', reference '" + b.error + "'";
    if (!same_bits(a.env_score, b.env_score)) return "envelope score";
    if (a.decoded != b.decoded) return a.decoded ? "decoded, reference not" : "not decoded, reference is";
    if (!same_bits(a.accuracy, b.accuracy)) return "optimal accuracy score";
    if (a.trace.size() != b.trace.size())
        return "trace of " + std::to_string(a.trace.size()) + " steps, reference " + std::to_string(b.trace.size());
    for (std::size_t z = 0; z < a.trace.size(); ++z) {
        const TraceStep &s = a.trace[z], &t = b.trace[z];
        if (s.state != t.state || s.k != t.k || s.i != t.i || !same_bits(s.posterior, t.posterior))
            return "trace step " + std::to_string(z);
    }
    if (a.null2.size() != b.null2.size() ||
        (!a.null2.empty() && std::memcmp(a.null2.data(), b.null2.data(), a.null2.size() * sizeof(float)) != 0))
        return "null2";
    return {};
}

EnvelopeCheck check_device_envelopes(ProfileFilterScanner& scanner, const ProfileHmm& hmm,
                                     const ProfileTargets& targets, int threads, JobContext& context) {
    EnvelopeCheck check;
    if (!scanner.runs_envelopes()) return check;
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);
    // The CPU pipeline's envelopes (its decoded domains), then whole targets.
    PipelineSettings settings;
    settings.threads = threads;
    settings.alignments = false;
    auto cpu = make_cpu_profile_scanner_registry()->create("cpu", threads);
    cpu->load(targets, context);
    std::vector<EnvelopeJob> jobs;
    try {
        const ModelSearch search = search_profile(hmm, targets, *cpu, settings, context);
        for (const TargetHit& hit : search.hits)
            for (const DomainHit& d : hit.domains)
                jobs.push_back({static_cast<std::uint32_t>(hit.target), d.env_from, d.env_to, jobs.size() % 2 == 0});
    } catch (const Cancelled&) {
        throw;
    } catch (const Error& e) {
        // The CPU pipeline itself stopped on these targets (a made-up model's
        // Backward overflowing on a run of one residue, say: hmmsearch stops
        // there too). Not the device's doing: the whole targets only, said.
        check.mismatches.push_back("note: model " + hmm.name + ": the CPU pipeline stopped (" + e.what() +
                                   "): envelopes of whole targets only");
    }
    int whole = 0;
    for (std::size_t t = 0; t < targets.size() && whole < kWholeTargets; ++t) {
        const int L = targets.length(t);
        if (L < 1 || L > kWholeLength) continue;
        jobs.push_back({static_cast<std::uint32_t>(t), 1, L, whole++ % 2 == 0});
    }
    std::vector<EnvelopeOutcome> device;
    // The scanner was loaded with the targets by the filter checks before.
    if (!scanner.rescore_envelopes(profile.unihit, jobs, device, context)) return check;
    check.checked = true;
    check.stats = scanner.last_stats();
    if (device.size() != jobs.size()) throw Error("internal error: the device rescored another number of envelopes");
    std::vector<EnvelopeOutcome> reference(jobs.size());
    const auto start = std::chrono::steady_clock::now();
    parallel_for(
        jobs.size(), threads,
        [&](std::size_t n) {
            const EnvelopeJob& job = jobs[n];
            reference[n] = rescore_envelope_reference(profile.unihit, hmm.alphabet, targets.codes(job.target),
                                                      targets.length(job.target), job);
        },
        1);
    check.reference_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (std::size_t n = 0; n < jobs.size(); ++n) {
        ++check.compared;
        const std::string d = envelope_outcome_difference(device[n], reference[n]);
        if (d.empty()) continue;
        ++check.differing;
        if (check.mismatches.size() >= kMismatchLines) continue;
        char line[400];
        std::snprintf(line, sizeof line, "envelope rescoring, model %s (M=%d), target %s, envelope %d..%d: %s",
                      hmm.name.c_str(), hmm.length, targets.names[jobs[n].target].c_str(), jobs[n].i, jobs[n].j,
                      d.c_str());
        check.mismatches.emplace_back(line);
    }
    return check;
}

}  // namespace alignscope::profile
