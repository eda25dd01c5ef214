// The engine's heatmap downsampler against its oracle: max-pooling, written out
// here cell by cell, of the full H/E/F matrices of compute_dp_matrices, for
// every mode and gap model, whole matrices and zoomed regions, grids finer and
// coarser than the region, and passes started from saved rows.
#include <alignscope/align/dp_heatmap.hpp>
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <algorithm>

using namespace alignscope;

namespace {

// Block maxima of `full` over `region`, as the header defines the blocks.
std::vector<std::int64_t> pool(const DpMatrices& dp, DpState state, const DpRegion& region, int grid_rows,
                               int grid_cols, int& rows, int& cols) {
    const std::vector<std::int64_t>& full = state == DpState::H ? dp.H : state == DpState::E ? dp.E : dp.F;
    rows = static_cast<int>(std::min<std::int64_t>(grid_rows, region.rows()));
    cols = static_cast<int>(std::min<std::int64_t>(grid_cols, region.cols()));
    std::vector<std::int64_t> out(static_cast<std::size_t>(rows) * cols, DpMatrices::minus_infinity);
    for (std::int64_t i = region.row_begin; i < region.row_end; ++i)
        for (std::int64_t j = region.col_begin; j < region.col_end; ++j) {
            const auto r = (i - region.row_begin) * rows / region.rows();
            const auto c = (j - region.col_begin) * cols / region.cols();
            auto& cell = out[static_cast<std::size_t>(r * cols + c)];
            cell = std::max(cell, full[static_cast<std::size_t>(i * dp.cols + j)]);
        }
    for (auto& v : out)
        if (v <= DpMatrices::minus_infinity) v = DpMatrices::minus_infinity;
    return out;
}

struct Setup {
    ScoringScheme scheme;
    AlignOptions options;
};

Setup make_setup(const QString& mode, bool affine, bool protein) {
    Setup s;
    const SubstitutionMatrix m =
        protein ? SubstitutionMatrix::builtin("BLOSUM62") : SubstitutionMatrix::match_mismatch(2, -3);
    s.scheme = affine ? ScoringScheme::create(m, 10, 0.5) : ScoringScheme::create(m, 4, 4);
    s.options.mode = parse_mode(mode.toStdString());
    if (mode == "semiglobal") s.options.free_ends = FreeEndGaps::parse("qb,te");
    return s;
}

}  // namespace

