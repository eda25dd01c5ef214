// Schema versions: every project fixture in tests/data/projects/ (v<N>.alsproj,
// written by this code at version N, kept when the schema moves on) opens, is
// migrated to the current schema with its data intact, and can take new jobs.
//
// Writing the fixture of the current version (only when it is missing):
//   ALIGNSCOPE_WRITE_PROJECT_FIXTURE=1 store_test_migration writeCurrentFixture
// A fixture holds: an embedded input, an align job (alignments, timeline), a
// search job (hits, a long alignment, a heatmap), a bench job, a failed job,
// from version 2 on a long-pair job (its pipeline statistics and an overview
// heatmap with blocks of unequal size), and last a job left running when the
// copy was taken (it must open as interrupted).
#include "store_test_support.hpp"

#include <alignscope/error.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>

using namespace alignscope;
using namespace store_test;

namespace {

QString fixture_dir() { return QStringLiteral(ALIGNSCOPE_TEST_DATA) + "/projects"; }

QString fixture_path(int version) { return fixture_dir() + QString("/v%1.alsproj").arg(version); }

const char* kFixtureFasta =
    ">globin_a human hemoglobin alpha fragment\nMVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHF\n"
    ">globin_b human hemoglobin beta fragment\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFG\n";

store::LongPairStats sample_long_pair_stats() {
    store::LongPairStats s;
    s.query_id = "chr_a";
    s.target_id = "chr_b";
    s.query_length = 10;
    s.target_length = 12;
    s.device = "gpu:0";
    s.kernel = "long_strips_r16";
    s.strategy = "streams";
    s.kernels = 4;
    s.streams = 2;
    s.seconds = 1.25;
    s.stage_seconds = {0.75, 0.25, 0.125};
    s.stage_cells = {120, 30, 17};
    s.special_rows = 3;
    s.crossings = 3;
    s.split_levels = 2;
    s.base_segments = 5;
    return s;
}

// An overview of a 10 x 12 pair: DP rows 0..10 in two blocks from row 1,
// columns 0..12 in three from column 1.
store::Heatmap sample_overview() {
    store::Heatmap h;
    h.label = "overview H";
    h.query_id = "chr_a";
    h.target_id = "chr_b";
    h.source_rows = 11;
    h.source_cols = 13;
    h.rows = 2;
    h.cols = 3;
    h.values = {1.5f, 2.0f, 0.5f, -1.0f, 4.0f, 6.5f};
    h.row_edges = {1, 7};
    h.col_edges = {1, 5, 9};
    h.path = {{0, 0}, {1, 1}, {1, 2}};
    return h;
}

// What every fixture from version 1 on holds, written through the public API.
void write_version1_content(store::Project& project, const QString& work) {
    QFile fasta(work + "/globins.fa");
    QVERIFY(fasta.open(QIODevice::WriteOnly));
    fasta.write(kFixtureFasta);
    fasta.close();
    const SequenceSet set = read_sequences(fasta.fileName().toStdString());

    auto align = project.begin_job(sample_spec("align"));
    align->add_input(set, "query");
    align->progress(Progress{1000, 1000, 12, 12});
    align->add_alignments(sample_alignments(12));
    align->add_timeline(sample_events(30), "steady-clock");
    align->finish_done();

    auto search = project.begin_job(sample_spec("search"));
    search->add_input(set, "query");
    search->add_hits(sample_hits(25));
    search->add_long_alignment(sample_long_alignment());
    store::Heatmap heatmap = store::Heatmap::downsample({4, 3, 2, 1, 0, -1}, 2, 3, 2, 3, 2, -100);
    heatmap.label = "H";
    heatmap.path = {{0, 0}, {1, 1}, {1, 2}};
    search->add_heatmap(heatmap);
    search->finish_done();

    auto bench = project.begin_job(sample_spec("bench"));
    bench->add_bench_points(sample_bench(5));
    bench->finish_done();

    auto failed = project.begin_job(sample_spec("verify"));
    failed->finish_failed("gpu:0 disagrees with cpu-ref on pair 3");
}

// What fixtures from version 2 on add.
void write_version2_content(store::Project& project) {
    auto long_pair = project.begin_job(sample_spec("align"));
    long_pair->add_long_pair_stats(sample_long_pair_stats());
    long_pair->add_heatmap(sample_overview());
    long_pair->finish_done();
}

// What fixtures from version 3 on add.
void write_version3_content(store::Project& project) {
    project.set_setting("workbench/job_panel", R"({"algorithm":"local","matrix":"BLOSUM62"})");
    project.set_setting("notes", "kept with the project");
}

// What fixtures from version 4 on add.
void write_version4_content(store::Project& project) {
    project.add_analysis("profile_search", "globins4.hmm against 3 sequences", R"({"E":10})", R"({"models":[]})");
    project.add_analysis("allvsall", "5 sequences", R"({"mode":"global"})", std::string("{\"n\":5}\0tail", 12));
}

// The fixture of the current version: every version's content, then a job
// left running while the copy is taken.
void write_fixture(const QString& path, const QString& work) {
    store::ProjectOptions options;
    options.create_if_missing = true;
    store::Project project(path.toStdString(), options);
    write_version1_content(project, work);
    write_version2_content(project);
    write_version3_content(project);
    write_version4_content(project);

    // Copied while this one runs: the copy has a 'running' job nobody owns.
    auto running = project.begin_job(sample_spec("align"));
    running->add_alignments(sample_alignments(4, 99));
    RawDatabase raw(path);
    const QString target = fixture_path(store::Project::schema_version);
    QVERIFY2(raw.column(("VACUUM INTO '" + target.toStdString() + "'").c_str()).isEmpty(), qPrintable(raw.error()));
    running->finish_done();
}

void verify_version1_content(const store::Project& project, int version) {
    const auto jobs = project.jobs();
    QCOMPARE(jobs.size(), std::size_t(version >= 2 ? 6 : 5));
    QCOMPARE(jobs[0].spec.command, std::string("align"));
    QCOMPARE(jobs[0].state, store::JobState::Done);
    QCOMPARE(jobs[0].progress.items_done, std::uint64_t{12});
    QCOMPARE(jobs[1].state, store::JobState::Done);
    QCOMPARE(jobs[2].spec.command, std::string("bench"));
    QCOMPARE(jobs[3].state, store::JobState::Failed);
    QCOMPARE(jobs[3].error, std::string("gpu:0 disagrees with cpu-ref on pair 3"));
    QCOMPARE(jobs.back().state, store::JobState::Interrupted);
    QCOMPARE(jobs.back().counts.alignments, std::int64_t{4});

    const auto alignments = project.alignments(jobs[0].id, 0, 100).rows;
    const auto expected = sample_alignments(12);
    QCOMPARE(alignments.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        QCOMPARE(alignments[k].score, expected[k].score);
        QCOMPARE(alignments[k].cigar, expected[k].cigar);
        QCOMPARE(alignments[k].target_aligned, expected[k].target_aligned);
    }
    QCOMPARE(project.timeline(jobs[0].id, 0, 100).rows.size(), std::size_t{30});
    QVERIFY(project.hits(jobs[1].id, 0, 100).rows == sample_hits(25));
    QCOMPARE(project.long_alignments(jobs[1].id).rows.at(0).alignment_path, sample_long_alignment().alignment_path);
    const auto heatmaps = project.heatmaps(jobs[1].id);
    QCOMPARE(heatmaps.size(), std::size_t{1});
    QCOMPARE(heatmaps[0].values, (std::vector<float>{2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -0.5f}));
    QVERIFY(heatmaps[0].row_edges.empty() && heatmaps[0].col_edges.empty());  // uniform blocks
    QCOMPARE(heatmaps[0].row_of(1), 1);
    for (const auto& job : jobs)
        if (job.id != (version >= 2 ? jobs[4].id : 0)) QCOMPARE(job.counts.long_pair_stats, std::int64_t{0});
    QVERIFY(project.bench_points(jobs[2].id).rows == sample_bench(5));
    QCOMPARE(jobs[0].spec.scheme().matrix.name(), std::string("BLOSUM62"));

    const auto inputs = project.inputs();
    QCOMPARE(inputs.size(), std::size_t{1});
    QVERIFY(inputs[0].embedded);
    QCOMPARE(jobs[0].inputs, (std::vector<store::JobInput>{{inputs[0].id, "query"}}));
    QCOMPARE(jobs[1].inputs, (std::vector<store::JobInput>{{inputs[0].id, "query"}}));
    const auto records = project.input_sequences(inputs[0].id);
    QCOMPARE(records.size(), std::size_t{2});
    QCOMPARE(records[1].id, std::string("globin_b"));
    QCOMPARE(records[1].residues, std::string("MVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFG"));
}

void verify_version2_content(const store::Project& project) {
    const store::JobInfo job = project.jobs().at(4);
    QCOMPARE(job.state, store::JobState::Done);
    QCOMPARE(job.counts.long_pair_stats, std::int64_t{1});
    QCOMPARE(job.counts.heatmaps, std::int64_t{1});
    const auto stats = project.long_pair_stats(job.id);
    QCOMPARE(stats.size(), std::size_t{1});
    // The strip kernel's name as versions 2 to 4 stored it ("long_strips_r16")
    // reads in today's words.
    store::LongPairStats want_stats = sample_long_pair_stats();
    want_stats.kernel = "nw_affine_strips16_s32";
    QVERIFY(stats[0] == want_stats);
    const auto maps = project.heatmaps(job.id);
    QCOMPARE(maps.size(), std::size_t{1});
    const store::Heatmap want = sample_overview();
    QCOMPARE(maps[0].values, want.values);
    QCOMPARE(maps[0].row_edges, want.row_edges);
    QCOMPARE(maps[0].col_edges, want.col_edges);
    QCOMPARE(maps[0].path, want.path);
    // Blocks by the edges: row 0 and column 0 in none, row 7 starts the second.
    QCOMPARE(maps[0].row_of(0), -1);
    QCOMPARE(maps[0].row_of(6), 0);
    QCOMPARE(maps[0].row_of(7), 1);
    QCOMPARE(maps[0].row_of(10), 1);
    QCOMPARE(maps[0].col_of(8), 1);
    QCOMPARE(maps[0].col_begin(3), std::int64_t{13});
}

void verify_version3_content(const store::Project& project) {
    QCOMPARE(project.setting("workbench/job_panel").value_or(""),
             std::string(R"({"algorithm":"local","matrix":"BLOSUM62"})"));
    QCOMPARE(project.setting("notes").value_or(""), std::string("kept with the project"));
    QVERIFY(!project.setting("never set"));
}

void verify_version4_content(const store::Project& project) {
    const auto analyses = project.analyses();
    QCOMPARE(analyses.size(), std::size_t(2));
    QCOMPARE(analyses[0].kind, std::string("profile_search"));
    QCOMPARE(analyses[0].title, std::string("globins4.hmm against 3 sequences"));
    QCOMPARE(analyses[0].parameters, std::string(R"({"E":10})"));
    QCOMPARE(project.analysis_results(analyses[0].id), std::string(R"({"models":[]})"));
    QCOMPARE(analyses[1].kind, std::string("allvsall"));
    QCOMPARE(project.analysis_results(analyses[1].id), std::string("{\"n\":5}\0tail", 12));
    QVERIFY(analyses[0].created_ms > 0);
}

QStringList schema_of(const QString& path) {
    return RawDatabase(path).column(
        "SELECT type || ' ' || name || ': ' || sql FROM sqlite_schema "
        "WHERE name NOT LIKE 'sqlite_%' ORDER BY name");
}

}  // namespace

