// Ranked hit tables: hits ranked here from reference alignments of a real
// query against the demo globins, shown in rank order, sorted by other
// columns, the selected hit's alignment equal to the reference's, the table's
// rows drawn, and a job's hits paged in from a project with its sequences.
// A real search recorded into a project (engine search API, CPU scanner and
// aligner, over a slice of the mmseqs2 example proteins) shows each hit's
// stored alignment without aligning again, and re-aligns, saying so, only the
// hits the project holds no alignment for; `alignscope --screenshot --view
// hits` over a CLI search shows the top hit's stored alignment.
#include "cli_runner.hpp"
#include "project_document.hpp"
#include "views/hits/hits_view.hpp"
#include "views/job_hits_view.hpp"
#include "views/view_catalog.hpp"
#include "workbench_fixture.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/search/scan.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/search/search_settings.hpp>
#include <alignscope/seq/alphabet.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <QApplication>
#include <QHeaderView>
#include <QImage>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <map>

using namespace alignscope;
using namespace alignscope::ui;
using namespace alignscope::ui::fixture;

namespace {

const QString demo = QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo/");
const QString examples = QStringLiteral("/usr/share/doc/mmseqs2/example-data/");

// Query and database files in `dir`: a slice of the mmseqs2 example proteins
// (UniProt), or the demo globins where that package is not installed.
void real_slices(const QTemporaryDir& dir, QString& queries, QString& database) {
    queries = dir.filePath("queries.fa");
    database = dir.filePath("database.fa");
    if (QFile::exists(examples + "QUERY.fasta.gz") && QFile::exists(examples + "DB.fasta.gz")) {
        QVERIFY(write_slice(examples + "QUERY.fasta.gz", queries, 3));
        QVERIFY(write_slice(examples + "DB.fasta.gz", database, 400));
    } else {
        qInfo("mmseqs2 example data not installed: searching the demo globins");
        QVERIFY(write_slice(demo + "globins_human.fa", queries, 2));
        QVERIFY(write_slice(demo + "globins_others.fa", database, 1000));
    }
}

// Sequences by id, residues normalised as the views normalise them.
std::map<std::string, Sequence> by_id(const SequenceSet& set) {
    std::map<std::string, Sequence> found;
    for (Sequence s : set.records) {
        normalise_residues(s.residues, set.alphabet);
        found.emplace(s.id, std::move(s));
    }
    return found;
}

struct RecordedSearch {
    std::int64_t job = 0;
    ScoringScheme scheme;
    AlignOptions options;
    std::map<std::string, Sequence> queries, targets;
    // What the search produced for each hit (query id + "\t" + target id):
    // its alignment when it was recorded.
    std::map<std::string, Alignment> recorded;
    std::int64_t hits = 0;
};

// A real search run through the engine's search API (CPU scanner, CPU
// aligner) and recorded into `project` as `alignscope-cli search --project`
// records one (query and database inputs, hits, alignments in hit order),
// except that only the best `aligned` hits of each query keep their alignment.
RecordedSearch record_search(const std::string& project, const QString& queries_path, const QString& database_path,
                             std::size_t top, int aligned) {
    RecordedSearch r;
    const SequenceSet queries = read_sequences(queries_path.toStdString());
    const SequenceSet database = read_sequences(database_path.toStdString());
    r.queries = by_id(queries);
    r.targets = by_id(database);
    ScanSetup setup;
    setup.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 12, 1);
    setup.options.mode = AlignmentMode::Local;
    r.scheme = setup.scheme;
    r.options = setup.options;
    auto scanners = make_cpu_scanner_registry();
    auto scanner = scanners->create("cpu");
    auto devices = make_cpu_registry();
    Backend& aligner = devices->select("cpu");
    SearchOptions search;
    search.top = top;
    store::ProjectOptions create;
    create.create_if_missing = true;
    store::Project file(project, create);
    auto job = file.begin_job(search_job_spec("search", setup, search, scanner->info()));
    r.job = job->job_id();
    job->add_input(queries, "query");
    job->add_input(database, "database");
    const PreparedDatabase prepared = pack_database(database.records, database.alphabet, database.path);
    SearchCallbacks callbacks;
    callbacks.query_done = [&](const QueryHits& found) {
        std::vector<store::Hit> rows;
        std::vector<Alignment> alignments;
        for (const SearchHit& hit : found.hits) {
            rows.push_back(to_store_hit(hit));
            if (hit.rank <= aligned && hit.alignment.has_traceback()) {
                alignments.push_back(hit.alignment);
                r.recorded.emplace(hit.alignment.query_id + "\t" + hit.alignment.target_id, hit.alignment);
            }
        }
        job->add_hits(rows);
        if (!alignments.empty()) job->add_alignments(alignments);
        r.hits += std::int64_t(rows.size());
    };
    JobContext context;
    run_search(queries.records, prepared, setup.scheme, setup.options, *scanner, &aligner, search, callbacks, context);
    job->finish_done();
    return r;
}

