// The DP heatmap and the teaching stepper. The stepper's own fill against
// compute_dp_matrices cell by cell in every mode and gap model, its fill orders
// (row-major prefix, whole rows, anti-diagonal wavefronts, always closed under
// the recurrence's dependencies), the recurrence text against numbers taken
// from the reference matrices, the traceback against the reference path, the
// rendered table, and its keys from anywhere in the window. The heatmap: path
// pixels where the path is, colours from the gradient elsewhere, hover values,
// the engine-downsampled view of a pair too large to show exactly and its
// refinement on zoom (against max-pooling of the full matrix), and heatmaps
// and alignments read from a project.
#include "views/heatmap/heatmap_view.hpp"
#include "views/heatmap/stepper_view.hpp"
#include "workbench_fixture.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QVBoxLayout>
#include <QtTest>

#include <fstream>
#include <set>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

struct Setup {
    ScoringScheme scheme;
    AlignOptions options;
    std::string query, target;
};

Setup make_setup(const QString& mode, const QString& gaps, bool protein, int m, int n, std::uint64_t seed) {
    Setup s;
    const SubstitutionMatrix matrix =
        protein ? SubstitutionMatrix::builtin("BLOSUM62") : SubstitutionMatrix::match_mismatch(2, -3);
    s.scheme = gaps == "linear" ? ScoringScheme::create(matrix, 3, 3)
               : gaps == "half" ? ScoringScheme::create(matrix, 10, 0.5)
                                : ScoringScheme::create(matrix, 11, 1);
    s.options.mode = parse_mode(mode.toStdString());
    if (s.options.mode == AlignmentMode::SemiGlobal) s.options.free_ends = FreeEndGaps::parse("qb,qe");
    SeededRandom random(seed);
    const AlphabetKind kind = protein ? AlphabetKind::Protein : AlphabetKind::Dna;
    s.query = random_residues(random, kind, m);
    s.target = fit_to_length(random, kind, mutate_residues(random, kind, s.query, 0.25, 0.08), n);
    return s;
}

std::string user(const ScoringScheme& scheme, std::int64_t v) {
    return v <= DpMatrices::minus_infinity / 2 ? "-∞" : format_score(scheme.to_user(v));
}

bool reddish(const QColor& c) {
    const QColor p = DpHeatmapView::pathColour();
    return std::abs(c.red() - p.red()) + std::abs(c.green() - p.green()) + std::abs(c.blue() - p.blue()) < 40;
}

QImage render(QCustomPlot* plot) {
    plot->replot(QCustomPlot::rpImmediateRefresh);
    return plot->toPixmap(plot->width(), plot->height()).toImage();
}

void show(QWidget& w, QSize size) {
    w.resize(size);
    w.show();
    QApplication::processEvents();
}

}  // namespace

