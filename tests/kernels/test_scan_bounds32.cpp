// When the GPU database scan and the all-against-all tile scorer may use
// their 16-bit and 32-bit cells (kernels/search/db_scan_bounds.hpp):
// scan16_takes_scheme at its edges, exact32 against a full 64-bit DP on both
// sides of its limit (penalties of 1,000,000, a match of 2,000,000 scaled),
// and the scanner's whole-database shortcut (a query whose longest pair
// holds with the coarse bound needs no pair-by-pair check), exhaustively over
// lengths and every free-end combination.
#include "../../kernels/search/db_scan_bounds.hpp"

#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

using namespace alignscope;
using namespace alignscope::kernels::search;

namespace {

struct Extremes {
    long long lowest_h = std::numeric_limits<long long>::max();
    long long highest_h = std::numeric_limits<long long>::min();
};

// Every H of a 64-bit Gotoh DP of q x t, boundaries included.
Extremes dp_extremes(const std::vector<int>& q, const std::vector<int>& t, const ScoringScheme& scheme, bool local) {
    const long long o = scheme.gap_open, e = scheme.gap_extend;
    constexpr long long none = std::numeric_limits<long long>::min() / 4;
    Extremes x;
    const std::size_t n = t.size();
    std::vector<long long> up(n + 1), row(n + 1), f(n + 1, none);
    for (std::size_t j = 0; j <= n; ++j) {
        up[j] = local ? 0 : -gap_cost(o, e, static_cast<long long>(j));
        x.lowest_h = std::min(x.lowest_h, up[j]);
        x.highest_h = std::max(x.highest_h, up[j]);
    }
    for (std::size_t i = 1; i <= q.size(); ++i) {
        row[0] = local ? 0 : -gap_cost(o, e, static_cast<long long>(i));
        long long ee = none;
        for (std::size_t j = 1; j <= n; ++j) {
            ee = std::max(row[j - 1] - o, ee - e);
            f[j] = std::max(up[j] - o, f[j] - e);
            long long h = std::max({up[j - 1] + scheme.matrix.score(q[i - 1], t[j - 1]), ee, f[j]});
            if (local) h = std::max(h, 0LL);
            row[j] = h;
        }
        for (long long h : row) {
            x.lowest_h = std::min(x.lowest_h, h);
            x.highest_h = std::max(x.highest_h, h);
        }
        std::swap(up, row);
    }
    return x;
}

std::vector<int> random_codes(std::mt19937& rng, std::size_t length, int letters) {
    std::vector<int> out(length);
    for (int& c : out) c = static_cast<int>(rng() % static_cast<unsigned>(letters));
    return out;
}

constexpr long long kUnknown = std::numeric_limits<long long>::max() / 4;

}  // namespace

class TestScanBounds32 : public QObject {
    Q_OBJECT

private slots:
    void scan16_scheme_edges() {
        // BLOSUM62 reaches 11 (W/W) and -4: open + 11 must stay below 4096.
        QVERIFY(scan16_takes_scheme(-4, 11, 11, 1));
        QVERIFY(scan16_takes_scheme(-4, 11, 4084, 1));
        QVERIFY(!scan16_takes_scheme(-4, 11, 4085, 1));
        QVERIFY(scan16_takes_scheme(-4085, 11, 10, 1));
        QVERIFY(!scan16_takes_scheme(-4086, 11, 10, 1));
        QVERIFY(!scan16_takes_scheme(-4, 11, 11, 4096));
        QVERIFY(scan16_takes_scheme(-4, 11, 4000, 4000));
        // An all-positive matrix: its smallest score is no reach of its own.
        QVERIFY(scan16_takes_scheme(5, 10, 4085, 1));
        QVERIFY(!scan16_takes_scheme(-4, 11, -1, 0));
        // BLOSUM62 x64 still fits (704 + 11); x512 and 1,000,000 penalties
        // take the 32-bit cells.
        QVERIFY(scan16_takes_scheme(-4 * 64, 11 * 64, 11, 1));
        QVERIFY(!scan16_takes_scheme(-4 * 512, 11 * 512, 11, 1));
        QVERIFY(!scan16_takes_scheme(-4, 11, 1000000, 1000000));
    }

