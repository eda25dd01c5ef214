// All-against-all tiles over Open MPI: rank 0 deals tiles on demand and takes
// the results; every other rank asks for a tile, runs it on its own device and
// sends the result back. Built only when MPI is found (ALIGNSCOPE_MPI); the
// engine's job code sees a TileSource and a TileSink, never MPI.
#pragma once

#include <alignscope/allvsall/tile_deal.hpp>
#include <alignscope/allvsall/tile_result.hpp>
#include <alignscope/device/job.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace alignscope::mpi {

// The processes of one mpirun: MPI initialised for the object's lifetime.
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

// Rank 0: deals tiles from `deal` to ranks 1..size-1 as they ask (rank 0's
// own worker threads take from the same deal) and puts their results into it.
// Returns when every tile is dealt and back, every rank has been told to stop
// and `local_running()` is false; that function rethrows a local worker's
// error. A rank that reports an error ends this with Error "rank R on HOST:
// message"; a cancelled token with Cancelled (the caller then ends the run).
void deal_tiles(const World& world, allvsall::TileDeal& deal, const std::function<bool()>& local_running,
                const CancellationToken* cancel);

// Ranks 1..size-1: tiles from rank 0 and results back to it.
class RemoteTiles : public allvsall::TileSource, public allvsall::TileSink {
public:
    explicit RemoteTiles(const World& world) : world_(world) {}
    std::optional<std::uint64_t> next() override;  // asks rank 0; nullopt when told to stop
    void put(allvsall::TileResult&& result) override;
    // Sends the error to rank 0, which names this rank and host and ends the run.
    void report_error(const std::string& message);

private:
    const World& world_;
    std::string buffer_;
};

}  // namespace alignscope::mpi
