// What the CUDA long-pair runner can hold (kernels/long/long_runner_limits.hpp),
// decided on the host before any work: substitution scores in its byte table
// (-127..127: -128 and 128 are not), sequences under 2^30 - 64 residues, and
// the pipeline's 32-bit limit. And what align_long_on makes of it, on a
// device whose runner has exactly these limits (the scalar pass runner behind
// them; no GPU needed): a pair it cannot hold runs in 64-bit linear space with
// the score of a plain 64-bit Gotoh oracle, a forced strip kernel that cannot
// hold it is refused, a pair it holds stays on the runner.
#include "../../kernels/long/long_runner_limits.hpp"

#include "gotoh64.hpp"
#include "random_relatives.hpp"

#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QtTest>

#include <random>

using namespace alignscope;
using namespace alignscope::longpair;
using alignscope::kernels::longpass::cuda_long_cannot_hold;

namespace {

ScoringScheme dna_scheme(int match, int mismatch, double open, double extend) {
    return ScoringScheme::create(SubstitutionMatrix::match_mismatch(match, mismatch), open, extend);
}

// The scalar pass runner with the CUDA runner's limits.
class ByteTableRunner final : public PassRunner {
public:
    void prepare(const std::uint8_t* q, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                 const ScoringScheme& scheme) override {
        inner_->prepare(q, m, t, n, scheme);
    }
    void run(std::vector<PassTask>& tasks, const JobContext& context, const PassProgress& progress) override {
        inner_->run(tasks, context, progress);
    }
    const std::vector<std::int64_t>& saved_rows() const override { return inner_->saved_rows(); }
    void read_special_row(std::size_t k, std::vector<Score>& h, std::vector<Score>& f) override {
        inner_->read_special_row(k, h, f);
    }
    std::string cannot_hold(std::int64_t m, std::int64_t n, const ScoringScheme& scheme) const override {
        return cuda_long_cannot_hold(m, n, scheme);
    }
    std::string device() const override { return "gpu:7"; }
    std::string kernel() const override { return inner_->kernel(); }
    std::string strategy() const override { return "strips"; }

private:
    std::unique_ptr<PassRunner> inner_ = make_cpu_pass_runner();
};

// A device with such a runner; it aligns nothing else.
class ByteTableDevice final : public Backend {
public:
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = "gpu:7";
        d.kind = "gpu";
        d.name = "a runner with the CUDA runner's limits";
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob&, JobContext&) override { throw Error("not a pairwise device"); }
    std::unique_ptr<PassRunner> make_long_runner(const LongRunnerSettings&) override {
        return std::make_unique<ByteTableRunner>();
    }
};

}  // namespace

class TestLongRunnerLimits : public QObject {
    Q_OBJECT

private slots:
    void byteTable() {
        QVERIFY(cuda_long_cannot_hold(100, 100, dna_scheme(127, -127, 10, 1)).empty());
        for (const auto& [match, mismatch, bad] : {std::tuple{128, -1, 128}, std::tuple{1, -128, -128}}) {
            const std::string why = cuda_long_cannot_hold(100, 100, dna_scheme(match, mismatch, 10, 1));
            QVERIFY2(why.find("substitution score " + std::to_string(bad) + " is outside -127..127") !=
                         std::string::npos,
                     why.c_str());
        }
    }

    // Lengths: with scores and penalties of 0 only the length limit is left.
    void lengths() {
        const ScoringScheme zero = dna_scheme(0, 0, 0, 0);
        const std::int64_t limit = (std::int64_t{1} << 30) - 64;
        QVERIFY(cuda_long_cannot_hold(limit - 1, 5, zero).empty());
        QVERIFY(cuda_long_cannot_hold(5, limit - 1, zero).empty());
        QVERIFY(cuda_long_cannot_hold(limit, 5, zero).find("limit of 2^30 - 64") != std::string::npos);
        QVERIFY(cuda_long_cannot_hold(5, limit, zero).find("limit of 2^30 - 64") != std::string::npos);
    }

    // Scores inside the byte table, past the pipeline's 32 bits: its limit, on both sides.
    void pipelineLimit() {
        const ScoringScheme s = dna_scheme(100, -100, 1'000'000, 1'000'000);
        // 100 n + 2n x 1,000,000 + 3,000,000 against 2^29 = 536,870,912: n = 266 holds, 267 does not.
        QVERIFY(cuda_long_cannot_hold(266, 266, s).empty());
        QVERIFY(cuda_long_cannot_hold(267, 267, s).find("32-bit") != std::string::npos);
    }

    void alignLongOnADeviceWithTheseLimits_data() {
        QTest::addColumn<int>("match");
        QTest::addColumn<int>("mismatch");
        QTest::addColumn<bool>("wider");
        QTest::newRow("127/-127: on the runner") << 127 << -127 << false;
        QTest::newRow("128/-1: 64-bit path") << 128 << -1 << true;
        QTest::newRow("1/-128: 64-bit path") << 1 << -128 << true;
    }
    void alignLongOnADeviceWithTheseLimits() {
        QFETCH(int, match);
        QFETCH(int, mismatch);
        QFETCH(bool, wider);
        std::mt19937 rng(9);
        const std::string q = random_residues(rng, "ACGT", 200);
        const std::string t = mutate(rng, q, "ACGT");
        const ScoringScheme scheme = dna_scheme(match, mismatch, 300, 20);
        const test::Gotoh64 oracle{match, mismatch, 300, 20};
        ByteTableDevice device;
        LongPairOptions options;
        options.align.mode = AlignmentMode::Local;
        options.min_band_rows = 16;
        LongPairStats stats;
        const Alignment a = align_long_on(device, q, t, scheme, options, {}, {}, &stats);
        QCOMPARE(a.score, oracle.score(q, t, true));
        QCOMPARE(a.device, std::string("gpu:7"));
        const KernelName kernel = KernelName::parse(a.kernel);
        if (!wider) {
            QCOMPARE(stats.strategy, std::string("strips"));
            QVERIFY(stats.wider_path.empty());
            QVERIFY(kernel.width == KernelWidth::S32);
            return;
        }
        QCOMPARE(kernel, (KernelName{AlignmentMode::Local, false, "myersmiller", 0, KernelWidth::S64}));
        QCOMPARE(stats.strategy, std::string("linear-space"));
        QVERIFY2(stats.wider_path.find("-127..127") != std::string::npos, stats.wider_path.c_str());

        // A forced strip kernel cannot hold it: refused, naming --kernel's parameter.
        LongRunnerSettings forced;
        forced.kernel = "sw_affine_strips16_s32";
        try {
            (void)align_long_on(device, q, t, scheme, options, forced);
            QFAIL("a forced kernel ran a pair it cannot hold");
        } catch (const Error& e) {
            QCOMPARE(e.parameter(), std::string("kernel"));
            QVERIFY2(std::string(e.what()).find("-127..127") != std::string::npos, e.what());
        }
        // The 64-bit path forced by its own name runs.
        forced.kernel = a.kernel;
        QCOMPARE(align_long_on(device, q, t, scheme, options, forced).score, a.score);
    }
};

QTEST_GUILESS_MAIN(TestLongRunnerLimits)
#include "test_long_runner_limits.moc"
