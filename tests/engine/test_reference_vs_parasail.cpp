// The CPU reference aligners against parasail (an independent SIMD
// implementation): thousands of random and related pairs, DNA and protein
// matrices, linear, affine and half-step gaps, local, global and semi-global
// with many free-end combinations. Scores and end positions must be identical
// (the tie-break in reference_aligner.hpp is parasail's); every CIGAR must
// re-score to the score; linear space and score-only runs must agree with the
// full-matrix result on score and coordinates.
//
// Mapping onto parasail (s1 = query, s2 = target): our free query_begin /
// query_end are parasail's db / de, our target_begin / target_end its qb / qe.
// Half-step penalties are compared on the doubled scheme (parasail needs
// integers). parasail 2.6's striped kernels (sw, nw and sg, 16 and 32 bit)
// sometimes return wrong scores when open == extend (its own scalar and scan
// kernels agree with us there), so linear gaps use its scan kernels.
#include <alignscope/align/linear_space.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <parasail.h>

#include <memory>
#include <random>
#include <string>

using namespace alignscope;

namespace {

struct MatrixDeleter {
    void operator()(parasail_matrix_t* m) const { parasail_matrix_free(m); }
};
using OwnedMatrix = std::unique_ptr<parasail_matrix_t, MatrixDeleter>;

struct ResultDeleter {
    void operator()(parasail_result_t* r) const { parasail_result_free(r); }
};
using Result = std::unique_ptr<parasail_result_t, ResultDeleter>;

// parasail's copy of the matrix, multiplied by `scale` as ScoringScheme holds ours.
OwnedMatrix make_parasail_matrix(const QString& spec, int scale) {
    OwnedMatrix base;
    if (spec.contains('/')) {
        const QStringList parts = spec.split('/');
        base.reset(parasail_matrix_create("ACGT", parts[0].toInt(), parts[1].toInt()));
    } else {
        const QString name = spec == "EDNAFULL" ? "nuc44" : spec.toLower();
        const parasail_matrix_t* builtin = parasail_matrix_lookup(name.toLatin1().constData());
        if (!builtin) return nullptr;
        base.reset(parasail_matrix_copy(builtin));
    }
    for (int r = 0; r < base->size; ++r)
        for (int c = 0; c < base->size; ++c)
            parasail_matrix_set_value(base.get(), r, c, scale * base->matrix[r * base->size + c]);
    return base;
}

// The parasail function for a problem, by its name in parasail's grammar.
std::string parasail_name(const AlignOptions& o, bool linear) {
    const char* family = linear ? "_scan" : "_striped";
    if (o.mode == AlignmentMode::Local) return std::string("sw") + family;
    if (o.mode == AlignmentMode::Global) return std::string("nw") + family;
    const FreeEndGaps& f = o.free_ends;
    if (f == FreeEndGaps::none()) return std::string("nw") + family;
    // parasail's q* flags are about s1 = query residues left unaligned, which
    // are our free target ends; its d* flags are our free query ends.
    const char* q_part = f.target_begin ? (f.target_end ? "_qx" : "_qb") : (f.target_end ? "_qe" : "");
    const char* d_part = f.query_begin ? (f.query_end ? "_dx" : "_db") : (f.query_end ? "_de" : "");
    if (f == FreeEndGaps::all()) return std::string("sg") + family;
    return std::string("sg") + q_part + d_part + family;
}

Result run_parasail(const std::string& q, const std::string& t, int open, int extend, const parasail_matrix_t* matrix,
                    const AlignOptions& o, bool linear, std::string& used) {
    const int m = static_cast<int>(q.size()), n = static_cast<int>(t.size());
    const std::string base = parasail_name(o, linear);
    for (const char* width : {"_16", "_32"}) {
        used = base + width;
        parasail_function_t* f = parasail_lookup_function(used.c_str());
        Result r;
        if (f) {
            r.reset(f(q.c_str(), m, t.c_str(), n, open, extend, matrix));
        } else {
            // Combinations without a named kernel (three ends free): the scan
            // kernel that takes the flags (32-bit).
            const FreeEndGaps& e = o.free_ends;
            used = "sg_flags_scan";
            r.reset(parasail_sg_flags_scan(q.c_str(), m, t.c_str(), n, open, extend, matrix, e.target_begin,
                                           e.target_end, e.query_begin, e.query_end));
        }
        if (!parasail_result_is_saturated(r.get())) return r;
    }
    return nullptr;
}

std::string random_residues(std::mt19937& rng, const std::string& alphabet, int length) {
    std::string s;
    for (int k = 0; k < length; ++k) s += alphabet[rng() % alphabet.size()];
    return s;
}

// A relative of `s`: substitutions, insertions and deletions at a few percent,
// and sometimes a trimmed or extended end.
std::string mutate(std::mt19937& rng, const std::string& s, const std::string& alphabet) {
    std::string out;
    for (char c : s) {
        const unsigned r = rng() % 100;
        if (r < 8) out += alphabet[rng() % alphabet.size()];
        else if (r < 11)
            continue;
        else if (r < 14)
            out += std::string(1, c) + alphabet[rng() % alphabet.size()];
        else
            out += c;
    }
    if (rng() % 2) out = out.substr(rng() % (out.size() / 3 + 1));
    if (rng() % 2) out += random_residues(rng, alphabet, static_cast<int>(rng() % 30));
    if (out.empty()) out = s.substr(0, 1);
    return out;
}

}  // namespace

