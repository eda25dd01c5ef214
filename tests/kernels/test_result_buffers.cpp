// Result buffers kept from job to job on the GPU side, without a GPU: the
// host's completion of a traceback (path_completion.hpp) into an Alignment
// that holds another result gives what it gives into a new one, in the
// storage the old one had; the multi-GPU group (gpu_group.cpp, over cpu-ref
// members) aligns into a buffer of garbage, whole on one member and split
// among several, with every field equal to a fresh align_pairs.
#include "../../kernels/multi/gpu_group.cpp"
#include "../../kernels/pairwise/path_completion.hpp"
#include "packed_runs.hpp"
#include "random_relatives.hpp"

#include <alignscope/error.hpp>

#include <QtTest>

#include <random>

using namespace alignscope;
using namespace alignscope::kernels;

namespace {

std::string random_protein(std::mt19937& rng, std::size_t length) {
    return random_residues(rng, "ACDEFGHIKLMNPQRSTVWY", length);
}

struct Data {
    std::vector<Sequence> queries, targets;
    PairJob job;
    // `pairs` related protein pairs of 20-150 residues, local with traceback.
    Data(std::size_t pairs, std::uint32_t seed) {
        std::mt19937 rng(seed);
        for (std::size_t k = 0; k < pairs; ++k) {
            Sequence q{"query-id-longer-than-fifteen-" + std::to_string(k), "", random_protein(rng, 20 + rng() % 131),
                       ""};
            Sequence t{"t" + std::to_string(k), "", q.residues, ""};
            for (char& c : t.residues)
                if (rng() % 4 == 0) c = random_protein(rng, 1)[0];
            t.residues.insert(rng() % t.residues.size(), random_protein(rng, rng() % 8));
            if (k % 5 == 4) t.residues = std::string(12, 'P'), q.residues = std::string(9, 'W');  // empty locally
            queries.push_back(std::move(q));
            targets.push_back(std::move(t));
            job.pairs.emplace_back(static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k));
        }
        job.queries = &queries;
        job.targets = &targets;
        job.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        job.options.mode = AlignmentMode::Local;
        job.threads = 2;
    }
};

Alignment garbage() {
    Alignment a;
    a.query_id = a.target_id = "stale-id-long-enough-to-live-on-the-heap";
    a.mode = AlignmentMode::Global;
    a.score = a.query_begin = a.query_end = a.target_begin = a.target_end = 4242;
    a.query_length = a.target_length = 4343;
    a.cigar = Cigar::parse("9=1X1I1D9=1X1I1D9=1X1I1D9=1X1I1D9=1X1I1D9=1X1I1D9=1X1I1D9=1X1I1D");
    a.query_aligned = std::string(1000, 'Q');
    a.target_aligned = std::string(1000, 'T');
    a.stats = {1, 2, 3, 4, 5};
    a.device = a.kernel = "stale-device-and-kernel-on-the-heap";
    return a;
}

bool same(const Alignment& a, const Alignment& b) {
    const AlignmentStats &s = a.stats, &t = b.stats;
    return a.query_id == b.query_id && a.target_id == b.target_id && a.mode == b.mode && a.score == b.score &&
           a.query_begin == b.query_begin && a.query_end == b.query_end && a.target_begin == b.target_begin &&
           a.target_end == b.target_end && a.query_length == b.query_length && a.target_length == b.target_length &&
           a.cigar == b.cigar && a.query_aligned == b.query_aligned && a.target_aligned == b.target_aligned &&
           s.length == t.length && s.identities == t.identities && s.similarities == t.similarities &&
           s.gaps == t.gaps && s.gap_opens == t.gap_opens && a.device == b.device && a.kernel == b.kernel;
}

// A member that counts which call ran its jobs.
class CountingMember : public Backend {
public:
    explicit CountingMember(Backend& inner) : inner_(inner) {}
    DeviceInfo info() const override {
        DeviceInfo info = inner_.info();
        info.kind = "gpu";
        info.sm_count = 132;
        return info;
    }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        ++fresh_;
        return inner_.align_pairs(job, context);
    }
    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override {
        ++into_;
        inner_.align_pairs_into(job, context, results);
    }
    std::atomic<int> fresh_{0}, into_{0};

