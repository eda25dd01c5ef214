// The project document's job list catching up with a project file that
// another connection writes (as the CLI or the window's own job recorder
// does): new jobs, rows that change while a job runs, jobs deleted, each
// checked against a fresh read of the file through a connection of its own,
// rows that did not change left as they were (not read again), a row the
// store reports as ended before its end is written read again until it is,
// the measured
// speeds behind the Job panel's estimate against a recount from that fresh
// read, and the jobs table following row by row under Qt's model tester.
#include <models/jobs_model.hpp>
#include <project_document.hpp>
#include "project_options.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <sqlite3.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <memory>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

ScoringScheme blosum62() { return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1); }

store::JobSpec local_spec(const std::string& device = "cpu") {
    store::JobSpec spec;
    spec.command = "gui";
    spec.algorithm = "sw_affine";
    spec.mode = "local";
    spec.set_scheme(blosum62());
    spec.devices = device;
    spec.parameters["traceback"] = "on";
    return spec;
}

// Real local alignments (the reference aligner) of small protein pairs.
std::vector<Alignment> alignments(int count) {
    const ScoringScheme scheme = blosum62();
    AlignOptions options;
    options.mode = AlignmentMode::Local;
    std::vector<Alignment> out;
    for (int k = 0; k < count; ++k) {
        Alignment a = align_reference("MVHLTPEEKSAVTALWGKV", std::string("MVHLSGEEKSAVLALWDKV").substr(0, 12 + k),
                                      scheme, options);
        a.query_id = "q" + std::to_string(k);
        a.target_id = "t" + std::to_string(k);
        out.push_back(std::move(a));
    }
    return out;
}

// The fields a list row shows, as text, for comparing two reads of a job.
QString row_text(const store::JobInfo& j) {
    return QString("%1 %2 %3-%4 %5/%6 %7/%8 a%9 h%10 %11 inputs %12")
        .arg(j.id)
        .arg(QString::fromUtf8(store::to_string(j.state).data()))
        .arg(j.started_ms)
        .arg(j.ended_ms)
        .arg(j.progress.cells_done)
        .arg(j.progress.cells_total)
        .arg(j.progress.items_done)
        .arg(j.progress.items_total)
        .arg(j.counts.alignments)
        .arg(j.counts.hits)
        .arg(QString::fromStdString(j.error))
        .arg(j.inputs.size());
}

QStringList rows_text(const std::vector<store::JobInfo>& jobs) {
    QStringList rows;
    for (const auto& j : jobs) rows << row_text(j);
    return rows;
}

}  // namespace

class ProjectDocumentTest : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString path_;
    std::unique_ptr<ProjectDocument> document_;
    std::vector<JobListChange> changes_;

    // What a fresh connection reads: the oracle for the document's list.
    std::vector<store::JobInfo> fresh() const {
        return store::Project(path_.toStdString(), read_only_project()).jobs();
    }

    // One catch-up; the change it announced (none: an empty one).
    JobListChange pollOnce() {
        changes_.clear();
        document_->poll();
        return changes_.empty() ? JobListChange{} : changes_.back();
    }

    // A job recorded through a connection of its own, as the CLI or the
    // window's recorder does: `cells` of work in `ms` milliseconds, then done
    // (or failed).
    qint64 recordJob(const std::string& device, std::uint64_t cells, bool done = true, bool traceback = true) {
        store::JobSpec spec = local_spec(device);
        if (!traceback) spec.parameters["traceback"] = "off";
        store::RecordingOptions options;
        options.progress_interval = std::chrono::milliseconds(0);
        store::JobRecording recording(path_.toStdString(), spec, options);
        recording.progress({cells, cells, 1, 1});
        recording.add_alignments(alignments(1));
        if (done) recording.finish_done();
        else
            recording.finish_failed("out of luck");
        return recording.job_id();
    }

