// The bytes of a sequence file as its readers see them: a plain file as it is,
// a gzip file (one member or several, as bgzip and `cat a.gz b.gz` write)
// inflated by ISA-L's igzip. Internal to engine/src/seq.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct inflate_state;

namespace alignscope {

// Why the bytes could not be read (without the file's name and line, which the
// reader adds): "the gzip data is truncated (...)", an errno message...
struct InputFault {
    std::string why;
};

class FileInput {
public:
    // Reads the descriptor `fd` (owned from here on), named `path` in errors,
    // `buffer_bytes` of compressed input at a time.
    FileInput(std::string path, int fd, std::size_t buffer_bytes);
    ~FileInput();
    FileInput(const FileInput&) = delete;
    FileInput& operator=(const FileInput&) = delete;

    // Up to `n` bytes of the file's text, fewer only at its end: 0 there.
    // Throws InputFault when the file cannot be read or its gzip data is
    // corrupt or truncated.
    std::size_t read(char* dst, std::size_t n);
    // Bytes of the file (compressed, for gzip) consumed so far.
    std::uint64_t offset() const { return file_bytes_ - (in_end_ - in_pos_); }
    // True once the file has been seen to be gzip (its first bytes are read
    // on the first read()).
    bool gzip() const { return mode_ == Mode::Gzip; }

private:
    enum class Mode { Unknown, Plain, Gzip, Done };
    std::size_t refill(std::size_t keep_from);
    void choose_mode();
    std::size_t read_plain(char* dst, std::size_t n);
    std::size_t inflate(char* dst, std::size_t n);
    std::size_t inflate_some(unsigned char* dst, std::size_t n);
    bool next_member();

    std::string path_;
    int fd_;
    bool file_eof_ = false;
    std::uint64_t file_bytes_ = 0;  // read from the descriptor
    std::vector<unsigned char> in_;
    std::size_t in_pos_ = 0, in_end_ = 0;
    Mode mode_ = Mode::Unknown;
    std::unique_ptr<inflate_state> state_;
    bool member_done_ = false;
    std::vector<unsigned char> out_;  // inflated, not yet read
    std::size_t out_pos_ = 0, out_end_ = 0;
    std::string pending_fault_;  // met after the bytes in out_
    std::string fault_;          // met after bytes that read() has yet to return
};

}  // namespace alignscope
