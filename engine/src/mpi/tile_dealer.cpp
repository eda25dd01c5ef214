// Open MPI dealing of all-against-all tiles (see tile_dealer.hpp).
#include <alignscope/error.hpp>
#include <alignscope/mpi/tile_dealer.hpp>

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <optional>
#include <thread>
#include <unordered_map>

#include <unistd.h>

namespace alignscope::mpi {
namespace {

// Ranks ask (kRequest, one byte: 1 = wait for a tile, 0 = answer now); rank 0
// answers kTile, kStop (every tile dealt) or kNone (none now: the window is full).
enum Tag : int { kRequest = 1, kResult = 2, kTile = 3, kStop = 4, kError = 5, kNone = 6 };
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

std::vector<RankTimes> gather_times(const World& world, const RankTimes& mine) {
    constexpr int kFields = 7;
    const double fields[kFields] = {mine.setup,
                                    mine.first_tile,
                                    mine.last_result,
                                    mine.waiting,
                                    mine.asking,
                                    mine.sending,
                                    static_cast<double>(mine.tiles)};
    std::vector<double> all(world.rank() == 0 ? static_cast<std::size_t>(world.size()) * kFields : 0);
    check(MPI_Gather(fields, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, MPI_COMM_WORLD),
          "gathering the ranks' times");
    std::vector<RankTimes> out;
    for (std::size_t at = 0; at < all.size(); at += kFields)
        out.push_back(RankTimes{all[at], all[at + 1], all[at + 2], all[at + 3], all[at + 4], all[at + 5],
                                static_cast<std::uint64_t>(all[at + 6])});
    return out;
}

namespace {

// Rank 0's side of the conversation with the other ranks: their requests
// answered from the deal, their results checked and put into it.
class Dealer {
public:
    Dealer(const World& world, allvsall::TileDeal& deal)
        : world_(world), deal_(deal), state_(static_cast<std::size_t>(world.size()), Rank::Idle) {}

    // Every rank told to stop and every tile dealt to them back.
    bool done() const { return stopped_ == world_.size() - 1 && out_.empty(); }
    // Handles every message already here; true when there was one.
    bool handle_messages();
    // Deals to the ranks that wait for a tile, as far as the window allows.
    void answer_waiting();
    const DealTimes& times() const { return times_; }

private:
    void on_request(const MPI_Status& status);
    void on_result(const MPI_Status& status);
    // A tile (or the stop) for `to`; else "none now" when `wait` is false, or
    // false (nothing sent: the window is full) when it is true.
    bool answer(int to, bool wait);
    std::string who(int rank) const { return "rank " + std::to_string(rank) + " on " + world_.host(rank); }

