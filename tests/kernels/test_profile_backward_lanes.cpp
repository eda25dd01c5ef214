// The GPU parser Backward's recurrence on the CPU: backward_lanes() (the code
// the kernel runs, one thread a lane) emulated with the four lanes in one
// thread, given the scale factors of the engine's forward(), must give the
// engine's backward() bit for bit: the score (or the same error), the total
// scale and every row's specials, for the tutorial models (globins4, fn3,
// Pkinase over 300 real DB.fasta proteins, an empty one and a one-residue
// one; MADE1 over the tutorial's human DNA: 100,000 bases, then windows) and the
// made-up models over made-up targets (extreme models, rescaled runs). Also the
// host's load_device_backward() and backward_score_of(), the domain stage
// given only the loaded rows (it reads no Backward cells), verify's device
// Backward check, and the kernel's name.
#include "../../kernels/profile/backward_lanes.hpp"
#include "../../kernels/profile/envelope_lanes.hpp"
#include "../../kernels/profile/filter_layout.hpp"

#include "hmmsearch_oracle.hpp"

#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/profile/domain_definition.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_targets.hpp>

#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::kernels::profile;
using namespace alignscope::test;

namespace {

struct Tally {
    int targets = 0, differ = 0, rescaled = 0, failed = 0, own_scales = 0;
    QString first;
};

void add_target(ProfileTargets& targets, const std::string& name, const std::vector<std::uint8_t>& codes) {
    targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
    targets.offsets.push_back(targets.residues.size());
    targets.names.push_back(name);
    targets.descriptions.emplace_back();
}

// One target through forward() and backward(), and through the emulated
// lanes given forward()'s scale factors.
void compare_target(const ForwardProfile& om, const std::string& model, const std::string& name,
                    const std::uint8_t* dsq, int L, Tally& tally) {
    thread_local DpMatrix fwd, bck;
    const LengthModel length = LengthModel::for_target(L, true);
    try {
        (void)forward(om, length, dsq, L, fwd, false);
    } catch (const Error&) {
        // No Forward score (underflow): the rows are there, Backward still runs.
    }
    std::vector<float> scales(static_cast<std::size_t>(L) + 1);
    for (int i = 0; i <= L; ++i) scales[static_cast<std::size_t>(i)] = fwd.x(i, DpMatrix::Scale);
    std::vector<float> specials((static_cast<std::size_t>(L) + 1) * kForwardSpecials, -1.0f);
    ForwardModelView m;
    m.striped = om.striped.data();
    m.Q = om.segments;
    m.M = om.length;
    m.e_loop = om.e_loop;
    m.e_move = om.e_move;
    BackwardTargetView t;
    t.dsq = dsq;
    t.L = L;
    t.loop = length.loop;
    t.move = length.move;
    t.scales = scales.data();
    t.specials = specials.data();
    HostBackwardLanes lanes(om.segments);
    const BackwardOutcome ours = backward_lanes<1>(lanes, m, t);
    // The kernel's deeper load schedule: the same values.
    std::vector<float> ahead_specials(specials.size(), -1.0f);
    t.specials = ahead_specials.data();
    const BackwardOutcome ahead = backward_lanes<kBackwardAhead>(lanes, m, t);
    const bool same_ahead = std::memcmp(&ahead, &ours, sizeof ours) == 0 &&
                            std::memcmp(ahead_specials.data(), specials.data(), specials.size() * sizeof(float)) == 0;
    float reference = 0.0f, score = 0.0f;
    bool reference_fails = false, ours_fails = false;
    try {
        reference = backward(om, length, dsq, L, fwd, bck, false);
    } catch (const Error&) {
        reference_fails = true;
    }
    try {
        score = backward_score_of(ours.xN, ours.total_scale, L);
    } catch (const Error&) {
        ours_fails = true;
    }
    ++tally.targets;
    tally.rescaled += ours.total_scale > 0.0f;
    tally.failed += reference_fails;
    if (!reference_fails && bck.own_scales && L > 0) {
        // The CPU's Backward took scale factors of its own; the lanes keep the
        // Forward's, so their rows differ, and the host must see that in them
        // (device_backward_needs_cpu()) and redo the target on the CPU.
        ++tally.own_scales;
        DpMatrix loaded;
        loaded.resize(om.length, L, false);
        std::copy_n(specials.begin(), specials.size(), loaded.xmx.begin());
        if (same_ahead && device_backward_needs_cpu(fwd, loaded)) return;
        if (tally.differ++ == 0)
            tally.first = QStringLiteral(
                              "%1 x %2 (%3 residues): the CPU's Backward took its own scale factors, and "
                              "the lanes' rows do not send it to the CPU")
                              .arg(QString::fromStdString(model), QString::fromStdString(name))
                              .arg(L);
        return;
    }
    // backward() writes no row for an empty target.
    const std::size_t compared = L > 0 ? specials.size() : 0;
    const bool same = same_ahead && ours_fails == reference_fails &&
                      (reference_fails || std::memcmp(&score, &reference, sizeof score) == 0) &&
                      std::memcmp(&ours.total_scale, &bck.total_scale, sizeof(float)) == 0 &&
                      std::memcmp(specials.data(), bck.xmx.data(), compared * sizeof(float)) == 0;
    if (same) return;
    if (tally.differ++ == 0)
        tally.first = QStringLiteral("%1 x %2 (%3 residues): %4, reference %5")
                          .arg(QString::fromStdString(model), QString::fromStdString(name))
                          .arg(L)
                          .arg(static_cast<double>(score), 0, 'g', 9)
                          .arg(static_cast<double>(reference), 0, 'g', 9);
}

void compare_model(const ProfileHmm& hmm, const ProfileTargets& targets, Tally& tally) {
    const FlushSubnormals flush;
    NullModel null_model(hmm.alphabet);
    null_model.set_filter(hmm.length, hmm.composition);
    const ConfiguredProfile profile(hmm, null_model);
    for (std::size_t t = 0; t < targets.size(); ++t)
        compare_target(profile.multihit, hmm.name, targets.names[t], targets.codes(t), targets.length(t), tally);
}

QString summary(const Tally& tally) {
    return QStringLiteral("%1 of %2 differ; first: %3").arg(tally.differ).arg(tally.targets).arg(tally.first);
}

ProfileHmm tutorial_model(const char* name) {
    return read_hmm_file((kTutorial + "/" + name + ".hmm").toStdString()).front();
}

// A scanner whose Forward and Backward are the lanes' CPU emulations (the
// filters the CPU scanner's), so that verify's device Backward check runs
// here: `flip` changes one row special of one target's Backward (of every
// model, or of the models of `flip_length` nodes only).
class EmulatedScanner final : public ProfileFilterScanner {
public:
    explicit EmulatedScanner(bool flip, int flip_length = 0)
        : cpu_(make_cpu_profile_scanner_registry()->create("cpu", 2)), flip_(flip), flip_length_(flip_length) {}
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
    bool forward(const ForwardProfile& model, std::span<const std::uint32_t> targets, ForwardScores& out,
                 JobContext& /*context*/) override {
        const FlushSubnormals flush;
        const ForwardModelView m = view(model);
        HostForwardLanes lanes(model.segments);
        out = ForwardScores{};
        std::uint64_t rows = 0;
        for (std::uint32_t t : targets) out.first_row.push_back(rows), rows += targets_->length(t) + 1u;
        out.specials.assign(rows * kForwardSpecials, 0.0f);
        for (std::size_t i = 0; i < targets.size(); ++i) {
            const int L = targets_->length(targets[i]);
            const LengthModel length = LengthModel::for_target(L, true);
            const ForwardTargetView t{targets_->codes(targets[i]), L, length.loop, length.move,
                                      out.specials.data() + out.first_row[i] * kForwardSpecials};
            const ForwardOutcome o = forward_lanes(lanes, m, t);
            out.total_scale.push_back(o.total_scale);
            out.scores.push_back(forward_score_of(length, o.xC, o.total_scale, L));
        }
        return true;
    }
    bool backward(const ForwardProfile& model, std::span<const std::uint32_t> forward_targets,
                  const ForwardScores& forward, std::span<const std::uint32_t> positions, BackwardScores& out,
                  JobContext& /*context*/) override {
        const FlushSubnormals flush;
        const ForwardModelView m = view(model);
        HostBackwardLanes lanes(model.segments);
        out = BackwardScores{};
        std::uint64_t rows = 0;
        for (std::uint32_t p : positions)
            out.first_row.push_back(rows), rows += targets_->length(forward_targets[p]) + 1u;
        out.specials.assign(rows * kForwardSpecials, 0.0f);
        for (std::size_t j = 0; j < positions.size(); ++j) {
            const std::uint32_t p = positions[j];
            const int L = targets_->length(forward_targets[p]);
            const LengthModel length = LengthModel::for_target(L, true);
            std::vector<float> scales;
            for (int i = 0; i <= L; ++i)
                scales.push_back(
                    forward.specials[(forward.first_row[p] + static_cast<std::size_t>(i)) * kForwardSpecials + 5]);
            const BackwardTargetView t{targets_->codes(forward_targets[p]),
                                       L,
                                       length.loop,
                                       length.move,
                                       scales.data(),
                                       out.specials.data() + out.first_row[j] * kForwardSpecials};
            const BackwardOutcome o = backward_lanes(lanes, m, t);
            out.total_scale.push_back(o.total_scale);
            out.scores.push_back(backward_score_of(o.xN, o.total_scale, L));
        }
        // Target 3's row 1 J, one unit in the last place off.
        if (flip_ && positions.size() > 3 && (flip_length_ == 0 || model.length == flip_length_)) {
            float& x = out.specials[(out.first_row[3] + 1) * kForwardSpecials + DpMatrix::J];
            x = std::nextafter(x, 1.0f);
        }
        return true;
    }

private:
    static ForwardModelView view(const ForwardProfile& om) {
        return ForwardModelView{om.striped.data(), om.segments, om.length, om.e_loop, om.e_move};
    }
    std::unique_ptr<ProfileFilterScanner> cpu_;
    const ProfileTargets* targets_ = nullptr;
    bool flip_;
    int flip_length_;
};

}  // namespace

