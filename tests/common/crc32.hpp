// CRC-32 (IEEE 802.3, reflected: the checksum of gzip and of our checkpoint,
// search-cache and spool files) for tests and fuzz targets that write files
// with a right checksum or check one. zlib's crc32, the one implementation.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>

inline std::uint32_t crc32_of(const void* data, std::size_t size) {
    return static_cast<std::uint32_t>(::crc32_z(0, static_cast<const Bytef*>(data), size));
}
// Of a whole byte container (QByteArray, std::string, std::vector<char>).
template <typename Bytes>
std::uint32_t crc32_of(const Bytes& bytes) {
    return crc32_of(bytes.data(), static_cast<std::size_t>(bytes.size()));
}
