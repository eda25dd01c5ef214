// The pipeline's device-Forward path on the CPU: a scanner whose forward()
// hands back the Forward scores and row specials (here from the CPU's own
// forward(), as a GPU's must be bit for bit) must give the very search the
// CPU path gives: the four pipeline counts, every hit's scores and E-values,
// every domain's envelope, alignment and score, for the tutorial models over
// a slice of real sequences plus a target too long for the device Forward
// (which the worker threads score while the device runs).
#include "hmmsearch_oracle.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/envelope_rescore.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <QtTest>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::test;

namespace {

// The CPU scanner's filters, and forward() by the CPU's forward().
class ForwardOnTheSide final : public ProfileFilterScanner {
public:
    // decline_after: forward() answers false from that call on (-1: never);
    // with_backward: backward() runs too.
    // with_envelopes: rescore_envelopes() runs too.
    explicit ForwardOnTheSide(std::unique_ptr<ProfileFilterScanner> cpu, int decline_after = -1,
                              bool with_backward = false, bool with_envelopes = false)
        : cpu_(std::move(cpu)),
          decline_after_(decline_after),
          with_backward_(with_backward),
          with_envelopes_(with_envelopes) {}
    DeviceInfo info() const override { return cpu_->info(); }
    void load(const ProfileTargets& targets, JobContext& context) override {
        targets_ = &targets;
        cpu_->load(targets, context);
    }
    void msv(const MsvProfile& model, std::span<float> scores, JobContext& context) override {
        cpu_->msv(model, scores, context);
    }
    void viterbi(const ViterbiFilterProfile& model, std::span<const std::uint32_t> targets, std::span<float> scores,
                 JobContext& context) override {
        cpu_->viterbi(model, targets, scores, context);
    }
    bool runs_forward() const override { return true; }
    bool forward(const ForwardProfile& model, std::span<const std::uint32_t> list, ForwardScores& out,
                 JobContext&) override {
        if (calls_ == decline_after_) return false;
        const FlushSubnormals flush;
        out = {};
        DpMatrix fwd;
        for (std::uint32_t t : list) {
            const int L = targets_->length(t);
            out.first_row.push_back(out.specials.size() / DpMatrix::Specials);
            float score = 0.0f;
            try {
                score = profile::forward(model, LengthModel::for_target(L, true), targets_->codes(t), L, fwd, false);
            } catch (const Error&) {
                score = std::numeric_limits<float>::quiet_NaN();
            }
            out.scores.push_back(score);
            out.total_scale.push_back(fwd.total_scale);
            out.specials.insert(out.specials.end(), fwd.xmx.begin(),
                                fwd.xmx.begin() + (static_cast<std::ptrdiff_t>(L) + 1) * DpMatrix::Specials);
            longest_ = std::max(longest_, static_cast<std::uint64_t>(L));
        }
        calls_ += 1;
        scored_ += list.size();
        return true;
    }
    bool runs_backward() const override { return with_backward_; }
    // The CPU's backward() over the Forward it redoes (as the device's must
    // be, bit for bit, given the Forward rows it was handed).
    bool backward(const ForwardProfile& model, std::span<const std::uint32_t> list, const ForwardScores& forward,
                  std::span<const std::uint32_t> positions, BackwardScores& out, JobContext&) override {
        if (!with_backward_) return false;
        const FlushSubnormals flush;
        out = {};
        DpMatrix fwd, bck;
        for (std::uint32_t p : positions) {
            const std::uint32_t t = list[p];
            const int L = targets_->length(t);
            const LengthModel length = LengthModel::for_target(L, true);
            profile::forward(model, length, targets_->codes(t), L, fwd, false);
            if (fwd.total_scale != forward.total_scale[p]) throw Error("test: the Forward rows handed over differ");
            float score = 0.0f;
            try {
                score = profile::backward(model, length, targets_->codes(t), L, fwd, bck, false);
            } catch (const Error&) {
                score = std::numeric_limits<float>::quiet_NaN();
            }
            out.first_row.push_back(out.specials.size() / DpMatrix::Specials);
            out.scores.push_back(score);
            out.total_scale.push_back(bck.total_scale);
            out.specials.insert(out.specials.end(), bck.xmx.begin(),
                                bck.xmx.begin() + (static_cast<std::ptrdiff_t>(L) + 1) * DpMatrix::Specials);
        }
        backward_calls_ += 1;
        return true;
    }
    int backward_calls() const { return backward_calls_; }
    bool runs_envelopes() const override { return with_envelopes_; }
    // The CPU reference of each envelope's rescoring (as a device's must be).
    bool rescore_envelopes(const ForwardProfile& unihit, std::span<const EnvelopeJob> jobs,
                           std::vector<EnvelopeOutcome>& out, JobContext&) override {
        if (!with_envelopes_) return false;
        out.clear();
        for (const EnvelopeJob& job : jobs)
            out.push_back(rescore_envelope_reference(unihit, targets_->alphabet, targets_->codes(job.target),
                                                     targets_->length(job.target), job));
        envelopes_ += jobs.size();
        return true;
    }
    std::size_t envelopes() const { return envelopes_; }
    int calls() const { return calls_; }
    std::size_t scored() const { return scored_; }
    std::uint64_t longest() const { return longest_; }

private:
    std::unique_ptr<ProfileFilterScanner> cpu_;
    const ProfileTargets* targets_ = nullptr;
    int decline_after_ = -1;
    bool with_backward_ = false, with_envelopes_ = false;
    std::size_t envelopes_ = 0;
    int calls_ = 0, backward_calls_ = 0;
    std::size_t scored_ = 0;
    std::uint64_t longest_ = 0;
};

void add_target(ProfileTargets& targets, const std::string& name, const std::vector<std::uint8_t>& codes) {
    targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
    targets.offsets.push_back(targets.residues.size());
    targets.names.push_back(name);
    targets.descriptions.emplace_back();
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

class TestProfileDeviceForward : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/Pkinase.hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        slice_ = database_slice(dir_, QStringLiteral("slice.fa"), 1500);
    }

