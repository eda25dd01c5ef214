// The DP cell vocabulary of the kernels (kernels/common/dp_cell.hpp) on the
// CPU: every host emulation of a Cell16x2 / Cell32 operation against plain
// scalar arithmetic written here, exhaustively over small values and over the
// values at and around each lane's limits (where additions wrap), both lanes
// of a 16-bit word at once with different values, so a carry or a borrow
// across lanes shows. The affine cells are checked against the Gotoh
// recurrence on H, and the saturation rule at its edge.
#include "../../kernels/common/dp_cell.hpp"

#include <QtTest>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace alignscope::kernels::dp;

namespace {

// Two's-complement wrap of an exact sum into `bits` bits, by arithmetic on
// 64-bit integers (not the header's casts).
long long wrap_to(long long x, int bits) {
    const long long span = 1LL << bits, half = span / 2;
    return ((x + half) % span + span) % span - half;
}

// Every value of [-small, small] and the values near the lane's limits.
std::vector<long long> lane_values(int bits, int small) {
    std::vector<long long> v;
    for (int x = -small; x <= small; ++x) v.push_back(x);
    const long long top = (1LL << (bits - 1)) - 1, bottom = -(1LL << (bits - 1));
    for (long long d = 0; d < 4; ++d) {
        v.push_back(top - d);
        v.push_back(bottom + d);
        v.push_back(top / 2 - d);
        v.push_back(bottom / 2 + d);
    }
    if (bits == 16)
        for (int x : {Cell16x2::kNeg, Cell16x2::kNeg - Cell16x2::kMaxPenalty, -Cell16x2::kMaxPenalty,
                      Cell16x2::kMaxPenalty, 32767 - Cell16x2::kMaxPenalty})
            v.push_back(x);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// The first mismatch of a sweep, for one failure message instead of millions
// of QCOMPAREs.
struct Mismatches {
    long long count = 0;
    std::string first;
    // `describe()` words the mismatch; it runs only on the first one.
    template <class Describe>
    void check(bool ok, const Describe& describe) {
        if (ok) return;
        if (count++ == 0) first = describe();
    }
};

// An operation and its arguments, worded only for a failure message.
struct Args {
    const char* op;
    long long a = 0, b = 0, c = 0;
    int lane = -1;
    std::string operator()() const {
        return std::string(op) + "(" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ")" +
               (lane >= 0 ? " lane " + std::to_string(lane) : std::string());
    }
};

}  // namespace

class TestDpCell : public QObject {
    Q_OBJECT

private slots:
    // All triples of lane values; the high lane runs the same triple in
    // another order, so both lanes differ in every word.
    void cell16x2_matches_scalar_arithmetic_on_every_triple() {
        using C = Cell16x2;
        const std::vector<long long> v = lane_values(16, 24);
        const std::size_t n = v.size();
        Mismatches bad;
        for (std::size_t ia = 0; ia < n; ++ia)
            for (std::size_t ib = 0; ib < n; ++ib)
                for (std::size_t ic = 0; ic < n; ++ic) {
                    const long long a[2] = {v[ia], v[(ib + 3) % n]};
                    const long long b[2] = {v[ib], v[(ic + 5) % n]};
                    const long long c[2] = {v[ic], v[(ia + 7) % n]};
                    const C::word wa = C::pack(static_cast<int>(a[0]), static_cast<int>(a[1]));
                    const C::word wb = C::pack(static_cast<int>(b[0]), static_cast<int>(b[1]));
                    const C::word wc = C::pack(static_cast<int>(c[0]), static_cast<int>(c[1]));
                    const C::word add = C::add(wa, wb), add_max = C::add_max(wa, wb, wc);
                    const C::word add_max_relu = C::add_max_relu(wa, wb, wc), add_min = C::add_min(wa, wb, wc);
                    const C::word mx = C::max(wa, wb), max_relu = C::max_relu(wa, wb);
                    const C::word max3 = C::max3(wa, wb, wc), max3_relu = C::max3_relu(wa, wb, wc);
                    bool keep_hi = false, keep_lo = false;
                    const C::word kept = C::max_keep(wa, wb, keep_hi, keep_lo);
                    for (int h = 0; h < 2; ++h) {
                        const long long sum = wrap_to(a[h] + b[h], 16);
                        bad.check(C::lane(wa, h) == a[h], Args{"pack", a[h], 0, 0, h});
                        bad.check(C::lane(add, h) == sum, Args{"add", a[h], b[h], 0, h});
                        bad.check(C::lane(add_max, h) == std::max(sum, c[h]), Args{"add_max", a[h], b[h], c[h], h});
                        bad.check(C::lane(add_max_relu, h) == std::max({sum, c[h], 0LL}),
                                  Args{"add_max_relu", a[h], b[h], c[h], h});
                        bad.check(C::lane(add_min, h) == std::min(sum, c[h]), Args{"add_min", a[h], b[h], c[h], h});
                        bad.check(C::lane(mx, h) == std::max(a[h], b[h]), Args{"max", a[h], b[h], 0, h});
                        bad.check(C::lane(max_relu, h) == std::max({a[h], b[h], 0LL}),
                                  Args{"max_relu", a[h], b[h], 0, h});
                        bad.check(C::lane(max3, h) == std::max({a[h], b[h], c[h]}), Args{"max3", a[h], b[h], c[h], h});
                        bad.check(C::lane(max3_relu, h) == std::max({a[h], b[h], c[h], 0LL}),
                                  Args{"max3_relu", a[h], b[h], c[h], h});
                        bad.check(C::lane(kept, h) == std::max(a[h], b[h]) && (h ? keep_hi : keep_lo) == (a[h] >= b[h]),
                                  Args{"max_keep", a[h], b[h], 0, h});
                    }
                    bad.check(C::equal_any(wa, wb) == (a[0] == b[0] || a[1] == b[1]), Args{"equal_any", a[0], b[0], 0});
                }
        QVERIFY2(bad.count == 0,
                 qPrintable(QString::number(bad.count) + " mismatches, first " + QString::fromStdString(bad.first)));
    }

