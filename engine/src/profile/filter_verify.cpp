// A profile filter scanner against the scalar reference (filter_verify.hpp).
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/profile/filters.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace alignscope::profile {

namespace {

void add_target(ProfileTargets& targets, const std::string& name, const std::vector<std::uint8_t>& codes)
{
    targets.names.push_back(name);
    targets.descriptions.emplace_back();
    targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
    targets.offsets.push_back(targets.residues.size());
}

void compare(const char* filter, const ProfileTargets& targets, const std::vector<float>& ours,
             const std::vector<float>& reference, FilterCheck& check)
{
    for (std::size_t t = 0; t < ours.size(); ++t) {
        ++check.compared;
        if (std::memcmp(&ours[t], &reference[t], sizeof(float)) == 0) continue;
        if (++check.differing > 10) continue;
        char line[320];
        std::snprintf(line, sizeof line, "%s filter, target %s (%d residues): %.9g, reference %.9g", filter,
                      targets.names[t].c_str(), targets.length(t), static_cast<double>(ours[t]),
                      static_cast<double>(reference[t]));
        check.mismatches.emplace_back(line);
    }
}

}  // namespace

ProfileTargets made_up_profile_targets(const ProfileHmm& hmm, int random_count, std::uint32_t seed)
{
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
    std::vector<std::uint8_t> repeated;
    for (int copies = 1; copies <= 6; ++copies) {
        repeated.insert(repeated.end(), consensus.begin(), consensus.end());
        add_target(targets, "consensus_x" + std::to_string(copies), repeated);
    }
    for (int x = 0; x < code.canonical(); ++x) {
        add_target(targets, std::string("single_") + code.symbol(x), {static_cast<std::uint8_t>(x)});
        add_target(targets, std::string("run_") + code.symbol(x), std::vector<std::uint8_t>(3000, static_cast<std::uint8_t>(x)));
    }
    std::vector<std::uint8_t> longest(100000);
    for (auto& c : longest) c = static_cast<std::uint8_t>(residue(random));
    add_target(targets, "longest", longest);
    return targets;
}

FilterCheck check_profile_filters(ProfileFilterScanner& scanner, const ProfileHmm& hmm, const ProfileTargets& targets,
                                  const std::string& target_set, int threads, JobContext& context)
{
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);
    const std::size_t n = targets.size();
    FilterCheck check;
    check.model = hmm.name;
    check.model_length = hmm.length;
    check.target_set = target_set;
    check.targets = n;

    std::vector<float> msv_reference(n), viterbi_reference(n), msv(n), viterbi(n);
    const auto start = std::chrono::steady_clock::now();
    parallel_for(n, threads, [&](std::size_t t) {
        msv_reference[t] = msv_filter(profile.msv, targets.codes(t), targets.length(t));
        viterbi_reference[t] = viterbi_filter(profile.viterbi, targets.codes(t), targets.length(t));
    });
    check.reference_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    scanner.load(targets, context);
    scanner.msv(profile.msv, msv, context);
    check.msv_stats = scanner.last_stats();
    std::vector<std::uint32_t> all(n);
    for (std::size_t t = 0; t < n; ++t) all[t] = static_cast<std::uint32_t>(t);
    scanner.viterbi(profile.viterbi, all, viterbi, context);
    check.viterbi_stats = scanner.last_stats();
    compare("MSV", targets, msv, msv_reference, check);
    compare("Viterbi", targets, viterbi, viterbi_reference, check);
    for (float s : msv_reference) check.msv_overflows += std::isinf(s) ? 1 : 0;
    return check;
}

}  // namespace alignscope::profile
