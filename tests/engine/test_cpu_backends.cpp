// The CPU backends ("cpu-ref" and "cpu" = parasail SIMD) against the scalar
// reference aligner on thousands of random DNA and protein pairs, over every
// mode, every combination of free end gaps, linear/affine/half-step gaps,
// traceback on and off and several worker threads; lane-width saturation with
// scores known in closed form; cancellation from another thread; progress;
// the timeline; errors.
#include "sanitizers.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QtTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <thread>

using namespace alignscope;

namespace {

enum class Kind { Dna, Protein };

// Random residues, with a sprinkling of ambiguity codes and stand-in letters so
// that the letter mapping of each backend is exercised.
std::string random_residues(std::mt19937& rng, Kind kind, std::size_t length) {
    const std::string common = kind == Kind::Dna ? "ACGT" : "ACDEFGHIKLMNPQRSTVWY";
    const std::string rare = kind == Kind::Dna ? "NRYSWKMBDHVU" : "BZXUOJ";
    std::uniform_int_distribution<std::size_t> pick_common(0, common.size() - 1);
    std::uniform_int_distribution<std::size_t> pick_rare(0, rare.size() - 1);
    std::uniform_int_distribution<int> percent(0, 99);
    std::string s;
    for (std::size_t k = 0; k < length; ++k) s += percent(rng) < 3 ? rare[pick_rare(rng)] : common[pick_common(rng)];
    return s;
}

// A relative of `s`: substitutions, insertions and deletions at `rate` percent,
// sometimes inside random flanks, so that local and semi-global alignments are
// not trivial and equal-scoring alternatives (ties) are common.
std::string mutate(std::mt19937& rng, Kind kind, const std::string& s, int rate) {
    std::uniform_int_distribution<int> percent(0, 99);
    std::string out;
    for (char c : s) {
        const int r = percent(rng);
        if (r < rate / 3) continue;                                                     // deletion
        if (r < 2 * rate / 3) out += random_residues(rng, kind, 1 + percent(rng) % 3);  // insertion
        out += r < rate ? random_residues(rng, kind, 1)[0] : c;                         // substitution
    }
    if (out.empty()) out = random_residues(rng, kind, 1);
    if (percent(rng) < 40) out = random_residues(rng, kind, percent(rng) % 30) + out;
    if (percent(rng) < 40) out += random_residues(rng, kind, percent(rng) % 30);
    return out;
}

struct PairSet {
    std::vector<Sequence> queries, targets;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
};

PairSet random_pairs(std::uint32_t seed, Kind kind, int count, int max_length) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> length(1, max_length);
    std::uniform_int_distribution<int> percent(0, 99);
    PairSet set;
    for (int k = 0; k < count; ++k) {
        Sequence q, t;
        q.id = "q" + std::to_string(k);
        t.id = "t" + std::to_string(k);
        const int shape = percent(rng);
        if (shape < 8) {  // very short: 1-3 residues against anything
            q.residues = random_residues(rng, kind, 1 + percent(rng) % 3);
            t.residues = random_residues(rng, kind, static_cast<std::size_t>(length(rng)));
        } else if (shape < 12) {  // identical
            q.residues = random_residues(rng, kind, static_cast<std::size_t>(length(rng)));
            t.residues = q.residues;
        } else if (shape < 40) {  // unrelated
            q.residues = random_residues(rng, kind, static_cast<std::size_t>(length(rng)));
            t.residues = random_residues(rng, kind, static_cast<std::size_t>(length(rng)));
        } else {  // related
            q.residues = random_residues(rng, kind, static_cast<std::size_t>(length(rng)));
            t.residues = mutate(rng, kind, q.residues, 5 + percent(rng) % 40);
        }
        if (percent(rng) < 50) std::swap(q.residues, t.residues);
        set.queries.push_back(q);
        set.targets.push_back(t);
        set.pairs.emplace_back(k, k);
    }
    // A few pairs that share a query, as in a database search.
    for (int k = 0; k + 1 < count && k < 6; ++k) set.pairs.emplace_back(0, k + 1);
    return set;
}

PairJob make_job(const PairSet& set, const ScoringScheme& scheme, const AlignOptions& options, int threads) {
    PairJob job;
    job.queries = &set.queries;
    job.targets = &set.targets;
    job.pairs = set.pairs;
    job.scheme = scheme;
    job.options = options;
    job.threads = threads;
    return job;
}

ScoringScheme scheme_for(Kind kind, const QString& gaps) {
    const SubstitutionMatrix matrix =
        kind == Kind::Dna ? SubstitutionMatrix::match_mismatch(2, -3) : SubstitutionMatrix::builtin("BLOSUM62");
    if (gaps == "affine") return ScoringScheme::create(matrix, kind == Kind::Dna ? 5 : 11, kind == Kind::Dna ? 2 : 1);
    if (gaps == "linear") return ScoringScheme::create(matrix, 3, 3);
    if (gaps == "half") return ScoringScheme::create(matrix, 10, 0.5);
    if (gaps == "ednafull") return ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
    if (gaps == "blosum45") return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM45"), 14, 2);
    qFatal("unknown gap setting");
}

