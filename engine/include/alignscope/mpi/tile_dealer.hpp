// All-against-all tiles over Open MPI: rank 0 deals tiles on demand and takes
// the results; every other rank asks for a tile, runs it on its own device and
// sends the result back. Built only when MPI is found (ALIGNSCOPE_MPI); the
// engine's job code sees a TileSource and a TileSink, never MPI.
#pragma once

#include <alignscope/allvsall/tile_deal.hpp>
#include <alignscope/allvsall/tile_result.hpp>
#include <alignscope/device/job.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace alignscope::mpi {

// The processes of one mpirun: MPI initialised for the object's lifetime.
// Only the thread that made it calls MPI (MPI_THREAD_FUNNELED).
class World {
public:
    World();   // MPI_Init_thread; gathers every rank's host name. Throws Error.
    ~World();  // MPI_Finalize
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    const std::string& host(int rank) const { return hosts_.at(static_cast<std::size_t>(rank)); }
    // Rank r's place among the ranks on its host (0, 1, ...): which GPU it takes.
    int local_rank() const { return local_rank_; }
    // Rank 0's bytes to every rank.
    void broadcast(std::string& bytes) const;
    // Ends every rank of the run now (MPI_Abort), with this exit status.
    [[noreturn]] void abort(int status) const;

private:
    int rank_ = 0, size_ = 1, local_rank_ = 0;
    std::vector<std::string> hosts_;
};

// Where one rank's time went while it computed tiles, in seconds from its
// start (rank 0: the self-scores begin; the others: the inputs arrived, about
// the same moment), for --stats.
struct RankTimes {
    double setup = 0;        // until its device was ready to score (scorer made)
    double first_tile = 0;   // when it was dealt its first tile
    double last_result = 0;  // when it had handed over its last result
    double waiting = 0;      // waiting for a tile with none in flight (the device idle)
    double asking = 0;       // asking for the next tile while one was in flight
    double sending = 0;      // handing results over (rank 0: to the spool; the others: to rank 0)
    std::uint64_t tiles = 0;
};

// Every rank's times on rank 0 (index = rank), nothing on the others; a
// collective call: every rank calls it once, after the tiles.
std::vector<RankTimes> gather_times(const World& world, const RankTimes& mine);

// What rank 0's dealing thread did: seconds taking in other ranks' results
// (receiving, decoding, into the spool) and messages handled.
struct DealTimes {
    double receiving = 0;
    std::uint64_t messages = 0;
};

// Rank 0: deals tiles from `deal` to ranks 1..size-1 as they ask (rank 0's
// own worker threads take from the same deal) and puts their results into it.
// Every request is answered at once (a tile, none now, or every tile dealt)
// unless the rank waits for one. A result must be of a tile dealt to the rank
// that sends it (else Error). Returns when every tile is dealt and back, every
// rank has been told to stop and `local_running()` is false; that function
// rethrows a local worker's error. A rank that reports an error ends this with
// Error "rank R on HOST: message"; a cancelled token with Cancelled (the
// caller then ends the run).
DealTimes deal_tiles(const World& world, allvsall::TileDeal& deal, const std::function<bool()>& local_running,
                     const CancellationToken* cancel);

// Ranks 1..size-1: tiles from rank 0 and results back to it. One request at
// most is out at a time. next() waits for a tile; next_ready() (asked while a
// tile of this rank is still in flight) waits only for rank 0's immediate
// answer, so the next tile is known before the device runs dry. With `ahead`,
// the next tile is asked for as soon as one is handed out, so that it is here
// when the current one is done (for a rank that runs one tile at a time).
class RemoteTiles : public allvsall::TileSource, public allvsall::TileSink {
public:
    RemoteTiles(const World& world, bool ahead);
    ~RemoteTiles() override;
    RemoteTiles(const RemoteTiles&) = delete;
    RemoteTiles& operator=(const RemoteTiles&) = delete;
    std::optional<std::uint64_t> next() override;  // nullopt when every tile is dealt
    std::optional<std::uint64_t> next_ready(bool& none_left) override;
    // Sends the result without waiting for rank 0 to take it (the previous
    // one must be taken first).
    void put(allvsall::TileResult&& result) override;
    // Waits until rank 0 has taken the last result: call after the tiles.
    void flush();
    // Sends the error to rank 0, which names this rank and host and ends the run.
    void report_error(const std::string& message);

private:
    void ask(bool wait);
    void take_answer();
    std::uint64_t hand_out();

    const World& world_;
    bool ahead_;
    bool asked_ = false;    // a request is out
    bool stopped_ = false;  // rank 0 said every tile is dealt
    std::optional<std::uint64_t> ready_;
    struct Outgoing;  // the result on its way: bytes and MPI request (no mpi.h here)
    std::unique_ptr<Outgoing> outgoing_;
};

// A TileSource and TileSink in front of others, timing them into RankTimes
// (seconds since `start`): the waits in next() / next_ready() and the puts.
class TimedTiles : public allvsall::TileSource, public allvsall::TileSink {
public:
    using Clock = std::chrono::steady_clock;
    TimedTiles(allvsall::TileSource& source, allvsall::TileSink& sink, Clock::time_point start, RankTimes& times)
        : source_(source), sink_(sink), start_(start), times_(times) {}
    std::optional<std::uint64_t> next() override;
    std::optional<std::uint64_t> next_ready(bool& none_left) override;
    void put(allvsall::TileResult&& result) override;

private:
    double since_start() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
    void dealt(const std::optional<std::uint64_t>& tile);

    allvsall::TileSource& source_;
    allvsall::TileSink& sink_;
    Clock::time_point start_;
    RankTimes& times_;
};

// "rank R on HOST: set-up 0.41 s, first tile at 0.45 s, 33 tiles, last result
// at 3.50 s; idle waiting for tiles 0.01 s, asking ahead 0.00 s, handing over
// results 0.05 s".
std::string describe(const RankTimes& t, int rank, const std::string& host);

}  // namespace alignscope::mpi
