// The host's completion of GPU tracebacks (kernels/pairwise/path_completion.hpp)
// against the engine's complete_alignment on the same paths: alignments of the
// CPU reference (cpu-ref) over random protein and DNA pairs in every mode, their
// CIGARs packed as the GPU packs them (M/I/D runs), must come back with the same
// rows, CIGAR, statistics and score, and a path that leaves a sequence or meets
// an unscored residue with complete_alignment's error.
#include "../../kernels/pairwise/path_completion.hpp"
#include "packed_runs.hpp"

#include <alignscope/bench/verify.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <functional>
#include <string>
#include <vector>

using namespace alignscope;
using namespace alignscope::kernels;

namespace {

Alignment coordinates_of(const Alignment& a) {
    Alignment out;
    out.query_begin = a.query_begin;
    out.target_begin = a.target_begin;
    return out;
}

// complete_alignment on the 'M'/'I'/'D' CIGAR of `runs`: the oracle.
std::int64_t by_engine(Alignment& a, const std::vector<std::uint32_t>& runs, const std::string& query,
                       const std::string& target, const ScoringScheme& scheme) {
    for (std::uint32_t run : runs)
        a.cigar.push((run & 3u) == kCigarM ? 'M' : (run & 3u) == kCigarI ? 'I' : 'D', run >> 2);
    return complete_alignment(a, query, target, scheme);
}

std::string error_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

class TestPathCompletion : public QObject {
    Q_OBJECT
private slots:
    void sameAsCompleteAlignment_data();
    void sameAsCompleteAlignment();
    void encodedResidues();
    void errorsAsCompleteAlignment();
    void largeScores();
};

void TestPathCompletion::sameAsCompleteAlignment_data() {
    QTest::addColumn<int>("alphabet");
    QTest::addColumn<int>("mode");
    QTest::addColumn<double>("open");
    QTest::addColumn<double>("extend");
    for (int mode : {int(AlignmentMode::Local), int(AlignmentMode::Global), int(AlignmentMode::SemiGlobal)}) {
        const std::string name(to_string(AlignmentMode(mode)));
        QTest::newRow(("protein affine " + name).c_str()) << int(AlphabetKind::Protein) << mode << 11.0 << 1.0;
        QTest::newRow(("protein linear " + name).c_str()) << int(AlphabetKind::Protein) << mode << 4.0 << 4.0;
        QTest::newRow(("dna affine " + name).c_str()) << int(AlphabetKind::Dna) << mode << 7.0 << 2.0;
    }
}

void TestPathCompletion::sameAsCompleteAlignment() {
    QFETCH(int, alphabet);
    QFETCH(int, mode);
    QFETCH(double, open);
    QFETCH(double, extend);
    const auto kind = AlphabetKind(alphabet);
    const SubstitutionMatrix matrix =
        kind == AlphabetKind::Dna ? SubstitutionMatrix::match_mismatch(2, -3) : SubstitutionMatrix::builtin("BLOSUM62");
    const ScoringScheme scheme = ScoringScheme::create(matrix, open, extend);
    SeededRandom random(20261126 + static_cast<std::uint64_t>(alphabet * 10 + mode));
    std::vector<Sequence> queries, targets;
    PairJob job;
    for (int k = 0; k < 60; ++k) {
        Sequence q, t;
        q.id = "q" + std::to_string(k);
        t.id = "t" + std::to_string(k);
        q.residues = random_residues(random, kind, random.between(1, 160));
        t.residues =
            fit_to_length(random, kind, mutate_residues(random, kind, q.residues, 0.3, 0.05), random.between(1, 200));
        queries.push_back(std::move(q));
        targets.push_back(std::move(t));
        job.pairs.emplace_back(k, k);
    }
    job.queries = &queries;
    job.targets = &targets;
    job.scheme = scheme;
    job.options.mode = AlignmentMode(mode);
    job.options.traceback = true;
    JobContext context;
    const auto devices = make_cpu_registry();
    const std::vector<Alignment> reference = devices->select("cpu-ref").align_pairs(job, context);
    const PathCompletion completion(scheme);
    int paths = 0;
    for (std::size_t k = 0; k < reference.size(); ++k) {
        const Alignment& r = reference[k];
        if (!r.has_traceback()) continue;
        ++paths;
        const std::vector<std::uint32_t> runs = packed_runs(r.cigar);
        Alignment fast = coordinates_of(r), slow = coordinates_of(r);
        const std::int64_t fast_score = completion.complete(fast, runs.data(), static_cast<std::uint32_t>(runs.size()),
                                                            queries[k].residues, targets[k].residues);
        const std::int64_t slow_score = by_engine(slow, runs, queries[k].residues, targets[k].residues, scheme);
        QCOMPARE(fast_score, slow_score);
        QCOMPARE(fast_score, r.score);
        QCOMPARE(fast.cigar.to_string(), slow.cigar.to_string());
        QCOMPARE(fast.cigar.to_string(), r.cigar.to_string());
        QCOMPARE(fast.query_aligned, slow.query_aligned);
        QCOMPARE(fast.target_aligned, slow.target_aligned);
        QCOMPARE(fast.stats.length, slow.stats.length);
        QCOMPARE(fast.stats.identities, slow.stats.identities);
        QCOMPARE(fast.stats.similarities, slow.stats.similarities);
        QCOMPARE(fast.stats.gaps, slow.stats.gaps);
        QCOMPARE(fast.stats.gap_opens, slow.stats.gap_opens);
    }
    QVERIFY(paths > 40);
}

// Residues already encoded as matrix codes give the letters in the rows.
void TestPathCompletion::encodedResidues() {
    const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
    const std::string query = "HEAGAWGHEE", target = "PAWHEAE";
    std::string qcodes, tcodes;
    for (char c : query) qcodes += static_cast<char>(scheme.matrix.index_of(c));
    for (char c : target) tcodes += static_cast<char>(scheme.matrix.index_of(c));
    // 2M 1I 2M 1D 2M from (3, 2).
    const std::vector<std::uint32_t> runs = {2u << 2 | kCigarM, 1u << 2 | kCigarI, 2u << 2 | kCigarM, 1u << 2 | kCigarD,
                                             2u << 2 | kCigarM};
    Alignment fast, slow;
    fast.query_begin = slow.query_begin = 3;
    fast.target_begin = slow.target_begin = 1;
    const PathCompletion completion(scheme);
    const std::int64_t score = completion.complete(fast, runs.data(), 5, qcodes, tcodes);
    QCOMPARE(score, by_engine(slow, runs, query, target, scheme));
    QCOMPARE(fast.query_aligned, slow.query_aligned);
    QCOMPARE(fast.target_aligned, slow.target_aligned);
    QCOMPARE(fast.cigar.to_string(), slow.cigar.to_string());
    QCOMPARE(fast.query_aligned, std::string("AGAWG-HE"));
    QCOMPARE(fast.target_aligned, std::string("PA-WHEAE"));
}

void TestPathCompletion::errorsAsCompleteAlignment() {
    const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 7, 2);
    const PathCompletion completion(scheme);
    auto both = [&](const std::vector<std::uint32_t>& runs, const std::string& query, const std::string& target,
                    std::int64_t query_begin, std::int64_t target_begin) {
        Alignment fast, slow;
        fast.query_begin = slow.query_begin = query_begin;
        fast.target_begin = slow.target_begin = target_begin;
        const std::string fast_error = error_of(
            [&] { completion.complete(fast, runs.data(), static_cast<std::uint32_t>(runs.size()), query, target); });
        const std::string slow_error = error_of([&] { by_engine(slow, runs, query, target, scheme); });
        QCOMPARE(fast_error, slow_error);
        QVERIFY(fast_error != "no error");
    };
    both({5u << 2 | kCigarM}, "ACGT", "ACGTACGT", 1, 1);                 // past the query
    both({2u << 2 | kCigarM, 3u << 2 | kCigarD}, "ACGT", "ACGT", 1, 1);  // past the target
    both({3u << 2 | kCigarM}, "ACZT", "ACGT", 1, 1);                     // unscored query residue
    both({1u << 2 | kCigarM, 2u << 2 | kCigarD}, "ACGT", "AC*T", 1, 1);  // unscored residue in a gap run
    both({1u << 2 | kCigarM}, "ACGT", "ACGT", 0, 1);                     // a begin before the sequence
}

// Scores too large for the walk's packed sums of 64 columns take
// complete_alignment: the same results where a long run of identities would
// overflow them.
void TestPathCompletion::largeScores() {
    const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1 << 26, -(1 << 26)), 7, 2);
    const PathCompletion completion(scheme);
    const std::string query = std::string(100, 'A') + "C" + std::string(40, 'G');
    const std::string target = std::string(100, 'A') + "T" + std::string(40, 'G');
    const std::vector<std::uint32_t> runs = {141u << 2 | kCigarM};
    Alignment fast, slow;
    fast.query_begin = slow.query_begin = 1;
    fast.target_begin = slow.target_begin = 1;
    const std::int64_t score = completion.complete(fast, runs.data(), 1, query, target);
    QCOMPARE(score, by_engine(slow, runs, query, target, scheme));
    QCOMPARE(score, std::int64_t{139} * (1 << 26));
    QCOMPARE(fast.cigar.to_string(), std::string("100=1X40="));
    QCOMPARE(fast.stats.identities, slow.stats.identities);
    QCOMPARE(fast.stats.similarities, slow.stats.similarities);
}

QTEST_GUILESS_MAIN(TestPathCompletion)
#include "test_path_completion.moc"
