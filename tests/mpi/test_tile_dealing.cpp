// The dealing of all-against-all tiles over Open MPI, without the CLI: run by
// CTest, the suite starts itself under `mpirun -np 3` (Debian openmpi-bin, its
// absence a failure) and reads what rank 0 reports. Under mpirun rank 0 deals
// (TileDeal, deal_tiles and a worker thread of its own) and the other ranks
// take tiles through RemoteTiles, asking ahead (two tiles in flight on a
// scorer; the next tile asked for at once without one), through a window of
// three tiles so that ranks are told "none now" and wait. Every tile must come
// back once with the bytes one process gives; a result of a tile not dealt to
// its sender, and a rank's error, must end the dealing naming rank and host.
#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/tile_deal.hpp>
#include <alignscope/allvsall/tile_scorer.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/mpi/tile_dealer.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include "cli_runner.hpp"
#include "cpu_tile_scorer.hpp"

#include <QtTest>

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

using namespace alignscope;
using namespace alignscope::allvsall;

namespace {

const char* k16S = "/usr/share/microbiomeutil-data/RESOURCES/rRNA16S.gold.fasta";

// Real residues, short: the first 30 16S records cut to 200 bp.
std::vector<Sequence> records() {
    SequenceSet set = read_sequences(k16S);
    set.records.resize(30);
    for (Sequence& s : set.records) s.residues.resize(200);
    return set.records;
}

struct Collect : TileSink {
    std::vector<TileResult> results;
    void put(TileResult&& r) override { results.push_back(std::move(r)); }
};

std::string encoded(std::vector<TileResult> results) {
    std::sort(results.begin(), results.end(), [](const TileResult& a, const TileResult& b) { return a.tile < b.tile; });
    std::string bytes;
    for (const TileResult& r : results) encode_tile(r, bytes);
    return bytes;
}

// Every rank's count, on rank 0.
std::vector<int> gather(int mine) {
    int ranks = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::vector<int> all(rank == 0 ? static_cast<std::size_t>(ranks) : 0);
    MPI_Gather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    return all;
}

void report(bool ok, const std::string& what, const std::string& why = {}) {
    if (ok) std::printf("ok %s\n", what.c_str());
    else
        std::printf("FAIL %s: %s\n", what.c_str(), why.c_str());
    std::fflush(stdout);
}

// All ranks: the tiles of `problem` dealt by rank 0 through a window of three,
// computed on every rank (with a scorer or not); rank 0 compares with `want`.
void deal_everything(const mpi::World& world, const Problem& problem, Backend& cpu, bool scorer,
                     const std::string& want) {
    const std::string name = scorer ? "scorer" : "ahead";
    MPI_Barrier(MPI_COMM_WORLD);  // no rank talks of this case while rank 0 deals the last one
    int most = 0;
    if (world.rank() == 0) {
        Collect out;
        // A window of three tiles: ranks are told "none now" and wait; six
        // with scorers: room for two tiles in flight on a rank.
        TileDeal deal(0, problem.tiling.tile_count(), scorer ? 6 : 3, out, [&] {
            std::uint64_t in_order = 0;  // results in hand from tile 0 on, none missing
            std::vector<bool> have(problem.tiling.tile_count());
            for (const TileResult& r : out.results) have[r.tile] = true;
            while (in_order < have.size() && have[in_order]) ++in_order;
            return in_order;
        });
        bool local_done = false;
        std::mutex m;
        std::thread local([&] {
            TileDeal::Local view(deal);
            CpuTileScorer s(problem, cpu, 1);
            JobContext c;
            run_tiles(problem, cpu, scorer ? &s : nullptr, view, view, c);
            std::lock_guard lock(m);
            local_done = true;
        });
        std::string error;
        try {
            mpi::deal_tiles(
                world, deal,
                [&] {
                    std::lock_guard lock(m);
                    return !local_done;
                },
                nullptr);
        } catch (const std::exception& e) {
            error = e.what();
            deal.close();
        }
        local.join();
        if (!error.empty()) {  // the other ranks may wait for tiles: end them all
            report(false, name, error);
            world.abort(1);
        }
        const std::vector<int> in_flight = gather(0);
        if (encoded(out.results) != want)
            return report(false, name, std::to_string(out.results.size()) + " results, not the bytes of one process");
        if (scorer && *std::max_element(in_flight.begin(), in_flight.end()) < 2)
            return report(false, name, "no rank had two tiles in flight");
        return report(true, name);
    }
    mpi::RemoteTiles remote(world, !scorer);
    CpuTileScorer s(problem, cpu, 1);
    JobContext c;
    run_tiles(problem, cpu, scorer ? &s : nullptr, remote, remote, c);
    remote.flush();
    most = static_cast<int>(s.most_in_flight);
    gather(most);
}

// Rank 1 sends the result of a tile nobody dealt it; rank 2 reports an error.
void wrong_results(const mpi::World& world, const Problem& problem, bool from_error) {
    const std::string name = from_error ? "rank error" : "wrong tile";
    MPI_Barrier(MPI_COMM_WORLD);
    if (world.rank() == 0) {
        Collect out;
        TileDeal deal(0, problem.tiling.tile_count(), 3, out, [] { return std::uint64_t(0); });
        std::string error;
        try {
            mpi::deal_tiles(
                world, deal, [] { return false; }, nullptr);
        } catch (const Error& e) {
            error = e.what();
        }
        gather(0);
        const std::string want = from_error ? "rank 2 on " + world.host(2) + ": the device fell off the bus"
                                            : "rank 1 on " + world.host(1) +
                                                  " sent the result of tile 5, which was "
                                                  "not dealt to it";
        return report(error.find(want) != std::string::npos, name, "got '" + error + "'");
    }
    mpi::RemoteTiles remote(world, false);
    if (from_error && world.rank() == 2) remote.report_error("the device fell off the bus");
    if (!from_error && world.rank() == 1) {
        TileResult r;
        r.tile = 5;
        remote.put(std::move(r));
        remote.flush();
    }
    gather(0);
}

int run_ranks() {
    mpi::World world;
    if (world.size() != 3) {
        if (world.rank() == 0) report(false, "ranks", "run with mpirun -np 3");
        return 1;
    }
    const std::vector<Sequence> set = records();
    const auto registry = make_cpu_registry();
    Backend& cpu = registry->select("cpu");
    TraceCriteria trace;
    trace.min_normalised = 0.7;
    Problem problem = make_problem(set, nullptr, ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 1),
                                   AlignOptions{}, trace, 2);
    problem.threads = 1;
    JobContext context;
    compute_self_scores(problem, cpu, context);
    std::string want;
    if (world.rank() == 0) {
        Collect one;
        CpuTileScorer none(problem, cpu, 1);
        struct All : TileSource {
            std::uint64_t next_ = 0, count_;
            explicit All(std::uint64_t count) : count_(count) {}
            std::optional<std::uint64_t> next() override {
                if (next_ >= count_) return std::nullopt;
                return next_++;
            }
        } all(problem.tiling.tile_count());
        run_tiles(problem, cpu, all, one, context);
        want = encoded(one.results);
    }
    deal_everything(world, problem, cpu, true, want);
    deal_everything(world, problem, cpu, false, want);
    wrong_results(world, problem, false);
    wrong_results(world, problem, true);
    return 0;
}

}  // namespace

class TestTileDealing : public QObject {
    Q_OBJECT

private slots:
    void three_ranks_deal_every_tile_once() {
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QFAIL("mpirun is not installed: install the Debian packages openmpi-bin and libopenmpi-dev");
        if (!QFile::exists(k16S))
            QFAIL("rRNA16S.gold.fasta is missing: install the Debian package microbiomeutil-data");
        const ProcessResult r =
            run_program(mpirun,
                        {"--allow-run-as-root", "--oversubscribe", "-np", "3", QCoreApplication::applicationFilePath()},
                        60000);
        const QByteArray out = r.out, err = r.err;
        QVERIFY2(r.exit_code == 0 && !r.crashed, (out + err).constData());
        for (const char* name : {"scorer", "ahead", "wrong tile", "rank error"})
            QVERIFY2(out.contains(QByteArray("ok ") + name + "\n"), (out + err).constData());
        QVERIFY2(!out.contains("FAIL"), out.constData());
    }
};

int main(int argc, char** argv) {
    if (std::getenv("OMPI_COMM_WORLD_SIZE")) return run_ranks();
    QCoreApplication app(argc, argv);
    TestTileDealing test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_tile_dealing.moc"
