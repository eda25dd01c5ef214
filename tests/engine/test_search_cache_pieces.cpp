// The prepared-database cache at the sizes where its reader works in pieces
// (residues read and checksummed 4 MiB at a time, names read 1 MiB at a time
// on several threads, the FASTA's checksum 8 MiB at a time): a loaded
// database equals a fresh parse, the repeated-ids warning equals the
// reader's, and damage behind the first pieces is caught and named as a
// reading from the front names it. Also the encoding of a database of
// several pieces, and its error for a residue the matrix does not score.
#include "crc32.hpp"

#include <alignscope/error.hpp>
#include <alignscope/search/database.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

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

// A protein FASTA of `count` records (fixed seed): lengths 60-419, ids
// "seq<N>" with every 997th record repeating the id of one 5,000 earlier,
// descriptions of words (some with a tab or an accented letter). The longest
// record, 450 residues, is the only one holding 'J' (at residue 300) when
// `with_j` is set.
std::string make_fasta(std::size_t count, bool with_j) {
    std::mt19937_64 random(20261126);
    const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
    std::string text;
    for (std::size_t r = 0; r < count; ++r) {
        const std::size_t id = r % 997 == 996 && r >= 5000 ? r - 5000 : r;
        text += ">seq" + std::to_string(id) + " protein " + std::to_string(random() % 100000) + " of a made-up" +
                (r % 7 == 0 ? "\tfamily" : " family") + (r % 11 == 0 ? " caf\xc3\xa9" : "") + " from a fixed seed\n";
        const std::size_t length = r == count / 2 && with_j ? 450 : 60 + random() % 360;
        std::string residues(length, 'A');
        for (char& c : residues) c = letters[random() % letters.size()];
        if (r == count / 2 && with_j) residues[299] = 'J';
        for (std::size_t at = 0; at < length; at += 60) text += residues.substr(at, 60) + "\n";
    }
    return text;
}

bool same_database(const PreparedDatabase& a, const PreparedDatabase& b) {
    return a.alphabet == b.alphabet && a.residues == b.residues && a.offsets == b.offsets &&
           a.file_index == b.file_index && a.ids == b.ids && a.descriptions == b.descriptions;
}

// Byte offsets of a cache's parts (the layout database.cpp documents).
struct Layout {
    std::uint64_t count = 0, residue_bytes = 0, name_bytes = 0, residues_at = 0, names_at = 0;
};

Layout layout_of(const std::string& cache) {
    Layout l;
    std::memcpy(&l.count, cache.data() + 40, 8);
    std::memcpy(&l.residue_bytes, cache.data() + 48, 8);
    std::memcpy(&l.name_bytes, cache.data() + 56, 8);
    l.residues_at = (64 + (l.count + 1) * 8 + l.count * 4 + 7) / 8 * 8;
    l.names_at = l.residues_at + l.residue_bytes;
    return l;
}

// The cache's checksum (the 4 bytes before the end marker) made right again.
void forge_checksum(std::string& cache) {
    const std::size_t body = cache.size() - 8;
    const std::uint32_t crc = crc32_of(cache.data(), body);
    std::memcpy(cache.data() + body, &crc, 4);
}

}  // namespace

