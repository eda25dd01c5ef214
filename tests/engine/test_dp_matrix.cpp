// The teaching matrices: H, E and F against matrices worked out by hand and
// against a plain triple loop written from the recurrences in
// reference_aligner.hpp; the path's shape and endpoints; the cell limit.
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <random>
#include <string>
#include <vector>

using namespace alignscope;

namespace {

constexpr std::int64_t inf = DpMatrices::minus_infinity;

using Grid = std::vector<std::vector<std::int64_t>>;

void compare_grid(const std::vector<std::int64_t>& got, std::int64_t cols, const Grid& expected, const char* name) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
        for (std::size_t j = 0; j < expected[i].size(); ++j) {
            const std::int64_t value = got[i * static_cast<std::size_t>(cols) + j];
            QVERIFY2(
                value == expected[i][j],
                qPrintable(
                    QString("%1(%2,%3) = %4, expected %5").arg(name).arg(i).arg(j).arg(value).arg(expected[i][j])));
        }
    }
}

// The recurrences, cell by cell. Boundaries: row 0 / column 0 are 0 where the
// mode makes them free (and are then no gap state), else a gap from (0, 0).
struct Loop {
    Grid H, E, F;
};

Loop fill(const std::string& q, const std::string& t, const ScoringScheme& s, const AlignOptions& o) {
    const std::size_t m = q.size(), n = t.size();
    const bool local = o.mode == AlignmentMode::Local;
    const bool semi = o.mode == AlignmentMode::SemiGlobal;
    const bool top_free = local || (semi && o.free_ends.query_begin);
    const bool left_free = local || (semi && o.free_ends.target_begin);
    Loop l;
    l.H.assign(m + 1, std::vector<std::int64_t>(n + 1, inf));
    l.E = l.F = l.H;
    l.H[0][0] = 0;
    for (std::size_t j = 1; j <= n; ++j) {
        l.H[0][j] = top_free ? 0 : -(s.gap_open + std::int64_t(j - 1) * s.gap_extend);
        if (!top_free) l.E[0][j] = l.H[0][j];
    }
    for (std::size_t i = 1; i <= m; ++i) {
        l.H[i][0] = left_free ? 0 : -(s.gap_open + std::int64_t(i - 1) * s.gap_extend);
        if (!left_free) l.F[i][0] = l.H[i][0];
    }
    for (std::size_t i = 1; i <= m; ++i) {
        for (std::size_t j = 1; j <= n; ++j) {
            l.E[i][j] = std::max(l.H[i][j - 1] - s.gap_open, l.E[i][j - 1] - s.gap_extend);
            l.F[i][j] = std::max(l.H[i - 1][j] - s.gap_open, l.F[i - 1][j] - s.gap_extend);
            const std::int64_t diag =
                l.H[i - 1][j - 1] + s.matrix.score(s.matrix.index_of(q[i - 1]), s.matrix.index_of(t[j - 1]));
            l.H[i][j] = std::max({diag, l.E[i][j], l.F[i][j], local ? std::int64_t(0) : inf});
        }
    }
    return l;
}

}  // namespace