void compare_alignments(const Alignment& shown, const Alignment& want) {
    QCOMPARE(shown.query_id, want.query_id);
    QCOMPARE(shown.target_id, want.target_id);
    QCOMPARE(shown.score, want.score);
    QCOMPARE(shown.query_begin, want.query_begin);
    QCOMPARE(shown.query_end, want.query_end);
    QCOMPARE(shown.target_begin, want.target_begin);
    QCOMPARE(shown.target_end, want.target_end);
    QCOMPARE(shown.cigar, want.cigar);
    QCOMPARE(shown.query_aligned, want.query_aligned);
    QCOMPARE(shown.target_aligned, want.target_aligned);
    QCOMPARE(shown.device, want.device);
    QCOMPARE(shown.kernel, want.kernel);
}

struct Search {
    std::vector<Sequence> queries, targets;
    ScoringScheme scheme;
    AlignOptions options;
    std::vector<store::Hit> hits;       // rank order
    std::vector<Alignment> alignments;  // in the same order
};

// One query against every demo globin, ranked by reference local score.
Search search() {
    Search s;
    s.queries = {read_sequences((demo + "globins_human.fa").toStdString()).records.at(1)};  // HBA_HUMAN
    s.targets = read_sequences((demo + "globins_others.fa").toStdString()).records;
    s.targets.push_back(read_sequences((demo + "globins_human.fa").toStdString()).records.at(0));
    s.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
    s.options.mode = AlignmentMode::Local;
    std::vector<std::pair<Alignment, const Sequence*>> found;
    for (const Sequence& t : s.targets) {
        Alignment a = align_reference(s.queries[0].residues, t.residues, s.scheme, s.options);
        a.query_id = s.queries[0].id;
        a.target_id = t.id;
        found.emplace_back(a, &t);
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& x, const auto& y) { return x.first.score > y.first.score; });
    for (std::size_t k = 0; k < found.size(); ++k) {
        const Alignment& a = found[k].first;
        store::Hit h;
        h.query_id = a.query_id;
        h.target_id = a.target_id;
        h.rank = std::int64_t(k + 1);
        h.score = a.score;
        h.query_begin = a.query_begin;
        h.query_end = a.query_end;
        h.target_begin = a.target_begin;
        h.target_end = a.target_end;
        h.query_length = a.query_length;
        h.target_length = a.target_length;
        s.hits.push_back(h);
        s.alignments.push_back(a);
    }
    return s;
}

}  // namespace

