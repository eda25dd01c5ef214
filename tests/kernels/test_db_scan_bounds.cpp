// Global and semi-global database scans on the CPU (kernels/search/db_scan_bounds.hpp):
// the kernel's bounded cell arithmetic is run here on the host over the same
// padded layout (void rows, the DP's row 0 as a profile row, the query at the
// bottom), with cells that wrap like the GPU's (16-bit lanes, 32-bit cells,
// and an 8-bit width whose small range makes saturation common), the same
// boundaries, profile entries and end captures, and compared with the engine's
// scalar reference (score_forward) for global and every free-end-gap choice:
//  - wherever the saturation rule (bounded_exact) says a pass is exact, its
//    score equals the reference's, exhaustively over all DNA pairs up to three
//    residues and on random protein and DNA pairs, padding columns included;
//  - the rule is not vacuous: at 8 bits it refuses many pairs, and some of
//    those do come out wrong;
//  - lowest_cell / highest_cell bound every H of a full DP matrix (an
//    independent full-matrix Gotoh in this file, itself checked against
//    score_forward), and the boundary and profile functions give the values
//    worked out by hand.
// Host logic only: no GPU needed.
#include "../../kernels/search/db_scan_bounds.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <algorithm>
#include <random>

using namespace alignscope;
using namespace alignscope::kernels::search;

