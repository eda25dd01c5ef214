// Linear-space alignment (Myers-Miller) on long pairs: the same score and
// coordinates as the full-matrix reference, a CIGAR that re-scores to the
// score, score and end identical to parasail; progress reports and prompt
// cancellation.
#include <alignscope/align/linear_space.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <parasail.h>

#include <random>
#include <string>
#include <vector>

using namespace alignscope;

namespace {

const std::string dna = "ACGT";
const std::string amino = "ARNDCQEGHILKMFPSTWYV";

std::string random_residues(std::mt19937& rng, const std::string& alphabet, std::size_t length) {
    std::string s(length, 'A');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
}

// A relative: 6 % substitutions, 2 % deletions, 2 % insertions of 1-4 residues.
std::string mutate(std::mt19937& rng, const std::string& s, const std::string& alphabet) {
    std::string out;
    out.reserve(s.size() + s.size() / 10);
    for (char c : s) {
        const unsigned r = rng() % 100;
        if (r < 6) out += alphabet[rng() % alphabet.size()];
        else if (r < 8)
            continue;
        else if (r < 10)
            out += c + random_residues(rng, alphabet, 1 + rng() % 4);
        else
            out += c;
    }
    return out;
}

struct Problem {
    std::string query, target;
    ScoringScheme scheme;
    AlignOptions options;
    const char* parasail_kernel;  // affine, 32-bit; ends as in reference_aligner.hpp
    const char* parasail_matrix;  // a parasail built-in, or "2/-3" for ACGT match/mismatch
};

Problem make_problem(const QString& kind) {
    std::mt19937 rng(2024);
    Problem p;
    p.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
    p.parasail_matrix = "nuc44";
    if (kind == "local 20 kb, 8 kb planted") {
        // Gaps dear enough that unrelated DNA does not align end to end.
        p.scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        p.parasail_matrix = "2/-3";
        p.target = random_residues(rng, dna, 20000);
        p.query = random_residues(rng, dna, 6000) + mutate(rng, p.target.substr(5000, 8000), dna) +
                  random_residues(rng, dna, 6000);
        p.options.mode = AlignmentMode::Local;
        p.parasail_kernel = "sw_striped_32";
    } else if (kind == "global 6 kb relatives") {
        p.query = random_residues(rng, dna, 6000);
        p.target = mutate(rng, p.query, dna);
        p.options.mode = AlignmentMode::Global;
        p.parasail_kernel = "nw_striped_32";
    } else if (kind == "3 kb read in 20 kb") {
        p.target = random_residues(rng, dna, 20000);
        p.query = mutate(rng, p.target.substr(8000, 3000), dna);
        p.options.mode = AlignmentMode::SemiGlobal;
        p.options.free_ends = FreeEndGaps::parse("qb,qe");
        p.parasail_kernel = "sg_dx_striped_32";  // our free query ends are parasail's d* flags
    } else if (kind == "overlap 10 kb") {
        const std::string genome = random_residues(rng, dna, 16000);
        p.query = mutate(rng, genome.substr(0, 10000), dna);
        p.target = mutate(rng, genome.substr(6000, 10000), dna);
        p.options.mode = AlignmentMode::SemiGlobal;
        p.parasail_kernel = "sg_striped_32";
    } else {  // "protein 4000 local"
        p.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
        p.parasail_matrix = "blosum62";
        p.query = random_residues(rng, amino, 1000) + mutate(rng, random_residues(rng, amino, 3000), amino);
        p.target = mutate(rng, p.query.substr(1000), amino) + random_residues(rng, amino, 500);
        p.options.mode = AlignmentMode::Local;
        p.parasail_kernel = "sw_striped_32";
    }
    return p;
}

void expect_same_region(const Alignment& a, const Alignment& b) {
    QCOMPARE(a.score, b.score);
    QCOMPARE(a.query_begin, b.query_begin);
    QCOMPARE(a.query_end, b.query_end);
    QCOMPARE(a.target_begin, b.target_begin);
    QCOMPARE(a.target_end, b.target_end);
}

}  // namespace

