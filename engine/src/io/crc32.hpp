// CRC-32 (zlib's) over buffers of any size, continuing a running value: the
// checksum the engine's files carry (long-pair checkpoints, the allvsall spool
// and manifest, the search database cache).
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace alignscope::io {

// zlib takes lengths as uInt: larger buffers go in pieces of 1 GiB.
inline std::uint32_t crc32_of(const void* data, std::size_t size, std::uint32_t crc = 0) {
    const auto* p = static_cast<const Bytef*>(data);
    uLong c = crc;
    while (size > 0) {
        const auto chunk = static_cast<uInt>(std::min<std::size_t>(size, std::size_t{1} << 30));
        c = ::crc32(c, p, chunk);
        p += chunk;
        size -= chunk;
    }
    return static_cast<std::uint32_t>(c);
}

}  // namespace alignscope::io