    // Global scans, penalties of 1,000,000: one residue against n crosses
    // kNeg32 + open within a few hundred residues.
    void exact32_bounded_from_below() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 1e6, 1e6);
        std::mt19937 rng(2);
        int refused = 0;
        for (long long n = 1; n <= 400; ++n) {
            const auto q = random_codes(rng, 1, scheme.matrix.size());
            const auto t = random_codes(rng, static_cast<std::size_t>(n), scheme.matrix.size());
            const Extremes x = dp_extremes(q, t, scheme, false);
            const bool holds = exact32(false, 1, n, scheme.gap_open, scheme.gap_extend, scheme.matrix.min_score(),
                                       scheme.matrix.max_score(), kUnknown, kUnknown, 0);
            if (holds) {
                QVERIFY2(x.lowest_h >= kNeg32 + scheme.gap_open, qPrintable(QString("n = %1").arg(n)));
            } else {
                ++refused;
                // Refused only within two penalties of the clamp.
                QVERIFY2(x.lowest_h < kNeg32 + 3LL * scheme.gap_open,
                         qPrintable(QString("n = %1 refused needlessly").arg(n)));
            }
        }
        QVERIFY(refused > 0 && refused < 400);
    }

    // Local scans, a match of 2,000,000 (scaled): identical sequences reach
    // the 32-bit top at about a thousand residues.
    void exact32_local_from_above() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1000000, -1), 0.5, 0.5);
        QCOMPARE(scheme.matrix.max_score(), 2000000);
        const long long s = scheme.matrix.max_score(), o = scheme.gap_open;
        bool any_refused = false;
        for (long long m = 1060; m <= 1080; ++m) {
            const std::vector<int> q(static_cast<std::size_t>(m), 0);
            const Extremes x = dp_extremes(q, q, scheme, true);
            QCOMPARE(x.highest_h, s * m);
            const bool holds =
                exact32(true, m, m, o, scheme.gap_extend, scheme.matrix.min_score(), s, kUnknown, kUnknown, 0);
            QCOMPARE(holds, x.highest_h + s + o <= kTop32);
            any_refused = any_refused || !holds;
        }
        QVERIFY(any_refused);
    }

    // The scanner skips the pair-by-pair check for a query when the coarse
    // bound at the database's longest sequence holds: then every pair must
    // hold, whatever its lengths, best-score sums and free ends.
    void whole_database_shortcut_is_sound() {
        struct Scheme {
            long long open, extend, min_score, max_score;
        };
        const Scheme schemes[] = {{1000000, 1000000, -4, 11},   {2000000, 1, -8, 22},
                                  {65536, 65536, -4096, 45056}, {11, 1, -4, 11},
                                  {40000, 20000, -3, 2000000},  {1999999, 1999999, -2000000, 2000000}};
        std::mt19937 rng(9);
        for (const Scheme& sc : schemes)
            for (int free_ends = 0; free_ends < 16; ++free_ends)
                for (bool local : {false, true})
                    for (long long m = 1; m <= 300; m += 13) {
                        const long long longest = 1 + static_cast<long long>(rng() % 2000);
                        const long long cap = m * std::max(0LL, sc.max_score);
                        if (!exact32(local, m, longest, sc.open, sc.extend, sc.min_score, sc.max_score, cap, cap,
                                     free_ends))
                            continue;
                        for (long long n = 1; n <= longest; n += 1 + longest / 97) {
                            const long long best = static_cast<long long>(rng() % static_cast<unsigned>(cap + 1));
                            const long long target_best = static_cast<long long>(rng() % 1000000000);
                            QVERIFY(exact32(local, m, n, sc.open, sc.extend, sc.min_score, sc.max_score, best,
                                            target_best, free_ends));
                        }
                    }
    }
};

QTEST_GUILESS_MAIN(TestScanBounds32)
#include "test_scan_bounds32.moc"
