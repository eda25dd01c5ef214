// Posterior decoding, optimal accuracy and null2 over striped rows: each row
// is Q segments of four lanes, so the products of decoding are plain
// element-wise loops, the optimal accuracy DP runs on four lanes with its
// D->D paths in passes across lane boundaries (maxima, so the order of work
// does not change the result), and null2 sums the striped usage in HMMER's
// lane order before its horizontal sum.
#include "posterior_decoding.hpp"

#include "striped_float.hpp"

#include <alignscope/profile/residue_code.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__)  // (masks as SSE bit patterns)
#define ALIGNSCOPE_ACCURACY_AVX 1
#include <immintrin.h>
#else
#define ALIGNSCOPE_ACCURACY_AVX 0
#endif

namespace alignscope::profile {

namespace {

using namespace striped;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct ConstRow {
    const float *m, *i, *d;
};
struct Row {
    float *m, *i, *d;
};
ConstRow row_of(const DpMatrix& dp, int i) {
    const std::size_t r = dp.row(i);
    return {dp.mmx.data() + r, dp.imx.data() + r, dp.dmx.data() + dp.drow(i)};
}
Row row_of(DpMatrix& dp, int i) {
    const std::size_t r = dp.row(i);
    return {dp.mmx.data() + r, dp.imx.data() + r, dp.dmx.data() + dp.drow(i)};
}

}  // namespace

namespace {

// Row i of the posteriors: M and I cells (D's are not kept: no later stage
// reads them) and the N, J, C loops.
void decode_row(const LengthModel& length, const DpMatrix& fwd, const DpMatrix& bck, float scaleproduct, int i,
                DpMatrix& pp) {
    const std::size_t W = pp.width();
    const float totr = scaleproduct * fwd.x(i, DpMatrix::Scale);
    const ConstRow f = row_of(fwd, i), b = row_of(bck, i);
    const Row p = row_of(pp, i);
    for (std::size_t c = 0; c < W; ++c) {
        p.m[c] = f.m[c] * b.m[c] * totr;
        p.i[c] = f.i[c] * b.i[c] * totr;
    }
    pp.x(i, DpMatrix::N) = fwd.x(i - 1, DpMatrix::N) * bck.x(i, DpMatrix::N) * length.loop * scaleproduct;
    pp.x(i, DpMatrix::J) = fwd.x(i - 1, DpMatrix::J) * bck.x(i, DpMatrix::J) * length.loop * scaleproduct;
    pp.x(i, DpMatrix::C) = fwd.x(i - 1, DpMatrix::C) * bck.x(i, DpMatrix::C) * length.loop * scaleproduct;
}

}  // namespace

namespace {

// D->D paths of an optimal accuracy row: a first pass along the segments,
// then up to three more across lane boundaries while any D improves.
void accuracy_deletes(Profile p, F4 dcv, float* d) {
    const int Q = p.Q;
    dcv = shift_up(dcv, kNegInf);
    for (int q = 0; q < Q; ++q) {
        const F4 best = max4(dcv, at(d, q));
        put(d, q, best);
        dcv = gate(p.at(DD, q), best);
    }
    for (int j = 1; j < 4; ++j) {
        dcv = shift_up(dcv, kNegInf);
        F4 changed = zero4();
        for (int q = 0; q < Q; ++q) {
            const F4 old = at(d, q);
            const F4 best = max4(dcv, old);
            changed = or4(changed, greater_mask(best, old));
            put(d, q, best);
            dcv = gate(p.at(DD, q), dcv);
        }
        if (!any_set(changed)) break;
    }
}

// Masks of the possible transitions (all bits set where the probability is
// above 0, else none) of arrays BM..DD in the striped layout, so that a gate
// is one AND: the same values HMMER's comparison then AND give.
struct TransitionMasks {
    std::vector<float> bits;
    int W = 0;  // 4Q
    const float* of(int array) const { return bits.data() + static_cast<std::size_t>(array * W); }
};
const TransitionMasks& transition_masks(Profile p) {
    thread_local TransitionMasks masks;
    masks.W = 4 * p.Q;
    masks.bits.resize(static_cast<std::size_t>(Match * masks.W));
    for (int a = 0; a < Match; ++a)
        for (int q = 0; q < p.Q; ++q)
            put(masks.bits.data() + static_cast<std::size_t>(a * masks.W), q, possible(p.at(a, q)));
    return masks;
}

// A row's first segment: node 1's M has only B (and -infinity from node 0),
// and lanes 1..3 read the previous row's last segment, shifted.
F4 accuracy_first_segment(const TransitionMasks& g, F4 xBv, ConstRow post, Row prev, Row cur) {
    const int last = g.W / 4 - 1;
    const F4 mpv = shift_up(at(prev.m, last), kNegInf);
    const F4 dpv = shift_up(at(prev.d, last), kNegInf);
    const F4 ipv = shift_up(at(prev.i, last), kNegInf);
    F4 sv = and4(at(g.of(BM), 0), xBv);
    sv = max4(sv, and4(at(g.of(MM), 0), mpv));
    sv = max4(sv, and4(at(g.of(IM), 0), ipv));
    sv = max4(sv, and4(at(g.of(DM), 0), dpv));
    sv = sv + at(post.m, 0);
    put(cur.m, 0, sv);
    put(cur.i, 0, max4(and4(at(g.of(MI), 0), at(prev.m, 0)), and4(at(g.of(II), 0), at(prev.i, 0))) + at(post.i, 0));
    put(cur.d, 0, splat(kNegInf));
    return sv;
}

// M and I of cells c = from..W-1 (c = 4q + lane; the diagonal predecessor
// of cell c is c - 4 of the previous row, for c >= 4), four at a time; and
// D of those cells from M of c - 4 (the first pass of D->D comes after).
void accuracy_cells(const TransitionMasks& g, float xB, ConstRow post, Row prev, Row cur, int from) {
    const F4 xBv = splat(xB);
    for (int c = from; c < g.W; c += 4) {
        const std::size_t b = static_cast<std::size_t>(c) - 4, o = static_cast<std::size_t>(c);
        F4 sv = and4(load(g.of(BM) + o), xBv);
        sv = max4(sv, and4(load(g.of(MM) + o), load(prev.m + b)));
        sv = max4(sv, and4(load(g.of(IM) + o), load(prev.i + b)));
        sv = max4(sv, and4(load(g.of(DM) + o), load(prev.d + b)));
        store(cur.m + o, sv + load(post.m + o));
        store(cur.i + o, max4(and4(load(g.of(MI) + o), load(prev.m + o)), and4(load(g.of(II) + o), load(prev.i + o))) +
                             load(post.i + o));
    }
    for (int c = std::max(from, 4); c < g.W; c += 4) {
        const std::size_t b = static_cast<std::size_t>(c) - 4;
        store(cur.d + static_cast<std::size_t>(c), and4(load(g.of(MD) + b), load(cur.m + b)));
    }
}

#if ALIGNSCOPE_ACCURACY_AVX
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx")
#endif
// accuracy_cells eight cells at a time (each cell's value is its own max and
// sum, whatever the width); returns the first cell it left.
int accuracy_cells_avx(const TransitionMasks& g, float xB, ConstRow post, Row prev, Row cur) {
    const __m256 xBv = _mm256_set1_ps(xB);
    const float *bm = g.of(BM), *mm = g.of(MM), *im = g.of(IM), *dm = g.of(DM), *mi = g.of(MI), *ii = g.of(II);
    const float* md = g.of(MD);
    int c = 4;
    for (; c + 8 <= g.W; c += 8) {
        const std::size_t b = static_cast<std::size_t>(c) - 4, o = static_cast<std::size_t>(c);
        __m256 sv = _mm256_and_ps(_mm256_loadu_ps(bm + o), xBv);
        sv = _mm256_max_ps(sv, _mm256_and_ps(_mm256_loadu_ps(mm + o), _mm256_loadu_ps(prev.m + b)));
        sv = _mm256_max_ps(sv, _mm256_and_ps(_mm256_loadu_ps(im + o), _mm256_loadu_ps(prev.i + b)));
        sv = _mm256_max_ps(sv, _mm256_and_ps(_mm256_loadu_ps(dm + o), _mm256_loadu_ps(prev.d + b)));
        _mm256_storeu_ps(cur.m + o, _mm256_add_ps(sv, _mm256_loadu_ps(post.m + o)));
        const __m256 iv = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(mi + o), _mm256_loadu_ps(prev.m + o)),
                                        _mm256_and_ps(_mm256_loadu_ps(ii + o), _mm256_loadu_ps(prev.i + o)));
        _mm256_storeu_ps(cur.i + o, _mm256_add_ps(iv, _mm256_loadu_ps(post.i + o)));
    }
    for (int d = 4; d + 8 <= c; d += 8) {
        const std::size_t b = static_cast<std::size_t>(d) - 4;
        _mm256_storeu_ps(cur.d + static_cast<std::size_t>(d),
                         _mm256_and_ps(_mm256_loadu_ps(md + b), _mm256_loadu_ps(cur.m + b)));
    }
    return c;
}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
bool accuracy_avx() {
    static const bool available = __builtin_cpu_supports("avx");
    return available;
}
#endif

