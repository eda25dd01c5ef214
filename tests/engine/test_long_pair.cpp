// The long-pair pipeline (stage 1 special rows, stage 2 crossings, stage 3
// splits) on the scalar pass runner, against the CPU reference aligner (itself
// checked against parasail and exhaustive enumeration): same score and end on
// every mode, scheme and boundary, with special rows a few rows apart so that
// every stage, every crossing kind (including crossings inside vertical gaps)
// and every split runs many times; the CIGAR re-scores to the score.
#include "random_relatives.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <random>
#include <string>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

LongPairOptions tight(AlignOptions align) {
    LongPairOptions o;
    o.align = align;
    o.min_band_rows = 3;  // special rows every few rows
    o.special_row_budget = 1u << 20;
    o.base_rows = 2;  // split down to the last rows
    o.base_cells = 8;
    o.threads = 2;
    return o;
}

void check_same(const std::string& q, const std::string& t, const ScoringScheme& scheme, const AlignOptions& align,
                const LongPairOptions& options, const QString& what) {
    const Alignment ref = align_reference(q, t, scheme, align);
    auto runner = make_cpu_pass_runner();
    LongPairStats stats;
    const Alignment got = align_long(q, t, scheme, options, *runner, {}, &stats);
    const QString ctx = what + QString(" q=%1 t=%2").arg(QString::fromStdString(q), QString::fromStdString(t));
    QVERIFY2(got.score == ref.score, qPrintable(ctx + QString(" score %1 vs %2").arg(got.score).arg(ref.score)));
    QVERIFY2(got.query_end == ref.query_end && got.target_end == ref.target_end,
             qPrintable(ctx + QString(" end %1,%2 vs %3,%4")
                                  .arg(got.query_end)
                                  .arg(got.target_end)
                                  .arg(ref.query_end)
                                  .arg(ref.target_end)));
    if (align.traceback && !(align.mode == AlignmentMode::Local && ref.score == 0)) {
        QVERIFY2(!got.cigar.empty() || got.query_begin > got.query_end, qPrintable(ctx + " no CIGAR"));
        QCOMPARE(rescore(got.cigar, q, t, got.query_begin, got.target_begin, scheme), got.score);
        QCOMPARE(got.query_begin + got.cigar.query_span() - 1, got.query_end);
        QCOMPARE(got.target_begin + got.cigar.target_span() - 1, got.target_end);
    }
    if (align.mode == AlignmentMode::Global) {
        QCOMPARE(got.query_begin, std::int64_t{1});
        QCOMPARE(got.target_begin, std::int64_t{1});
    }
}

}  // namespace

class TestLongPair : public QObject {
    Q_OBJECT

private slots:
    void random_pairs_data() {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        for (const char* mode : {"global", "local", "semiglobal", "semiglobal:qb,qe", "semiglobal:tb,te",
                                 "semiglobal:qb,te", "semiglobal:tb"}) {
            QTest::addRow("%s dna affine", mode) << mode << "EDNAFULL" << 10.0 << 0.5;
            QTest::addRow("%s dna linear", mode) << mode << "EDNAFULL" << 4.0 << 4.0;
            QTest::addRow("%s protein affine", mode) << mode << "BLOSUM62" << 11.0 << 1.0;
            QTest::addRow("%s dna cheap gaps", mode) << mode << "EDNAFULL" << 2.0 << 1.0;
        }
    }

    void random_pairs() {
        QFETCH(QString, mode);
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        const ScoringScheme scheme =
            ScoringScheme::create(SubstitutionMatrix::builtin(matrix.toStdString()), open, extend);
        AlignOptions align;
        const QStringList parts = mode.split(':');
        align.mode = parse_mode(parts[0].toStdString());
        if (parts.size() > 1) align.free_ends = FreeEndGaps::parse(parts[1].toStdString());
        const std::string alphabet = matrix == "BLOSUM62" ? "ARNDCQEGHILKMFPSTWYV" : "ACGT";
        std::mt19937 rng(7 + static_cast<unsigned>(qHash(mode) % 1000));
        for (int round = 0; round < 60; ++round) {
            const std::size_t len = 1 + rng() % (round < 30 ? 12 : 90);
            std::string q = random_residues(rng, alphabet, len);
            std::string t = round % 3 == 0 ? random_residues(rng, alphabet, 1 + rng() % 90) : mutate(rng, q, alphabet);
            if (t.empty()) t = "A";
            if (round % 4 == 1) std::swap(q, t);
            check_same(q, t, scheme, align, tight(align), mode + " " + matrix);
            AlignOptions no_tb = align;
            no_tb.traceback = false;
            check_same(q, t, scheme, no_tb, tight(no_tb), mode + " " + matrix + " no traceback");
        }
    }

