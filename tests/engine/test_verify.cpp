// The verify generator (deterministic, covers every mode, gap model, matrix and
// length class, saturates where it says it does), the per-pair check, and proof
// that verify fails when a backend is wrong: a deliberately faulty device is
// registered and every fault it plants must be reported. Also the bench's
// kernel-time union.
#include <alignscope/align/cigar.hpp>
#include <alignscope/bench/bench.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <QtTest/QtTest>

#include <atomic>
#include <chrono>
#include <map>
#include <set>

using namespace alignscope;

namespace {

enum class Fault { None, ScorePlusOne, EndShifted, BeginShifted, CigarDetour, MissingResult, Throws };

// Wraps a correct backend and corrupts its results in one known way, counting
// every result it corrupts, so the test knows exactly how many failures verify
// must report.
class FaultyBackend : public Backend {
public:
    FaultyBackend(Backend& inner, Fault fault) : inner_(inner), fault_(fault) {}

    DeviceInfo info() const override {
        DeviceInfo info;
        info.id = "gpu:0";
        info.kind = "gpu";
        info.name = "deliberately faulty test device";
        return info;
    }

    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        if (fault_ == Fault::Throws) throw Error("gpu:0: simulated device failure");
        auto results = inner_.align_pairs(job, context);
        for (std::size_t k = 0; k < results.size(); ++k) {
            Alignment& a = results[k];
            a.device = "gpu:0";
            switch (fault_) {
                case Fault::None: break;
                case Fault::ScorePlusOne:
                    a.score += 1;
                    ++corrupted;
                    break;
                case Fault::EndShifted:
                    if (a.query_end > 1) {
                        a.query_end -= 1;
                        ++corrupted;
                    }
                    break;
                case Fault::BeginShifted:
                    if (a.target_begin > 0 && a.target_begin <= a.target_end) {
                        a.target_begin += 1;
                        ++corrupted;
                    }
                    break;
                case Fault::CigarDetour: {
                    const auto& pair = job.pairs[k];
                    if (detour(a, (*job.queries)[pair.first].residues, (*job.targets)[pair.second].residues,
                               job.scheme))
                        ++corrupted;
                    break;
                }
                case Fault::MissingResult:
                case Fault::Throws: break;
            }
        }
        if (fault_ == Fault::MissingResult && !results.empty()) results.pop_back();
        return results;
    }

    std::atomic<std::uint64_t> corrupted{0};

private:
    // Replaces one '=' column of positive score by a query gap and a target
    // gap: the spans stay right, but the score the CIGAR describes drops by
    // that score plus at least two gap positions, so rescoring must disagree.
    static bool detour(Alignment& a, const std::string& query, const std::string& target, const ScoringScheme& scheme) {
        if (a.cigar.empty()) return false;
        Cigar out;
        bool done = false;
        std::int64_t qi = a.query_begin, ti = a.target_begin;
        for (const CigarOp& op : a.cigar.ops()) {
            for (std::uint32_t j = 0; j < op.length; ++j) {
                if (!done && op.op == '=') {
                    const int r = scheme.matrix.index_of(query[static_cast<std::size_t>(qi - 1)]);
                    if (scheme.matrix.score(r, r) > 0) {
                        out.push('I');
                        out.push('D');
                        done = true;
                        ++qi;
                        ++ti;
                        continue;
                    }
                }
                out.push(op.op);
                if (op.op != 'D') ++qi;
                if (op.op != 'I') ++ti;
            }
        }
        (void)target;
        if (done) a.cigar = out;
        return done;
    }

    Backend& inner_;
    Fault fault_;
};

// A "GPU" that aligns on a CPU backend and reports its work the way the CUDA
// backend does: one kernel event on a CUPTI clock.
class CuptiClockedBackend : public Backend {
public:
    explicit CuptiClockedBackend(Backend& inner) : inner_(inner) {}
    DeviceInfo info() const override {
        DeviceInfo info;
        info.id = "gpu:0";
        info.kind = "gpu";
        info.name = "CPU posing as a CUPTI-timed GPU";
        return info;
    }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        const auto start = std::chrono::steady_clock::now().time_since_epoch().count();
        auto results = inner_.align_pairs(job, context);
        if (context.timeline) {
            context.timeline->set_clock_source("cupti");
            TimelineEvent e;
            e.name = "fake_kernel";
            e.category = "kernel";
            e.device = "gpu:0";
            e.start_ns = start;
            e.end_ns = std::chrono::steady_clock::now().time_since_epoch().count();
            e.cells = job.total_cells();
            context.timeline->record(e);
        }
        return results;
    }