// The best M or D of a row, per lane over the segments in order, as HMMER
// takes it. Without NaNs (no cell holds -0 either: sums of posteriors and
// gated maxima are +0 at least), a maximum is the same value in any order, so
// four running maxima over every fourth segment give it with a shorter chain;
// a row with a NaN is taken in order.
float row_end(int Q, Row cur) {
    F4 x[4] = {splat(kNegInf), splat(kNegInf), splat(kNegInf), splat(kNegInf)};
    F4 nan = zero4();
    int q = 0;
    for (; q + 4 <= Q; q += 4)
        for (int z = 0; z < 4; ++z) {
            const F4 m = at(cur.m, q + z), d = at(cur.d, q + z);
            nan = or4(nan, unordered_mask(m, d));
            x[z] = max4(max4(x[z], m), d);
        }
    for (; q < Q; ++q) {
        const F4 m = at(cur.m, q), d = at(cur.d, q);
        nan = or4(nan, unordered_mask(m, d));
        x[0] = max4(max4(x[0], m), d);
    }
    if (!any_set(nan)) return lane_max(max4(max4(x[0], x[1]), max4(x[2], x[3])));
    F4 xEv = splat(kNegInf);
    for (q = 0; q < Q; ++q) xEv = max4(max4(xEv, at(cur.m, q)), at(cur.d, q));
    return lane_max(xEv);
}