    void cell16x2_lane_masks_select_their_lanes() {
        using C = Cell16x2;
        const C::word a = C::pack(-7, 300), b = C::pack(12, -32768);
        for (bool lo : {false, true})
            for (bool hi : {false, true}) {
                const C::word s = C::select(C::lane_mask(lo, hi), a, b);
                QCOMPARE(C::lo(s), lo ? -7 : 12);
                QCOMPARE(C::hi(s), hi ? 300 : -32768);
            }
        QCOMPARE(C::splat(-5), C::pack(-5, -5));
    }

    // The biased cells' Ho = H - open as one 32-bit IMAD over both lanes: exact
    // whenever the low lane holds at least open (every biased H does), for
    // every open up to the largest penalty the 16-bit passes take.
    void cell16x2_imad_subtracts_open_from_both_lanes_without_a_borrow() {
        using C = Cell16x2;
        const std::vector<long long> highs = lane_values(16, 40);
        Mismatches bad;
        for (int open = 0; open <= C::kMaxPenalty; open += (open < 64 ? 1 : 37)) {
            const C::word minus_open_word = 0u - C::splat(open);
            for (long long low = open; low <= 32767; low += (low < open + 300 ? 1 : 97))
                for (long long high : highs) {
                    const C::word h = C::pack(static_cast<int>(low), static_cast<int>(high));
                    const C::word ho = C::add_imad(h, minus_open_word, 1u);
                    bad.check(C::lo(ho) == low - open && C::hi(ho) == wrap_to(high - open, 16),
                              Args{"add_imad", low, high, open});
                }
        }
        QVERIFY2(bad.count == 0,
                 qPrintable(QString::number(bad.count) + " mismatches, first " + QString::fromStdString(bad.first)));
    }

    void cell32_matches_scalar_arithmetic_on_every_triple() {
        using C = Cell32;
        const std::vector<long long> v = lane_values(32, 20);
        Mismatches bad;
        for (long long a : v)
            for (long long b : v)
                for (long long c : v) {
                    const auto wa = static_cast<C::word>(a), wb = static_cast<C::word>(b), wc = static_cast<C::word>(c);
                    const long long sum = wrap_to(a + b, 32);
                    bad.check(C::add(wa, wb) == sum, Args{"add", a, b, 0});
                    bad.check(C::add_max(wa, wb, wc) == std::max(sum, c), Args{"add_max", a, b, c});
                    bad.check(C::add_max_relu(wa, wb, wc) == std::max({sum, c, 0LL}), Args{"add_max_relu", a, b, c});
                    bad.check(C::add_min(wa, wb, wc) == std::min(sum, c), Args{"add_min", a, b, c});
                    bad.check(C::max(wa, wb) == std::max(a, b), Args{"max", a, b, 0});
                    bad.check(C::min(wa, wb) == std::min(a, b), Args{"min", a, b, 0});
                    bad.check(C::max_relu(wa, wb) == std::max({a, b, 0LL}), Args{"max_relu", a, b, 0});
                    bad.check(C::max3(wa, wb, wc) == std::max({a, b, c}), Args{"max3", a, b, c});
                    bad.check(C::max3_relu(wa, wb, wc) == std::max({a, b, c, 0LL}), Args{"max3_relu", a, b, c});
                    bad.check(C::add_imad(wa, wb, 1) == sum, Args{"add_imad", a, b, 1});
                    bad.check(C::equal_any(wa, wb) == (a == b), Args{"equal_any", a, b, 0});
                    bad.check(C::select(C::lane_mask(a < b, false), wa, wb) == (a < b ? a : b),
                              Args{"select", a, b, 0});
                }
        QVERIFY2(bad.count == 0,
                 qPrintable(QString::number(bad.count) + " mismatches, first " + QString::fromStdString(bad.first)));
        QCOMPARE(C::lane(C::pack(-9, 4), 0), -9);
        QCOMPARE(C::hi(C::splat(-9)), 0);
    }

