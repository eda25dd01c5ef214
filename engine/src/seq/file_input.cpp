// FileInput: plain bytes passed through, gzip members inflated one after the
// other by ISA-L (isal_inflate parses each member's header and checks its
// CRC-32 and length), anything after the last member ignored as zlib does.
#include "seq/file_input.hpp"

#include <isa-l/igzip_lib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <unistd.h>

namespace alignscope {

namespace {

constexpr std::size_t kMaxChunk = std::size_t{1} << 30;  // isal_inflate counts in 32 bits

bool gzip_magic(const unsigned char* p) { return p[0] == 0x1f && p[1] == 0x8b; }

std::string inflate_fault(int code) {
    switch (code) {
        case ISAL_INVALID_WRAPPER: return "the gzip data is corrupt (invalid gzip header)";
        case ISAL_UNSUPPORTED_METHOD: return "the gzip data is corrupt (unknown compression method)";
        case ISAL_INCORRECT_CHECKSUM: return "the gzip data is corrupt (incorrect data check)";
        case ISAL_INVALID_LOOKBACK: return "the gzip data is corrupt (invalid distance too far back)";
        case ISAL_INVALID_SYMBOL: return "the gzip data is corrupt (invalid code)";
        case ISAL_INVALID_BLOCK: return "the gzip data is corrupt (invalid block)";
        default: return "the gzip data is corrupt (inflate error " + std::to_string(code) + ")";
    }
}

void start_member(inflate_state& state) {
    isal_inflate_reset(&state);
    state.crc_flag = ISAL_GZIP;
    state.hist_bits = 0;
}

}  // namespace

FileInput::FileInput(std::string path, int fd, std::size_t buffer_bytes)
    : path_(std::move(path)), fd_(fd), in_(std::max<std::size_t>(buffer_bytes, 64)) {}

FileInput::~FileInput() { ::close(fd_); }

// Moves the unread input from `keep_from` to the buffer's start and reads
// more after it; returns the bytes read (0 at the end of the file).
std::size_t FileInput::refill(std::size_t keep_from) {
    const std::size_t kept = in_end_ - keep_from;
    std::memmove(in_.data(), in_.data() + keep_from, kept);
    in_pos_ = 0;
    in_end_ = kept;
    if (file_eof_) return 0;
    for (;;) {
        const ssize_t r = ::read(fd_, in_.data() + in_end_, in_.size() - in_end_);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw InputFault{std::strerror(errno)};
        if (r == 0) file_eof_ = true;
        in_end_ += static_cast<std::size_t>(r);
        file_bytes_ += static_cast<std::uint64_t>(r);
        return static_cast<std::size_t>(r);
    }
}

// Gzip when the file opens with gzip's two magic bytes, plain otherwise.
void FileInput::choose_mode() {
    while (in_end_ - in_pos_ < 2 && refill(in_pos_) > 0) {
    }
    if (in_end_ - in_pos_ >= 2 && gzip_magic(in_.data() + in_pos_)) {
        mode_ = Mode::Gzip;
        out_.resize(in_.size());
        state_ = std::make_unique<inflate_state>();
        isal_inflate_init(state_.get());
        start_member(*state_);
    } else {
        mode_ = Mode::Plain;
    }
}

// A fault met after some bytes were read is thrown by the next call, so that
// every byte before it is seen, whatever the size of the reads.
std::size_t FileInput::read(char* dst, std::size_t n) {
    if (!fault_.empty()) throw InputFault{fault_};
    if (mode_ == Mode::Unknown) choose_mode();
    std::size_t got = 0;
    try {
        while (got < n && mode_ != Mode::Done && fault_.empty()) {
            const std::size_t chunk = std::min(n - got, kMaxChunk);
            const std::size_t k = mode_ == Mode::Plain ? read_plain(dst + got, chunk) : inflate(dst + got, chunk);
            if (k == 0) mode_ = Mode::Done;
            got += k;
        }
    } catch (const InputFault& fault) {
        if (got == 0) throw;
        fault_ = fault.why;
    }
    return got;
}

// What is buffered, then straight from the descriptor into `dst`.
std::size_t FileInput::read_plain(char* dst, std::size_t n) {
    if (in_pos_ < in_end_) {
        const std::size_t k = std::min(n, in_end_ - in_pos_);
        std::memcpy(dst, in_.data() + in_pos_, k);
        in_pos_ += k;
        return k;
    }
    if (file_eof_) return 0;
    for (;;) {
        const ssize_t r = ::read(fd_, dst, n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw InputFault{std::strerror(errno)};
        if (r == 0) file_eof_ = true;
        file_bytes_ += static_cast<std::uint64_t>(r);
        return static_cast<std::size_t>(r);
    }
}

// After a member's end: true when another member follows (and is started).
bool FileInput::next_member() {
    while (in_end_ - in_pos_ < 2 && refill(in_pos_) > 0) {
    }
    if (in_end_ - in_pos_ < 2 || !gzip_magic(in_.data() + in_pos_)) return false;
    start_member(*state_);
    member_done_ = false;
    return true;
}

// Up to `n` inflated bytes; 0 only at the end of the last member. They come
// from a buffer of the file's own: isal_inflate holds back some of what it
// made before a fault when the output space is small, so the space it is
// given depends on the file alone, not on the reader's request, and both
// readers see the same bytes before a fault.
std::size_t FileInput::inflate(char* dst, std::size_t n) {
    if (out_pos_ == out_end_) {
        if (!pending_fault_.empty()) throw InputFault{pending_fault_};
        out_pos_ = 0;
        out_end_ = inflate_some(out_.data(), out_.size());
        if (out_end_ == 0) return 0;
    }
    const std::size_t k = std::min(n, out_end_ - out_pos_);
    std::memcpy(dst, out_.data() + out_pos_, k);
    out_pos_ += k;
    return k;
}

// Inflates up to `n` bytes into `dst`; 0 only at the end of the last member.
std::size_t FileInput::inflate_some(unsigned char* dst, std::size_t n) {
    inflate_state& s = *state_;
    for (;;) {
        if (member_done_ && !next_member()) return 0;
        if (in_pos_ == in_end_) refill(in_pos_);
        s.next_in = in_.data() + in_pos_;
        s.avail_in = static_cast<std::uint32_t>(in_end_ - in_pos_);
        s.next_out = dst;
        s.avail_out = static_cast<std::uint32_t>(n);
        const int code = isal_inflate(&s);
        const std::size_t consumed = (in_end_ - in_pos_) - s.avail_in;
        in_pos_ += consumed;
        const std::size_t produced = n - s.avail_out;
        if (code < 0) {
            if (produced == 0) throw InputFault{inflate_fault(code)};
            pending_fault_ = inflate_fault(code);  // after the bytes made before it
            return produced;
        }
        if (s.block_state == ISAL_BLOCK_FINISH) member_done_ = true;
        if (produced > 0) return produced;
        if (member_done_) continue;
        // Nothing made and the member not finished: more input is needed.
        if (in_pos_ == in_end_ && file_eof_) throw InputFault{"the gzip data is truncated (unexpected end of file)"};
        if (consumed == 0 && in_pos_ < in_end_ && refill(in_pos_) == 0)
            throw InputFault{"the gzip data is truncated (unexpected end of file)"};
    }
}

}  // namespace alignscope
