// SHA-256 for input checksums, computed by OpenSSL's libcrypto: a project records
// the digest of every input file so it can tell, on open, whether the file it
// refers to is still the one the results were computed from. The hex digest is
// the one `sha256sum` prints, so a user can compare by hand.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace alignscope::store {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* data, std::size_t size);
    void update(std::string_view text) { update(text.data(), text.size()); }
    // Finishes the digest; the object must not be updated afterwards.
    std::string hex_digest();

private:
    struct ContextDeleter {
        void operator()(evp_md_ctx_st* context) const;
    };
    std::unique_ptr<evp_md_ctx_st, ContextDeleter> context_;
};

// Digest of a whole file, read in large blocks. Throws Error naming the file.
std::string sha256_file(const std::string& path);

}  // namespace alignscope::store
