// The prepared-database cache: built on first use, loaded (not parsed) on the
// next, and detected and rebuilt - never trusted - when the FASTA changed
// (size, modification time, or content with both kept) or the cache itself is
// damaged (truncated, a byte flipped anywhere, a wrong magic, a cache for
// another alphabet). A cache whose checksum is right but whose contents no
// parse could produce (a header claiming billions of sequences, residues not
// of its alphabet, an empty sequence, ids and descriptions the reader never
// makes) is rebuilt too, without allocating for the header's claims. Also:
// what a loaded database holds equals a fresh parse, length order and record
// order, partitions, subsets and encoding errors.
#include "crc32.hpp"

#include <alignscope/error.hpp>
#include <alignscope/search/database.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

using namespace alignscope;

namespace {

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Sets the file's modification time, to the nanosecond.
void set_mtime(const std::string& path, const timespec& when) {
    const timespec times[2] = {when, when};
    QVERIFY(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

timespec mtime_of(const std::string& path) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    return st.st_mtim;
}

const char* fasta_text =
    ">long first record\nMKVLAAGIVGLLLAAPAQA\nWYWYWYWY\n"
    ">short\nMK\n"
    ">mid with words in the description\nACDEFGHIKLMNPQ\n"
    ">tie-a\nMKV\n"
    ">tie-b\nWWW\n"
    ">rare letters\nBZXUOJ*KL\n";

// The cache's checksum (the 4 bytes before the end marker) made right again.
void forge_checksum(std::string& cache) {
    const std::size_t body = cache.size() - 8;
    const std::uint32_t crc = crc32_of(cache.data(), body);
    std::memcpy(cache.data() + body, &crc, 4);
}

// Virtual memory of this process in bytes (/proc/self/statm), 0 when unknown.
std::uint64_t virtual_bytes() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t pages = 0;
    statm >> pages;
    return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

bool same_database(const PreparedDatabase& a, const PreparedDatabase& b) {
    return a.alphabet == b.alphabet && a.residues == b.residues && a.offsets == b.offsets &&
           a.file_index == b.file_index && a.ids == b.ids && a.descriptions == b.descriptions;
}

}  // namespace

class TestSearchCache : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string fasta_;

    PreparedDatabaseLoad load(DatabaseCacheOptions options = {}) { return prepare_database(fasta_, options); }

private slots:
    void init() {
        fasta_ = dir_.filePath("db.fa").toStdString();
        write_bytes(fasta_, fasta_text);
        std::filesystem::remove(database_cache_path(fasta_));
    }

    void firstUseBuildsThenLoads() {
        const PreparedDatabaseLoad first = load();
        QCOMPARE(first.outcome, CacheOutcome::Built);
        QCOMPARE(first.cache_path, fasta_ + ".alsdb");
        QVERIFY(std::filesystem::exists(first.cache_path));
        const PreparedDatabaseLoad second = load();
        QCOMPARE(second.outcome, CacheOutcome::Loaded);
        QVERIFY(same_database(first.database, second.database));
        // And both equal what the reader gives, sorted by length, ties in file order.
        const SequenceSet set = read_sequences(fasta_);
        const PreparedDatabase& db = second.database;
        QCOMPARE(db.size(), set.records.size());
        for (std::size_t p = 0; p < db.size(); ++p) {
            const Sequence& r = set.records[db.file_index[p]];
            QCOMPARE(std::string(db.residues_of(p)), r.residues);
            QCOMPARE(db.ids[p], r.id);
            QCOMPARE(db.descriptions[p], r.description);
            if (p) QVERIFY(db.length(p - 1) <= db.length(p));
        }
        QCOMPARE(db.ids[0], std::string("short"));
        QCOMPARE(db.ids[1], std::string("tie-a"));  // tie with tie-b: file order
        QCOMPARE(db.ids[2], std::string("tie-b"));
        QCOMPARE(db.ids.back(), std::string("long"));
        QCOMPARE(db.residue_count(), std::uint64_t{19 + 8 + 2 + 14 + 3 + 3 + 9});  // an inner '*' is a residue
        QCOMPARE(db.alphabet, AlphabetKind::Protein);
    }

