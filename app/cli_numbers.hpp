// The one reading of every number on alignscope-cli's command line: a CLI11
// transform per kind (unsigned, signed, real) that refuses what CLI11 would
// wrap, overflow, read as hex or octal, or take as inf/nan. No engine types.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace alignscope::cli {

// Every number on the command line goes through one strict reading, whatever
// its flag: whole numbers are plain decimal digits (a minus sign only where the
// flag's type is signed) inside the type's range, real numbers are finite
// decimals. Anything else is refused with the flag named and the text as typed.
// Checks the text of a whole number of at most `max` (and at least -max-1 when
// `is_signed`); returns the error (empty when fine) and leaves `text` in plain
// decimal (CLI11 would read "010" as octal and "0x10" as hex).
std::string check_whole_number(std::string& text, bool is_signed, std::uint64_t max);
// Checks a real number (a finite decimal); returns the error (empty when fine)
// and leaves `text` as 17 significant digits of the double it denotes. CLI11
// reads reals through long double and then narrows, which rounds twice: a
// decimal of more digits could land one ulp off the correctly rounded double;
// 17 digits sit so close to it that the second rounding cannot move.
std::string check_real_number(std::string& text);

// The reading for a flag of type T (an integer type or double).
template <class T>
CLI::Validator strict_number() {
    if constexpr (std::is_floating_point_v<T>) {
        return CLI::Validator([](std::string& text) { return check_real_number(text); }, "", "strict number");
    } else {
        static_assert(std::is_integral_v<T>);
        return CLI::Validator(
            [](std::string& text) {
                return check_whole_number(text, std::is_signed_v<T>,
                                          static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
            },
            "", "strict number");
    }
}

// Gives every numeric option of `app` and of all its subcommands that has no
// strict reading yet the one of its kind at 64 bits (CLI11's type names UINT,
// INT, FLOAT); options of narrower types add strict_number<T>() themselves.
void make_numbers_strict(CLI::App& app);

}  // namespace alignscope::cli
