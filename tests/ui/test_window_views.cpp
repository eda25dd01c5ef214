// The result views in the window, over a real project made here: a CLI align
// job with its timeline (align --timeline --project), a CLI bench job (bench
// --quick --device cpu --project) and a database search run from the window's
// Job panel over a slice of mmseqs2's example data (tests/data when it is not
// installed). Checked: `--screenshot --view ID` renders every result view with
// real content; choosing a job in the jobs list points the views at it, and a
// view loads only when it is on screen; the alignment chosen in the list is
// the DP heatmap's pair; the window's search gives the hits
// `alignscope-cli search` gives (ranks, targets, scores, bits, E-values), each
// hit's score is the reference aligner's and its stored alignment re-scores to
// it; a Chrome trace imports read-only; Compare CPU and GPU is recorded as a
// bench job; Save As (Project::copy_to) refuses an open project and copies
// every result.
#include "cli_runner.hpp"
#include "project_options.hpp"

#include <panels/job_panel.hpp>
#include <views/alignment/alignment_view.hpp>
#include <views/benchmark_view.hpp>
#include <views/gcups/gcups_view.hpp>
#include <views/heatmap/heatmap_view.hpp>
#include <views/heatmap/stepper_view.hpp>
#include <views/hits/hits_view.hpp>
#include <views/job_alignments_view.hpp>
#include <views/job_heatmap_view.hpp>
#include <views/job_hits_view.hpp>
#include <views/job_timeline_view.hpp>
#include <views/jobs_view.hpp>
#include <views/timeline/timeline_view.hpp>
#include <views/view_catalog.hpp>
#include "workbench_fixture.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/job.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/search/scan.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/project.hpp>

#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <fstream>
#include <map>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

const QString demo = QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo/");
const QString examples = QStringLiteral("/usr/share/doc/mmseqs2/example-data/");

}  // namespace

class WindowViewsTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString project_, trace_, queries_, database_;
    std::unique_ptr<DeviceRegistry> registry_;
    std::unique_ptr<ScannerRegistry> scanners_;
    std::unique_ptr<MainWindow> window_;
    qint64 align_job_ = 0, bench_job_ = 0, search_job_ = 0;
    static constexpr int top = 5;

    template <class View>
    View& view(const char* id) {
        auto* v = qobject_cast<View*>(window_->view(id));
        if (!v) qFatal("no view %s", id);
        return *v;
    }

    // Selects the job in the jobs list as a user would.
    void select(qint64 job) {
        window_->showView("jobs");
        window_->jobsView().showJob(job);
        QCOMPARE(window_->jobsView().shownJob(), job);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        project_ = dir_.filePath("views.alsproj");
        trace_ = dir_.filePath("align-trace.json");
        // 1: a CLI alignment job with its kernel timeline.
        ProcessResult r =
            run_cli({"align", demo + "globins_human.fa", demo + "globins_others.fa", "--mode", "local", "--device",
                     "cpu", "--timeline", trace_, "--project", project_, "-o", dir_.filePath("align.txt")});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        // 2: a CLI bench job.
        r = run_cli({"bench", "--quick", "--device", "cpu", "--project", project_, "--threads", "2"});
        QVERIFY2(r.exit_code == 0, r.err.constData());

        // 3: a database search from the window, over a slice of real data.
        queries_ = dir_.filePath("queries.fa");
        database_ = dir_.filePath("database.fa");
        if (QFile::exists(examples + "DB.fasta.gz") && QFile::exists(examples + "QUERY.fasta.gz")) {
            QVERIFY(write_slice(examples + "QUERY.fasta.gz", queries_, 4));
            QVERIFY(write_slice(examples + "DB.fasta.gz", database_, 1500));
        } else {
            qInfo("mmseqs2 example data not installed: searching tests/data");
            QVERIFY(write_slice(ALIGNSCOPE_TEST_DATA "/seq_proteins.fa", queries_, 2));
            QVERIFY(write_slice(ALIGNSCOPE_TEST_DATA "/seq_proteins.fa", database_, 1000));
        }

        registry_ = make_cpu_registry();
        scanners_ = make_cpu_scanner_registry();
        window_ = std::make_unique<MainWindow>(*registry_, *scanners_);
        window_->setConfirmCloseWhileRunning(false);
        window_->resize(1280, 800);
        window_->show();
        QSignalSpy ready(window_.get(), &MainWindow::projectReady);
        window_->openProject(project_);
        QVERIFY(ready.wait(20'000));
        QCOMPARE(window_->document().jobs().size(), std::size_t(2));
        align_job_ = window_->document().jobs()[0].id;
        bench_job_ = window_->document().jobs()[1].id;
        QSignalSpy idle(&window_->document(), &ProjectDocument::loadingIdle);
        window_->loadFiles({queries_, database_});
        QVERIFY(idle.wait(30'000));
        QTRY_VERIFY(input_id(window_->document(), "database.fa") && input_id(window_->document(), "queries.fa"));

        JobPanel& panel = window_->jobPanel();
        panel.setInputs(input_id(window_->document(), "queries.fa"), input_id(window_->document(), "database.fa"));
        panel.setAlgorithm(JobAlgorithm::DatabaseSearch);
        QVERIFY(panel.setDevice("cpu"));
        panel.setTop(top);
        // The panel offers BLAST's gap costs for BLOSUM62 (11/1, here 12/1), as the CLI does.
        const JobRequest request = panel.request();
        QCOMPARE(request.scoring.gap_open, 12.0);
        QCOMPARE(request.scoring.gap_extend, 1.0);
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));
        QSignalSpy done(window_.get(), &MainWindow::jobNotification);
        QVERIFY(window_->runJob() != 0);
        QVERIFY(done.wait(120'000));
        QCOMPARE(JobState(done.first()[1].toInt()), JobState::Done);
        search_job_ = done.first()[0].toLongLong();
        QVERIFY2(done.first()[2].toString().contains("hit"), qPrintable(done.first()[2].toString()));
        QTRY_VERIFY(window_->document().job(search_job_) &&
                    window_->document().job(search_job_)->state == store::JobState::Done);
    }

    void guiSearchMatchesTheCli() {
        const ProcessResult r = run_cli({"search", "-q", queries_, "-d", database_, "--device", "cpu", "--top",
                                         QString::number(top), "--format", "json", "--db-cache", "off", "--quiet"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const QVector<QJsonObject> cli = parse_json_lines(r.out);
        QVERIFY(!cli.isEmpty());

        store::Project project(project_.toStdString(), read_only_project());
        const store::JobInfo job = project.job(search_job_);
        QCOMPARE(job.spec.mode, std::string("local"));
        QCOMPARE(job.spec.parameters.at("top"), std::to_string(top));
        const ScoringScheme scheme = job.spec.scheme();
        const std::vector<store::Hit> hits = project.hits(search_job_, 0, 100'000).rows;
        QCOMPARE(int(hits.size()), int(cli.size()));
        for (std::size_t k = 0; k < hits.size(); ++k) {
            const store::Hit& h = hits[k];
            const QJsonObject& c = cli[int(k)];
            QCOMPARE(QString::fromStdString(h.query_id), c["query"].toString());
            QCOMPARE(h.rank, std::int64_t(c["rank"].toInt()));
            QCOMPARE(QString::fromStdString(h.target_id), c["target"].toString());
            QCOMPARE(scheme.to_user(h.score), c["score"].toDouble());
            QCOMPARE(h.query_begin, std::int64_t(c["query_begin"].toInt()));
            QCOMPARE(h.target_end, std::int64_t(c["target_end"].toInt()));
            QCOMPARE(h.bits.has_value(), c.contains("bits"));
            if (h.bits) QVERIFY(std::abs(*h.bits - c["bits"].toDouble()) <= 1e-9 * std::abs(*h.bits));
            if (h.evalue) QVERIFY(std::abs(*h.evalue - c["evalue"].toDouble()) <= 1e-9 * *h.evalue);
        }

        // Each hit independently: the reference aligner's score for that pair,
        // and the stored alignment (one per hit, in the same order) re-scores to it.
        const SequenceSet queries = read_sequences(queries_.toStdString());
        const SequenceSet database = read_sequences(database_.toStdString());
        std::map<std::string, const Sequence*> by_id;
        for (const auto& s : queries.records) by_id["q:" + s.id] = &s;
        for (const auto& s : database.records) by_id["d:" + s.id] = &s;
        const std::vector<Alignment> alignments = project.alignments(search_job_, 0, 100'000).rows;
        QCOMPARE(alignments.size(), hits.size());
        AlignOptions local;
        local.mode = AlignmentMode::Local;
        for (std::size_t k = 0; k < hits.size(); ++k) {
            const Sequence* q = by_id["q:" + hits[k].query_id];
            const Sequence* t = by_id["d:" + hits[k].target_id];
            QVERIFY(q && t);
            QCOMPARE(align_reference(q->residues, t->residues, scheme, local).score, hits[k].score);
            const Alignment& a = alignments[k];
            QCOMPARE(a.target_id, hits[k].target_id);
            QCOMPARE(a.score, hits[k].score);
            QCOMPARE(rescore(a.cigar, q->residues, t->residues, a.query_begin, a.target_begin, scheme), a.score);
        }
    }

    void helpNamesEveryView() {
        QProcess process;
        process.start(QStringLiteral(ALIGNSCOPE_GUI), {"--help"});
        QVERIFY(process.waitForFinished(30'000));
        const QString help = QString::fromUtf8(process.readAllStandardOutput()).simplified();
        for (const ViewSpec& spec : view_catalog())
            QVERIFY2(help.contains(spec.id + " (" + spec.description.simplified() + ")"), qPrintable(spec.id));
    }

    void cancelsASearch() {
        // A search far too long to finish (random proteins, scalar reference
        // scanner): cancelled at its first progress, it ends as cancelled.
        const QString q = dir_.filePath("long_queries.fa"), d = dir_.filePath("long_database.fa");
        {
            SeededRandom random(5);
            std::ofstream queries(q.toStdString()), database(d.toStdString());
            for (int k = 0; k < 40; ++k)
                queries << ">lq" << k << '\n' << random_residues(random, AlphabetKind::Protein, 400) << '\n';
            for (int k = 0; k < 4000; ++k)
                database << ">ld" << k << '\n' << random_residues(random, AlphabetKind::Protein, 400) << '\n';
        }
        QSignalSpy idle(&window_->document(), &ProjectDocument::loadingIdle);
        window_->loadFiles({q, d});
        QVERIFY(idle.wait(30'000));
        QTRY_VERIFY(input_id(window_->document(), "long_database.fa") &&
                    input_id(window_->document(), "long_queries.fa"));
        JobPanel& panel = window_->jobPanel();
        panel.setInputs(input_id(window_->document(), "long_queries.fa"),
                        input_id(window_->document(), "long_database.fa"));
        panel.setAlgorithm(JobAlgorithm::DatabaseSearch);
        QVERIFY(panel.setDevice("cpu-ref"));
        QVERIFY2(panel.canRun(), qPrintable(panel.problemText()));
        QSignalSpy progress(&window_->queue(), &JobQueue::jobProgress);
        QSignalSpy done(window_.get(), &MainWindow::jobNotification);
        QVERIFY(window_->runJob() != 0);
        QVERIFY(progress.wait(20'000));
        QElapsedTimer clock;
        clock.start();
        window_->cancelAll();
        QVERIFY(done.wait(10'000));
        qInfo("cancelled after %lld ms", clock.elapsed());
        QCOMPARE(JobState(done.first()[1].toInt()), JobState::Cancelled);
        QVERIFY(clock.elapsed() < 2000);
        store::Project project(project_.toStdString(), read_only_project());
        QCOMPARE(project.job(done.first()[0].toLongLong()).state, store::JobState::Cancelled);
        // Back to the settings the other tests expect.
        panel.setInputs(input_id(window_->document(), "queries.fa"), input_id(window_->document(), "database.fa"));
        QVERIFY(panel.setDevice("cpu"));
    }

    void screenshotsOfTheViews_data() {
        QTest::addColumn<QString>("view");
        QTest::addColumn<bool>("benchJob");  // --job the bench job; else the view's default
        QTest::newRow("alignment") << "alignment" << false;
        QTest::newRow("heatmap") << "heatmap" << false;
        QTest::newRow("timeline") << "timeline" << false;
        QTest::newRow("gcups, the project's series") << "gcups" << false;
        QTest::newRow("gcups, the bench job") << "gcups" << true;
        QTest::newRow("hits") << "hits" << false;
    }

    void screenshotsOfTheViews() {
        QFETCH(QString, view);
        QFETCH(bool, benchJob);
        const QString out = dir_.filePath(QString("shot-%1-%2.png").arg(view).arg(benchJob));
        QStringList args{"--project", project_, "--screenshot", out, "--view", view, "--size", "800x560"};
        if (benchJob) args << "--job" << QString::number(bench_job_);
        const GuiRun r = run_gui(args);
        QVERIFY2(r.status == 0, qPrintable(r.err));
        const QImage image(out);
        QCOMPARE(image.size(), QSize(800, 560));
        const auto [colours, top_share] = colour_statistics(image);
        qInfo("%s: %d colours, the most common covers %.0f %%", qPrintable(QFileInfo(out).fileName()), colours,
              100 * top_share);
        QVERIFY2(colours >= 24, qPrintable(QString::number(colours)));
        QVERIFY2(top_share < 0.9, qPrintable(QString::number(top_share)));
    }

    void largeHeatmapScreenshotWaitsForItsGrid() {
        // A read against a long target: too many cells for the exact matrix,
        // so the heatmap's block maxima are computed on a worker thread, and
        // the screenshot must wait for them rather than show an empty plot.
        const QString read = dir_.filePath("read.fa"), genome = dir_.filePath("genome.fa");
        {
            SeededRandom random(9);
            const std::string target = random_residues(random, AlphabetKind::Dna, 40'000);
            std::ofstream(genome.toStdString()) << ">genome\n" << target << '\n';
            std::ofstream(read.toStdString())
                << ">read\n"
                << mutate_residues(random, AlphabetKind::Dna, target.substr(20'000, 150), 0.05, 0.01) << '\n';
        }
        const ProcessResult r = run_cli({"align", read, genome, "--mode", "semiglobal", "--free-ends", "tb,te",
                                         "--device", "cpu", "--project", project_, "-o", dir_.filePath("read.txt")});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        store::Project project(project_.toStdString(), read_only_project());
        const qint64 job = project.jobs().back().id;
        const QString out = dir_.filePath("shot-large-heatmap.png");
        const GuiRun shot = run_gui({"--project", project_, "--screenshot", out, "--view", "heatmap", "--job",
                                     QString::number(job), "--size", "800x560"});
        QVERIFY2(shot.status == 0, qPrintable(shot.err));
        const QImage image(out);
        QVERIFY(!image.isNull());
        // Sample the middle of the plot: drawn cells, not the empty background.
        int drawn = 0, samples = 0;
        for (int y = image.height() * 3 / 10; y < image.height() * 8 / 10; y += 12)
            for (int x = image.width() / 5; x < image.width() * 4 / 5; x += 12, ++samples)
                if (image.pixel(x, y) != qRgb(255, 255, 255)) ++drawn;
        QVERIFY2(drawn > samples * 9 / 10, qPrintable(QString("%1 of %2 samples drawn").arg(drawn).arg(samples)));
    }

    void choosingAJobPointsTheViewsAtIt() {
        store::Project project(project_.toStdString(), read_only_project());
        auto& alignments = view<JobAlignmentsView>("alignment");
        auto& heatmap = view<JobHeatmapView>("heatmap");
        auto& timeline = view<JobTimelineView>("timeline");
        auto& bench = view<BenchmarkView>("gcups");
        auto& hits = view<JobHitsView>("hits");

        select(align_job_);
        for (JobResultView* v : std::initializer_list<JobResultView*>{&alignments, &heatmap, &timeline, &bench, &hits})
            QCOMPARE(v->shownJob(), align_job_);
        // Behind the jobs tab nothing has loaded yet; each view loads when shown.
        QVERIFY(timeline.loadPending());
        QVERIFY(hits.loadPending());
        window_->showView("timeline");
        QVERIFY(!timeline.loadPending());
        QCOMPARE(std::int64_t(timeline.timeline().index().events().size()),
                 project.job(align_job_).counts.timeline_events);
        window_->showView("alignment");
        QCOMPARE(std::int64_t(alignments.model().rowCount()), project.job(align_job_).counts.alignments);
        QVERIFY(alignments.viewer().hasAlignment());
        QCOMPARE(alignments.viewer().pair().alignment.target_id,
                 project.alignments(align_job_, 0, 1).rows[0].target_id);
        window_->showView("hits");
        QVERIFY2(hits.noteText().contains("no database hits"), qPrintable(hits.noteText()));

        select(search_job_);
        QVERIFY(hits.loadPending());
        window_->showView("hits");
        QCOMPARE(hits.hits().model()->totalHits(), project.job(search_job_).counts.hits);
        QVERIFY(hits.hits().alignmentView()->hasAlignment());  // the first hit's

        select(bench_job_);
        window_->showView("gcups");
        QCOMPARE(std::int64_t(bench.gcups().points().size()), project.job(bench_job_).counts.bench_points);
        // A job without benchmark points shows the project's series.
        select(search_job_);
        window_->showView("gcups");
        QVERIFY2(bench.noteText().contains("benchmark series"), qPrintable(bench.noteText()));
        QCOMPARE(std::int64_t(bench.gcups().points().size()), project.job(bench_job_).counts.bench_points);
    }

    void chosenAlignmentIsTheHeatmapsPair() {
        select(align_job_);
        auto& alignments = view<JobAlignmentsView>("alignment");
        auto& heatmap = view<JobHeatmapView>("heatmap");
        window_->showView("alignment");
        alignments.table().selectRow(3);  // as a click does
        QCOMPARE(alignments.currentRow(), qint64(3));
        QCOMPARE(heatmap.row(), qint64(3));
        window_->showView("heatmap");
        store::Project project(project_.toStdString(), read_only_project());
        const Alignment fourth = project.alignments(align_job_, 3, 1).rows.at(0);
        QVERIFY2(heatmap.noteText().contains(QString::fromStdString(fourth.target_id)), qPrintable(heatmap.noteText()));
        // The heatmap's path ends where the alignment does.
        const QCPCurve* path = heatmap.heatmap().pathCurve();
        QVERIFY(path && path->data()->size() >= 2);
        const auto last = (path->data()->constEnd() - 1);
        QCOMPARE(qint64(std::lround(last->key)), qint64(fourth.target_end));
        QCOMPARE(qint64(std::lround(last->value)), qint64(fourth.query_end));
        // Globins are small enough to step through.
        QVERIFY(heatmap.stepperAvailable());
        heatmap.showStepper();
        QVERIFY(heatmap.stepper().stepper());
        QCOMPARE(heatmap.stepper().stepper()->rows(), fourth.query_length + 1);
        QCOMPARE(heatmap.stepper().stepper()->cols(), fourth.target_length + 1);
    }

    void importsAChromeTraceReadOnly() {
        auto& timeline = view<JobTimelineView>("timeline");
        QVERIFY(window_->importChromeTrace(trace_));
        QVERIFY(timeline.isVisible());
        QVERIFY(timeline.timeline().readOnly());
        QCOMPARE(std::int64_t(timeline.timeline().index().events().size()),
                 window_->document().job(align_job_)->counts.timeline_events);
        QCOMPARE(timeline.shownJob(), qint64(0));
        // Choosing a job goes back to the project, the job shown before too.
        select(bench_job_);
        select(align_job_);
        window_->showView("timeline");
        QVERIFY(!timeline.timeline().readOnly());
        QCOMPARE(timeline.shownJob(), align_job_);
        QVERIFY(!window_->importChromeTrace(dir_.filePath("absent.json")));
    }

    void comparisonIsRecordedAsABenchJob() {
        auto& bench = view<BenchmarkView>("gcups");
        window_->showView("gcups");
        BenchOptions options;
        options.standard_cases = false;
        options.lengths = {32, 64};
        options.cpu_pairs = 8;
        options.gpu_pairs = 8;
        options.repeat = 1;
        options.warmup = 0;
        options.threads = 1;
        QSignalSpy comparing(&bench, &BenchmarkView::comparingChanged);
        bench.compare(options);
        QVERIFY(bench.comparing());
        // The window runs no job meanwhile: the devices are being measured.
        QCOMPARE(window_->runJob(), quint64(0));
        QTRY_VERIFY_WITH_TIMEOUT(!bench.comparing(), 60'000);
        const qint64 job = bench.comparisonJob();
        QVERIFY(job > 0);
        store::Project project(project_.toStdString(), read_only_project());
        const store::JobInfo info = project.job(job);
        QCOMPARE(info.state, store::JobState::Done);
        QCOMPARE(info.spec.command, std::string("bench"));
        QCOMPARE(info.spec.parameters.at("lengths"), std::string("32,64"));
        const auto stored = project.bench_points(job).rows;
        QCOMPARE(stored.size(), std::size_t(2));  // the CPU at two lengths (no GPU here)
        QCOMPARE(bench.shownJob(), job);
        QVERIFY(bench.gcups().points() == stored);
        QTRY_VERIFY(window_->jobsView().model().rowOf(job) >= 0);
    }

    void saveAsGoesThroughTheStore() {
        const QString other = dir_.filePath("other.alsproj");
        auto open_elsewhere = std::make_unique<store::Project>(other.toStdString(), created_project());
        QSignalSpy failed(&window_->document(), &ProjectDocument::saveFailed);
        window_->document().saveAs(other);
        QVERIFY(failed.wait(20'000));
        QVERIFY2(failed.first()[1].toString().contains("is open"), qPrintable(failed.first()[1].toString()));
        QCOMPARE(window_->document().path(), QFileInfo(project_).absoluteFilePath());
        open_elsewhere.reset();

        const std::vector<store::JobInfo> before = window_->document().jobs();
        QSignalSpy ready(window_.get(), &MainWindow::projectReady);
        window_->document().saveAs(other);  // now closed: replaced
        QVERIFY(ready.wait(20'000));
        QCOMPARE(window_->document().path(), QFileInfo(other).absoluteFilePath());
        store::Project copy(other.toStdString(), read_only_project());
        const auto jobs = copy.jobs();
        QCOMPARE(jobs.size(), before.size());
        for (std::size_t k = 0; k < jobs.size(); ++k) {
            QCOMPARE(jobs[k].id, before[k].id);
            QCOMPARE(jobs[k].counts.total(), before[k].counts.total());
        }
        const store::Project original(project_.toStdString(), read_only_project());
        QVERIFY(copy.hits(search_job_, 0, 100'000).rows == original.hits(search_job_, 0, 100'000).rows);
    }
};

int main(int argc, char** argv) { return run_isolated<WindowViewsTest>(argc, argv, "alignscope-views-test"); }

#include "test_window_views.moc"
