// All-against-all tiles over Open MPI: rank 0 deals tiles on demand and takes
// the results; every other rank asks for a tile, runs it on its own device and
// sends the result back. Built only when MPI is found (ALIGNSCOPE_MPI); the
// engine's job code sees a TileSource and a TileSink, never MPI.
#pragma once

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
    World();  // MPI_Init_thread; gathers every rank's host name. Throws Error.
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

// Rank 0: deals the tiles first..count-1 to ranks 1..size-1 as they ask, never
// more than `window` tiles past `committed()` (so results that arrive out of
// order wait in bounded memory), and puts every result into `sink`. Returns
// when every tile is back and every rank has been told to stop. A rank that
// reports an error ends this with Error "rank R on HOST: message"; a cancelled
// token with Cancelled (the caller then ends the run with World::abort).
void deal_tiles(const World& world, std::uint64_t first, std::uint64_t count, allvsall::TileSink& sink,
                const std::function<std::uint64_t()>& committed, std::uint64_t window,
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
