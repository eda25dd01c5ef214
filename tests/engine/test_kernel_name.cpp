// KernelName (device/kernel_name.hpp) and the kernel catalog
// (bench/kernel_checks.hpp): every name the CPU catalog produces round-trips,
// malformed names are refused with an error that says what is wrong, names
// earlier versions stored are read, and a variant's check fails when the
// device answers wrongly or runs another kernel than the one forced.
#include <alignscope/align/long_pair.hpp>
#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/device/kernel_name.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QtTest>

#include <memory>
#include <set>

using namespace alignscope;

namespace {

// The CPU reference with every `every`-th pair's score off by one: a device
// that answers wrongly.
class WrongScores : public Backend {
public:
    WrongScores(Backend& inner, int every) : inner_(inner), every_(every) {}
    DeviceInfo info() const override {
        DeviceInfo d = inner_.info();
        d.id = "wrong";
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        std::vector<Alignment> out = inner_.align_pairs(job, context);
        for (std::size_t k = 0; k < out.size(); ++k)
            if ((seen_ + k) % static_cast<std::size_t>(every_) == 0) out[k].score += 1;
        seen_ += out.size();
        return out;
    }

private:
    Backend& inner_;
    int every_;
    std::size_t seen_ = 0;
};

// Another device's answers relabelled: every `every`-th pair's kernel is
// given as `label` (the scores stay right).
class Relabelled : public Backend {
public:
    Relabelled(Backend& inner, std::string id, std::string label, int every)
        : inner_(inner), id_(std::move(id)), label_(std::move(label)), every_(every) {}
    DeviceInfo info() const override {
        DeviceInfo d = inner_.info();
        d.id = id_;
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        std::vector<Alignment> out = inner_.align_pairs(job, context);
        for (std::size_t k = 0; k < out.size(); ++k)
            if ((seen_ + k) % static_cast<std::size_t>(every_) == 0) out[k].kernel = label_;
        seen_ += out.size();
        return out;
    }

private:
    Backend& inner_;
    std::string id_, label_;
    int every_;
    std::size_t seen_ = 0;
};

}  // namespace

class TestKernelName : public QObject {
    Q_OBJECT

private slots:
    void formats_the_grammar() {
        QCOMPARE(KernelName({AlignmentMode::Local, false, "inter", 0, KernelWidth::S16}).format(),
                 std::string("sw_affine_inter_s16"));
        QCOMPARE(KernelName({AlignmentMode::Global, true, "intra", 8, KernelWidth::S32}).format(),
                 std::string("nw_linear_intra8_s32"));
        QCOMPARE(KernelName({AlignmentMode::SemiGlobal, false, "search", 0, KernelWidth::S16x2}).format(),
                 std::string("sg_affine_search_s16x2"));
        const KernelName parsed = KernelName::parse("sg_linear_strips16_s32");
        QCOMPARE(parsed.mode, AlignmentMode::SemiGlobal);
        QVERIFY(parsed.linear);
        QCOMPARE(parsed.family, std::string("strips"));
        QCOMPARE(parsed.group, 16);
        QCOMPARE(parsed.width, KernelWidth::S32);
        QCOMPARE(bits_of(KernelWidth::S16x2), 16);
    }

    // Every name the CPU catalog can produce, and those of the kernel
    // families' shapes (kernel_variants), parse back to themselves.
    void catalog_names_round_trip() {
        KernelCatalog catalog;
        add_cpu_kernel_families(catalog);
        const std::vector<KernelName> names = catalog.names();
        QVERIFY(names.size() >= 40);
        std::set<std::string> seen;
        for (const KernelName& k : names) {
            const std::string text = k.format();
            QVERIFY2(seen.insert(text).second, text.c_str());
            QCOMPARE(KernelName::parse(text), k);
            QCOMPARE(*KernelName::try_parse(text), k);
            QCOMPARE(*read_stored_kernel_name(text), k);
        }
        // Each mode x gap model of a family shape, each width: 3 x 2 x 2 x 2.
        const auto shapes = kernel_variants({{"strips", 8}, {"strips", 16}}, {KernelWidth::S16x2, KernelWidth::S32});
        QCOMPARE(shapes.size(), std::size_t{24});
        for (const KernelName& k : shapes) QCOMPARE(KernelName::parse(k.format()), k);
        // The parasail kernels the cpu device refuses are not in its catalog.
        QVERIFY(!seen.count("sw_linear_striped_s16"));
        QVERIFY(!seen.count("sw_affine_scan_s8"));
        QVERIFY(seen.count("sw_affine_striped_s8"));
        QVERIFY(seen.count("nw_linear_myersmiller_s64"));
    }

