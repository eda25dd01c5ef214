// Dealing tiles to several workers (see tile_deal.hpp).
#include <alignscope/allvsall/tile_deal.hpp>

namespace alignscope::allvsall {

TileDeal::TileDeal(std::uint64_t first, std::uint64_t count, std::uint64_t window, TileSink& sink,
                   std::function<std::uint64_t()> in_order)
    : next_(first), count_(count), window_(window < 1 ? 1 : window), sink_(sink), in_order_(std::move(in_order)) {}

std::optional<std::uint64_t> TileDeal::take(bool wait) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (closed_ || next_ >= count_) return std::nullopt;
        if (next_ < in_order_() + window_) return next_++;
        if (!wait) return std::nullopt;
        moved_.wait(lock);
    }
}

bool TileDeal::all_dealt() const {
    std::lock_guard lock(mutex_);
    return next_ >= count_;
}

void TileDeal::put(TileResult&& result) {
    {
        std::lock_guard lock(mutex_);
        sink_.put(std::move(result));
    }
    moved_.notify_all();
}

void TileDeal::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    moved_.notify_all();
}

}  // namespace alignscope::allvsall