class TestSearchCachePieces : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string fasta_, cache_;
    PreparedDatabase parsed_;
    std::string parsed_warning_;

    // The cache as written, changed by `change`, then loaded: the reason it was rebuilt.
    QString rebuilt_because(const std::function<void(std::string&, const Layout&)>& change) {
        std::string bytes = read_bytes(cache_);
        change(bytes, layout_of(bytes));
        write_bytes(cache_, bytes);
        const PreparedDatabaseLoad load = prepare_database(fasta_);
        if (load.outcome != CacheOutcome::Rebuilt) return "not rebuilt";
        if (!same_database(load.database, parsed_)) return "rebuilt, but not as parsed";
        return QString::fromStdString(load.reason);
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        fasta_ = dir_.filePath("pieces.fa").toStdString();
        write_bytes(fasta_, make_fasta(40000, false));
        cache_ = database_cache_path(fasta_);
        DatabaseCacheOptions off;
        off.enabled = false;
        parsed_ = prepare_database(fasta_, off).database;
        parsed_warning_ = read_sequences(fasta_).duplicate_id_warning();
    }

    void init() {
        std::filesystem::remove(cache_);
        QCOMPARE(prepare_database(fasta_).outcome, CacheOutcome::Built);
    }

    // Several pieces of residues and several ranges of names, or this file
    // tests nothing its small sibling does not.
    void theCacheSpansSeveralPieces() {
        const Layout l = layout_of(read_bytes(cache_));
        QVERIFY2(l.residue_bytes > 2 * (4u << 20), std::to_string(l.residue_bytes).c_str());
        QVERIFY2(l.name_bytes > 2 * (1u << 20), std::to_string(l.name_bytes).c_str());
    }

    void aLoadedCacheIsTheParse() {
        const PreparedDatabaseLoad load = prepare_database(fasta_);
        QCOMPARE(load.outcome, CacheOutcome::Loaded);
        QVERIFY(same_database(load.database, parsed_));
        QVERIFY(!parsed_warning_.empty());
        QCOMPARE(load.duplicate_ids, parsed_warning_);
    }

    void theFastaChecksumIsZlibs() {
        const std::string bytes = read_bytes(fasta_);
        QVERIFY(bytes.size() > 8u << 20);
        QCOMPARE(fasta_fingerprint(fasta_).crc32, crc32_of(bytes));
        QCOMPARE(fasta_fingerprint(fasta_).size, static_cast<std::uint64_t>(bytes.size()));
    }

    void damageBehindTheFirstPiecesIsCaught_data() {
        QTest::addColumn<int>("part");  // 0 residues, 1 names
        QTest::addColumn<double>("where");
        QTest::newRow("residues, third piece") << 0 << 0.9;
        QTest::newRow("residues, second piece") << 0 << 0.5;
        QTest::newRow("names, last range") << 1 << 0.95;
    }
    void damageBehindTheFirstPiecesIsCaught() {
        QFETCH(int, part);
        QFETCH(double, where);
        const QString reason = rebuilt_because([&](std::string& bytes, const Layout& l) {
            const std::uint64_t at = part == 0 ? l.residues_at + static_cast<std::uint64_t>(where * l.residue_bytes)
                                               : l.names_at + static_cast<std::uint64_t>(where * l.name_bytes);
            bytes[at] ^= 0x20;
        });
        QVERIFY2(reason.contains("do not match their checksum"), qPrintable(reason));
    }

    // Forged contents (the checksum made right) in a later range of names:
    // named as the first bad field from the front is named.
    void forgedNamesInALaterRangeAreNamed_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("a space in an id") << 0 << "damaged: a sequence id the FASTA reader would not give";
        QTest::newRow("a control byte in a description")
            << 1 << "damaged: a sequence description the FASTA reader would not give";
        QTest::newRow("a description run into the next id")
            << 2 << "damaged: a sequence id the FASTA reader would not give";
        QTest::newRow("names cut short") << 3 << "damaged: names end early";
        QTest::newRow("a field too many") << 4 << "damaged: extra bytes after the names";
    }
    void forgedNamesInALaterRangeAreNamed() {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        const QString reason = rebuilt_because([&](std::string& bytes, const Layout& l) {
            // The id that starts after the first NUL past 70 % of the names
            // block (past its first two ranges); its description follows it.
            const std::uint64_t past = l.names_at + l.name_bytes * 7 / 10;
            std::uint64_t id_at = bytes.find('\0', past) + 1;
            if (bytes.compare(id_at, 3, "seq") != 0) id_at = bytes.find('\0', id_at) + 1;
            QVERIFY(bytes.compare(id_at, 3, "seq") == 0);
            const std::uint64_t description_at = bytes.find('\0', id_at) + 1;
            const std::uint64_t names_end = l.names_at + l.name_bytes;
            std::uint64_t grown = 0;
            if (kind == 0) bytes[id_at + 1] = ' ';
            if (kind == 1) bytes[description_at + 2] = '\x01';
            if (kind == 2) bytes[bytes.find('\0', description_at)] = 'x';
            if (kind == 3) {
                bytes.erase(names_end - 5, 5);
                grown = static_cast<std::uint64_t>(-5);
            }
            if (kind == 4) {
                bytes.insert(names_end, std::string("more\0", 5));
                grown = 5;
            }
            const std::uint64_t name_bytes = l.name_bytes + grown;
            std::memcpy(bytes.data() + 56, &name_bytes, 8);
            forge_checksum(bytes);
        });
        QCOMPARE(reason, "cache " + QString::fromStdString(cache_) + " " + expected);
    }

    // Encoded in pieces on several cores: each residue its matrix index; a
    // residue the matrix does not score is named by its sequence and position.
    void encodingInPieces() {
        const SubstitutionMatrix blosum = SubstitutionMatrix::builtin("BLOSUM62");
        const std::vector<std::uint8_t> codes = encode_database(parsed_, blosum);
        QCOMPARE(codes.size(), parsed_.residues.size());
        for (std::size_t k = 0; k < codes.size(); k += 4099)
            QCOMPARE(static_cast<int>(codes[k]), blosum.index_of(parsed_.residues[k]));
        QCOMPARE(static_cast<int>(codes.back()), blosum.index_of(parsed_.residues.back()));

        const std::string with_j = dir_.filePath("with-j.fa").toStdString();
        write_bytes(with_j, make_fasta(40000, true));
        DatabaseCacheOptions off;
        off.enabled = false;
        const PreparedDatabase db = prepare_database(with_j, off).database;
        QVERIFY(db.residues.size() > 2 * (4u << 20));
        // A matrix of the twenty standard amino acids only (+1/-1): 'J' (I or
        // L) has no row, nor has X, its stand-in. The one sequence holding it
        // is the longest, the last in length order and in the last piece.
        const std::string standard = "ACDEFGHIKLMNPQRSTVWY";
        std::string text = "  ";
        for (char c : standard) text += std::string(" ") + c;
        text += "\n";
        for (char row : standard) {
            text += row;
            for (char column : standard) text += row == column ? "  1" : " -1";
            text += "\n";
        }
        const SubstitutionMatrix twenty = SubstitutionMatrix::parse(text, "TWENTY", "test");
        QVERIFY(twenty.index_of('J') < 0 && twenty.index_of('Y') >= 0);
        QCOMPARE(db.length(db.size() - 1), 450u);
        QVERIFY(db.residues.find('J') >= db.residues.size() - 450);
        try {
            (void)encode_database(db, twenty);
            QFAIL("a database holding 'J' encoded for a matrix without it");
        } catch (const Error& e) {
            QCOMPARE(QString(e.what()), QString::fromStdString("residue 'J' at position 300 of database sequence '" +
                                                               db.ids.back() + "' is not scored by matrix TWENTY"));
        }
    }
};

QTEST_GUILESS_MAIN(TestSearchCachePieces)
#include "test_search_cache_pieces.moc"