    void refuses_malformed_names_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("says");
        QTest::newRow("empty") << ""
                               << "it is empty";
        QTest::newRow("three words") << "sw_affine_s16"
                                     << "3 words between underscores, not 4";
        QTest::newRow("five words") << "sw_affine_intra_8_s16"
                                    << "5 words";
        QTest::newRow("mode") << "xx_affine_inter_s16"
                              << "unknown mode 'xx' (expected sw, nw or sg)";
        QTest::newRow("gaps") << "sw_convex_inter_s16"
                              << "unknown gap model 'convex'";
        QTest::newRow("width") << "sw_affine_inter_s12"
                               << "unknown lane width 's12'";
        QTest::newRow("upper case") << "sw_affine_Inter_s16"
                                    << "does not start with a lower-case letter";
        QTest::newRow("group zero") << "sw_affine_intra0_s16"
                                    << "not letters followed by an optional group size";
        QTest::newRow("group letters") << "sw_affine_intra8x_s16"
                                       << "not letters followed by an optional group size";
        QTest::newRow("leading zero") << "sw_affine_intra08_s16"
                                      << "not letters followed by an optional group size";
        QTest::newRow("old long name") << "long_strips_r8_local"
                                       << "unknown mode 'long'";
    }
    void refuses_malformed_names() {
        QFETCH(QString, name);
        QFETCH(QString, says);
        QVERIFY(!KernelName::try_parse(name.toStdString()));
        try {
            (void)KernelName::parse(name.toStdString());
            QFAIL("no error");
        } catch (const Error& e) {
            const QString what = QString::fromUtf8(e.what());
            QVERIFY2(what.startsWith("kernel name '" + name + "': "), qPrintable(what));
            QVERIFY2(what.contains(says), qPrintable(what));
            QVERIFY2(what.contains("e.g. sw_affine_inter_s16"), qPrintable(what));
        }
    }

    // Names earlier versions wrote into projects are read as today's.
    void reads_stored_names_data() {
        QTest::addColumn<QString>("stored");
        QTest::addColumn<QString>("today");
        QTest::newRow("today's") << "sw_affine_striped_s8"
                                 << "sw_affine_striped_s8";
        QTest::newRow("strips, local") << "long_strips_r8_local"
                                       << "sw_affine_strips8_s32";
        QTest::newRow("strips, global") << "long_strips_r16"
                                        << "nw_affine_strips16_s32";
        QTest::newRow("streams") << "long_strips_r8_local_k4s4"
                                 << "sw_affine_strips8_s32";
        QTest::newRow("no height") << "long_strips"
                                   << "nw_affine_strips_s32";
        QTest::newRow("scalar runner") << "long_scalar_columns"
                                       << "nw_affine_columns_s32";
        QTest::newRow("split") << "split2_long_strips_r16_local"
                               << "sw_affine_strips16_s32";
        QTest::newRow("linear space") << "sg_linear_linspace_s64"
                                      << "sg_linear_linspace_s64";
        QTest::newRow("database scan, 16-bit pairs") << "sw_affine_dbscan_s16x2"
                                                     << "sw_affine_search_s16x2";
        QTest::newRow("database scan, 32-bit") << "nw_linear_dbscan_s32"
                                               << "nw_linear_search_s32";
        QTest::newRow("database scan split") << "split2_sg_affine_dbscan_s32"
                                             << "sg_affine_search_s32";
    }
    void reads_stored_names() {
        QFETCH(QString, stored);
        QFETCH(QString, today);
        const auto name = read_stored_kernel_name(stored.toStdString());
        QVERIFY(name);
        QCOMPARE(QString::fromStdString(name->format()), today);
    }

    // Only a former family word is renamed: today's names, and other words
    // that merely contain it, are not.
    void reads_renamed_families_only() {
        const auto renamed = read_renamed_kernel_name("sg_linear_dbscan_s16x2");
        QVERIFY(renamed);
        QCOMPARE(*renamed, KernelName({AlignmentMode::SemiGlobal, true, "search", 0, KernelWidth::S16x2}));
        for (const char* text : {"sw_affine_search_s16x2", "sw_affine_dbscanx_s32", "sw_affine_scan_s16",
                                 "long_strips_r8", "dbscan", "sw_affine_dbscan"})
            QVERIFY2(!read_renamed_kernel_name(text), text);
        QVERIFY(!read_stored_kernel_name("sw_affine_dbscan"));
    }

    // A stored kernel column: each name of a comma-joined list as today's,
    // what is no kernel name as it was.
    void reads_stored_kernel_lists_data() {
        QTest::addColumn<QString>("stored");
        QTest::addColumn<QString>("today");
        QTest::newRow("empty") << ""
                               << "";
        QTest::newRow("one old name") << "sw_affine_dbscan_s16x2"
                                      << "sw_affine_search_s16x2";
        QTest::newRow("a search's kernels") << "sw_affine_dbscan_s16x2,sw_affine_dbscan_s32,sw_affine_reference_s64"
                                            << "sw_affine_search_s16x2,sw_affine_search_s32,sw_affine_reference_s64";
        QTest::newRow("spaces kept") << "nw_affine_dbscan_s32, long_strips_r16"
                                     << "nw_affine_search_s32, nw_affine_strips16_s32";
        QTest::newRow("not kernels") << "H2D"
                                     << "H2D";
        QTest::newRow("mixed") << "cpu:sw,sg_affine_dbscan_s32,,x"
                               << "cpu:sw,sg_affine_search_s32,,x";
    }
    void reads_stored_kernel_lists() {
        QFETCH(QString, stored);
        QFETCH(QString, today);
        QCOMPARE(QString::fromStdString(read_stored_kernel_names(stored.toStdString())), today);
    }

    void not_kernel_names() {
        for (const char* text :
             {"H2D", "D2H", "cpu:sw", "long_strips_x8", "long_strips_r8_remote", "split_x", "long_strips_r8_k4"})
            QVERIFY2(!read_stored_kernel_name(text), text);
    }

    // A variant passes on the device that runs it right, and fails on one
    // that answers wrongly: the check can fail.
    void check_passes_and_fails() {
        auto registry = make_cpu_registry();
        Backend& reference = registry->select("cpu-ref");
        registry->add(std::make_unique<WrongScores>(reference, 3));
        KernelCheckRequest request;
        request.devices = registry.get();
        request.pairs = 12;
        request.threads = 1;
        request.kernel = KernelName::parse("nw_affine_scalar_s64");

        request.device = "cpu-ref";
        const KernelCheckOutcome right = check_pairwise_kernel(request);
        QCOMPARE(right.pairs, std::uint64_t{12});
        QCOMPARE(right.passed, std::uint64_t{12});
        QVERIFY(right.ok());

        request.device = "wrong";
        const KernelCheckOutcome wrong = check_pairwise_kernel(request);
        QVERIFY(wrong.failed >= 3);
        QVERIFY(!wrong.ok());
        QVERIFY(!wrong.problems.empty());
    }

    // A forced 16-bit variant whose device reruns some pairs at 32 bits in the
    // same variant (the GPU's widening) passes, as long as the forced variant
    // ran too; a device that ran only the wider one, or another family, fails.
    void check_allows_only_the_documented_widening() {
        auto registry = make_cpu_registry();
        Backend& cpu = registry->select("cpu");
        registry->add(std::make_unique<Relabelled>(cpu, "some32", "sw_affine_striped_s32", 3));
        registry->add(std::make_unique<Relabelled>(cpu, "all32", "sw_affine_striped_s32", 1));
        registry->add(std::make_unique<Relabelled>(cpu, "other", "sw_affine_scan_s32", 3));
        KernelCheckRequest request;
        request.devices = registry.get();
        request.pairs = 12;
        request.threads = 1;
        request.kernel = KernelName::parse("sw_affine_striped_s16");

        request.device = "some32";
        const KernelCheckOutcome widened = check_pairwise_kernel(request);
        QVERIFY2(widened.ok() && widened.passed > 0, widened.problems.empty() ? "" : widened.problems.front().c_str());

        request.device = "all32";
        const KernelCheckOutcome never = check_pairwise_kernel(request);
        QVERIFY(!never.ok());
        QVERIFY2(QString::fromStdString(never.problems.back()).contains("never sw_affine_striped_s16"),
                 never.problems.back().c_str());

        request.device = "other";
        const KernelCheckOutcome other = check_pairwise_kernel(request);
        QVERIFY(!other.ok());
    }

    // A variant the device does not have passes nothing: it fails, saying why.
    void check_fails_on_a_kernel_the_device_lacks() {
        auto registry = make_cpu_registry();
        KernelCheckRequest request;
        request.devices = registry.get();
        request.device = "cpu-ref";
        request.pairs = 6;
        request.threads = 1;
        request.kernel = KernelName::parse("sw_linear_scan_s16");  // a cpu kernel, not a cpu-ref one
        const KernelCheckOutcome outcome = check_pairwise_kernel(request);
        QCOMPARE(outcome.passed, std::uint64_t{0});
        QVERIFY(!outcome.ok());
        QVERIFY(!outcome.problems.empty());
        QVERIFY2(QString::fromStdString(outcome.problems.front()).contains("cannot run on device cpu-ref"),
                 outcome.problems.front().c_str());
    }

    // A long-pair kernel forced by name must be one of the job's mode and gap model.
    void long_pair_refuses_a_kernel_of_another_mode() {
        auto registry = make_cpu_registry();
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        longpair::LongPairOptions options;
        options.align.mode = AlignmentMode::Local;
        LongRunnerSettings settings;
        settings.kernel = "nw_affine_strips8_s32";
        try {
            (void)longpair::align_long_on(registry->select("cpu"), "HEAGAWGHEE", "PAWHEAE", scheme, options, settings);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(e.parameter(), std::string("kernel"));
            QVERIFY2(QString(e.what()).startsWith("--kernel: 'nw_affine_strips8_s32' is a kernel for global affine "
                                                  "alignment, but the job is local affine"),
                     e.what());
        }
        settings.kernel = "sw_affine_strips8_s32";  // the job's own: the CPU runs its one way
        const Alignment a =
            longpair::align_long_on(registry->select("cpu"), "HEAGAWGHEE", "PAWHEAE", scheme, options, settings);
        QCOMPARE(a.kernel, std::string("sw_affine_myersmiller_s64"));
    }

    // What a line says: ok, FAILED, or NOT RUN (a scanner chose other kernels).
    void outcome_verdicts() {
        KernelCheckOutcome passed;
        passed.passed = 3;
        QVERIFY(passed.ok() && !passed.failed_check());
        KernelCheckOutcome nothing;  // nothing passed: never shown to work
        QVERIFY(!nothing.ok() && nothing.failed_check());
        KernelCheckOutcome not_run;
        not_run.not_run = true;
        QVERIFY(!not_run.ok() && !not_run.failed_check());
        not_run.failed = 1;  // a wrong score among the cases is a failure all the same
        QVERIFY(not_run.failed_check());
    }

    void catalog_refuses_an_incomplete_family() {
        KernelCatalog catalog;
        QVERIFY_THROWS_EXCEPTION(Error, catalog.add({"pairwise", "cpu", {}, {}}));
    }
};

QTEST_APPLESS_MAIN(TestKernelName)
#include "test_kernel_name.moc"
