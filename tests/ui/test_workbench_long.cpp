// Long-pair jobs in the workbench window, driven off-screen through its real
// widgets: the panel offers the algorithm with its mode, shows the strategy,
// kernel and stream rows only where they apply and explains the one-pair rule
// inline; a ~20 kb pair grown from the lambda genome runs on the CPU backend to
// completion and the project holds its alignment, whose score is the CPU
// reference's (align_reference, called here) and whose CIGAR re-scores to it,
// with the pipeline statistics; the next estimate uses that job's speed, or
// the project's bench --long points; with all of two GPUs chosen it is the
// model of that set of GPUs, or none (said so), never one GPU's; a 200 kb
// pair is cancelled mid-run.
#include <panels/job_panel.hpp>
#include "project_options.hpp"
#include "workbench_fixture.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <tuple>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

// A GPU the panel can choose (it is never asked to align anything here).
class ListedGpu final : public Backend {
public:
    explicit ListedGpu(int index) : index_(index) {}
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = "gpu:" + std::to_string(index_);
        d.kind = "gpu";
        d.name = "a listed GPU";
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob&, JobContext&) override { throw Error("a listed GPU only"); }

private:
    int index_;
};

// bench --long points (series long/strips) on `device` at three square sizes,
// end to end t = a*L^2 + c seconds.
void add_bench_long(store::Project& p, const std::string& device, double a, double c) {
    store::JobSpec spec;
    spec.command = "bench";
    spec.algorithm = "bench-long";
    spec.devices = device;
    spec.parameters["long"] = "yes";
    auto bench = p.begin_job(spec);
    std::vector<store::BenchPoint> points;
    for (const double length : {10'000.0, 30'000.0, 60'000.0}) {
        store::BenchPoint point;
        point.series = "long/strips";
        point.device = device;
        point.x = length;
        point.y = 1;
        point.x_label = "length";
        point.y_label = "stage-1 GCUPS";
        point.parameters = {{"cells", QString::number(length * length, 'f', 0).toStdString()},
                            {"seconds", QString::number(a * length * length + c, 'g', 17).toStdString()}};
        points.push_back(point);
    }
    bench->add_bench_points(points);
    bench->finish_done();
}

// An earlier long-pair job: devices as its spec recorded them, the device its
// statistics name, its pair's lengths and wall time.
void add_long_job(const std::string& project, const std::string& devices, const std::string& ran_on, std::int64_t m,
                  std::int64_t n, double seconds) {
    store::JobSpec spec;
    spec.command = "gui";
    spec.algorithm = "long";
    spec.devices = devices;
    spec.parameters["long"] = "yes";
    spec.parameters["strategy"] = "strips";
    store::JobRecording job(project, spec);
    store::LongPairStats stats;
    stats.query_length = m;
    stats.target_length = n;
    stats.device = ran_on;
    stats.strategy = "strips";
    stats.seconds = seconds;
    job.add_long_pair_stats(stats);
    job.finish_done();
}

bool row_visible(JobPanel& panel, const char* name) {
    auto* w = panel.findChild<QWidget*>(name);
    return w && w->isVisibleTo(&panel);
}

}  // namespace

class WorkbenchLongTest : public QObject {
    Q_OBJECT
private:
    Workbench bench_{StandardPaths::Environment};

    QString path(const QString& name) const { return bench_.path(name); }

    std::unique_ptr<MainWindow> openWindow(const QString& project) { return bench_.openWindow(project, true); }

    // Query and target files of a generated pair; the query file holds a
    // second, short record that the long pair leaves out.
    void writePair(const QString& prefix, std::int64_t m, std::int64_t n, LongPair& pair) {
        pair = generate_long_pair(11, load_seed_genome().residues, m, n);
        std::ofstream q(path(prefix + "_q.fa").toStdString()), t(path(prefix + "_t.fa").toStdString());
        q << ">" << prefix.toStdString() << "_query\n" << pair.query << "\n>extra\nACGTACGTTTGA\n";
        t << ">" << prefix.toStdString() << "_target\n" << pair.target << "\n";
    }

    void configure(JobPanel& panel, MainWindow& window, const QString& prefix) {
        panel.setInputs(input_id(window.document(), prefix + "_q.fa"), input_id(window.document(), prefix + "_t.fa"));
        panel.setAlgorithm(JobAlgorithm::LongPair);
        panel.setMatchMismatch(2, -3);
        panel.setGaps(5, 2);
    }

private slots:
    void initTestCase() {
        add_unavailable_gpu(bench_.registry());
        QVERIFY(bench_.valid());
    }