class TestViewHeatmap : public QObject {
    Q_OBJECT
private slots:
    void stepperReproducesReference_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("gaps");
        QTest::addColumn<bool>("protein");
        for (const char* mode : {"global", "local", "semiglobal"})
            for (const char* gaps : {"linear", "affine", "half"})
                for (const bool protein : {false, true})
                    QTest::addRow("%s-%s-%s", mode, gaps, protein ? "protein" : "dna")
                        << QString(mode) << QString(gaps) << protein;
    }
    void stepperReproducesReference() {
        QFETCH(QString, mode);
        QFETCH(QString, gaps);
        QFETCH(bool, protein);
        const Setup s = make_setup(mode, gaps, protein, 23, 29, qHash(QString(QTest::currentDataTag())));
        DpStepper stepper(s.query, s.target, s.scheme, s.options);
        const DpMatrices dp = compute_dp_matrices(s.query, s.target, s.scheme, s.options);
        for (std::int64_t i = 0; i < dp.rows; ++i)
            for (std::int64_t j = 0; j < dp.cols; ++j) {
                const auto k = std::size_t(i * dp.cols + j);
                QCOMPARE(stepper.value(DpState::H, i, j), dp.H[k]);
                QCOMPARE(stepper.value(DpState::E, i, j), dp.E[k]);
                QCOMPARE(stepper.value(DpState::F, i, j), dp.F[k]);
            }
        // Traceback: the reference path, walked from its end.
        stepper.toFillEnd();
        QVERIFY(!stepper.inTraceback());
        std::int64_t steps = 0;
        while (stepper.advance(+1)) ++steps;
        QCOMPARE(steps, std::int64_t(dp.path.size()));
        auto traced = stepper.tracedCells();
        std::reverse(traced.begin(), traced.end());
        QVERIFY(traced == dp.path);
        QVERIFY(QString::fromStdString(stepper.explainTraceback()).contains("The traceback ends"));
    }

    void fillOrders() {
        const Setup s = make_setup("local", "affine", true, 7, 11, 5);
        DpStepper stepper(s.query, s.target, s.scheme, s.options);
        const std::int64_t m = 7, n = 11;
        // Closed under dependencies: each filled cell's three neighbours are filled.
        auto closed = [&] {
            for (std::int64_t i = 1; i <= m; ++i)
                for (std::int64_t j = 1; j <= n; ++j)
                    if (stepper.isFilled(i, j) &&
                        !(stepper.isFilled(i - 1, j - 1) && stepper.isFilled(i - 1, j) && stepper.isFilled(i, j - 1)))
                        return false;
            return true;
        };
        auto count = [&] {
            std::int64_t c = 0;
            for (std::int64_t i = 1; i <= m; ++i)
                for (std::int64_t j = 1; j <= n; ++j) c += stepper.isFilled(i, j);
            return c;
        };
        stepper.setStep(FillStep::Cell);
        for (std::int64_t k = 1; k <= m * n; ++k) {
            QVERIFY(stepper.advance(+1));
            QCOMPARE(stepper.filled(), k);
            QCOMPARE(count(), k);
            QVERIFY(closed());
            const auto c = *stepper.current();
            QCOMPARE(c, std::make_pair(1 + (k - 1) / n, 1 + (k - 1) % n));
        }
        stepper.toStart();
        stepper.setStep(FillStep::Row);
        for (std::int64_t r = 1; r <= m; ++r) {
            QVERIFY(stepper.advance(+1));
            QCOMPARE(stepper.filled(), r * n);
            QCOMPARE(*stepper.current(), std::make_pair(r, n));
        }
        QVERIFY(stepper.advance(-1));
        QCOMPARE(stepper.filled(), (m - 1) * n);
        stepper.toStart();
        stepper.setStep(FillStep::AntiDiagonal);
        for (std::int64_t d = 2; d <= m + n; ++d) {
            QVERIFY(stepper.advance(+1));
            // Exactly the cells with i + j <= d.
            for (std::int64_t i = 1; i <= m; ++i)
                for (std::int64_t j = 1; j <= n; ++j) QCOMPARE(stepper.isFilled(i, j), i + j <= d);
            QVERIFY(closed());
            QCOMPARE(stepper.current()->first + stepper.current()->second, d);
        }
        QCOMPARE(stepper.filled(), m * n);
        for (std::int64_t d = m + n - 1; d >= 1; --d) {
            QVERIFY(stepper.advance(-1));
            for (std::int64_t i = 1; i <= m; ++i)
                for (std::int64_t j = 1; j <= n; ++j) QCOMPARE(stepper.isFilled(i, j), i + j <= d);
        }
        QVERIFY(!stepper.advance(-1));
        // A single cell step inside the wavefront order keeps it closed too.
        stepper.setStep(FillStep::Cell);
        for (int k = 0; k < 20; ++k) stepper.advance(+1);
        stepper.setStep(FillStep::AntiDiagonal);
        QVERIFY(closed());
    }

    void recurrenceText_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("gaps");
        QTest::newRow("global-affine") << "global"
                                       << "affine";
        QTest::newRow("local-half") << "local"
                                    << "half";
        QTest::newRow("semiglobal-linear") << "semiglobal"
                                           << "linear";
        QTest::newRow("local-linear") << "local"
                                      << "linear";
    }
    void recurrenceText() {
        QFETCH(QString, mode);
        QFETCH(QString, gaps);
        const Setup s = make_setup(mode, gaps, true, 12, 14, 99);
        const DpMatrices dp = compute_dp_matrices(s.query, s.target, s.scheme, s.options);
        DpStepperView view;
        view.setPair(s.query, s.target, s.scheme, s.options);
        const bool local = mode == "local";
        for (const auto& [i, j] :
             std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {5, 7}, {12, 14}, {3, 1}}) {
            view.explainCell(i, j);
            const QStringList lines = view.recurrenceText().split('\n');
            auto h = [&](std::int64_t a, std::int64_t b) { return dp.H[std::size_t(a * dp.cols + b)]; };
            auto e = [&](std::int64_t a, std::int64_t b) { return dp.E[std::size_t(a * dp.cols + b)]; };
            auto f = [&](std::int64_t a, std::int64_t b) { return dp.F[std::size_t(a * dp.cols + b)]; };
            const char q = s.query[std::size_t(i - 1)], t = s.target[std::size_t(j - 1)];
            const std::int64_t sub = s.scheme.matrix.score(s.scheme.matrix.index_of(q), s.scheme.matrix.index_of(t));
            const std::string zero = local ? ", 0" : "";
            const std::string o = user(s.scheme, s.scheme.gap_open), x = user(s.scheme, s.scheme.gap_extend);
            const std::string last = "= " + user(s.scheme, h(i, j));
            if (gaps == "linear") {
                QCOMPARE(lines.size(), 4);
                QCOMPARE(lines[1].trimmed().toStdString(), "= max(" + user(s.scheme, h(i - 1, j - 1)) + " + " +
                                                               user(s.scheme, sub) + ", " +
                                                               user(s.scheme, h(i, j - 1)) + " - " + o + ", " +
                                                               user(s.scheme, h(i - 1, j)) + " - " + o + zero + ")");
                QVERIFY(lines[2].trimmed().endsWith(QString::fromStdString(last)));
            } else {
                QCOMPARE(lines.size(), 4);
                QCOMPARE(lines[0].toStdString(),
                         "E(" + std::to_string(i) + "," + std::to_string(j) + ") = max(H(" + std::to_string(i) + "," +
                             std::to_string(j - 1) + ") - open, E(" + std::to_string(i) + "," + std::to_string(j - 1) +
                             ") - extend) = max(" + user(s.scheme, h(i, j - 1)) + " - " + o + ", " +
                             user(s.scheme, e(i, j - 1)) + " - " + x + ") = " + user(s.scheme, e(i, j)));
                QVERIFY(lines[1].endsWith(QString::fromStdString(" = " + user(s.scheme, f(i, j)))));
                QVERIFY(
                    lines[1].contains(QString::fromStdString("max(" + user(s.scheme, h(i - 1, j)) + " - " + o + ", " +
                                                             user(s.scheme, f(i - 1, j)) + " - " + x + ")")));
                QCOMPARE(lines[2].toStdString(),
                         "H(" + std::to_string(i) + "," + std::to_string(j) + ") = max(H(" + std::to_string(i - 1) +
                             "," + std::to_string(j - 1) + ") + s(" + q + "," + t + "), E(" + std::to_string(i) + "," +
                             std::to_string(j) + "), F(" + std::to_string(i) + "," + std::to_string(j) + ")" + zero +
                             ") = max(" + user(s.scheme, h(i - 1, j - 1)) + " + " + user(s.scheme, sub) + ", " +
                             user(s.scheme, e(i, j)) + ", " + user(s.scheme, f(i, j)) + zero + ") " + last);
            }
            // Where it came from, by the reference values.
            const QString from = lines.last();
            QCOMPARE(from.contains("diagonal"), h(i, j) == h(i - 1, j - 1) + sub);
            QCOMPARE(from.contains("left"), h(i, j) == e(i, j));
            QCOMPARE(from.contains("above"), h(i, j) == f(i, j));
        }
        view.explainCell(0, 3);
        const bool free_row0 = local || mode == "semiglobal";
        QVERIFY(view.recurrenceText().contains(free_row0 ? "free end gap" : "leading gap of 3 target residues"));
    }

    void stepperTableRendering() {
        const Setup s = make_setup("global", "affine", false, 6, 8, 3);
        DpStepperView view;
        show(view, QSize(700, 600));
        view.setPair(s.query, s.target, s.scheme, s.options);
        view.setStep(FillStep::Cell);
        for (int k = 0; k < 11; ++k) view.stepForward();  // row 2, column 3 is current
        QCOMPARE(*view.stepper()->current(), std::make_pair(std::int64_t(2), std::int64_t(3)));
        QCOMPARE(view.statusText(), QString("Fill: 11 of 48 cells"));
        const QImage image = view.grid()->grab().toImage();
        // Bottom right inside the cell: clear of the arrows, which end top left.
        auto inside = [&](std::int64_t i, std::int64_t j) {
            return image.pixelColor(view.cellRect(i, j).bottomRight() - QPoint(5, 4));
        };
        QCOMPARE(inside(2, 3), QColor(255, 221, 87));   // current
        QCOMPARE(inside(5, 5), QColor(236, 236, 236));  // not yet filled
        QCOMPARE(inside(1, 5), QColor(Qt::white));      // filled
        // The neighbours' outlines, solid where the cell came from.
        const CellOrigin o = view.stepper()->origin(2, 3);
        auto outline = [&](std::int64_t i, std::int64_t j) {
            return image.pixelColor(view.cellRect(i, j).topLeft() + QPoint(2, 12));
        };
        if (o.diagonal) QCOMPARE(outline(1, 2), QColor(52, 101, 164));
        if (o.left) QCOMPARE(outline(2, 2), QColor(78, 154, 6));
        if (o.up) QCOMPARE(outline(1, 3), QColor(206, 92, 0));
        // The numbers shown are the reference's.
        QVERIFY(view.recurrenceText().startsWith("E(2,3)"));
        // Through the traceback: path cells turn salmon. (End stops at the end
        // of the fill first; pressed again it ends the traceback.)
        view.toEnd();
        QVERIFY(view.statusText().startsWith("Fill"));
        view.toEnd();
        const QImage done = view.grid()->grab().toImage();
        for (const auto& [i, j] : view.stepper()->reference().path) {
            const QColor c = done.pixelColor(view.cellRect(i, j).bottomRight() - QPoint(5, 4));
            // Salmon where the path is in the shown matrix (H), pale salmon
            // where it is in E or F only (inside a gap), yellow where it ends.
            QVERIFY(c == QColor(242, 143, 133) || c == QColor(250, 216, 212) || c == QColor(255, 221, 87));
        }
        QVERIFY(view.statusText().startsWith("Traceback"));
        QVERIFY_THROWS_EXCEPTION(Error,
                                 view.setPair(std::string(600, 'A'), std::string(600, 'A'), s.scheme, s.options));
    }

    // Stepping by anti-diagonal fills, and highlights, every cell of one
    // anti-diagonal at once (what one wavefront step of a GPU computes); by
    // row, the whole row; by cell, one cell.
    void antiDiagonalHighlight() {
        const Setup s = make_setup("global", "affine", true, 7, 9, 21);
        DpStepperView view;
        show(view, QSize(800, 600));
        view.setPair(s.query, s.target, s.scheme, s.options);
        view.setStep(FillStep::AntiDiagonal);
        for (int k = 0; k < 4; ++k) view.stepForward();  // anti-diagonals 2..5 filled
        const std::int64_t d = 5;
        std::vector<std::pair<std::int64_t, std::int64_t>> want;
        for (std::int64_t i = 1; i <= 7; ++i)
            if (d - i >= 1 && d - i <= 9) want.emplace_back(i, d - i);
        QCOMPARE(view.stepper()->lastStepCells(), want);
        QCOMPARE(int(want.size()), 4);
        const QImage image = view.grid()->grab().toImage();
        auto inside = [&](std::int64_t i, std::int64_t j) {
            return image.pixelColor(view.cellRect(i, j).bottomRight() - QPoint(5, 4));
        };
        for (const auto& [i, j] : want) QCOMPARE(inside(i, j), QColor(255, 221, 87));
        QCOMPARE(inside(1, 3), QColor(Qt::white));      // the anti-diagonal before: filled, not current
        QCOMPARE(inside(3, 3), QColor(236, 236, 236));  // the next one: not filled yet
        keep_screenshot(view, "stepper-antidiagonal");
        view.setStep(FillStep::Row);
        view.toStart();
        view.stepForward();
        view.stepForward();
        QCOMPARE(int(view.stepper()->lastStepCells().size()), 9);
        for (const auto& [i, j] : view.stepper()->lastStepCells()) QCOMPARE(i, std::int64_t(2));
        view.setStep(FillStep::Cell);
        view.stepForward();
        QCOMPARE(view.stepper()->lastStepCells(), (std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 1}}));
    }

    // E(i,j) reads H and E of the cell to its left, F(i,j) H and F of the cell
    // above: the terms with the engine's matrices, the winner marked, and in
    // the E and F tables the cells read are the ones outlined.
    void eAndFDependencies() {
        const Setup s = make_setup("local", "affine", true, 9, 11, 5);
        const DpMatrices dp = compute_dp_matrices(s.query, s.target, s.scheme, s.options);
        DpStepper stepper(s.query, s.target, s.scheme, s.options);
        auto at = [&](const std::vector<std::int64_t>& m, std::int64_t i, std::int64_t j) {
            return m[std::size_t(i * dp.cols + j)];
        };
        const std::int64_t o = s.scheme.gap_open, e = s.scheme.gap_extend;
        for (std::int64_t i = 1; i < dp.rows; ++i)
            for (std::int64_t j = 1; j < dp.cols; ++j) {
                const auto ed = stepper.dependencies(DpState::E, i, j);
                QCOMPARE(int(ed.size()), 2);
                QVERIFY(ed[0].state == DpState::H && ed[0].i == i && ed[0].j == j - 1);
                QVERIFY(ed[1].state == DpState::E && ed[1].i == i && ed[1].j == j - 1);
                QCOMPARE(ed[0].term, at(dp.H, i, j - 1) - o);
                if (at(dp.E, i, j - 1) > DpMatrices::minus_infinity / 2) QCOMPARE(ed[1].term, at(dp.E, i, j - 1) - e);
                QCOMPARE(ed[0].used, at(dp.E, i, j) == at(dp.H, i, j - 1) - o);
                QCOMPARE(ed[1].used, at(dp.E, i, j) == at(dp.E, i, j - 1) - e);
                QVERIFY(ed[0].used || ed[1].used);
                const auto fd = stepper.dependencies(DpState::F, i, j);
                QCOMPARE(int(fd.size()), 2);
                QVERIFY(fd[0].state == DpState::H && fd[0].i == i - 1 && fd[0].j == j);
                QVERIFY(fd[1].state == DpState::F && fd[1].i == i - 1 && fd[1].j == j);
                QCOMPARE(fd[0].term, at(dp.H, i - 1, j) - o);
                QCOMPARE(fd[0].used, at(dp.F, i, j) == at(dp.H, i - 1, j) - o);
                const auto hd = stepper.dependencies(DpState::H, i, j);
                QCOMPARE(int(hd.size()), 3);
                QCOMPARE(hd[1].term, at(dp.E, i, j));
                QCOMPARE(hd[2].term, at(dp.F, i, j));
            }
        // On screen: in the E table the left cell is outlined (green), the
        // cell above is not; in the F table the other way round.
        DpStepperView view;
        show(view, QSize(800, 600));
        view.setPair(s.query, s.target, s.scheme, s.options);
        view.setStep(FillStep::Cell);
        for (int k = 0; k < 11 * 2 + 4; ++k) view.stepForward();  // (3,4) is current
        QCOMPARE(*view.stepper()->current(), std::make_pair(std::int64_t(3), std::int64_t(4)));
        auto outline = [&](const QImage& image, std::int64_t i, std::int64_t j) {
            return image.pixelColor(view.cellRect(i, j).topLeft() + QPoint(2, 12));
        };
        const QColor green(78, 154, 6), orange(206, 92, 0);
        view.setShownState(DpState::E);
        QImage image = view.grid()->grab().toImage();
        QCOMPARE(outline(image, 3, 3), green);
        QVERIFY(outline(image, 2, 4) != orange);
        view.setShownState(DpState::F);
        image = view.grid()->grab().toImage();
        // The cell above, outlined at its left edge too (pixel 2 of its box).
        QCOMPARE(outline(image, 2, 4), orange);
        QVERIFY(outline(image, 3, 3) != green);
        view.setShownState(DpState::E);
        keep_screenshot(view, "stepper-e-dependencies");
    }

    // The traceback through H, E and F: the matrix the path is in at each
    // cell, checked against the engine's matrices: each move's value is the
    // next cell's value plus the substitution score (diagonal), minus open
    // (a gap opened from H) or minus extend (a gap going on in E or F), and a
    // switch at a cell joins two matrices holding the same value there. The
    // values chain to the alignment's score.
    void tracebackThroughThreeMatrices_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("gaps");
        QTest::addColumn<int>("seed");
        QTest::newRow("global-affine") << "global"
                                       << "affine" << 3;
        QTest::newRow("global-half") << "global"
                                     << "half" << 8;
        QTest::newRow("local-affine") << "local"
                                      << "affine" << 4;
        QTest::newRow("semiglobal-half") << "semiglobal"
                                         << "half" << 6;
    }
    void tracebackThroughThreeMatrices() {
        QFETCH(QString, mode);
        QFETCH(QString, gaps);
        QFETCH(int, seed);
        Setup s = make_setup(mode, gaps, true, 24, 30, std::uint64_t(seed));
        // A pair with gaps for sure: the query with three residues cut out.
        s.target = s.query.substr(0, 10) + s.query.substr(13) + s.target.substr(0, 6);
        DpStepper stepper(s.query, s.target, s.scheme, s.options);
        const DpMatrices& dp = stepper.reference();  // the engine's matrices and path
        const std::vector<TraceCell>& trace = stepper.trace();
        QCOMPARE(trace.size(), dp.path.size());
        auto value = [&](DpState st, std::int64_t i, std::int64_t j) {
            const auto k = std::size_t(i * dp.cols + j);
            return st == DpState::H ? dp.H[k] : st == DpState::E ? dp.E[k] : dp.F[k];
        };
        QCOMPARE(value(trace.front().enter, trace.front().i, trace.front().j), dp.alignment.score);
        QCOMPARE(trace.front().enter, DpState::H);
        int switches = 0;
        for (std::size_t k = 0; k < trace.size(); ++k) {
            const TraceCell& c = trace[k];
            QCOMPARE(std::make_pair(c.i, c.j), dp.path[dp.path.size() - 1 - k]);
            QCOMPARE(value(c.enter, c.i, c.j), value(c.leave, c.i, c.j));
            switches += c.switches();
            if (k + 1 == trace.size()) break;
            const TraceCell& n = trace[k + 1];
            std::int64_t change = 0;
            if (n.i == c.i - 1 && n.j == c.j - 1) {
                QCOMPARE(c.leave, DpState::H);
                QCOMPARE(n.enter, DpState::H);
                change = s.scheme.matrix.score(s.scheme.matrix.index_of(s.query[std::size_t(c.i - 1)]),
                                               s.scheme.matrix.index_of(s.target[std::size_t(c.j - 1)]));
            } else {
                QCOMPARE(c.leave, n.i == c.i ? DpState::E : DpState::F);
                QVERIFY(n.enter == DpState::H || n.enter == c.leave);
                change = n.enter == DpState::H ? -s.scheme.gap_open : -s.scheme.gap_extend;
            }
            QCOMPARE(value(c.leave, c.i, c.j), value(n.enter, n.i, n.j) + change);
        }
        QVERIFY2(switches > 0, "the pair has a gap, so the path switches into E or F");
        // Stepped: the text names the matrices and the switches.
        stepper.toFillEnd();
        bool said_switch = false, said_gap = false;
        while (stepper.advance(+1)) {
            const QString text = QString::fromStdString(stepper.explainTraceback());
            said_switch = said_switch || text.contains("switch from H to");
            said_gap = said_gap || text.contains("the gap opens here") || text.contains("the gap goes on");
        }
        QVERIFY(said_switch && said_gap);
        // Drawn: each walked path cell carries the matrix it is in.
        DpStepperView view;
        show(view, QSize(900, 700));
        view.setPair(s.query, s.target, s.scheme, s.options);
        view.toEnd();
        view.toEnd();
        QVERIFY(view.statusText().startsWith("Traceback"));
        for (const TraceCell& c : trace) {
            if (c.enter == DpState::H && c.leave == DpState::H) continue;
            view.setShownState(c.leave);
            const QImage image = view.grid()->grab().toImage();
            const QColor colour = image.pixelColor(view.cellRect(c.i, c.j).bottomRight() - QPoint(5, 4));
            QVERIFY(colour == QColor(242, 143, 133) || colour == QColor(255, 221, 87));
            if (mode == "global" && gaps == "affine" && !qEnvironmentVariableIsEmpty("ALIGNSCOPE_SCREENSHOT_DIR")) {
                // For the docs: a small pair, stepped back into its gap, E shown.
                DpStepperView small;
                show(small, QSize(760, 560));
                const std::string q = s.query.substr(0, 12);
                small.setPair(q, q.substr(0, 5) + q.substr(8), s.scheme, s.options);
                small.toEnd();
                small.toEnd();
                while (small.stepper()->tracebackDone() > 1 && !small.recurrenceText().contains("the gap goes on"))
                    small.stepBack();
                small.setShownState(DpState::F);
                keep_screenshot(small, "stepper-traceback-hef");
            }
            break;
        }
    }

    // Play steps on its own at the chosen speed, pauses at the end of the
    // fill, and on again through the traceback; Space plays and pauses while
    // the stepper has the focus; Home and End jump.
    void playPauseAndKeys() {
        const Setup s = make_setup("global", "affine", false, 5, 6, 2);
        DpStepperView view;
        show(view, QSize(700, 500));
        view.setPair(s.query, s.target, s.scheme, s.options);
        view.setStep(FillStep::AntiDiagonal);
        view.setSpeed(100);
        QCOMPARE(view.speed(), 100.0);
        QVERIFY(!view.playing());
        view.setPlaying(true);
        QVERIFY(view.playing());
        QTRY_VERIFY_WITH_TIMEOUT(!view.playing(), 5000);
        QCOMPARE(view.stepper()->filled(), view.stepper()->innerCells());
        QVERIFY(!view.stepper()->inTraceback());  // paused where End stops first
        view.setPlaying(true);
        QTRY_VERIFY_WITH_TIMEOUT(!view.playing(), 5000);
        QCOMPARE(view.stepper()->tracebackDone(), view.stepper()->tracebackSteps());
        // Keys, with the focus in the stepper's table.
        view.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&view));
        view.grid()->setFocus();
        QTest::keyClick(view.grid(), Qt::Key_Home);
        QCOMPARE(view.stepper()->filled(), std::int64_t(0));
        QTest::keyClick(view.grid(), Qt::Key_Right);
        QVERIFY(view.stepper()->filled() > 0);
        QTest::keyClick(view.grid(), Qt::Key_Left);
        QCOMPARE(view.stepper()->filled(), std::int64_t(0));
        QTest::keyClick(view.grid(), Qt::Key_End);
        QCOMPARE(view.stepper()->filled(), view.stepper()->innerCells());
        QVERIFY(!view.stepper()->inTraceback());
        QTest::keyClick(view.grid(), Qt::Key_Home);
        view.setSpeed(0.5);
        QTest::keyClick(view.grid(), Qt::Key_Space);
        QVERIFY(view.playing());
        QTest::keyClick(view.grid(), Qt::Key_Space);
        QVERIFY(!view.playing());
        // A new pair stops playing.
        view.setPlaying(true);
        view.setPair(s.query, s.target, s.scheme, s.options);
        QVERIFY(!view.playing());
    }

    // A click on a filled cell explains it; the residue headers beside and
    // above the table are not cells (the boundary column and row start after them).
    void clickExplainsTheCellUnderThePointer() {
        const Setup s = make_setup("global", "affine", false, 5, 6, 2);
        DpStepperView view;
        show(view, QSize(700, 500));
        view.setPair(s.query, s.target, s.scheme, s.options);
        view.toEnd();
        QCOMPARE(view.stepper()->filled(), view.stepper()->innerCells());
        QTest::mouseClick(view.grid(), Qt::LeftButton, {}, view.cellRect(2, 3).center());
        QVERIFY2(view.recurrenceText().contains("H(2,3) = "), qPrintable(view.recurrenceText()));
        const QString explained = view.recurrenceText();
        QTest::mouseClick(view.grid(), Qt::LeftButton, {},
                          QPoint(DpStepperView::cell_width / 2, view.cellRect(2, 0).center().y()));
        QCOMPARE(view.recurrenceText(), explained);
        QTest::mouseClick(view.grid(), Qt::LeftButton, {},
                          QPoint(view.cellRect(0, 3).center().x(), DpStepperView::cell_height / 2));
        QCOMPARE(view.recurrenceText(), explained);
        QTest::mouseClick(view.grid(), Qt::LeftButton, {}, view.cellRect(2, 0).center());
        QVERIFY2(view.recurrenceText().contains("(2,0)"), qPrintable(view.recurrenceText()));
    }

    // The stepper's keys from anywhere in its window while it is visible:
    // with the focus in a list or on a button elsewhere the arrows, Home and
    // End step; Space plays from the list but presses the focused button; a
    // text field keeps every key; and a stepper on a hidden tab takes none.
    void keysFromAnywhereInTheWindow() {
        const Setup s = make_setup("global", "affine", false, 5, 6, 2);
        QWidget window;
        auto* edit = new QLineEdit(QStringLiteral("abcdef"));
        auto* button = new QPushButton(QStringLiteral("Elsewhere"));
        auto* list = new QListWidget;
        list->addItems({QStringLiteral("one"), QStringLiteral("two")});
        auto* tabs = new QTabWidget;
        auto* view = new DpStepperView;
        auto* other = new QLabel(QStringLiteral("another tab"));
        tabs->addTab(view, QStringLiteral("stepper"));
        tabs->addTab(other, QStringLiteral("other"));
        auto* side = new QVBoxLayout;
        side->addWidget(edit);
        side->addWidget(button);
        side->addWidget(list, 1);
        auto* layout = new QHBoxLayout(&window);
        layout->addLayout(side);
        layout->addWidget(tabs, 1);
        show(window, QSize(900, 500));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        view->setPair(s.query, s.target, s.scheme, s.options);
        view->setStep(FillStep::Row);
        view->setSpeed(0.5);
        const std::int64_t row = std::int64_t(s.target.size());
        auto filled = [view] { return view->stepper()->filled(); };
        auto focus = [](QWidget* w) {
            w->setFocus();
            return QTest::qWaitFor([w] { return w->hasFocus(); }, 2000);
        };

        QVERIFY(focus(list));
        QTest::keyClick(list, Qt::Key_Right);
        QCOMPARE(filled(), row);
        QTest::keyClick(list, Qt::Key_Right);
        QCOMPARE(filled(), 2 * row);
        QTest::keyClick(list, Qt::Key_Left);
        QCOMPARE(filled(), row);
        QTest::keyClick(list, Qt::Key_End);
        QCOMPARE(filled(), view->stepper()->innerCells());
        QTest::keyClick(list, Qt::Key_Home);
        QCOMPARE(filled(), std::int64_t(0));
        QTest::keyClick(list, Qt::Key_Space);
        QVERIFY(view->playing());
        QTest::keyClick(list, Qt::Key_Space);
        QVERIFY(!view->playing());
        QVERIFY(list->hasFocus());  // the keys did not move the focus

        // A focused button: the arrows step, Space presses the button.
        QVERIFY(focus(button));
        QSignalSpy pressed(button, &QPushButton::clicked);
        QTest::keyClick(button, Qt::Key_Right);
        QCOMPARE(filled(), row);
        QTest::keyClick(button, Qt::Key_Space);
        QCOMPARE(pressed.count(), 1);
        QVERIFY(!view->playing());

        // A text field keeps its keys: the cursor moves, the matrix does not.
        QVERIFY(focus(edit));
        edit->setCursorPosition(0);
        QTest::keyClick(edit, Qt::Key_Right);
        QCOMPARE(edit->cursorPosition(), 1);
        QTest::keyClick(edit, Qt::Key_End);
        QCOMPARE(edit->cursorPosition(), 6);
        QTest::keyClick(edit, Qt::Key_Home);
        QCOMPARE(edit->cursorPosition(), 0);
        QTest::keyClick(edit, Qt::Key_Space);
        QCOMPARE(edit->text(), QStringLiteral(" abcdef"));
        QCOMPARE(filled(), row);
        QVERIFY(!view->playing());

        // On a hidden tab the stepper takes no key.
        tabs->setCurrentWidget(other);
        QVERIFY(!view->isVisible());
        QVERIFY(focus(list));
        QTest::keyClick(list, Qt::Key_Right);
        QTest::keyClick(list, Qt::Key_End);
        QTest::keyClick(list, Qt::Key_Space);
        QCOMPARE(filled(), row);
        QVERIFY(!view->playing());
        // Shown again, it steps.
        tabs->setCurrentWidget(view);
        QVERIFY(focus(list));
        QTest::keyClick(list, Qt::Key_Right);
        QCOMPARE(filled(), 2 * row);
    }

    void exactHeatmapPathPixels() {
        const Setup s = make_setup("local", "affine", true, 40, 46, 11);
        DpHeatmapView view;
        show(view, QSize(800, 760));
        view.setPair(s.query, s.target, s.scheme, s.options);
        QVERIFY(!view.isDownsampled());
        const DpMatrices dp = compute_dp_matrices(s.query, s.target, s.scheme, s.options);
        QCustomPlot* plot = view.plot();
        const QImage image = render(plot);
        auto pixel = [&](std::int64_t i, std::int64_t j) {
            return QPoint(int(plot->xAxis->coordToPixel(double(j))), int(plot->yAxis->coordToPixel(double(i))));
        };
        QVERIFY(dp.path.size() > 10);
        for (const auto& [i, j] : dp.path)
            QVERIFY2(reddish(image.pixelColor(pixel(i, j))), qPrintable(QString("%1,%2").arg(i).arg(j)));
        // Away from the path, each cell shows its value's gradient colour.
        std::set<std::pair<std::int64_t, std::int64_t>> near;
        for (const auto& [i, j] : dp.path)
            for (int di = -2; di <= 2; ++di)
                for (int dj = -2; dj <= 2; ++dj) near.insert({i + di, j + dj});
        QCPColorGradient gradient = view.colourMap()->gradient();
        const QCPRange range = view.colourMap()->dataRange();
        int checked = 0;
        for (std::int64_t i = 0; i < dp.rows; ++i)
            for (std::int64_t j = 0; j < dp.cols; ++j) {
                if (near.count({i, j})) continue;
                const QColor got = image.pixelColor(pixel(i, j));
                QVERIFY(!reddish(got));
                const QColor want = QColor::fromRgb(gradient.color(double(dp.h(i, j)) / s.scheme.scale, range));
                QVERIFY2(std::abs(got.red() - want.red()) + std::abs(got.green() - want.green()) +
                                 std::abs(got.blue() - want.blue()) <=
                             6,
                         qPrintable(QString("%1,%2: %3 vs %4").arg(i).arg(j).arg(got.name(), want.name())));
                ++checked;
            }
        QVERIFY(checked > 1000);
        QCOMPARE(range.upper, double(dp.alignment.score) / s.scheme.scale);
        // Hover: the three values of the cell under the cursor.
        const QString text = view.hoverText(pixel(10, 12));
        QVERIFY2(text.startsWith(QString::fromStdString("H(10,12) = " + user(s.scheme, dp.h(10, 12)) + "   E = " +
                                                        user(s.scheme, dp.E[std::size_t(10 * dp.cols + 12)]))),
                 qPrintable(text));
        QVERIFY(text.contains(QString("query 10: %1").arg(s.query[9])));
        // The residues along the axes.
        auto* letters = dynamic_cast<QCPAxisTickerText*>(plot->xAxis2->ticker().data());
        QVERIFY(letters);
        QCOMPARE(letters->ticks().value(1), QString(QChar(s.target[0])));
        // E has no value in column 0: transparent there (the white background).
        view.setState(DpState::E);
        const QImage e_image = render(plot);
        QCOMPARE(e_image.pixelColor(pixel(20, 0)), QColor(Qt::white));
        QVERIFY(e_image.pixelColor(pixel(20, 5)) != QColor(Qt::white));
    }

    void largePairDownsampledAndRefined() {
        const Setup s = make_setup("global", "affine", false, 1500, 1300, 21);
        DpHeatmapView view;
        show(view, QSize(700, 640));
        QSignalSpy ready(&view, &DpHeatmapView::heatmapReady);
        QElapsedTimer open;
        open.start();
        view.setPair(s.query, s.target, s.scheme, s.options);
        QVERIFY(view.isDownsampled());
        QVERIFY(ready.wait(30'000));
        const qint64 first_ms = open.elapsed();
        while (ready.wait(1000)) {
        }  // a second, final pass when the first picture changed the layout
        qInfo("1500 x 1300 pair: first downsampled picture after %lld ms (whole-matrix pass, %llu cells)", first_ms,
              static_cast<unsigned long long>(view.currentHeatmap()->cells_computed));
        const DpMatrices dp = compute_dp_matrices(s.query, s.target, s.scheme, s.options, 2'000'000);
        auto check = [&](const DpHeatmap& h) {
            // Oracle: max over each block of the full H, one pass over the region.
            std::vector<std::int64_t> best(std::size_t(h.rows) * h.cols, DpMatrices::minus_infinity);
            for (std::int64_t i = h.region.row_begin; i < h.region.row_end; ++i)
                for (std::int64_t j = h.region.col_begin; j < h.region.col_end; ++j) {
                    const auto r = (i - h.region.row_begin) * h.rows / h.region.rows();
                    const auto c = (j - h.region.col_begin) * h.cols / h.region.cols();
                    auto& b = best[std::size_t(r * h.cols + c)];
                    b = std::max(b, dp.h(i, j));
                }
            for (int r = 0; r < h.rows; ++r)
                for (int c = 0; c < h.cols; ++c) {
                    const std::int64_t b = best[std::size_t(r) * h.cols + c];
                    if (h.at(r, c) != b) return false;
                    if (view.colourMap()->data()->cell(c, r) != double(b) / s.scheme.scale) return false;
                }
            return true;
        };
        const DpHeatmap* whole = view.currentHeatmap();
        QCOMPARE(whole->region.rows(), dp.rows);
        QCOMPARE(whole->region.cols(), dp.cols);
        QVERIFY2(whole->cols <= view.plot()->axisRect()->width() + 1 && whole->cols >= 64,
                 qPrintable(QString("%1 blocks, %2 px").arg(whole->cols).arg(view.plot()->axisRect()->width())));
        QVERIFY(check(*whole));
        // The path overlay: alignment cells are red on screen.
        QCustomPlot* plot = view.plot();
        QImage image = render(plot);
        for (std::size_t k = 97; k < dp.path.size(); k += 97) {
            const auto [i, j] = dp.path[k];
            const QPoint p(int(plot->xAxis->coordToPixel(double(j))), int(plot->yAxis->coordToPixel(double(i))));
            QVERIFY2(reddish(image.pixelColor(p)), qPrintable(QString("%1,%2").arg(i).arg(j)));
        }
        // Zoom in: the engine computes the region again, now one block per cell.
        ready.clear();
        view.setVisibleRegion({600, 760, 500, 700});
        QVERIFY(ready.wait(30'000));
        const DpHeatmap* zoomed = view.currentHeatmap();
        QCOMPARE(zoomed->region.row_begin, std::int64_t(600));
        QCOMPARE(zoomed->region.row_end, std::int64_t(760));
        QCOMPARE(zoomed->region.col_begin, std::int64_t(500));
        QCOMPARE(zoomed->region.col_end, std::int64_t(700));
        QCOMPARE(zoomed->rows, 160);
        QCOMPARE(zoomed->cols, 200);
        QVERIFY(check(*zoomed));
        QVERIFY(
            view.hoverText(QPointF(plot->xAxis->coordToPixel(600), plot->yAxis->coordToPixel(700)))
                .contains(QString::fromStdString("rows 700-700, columns 600-600 = " + user(s.scheme, dp.h(700, 600)))));
        QCOMPARE(zoomed->cells_computed, std::uint64_t(759) * 699);  // every row from 0
        // With saved rows the same view starts from the nearest one above.
        ready.clear();
        view.setSavedRows(save_dp_rows(s.query, s.target, s.scheme, s.options, {250, 500, 750, 1000}));
        QVERIFY(ready.wait(30'000));
        const DpHeatmap* resumed = view.currentHeatmap();
        QCOMPARE(resumed->region.row_begin, std::int64_t(600));
        QCOMPARE(resumed->cells_computed, std::uint64_t(759 - 500) * 699);
        QVERIFY(check(*resumed));
    }

    void fromTheProject() {
        QTemporaryDir dir;
        const Setup s = make_setup("local", "half", true, 50, 60, 8);
        const QString qpath = dir.filePath("q.fa"), tpath = dir.filePath("t.fa");
        {
            std::ofstream q(qpath.toStdString()), t(tpath.toStdString());
            q << ">q1 query\n" << s.query << "\n";
            t << ">t0\nMKV\n>t1 target\n" << s.target << "\n";
        }
        const std::string path = dir.filePath("p.alsproj").toStdString();
        store::ProjectOptions create;
        create.create_if_missing = true;
        const DpMatrices dp = compute_dp_matrices(s.query, s.target, s.scheme, s.options);
        std::int64_t job_id = 0;
        {
            store::Project project(path, create);
            store::JobSpec spec;
            spec.command = "align";
            spec.mode = "local";
            spec.set_scheme(s.scheme);
            auto job = project.begin_job(spec);
            job->add_input(read_sequences(qpath.toStdString()), "query");
            job->add_input(read_sequences(tpath.toStdString()), "target");
            Alignment a = dp.alignment;
            a.query_id = "q1";
            a.target_id = "t1";
            job->add_alignments({a});
            store::Heatmap saved = store::Heatmap::from_dp(dp, s.scheme.scale, 20, 24);
            saved.query_id = "q1";
            saved.target_id = "t1";
            job->add_heatmap(saved);
            job_id = job->job_id();
            job->finish_done();
        }
        store::Project project(path);
        DpHeatmapView view;
        show(view, QSize(600, 600));
        view.loadFromProject(project, job_id, 0);
        QVERIFY(!view.isDownsampled());
        QCOMPARE(view.colourMap()->data()->keySize(), int(dp.cols));
        QCOMPARE(view.colourMap()->data()->cell(7, 9), double(dp.h(9, 7)) / s.scheme.scale);
        QCOMPARE(view.pathCurve()->data()->size(), int(dp.path.size()));

        const auto maps = project.heatmaps(job_id);
        QCOMPARE(maps.size(), std::size_t(1));
        view.setStoredHeatmap(maps[0]);
        QVERIFY(view.isDownsampled());
        QCOMPARE(view.colourMap()->data()->keySize(), 24);
        QCOMPARE(view.colourMap()->data()->valueSize(), 20);
        for (int r = 0; r < 20; ++r)
            for (int c = 0; c < 24; ++c) QCOMPARE(view.colourMap()->data()->cell(c, r), double(maps[0].at(r, c)));
        QVERIFY_THROWS_EXCEPTION(Error, view.loadFromProject(project, job_id, 5));
    }
};

QTEST_MAIN(TestViewHeatmap)
#include "test_view_heatmap.moc"