private:
    Backend& inner_;
};

class SplitCells {
public:
    explicit SplitCells(const char* cells) { setenv("ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS", cells, 1); }
    ~SplitCells() { unsetenv("ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS"); }
    SplitCells(const SplitCells&) = delete;
    SplitCells& operator=(const SplitCells&) = delete;
};

}  // namespace

class TestResultBuffers : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();

    void group_into_garbage(const char* split_cells, bool whole) {
        SplitCells split(split_cells);
        CountingMember a(registry_->select("cpu-ref")), b(registry_->select("cpu-ref"));
        auto group = make_gpu_group({&a, &b});
        Data data(400, 11);
        JobContext context;
        const std::vector<Alignment> fresh = group->align_pairs(data.job, context);
        QCOMPARE(fresh.size(), data.job.pairs.size());
        for (const std::size_t size : {std::size_t{450}, std::size_t{400}, std::size_t{120}}) {
            std::vector<Alignment> buffer(size, garbage());
            const int into_before = a.into_ + b.into_, fresh_before = a.fresh_ + b.fresh_;
            group->align_pairs_into(data.job, context, buffer);
            QCOMPARE(buffer.size(), fresh.size());
            for (std::size_t k = 0; k < fresh.size(); ++k)
                QVERIFY2(same(buffer[k], fresh[k]), qPrintable(QString::number(k)));
            // Whole on one member: that member's own align_pairs_into.
            if (whole) QCOMPARE(a.into_ + b.into_ - into_before, 1);
            else
                QVERIFY(a.fresh_ + b.fresh_ - fresh_before >= 2);
        }
    }

private slots:
    // A path completed into an Alignment that held a longer one: the same
    // rows, CIGAR, statistics and score as into a new Alignment, in the old
    // one's storage (no new CIGAR or rows where its capacity holds them).
    void completion_into_a_used_result() {
        Data data(60, 5);
        JobContext context;
        const std::vector<Alignment> reference = registry_->select("cpu-ref").align_pairs(data.job, context);
        const PathCompletion completion(data.job.scheme);
        for (std::size_t k = 0; k < reference.size(); ++k) {
            const Alignment& r = reference[k];
            if (!r.has_traceback()) continue;
            const std::vector<std::uint32_t> runs = packed_runs(r.cigar);
            const Sequence& q = data.queries[k];
            const Sequence& t = data.targets[k];
            Alignment fresh;
            fresh.query_begin = r.query_begin, fresh.target_begin = r.target_begin;
            const std::int64_t fresh_score =
                completion.complete(fresh, runs.data(), static_cast<std::uint32_t>(runs.size()), q.residues,
                                    t.residues);
            Alignment used = garbage();
            used.query_begin = r.query_begin, used.target_begin = r.target_begin;
            const CigarOp* cigar_storage = used.cigar.ops().data();
            const char* row_storage = used.query_aligned.data();
            const std::int64_t used_score =
                completion.complete(used, runs.data(), static_cast<std::uint32_t>(runs.size()), q.residues, t.residues);
            QCOMPARE(used_score, fresh_score);
            QCOMPARE(used_score, r.score);
            QVERIFY(used.cigar == fresh.cigar);
            QVERIFY(used.cigar == r.cigar);
            QCOMPARE(used.query_aligned, fresh.query_aligned);
            QCOMPARE(used.target_aligned, fresh.target_aligned);
            QCOMPARE(used.stats.length, fresh.stats.length);
            QCOMPARE(used.stats.identities, fresh.stats.identities);
            QCOMPARE(used.stats.similarities, fresh.stats.similarities);
            QCOMPARE(used.stats.gaps, fresh.stats.gaps);
            QCOMPARE(used.stats.gap_opens, fresh.stats.gap_opens);
            if (r.cigar.ops().size() <= 32) QVERIFY(used.cigar.ops().data() == cigar_storage);
            if (r.query_aligned.size() <= 1000) QVERIFY(used.query_aligned.data() == row_storage);
        }
    }

    void group_whole_job_into_garbage() { group_into_garbage("1000000000000", true); }
    void group_split_job_into_garbage() { group_into_garbage("0", false); }
};

QTEST_GUILESS_MAIN(TestResultBuffers)
#include "test_result_buffers.moc"
