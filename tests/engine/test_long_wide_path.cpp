// Long pairs past the pass pipeline's 32-bit cells: the pipeline's limit on
// both sides of its bound (a pair it says it holds comes out right, the next
// one up is refused by align_long), and align_long_on taking the 64-bit
// linear-space path on a CPU device with a checkpoint asked for, against a
// plain 64-bit Gotoh oracle (tests/common/gotoh64.hpp): the score (past 2^31
// on one pair), the 64-bit kernel, the strategy and why, and the checkpoint
// directory left as it was: not created, another job's checkpoint neither
// resumed nor touched, and refused with what differs under --resume.
#include "gotoh64.hpp"
#include "random_relatives.hpp"

#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <random>
#include <string>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

const std::string kDna = "ACGT";

// The name of the 64-bit linear-space path's kernel (traceback on).
std::string myers_miller_s64(AlignmentMode mode, bool linear) {
    return KernelName{mode, linear, "myersmiller", 0, KernelWidth::S64}.format();
}

ScoringScheme dna_scheme(int match, int mismatch, double open, double extend) {
    return ScoringScheme::create(SubstitutionMatrix::match_mismatch(match, mismatch), open, extend);
}

// A pair of exactly m and n residues (the target a relative of the query).
std::pair<std::string, std::string> pair_of(std::uint32_t seed, std::size_t m, std::size_t n) {
    std::mt19937 rng(seed);
    const std::string q = random_residues(rng, kDna, m);
    std::string t = mutate(rng, q, kDna);
    if (t.size() < n) t += random_residues(rng, kDna, n - t.size());
    t.resize(n);
    return {q, t};
}

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestLongWidePath : public QObject {
    Q_OBJECT
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();

    // The extreme scheme of these tests: scores past 2^29 on a few hundred residues.
    const ScoringScheme extreme_ = dna_scheme(1'000'000, -1'000'000, 65536, 65536);
    const test::Gotoh64 oracle_{1'000'000, -1'000'000, 65536, 65536};

private slots:
    // match 100,000 / mismatch -100,000, gaps 1,000,000 (linear), n x n: the
    // bound is 100,000 n + 2n x 1,000,000 + 3 x 1,000,000, under 2^29 =
    // 536,870,912 up to n = 254 (536,400,000) and past it from 255 (538,500,000).
    void pipelineLimitOnBothSidesOfItsBound() {
        const ScoringScheme s = dna_scheme(100'000, -100'000, 1'000'000, 1'000'000);
        QCOMPARE(pass_score_bound(254, 254, s), std::int64_t{536'400'000});
        QCOMPARE(pass_score_bound(255, 255, s), std::int64_t{538'500'000});
        QVERIFY(passes_cannot_hold(254, 254, s).empty());
        const std::string why = passes_cannot_hold(255, 255, s);
        QVERIFY2(why.find("32-bit") != std::string::npos && why.find("255 x 255") != std::string::npos, why.c_str());
        auto runner = make_cpu_pass_runner();
        QCOMPARE(runner->cannot_hold(255, 255, s), why);

        // The pair it holds comes out right through every stage; the next is refused.
        const test::Gotoh64 oracle{100'000, -100'000, 1'000'000, 1'000'000};
        LongPairOptions o;
        o.min_band_rows = 16;
        o.base_rows = 4;
        o.base_cells = 64;
        o.threads = 2;
        const auto [q, t] = pair_of(11, 254, 254);
        const Alignment a = align_long(q, t, s, o, *runner);
        QCOMPARE(a.score, oracle.score(q, t, false));
        const auto [q2, t2] = pair_of(11, 255, 255);
        QVERIFY_THROWS_EXCEPTION(Error, align_long(q2, t2, s, o, *runner));
    }

    // A CPU device with --checkpoint runs the scalar pass runner; a pair it
    // cannot hold runs in 64-bit linear space instead, with no checkpoint.
    void routeOfACheckpointedCpuJob() {
        Backend& cpu = registry_->select("cpu");
        const auto [q, t] = pair_of(3, 300, 308);
        LongPairOptions o;
        o.checkpoint_dir = "/nonexistent/checkpoint";
        const LongRoute held = route_long_pair(cpu, q, t, dna_scheme(2, -3, 5, 2), o, {});
        QVERIFY(held.path == LongRoute::Path::CpuPasses && held.runner && held.wider_reason.empty());
        QVERIFY(!held.checkpoint_skipped());
        const LongRoute wide = route_long_pair(cpu, q, t, extreme_, o, {});
        QVERIFY(wide.path == LongRoute::Path::LinearSpace && !wide.runner);
        QVERIFY2(wide.wider_reason.find("32-bit") != std::string::npos, wide.wider_reason.c_str());
        QVERIFY(wide.checkpoint_skipped());
        QCOMPARE(wide.kernel, myers_miller_s64(AlignmentMode::Global, true));
        // Without a checkpoint a CPU device aligns in linear space anyway: no reason to give.
        const LongRoute plain = route_long_pair(cpu, q, t, extreme_, LongPairOptions{}, {});
        QVERIFY(plain.path == LongRoute::Path::LinearSpace && plain.wider_reason.empty());
    }

    void checkpointedJobPast32BitsOnTheCpu_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<bool>("local");
        QTest::addColumn<int>("length");
        QTest::newRow("cpu global") << "cpu" << false << 300;
        QTest::newRow("cpu-ref global") << "cpu-ref" << false << 300;
        QTest::newRow("cpu local, past 2^31") << "cpu" << true << 4000;
    }
    void checkpointedJobPast32BitsOnTheCpu() {
        QFETCH(QString, device);
        QFETCH(bool, local);
        QFETCH(int, length);
        QTemporaryDir tmp;
        Backend& backend = registry_->select(device.toStdString());
        std::mt19937 rng(5);
        const std::string q = random_residues(rng, kDna, static_cast<std::size_t>(length));
        const std::string t = mutate(rng, q, kDna);
        LongPairOptions o;
        o.align.mode = local ? AlignmentMode::Local : AlignmentMode::Global;
        o.checkpoint_dir = tmp.filePath("ck").toStdString();
        o.checkpoint_every = 0;
        o.threads = 2;
        LongPairStats stats;
        const Alignment a = align_long_on(backend, q, t, extreme_, o, {}, {}, &stats);
        const std::int64_t expected = oracle_.score(q, t, local);
        QCOMPARE(a.score, expected);
        if (local) QVERIFY(expected > (std::int64_t{1} << 31));
        QCOMPARE(a.device, device.toStdString());
        QCOMPARE(a.kernel, myers_miller_s64(o.align.mode, true));
        QCOMPARE(stats.strategy, std::string("linear-space"));
        QVERIFY2(stats.wider_path.find("32-bit") != std::string::npos, stats.wider_path.c_str());
        QCOMPARE(stats.checkpoints, 0);
        QVERIFY(!QFileInfo::exists(tmp.filePath("ck")));
    }

    // Another job's checkpoint in the directory: a new job leaves it as it
    // is; --resume refuses it, naming what differs, and leaves it too. With
    // nothing to resume, the job runs.
    void anotherJobsCheckpointIsLeftAlone() {
        QTemporaryDir tmp;
        Backend& cpu = registry_->select("cpu");
        const auto [q, t] = pair_of(3, 300, 308);
        const QString ck = tmp.filePath("ck");
        LongPairOptions other;
        other.checkpoint_dir = ck.toStdString();
        other.checkpoint_every = 0;
        other.min_band_rows = 64;
        other.keep_checkpoint = true;
        const ScoringScheme usual = dna_scheme(2, -3, 5, 2);
        (void)align_long_on(cpu, q, t, usual, other, {});
        const QString manifest = ck + "/" + kCheckpointManifest;
        const QByteArray before = file_bytes(manifest);
        QVERIFY(!before.isEmpty());
        const QStringList files = QDir(ck).entryList(QDir::Files);

        LongPairOptions o;
        o.checkpoint_dir = ck.toStdString();
        LongPairStats stats;
        QCOMPARE(align_long_on(cpu, q, t, extreme_, o, {}, {}, &stats).score, oracle_.score(q, t, false));
        QCOMPARE(stats.strategy, std::string("linear-space"));
        o.resume = true;
        try {
            (void)align_long_on(cpu, q, t, extreme_, o, {});
            QFAIL("resumed another job's checkpoint");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("another pair or scheme") != std::string::npos &&
                         what.find("gap") != std::string::npos && what.find("64-bit linear space") != std::string::npos,
                     e.what());
        }
        QCOMPARE(file_bytes(manifest), before);
        QCOMPARE(QDir(ck).entryList(QDir::Files), files);

        const QString empty = tmp.filePath("empty");
        QVERIFY(QDir().mkpath(empty));
        o.checkpoint_dir = empty.toStdString();
        QCOMPARE(align_long_on(cpu, q, t, extreme_, o, {}).score, oracle_.score(q, t, false));
        QVERIFY(QDir(empty).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot));
    }
};

QTEST_GUILESS_MAIN(TestLongWidePath)
#include "test_long_wide_path.moc"
