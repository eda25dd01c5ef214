// Search defaults (BLAST's gap costs, the scanner for "auto") and the project
// record of a search job, shared by the CLI and the workbench.
#include <alignscope/search/search_settings.hpp>

#include <alignscope/device/job.hpp>
#include <alignscope/error.hpp>

#include <cctype>
#include <cstdio>
#include <map>

namespace alignscope {

namespace {

std::string upper(std::string_view text) {
    std::string out;
    for (char c : text) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    return out;
}

std::string number(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    return buffer;
}

}  // namespace

std::optional<GapCosts> blast_default_gaps(std::string_view matrix) {
    // BLAST's existence + extension, each a row with published statistics
    // (statistics.cpp). Source: NCBI BLAST's blast_stat.c (ncbi-cxx-toolkit,
    // src/algo/blast/core), the row of each matrix's *_values table that its
    // *_prefs table marks BLAST_MATRIX_BEST: BLOSUM45 14/2, BLOSUM50 13/2,
    // BLOSUM62 11/1, BLOSUM80 10/1, PAM30 9/1, PAM70 10/1, PAM250 14/2. So
    // BLOSUM45 is 16/2 here (BLAST 14 + 2); its 14/2 row (lambda 0.195,
    // K 0.032, H 0.10) is in statistics.cpp.
    static const std::map<std::string, GapCosts> defaults = {
        {"BLOSUM45", {16, 2}}, {"BLOSUM50", {15, 2}}, {"BLOSUM62", {12, 1}}, {"BLOSUM80", {11, 1}},
        {"PAM30", {10, 1}},    {"PAM70", {11, 1}},    {"PAM250", {16, 2}},   {"EDNAFULL", {16, 6}},
    };
    std::string name = upper(matrix);
    if (name == "DNAFULL") name = "EDNAFULL";
    if (auto it = defaults.find(name); it != defaults.end()) return it->second;
    if (name.size() > 1 && name[0] == 'E')
        if (auto it = defaults.find(name.substr(1)); it != defaults.end()) return it->second;
    return std::nullopt;
}

GapCosts default_search_gaps(std::string_view matrix, std::optional<double> match, std::optional<double> mismatch,
                             AlphabetKind alphabet, std::string* note) {
    if (match && mismatch && *match == 2 && *mismatch == -3) return {7, 2};  // BLASTN's 5/2
    std::string name(matrix);
    if (name.empty() && !match) name = alphabet == AlphabetKind::Protein ? "BLOSUM62" : "EDNAFULL";
    if (!name.empty() && !match)
        if (const auto gaps = blast_default_gaps(name)) return *gaps;
    if (note)
        *note = "search: no BLAST default gap costs for this matrix; using the general default open 10, extend 0.5";
    return {};
}

std::string choose_scan_device(const ScannerRegistry& registry, const std::string& spec, const ScanSetup& setup,
                               std::string* note, std::string_view option) {
    for (const std::string& id : registry.resolve(spec)) {
        const ScanCapability can = registry.capability(id, setup);
        if (can.supported) continue;
        std::string lowered;
        for (char c : spec) lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        if (lowered == "auto") {
            if (note) *note = "search: " + id + " cannot scan this: " + can.reason + "; scanning on the CPU instead";
            return "cpu";
        }
        throw Error(std::string(option) + " " + spec + ": " + id + " cannot scan this: " + can.reason);
    }
    return spec;
}

store::JobSpec search_job_spec(std::string command, const ScanSetup& setup, const SearchOptions& search,
                               const DeviceInfo& device) {
    PairJob settings;
    settings.scheme = setup.scheme;
    settings.options = setup.options;
    settings.options.traceback = search.traceback;
    settings.threads = setup.threads;
    settings.streams = setup.streams;
    settings.gpu_memory_budget = setup.gpu_memory_budget;
    store::JobSpec spec = store::JobSpec::for_pair_job(std::move(command), settings, device);
    // A search has no pair list: its size is queries x database, which the
    // caller knows.
    spec.parameters.erase("pairs");
    spec.parameters.erase("cells");
    spec.parameters["search"] = "database";
    spec.parameters["top"] = std::to_string(search.top);
    spec.parameters["traceback"] = search.traceback ? "true" : "false";
    if (search.min_score) spec.parameters["min_score"] = number(*search.min_score);
    if (search.max_evalue) spec.parameters["max_evalue"] = number(*search.max_evalue);
    return spec;
}

store::Hit to_store_hit(const SearchHit& hit) {
    const Alignment& a = hit.alignment;
    store::Hit h;
    h.query_id = a.query_id;
    h.target_id = a.target_id;
    h.rank = hit.rank;
    h.score = hit.score;
    h.bits = hit.bits;
    h.evalue = hit.evalue;
    h.query_begin = a.query_begin;
    h.query_end = a.query_end;
    h.target_begin = a.target_begin;
    h.target_end = a.target_end;
    h.query_length = a.query_length;
    h.target_length = a.target_length;
    return h;
}

}  // namespace alignscope