    void staleCachesAreRebuilt_data() {
        QTest::addColumn<QString>("change");
        QTest::newRow("modification time") << "touch";
        QTest::newRow("appended record") << "append";
        QTest::newRow("same size and time, other content") << "content";
    }
    void staleCachesAreRebuilt() {
        QFETCH(QString, change);
        QCOMPARE(load().outcome, CacheOutcome::Built);
        const timespec before = mtime_of(fasta_);
        if (change == "touch") {
            timespec later = before;
            later.tv_nsec = (later.tv_nsec + 1) % 1000000000;
            set_mtime(fasta_, later);
        } else if (change == "append") {
            std::ofstream(fasta_, std::ios::app) << ">extra\nMMMM\n";
        } else {
            std::string text = fasta_text;
            text[text.find("MKVLAA")] = 'A';  // one residue, same size
            write_bytes(fasta_, text);
            set_mtime(fasta_, before);
        }
        const PreparedDatabaseLoad again = load();
        QCOMPARE(again.outcome, CacheOutcome::Rebuilt);
        QVERIFY2(again.reason.find("stale") != std::string::npos, again.reason.c_str());
        QVERIFY(same_database(again.database,
                              pack_database(read_sequences(fasta_).records, AlphabetKind::Protein, fasta_)));
        QCOMPARE(load().outcome, CacheOutcome::Loaded);  // and the rebuilt cache is good
    }

    void damagedCachesAreRebuilt_data() {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<int>("where");  // byte offset, or -1 for every byte in turn (sampled)
        QTest::newRow("truncated to half") << "truncate" << 0;
        QTest::newRow("truncated by one byte") << "truncate-1" << 0;
        QTest::newRow("empty") << "empty" << 0;
        QTest::newRow("bad magic") << "flip" << 0;
        QTest::newRow("flipped byte in the header") << "flip" << 20;
        QTest::newRow("flipped byte in the offsets") << "flip" << 70;
        QTest::newRow("flipped byte in the residues") << "flip" << -2;
        QTest::newRow("flipped byte in the checksum") << "flip" << -1;
        QTest::newRow("extra byte at the end") << "append" << 0;
    }
    void damagedCachesAreRebuilt() {
        QFETCH(QString, damage);
        QFETCH(int, where);
        const PreparedDatabaseLoad good = load();
        std::string bytes = read_bytes(good.cache_path);
        QVERIFY(bytes.size() > 100);
        if (damage == "truncate") bytes.resize(bytes.size() / 2);
        else if (damage == "truncate-1")
            bytes.pop_back();
        else if (damage == "empty")
            bytes.clear();
        else if (damage == "append")
            bytes.push_back('\0');
        else {
            const std::size_t at = where >= 0    ? static_cast<std::size_t>(where)
                                   : where == -1 ? bytes.size() - 6
                                                 : bytes.find("MKVLAAG");
            bytes[at] = static_cast<char>(bytes[at] ^ 0x10);
        }
        write_bytes(good.cache_path, bytes);
        const PreparedDatabaseLoad again = load();
        QCOMPARE(again.outcome, CacheOutcome::Rebuilt);
        QVERIFY2(again.reason.find("damaged") != std::string::npos, again.reason.c_str());
        QVERIFY(same_database(again.database, good.database));
        QCOMPARE(load().outcome, CacheOutcome::Loaded);
    }

    void everyFlippedByteIsCaught() {
        const PreparedDatabaseLoad good = load();
        const std::string original = read_bytes(good.cache_path);
        for (std::size_t at = 0; at < original.size(); at += 7) {
            std::string bytes = original;
            bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
            write_bytes(good.cache_path, bytes);
            const PreparedDatabaseLoad again = load();
            QVERIFY2(again.outcome == CacheOutcome::Rebuilt, qPrintable(QString("byte %1 was trusted").arg(at)));
            QVERIFY(same_database(again.database, good.database));
        }
    }

    // A header claiming more sequences than the file holds, with a right
    // checksum: rejected before anything is allocated for the claim (the
    // address space is limited to 1 GiB more than in use while it loads; the
    // offsets of 2^32 - 1 sequences alone would take 32 GiB).
    void impossibleCountsAreRejectedBeforeAllocating_data() {
        QTest::addColumn<qulonglong>("count");
        QTest::newRow("2^32 - 1 sequences") << qulonglong(0xFFFFFFFFull);
        QTest::newRow("2^28 sequences") << qulonglong(1ull << 28);
        QTest::newRow("one more than there are") << qulonglong(7);
    }
    void impossibleCountsAreRejectedBeforeAllocating() {
        QFETCH(qulonglong, count);
        const PreparedDatabaseLoad good = load();
        std::string bytes = read_bytes(good.cache_path);
        const std::uint64_t claimed = count;
        std::memcpy(bytes.data() + 40, &claimed, 8);
        forge_checksum(bytes);
        write_bytes(good.cache_path, bytes);
        rlimit before{};
        QVERIFY(::getrlimit(RLIMIT_AS, &before) == 0);
        const std::uint64_t in_use = virtual_bytes();
        QVERIFY(in_use > 0);
        rlimit limited = before;
        limited.rlim_cur = std::min<rlim_t>(before.rlim_max, in_use + (1ull << 30));
        QVERIFY(::setrlimit(RLIMIT_AS, &limited) == 0);
        PreparedDatabaseLoad again;
        std::string failure;
        try {
            again = load();
        } catch (const std::bad_alloc&) {
            failure = "the loader allocated for the header's count";
        } catch (const std::exception& e) {
            failure = e.what();
        }
        QVERIFY(::setrlimit(RLIMIT_AS, &before) == 0);
        QVERIFY2(failure.empty(), failure.c_str());
        QCOMPARE(again.outcome, CacheOutcome::Rebuilt);
        QVERIFY2(again.reason.find("damaged") != std::string::npos, again.reason.c_str());
        QVERIFY(same_database(again.database, good.database));
        QCOMPARE(load().outcome, CacheOutcome::Loaded);
    }

