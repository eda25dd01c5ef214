// The split scanner (one scan over several devices) against brute force: the
// scalar reference aligner's score of every query of a slice of Debian's
// mmseqs2-examples data against every database sequence, with the queries
// dealt out (the default when each device holds the database) and with the
// database dealt out; the search job on it against one device; and the
// dealing itself (split_plan.hpp) on cases worked out by hand.
#include "../../engine/src/search/split_plan.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/error.hpp>
#include <alignscope/search/search.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <thread>

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

AlignOptions local_scores() {
    AlignOptions o;
    o.mode = AlignmentMode::Local;
    o.traceback = false;
    return o;
}

// ALIGNSCOPE_SPLIT_SCAN set for one scope.
class SplitWay {
public:
    explicit SplitWay(const char* way) { setenv("ALIGNSCOPE_SPLIT_SCAN", way, 1); }
    ~SplitWay() { unsetenv("ALIGNSCOPE_SPLIT_SCAN"); }
    SplitWay(const SplitWay&) = delete;
    SplitWay& operator=(const SplitWay&) = delete;
};

}  // namespace

class TestSplitScanner : public QObject {
    Q_OBJECT

    ScoringScheme scheme_ = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
    std::vector<Sequence> queries_;
    PreparedDatabase database_;
    std::vector<EncodedSequence> encoded_;
    std::vector<std::int64_t> oracle_;  // [query][position], by align_reference

    std::unique_ptr<DatabaseScanner> split_of(const std::vector<std::string>& devices) {
        auto registry = make_cpu_scanner_registry();
        std::vector<std::unique_ptr<DatabaseScanner>> parts;
        for (const std::string& d : devices) parts.push_back(registry->create(d));
        return make_split_scanner(std::move(parts));
    }

