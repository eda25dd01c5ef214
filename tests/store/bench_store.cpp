// alignscope-store-bench: how fast the project store takes and serves large
// results. Inserts 1,000,000 hits and 1,000,000 timeline events (each kind in
// one transaction, the way a search or a long GPU run records them), then
// reads pages the way a scrolling view does: random starting rows, and a
// sequential walk, through a fresh connection. The budget from the design is
// < 10 s for the inserts and < 50 ms per page on the 2-core CI machine.
//
// Usage: alignscope-store-bench [FOLDER] [ROWS]   (defaults: a temporary folder, 1000000)
#include <alignscope/error.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

using namespace alignscope;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::vector<store::Hit> make_hits(int n) {
    std::vector<store::Hit> hits(static_cast<std::size_t>(n));
    std::mt19937 rng(1);
    std::uniform_int_distribution<int> length(80, 2000);
    for (int k = 0; k < n; ++k) {
        store::Hit& h = hits[static_cast<std::size_t>(k)];
        h.query_id = "query_" + std::to_string(k / 1000);
        h.target_id = "sp|Q" + std::to_string(100000 + k % 500000) + "|PROT_" + std::to_string(k % 97);
        h.rank = k % 1000 + 1;
        h.score = 2000 - k % 1000;
        h.bits = 700.5 - (k % 1000) * 0.5;
        h.evalue = 1e-150 * (k % 1000 + 1);
        h.query_begin = 1;
        h.query_end = 300;
        h.target_begin = 1 + k % 50;
        h.target_end = 290 + k % 50;
        h.query_length = 300;
        h.target_length = length(rng);
    }
    return hits;
}

std::vector<TimelineEvent> make_events(int n) {
    std::vector<TimelineEvent> events(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
        TimelineEvent& e = events[static_cast<std::size_t>(k)];
        e.name = k % 4 == 0 ? "H2D" : "sw_affine_inter_s16";
        e.category = k % 4 == 0 ? "copy" : "kernel";
        e.device = "gpu:" + std::to_string(k % 2);
        e.lane = k % 8;
        e.start_ns = 1'000'000'000'000 + 2'000 * std::int64_t{k};
        e.end_ns = e.start_ns + 1'500;
        e.bytes = k % 4 == 0 ? 1u << 20 : 0;
        e.cells = k % 4 == 0 ? 0 : 50'000'000;
    }
    return events;
}

struct PageTimes {
    double median_ms = 0, p99_ms = 0, max_ms = 0;
};

template <class Fetch>
PageTimes time_pages(Fetch&& fetch, std::int64_t rows, int page_size, int samples) {
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<std::int64_t> start(0, rows - page_size);
    std::vector<double> ms;
    for (int k = 0; k < samples; ++k) {
        const std::int64_t from = k == 0 ? 0 : start(rng);
        const auto t = Clock::now();
        const auto page = fetch(from, page_size);
        ms.push_back(seconds_since(t) * 1000.0);
        if (page.rows.size() != static_cast<std::size_t>(page_size)) throw Error("short page");
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back()};
}

template <class Fetch>
double walk_all(Fetch&& fetch, int page_size, std::int64_t& pages) {
    const auto t = Clock::now();
    pages = 0;
    for (std::int64_t from = 0;; ++pages) {
        const auto page = fetch(from, page_size);
        if (!page.more) break;
        from = page.next();
    }
    return seconds_since(t);
}

}  // namespace

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    try {
        const fs::path folder = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path();
        const int rows = argc > 2 ? std::stoi(argv[2]) : 1'000'000;
        const fs::path path = folder / "alignscope-store-bench.alsproj";
        for (const char* suffix : {"", "-wal", "-shm", "-lock"}) fs::remove(path.string() + suffix);

        std::printf("alignscope-store-bench: %d hits + %d timeline events into %s\n", rows, rows, path.c_str());
        const auto hits = make_hits(rows);
        const auto events = make_events(rows);

        store::ProjectOptions create;
        create.create_if_missing = true;
        std::int64_t job_id = 0;
        double hits_s = 0, events_s = 0, total_s = 0;
        {
            store::Project project(path.string(), create);
            const auto total = Clock::now();
            auto job = project.begin_job(store::JobSpec{});
            job_id = job->job_id();
            auto t = Clock::now();
            job->add_hits(hits);
            hits_s = seconds_since(t);
            t = Clock::now();
            job->add_timeline(events, "steady-clock");
            events_s = seconds_since(t);
            job->finish_done();
            total_s = seconds_since(total);
        }
        std::printf(
            "insert: hits %.2f s (%.0f rows/s), timeline %.2f s (%.0f rows/s), total with job %.2f s "
            "[budget 10 s: %s]\n",
            hits_s, rows / hits_s, events_s, rows / events_s, total_s, total_s < 10 ? "met" : "MISSED");
        std::printf("file: %.1f MB\n", double(fs::file_size(path)) / 1e6);

        store::ProjectOptions read;
        read.read_only = true;
        const store::Project project(path.string(), read);
        const int samples = 200;
        for (int page_size : {100, 1000}) {
            const PageTimes h = time_pages([&](std::int64_t from, int n) { return project.hits(job_id, from, n); },
                                           rows, page_size, samples);
            const PageTimes e = time_pages([&](std::int64_t from, int n) { return project.timeline(job_id, from, n); },
                                           rows, page_size, samples);
            std::printf(
                "random pages of %d rows (%d each): hits median %.2f ms, p99 %.2f ms, max %.2f ms; "
                "timeline median %.2f ms, p99 %.2f ms, max %.2f ms [budget 50 ms: %s]\n",
                page_size, samples, h.median_ms, h.p99_ms, h.max_ms, e.median_ms, e.p99_ms, e.max_ms,
                std::max(h.max_ms, e.max_ms) < 50 ? "met" : "MISSED");
        }
        std::int64_t pages = 0;
        const double walk =
            walk_all([&](std::int64_t from, int n) { return project.hits(job_id, from, n); }, 1000, pages);
        std::printf("sequential walk of all hits in pages of 1000: %lld pages, %.2f s (%.2f ms per page)\n",
                    static_cast<long long>(pages + 1), walk, 1000.0 * walk / double(pages + 1));
        for (const char* suffix : {"", "-wal", "-shm", "-lock"}) fs::remove(path.string() + suffix);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "alignscope-store-bench: %s\n", e.what());
        return 2;
    }
}
