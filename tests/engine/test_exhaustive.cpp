// The CPU reference aligners against brute force: for tiny sequences every
// alignment (every sequence of columns between every allowed start and end) is
// enumerated and scored from the definitions alone, and align_reference (with
// and without traceback), score_forward and align_linear_space must find the
// optimal score, the end and begin the documented tie-break picks, and a CIGAR
// that re-scores to the optimum.
#include <alignscope/align/linear_space.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace alignscope;

namespace {

constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min();

// best(i0, j0, i, j): the highest score of any non-empty sequence of columns
// leading from corner (i0, j0) to corner (i, j), found by walking every one.
// A gap of length k costs open + (k-1)*extend; a gap of the other kind right
// after it is a new gap.
class Enumeration {
public:
    Enumeration(const std::string& query, const std::string& target, const ScoringScheme& scheme)
        : m_(static_cast<int>(query.size())), n_(static_cast<int>(target.size())), scheme_(scheme) {
        for (char c : query) q_.push_back(scheme.matrix.index_of(c));
        for (char c : target) t_.push_back(scheme.matrix.index_of(c));
        table_.assign(static_cast<std::size_t>((m_ + 1) * (n_ + 1) * (m_ + 1) * (n_ + 1)), none);
        for (int i0 = 0; i0 <= m_; ++i0)
            for (int j0 = 0; j0 <= n_; ++j0) walk(i0, j0, i0, j0, 'S', 0);
    }
    std::int64_t best(int i0, int j0, int i, int j) const { return table_[index(i0, j0, i, j)]; }
    std::int64_t columns_walked() const { return walked_; }

private:
    std::size_t index(int i0, int j0, int i, int j) const {
        return static_cast<std::size_t>(((i0 * (n_ + 1) + j0) * (m_ + 1) + i) * (n_ + 1) + j);
    }
    void walk(int i0, int j0, int i, int j, char last, std::int64_t score) {
        ++walked_;
        if (i != i0 || j != j0) {
            std::int64_t& cell = table_[index(i0, j0, i, j)];
            cell = std::max(cell, score);
        }
        if (i < m_ && j < n_) walk(i0, j0, i + 1, j + 1, 'M', score + scheme_.matrix.score(q_[i], t_[j]));
        if (j < n_) walk(i0, j0, i, j + 1, 'D', score - (last == 'D' ? scheme_.gap_extend : scheme_.gap_open));
        if (i < m_) walk(i0, j0, i + 1, j, 'I', score - (last == 'I' ? scheme_.gap_extend : scheme_.gap_open));
    }

    int m_, n_;
    const ScoringScheme& scheme_;
    std::vector<int> q_, t_;
    std::vector<std::int64_t> table_;
    std::int64_t walked_ = 0;
};

struct Expected {
    std::int64_t score = 0;
    int query_begin = 0, query_end = 0, target_begin = 0, target_end = 0;  // 1-based; all 0 when empty
    bool empty = false;
};

// The optimum under the contract of reference_aligner.hpp, straight from the
// enumeration: allowed starts and ends per mode; the end with the smallest j,
// then i; the start (among those reaching that end optimally) with the largest
// j, then i.
Expected expect(const Enumeration& all, int m, int n, const AlignOptions& options) {
    std::vector<std::pair<int, int>> starts, ends;
    const FreeEndGaps& f = options.free_ends;
    for (int i = 0; i <= m; ++i) {
        for (int j = 0; j <= n; ++j) {
            bool start = i == 0 && j == 0;
            bool end = i == m && j == n;
            switch (options.mode) {
                case AlignmentMode::Global: break;
                case AlignmentMode::Local: start = end = true; break;
                case AlignmentMode::SemiGlobal:
                    start = start || (i == 0 && f.query_begin) || (j == 0 && f.target_begin);
                    end = end || (i == m && j >= 1 && f.query_end) || (j == n && i >= 1 && f.target_end);
                    break;
            }
            if (start) starts.emplace_back(i, j);
            if (end) ends.emplace_back(i, j);
        }
    }
    Expected x;
    x.score = none;
    std::pair<int, int> end_cell{0, 0};
    for (auto [i, j] : ends) {
        for (auto [i0, j0] : starts) {
            const std::int64_t s = all.best(i0, j0, i, j);
            if (s == none) continue;
            const bool better =
                s > x.score || (s == x.score && (j < end_cell.second || (j == end_cell.second && i < end_cell.first)));
            if (better) {
                x.score = s;
                end_cell = {i, j};
            }
        }
    }
    if (options.mode == AlignmentMode::Local && x.score <= 0) {
        x = Expected();
        x.empty = true;
        return x;
    }
    std::pair<int, int> start_cell{-1, -1};
    for (auto [i0, j0] : starts) {
        if (all.best(i0, j0, end_cell.first, end_cell.second) != x.score) continue;
        if (j0 > start_cell.second || (j0 == start_cell.second && i0 > start_cell.first)) start_cell = {i0, j0};
    }
    x.query_begin = start_cell.first + 1;
    x.target_begin = start_cell.second + 1;
    x.query_end = end_cell.first;
    x.target_end = end_cell.second;
    return x;
}

std::vector<AlignOptions> every_problem() {
    std::vector<AlignOptions> all;
    AlignOptions o;
    o.mode = AlignmentMode::Global;
    all.push_back(o);
    o.mode = AlignmentMode::Local;
    all.push_back(o);
    o.mode = AlignmentMode::SemiGlobal;
    for (int bits = 0; bits < 16; ++bits) {
        o.free_ends = {bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8)};
        all.push_back(o);
    }
    return all;
}

