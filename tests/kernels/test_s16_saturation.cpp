// The 16-bit DPX arithmetic and its saturation rule, on the CPU: the kernels'
// own cell update (kernels/common/dp_cell.hpp, exact emulation of Hopper's
// VIADDMNMX/VIMNMX on .S16x2) runs a whole DP with two pairs packed in one
// register, and is compared with the 64-bit CPU reference. Where the rule
// says the pass is exact, the score must equal the reference; where the 16-bit
// score is wrong, the rule must have said so (the kernel then recomputes at
// 32 bits). Identical long sequences drive the scores past 32,767.
#include "../../kernels/common/dp_cell.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <random>

using namespace alignscope;
using namespace alignscope::kernels;
using C = dp::Cell16x2;
using word = C::word;

namespace {

struct LaneResult {
    int score = 0;
    int largest = C::kNeg;
    bool exact = false;
};

// Runs two pairs through the packed recurrence, pair A in the low half and
// pair B in the high half, the shorter one padded with score-0 cells, and
// returns each lane's best (local) or corner (global) score and its rule.
std::array<LaneResult, 2> packed_dp(const EncodedSequence* q, const EncodedSequence* t, const ScoringScheme& scheme,
                                    bool local) {
    const int rows = static_cast<int>(std::max(q[0].size(), q[1].size()));
    const int cols = static_cast<int>(std::max(t[0].size(), t[1].size()));
    const int o = scheme.gap_open, e = scheme.gap_extend;
    auto gap = [&](int k) { return local || k == 0 ? 0 : -(o + (k - 1) * e); };
    const word neg_open = C::pack(-o, -o), neg_extend = C::pack(-e, -e);
    // The kernels keep Ho = H - open and add s + open on the diagonal; local
    // passes hold every value plus a bias of open (affine_cell_biased).
    const int bias = local ? o : 0;
    const word zero = C::pack(bias, bias), minus_open_word = 0u - C::pack(o, o);
    std::vector<word> h(static_cast<std::size_t>(cols) + 1),
        f(static_cast<std::size_t>(cols) + 1, C::pack(C::kNeg, C::kNeg));
    for (int j = 0; j <= cols; ++j) h[static_cast<std::size_t>(j)] = C::pack(gap(j) - o + bias, gap(j) - o + bias);
    auto score = [&](int lane, int i, int j) {
        const auto& qs = q[lane];
        const auto& ts = t[lane];
        if (i > static_cast<int>(qs.size()) || j > static_cast<int>(ts.size())) return 0;
        return scheme.matrix.score(qs[static_cast<std::size_t>(i - 1)], ts[static_cast<std::size_t>(j - 1)]);
    };
    std::array<LaneResult, 2> out;
    std::array<int, 2> best{0, 0};
    std::array<int, 2> corner{0, 0};
    for (int i = 1; i <= rows; ++i) {
        word diag = h[0];
        word left = C::pack(gap(i) - o + bias, gap(i) - o + bias);
        h[0] = left;
        word e_run = C::pack(C::kNeg, C::kNeg);
        for (int j = 1; j <= cols; ++j) {
            const auto col = static_cast<std::size_t>(j);
            word fj = f[col];
            const word up = h[col];
            const word s = C::pack(score(0, i, j) + o, score(1, i, j) + o);
            const word cell =
                local ? dp::affine_cell_biased<C>(left, e_run, fj, up, diag, s, zero, neg_extend, minus_open_word, 1u)
                      : dp::affine_cell<C, false>(left, e_run, fj, up, diag, s, neg_open, neg_extend);
            diag = up;
            h[col] = left;
            f[col] = fj;
            for (int lane = 0; lane < 2; ++lane) {
                if (i > static_cast<int>(q[lane].size()) || j > static_cast<int>(t[lane].size())) continue;
                const int v = (lane ? C::hi(cell) : C::lo(cell)) - bias;
                out[static_cast<std::size_t>(lane)].largest = std::max(out[static_cast<std::size_t>(lane)].largest, v);
                best[static_cast<std::size_t>(lane)] = std::max(best[static_cast<std::size_t>(lane)], v);
                if (i == static_cast<int>(q[lane].size()) && j == static_cast<int>(t[lane].size()))
                    corner[static_cast<std::size_t>(lane)] = v;
            }
        }
    }
    for (int lane = 0; lane < 2; ++lane) {
        auto& r = out[static_cast<std::size_t>(lane)];
        r.score = local ? best[static_cast<std::size_t>(lane)] : corner[static_cast<std::size_t>(lane)];
        r.exact = C::exact(r.largest, scheme.matrix.max_score(), bias);
    }
    return out;
}

std::int64_t reference_score(const std::string& q, const std::string& t, const ScoringScheme& scheme, bool local) {
    AlignOptions options;
    options.mode = local ? AlignmentMode::Local : AlignmentMode::Global;
    options.traceback = false;
    return align_reference(q, t, scheme, options).score;
}

std::string random_protein(std::mt19937& rng, std::size_t length) {
    static const std::string amino = "ARNDCQEGHILKMFPSTWYV";
    std::string s(length, 'A');
    for (auto& c : s) c = amino[rng() % amino.size()];
    return s;
}

}  // namespace

