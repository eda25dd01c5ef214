// libFuzzer target: arbitrary bytes as an HMMER3 profile save file, read as
// `hmmsearch` reads it; every model the reader accepts is configured for
// search (local multihit, the three filters' units) and, when small, searched
// against a few fixed targets, so that a model the reader lets through can
// never make the pipeline crash or compute with undefined values.
#include "fuzz_support.hpp"

#include <alignscope/device/job.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/plan7_profile.hpp>
#include <alignscope/profile/profile_search.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <cmath>
#include <cstdint>
#include <string>

using namespace alignscope;
using namespace alignscope::profile;
using alignscope::fuzz::require;

namespace {

ProfileTargets targets_for(ResidueAlphabet alphabet) {
    ProfileTargets t;
    t.alphabet = alphabet;
    t.path = "fuzz-targets";
    const char* amino[] = {"ACDEFGHIKLMNPQRSTVWY",
                           "MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGAF",
                           "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", "CD"};
    const char* dna[] = {"ACGTACGTACGTNNACGT", "GAATTCGAATTCGAATTCGAATTCGAATTC", "A"};
    const auto& code = ResidueCode::of(alphabet);
    t.offsets.push_back(0);
    auto add = [&](const char* s) {
        std::vector<std::uint8_t> codes;
        require(code.digitise(s, codes) == std::string::npos);
        t.names.push_back("t" + std::to_string(t.names.size()));
        t.descriptions.emplace_back();
        t.residues.insert(t.residues.end(), codes.begin(), codes.end());
        t.offsets.push_back(t.residues.size());
    };
    if (alphabet == ResidueAlphabet::Amino)
        for (const char* s : amino) add(s);
    else
        for (const char* s : dna) add(s);
    return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::vector<ProfileHmm> models;
    try {
        models = parse_hmm_text(text, "fuzz.hmm");
    } catch (const Error&) {
        return 0;
    }
    require(!models.empty());
    static const auto registry = make_cpu_profile_scanner_registry();
    for (const ProfileHmm& hmm : models) {
        require(hmm.length > 0);
        const auto K = static_cast<std::size_t>(hmm.canonical());
        const auto M = static_cast<std::size_t>(hmm.length);
        require(hmm.match.size() == (M + 1) * K);
        require(hmm.insert.size() == (M + 1) * K);
        require(hmm.transitions.size() == (M + 1) * kTransitions);
        for (float p : hmm.match) require(std::isfinite(p) && p >= 0);
        for (float p : hmm.transitions) require(std::isfinite(p) && p >= 0);
        try {
            const NullModel null_model(hmm.alphabet);
            const Plan7Profile profile = configure_local(hmm, null_model);
            require(profile.length == hmm.length);
            (void)make_msv_profile(profile);
            (void)make_viterbi_filter_profile(profile);
            (void)make_forward_profile(profile, true);
            (void)make_forward_profile(profile, false);
            if (hmm.length > 300) continue;  // the pipeline's cost grows with M; small models cover its paths
            const ProfileTargets targets = targets_for(hmm.alphabet);
            auto scanner = registry->create("cpu", 1);
            JobContext job;
            scanner->load(targets, job);
            PipelineSettings settings;
            settings.threads = 1;
            settings.set_max();  // every target through every stage
            const ModelSearch result = search_profile(hmm, targets, *scanner, settings, job);
            for (const auto& hit : result.hits) require(!std::isnan(hit.score));
        } catch (const Error&) {
            // A model may be refused at configuration (e.g. without STATS); never a crash.
        }
    }
    return 0;
}