    // Contents no parse produces, behind a right checksum: rebuilt, never used.
    void forgedContentsAreRebuilt_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QByteArray>("find");     // bytes in the cache...
        QTest::addColumn<int>("at");              // ...this far into them...
        QTest::addColumn<QByteArray>("replace");  // ...become these
        QTest::newRow("a NUL residue") << "residue" << QByteArray("MKMKVWWW") << 2 << QByteArray("\0", 1);
        QTest::newRow("a lower-case residue") << "residue" << QByteArray("MKMKVWWW") << 2 << QByteArray("m");
        QTest::newRow("a gap residue") << "residue" << QByteArray("MKMKVWWW") << 0 << QByteArray("-");
        QTest::newRow("a control byte residue") << "residue" << QByteArray("MKMKVWWW") << 4 << QByteArray("\x01", 1);
        QTest::newRow("a blank in an id") << "name" << QByteArray("short") << 2 << QByteArray("\t");
        QTest::newRow("a non-ASCII id") << "name" << QByteArray("short") << 0 << QByteArray("\xe9");
        QTest::newRow("a control character in a description")
            << "name" << QByteArray("first record") << 5 << QByteArray("\n");
        QTest::newRow("invalid UTF-8 in a description")
            << "name" << QByteArray("first record") << 0 << QByteArray("\xff");
    }
    void forgedContentsAreRebuilt() {
        QFETCH(QString, what);
        QFETCH(QByteArray, find);
        QFETCH(int, at);
        QFETCH(QByteArray, replace);
        const PreparedDatabaseLoad good = load();
        std::string bytes = read_bytes(good.cache_path);
        const std::size_t found = bytes.find(find.toStdString());
        QVERIFY2(found != std::string::npos, qPrintable(what));
        bytes.replace(found + static_cast<std::size_t>(at), static_cast<std::size_t>(replace.size()),
                      replace.toStdString());
        forge_checksum(bytes);
        write_bytes(good.cache_path, bytes);
        const PreparedDatabaseLoad again = load();
        QCOMPARE(again.outcome, CacheOutcome::Rebuilt);
        QVERIFY2(again.reason.find("damaged") != std::string::npos, again.reason.c_str());
        QVERIFY(same_database(again.database, good.database));
        QCOMPARE(load().outcome, CacheOutcome::Loaded);
    }

    // An empty sequence (two equal offsets) behind a right checksum.
    void aForgedEmptySequenceIsRebuilt() {
        const PreparedDatabaseLoad good = load();
        std::string bytes = read_bytes(good.cache_path);
        // Offsets 0, 2, 5, ... become 0, 0, 2, ...: the first sequence is empty,
        // the second takes the first's residues, lengths still ascend (0, 2, 6, ...).
        const std::uint64_t shifted[2] = {0, 2};
        std::memcpy(bytes.data() + 64 + 8, shifted, 16);
        forge_checksum(bytes);
        write_bytes(good.cache_path, bytes);
        const PreparedDatabaseLoad again = load();
        QCOMPARE(again.outcome, CacheOutcome::Rebuilt);
        QVERIFY2(again.reason.find("damaged") != std::string::npos, again.reason.c_str());
        QVERIFY(same_database(again.database, good.database));
    }

    void alphabetOverrideIsPartOfTheKey() {
        write_bytes(fasta_, ">a\nACGTACGTNNACGT\n>b\nACGGT\n");
        QCOMPARE(load().outcome, CacheOutcome::Built);
        QCOMPARE(load().database.alphabet, AlphabetKind::Dna);
        DatabaseCacheOptions protein;
        protein.alphabet = AlphabetKind::Protein;
        const PreparedDatabaseLoad as_protein = load(protein);
        QCOMPARE(as_protein.outcome, CacheOutcome::Rebuilt);
        QCOMPARE(as_protein.database.alphabet, AlphabetKind::Protein);
        QCOMPARE(load(protein).outcome, CacheOutcome::Loaded);
    }

    void cacheDirectoryAndOff() {
        DatabaseCacheOptions off;
        off.enabled = false;
        const PreparedDatabaseLoad parsed = load(off);
        QCOMPARE(parsed.outcome, CacheOutcome::Disabled);
        QVERIFY(!std::filesystem::exists(fasta_ + ".alsdb"));
        DatabaseCacheOptions elsewhere;
        elsewhere.directory = dir_.filePath("caches").toStdString();
        const PreparedDatabaseLoad built = load(elsewhere);
        QCOMPARE(built.outcome, CacheOutcome::Built);
        QVERIFY(built.cache_path.rfind(elsewhere.directory, 0) == 0);
        QCOMPARE(load(elsewhere).outcome, CacheOutcome::Loaded);
        QVERIFY(!std::filesystem::exists(fasta_ + ".alsdb"));
        // A cache that cannot be written is reported, and the search goes on.
        DatabaseCacheOptions blocked;
        const std::string file = dir_.filePath("not-a-directory").toStdString();
        write_bytes(file, "x");
        blocked.directory = file + "/cache";
        const PreparedDatabaseLoad unwritable = load(blocked);
        QCOMPARE(unwritable.outcome, CacheOutcome::Unwritable);
        QVERIFY(!unwritable.reason.empty());
        QVERIFY(same_database(unwritable.database, parsed.database));
    }

    // Only a regular file is read as a cache: one that is a link to /dev/zero
    // (endless bytes) or a FIFO (no writer: a read would wait forever) is set
    // aside at once and the FASTA parsed.
    void aCacheThatIsNoRegularFileIsNotRead_data() {
        QTest::addColumn<bool>("fifo");
        QTest::newRow("link to /dev/zero") << false;
        QTest::newRow("FIFO") << true;
    }
    void aCacheThatIsNoRegularFileIsNotRead() {
        QFETCH(bool, fifo);
        const std::string cache = database_cache_path(fasta_);
        std::filesystem::remove(cache);
        if (fifo) QCOMPARE(::mkfifo(cache.c_str(), 0600), 0);
        else
            std::filesystem::create_symlink("/dev/zero", cache);
        DatabaseCacheOptions options;
        const PreparedDatabaseLoad loaded = load(options);
        QVERIFY2(loaded.outcome == CacheOutcome::Rebuilt || loaded.outcome == CacheOutcome::Unwritable,
                 loaded.reason.c_str());
        QVERIFY2(loaded.reason.find("is not a regular file") != std::string::npos, loaded.reason.c_str());
        QCOMPARE(loaded.database.size(), read_sequences(fasta_).records.size());
        std::filesystem::remove(cache);
    }

    void errorsNameTheFile() {
        DatabaseCacheOptions options;
        QVERIFY_THROWS_EXCEPTION(Error, prepare_database(dir_.filePath("missing.fa").toStdString(), options));
        write_bytes(fasta_, ">x\nMK1LV\n");
        try {
            (void)prepare_database(fasta_, options);
            QFAIL("a malformed FASTA was accepted");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("db.fa") != std::string::npos, e.what());
        }
        write_bytes(fasta_, "");
        QVERIFY_THROWS_EXCEPTION(Error, prepare_database(fasta_, options));
    }

    void partitionsSubsetsAndEncoding() {
        const PreparedDatabase db = load().database;
        for (std::uint64_t limit : {1ull, 5ull, 10ull, 20ull, 1000ull}) {
            const auto parts = db.partitions(limit);
            std::size_t next = 0;
            for (const auto& [first, last] : parts) {
                QCOMPARE(first, next);
                QVERIFY(last > first);
                const std::uint64_t residues = db.offsets[last] - db.offsets[first];
                QVERIFY(residues <= limit || last == first + 1);
                next = last;
            }
            QCOMPARE(next, db.size());
        }
        const PreparedDatabase part = db.subset({1, 3, 5});
        QCOMPARE(part.size(), std::size_t{3});
        QCOMPARE(std::string(part.residues_of(2)), std::string(db.residues_of(5)));
        QCOMPARE(part.file_index[1], db.file_index[3]);
        const SubstitutionMatrix blosum = SubstitutionMatrix::builtin("BLOSUM62");
        const auto codes = encode_database(db, blosum);
        QCOMPARE(codes.size(), db.residues.size());
        for (std::size_t k = 0; k < codes.size(); ++k)
            QCOMPARE(static_cast<int>(codes[k]), blosum.index_of(db.residues[k]));
        try {
            (void)encode_database(db, SubstitutionMatrix::builtin("EDNAFULL"));
            QFAIL("protein residues were encoded for a nucleotide matrix");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("database sequence") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestSearchCache)
#include "test_search_cache.moc"