std::string random_residues(std::mt19937& rng, const std::string& alphabet, int length) {
    std::string s;
    for (int k = 0; k < length; ++k) s += alphabet[rng() % alphabet.size()];
    return s;
}

std::vector<std::pair<std::string, std::string>> test_pairs(bool protein, int random_count, unsigned seed) {
    std::vector<std::pair<std::string, std::string>> pairs;
    if (protein) {
        pairs = {{"HEAGAWG", "PAWHEAE"}, {"W", "W"},        {"W", "C"},         {"WWW", "WCW"},  {"KKKKKKK", "KK"},
                 {"MKV", "VKM"},         {"PPPP", "GGGGG"}, {"CWCWC", "WCWCW"}, {"A", "ARNDCQE"}};
    } else {
        pairs = {{"ACGT", "ACGT"}, {"AAAA", "AA"},         {"AA", "AAAAAAA"},
                 {"ACGT", "TGCA"}, {"AAA", "CCC"},         {"A", "G"},
                 {"A", "A"},       {"GATTACA", "GCATGCT"}, {"ACACACA", "CACAC"},
                 {"T", "TTTTTTT"}, {"ACGTACG", "ACGACG"},  {"CCCCCCC", "CCACCCC"}};
    }
    std::mt19937 rng(seed);
    const std::string alphabet = protein ? "ARNDCQEGHILKMFPSTWYV" : "ACGT";
    for (int k = 0; k < random_count; ++k) {
        const int m = 1 + static_cast<int>(rng() % 7);
        const int n = 1 + static_cast<int>(rng() % 7);
        pairs.emplace_back(random_residues(rng, alphabet, m), random_residues(rng, alphabet, n));
    }
    return pairs;
}

QString describe(const std::string& q, const std::string& t, const AlignOptions& o) {
    return QString("%1 vs %2, %3%4")
        .arg(QString::fromStdString(q), QString::fromStdString(t),
             QString::fromLatin1(to_string(o.mode).data(), qsizetype(to_string(o.mode).size())),
             o.mode == AlignmentMode::SemiGlobal ? " " + QString::fromStdString(o.free_ends.to_string()) : "");
}

// Every aligner on one problem, against the enumeration.
void check(const Enumeration& all, const std::string& q, const std::string& t, const EncodedSequence& qe,
           const EncodedSequence& te, const ScoringScheme& scheme, const AlignOptions& options,
           const QByteArray& context) {
    const int m = static_cast<int>(q.size());
    const int n = static_cast<int>(t.size());
    const Expected x = expect(all, m, n, options);
    const ScoreAndEnd forward = score_forward(qe.data(), m, te.data(), n, scheme, options);
    QVERIFY2(forward.score == x.score, context);
    QVERIFY2(forward.query_end == x.query_end && forward.target_end == x.target_end, context);

    AlignOptions score_only = options;
    score_only.traceback = false;
    const Alignment plain = align_reference(q, t, scheme, score_only);
    const Alignment full = align_reference(q, t, scheme, options);
    const Alignment linear = align_linear_space(q, t, scheme, options);
    QVERIFY2(!plain.has_traceback(), context);
    for (const Alignment* a : {&plain, &full, &linear}) {
        QVERIFY2(a->score == x.score, context + " score " + QByteArray::number(qint64(a->score)) + ", optimum " +
                                          QByteArray::number(qint64(x.score)));
        QVERIFY2(a->query_end == x.query_end && a->target_end == x.target_end,
                 context + " end " + QByteArray::number(qint64(a->query_end)) + "," +
                     QByteArray::number(qint64(a->target_end)));
        QVERIFY2(a->query_begin == x.query_begin && a->target_begin == x.target_begin,
                 context + " begin " + QByteArray::number(qint64(a->query_begin)) + "," +
                     QByteArray::number(qint64(a->target_begin)) + " expected " + QByteArray::number(x.query_begin) +
                     "," + QByteArray::number(x.target_begin));
        QCOMPARE(a->query_length, std::int64_t(m));
        QCOMPARE(a->target_length, std::int64_t(n));
    }
    for (const Alignment* a : {&full, &linear}) {
        QVERIFY2(a->has_traceback() == !x.empty, context);
        if (x.empty) continue;
        const std::string cigar = a->cigar.to_string();
        QVERIFY2(rescore(a->cigar, q, t, a->query_begin, a->target_begin, scheme) == x.score,
                 context + " cigar " + QByteArray::fromStdString(cigar));
        QVERIFY2(a->query_begin + a->cigar.query_span() - 1 == a->query_end, context);
        QVERIFY2(a->target_begin + a->cigar.target_span() - 1 == a->target_end, context);
        QCOMPARE(a->query_aligned.size(), std::size_t(a->cigar.columns()));
        QCOMPARE(a->target_aligned.size(), std::size_t(a->cigar.columns()));
        QCOMPARE(a->stats.length, a->cigar.columns());
        if (options.mode == AlignmentMode::Local) {
            const char first = a->cigar.ops().front().op;
            const char last = a->cigar.ops().back().op;
            QVERIFY2((first == '=' || first == 'X') && (last == '=' || last == 'X'),
                     context + " local alignment starts or ends with a gap: " + QByteArray::fromStdString(cigar));
        }
    }
}

}  // namespace