class TestReferenceVsParasail : public QObject {
    Q_OBJECT

private slots:
    void against_parasail_data() {
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<bool>("protein");
        QTest::addColumn<unsigned>("seed");
        QTest::newRow("dna 2/-3 affine 5/2") << "2/-3" << 5.0 << 2.0 << false << 1u;
        QTest::newRow("dna 1/-2 linear 3/3") << "1/-2" << 3.0 << 3.0 << false << 2u;
        QTest::newRow("EDNAFULL 10/0.5") << "EDNAFULL" << 10.0 << 0.5 << false << 3u;
        QTest::newRow("EDNAFULL 16/4") << "EDNAFULL" << 16.0 << 4.0 << false << 4u;
        QTest::newRow("BLOSUM62 11/1") << "BLOSUM62" << 11.0 << 1.0 << true << 5u;
        QTest::newRow("BLOSUM62 10/0.5") << "BLOSUM62" << 10.0 << 0.5 << true << 6u;
        QTest::newRow("BLOSUM62 linear 5/5") << "BLOSUM62" << 5.0 << 5.0 << true << 7u;
        QTest::newRow("BLOSUM50 13/2") << "BLOSUM50" << 13.0 << 2.0 << true << 8u;
        QTest::newRow("PAM250 10/0.5") << "PAM250" << 10.0 << 0.5 << true << 9u;
    }