    void runsALongPairOnTheCpu() {
        LongPair pair;
        writePair("lambda20k", 20'000, 19'400, pair);
        const QString project = path("long.alsproj");
        auto window = openWindow(project);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {path("lambda20k_q.fa"), path("lambda20k_t.fa")}));
        JobPanel& panel = window->jobPanel();
        configure(panel, *window, "lambda20k");
        panel.setLongPairMode(AlignmentMode::Global);
        QVERIFY(panel.setDevice("cpu"));

        // Rows where they apply: no pairing, no threads on a CPU device, the
        // strategy on GPUs only and the kernel and stream counts for the
        // streams strategy only.
        QVERIFY(row_visible(panel, "longMode"));
        QVERIFY(!row_visible(panel, "pairing"));
        QVERIFY(!row_visible(panel, "threads"));
        QVERIFY(!row_visible(panel, "strategy"));
        QVERIFY(!row_visible(panel, "kernels"));
        QVERIFY(!row_visible(panel, "streams"));
        if (panel.setDevice("gpu")) {  // listed even when unavailable
            QVERIFY(row_visible(panel, "strategy"));
            QVERIFY(!row_visible(panel, "kernels"));
            QVERIFY(!row_visible(panel, "streams"));
            panel.setStrategy("streams");
            QVERIFY(row_visible(panel, "kernels"));
            QVERIFY(row_visible(panel, "streams"));
            QVERIFY(!panel.canRun());  // no GPU here
            panel.setStrategy("strips");
            QVERIFY(!row_visible(panel, "kernels"));
            QVERIFY(panel.setDevice("cpu"));
        }
        QVERIFY(!row_visible(panel, "freeEnds"));
        panel.setLongPairMode(AlignmentMode::SemiGlobal);
        QVERIFY(row_visible(panel, "freeEnds"));
        QCOMPARE(panel.request().align_options().mode, AlignmentMode::SemiGlobal);
        panel.setLongPairMode(AlignmentMode::Global);
        QVERIFY(!row_visible(panel, "freeEnds"));

        // The one-pair rule and the CPU path, explained before the run.
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));
        const QString notes = panel.problemText();
        QVERIFY2(notes.contains("the first query, lambda20k_query (20000 residues), with the first target, "
                                "lambda20k_target (19400 residues); the 1 other queries are not aligned"),
                 qPrintable(notes));
        QVERIFY2(notes.contains("Myers-Miller"), qPrintable(notes));
        QVERIFY2(panel.estimateText().contains("No time estimate"), qPrintable(panel.estimateText()));
        QVERIFY(panel.request().is_long_pair());
        QCOMPARE(panel.request().cell_count(), std::uint64_t(20'000) * 19'400);

        QVERIFY(window->runJob() != 0);
        const Finished done = wait_finished(*window, 180'000);
        QCOMPARE(done.state, JobState::Done);
        QVERIFY2(done.text.contains("long pair") && done.text.contains("stage 1"), qPrintable(done.text));

        // The project holds the alignment of the first pair, the CPU reference's score.
        store::Project check(project.toStdString(), read_only_project());
        const store::JobInfo job = check.job(done.job);
        QCOMPARE(job.state, store::JobState::Done);
        QCOMPARE(job.spec.parameters.at("long"), std::string("yes"));
        QCOMPARE(job.spec.devices, std::string("cpu"));
        QCOMPARE(job.counts.alignments, std::int64_t{1});
        QCOMPARE(job.counts.long_pair_stats, std::int64_t{1});
        QCOMPARE(job.counts.heatmaps, std::int64_t{0});  // Myers-Miller keeps no overview
        QCOMPARE(job.progress.cells_done, std::uint64_t(20'000) * 19'400);
        const Alignment a = check.alignments(done.job).rows.at(0);
        QCOMPARE(a.query_id, std::string("lambda20k_query"));
        QCOMPARE(a.target_id, std::string("lambda20k_target"));
        QCOMPARE(a.device, std::string("cpu"));
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        AlignOptions options;
        options.mode = AlignmentMode::Global;
        options.traceback = false;
        const Alignment reference = align_reference(pair.query, pair.target, scheme, options);
        QCOMPARE(a.score, reference.score);
        QCOMPARE(a.query_begin, std::int64_t{1});
        QCOMPARE(a.query_end, std::int64_t{20'000});
        QCOMPARE(a.target_end, std::int64_t{19'400});
        QCOMPARE(rescore(a.cigar, pair.query, pair.target, a.query_begin, a.target_begin, scheme), a.score);
        const store::LongPairStats stats = check.long_pair_stats(done.job).at(0);
        QCOMPARE(stats.strategy, std::string("linear-space"));
        QCOMPARE(stats.query_length, std::int64_t{20'000});
        QCOMPARE(stats.stage_cells[0], std::int64_t{20'000} * 19'400);
        QVERIFY(stats.seconds > 0);

        // The next estimate rests on this job: a model of one point, a rate.
        QTRY_VERIFY2(panel.estimateText().contains(
                         "(model of 1 earlier long-pair job on cpu, exact fit through 1 size)"),
                     qPrintable(panel.estimateText()));
    }

    void estimateFromBenchLongPoints() {
        // A project holding `bench --long` points on the CPU (end-to-end and
        // score-only seconds in their parameters) made from known run-time
        // models: with traceback t = 2e-9*m*n + 1e-5*(m+n) + 0.5 s, without
        // 1e-9*m*n + 0.1 s. The estimate for the 20000 x 19400 pair is the
        // model's: 0.776 + 0.394 + 0.5 = 1.67 s, or 0.488 s without traceback
        // (a and c free, b held at 0: three points, a residual of rounding only).
        const QString project = path("bench-long.alsproj");
        {
            store::ProjectOptions create;
            create.create_if_missing = true;
            store::Project p(project.toStdString(), create);
            store::JobSpec spec;
            spec.command = "bench";
            spec.algorithm = "bench-long";
            spec.devices = "cpu";
            spec.parameters["long"] = "yes";
            auto bench = p.begin_job(spec);
            std::vector<store::BenchPoint> points;
            for (const double length : {10'000.0, 30'000.0, 60'000.0}) {
                store::BenchPoint point;
                point.series = "long/linear-space";
                point.device = "cpu";
                point.x = length;
                point.y = 0.5;
                point.x_label = "length";
                point.y_label = "stage-1 GCUPS";
                point.parameters = {
                    {"cells", QString::number(length * length, 'f', 0).toStdString()},
                    {"seconds",
                     QString::number(2e-9 * length * length + 1e-5 * 2 * length + 0.5, 'g', 17).toStdString()},
                    {"score_only_seconds", QString::number(1e-9 * length * length + 0.1, 'g', 17).toStdString()}};
                points.push_back(point);
            }
            bench->add_bench_points(points);
            bench->finish_done();
        }
        LongPair pair;
        writePair("lambda20k", 20'000, 19'400, pair);
        auto window = bench_.openWindow(project, false);
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {path("lambda20k_q.fa"), path("lambda20k_t.fa")}));
        JobPanel& panel = window->jobPanel();
        configure(panel, *window, "lambda20k");
        QVERIFY(panel.setDevice("cpu"));
        QVERIFY2(panel.estimateText().contains("about 2 s (model of 3 bench --long points on cpu, exact fit through 3 "
                                               "sizes)"),
                 qPrintable(panel.estimateText()));
        panel.setTraceback(false);
        QVERIFY2(panel.estimateText().contains("under a second (model of 3 bench --long points on cpu, under ±1 %)"),
                 qPrintable(panel.estimateText()));
        panel.setTraceback(true);
        // Another device has no measurement.
        QVERIFY(panel.setDevice("cpu-ref"));
        QVERIFY2(panel.estimateText().contains("No time estimate"), qPrintable(panel.estimateText()));
    }

    // All GPUs splits a long pair over them: its estimate is a model of that
    // set of GPUs (bench --long --device gpu:0,1, earlier jobs on both), never
    // one GPU's model scaled, and without one the panel says so.
    void estimateForSeveralGpus() {
        auto gpus = make_cpu_registry();
        gpus->add(std::make_unique<ListedGpu>(0));
        gpus->add(std::make_unique<ListedGpu>(1));
        LongPair pair;
        writePair("gpuset", 20'000, 19'400, pair);
        const double cells = 20'000.0 * 19'400.0;
        // One project measured gpu:0 alone (t = 1e-7*m*n + 0.5 s: about 40 s
        // for the pair); the other gpu:0 alone and gpu:0,1 together (4e-8*m*n
        // + 0.5 s: about 17 s), from bench points, a workbench job on all GPUs
        // that ran on both ("gpu", statistics "gpu:0+gpu:1") and a command-line
        // job on "gpu:1,0". A workbench job on all GPUs of a one-GPU machine
        // (statistics "gpu:0"), far slower, is gpu:0's, not the set's.
        const QString single = path("gpu-single.alsproj"), both = path("gpu-both.alsproj");
        for (const QString& project : {single, both}) {
            store::ProjectOptions create;
            create.create_if_missing = true;
            store::Project p(project.toStdString(), create);
            add_bench_long(p, "gpu:0", 1e-7, 0.5);
            if (project == both) add_bench_long(p, "gpu:0,1", 4e-8, 0.5);
        }
        add_long_job(both.toStdString(), "gpu", "gpu:0+gpu:1", 20'000, 19'400, 4e-8 * cells + 0.5);
        add_long_job(both.toStdString(), "gpu:1,0", "gpu:0+gpu:1", 12'000, 15'000, 4e-8 * 12'000 * 15'000 + 0.5);
        add_long_job(both.toStdString(), "gpu", "gpu:0", 20'000, 19'400, 1000);

        for (const QString& project : {single, both}) {
            auto window = std::make_unique<MainWindow>(*gpus);
            window->setConfirmCloseWhileRunning(false);
            window->show();
            QSignalSpy ready(window.get(), &MainWindow::projectReady);
            window->openProject(project, false);
            QVERIFY(ready.wait(20'000));
            QVERIFY(load_and_wait(*window, {path("gpuset_q.fa"), path("gpuset_t.fa")}));
            JobPanel& panel = window->jobPanel();
            configure(panel, *window, "gpuset");
            QVERIFY(panel.setDevice("gpu"));
            const QString all = panel.estimateText();
            if (project == single) {
                QVERIFY2(all.contains("No time estimate: no run-time model for the 2 GPUs gpu:0,1 together") &&
                             all.contains("one GPU's model does not predict a split") &&
                             all.contains("alignscope-cli bench --long --device gpu:0,1 --project"),
                         qPrintable(all));
                QVERIFY2(!all.contains("about"), qPrintable(all));
                QVERIFY(panel.setDevice("gpu:0"));
                QVERIFY2(panel.estimateText().contains(
                             "about 40 s (model of 3 bench --long points on gpu:0, under ±1 %)"),
                         qPrintable(panel.estimateText()));
            } else {
                QVERIFY2(all.contains("about 17 s (model of 3 bench --long points and 2 earlier long-pair jobs on "
                                      "gpu:0,1, under ±1 %)"),
                         qPrintable(all));
                QVERIFY(panel.setDevice("gpu:0"));
                QVERIFY2(panel.estimateText().contains(
                             "(model of 3 bench --long points and 1 earlier long-pair job on gpu:0"),
                         qPrintable(panel.estimateText()));
            }
        }
    }

    void cancelsALongPair() {
        LongPair pair;
        writePair("lambda200k", 200'000, 200'000, pair);  // 40 G cells: many minutes on one core
        auto window = openWindow(path("cancel-long.alsproj"));
        QVERIFY(window);
        QVERIFY(load_and_wait(*window, {path("lambda200k_q.fa"), path("lambda200k_t.fa")}));
        JobPanel& panel = window->jobPanel();
        configure(panel, *window, "lambda200k");
        panel.setLongPairMode(AlignmentMode::Local);
        QVERIFY(panel.setDevice("cpu-ref"));
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));
        QSignalSpy progress(&window->queue(), &JobQueue::jobProgress);
        QVERIFY(window->runJob());
        QVERIFY(progress.wait(20'000));
        QTRY_VERIFY_WITH_TIMEOUT(progress.last()[1].value<JobProgress>().cells_done > 0, 20'000);
        const auto shown = progress.last()[1].value<JobProgress>();
        QVERIFY(shown.cells_done < shown.cells_total);
        QCOMPARE(shown.cells_total, std::uint64_t(200'000) * 200'000);
        QVERIFY(window->findChild<QProgressBar*>("jobProgress")->isVisible());
        const QString rate = window->findChild<QLabel*>("jobRate")->text();
        // The phase by name, the rate, and no ETA: the counter covers only
        // Myers-Miller's first pass, so the rate cannot predict the end.
        QVERIFY2(rate.contains("cells/s") && rate.contains(display_name(JobPhase::LongFirstPass)) &&
                     !rate.contains("ETA"),
                 qPrintable(rate));
        QElapsedTimer timer;
        timer.start();
        window->cancelAll();
        const Finished end = wait_finished(*window, 10'000);
        const qint64 took = timer.elapsed();
        QCOMPARE(end.state, JobState::Cancelled);
        qInfo("cancelling the 200 kb long pair took %lld ms", took);
        QVERIFY2(took < 2000, qPrintable(QString("cancel took %1 ms").arg(took)));
        store::Project check(path("cancel-long.alsproj").toStdString(), read_only_project());
        QCOMPARE(check.job(end.job).state, store::JobState::Cancelled);
        QCOMPARE(check.job(end.job).counts.alignments, std::int64_t{0});
    }
};

QTEST_MAIN(WorkbenchLongTest)
#include "test_workbench_long.moc"