private:
    Backend& inner_;
};

struct Tally {
    std::uint64_t mismatches = 0;
    std::uint64_t job_failures = 0;
    std::uint64_t job_failure_pairs = 0;
    std::uint64_t refusals = 0;
    std::map<std::string, int> problem_words;
};

}  // namespace

class TestVerify : public QObject {
    Q_OBJECT

private slots:
    void generatorIsDeterministicForASeed() {
        VerifyPairGenerator a(7), b(7), c(8);
        QCOMPARE(a.configs().size(), b.configs().size());
        for (std::size_t k = 0; k < a.configs().size(); ++k) {
            QCOMPARE(a.configs()[k].gap_open, b.configs()[k].gap_open);
            QCOMPARE(a.configs()[k].gap_extend, b.configs()[k].gap_extend);
            QVERIFY(a.configs()[k].options.free_ends == b.configs()[k].options.free_ends);
        }
        int differing = 0;
        for (int k = 0; k < 1000; ++k) {
            const VerifyPair x = a.next(), y = b.next(), z = c.next();
            QCOMPARE(x.index, std::uint64_t(k));
            QCOMPARE(x.config, y.config);
            QCOMPARE(x.length_class, y.length_class);
            QCOMPARE(x.query.residues, y.query.residues);
            QCOMPARE(x.target.residues, y.target.residues);
            if (x.query.residues != z.query.residues || x.config != z.config) ++differing;
        }
        QVERIFY2(differing > 900, "another seed must give other pairs");
    }

