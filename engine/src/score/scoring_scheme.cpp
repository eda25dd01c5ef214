// ScoringScheme: turns gap penalties given in user units (steps of 0.5) into the
// scaled integers the DP works in, and describes the scheme for reports.
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace alignscope {

namespace {

// Penalties above this are typos; the bound also keeps scaled penalties and
// k * extend comfortably inside 64-bit DP sums.
constexpr double kMaxPenalty = 1e6;

std::string format_user_value(double value) {
    // The shortest text that reads back as the same double: what the user typed
    // as typed, less trailing zeros ("1000000.5", not "1e+06").
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

// Validates one penalty and returns it in half units (value * 2). `parameter`
// names it in the engine's words ("gap_open"), for Error::about.
long long half_units(double value, const char* parameter) {
    if (!std::isfinite(value))
        throw Error::about(parameter, "expected a finite number, got " + format_user_value(value));
    if (value < 0)
        throw Error::about(parameter,
                           "expected a penalty >= 0 (penalties are positive costs), got " + format_user_value(value));
    if (value > kMaxPenalty)
        throw Error::about(parameter, "expected a penalty of at most 1000000, got " + format_user_value(value));
    const double doubled = value * 2;
    if (doubled != std::floor(doubled))
        throw Error::about(parameter, "expected a whole number or a multiple of 0.5, got " + format_user_value(value));
    return static_cast<long long>(doubled);
}

// A scaled integer shown in user units: "10", "0.5", "-3.5".
std::string format_scaled(long long scaled, int scale) {
    if (scale == 1 || scaled % scale == 0) return std::to_string(scaled / scale);
    return format_user_value(static_cast<double>(scaled) / scale);
}

}  // namespace

ScoringScheme ScoringScheme::create(const SubstitutionMatrix& unscaled, double gap_open, double gap_extend) {
    const long long open2 = half_units(gap_open, "gap_open");
    const long long extend2 = half_units(gap_extend, "gap_extend");
    if (extend2 > open2)
        throw Error::about("gap_extend", "expected a value no larger than the gap open penalty (" +
                                             format_user_value(gap_open) + "), got " + format_user_value(gap_extend) +
                                             "; a gap of length k costs open + (k-1)*extend");

    ScoringScheme scheme;
    scheme.scale = (open2 % 2 == 0 && extend2 % 2 == 0) ? 1 : 2;
    scheme.gap_open = static_cast<int>(open2 * scheme.scale / 2);
    scheme.gap_extend = static_cast<int>(extend2 * scheme.scale / 2);
    scheme.matrix = scheme.scale == 1 ? unscaled : unscaled.scaled(scheme.scale);
    return scheme;
}

std::string ScoringScheme::describe() const {
    return matrix.name() + ", gap open " + format_scaled(gap_open, scale) + ", extend " +
           format_scaled(gap_extend, scale) + " (a gap of length k costs open + (k-1)*extend)";
}

}  // namespace alignscope