class TestDpHeatmap : public QObject {
    Q_OBJECT
private slots:
    void equals_max_pooling_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("affine");
        QTest::addColumn<bool>("protein");
        for (const char* mode : {"global", "local", "semiglobal"})
            for (const bool affine : {false, true})
                for (const bool protein : {false, true})
                    QTest::addRow("%s-%s-%s", mode, affine ? "affine" : "linear", protein ? "protein" : "dna")
                        << QString(mode) << affine << protein;
    }
    void equals_max_pooling() {
        QFETCH(QString, mode);
        QFETCH(bool, affine);
        QFETCH(bool, protein);
        const Setup s = make_setup(mode, affine, protein);
        SeededRandom random(qHash(QString(QTest::currentDataTag())));
        const AlphabetKind kind = protein ? AlphabetKind::Protein : AlphabetKind::Dna;
        const std::string query = random_residues(random, kind, 157);
        const std::string target = mutate_residues(random, kind, query, 0.2, 0.05) + random_residues(random, kind, 31);
        const DpMatrices dp = compute_dp_matrices(query, target, s.scheme, s.options);

        const std::vector<DpRegion> regions{
            DpRegion::whole(dp.rows - 1, dp.cols - 1),
            {0, 1, 0, dp.cols},                            // the boundary row alone
            {40, 97, 13, 120},                             // a zoomed view
            {dp.rows - 5, dp.rows, dp.cols - 9, dp.cols},  // the far corner
        };
        const std::vector<std::pair<int, int>> grids{{1, 1}, {7, 13}, {64, 50}, {400, 400}};
        for (const DpState state : {DpState::H, DpState::E, DpState::F})
            for (const DpRegion& region : regions)
                for (const auto& [gr, gc] : grids) {
                    DpHeatmapRequest request;
                    request.region = region;
                    request.grid_rows = gr;
                    request.grid_cols = gc;
                    request.state = state;
                    const DpHeatmap map = compute_dp_heatmap(query, target, s.scheme, s.options, request);
                    int rows = 0, cols = 0;
                    const auto expected = pool(dp, state, region, gr, gc, rows, cols);
                    QCOMPARE(map.rows, rows);
                    QCOMPARE(map.cols, cols);
                    QVERIFY2(map.values == expected, qPrintable(QString("state %1 region %2..%3 x %4..%5 grid %6x%7")
                                                                    .arg(int(state))
                                                                    .arg(region.row_begin)
                                                                    .arg(region.row_end)
                                                                    .arg(region.col_begin)
                                                                    .arg(region.col_end)
                                                                    .arg(gr)
                                                                    .arg(gc)));
                }
    }

    void starts_from_saved_rows() {
        const Setup s = make_setup("local", true, true);
        SeededRandom random(7);
        const std::string query = random_residues(random, AlphabetKind::Protein, 120);
        const std::string target = mutate_residues(random, AlphabetKind::Protein, query, 0.3, 0.03);
        const DpMatrices dp = compute_dp_matrices(query, target, s.scheme, s.options);
        const auto saved = save_dp_rows(query, target, s.scheme, s.options, {90, 0, 30, 60});
        QCOMPARE(saved.size(), std::size_t(4));
        for (const DpRowCheckpoint& row : saved) {
            QCOMPARE(row.H.size(), std::size_t(dp.cols));
            for (std::int64_t j = 0; j < dp.cols; ++j) {
                QCOMPARE(row.H[std::size_t(j)], dp.h(row.row, j));
                QCOMPARE(row.F[std::size_t(j)], dp.F[std::size_t(row.row * dp.cols + j)]);
            }
        }
        // A region starting at row 75 from the checkpoint at row 60: same grid,
        // far fewer cells.
        for (const DpState state : {DpState::H, DpState::E, DpState::F}) {
            DpHeatmapRequest request;
            request.region = {75, dp.rows, 10, 100};
            request.grid_rows = 11;
            request.grid_cols = 17;
            request.state = state;
            request.start = &saved[2];
            const DpHeatmap from_saved = compute_dp_heatmap(query, target, s.scheme, s.options, request);
            int rows = 0, cols = 0;
            QVERIFY(from_saved.values == pool(dp, state, request.region, 11, 17, rows, cols));
            QCOMPARE(from_saved.cells_computed, std::uint64_t(dp.rows - 1 - 60) * 99);
        }
    }

    void refuses_bad_requests() {
        const Setup s = make_setup("global", true, false);
        DpHeatmapRequest request;
        request.region = {0, 12, 0, 5};  // the query has 10 residues: rows 0..10
        QVERIFY_THROWS_EXCEPTION(Error, compute_dp_heatmap("ACGTACGTAC", "ACGTACGT", s.scheme, s.options, request));
        request.region = {};
        request.grid_rows = 0;
        QVERIFY_THROWS_EXCEPTION(Error, compute_dp_heatmap("ACGTACGTAC", "ACGTACGT", s.scheme, s.options, request));
        request.grid_rows = 4;
        DpRowCheckpoint below{5, std::vector<std::int64_t>(9), std::vector<std::int64_t>(9)};
        request.region = {2, 8, 0, 9};
        request.start = &below;
        QVERIFY_THROWS_EXCEPTION(Error, compute_dp_heatmap("ACGTACGTAC", "ACGTACGT", s.scheme, s.options, request));
        request.start = nullptr;
        QVERIFY_THROWS_EXCEPTION(Error, compute_dp_heatmap("", "ACGT", s.scheme, s.options, request));
        CancellationToken cancel;
        cancel.cancel();
        const std::string long_query(800, 'A');
        request.region = {};
        request.cancel = &cancel;
        QVERIFY_THROWS_EXCEPTION(Cancelled, compute_dp_heatmap(long_query, long_query, s.scheme, s.options, request));
    }
};

QTEST_APPLESS_MAIN(TestDpHeatmap)
#include "test_dp_heatmap.moc"
