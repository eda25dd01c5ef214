// Database search on the CPU scanners against brute force: every query of a
// slice of Debian's mmseqs2-examples data aligned by the scalar reference
// aligner (align_reference) against every database sequence, and the top K
// of the scanners compared with it (ties at the K-th score in any order).
// Also: the search job's hits and alignments, the E-value and score filters,
// the letters BLOSUM62 scores beyond the 20 amino acids (B, Z, X, *, and U, O,
// J through their stand-ins), the tie rule of top_positions, cancellation,
// the split scanner and the --device grammar of the scanner registry.
#include "oracles.hpp"
#include "sanitizers.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>
#include <tuple>

using namespace alignscope;

namespace {

const std::string example_data = "/usr/share/doc/mmseqs2/example-data/";

std::vector<Sequence> first_records(const std::string& path, std::size_t count) {
    ReadOptions options;
    options.alphabet = AlphabetKind::Protein;
    std::vector<Sequence> records = read_sequences(path, options).records;
    if (records.size() > count) records.resize(count);
    return records;
}

ScoringScheme blosum62(double open, double extend) {
    return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), open, extend);
}

AlignOptions local_scores() {
    AlignOptions o;
    o.mode = AlignmentMode::Local;
    o.traceback = false;
    return o;
}

// scores[q][file index] by the scalar reference aligner, on every core.
std::vector<std::vector<std::int64_t>> brute_force(const std::vector<Sequence>& queries,
                                                   const std::vector<Sequence>& targets, const ScoringScheme& scheme) {
    std::vector<std::vector<std::int64_t>> scores(queries.size(), std::vector<std::int64_t>(targets.size()));
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t k; (k = next.fetch_add(1)) < queries.size() * targets.size();) {
            const std::size_t q = k / targets.size(), t = k % targets.size();
            scores[q][t] = align_reference(queries[q].residues, targets[t].residues, scheme, local_scores()).score;
        }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < std::max(1u, std::thread::hardware_concurrency()); ++w) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    return scores;
}

std::vector<std::int64_t> scan_all(const std::string& device, const std::vector<Sequence>& queries,
                                   const PreparedDatabase& db, const ScoringScheme& scheme,
                                   const AlignOptions& options = local_scores()) {
    auto registry = make_cpu_scanner_registry();
    auto scanner = registry->create(device);
    ScanSetup setup;
    setup.scheme = scheme;
    setup.options = options;
    JobContext context;
    scanner->load(db, setup, context);
    std::vector<EncodedSequence> encoded;
    for (const Sequence& q : queries) encoded.push_back(encode(q.residues, scheme.matrix, q.id));
    std::vector<const EncodedSequence*> pointers;
    for (const auto& e : encoded) pointers.push_back(&e);
    std::vector<std::int64_t> scores(queries.size() * db.size());
    scanner->scan(pointers, scores, context);
    return scores;
}

}  // namespace

class TestSearchTopK : public QObject {
    Q_OBJECT

