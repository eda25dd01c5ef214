// The DP heatmap of long-pair jobs, drawn from what the job saved in the
// project (the stage-1 overview and the alignment's path), never from the
// sequences' matrix:
//  - a real job run through the window's job queue on a backend holding the
//    engine's CPU pass runner (align_long with the overview, as a GPU runs it),
//    recorded by the window's recorder: the project's overview and the colour
//    map on screen equal a max-pool of the full DP matrix (compute_dp_matrices)
//    over the documented blocks, and the red path lies on the stored
//    alignment's CIGAR;
//  - a 5,000,000 x 5,000,000 job (a 512 x 512 overview synthesised, a CIGAR of
//    a generated pair, both sequences and the aligned text in the project)
//    opens in the heatmap view in well under a second, with the grid's values
//    and the path on screen, and `alignscope --screenshot --view heatmap --job`
//    renders it.
// With ALIGNSCOPE_LONG_HEATMAP_PROJECT=P.alsproj, writeDocsProject records a
// 40 kb pair grown from the lambda genome (local, through the same queue and
// pass runner) into P for the documentation's screenshot.
#include <jobs/job_queue.hpp>
#include <jobs/project_job_recorder.hpp>
#include <project_document.hpp>
#include <views/heatmap/heatmap_view.hpp>
#include <views/job_heatmap_view.hpp>
#include "project_options.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/dp_matrix.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

// A CPU device whose long-pair path is the engine's scalar pass runner: the
// whole pipeline (stage 1 with its overview, stages 2 and 3) as a GPU runs it.
class PassRunnerBackend : public Backend {
public:
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = "cpu-pass";
        d.kind = "cpu";
        d.name = "CPU pass runner (test)";
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob&, JobContext&) override {
        throw Error("cpu-pass aligns long pairs only");
    }
    std::unique_ptr<longpair::PassRunner> make_long_runner(const LongRunnerSettings&) override {
        return longpair::make_cpu_pass_runner();
    }
};

SequenceList one(const std::string& id, std::string residues, std::int64_t set_id = 0) {
    auto records = std::make_shared<std::vector<Sequence>>();
    records->push_back(Sequence{id, "", std::move(residues), ""});
    SequenceList l;
    l.records = records;
    l.alphabet = AlphabetKind::Dna;
    l.label = id + ".fa";
    if (set_id) l.set_ids = {set_id};
    return l;
}

ScoringChoice dna_scoring() {
    ScoringChoice s;
    s.match_mismatch = true;
    s.match = 2;
    s.mismatch = -3;
    s.gap_open = 5;
    s.gap_extend = 2;
    return s;
}

bool reddish(const QColor& c) {
    const QColor p = DpHeatmapView::pathColour();
    return std::abs(c.red() - p.red()) + std::abs(c.green() - p.green()) + std::abs(c.blue() - p.blue()) < 40;
}

QImage render(QCustomPlot* plot) {
    plot->replot(QCustomPlot::rpImmediateRefresh);
    return plot->toPixmap(plot->width(), plot->height()).toImage();
}

QPoint pixel(const DpHeatmapView& view, double x, double y) {
    return QPoint(int(std::lround(view.plot()->xAxis->coordToPixel(x))),
                  int(std::lround(view.plot()->yAxis->coordToPixel(y))));
}

// The DP cells an alignment's path visits, from its CIGAR (one per column).
template <class Visit>
void walk_cigar(const Alignment& a, Visit&& visit) {
    std::int64_t i = a.query_begin - 1, j = a.target_begin - 1;
    for (const CigarOp& op : a.cigar.ops())
        for (std::uint32_t k = 0; k < op.length; ++k) {
            i += op.op != 'D';
            j += op.op != 'I';
            visit(i, j);
        }
}

bool open_document(ProjectDocument& document, const QString& path) {
    QSignalSpy opened(&document, &ProjectDocument::opened);
    document.open(path);
    return opened.wait(30'000);
}

}  // namespace

