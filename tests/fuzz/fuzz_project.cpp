// libFuzzer target: arbitrary bytes as a project file (.alsproj, an SQLite
// database), opened read-only the way `alignscope-cli project list|show|
// export|check` and the workbench's views read one: every job (its stored
// spec is JSON, its scoring matrix text), every page of results (alignments
// with their CIGARs, hits, timeline events, long alignments, benchmark points
// with their JSON parameters, heatmaps with their blobs, long-pair
// statistics), the inputs' embedded sequences, each export format, and
// `check`.
//
// It must end in results or an alignscope::Error: no other exception, no
// crash, no sanitizer report. What it returns must be what the views may
// index without checking: heatmaps pass Heatmap::check (values rows x cols,
// path cells inside the grid, edges ascending), timeline times within 2^62 ns
// of 0 (so differences of two fit 64 bits), pages no longer than asked.
//
// SQLite itself is not instrumented (Debian's library): the fuzzer steers by
// our code's coverage, so most mutations end in SQLite's "malformed" and the
// rest reach our readers with odd row contents.
//
// Seeds: ALIGNSCOPE_FUZZ_WRITE_SEEDS=DIR fuzz_project writes a small project
// our writer makes (an align job with alignments, a heatmap, a timeline and an
// embedded input; a search job with hits; a bench job; a long-pair job's
// statistics and summary), rewritten by SQLite with 512-byte pages and a
// rollback journal so it fits the fuzzer's 64 KiB, into DIR and exits;
// tests/fuzz/corpus/project holds it.
#include "fuzz_support.hpp"

#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>
#include <alignscope/store/export.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <streambuf>
#include <string>

using namespace alignscope;
using namespace alignscope::store;
using alignscope::fuzz::require;