    // affine_cell on Ho = H - open against the recurrence on H:
    //   E = max(E_left - e, H_left - o), F = max(F_up - e, H_up - o),
    //   H = max(H_diag + s, E, F[, 0]),
    // over every small input, at both widths (the 16-bit one with the high
    // lane on other inputs), and affine_cell_biased against the local cell
    // plus its bias.
    void affine_cells_follow_the_gotoh_recurrence() {
        Mismatches bad;
        const int range = 5;
        for (int o : {0, 1, 3})
            for (int e : {0, 1, 2})
                for (int s : {-4, 0, 3})
                    for (int hl = -range; hl <= range; ++hl)
                        for (int el = -range; el <= range; ++el)
                            for (int hu = -range; hu <= range; ++hu)
                                for (int fu = -range; fu <= range; ++fu)
                                    for (int hd = -range; hd <= range; hd += 2)
                                        check_cell(bad, o, e, s, hl, el, hu, fu, hd);
        QVERIFY2(bad.count == 0,
                 qPrintable(QString::number(bad.count) + " mismatches, first " + QString::fromStdString(bad.first)));
    }

    void exact_is_tight_at_the_16_bit_limit() {
        for (int max_score : {0, 5, 11, 127})
            for (int bias : {0, 1, 11}) {
                const int limit = 32767 - max_score - bias;
                QVERIFY(Cell16x2::exact(limit, max_score, bias));
                QVERIFY(!Cell16x2::exact(limit + 1, max_score, bias));
            }
        QVERIFY(Cell16x2::exact(32767, -4));  // negative best scores add nothing
    }

private:
    static void check_cell(Mismatches& bad, int o, int e, int s, int hl, int el, int hu, int fu, int hd) {
        const int e_want = std::max(el - e, hl - o), f_want = std::max(fu - e, hu - o);
        const int global_want = std::max({hd + s, e_want, f_want}), local_want = std::max(global_want, 0);
        auto at = [=] {
            return "o=" + std::to_string(o) + " e=" + std::to_string(e) + " s=" + std::to_string(s) +
                   " H_left=" + std::to_string(hl) + " E=" + std::to_string(el) + " H_up=" + std::to_string(hu) +
                   " F=" + std::to_string(fu) + " H_diag=" + std::to_string(hd);
        };
        auto check = [&](auto cell, bool local) {
            using C = decltype(cell);
            using W = typename C::word;
            // The high lane of Cell16x2 gets the same cell with inputs shifted
            // by 7: every value moves by 7 (H, E and F alike).
            auto in = [](int x) { return C::pack(x, x + 7); };
            W ho_left = in(hl - o), e_run = in(el), f = in(fu);
            const W h = local ? affine_cell<C, true>(ho_left, e_run, f, in(hu - o), in(hd - o), C::splat(s + o),
                                                     C::splat(-o), C::splat(-e))
                              : affine_cell<C, false>(ho_left, e_run, f, in(hu - o), in(hd - o), C::splat(s + o),
                                                      C::splat(-o), C::splat(-e));
            const int want = local ? local_want : global_want;
            for (int lane = 0; lane < C::lanes; ++lane) {
                const int shift = 7 * lane;
                const int want_lane = local ? std::max(global_want + shift, 0) : want + shift;
                bad.check(C::lane(h, lane) == want_lane && C::lane(ho_left, lane) == want_lane - o &&
                              C::lane(e_run, lane) == e_want + shift && C::lane(f, lane) == f_want + shift,
                          [&] {
                              return std::string(local ? "local " : "global ") + std::to_string(C::bits) +
                                     "-bit lane " + std::to_string(lane) + " " + at();
                          });
            }
            if (!local) return;
            // Biased: every value + B (B = o), H = 0 held as B; the registers
            // then hold H + B - o = H after the cell.
            const int b = o;
            W bl = C::splat(hl - o + b), be = C::splat(el + b), bf = C::splat(fu + b);
            const W minus_open_word = static_cast<W>(W{0} - C::splat(o));
            const W bh = affine_cell_biased<C>(bl, be, bf, C::splat(hu - o + b), C::splat(hd - o + b), C::splat(s + o),
                                               C::splat(b), C::splat(-e), minus_open_word, W{1});
            for (int lane = 0; lane < C::lanes; ++lane)
                bad.check(C::lane(bh, lane) == local_want + b && C::lane(bl, lane) == local_want + b - o &&
                              C::lane(be, lane) == e_want + b && C::lane(bf, lane) == f_want + b,
                          [&] { return std::string("biased ") + std::to_string(C::bits) + "-bit " + at(); });
        };
        check(Cell16x2{}, false);
        check(Cell16x2{}, true);
        check(Cell32{}, false);
        check(Cell32{}, true);
    }
};

QTEST_GUILESS_MAIN(TestDpCell)
#include "test_dp_cell.moc"
