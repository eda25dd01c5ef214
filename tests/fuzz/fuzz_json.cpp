// libFuzzer target: arbitrary bytes as the JSON documents we read from
// users' files, each read as its reader reads it:
//   - a Chrome trace-event file, as the timeline view's "Import Chrome trace"
//     reads one (read_chrome_trace);
//   - a job specification, as a project file stores it in its jobs table
//     (JobSpec::from_json), and the scoring scheme rebuilt from it (scheme());
//   - a stored profile search, as a project file keeps it in its analyses
//     table and the workbench reads it (read_stored_search).
//
// Each must give its result or throw alignscope::Error (no other exception,
// no crash, no sanitizer report). Trace events it gives must be sorted by
// start, none ending before it starts, all within 2^62 ns of each other, and
// survive a round trip through our writer (write_chrome_trace, then
// read_chrome_trace again): the same names, categories, devices, lanes, byte
// and cell counts, durations and relative starts (checked where the times fit
// a double exactly, spans under 1000 s). A job spec must survive to_json and
// from_json unchanged; a stored profile search, once written by our writer,
// must read back to the same document.
//
// Seeds: ALIGNSCOPE_FUZZ_WRITE_SEEDS=DIR fuzz_json writes a trace and a job
// spec our writers make into DIR and exits; tests/fuzz/corpus/json holds them
// and foreign traces (B/E pairs, string pids, the bare array format), and a
// stored profile search that `hmmsearch --project` wrote (globins4 against
// the first globins45 sequences).
#include "fuzz_support.hpp"

#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/stored_search.hpp>
#include <alignscope/store/job_spec.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace alignscope;
using alignscope::fuzz::require;

namespace {

void write_seeds(const std::string& dir) {
    std::vector<TimelineEvent> events;
    auto add = [&](const char* name, const char* category, const char* device, int lane, std::int64_t start,
                   std::int64_t end, std::uint64_t bytes, std::uint64_t cells) {
        events.push_back({name, category, device, lane, start, end, bytes, cells});
    };
    add("H2D", "copy", "gpu:0", 0, 1'000'000, 1'004'500, 1 << 20, 0);
    add("sw_affine_inter_s16", "kernel", "gpu:0", 0, 1'004'600, 1'250'000, 0, 90'000'000);
    add("sw_affine_intra4_s16", "kernel", "gpu:0", 1, 1'010'000, 1'300'000, 0, 45'000'000);
    add("D2H", "copy", "gpu:0", 1, 1'300'100, 1'301'000, 4096, 0);
    add("cpu:sw", "cpu", "cpu", 3, 900'000, 2'000'000, 0, 1'000'000);
    std::ostringstream out;
    write_chrome_trace(out, events, "cuda-events");
    std::filesystem::create_directories(dir);
    const std::string path = dir + "/ours.json";
    std::ofstream(path, std::ios::binary) << out.str();
    std::printf("%s: %zu bytes\n", path.c_str(), out.str().size());

    store::JobSpec spec;
    spec.command = "align";
    spec.algorithm = "sg_affine";
    spec.mode = "semiglobal";
    spec.free_ends = "qb,qe";
    spec.set_scheme(ScoringScheme::create(SubstitutionMatrix::builtin("PAM30"), 9, 1.5));
    spec.devices = "gpu:0";
    spec.streams = 4;
    spec.threads = 2;
    spec.gpu_memory_budget = 4ull << 30;
    spec.command_line = "alignscope-cli align q.fa t.fa --mode semiglobal";
    spec.parameters["pairs"] = "12";
    const std::string spec_path = dir + "/job-spec.json";
    std::ofstream(spec_path, std::ios::binary) << spec.to_json();
    std::printf("%s: %zu bytes\n", spec_path.c_str(), spec.to_json().size());
}

void read_job_spec(const std::string& text) {
    store::JobSpec spec;
    try {
        spec = store::JobSpec::from_json(text, "fuzz.json");
    } catch (const Error& e) {
        require(std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
        return;
    }
    const std::string json = spec.to_json();
    try {
        require(store::JobSpec::from_json(json, "round-trip.json").to_json() == json);
    } catch (const Error&) {
        require(false);  // what we write, we read
    }
    if (spec.has_scheme()) {
        try {
            const ScoringScheme scheme = spec.scheme();
            require(scheme.scale >= 1 && scheme.matrix.size() > 0);
        } catch (const Error&) {
        }
    }
}

void read_profile_search(const std::string& text) {
    profile::StoredSearch search;
    try {
        search = profile::read_stored_search(text);
    } catch (const Error&) {
        return;
    }
    const std::string json = profile::stored_search_json(search);
    try {
        require(profile::stored_search_json(profile::read_stored_search(json)) == json);
    } catch (const Error&) {
        require(false);  // what we write, we read
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (const char* seeds = std::getenv("ALIGNSCOPE_FUZZ_WRITE_SEEDS"); seeds && *seeds) {
        write_seeds(seeds);
        std::exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    read_job_spec(text);
    read_profile_search(text);
    std::vector<TimelineEvent> events;
    try {
        events = read_chrome_trace(text, "fuzz.json");
    } catch (const Error& e) {
        require(std::string_view(e.what()).rfind("fuzz.json: ", 0) == 0);
        return 0;
    }
    for (std::size_t k = 0; k < events.size(); ++k) {
        require(events[k].end_ns >= events[k].start_ns);
        require(k == 0 || events[k].start_ns >= events[k - 1].start_ns);
    }
    if (events.empty()) return 0;

    // The round trip through our writer.
    std::int64_t first = events.front().start_ns, last = first;
    for (const TimelineEvent& e : events) last = std::max(last, e.end_ns);
    require(last - first <= (std::int64_t{1} << 62));  // what the views' span arithmetic relies on
    if (last - first >= 1'000'000'000'000) return 0;
    std::ostringstream out;
    write_chrome_trace(out, events, "steady-clock");
    std::vector<TimelineEvent> back;
    try {
        back = read_chrome_trace(out.str(), "round-trip.json");
    } catch (const Error&) {
        require(false);  // what we write, we read
    }
    require(back.size() == events.size());
    for (std::size_t k = 0; k < events.size(); ++k) {
        const TimelineEvent& a = events[k];
        const TimelineEvent& b = back[k];
        require(b.start_ns - back.front().start_ns == a.start_ns - first);
        require(b.end_ns - b.start_ns == a.end_ns - a.start_ns);
        require(b.name == a.name && b.category == a.category && b.device == a.device && b.lane == a.lane);
        require(b.bytes == a.bytes && b.cells == a.cells);
    }
    return 0;
}