namespace {

namespace fs = std::filesystem;

// An ostream that keeps only a count (export_job writes whole tables).
class CountingBuffer : public std::streambuf {
public:
    std::size_t bytes = 0;

protected:
    int_type overflow(int_type c) override {
        ++bytes;
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char*, std::streamsize n) override {
        bytes += static_cast<std::size_t>(n);
        return n;
    }
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void remove_project(const std::string& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal", "-lock"}) fs::remove(path + suffix, ec);
}

template <typename F>
void allow_error(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        require(e.what()[0] != '\0');
    }
}

void read_everything(const std::string& path) {
    ProjectOptions options;
    options.read_only = true;
    options.verify_inputs = false;
    Project project(path, options);
    allow_error([&] {
        for (const InputInfo& input : project.inputs()) {
            allow_error([&] { (void)project.input(input.id); });
            allow_error([&] { (void)project.input_sequences(input.id); });
            allow_error([&] { (void)project.input_content(input.id); });
        }
    });
    std::vector<JobInfo> jobs;
    allow_error([&] { jobs = project.jobs(); });
    for (const JobInfo& listed : jobs) {
        const std::int64_t id = listed.id;
        allow_error([&] {
            const JobInfo job = project.job(id);
            if (job.spec.has_scheme()) allow_error([&] { (void)job.spec.scheme(); });
        });
        allow_error([&] {
            const auto page = project.alignments(id, 0, 50);
            require(page.rows.size() <= 50);
        });
        allow_error([&] {
            const auto page = project.hits(id, 0, 50);
            require(page.rows.size() <= 50);
            for (std::size_t k = 0; k < page.rows.size() && k < 4; ++k)
                allow_error([&] { (void)project.hit_alignment(id, static_cast<std::int64_t>(k)); });
        });
        allow_error([&] {
            const auto page = project.timeline(id, 0, 200);
            require(page.rows.size() <= 200);
            // Times the writer and the views may take differences of.
            constexpr std::int64_t limit = (std::int64_t{1} << 62) - 1;
            for (const TimelineEvent& e : page.rows)
                require(e.start_ns >= -limit && e.start_ns <= limit && e.end_ns >= -limit && e.end_ns <= limit);
        });
        allow_error([&] { require(project.long_alignments(id, 0, 50).rows.size() <= 50); });
        allow_error([&] { require(project.bench_points(id, 0, 200).rows.size() <= 200); });
        allow_error([&] {
            for (const Heatmap& h : project.heatmaps(id)) {
                try {
                    h.check("fuzz");
                } catch (const Error&) {
                    require(false);  // a heatmap the views would index out of bounds
                }
                if (h.rows > 0 && h.cols > 0) (void)h.at(h.rows - 1, h.cols - 1);
            }
        });
        allow_error([&] { (void)project.long_pair_stats(id); });
        for (const ExportFormat format :
             {ExportFormat::Json, ExportFormat::Tsv, ExportFormat::Pair, ExportFormat::ChromeTrace, ExportFormat::Csv})
            allow_error([&] {
                CountingBuffer sink;
                std::ostream out(&sink);
                export_job(project, id, format, out);
            });
    }
    allow_error([&] { (void)project.check(); });
}

// A small project with a job of every kind, as our writer writes it.
void write_seeds(const std::string& dir) {
    const std::string path = fuzz::scratch_directory() + "/seed.alsproj";
    remove_project(path);
    const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
    AlignOptions local;
    local.mode = AlignmentMode::Local;
    RecordingOptions recording;
    recording.project.create_if_missing = true;
    {
        JobSpec spec;
        spec.command = "align";
        spec.mode = "local";
        spec.set_scheme(scheme);
        spec.parameters["pairs"] = "2";
        JobRecording job(path, spec, recording);
        SequenceSet set;
        set.path = "-";
        set.alphabet = AlphabetKind::Protein;
        set.records = {{"q1", "first query", "MKVLAAGIVGLLWYWY", ""}, {"t1", "", "MKVLSAGIVGLWWYWYK", ""}};
        job.add_input(set, "query");
        std::vector<Alignment> alignments;
        alignments.push_back(align_reference(set.records[0].residues, set.records[1].residues, scheme, local));
        alignments.push_back(align_reference("ACDEFGHIK", "ACDFGHIKK", scheme, AlignOptions{}));
        job.add_alignments(alignments);
        const DpMatrices dp = compute_dp_matrices(set.records[0].residues, set.records[1].residues, scheme, local);
        job.add_heatmap(Heatmap::from_dp(dp, scheme.scale, 8, 8));
        std::vector<TimelineEvent> events = {{"cpu:sw", "cpu", "cpu", 0, 1000, 5000, 0, 272},
                                             {"cpu:sw", "cpu", "cpu", 1, 1200, 4800, 0, 81}};
        job.add_timeline(events, "steady-clock");
        job.finish_done();
    }
    {
        JobSpec spec;
        spec.command = "search";
        spec.set_scheme(scheme);
        JobRecording job(path, spec, recording);
        Hit hit;
        hit.query_id = "q1";
        hit.target_id = "t1";
        hit.rank = 1;
        hit.score = 60;
        hit.bits = 30.5;
        hit.evalue = 1e-5;
        hit.query_begin = 1;
        hit.query_end = 16;
        hit.target_begin = 1;
        hit.target_end = 16;
        hit.query_length = 16;
        hit.target_length = 17;
        job.add_hits({hit});
        job.finish_done();
    }
    {
        JobSpec spec;
        spec.command = "bench";
        JobRecording job(path, spec, recording);
        BenchPoint p;
        p.series = "cpu";
        p.device = "cpu";
        p.x = 300;
        p.y = 1.5;
        p.x_label = "query length";
        p.y_label = "GCUPS";
        p.parameters["threads"] = "2";
        job.add_bench_points({p});
        job.finish_done();
    }
    {
        JobSpec spec;
        spec.command = "align";
        spec.algorithm = "long_pair";
        spec.set_scheme(ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5));
        JobRecording job(path, spec, recording);
        LongAlignmentSummary summary;
        summary.query_id = "chrA";
        summary.target_id = "chrB";
        summary.score = 1000;
        summary.query_begin = summary.target_begin = 1;
        summary.query_end = summary.query_length = 5000;
        summary.target_end = summary.target_length = 5100;
        summary.alignment_path = "long.pair";
        job.add_long_alignment(summary);
        LongPairStats stats;
        stats.query_id = "chrA";
        stats.target_id = "chrB";
        stats.query_length = 5000;
        stats.target_length = 5100;
        stats.device = "cpu";
        stats.strategy = "cpu-passes";
        stats.seconds = 0.5;
        job.add_long_pair_stats(stats);
        job.finish_failed("cancelled by the fuzz seed writer");
    }
    // Small pages and a rollback journal: the same database in about 40 KiB.
    sqlite3* db = nullptr;
    require(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    for (const char* sql : {"PRAGMA journal_mode = DELETE", "PRAGMA page_size = 512", "VACUUM"})
        require(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    require(sqlite3_close(db) == SQLITE_OK);
    fs::create_directories(dir);
    const std::string bytes = read_file(path);
    std::ofstream(dir + "/four-jobs.alsproj", std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::printf("%s/four-jobs.alsproj: %zu bytes\n", dir.c_str(), bytes.size());
    read_everything(path);
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
    const std::string path = fuzz::scratch_directory() + "/fuzz.alsproj";
    remove_project(path);
    fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
    allow_error([&] { read_everything(path); });
    remove_project(path);
    return 0;
}
