// Single linkage as Easel's esl_cluster_SingleLinkage() discovers it: the
// last unassigned domain starts a cluster; each domain taken from the
// cluster's stack scans the unassigned ones from the last to the first, and
// a linked one is replaced by the last unassigned one and pushed. Whether a
// domain at a position is linked does not depend on the removals during the
// scan (the one moved into a removed one's place has been scanned already),
// so a scan tests every position first, without branches, then replays the
// removals in the same order.
#include "domain_clustering.hpp"

#include <algorithm>
#include <cstdlib>

namespace alignscope::profile {

namespace {

constexpr int kMaxDiagonalDifference = 4;

// Coordinates up to kSmall: then an overlap nov of n (n <= kSmall) is short
// of 80 % exactly when 5 nov < 4 n. (No fraction of a denominator below
// 11.1 million lies between 26843545 / 2^25 and 4/5: they differ by
// 1.79e-8, fractions near 4/5 by 1 / (5 n) at least.)
constexpr int kSmall = 1 << 23;

// The unassigned domains' coordinates, in the order of `available`.
struct Columns {
    std::vector<int> i, j, k, m, len, mlen, start, end;
    void push(const SampledDomain& s) {
        i.push_back(s.i), j.push_back(s.j), k.push_back(s.k), m.push_back(s.m);
        len.push_back(s.j - s.i + 1), mlen.push_back(s.m - s.k + 1);
        start.push_back(s.i - s.k), end.push_back(s.j - s.m);
    }
    void move(std::size_t to, std::size_t from) {
        for (std::vector<int>* c : {&i, &j, &k, &m, &len, &mlen, &start, &end}) (*c)[to] = (*c)[from];
    }
};

// Whether v is linked to each of the first na columns, without branches
// (the columns as plain pointers, so that the loop vectorises).
#define ALIGNSCOPE_LINK_COLUMNS_BODY                                                                         \
    const int vlen = v.j - v.i + 1, vmlen = v.m - v.k + 1, vstart = v.i - v.k, vend = v.j - v.m;             \
    const int* __restrict ci = c.i.data(), * __restrict cj = c.j.data(), * __restrict ck = c.k.data();       \
    const int* __restrict cm = c.m.data(), * __restrict cl = c.len.data(), * __restrict cml = c.mlen.data(); \
    const int* __restrict cs = c.start.data(), * __restrict ce = c.end.data();                               \
    for (int a = 0; a < na; ++a) {                                                                           \
        const int nov1 = std::min(v.j, cj[a]) - std::max(v.i, ci[a]) + 1;                                    \
        const int nov2 = std::min(v.m, cm[a]) - std::max(v.k, ck[a]);                                        \
        const int target = 5 * nov1 >= 4 * std::min(vlen, cl[a]);                                            \
        const int model = 5 * nov2 >= 4 * std::min(vmlen, cml[a]);                                           \
        const int start = static_cast<unsigned>(vstart - cs[a] + kMaxDiagonalDifference) <=                  \
                          static_cast<unsigned>(2 * kMaxDiagonalDifference);                                 \
        const int end = static_cast<unsigned>(vend - ce[a] + kMaxDiagonalDifference) <=                      \
                        static_cast<unsigned>(2 * kMaxDiagonalDifference);                                   \
        hit[a] = target & model & (start | end);                                                             \
    }
#if defined(__x86_64__) && defined(__GNUC__)
#define ALIGNSCOPE_LINK_AVX2 1
__attribute__((target("avx2")))
#endif
void link_columns_avx2(const SampledDomain& v, const Columns& c, int na, int* __restrict hit) {
    ALIGNSCOPE_LINK_COLUMNS_BODY
}
void link_columns(const SampledDomain& v, const Columns& c, int na, int* __restrict hit) {
    ALIGNSCOPE_LINK_COLUMNS_BODY
}
#undef ALIGNSCOPE_LINK_COLUMNS_BODY
bool avx2() {
#if defined(ALIGNSCOPE_LINK_AVX2)
    static const bool available = __builtin_cpu_supports("avx2");
    return available;
#else
    return false;
#endif
}

bool small_coordinates(const std::vector<SampledDomain>& sp) {
    for (const SampledDomain& s : sp)
        if (s.i < 1 || s.j < s.i || s.j > kSmall || s.k < 1 || s.m < s.k || s.m > kSmall) return false;
    return true;
}

}  // namespace

bool linked(const SampledDomain& a, const SampledDomain& b) {
    int nov = std::min(a.j, b.j) - std::max(a.i, b.i) + 1;
    int n = std::min(a.j - a.i + 1, b.j - b.i + 1);
    if (below_min_overlap(nov, n)) return false;
    nov = std::min(a.m, b.m) - std::max(a.k, b.k);  // (HMMER counts the model overlap one short)
    n = std::min(a.m - a.k + 1, b.m - b.k + 1);
    if (below_min_overlap(nov, n)) return false;
    if (std::abs((a.i - a.k) - (b.i - b.k)) <= kMaxDiagonalDifference) return true;
    if (std::abs((a.j - a.m) - (b.j - b.m)) <= kMaxDiagonalDifference) return true;
    return false;
}

std::vector<int> single_linkage(const std::vector<SampledDomain>& sp, int& clusters) {
    const int n = static_cast<int>(sp.size());
    const bool small = small_coordinates(sp), wide = avx2();
    std::vector<int> available, pending, assignment(static_cast<std::size_t>(n), -1);
    Columns columns;
    for (int v = n - 1; v >= 0; --v) available.push_back(v), columns.push(sp[static_cast<std::size_t>(v)]);
    std::vector<int> hit(static_cast<std::size_t>(n));
    int na = n, nc = 0;
    while (na > 0) {
        pending.push_back(available[static_cast<std::size_t>(--na)]);
        while (!pending.empty()) {
            const int v = pending.back();
            pending.pop_back();
            assignment[static_cast<std::size_t>(v)] = nc;
            const SampledDomain& sv = sp[static_cast<std::size_t>(v)];
            if (!small)
                for (int a = 0; a < na; ++a)
                    hit[static_cast<std::size_t>(a)] =
                        linked(sv, sp[static_cast<std::size_t>(available[static_cast<std::size_t>(a)])]) ? 1 : 0;
            else if (wide)
                link_columns_avx2(sv, columns, na, hit.data());
            else
                link_columns(sv, columns, na, hit.data());
            for (int a = na - 1; a >= 0; --a) {
                if (!hit[static_cast<std::size_t>(a)]) continue;
                const std::size_t at = static_cast<std::size_t>(a), last = static_cast<std::size_t>(na - 1);
                pending.push_back(available[at]);
                available[at] = available[last];
                columns.move(at, last);
                --na;
            }
        }
        ++nc;
    }
    clusters = nc;
    return assignment;
}

}  // namespace alignscope::profile
