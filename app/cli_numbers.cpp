// Strict reading of command-line numbers (see cli_numbers.hpp).
#include "cli_numbers.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace alignscope::cli {

std::string check_whole_number(std::string& text, bool is_signed, std::uint64_t max) {
    const std::string typed = text;
    const std::string expected = is_signed ? "expected a whole number" : "expected a whole number of 0 or more";
    std::size_t at = 0;
    bool negative = false;
    if (at < text.size() && (text[at] == '-' || text[at] == '+')) negative = text[at++] == '-';
    if (at == text.size()) return expected + ", got '" + typed + "'";
    for (std::size_t k = at; k < text.size(); ++k)
        if (text[k] < '0' || text[k] > '9') return expected + ", got '" + typed + "'";
    if (negative && !is_signed) return expected + ", got '" + typed + "'";
    // The magnitude, saturating one past the limit so that any longer number is too large too.
    const std::uint64_t limit = negative ? max + 1 : max;
    std::uint64_t value = 0;
    bool over = false;
    for (std::size_t k = at; k < text.size() && !over; ++k) {
        const auto digit = static_cast<std::uint64_t>(text[k] - '0');
        if (value > (limit - digit) / 10) over = true;
        else
            value = value * 10 + digit;
    }
    if (over) {
        if (negative) return "'" + typed + "' is too small (at least -" + std::to_string(limit) + ")";
        return "'" + typed + "' is too large (at most " + std::to_string(max) + ")";
    }
    text = negative && value ? "-" + std::to_string(value) : std::to_string(value);
    return {};
}

std::string check_real_number(std::string& text) {
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (begin != end && *begin == '+') {
        ++begin;  // from_chars takes no plus sign, and must not then see a minus ("+-1")
        if (begin != end && *begin == '-') return "expected a number, got '" + text + "'";
    }
    double value = 0;
    const auto [stop, ec] = std::from_chars(begin, end, value, std::chars_format::general);
    if (begin == end || (ec != std::errc() && ec != std::errc::result_out_of_range) || stop != end)
        return "expected a number, got '" + text + "'";
    if (ec == std::errc::result_out_of_range) return "'" + text + "' is out of range";
    if (!std::isfinite(value)) return "expected a finite number, got '" + text + "'";
    char exact[40];
    const auto written = std::to_chars(exact, exact + sizeof exact, value, std::chars_format::general, 17);
    text.assign(exact, written.ptr);
    return {};
}

void make_numbers_strict(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        if (option->get_type_size_max() == 0) continue;  // a flag, no value
        try {
            option->get_validator("strict number");
            continue;  // its own type's reading is there already
        } catch (const CLI::OptionNotFound&) {
        }
        const std::string type = option->get_type_name();
        auto kind_is = [&type](const std::string& kind) {
            return type.compare(0, kind.size(), kind) == 0 && (type.size() == kind.size() || type[kind.size()] == ':');
        };
        if (kind_is("UINT")) option->transform(strict_number<std::uint64_t>());
        else if (kind_is("INT"))
            option->transform(strict_number<std::int64_t>());
        else if (kind_is("FLOAT"))
            option->transform(strict_number<double>());
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) make_numbers_strict(*sub);
}

}  // namespace alignscope::cli