class TestProfileBackwardLanes : public QObject {
    Q_OBJECT

private slots:
    void protein_models_on_real_sequences() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/Pkinase.hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        // 300 proteins of 26 to 4,799 residues (126,450 in all).
        const QString slice = database_slice(dir_, QStringLiteral("slice.fa"), 300);
        Tally tally;
        for (const char* name : {"globins4", "fn3", "Pkinase"}) {
            const ProfileHmm hmm = tutorial_model(name);
            ProfileTargets targets = read_profile_targets(slice.toStdString(), hmm.alphabet);
            QCOMPARE(targets.size(), std::size_t{300});
            add_target(targets, "empty", {});
            add_target(targets, "one_residue", {targets.codes(0)[0]});
            // The consensus three times: three hits, rows rescaled.
            std::vector<std::uint8_t> consensus;
            const std::string c = hmm.consensus.substr(1);
            ResidueCode::of(hmm.alphabet).digitise(c + c + c, consensus);
            add_target(targets, "consensus_x3", consensus);
            compare_model(hmm, targets, tally);
        }
        QVERIFY2(tally.differ == 0, qPrintable(summary(tally)));
        QVERIFY2(tally.rescaled > 0, "no target was rescaled: the rescaling path went untested");
    }

    // The domain stage (define_domains) given the lanes' rows loaded by
    // load_device_backward() (cells poisoned with NaN: it reads none) finds
    // what it finds with backward()'s own matrix: regions, envelopes, every
    // domain's envelope, scores and null2 bit for bit.
    void domain_stage_from_loaded_rows() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/Pkinase.hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        const ProfileHmm hmm = tutorial_model("Pkinase");
        ProfileTargets targets =
            read_profile_targets(database_slice(dir_, QStringLiteral("domains.fa"), 60).toStdString(), hmm.alphabet);
        std::vector<std::uint8_t> consensus;
        const std::string c = hmm.consensus.substr(1);
        ResidueCode::of(hmm.alphabet).digitise(c + c + c, consensus);
        add_target(targets, "consensus_x3", consensus);
        const FlushSubnormals flush;
        NullModel null_model(hmm.alphabet);
        null_model.set_filter(hmm.length, hmm.composition);
        const ConfiguredProfile profile(hmm, null_model);
        const ForwardProfile& om = profile.multihit;
        const ForwardModelView m{om.striped.data(), om.segments, om.length, om.e_loop, om.e_move};
        HostBackwardLanes lanes(om.segments);
        int staged = 0, domains = 0;
        for (std::size_t n = 0; n < targets.size(); ++n) {
            const int L = targets.length(n);
            const LengthModel length = LengthModel::for_target(L, true);
            DpMatrix fwd, bck, loaded;
            (void)forward(om, length, targets.codes(n), L, fwd, false);
            (void)backward(om, length, targets.codes(n), L, fwd, bck, false);
            const DomainStage cpu = define_domains(profile, targets.codes(n), L, fwd, bck, 42, true);
            if (cpu.regions == 0) continue;
            BackwardScores device;
            device.first_row = {0};
            device.specials.assign((static_cast<std::size_t>(L) + 1) * kForwardSpecials, 0.0f);
            std::vector<float> scales(static_cast<std::size_t>(L) + 1);
            for (int i = 0; i <= L; ++i) scales[static_cast<std::size_t>(i)] = fwd.x(i, DpMatrix::Scale);
            const BackwardTargetView t{targets.codes(n),      L, length.loop, length.move, scales.data(),
                                       device.specials.data()};
            const BackwardOutcome o = backward_lanes<kBackwardAhead>(lanes, m, t);
            device.total_scale = {o.total_scale};
            device.scores = {backward_score_of(o.xN, o.total_scale, L)};
            load_device_backward(device, 0, om.length, L, loaded);
            for (auto* cells : {&loaded.mmx, &loaded.imx, &loaded.dmx})
                std::fill(cells->begin(), cells->end(), std::numeric_limits<float>::quiet_NaN());
            const DomainStage gpu = define_domains(profile, targets.codes(n), L, fwd, loaded, 42, true);
            ++staged;
            const std::string name = targets.names[n];
            QVERIFY2(gpu.regions == cpu.regions && gpu.clustered == cpu.clustered && gpu.overlaps == cpu.overlaps &&
                         gpu.envelopes == cpu.envelopes && gpu.domains.size() == cpu.domains.size(),
                     name.c_str());
            QVERIFY2(std::memcmp(&gpu.expected_domains, &cpu.expected_domains, sizeof(float)) == 0, name.c_str());
            QVERIFY2(gpu.null2 == cpu.null2, name.c_str());
            for (std::size_t d = 0; d < cpu.domains.size(); ++d) {
                const DomainHit &a = gpu.domains[d], &b = cpu.domains[d];
                QVERIFY2(a.env_from == b.env_from && a.env_to == b.env_to, name.c_str());
                QVERIFY2(std::memcmp(&a.env_score, &b.env_score, sizeof(float)) == 0 &&
                             std::memcmp(&a.correction, &b.correction, sizeof(float)) == 0 &&
                             std::memcmp(&a.expected_accuracy, &b.expected_accuracy, sizeof(float)) == 0,
                         name.c_str());
                ++domains;
            }
        }
        QVERIFY2(staged >= 3 && domains >= 5,
                 qPrintable(QStringLiteral("%1 targets with regions, %2 domains").arg(staged).arg(domains)));
        qInfo("%d targets with regions, %d domains", staged, domains);
    }

    void dna_model_on_real_dna() {
        const QString dna = kTutorial + "/dna_target.fa";
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/MADE1.hmm") && QFile::exists(dna),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        const ProfileHmm hmm = tutorial_model("MADE1");
        SequenceReader reader(dna.toStdString(), DescriptionBlanks::Keep);
        Sequence fragment;
        QVERIFY(reader.next(fragment));
        std::vector<std::uint8_t> codes;
        ResidueCode::of(hmm.alphabet).digitise(fragment.residues, codes);
        QCOMPARE(codes.size(), std::size_t{330000});
        // The first 100,000 bases (the longest target a search takes; MADE1
        // hits them several times), then windows of 2,000 bases.
        ProfileTargets targets;
        targets.alphabet = hmm.alphabet;
        targets.offsets.push_back(0);
        add_target(targets, "first100000", std::vector<std::uint8_t>(codes.begin(), codes.begin() + 100000));
        for (std::size_t from = 100000; from + 2000 <= codes.size(); from += 10000)
            add_target(targets, "window" + std::to_string(from),
                       std::vector<std::uint8_t>(codes.begin() + static_cast<std::ptrdiff_t>(from),
                                                 codes.begin() + static_cast<std::ptrdiff_t>(from + 2000)));
        // The consensus three times between bases of the fragment: rows rescaled.
        std::vector<std::uint8_t> consensus(codes.begin(), codes.begin() + 500);
        ResidueCode::of(hmm.alphabet).digitise(hmm.consensus.substr(1), codes);
        for (int copy = 0; copy < 3; ++copy) consensus.insert(consensus.end(), codes.begin(), codes.end());
        add_target(targets, "consensus_x3", consensus);
        Tally tally;
        compare_model(hmm, targets, tally);
        QVERIFY2(tally.differ == 0, qPrintable(summary(tally)));
        QVERIFY(tally.rescaled > 0);
    }

    void made_up_models_and_targets() {
        Tally tally;
        for (const ProfileHmm& hmm : made_up_profile_models(2, false, 7)) {
            ProfileTargets targets = made_up_profile_targets(hmm, 4, 7);
            // The 100,000-residue target is the last: too slow here for every model.
            targets.residues.resize(targets.offsets[targets.size() - 1]);
            targets.offsets.pop_back();
            targets.names.pop_back();
            targets.descriptions.pop_back();
            compare_model(hmm, targets, tally);
        }
        QVERIFY2(tally.differ == 0, qPrintable(summary(tally)));
        QVERIFY(tally.rescaled > 0);
        qInfo("%d targets, %d rescaled, %d with no Backward score, %d with the CPU's own scale factors", tally.targets,
              tally.rescaled, tally.failed, tally.own_scales);
    }

    // verify --profile's device Backward check (check_profile_filters) over
    // a scanner running the emulated lanes: every target equal; one row
    // special changed by one unit in the last place is found.
    void verify_check_of_a_device_backward() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kTutorial + "/fn3.hmm"),
                                  "tutorial models are missing (Debian package hmmer-examples)");
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kDatabase), "DB.fasta.gz is missing (Debian package mmseqs2-examples)");
        const ProfileHmm hmm = tutorial_model("fn3");
        const ProfileTargets targets =
            read_profile_targets(database_slice(dir_, QStringLiteral("verify.fa"), 40).toStdString(), hmm.alphabet);
        JobContext context;
        for (bool flip : {false, true}) {
            EmulatedScanner scanner(flip);
            const FilterCheck check = check_profile_filters(scanner, hmm, targets, "real", 2, context);
            QVERIFY(check.forward_checked);
            QVERIFY(check.backward_checked);
            QCOMPARE(check.backward.compared, targets.size());
            QCOMPARE(check.backward.differing, std::size_t{flip ? 1u : 0u});
            QCOMPARE(check.passed(), !flip);
            QVERIFY(check.backward_reference_seconds > 0.0);
        }
    }

    // The kernel catalog's entry (verify --all-kernels) over the emulated
    // lanes: the made-up models and targets, every Forward equal; one row
    // special changed in one target of peaked_M40 fails the Backward variant
    // on that target alone; a scanner with no envelope rescoring fails the
    // envelope variant (nothing of it ran).
    void catalog_check_of_a_device_backward() {
        ProfileKernelFamily family;
        family.make_scanner = [](const std::string&, int) { return std::make_unique<EmulatedScanner>(true, 40); };
        family.msv_kernel = "sw_linear_msv_s8";
        family.viterbi_kernel = "sw_affine_vitfilter_s16";
        family.forward_kernel = kForwardKernelName;
        family.backward_kernel = kBackwardKernelName;
        family.envelope_kernel = kEnvelopeKernelName;
        family.long_models = false;
        family.longest_target = false;
        const KernelCheck check = make_profile_kernel_check(family);
        JobContext context;
        KernelCheckRequest request;
        request.device = "gpu:0";
        request.pairs = 4;
        request.threads = 2;
        request.context = &context;
        request.kernel = KernelName::parse(kForwardKernelName);
        const KernelCheckOutcome forward = check(request);
        QVERIFY2(forward.ok(), forward.problems.empty() ? "" : forward.problems.front().c_str());
        request.kernel = KernelName::parse(kBackwardKernelName);
        const KernelCheckOutcome backward = check(request);
        QCOMPARE(backward.pairs, forward.pairs);
        QCOMPARE(backward.failed, std::uint64_t{1});
        QCOMPARE(backward.passed, backward.pairs - 1);
        QCOMPARE(int(backward.problems.size()), 1);
        const QString problem = QString::fromStdString(backward.problems.front());
        QVERIFY2(problem.startsWith("peaked_M40: 1 of ") && problem.contains("(Backward, model peaked_M40"),
                 qPrintable(problem));
        request.kernel = KernelName::parse(kEnvelopeKernelName);
        const KernelCheckOutcome envelopes = check(request);
        QVERIFY(envelopes.failed_check());
        QCOMPARE(envelopes.pairs, std::uint64_t{0});
    }

    void kernel_name_parses() {
        const KernelName parsed = KernelName::parse(kBackwardKernelName);
        QCOMPARE(QString::fromStdString(parsed.format()), QString::fromLatin1(kBackwardKernelName));
        QCOMPARE(QString::fromStdString(parsed.family), QStringLiteral("bwdparser"));
        QCOMPARE(parsed.group, 4);
        QCOMPARE(parsed.width, KernelWidth::S32);
    }

    // The host's side: a device's rows into a parser matrix, and the score's
    // errors as backward()'s.
    void loaded_rows_and_score_errors() {
        BackwardScores device;
        device.first_row = {0, 3};
        device.total_scale = {0.0f, 2.5f};
        device.scores = {0.0f, 0.0f};
        for (int v = 0; v < 5 * DpMatrix::Specials; ++v) device.specials.push_back(static_cast<float>(v));
        DpMatrix bck;
        load_device_backward(device, 1, 40, 1, bck);
        QCOMPARE(bck.L, 1);
        QCOMPARE(bck.M, 40);
        QCOMPARE(bck.total_scale, 2.5f);
        QCOMPARE(bck.x(0, DpMatrix::E), 18.0f);
        QCOMPARE(bck.x(1, DpMatrix::Scale), 29.0f);
        QVERIFY_THROWS_EXCEPTION(Error, load_device_backward(device, 1, 40, 2, bck));
        QVERIFY_THROWS_EXCEPTION(Error, load_device_backward(device, 2, 40, 0, bck));
        QCOMPARE(backward_score_of(1.0f, 3.0f, 10), 3.0f);
        QVERIFY(std::isinf(backward_score_of(0.0f, 0.0f, 0)));
        QVERIFY_THROWS_EXCEPTION(Error, backward_score_of(0.0f, 0.0f, 5));
        QVERIFY_THROWS_EXCEPTION(Error, backward_score_of(std::numeric_limits<float>::quiet_NaN(), 0.0f, 5));
        QVERIFY_THROWS_EXCEPTION(Error, backward_score_of(std::numeric_limits<float>::infinity(), 0.0f, 5));
    }

private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestProfileBackwardLanes)
#include "test_profile_backward_lanes.moc"
