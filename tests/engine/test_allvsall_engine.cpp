// All-against-all in the engine: the tiling covers every pair once; the scores
// of real 16S rRNA sequences (microbiomeutil-data) equal parasail's for global,
// local and semi-global alignment on both CPU devices; traced pairs re-score
// to their scores; the clusters of a hand-checked example; and a job cut off
// mid-way resumes from its checkpoint to the same files as a job run whole.
#include <alignscope/align/cigar.hpp>
#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/clustering.hpp>
#include <alignscope/allvsall/outputs.hpp>
#include <alignscope/allvsall/spool.hpp>
#include <alignscope/allvsall/tile_deal.hpp>
#include <alignscope/allvsall/tile_scorer.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include "cpu_tile_scorer.hpp"

#include <QtTest>

#include <parasail.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

using namespace alignscope;
using namespace alignscope::allvsall;

namespace {

const char* k16S = "/usr/share/microbiomeutil-data/RESOURCES/rRNA16S.gold.fasta";

std::vector<Sequence> first_records(const char* path, std::size_t count) {
    SequenceSet set = read_sequences(path);
    if (set.records.size() > count) set.records.resize(count);
    return set.records;
}

ScoringScheme ednafull(double open, double extend) {
    return ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), open, extend);
}

class AllTiles : public TileSource {
public:
    AllTiles(std::uint64_t first, std::uint64_t count, std::uint64_t stop_after = UINT64_MAX)
        : next_(first), count_(count), stop_(stop_after) {}
    std::optional<std::uint64_t> next() override {
        if (next_ >= count_ || handed_ >= stop_) return std::nullopt;
        ++handed_;
        return next_++;
    }

private:
    std::uint64_t next_, count_, stop_, handed_ = 0;
};

class Collect : public TileSink {
public:
    void put(TileResult&& r) override { results.push_back(std::move(r)); }
    std::vector<TileResult> results;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct ParasailScore {
    const parasail_matrix_t* matrix = parasail_matrix_lookup("nuc44");
    // parasail's open is the cost of a gap of length 1, as ours.
    int operator()(AlignmentMode mode, const std::string& q, const std::string& t, int open, int extend) const {
        // Striped 16-bit lanes (affine gaps: open != extend), 32-bit scan when they saturate.
        using Fn = parasail_result_t* (*)(const char*, int, const char*, int, int, int, const parasail_matrix_t*);
        const bool global = mode == AlignmentMode::Global, local = mode == AlignmentMode::Local;
        const Fn fast = global ? parasail_nw_striped_16 : local ? parasail_sw_striped_16 : parasail_sg_striped_16;
        const Fn wide = global ? parasail_nw_scan_32 : local ? parasail_sw_scan_32 : parasail_sg_scan_32;
        const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
        parasail_result_t* r = fast(q.c_str(), m, t.c_str(), n, open, extend, matrix);
        if (parasail_result_is_saturated(r)) {
            parasail_result_free(r);
            r = wide(q.c_str(), m, t.c_str(), n, open, extend, matrix);
        }
        const int score = r->score;
        parasail_result_free(r);
        return score;
    }
};

}  // namespace