// One optimal accuracy row from the previous one; returns the row's E (the
// best M or D, unused lanes' 0 included as in HMMER's striped maximum; a
// maximum does not depend on the order it is taken in).
float accuracy_row(Profile p, const TransitionMasks& g, ConstRow post, Row prev, Row cur, float xB) {
    const int Q = p.Q;
    accuracy_first_segment(g, splat(xB), post, prev, cur);
    int from = 4;
#if ALIGNSCOPE_ACCURACY_AVX
    if (accuracy_avx()) from = accuracy_cells_avx(g, xB, post, prev, cur);
#endif
    accuracy_cells(g, xB, post, prev, cur, from);
    const F4 dcv = and4(at(g.of(MD), Q - 1), at(cur.m, Q - 1));
    accuracy_deletes(p, dcv, cur.d);
    return row_end(Q, cur);
}

void accuracy_specials(const ForwardProfile& om, const LengthModel& length, const DpMatrix& pp, DpMatrix& ox, int i,
                       float xE) {
    ox.x(i, DpMatrix::E) = xE;
    float t1 = length.loop == 0.0f ? 0.0f : ox.x(i - 1, DpMatrix::J) + pp.x(i, DpMatrix::J);
    float t2 = om.e_loop == 0.0f ? 0.0f : xE;
    ox.x(i, DpMatrix::J) = std::max(t1, t2);
    t1 = length.loop == 0.0f ? 0.0f : ox.x(i - 1, DpMatrix::C) + pp.x(i, DpMatrix::C);
    t2 = om.e_move == 0.0f ? 0.0f : xE;
    ox.x(i, DpMatrix::C) = std::max(t1, t2);
    ox.x(i, DpMatrix::N) = length.loop == 0.0f ? 0.0f : ox.x(i - 1, DpMatrix::N) + pp.x(i, DpMatrix::N);
    t1 = length.move == 0.0f ? 0.0f : ox.x(i, DpMatrix::N);
    t2 = length.move == 0.0f ? 0.0f : ox.x(i, DpMatrix::J);
    ox.x(i, DpMatrix::B) = std::max(t1, t2);
}

}  // namespace

namespace {

void accuracy_first_row(int M, int L, int Q, DpMatrix& ox) {
    ox.resize(M, L, true);
    const Row first = row_of(ox, 0);
    for (int q = 0; q < Q; ++q)
        put(first.m, q, splat(kNegInf)), put(first.i, q, splat(kNegInf)), put(first.d, q, splat(kNegInf));
    ox.x(0, DpMatrix::E) = kNegInf;
    ox.x(0, DpMatrix::N) = 0.0f;
    ox.x(0, DpMatrix::J) = kNegInf;
    ox.x(0, DpMatrix::B) = 0.0f;
    ox.x(0, DpMatrix::C) = kNegInf;
}

}  // namespace