    void against_parasail() {
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(bool, protein);
        QFETCH(unsigned, seed);
        const SubstitutionMatrix unscaled =
            matrix.contains('/')
                ? SubstitutionMatrix::match_mismatch(matrix.split('/')[0].toInt(), matrix.split('/')[1].toInt())
                : SubstitutionMatrix::builtin(matrix.toStdString());
        const ScoringScheme scheme = ScoringScheme::create(unscaled, open, extend);
        const OwnedMatrix theirs = make_parasail_matrix(matrix, scheme.scale);
        QVERIFY(theirs);

        std::mt19937 rng(seed);
        const std::string alphabet = protein ? "ARNDCQEGHILKMFPSTWYV" : "ACGT";
        int problems = 0;
        for (int pair = 0; pair < 400; ++pair) {
            const std::string q = random_residues(rng, alphabet, 1 + static_cast<int>(rng() % 300));
            const std::string t =
                pair % 2 ? mutate(rng, q, alphabet) : random_residues(rng, alphabet, 1 + static_cast<int>(rng() % 300));
            std::vector<AlignOptions> options(3);
            options[0].mode = AlignmentMode::Local;
            options[1].mode = AlignmentMode::Global;
            for (int k = 2; k < 5; ++k) {
                options.resize(static_cast<std::size_t>(k) + 1);
                const unsigned bits = k == 2 ? 15u : rng() % 16;
                options[static_cast<std::size_t>(k)].mode = AlignmentMode::SemiGlobal;
                options[static_cast<std::size_t>(k)].free_ends = {bool(bits & 1), bool(bits & 2), bool(bits & 4),
                                                                  bool(bits & 8)};
            }
            for (const AlignOptions& o : options) {
                std::string used;
                const Result r =
                    run_parasail(q, t, scheme.gap_open, scheme.gap_extend, theirs.get(), o, scheme.linear(), used);
                QVERIFY(r);
                const QByteArray context =
                    QString("pair %1 (%2 x %3), %4 %5, parasail %6")
                        .arg(pair)
                        .arg(q.size())
                        .arg(t.size())
                        .arg(QString::fromLatin1(to_string(o.mode).data(), qsizetype(to_string(o.mode).size())),
                             QString::fromStdString(o.mode == AlignmentMode::SemiGlobal ? o.free_ends.to_string() : ""),
                             QString::fromStdString(used))
                        .toUtf8();
                try {
                    check(q, t, scheme, o, *r, context);
                } catch (const std::exception& e) {
                    QFAIL(context + ": " + e.what());
                }
                if (QTest::currentTestFailed()) {
                    qInfo("query  %s\ntarget %s", q.c_str(), t.c_str());
                    return;
                }
                ++problems;
            }
        }
        QCOMPARE(problems, 400 * 5);
    }

private:
    static void check(const std::string& q, const std::string& t, const ScoringScheme& scheme, const AlignOptions& o,
                      const parasail_result_t& theirs, const QByteArray& context) {
        const Alignment full = align_reference(q, t, scheme, o);
        QVERIFY2(full.score == theirs.score, context + " score " + QByteArray::number(qint64(full.score)) +
                                                 ", parasail " + QByteArray::number(theirs.score));
        const bool empty = o.mode == AlignmentMode::Local && full.score == 0;
        if (empty) {
            QVERIFY2(full.query_begin == 0 && full.query_end == 0 && full.target_begin == 0 && full.target_end == 0,
                     context);
            QVERIFY2(!full.has_traceback(), context);
        } else {
            QVERIFY2(full.query_end == theirs.end_query + 1 && full.target_end == theirs.end_ref + 1,
                     context + " end " + QByteArray::number(qint64(full.query_end)) + "," +
                         QByteArray::number(qint64(full.target_end)) + ", parasail " +
                         QByteArray::number(theirs.end_query + 1) + "," + QByteArray::number(theirs.end_ref + 1));
            QVERIFY2(rescore(full.cigar, q, t, full.query_begin, full.target_begin, scheme) == full.score,
                     context + " cigar " + QByteArray::fromStdString(full.cigar.to_string()));
        }

        const Alignment linear = align_linear_space(q, t, scheme, o);
        AlignOptions score_only = o;
        score_only.traceback = false;
        const Alignment plain = align_reference(q, t, scheme, score_only);
        for (const Alignment* a : {&linear, &plain}) {
            QVERIFY2(a->score == full.score && a->query_begin == full.query_begin && a->query_end == full.query_end &&
                         a->target_begin == full.target_begin && a->target_end == full.target_end,
                     context + (a == &linear ? " linear space" : " score only") + " differs from the full matrix");
        }
        if (!empty)
            QVERIFY2(rescore(linear.cigar, q, t, linear.query_begin, linear.target_begin, scheme) == linear.score,
                     context + " linear-space cigar " + QByteArray::fromStdString(linear.cigar.to_string()));

        const EncodedSequence qe = encode(q, scheme.matrix, "query");
        const EncodedSequence te = encode(t, scheme.matrix, "target");
        const ScoreAndEnd forward =
            score_forward(qe.data(), std::int64_t(qe.size()), te.data(), std::int64_t(te.size()), scheme, o);
        QVERIFY2(forward.score == full.score && forward.query_end == full.query_end &&
                     forward.target_end == full.target_end,
                 context + " score_forward differs");
    }
};

QTEST_GUILESS_MAIN(TestReferenceVsParasail)
#include "test_reference_vs_parasail.moc"
