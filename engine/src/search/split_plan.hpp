// How the split scanner (split_scanner.cpp) shares one scan among several
// devices, as host-only plain data the unit tests run: whether every device
// can hold the whole database (then the queries are dealt out, in chunks that
// shrink as the work runs out, to whichever device is free) or only a slice
// of it (then the database is dealt out and every device scans every query).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace alignscope::split {

enum class Way { Queries, Sequences };

// Device bytes of a whole database of `residues` residues in `count`
// sequences as a GPU scanner lays it out (each sequence padded to 4 residues,
// an offset and a length beside it), and whether a device with
// `memory_bytes` of memory (0: the host's: no limit) under a budget of
// `budget` bytes (0: the scanner's default, about 90 % of it) holds it whole
// beside a scan's working memory (a third of the budget, at most 3 GiB).
inline bool holds_whole(std::uint64_t residues, std::uint64_t count, std::uint64_t memory_bytes, std::uint64_t budget) {
    if (memory_bytes == 0 && budget == 0) return true;
    const std::uint64_t whole = residues + 15 * count + 64;
    const std::uint64_t limit = budget ? budget : memory_bytes / 10 * 8;
    const std::uint64_t working = std::min<std::uint64_t>(limit / 3, std::uint64_t{3} << 30);
    return limit > working && whole <= limit - working;
}

// The end of the next chunk of queries, which starts at `next`: queries in
// the scan's order until the chunk holds the larger of `remaining` / (2 x
// devices) and `least` cells, with an even number of queries (a GPU pairs
// them in 16-bit lanes) unless the list ends. `cells`: per query.
inline std::size_t chunk_end(const std::vector<std::uint64_t>& cells, std::size_t next, std::uint64_t remaining,
                             std::size_t devices, std::uint64_t least) {
    const std::uint64_t want = std::max<std::uint64_t>(least, remaining / (2 * std::max<std::size_t>(devices, 1)));
    std::size_t end = next;
    std::uint64_t taken = 0;
    while (end < cells.size() && (taken < want || (end - next) % 2 == 1)) taken += cells[end++];
    return end;
}

// The chunks of a scan of queries with `cells` cells each over `devices`
// devices, in the order they are handed out: big ones first, none below a
// sixteenth of a device's share (each is a scan of its own: a plan, its
// profiles, a last launch whose scores the host reads while the device
// waits), so the devices end within about one small chunk of each other.
inline std::vector<std::pair<std::size_t, std::size_t>> query_chunks(const std::vector<std::uint64_t>& cells,
                                                                     std::size_t devices) {
    std::uint64_t total = 0;
    for (std::uint64_t c : cells) total += c;
    const std::uint64_t least = total / (16 * std::max<std::size_t>(devices, 1));
    std::vector<std::pair<std::size_t, std::size_t>> chunks;
    std::uint64_t remaining = total;
    for (std::size_t next = 0; next < cells.size();) {
        const std::size_t end = chunk_end(cells, next, remaining, devices, least);
        for (std::size_t q = next; q < end; ++q) remaining -= cells[q];
        chunks.emplace_back(next, end);
        next = end;
    }
    return chunks;
}

// The way the environment's ALIGNSCOPE_SPLIT_SCAN asks for ("queries" or
// "sequences"; tests and measurements force one), or none when it is unset
// or empty. Throws Error for any other value (in split_scanner.cpp).
enum class Forced { None, Queries, Sequences, Invalid };
inline Forced parse_forced(const char* text) {
    if (!text || !*text) return Forced::None;
    const std::string value(text);
    if (value == "queries") return Forced::Queries;
    if (value == "sequences") return Forced::Sequences;
    return Forced::Invalid;
}

}  // namespace alignscope::split