    void generatorCoversEveryModeGapModelMatrixAndLengthClass() {
        VerifyPairGenerator generator(1);
        const auto& configs = generator.configs();

        // The pool itself: every matrix x gap model x mode, all 16 free-end
        // combinations, with and without traceback.
        std::set<std::string> matrices;
        std::set<std::pair<std::string, GapModel>> matrix_gap;
        std::set<std::string> free_end_combos;
        for (const auto& c : configs) {
            matrices.insert(c.matrix);
            matrix_gap.insert({c.matrix, c.gap_model});
            if (c.options.mode == AlignmentMode::SemiGlobal) free_end_combos.insert(c.options.free_ends.to_string());
            switch (c.gap_model) {
                case GapModel::Linear: QCOMPARE(c.gap_open, c.gap_extend); break;
                case GapModel::Affine:
                    QVERIFY(c.gap_open > c.gap_extend);
                    QCOMPARE(c.scheme.scale, 1);
                    break;
                case GapModel::HalfStep: QCOMPARE(c.scheme.scale, 2); break;
                case GapModel::GapFavouring: QVERIFY(c.gap_open <= 2 && c.gap_extend <= 1); break;
            }
        }
        for (const char* name : {"BLOSUM62", "BLOSUM50", "BLOSUM45", "BLOSUM80", "PAM30", "PAM250", "EDNAFULL"})
            QVERIFY2(matrices.count(name), name);
        QVERIFY(matrices.size() >= 9);  // and match/mismatch schemes
        QCOMPARE(matrix_gap.size(), matrices.size() * all_gap_models.size());
        QCOMPARE(int(free_end_combos.size()), 16);

        std::map<LengthClass, int> classes;
        std::map<GapModel, int> gaps;
        std::map<AlignmentMode, int> modes;
        std::map<bool, int> tracebacks;
        std::set<std::string> used_matrices;
        std::set<std::string> used_free_ends;
        for (int k = 0; k < 5000; ++k) {
            const VerifyPair p = generator.next();
            const VerifyConfig& c = configs[p.config];
            ++classes[p.length_class];
            ++gaps[c.gap_model];
            ++modes[c.options.mode];
            ++tracebacks[c.options.traceback];
            used_matrices.insert(c.matrix);
            if (c.options.mode == AlignmentMode::SemiGlobal) used_free_ends.insert(c.options.free_ends.to_string());

            const auto m = std::int64_t(p.query.residues.size()), n = std::int64_t(p.target.residues.size());
            for (char r : p.query.residues + p.target.residues)
                QVERIFY2(c.scheme.matrix.index_of(r) >= 0, "every residue must be scored by the matrix");
            auto within = [](std::int64_t x, std::int64_t lo, std::int64_t hi) { return x >= lo && x <= hi; };
            switch (p.length_class) {
                case LengthClass::One: QVERIFY(m == 1 && n == 1); break;
                case LengthClass::Tiny: QVERIFY(within(m, 1, 8) && within(n, 1, 8)); break;
                case LengthClass::Short: QVERIFY(within(m, 10, 64) && within(n, 10, 64)); break;
                case LengthClass::Medium: QVERIFY(within(m, 100, 400) && within(n, 100, 400)); break;
                case LengthClass::Long: QVERIFY(within(m, 1000, 3000) && within(n, 1000, 3000)); break;
                case LengthClass::Unrelated: QVERIFY(within(m, 10, 400) && within(n, 10, 400)); break;
                case LengthClass::OneVersusLong:
                    QVERIFY((m == 1 && within(n, 100, 3000)) || (n == 1 && within(m, 100, 3000)));
                    break;
                case LengthClass::GapLong: {
                    QCOMPARE(c.options.mode, AlignmentMode::Global);
                    QVERIFY((m == 1 && within(n, 2, 3000)) || (n == 1 && within(m, 2, 3000)));
                    // Every global alignment of one residue against L pays at
                    // least one gap of L - 1 (affine: open >= extend), so even
                    // the best match leaves it below the 16-bit minimum.
                    const std::int64_t gap = std::max(m, n) - 1;
                    const std::int64_t cost = c.scheme.gap_open + (gap - 1) * c.scheme.gap_extend;
                    QVERIFY2(c.scheme.matrix.max_score() - cost < -32768,
                             qPrintable(QString("best possible score %1").arg(c.scheme.matrix.max_score() - cost)));
                    break;
                }
                case LengthClass::IdenticalLong: {
                    QCOMPARE(p.query.residues, p.target.residues);
                    QVERIFY(m <= 3000);
                    // The self-score, summed here from the matrix, must pass
                    // the 16-bit limit: that is the point of the class.
                    std::int64_t self = 0;
                    for (char r : p.query.residues) {
                        const int i = c.scheme.matrix.index_of(r);
                        self += c.scheme.matrix.score(i, i);
                    }
                    QVERIFY2(self > 32767, qPrintable(QString("self-score %1 of %2 residues").arg(self).arg(m)));
                    break;
                }
            }
        }
        for (LengthClass lc : all_length_classes) QVERIFY2(classes[lc] > 0, std::string(to_string(lc)).c_str());
        for (GapModel g : all_gap_models) QVERIFY2(gaps[g] > 0, std::string(to_string(g)).c_str());
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal})
            QVERIFY(modes[mode] > 1300);  // about a third each
        QVERIFY(tracebacks[true] > 1300 && tracebacks[false] > 1300);
        QCOMPARE(used_matrices, matrices);
        QVERIFY(used_free_ends.size() >= 14);
        // Weighted toward short and medium pairs (the reference must keep up).
        QVERIFY(classes[LengthClass::Short] + classes[LengthClass::Medium] > 3000);
        QVERIFY(classes[LengthClass::Long] < 150);
    }

    void scoresOnlyPoolHasNoTraceback() {
        VerifyPairGenerator generator(3, false);
        for (const auto& c : generator.configs()) QVERIFY(!c.options.traceback);
    }

    void forcedKernelRestrictsTheConfigurations_data() {
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<int>("mode");    // -1: any
        QTest::addColumn<int>("linear");  // -1: any, 0: affine only, 1: linear only
        QTest::newRow("automatic") << QString() << -1 << -1;
        QTest::newRow("local linear") << "sw_linear_inter_s16" << int(AlignmentMode::Local) << 1;
        QTest::newRow("global affine") << "nw_affine_intra_s32" << int(AlignmentMode::Global) << 0;
        QTest::newRow("semi-global linear") << "sg_linear_scan_s16" << int(AlignmentMode::SemiGlobal) << 1;
        QTest::newRow("malformed") << "sg_any" << -1 << -1;  // the device refuses it
        QTest::newRow("outside the grammar") << "striped" << -1 << -1;
    }

    void forcedKernelRestrictsTheConfigurations() {
        QFETCH(QString, kernel);
        QFETCH(int, mode);
        QFETCH(int, linear);
        VerifyPairGenerator generator(5, true, kernel.toStdString());
        std::set<int> modes;
        std::set<bool> linears;
        for (int k = 0; k < 600; ++k) {
            const VerifyConfig& c = generator.configs()[generator.next().config];
            QVERIFY(kernel_can_run(kernel.toStdString(), c));
            modes.insert(int(c.options.mode));
            linears.insert(c.scheme.linear());
        }
        if (mode >= 0) QCOMPARE(modes, std::set<int>{mode});
        else
            QCOMPARE(int(modes.size()), 3);
        if (linear >= 0) QCOMPARE(linears, std::set<bool>{linear == 1});
        else
            QCOMPARE(int(linears.size()), 2);
    }

    void seededRandomStaysInRange() {
        SeededRandom random(42);
        std::set<std::int64_t> seen;
        for (int k = 0; k < 2000; ++k) {
            const std::int64_t x = random.between(-3, 3);
            QVERIFY(x >= -3 && x <= 3);
            seen.insert(x);
            const double u = random.unit();
            QVERIFY(u >= 0 && u < 1);
        }
        QCOMPARE(int(seen.size()), 7);
        QCOMPARE(random.between(5, 5), std::int64_t(5));
    }

    void fitToLengthGivesExactLength() {
        SeededRandom random(9);
        for (std::int64_t length : {1, 7, 150, 250}) {
            const std::string core = "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTACGTAC";  // 50
            const std::string fitted = fit_to_length(random, AlphabetKind::Dna, core, length);
            QCOMPARE(std::int64_t(fitted.size()), length);
            if (length >= 50) QVERIFY(fitted.find(core) != std::string::npos);
            else
                QVERIFY(core.find(fitted) != std::string::npos);
        }
    }

    // Hand-made alignments of ACGT against ACGT under EDNAFULL (match 5),
    // gap 10/0.5 (scale 2: match 10, open 20, extend 1): global score 4 x 10.
    void checkAlignmentFindsWrongCigars() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        AlignOptions options;
        options.mode = AlignmentMode::Global;
        options.traceback = true;
        Alignment right;
        right.score = 40;
        right.query_begin = right.target_begin = 1;
        right.query_end = right.target_end = 4;
        right.query_length = right.target_length = 4;
        right.cigar = Cigar::parse("4=");
        QVERIFY(check_alignment(right, right, "ACGT", "ACGT", scheme, options).empty());

        Alignment detour = right;
        // By hand: 20 (two matches) - 20 (open I) - 20 (open D) + 10 = -10 scaled, -5 in user units.
        detour.cigar = Cigar::parse("2=1I1D1=");
        auto problems = check_alignment(detour, right, "ACGT", "ACGT", scheme, options);
        QCOMPARE(int(problems.size()), 1);
        QVERIFY2(QString::fromStdString(problems[0]).contains("rescores to -5"), problems[0].c_str());

        Alignment short_cigar = right;
        short_cigar.cigar = Cigar::parse("3=");
        problems = check_alignment(short_cigar, right, "ACGT", "ACGT", scheme, options);
        QCOMPARE(int(problems.size()), 1);
        QVERIFY(QString::fromStdString(problems[0]).contains("spans"));

        Alignment lying_cigar = right;
        lying_cigar.cigar = Cigar::parse("1X3=");
        problems = check_alignment(lying_cigar, right, "ACGT", "ACGT", scheme, options);
        QCOMPARE(int(problems.size()), 1);
        QVERIFY(QString::fromStdString(problems[0]).contains("does not fit"));

        Alignment no_cigar = right;
        no_cigar.cigar = Cigar();
        problems = check_alignment(no_cigar, right, "ACGT", "ACGT", scheme, options);
        QCOMPARE(int(problems.size()), 1);
        QVERIFY(QString::fromStdString(problems[0]).contains("no CIGAR"));
        options.traceback = false;  // score-only jobs need no CIGAR
        QVERIFY(check_alignment(no_cigar, right, "ACGT", "ACGT", scheme, options).empty());

        Alignment off = right;
        off.score = 39;
        off.query_begin = 2;
        problems = check_alignment(off, right, "ACGT", "ACGT", scheme, options);
        QCOMPARE(int(problems.size()), 2);  // score and begin
    }

    void verifyDetectsAFaultyBackend_data() {
        QTest::addColumn<int>("fault");
        QTest::addColumn<QString>("word");
        QTest::newRow("correct device") << int(Fault::None) << QString();
        QTest::newRow("score off by one") << int(Fault::ScorePlusOne) << "score";
        QTest::newRow("end shifted") << int(Fault::EndShifted) << "end";
        QTest::newRow("begin shifted") << int(Fault::BeginShifted) << "begin";
        QTest::newRow("CIGAR detour") << int(Fault::CigarDetour) << "rescores";
        QTest::newRow("result missing") << int(Fault::MissingResult) << QString();
        QTest::newRow("device throws") << int(Fault::Throws) << QString();
    }

    void verifyDetectsAFaultyBackend() {
        QFETCH(int, fault);
        QFETCH(QString, word);
        auto registry = make_cpu_registry();
        auto faulty_owner = std::make_unique<FaultyBackend>(registry->select("cpu-ref"), Fault(fault));
        FaultyBackend* faulty = faulty_owner.get();
        registry->add(std::move(faulty_owner));

        VerifyOptions options;
        options.device = "gpu:0";
        options.pairs = 400;
        options.seed = 11;
        options.threads = 2;
        Tally tally;
        VerifyCallbacks callbacks;
        callbacks.mismatch = [&](const VerifyMismatch& m) {
            ++tally.mismatches;
            QVERIFY(m.pair && m.config);
            QVERIFY(!m.problems.empty());
            QCOMPARE(m.tested_device, std::string("gpu:0"));
            QVERIFY(!m.describe().empty());
            bool hit = false;
            for (const auto& problem : m.problems)
                if (!word.isEmpty() && QString::fromStdString(problem).contains(word)) hit = true;
            if (hit) ++tally.problem_words["hit"];
        };
        callbacks.job_failure = [&](const VerifyJobFailure& f) {
            ++tally.job_failures;
            tally.job_failure_pairs += f.pairs;
        };
        callbacks.refusal = [&](const VerifyJobFailure& f) {
            ++tally.refusals;
            QVERIFY(f.config->extreme);
        };
        JobContext context;
        const VerifySummary summary = verify_device(*registry, options, callbacks, context);

        QCOMPARE(summary.tested_device, std::string("gpu:0"));
        QCOMPARE(summary.reference_device, std::string("cpu-ref"));
        // A job of an extreme scheme may be refused with an error, never
        // answered wrongly; only such jobs count as refused.
        QCOMPARE(summary.passed + summary.failed + summary.refused, options.pairs);
        if (Fault(fault) != Fault::Throws) QCOMPARE(summary.refused, std::uint64_t(0));
        for (const char* prefix : {"mode ", "gaps ", "class ", "matrix ", "traceback "}) {
            std::uint64_t sum = 0;
            for (const auto& [kind, count] : summary.failures_by_kind)
                if (kind.rfind(prefix, 0) == 0) sum += count;
            QCOMPARE(sum, summary.failed);
        }
        switch (Fault(fault)) {
            case Fault::None: QCOMPARE(summary.failed, std::uint64_t(0)); break;
            case Fault::ScorePlusOne:
            case Fault::EndShifted:
            case Fault::BeginShifted:
            case Fault::CigarDetour:
                QVERIFY2(faulty->corrupted > 0, "the fault must have been planted");
                QCOMPARE(summary.failed, faulty->corrupted.load());
                QCOMPARE(tally.mismatches, summary.failed);
                QCOMPARE(std::uint64_t(tally.problem_words["hit"]), summary.failed);
                QCOMPARE(tally.job_failures, std::uint64_t(0));
                break;
            case Fault::MissingResult:
                QCOMPARE(summary.failed, options.pairs);
                QCOMPARE(tally.job_failure_pairs, options.pairs);
                QCOMPARE(tally.job_failures, summary.jobs);
                QCOMPARE(tally.mismatches, std::uint64_t(0));
                break;
            case Fault::Throws:
                // Every job fails but those of extreme schemes, which count as
                // refused (the seed draws some).
                QVERIFY(summary.refused > 0);
                QCOMPARE(summary.failed + summary.refused, options.pairs);
                QCOMPARE(tally.job_failure_pairs, summary.failed);
                QCOMPARE(tally.job_failures + tally.refusals, summary.jobs);
                QCOMPARE(tally.mismatches, std::uint64_t(0));
                break;
        }
    }

    // The pool holds schemes past every lane width's limits (scores of 64 and
    // more, BLOSUM62 x64, penalties up to 1,000,000), the stream draws them,
    // and the CPU SIMD device answers them all exactly (it may not refuse).
    void verifyDrawsExtremeSchemes() {
        VerifyPairGenerator generator(3);
        int extreme_configs = 0, huge_gaps = 0, huge_scores = 0;
        for (const VerifyConfig& c : generator.configs()) {
            if (!c.extreme) continue;
            ++extreme_configs;
            if (c.gap_open >= 32768) ++huge_gaps;
            if (c.scheme.matrix.max_score() >= 64) ++huge_scores;
        }
        QVERIFY(extreme_configs > 0 && huge_gaps > 0 && huge_scores > 0);
        int drawn = 0;
        for (int k = 0; k < 2000; ++k) drawn += generator.configs()[generator.next().config].extreme ? 1 : 0;
        QVERIFY2(drawn > 100, qPrintable(QString::number(drawn)));

        auto registry = make_cpu_registry();
        VerifyOptions options;
        options.device = "cpu";
        options.pairs = 1500;
        options.seed = 3;
        options.threads = 2;
        JobContext context;
        const VerifySummary summary = verify_device(*registry, options, {}, context);
        QCOMPARE(summary.failed, std::uint64_t(0));
        QCOMPARE(summary.refused, std::uint64_t(0));
        QCOMPARE(summary.passed, options.pairs);
    }

    // A --kernel the device does not run is a usage error said once, before
    // any job, not a device that fails every pair.
    void unknownKernelIsAUsageError() {
        auto registry = make_cpu_registry();
        VerifyOptions options;
        options.device = "cpu";
        options.pairs = 10;
        options.kernel = "nope";
        JobContext context;
        try {
            verify_device(*registry, options, {}, context);
            QFAIL("no error");
        } catch (const Error& e) {
            // Not a kernel name at all: said so, with what one looks like.
            QVERIFY2(QString(e.what()).startsWith("--kernel: kernel name 'nope': it has 1 word"), e.what());
        }
        options.kernel = "sw_affine_inter_s16";  // a name, but not one of this device's kernels
        try {
            verify_device(*registry, options, {}, context);
            QFAIL("no error");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).contains("--kernel 'sw_affine_inter_s16' cannot run on device cpu"), e.what());
        }
        options.kernel = "sw_affine_striped_s16";  // a kernel the device runs
        const VerifySummary summary = verify_device(*registry, options, {}, context);
        QCOMPARE(summary.failed, std::uint64_t(0));
    }

    void verifyRejectsBadOptions() {
        auto registry = make_cpu_registry();
        VerifyOptions options;
        options.device = "cpu";
        options.pairs = 0;
        JobContext context;
        QVERIFY_THROWS_EXCEPTION(Error, verify_device(*registry, options, {}, context));
        options.pairs = 10;
        options.device = "no-such-device";
        QVERIFY_THROWS_EXCEPTION(Error, verify_device(*registry, options, {}, context));
    }

    // Kernel-only time is the union of kernel intervals: overlapping kernels on
    // two streams count once, copies not at all.
    void busySecondsIsTheUnionOfKernelIntervals() {
        auto event = [](const char* category, std::int64_t start, std::int64_t end) {
            TimelineEvent e;
            e.category = category;
            e.start_ns = start;
            e.end_ns = end;
            return e;
        };
        const std::vector<TimelineEvent> events{event("kernel", 0, 10),  event("kernel", 5, 15),
                                                event("copy", 15, 100),  event("kernel", 20, 30),
                                                event("kernel", 22, 25), event("kernel", 30, 40)};
        const auto busy = busy_seconds(events);
        QVERIFY(busy.has_value());
        QCOMPARE(*busy, 35e-9);  // [0,15) + [20,40)
        QCOMPARE(*busy_seconds(events, "copy"), 85e-9);
        QVERIFY(!busy_seconds(events, "cpu").has_value());
        QVERIFY(!busy_seconds({}).has_value());
    }

    // bench --timeline writes every device's events into one file with one
    // clock label: it names each device's clock when they differ, and the
    // JSON's kernel timing names the GPU's.
    void benchTimelineNamesEachDevicesClock() {
        auto registry = make_cpu_registry();
        CuptiClockedBackend gpu(registry->select("cpu"));
        Backend& cpu = registry->select("cpu-ref");
        TimelineRecorder recorder;
        BenchOptions options;
        options.gpu_pairs = 4;
        options.cpu_pairs = 2;
        options.repeat = 1;
        options.warmup = 0;
        options.timeline = &recorder;
        const BenchReport report = run_bench({&gpu, &cpu}, options);
        QVERIFY(!report.points.empty());
        QCOMPARE(QString::fromStdString(recorder.clock_source()),
                 QStringLiteral("steady-clock (cpu-ref), cupti (gpu:0)"));
        bool gpu_point = false;
        for (const BenchPoint& p : report.points) {
            if (p.device != "gpu:0") continue;
            gpu_point = true;
            QCOMPARE(QString::fromStdString(p.clock_source), QStringLiteral("cupti"));
            QVERIFY2(p.kernel_timing.find("(cupti)") != std::string::npos, p.kernel_timing.c_str());
        }
        QVERIFY(gpu_point);

        // One device: its clock alone.
        TimelineRecorder alone;
        options.timeline = &alone;
        (void)run_bench({&cpu}, options);
        QCOMPARE(QString::fromStdString(alone.clock_source()), QStringLiteral("steady-clock"));
    }

    // parasail's library beside the CPU device, on the same pairs: only for a
    // local case without begins or traceback (what its sw_striped_16 answers),
    // and rerun in 32-bit lanes exactly where 16-bit ones overflow.
    void parasailBaselineAnswersOnlyTheScoreAndEndsCase() {
        PointSettings settings;
        settings.pairs = 40;
        settings.repeat = 1;
        settings.warmup = 0;
        settings.threads = 2;
        int measured = 0;
        for (const BenchCase& c : standard_bench_cases()) {
            const auto baseline = measure_parasail_baseline(c, settings);
            QCOMPARE(baseline.has_value(), c.name == "protein-300x300-local-ends");
            if (!baseline) continue;
            ++measured;
            QVERIFY(baseline->gcups > 0);
            QCOMPARE(baseline->threads, 2);
            QVERIFY(!baseline->version.empty());
            QCOMPARE(baseline->widened, std::uint64_t{0});  // BLOSUM62 on 300 x 300: 16-bit lanes hold it
        }
        QCOMPARE(measured, 1);

        // Identical 300-base pairs scoring 300 x 251 = 75,300: past parasail's biased
        // 16-bit lanes (65,535 at most).
        BenchCase wide = standard_bench_cases()[1];
        wide.alphabet = AlphabetKind::Dna;
        wide.matrix.clear();
        wide.match = 251;  // co-prime with the rest: the scheme is not divided down
        wide.mismatch = -300;
        wide.gap_open = 700;
        wide.gap_extend = 251;
        wide.substitution_rate = wide.indel_rate = 0;
        const auto widened = measure_parasail_baseline(wide, settings);
        QVERIFY(widened.has_value());
        QCOMPARE(widened->widened, std::uint64_t{40});
    }
};

QTEST_GUILESS_MAIN(TestVerify)
#include "test_verify.moc"