class TestMigration : public QObject {
    Q_OBJECT

private slots:
    void writeCurrentFixture() {
        if (qEnvironmentVariableIsEmpty("ALIGNSCOPE_WRITE_PROJECT_FIXTURE"))
            QSKIP("set ALIGNSCOPE_WRITE_PROJECT_FIXTURE=1 to write the fixture of the current schema version");
        if (QFileInfo::exists(fixture_path(store::Project::schema_version)))
            QSKIP("the fixture of the current version exists; fixtures are never rewritten");
        QVERIFY(QDir().mkpath(fixture_dir()));
        QTemporaryDir work;
        write_fixture(work.filePath("source.alsproj"), work.path());
        QVERIFY(QFileInfo::exists(fixture_path(store::Project::schema_version)));
    }

    void everyVersionHasAFixture() {
        for (int version = 1; version <= store::Project::schema_version; ++version)
            QVERIFY2(QFileInfo::exists(fixture_path(version)),
                     qPrintable("missing project fixture " + fixture_path(version)));
    }

    void fixturesOpenAndMigrate_data() {
        QTest::addColumn<int>("version");
        for (int version = 1; version <= store::Project::schema_version; ++version)
            QTest::newRow(qPrintable(QString("v%1").arg(version))) << version;
    }

    void fixturesOpenAndMigrate() {
        QFETCH(int, version);
        QTemporaryDir dir;
        const QString copy = dir.filePath("old.alsproj");
        QVERIFY(QFile::copy(fixture_path(version), copy));
        QFile(copy).setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        QCOMPARE(RawDatabase(copy).integer("PRAGMA user_version"), qint64(version));
        QCOMPARE(RawDatabase(copy).column("SELECT state FROM jobs ORDER BY id").last(), QString("running"));

        if (version < store::Project::schema_version) {
            store::ProjectOptions reading;
            reading.read_only = true;
            bool refused = false;
            try {
                store::Project project(copy.toStdString(), reading);
            } catch (const Error& e) {
                refused = QString(e.what()).contains("upgrade");
            }
            QVERIFY(refused);
        }
        {
            store::Project project(copy.toStdString());
            QCOMPARE(project.found_schema_version(), version);
            if (version >= 1) verify_version1_content(project, version);
            if (version >= 2) verify_version2_content(project);
            if (version >= 3) verify_version3_content(project);
            if (version >= 4) verify_version4_content(project);
            // A migrated project keeps analyses (an older one had no table for them).
            const std::size_t before = project.analyses().size();
            const auto added = project.add_analysis("allvsall", "after migration", "{}", "x");
            QCOMPARE(project.analyses().size(), before + 1);
            QCOMPARE(project.analysis_results(added), std::string("x"));
            project.delete_analysis(added);
            QCOMPARE(project.analyses().size(), before);
            // A migrated project takes settings (an older one had no table for them).
            project.set_setting("after migration", "yes");
            QCOMPARE(project.setting("after migration").value_or(""), std::string("yes"));
            auto job = project.begin_job(sample_spec());
            job->add_hits(sample_hits(3));
            job->finish_done();
            QVERIFY(project.check().ok());
        }
        QCOMPARE(RawDatabase(copy).integer("PRAGMA user_version"), qint64(store::Project::schema_version));
        QCOMPARE(integrity(copy), QString("ok"));
        // Migrating gives exactly the schema a new project gets.
        store::ProjectOptions creating;
        creating.create_if_missing = true;
        { store::Project fresh(dir.filePath("fresh.alsproj").toStdString(), creating); }
        QCOMPARE(schema_of(copy), schema_of(dir.filePath("fresh.alsproj")));
    }
};

QTEST_GUILESS_MAIN(TestMigration)
#include "test_migration.moc"