class TestS16Saturation : public QObject {
    Q_OBJECT

private slots:
    void exact_passes_give_the_reference_score_data() {
        QTest::addColumn<bool>("local");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::newRow("local 11/1") << true << 11.0 << 1.0;
        QTest::newRow("local linear 4/4") << true << 4.0 << 4.0;
        QTest::newRow("global 10/0.5") << false << 10.0 << 0.5;
        QTest::newRow("global linear 2/2") << false << 2.0 << 2.0;
    }
    void exact_passes_give_the_reference_score() {
        QFETCH(bool, local);
        QFETCH(double, open);
        QFETCH(double, extend);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), open, extend);
        std::mt19937 rng(11);
        for (int trial = 0; trial < 30; ++trial) {
            std::string qs[2], ts[2];
            EncodedSequence q[2], t[2];
            for (int lane = 0; lane < 2; ++lane) {
                qs[lane] = random_protein(rng, 1 + rng() % 150);
                ts[lane] = trial % 3 ? random_protein(rng, 1 + rng() % 150) : qs[lane];
                q[lane] = encode(qs[lane], scheme.matrix, "query");
                t[lane] = encode(ts[lane], scheme.matrix, "target");
            }
            const auto got = packed_dp(q, t, scheme, local);
            for (int lane = 0; lane < 2; ++lane) {
                QVERIFY(got[static_cast<std::size_t>(lane)].exact);
                QCOMPARE(static_cast<std::int64_t>(got[static_cast<std::size_t>(lane)].score),
                         reference_score(qs[lane], ts[lane], scheme, local));
            }
        }
    }

    // Identical sequences score length x self-score; around 32,767 the lane
    // wraps. The rule must flag every wrong lane and pass every exact one that
    // stays clear of the limit; the other lane is never disturbed.
    void saturation_is_always_detected_data() {
        QTest::addColumn<int>("length");
        for (int length : {2900, 2970, 2975, 2977, 2978, 2979, 2985, 3100, 3500})
            QTest::newRow(qPrintable(QString("W x %1").arg(length))) << length;
    }
    void saturation_is_always_detected() {
        QFETCH(int, length);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        const int self = scheme.matrix.score(scheme.matrix.index_of('W'), scheme.matrix.index_of('W'));
        QCOMPARE(self, 11);
        const std::string long_one(static_cast<std::size_t>(length), 'W');
        const std::string short_one = "HEAGAWGHEE";
        const std::string other = "PAWHEAE";
        EncodedSequence q[2] = {encode(long_one, scheme.matrix, "q"), encode(short_one, scheme.matrix, "q")};
        EncodedSequence t[2] = {encode(long_one, scheme.matrix, "t"), encode(other, scheme.matrix, "t")};
        const auto got = packed_dp(q, t, scheme, true);
        const std::int64_t want = static_cast<std::int64_t>(length) * self;
        QCOMPARE(reference_score(long_one, long_one, scheme, true), want);
        const bool right = got[0].score == want;
        QVERIFY2(right || !got[0].exact, "a wrong 16-bit score was not flagged");
        // Local passes hold H + open (affine_cell_biased), so the limit is
        // open lower; the rule is tight here: H never exceeds the score.
        const int bias = scheme.gap_open;
        QCOMPARE(got[0].exact, want + self + bias <= 32767);
        if (want + bias > 32767) QVERIFY(!right);  // the lane really wrapped
        QVERIFY(got[1].exact);
        QCOMPARE(static_cast<std::int64_t>(got[1].score), reference_score(short_one, other, scheme, true));
    }

    // Random near-limit pairs: related long sequences with scores around the
    // limit; never a wrong score that the rule lets through.
    void no_wrong_score_is_ever_trusted() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        std::mt19937 rng(29);
        int flagged = 0, trusted = 0;
        for (int trial = 0; trial < 6; ++trial) {
            std::string a = std::string(static_cast<std::size_t>(3000 + rng() % 1500), 'W');
            for (auto& c : a)
                if (rng() % 20 == 0) c = "ACDW"[rng() % 4];
            std::string b = a;
            for (auto& c : b)
                if (rng() % 25 == 0) c = 'G';
            EncodedSequence q[2] = {encode(a, scheme.matrix, "q"), encode(b, scheme.matrix, "q")};
            EncodedSequence t[2] = {encode(b, scheme.matrix, "t"), encode(a, scheme.matrix, "t")};
            const auto got = packed_dp(q, t, scheme, true);
            const std::int64_t want0 = reference_score(a, b, scheme, true), want1 = reference_score(b, a, scheme, true);
            for (auto [r, want] : {std::pair{got[0], want0}, std::pair{got[1], want1}}) {
                if (r.exact) {
                    QCOMPARE(static_cast<std::int64_t>(r.score), want);
                    ++trusted;
                } else {
                    ++flagged;
                }
            }
        }
        QVERIFY(flagged > 0);
        QVERIFY(trusted + flagged == 12);
    }
};

QTEST_GUILESS_MAIN(TestS16Saturation)
#include "test_s16_saturation.moc"