    // Every pair of sequences of length 1..4 over {A, C, G}: the exhaustive
    // corner cases (gaps at every edge, ties everywhere).
    void all_tiny_pairs() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 3, 1);
        std::vector<std::string> seqs;
        for (int len = 1; len <= 4; ++len) {
            int count = 1;
            for (int k = 0; k < len; ++k) count *= 3;
            for (int code = 0; code < count; ++code) {
                std::string s;
                for (int k = 0, c = code; k < len; ++k, c /= 3) s += "ACG"[c % 3];
                seqs.push_back(s);
            }
        }
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal}) {
            AlignOptions align;
            align.mode = mode;
            for (std::size_t x = 0; x < seqs.size(); x += 3)
                for (std::size_t y = 0; y < seqs.size(); y += 2)
                    check_same(seqs[x], seqs[y], scheme, align, tight(align),
                               QString::fromStdString(std::string(to_string(mode))));
        }
    }

    // A longer pair with the default granularity's smaller cousins: many bands,
    // several split levels; the statistics say so.
    void a_few_thousand_residues() {
        std::mt19937 rng(99);
        const std::string q = random_residues(rng, "ACGT", 3000);
        const std::string t = mutate(rng, q, "ACGT");
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local}) {
            AlignOptions align;
            align.mode = mode;
            LongPairOptions o;
            o.align = align;
            o.min_band_rows = 256;
            o.base_rows = 32;
            o.base_cells = 4096;
            auto runner = make_cpu_pass_runner();
            LongPairStats stats;
            const Alignment got = align_long(q, t, scheme, o, *runner, {}, &stats);
            const Alignment ref = align_reference(q, t, scheme, align);
            QCOMPARE(got.score, ref.score);
            QCOMPARE(got.query_end, ref.query_end);
            QCOMPARE(got.target_end, ref.target_end);
            QCOMPARE(rescore(got.cigar, q, t, got.query_begin, got.target_begin, scheme), got.score);
            QVERIFY(stats.special_rows >= 10);
            QVERIFY(stats.crossings >= 10);
            QVERIFY(stats.split_levels >= 3);
            // Stages 2 and 3 cost a small fraction of stage 1 on a near-diagonal path.
            QVERIFY2(stats.stage_cells[1] + stats.stage_cells[2] < stats.stage_cells[0],
                     qPrintable(QString("%1 + %2 vs %3")
                                    .arg(stats.stage_cells[1])
                                    .arg(stats.stage_cells[2])
                                    .arg(stats.stage_cells[0])));
        }
    }

    // A runner that can only search bands of a few rows gets special rows that
    // close, or a clear error when the budget cannot hold them.
    void band_cap() {
        class Capped final : public PassRunner {
        public:
            Capped() : cpu_(make_cpu_pass_runner()) {}
            void prepare(const std::uint8_t* q, std::int64_t m, const std::uint8_t* t, std::int64_t n,
                         const ScoringScheme& s) override {
                cpu_->prepare(q, m, t, n, s);
            }
            void run(std::vector<PassTask>& tasks, const JobContext& c, const PassProgress& p) override {
                for (const PassTask& task : tasks)
                    if (task.goal_search && task.rows() > 10) throw Error("band too tall");
                cpu_->run(tasks, c, p);
            }
            const std::vector<std::int64_t>& saved_rows() const override { return cpu_->saved_rows(); }
            std::int64_t max_band_rows() const override { return 10; }
            std::string device() const override { return "capped"; }
            std::string kernel() const override { return "capped"; }

        private:
            std::unique_ptr<PassRunner> cpu_;
        };
        std::mt19937 rng(11);
        const std::string q = random_residues(rng, "ACGT", 200);
        const std::string t = mutate(rng, q, "ACGT");
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        LongPairOptions o;
        o.align.mode = AlignmentMode::Local;
        Capped capped;
        LongPairStats stats;
        const Alignment got = align_long(q, t, scheme, o, capped, {}, &stats);
        QCOMPARE(got.score, align_reference(q, t, scheme, o.align).score);
        QVERIFY(stats.special_rows >= 19);
        o.special_row_budget = 3 * (t.size() + 1) * 8;  // room for three rows only
        QVERIFY_THROWS_EXCEPTION(Error, align_long(q, t, scheme, o, capped));
    }

    void bad_input_is_an_error() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        auto runner = make_cpu_pass_runner();
        LongPairOptions o;
        QVERIFY_THROWS_EXCEPTION(Error, align_long("", "ACGT", scheme, o, *runner));
        QVERIFY_THROWS_EXCEPTION(Error, align_long("ACGT", "AC?T", scheme, o, *runner));
    }

    void cancellation() {
        std::mt19937 rng(5);
        const std::string q = random_residues(rng, "ACGT", 2000);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        CancellationToken token;
        token.cancel();
        JobContext context;
        context.cancel = &token;
        auto runner = make_cpu_pass_runner();
        QVERIFY_THROWS_EXCEPTION(Cancelled, align_long(q, q, scheme, LongPairOptions{}, *runner, context));
    }
};

QTEST_APPLESS_MAIN(TestLongPair)
#include "test_long_pair.moc"