class TestLinearSpace : public QObject {
    Q_OBJECT

private slots:
    void long_pairs_data() {
        QTest::addColumn<QString>("kind");
        for (const char* kind : {"local 20 kb, 8 kb planted", "global 6 kb relatives", "3 kb read in 20 kb",
                                 "overlap 10 kb", "protein 4000 local"})
            QTest::newRow(kind) << QString(kind);
    }
    void long_pairs() {
        QFETCH(QString, kind);
        const Problem p = make_problem(kind);
        const Alignment linear = align_linear_space(p.query, p.target, p.scheme, p.options);
        const Alignment full = align_reference(p.query, p.target, p.scheme, p.options);
        QVERIFY2(QString::fromStdString(linear.kernel).contains("myersmiller"), linear.kernel.c_str());
        QVERIFY2(QString::fromStdString(full.kernel).contains("scalar"), full.kernel.c_str());
        expect_same_region(linear, full);
        QVERIFY(linear.has_traceback());
        QCOMPARE(rescore(linear.cigar, p.query, p.target, linear.query_begin, linear.target_begin, p.scheme),
                 linear.score);
        QCOMPARE(rescore(full.cigar, p.query, p.target, full.query_begin, full.target_begin, p.scheme), full.score);
        QCOMPARE(linear.stats.length, linear.cigar.columns());
        QVERIFY(linear.identity() > 0.5);  // the planted relatives are found
        qInfo("%s: score %lld, region %lld..%lld x %lld..%lld", qPrintable(kind), static_cast<long long>(linear.score),
              static_cast<long long>(linear.query_begin), static_cast<long long>(linear.query_end),
              static_cast<long long>(linear.target_begin), static_cast<long long>(linear.target_end));

        parasail_function_t* kernel = parasail_lookup_function(p.parasail_kernel);
        QVERIFY(kernel);
        // parasail's matrix, scaled as ours for half-step penalties.
        parasail_matrix_t* matrix = std::string(p.parasail_matrix) == "2/-3"
                                        ? parasail_matrix_create("ACGT", 2, -3)
                                        : parasail_matrix_copy(parasail_matrix_lookup(p.parasail_matrix));
        for (int r = 0; r < matrix->size; ++r)
            for (int c = 0; c < matrix->size; ++c)
                parasail_matrix_set_value(matrix, r, c, p.scheme.scale * matrix->matrix[r * matrix->size + c]);
        parasail_result_t* theirs = kernel(p.query.c_str(), int(p.query.size()), p.target.c_str(), int(p.target.size()),
                                           p.scheme.gap_open, p.scheme.gap_extend, matrix);
        const int score = theirs->score, end_query = theirs->end_query + 1, end_ref = theirs->end_ref + 1;
        parasail_result_free(theirs);
        parasail_matrix_free(matrix);
        QCOMPARE(linear.score, std::int64_t(score));
        QCOMPARE(linear.query_end, std::int64_t(end_query));
        QCOMPARE(linear.target_end, std::int64_t(end_ref));
    }

