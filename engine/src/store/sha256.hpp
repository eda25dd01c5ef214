// SHA-256 (FIPS 180-4) for input checksums: a project records the digest of
// every input file so it can tell, on open, whether the file it refers to is
// still the one the results were computed from. The hex digest is the one
// `sha256sum` prints, so a user can compare by hand.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace alignscope::store {

class Sha256 {
public:
    Sha256();
    void update(const void* data, std::size_t size);
    void update(std::string_view text) { update(text.data(), text.size()); }
    // Finishes the digest; the object must not be updated afterwards.
    std::string hex_digest();

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

// Digest of a whole file, read in large blocks. Throws Error naming the file.
std::string sha256_file(const std::string& path);

}  // namespace alignscope::store