namespace {

// Per-thread striped work rows for the null2 usage counts.
std::vector<float>& usage_buffer(std::size_t n, int which) {
    thread_local std::vector<float> buffers[2];
    std::vector<float>& b = buffers[which];
    b.assign(n, 0.0f);
    return b;
}

// null2[x0..x0+G-1] from the striped usage: G residues segment by segment,
// each with its own lanes summing as HMMER's (match use x emission odds, then
// insert use, per segment; then the horizontal sum and the special share), so
// G independent chains run at once.
template <int G>
void null2_sums(const Profile& p, const float* match_use, const float* insert_use, int x0, float special_use,
                float* null2) {
    F4 sv[G];
    const float* e[G];
    for (int g = 0; g < G; ++g) sv[g] = zero4(), e[g] = p.match(x0 + g);
    if (insert_use) {
        for (int q = 0; q < p.Q; ++q) {
            const F4 m = at(match_use, q), ins = at(insert_use, q);
            for (int g = 0; g < G; ++g) sv[g] = (sv[g] + m * at(e[g], q)) + ins;
        }
    } else {
        for (int q = 0; q < p.Q; ++q) {
            const F4 m = at(match_use, q);
            for (int g = 0; g < G; ++g) sv[g] = sv[g] + m * at(e[g], q);
        }
    }
    for (int g = 0; g < G; ++g) null2[x0 + g] = lane_sum(sv[g]) + special_use;
}

// null2 odds from striped usage frequencies: per residue x, the lanes sum
// match use times x's emission odds and insert use (odds 1), segment by
// segment; then the horizontal sum and the N, C, J share (odds 1). Degenerate
// codes take the mean of the residues they stand for.
std::vector<float> null2_from_usage(const ForwardProfile& om, const float* match_use, const float* insert_use,
                                    float special_use, ResidueAlphabet alphabet) {
    const ResidueCode& code = ResidueCode::of(alphabet);
    const Profile p(om);
    const int K = code.canonical(), Kp = code.all_codes();
    std::vector<float> null2(static_cast<std::size_t>(Kp), 1.0f);
    int x0 = 0;
    for (; x0 + 8 <= K; x0 += 8) null2_sums<8>(p, match_use, insert_use, x0, special_use, null2.data());
    for (; x0 + 4 <= K; x0 += 4) null2_sums<4>(p, match_use, insert_use, x0, special_use, null2.data());
    for (; x0 < K; ++x0) null2_sums<1>(p, match_use, insert_use, x0, special_use, null2.data());
    for (int x = K + 1; x <= Kp - 3; ++x) {
        float result = 0.0f, denom = 0.0f;
        for (int y = 0; y < K; ++y)
            if (code.stands_for(x, y)) {
                result += null2[static_cast<std::size_t>(y)];
                denom += 1.0f;
            }
        null2[static_cast<std::size_t>(x)] = result / denom;
    }
    null2[static_cast<std::size_t>(code.gap())] = 1.0f;
    null2[static_cast<std::size_t>(code.nonresidue())] = 1.0f;
    null2[static_cast<std::size_t>(code.missing())] = 1.0f;
    return null2;
}

}  // namespace

namespace {

// Expected uses of each state over an envelope, summed row after row as
// HMMER sums them (row 1 copied, then each row added), then the null2 odds.
class ExpectedUsage {
public:
    explicit ExpectedUsage(std::size_t W) : match_(usage_buffer(W, 0)), insert_(usage_buffer(W, 1)), W_(W) {}
    void add(const DpMatrix& pp, int i) {
        const ConstRow r = row_of(pp, i);
        if (i == 1) {
            std::copy(r.m, r.m + W_, match_.begin());
            std::copy(r.i, r.i + W_, insert_.begin());
            n_ = pp.x(1, DpMatrix::N), c_ = pp.x(1, DpMatrix::C), j_ = pp.x(1, DpMatrix::J);
            return;
        }
        for (std::size_t s = 0; s < W_; ++s) {
            match_[s] = r.m[s] + match_[s];
            insert_[s] = r.i[s] + insert_[s];
        }
        n_ += pp.x(i, DpMatrix::N);
        c_ += pp.x(i, DpMatrix::C);
        j_ += pp.x(i, DpMatrix::J);
    }
    std::vector<float> null2(const ForwardProfile& om, int Ld, ResidueAlphabet alphabet) {
        const float norm = static_cast<float>(1.0 / static_cast<float>(Ld));
        for (std::size_t s = 0; s < W_; ++s) {
            match_[s] *= norm;
            insert_[s] *= norm;
        }
        return null2_from_usage(om, match_.data(), insert_.data(), n_ * norm + c_ * norm + j_ * norm, alphabet);
    }

private:
    std::vector<float>& match_;
    std::vector<float>& insert_;
    std::size_t W_;
    float n_ = 0, c_ = 0, j_ = 0;
};

}  // namespace