class TestViewHits : public QObject {
    Q_OBJECT
private slots:
    void rankedAndSelected() {
        const Search s = search();
        HitsView view;
        view.resize(1000, 800);
        view.show();
        QApplication::processEvents();
        std::vector<store::Hit> shuffled(s.hits.rbegin(), s.hits.rend());  // the table sorts by rank itself
        view.setHits(shuffled, s.queries, s.targets, s.scheme, s.options);
        HitTableModel* model = view.model();
        QCOMPARE(model->rowCount(), int(s.hits.size()));
        for (int r = 0; r < model->rowCount(); ++r) {
            QCOMPARE(model->hit(r), s.hits[std::size_t(r)]);
            QCOMPARE(model->data(model->index(r, HitTableModel::Target)).toString().toStdString(),
                     s.hits[std::size_t(r)].target_id);
            QCOMPARE(model->data(model->index(r, HitTableModel::Score)).toString().toStdString(),
                     format_score(s.scheme.to_user(s.hits[std::size_t(r)].score)));
        }
        QCOMPARE(model->data(model->index(0, HitTableModel::Target)).toString(),
                 QString("HBA_HORSE"));  // its closest relative
        // Sorting by score, high first, keeps the ranks in order.
        view.table()->sortByColumn(HitTableModel::Score, Qt::DescendingOrder);
        for (int r = 1; r < model->rowCount(); ++r) QVERIFY(model->hit(r - 1).score >= model->hit(r).score);
        view.table()->sortByColumn(HitTableModel::Rank, Qt::AscendingOrder);

        QSignalSpy selected(&view, &HitsView::hitSelected);
        for (int r = 0; r < model->rowCount(); ++r) {
            view.selectHit(r);
            const Alignment& shown = view.alignmentView()->pair().alignment;
            QCOMPARE(shown.target_id, s.alignments[std::size_t(r)].target_id);
            QCOMPARE(shown.score, s.hits[std::size_t(r)].score);
            QCOMPARE(shown.query_aligned, s.alignments[std::size_t(r)].query_aligned);
            QVERIFY2(view.noteText().startsWith(QString("Rank %1:").arg(r + 1)) && !view.noteText().contains("differs"),
                     qPrintable(view.noteText()));
        }
        QVERIFY(selected.count() >= model->rowCount());
        // The table is drawn: each row's band of the image has text in it.
        view.table()->clearSelection();  // dark text on the plain row colours
        view.table()->scrollToTop();
        QApplication::processEvents();
        const QImage image = view.table()->viewport()->grab().toImage();
        int drawn = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const QRect row = view.table()->visualRect(model->index(r, HitTableModel::Target));
            if (!image.rect().contains(row)) continue;
            ++drawn;
            int dark = 0;
            for (int y = row.top(); y <= row.bottom(); ++y)
                for (int x = row.left(); x <= row.right(); ++x) dark += image.pixelColor(x, y).lightness() < 100;
            QVERIFY2(dark > 10, qPrintable(QString("row %1").arg(r)));
        }
        QVERIFY(drawn >= 3);
        // A hit whose sequences are unknown says so instead of aligning.
        std::vector<store::Hit> odd = s.hits;
        odd[0].target_id = "NOT_THERE";
        view.setHits(odd, s.queries, s.targets, s.scheme, s.options);
        view.selectHit(0);
        QVERIFY(view.noteText().contains("not available"));
        QVERIFY(!view.alignmentView()->hasAlignment());
    }

    void pagedFromTheProject() {
        const Search s = search();
        QTemporaryDir dir;
        const std::string path = dir.filePath("p.alsproj").toStdString();
        store::ProjectOptions create;
        create.create_if_missing = true;
        std::int64_t job_id = 0;
        // 1,200 hits: the real six, then ranked repeats of them (a long table to page through).
        std::vector<store::Hit> many;
        for (int k = 0; k < 1200; ++k) {
            store::Hit h = s.hits[std::size_t(k) % s.hits.size()];
            h.rank = k + 1;
            many.push_back(h);
        }
        {
            store::Project project(path, create);
            store::JobSpec spec;
            spec.command = "search";
            spec.mode = "local";
            spec.set_scheme(s.scheme);
            auto job = project.begin_job(spec);
            job->add_input(read_sequences((demo + "globins_human.fa").toStdString()), "query");
            job->add_input(read_sequences((demo + "globins_others.fa").toStdString()), "database");
            job->add_input(read_sequences((demo + "globins_human.fa").toStdString()), "database");
            job->add_hits(many);
            job_id = job->job_id();
            job->finish_done();
        }
        store::Project project(path);
        HitsView view;
        view.loadFromProject(project, job_id);
        HitTableModel* model = view.model();
        QCOMPARE(model->totalHits(), std::int64_t(1200));
        int pages = 0;
        while (model->canFetchMore({})) {
            model->fetchMore({});
            ++pages;
        }
        QCOMPARE(pages, 3);  // 500 + 500 + 200
        QCOMPARE(model->rowCount(), 1200);
        for (int r = 0; r < 1200; r += 97) QCOMPARE(model->hit(r), many[std::size_t(r)]);
        view.selectHit(2);
        QCOMPARE(view.alignmentView()->pair().alignment.score, s.hits[2].score);
        QCOMPARE(view.alignmentView()->pair().alignment.target_id, s.hits[2].target_id);
    }

    // Selecting a hit shows the alignment its search stored, not a new one:
    // the shown alignment is the store's (and the search's own), the store's
    // rescores to its score along its CIGAR and equals the reference
    // aligner's optimum, and the view aligned nothing. Hits whose alignment
    // the project does not hold (below the best `aligned` of their query) are
    // aligned again, and the view says so.
    void selectedHitShowsTheStoredAlignment() {
        QTemporaryDir dir;
        QString queries, database;
        real_slices(dir, queries, database);
        const std::string path = dir.filePath("search.alsproj").toStdString();
        constexpr int aligned = 3;
        const RecordedSearch search = record_search(path, queries, database, 6, aligned);
        QVERIFY(search.hits > 6);
        QVERIFY(!search.recorded.empty());

        store::Project project(path);
        QCOMPARE(project.job(search.job).counts.alignments, std::int64_t(search.recorded.size()));
        HitsView view;
        view.resize(1000, 800);
        view.show();
        view.loadFromProject(project, search.job);
        HitTableModel* model = view.model();
        while (model->canFetchMore({})) model->fetchMore({});
        QCOMPARE(std::int64_t(model->rowCount()), search.hits);
        int stored_shown = 0, realigned_shown = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const store::Hit hit = model->hit(r);
            const int realigned_before = view.realignmentCount();
            view.selectHit(r);
            const std::optional<Alignment> stored = project.hit_alignment(search.job, model->ordinal(r));
            const Sequence& q = search.queries.at(hit.query_id);
            const Sequence& t = search.targets.at(hit.target_id);
            const auto recorded = search.recorded.find(hit.query_id + "\t" + hit.target_id);
            QCOMPARE(stored.has_value(), recorded != search.recorded.end());
            QCOMPARE(stored.has_value(), hit.rank <= aligned);
            QVERIFY(view.alignmentView()->hasAlignment());
            const Alignment& shown = view.alignmentView()->pair().alignment;
            if (stored) {
                ++stored_shown;
                QCOMPARE(view.shownSource(), HitsView::Source::Stored);
                QCOMPARE(view.realignmentCount(), realigned_before);  // nothing aligned here
                QVERIFY2(view.noteText().contains("alignment from the project") &&
                             !view.noteText().contains("aligned again"),
                         qPrintable(view.noteText()));
                compare_alignments(shown, *stored);
                compare_alignments(*stored, recorded->second);
                // Independent: the stored path rescored on the sequences gives
                // its score, the hit's, and the reference aligner's optimum.
                QCOMPARE(rescore(stored->cigar, q.residues, t.residues, stored->query_begin, stored->target_begin,
                                 search.scheme),
                         stored->score);
                QCOMPARE(stored->score, hit.score);
                QCOMPARE(align_reference(q.residues, t.residues, search.scheme, search.options).score, stored->score);
            } else {
                ++realigned_shown;
                QCOMPARE(view.shownSource(), HitsView::Source::Realigned);
                QCOMPARE(view.realignmentCount(), realigned_before + 1);
                QVERIFY2(view.noteText().contains("aligned again") &&
                             view.noteText().contains("holds no alignment for this hit"),
                         qPrintable(view.noteText()));
                QCOMPARE(shown.device, std::string("cpu-ref"));
                QCOMPARE(shown.score, hit.score);
            }
        }
        qInfo("%lld hits: %d shown as stored, %d aligned again", static_cast<long long>(search.hits), stored_shown,
              realigned_shown);
        QVERIFY(stored_shown > 0 && realigned_shown > 0);

        // Sorted by another column, a selected row still shows its own hit's
        // stored alignment, and the selection follows its hit.
        view.table()->sortByColumn(HitTableModel::Target, Qt::AscendingOrder);
        for (int r = 0; r < model->rowCount(); ++r) {
            if (model->hit(r).rank > aligned) continue;
            const int realigned_before = view.realignmentCount();
            const std::string target = model->hit(r).target_id;
            view.selectHit(r);
            QCOMPARE(view.shownSource(), HitsView::Source::Stored);
            QCOMPARE(view.realignmentCount(), realigned_before);
            QCOMPARE(view.alignmentView()->pair().alignment.target_id, target);
            view.table()->sortByColumn(HitTableModel::Score, Qt::DescendingOrder);
            QCOMPARE(model->hit(view.table()->currentIndex().row()).target_id, target);
            view.table()->sortByColumn(HitTableModel::Target, Qt::AscendingOrder);
            break;
        }
    }

    // The description, identity and coverage columns of a real search: the
    // description is the target's FASTA header text, identity is counted here
    // from the stored alignment's aligned residues (identical columns over
    // columns), coverage from the hit's query coordinates; hits without a
    // stored alignment say so ("-" and why), until selected: then the
    // alignment made here fills identity in. The identity filter hides rows.
    void descriptionIdentityCoverage() {
        QTemporaryDir dir;
        QString queries, database;
        real_slices(dir, queries, database);
        // The slices keep ids only: give each target a description of its own.
        const QString described = dir.filePath("described.fa");
        std::map<std::string, std::string> descriptions;
        {
            const SequenceSet set = read_sequences(database.toStdString());
            std::ofstream out(described.toStdString());
            for (std::size_t k = 0; k < set.records.size(); ++k) {
                const std::string text = "protein number " + std::to_string(k) + ", length " +
                                         std::to_string(set.records[k].residues.size());
                descriptions[set.records[k].id] = text;
                out << '>' << set.records[k].id << ' ' << text << '\n' << set.records[k].residues << '\n';
            }
        }
        const std::string path = dir.filePath("columns.alsproj").toStdString();
        constexpr int aligned = 2;
        const RecordedSearch search = record_search(path, queries, described, 5, aligned);
        store::Project project(path);
        HitsView view;
        view.resize(1200, 800);
        view.show();
        view.loadFromProject(project, search.job);
        HitTableModel* model = view.model();
        while (model->canFetchMore({})) model->fetchMore({});
        QVERIFY(model->rowCount() > aligned);
        QCOMPARE(model->headerData(HitTableModel::Identity, Qt::Horizontal).toString(), QString("Identity %"));
        QVERIFY(model->headerData(HitTableModel::Identity, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains("stored alignment"));
        int unknown = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const store::Hit hit = model->hit(r);
            QCOMPARE(model->index(r, HitTableModel::Description).data().toString().toStdString(),
                     descriptions.at(hit.target_id));
            const double coverage = 100.0 * double(hit.query_end - hit.query_begin + 1) / double(hit.query_length);
            QCOMPARE(model->index(r, HitTableModel::Coverage).data().toString(), QString::number(coverage, 'f', 1));
            const std::optional<Alignment> stored = project.hit_alignment(search.job, model->ordinal(r));
            if (stored) {
                int same = 0;
                const std::size_t columns = stored->query_aligned.size();
                QCOMPARE(columns, stored->target_aligned.size());
                for (std::size_t c = 0; c < columns; ++c)
                    same += stored->query_aligned[c] != '-' && stored->query_aligned[c] == stored->target_aligned[c];
                const double identity = 100.0 * same / double(columns);
                QCOMPARE(model->index(r, HitTableModel::Identity).data().toString(), QString::number(identity, 'f', 1));
                QCOMPARE(model->identitySource(r), HitTableModel::IdentitySource::Stored);
            } else {
                ++unknown;
                QCOMPARE(model->index(r, HitTableModel::Identity).data().toString(), QString("-"));
                QVERIFY(model->index(r, HitTableModel::Identity)
                            .data(Qt::ToolTipRole)
                            .toString()
                            .contains("without traceback"));
            }
        }
        QVERIFY(unknown > 0);
        // The identity filter: rows below it (and rows without one) hidden.
        const double threshold = 40;
        view.setFilters(0, 0, threshold);
        for (int r = 0; r < model->rowCount(); ++r) {
            const auto identity = model->identity(r);
            QCOMPARE(view.table()->isRowHidden(r), !identity || *identity < threshold);
        }
        view.setFilters(0, 0, 0);
        // A hit without a stored alignment, selected: aligned here, and its
        // identity is that alignment's.
        for (int r = 0; r < model->rowCount(); ++r) {
            if (model->identity(r)) continue;
            view.selectHit(r);
            QCOMPARE(view.shownSource(), HitsView::Source::Realigned);
            const Alignment& shown = view.alignmentView()->pair().alignment;
            int same = 0;
            for (std::size_t c = 0; c < shown.query_aligned.size(); ++c)
                same += shown.query_aligned[c] != '-' && shown.query_aligned[c] == shown.target_aligned[c];
            QVERIFY(model->identity(r).has_value());
            QCOMPARE(model->index(r, HitTableModel::Identity).data().toString(),
                     QString::number(100.0 * same / double(shown.query_aligned.size()), 'f', 1));
            QCOMPARE(model->identitySource(r), HitTableModel::IdentitySource::Realigned);
            QVERIFY(model->index(r, HitTableModel::Identity).data(Qt::ToolTipRole).toString().contains("made here"));
            break;
        }
        view.table()->sortByColumn(HitTableModel::Rank, Qt::AscendingOrder);
        view.selectHit(0);
        keep_screenshot(view, "hits-identity-coverage");
        // The export carries the new columns.
        const QString tsv = dir.filePath("hits.tsv");
        view.exportTable(tsv);
        QFile file(tsv);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList header = QString::fromUtf8(file.readLine()).trimmed().split('\t');
        QVERIFY(header.contains("Description") && header.contains("Identity %") && header.contains("Coverage %"));
    }

    // `alignscope --project P --screenshot out.png --view hits` over a CLI
    // search: the picture has real content, and the same view built the same
    // way in this process shows the top hit's stored alignment, aligning
    // nothing, and draws the same picture.
    void screenshotShowsTheTopHitsStoredAlignment() {
        QTemporaryDir dir;
        QString queries, database;
        real_slices(dir, queries, database);
        const QString path = dir.filePath("cli.alsproj");
        const ProcessResult cli =
            run_cli({"search", "-q", queries, "-d", database, "--device", "cpu", "--top", "5", "--db-cache", "off",
                     "--quiet", "--project", path, "-o", dir.filePath("hits.txt")});
        QVERIFY2(cli.exit_code == 0, cli.err.constData());
        const QString out = dir.filePath("hits.png");
        {
            QProcess gui;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("QT_QPA_PLATFORM", "offscreen");
            gui.setProcessEnvironment(env);
            gui.start(QStringLiteral(ALIGNSCOPE_GUI),
                      {"--project", path, "--screenshot", out, "--view", "hits", "--size", "1000x700"});
            QVERIFY(gui.waitForFinished(120'000));
            QVERIFY2(gui.exitStatus() == QProcess::NormalExit && gui.exitCode() == 0,
                     gui.readAllStandardError().constData());
        }
        const QImage shot(out);
        QCOMPARE(shot.size(), QSize(1000, 700));
        const auto [colours, top_share] = colour_statistics(shot);
        QVERIFY2(colours >= 16 && top_share < 0.97, qPrintable(QString("%1 colours").arg(colours)));

        auto registry = make_cpu_registry();
        MainWindow window(*registry);
        window.setConfirmCloseWhileRunning(false);
        QSignalSpy ready(&window, &MainWindow::projectReady);
        window.openProject(path);
        QVERIFY(ready.wait(30'000));
        const ViewSpec* spec = find_view("hits");
        QVERIFY(spec);
        std::unique_ptr<ResultView> view(spec->create(window.document(), nullptr));
        const qint64 job = view->defaultJob(window.document().jobs());
        QVERIFY(job > 0);
        view->showJob(job);
        view->resize(1000, 700);
        view->show();
        for (int round = 0; round < 5; ++round) QApplication::processEvents(QEventLoop::AllEvents, 50);
        auto* hits_view = qobject_cast<JobHitsView*>(view.get());
        QVERIFY(hits_view);
        HitsView& hits = hits_view->hits();
        QCOMPARE(hits.shownSource(), HitsView::Source::Stored);
        QCOMPARE(hits.realignmentCount(), 0);
        const store::Project& project = *window.document().project();
        const store::Hit top = project.hits(job, 0, 1).rows.at(0);
        QCOMPARE(top.rank, std::int64_t(1));
        QCOMPARE(hits.model()->hit(hits.table()->currentIndex().row()), top);
        // The CLI aligns every hit: the first alignment row is the top hit's.
        const Alignment first = project.alignments(job, 0, 1).rows.at(0);
        compare_alignments(hits.alignmentView()->pair().alignment, first);
        compare_alignments(*project.hit_alignment(job, 0), first);
        const QImage here = view->grab().toImage().convertToFormat(shot.format());
        QCOMPARE(here.size(), shot.size());
        qint64 differing = 0;
        for (int y = 0; y < here.height(); ++y)
            for (int x = 0; x < here.width(); ++x) differing += here.pixel(x, y) != shot.pixel(x, y);
        qInfo("hits screenshot: %d colours; %lld pixels differ from the view drawn here", colours,
              static_cast<long long>(differing));
        QCOMPARE(differing, qint64(0));
    }
};

int main(int argc, char** argv) { return run_isolated<TestViewHits>(argc, argv); }

#include "test_view_hits.moc"
