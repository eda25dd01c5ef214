// Schema versions: every project fixture in tests/data/projects/ (v<N>.alsproj,
// written by this code at version N, kept when the schema moves on) opens, is
// migrated to the current schema with its data intact, and can take new jobs.
//
// Writing the fixture of the current version (only when it is missing):
//   ALIGNSCOPE_WRITE_PROJECT_FIXTURE=1 store_test_migration writeCurrentFixture
// A fixture holds: an embedded input, an align job (alignments, timeline), a
// search job (hits, a long alignment, a heatmap), a bench job, a failed job,
// and a job left running when the copy was taken (it must open as interrupted).
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

// What every fixture from version 1 on holds, written through the public API.
void write_version1_content(const QString& path, const QString& work) {
    store::ProjectOptions options;
    options.create_if_missing = true;
    store::Project project(path.toStdString(), options);
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

    // Copied while this one runs: the copy has a 'running' job nobody owns.
    auto running = project.begin_job(sample_spec("align"));
    running->add_alignments(sample_alignments(4, 99));
    RawDatabase raw(path);
    const QString target = fixture_path(store::Project::schema_version);
    QVERIFY2(raw.column(("VACUUM INTO '" + target.toStdString() + "'").c_str()).isEmpty(), qPrintable(raw.error()));
    running->finish_done();
}

void verify_version1_content(const store::Project& project) {
    const auto jobs = project.jobs();
    QCOMPARE(jobs.size(), std::size_t{5});
    QCOMPARE(jobs[0].spec.command, std::string("align"));
    QCOMPARE(jobs[0].state, store::JobState::Done);
    QCOMPARE(jobs[0].progress.items_done, std::uint64_t{12});
    QCOMPARE(jobs[1].state, store::JobState::Done);
    QCOMPARE(jobs[2].spec.command, std::string("bench"));
    QCOMPARE(jobs[3].state, store::JobState::Failed);
    QCOMPARE(jobs[3].error, std::string("gpu:0 disagrees with cpu-ref on pair 3"));
    QCOMPARE(jobs[4].state, store::JobState::Interrupted);
    QCOMPARE(jobs[4].counts.alignments, std::int64_t{4});

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

QStringList schema_of(const QString& path) {
    return RawDatabase(path).column("SELECT type || ' ' || name || ': ' || sql FROM sqlite_schema "
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
        write_version1_content(work.filePath("source.alsproj"), work.path());
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
            if (version >= 1) verify_version1_content(project);
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