private slots:
    void init() {
        QVERIFY(dir_.isValid());
        static int n = 0;
        path_ = dir_.filePath(QString("p%1.alsproj").arg(++n));
        store::Project(path_.toStdString(), created_project());
        document_ = std::make_unique<ProjectDocument>();
        QSignalSpy opened(document_.get(), &ProjectDocument::opened);
        document_->open(path_);
        QVERIFY(opened.wait(20'000));
        changes_.clear();
        connect(document_.get(), &ProjectDocument::jobsChanged, this,
                [this](const JobListChange& change) { changes_.push_back(change); });
    }

    void cleanup() { document_.reset(); }

    void newJobsAndChangingRows() {
        store::RecordingOptions queued;
        queued.queued = true;
        queued.progress_interval = std::chrono::milliseconds(0);
        auto first = std::make_unique<store::JobRecording>(path_.toStdString(), local_spec(), queued);
        JobListChange change = pollOnce();
        QVERIFY(!change.reset);
        QCOMPARE(change.added, std::vector<qint64>{first->job_id()});
        QVERIFY(change.updated.empty());
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
        QCOMPARE(document_->job(first->job_id())->state, store::JobState::Queued);

        // Running, with progress and results: the same row changes.
        first->start();
        first->progress({400, 1000, 2, 5});
        first->add_alignments(alignments(3));
        change = pollOnce();
        QVERIFY(change.added.empty());
        QCOMPARE(change.updated, std::vector<qint64>{first->job_id()});
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
        QCOMPARE(document_->job(first->job_id())->counts.alignments, std::int64_t{3});
        QCOMPARE(document_->job(first->job_id())->progress.cells_done, std::uint64_t{400});

        // A second job comes while the first ends: one catch-up sees both.
        auto second = std::make_unique<store::JobRecording>(path_.toStdString(), local_spec(), queued);
        first->progress({1000, 1000, 5, 5});
        first->finish_done();
        change = pollOnce();
        QCOMPARE(change.added, std::vector<qint64>{second->job_id()});
        QCOMPARE(change.updated, std::vector<qint64>{first->job_id()});
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
        QCOMPARE(document_->job(first->job_id())->state, store::JobState::Done);

        // Nothing written since: no announcement.
        QVERIFY(pollOnce().empty());
        QVERIFY(changes_.empty());

        // A job whose recording ends without an outcome (failed by its destructor).
        second.reset();
        change = pollOnce();
        QVERIFY(change.added.empty());
        QCOMPARE(change.updated.size(), std::size_t{1});
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
        QCOMPARE(document_->jobs().back().state, store::JobState::Failed);
    }

    void finishedRowsAreNotReadAgain() {
        std::vector<qint64> ids;
        for (int k = 0; k < 3; ++k) ids.push_back(recordJob("cpu", 1000));
        QCOMPARE(pollOnce().added, ids);
        // Where the first job's build version lives: a row read again (its
        // spec parsed anew) would hold a new copy elsewhere.
        const char* version = document_->jobs().front().spec.build_version.data();
        QVERIFY(document_->jobs().front().spec.build_version.size() > 20);  // on the heap, not in the string
        for (int k = 0; k < 40; ++k) {                                      // enough for the list to move in memory
            const qint64 id = recordJob("cpu", 1000);
            const JobListChange change = pollOnce();
            QCOMPARE(change.added, std::vector<qint64>{id});
            QVERIFY2(change.updated.empty(), "a finished job was announced as changed");
        }
        QCOMPARE(static_cast<const void*>(document_->jobs().front().spec.build_version.data()),
                 static_cast<const void*>(version));
        // The rows leave the matrix text in the project; the scheme read back
        // from it is the one the job ran with.
        const store::JobInfo recorded = fresh().front();
        QVERIFY(recorded.spec.matrix_text.size() > 1000);
        for (const auto& job : document_->jobs()) QVERIFY(job.spec.matrix_text.empty());
        const ScoringScheme want = recorded.spec.scheme(), got = document_->scheme(recorded.id);
        QCOMPARE(got.matrix.name(), want.matrix.name());
        QCOMPARE(got.matrix.size(), want.matrix.size());
        QVERIFY(got.matrix.scores() == want.matrix.scores());
        QCOMPARE(got.gap_open, want.gap_open);
        QCOMPARE(got.gap_extend, want.gap_extend);
        QCOMPARE(got.scale, want.scale);
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
    }

    void deletedJobs() {
        std::vector<qint64> ids;
        for (int k = 0; k < 4; ++k) ids.push_back(recordJob("cpu", 1000));
        pollOnce();
        {
            store::Project other(path_.toStdString());
            other.delete_job(ids[1]);
        }
        JobListChange change = pollOnce();
        QCOMPARE(change.removed, std::vector<qint64>{ids[1]});
        QVERIFY(change.added.empty());
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
        QVERIFY(!document_->job(ids[1]));

        // A deletion and a new job in one catch-up (the count alone would match).
        {
            store::Project other(path_.toStdString());
            other.delete_job(ids[0]);
        }
        const qint64 added = recordJob("cpu", 1000);
        change = pollOnce();
        QCOMPARE(change.removed, std::vector<qint64>{ids[0]});
        QCOMPARE(change.added, std::vector<qint64>{added});
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));

        // Through the document itself (on its loader's thread).
        changes_.clear();
        document_->deleteJob(ids[3]);
        QTRY_VERIFY_WITH_TIMEOUT(!changes_.empty(), 10'000);
        QCOMPARE(changes_.back().removed, std::vector<qint64>{ids[3]});
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
    }

    void endWrittenLater() {
        // A running row whose owner is gone, as a job killed mid-run leaves
        // it (written behind the store's back: a copy of a finished job's row
        // made running again): the store reports it interrupted before any
        // end is written, so the list must read it again until the end comes.
        const qint64 done = recordJob("cpu", 1000);
        pollOnce();
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open_v2(path_.toUtf8().constData(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
            const QByteArray copy =
                QString(
                    "INSERT INTO jobs (command, algorithm, mode, scoring, score_scale, devices, streams, threads, "
                    "kernel, build_version, driver_version, spec, state, created_ms, started_ms, owner_pid, "
                    "owner_host) SELECT command, algorithm, mode, scoring, score_scale, devices, streams, threads, "
                    "kernel, build_version, driver_version, spec, 'running', created_ms, started_ms, owner_pid, "
                    "owner_host FROM jobs WHERE id = %1")
                    .arg(done)
                    .toUtf8();
            const int rc = sqlite3_exec(db, copy.constData(), nullptr, nullptr, nullptr);
            const QString why = QString::fromUtf8(sqlite3_errmsg(db));
            sqlite3_close_v2(db);
            QVERIFY2(rc == SQLITE_OK, qPrintable(why));
        }
        JobListChange change = pollOnce();
        QCOMPARE(change.added.size(), std::size_t{1});
        const qint64 killed = change.added.front();
        QCOMPARE(document_->job(killed)->state, store::JobState::Interrupted);
        QCOMPARE(document_->job(killed)->ended_ms, std::int64_t{0});
        // The end is written (as every writable open does): the row is read again.
        { store::Project other(path_.toStdString()); }
        change = pollOnce();
        QCOMPARE(change.updated, std::vector<qint64>{killed});
        QVERIFY(document_->job(killed)->ended_ms > 0);
        QCOMPARE(rows_text(document_->jobs()), rows_text(fresh()));
        // And from then on it is left alone.
        recordJob("cpu", 1000);
        QVERIFY(pollOnce().updated.empty());
    }

    void measuredSpeedsFollowTheJobs() {
        // The speed behind the estimate, recounted from a fresh read: cells
        // over seconds of the finished jobs of one kind on one device.
        auto recount = [this](const std::string& device, const std::string& kind) {
            double cells = 0, seconds = 0;
            int jobs = 0;
            for (const auto& j : fresh()) {
                if (j.state != store::JobState::Done || j.spec.devices != device) continue;
                if (ProjectDocument::measuredKind(j.spec) != kind || j.progress.cells_done == 0) continue;
                cells += double(j.progress.cells_done);
                seconds += double(std::max<std::int64_t>(j.ended_ms - j.started_ms, 1)) / 1000.0;
                ++jobs;
            }
            return std::make_pair(seconds > 0 ? cells / seconds : 0.0, jobs);
        };
        auto check = [&](const std::string& device, const std::string& kind) {
            const auto [speed, jobs] = recount(device, kind);
            const auto measured = document_->throughput(device, kind);
            QCOMPARE(measured.jobs, jobs);
            QVERIFY2(std::abs(measured.cells_per_second - speed) <= 1e-9 * std::max(1.0, speed),
                     qPrintable(QString("%1 against %2").arg(measured.cells_per_second).arg(speed)));
        };
        std::vector<qint64> ids;
        ids.push_back(recordJob("cpu", 5000));
        ids.push_back(recordJob("cpu", 7000));
        ids.push_back(recordJob("cpu", 9000, false));        // failed: no speed
        ids.push_back(recordJob("cpu", 4000, true, false));  // scores only: another kind
        ids.push_back(recordJob("cpu-ref", 3000));
        pollOnce();
        for (const char* kind : {"pairs/local/traceback", "pairs/local/scores"})
            for (const char* device : {"cpu", "cpu-ref"}) check(device, kind);
        QCOMPARE(document_->throughput("cpu", "pairs/local/traceback").jobs, 2);
        QCOMPARE(document_->throughput("cpu", "").jobs, 0);
        {
            store::Project other(path_.toStdString());
            other.delete_job(ids[0]);
        }
        pollOnce();
        check("cpu", "pairs/local/traceback");
        QCOMPARE(document_->throughput("cpu", "pairs/local/traceback").jobs, 1);
    }

    void jobsTableFollowsRowByRow() {
        // The table and the sorted view over it, checked by Qt's model tester
        // at every signal, applying the document's changes as the jobs view does.
        JobsModel model([this](qint64 id) { return document_->job(id); });
        QSortFilterProxyModel sorted;
        sorted.setSourceModel(&model);
        sorted.setSortRole(JobsModel::SortRole);
        sorted.sort(JobsModel::Id, Qt::DescendingOrder);
        QAbstractItemModelTester model_tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester sorted_tester(&sorted, QAbstractItemModelTester::FailureReportingMode::QtTest);
        connect(document_.get(), &ProjectDocument::jobsChanged, &model, [&](const JobListChange& change) {
            if (change.reset) {
                std::vector<qint64> all;
                for (const auto& job : document_->jobs()) all.push_back(job.id);
                return model.setJobs(std::move(all));
            }
            model.removeJobs(change.removed);
            model.updateJobs(change.updated);
            model.updateJobs(change.added);
        });
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy data_changed(&model, &QAbstractItemModel::dataChanged);
        auto listed_ids = [&] {
            std::vector<qint64> ids;
            for (int r = 0; r < sorted.rowCount(); ++r)
                ids.push_back(sorted.index(r, 0).data(JobsModel::JobIdRole).toLongLong());
            return ids;
        };
        std::vector<qint64> ids;
        for (int k = 0; k < 5; ++k) ids.push_back(recordJob("cpu", 1000));
        pollOnce();
        QCOMPARE(listed_ids(), (std::vector<qint64>{ids[4], ids[3], ids[2], ids[1], ids[0]}));

        store::RecordingOptions queued;
        queued.queued = true;
        queued.progress_interval = std::chrono::milliseconds(0);
        auto running = std::make_unique<store::JobRecording>(path_.toStdString(), local_spec(), queued);
        pollOnce();
        QCOMPARE(listed_ids().front(), running->job_id());
        QCOMPARE(model.index(model.rowOf(running->job_id()), JobsModel::State).data().toString(), QString("queued"));
        data_changed.clear();
        running->start();
        running->progress({50, 100, 1, 2});
        pollOnce();
        // Only the running job's row changed.
        QCOMPARE(data_changed.size(), 1);
        QCOMPARE(data_changed.first().at(0).value<QModelIndex>().row(), model.rowOf(running->job_id()));
        QCOMPARE(data_changed.first().at(1).value<QModelIndex>().row(), model.rowOf(running->job_id()));
        QCOMPARE(model.index(model.rowOf(running->job_id()), JobsModel::Percent).data().toString(), QString("50 %"));
        running->finish_done();
        pollOnce();
        QCOMPARE(model.index(model.rowOf(running->job_id()), JobsModel::State).data().toString(), QString("done"));
        {
            store::Project other(path_.toStdString());
            other.delete_job(ids[2]);
        }
        pollOnce();
        QCOMPARE(listed_ids(), (std::vector<qint64>{running->job_id(), ids[4], ids[3], ids[1], ids[0]}));
        QCOMPARE(resets.size(), 0);
        for (const auto& j : fresh())
            QCOMPARE(model.index(model.rowOf(j.id), JobsModel::State).data().toString(),
                     QString::fromUtf8(store::to_string(j.state).data()));
    }
};

QTEST_MAIN(ProjectDocumentTest)
#include "test_project_document.moc"
