// Byte encoding of tile results (see tile_result.hpp).
#include <alignscope/allvsall/tile_result.hpp>
#include <alignscope/error.hpp>

#include <algorithm>
#include <cstring>
#include <limits>

namespace alignscope::allvsall {
namespace {

// The record's first word says how wide its scores are.
constexpr std::uint32_t kTileMagic = 0x454c4954;      // "TILE": 32-bit scores
constexpr std::uint32_t kWideTileMagic = 0x384c4954;  // "TIL8": 64-bit scores
// A traced pair's CIGAR is at most a few times the lengths; this only rejects garbage.
constexpr std::uint32_t kMaxCigarBytes = 1u << 30;

template <typename T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

struct Reader {
    std::string_view data;
    std::size_t& offset;
    const std::string& where;

    [[noreturn]] void malformed() const {
        throw Error(where + ": a tile record at byte " + std::to_string(offset) + " is cut short or damaged");
    }
    template <typename T>
    T get() {
        if (data.size() - offset < sizeof(T)) malformed();
        T v;
        std::memcpy(&v, data.data() + offset, sizeof v);
        offset += sizeof v;
        return v;
    }
};

}  // namespace

void encode_tile(const TileResult& r, std::string& out) {
    const bool wide = std::any_of(r.scores.begin(), r.scores.end(), [](const PairScore& p) {
        return p.score > std::numeric_limits<std::int32_t>::max() || p.score < std::numeric_limits<std::int32_t>::min();
    });
    out.reserve(out.size() + 20 + r.scores.size() * (wide ? 16 : 12) + r.traced.size() * 100);
    put(out, wide ? kWideTileMagic : kTileMagic);
    put(out, r.tile);
    put(out, static_cast<std::uint32_t>(r.scores.size()));
    put(out, static_cast<std::uint32_t>(r.traced.size()));
    for (const PairScore& p : r.scores) {
        put(out, p.i);
        put(out, p.j);
        if (wide) put(out, p.score);
        else
            put(out, static_cast<std::int32_t>(p.score));
    }
    for (const TracedPair& t : r.traced) {
        put(out, t.index);
        put(out, t.query_begin);
        put(out, t.query_end);
        put(out, t.target_begin);
        put(out, t.target_end);
        put(out, t.stats.length);
        put(out, t.stats.identities);
        put(out, t.stats.similarities);
        put(out, t.stats.gaps);
        put(out, t.stats.gap_opens);
        put(out, static_cast<std::uint32_t>(t.cigar.size()));
        out += t.cigar;
    }
}

TileResult decode_tile(std::string_view data, std::size_t& offset, const std::string& where) {
    Reader r{data, offset, where};
    const std::size_t start = offset;
    const auto magic = r.get<std::uint32_t>();
    if (magic != kTileMagic && magic != kWideTileMagic) {
        offset = start;
        r.malformed();
    }
    const bool wide = magic == kWideTileMagic;
    TileResult t;
    t.tile = r.get<std::uint64_t>();
    const auto pairs = r.get<std::uint32_t>();
    const auto traced = r.get<std::uint32_t>();
    if ((data.size() - offset) / (wide ? 16 : 12) < pairs || traced > pairs) r.malformed();
    t.scores.resize(pairs);
    for (PairScore& p : t.scores) {
        p.i = r.get<std::uint32_t>();
        p.j = r.get<std::uint32_t>();
        p.score = wide ? r.get<std::int64_t>() : r.get<std::int32_t>();
    }
    t.traced.resize(traced);
    std::int64_t last = -1;
    for (TracedPair& p : t.traced) {
        p.index = r.get<std::uint32_t>();
        if (p.index >= pairs || static_cast<std::int64_t>(p.index) <= last) r.malformed();
        last = p.index;
        p.query_begin = r.get<std::int64_t>();
        p.query_end = r.get<std::int64_t>();
        p.target_begin = r.get<std::int64_t>();
        p.target_end = r.get<std::int64_t>();
        p.stats.length = r.get<std::int64_t>();
        p.stats.identities = r.get<std::int64_t>();
        p.stats.similarities = r.get<std::int64_t>();
        p.stats.gaps = r.get<std::int64_t>();
        p.stats.gap_opens = r.get<std::int64_t>();
        const auto bytes = r.get<std::uint32_t>();
        if (bytes > kMaxCigarBytes || data.size() - offset < bytes) r.malformed();
        p.cigar.assign(data.data() + offset, bytes);
        offset += bytes;
    }
    return t;
}

}  // namespace alignscope::allvsall
