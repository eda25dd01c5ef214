// All-against-all scores past 32 bits in the engine: a tile's record keeps 12
// bytes a pair while its scores fit 32 bits and takes 16 only when one does
// not (both decode to the scores given; a wide record cut short is refused);
// a job under a match of 1,000,000 scores its tiles on the backend (a 32-bit
// TileScorer is left unused), its scores are a plain 64-bit Gotoh DP's
// (gotoh64.hpp), and they come back whole from a checkpoint's spool on resume.
#include "gotoh64.hpp"

#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/spool.hpp>
#include <alignscope/allvsall/tile_result.hpp>
#include <alignscope/allvsall/tile_scorer.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <cstdint>
#include <limits>
#include <map>
#include <random>

using namespace alignscope;
using namespace alignscope::allvsall;

namespace {

constexpr std::int64_t kBig = 1'000'000;

// Tiles first..count-1, at most `stop_after` of them.
class SomeTiles : public TileSource {
public:
    SomeTiles(std::uint64_t first, std::uint64_t count, std::uint64_t stop_after)
        : next_(first), count_(count), left_(stop_after) {}
    std::optional<std::uint64_t> next() override {
        if (next_ >= count_ || left_ == 0) return std::nullopt;
        --left_;
        return next_++;
    }

private:
    std::uint64_t next_, count_, left_;
};

// A scorer whose 32-bit scores cannot hold this job's: using it is the bug.
class RefusedScorer : public TileScorer {
public:
    std::size_t depth() const override { return 2; }
    void submit(std::uint64_t tile, JobContext&) override {
        throw Error("the 32-bit scorer was given tile " + std::to_string(tile));
    }
    std::vector<std::int32_t> take(JobContext&) override { throw Error("the 32-bit scorer was asked for scores"); }
    void abandon() override {}
    std::string describe() const override { return "32-bit test scorer"; }
};

std::vector<Sequence> wide_set() {
    std::mt19937 random(7);
    auto bases = [&](std::size_t n) {
        std::string s;
        for (std::size_t k = 0; k < n; ++k) s += "ACGT"[random() % 4];
        return s;
    };
    const std::string source = bases(2300);
    std::string variant = source.substr(0, 700) + source.substr(720);
    for (std::size_t k = 0; k < variant.size(); k += 41) variant[k] = variant[k] == 'G' ? 'T' : 'G';
    return {{"source", "", source, ""},
            {"copy", "", source, ""},
            {"variant", "", variant, ""},
            {"short", "", bases(30), ""}};
}

}  // namespace

class TestAllVsAllWideScores : public QObject {
    Q_OBJECT

private slots:
    void recordWidthFollowsTheScores() {
        TileResult r;
        r.tile = 7;
        r.scores = {{0, 1, 5},
                    {0, 2, std::numeric_limits<std::int32_t>::max()},
                    {1, 2, std::numeric_limits<std::int32_t>::min()}};
        TracedPair t;
        t.index = 1;
        t.query_end = 12;
        t.cigar = "12=";
        r.traced = {t};
        const std::size_t traced_bytes = 4 + 9 * 8 + 4 + 3;
        std::string compact;
        encode_tile(r, compact);
        QCOMPARE(compact.size(), 20 + 3 * 12 + traced_bytes);

        TileResult w = r;
        w.scores[0].score = std::int64_t{std::numeric_limits<std::int32_t>::max()} + 1;
        w.scores[2].score = -5'000'000'000'000;
        std::string wide;
        encode_tile(w, wide);
        QCOMPARE(wide.size(), 20 + 3 * 16 + traced_bytes);

        for (const auto& [bytes, want] : {std::pair{compact, r}, std::pair{wide, w}}) {
            std::size_t offset = 0;
            const TileResult back = decode_tile(bytes, offset, "test");
            QCOMPARE(offset, bytes.size());
            QCOMPARE(back.tile, want.tile);
            QCOMPARE(back.scores.size(), want.scores.size());
            for (std::size_t k = 0; k < want.scores.size(); ++k) {
                QCOMPARE(back.scores[k].i, want.scores[k].i);
                QCOMPARE(back.scores[k].j, want.scores[k].j);
                QCOMPARE(back.scores[k].score, want.scores[k].score);
            }
            QCOMPARE(back.traced.size(), std::size_t{1});
            QCOMPARE(back.traced[0].cigar, std::string("12="));
        }
        // A wide record cut inside its scores is damaged, not read as compact.
        const std::string cut = wide.substr(0, 20 + 2 * 16);
        std::size_t offset = 0;
        QVERIFY_THROWS_EXCEPTION(Error, decode_tile(cut, offset, "test"));
    }