// "score 12 q 3-40 t 5-41": what a check reports of a result.
QString result_text(const Alignment& a) {
    return QString("score %1 q %2-%3 t %4-%5")
        .arg(a.score)
        .arg(a.query_begin)
        .arg(a.query_end)
        .arg(a.target_begin)
        .arg(a.target_end);
}

// One line for a pair whose result differs from the reference.
QString pair_text(std::size_t p, const Sequence& q, const Sequence& t, const Alignment& expected,
                  const Alignment& got) {
    return QString("pair %1: %2 vs %3, expected %4, got %5 (%6)")
        .arg(p)
        .arg(QString::fromStdString(q.residues), QString::fromStdString(t.residues), result_text(expected),
             result_text(got), QString::fromStdString(got.kernel));
}

Backend& backend(DeviceRegistry& registry, const QString& id) { return registry.select(id.toStdString()); }

const std::regex kernel_grammar("^(sw|nw|sg)_(linear|affine)_(striped|scan|scalar|myersmiller)_s(8|16|32|64)$");

template <typename F>
QString error_of(F&& f) {
    try {
        f();
    } catch (const Cancelled&) {
        return QStringLiteral("<cancelled>");
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no error>");
}

}  // namespace

class TestCpuBackends : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();

private slots:
    // parasail's 8-bit local scan kernel returns wrong, unflagged scores for long
    // queries against very short targets (found by verify); the backend must not
    // use it. Many long random queries against 1-3 residue targets, linear and
    // affine gaps, every score compared with the reference.
    void long_query_against_tiny_target() {
        std::mt19937 rng(20261121);
        std::vector<Sequence> queries, targets;
        for (int k = 0; k < 60; ++k) {
            queries.push_back({"q" + std::to_string(k), "", random_residues(rng, Kind::Dna, 1500 + rng() % 6000), ""});
            targets.push_back({"t" + std::to_string(k), "", random_residues(rng, Kind::Dna, 1 + rng() % 3), ""});
        }
        for (const auto& [open, extend] : {std::pair{2.0, 2.0}, std::pair{3.0, 1.0}, std::pair{4.0, 4.0}}) {
            PairJob job;
            job.queries = &queries;
            job.targets = &targets;
            for (std::uint32_t k = 0; k < queries.size(); ++k) job.pairs.emplace_back(k, k);
            job.scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(1, -1), open, extend);
            job.options.mode = AlignmentMode::Local;
            job.options.traceback = false;
            JobContext context;
            const auto simd = backend(*registry_, "cpu").align_pairs(job, context);
            const auto reference = backend(*registry_, "cpu-ref").align_pairs(job, context);
            for (std::size_t k = 0; k < simd.size(); ++k) {
                QCOMPARE(simd[k].score, reference[k].score);
                QCOMPARE(simd[k].query_end, reference[k].query_end);
                QCOMPARE(simd[k].target_end, reference[k].target_end);
            }
        }
    }

    void agree_with_reference_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("gaps");
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("free_ends");
        QTest::addColumn<bool>("traceback");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("count");

        std::uint32_t row = 0;
        auto add = [&row](const QString& device, Kind kind, const QString& gaps, AlignmentMode mode,
                          const QString& free, bool traceback, int threads, int count) {
            const QString name = QString("%1 %2 %3 %4%5 %6 t%7")
                                     .arg(device, kind == Kind::Dna ? "dna" : "protein", gaps,
                                          QString::fromStdString(std::string(to_string(mode))),
                                          mode == AlignmentMode::SemiGlobal ? "[" + free + "]" : QString(),
                                          traceback ? "trace" : "score")
                                     .arg(threads);
            QTest::newRow(qPrintable(name))
                << device << int(kind) << gaps << int(mode) << free << traceback << threads << count;
            ++row;
        };
        for (const QString device : {"cpu", "cpu-ref"}) {
            const int scale = device == "cpu" ? 2 : 1;  // the SIMD backend is the one under test
            for (Kind kind : {Kind::Dna, Kind::Protein})
                for (const QString gaps : {"affine", "linear", "half"})
                    for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal})
                        for (bool traceback : {true, false})
                            add(device, kind, gaps, mode, "all", traceback, traceback ? 2 : 3, 30 * scale);
            // Every combination of free end gaps, DNA (ties are common there).
            for (int bits = 0; bits < 16; ++bits) {
                QStringList ends;
                if (bits & 1) ends << "qb";
                if (bits & 2) ends << "qe";
                if (bits & 4) ends << "tb";
                if (bits & 8) ends << "te";
                const QString free = ends.isEmpty() ? "none" : ends.join(',');
                add(device, Kind::Dna, bits % 2 ? "affine" : "half", AlignmentMode::SemiGlobal, free, bits % 3 != 0, 2,
                    25 * scale);
            }
            add(device, Kind::Dna, "ednafull", AlignmentMode::Local, "all", true, 2, 40);
            add(device, Kind::Protein, "blosum45", AlignmentMode::Global, "all", true, 1, 40);
        }
    }

    // Identical score and coordinates as align_reference; with traceback a
    // CIGAR that spans the region and rescores to the score.
    void agree_with_reference() {
        QFETCH(QString, device);
        QFETCH(int, kind);
        QFETCH(QString, gaps);
        QFETCH(int, mode);
        QFETCH(QString, free_ends);
        QFETCH(bool, traceback);
        QFETCH(int, threads);
        QFETCH(int, count);

        const ScoringScheme scheme = scheme_for(Kind(kind), gaps);
        AlignOptions options;
        options.mode = AlignmentMode(mode);
        options.free_ends = FreeEndGaps::parse(free_ends.toStdString());
        options.traceback = traceback;
        const std::uint32_t seed = qHash(QString(QTest::currentDataTag()));
        const PairSet set = random_pairs(seed, Kind(kind), count, Kind(kind) == Kind::Dna ? 90 : 160);
        PairJob job = make_job(set, scheme, options, threads);

        JobContext context;
        std::vector<Alignment> results;
        const QString error = error_of([&] { results = backend(*registry_, device).align_pairs(job, context); });
        QVERIFY2(error == "<no error>", qPrintable(error));
        QCOMPARE(results.size(), job.pairs.size());
        for (std::size_t p = 0; p < job.pairs.size(); ++p) {
            const Sequence& q = set.queries[job.pairs[p].first];
            const Sequence& t = set.targets[job.pairs[p].second];
            const Alignment expected = align_reference(q.residues, t.residues, scheme, options);
            const Alignment& got = results[p];
            const QString where = pair_text(p, q, t, expected, got);
            QVERIFY2(got.score == expected.score, qPrintable(where));
            QVERIFY2(got.query_begin == expected.query_begin && got.query_end == expected.query_end &&
                         got.target_begin == expected.target_begin && got.target_end == expected.target_end,
                     qPrintable(where));
            QCOMPARE(got.query_id, q.id);
            QCOMPARE(got.target_id, t.id);
            QCOMPARE(got.device, device.toStdString());
            QCOMPARE(got.mode, options.mode);
            QCOMPARE(got.query_length, std::int64_t(q.residues.size()));
            QCOMPARE(got.target_length, std::int64_t(t.residues.size()));
            QVERIFY2(std::regex_match(got.kernel, kernel_grammar), got.kernel.c_str());
            QCOMPARE(got.has_traceback(), expected.has_traceback());
            if (!traceback) {
                QVERIFY(got.query_aligned.empty());
                QCOMPARE(got.stats.length, std::int64_t(0));
                continue;
            }
            if (!got.has_traceback()) continue;  // an empty local alignment
            QCOMPARE(got.cigar.query_span(), got.query_end - got.query_begin + 1);
            QCOMPARE(got.cigar.target_span(), got.target_end - got.target_begin + 1);
            QVERIFY2(rescore(got.cigar, q.residues, t.residues, got.query_begin, got.target_begin, scheme) == got.score,
                     qPrintable(where + " cigar " + QString::fromStdString(got.cigar.to_string())));
            QCOMPARE(got.stats.length, got.cigar.columns());
            QCOMPARE(std::int64_t(got.query_aligned.size()), got.cigar.columns());
            QCOMPARE(std::int64_t(got.target_aligned.size()), got.cigar.columns());
            if (device == "cpu-ref") QCOMPARE(got.cigar, expected.cigar);  // the very same aligner
        }
    }

    // Schemes at and past every lane width's limits: substitution scores and
    // penalties around 2^5, 2^6, 2^7, 2^13, 2^15 and up to the accepted
    // maximum (penalties 1,000,000; matrix entries 100,000), scaled matrices and
    // linear as well as affine gaps. The SIMD backend must give the 64-bit
    // reference's score and coordinates on every one, in every mode: it
    // decides from the scheme's bounds which lane width can hold the DP.
    void extreme_schemes_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("match");  // DNA: match score (mismatch -match/2 - 1); protein: BLOSUM62 multiplier
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        auto add = [](Kind kind, int match, double open, double extend) {
            for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal}) {
                const QString name = QString("%1 %2 gap %3/%4 %5")
                                         .arg(kind == Kind::Dna ? "match" : "BLOSUM62 x")
                                         .arg(match)
                                         .arg(open, 0, 'f', 1)
                                         .arg(extend, 0, 'f', 1)
                                         .arg(QString::fromStdString(std::string(to_string(mode))));
                QTest::newRow(qPrintable(name)) << int(kind) << match << open << extend << int(mode);
            }
        };
        QTest::addColumn<int>("mode");
        for (int match : {15,  16,   31,   32,   33,   63,    64,    65,    127,   128,   255,
                          256, 4095, 4096, 8191, 8192, 16384, 32767, 32768, 65536, 100000})
            add(Kind::Dna, match, 5, 2);
        for (double open : {31.0, 32.0, 63.0, 64.0, 65.0, 127.0, 128.0, 4096.0, 8191.0, 8192.0, 10000.0, 16384.0,
                            32767.0, 32768.0, 65536.0, 1000000.0}) {
            add(Kind::Dna, 2, open, open);
            add(Kind::Dna, 2, open, std::max(0.5, std::floor(open / 4)));
        }
        add(Kind::Dna, 64, 10, 0.5);
        add(Kind::Dna, 100000, 1000000, 999999.5);
        for (int times : {2, 4, 6, 8, 64, 512, 4096}) add(Kind::Protein, times, 11, 1);
        add(Kind::Protein, 64, 65536, 65536);
        add(Kind::Protein, 4096, 1000000, 1000000);
    }

    void extreme_schemes() {
        QFETCH(int, kind);
        QFETCH(int, match);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(int, mode);
        const SubstitutionMatrix matrix = Kind(kind) == Kind::Dna
                                              ? SubstitutionMatrix::match_mismatch(match, -match / 2 - 1)
                                              : SubstitutionMatrix::builtin("BLOSUM62").scaled(match);
        const ScoringScheme scheme = ScoringScheme::create(matrix, open, extend);
        const std::uint32_t seed = qHash(QString(QTest::currentDataTag()));
        const PairSet set = random_pairs(seed, Kind(kind), 24, Kind(kind) == Kind::Dna ? 70 : 90);
        for (bool traceback : {false, true}) {
            AlignOptions options;
            options.mode = AlignmentMode(mode);
            options.traceback = traceback;
            PairJob job = make_job(set, scheme, options, 2);
            JobContext context;
            std::vector<Alignment> results;
            const QString error = error_of([&] { results = backend(*registry_, "cpu").align_pairs(job, context); });
            QVERIFY2(error == "<no error>", qPrintable(error));
            QCOMPARE(results.size(), job.pairs.size());
            for (std::size_t p = 0; p < job.pairs.size(); ++p) {
                const Sequence& q = set.queries[job.pairs[p].first];
                const Sequence& t = set.targets[job.pairs[p].second];
                const Alignment expected = align_reference(q.residues, t.residues, scheme, options);
                const Alignment& got = results[p];
                const QString where = pair_text(p, q, t, expected, got) + (traceback ? " traceback" : " score-only");
                QVERIFY2(got.score == expected.score && got.query_begin == expected.query_begin &&
                             got.query_end == expected.query_end && got.target_begin == expected.target_begin &&
                             got.target_end == expected.target_end,
                         qPrintable(where));
                if (traceback && got.has_traceback())
                    QVERIFY2(rescore(got.cigar, q.residues, t.residues, got.query_begin, got.target_begin, scheme) ==
                                 got.score,
                             qPrintable(where));
            }
        }
    }

    // Long identical sequences with large match scores overflow 8- and 16-bit
    // lanes; the score is known exactly: length * match (local, global, and
    // semi-global), or the match run minus one gap when the target has an extra
    // residue block.
    void saturation_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("length");
        QTest::addColumn<int>("match");
        QTest::addColumn<int>("min_width");
        QTest::newRow("local 8->16") << int(AlignmentMode::Local) << 200 << 2 << 16;
        // parasail's local kernels keep scores biased, unsigned: 8-bit lanes
        // hold up to 255, 16-bit lanes up to 65535.
        QTest::newRow("local 16->32") << int(AlignmentMode::Local) << 4000 << 20 << 32;
        QTest::newRow("global 16->32") << int(AlignmentMode::Global) << 2500 << 30 << 32;
        QTest::newRow("semiglobal 16->32") << int(AlignmentMode::SemiGlobal) << 2000 << 40 << 32;
        QTest::newRow("local fits 8") << int(AlignmentMode::Local) << 20 << 2 << 8;
    }

    void saturation() {
        QFETCH(int, mode);
        QFETCH(int, length);
        QFETCH(int, match);
        QFETCH(int, min_width);
        std::mt19937 rng(static_cast<std::uint32_t>(length * 31 + match));
        PairSet set;
        Sequence q, t;
        q.id = "q";
        t.id = "t";
        q.residues = random_residues(rng, Kind::Dna, static_cast<std::size_t>(length));
        for (char& c : q.residues) c = "ACGT"[(c * 7) % 4];  // unambiguous: every column a match
        t.residues = q.residues;
        set.queries = {q};
        set.targets = {t};
        set.pairs = {{0, 0}};
        // The same query against a target with 5 extra residues in the middle:
        // the best alignment is every match plus one gap of 5.
        Sequence t2 = t;
        t2.id = "t2";
        t2.residues.insert(static_cast<std::size_t>(length / 2), "CCCCC");
        set.targets.push_back(t2);
        set.pairs.emplace_back(0, 1);

        const ScoringScheme scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(match, -match), 7, 1);
        AlignOptions options;
        options.mode = AlignmentMode(mode);
        options.traceback = true;
        PairJob job = make_job(set, scheme, options, 2);
        JobContext context;
        for (const QString device : {"cpu", "cpu-ref"}) {
            const auto results = backend(*registry_, device).align_pairs(job, context);
            QCOMPARE(results[0].score, std::int64_t(length) * match);
            QCOMPARE(results[1].score, std::int64_t(length) * match - scheme.gap_cost(5));
            for (const Alignment& a : results) {
                QCOMPARE(rescore(a.cigar, q.residues, a.target_id == "t" ? t.residues : t2.residues, a.query_begin,
                                 a.target_begin, scheme),
                         a.score);
                QCOMPARE(a.query_begin, std::int64_t(1));
                QCOMPARE(a.query_end, std::int64_t(length));
            }
            if (device == "cpu") {
                // The lane width that held the score, from the kernel name.
                const std::string& kernel = results[0].kernel;
                const int width = std::stoi(kernel.substr(kernel.rfind("_s") + 2));
                QVERIFY2(width >= min_width, kernel.c_str());
            }
        }
    }

    // A cancel from another thread ends the job with Cancelled within 100 ms,
    // both between many pairs and inside one huge pair.
    void cancellation_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("pairs");
        QTest::addColumn<int>("length");
        QTest::addColumn<bool>("traceback");
        QTest::newRow("cpu-ref many pairs") << "cpu-ref" << 400 << 1500 << true;
        QTest::newRow("cpu-ref one huge pair") << "cpu-ref" << 1 << 30000 << true;
        QTest::newRow("cpu many pairs") << "cpu" << 4000 << 2000 << true;
        QTest::newRow("cpu one huge pair, traceback") << "cpu" << 1 << 40000 << true;
        QTest::newRow("cpu one huge pair, score only") << "cpu" << 1 << 60000 << false;
    }

    void cancellation() {
        QFETCH(QString, device);
        QFETCH(int, pairs);
        QFETCH(int, length);
        QFETCH(bool, traceback);
        std::mt19937 rng(99);
        PairSet set;
        Sequence q, t;
        q.id = "q";
        t.id = "t";
        q.residues = random_residues(rng, Kind::Dna, static_cast<std::size_t>(length));
        t.residues = mutate(rng, Kind::Dna, q.residues, 10);
        set.queries = {q};
        set.targets = {t};
        for (int k = 0; k < pairs; ++k) set.pairs.emplace_back(0, 0);
        AlignOptions options;
        options.mode = AlignmentMode::Global;
        options.traceback = traceback;
        PairJob job = make_job(set, ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2), options, 2);

        CancellationToken token;
        JobContext context;
        context.cancel = &token;
        std::atomic<std::int64_t> thrown_at{0};
        std::atomic<bool> cancelled{false}, finished{false};
        std::jthread worker([&] {
            try {
                backend(*registry_, device).align_pairs(job, context);
                finished = true;
            } catch (const Cancelled&) {
                cancelled = true;
            }
            thrown_at = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        const std::int64_t cancel_at =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                .count();
        token.cancel();
        worker.join();
        QVERIFY2(!finished, "the job finished before it could be cancelled; make it larger");
        QVERIFY(cancelled);
        const double latency_ms = double(thrown_at - cancel_at) / 1e6;
        qInfo("%s: cancel honoured after %.1f ms", qPrintable(device), latency_ms);
        QVERIFY2(latency_ms < 100.0 * alignscope::test::kSanitizerSlowdown,
                 qPrintable(QString("took %1 ms").arg(latency_ms)));
    }

    void cancelled_before_start() {
        const PairSet set = random_pairs(5, Kind::Dna, 10, 50);
        AlignOptions options;
        PairJob job = make_job(set, scheme_for(Kind::Dna, "affine"), options, 2);
        CancellationToken token;
        token.cancel();
        JobContext context;
        context.cancel = &token;
        for (const QString device : {"cpu", "cpu-ref"})
            QVERIFY_THROWS_EXCEPTION(Cancelled, backend(*registry_, device).align_pairs(job, context));
    }

    // Events per work chunk per worker: category cpu, the backend's device,
    // lanes 0..threads-1 all used, names that are the kernels of the results,
    // cells adding up to the job's cells; progress at most every ~50 ms,
    // monotonic, ending at the totals.
    void timeline_and_progress_data() {
        QTest::addColumn<QString>("device");
        QTest::newRow("cpu") << "cpu";
        QTest::newRow("cpu-ref") << "cpu-ref";
    }

    void timeline_and_progress() {
        QFETCH(QString, device);
        const int threads = 2;
        const PairSet set = random_pairs(11, Kind::Protein, device == "cpu" ? 3000 : 600, 400);
        AlignOptions options;
        options.mode = AlignmentMode::Local;
        PairJob job = make_job(set, scheme_for(Kind::Protein, "affine"), options, threads);

        TimelineRecorder timeline;
        std::mutex mutex;
        std::vector<std::pair<std::int64_t, Progress>> reports;
        JobContext context;
        context.timeline = &timeline;
        context.progress = [&](const Progress& p) {
            std::lock_guard lock(mutex);
            reports.emplace_back(steady_now_ns(), p);
        };
        const std::int64_t start = steady_now_ns();
        const auto results = backend(*registry_, device).align_pairs(job, context);
        const std::int64_t end = steady_now_ns();

        std::set<std::string> kernels;
        for (const auto& a : results) kernels.insert(a.kernel);
        const auto events = timeline.events();
        QVERIFY(!events.empty());
        std::set<int> lanes;
        std::uint64_t cells = 0;
        for (const auto& e : events) {
            QCOMPARE(e.category, std::string("cpu"));
            QCOMPARE(e.device, device.toStdString());
            QVERIFY2(kernels.count(e.name), e.name.c_str());
            QVERIFY(e.lane >= 0 && e.lane < threads);
            QVERIFY(e.start_ns >= start && e.end_ns <= end && e.start_ns <= e.end_ns);
            lanes.insert(e.lane);
            cells += e.cells;
        }
        QCOMPARE(lanes.size(), std::size_t(threads));
        QCOMPARE(cells, job.total_cells());
        // A lane is one thread: its events do not overlap.
        for (int lane = 0; lane < threads; ++lane) {
            std::int64_t last_end = 0;
            for (const auto& e : events)
                if (e.lane == lane) {
                    QVERIFY(e.start_ns >= last_end);
                    last_end = e.end_ns;
                }
        }

        QVERIFY(!reports.empty());
        const Progress& last = reports.back().second;
        QCOMPARE(last.cells_done, job.total_cells());
        QCOMPARE(last.cells_total, job.total_cells());
        QCOMPARE(last.items_done, std::uint64_t(job.pairs.size()));
        QCOMPARE(last.items_total, std::uint64_t(job.pairs.size()));
        for (std::size_t k = 1; k < reports.size(); ++k) {
            QVERIFY(reports[k].second.cells_done >= reports[k - 1].second.cells_done);
            QVERIFY(reports[k].second.items_done >= reports[k - 1].second.items_done);
        }
        // Rate limit: every report but the final one at least ~50 ms apart.
        for (std::size_t k = 1; k + 1 < reports.size(); ++k)
            QVERIFY2(reports[k].first - reports[k - 1].first >= 45'000'000,
                     qPrintable(QString("reports %1 ms apart").arg((reports[k].first - reports[k - 1].first) / 1e6)));
        qInfo("%s: %zu events, %zu progress reports in %.0f ms", qPrintable(device), events.size(), reports.size(),
              (end - start) / 1e6);
    }

    void errors_name_device_and_pair_data() {
        QTest::addColumn<QString>("device");
        QTest::newRow("cpu") << "cpu";
        QTest::newRow("cpu-ref") << "cpu-ref";
    }

    void errors_name_device_and_pair() {
        QFETCH(QString, device);
        PairSet set = random_pairs(3, Kind::Dna, 20, 40);
        set.targets[7].residues = "ACGTJACGT";  // J is not a nucleotide
        AlignOptions options;
        PairJob job =
            make_job(set, ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5), options, 2);
        JobContext context;
        try {
            backend(*registry_, device).align_pairs(job, context);
            QFAIL("no error for an unscored residue");
        } catch (const Cancelled&) {
            QFAIL("an error came out as a cancel");
        } catch (const Error& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.startsWith(device + ": "), qPrintable(message));
            QVERIFY2(message.contains("'t7'"), qPrintable(message));
            QVERIFY2(message.contains("'J'"), qPrintable(message));
        }

        set = random_pairs(3, Kind::Dna, 5, 40);
        set.queries[2].residues.clear();
        job = make_job(set, scheme_for(Kind::Dna, "affine"), options, 1);
        try {
            backend(*registry_, device).align_pairs(job, context);
            QFAIL("no error for an empty sequence");
        } catch (const Error& e) {
            const QString message = QString::fromUtf8(e.what());
            QVERIFY2(message.startsWith(device + ": "), qPrintable(message));
            QVERIFY2(message.contains("'q2'"), qPrintable(message));
        }
    }

    // A job may force a kernel by name (--kernel): every parasail family and
    // lane width, and the reference's two, give the reference's answer and
    // carry the forced name.
    void forced_kernels_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("free_ends");
        QTest::addColumn<QString>("suffix");
        const QList<QPair<int, QString>> modes{{int(AlignmentMode::Local), "all"},
                                               {int(AlignmentMode::Global), "all"},
                                               {int(AlignmentMode::SemiGlobal), "all"},
                                               {int(AlignmentMode::SemiGlobal), "qb,te"},
                                               {int(AlignmentMode::SemiGlobal), "tb,qe"}};
        for (const auto& [mode, free] : modes) {
            const QString name =
                QString::fromStdString(std::string(to_string(AlignmentMode(mode)))) + "[" + free + "] ";
            for (const QString suffix :
                 {"striped_s8", "striped_s16", "striped_s32", "scan_s8", "scan_s16", "scan_s32"}) {
                if (mode == int(AlignmentMode::Local) && suffix == "scan_s8")
                    continue;  // refused: see forced_kernel_errors
                QTest::newRow(qPrintable(name + suffix)) << "cpu" << mode << free << suffix;
            }
            for (const QString suffix : {"scalar_s64", "myersmiller_s64"})
                QTest::newRow(qPrintable(name + suffix)) << "cpu-ref" << mode << free << suffix;
        }
    }

    void forced_kernels() {
        QFETCH(QString, device);
        QFETCH(int, mode);
        QFETCH(QString, free_ends);
        QFETCH(QString, suffix);
        const ScoringScheme scheme = scheme_for(Kind::Dna, "affine");
        AlignOptions options;
        options.mode = AlignmentMode(mode);
        options.free_ends = FreeEndGaps::parse(free_ends.toStdString());
        // Short enough that no score leaves an 8-bit lane.
        PairSet set = random_pairs(qHash(QString(QTest::currentDataTag())), Kind::Dna, 80, 12);
        for (auto* list : {&set.queries, &set.targets})
            for (Sequence& seq : *list) seq.residues.resize(std::min<std::size_t>(seq.residues.size(), 12));
        PairJob job = make_job(set, scheme, options, 2);
        const std::string prefix = (options.mode == AlignmentMode::Local    ? "sw_affine_"
                                    : options.mode == AlignmentMode::Global ? "nw_affine_"
                                                                            : "sg_affine_");
        job.kernel = prefix + suffix.toStdString();
        JobContext context;
        std::vector<Alignment> results;
        const QString error = error_of([&] { results = backend(*registry_, device).align_pairs(job, context); });
        QVERIFY2(error == "<no error>", qPrintable(error));
        for (std::size_t p = 0; p < job.pairs.size(); ++p) {
            const Sequence& q = set.queries[job.pairs[p].first];
            const Sequence& t = set.targets[job.pairs[p].second];
            const Alignment expected = align_reference(q.residues, t.residues, scheme, options);
            const Alignment& got = results[p];
            QCOMPARE(got.kernel, job.kernel);
            QCOMPARE(got.score, expected.score);
            QCOMPARE(got.query_begin, expected.query_begin);
            QCOMPARE(got.query_end, expected.query_end);
            QCOMPARE(got.target_begin, expected.target_begin);
            QCOMPARE(got.target_end, expected.target_end);
            if (got.has_traceback())
                QCOMPARE(rescore(got.cigar, q.residues, t.residues, got.query_begin, got.target_begin, scheme),
                         got.score);
        }
    }

    void forced_kernel_errors_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("gaps");
        QTest::addColumn<QString>("kernel");
        QTest::addColumn<int>("length");
        QTest::addColumn<QString>("expected");
        QTest::newRow("gpu kernel on cpu") << "cpu"
                                           << "affine"
                                           << "sw_affine_inter_s16" << 30 << "runs sw_affine_striped_s8";
        QTest::newRow("wrong mode") << "cpu"
                                    << "affine"
                                    << "nw_affine_scan_s16" << 30 << "cannot run on device cpu";
        QTest::newRow("wrong gap model") << "cpu"
                                         << "affine"
                                         << "sw_linear_scan_s16" << 30 << "sw_affine_scan_s16";
        QTest::newRow("striped with linear gaps") << "cpu"
                                                  << "linear"
                                                  << "sw_linear_striped_s16" << 30 << "wrong scores with linear gaps";
        QTest::newRow("8-bit overflow") << "cpu"
                                        << "affine"
                                        << "sw_affine_striped_s8" << 400 << "overflow its 8-bit lanes";
        QTest::newRow("parasail's broken 8-bit local scan")
            << "cpu"
            << "affine"
            << "sw_affine_scan_s8" << 30 << "8-bit local scan kernel gives wrong scores";
        QTest::newRow("parasail kernel on cpu-ref")
            << "cpu-ref"
            << "affine"
            << "sw_affine_scan_s16" << 30 << "runs sw_affine_scalar_s64, sw_affine_myersmiller_s64";
    }

    void forced_kernel_errors() {
        QFETCH(QString, device);
        QFETCH(QString, gaps);
        QFETCH(QString, kernel);
        QFETCH(int, length);
        QFETCH(QString, expected);
        PairSet set;
        Sequence q, t;
        q.id = "q";
        t.id = "t";
        q.residues = std::string(static_cast<std::size_t>(length), 'A');
        t.residues = q.residues;
        set.queries = {q};
        set.targets = {t};
        set.pairs = {{0, 0}};
        AlignOptions options;
        options.mode = AlignmentMode::Local;
        PairJob job = make_job(set, scheme_for(Kind::Dna, gaps), options, 1);
        job.kernel = kernel.toStdString();
        JobContext context;
        const QString message = error_of([&] { backend(*registry_, device).align_pairs(job, context); });
        QVERIFY2(message.contains("--kernel '" + kernel + "'"), qPrintable(message));
        QVERIFY2(message.contains(expected), qPrintable(message));
    }

    // Without begins (no traceback), `cpu` skips the reverse pass: the score
    // and end cell are still the reference's, and begins that would need that
    // pass (local; semi-global with a free begin) are 0, as on the GPU. Where
    // the alignment is anchored at (1, 1) they stay 1.
    void no_begins_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("free_ends");
        QTest::addRow("protein local") << int(Kind::Protein) << int(AlignmentMode::Local) << "all";
        QTest::addRow("dna local") << int(Kind::Dna) << int(AlignmentMode::Local) << "all";
        QTest::addRow("protein semiglobal all") << int(Kind::Protein) << int(AlignmentMode::SemiGlobal) << "all";
        QTest::addRow("dna semiglobal tb") << int(Kind::Dna) << int(AlignmentMode::SemiGlobal) << "tb";
        QTest::addRow("dna semiglobal qe,te") << int(Kind::Dna) << int(AlignmentMode::SemiGlobal) << "qe,te";
        QTest::addRow("protein global") << int(Kind::Protein) << int(AlignmentMode::Global) << "all";
    }

    void no_begins() {
        QFETCH(int, kind);
        QFETCH(int, mode);
        QFETCH(QString, free_ends);
        const ScoringScheme scheme = scheme_for(Kind(kind), "affine");
        AlignOptions options;
        options.mode = AlignmentMode(mode);
        options.free_ends = FreeEndGaps::parse(free_ends.toStdString());
        options.traceback = false;
        options.begins = false;
        const bool begins_need_pass =
            options.mode == AlignmentMode::Local || (options.mode == AlignmentMode::SemiGlobal &&
                                                     (options.free_ends.query_begin || options.free_ends.target_begin));
        // Up to 400 residues: protein scores past the 8-bit lanes as well as below.
        const PairSet set = random_pairs(qHash(QString(QTest::currentDataTag())), Kind(kind), 60, 400);
        PairJob job = make_job(set, scheme, options, 2);
        JobContext context;
        const std::vector<Alignment> results = backend(*registry_, "cpu").align_pairs(job, context);
        QCOMPARE(results.size(), job.pairs.size());
        AlignOptions with_begins = options;
        with_begins.begins = true;
        for (std::size_t p = 0; p < job.pairs.size(); ++p) {
            const Sequence& q = set.queries[job.pairs[p].first];
            const Sequence& t = set.targets[job.pairs[p].second];
            const Alignment expected = align_reference(q.residues, t.residues, scheme, with_begins);
            const Alignment& got = results[p];
            const QString where =
                QString("pair %1: expected %2 ends %3/%4 begins %5/%6, got %7 ends %8/%9 begins %10/%11")
                    .arg(p)
                    .arg(expected.score)
                    .arg(expected.query_end)
                    .arg(expected.target_end)
                    .arg(expected.query_begin)
                    .arg(expected.target_begin)
                    .arg(got.score)
                    .arg(got.query_end)
                    .arg(got.target_end)
                    .arg(got.query_begin)
                    .arg(got.target_begin);
            QVERIFY2(got.score == expected.score && got.query_end == expected.query_end &&
                         got.target_end == expected.target_end,
                     qPrintable(where));
            const std::int64_t qb = begins_need_pass ? 0 : expected.query_begin;
            const std::int64_t tb = begins_need_pass ? 0 : expected.target_begin;
            QVERIFY2(got.query_begin == qb && got.target_begin == tb, qPrintable(where));
        }
    }

    void empty_job() {
        PairSet set;
        AlignOptions options;
        PairJob job = make_job(set, scheme_for(Kind::Dna, "affine"), options, 2);
        JobContext context;
        for (const QString device : {"cpu", "cpu-ref"})
            QVERIFY(backend(*registry_, device).align_pairs(job, context).empty());
    }
};

QTEST_GUILESS_MAIN(TestCpuBackends)
#include "test_cpu_backends.moc"
