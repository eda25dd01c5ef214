// What one tile of an all-against-all job gives (every pair's score, and the
// alignment summary of the pairs traced back), its byte encoding (the spool
// file and the messages between processes use the same bytes), and the two
// ends a job runs between: a source of tiles to compute and a sink of results.
#pragma once

#include <alignscope/align/alignment.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace alignscope::allvsall {

struct PairScore {
    std::uint32_t i = 0, j = 0;  // row and column record, 0-based (the triangle: i < j)
    std::int64_t score = 0;      // scaled (ScoringScheme::to_user gives user units)
};

// A pair aligned with traceback: coordinates (1-based inclusive), statistics and CIGAR.
struct TracedPair {
    std::uint32_t index = 0;  // into TileResult::scores
    std::int64_t query_begin = 0, query_end = 0, target_begin = 0, target_end = 0;
    AlignmentStats stats;
    std::string cigar;
};

struct TileResult {
    std::uint64_t tile = 0;
    std::vector<PairScore> scores;   // in the tile's pair order
    std::vector<TracedPair> traced;  // ascending index
};

// Appends the encoding of `r` to `out` (native little-endian integers). A
// tile whose scores all fit in 32 bits takes the compact record (12 bytes a
// pair); one with a score past them the wide record (16 bytes a pair).
void encode_tile(const TileResult& r, std::string& out);
// Decodes the record at `offset` of `data` and moves `offset` past it. Throws
// Error naming `where` when the bytes are not a whole, well-formed record.
TileResult decode_tile(std::string_view data, std::size_t& offset, const std::string& where);

// Where a job's tiles come from: the tiles to compute, one at a time, until
// there are none (nullopt). Implementations may block (a remote dealer).
class TileSource {
public:
    virtual ~TileSource() = default;
    virtual std::optional<std::uint64_t> next() = 0;
    // A tile if one can be had without waiting: run_tiles asks this while a
    // tile of its own is still in flight, when waiting could hold up the very
    // result the source waits for. nullopt otherwise, with `none_left` set when
    // every tile is dealt. By default nothing is had this way (then run_tiles
    // finishes its tiles in flight before it calls next()).
    virtual std::optional<std::uint64_t> next_ready(bool& none_left) {
        none_left = false;
        return std::nullopt;
    }
};

// Where a job's results go, in any tile order.
class TileSink {
public:
    virtual ~TileSink() = default;
    virtual void put(TileResult&& result) = 0;
};

}  // namespace alignscope::allvsall
