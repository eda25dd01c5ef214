// Every result kind written through a JobRecording and read back from a fresh
// connection equals what was written; pages cover the rows exactly once in
// order; a failing batch leaves nothing; heatmap downsampling against a
// cell-by-cell recomputation of the block maxima; a long-pair job's stage-1
// overview (the CPU pass runner's) against a max-pool of the full DP matrix,
// its path against a walk of the CIGAR one column at a time, and its edges and
// pipeline statistics through the project; kernel names an earlier version
// stored read in today's words.
#include "store_test_support.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/error.hpp>

#include <limits>
#include <optional>

using namespace alignscope;
using namespace store_test;

namespace {

store::ProjectOptions creating() {
    store::ProjectOptions options;
    options.create_if_missing = true;
    return options;
}

void compare_alignment(const Alignment& got, const Alignment& want) {
    QCOMPARE(got.query_id, want.query_id);
    QCOMPARE(got.target_id, want.target_id);
    QCOMPARE(got.mode, want.mode);
    QCOMPARE(got.score, want.score);
    QCOMPARE(got.query_begin, want.query_begin);
    QCOMPARE(got.query_end, want.query_end);
    QCOMPARE(got.target_begin, want.target_begin);
    QCOMPARE(got.target_end, want.target_end);
    QCOMPARE(got.query_length, want.query_length);
    QCOMPARE(got.target_length, want.target_length);
    QCOMPARE(got.cigar, want.cigar);
    QCOMPARE(got.query_aligned, want.query_aligned);
    QCOMPARE(got.target_aligned, want.target_aligned);
    QCOMPARE(got.stats.length, want.stats.length);
    QCOMPARE(got.stats.identities, want.stats.identities);
    QCOMPARE(got.stats.similarities, want.stats.similarities);
    QCOMPARE(got.stats.gaps, want.stats.gaps);
    QCOMPARE(got.stats.gap_opens, want.stats.gap_opens);
    QCOMPARE(got.device, want.device);
    QCOMPARE(got.kernel, want.kernel);
}

void compare_event(const TimelineEvent& got, const TimelineEvent& want) {
    QCOMPARE(got.name, want.name);
    QCOMPARE(got.category, want.category);
    QCOMPARE(got.device, want.device);
    QCOMPARE(got.lane, want.lane);
    QCOMPARE(got.start_ns, want.start_ns);
    QCOMPARE(got.end_ns, want.end_ns);
    QCOMPARE(got.bytes, want.bytes);
    QCOMPARE(got.cells, want.cells);
}

// Reads a whole table page by page, checking the page bookkeeping.
template <class Row, class Fetch>
std::vector<Row> read_all_pages(Fetch&& fetch, int limit, std::int64_t expected) {
    std::vector<Row> rows;
    std::int64_t from = 0;
    for (int pages = 0;; ++pages) {
        const store::Page<Row> page = fetch(from, limit);
        if (page.first != from)
            qFatal("page starts at %lld, asked %lld", static_cast<long long>(page.first), static_cast<long long>(from));
        rows.insert(rows.end(), page.rows.begin(), page.rows.end());
        const bool should_have_more = page.next() < expected;
        if (page.more != should_have_more) qFatal("page.more is wrong at %lld", static_cast<long long>(from));
        if (!page.more) break;
        if (page.rows.size() != static_cast<std::size_t>(limit)) qFatal("short page before the end");
        from = page.next();
    }
    return rows;
}

}  // namespace

