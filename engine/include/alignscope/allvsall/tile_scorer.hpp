// The fast path for the scores of an all-against-all job: a TileScorer holds
// the whole set on its device (residues and query profiles made once) and
// scores whole tiles at a time, several in flight, while run_tiles finishes
// the previous tile on the host (lazy traceback, the sink). Traceback and any
// pair the scorer cannot score exactly still go through a Backend.
#pragma once

#include <alignscope/device/job.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::allvsall {

class TileScorer {
public:
    virtual ~TileScorer() = default;
    // Tiles that may be in flight at once (at least 1).
    virtual std::size_t depth() const = 0;
    // Starts scoring `tile` and returns while the device works on it.
    virtual void submit(std::uint64_t tile, JobContext& context) = 0;
    // Waits for the oldest tile submitted and not yet taken; its scores
    // (scaled) in the tile's pair order (Tiling::pairs). Throws Error or Cancelled.
    virtual std::vector<std::int32_t> take(JobContext& context) = 0;
    // Drops every tile in flight (after an error or a cancellation elsewhere).
    virtual void abandon() = 0;
    // The device and kernels, for the summary line ("gpu:0, nw_affine_allvsall_s16x2").
    virtual std::string describe() const = 0;
};

}  // namespace alignscope::allvsall
