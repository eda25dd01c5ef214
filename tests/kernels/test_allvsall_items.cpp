// The GPU all-against-all scorer's bookkeeping (kernels/allvsall/tile_items.hpp),
// checked against the engine's Tiling on the host: for triangles and
// rectangles of ragged sizes, every tile size and every group width the scan
// kernels use, the work items of a tile, read as the scorer reads the
// kernel's output (each item's runs of columns, both rows of each profile),
// land on every pair of the tile exactly once, at the index where
// Tiling::pairs lists that pair, and nowhere else. No GPU needed.
#include "../../kernels/allvsall/tile_items.hpp"

#include <alignscope/allvsall/tiling.hpp>

#include <QtTest>

using namespace alignscope;
using namespace alignscope::kernels::allvsall_gpu;

class TestAllVsAllItems : public QObject {
    Q_OBJECT

private slots:
    void items_cover_each_pair_once_in_tile_order_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("columns");  // 0 = the triangle
        QTest::newRow("triangle of 2") << 2 << 0;
        QTest::newRow("triangle of 17") << 17 << 0;
        QTest::newRow("triangle of 40") << 40 << 0;
        QTest::newRow("rectangle 1 x 9") << 1 << 9;
        QTest::newRow("rectangle 13 x 6") << 13 << 6;
        QTest::newRow("rectangle 21 x 34") << 21 << 34;
    }
    void items_cover_each_pair_once_in_tile_order() {
        QFETCH(int, rows);
        QFETCH(int, columns);
        std::vector<std::size_t> a, b;
        for (int k = 0; k < rows; ++k) a.push_back(static_cast<std::size_t>((k * 37) % 11 + 1));
        for (int k = 0; k < columns; ++k) b.push_back(static_cast<std::size_t>((k * 53) % 7 + 1));
        int checked = 0;
        for (std::uint32_t tile_size : {1u, 2u, 3u, 5u, 8u, 16u, 64u}) {
            const allvsall::Tiling tiling =
                columns ? allvsall::Tiling::rectangle(a, b, tile_size) : allvsall::Tiling::triangle(a, tile_size);
            const ProfileIndex index = ProfileIndex::pair_rows(tiling.rows(), tile_size);
            QCOMPARE(index.block_first.back(), std::uint32_t(index.first_row.size()));
            for (int groups : {1, 2, 8, 16, 32, 64}) {
                std::vector<allvsall::PairIndex> pairs;
                for (std::uint64_t t = 0; t < tiling.tile_count(); ++t) {
                    tiling.pairs(t, pairs);
                    const auto [ra, cb] = tiling.blocks(t);
                    TileSpan span;
                    span.row_begin = ra * tile_size;
                    span.row_end = std::min<std::uint32_t>(std::uint32_t(tiling.rows()), span.row_begin + tile_size);
                    span.column_begin = cb * tile_size;
                    span.column_end =
                        std::min<std::uint32_t>(std::uint32_t(tiling.columns()), span.column_begin + tile_size);
                    span.diagonal = tiling.is_triangle() && ra == cb;
                    const TileOrder order(span);
                    QCOMPARE(order.pair_count(), std::uint64_t(pairs.size()));
                    QCOMPARE(span.pair_count(), std::uint64_t(pairs.size()));
                    std::vector<Item> items;
                    for (std::uint32_t p = index.block_first[ra]; p < index.block_first[ra + 1]; ++p)
                        add_items(index, p, span, groups, items);
                    std::vector<int> hits(pairs.size(), 0);
                    for (const Item& it : items) {
                        const std::uint32_t r = index.first_row[std::size_t(it.profile)];
                        QVERIFY(r >= span.row_begin && r < span.row_end);
                        for (int g = 0; g < groups; ++g) {
                            const std::uint32_t q = std::uint32_t(it.column + g);
                            if (q >= span.column_end) break;
                            for (std::uint32_t lane = 0; lane < index.lanes[std::size_t(it.profile)]; ++lane) {
                                const std::int64_t at = order.index(r + lane, q);
                                if (at < 0) {
                                    // Only the diagonal's own and earlier columns are left out.
                                    QVERIFY(span.diagonal && q <= r + lane);
                                    continue;
                                }
                                QVERIFY(std::size_t(at) < pairs.size());
                                ++hits[std::size_t(at)];
                                std::uint32_t i = tiling.row_order()[r + lane], j = tiling.column_order()[q];
                                if (tiling.is_triangle() && j < i) std::swap(i, j);
                                QCOMPARE(pairs[std::size_t(at)], allvsall::PairIndex(i, j));
                            }
                        }
                    }
                    for (int h : hits) QCOMPARE(h, 1);
                    ++checked;
                }
            }
        }
        QVERIFY(checked > 0);
    }

    void rows_pair_inside_their_blocks() {
        const ProfileIndex index = ProfileIndex::pair_rows(11, 4);
        // Blocks [0,4) [4,8) [8,11): profiles (0,1) (2,3) (4,5) (6,7) (8,9) (10).
        QCOMPARE(index.first_row, (std::vector<std::uint32_t>{0, 2, 4, 6, 8, 10}));
        QCOMPARE(index.lanes, (std::vector<std::uint8_t>{2, 2, 2, 2, 2, 1}));
        QCOMPARE(index.block_first, (std::vector<std::uint32_t>{0, 2, 4, 6}));
        const ProfileIndex odd = ProfileIndex::pair_rows(7, 3);
        QCOMPARE(odd.first_row, (std::vector<std::uint32_t>{0, 2, 3, 5, 6}));
        QCOMPARE(odd.lanes, (std::vector<std::uint8_t>{2, 1, 2, 1, 1}));
    }
};

QTEST_GUILESS_MAIN(TestAllVsAllItems)
#include "test_allvsall_items.moc"
