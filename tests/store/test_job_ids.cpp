// The job list's cheap reads (Project::job_ids and job_count) that a polling
// view catches up with: ids above the last one seen, oldest first, against the
// full list; ids never reused after the newest job is deleted (a view that
// asks for ids above its last would otherwise miss a new job); the count
// telling deletions, also those done by another connection.
#include "store_test_support.hpp"

using namespace alignscope;
using namespace store_test;

namespace {

std::vector<std::int64_t> ids_of(const std::vector<store::JobInfo>& jobs) {
    std::vector<std::int64_t> ids;
    for (const auto& j : jobs) ids.push_back(j.id);
    return ids;
}

std::int64_t record_done(const std::string& path) {
    store::JobRecording recording(path, sample_spec());
    recording.finish_done();
    return recording.job_id();
}

}  // namespace

class JobIdsTest : public QObject {
    Q_OBJECT

private slots:
    void idsAboveTheLastSeen() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("ids.alsproj").toStdString();
        store::ProjectOptions create;
        create.create_if_missing = true;
        store::Project project(path, create);
        QVERIFY(project.job_ids().empty());
        QCOMPARE(project.job_count(), std::int64_t{0});

        for (int k = 0; k < 5; ++k) record_done(path);
        const std::vector<std::int64_t> all = ids_of(project.jobs());
        QCOMPARE(all.size(), std::size_t{5});
        QCOMPARE(project.job_ids(), all);
        QCOMPARE(project.job_ids(0), all);
        QCOMPARE(project.job_ids(all[1]), std::vector<std::int64_t>(all.begin() + 2, all.end()));
        QVERIFY(project.job_ids(all.back()).empty());
        QCOMPARE(project.job_count(), std::int64_t{5});

        // Deleted through another connection: the count and the ids follow.
        {
            store::Project other(path);
            other.delete_job(all[2]);
        }
        QCOMPARE(project.job_count(), std::int64_t{4});
        QCOMPARE(project.job_ids(), ids_of(project.jobs()));

        // The newest job deleted: the next job still gets a higher id.
        project.delete_job(all.back());
        const std::int64_t next = record_done(path);
        QVERIFY2(next > all.back(), qPrintable(QString("job %1 after job %2").arg(next).arg(all.back())));
        QCOMPARE(project.job_ids(all.back() - 1), std::vector<std::int64_t>{next});
        QCOMPARE(project.job_ids(), ids_of(project.jobs()));
        QCOMPARE(project.job_count(), std::int64_t{4});
    }
};

QTEST_GUILESS_MAIN(JobIdsTest)
#include "test_job_ids.moc"