class TestViewLongHeatmap : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString big_project_;
    qint64 big_job_ = 0;

private slots:
    void realJobOverviewIsTheMatrixMaxPooled_data() {
        QTest::addColumn<int>("mode");
        QTest::newRow("global") << int(AlignmentMode::Global);
        QTest::newRow("local") << int(AlignmentMode::Local);
    }

    void realJobOverviewIsTheMatrixMaxPooled() {
        QFETCH(int, mode);
        // A pair grown from the lambda genome (or its seeded stand-in): more
        // rows than the overview has blocks, so blocks hold one or two rows.
        const LongPair pair = generate_long_pair(17, load_seed_genome().residues, 700, 650);
        const QString path = dir_.filePath(QString("real-%1.alsproj").arg(mode));
        DeviceRegistry registry;
        registry.add(std::make_unique<PassRunnerBackend>());
        JobQueue queue(registry);
        queue.setRecorderFactory([path](const JobRequest& request, const DeviceInfo& device) {
            return std::make_unique<ProjectJobRecorder>(path.toStdString(), request, device);
        });
        {
            store::ProjectOptions create;
            create.create_if_missing = true;
            store::Project project(path.toStdString(), create);
        }
        JobRequest request;
        request.algorithm = JobAlgorithm::LongPair;
        request.long_mode = AlignmentMode(mode);
        request.scoring = dna_scoring();
        request.device = "cpu-pass";
        request.queries = one("query", pair.query);
        request.targets = one("target", pair.target);
        QSignalSpy finished(&queue, &JobQueue::jobFinished);
        queue.enqueue(request);
        QVERIFY(finished.wait(60'000));
        const auto outcome = finished.takeFirst()[1].value<JobOutcome>();
        QCOMPARE(int(outcome.state), int(JobState::Done));
        QVERIFY(outcome.long_overview);
        QVERIFY(outcome.project_job_id > 0);

        // The oracle: the full matrices of the same pair.
        const ScoringScheme scheme = request.scoring.scheme();
        const DpMatrices dp = compute_dp_matrices(pair.query, pair.target, scheme, request.align_options(), 1'000'000);
        const std::int64_t m = std::int64_t(pair.query.size()), n = std::int64_t(pair.target.size());

        store::Project project(path.toStdString(), read_only_project());
        const store::JobInfo job = project.job(outcome.project_job_id);
        QCOMPARE(job.state, store::JobState::Done);
        QCOMPARE(job.spec.parameters.at("long"), std::string("yes"));
        QCOMPARE(job.counts.alignments, std::int64_t{1});
        QCOMPARE(job.counts.heatmaps, std::int64_t{1});
        QCOMPARE(job.counts.long_pair_stats, std::int64_t{1});
        const Alignment a = project.alignments(job.id).rows.at(0);
        QCOMPARE(a.score, dp.alignment.score);
        QCOMPARE(a.query_end, dp.alignment.query_end);
        QCOMPARE(a.target_end, dp.alignment.target_end);
        QCOMPARE(rescore(a.cigar, pair.query, pair.target, a.query_begin, a.target_begin, scheme), a.score);
        const store::LongPairStats stats = project.long_pair_stats(job.id).at(0);
        QCOMPARE(stats.strategy, std::string("cpu-passes"));  // the CPU's scalar pass runner, not Myers-Miller
        QCOMPARE(stats.stage_cells[0], m * n);
        QCOMPARE(stats.query_length, m);

        // The saved overview: blocks as documented (rows by the runner's
        // edges from row 1, column j in block (j - 1) * grid / n), each the
        // maximum of H over its cells.
        const store::Heatmap saved = project.heatmaps(job.id).at(0);
        QCOMPARE(saved.rows, int(std::min<std::int64_t>(long_overview_size, m)));
        QCOMPARE(saved.cols, int(std::min<std::int64_t>(long_overview_size, n)));
        QCOMPARE(saved.row_edges.front(), std::int64_t{1});
        for (std::size_t k = 1; k < saved.row_edges.size(); ++k) QVERIFY(saved.row_edges[k] > saved.row_edges[k - 1]);
        QVERIFY(saved.row_edges.back() <= m);
        std::vector<std::int64_t> best(std::size_t(saved.rows) * saved.cols, DpMatrices::minus_infinity);
        int r = 0;
        for (std::int64_t i = 1; i <= m; ++i) {
            while (r + 1 < saved.rows && saved.row_edges[std::size_t(r) + 1] <= i) ++r;
            for (std::int64_t j = 1; j <= n; ++j) {
                auto& b = best[std::size_t(r) * saved.cols + std::size_t((j - 1) * saved.cols / n)];
                b = std::max(b, dp.h(i, j));
            }
        }

        // The view draws exactly that grid, and the path over it.
        ProjectDocument document;
        QVERIFY(open_document(document, path));
        JobHeatmapView view(document);
        view.resize(900, 860);
        view.show();
        view.showJob(job.id);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        DpHeatmapView& heatmap = view.heatmap();
        QVERIFY2(heatmap.storedHeatmap(), qPrintable(view.noteText()));
        QVERIFY(!heatmap.currentHeatmap());  // no engine pass over the sequences
        QVERIFY(view.noteText().contains("stage-1 overview"));
        QCPColorMapData* data = heatmap.colourMap()->data();
        QCOMPARE(data->keySize(), saved.cols);
        QCOMPARE(data->valueSize(), saved.rows);
        for (int row = 0; row < saved.rows; ++row)
            for (int col = 0; col < saved.cols; ++col) {
                const std::int64_t b = best[std::size_t(row) * saved.cols + std::size_t(col)];
                QCOMPARE(data->cell(col, row), double(b) / scheme.scale);
            }
        const QImage image = render(heatmap.plot());
        int on_path = 0, checked = 0;
        walk_cigar(a, [&](std::int64_t i, std::int64_t j) {
            if ((i + j) % 37 != 0) return;
            // The path runs through block centres: the block of (i, j) is red
            // there (row 0 and column 0 belong to the first blocks).
            const int row = std::max(saved.row_of(i), 0), col = std::max(saved.col_of(j), 0);
            const QPointF p = heatmap.plotPoint(double(i), double(j));
            if (i > 0 && j > 0) QVERIFY(std::abs(p.y() - row) <= 0.5 && std::abs(p.x() - col) <= 0.5);
            ++checked;
            on_path += reddish(image.pixelColor(pixel(heatmap, col, row)));
        });
        QVERIFY(checked > 10);
        QCOMPARE(on_path, checked);
        // Away from the path, blocks have the gradient's colour for their maximum.
        QCPColorGradient gradient = heatmap.colourMap()->gradient();
        const QCPRange range = heatmap.colourMap()->dataRange();
        int coloured = 0;
        for (int row = 5; row < saved.rows; row += 50)
            for (int col = 5; col < saved.cols; col += 50) {
                bool near = false;
                for (const auto& [pr, pc] : saved.path)
                    near = near || (std::abs(pr - row) <= 6 && std::abs(pc - col) <= 6);
                if (near) continue;
                const QColor got = image.pixelColor(pixel(heatmap, col, row));
                const QColor want = QColor::fromRgb(
                    gradient.color(double(best[std::size_t(row) * saved.cols + std::size_t(col)]) / scheme.scale,
                                   range));
                QVERIFY2(std::abs(got.red() - want.red()) + std::abs(got.green() - want.green()) +
                                 std::abs(got.blue() - want.blue()) <=
                             6,
                         qPrintable(QString("block %1,%2: %3 vs %4").arg(row).arg(col).arg(got.name(), want.name())));
                ++coloured;
            }
        QVERIFY(coloured > 20);
        // Hover names the block's rows and columns.
        const QString hover = heatmap.hoverText(pixel(heatmap, 3, 2));
        QVERIFY2(hover.startsWith(QString("rows %1-%2, columns %3-%4")
                                      .arg(saved.row_begin(2))
                                      .arg(saved.row_begin(3) - 1)
                                      .arg(saved.col_begin(3))
                                      .arg(saved.col_begin(4) - 1)),
                 qPrintable(hover));
    }

    void fiveMegabaseJobOpensUnderASecond() {
        // The pair: 5 Mbp of random DNA and a copy with a substitution every 97
        // residues and, every 400 kb, a 1,000-residue deletion or insertion in
        // turn (so both stay 5,000,000 long); the CIGAR says exactly that.
        constexpr std::int64_t length = 5'000'000;
        SeededRandom random(5);
        const std::string query = random_residues(random, AlphabetKind::Dna, length);
        std::string target;
        target.reserve(length);
        Cigar cigar;
        const char bases[] = "ACGT";
        bool deletion = true;
        std::int64_t i = 0;
        while (i < length) {
            if (i > 0 && i % 400'000 == 0 && i + 2000 < length) {
                if (deletion) {
                    for (int k = 0; k < 1000; ++k) target.push_back(bases[random.index(4)]);
                    cigar.push('D', 1000);
                } else {
                    cigar.push('I', 1000);
                    i += 1000;
                }
                deletion = !deletion;
            }
            const char q = query[std::size_t(i)];
            if (i % 97 == 96) {
                const char other = bases[(std::string_view("ACGT").find(q) + 1 + random.index(3)) % 4];
                target.push_back(other);
                cigar.push('X');
            } else {
                target.push_back(q);
                cigar.push('=');
            }
            ++i;
        }
        QCOMPARE(std::int64_t(target.size()), length);
        const ScoringChoice scoring = dna_scoring();
        const ScoringScheme scheme = scoring.scheme();
        Alignment a;
        a.mode = AlignmentMode::Global;
        a.query_id = "chrA";
        a.target_id = "chrB";
        a.query_begin = a.target_begin = 1;
        a.query_end = a.target_end = a.query_length = a.target_length = length;
        a.cigar = cigar;
        a.score = rescore(cigar, query, target, 1, 1, scheme);
        complete_alignment(a, query, target, scheme);
        a.device = "gpu:0";
        a.kernel = "synthetic";

        // A 512 x 512 overview as a GPU runner leaves it: row blocks at a
        // granularity of 16 rows from row 1; maxima that grow along the
        // diagonal and fall away from it.
        longpair::LongPairOverview overview;
        overview.rows = overview.cols = length;
        overview.grid_cols = 512;
        for (int b = 0; b < 512; ++b) overview.row_edges.push_back(std::int64_t(b) * length / 512 / 16 * 16 + 1);
        overview.max_h.resize(512 * 512);
        for (int r = 0; r < 512; ++r)
            for (int c = 0; c < 512; ++c)
                overview.max_h[std::size_t(r) * 512 + c] =
                    scheme.scale * (2 * 9766 * std::min(r, c) - 300 * std::abs(r - c));
        overview.max_h[7] = longpair::kNegInf;  // an empty block shows as no colour

        // The project: both sequences (embedded), the job as the window records it.
        big_project_ = dir_.filePath("five-megabases.alsproj");
        {
            std::ofstream q(dir_.filePath("chrA.fa").toStdString()), t(dir_.filePath("chrB.fa").toStdString());
            q << ">chrA\n" << query << "\n";
            t << ">chrB\n" << target << "\n";
        }
        const SequenceSet qset = read_sequences(dir_.filePath("chrA.fa").toStdString());
        const SequenceSet tset = read_sequences(dir_.filePath("chrB.fa").toStdString());
        std::int64_t qid = 0, tid = 0;
        {
            store::ProjectOptions create;
            create.create_if_missing = true;
            store::Project project(big_project_.toStdString(), create);
            qid = project.add_sequence_set(qset);
            tid = project.add_sequence_set(tset);
        }
        JobRequest request;
        request.algorithm = JobAlgorithm::LongPair;
        request.scoring = scoring;
        request.device = "gpu:0";
        request.queries = one("chrA", query, qid);
        request.targets = one("chrB", target, tid);
        DeviceInfo gpu;
        gpu.id = "gpu:0";
        gpu.kind = "gpu";
        gpu.name = "a GPU";
        const store::Heatmap grid = store::Heatmap::from_long_overview(overview, a, scheme.scale);
        QVERIFY(grid.path.size() >= 512 && grid.path.size() < 2000);
        {
            ProjectJobRecorder recorder(big_project_.toStdString(), request, gpu);
            recorder.started();
            store::LongPairStats stats;
            stats.query_id = "chrA";
            stats.target_id = "chrB";
            stats.query_length = stats.target_length = length;
            stats.strategy = "strips";
            stats.seconds = 40;
            stats.stage_seconds = {25, 6, 9};
            stats.stage_cells = {length * length, length * length / 20, length * length / 30};
            recorder.long_pair(stats, &grid);
            Progress done;
            done.cells_done = done.cells_total = std::uint64_t(length) * length;
            recorder.progress(done);
            recorder.done({a}, {}, "");
            big_job_ = recorder.job_id();
        }

        {
            store::Project project(big_project_.toStdString(), read_only_project());
            QCOMPARE(project.input(qid).residue_count, std::uint64_t(length));
            QVERIFY(project.input(qid).embedded);
            // Six of the twelve indels are deletions: 6,000 gap columns in the query.
            QCOMPARE(project.alignments(big_job_, 0, 1).rows.at(0).query_aligned.size(), std::size_t(length + 6000));
        }
        qInfo("project with the 5 Mbp pair and its alignment: %lld MB", QFileInfo(big_project_).size() >> 20);
        // Open it as the window does, and time the view from choosing the job
        // to the picture painted.
        ProjectDocument document;
        QVERIFY(open_document(document, big_project_));
        JobHeatmapView view(document);
        view.resize(1000, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QElapsedTimer timer;
        timer.start();
        view.showJob(big_job_);
        const QPixmap painted = view.grab();
        const qint64 open_ms = timer.elapsed();
        qInfo("5,000,000 x 5,000,000 long-pair job: heatmap view opened and painted in %lld ms", open_ms);
        QVERIFY2(open_ms < 1000, qPrintable(QString("took %1 ms").arg(open_ms)));
        QVERIFY(!painted.isNull());
        DpHeatmapView& heatmap = view.heatmap();
        QVERIFY2(heatmap.storedHeatmap(), qPrintable(view.noteText()));
        QVERIFY(!heatmap.currentHeatmap());
        QVERIFY(!heatmap.busy());
        QVERIFY(view.settled());

        // The grid on screen is the stored one, value for value.
        QCPColorMapData* data = heatmap.colourMap()->data();
        QCOMPARE(data->keySize(), 512);
        QCOMPARE(data->valueSize(), 512);
        for (int r = 0; r < 512; ++r)
            for (int c = 0; c < 512; ++c) {
                const std::int64_t v = overview.max_h[std::size_t(r) * 512 + c];
                if (v == longpair::kNegInf) QVERIFY(std::isnan(data->cell(c, r)));
                else
                    QCOMPARE(data->cell(c, r), double(float(double(v) / scheme.scale)));
            }
        // The path: from the first block to the last, red where the alignment is.
        QCOMPARE(heatmap.pathCurve()->data()->size(), int(grid.path.size()));
        const QImage image = render(heatmap.plot());
        int checked = 0;
        for (std::int64_t x = 250'001; x < length; x += 250'000) {
            // Target column x and its query row by the CIGAR's offsets (within
            // 1,000 residues, a tenth of a block): the path runs through the
            // centre of the block holding them.
            const std::int64_t shift = (x / 400'000) % 2 == 1 ? 1000 : 0;
            const int row = grid.row_of(x - shift), col = grid.col_of(x);
            const QPointF p = heatmap.plotPoint(double(x - shift), double(x));
            QVERIFY(std::abs(p.x() - col) <= 0.5 && std::abs(p.y() - row) <= 0.5);
            QVERIFY2(reddish(image.pixelColor(pixel(heatmap, col, row))), qPrintable(QString("column %1").arg(x)));
            ++checked;
        }
        QCOMPARE(checked, 19);
        // Ticks along the bottom name target positions in megabases.
        const QString label = heatmap.plot()->xAxis->tickVectorLabels().value(1);
        QVERIFY2(label.endsWith("M"), qPrintable(label));
    }

    void writeDocsProject() {
        const QString out = qEnvironmentVariable("ALIGNSCOPE_LONG_HEATMAP_PROJECT");
        if (out.isEmpty()) QSKIP("set ALIGNSCOPE_LONG_HEATMAP_PROJECT=P.alsproj to write the docs' long-pair project");
        Evolution evolution;
        evolution.long_indel_rate = 0.00005;
        evolution.rearrangement_rate = 0.00006;
        const LongPair pair = generate_long_pair(23, load_seed_genome().residues, 40'000, 40'000, evolution);
        const QString q = out + "-query.fa", t = out + "-target.fa";
        {
            std::ofstream qf(q.toStdString()), tf(t.toStdString());
            qf << ">lambda_a descendant of a lambda-phage tiling\n" << pair.query << "\n";
            tf << ">lambda_b another descendant\n" << pair.target << "\n";
        }
        std::int64_t qid = 0, tid = 0;
        {
            store::ProjectOptions create;
            create.create_if_missing = true;
            store::Project project(out.toStdString(), create);
            qid = project.add_sequence_set(read_sequences(q.toStdString()));
            tid = project.add_sequence_set(read_sequences(t.toStdString()));
        }
        DeviceRegistry registry;
        registry.add(std::make_unique<PassRunnerBackend>());
        JobQueue queue(registry);
        queue.setRecorderFactory([out](const JobRequest& request, const DeviceInfo& device) {
            return std::make_unique<ProjectJobRecorder>(out.toStdString(), request, device);
        });
        JobRequest request;
        request.algorithm = JobAlgorithm::LongPair;
        request.long_mode = AlignmentMode::Local;
        request.scoring = dna_scoring();
        request.device = "cpu-pass";
        request.queries = one("lambda_a", pair.query, qid);
        request.targets = one("lambda_b", pair.target, tid);
        request.queries.label = QFileInfo(q).fileName().toStdString();
        request.targets.label = QFileInfo(t).fileName().toStdString();
        QSignalSpy finished(&queue, &JobQueue::jobFinished);
        queue.enqueue(request);
        QVERIFY(finished.wait(600'000));
        const auto outcome = finished.takeFirst()[1].value<JobOutcome>();
        QCOMPARE(int(outcome.state), int(JobState::Done));
        qInfo("job %lld: %s (%s), %.1f s", static_cast<long long>(outcome.project_job_id), pair.description.c_str(),
              outcome.long_pair->kernel.c_str(), outcome.seconds);
    }

    void screenshotOfTheLongJob() {
        if (big_job_ == 0) QSKIP("needs the 5 Mbp project of fiveMegabaseJobOpensUnderASecond");
        const QString out = dir_.filePath("long-heatmap.png");
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        process.setProcessEnvironment(env);
        QElapsedTimer timer;
        timer.start();
        process.start(QStringLiteral(ALIGNSCOPE_GUI),
                      {"--project", big_project_, "--screenshot", out, "--view", "heatmap", "--job",
                       QString::number(big_job_), "--size", "900x760"});
        QVERIFY(process.waitForFinished(60'000));
        qInfo("alignscope --screenshot --view heatmap of the 5 Mbp job: %lld ms, start to exit", timer.elapsed());
        QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        const QImage image(out);
        QCOMPARE(image.size(), QSize(900, 760));
        int red = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) red += reddish(image.pixelColor(x, y));
        QVERIFY2(red > 500, qPrintable(QString("%1 path pixels").arg(red)));
    }
};

QTEST_MAIN(TestViewLongHeatmap)
#include "test_view_long_heatmap.moc"
