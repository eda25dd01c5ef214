// Fuzz target for the reading of command-line numbers (app/cli_numbers): the
// first byte picks a flag type (uint64, int64, int, uint32, double), the rest is
// the text after the flag, parsed through CLI11 with make_numbers_strict as
// alignscope-cli does. Checked against a reading written here from the rule,
// independently: a whole number is accepted exactly when it is plain decimal
// digits (a sign only where the type is signed) within the type's range, and
// then holds that value; a real number is accepted only when it is a decimal
// strtod reads whole as a finite number without a range error, and then holds
// strtod's value. Anything else must be a CLI11 parse error, never a crash.
#include "cli_numbers.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace {

[[noreturn]] void fail(const char* what, const std::string& text) {
    std::fprintf(stderr, "%s: '%s'\n", what, text.c_str());
    std::abort();
}

// Plain decimal, optional sign; returns false otherwise. Magnitude saturates at
// 2^64 (enough to tell in range from out of range for 64-bit types).
bool read_decimal(const std::string& text, bool& negative, unsigned __int128& magnitude) {
    std::size_t at = 0;
    negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) negative = text[at++] == '-';
    if (at == text.size()) return false;
    magnitude = 0;
    const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 64;
    for (std::size_t k = at; k < text.size(); ++k) {
        if (text[k] < '0' || text[k] > '9') return false;
        magnitude = magnitude * 10 + static_cast<unsigned>(text[k] - '0');
        if (magnitude > cap) magnitude = cap + 1;
    }
    return true;
}

// `--n TEXT` parsed into `value` as alignscope-cli does; false when CLI11
// refuses it.
template <class T>
bool parsed(const std::string& text, T& value) {
    CLI::App app;
    app.add_option("--n", value);
    alignscope::cli::make_numbers_strict(app);
    std::string arg0 = "fuzz", flag = "--n", copy = text;
    char* argv[] = {arg0.data(), flag.data(), copy.data()};
    try {
        app.parse(3, argv);
    } catch (const CLI::ParseError&) {
        return false;
    }
    return true;
}

template <class T>
void check_whole(const std::string& text) {
    T value{};
    const bool accepted = parsed(text, value);
    bool negative = false;
    unsigned __int128 magnitude = 0;
    bool expected = read_decimal(text, negative, magnitude);
    if (expected && negative && !std::is_signed_v<T>) expected = false;
    if (expected) {
        const auto max = static_cast<unsigned __int128>(std::numeric_limits<T>::max());
        expected = negative ? magnitude <= max + 1 : magnitude <= max;
    }
    if (accepted && !expected) fail("accepted outside the rule", text);
    if (!accepted && expected) fail("refused within the rule", text);
    if (accepted) {
        const __int128 want = negative ? -static_cast<__int128>(magnitude) : static_cast<__int128>(magnitude);
        if (static_cast<__int128>(value) != want) fail("wrong value", text);
    }
}

void check_real(const std::string& text) {
    double value = 0;
    const bool accepted = parsed(text, value);
    if (!accepted) return;  // refusals are checked by the properties below only where accepted
    // Accepted: a decimal in the rule's alphabet (no hex, inf, nan, spaces)...
    for (char c : text)
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'))
            fail("accepted a non-decimal", text);
    errno = 0;
    char* end = nullptr;
    const double reference = std::strtod(text.c_str(), &end);
    // ...that strtod reads whole, finite, and to the value held.
    if (end != text.c_str() + text.size()) fail("accepted what strtod does not read whole", text);
    if (!std::isfinite(reference) || !std::isfinite(value)) fail("accepted a non-finite number", text);
    if (errno == ERANGE && std::fabs(reference) > 1) fail("accepted an overflow", text);
    if (reference != value) fail("wrong value", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1 || size > 4096) return 0;
    std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (text.find('\0') != std::string::npos) return 0;  // argv strings end at a NUL
    switch (data[0] % 5) {
        case 0: check_whole<std::uint64_t>(text); break;
        case 1: check_whole<std::int64_t>(text); break;
        case 2: check_whole<int>(text); break;
        case 3: check_whole<std::uint32_t>(text); break;
        default: check_real(text); break;
    }
    return 0;
}
