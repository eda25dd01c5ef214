// An oracle for scores past 32 bits: Gotoh's recurrence in 64-bit integers,
// written plainly (two rows, no lanes), for tests of short inputs under
// large match, mismatch and gap scores. A gap of length k costs
// open + (k - 1) * extend; local takes the best cell with a floor of 0,
// global the last cell.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace alignscope::test {

struct Gotoh64 {
    std::int64_t match = 0, mismatch = 0, open = 0, extend = 0;

    std::int64_t score(const std::string& a, const std::string& b, bool local) const {
        const std::int64_t minus = std::numeric_limits<std::int64_t>::min() / 4;
        const std::size_t n = b.size();
        auto border = [&](std::size_t k) { return local || k == 0 ? 0 : -(open + std::int64_t(k - 1) * extend); };
        std::vector<std::int64_t> h(n + 1), e(n + 1, minus);
        for (std::size_t j = 0; j <= n; ++j) h[j] = border(j);
        std::int64_t best = 0;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            std::int64_t diagonal = h[0];
            h[0] = border(i);
            std::int64_t f = minus;
            for (std::size_t j = 1; j <= n; ++j) {
                e[j] = std::max(h[j] - open, e[j] - extend);  // a gap in b, from the row above
                f = std::max(h[j - 1] - open, f - extend);    // a gap in a, from the left
                std::int64_t v = std::max({diagonal + (a[i - 1] == b[j - 1] ? match : mismatch), e[j], f});
                if (local) v = std::max<std::int64_t>(v, 0);
                diagonal = h[j];
                h[j] = v;
                best = std::max(best, v);
            }
        }
        return local ? best : h[n];
    }
};

}  // namespace alignscope::test