    const World& world_;
    allvsall::TileDeal& deal_;
    enum class Rank : std::uint8_t { Idle, Asked, Stopped };
    std::vector<Rank> state_;                     // by rank: Asked = a request not answered yet
    std::deque<int> waiting_;                     // ranks whose request waits for a tile, oldest first
    std::unordered_map<std::uint64_t, int> out_;  // tiles dealt and not back: tile -> rank
    int stopped_ = 0;
    DealTimes times_;
};

bool Dealer::handle_messages() {
    bool any = false;
    for (;;) {
        int flag = 0;
        MPI_Status status;
        check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
        if (!flag) return any;
        any = true;
        ++times_.messages;
        const int from = status.MPI_SOURCE;
        if (status.MPI_TAG == kRequest) {
            on_request(status);
        } else if (status.MPI_TAG == kResult) {
            on_result(status);
        } else if (status.MPI_TAG == kError) {
            const std::string message = receive_bytes(status, kError);
            throw Error(who(from) + ": " + message);
        } else {
            receive_bytes(status, status.MPI_TAG);
            throw Error("MPI: unexpected message " + std::to_string(status.MPI_TAG) + " from " + who(from));
        }
    }
}

void Dealer::on_request(const MPI_Status& status) {
    const int from = status.MPI_SOURCE;
    const std::string bytes = receive_bytes(status, kRequest);
    if (bytes.size() != 1) throw Error("MPI: a malformed request from " + who(from));
    Rank& state = state_[static_cast<std::size_t>(from)];
    if (state != Rank::Idle)
        throw Error("MPI: " + who(from) +
                    (state == Rank::Asked ? " asked for a tile before its last request was answered"
                                          : " asked for a tile after it was told that every tile is dealt"));
    state = Rank::Asked;
    const bool wait = bytes[0] != 0;
    answer_waiting();  // ranks that waited first
    if (!wait || waiting_.empty()) {
        if (answer(from, wait)) return;
    }
    waiting_.push_back(from);
}

void Dealer::on_result(const MPI_Status& status) {
    const auto t0 = std::chrono::steady_clock::now();
    const int from = status.MPI_SOURCE;
    const std::string bytes = receive_bytes(status, kResult);
    std::size_t offset = 0;
    allvsall::TileResult r = allvsall::decode_tile(bytes, offset, "a result from " + who(from));
    const auto it = out_.find(r.tile);
    if (it == out_.end() || it->second != from)
        throw Error("MPI: " + who(from) + " sent the result of tile " + std::to_string(r.tile) +
                    ", which was not dealt to it");
    out_.erase(it);
    deal_.put(std::move(r));
    times_.receiving += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool Dealer::answer(int to, bool wait) {
    if (const std::optional<std::uint64_t> tile = deal_.take(false)) {
        const unsigned long long t = *tile;
        check(MPI_Send(&t, 1, MPI_UNSIGNED_LONG_LONG, to, kTile, MPI_COMM_WORLD), "dealing a tile");
        out_.emplace(*tile, to);
    } else if (deal_.all_dealt()) {
        check(MPI_Send(nullptr, 0, MPI_CHAR, to, kStop, MPI_COMM_WORLD), "stopping a rank");
        ++stopped_;
        state_[static_cast<std::size_t>(to)] = Rank::Stopped;
        return true;
    } else if (!wait) {
        check(MPI_Send(nullptr, 0, MPI_CHAR, to, kNone, MPI_COMM_WORLD), "answering a rank");
    } else {
        return false;
    }
    state_[static_cast<std::size_t>(to)] = Rank::Idle;
    return true;
}

void Dealer::answer_waiting() {
    while (!waiting_.empty() && answer(waiting_.front(), true)) waiting_.pop_front();
}

// Between looks at the messages when there were none: yield a while (an
// answer within microseconds), then sleep briefly (a core not held for long).
void pause(int idle_rounds) {
    if (idle_rounds < 200) std::this_thread::yield();
    else
        std::this_thread::sleep_for(std::chrono::microseconds(50));
}

}  // namespace

DealTimes deal_tiles(const World& world, allvsall::TileDeal& deal, const std::function<bool()>& local_running,
                     const CancellationToken* cancel) {
    Dealer dealer(world, deal);
    bool local = true;
    int idle = 0;
    for (;;) {
        if (cancel) cancel->throw_if_cancelled();
        if (local) local = local_running();
        const bool any = dealer.handle_messages();
        dealer.answer_waiting();  // the local worker may have moved the window
        if (!local && dealer.done()) return dealer.times();
        idle = any ? 0 : idle + 1;
        if (!any) pause(idle);
    }
}

struct RemoteTiles::Outgoing {
    std::string bytes;
    MPI_Request request = MPI_REQUEST_NULL;
};

RemoteTiles::RemoteTiles(const World& world, bool ahead)
    : world_(world), ahead_(ahead), outgoing_(std::make_unique<Outgoing>()) {}

RemoteTiles::~RemoteTiles() = default;

void RemoteTiles::ask(bool wait) {
    const char byte = wait ? 1 : 0;
    check(MPI_Send(&byte, 1, MPI_CHAR, 0, kRequest, MPI_COMM_WORLD), "asking for a tile");
    asked_ = true;
}

void RemoteTiles::take_answer() {
    MPI_Status status;
    check(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &status), "waiting for a tile");
    if (status.MPI_TAG == kTile) {
        unsigned long long tile = 0;
        check(MPI_Recv(&tile, 1, MPI_UNSIGNED_LONG_LONG, 0, kTile, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              "receiving a tile");
        ready_ = tile;
    } else if (status.MPI_TAG == kStop || status.MPI_TAG == kNone) {
        receive_bytes(status, status.MPI_TAG);
        stopped_ = status.MPI_TAG == kStop;
    } else {
        throw Error("MPI: unexpected message " + std::to_string(status.MPI_TAG) + " from rank 0");
    }
    asked_ = false;
}

std::uint64_t RemoteTiles::hand_out() {
    const std::uint64_t tile = *ready_;
    ready_.reset();
    if (ahead_ && !stopped_) ask(false);
    return tile;
}

std::optional<std::uint64_t> RemoteTiles::next() {
    for (;;) {
        if (ready_) return hand_out();
        if (stopped_) return std::nullopt;
        if (!asked_) ask(true);
        take_answer();
    }
}

std::optional<std::uint64_t> RemoteTiles::next_ready(bool& none_left) {
    // Rank 0 answers a request that does not wait at once: waiting here for
    // that answer never waits for this rank's own tiles.
    if (!ready_ && !stopped_) {
        if (!asked_) ask(false);
        take_answer();
    }
    none_left = false;
    if (ready_) return hand_out();
    none_left = stopped_;
    return std::nullopt;
}

void RemoteTiles::put(allvsall::TileResult&& result) {
    flush();
    Outgoing& o = *outgoing_;
    o.bytes.clear();
    allvsall::encode_tile(result, o.bytes);
    if (o.bytes.size() > static_cast<std::size_t>(INT_MAX))
        throw Error("MPI: a tile's result is over 2 GB; use a smaller --tile");
    check(MPI_Isend(o.bytes.data(), static_cast<int>(o.bytes.size()), MPI_CHAR, 0, kResult, MPI_COMM_WORLD, &o.request),
          "sending a result");
}

void RemoteTiles::flush() {
    if (outgoing_->request != MPI_REQUEST_NULL)
        check(MPI_Wait(&outgoing_->request, MPI_STATUS_IGNORE), "sending a result");
}

void RemoteTiles::report_error(const std::string& message) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kError, MPI_COMM_WORLD);
}

std::optional<std::uint64_t> TimedTiles::next() {
    const double asked = since_start();
    const std::optional<std::uint64_t> tile = source_.next();
    times_.waiting += since_start() - asked;
    dealt(tile);
    return tile;
}

std::optional<std::uint64_t> TimedTiles::next_ready(bool& none_left) {
    const double asked = since_start();
    const std::optional<std::uint64_t> tile = source_.next_ready(none_left);
    times_.asking += since_start() - asked;
    dealt(tile);
    return tile;
}

void TimedTiles::dealt(const std::optional<std::uint64_t>& tile) {
    if (!tile) return;
    if (times_.tiles == 0) times_.first_tile = since_start();
    ++times_.tiles;
}

void TimedTiles::put(allvsall::TileResult&& result) {
    const double t = since_start();
    sink_.put(std::move(result));
    times_.last_result = since_start();
    times_.sending += times_.last_result - t;
}

std::string describe(const RankTimes& t, int rank, const std::string& host) {
    char line[400];
    if (t.tiles == 0) {
        std::snprintf(line, sizeof line, "rank %d on %s: set-up %.3f s, no tiles (idle waiting for tiles %.3f s)", rank,
                      host.c_str(), t.setup, t.waiting);
        return line;
    }
    std::snprintf(line, sizeof line,
                  "rank %d on %s: set-up %.3f s, first tile at %.3f s, %llu tiles, last result at %.3f s; idle "
                  "waiting for tiles %.3f s, asking ahead %.3f s, handing over results %.3f s",
                  rank, host.c_str(), t.setup, t.first_tile, static_cast<unsigned long long>(t.tiles), t.last_result,
                  t.waiting, t.asking, t.sending);
    return line;
}

}  // namespace alignscope::mpi
