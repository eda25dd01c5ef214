// SHA-256 through OpenSSL's EVP interface.
#include "sha256.hpp"

#include <alignscope/error.hpp>

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace alignscope::store {

void Sha256::ContextDeleter::operator()(evp_md_ctx_st* context) const { EVP_MD_CTX_free(context); }

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
    if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1)
        throw Error("SHA-256: OpenSSL could not start a digest");
}

Sha256::~Sha256() = default;

void Sha256::update(const void* data, std::size_t size) {
    if (size && EVP_DigestUpdate(context_.get(), data, size) != 1) throw Error("SHA-256: OpenSSL digest update failed");
}

std::string Sha256::hex_digest() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context_.get(), digest, &length) != 1) throw Error("SHA-256: OpenSSL digest failed");
    static const char* digits = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * length);
    for (unsigned int k = 0; k < length; ++k) {
        hex.push_back(digits[digest[k] >> 4]);
        hex.push_back(digits[digest[k] & 0xF]);
    }
    return hex;
}

std::string sha256_file(const std::string& path) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
    Sha256 digest;
    std::vector<char> block(1 << 20);
    std::size_t got = 0;
    while ((got = std::fread(block.data(), 1, block.size(), file.get())) > 0) digest.update(block.data(), got);
    if (std::ferror(file.get())) throw Error(path + ": read error (" + std::strerror(errno) + ")");
    return digest.hex_digest();
}

}  // namespace alignscope::store