class TestDpMatrix : public QObject {
    Q_OBJECT

private slots:
    void global_linear_by_hand() {
        // Match 1, mismatch -1, every gap position 2.
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), 2, 2);
        const DpMatrices d = compute_dp_matrices("AC", "AG", s, AlignOptions());
        QCOMPARE(d.rows, std::int64_t(3));
        QCOMPARE(d.cols, std::int64_t(3));
        compare_grid(d.H, d.cols, {{0, -2, -4}, {-2, 1, -1}, {-4, -1, 0}}, "H");
        compare_grid(d.E, d.cols, {{inf, -2, -4}, {inf, -4, -1}, {inf, -6, -3}}, "E");
        compare_grid(d.F, d.cols, {{inf, inf, inf}, {-2, -4, -6}, {-4, -1, -3}}, "F");
        const std::vector<std::pair<std::int64_t, std::int64_t>> path{{0, 0}, {1, 1}, {2, 2}};
        QCOMPARE(d.path, path);
        QCOMPARE(d.alignment.score, std::int64_t(0));
        QCOMPARE(d.alignment.cigar.to_string(), std::string("1=1X"));
    }

    void local_affine_by_hand() {
        // Match 2, mismatch -3, gap 5 + (k-1)*2. The best cell is (3,2): AT/AT.
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        AlignOptions o;
        o.mode = AlignmentMode::Local;
        const DpMatrices d = compute_dp_matrices("CAT", "ATA", s, o);
        compare_grid(d.H, d.cols, {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 2, 0, 2}, {0, 0, 4, 0}}, "H");
        compare_grid(d.E, d.cols, {{inf, inf, inf, inf}, {inf, -5, -5, -5}, {inf, -5, -3, -5}, {inf, -5, -5, -1}}, "E");
        compare_grid(d.F, d.cols, {{inf, inf, inf, inf}, {inf, -5, -5, -5}, {inf, -5, -5, -5}, {inf, -3, -5, -3}}, "F");
        const std::vector<std::pair<std::int64_t, std::int64_t>> path{{2, 1}, {3, 2}};
        QCOMPARE(d.path, path);
        QCOMPARE(d.alignment.score, std::int64_t(4));
        QCOMPARE(d.alignment.query_begin, std::int64_t(2));
        QCOMPARE(d.alignment.target_begin, std::int64_t(1));
        QCOMPARE(d.alignment.cigar.to_string(), std::string("2="));
    }

    void semiglobal_free_row_by_hand() {
        // Query inside the target (qb, qe): row 0 is 0 and is no gap state.
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), 2, 1);
        AlignOptions o;
        o.mode = AlignmentMode::SemiGlobal;
        o.free_ends = FreeEndGaps::parse("qb,qe");
        const DpMatrices d = compute_dp_matrices("A", "GAG", s, o);
        // H(1,j) = max(0 + s, E, F): -1, 1, max(-1, 1-2) = -1.
        compare_grid(d.H, d.cols, {{0, 0, 0, 0}, {-2, -1, 1, -1}}, "H");
        compare_grid(d.E, d.cols, {{inf, inf, inf, inf}, {inf, -4, -3, -1}}, "E");
        compare_grid(d.F, d.cols, {{inf, inf, inf, inf}, {-2, -2, -2, -2}}, "F");
        const std::vector<std::pair<std::int64_t, std::int64_t>> path{{0, 1}, {1, 2}};
        QCOMPARE(d.path, path);
        QCOMPARE(d.alignment.target_begin, std::int64_t(2));
        QCOMPARE(d.alignment.target_end, std::int64_t(2));
    }

    void matches_the_recurrences_data() {
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::newRow("BLOSUM62 11/1") << "BLOSUM62" << 11.0 << 1.0;
        QTest::newRow("BLOSUM62 10/0.5") << "BLOSUM62" << 10.0 << 0.5;
        QTest::newRow("PAM30 linear 6/6") << "PAM30" << 6.0 << 6.0;
    }
    void matches_the_recurrences() {
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::builtin(matrix.toStdString()), open, extend);
        std::mt19937 rng(99);
        const std::string alphabet = "ARNDCQEGHILKMFPSTWYV";
        std::vector<AlignOptions> problems(3);
        problems[1].mode = AlignmentMode::Local;
        problems[2].mode = AlignmentMode::SemiGlobal;
        for (int bits = 0; bits < 16; ++bits) {
            AlignOptions o;
            o.mode = AlignmentMode::SemiGlobal;
            o.free_ends = {bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8)};
            problems.push_back(o);
        }
        for (int pair = 0; pair < 40; ++pair) {
            std::string q, t;
            for (unsigned k = 0, len = 1 + rng() % 25; k < len; ++k) q += alphabet[rng() % 20];
            for (unsigned k = 0, len = 1 + rng() % 25; k < len; ++k) t += alphabet[rng() % 20];
            for (const AlignOptions& o : problems) {
                const DpMatrices d = compute_dp_matrices(q, t, s, o);
                const Loop l = fill(q, t, s, o);
                compare_grid(d.H, d.cols, l.H, "H");
                compare_grid(d.E, d.cols, l.E, "E");
                compare_grid(d.F, d.cols, l.F, "F");
                if (QTest::currentTestFailed()) return;

                const Alignment ref = align_reference(q, t, s, o);
                QCOMPARE(d.alignment.score, ref.score);
                QCOMPARE(d.alignment.cigar, ref.cigar);
                QCOMPARE(d.alignment.query_begin, ref.query_begin);
                QCOMPARE(d.alignment.target_begin, ref.target_begin);
                if (ref.cigar.empty()) {
                    QVERIFY(d.path.empty());
                    continue;
                }
                // The path: one cell per column, after a start cell outside local mode.
                const bool local = o.mode == AlignmentMode::Local;
                QCOMPARE(std::int64_t(d.path.size()), ref.cigar.columns() + (local ? 0 : 1));
                const auto first = d.path.front();
                if (local) {
                    QCOMPARE(first, std::make_pair(ref.query_begin, ref.target_begin));
                } else {
                    QCOMPARE(first, std::make_pair(ref.query_begin - 1, ref.target_begin - 1));
                    // A start cell of H = 0: the origin or a free boundary.
                    QCOMPARE(d.h(first.first, first.second), std::int64_t(0));
                    if (o.mode == AlignmentMode::Global)
                        QCOMPARE(first, std::make_pair(std::int64_t(0), std::int64_t(0)));
                }
                QCOMPARE(d.path.back(), std::make_pair(ref.query_end, ref.target_end));
                QCOMPARE(d.h(ref.query_end, ref.target_end), ref.score);
                for (std::size_t k = 1; k < d.path.size(); ++k) {
                    const std::int64_t di = d.path[k].first - d.path[k - 1].first;
                    const std::int64_t dj = d.path[k].second - d.path[k - 1].second;
                    QVERIFY((di == 1 && dj == 1) || (di == 0 && dj == 1) || (di == 1 && dj == 0));
                }
            }
        }
    }

    void path_without_traceback() {
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        AlignOptions o;
        o.mode = AlignmentMode::Local;
        o.traceback = false;
        const DpMatrices d = compute_dp_matrices("HEAGAWGHEE", "PAWHEAE", s, o);
        QVERIFY(!d.alignment.has_traceback());
        QVERIFY(!d.path.empty());  // the teaching view still gets its path
        QCOMPARE(d.path.back(), std::make_pair(d.alignment.query_end, d.alignment.target_end));
    }

    void cell_limit() {
        const ScoringScheme s = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), 2, 1);
        const std::string q(99, 'A'), t(100, 'C');
        // 100 x 101 = 10100 cells.
        QVERIFY_THROWS_EXCEPTION(Error, compute_dp_matrices(q, t, s, AlignOptions(), 10099));
        const DpMatrices d = compute_dp_matrices(q, t, s, AlignOptions(), 10100);
        QCOMPARE(d.H.size(), std::size_t(10100));
        try {
            compute_dp_matrices(std::string(3000, 'A'), std::string(3000, 'C'), s, AlignOptions());
            QFAIL("no error above the default limit");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("limit") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestDpMatrix)
#include "test_dp_matrix.moc"