class TestResults : public QObject {
    Q_OBJECT

private slots:
    void everyKindRoundTrips() {
        QTemporaryDir dir;
        const QString path = dir.filePath("results.alsproj");
        const auto alignments = sample_alignments(37);
        const auto hits = sample_hits(101);
        const auto events = sample_events(250);
        const auto bench = sample_bench(9);
        const auto long_alignment = sample_long_alignment();
        store::Heatmap heatmap = store::Heatmap::downsample({5, -3, 7, 2, 0, 9, 1, 1, -1000}, 3, 3, 2, 2, 2, -1000);
        heatmap.label = "H";
        heatmap.query_id = "q";
        heatmap.target_id = "t";
        heatmap.path = {{0, 0}, {1, 1}, {1, 0}};
        std::int64_t job_id = 0;
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec());
            job_id = job->job_id();
            // Split batches: ordinals must continue across calls.
            job->add_alignments({alignments.begin(), alignments.begin() + 20});
            job->add_alignments({alignments.begin() + 20, alignments.end()});
            job->add_hits({hits.begin(), hits.begin() + 1});
            job->add_hits({hits.begin() + 1, hits.end()});
            job->add_timeline(events, "cuda-events");
            job->add_bench_points(bench);
            job->add_long_alignment(long_alignment);
            job->add_heatmap(heatmap);
            job->add_alignments({});  // an empty batch is fine and changes nothing
            job->finish_done();
        }
        store::ProjectOptions reading;
        reading.read_only = true;
        const store::Project project(path.toStdString(), reading);
        const store::JobInfo info = project.job(job_id);
        QCOMPARE(info.counts.alignments, std::int64_t{37});
        QCOMPARE(info.counts.hits, std::int64_t{101});
        QCOMPARE(info.counts.timeline_events, std::int64_t{250});
        QCOMPARE(info.counts.bench_points, std::int64_t{9});
        QCOMPARE(info.counts.long_alignments, std::int64_t{1});
        QCOMPARE(info.counts.heatmaps, std::int64_t{1});
        QCOMPARE(info.clock_source, std::string("cuda-events"));

        const auto stored_alignments = read_all_pages<Alignment>(
            [&](std::int64_t from, int limit) { return project.alignments(job_id, from, limit); }, 8, 37);
        QCOMPARE(stored_alignments.size(), alignments.size());
        for (std::size_t k = 0; k < alignments.size(); ++k) compare_alignment(stored_alignments[k], alignments[k]);

        const auto stored_hits =
            read_all_pages<store::Hit>([&](std::int64_t from, int limit) { return project.hits(job_id, from, limit); },
                                       25, 101);
        QVERIFY(stored_hits == hits);

        const auto stored_events = read_all_pages<TimelineEvent>(
            [&](std::int64_t from, int limit) { return project.timeline(job_id, from, limit); }, 100, 250);
        QCOMPARE(stored_events.size(), events.size());
        for (std::size_t k = 0; k < events.size(); ++k) compare_event(stored_events[k], events[k]);

        QVERIFY(project.bench_points(job_id).rows == bench);

        const auto longs = project.long_alignments(job_id).rows;
        QCOMPARE(longs.size(), std::size_t{1});
        const auto& s = longs[0];
        QCOMPARE(s.query_id, long_alignment.query_id);
        QCOMPARE(s.score, long_alignment.score);
        QCOMPARE(s.query_end, long_alignment.query_end);
        QCOMPARE(s.target_length, long_alignment.target_length);
        QCOMPARE(s.stats.identities, long_alignment.stats.identities);
        QCOMPARE(s.stats.gap_opens, long_alignment.stats.gap_opens);
        QCOMPARE(s.alignment_path, long_alignment.alignment_path);
        QCOMPARE(s.alignment_format, long_alignment.alignment_format);
        QCOMPARE(s.kernel, long_alignment.kernel);
        QCOMPARE(s.seconds, long_alignment.seconds);

        const auto maps = project.heatmaps(job_id);
        QCOMPARE(maps.size(), std::size_t{1});
        QCOMPARE(maps[0].label, heatmap.label);
        QCOMPARE(maps[0].rows, heatmap.rows);
        QCOMPARE(maps[0].cols, heatmap.cols);
        QCOMPARE(maps[0].source_rows, std::int64_t{3});
        QCOMPARE(maps[0].path, heatmap.path);
        QCOMPARE(maps[0].values.size(), heatmap.values.size());
        for (std::size_t k = 0; k < heatmap.values.size(); ++k) {
            if (std::isnan(heatmap.values[k])) QVERIFY(std::isnan(maps[0].values[k]));
            else
                QCOMPARE(maps[0].values[k], heatmap.values[k]);
        }
    }

    // Kernel names an earlier version stored (the database scan's family was
    // "dbscan"; the long-pair strip kernel was "long_strips_r16") are in the
    // project's rows as written, and read in today's words: a search's kernel
    // list, the timeline, a long alignment and its pipeline statistics.
    void oldKernelNamesReadAsToday() {
        QTemporaryDir dir;
        const QString path = dir.filePath("old-names.alsproj");
        std::int64_t job_id = 0;
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec("search"));
            job_id = job->job_id();
            std::vector<Alignment> alignments = sample_alignments(2);
            alignments[0].kernel = "sw_affine_dbscan_s16x2,sw_affine_dbscan_s32";
            alignments[1].kernel = "sw_affine_dbscan_s16x2,sw_affine_reference_s64";
            job->add_alignments(alignments);
            std::vector<TimelineEvent> events = sample_events(3);
            events[1].name = "sw_affine_dbscan_s16x2";
            events[2].name = "split2_sw_affine_dbscan_s32";
            job->add_timeline(events, "cuda-events");
            store::LongAlignmentSummary long_alignment = sample_long_alignment();
            long_alignment.kernel = "long_strips_r16";
            job->add_long_alignment(long_alignment);
            store::LongPairStats stats;
            stats.query_id = "chr_a";
            stats.target_id = "chr_b";
            stats.kernel = "long_strips_r8_local_k4s4";
            job->add_long_pair_stats(stats);
            job->finish_done();
        }
        {
            const RawDatabase raw(path);
            QCOMPARE(raw.column("SELECT kernel FROM alignments ORDER BY ordinal"),
                     QStringList({"sw_affine_dbscan_s16x2,sw_affine_dbscan_s32",
                                  "sw_affine_dbscan_s16x2,sw_affine_reference_s64"}));
            QCOMPARE(raw.column("SELECT name FROM timeline_events ORDER BY ordinal"),
                     QStringList({"H2D", "sw_affine_dbscan_s16x2", "split2_sw_affine_dbscan_s32"}));
        }
        store::ProjectOptions reading;
        reading.read_only = true;
        const store::Project project(path.toStdString(), reading);
        const auto alignments = project.alignments(job_id).rows;
        QCOMPARE(alignments.size(), std::size_t{2});
        QCOMPARE(alignments[0].kernel, std::string("sw_affine_search_s16x2,sw_affine_search_s32"));
        QCOMPARE(alignments[1].kernel, std::string("sw_affine_search_s16x2,sw_affine_reference_s64"));
        const auto events = project.timeline(job_id).rows;
        QCOMPARE(events.size(), std::size_t{3});
        QCOMPARE(events[0].name, std::string("H2D"));
        QCOMPARE(events[1].name, std::string("sw_affine_search_s16x2"));
        QCOMPARE(events[2].name, std::string("sw_affine_search_s32"));
        QCOMPARE(project.long_alignments(job_id).rows.at(0).kernel, std::string("nw_affine_strips16_s32"));
        QCOMPARE(project.long_pair_stats(job_id).at(0).kernel, std::string("sw_affine_strips8_s32"));
    }

    void pagesStartAnywhere() {
        QTemporaryDir dir;
        const QString path = dir.filePath("pages.alsproj");
        store::Project project(path.toStdString(), creating());
        auto job = project.begin_job(sample_spec());
        const auto hits = sample_hits(1000);
        job->add_hits(hits);
        job->finish_done();
        // A scrolling view asks for the page that holds row k.
        for (std::int64_t k : {0, 1, 499, 998, 999}) {
            const auto page = project.hits(job->job_id(), k, 50);
            QCOMPARE(page.first, k);
            QVERIFY(page.rows.front() == hits[static_cast<std::size_t>(k)]);
            QCOMPARE(page.more, k + 50 < 1000);
            QCOMPARE(page.rows.size(), std::size_t(std::min<std::int64_t>(50, 1000 - k)));
        }
        const auto past = project.hits(job->job_id(), 5000, 50);
        QVERIFY(past.rows.empty());
        QVERIFY(!past.more);
        // Other jobs' rows never leak into a page.
        auto other = project.begin_job(sample_spec());
        other->add_hits(sample_hits(3, 5000));
        other->finish_done();
        QCOMPARE(project.hits(job->job_id(), 990, 100).rows.size(), std::size_t{10});
        QCOMPARE(project.hits(other->job_id(), 0, 100).rows.size(), std::size_t{3});
        bool refused = false;
        try {
            project.hits(job->job_id(), 0, 0);
        } catch (const Error&) {
            refused = true;
        }
        QVERIFY(refused);
    }

    // A search job's hit finds its own alignment: by ids, score and
    // coordinates, whichever hits got one, in the order searches record them
    // and in any other; a hit without one (or a decoy with the same ids but
    // another score) finds none.
    void hitFindsItsAlignment() {
        QTemporaryDir dir;
        store::Project project(dir.filePath("hits.alsproj").toStdString(), creating());
        const std::vector<Alignment> alignments = sample_alignments(40);
        auto hit_of = [](const Alignment& a, std::int64_t rank) {
            store::Hit h;
            h.query_id = a.query_id;
            h.target_id = a.target_id;
            h.rank = rank;
            h.score = a.score;
            h.query_begin = a.query_begin;
            h.query_end = a.query_end;
            h.target_begin = a.target_begin;
            h.target_end = a.target_end;
            h.query_length = a.query_length;
            h.target_length = a.target_length;
            return h;
        };
        // Hit k: alignment k; alignments stored for all but every third hit,
        // plus a decoy after hit 10 (its ids, one point less, no alignment).
        std::vector<store::Hit> hits;
        std::vector<std::optional<Alignment>> expected;
        for (std::size_t k = 0; k < alignments.size(); ++k) {
            hits.push_back(hit_of(alignments[k], std::int64_t(k + 1)));
            expected.push_back(k % 3 == 1 ? std::nullopt : std::optional<Alignment>(alignments[k]));
            if (k == 10) {
                store::Hit decoy = hits.back();
                decoy.score -= 1;
                hits.push_back(decoy);
                expected.push_back(std::nullopt);
            }
        }
        auto record = [&](bool reversed) {
            auto job = project.begin_job(sample_spec("search"));
            // In batches as a search writes them: hits, then their alignments.
            std::vector<Alignment> stored;
            for (std::size_t first = 0; first < hits.size(); first += 7) {
                const std::size_t last = std::min(first + 7, hits.size());
                job->add_hits(std::vector<store::Hit>(hits.begin() + long(first), hits.begin() + long(last)));
                std::vector<Alignment> batch;
                for (std::size_t k = first; k < last; ++k)
                    if (expected[k]) batch.push_back(*expected[k]);
                if (reversed) stored.insert(stored.end(), batch.begin(), batch.end());
                else if (!batch.empty())
                    job->add_alignments(batch);
            }
            if (reversed) job->add_alignments(std::vector<Alignment>(stored.rbegin(), stored.rend()));
            job->finish_done();
            return job->job_id();
        };
        for (bool reversed : {false, true}) {
            const std::int64_t job = record(reversed);
            QCOMPARE(project.job(job).counts.hits, std::int64_t(hits.size()));
            for (std::size_t k = 0; k < hits.size(); ++k) {
                const std::optional<Alignment> found = project.hit_alignment(job, std::int64_t(k));
                QVERIFY2(found.has_value() == expected[k].has_value(), qPrintable(QString("hit %1").arg(k)));
                if (found) compare_alignment(*found, *expected[k]);
            }
            bool refused = false;
            try {
                project.hit_alignment(job, std::int64_t(hits.size()));
            } catch (const Error& e) {
                refused = QString(e.what()).contains("no hit number");
            }
            QVERIFY(refused);
        }
        // A search without traceback: hits only.
        auto bare = project.begin_job(sample_spec("search"));
        bare->add_hits(hits);
        bare->finish_done();
        QVERIFY(!project.hit_alignment(bare->job_id(), 0));
    }

    void failingBatchLeavesNothing() {
        QTemporaryDir dir;
        const QString path = dir.filePath("atomic.alsproj");
        store::Project project(path.toStdString(), creating());
        auto job = project.begin_job(sample_spec());
        job->add_bench_points(sample_bench(3));
        auto bad = sample_bench(10);
        bad[7].y = std::numeric_limits<double>::quiet_NaN();  // refused mid-batch, after 7 rows went in
        bool refused = false;
        try {
            job->add_bench_points(bad);
        } catch (const Error&) {
            refused = true;
        }
        QVERIFY(refused);
        job->add_bench_points(sample_bench(2));
        job->finish_done();
        const auto points = project.bench_points(job->job_id()).rows;
        QCOMPARE(points.size(), std::size_t{5});
        QCOMPARE(project.job(job->job_id()).counts.bench_points, std::int64_t{5});
        QVERIFY(points[3] == sample_bench(2)[0]);
        QVERIFY(project.check().ok());
    }

    // Oracle: every source cell visited on its own, its block computed from the
    // documented formula, maxima taken independently of the implementation's loop.
    void heatmapBlockMaxima_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("max_rows");
        QTest::addColumn<int>("max_cols");
        QTest::newRow("smaller than the limit") << 7 << 5 << 16 << 16;
        QTest::newRow("uneven blocks") << 101 << 53 << 10 << 7;
        QTest::newRow("one row of blocks") << 40 << 300 << 1 << 64;
        QTest::newRow("exact multiple") << 64 << 64 << 16 << 8;
    }

    void heatmapBlockMaxima() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, max_rows);
        QFETCH(int, max_cols);
        std::mt19937 rng(static_cast<unsigned>(rows * 1000 + cols));
        std::uniform_int_distribution<int> value(-500, 500);
        const std::int64_t unreachable = -1'000'000;
        std::vector<std::int64_t> matrix(static_cast<std::size_t>(rows) * cols);
        for (auto& v : matrix) v = value(rng) < -450 ? unreachable : value(rng);
        const store::Heatmap h = store::Heatmap::downsample(matrix, rows, cols, max_rows, max_cols, 2, unreachable);
        QCOMPARE(h.rows, std::min(rows, max_rows));
        QCOMPARE(h.cols, std::min(cols, max_cols));
        std::vector<double> best(static_cast<std::size_t>(h.rows) * h.cols, std::numeric_limits<double>::quiet_NaN());
        std::vector<int> block_rows(static_cast<std::size_t>(h.rows), 0);
        for (int i = 0; i < rows; ++i) {
            const int r = i * h.rows / rows;
            ++block_rows[static_cast<std::size_t>(r)];
            for (int j = 0; j < cols; ++j) {
                const std::int64_t v = matrix[static_cast<std::size_t>(i) * cols + j];
                if (v <= unreachable) continue;
                double& cell = best[static_cast<std::size_t>(r) * h.cols + j * h.cols / cols];
                if (std::isnan(cell) || v / 2.0 > cell) cell = v / 2.0;
            }
        }
        for (int r = 0; r < h.rows; ++r) {
            // Blocks differ in size by at most one.
            QVERIFY(block_rows[static_cast<std::size_t>(r)] == rows / h.rows ||
                    block_rows[static_cast<std::size_t>(r)] == rows / h.rows + 1);
            for (int c = 0; c < h.cols; ++c) {
                const double want = best[static_cast<std::size_t>(r) * h.cols + c];
                if (std::isnan(want)) QVERIFY(std::isnan(h.at(r, c)));
                else
                    QCOMPARE(double(h.at(r, c)), want);
            }
        }
    }

    void heatmapFromDpFollowsThePath() {
        const ScoringScheme scheme = blosum62_half();
        AlignOptions options;
        options.mode = AlignmentMode::Global;
        const std::string q = "HEAGAWGHEEPAWHEAGAWGHEE", t = "PAWHEAEPAWHEAGAWGHE";
        const DpMatrices dp = compute_dp_matrices(q, t, scheme, options);
        const store::Heatmap h = store::Heatmap::from_dp(dp, scheme.scale, 6, 5);
        QCOMPARE(h.rows, 6);
        QCOMPARE(h.cols, 5);
        QCOMPARE(h.source_rows, dp.rows);
        // The path runs from the top-left block to the bottom-right one, one step at a time.
        QCOMPARE(h.path.front(), (std::pair<int, int>{0, 0}));
        QCOMPARE(h.path.back(), (std::pair<int, int>{5, 4}));
        for (std::size_t k = 1; k < h.path.size(); ++k) {
            QVERIFY(h.path[k] != h.path[k - 1]);
            QVERIFY(h.path[k].first - h.path[k - 1].first <= 1 && h.path[k].first >= h.path[k - 1].first);
            QVERIFY(h.path[k].second - h.path[k - 1].second <= 1 && h.path[k].second >= h.path[k - 1].second);
        }
        // The bottom-right block holds the final cell, and in global mode its
        // maximum is at least the alignment score.
        QVERIFY(h.at(5, 4) >= float(scheme.to_user(dp.alignment.score)));
    }

    void longPairOverview_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("grid");
        QTest::newRow("global 16") << "global" << 16;
        QTest::newRow("local 23") << "local" << 23;
        QTest::newRow("semiglobal 7") << "semiglobal" << 7;
    }

    void longPairOverview() {
        QFETCH(QString, mode);
        QFETCH(int, grid);
        const ScoringScheme scheme = blosum62_half();
        std::mt19937 rng(static_cast<unsigned>(grid));
        const std::string q = random_protein(rng, 230);
        std::string t = q.substr(40, 150);
        for (std::size_t k = 0; k < t.size(); k += 9) t[k] = 'W';
        t = random_protein(rng, 35) + t.substr(0, 70) + t.substr(85) + random_protein(rng, 20);
        longpair::LongPairOptions options;
        options.align.mode = parse_mode(mode.toStdString());
        if (options.align.mode == AlignmentMode::SemiGlobal) options.align.free_ends = FreeEndGaps::parse("qb,qe");
        options.overview_size = grid;
        options.min_band_rows = 16;
        auto runner = longpair::make_cpu_pass_runner();
        longpair::LongPairStats stats;
        Alignment a = longpair::align_long(q, t, scheme, options, *runner, {}, &stats);
        a.query_id = "q";
        a.target_id = "t";
        const DpMatrices dp = compute_dp_matrices(q, t, scheme, options.align);
        QCOMPARE(a.score, dp.alignment.score);
        QCOMPARE(rescore(a.cigar, q, t, a.query_begin, a.target_begin, scheme), a.score);
        const std::int64_t m = std::int64_t(q.size()), n = std::int64_t(t.size());

        const store::Heatmap h = store::Heatmap::from_long_overview(stats.overview, a, scheme.scale);
        QCOMPARE(h.rows, grid);
        QCOMPARE(h.cols, grid);
        QCOMPARE(h.source_rows, m + 1);
        QCOMPARE(h.source_cols, n + 1);
        QCOMPARE(h.row_edges.front(), std::int64_t{1});
        // Oracle: the documented bins (rows by the runner's edges, column j in
        // block (j - 1) * grid / n), max-pooled over the full matrix.
        auto row_block = [&](std::int64_t i) {
            int r = -1;
            for (std::size_t k = 0; k < h.row_edges.size(); ++k)
                if (h.row_edges[k] <= i) r = int(k);
            return r;
        };
        std::vector<std::int64_t> best(std::size_t(grid) * grid, DpMatrices::minus_infinity);
        for (std::int64_t i = 1; i <= m; ++i)
            for (std::int64_t j = 1; j <= n; ++j) {
                auto& b = best[std::size_t(row_block(i) * grid + (j - 1) * grid / n)];
                b = std::max(b, dp.h(i, j));
            }
        for (int r = 0; r < grid; ++r)
            for (int c = 0; c < grid; ++c)
                QCOMPARE(h.at(r, c), float(double(best[std::size_t(r * grid + c)]) / scheme.scale));
        for (std::int64_t j = 1; j <= n; ++j) QCOMPARE(h.col_of(j), int((j - 1) * grid / n));
        QCOMPARE(h.col_of(0), -1);
        QCOMPARE(h.row_of(0), -1);

        // The path: the CIGAR walked one column at a time.
        std::vector<std::pair<int, int>> walked;
        auto visit = [&](std::int64_t i, std::int64_t j) {
            const std::pair<int, int> cell{std::max(row_block(i), 0),
                                           std::max(int(j == 0 ? 0 : (j - 1) * grid / n), 0)};
            if (walked.empty() || walked.back() != cell) walked.push_back(cell);
        };
        std::int64_t i = a.query_begin - 1, j = a.target_begin - 1;
        if (a.mode != AlignmentMode::Local) visit(i, j);
        for (const CigarOp& op : a.cigar.ops())
            for (std::uint32_t k = 0; k < op.length; ++k) {
                i += op.op != 'D';
                j += op.op != 'I';
                visit(i, j);
            }
        QCOMPARE(i, a.query_end);
        QCOMPARE(j, a.target_end);
        QVERIFY(walked.size() > 3);
        QCOMPARE(h.path, walked);

        // Through the project: edges, values, path and the pipeline statistics.
        QTemporaryDir dir;
        const std::string path = dir.filePath("long.alsproj").toStdString();
        store::Project project(path, creating());
        auto job = project.begin_job(sample_spec());
        store::LongPairStats record = store::LongPairStats::from(stats, a, 0.5);
        record.strategy = "strips";
        QCOMPARE(record.stage_cells[0], std::int64_t(m * n));
        QVERIFY(record.special_rows > 0);
        job->add_long_pair_stats(record);
        job->add_heatmap(h);
        // Edges that do not ascend are refused, and nothing is written.
        store::Heatmap bad = h;
        std::swap(bad.row_edges[1], bad.row_edges[2]);
        QVERIFY_THROWS_EXCEPTION(Error, job->add_heatmap(bad));
        bad = h;
        bad.col_edges.pop_back();
        QVERIFY_THROWS_EXCEPTION(Error, job->add_heatmap(bad));
        job->finish_done();
        store::Project reader(path);
        const store::JobInfo info = reader.job(job->job_id());
        QCOMPARE(info.counts.heatmaps, std::int64_t{1});
        QCOMPARE(info.counts.long_pair_stats, std::int64_t{1});
        const auto maps = reader.heatmaps(info.id);
        QCOMPARE(maps.size(), std::size_t{1});
        QCOMPARE(maps[0].row_edges, h.row_edges);
        QCOMPARE(maps[0].col_edges, h.col_edges);
        QCOMPARE(maps[0].path, h.path);
        QCOMPARE(maps[0].label, std::string("overview H"));
        for (std::size_t k = 0; k < h.values.size(); ++k)
            QVERIFY(maps[0].values[k] == h.values[k] || (std::isnan(maps[0].values[k]) && std::isnan(h.values[k])));
        const auto read = reader.long_pair_stats(info.id);
        QCOMPARE(read.size(), std::size_t{1});
        QVERIFY(read[0] == record);
        QVERIFY(reader.check().ok());
    }

    // A heatmap row the writer would have refused (Heatmap::check), found in a
    // project file: reading it is an Error naming the project, the job and the
    // heatmap, never a heatmap the views index out of bounds (found by
    // fuzz_project: a path cell at row 1536 of an 8 x 8 heatmap was returned).
    void damagedHeatmapRowsAreRefused_data() {
        QTest::addColumn<QString>("update");
        QTest::newRow("path cell outside the grid") << "UPDATE heatmaps SET path_cells = x'0006000000000000'";
        QTest::newRow("fewer values than cells") << "UPDATE heatmaps SET cell_values = substr(cell_values, 1, 8)";
        QTest::newRow("more rows than values") << "UPDATE heatmaps SET rows = 1000";
        QTest::newRow("negative columns") << "UPDATE heatmaps SET cols = -2";
        QTest::newRow("more rows than the matrix") << "UPDATE heatmaps SET source_rows = 1";
    }
    void damagedHeatmapRowsAreRefused() {
        QFETCH(QString, update);
        QTemporaryDir dir;
        const QString path = dir.filePath("heatmap.alsproj");
        store::Heatmap heatmap = store::Heatmap::downsample({5, -3, 7, 2, 0, 9, 1, 1, -1000}, 3, 3, 2, 2, 2, -1000);
        heatmap.label = "H";
        heatmap.path = {{0, 0}, {1, 1}};
        std::int64_t job_id = 0;
        {
            store::Project project(path.toStdString(), creating());
            auto job = project.begin_job(sample_spec());
            job_id = job->job_id();
            job->add_heatmap(heatmap);
            job->finish_done();
        }
        {
            // As damage to the file would leave it: past the schema's CHECKs.
            RawDatabase raw(path, true);
            QVERIFY(raw.execute("PRAGMA ignore_check_constraints = ON"));
            QVERIFY2(raw.execute(update.toUtf8().constData()), qPrintable(raw.error()));
        }
        store::ProjectOptions reading;
        reading.read_only = true;
        const store::Project project(path.toStdString(), reading);
        try {
            const auto maps = project.heatmaps(job_id);
            QFAIL(qPrintable(QString("a damaged heatmap was returned (%1 x %2, %3 values, %4 path cells)")
                                 .arg(maps.at(0).rows)
                                 .arg(maps.at(0).cols)
                                 .arg(maps.at(0).values.size())
                                 .arg(maps.at(0).path.size())));
        } catch (const Error& e) {
            const QString message = e.what();
            QVERIFY2(message.contains(path) && message.contains("job " + QString::number(job_id)) &&
                         message.contains("heatmap H"),
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestResults)
#include "test_results.moc"
