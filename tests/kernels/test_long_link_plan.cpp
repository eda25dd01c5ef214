// The CUDA long-pair runner's plan for the slices of a streamed split
// (kernels/long/long_batch_plan.hpp): a pass with a link in or out is a
// slice pass and always runs tall strips, so that both ends of a link count
// its rows in the same strips, whatever its height or a forced kernel; a
// linked left edge takes no words of the launch's left-column buffer beyond
// an explicit one's, and a linked right edge none of its last-column buffer.
// Host logic only: no GPU needed.
#include "../../kernels/long/long_batch_plan.hpp"

#include <QtTest>

#include <memory>

using namespace alignscope;
using namespace alignscope::kernels::longpass;
using longpair::BoundaryLink;
using longpair::Edge;
using longpair::PassTask;

namespace {

PassTask slice_pass(std::int64_t rows, bool in, bool out) {
    PassTask t;
    t.row_end = rows;
    t.col_begin = 100;
    t.col_end = 300;
    t.top = Edge::Explicit;
    t.top_h.assign(201, 0);
    t.top_f.assign(201, longpair::kNegInf);
    if (in) {
        t.left = Edge::Explicit;
        t.left_link = std::make_shared<BoundaryLink>();
    }
    if (out) t.right_link = std::make_shared<BoundaryLink>();
    return t;
}

}  // namespace

class TestLongLinkPlan : public QObject {
    Q_OBJECT

private slots:
    void linked_passes_are_tall_slices() {
        for (const bool in : {false, true})
            for (const bool out : {false, true}) {
                TaskList tasks{slice_pass(1000, in, out)};
                const BatchTraits b = batch_traits(tasks, 0, 1);
                QCOMPARE(b.linked, in || out);
                QCOMPARE(b.slice, in || out);
                for (const int forced : {0, StripPolicy::short_rows, StripPolicy::tall_rows}) {
                    // 1000 rows are far from filling a GPU of 132 SMs: without a
                    // link the short strips (or the forced height) would run.
                    const int R = choose_rows_per_lane(b, {132, 4000, 1000, forced});
                    QCOMPARE(R, in || out ? StripPolicy::tall_rows : (forced ? forced : StripPolicy::short_rows));
                }
            }
        // An overview keeps its own (tall) height.
        TaskList tasks{slice_pass(1000, true, true)};
        tasks[0].overview_rows = tasks[0].overview_cols = 4;
        QCOMPARE(choose_rows_per_lane(batch_traits(tasks, 0, 1), {132, 4000, 1000, 0}), StripPolicy::overview_rows);
    }

    void linked_layout() {
        TaskList tasks{slice_pass(1000, true, true), slice_pass(500, false, false)};
        const BatchLayout l = plan_batch_layout(tasks, 0, 2);
        QCOMPARE(l.col_words, std::size_t{0});            // the last column leaves through the link
        QCOMPARE(l.left_words, std::size_t{3 * 1001});    // at most what an explicit column would take
        QCOMPARE(l.bus_words, std::size_t{2 * 201 * 2});  // a bus (H and F of a row) per task
    }
};

QTEST_GUILESS_MAIN(TestLongLinkPlan)
#include "test_long_link_plan.moc"