    // One batch; batches of 1, 2, 4, 8, 8, ... (the worker threads take each
    // batch's survivors while the device scores the next); and a device that
    // declines from its third batch on (the rest scored whole on the CPU).
    void same_search_as_the_cpu_path_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("decline_after");
        QTest::addColumn<bool>("backward");
        // envelopes: 0 none on the device; 1 the device alone (in fours); 2 the
        // device (in fours) and the idle worker threads.
        QTest::addColumn<int>("envelopes");
        QTest::newRow("globins4") << QStringLiteral("globins4") << 512 << -1 << false << 0;  // few survivors
        QTest::newRow("globins4 backward") << QStringLiteral("globins4") << 512 << -1 << true << 0;
        QTest::newRow("globins4 envelopes") << QStringLiteral("globins4") << 512 << -1 << true << 1;
        QTest::newRow("globins4 envelopes shared") << QStringLiteral("globins4") << 512 << -1 << true << 2;
        for (const char* model : {"Pkinase", "fn3"}) {
            const std::string m = model;
            const QString name = QString::fromLatin1(model);
            QTest::newRow(model) << name << 512 << -1 << false << 0;
            QTest::newRow((m + " batches").c_str()) << name << 1 << -1 << false << 0;
            QTest::newRow((m + " declines").c_str()) << name << 1 << 2 << false << 0;
            QTest::newRow((m + " backward").c_str()) << name << 512 << -1 << true << 0;
            QTest::newRow((m + " backward batches").c_str()) << name << 1 << -1 << true << 0;
            QTest::newRow((m + " envelopes").c_str()) << name << 512 << -1 << true << 1;
            QTest::newRow((m + " envelopes batches").c_str()) << name << 1 << -1 << false << 1;
            QTest::newRow((m + " envelopes declines").c_str()) << name << 1 << 2 << true << 1;
            QTest::newRow((m + " envelopes shared").c_str()) << name << 1 << -1 << true << 2;
        }
    }
    void same_search_as_the_cpu_path() {
        QFETCH(QString, model);
        QFETCH(int, batch);
        QFETCH(int, decline_after);
        QFETCH(bool, backward);
        QFETCH(int, envelopes);
        const ProfileHmm hmm = read_hmm_file((kTutorial + "/" + model + ".hmm").toStdString()).front();
        ProfileTargets targets = read_profile_targets(slice_.toStdString(), hmm.alphabet);
        // The consensus repeated past the device's cell limit: a long hit with
        // many domains, scored on the worker threads beside the device.
        std::vector<std::uint8_t> consensus, repeated;
        ResidueCode::of(hmm.alphabet).digitise(hmm.consensus.substr(1), consensus);
        const std::size_t copies = 1'100'000 / (consensus.size() * consensus.size()) + 1;
        for (std::size_t c = 0; c < copies; ++c) repeated.insert(repeated.end(), consensus.begin(), consensus.end());
        add_target(targets, "consensus_long", repeated);
        add_target(targets, "consensus_x2",
                   std::vector<std::uint8_t>(repeated.begin(),
                                             repeated.begin() + static_cast<std::ptrdiff_t>(2 * consensus.size())));
        PipelineSettings settings;
        settings.threads = 2;
        JobContext context;
        // The CPU path's search of these targets, once per model (every row of
        // a model searches the same targets; only the device's side differs).
        if (!expected_.count(model)) {
            auto cpu = make_cpu_profile_scanner_registry()->create("cpu", 2);
            cpu->load(targets, context);
            expected_.emplace(model, search_profile(hmm, targets, *cpu, settings, context));
        }
        const ModelSearch& expected = expected_.at(model);
        ForwardOnTheSide device(make_cpu_profile_scanner_registry()->create("cpu", 2), decline_after, backward,
                                envelopes);
        device.load(targets, context);
        settings.device_batch = static_cast<std::size_t>(batch);
        settings.device_envelopes = 4;
        settings.device_length = 4000;  // below consensus_long's length for each model
        QVERIFY(repeated.size() > static_cast<std::size_t>(settings.device_length));
        settings.cpu_takes_envelopes = envelopes == 2;
        const ModelSearch ours = search_profile(hmm, targets, device, settings, context);

        if (backward) QVERIFY(device.backward_calls() >= 1);
        if (envelopes != 0) {
            QCOMPARE(ours.stages.envelopes_on_device, static_cast<std::uint64_t>(device.envelopes()));
            if (envelopes == 1) {
                QVERIFY(device.envelopes() >= 1);
                QCOMPARE(ours.stages.envelopes_on_cpu, std::uint64_t{0});
            }
            QVERIFY(ours.stages.envelopes_on_device + ours.stages.envelopes_on_cpu >= 1);
        }
        // Every survivor short enough went to the device once, in the
        // batches asked for, up to the one it declined.
        const std::uint64_t survivors = expected.counts.past_viterbi;
        if (batch >= 512) {
            QCOMPARE(device.calls(), 1);
            QCOMPARE(ours.stages.device_batches, 1);
        } else if (decline_after < 0) {
            QVERIFY(survivors > 8);
            QVERIFY(device.calls() >= 4);
            QCOMPARE(ours.stages.device_batches, device.calls());
            // consensus_long, and any real target as long, on the CPU.
            std::uint64_t too_long = 0;
            for (std::size_t t = 0; t < targets.size(); ++t) too_long += targets.length(t) > settings.device_length;
            QVERIFY(device.scored() < survivors);
            QVERIFY(device.scored() + too_long >= survivors);
        } else {
            QCOMPARE(device.calls(), decline_after);
            QCOMPARE(device.scored(), static_cast<std::size_t>(1 + 2));
        }
        QVERIFY2(device.longest() <= static_cast<std::uint64_t>(settings.device_length),
                 "a target past the device's length limit went to the device");
        QCOMPARE(ours.counts.past_viterbi, expected.counts.past_viterbi);
        QCOMPARE(ours.counts.past_forward, expected.counts.past_forward);
        QCOMPARE(ours.counts.domains, expected.counts.domains);
        QCOMPARE(ours.counts.envelopes, expected.counts.envelopes);
        QVERIFY(expected.counts.past_forward >= 2);
        QCOMPARE(ours.hits.size(), expected.hits.size());
        bool long_hit = false;
        for (std::size_t h = 0; h < ours.hits.size(); ++h) {
            const TargetHit &a = ours.hits[h], &b = expected.hits[h];
            QCOMPARE(QString::fromStdString(a.name), QString::fromStdString(b.name));
            long_hit = long_hit || a.name == "consensus_long";
            QVERIFY2(same_bits(a.score, b.score) && same_bits(a.pre_score, b.pre_score) && a.lnP == b.lnP,
                     qPrintable(QString::fromStdString(a.name)));
            QCOMPARE(a.reported, b.reported);
            QCOMPARE(a.domains.size(), b.domains.size());
            for (std::size_t d = 0; d < a.domains.size(); ++d) {
                QCOMPARE(a.domains[d].env_from, b.domains[d].env_from);
                QCOMPARE(a.domains[d].env_to, b.domains[d].env_to);
                QVERIFY(same_bits(a.domains[d].score, b.domains[d].score));
            }
        }
        QVERIFY2(long_hit, "the long target was not found: the worker threads' side went untested");
    }

    // Models of long_model nodes or more send targets up to
    // device_length_long_model to the device, shorter models only up to
    // device_length; the results stay the CPU path's. (Pkinase, 260 nodes,
    // stands for a long model by lowering the bound.)
    void long_models_send_longer_targets_to_the_device() {
        const ProfileHmm hmm = read_hmm_file((kTutorial + "/Pkinase.hmm").toStdString()).front();
        ProfileTargets targets = read_profile_targets(slice_.toStdString(), hmm.alphabet);
        std::vector<std::uint8_t> consensus, repeated;
        ResidueCode::of(hmm.alphabet).digitise(hmm.consensus.substr(1), consensus);
        for (int c = 0; c < 8; ++c) repeated.insert(repeated.end(), consensus.begin(), consensus.end());
        add_target(targets, "consensus_x8", repeated);  // 2,080 residues
        JobContext context;
        PipelineSettings settings;
        settings.threads = 2;
        settings.device_length = 1500;
        settings.device_length_long_model = 2500;
        QVERIFY(repeated.size() > 1500 && repeated.size() <= 2500);
        QCOMPARE(settings.device_length_for(hmm.length), 1500);
        auto cpu = make_cpu_profile_scanner_registry()->create("cpu", 2);
        cpu->load(targets, context);
        const ModelSearch expected = search_profile(hmm, targets, *cpu, settings, context);
        for (const int long_model : {hmm.length + 1, hmm.length}) {
            settings.long_model = long_model;
            const int limit = settings.device_length_for(hmm.length);
            QCOMPARE(limit, long_model <= hmm.length ? 2500 : 1500);
            ForwardOnTheSide device(make_cpu_profile_scanner_registry()->create("cpu", 2), -1, true, true);
            device.load(targets, context);
            const ModelSearch ours = search_profile(hmm, targets, device, settings, context);
            QVERIFY(device.longest() <= static_cast<std::uint64_t>(limit));
            QCOMPARE(device.longest() >= repeated.size(), limit == 2500);
            QCOMPARE(ours.hits.size(), expected.hits.size());
            for (std::size_t h = 0; h < ours.hits.size(); ++h) {
                QCOMPARE(QString::fromStdString(ours.hits[h].name), QString::fromStdString(expected.hits[h].name));
                QVERIFY(same_bits(ours.hits[h].score, expected.hits[h].score));
                QCOMPARE(ours.hits[h].domains.size(), expected.hits[h].domains.size());
            }
        }
    }

    // device_backward_needs_cpu(): a device's Backward rows (the Forward's
    // scale factors throughout) go to the CPU where a row's B before its
    // division comes near 1e16 (hmmsearch's switch to factors of its own), or
    // the score is not a number, zero or infinite; nowhere else.
    void device_backward_needs_cpu_where_hmmsearch_switches() {
        const int L = 5;
        DpMatrix fwd, bck;
        fwd.resize(4, L, false);
        auto fresh = [&] {
            bck.resize(4, L, false);
            std::fill(bck.xmx.begin(), bck.xmx.end(), 1.0f);
            std::fill(fwd.xmx.begin(), fwd.xmx.end(), 1.0f);
        };
        fresh();
        QVERIFY(!device_backward_needs_cpu(fwd, bck));
        // Row 2 divided by a factor of 1e6: B was 1e16 before it (stored 1e10).
        fresh();
        fwd.x(2, DpMatrix::Scale) = 1.0e6f;
        bck.x(2, DpMatrix::B) = 1.0e10f;
        QVERIFY(device_backward_needs_cpu(fwd, bck));
        // Stored 1e9 with the same factor: 1e15 before, far from the switch.
        bck.x(2, DpMatrix::B) = 1.0e9f;
        QVERIFY(!device_backward_needs_cpu(fwd, bck));
        // No division (factor 1): the stored B is the one compared.
        fresh();
        bck.x(3, DpMatrix::B) = 2.0e16f;
        QVERIFY(device_backward_needs_cpu(fwd, bck));
        // Row L is never compared (hmmsearch does not switch there), row 0 neither.
        fresh();
        bck.x(L, DpMatrix::B) = 2.0e16f;
        bck.x(0, DpMatrix::B) = 2.0e16f;
        QVERIFY(!device_backward_needs_cpu(fwd, bck));
        // A row's B not a number; the score's N not a number, infinite or 0.
        fresh();
        bck.x(1, DpMatrix::B) = std::numeric_limits<float>::quiet_NaN();
        QVERIFY(device_backward_needs_cpu(fwd, bck));
        for (const float xN : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.0f}) {
            fresh();
            bck.x(0, DpMatrix::N) = xN;
            QVERIFY(device_backward_needs_cpu(fwd, bck));
        }
    }

private:
    QTemporaryDir dir_;
    QString slice_;
    std::map<QString, ModelSearch> expected_;
};

QTEST_GUILESS_MAIN(TestProfileDeviceForward)
#include "test_profile_device_forward.moc"