namespace {

// A cell width as the kernel uses it: `neg` the clamp and minus infinity,
// `pad` the score of padding, `top` the largest value, wrapping at `bits`.
struct Width {
    int bits;
    long long neg, pad, top;
    long long wrap(long long v) const {
        const unsigned long long mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
        unsigned long long u = static_cast<unsigned long long>(v) & mask;
        if (bits < 64 && (u >> (bits - 1)) & 1) u |= ~mask;
        return static_cast<long long>(u);
    }
    // max(a + b, c) with the addition wrapping, as __viaddmax_* does.
    long long add_max(long long a, long long b, long long c) const { return std::max(wrap(a + b), c); }
};
const Width w16{16, kNeg16, kPad16, kTop16};
const Width w32{32, kNeg32, kPad32, kTop32};
const Width w8{8, -64, -64, 127};  // the 16-bit layout shrunk: neg + pad = -128, -neg = 64

int free_bits(const AlignOptions& o) {
    if (o.mode != AlignmentMode::SemiGlobal) return 0;
    const FreeEndGaps& f = o.free_ends;
    return (f.query_begin ? kFreeQueryBegin : 0) | (f.query_end ? kFreeQueryEnd : 0) |
           (f.target_begin ? kFreeTargetBegin : 0) | (f.target_end ? kFreeTargetEnd : 0);
}

// One lane of the bounded kernel over a profile of `padded` rows (a whole
// number of tiles, at least m + 1), `columns` >= n columns (those past n are
// the pad letter), in `width`. Column by column and row by row as the
// wavefront computes them: E, F, H without ReLU, Ho clamped at neg, and the
// captures of scan_tile_bounded. Returns H in the width's units.
long long bounded_lane(const EncodedSequence& q, const EncodedSequence& t, const ScoringScheme& scheme, int free_ends,
                       int padded, int columns, const Width& width) {
    const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
    const int o = scheme.gap_open, e = scheme.gap_extend;
    const int z = zero_row(padded, m);
    const int pad_letter = scheme.matrix.size();
    const int neg = static_cast<int>(width.neg), pad = static_cast<int>(width.pad);
    std::vector<long long> ho(static_cast<std::size_t>(padded)), er(static_cast<std::size_t>(padded), width.neg);
    for (int x = 0; x < padded; ++x)
        ho[static_cast<std::size_t>(x)] = left_boundary(x, z, o, e, (free_ends & kFreeTargetBegin) != 0, neg);
    long long best = width.neg;
    for (int c = 0; c < columns; ++c) {
        const int letter = c < n ? t[static_cast<std::size_t>(c)] : pad_letter;
        long long diag = width.neg;  // tile 0's upper border: a void row
        long long above = width.neg, f = width.neg;
        for (int x = 0; x < padded; ++x) {
            const auto X = static_cast<std::size_t>(x);
            const int real = x > z && letter != pad_letter
                                 ? scheme.matrix.score(q[static_cast<std::size_t>(x - z - 1)], letter) + o
                                 : pad;
            const long long s = profile_entry(x, z, real, (free_ends & kFreeQueryBegin) != 0, pad, neg);
            er[X] = width.add_max(er[X], -e, ho[X]);
            f = width.add_max(f, -e, above);
            const long long h = width.add_max(diag, s, std::max(er[X], f));
            diag = ho[X];
            ho[X] = width.add_max(h, -o, width.neg);
            above = ho[X];
        }
        if ((free_ends & kFreeQueryEnd) || c == n - 1) best = std::max(best, ho[static_cast<std::size_t>(padded - 1)]);
        if ((free_ends & kFreeTargetEnd) && c == n - 1)
            for (int x = 0; x < padded; ++x)
                if (x != z) best = std::max(best, ho[static_cast<std::size_t>(x)]);
    }
    return width.add_max(best, o, width.neg);
}

// All H(i, j), 0 <= i <= m, 0 <= j <= n, of the bounded Gotoh recurrence in
// 64 bits, full matrix; and its end score under the reference's end rule.
struct FullDp {
    std::vector<std::vector<long long>> h;
    long long score = 0;
};
FullDp full_dp(const EncodedSequence& q, const EncodedSequence& t, const ScoringScheme& scheme, int free_ends) {
    const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
    const long long o = scheme.gap_open, e = scheme.gap_extend;
    const long long minus_inf = -(1ll << 50);
    FullDp dp;
    dp.h.assign(static_cast<std::size_t>(m) + 1, std::vector<long long>(static_cast<std::size_t>(n) + 1));
    std::vector<std::vector<long long>> E = dp.h, F = dp.h;
    for (int i = 0; i <= m; ++i)
        for (int j = 0; j <= n; ++j) {
            auto& H = dp.h[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
            auto& Ei = E[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
            auto& Fi = F[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
            Ei = Fi = minus_inf;
            if (i == 0 && j == 0) H = 0;
            else if (i == 0)
                H = (free_ends & kFreeQueryBegin) ? 0 : -gap_cost(o, e, j);
            else if (j == 0)
                H = (free_ends & kFreeTargetBegin) ? 0 : -gap_cost(o, e, i);
            else {
                const auto I = static_cast<std::size_t>(i), J = static_cast<std::size_t>(j);
                Ei = std::max(dp.h[I][J - 1] - o, E[I][J - 1] - e);
                Fi = std::max(dp.h[I - 1][J] - o, F[I - 1][J] - e);
                H = std::max({dp.h[I - 1][J - 1] + scheme.matrix.score(q[I - 1], t[J - 1]), Ei, Fi});
            }
        }
    dp.score = dp.h[static_cast<std::size_t>(m)][static_cast<std::size_t>(n)];
    if (free_ends & kFreeQueryEnd)
        for (int j = 1; j <= n; ++j)
            dp.score = std::max(dp.score, dp.h[static_cast<std::size_t>(m)][static_cast<std::size_t>(j)]);
    if (free_ends & kFreeTargetEnd)
        for (int i = 1; i <= m; ++i)
            dp.score = std::max(dp.score, dp.h[static_cast<std::size_t>(i)][static_cast<std::size_t>(n)]);
    return dp;
}

std::vector<AlignOptions> bounded_modes() {
    std::vector<AlignOptions> modes;
    AlignOptions global;
    global.mode = AlignmentMode::Global;
    global.traceback = false;
    modes.push_back(global);
    for (int bits = 0; bits < 16; ++bits) {
        AlignOptions sg = global;
        sg.mode = AlignmentMode::SemiGlobal;
        sg.free_ends = {(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0};
        modes.push_back(sg);
    }
    return modes;
}

long long best_sum(const EncodedSequence& s, const SubstitutionMatrix& matrix, bool as_query) {
    long long sum = 0;
    for (std::uint8_t c : s) {
        int best = 0;
        for (int k = 0; k < matrix.size(); ++k)
            best = std::max(best, as_query ? matrix.score(c, k) : matrix.score(k, c));
        sum += best;
    }
    return sum;
}

bool rule_says_exact(const EncodedSequence& q, const EncodedSequence& t, const ScoringScheme& scheme, int free_ends,
                     const Width& width) {
    const long long m = static_cast<long long>(q.size()), n = static_cast<long long>(t.size());
    const long long lowest =
        lowest_cell(m, n, scheme.gap_open, scheme.gap_extend, scheme.matrix.min_score(), free_ends);
    const long long highest = highest_cell(m, n, scheme.matrix.max_score(), best_sum(q, scheme.matrix, true),
                                           best_sum(t, scheme.matrix, false));
    return bounded_exact(lowest, highest, scheme.gap_open, scheme.matrix.max_score(), width.neg, width.top);
}

// Tile rows that leave a few void rows above row 0 (like a real profile).
int padded_rows(int m, int tile) { return (bounded_rows(m) + tile - 1) / tile * tile; }

EncodedSequence random_codes(std::mt19937_64& rng, int length, int letters) {
    EncodedSequence s(static_cast<std::size_t>(length));
    std::uniform_int_distribution<int> pick(0, letters - 1);
    for (auto& c : s) c = static_cast<std::uint8_t>(pick(rng));
    return s;
}

struct Tally {
    int compared = 0, exact = 0, refused = 0, refused_and_wrong = 0;
};

// Runs one pair through the emulation at `width` and checks it against the
// reference wherever the rule says exact. Returns false (and says why) on a
// wrong score the rule let through.
bool check_pair(const EncodedSequence& q, const EncodedSequence& t, const ScoringScheme& scheme,
                const AlignOptions& options, const Width& width, int tile, int extra_columns, Tally& tally,
                QString& why) {
    const int free_ends = free_bits(options);
    const long long reference = score_forward(q.data(), static_cast<std::int64_t>(q.size()), t.data(),
                                              static_cast<std::int64_t>(t.size()), scheme, options)
                                    .score;
    const int padded = padded_rows(static_cast<int>(q.size()), tile);
    const int columns = static_cast<int>((t.size() + 3) / 4 * 4) + extra_columns;
    const long long got = bounded_lane(q, t, scheme, free_ends, padded, columns, width);
    ++tally.compared;
    if (rule_says_exact(q, t, scheme, free_ends, width)) {
        ++tally.exact;
        if (got != reference) {
            why = QString("%1-bit %2: m %3, n %4, padded %5: emulated %6, reference %7")
                      .arg(width.bits)
                      .arg(QString::fromStdString(describe_mode(options)))
                      .arg(q.size())
                      .arg(t.size())
                      .arg(padded)
                      .arg(got)
                      .arg(reference);
            return false;
        }
    } else {
        ++tally.refused;
        if (got != reference) ++tally.refused_and_wrong;
    }
    return true;
}

// scan_tile_bounded and the bounded db_scan kernel ported line by line to the
// host for one lane: G threads of R rows step through the wavefront together
// (a shuffle reads the thread above's values from before the step), the
// thread at the top reads residues and, in later tiles, the (Ho, F) strip
// four columns ahead, the bottom thread writes the strip, columns < 0 are
// skipped, the end cells are taken as the kernel takes them, and the group's
// maximum plus open is the score. `warp_columns` >= n stands for a longer
// sequence elsewhere in the warp (the steps cover the warp's longest).
// `partner_rows` > m + 1 stands for a longer query sharing the profile: the
// profile is that tall, and this query's row 0 lies lower, maybe in a later tile.
long long bounded_kernel(const EncodedSequence& q, const EncodedSequence& t, const ScoringScheme& scheme, int free_ends,
                         int G, int R, int warp_columns, const Width& width, int partner_rows = 0) {
    const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
    const int o = scheme.gap_open, ext = scheme.gap_extend;
    const int T = G * R;
    const int tiles = (std::max(bounded_rows(m), partner_rows) + T - 1) / T;
    const int z = zero_row(tiles * T, m);
    const int pad_letter = scheme.matrix.size();
    const long long neg = width.neg;
    const int steps = (((warp_columns + 3) & ~3) + G - 1 + 3) & ~3;
    auto letter_at = [&](int column) {
        return column < n ? static_cast<int>(t[static_cast<std::size_t>(column)]) : pad_letter;
    };
    auto profile = [&](int x, int letter) -> long long {
        const int real = x > z && letter != pad_letter
                             ? scheme.matrix.score(q[static_cast<std::size_t>(x - z - 1)], letter) + o
                             : static_cast<int>(width.pad);
        return profile_entry(x, z, real, (free_ends & kFreeQueryBegin) != 0, static_cast<int>(width.pad),
                             static_cast<int>(neg));
    };
    auto left = [&](int row) {
        return static_cast<long long>(
            left_boundary(row, z, o, ext, (free_ends & kFreeTargetBegin) != 0, static_cast<int>(neg)));
    };
    std::vector<std::pair<long long, long long>> strip(static_cast<std::size_t>(((n + 3) & ~3) + 8), {neg, neg});
    std::vector<long long> best(static_cast<std::size_t>(G), neg);
    for (int k = 0; k < tiles; ++k) {
        const bool first_tile = k == 0, last_tile = k == tiles - 1;
        std::vector<std::vector<long long>> ho(static_cast<std::size_t>(G),
                                               std::vector<long long>(static_cast<std::size_t>(R)));
        std::vector<std::vector<long long>> e = ho;
        std::vector<long long> bottom_ho(static_cast<std::size_t>(G)), bottom_f(static_cast<std::size_t>(G), neg),
            diag_in(static_cast<std::size_t>(G));
        std::vector<int> code(static_cast<std::size_t>(G), pad_letter);
        for (int g = 0; g < G; ++g) {
            const auto G_ = static_cast<std::size_t>(g);
            const int first_row = k * T + g * R;
            for (int r = 0; r < R; ++r) {
                ho[G_][static_cast<std::size_t>(r)] = left(first_row + r);
                e[G_][static_cast<std::size_t>(r)] = neg;
            }
            bottom_ho[G_] = ho[G_][static_cast<std::size_t>(R - 1)];
            diag_in[G_] = first_tile ? neg : left(first_row - 1);
        }
        const int column_at = (free_ends & kFreeTargetEnd) ? n - 1 : -1;
        // The top thread's prefetched strip chunk (columns s4 .. s4+3).
        std::vector<std::pair<long long, long long>> chunk(4), next(4);
        auto fetch = [&](int column, std::vector<std::pair<long long, long long>>& into) {
            for (int c = 0; c < 4; ++c)
                into[static_cast<std::size_t>(c)] = column < n ? strip[static_cast<std::size_t>(column + c)]
                                                               : std::pair<long long, long long>{neg, neg};
        };
        if (!first_tile) fetch(0, chunk);
        for (int s4 = 0; s4 < steps; s4 += 4) {
            if (!first_tile) fetch(s4 + 4, next);
            for (int qq = 0; qq < 4; ++qq) {
                const std::vector<int> code_before = code;
                const std::vector<long long> ho_before = bottom_ho, f_before = bottom_f;
                for (int g = 0; g < G; ++g) {
                    const auto G_ = static_cast<std::size_t>(g);
                    int code_in;
                    long long ho_up, f_up;
                    if (g == 0) {
                        code_in = letter_at(s4 + qq);
                        ho_up = first_tile ? neg : chunk[static_cast<std::size_t>(qq)].first;
                        f_up = first_tile ? neg : chunk[static_cast<std::size_t>(qq)].second;
                    } else {
                        code_in = code_before[G_ - 1];
                        ho_up = ho_before[G_ - 1];
                        f_up = f_before[G_ - 1];
                    }
                    code[G_] = code_in;
                    long long diag = diag_in[G_];
                    diag_in[G_] = ho_up;
                    const int column = s4 + qq - g;
                    const int first_row = k * T + g * R;
                    if (column >= 0) {
                        long long f = f_up, above = ho_up;
                        for (int r = 0; r < R; ++r) {
                            const auto r_ = static_cast<std::size_t>(r);
                            e[G_][r_] = width.add_max(e[G_][r_], -ext, ho[G_][r_]);
                            f = width.add_max(f, -ext, above);
                            const long long h =
                                width.add_max(diag, profile(first_row + r, code_in), std::max(e[G_][r_], f));
                            diag = ho[G_][r_];
                            ho[G_][r_] = width.add_max(h, -o, neg);
                            above = ho[G_][r_];
                        }
                        bottom_ho[G_] = ho[G_][static_cast<std::size_t>(R - 1)];
                        bottom_f[G_] = f;
                        const int row_from =
                            last_tile && g == G - 1 ? ((free_ends & kFreeQueryEnd) ? 0 : n - 1) : 0x7fffffff;
                        if (column >= row_from) best[G_] = std::max(best[G_], ho[G_][static_cast<std::size_t>(R - 1)]);
                        if (column == column_at)
                            for (int r = 0; r < R; ++r)
                                if (first_row + r != z)
                                    best[G_] = std::max(best[G_], ho[G_][static_cast<std::size_t>(r)]);
                    }
                    if (!last_tile && g == G - 1 && column >= 0 && column < ((n + 3) & ~3))
                        strip[static_cast<std::size_t>(column)] =
                            column < n ? std::pair<long long, long long>{bottom_ho[G_], bottom_f[G_]}
                                       : std::pair<long long, long long>{neg, neg};
                }
            }
            chunk = next;
        }
    }
    return width.add_max(*std::max_element(best.begin(), best.end()), o, neg);
}

}  // namespace

class TestDbScanBounds : public QObject {
    Q_OBJECT

private slots:
    void boundaryValuesByHand() {
        // open 11, extend 1; query of 3 residues in 8 padded rows: z = 4.
        QCOMPARE(zero_row(8, 3), 4);
        QCOMPARE(left_boundary(0, 4, 11, 1, false, kNeg16), kNeg16);    // void
        QCOMPARE(left_boundary(3, 4, 11, 1, false, kNeg16), kNeg16);    // void
        QCOMPARE(left_boundary(4, 4, 11, 1, false, kNeg16), -11);       // H(0,0) = 0, Ho = -11
        QCOMPARE(left_boundary(5, 4, 11, 1, false, kNeg16), -11 - 11);  // H(1,0) = -11
        QCOMPARE(left_boundary(7, 4, 11, 1, false, kNeg16), -13 - 11);  // H(3,0) = -(11 + 2)
        QCOMPARE(left_boundary(7, 4, 11, 1, true, kNeg16), -11);        // free target begin: H(3,0) = 0
        // Far down a long query the boundary clamps at neg instead of wrapping.
        QCOMPARE(left_boundary(40000, 0, 11, 1, false, kNeg16), kNeg16);
        QCOMPARE(profile_entry(3, 4, 15, false, kPad16, kNeg16), kPad16);
        QCOMPARE(profile_entry(4, 4, 15, false, kPad16, kNeg16), kPad16);
        QCOMPARE(profile_entry(4, 4, 15, true, kPad16, kNeg16), 16384);  // neg + 16384 = 0 = H(0, j)
        QCOMPARE(profile_entry(5, 4, 15, true, kPad16, kNeg16), 15);
        QCOMPARE(bounded_rows(3), 4);
        QCOMPARE(gap_cost(11, 1, 0), 0ll);
        QCOMPARE(gap_cost(11, 1, 5), 15ll);
        // The rule at its edges: neg + open is the lowest H allowed, top - max the highest.
        QVERIFY(bounded_exact(kNeg16 + 11, 0, 11, 11, kNeg16, kTop16));
        QVERIFY(!bounded_exact(kNeg16 + 10, 0, 11, 11, kNeg16, kTop16));
        QVERIFY(bounded_exact(-5, kTop16 - 11, 11, 11, kNeg16, kTop16));
        QVERIFY(!bounded_exact(-5, kTop16 - 10, 11, 11, kNeg16, kTop16));
    }

    // The bounds hold every H of the DP (boundaries included), against a full
    // matrix computed here, for random pairs, matrices and every mode.
    void boundsHoldEveryCell() {
        std::mt19937_64 rng(11);
        const std::vector<ScoringScheme> schemes = {
            ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1),
            ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM45"), 16, 2),
            ScoringScheme::create(SubstitutionMatrix::builtin("PAM30"), 4, 4),
            ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 16, 6),
            ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 7, 2),
        };
        int checked = 0;
        for (const ScoringScheme& scheme : schemes) {
            const int letters = scheme.matrix.size();
            for (int round = 0; round < 40; ++round) {
                std::uniform_int_distribution<int> length(1, round < 20 ? 12 : 90);
                const EncodedSequence q = random_codes(rng, length(rng), letters);
                EncodedSequence t = random_codes(rng, length(rng), letters);
                if (round % 5 == 0) t = q;  // high scores too
                for (const AlignOptions& options : bounded_modes()) {
                    const int free_ends = free_bits(options);
                    const FullDp dp = full_dp(q, t, scheme, free_ends);
                    // The full matrix is the engine's recurrence.
                    QCOMPARE(dp.score, score_forward(q.data(), static_cast<std::int64_t>(q.size()), t.data(),
                                                     static_cast<std::int64_t>(t.size()), scheme, options)
                                           .score);
                    long long lo = dp.h[0][0], hi = dp.h[0][0];
                    for (const auto& row : dp.h)
                        for (long long v : row) {
                            lo = std::min(lo, v);
                            hi = std::max(hi, v);
                        }
                    const long long m = static_cast<long long>(q.size()), n = static_cast<long long>(t.size());
                    const long long lowest =
                        lowest_cell(m, n, scheme.gap_open, scheme.gap_extend, scheme.matrix.min_score(), free_ends);
                    const long long highest =
                        highest_cell(m, n, scheme.matrix.max_score(), best_sum(q, scheme.matrix, true),
                                     best_sum(t, scheme.matrix, false));
                    QVERIFY2(lowest <= lo, qPrintable(QString("lowest %1 > min H %2 (m %3, n %4, %5)")
                                                          .arg(lowest)
                                                          .arg(lo)
                                                          .arg(m)
                                                          .arg(n)
                                                          .arg(QString::fromStdString(describe_mode(options)))));
                    QVERIFY2(highest >= hi, qPrintable(QString("highest %1 < max H %2").arg(highest).arg(hi)));
                    ++checked;
                }
            }
        }
        QCOMPARE(checked, 5 * 40 * 17);
    }

    // Every pair of DNA sequences of 1 to 3 residues, global and all 16
    // free-end choices, 8-bit and 16-bit cells, two tile heights (row 0 at the
    // top of the profile and further down), with and without padding columns.
    void exhaustiveSmallPairs() {
        const ScoringScheme dna = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        std::vector<EncodedSequence> all;
        for (int length = 1; length <= 3; ++length) {
            int count = 1;
            for (int k = 0; k < length; ++k) count *= 4;
            for (int v = 0; v < count; ++v) {
                EncodedSequence s;
                for (int k = 0, x = v; k < length; ++k, x /= 4) s.push_back(static_cast<std::uint8_t>(x % 4));
                all.push_back(s);
            }
        }
        Tally tally;
        QString why;
        for (const AlignOptions& options : bounded_modes())
            for (const EncodedSequence& q : all)
                for (const EncodedSequence& t : all)
                    for (const Width* width : {&w8, &w16}) {
                        const int tile = (q.size() + t.size()) % 2 ? 4 : 8;
                        if (!check_pair(q, t, dna, options, *width, tile, (q.size() + t.size()) % 3, tally, why))
                            QFAIL(qPrintable(why));
                    }
        QCOMPARE(tally.compared, 17 * 84 * 84 * 2);
        QCOMPARE(tally.refused, 0);  // nothing this short comes near either width's range
    }

    // Random pairs at 8 bits: the rule refuses many of them, lets through only
    // exact scores, and the refused ones do include wrong scores (so the test
    // would notice a rule that let them through).
    void ruleIsSoundAtEightBits() {
        std::mt19937_64 rng(5);
        const std::vector<ScoringScheme> schemes = {
            ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2),
            ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), 2, 1),
            ScoringScheme::create(SubstitutionMatrix::match_mismatch(3, -2), 3, 3),  // linear gaps
        };
        Tally tally;
        QString why;
        for (const ScoringScheme& scheme : schemes)
            for (int round = 0; round < 150; ++round) {
                std::uniform_int_distribution<int> length(1, 60);
                const EncodedSequence q = random_codes(rng, length(rng), 4);
                EncodedSequence t = random_codes(rng, length(rng), 4);
                if (round % 4 == 0) t = q;
                for (const AlignOptions& options : bounded_modes())
                    if (!check_pair(q, t, scheme, options, w8, round % 2 ? 8 : 32, round % 5, tally, why))
                        QFAIL(qPrintable(why));
            }
        qInfo("8-bit: %d pairs, %d proven exact, %d refused (%d of them wrong)", tally.compared, tally.exact,
              tally.refused, tally.refused_and_wrong);
        QVERIFY(tally.exact > tally.compared / 10);
        QVERIFY(tally.refused > tally.compared / 10);
        QVERIFY(tally.refused_and_wrong > 0);
    }

    // 16-bit and 32-bit cells on protein and DNA pairs of realistic lengths,
    // BLOSUM62's rare letters included: the rule passes nearly all of them at
    // 16 bits and every one is exact; a few thousand residues of a
    // self-similar W/C query push the highest cell past 32,767 (refused).
    void proteinAndDnaAtSixteenBits() {
        std::mt19937_64 rng(9);
        const ScoringScheme blosum = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 12, 1);
        const ScoringScheme ednafull = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 16, 6);
        const ScoringScheme linear = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 4, 4);
        Tally tally16, tally32;
        QString why;
        for (int round = 0; round < 24; ++round) {
            const ScoringScheme& scheme = round % 3 == 0 ? blosum : round % 3 == 1 ? ednafull : linear;
            std::uniform_int_distribution<int> length(1, 700);
            const EncodedSequence q = random_codes(rng, length(rng), scheme.matrix.size());
            EncodedSequence t = random_codes(rng, length(rng), scheme.matrix.size());
            if (round % 4 == 0) t = q;
            const AlignOptions options = bounded_modes()[static_cast<std::size_t>(round) % 17];
            if (!check_pair(q, t, scheme, options, w16, 128, 4, tally16, why)) QFAIL(qPrintable(why));
            if (!check_pair(q, t, scheme, options, w32, 512, 0, tally32, why)) QFAIL(qPrintable(why));
        }
        QCOMPARE(tally16.refused, 0);
        QCOMPARE(tally32.refused, 0);
        // W and C score 11 and 9 against themselves: 3,500 of them pass 32,767.
        const int w = blosum.matrix.index_of('W'), c = blosum.matrix.index_of('C');
        EncodedSequence wc(3500);
        for (auto& x : wc) x = static_cast<std::uint8_t>(rng() % 2 ? w : c);
        AlignOptions global;
        global.mode = AlignmentMode::Global;
        global.traceback = false;
        QVERIFY(!rule_says_exact(wc, wc, blosum, 0, w16));
        QVERIFY(rule_says_exact(wc, wc, blosum, 0, w32));
        Tally big;
        if (!check_pair(wc, wc, blosum, global, w32, 512, 0, big, why)) QFAIL(qPrintable(why));
        QCOMPARE(big.exact, 1);
        // And the 16-bit pass really is wrong there: the rule must refuse it.
        Tally wrong;
        QVERIFY(check_pair(wc, wc, blosum, global, w16, 512, 0, wrong, why));
        QCOMPARE(wrong.refused_and_wrong, 1);
    }

    // The kernel's own structure (threads, shuffles, strips between tiles,
    // skipped columns, end captures) ported to the host: random protein and
    // DNA pairs on several tile shapes, one tile and several, sequences
    // shorter than the warp's longest; every free-end choice and global.
    void kernelStructureOnTheHost() {
        std::mt19937_64 rng(21);
        const ScoringScheme blosum = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 12, 1);
        const ScoringScheme dna = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 16, 6);
        const ScoringScheme linear = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 4, 4);
        const int shapes[][2] = {{4, 4}, {4, 8}, {8, 4}, {16, 8}, {32, 4}};
        int compared = 0;
        for (int round = 0; round < 120; ++round) {
            const ScoringScheme& scheme = round % 3 == 0 ? blosum : round % 3 == 1 ? dna : linear;
            const int G = shapes[round % 5][0], R = shapes[round % 5][1];
            std::uniform_int_distribution<int> length(1, round % 2 ? 3 * G * R : 40);  // several tiles, or one
            const EncodedSequence q = random_codes(rng, length(rng), scheme.matrix.size());
            EncodedSequence t = random_codes(rng, length(rng), scheme.matrix.size());
            if (round % 7 == 0) t = q;
            const int warp_columns = static_cast<int>(t.size()) + (round % 4) * 5;
            for (const AlignOptions& options : bounded_modes()) {
                const int free_ends = free_bits(options);
                if (!rule_says_exact(q, t, scheme, free_ends, w16)) continue;
                const long long reference = score_forward(q.data(), static_cast<std::int64_t>(q.size()), t.data(),
                                                          static_cast<std::int64_t>(t.size()), scheme, options)
                                                .score;
                // Alone, and as the shorter query of a pair whose partner is
                // up to three tiles taller (its row 0 then in a later tile).
                const int partner_rows = round % 3 == 0 ? 0 : static_cast<int>(q.size()) + 1 + (round % 4) * G * R;
                const long long got = bounded_kernel(q, t, scheme, free_ends, G, R, warp_columns, w16, partner_rows);
                QVERIFY2(got == reference,
                         qPrintable(QString("%1x%2 %3: m %4, n %5, warp columns %6, profile rows %7: kernel %8, "
                                            "reference %9")
                                        .arg(G)
                                        .arg(R)
                                        .arg(QString::fromStdString(describe_mode(options)))
                                        .arg(q.size())
                                        .arg(t.size())
                                        .arg(warp_columns)
                                        .arg(partner_rows)
                                        .arg(got)
                                        .arg(reference)));
                ++compared;
            }
        }
        QCOMPARE(compared, 120 * 17);
    }
};

QTEST_GUILESS_MAIN(TestDbScanBounds)
#include "test_db_scan_bounds.moc"
