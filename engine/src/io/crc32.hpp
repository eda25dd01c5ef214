// CRC-32 (zlib's polynomial and conventions) over buffers of any size,
// continuing a running value: the checksum the engine's files carry (long-pair
// checkpoints, the allvsall spool and manifest, the search and profile
// database caches). ISA-L's folding CRC computes the same value as zlib's
// crc32() about six times faster, which matters for the caches: each load
// checksums the whole FASTA and the whole cache.
#pragma once

#include <isa-l/crc.h>

#include <cstddef>
#include <cstdint>

namespace alignscope::io {

inline std::uint32_t crc32_of(const void* data, std::size_t size, std::uint32_t crc = 0) {
    return ::crc32_gzip_refl(crc, static_cast<const unsigned char*>(data), size);
}

}  // namespace alignscope::io
