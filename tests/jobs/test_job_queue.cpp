// The GUI's job queue without the window: jobs recorded into a project on the
// queue's recording thread, run one after another on its worker (whose CPU
// backend aligns on a pool of threads), their progress and outcome handed to
// the GUI thread as queued signals, a queued job cancelled before it starts
// and a running one stopped by the queue's destruction. Built from the
// ui/jobs sources alone (Qt Core, no widgets), so that it also runs under
// ThreadSanitizer (scripts/sanitize tsan).
#include "jobs/job_queue.hpp"
#include "jobs/project_job_recorder.hpp"
#include "sanitizers.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/store/project.hpp>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

// `count` random proteins of `shortest` to shortest + 90 residues (a fixed seed per list).
SequenceList proteins(int count, unsigned seed, const std::string& prefix, std::size_t shortest = 30) {
    std::mt19937 rng(seed);
    const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
    auto records = std::make_shared<std::vector<Sequence>>();
    for (int k = 0; k < count; ++k) {
        std::string residues;
        const std::size_t length = shortest + rng() % 91;
        for (std::size_t i = 0; i < length; ++i) residues += letters[rng() % letters.size()];
        records->push_back({prefix + std::to_string(k), "", residues, ""});
    }
    SequenceList list;
    list.records = records;
    list.alphabet = AlphabetKind::Protein;
    list.label = prefix + ".fa";
    return list;
}

JobRequest global_request(unsigned seed, int queries, int targets, std::size_t shortest = 30) {
    JobRequest request;
    request.algorithm = JobAlgorithm::Global;
    request.device = "cpu";
    request.threads = 3;  // the backend's pool, beside the queue's own threads
    request.queries = proteins(queries, seed, "q", shortest);
    request.targets = proteins(targets, seed + 1, "t", shortest);
    return request;
}

store::ProjectOptions read_only() {
    store::ProjectOptions options;
    options.read_only = true;
    return options;
}

}  // namespace

class TestJobQueue : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();

    QString new_project(const QString& name) {
        const QString path = dir_.filePath(name);
        store::ProjectOptions create;
        create.create_if_missing = true;
        store::Project project(path.toStdString(), create);
        return path;
    }

    static void record_into(JobQueue& queue, const QString& path) {
        queue.setRecorderFactory([path](const JobRequest& request, const DeviceInfo& device) {
            return std::make_unique<ProjectJobRecorder>(path.toStdString(), request, device);
        });
    }

private slots:
    // Three jobs and a fourth cancelled while it waits: each finishes once,
    // the aligned ones with the reference's scores, and the project holds
    // what the outcomes say.
    void jobs_run_in_turn_and_a_queued_one_is_cancelled() {
        const QString path = new_project("queue.alsproj");
        JobQueue queue(*registry_);
        record_into(queue, path);
        QSignalSpy finished(&queue, &JobQueue::jobFinished);
        QSignalSpy started(&queue, &JobQueue::jobStarted);

        std::map<quint64, JobRequest> requests;
        for (unsigned seed : {3u, 5u, 9u}) {
            JobRequest request = global_request(seed, 5, 4);
            requests[queue.enqueue(request)] = request;
        }
        const quint64 cancelled = queue.enqueue(global_request(13, 5, 4));
        queue.cancel(cancelled);

        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 4, 120'000);
        QCOMPARE(started.count(), 3);  // the cancelled job never started
        store::Project project(path.toStdString(), read_only());
        for (const QList<QVariant>& signal : finished) {
            const quint64 ticket = signal[0].value<quint64>();
            const auto outcome = signal[1].value<JobOutcome>();
            QVERIFY(outcome.project_job_id > 0);
            const store::JobInfo job = project.job(outcome.project_job_id);
            if (ticket == cancelled) {
                QCOMPARE(int(outcome.state), int(JobState::Cancelled));
                QCOMPARE(job.state, store::JobState::Cancelled);
                continue;
            }
            QCOMPARE(int(outcome.state), int(JobState::Done));
            QCOMPARE(job.state, store::JobState::Done);
            const JobRequest& request = requests.at(ticket);
            QVERIFY(outcome.alignments);
            QCOMPARE(outcome.alignments->size(), std::size_t{20});
            QCOMPARE(job.counts.alignments, std::int64_t{20});
            const ScoringScheme scheme = request.scoring.scheme();
            for (const Alignment& a : *outcome.alignments) {
                const Sequence* q = nullptr;
                const Sequence* t = nullptr;
                for (const Sequence& s : *request.queries.records)
                    if (s.id == a.query_id) q = &s;
                for (const Sequence& s : *request.targets.records)
                    if (s.id == a.target_id) t = &s;
                QVERIFY(q && t);
                QCOMPARE(a.score, align_reference(q->residues, t->residues, scheme, request.align_options()).score);
            }
        }
    }

    // The queue destroyed while a job runs (the window closing): the worker
    // stops the job at once rather than running its minutes of work, and the
    // job stays open in the project with its owner lock held (the store shows
    // it as interrupted once this process has ended: ProjectJobRecorder).
    void destroying_the_queue_stops_the_running_job() {
        const QString path = new_project("interrupted.alsproj");
        std::int64_t job_id = 0;
        QElapsedTimer closing;
        {
            JobQueue queue(*registry_);
            record_into(queue, path);
            QSignalSpy recorded(&queue, &JobQueue::jobRecorded);
            QSignalSpy started(&queue, &JobQueue::jobStarted);
            JobRequest big = global_request(21, 200, 200, 2000);  // 160 G cells: minutes on a CPU
            big.traceback = false;
            queue.enqueue(big);
            QVERIFY(started.wait(60'000));
            QTRY_COMPARE_WITH_TIMEOUT(recorded.count(), 1, 60'000);
            job_id = recorded[0][1].value<qint64>();
            closing.start();
        }
        const double seconds = double(closing.elapsed()) / 1000;
        QVERIFY2(seconds < 5 * alignscope::test::kSanitizerSlowdown, qPrintable(QString("%1 s").arg(seconds)));
        store::Project project(path.toStdString(), read_only());
        const store::JobInfo job = project.job(job_id);
        QCOMPARE(job.state, store::JobState::Running);
        QCOMPARE(job.counts.alignments, std::int64_t{0});
    }
};

QTEST_GUILESS_MAIN(TestJobQueue)
#include "test_job_queue.moc"