class TestAllVsAllEngine : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!QFile::exists(k16S))
            QFAIL("rRNA16S.gold.fasta is missing: install the Debian package microbiomeutil-data");
    }

    void tiling_covers_every_pair_once_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("columns");  // 0 = the triangle
        QTest::addColumn<int>("tile");
        QTest::newRow("triangle 1 tile") << 7 << 0 << 16;
        QTest::newRow("triangle ragged") << 23 << 0 << 5;
        QTest::newRow("triangle tile 1") << 9 << 0 << 1;
        QTest::newRow("rectangle ragged") << 11 << 7 << 3;
        QTest::newRow("rectangle 1 x 1") << 1 << 1 << 4;
    }
    void tiling_covers_every_pair_once() {
        QFETCH(int, rows);
        QFETCH(int, columns);
        QFETCH(int, tile);
        std::vector<std::size_t> a, b;
        for (int k = 0; k < rows; ++k) a.push_back(static_cast<std::size_t>((k * 7919) % 13 + 1));
        for (int k = 0; k < columns; ++k) b.push_back(static_cast<std::size_t>((k * 104729) % 11 + 1));
        const Tiling t = columns ? Tiling::rectangle(a, b, static_cast<std::uint32_t>(tile))
                                 : Tiling::triangle(a, static_cast<std::uint32_t>(tile));
        std::set<PairIndex> seen;
        std::uint64_t cells = 0;
        std::vector<PairIndex> pairs;
        for (std::uint64_t k = 0; k < t.tile_count(); ++k) {
            t.pairs(k, pairs);
            QCOMPARE(std::uint64_t(pairs.size()), t.pair_count(k));
            std::uint64_t tile_cells = 0;
            for (const PairIndex& p : pairs) {
                QVERIFY(seen.insert(p).second);
                if (!columns) QVERIFY(p.first < p.second);
                tile_cells += a[p.first] * (columns ? b[p.second] : a[p.second]);
            }
            QCOMPARE(tile_cells, t.cell_count(k));
            cells += tile_cells;
        }
        const std::uint64_t want = columns ? std::uint64_t(rows) * columns : std::uint64_t(rows) * (rows - 1) / 2;
        QCOMPARE(std::uint64_t(seen.size()), want);
        QCOMPARE(t.pair_count(), want);
        QCOMPARE(t.cell_count(), cells);
        // Lengths sorted: within a tile the row records are no longer than earlier tiles' rows.
    }

    void tile_deal_keeps_its_window() {
        // Four threads take tiles and return them in shuffled order; the sink
        // takes them in order. No tile is dealt `window` or more past the
        // oldest one still missing, and every tile arrives once.
        struct Ordered : TileSink {
            std::map<std::uint64_t, TileResult> waiting;
            std::uint64_t in_order = 0, max_waiting = 0;
            void put(TileResult&& r) override {
                waiting.emplace(r.tile, std::move(r));
                max_waiting = std::max<std::uint64_t>(max_waiting, waiting.size());
                while (!waiting.empty() && waiting.begin()->first == in_order) {
                    waiting.erase(waiting.begin());
                    ++in_order;
                }
            }
        } sink;
        const std::uint64_t count = 400, window = 6;
        TileDeal deal(0, count, window, sink, [&] { return sink.in_order; });
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                TileDeal::Local view(deal);
                std::vector<std::uint64_t> held;
                std::mt19937 random(static_cast<unsigned>(t));
                auto give_back = [&] {
                    TileResult r;
                    r.tile = held.front();
                    held.erase(held.begin());
                    view.put(std::move(r));
                };
                while (const std::optional<std::uint64_t> tile = deal.take(false)) {
                    held.push_back(*tile);
                    std::shuffle(held.begin(), held.end(), random);
                    if (held.size() > 1) give_back();
                }
                while (!held.empty()) give_back();
                while (const std::optional<std::uint64_t> tile = view.next()) {
                    TileResult r;
                    r.tile = *tile;
                    view.put(std::move(r));
                }
            });
        for (std::thread& t : threads) t.join();
        QCOMPARE(sink.in_order, count);
        QVERIFY(sink.waiting.empty());
        QVERIFY(sink.max_waiting <= window);
        QVERIFY(deal.all_dealt());
        QVERIFY(!deal.take(true));
    }

    void scorer_pipeline_gives_the_backends_results() {
        // run_tiles with a TileScorer (a CPU one here, two tiles in flight, the
        // scores taken oldest first) gives the same tile results as run_tiles
        // on the backend alone: from a source that never waits (tiles asked
        // for ahead), from one that can only wait (no tile asked for while one
        // is in flight), and from a TileDeal shared by three workers with a
        // window of one tile (a worker waiting there with a tile in flight would
        // wait for itself).
        struct Ahead : AllTiles {
            using AllTiles::AllTiles;
            std::optional<std::uint64_t> next_ready(bool& none_left) override {
                auto t = next();
                none_left = !t;
                return t;
            }
        };
        const std::vector<Sequence> set = first_records(k16S, 14);
        const auto registry = make_cpu_registry();
        Backend& cpu = registry->select("cpu");
        TraceCriteria trace;
        trace.min_normalised = 0.8;
        Problem problem = make_problem(set, nullptr, ednafull(10, 1), AlignOptions{}, trace, 3);
        JobContext context;
        compute_self_scores(problem, cpu, context);
        auto encoded = [](std::vector<TileResult> results) {
            std::sort(results.begin(), results.end(),
                      [](const TileResult& a, const TileResult& b) { return a.tile < b.tile; });
            std::string bytes;
            for (const TileResult& r : results) encode_tile(r, bytes);
            return bytes;
        };
        Collect plain;
        AllTiles all(0, problem.tiling.tile_count());
        run_tiles(problem, cpu, all, plain, context);
        QCOMPARE(plain.results.size(), std::size_t(problem.tiling.tile_count()));
        const std::string want = encoded(plain.results);

        CpuTileScorer ahead_scorer(problem, cpu);
        Ahead ahead(0, problem.tiling.tile_count());
        Collect ahead_out;
        run_tiles(problem, cpu, &ahead_scorer, ahead, ahead_out, context);
        QCOMPARE(encoded(ahead_out.results), want);
        QCOMPARE(ahead_scorer.most_in_flight, std::size_t(2));

        CpuTileScorer waiting_scorer(problem, cpu);
        AllTiles waiting(0, problem.tiling.tile_count());
        Collect waiting_out;
        run_tiles(problem, cpu, &waiting_scorer, waiting, waiting_out, context);
        QCOMPARE(encoded(waiting_out.results), want);
        QCOMPARE(waiting_scorer.most_in_flight, std::size_t(1));

        Collect dealt_out;
        TileDeal deal(0, problem.tiling.tile_count(), 1, dealt_out,
                      [&] { return std::uint64_t(dealt_out.results.size()); });
        std::vector<std::thread> workers;
        for (int w = 0; w < 3; ++w)
            workers.emplace_back([&] {
                CpuTileScorer scorer(problem, cpu);
                TileDeal::Local view(deal);
                JobContext c;
                run_tiles(problem, cpu, &scorer, view, view, c);
            });
        for (std::thread& t : workers) t.join();
        QCOMPARE(encoded(dealt_out.results), want);
    }

    void scores_equal_parasail_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("records");
        QTest::addColumn<bool>("against");
        QTest::newRow("cpu global") << "cpu" << int(AlignmentMode::Global) << 40 << false;
        QTest::newRow("cpu local") << "cpu" << int(AlignmentMode::Local) << 24 << false;
        QTest::newRow("cpu semiglobal") << "cpu" << int(AlignmentMode::SemiGlobal) << 24 << false;
        QTest::newRow("cpu global rectangle") << "cpu" << int(AlignmentMode::Global) << 20 << true;
        QTest::newRow("cpu-ref global") << "cpu-ref" << int(AlignmentMode::Global) << 10 << false;
        QTest::newRow("cpu-ref local") << "cpu-ref" << int(AlignmentMode::Local) << 10 << false;
    }
    void scores_equal_parasail() {
        QFETCH(QString, device);
        QFETCH(int, mode);
        QFETCH(int, records);
        QFETCH(bool, against);
        std::vector<Sequence> set = first_records(k16S, static_cast<std::size_t>(records) * (against ? 2 : 1));
        std::vector<Sequence> other;
        if (against) {
            other.assign(set.begin() + records, set.end());
            set.resize(static_cast<std::size_t>(records));
        }
        AlignOptions options;
        options.mode = static_cast<AlignmentMode>(mode);
        TraceCriteria trace;
        trace.min_normalised = 0.8;
        Problem p = make_problem(set, against ? &other : nullptr, ednafull(10, 1), options, trace, 6);
        p.threads = 2;
        auto registry = make_cpu_registry();
        Backend& backend = registry->select(device.toStdString());
        JobContext context;
        compute_self_scores(p, backend, context);
        AllTiles tiles(0, p.tiling.tile_count());
        Collect sink;
        run_tiles(p, backend, tiles, sink, context);
        QCOMPARE(std::uint64_t(sink.results.size()), p.tiling.tile_count());

        const ParasailScore parasail;
        const std::vector<Sequence>& columns = against ? other : set;
        std::uint64_t pairs = 0, traced = 0;
        for (std::size_t k = 0; k < set.size(); ++k)
            QCOMPARE(p.row_self[k], std::int64_t(parasail(options.mode, set[k].residues, set[k].residues, 10, 1)));
        for (const TileResult& r : sink.results) {
            for (const PairScore& s : r.scores) {
                const int want = parasail(options.mode, set[s.i].residues, columns[s.j].residues, 10, 1);
                if (s.score != want)
                    QFAIL(qPrintable(QString("pair %1,%2: %3, parasail %4").arg(s.i).arg(s.j).arg(s.score).arg(want)));
                ++pairs;
            }
            // Lazy traceback: exactly the pairs at or above the threshold, each re-scoring to its score.
            std::size_t t = 0;
            for (std::size_t k = 0; k < r.scores.size(); ++k) {
                const PairScore& s = r.scores[k];
                const bool passes = p.normalised(s.i, s.j, s.score) >= 0.8;
                const bool has = t < r.traced.size() && r.traced[t].index == k;
                QCOMPARE(has, passes);
                if (!has) continue;
                const TracedPair& tp = r.traced[t++];
                ++traced;
                const std::int64_t rescored = rescore(Cigar::parse(tp.cigar), set[s.i].residues, columns[s.j].residues,
                                                      tp.query_begin, tp.target_begin, p.scheme);
                if (options.mode != AlignmentMode::SemiGlobal) QCOMPARE(rescored, std::int64_t(s.score));
                else
                    QVERIFY(rescored >= s.score);  // the CIGAR leaves out free end gaps, which cost nothing
                if (options.mode == AlignmentMode::Global) {
                    QCOMPARE(tp.query_begin, std::int64_t(1));
                    QCOMPARE(tp.query_end, std::int64_t(set[s.i].residues.size()));
                }
            }
        }
        QCOMPARE(pairs, p.tiling.pair_count());
        qInfo("%llu pairs equal parasail's, %llu traced back", static_cast<unsigned long long>(pairs),
              static_cast<unsigned long long>(traced));
        QVERIFY(traced > 0);
    }

    void clusters_of_a_hand_checked_example() {
        // Records 0..5, lengths 10 9 8 7 6 5 (so the greedy order is 0..5).
        // Edges at or above 0.9: 0-1 (0.95), 1-2 (0.92), 3-4 (0.91); below: 2-3 (0.5), 0-2 (0.85).
        // Single linkage: {0,1,2} {3,4} {5}.
        // Greedy centroid: 0 is a centroid; 1 joins 0 (0.95); 2 has no edge >= 0.9 to a
        // centroid (1 is not one; 0-2 is 0.85): a centroid; 3 a centroid; 4 joins 3; 5 alone.
        const std::vector<SimilarityEdge> edges = {{0, 1, 0.95}, {1, 2, 0.92}, {3, 4, 0.91}, {2, 3, 0.5}, {0, 2, 0.85}};
        QCOMPARE(single_linkage(6, edges, 0.9), (std::vector<std::uint32_t>{1, 1, 1, 2, 2, 3}));
        const CentroidClusters g = greedy_centroid({10, 9, 8, 7, 6, 5}, edges, 0.9);
        QCOMPARE(g.cluster, (std::vector<std::uint32_t>{1, 1, 2, 3, 3, 4}));
        QCOMPARE(g.centroids, (std::vector<std::uint32_t>{0, 2, 3, 5}));
        // A record joins its most similar centroid: lengths make 1 and 2 centroids before 0.
        const std::vector<SimilarityEdge> two = {{0, 1, 0.91}, {0, 2, 0.97}, {1, 2, 0.1}};
        const CentroidClusters h = greedy_centroid({5, 10, 9}, two, 0.9);
        QCOMPARE(h.centroids, (std::vector<std::uint32_t>{1, 2}));
        QCOMPARE(h.cluster, (std::vector<std::uint32_t>{2, 1, 2}));
        // At 0.8 the 0-2 edge links too; a threshold above every edge leaves singletons.
        QCOMPARE(single_linkage(6, edges, 0.96), (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
    }

    void resume_gives_the_same_files() {
        const std::vector<Sequence> set = first_records(k16S, 24);
        AlignOptions options;
        TraceCriteria trace;
        trace.min_normalised = 0.75;
        trace.top = 2;
        Problem p = make_problem(set, nullptr, ednafull(10, 1), options, trace, 4);
        p.threads = 2;
        auto registry = make_cpu_registry();
        Backend& backend = registry->select("cpu");
        JobContext context;
        compute_self_scores(p, backend, context);
        QTemporaryDir dir;
        const std::string base = dir.path().toStdString();
        auto run = [&](const std::string& tag, const std::string& checkpoint, bool resume, std::uint64_t stop) {
            SpoolOptions so;
            so.checkpoint_dir = checkpoint;
            so.resume = resume;
            so.checkpoint_every = 0;
            ResultSpool spool(p, so);
            AllTiles tiles(spool.first_tile(), p.tiling.tile_count(), stop);
            run_tiles(p, backend, tiles, spool, context);
            if (!spool.complete()) return spool.tiles_done();
            std::map<PairIndex, TracedPair> late;
            const std::vector<PairScore> top = spool.untraced_top_pairs();
            for (TracedPair& t : trace_pairs(p, top, backend, context))
                late.emplace(PairIndex{top[t.index].i, top[t.index].j}, t);
            OutputFiles files;
            files.table = base + "/" + tag + ".tsv";
            files.matrix = base + "/" + tag + ".phy";
            files.clusters = base + "/" + tag + ".clusters.tsv";
            write_outputs(p, spool, late, files);
            spool.remove_checkpoint();
            return spool.tiles_done();
        };
        QCOMPARE(run("whole", "", false, UINT64_MAX), p.tiling.tile_count());
        const std::string checkpoint = base + "/ckpt";
        QCOMPARE(run("cut", checkpoint, false, 5), std::uint64_t(5));
        QVERIFY(std::filesystem::exists(checkpoint + "/" + kManifestName));
        // Another job (another tile size) may not resume it.
        {
            Problem other = p;
            other.tiling = Tiling::triangle(std::vector<std::size_t>(24, 1), 5);
            SpoolOptions so;
            so.checkpoint_dir = checkpoint;
            so.resume = true;
            try {
                ResultSpool spool(other, so);
                QFAIL("a checkpoint of another tiling was resumed");
            } catch (const Error& e) {
                QVERIFY2(QString(e.what()).contains("tile"), e.what());
            }
        }
        // A new job refuses a directory holding a checkpoint.
        QVERIFY_THROWS_EXCEPTION(Error, run("again", checkpoint, false, 1));
        QCOMPARE(run("cut", checkpoint, true, 3), std::uint64_t(8));
        QCOMPARE(run("cut", checkpoint, true, UINT64_MAX), p.tiling.tile_count());
        QVERIFY(!std::filesystem::exists(checkpoint));
        for (const char* ext : {".tsv", ".phy", ".clusters.tsv"}) {
            const std::string whole = read_file(base + "/whole" + ext), cut = read_file(base + "/cut" + ext);
            QVERIFY(!whole.empty());
            QVERIFY2(whole == cut, ext);
        }
        // --top 2: every record's two best partners are traced.
        std::map<std::uint32_t, int> traced_per_record;
        std::istringstream table(read_file(base + "/whole.tsv"));
        std::string line;
        std::getline(table, line);
        std::map<std::uint32_t, std::vector<std::pair<double, std::uint32_t>>> scores;
        std::set<PairIndex> traced;
        while (std::getline(table, line)) {
            std::istringstream f(line);
            std::uint32_t i, j;
            std::string qi, ti, identity;
            double score, normalised;
            f >> i >> j >> qi >> ti >> score >> normalised >> identity;
            scores[i].push_back({-score, j});
            scores[j].push_back({-score, i});
            if (identity != "-") traced.insert({std::min(i, j), std::max(i, j)});
        }
        for (auto& [record, list] : scores) {
            std::sort(list.begin(), list.end());
            for (int k = 0; k < 2; ++k)
                QVERIFY(traced.count({std::min(record, list[k].second), std::max(record, list[k].second)}));
        }
    }

    void damaged_spool_is_refused() {
        const std::vector<Sequence> set = first_records(k16S, 8);
        Problem p = make_problem(set, nullptr, ednafull(10, 1), AlignOptions{}, TraceCriteria{}, 3);
        auto registry = make_cpu_registry();
        Backend& backend = registry->select("cpu");
        JobContext context;
        compute_self_scores(p, backend, context);
        QTemporaryDir dir;
        const std::string checkpoint = dir.path().toStdString() + "/c";
        {
            SpoolOptions so;
            so.checkpoint_dir = checkpoint;
            so.checkpoint_every = 0;
            ResultSpool spool(p, so);
            AllTiles tiles(0, p.tiling.tile_count(), 3);
            run_tiles(p, backend, tiles, spool, context);
        }
        {
            std::fstream f(checkpoint + "/" + kSpoolName, std::ios::in | std::ios::out | std::ios::binary);
            f.seekp(30);
            f.put('\x7f');
        }
        SpoolOptions so;
        so.checkpoint_dir = checkpoint;
        so.resume = true;
        try {
            ResultSpool spool(p, so);
            QFAIL("a damaged spool was resumed");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains(kSpoolName) && QString(e.what()).contains("damaged"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestAllVsAllEngine)
#include "test_allvsall_engine.moc"
