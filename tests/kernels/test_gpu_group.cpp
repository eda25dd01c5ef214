// The multi-GPU backend (kernels/multi/gpu_group.cpp) over stand-in members
// that score each pair by its indices and say who ran it: small jobs run whole
// on one member (two at once on two), split jobs come back in pair order with
// every pair once and equal shares of cells on members of one model, the
// group's warm-up starts the first member only, and a member's error reaches
// the caller. The group's source is compiled into the suite (it needs no
// CUDA: the members are the CUDA backends only in the application).
#include "../../kernels/multi/gpu_group.cpp"

#include <alignscope/error.hpp>

#include <QtTest>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

using namespace alignscope;

namespace {

// A member that "aligns" pair (q, t) to score q * 10000 + t.
class Member : public Backend {
public:
    explicit Member(std::string id) : id_(std::move(id)) {}

    DeviceInfo info() const override {
        DeviceInfo info;
        info.id = id_;
        info.kind = "gpu";
        info.name = "stand-in GPU";
        info.sm_count = 132;
        return info;
    }

    std::vector<Alignment> align_pairs(const PairJob& job, JobContext&) override {
        {
            std::lock_guard lock(mutex_);
            ++jobs_;
            pairs_ += job.pairs.size();
            for (const auto& [q, t] : job.pairs)
                cells_ += (*job.queries)[q].residues.size() * (*job.targets)[t].residues.size();
        }
        if (fail_) throw Error(id_ + ": a device fault");
        if (hold_) hold_();
        std::vector<Alignment> out(job.pairs.size());
        for (std::size_t k = 0; k < job.pairs.size(); ++k) {
            out[k].score = static_cast<std::int64_t>(job.pairs[k].first) * 10000 + job.pairs[k].second;
            out[k].device = id_;
        }
        return out;
    }

    void warm_up() override { ++warm_ups_; }

    int jobs() {
        std::lock_guard lock(mutex_);
        return jobs_;
    }
    std::uint64_t pairs() const { return pairs_; }
    std::uint64_t cells() const { return cells_; }
    int warm_ups() const { return warm_ups_; }
    void fail() { fail_ = true; }
    void hold(std::function<void()> until) { hold_ = std::move(until); }

private:
    std::string id_;
    std::function<void()> hold_;  // runs inside each job
    std::mutex mutex_;
    int jobs_ = 0;
    std::uint64_t pairs_ = 0, cells_ = 0;
    std::atomic<int> warm_ups_{0};
    bool fail_ = false;
};

// ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS set for one scope.
class SplitCells {
public:
    explicit SplitCells(const char* cells) { setenv("ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS", cells, 1); }
    ~SplitCells() { unsetenv("ALIGNSCOPE_GPU_GROUP_SPLIT_CELLS"); }
    SplitCells(const SplitCells&) = delete;
    SplitCells& operator=(const SplitCells&) = delete;
};

struct Data {
    std::vector<Sequence> queries, targets;
    PairJob job;
    // `pairs` pairs over 50 queries and 40 targets of varied lengths.
    explicit Data(std::size_t pairs) {
        for (int k = 0; k < 50; ++k) queries.push_back({"q" + std::to_string(k), "", std::string(10 + k % 7, 'A'), ""});
        for (int k = 0; k < 40; ++k) targets.push_back({"t" + std::to_string(k), "", std::string(5 + k % 11, 'C'), ""});
        job.queries = &queries;
        job.targets = &targets;
        for (std::size_t k = 0; k < pairs; ++k)
            job.pairs.emplace_back(static_cast<std::uint32_t>(k % 50), static_cast<std::uint32_t>((k * 7) % 40));
    }
};

bool in_order(const std::vector<Alignment>& out, const PairJob& job) {
    if (out.size() != job.pairs.size()) return false;
    for (std::size_t k = 0; k < out.size(); ++k)
        if (out[k].score != static_cast<std::int64_t>(job.pairs[k].first) * 10000 + job.pairs[k].second) return false;
    return true;
}

}  // namespace

class TestGpuGroup : public QObject {
    Q_OBJECT
private slots:
    void small_job_runs_whole_on_the_first_member() {
        Member a("gpu:0"), b("gpu:1");
        auto group = kernels::make_gpu_group({&a, &b});
        Data data(1000);
        JobContext context;
        const std::vector<Alignment> out = group->align_pairs(data.job, context);
        QVERIFY(in_order(out, data.job));
        QCOMPARE(a.jobs(), 1);
        QCOMPARE(b.jobs(), 0);
        QCOMPARE(out.front().device, std::string("gpu:0"));
        QCOMPARE(group->info().id, std::string("gpu:0,1"));
    }

    void two_small_jobs_at_once_take_two_members() {
        Member a("gpu:0"), b("gpu:1");
        // The first job holds gpu:0 until the second has started on gpu:1.
        auto wait_for = [](Member& m) {
            for (int k = 0; k < 1000 && m.jobs() == 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        };
        a.hold([&] { wait_for(b); });
        auto group = kernels::make_gpu_group({&a, &b});
        Data one(500), two(600);
        std::vector<Alignment> first, second;
        std::thread other([&] {
            JobContext context;
            first = group->align_pairs(one.job, context);
        });
        wait_for(a);
        JobContext context;
        second = group->align_pairs(two.job, context);
        other.join();
        QVERIFY(in_order(first, one.job));
        QVERIFY(in_order(second, two.job));
        QCOMPARE(a.jobs(), 1);
        QCOMPARE(b.jobs(), 1);
        QVERIFY(first.front().device != second.front().device);
    }

    void split_job_comes_back_in_order() {
        SplitCells all("0");
        Member a("gpu:0"), b("gpu:1"), c("gpu:2");
        auto group = kernels::make_gpu_group({&a, &b, &c});
        Data data(30001);
        JobContext context;
        const std::vector<Alignment> out = group->align_pairs(data.job, context);
        QVERIFY(in_order(out, data.job));
        QCOMPARE(a.pairs() + b.pairs() + c.pairs(), std::uint64_t{30001});
        // Equal members, everything dealt up front: a third of the cells each,
        // within a pair's worth.
        const std::uint64_t total = a.cells() + b.cells() + c.cells();
        for (Member* m : {&a, &b, &c}) {
            QCOMPARE(m->jobs(), 1);
            QVERIFY(m->cells() * 3 + 6 * 16 * 15 >= total && m->cells() * 3 <= total + 6 * 16 * 15);
        }
    }

    void warm_up_starts_the_first_member_only() {
        Member a("gpu:0"), b("gpu:1");
        auto group = kernels::make_gpu_group({&a, &b});
        group->warm_up();
        QCOMPARE(a.warm_ups(), 1);
        QCOMPARE(b.warm_ups(), 0);
    }

    void a_member_error_reaches_the_caller() {
        SplitCells all("0");
        Member a("gpu:0"), b("gpu:1");
        b.fail();
        auto group = kernels::make_gpu_group({&a, &b});
        Data data(2000);
        JobContext context;
        try {
            (void)group->align_pairs(data.job, context);
            QFAIL("the member's error was lost");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("gpu:1: a device fault") != std::string::npos);
        }
    }

    void bad_split_cells_refused() {
        SplitCells bad("lots");
        Member a("gpu:0"), b("gpu:1");
        auto group = kernels::make_gpu_group({&a, &b});
        Data data(10);
        JobContext context;
        QVERIFY_THROWS_EXCEPTION(Error, group->align_pairs(data.job, context));
    }
};

QTEST_GUILESS_MAIN(TestGpuGroup)
#include "test_gpu_group.moc"