class TestExhaustive : public QObject {
    Q_OBJECT

private slots:
    void every_alignment_data() {
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<bool>("protein");
        QTest::addColumn<unsigned>("seed");
        // match/mismatch as "MATCH/MISMATCH".
        QTest::newRow("dna 2/-3 affine 5/2") << "2/-3" << 5.0 << 2.0 << false << 11u;
        QTest::newRow("dna 2/-3 linear 3/3") << "2/-3" << 3.0 << 3.0 << false << 12u;
        QTest::newRow("dna 1/-1 half steps 1.5/0.5") << "1/-1" << 1.5 << 0.5 << false << 13u;
        QTest::newRow("dna 1/-1 extend 0") << "1/-1" << 2.0 << 0.0 << false << 14u;
        QTest::newRow("dna 1/-2 free gaps 0/0") << "1/-2" << 0.0 << 0.0 << false << 15u;
        QTest::newRow("EDNAFULL 10/0.5") << "EDNAFULL" << 10.0 << 0.5 << false << 16u;
        QTest::newRow("EDNAFULL linear 4/4") << "EDNAFULL" << 4.0 << 4.0 << false << 17u;
        QTest::newRow("BLOSUM62 11/1") << "BLOSUM62" << 11.0 << 1.0 << true << 21u;
        QTest::newRow("BLOSUM62 10/0.5") << "BLOSUM62" << 10.0 << 0.5 << true << 22u;
        QTest::newRow("BLOSUM62 linear 4/4") << "BLOSUM62" << 4.0 << 4.0 << true << 23u;
        QTest::newRow("PAM250 5/2") << "PAM250" << 5.0 << 2.0 << true << 24u;
        QTest::newRow("BLOSUM50 2.5/1.5") << "BLOSUM50" << 2.5 << 1.5 << true << 25u;
    }

    void every_alignment() {
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(bool, protein);
        QFETCH(unsigned, seed);
        SubstitutionMatrix unscaled;
        if (matrix.contains('/')) {
            const QStringList parts = matrix.split('/');
            unscaled = SubstitutionMatrix::match_mismatch(parts[0].toInt(), parts[1].toInt());
        } else {
            unscaled = SubstitutionMatrix::builtin(matrix.toStdString());
        }
        const ScoringScheme scheme = ScoringScheme::create(unscaled, open, extend);
        const std::vector<AlignOptions> problems = every_problem();

        int checked = 0;
        for (const auto& [q, t] : test_pairs(protein, 400, seed)) {
            const Enumeration all(q, t, scheme);
            const EncodedSequence qe = encode(q, scheme.matrix, "query");
            const EncodedSequence te = encode(t, scheme.matrix, "target");
            for (const AlignOptions& options : problems) {
                const QByteArray context = describe(q, t, options).toUtf8();
                try {
                    check(all, q, t, qe, te, scheme, options, context);
                } catch (const std::exception& e) {
                    QFAIL(context + ": " + e.what());
                }
                if (QTest::currentTestFailed()) return;
                ++checked;
            }
        }
        QVERIFY(checked > 0);
    }

private slots:
    void empty_sequences_are_refused() {
        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), 2, 1);
        QVERIFY_THROWS_EXCEPTION(Error, align_reference("", "ACGT", scheme, AlignOptions()));
        QVERIFY_THROWS_EXCEPTION(Error, align_reference("ACGT", "", scheme, AlignOptions()));
        QVERIFY_THROWS_EXCEPTION(Error, align_linear_space("", "", scheme, AlignOptions()));
        QVERIFY_THROWS_EXCEPTION(Error, align_reference("ACJT", "ACGT", scheme, AlignOptions()));
    }

    void unusable_penalties_are_refused() {
        ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), 2, 1);
        scheme.gap_extend = 3;  // extend > open breaks "a gap of length k costs open + (k-1)*extend"
        QVERIFY_THROWS_EXCEPTION(Error, align_reference("ACGT", "ACGT", scheme, AlignOptions()));
        scheme.gap_extend = -1;
        QVERIFY_THROWS_EXCEPTION(Error, align_linear_space("ACGT", "ACGT", scheme, AlignOptions()));
    }
};

QTEST_GUILESS_MAIN(TestExhaustive)
#include "test_exhaustive.moc"