    // Global under match/mismatch 1,000,000/-1,000,000 and penalties of
    // 1,000,000: the copy pair scores 2.3 x 10^9, the short one below -2^31.
    // Half the tiles, a checkpoint, the rest resumed: every score the oracle's.
    void jobPast32BitsResumes() {
        const std::vector<Sequence> set = wide_set();
        AlignOptions options;
        options.mode = AlignmentMode::Global;
        TraceCriteria trace;
        trace.top = 1;
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(int(kBig), -int(kBig)),
                                                           double(kBig), double(kBig));
        Problem problem = make_problem(set, nullptr, scheme, options, trace, 2);
        QVERIFY(!problem.scores_fit_32_bits());
        const auto registry = make_cpu_registry();
        Backend& backend = registry->select("cpu-ref");
        JobContext context;
        compute_self_scores(problem, backend, context);

        const test::Gotoh64 oracle{kBig, -kBig, kBig, kBig};
        std::map<PairIndex, std::int64_t> expected;
        for (std::uint32_t i = 0; i < set.size(); ++i) {
            QCOMPARE(problem.row_self[i], oracle.score(set[i].residues, set[i].residues, false));
            for (std::uint32_t j = i + 1; j < set.size(); ++j)
                expected[{i, j}] = oracle.score(set[i].residues, set[j].residues, false);
        }
        QVERIFY(expected.at({0, 1}) > std::numeric_limits<std::int32_t>::max());
        QVERIFY(expected.at({0, 3}) < std::numeric_limits<std::int32_t>::min());

        QTemporaryDir dir;
        SpoolOptions spool_options;
        spool_options.checkpoint_dir = dir.filePath("checkpoint").toStdString();
        spool_options.checkpoint_every = 0;
        RefusedScorer scorer;
        const std::uint64_t tiles = problem.tiling.tile_count();
        QVERIFY(tiles >= 3);
        {
            ResultSpool first(problem, spool_options);
            SomeTiles half(0, tiles, tiles / 2);
            run_tiles(problem, backend, &scorer, half, first, context);
            QCOMPARE(first.tiles_done(), tiles / 2);
        }
        spool_options.resume = true;
        ResultSpool spool(problem, spool_options);
        QCOMPARE(spool.first_tile(), tiles / 2);
        SomeTiles rest(spool.first_tile(), tiles, tiles);
        run_tiles(problem, backend, &scorer, rest, spool, context);
        QVERIFY(spool.complete());

        std::map<PairIndex, std::int64_t> found;
        spool.for_each([&](const TileResult& r) {
            for (const PairScore& p : r.scores) found[{p.i, p.j}] = p.score;
        });
        QVERIFY(found == expected);
        // --top 1: the copy is the source's best partner, at its full score.
        bool copy = false;
        for (const PairScore& p : spool.untraced_top_pairs())
            if (p.i == 0 && p.j == 1) copy = p.score == expected.at({0, 1});
        QVERIFY(copy);
    }
};

QTEST_GUILESS_MAIN(TestAllVsAllWideScores)
#include "test_allvsall_wide_scores.moc"
