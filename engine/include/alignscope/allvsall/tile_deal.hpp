// Tiles dealt on demand to several workers at once (threads of this process,
// and whoever a distributed run forwards them to), with the results passed
// to one sink under a lock. A worker may run at most `window` tiles ahead of
// the oldest result the sink has not had yet, so results that arrive out of
// order wait in bounded memory.
#pragma once

#include <alignscope/allvsall/tile_result.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

namespace alignscope::allvsall {

class TileDeal {
public:
    // Tiles first..count-1 into `sink`; `in_order()` says how many tiles the
    // sink has in order (its own count; called under the lock).
    TileDeal(std::uint64_t first, std::uint64_t count, std::uint64_t window, TileSink& sink,
             std::function<std::uint64_t()> in_order);

    // The next tile, or nullopt when every tile is dealt. `wait`: block while
    // the window is full; else nullopt when it is (check all_dealt()).
    std::optional<std::uint64_t> take(bool wait);
    bool all_dealt() const;
    // A result, from any thread: into the sink, under the lock.
    void put(TileResult&& result);
    // Wakes waiting takers for good (after a failure elsewhere): they get nullopt.
    void close();

    // This process's view for run_tiles: blocking takes and puts.
    class Local : public TileSource, public TileSink {
    public:
        explicit Local(TileDeal& deal) : deal_(deal) {}
        std::optional<std::uint64_t> next() override { return deal_.take(true); }
        std::optional<std::uint64_t> next_ready(bool& none_left) override {
            const std::optional<std::uint64_t> tile = deal_.take(false);
            none_left = !tile && deal_.all_dealt();
            return tile;
        }
        void put(TileResult&& r) override { deal_.put(std::move(r)); }

    private:
        TileDeal& deal_;
    };

private:
    mutable std::mutex mutex_;
    std::condition_variable moved_;
    std::uint64_t next_, count_, window_;
    TileSink& sink_;
    std::function<std::uint64_t()> in_order_;
    bool closed_ = false;
};

}  // namespace alignscope::allvsall