    void cell_limit_selects_linear_space() {
        std::mt19937 rng(7);
        const std::string q = random_residues(rng, amino, 1500);
        const std::string t = mutate(rng, q, amino);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 10, 0.5);
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal}) {
            AlignOptions o;
            o.mode = mode;
            const Alignment full = align_reference(q, t, scheme, o);
            const Alignment bounded = align_reference(q, t, scheme, o, 100000);  // far below 1500 x 1500
            QVERIFY2(QString::fromStdString(bounded.kernel).contains("myersmiller"), bounded.kernel.c_str());
            expect_same_region(bounded, full);
            QCOMPARE(rescore(bounded.cigar, q, t, bounded.query_begin, bounded.target_begin, scheme), full.score);
        }
    }

    void degenerate_pairs_data() {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("target");
        QTest::addColumn<int>("mode");
        QTest::newRow("homopolymers, global") << QString(3000, 'A') << QString(2000, 'A') << int(AlignmentMode::Global);
        QTest::newRow("homopolymers, local") << QString(3000, 'A') << QString(2000, 'A') << int(AlignmentMode::Local);
        QTest::newRow("homopolymers, overlap")
            << QString(2000, 'A') << QString(3000, 'A') << int(AlignmentMode::SemiGlobal);
        QTest::newRow("nothing in common, local")
            << QString(3000, 'A') << QString(3000, 'C') << int(AlignmentMode::Local);
        QTest::newRow("nothing in common, global")
            << QString(3000, 'A') << QString(1000, 'C') << int(AlignmentMode::Global);
        QTest::newRow("one residue against many") << QString("G") << QString(5000, 'C') << int(AlignmentMode::Global);
        QTest::newRow("dinucleotide repeats")
            << QString("AC").repeated(1500) << QString("CA").repeated(1400) << int(AlignmentMode::Global);
    }
    void degenerate_pairs() {
        QFETCH(QString, query);
        QFETCH(QString, target);
        QFETCH(int, mode);
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        AlignOptions o;
        o.mode = AlignmentMode(mode);
        const std::string q = query.toStdString(), t = target.toStdString();
        const Alignment linear = align_linear_space(q, t, scheme, o);
        const Alignment full = align_reference(q, t, scheme, o);
        expect_same_region(linear, full);
        if (o.mode == AlignmentMode::Local && full.score == 0) {
            QVERIFY(!linear.has_traceback());
            QCOMPARE(linear.query_begin, std::int64_t(0));
            return;
        }
        QCOMPARE(rescore(linear.cigar, q, t, linear.query_begin, linear.target_begin, scheme), full.score);
    }

    void progress_is_reported() {
        const Problem p = make_problem("protein 4000 local");
        std::vector<std::uint64_t> reports;
        const Alignment a = align_linear_space(p.query, p.target, p.scheme, p.options,
                                               [&reports](std::uint64_t cells) { reports.push_back(cells); });
        QVERIFY(a.has_traceback());
        QVERIFY2(reports.size() > 10, qPrintable(QString::number(reports.size())));
        for (std::size_t k = 1; k < reports.size(); ++k) QVERIFY(reports[k] > reports[k - 1]);
        // At least the forward pass and the Myers-Miller passes over the region.
        const auto forward_cells = std::uint64_t(p.query.size()) * std::uint64_t(p.target.size());
        const auto region_cells =
            std::uint64_t(a.query_end - a.query_begin + 1) * std::uint64_t(a.target_end - a.target_begin + 1);
        QVERIFY(reports.back() >= forward_cells + region_cells);
    }

    void cancellation_data() {
        QTest::addColumn<double>("fraction");  // of the forward pass's cells, when the user cancels
        QTest::newRow("during the forward pass") << 0.3;
        QTest::newRow("during the reverse pass") << 1.2;
        QTest::newRow("during Myers-Miller") << 2.5;
    }
    void cancellation() {
        QFETCH(double, fraction);
        const Problem p = make_problem("protein 4000 local");
        const auto forward_cells = double(p.query.size()) * double(p.target.size());
        const auto cancel_at = std::uint64_t(fraction * forward_cells);
        std::uint64_t cancelled_at = 0;
        std::uint64_t last = 0;
        bool cancelled = false;
        auto progress = [&](std::uint64_t cells) {
            QVERIFY(!cancelled);  // no work reported after the job was cancelled
            last = cells;
            if (cells >= cancel_at) {
                cancelled = true;
                cancelled_at = cells;
                throw Cancelled();
            }
        };
        QVERIFY_THROWS_EXCEPTION(Cancelled, align_linear_space(p.query, p.target, p.scheme, p.options, progress));
        QVERIFY(cancelled);
        // Reports come every few million cells, so the cancellation lands soon after the request.
        QVERIFY2(cancelled_at - cancel_at < 8'000'000, qPrintable(QString::number(cancelled_at - cancel_at)));
        QCOMPARE(last, cancelled_at);
    }
};

QTEST_GUILESS_MAIN(TestLinearSpace)
#include "test_linear_space.moc"