    std::vector<std::int64_t> scan_with(DatabaseScanner& scanner, std::uint64_t* cells_reported = nullptr) {
        ScanSetup setup;
        setup.scheme = scheme_;
        setup.options = local_scores();
        setup.threads = 2;
        JobContext context;
        std::atomic<std::uint64_t> last{0};
        context.progress = [&](const Progress& p) { last = p.cells_done; };
        scanner.load(database_, setup, context);
        std::vector<const EncodedSequence*> pointers;
        for (const EncodedSequence& e : encoded_) pointers.push_back(&e);
        std::vector<std::int64_t> scores(pointers.size() * database_.size(), -12345);
        scanner.scan(pointers, scores, context);
        if (cells_reported) *cells_reported = last;
        return scores;
    }

private slots:
    void initTestCase() {
        if (!std::filesystem::exists(example_data + "DB.fasta.gz"))
            QSKIP("mmseqs2-examples is not installed (scripts/check installs it)");
        // Nine queries (an odd number: a chunk may end on a single one).
        queries_ = first_records(example_data + "QUERY.fasta.gz", 9);
        database_ = pack_database(first_records(example_data + "DB.fasta.gz", 90), AlphabetKind::Protein, "DB slice");
        for (const Sequence& q : queries_) encoded_.push_back(encode(q.residues, scheme_.matrix, q.id));
        oracle_.assign(queries_.size() * database_.size(), 0);
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t k; (k = next.fetch_add(1)) < oracle_.size();) {
                const std::size_t q = k / database_.size(), p = k % database_.size();
                oracle_[k] =
                    align_reference(queries_[q].residues, database_.sequence(p).residues, scheme_, local_scores())
                        .score;
            }
        };
        std::vector<std::thread> pool;
        for (unsigned w = 0; w < std::max(1u, std::thread::hardware_concurrency()); ++w) pool.emplace_back(work);
        for (auto& t : pool) t.join();
    }

    void queries_dealt_out() {
        auto split = split_of({"cpu", "cpu", "cpu-ref"});
        std::uint64_t cells = 0;
        QCOMPARE(scan_with(*split, &cells), oracle_);
        std::uint64_t expected = 0;
        for (const Sequence& q : queries_) expected += q.residues.size() * database_.residue_count();
        QCOMPARE(split->last_stats().cells, expected);
        QCOMPARE(cells, expected);  // the last report: every cell
        // The parts' kernel names, each once.
        QStringList kernels = QString::fromStdString(split->last_stats().kernels).split(',');
        QVERIFY(!kernels.isEmpty() && !kernels.front().isEmpty());
        QCOMPARE(kernels.removeDuplicates(), qsizetype{0});
    }

    void database_dealt_out() {
        SplitWay way("sequences");
        auto split = split_of({"cpu", "cpu-ref"});
        QCOMPARE(scan_with(*split), oracle_);
    }

    void forced_queries_and_a_bad_way() {
        {
            SplitWay way("queries");
            auto split = split_of({"cpu-ref", "cpu"});
            QCOMPARE(scan_with(*split), oracle_);
        }
        SplitWay way("rows");
        auto split = split_of({"cpu", "cpu"});
        ScanSetup setup;
        setup.scheme = scheme_;
        setup.options = local_scores();
        JobContext context;
        try {
            split->load(database_, setup, context);
            QFAIL("an unknown ALIGNSCOPE_SPLIT_SCAN was taken");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("ALIGNSCOPE_SPLIT_SCAN") != std::string::npos);
        }
    }

    void search_on_a_split_scanner_keeps_query_order() {
        auto registry = make_cpu_scanner_registry();
        ScanSetup unused;
        SearchOptions search;
        search.top = 5;
        search.traceback = false;
        search.query_batch = 4;  // batches of four, each sorted by length inside
        auto run = [&](DatabaseScanner& scanner) {
            std::vector<QueryHits> hits;
            SearchCallbacks callbacks;
            callbacks.query_done = [&](const QueryHits& h) { hits.push_back(h); };
            JobContext context;
            (void)run_search(queries_, database_, scheme_, local_scores(), scanner, nullptr, search, callbacks, context,
                             2, 0, 0);
            return hits;
        };
        auto one = registry->create("cpu-ref");
        auto split = split_of({"cpu", "cpu"});
        const std::vector<QueryHits> a = run(*one), b = run(*split);
        QCOMPARE(a.size(), queries_.size());
        QCOMPARE(b.size(), queries_.size());
        for (std::size_t q = 0; q < a.size(); ++q) {
            QCOMPARE(a[q].query_index, q);
            QCOMPARE(b[q].query_index, q);
            QCOMPARE(a[q].hits.size(), b[q].hits.size());
            for (std::size_t k = 0; k < a[q].hits.size(); ++k) {
                QCOMPARE(a[q].hits[k].position, b[q].hits[k].position);
                QCOMPARE(a[q].hits[k].score, oracle_[q * database_.size() + a[q].hits[k].position]);
            }
        }
    }

    void plan_holds_whole() {
        // 80 GB: budget 64 GB, 3 GiB of it kept for the scan's working memory.
        QVERIFY(split::holds_whole(90'600'000, 200'000, 80'000'000'000ull, 0));
        QVERIFY(!split::holds_whole(70'000'000'000ull, 1'000, 80'000'000'000ull, 0));
        // A budget of 1 GB keeps a third for working memory: 666 MB for the database.
        QVERIFY(split::holds_whole(600'000'000, 1'000, 80'000'000'000ull, 1'000'000'000));
        QVERIFY(!split::holds_whole(700'000'000, 1'000, 80'000'000'000ull, 1'000'000'000));
        QVERIFY(split::holds_whole(1ull << 40, 1, 0, 0));  // host memory
    }

    void plan_chunks() {
        // Two devices, 100 queries of 1 cell: the first chunk is a quarter of
        // the cells (25, made even: 26), each next a quarter of what is left
        // (74 / 4: 18), never below a 32nd of the whole (3 cells, made even:
        // 4), the last what remains (2).
        const std::vector<std::uint64_t> cells(100, 1);
        const auto chunks = split::query_chunks(cells, 2);
        QCOMPARE(chunks.front(), std::make_pair(std::size_t{0}, std::size_t{26}));
        QCOMPARE(chunks[1], std::make_pair(std::size_t{26}, std::size_t{44}));
        std::size_t next = 0;
        std::size_t previous = 1000;
        for (const auto& [first, end] : chunks) {
            QCOMPARE(first, next);
            QVERIFY(end > first);
            QVERIFY(end - first <= previous);                        // never growing
            QVERIFY((end - first) % 2 == 0 || end == cells.size());  // pairs of queries
            previous = end - first;
            next = end;
        }
        QCOMPARE(next, cells.size());
        QCOMPARE(chunks.size(), std::size_t{11});
        QCOMPARE(chunks[9], std::make_pair(std::size_t{94}, std::size_t{98}));
        QCOMPARE(chunks.back(), std::make_pair(std::size_t{98}, std::size_t{100}));
        // One huge query is a chunk of its own and one more to pair with it.
        const auto lone = split::query_chunks({1, 1000, 1, 1}, 2);
        QCOMPARE(lone.front(), std::make_pair(std::size_t{0}, std::size_t{2}));
        QVERIFY(split::query_chunks({}, 3).empty());
    }
};

QTEST_GUILESS_MAIN(TestSplitScanner)
#include "test_split_scanner.moc"
