// Open MPI dealing of all-against-all tiles (see tile_dealer.hpp).
#include <alignscope/error.hpp>
#include <alignscope/mpi/tile_dealer.hpp>

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <deque>
#include <optional>
#include <thread>

#include <unistd.h>

namespace alignscope::mpi {
namespace {

enum Tag : int { kRequest = 1, kResult = 2, kTile = 3, kStop = 4, kError = 5 };
constexpr int kHostBytes = 256;

void check(int status, const char* what) {
    if (status != MPI_SUCCESS) throw Error(std::string("MPI: ") + what + " failed");
}

std::string receive_bytes(const MPI_Status& probed, int tag) {
    int count = 0;
    MPI_Get_count(&probed, MPI_CHAR, &count);
    std::string bytes(static_cast<std::size_t>(count), '\0');
    check(MPI_Recv(bytes.data(), count, MPI_CHAR, probed.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "receiving a message");
    return bytes;
}

}  // namespace

World::World() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    char name[kHostBytes] = {};
    ::gethostname(name, sizeof name - 1);
    std::vector<char> all(static_cast<std::size_t>(size_) * kHostBytes);
    check(MPI_Allgather(name, kHostBytes, MPI_CHAR, all.data(), kHostBytes, MPI_CHAR, MPI_COMM_WORLD),
          "gathering host names");
    for (int r = 0; r < size_; ++r) hosts_.emplace_back(&all[static_cast<std::size_t>(r) * kHostBytes]);
    for (int r = 0; r < rank_; ++r)
        if (hosts_[static_cast<std::size_t>(r)] == hosts_[static_cast<std::size_t>(rank_)]) ++local_rank_;
}

World::~World() { MPI_Finalize(); }

void World::broadcast(std::string& bytes) const {
    unsigned long long size = bytes.size();
    check(MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "broadcasting the job");
    bytes.resize(static_cast<std::size_t>(size));
    for (std::size_t at = 0; at < bytes.size();) {
        const int chunk = static_cast<int>(std::min<std::size_t>(bytes.size() - at, INT_MAX / 2));
        check(MPI_Bcast(bytes.data() + at, chunk, MPI_CHAR, 0, MPI_COMM_WORLD), "broadcasting the job");
        at += static_cast<std::size_t>(chunk);
    }
}

void World::abort(int status) const {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
}

void deal_tiles(const World& world, allvsall::TileDeal& deal, const std::function<bool()>& local_running,
                const CancellationToken* cancel) {
    const int workers = world.size() - 1;
    std::deque<int> asking;
    std::uint64_t outstanding = 0;
    int stopped = 0;
    bool local = true;
    while (stopped < workers || outstanding > 0 || local) {
        if (cancel) cancel->throw_if_cancelled();
        if (local) local = local_running();
        int flag = 0;
        MPI_Status status;
        check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
        if (flag) {
            const int from = status.MPI_SOURCE;
            if (status.MPI_TAG == kRequest) {
                receive_bytes(status, kRequest);
                asking.push_back(from);
            } else if (status.MPI_TAG == kResult) {
                const std::string bytes = receive_bytes(status, kResult);
                std::size_t offset = 0;
                allvsall::TileResult r =
                    allvsall::decode_tile(bytes, offset, "a result from rank " + std::to_string(from));
                if (outstanding == 0) throw Error("MPI: rank " + std::to_string(from) + " sent a result not asked for");
                --outstanding;
                deal.put(std::move(r));
            } else if (status.MPI_TAG == kError) {
                const std::string message = receive_bytes(status, kError);
                throw Error("rank " + std::to_string(from) + " on " + world.host(from) + ": " + message);
            } else {
                receive_bytes(status, status.MPI_TAG);
                throw Error("MPI: unexpected message " + std::to_string(status.MPI_TAG) + " from rank " +
                            std::to_string(from));
            }
        }
        while (!asking.empty()) {
            const int to = asking.front();
            if (const std::optional<std::uint64_t> tile = deal.take(false)) {
                const unsigned long long t = *tile;
                check(MPI_Send(&t, 1, MPI_UNSIGNED_LONG_LONG, to, kTile, MPI_COMM_WORLD), "dealing a tile");
                ++outstanding;
            } else if (deal.all_dealt()) {
                check(MPI_Send(nullptr, 0, MPI_CHAR, to, kStop, MPI_COMM_WORLD), "stopping a rank");
                ++stopped;
            } else {
                break;  // the window is full: the rank waits for older results
            }
            asking.pop_front();
        }
        if (!flag) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

std::optional<std::uint64_t> RemoteTiles::next() {
    check(MPI_Send(nullptr, 0, MPI_CHAR, 0, kRequest, MPI_COMM_WORLD), "asking for a tile");
    MPI_Status status;
    check(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status), "waiting for a tile");
    if (status.MPI_TAG == kStop) {
        receive_bytes(status, kStop);
        return std::nullopt;
    }
    if (status.MPI_TAG != kTile)
        throw Error("MPI: unexpected message " + std::to_string(status.MPI_TAG) + " from rank 0");
    unsigned long long tile = 0;
    check(MPI_Recv(&tile, 1, MPI_UNSIGNED_LONG_LONG, 0, kTile, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "receiving a tile");
    return tile;
}

void RemoteTiles::put(allvsall::TileResult&& result) {
    buffer_.clear();
    allvsall::encode_tile(result, buffer_);
    if (buffer_.size() > static_cast<std::size_t>(INT_MAX))
        throw Error("MPI: a tile's result is over 2 GB; use a smaller --tile");
    check(MPI_Send(buffer_.data(), static_cast<int>(buffer_.size()), MPI_CHAR, 0, kResult, MPI_COMM_WORLD),
          "sending a result");
}

void RemoteTiles::report_error(const std::string& message) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kError, MPI_COMM_WORLD);
}

}  // namespace alignscope::mpi