    std::vector<Sequence> queries_, targets_;
    PreparedDatabase database_;
    std::vector<std::vector<std::int64_t>> oracle_;  // BLOSUM62 11/1, by file index
    ScoringScheme scheme_ = blosum62(11, 1);

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_ORACLE(std::filesystem::exists(example_data + "DB.fasta.gz"),
                                  "mmseqs2-examples is not installed (scripts/check installs it)");
        queries_ = first_records(example_data + "QUERY.fasta.gz", 10);
        targets_ = first_records(example_data + "DB.fasta.gz", 1000);
        // A database sequence among the queries: its best hit is itself.
        queries_.push_back(targets_[123]);
        database_ = pack_database(targets_, AlphabetKind::Protein, "DB.fasta.gz slice");
        oracle_ = brute_force(queries_, targets_, scheme_);
    }

    void topKEqualsBruteForce_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("k");
        QTest::newRow("cpu (parasail) top 10") << "cpu" << 10;
        QTest::newRow("cpu (parasail) top 1") << "cpu" << 1;
        QTest::newRow("cpu (parasail) top 50") << "cpu" << 50;
        QTest::newRow("cpu-ref top 10") << "cpu-ref" << 10;
    }
    void topKEqualsBruteForce() {
        QFETCH(QString, device);
        QFETCH(int, k);
        const auto scores = scan_all(device.toStdString(), queries_, database_, scheme_);
        for (std::size_t q = 0; q < queries_.size(); ++q) {
            const std::span<const std::int64_t> row(scores.data() + q * database_.size(), database_.size());
            // Every score, not only the best, equals brute force.
            for (std::size_t p = 0; p < database_.size(); ++p)
                QCOMPARE(static_cast<std::int64_t>(row[p]), oracle_[q][database_.file_index[p]]);
            const auto top = top_positions(row, database_, static_cast<std::size_t>(k));
            std::vector<std::int64_t> expected(oracle_[q]);
            std::sort(expected.begin(), expected.end(), std::greater<>());
            expected.resize(static_cast<std::size_t>(k));
            QCOMPARE(top.size(), static_cast<std::size_t>(k));
            for (std::size_t r = 0; r < top.size(); ++r) QCOMPARE(static_cast<std::int64_t>(row[top[r]]), expected[r]);
            // Above the K-th score the hit set is unique: it must match.
            const std::int64_t kth = expected.back();
            std::set<std::uint32_t> above_expected, above_found;
            for (std::size_t t = 0; t < targets_.size(); ++t)
                if (oracle_[q][t] > kth) above_expected.insert(static_cast<std::uint32_t>(t));
            for (std::size_t p : top)
                if (row[p] > kth) above_found.insert(database_.file_index[p]);
            QCOMPARE(above_found, above_expected);
        }
        // The database sequence used as a query finds itself first.
        const auto& self = scores;
        const std::span<const std::int64_t> last(self.data() + (queries_.size() - 1) * database_.size(),
                                                 database_.size());
        QCOMPARE(database_.file_index[top_positions(last, database_, 1).front()], 123u);
    }

    void searchJobAlignsTheHits() {
        auto scanners = make_cpu_scanner_registry();
        auto scanner = scanners->create("cpu");
        auto devices = make_cpu_registry();
        Backend& aligner = devices->select("cpu");
        const std::vector<Sequence> some(queries_.begin() + 6, queries_.end());
        SearchOptions options;
        options.top = 5;
        options.query_batch = 2;  // several scan calls
        std::vector<std::size_t> order;
        SearchCallbacks callbacks;
        std::vector<QueryHits> results;
        callbacks.query_done = [&](const QueryHits& hits) { results.push_back(hits); };
        JobContext context;
        std::vector<Progress> progress;
        context.progress = [&](const Progress& p) { progress.push_back(p); };
        AlignOptions local;
        local.mode = AlignmentMode::Local;
        const SearchSummary summary =
            run_search(some, database_, scheme_, local, *scanner, &aligner, options, callbacks, context);
        QCOMPARE(results.size(), some.size());
        QVERIFY(summary.statistics.has_value());
        QCOMPARE(summary.hits, static_cast<std::uint64_t>(5 * some.size()));
        QVERIFY(!progress.empty());
        QCOMPARE(progress.back().items_done, static_cast<std::uint64_t>(some.size()));
        QCOMPARE(progress.back().cells_done, progress.back().cells_total);
        for (std::size_t r = 0; r < results.size(); ++r) {
            QCOMPARE(results[r].query_index, r);
            const Sequence& q = some[r];
            const std::size_t oracle_row = r + 6;
            std::int64_t previous = INT64_MAX;
            for (std::size_t h = 0; h < results[r].hits.size(); ++h) {
                const SearchHit& hit = results[r].hits[h];
                QCOMPARE(hit.rank, static_cast<int>(h + 1));
                QVERIFY(hit.score <= previous);
                previous = hit.score;
                QCOMPARE(hit.score, oracle_[oracle_row][hit.file_index]);
                const Alignment& a = hit.alignment;
                QCOMPARE(a.score, hit.score);
                QVERIFY(a.has_traceback());
                const Sequence& t = targets_[hit.file_index];
                QCOMPARE(a.target_id, t.id);
                QCOMPARE(a.query_id, q.id);
                QCOMPARE(rescore(a.cigar, q.residues, t.residues, a.query_begin, a.target_begin, scheme_), a.score);
                // Bits and E-value by the formula, with BLOSUM62 11/1's published
                // parameters (BLAST existence 10, extension 1).
                const double lambda = 0.243, K = 0.024;
                QVERIFY(std::abs(*hit.bits - (lambda * hit.score - std::log(K)) / std::log(2.0)) < 1e-9);
                const double e = K * q.residues.size() * database_.residue_count() * std::exp(-lambda * hit.score);
                QVERIFY(std::abs(*hit.evalue - e) <= 1e-9 * e);
            }
        }
        QCOMPARE(results.back().hits.front().file_index, 123u);
    }

    void filtersDropWeakHits() {
        auto scanners = make_cpu_scanner_registry();
        auto scanner = scanners->create("cpu");
        AlignOptions local;
        local.mode = AlignmentMode::Local;
        const std::vector<Sequence> one{queries_[0]};
        std::vector<QueryHits> results;
        SearchCallbacks callbacks;
        callbacks.query_done = [&](const QueryHits& hits) { results.push_back(hits); };
        JobContext context;
        SearchOptions options;
        options.top = 1000;
        options.traceback = false;
        options.min_score = 40;
        run_search(one, database_, scheme_, local, *scanner, nullptr, options, callbacks, context);
        std::size_t expected = 0;
        for (std::int64_t s : oracle_[0]) expected += s >= 40 ? 1 : 0;
        QCOMPARE(results.at(0).hits.size(), expected);
        for (const SearchHit& hit : results[0].hits) QVERIFY(hit.score >= 40);

        results.clear();
        options.min_score.reset();
        options.max_evalue = 1.0;
        run_search(one, database_, scheme_, local, *scanner, nullptr, options, callbacks, context);
        const double lambda = 0.243, K = 0.024;
        expected = 0;
        for (std::int64_t s : oracle_[0])
            expected += K * queries_[0].residues.size() * database_.residue_count() * std::exp(-lambda * s) <= 1.0;
        QCOMPARE(results.at(0).hits.size(), expected);
    }

    void evalueNeedsStatistics() {
        auto scanners = make_cpu_scanner_registry();
        auto scanner = scanners->create("cpu");
        AlignOptions global;
        global.mode = AlignmentMode::Global;
        SearchOptions options;
        options.max_evalue = 1e-3;
        options.traceback = false;
        JobContext context;
        QVERIFY_THROWS_EXCEPTION(Error, run_search({queries_[0]}, database_, scheme_, global, *scanner, nullptr,
                                                   options, {}, context));
    }

    void rareLettersScoredByTheMatrix_data() {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("target");
        QTest::addColumn<int>("score");  // BLOSUM62, by hand
        QTest::newRow("B and Z have rows") << "WBZW"
                                           << "WBZW" << 11 + 4 + 4 + 11;
        QTest::newRow("X has a row") << "WXW"
                                     << "WXW" << 11 - 1 + 11;
        QTest::newRow("stop has a row") << "W*W"
                                        << "W*W" << 11 + 1 + 11;
        QTest::newRow("U is scored as C") << "UUU"
                                          << "CCC" << 27;
        QTest::newRow("O is scored as K") << "OOO"
                                          << "KKK" << 15;
        QTest::newRow("J is scored as X") << "WJW"
                                          << "WXW" << 11 - 1 + 11;
        QTest::newRow("B against D") << "WBW"
                                     << "WDW" << 11 + 4 + 11;
    }
    void rareLettersScoredByTheMatrix() {
        QFETCH(QString, query);
        QFETCH(QString, target);
        QFETCH(int, score);
        const std::vector<Sequence> q{{"q", "", query.toStdString(), ""}};
        const PreparedDatabase db = pack_database({{"t", "", target.toStdString(), ""}, {"other", "", "GGGG", ""}},
                                                  AlphabetKind::Protein, "letters");
        for (const char* device : {"cpu", "cpu-ref"}) {
            const auto scores = scan_all(device, q, db, blosum62(11, 1));
            QCOMPARE(scores[db.file_index[0] == 0 ? 0 : 1], score);
        }
    }

    // parasail 2.6's 8-bit sw_scan overestimates some linear-gap scores of long
    // queries (found by `search --verify` on a GPU run: a 2,049-residue query
    // against sequences of 40-100 residues, gap 4/4); the cpu scanner starts
    // linear gaps at 16 bits. The scalar reference decides.
    void linearGapsMatchTheReference() {
        SeededRandom random(7);
        const std::vector<Sequence> q{{"long", "", random_residues(random, AlphabetKind::Protein, 2049), ""}};
        std::vector<Sequence> records;
        for (int k = 0; k < 400; ++k)
            records.push_back({"s" + std::to_string(k), "",
                               random_residues(random, AlphabetKind::Protein, random.between(30, 120)), ""});
        const PreparedDatabase db = pack_database(records, AlphabetKind::Protein, "linear");
        const ScoringScheme linear = blosum62(4, 4);
        const auto fast = scan_all("cpu", q, db, linear);
        for (std::size_t p = 0; p < db.size(); ++p) {
            const auto ref = align_reference(q[0].residues, db.residues_of(p), linear, local_scores()).score;
            QCOMPARE(static_cast<std::int64_t>(fast[p]), ref);
        }
    }

    // Schemes at and past every lane width's limits (BLOSUM62 scaled up to
    // x4096, penalties up to the accepted 1,000,000, linear and affine) in
    // every mode: the SIMD scanner must give the 64-bit reference's scores.
    void extremeSchemesMatchTheReference_data() {
        QTest::addColumn<int>("times");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<int>("mode");
        const std::vector<std::tuple<int, double, double>> schemes{{64, 11, 1},       {2, 11, 1},
                                                                   {4, 11, 1},        {1, 32768, 32768},
                                                                   {1, 65536, 65536}, {1, 1000000, 1000000},
                                                                   {1, 1000000, 1},   {1, 5000, 5000},
                                                                   {1, 40, 40},       {16, 64, 64},
                                                                   {512, 11, 1},      {4096, 1000000, 1000000}};
        for (const auto& [times, open, extend] : schemes)
            for (AlignmentMode mode : {AlignmentMode::Local, AlignmentMode::Global, AlignmentMode::SemiGlobal})
                QTest::newRow(qPrintable(QString("BLOSUM62 x%1 gap %2/%3 %4")
                                             .arg(times)
                                             .arg(open)
                                             .arg(extend)
                                             .arg(QString::fromStdString(std::string(to_string(mode))))))
                    << times << open << extend << int(mode);
    }

    void extremeSchemesMatchTheReference() {
        QFETCH(int, times);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(int, mode);
        SeededRandom random(static_cast<std::uint64_t>(qHash(QString(QTest::currentDataTag()))));
        std::vector<Sequence> q;
        for (int k = 0; k < 2; ++k)
            q.push_back({"q" + std::to_string(k), "",
                         random_residues(random, AlphabetKind::Protein, random.between(1, 120)), ""});
        std::vector<Sequence> records;
        for (int k = 0; k < 40; ++k)
            records.push_back({"s" + std::to_string(k), "",
                               random_residues(random, AlphabetKind::Protein, random.between(1, 120)), ""});
        records.push_back({"same", "", q[0].residues, ""});
        const PreparedDatabase db = pack_database(records, AlphabetKind::Protein, "extreme");
        const ScoringScheme scheme =
            ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62").scaled(times), open, extend);
        AlignOptions options = local_scores();
        options.mode = AlignmentMode(mode);
        const auto fast = scan_all("cpu", q, db, scheme, options);
        for (std::size_t k = 0; k < q.size(); ++k)
            for (std::size_t p = 0; p < db.size(); ++p) {
                const auto ref = align_reference(q[k].residues, db.residues_of(p), scheme, options).score;
                QVERIFY2(static_cast<std::int64_t>(fast[k * db.size() + p]) == ref,
                         qPrintable(QString("query %1 vs %2: cpu %3, reference %4")
                                        .arg(k)
                                        .arg(QString::fromStdString(db.ids[p]))
                                        .arg(fast[k * db.size() + p])
                                        .arg(ref)));
            }
    }

    void topPositionsBreaksTiesByRecordOrder() {
        // Lengths 1..6 give the sorted order; file indices are reversed.
        std::vector<Sequence> records;
        for (int k = 6; k >= 1; --k)
            records.push_back({"s" + std::to_string(k), "", std::string(static_cast<std::size_t>(k), 'A'), ""});
        const PreparedDatabase db = pack_database(records, AlphabetKind::Protein, "ties");
        QCOMPARE(db.file_index.front(), 5u);  // the shortest is the last record
        // Scores by position: equal pairs.
        const std::vector<std::int64_t> scores{7, 9, 9, 3, 7, 1};
        const auto top = top_positions(scores, db, 3);
        QCOMPARE(top.size(), std::size_t{3});
        // 9 at positions 1 and 2 (files 4 and 3): file 3 first.
        QCOMPARE(db.file_index[top[0]], 3u);
        QCOMPARE(db.file_index[top[1]], 4u);
        QCOMPARE(scores[top[2]], 7);
        QCOMPARE(db.file_index[top[2]], 1u);  // 7 at files 5 and 1: file 1
        QCOMPARE(top_positions(scores, db, 100).size(), std::size_t{6});
        QCOMPARE(top_positions(scores, db, 100, std::int64_t{8}).size(), std::size_t{2});
        QVERIFY(top_positions(scores, db, 0).empty());
        // Many candidates: the running threshold must not lose any.
        std::vector<Sequence> many;
        for (int k = 0; k < 5000; ++k) many.push_back({"m" + std::to_string(k), "", "A", ""});
        const PreparedDatabase big = pack_database(many, AlphabetKind::Protein, "many");
        std::vector<std::int64_t> values(5000);
        for (int k = 0; k < 5000; ++k) values[static_cast<std::size_t>(k)] = (k * 7919) % 1000;
        const auto best = top_positions(values, big, 20);
        std::vector<std::int64_t> sorted(values);
        std::sort(sorted.begin(), sorted.end(), std::greater<>());
        for (std::size_t r = 0; r < 20; ++r) QCOMPARE(values[best[r]], sorted[r]);
    }

    void splitScannerMergesParts() {
        auto registry = make_cpu_scanner_registry();
        std::vector<std::unique_ptr<DatabaseScanner>> parts;
        parts.push_back(registry->create("cpu"));
        parts.push_back(registry->create("cpu"));
        parts.push_back(registry->create("cpu-ref"));
        auto split = make_split_scanner(std::move(parts));
        ScanSetup setup;
        setup.scheme = scheme_;
        setup.options = local_scores();
        JobContext context;
        split->load(database_, setup, context);
        const std::vector<Sequence> some(queries_.begin(), queries_.begin() + 3);
        std::vector<EncodedSequence> encoded;
        for (const Sequence& q : some) encoded.push_back(encode(q.residues, scheme_.matrix, q.id));
        std::vector<const EncodedSequence*> pointers{&encoded[0], &encoded[1], &encoded[2]};
        std::vector<std::int64_t> scores(3 * database_.size());
        split->scan(pointers, scores, context);
        for (std::size_t q = 0; q < 3; ++q)
            for (std::size_t p = 0; p < database_.size(); ++p)
                QCOMPARE(static_cast<std::int64_t>(scores[q * database_.size() + p]),
                         oracle_[q][database_.file_index[p]]);
        QCOMPARE(split->last_stats().cells,
                 (some[0].residues.size() + some[1].residues.size() + some[2].residues.size()) *
                     database_.residue_count());
    }

    void cancellationStopsTheScanQuickly() {
        auto registry = make_cpu_scanner_registry();
        auto scanner = registry->create("cpu-ref");
        ScanSetup setup;
        setup.scheme = scheme_;
        setup.options = local_scores();
        setup.threads = 2;
        CancellationToken token;
        JobContext context;
        context.cancel = &token;
        scanner->load(database_, setup, context);
        std::vector<EncodedSequence> encoded;
        for (const Sequence& q : queries_) encoded.push_back(encode(q.residues, scheme_.matrix, q.id));
        std::vector<const EncodedSequence*> pointers;
        for (int r = 0; r < 20; ++r)  // about a minute of scalar work if not cancelled
            for (const auto& e : encoded) pointers.push_back(&e);
        std::vector<std::int64_t> scores(pointers.size() * database_.size());
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            token.cancel();
        });
        const auto start = std::chrono::steady_clock::now();
        bool cancelled = false;
        try {
            scanner->scan(pointers, scores, context);
        } catch (const Cancelled&) {
            cancelled = true;
        }
        canceller.join();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        QVERIFY(cancelled);
        // Cancelled at 0.3 s: honoured within a second (longer under a sanitizer).
        QVERIFY2(seconds < 0.3 + 1.0 * alignscope::test::kSanitizerSlowdown,
                 qPrintable(QString("took %1 s").arg(seconds)));
    }

    void registryGrammar() {
        auto registry = make_cpu_scanner_registry();
        QCOMPARE(registry->resolve("auto"), std::vector<std::string>{"cpu"});
        QCOMPARE(registry->resolve(" CPU-ref "), std::vector<std::string>{"cpu-ref"});
        QVERIFY_THROWS_EXCEPTION(Error, registry->resolve("gpu"));
        QVERIFY_THROWS_EXCEPTION(Error, registry->resolve("gpu:0,1"));
        try {
            (void)registry->create("tpu:3");
            QFAIL("an unknown device was accepted");
        } catch (const Error& e) {
            const std::string message = e.what();
            QVERIFY2(message.find("--device") != std::string::npos && message.find("cpu-ref") != std::string::npos,
                     e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestSearchTopK)
#include "test_search_topk.moc"