std::optional<float> decode_and_align(const ForwardProfile& om, const LengthModel& length, const DpMatrix& fwd,
                                      const DpMatrix& bck, DpMatrix& pp, DpMatrix& ox, ResidueAlphabet alphabet,
                                      std::vector<float>* null2) {
    const int L = fwd.L;
    float scaleproduct = static_cast<float>(1.0 / bck.x(0, DpMatrix::N));
    if (std::isinf(scaleproduct)) return std::nullopt;
    pp.resize(fwd.M, L, true);
    const Profile p(om);
    accuracy_first_row(om.length, L, p.Q, ox);
    const TransitionMasks& masks = transition_masks(p);
    ExpectedUsage usage(pp.width());
    for (int i = 1; i <= L; ++i) {
        decode_row(length, fwd, bck, scaleproduct, i, pp);
        // A Backward with factors of its own: the product of the rows'
        // Forward over Backward factors so far.
        if (bck.own_scales) scaleproduct *= fwd.x(i, DpMatrix::Scale) / bck.x(i, DpMatrix::Scale);
        if (null2) usage.add(pp, i);
        const float xE = accuracy_row(p, masks, row_of(static_cast<const DpMatrix&>(pp), i), row_of(ox, i - 1),
                                      row_of(ox, i), ox.x(i - 1, DpMatrix::B));
        accuracy_specials(om, length, pp, ox, i, xE);
    }
    // The posteriors overflowed (HMMER's range error): no domain here.
    if (std::isinf(scaleproduct)) return std::nullopt;
    if (null2) *null2 = usage.null2(om, L, alphabet);
    return ox.x(L, DpMatrix::C);
}

std::vector<float> null2_by_trace(const ForwardProfile& om, const std::vector<TraceStep>& tr, int zstart, int zend,
                                  ResidueAlphabet alphabet) {
    const int Q = om.segments;
    std::vector<float>& match = usage_buffer(static_cast<std::size_t>(Q) * 4, 0);
    float n = 0.0f, c = 0.0f, j = 0.0f;
    int Ld = 0;
    for (int z = zstart; z <= zend; ++z) {
        const TraceStep& s = tr[static_cast<std::size_t>(z)];
        if (s.i == 0) continue;
        ++Ld;
        // HMMER counts an insert's residue on its node's match state.
        if (s.k > 0) match[static_cast<std::size_t>(((s.k - 1) % Q) * 4 + (s.k - 1) / Q)] += 1.0f;
        else if (s.state == TraceStep::N)
            n += 1.0f;
        else if (s.state == TraceStep::C)
            c += 1.0f;
        else if (s.state == TraceStep::J)
            j += 1.0f;
    }
    const float norm = static_cast<float>(1.0 / static_cast<float>(Ld));
    for (float& m : match) m *= norm;
    n *= norm;
    c *= norm;
    j *= norm;
    // No insert use: the counts above put inserts on their match states.
    return null2_from_usage(om, match.data(), nullptr, n + c + j, alphabet);
}

std::vector<float> null2_by_nodes(const ForwardProfile& om, const int* nodes, int count, ResidueAlphabet alphabet) {
    const int Q = om.segments;
    std::vector<float>& match = usage_buffer(static_cast<std::size_t>(Q) * 4, 0);
    // (Counts of whole numbers: the same in any order.)
    for (int z = 0; z < count; ++z)
        match[static_cast<std::size_t>(((nodes[z] - 1) % Q) * 4 + (nodes[z] - 1) / Q)] += 1.0f;
    const float norm = static_cast<float>(1.0 / static_cast<float>(count));
    for (float& m : match) m *= norm;
    // No N, C or J step lies between B and E: their shares are 0 x norm.
    float n = 0.0f, c = 0.0f, j = 0.0f;
    n *= norm;
    c *= norm;
    j *= norm;
    return null2_from_usage(om, match.data(), nullptr, n + c + j, alphabet);
}

}  // namespace alignscope::profile
