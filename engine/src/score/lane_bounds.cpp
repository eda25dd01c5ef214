// Lane-width decisions from a scheme's actual bounds; see lane_bounds.hpp.
#include <alignscope/score/lane_bounds.hpp>

#include <algorithm>
#include <cstdlib>

namespace alignscope {

SchemeBounds SchemeBounds::of(const ScoringScheme& scheme) {
    SchemeBounds b;
    b.max_substitution = scheme.matrix.max_score();
    b.min_substitution = scheme.matrix.min_score();
    b.gap_open = scheme.gap_open;
    b.gap_extend = scheme.gap_extend;
    return b;
}

std::int64_t SchemeBounds::largest_parameter() const {
    return std::max({std::llabs(max_substitution), std::llabs(min_substitution), static_cast<long long>(gap_open),
                     static_cast<long long>(gap_extend)});
}

std::int64_t SchemeBounds::highest_score(std::int64_t m, std::int64_t n) const {
    return std::min(m, n) * std::max(0, max_substitution);
}

std::int64_t SchemeBounds::lowest_value(std::int64_t m, std::int64_t n) const {
    auto gap = [this](std::int64_t k) {
        return k > 0 ? gap_open + (k - 1) * static_cast<std::int64_t>(gap_extend) : 0;
    };
    return -(gap(m) + gap(n)) - 2 * static_cast<std::int64_t>(gap_open) + std::min(0, min_substitution);
}

bool lane_takes_parameters(const SchemeBounds& bounds, int bits) {
    return bounds.largest_parameter() < (std::int64_t{1} << (bits - 3));
}

bool lane_holds_values(const SchemeBounds& bounds, std::int64_t m, std::int64_t n, int bits) {
    const std::int64_t room = (std::int64_t{1} << (bits - 1)) / 4 * 3;  // three quarters of the signed range
    return lane_takes_parameters(bounds, bits) && bounds.highest_score(m, n) < room &&
           bounds.lowest_value(m, n) > -room;
}

}  // namespace alignscope
