// libFuzzer target: arbitrary bytes as the prepared-database cache that
// `search` keeps beside a FASTA (<FASTA>.alsdb, search/database.hpp), loaded
// the way `search` loads it (prepare_database), then used the way `search`
// uses a database (encoded for a matrix, sequences taken out, partitioned).
//
// The harness keeps two small FASTA files with a fixed modification time, a
// protein one and a DNA one; the cache's alphabet field picks which one it is
// put beside. Every input is tried as it is and, when rejected, once more
// with its FASTA fingerprint, CRC-32 and end marker made right (so that the
// fuzzer explores the contents behind the checksum, as a cache written by
// another program or a faulty disk controller could hold them).
//
// What must hold: a cache is loaded only when its checksum (by our own
// bitwise CRC-32) and its FASTA fingerprint are right, and what it loads is a
// database a parse could have produced (offsets, length order, a permutation
// of the records, residues of its alphabet, ids and descriptions as the
// reader makes them); any other cache is reported and rebuilt, giving exactly
// the database a fresh parse gives, and the cache file is then the one our
// writer writes. Never a crash, a sanitizer report, or an allocation the
// file cannot justify.
//
// Seeds: ALIGNSCOPE_FUZZ_WRITE_SEEDS=DIR fuzz_search_cache writes the caches
// our writer makes for both FASTAs (and a stale, an old-version and a cut
// one) into DIR and exits; tests/fuzz/corpus/search_cache holds them.
#include "fuzz_support.hpp"

#include <alignscope/error.hpp>
#include <alignscope/search/database.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>

using namespace alignscope;
using alignscope::fuzz::require;

namespace {

const char* kProteinFasta =
    ">long first record\nMKVLAAGIVGLLLAAPAQA\nWYWYWYWY\n"
    ">short\nMK\n"
    ">mid with words\tin the description\nACDEFGHIKLMNPQ\n"
    ">tie-a\nMKV\n"
    ">tie-b caf\xc3\xa9\nWWW\n"
    ">rare letters\nBZXUOJ*KL\n";
const char* kDnaFasta =
    ">chr1 a contig\nACGTACGTTTGACNNNACGT\nacgtrywsk\n"
    ">r2\nACGT\n"
    ">r3\nGGGGCCCCAAAATTTT\n";

struct Fasta {
    std::string path, cache;  // the FASTA and its cache (beside it)
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint32_t crc = 0;
    PreparedDatabase parsed;  // a fresh parse (no cache)
    std::string genuine;      // the cache our writer writes
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Fasta make_fasta(const std::string& name, const char* text) {
    Fasta f;
    f.path = fuzz::scratch_directory() + "/" + name;
    fuzz::write_file(f.path, text);
    const timespec when{1700000000, 123456789};
    const timespec times[2] = {when, when};
    require(::utimensat(AT_FDCWD, f.path.c_str(), times, 0) == 0);
    f.size = std::string_view(text).size();
    f.mtime_ns = std::int64_t{1700000000} * 1'000'000'000 + 123456789;
    f.crc = crc32_of(text, f.size);
    f.cache = database_cache_path(f.path);
    require(f.cache == f.path + ".alsdb");
    DatabaseCacheOptions off;
    off.enabled = false;
    f.parsed = prepare_database(f.path, off).database;
    std::filesystem::remove(f.cache);
    require(prepare_database(f.path).outcome == CacheOutcome::Built);
    f.genuine = read_file(f.cache);
    require(prepare_database(f.path).outcome == CacheOutcome::Loaded);
    return f;
}

const Fasta& protein() {
    static const Fasta f = make_fasta("protein.fa", kProteinFasta);
    return f;
}
const Fasta& dna() {
    static const Fasta f = make_fasta("dna.fa", kDnaFasta);
    return f;
}

bool same_database(const PreparedDatabase& a, const PreparedDatabase& b) {
    return a.alphabet == b.alphabet && a.residues == b.residues && a.offsets == b.offsets &&
           a.file_index == b.file_index && a.ids == b.ids && a.descriptions == b.descriptions;
}

// The fingerprint, CRC-32 and end marker made right for `fasta`.
std::string repaired(std::string bytes, const Fasta& fasta) {
    fuzz::store_le<std::uint64_t>(bytes.data() + 16, fasta.size);
    fuzz::store_le<std::int64_t>(bytes.data() + 24, fasta.mtime_ns);
    fuzz::store_le<std::uint32_t>(bytes.data() + 32, fasta.crc);
    const std::size_t body = bytes.size() - 8;
    fuzz::store_le<std::uint32_t>(bytes.data() + body, crc32_of(bytes.data(), body));
    std::memcpy(bytes.data() + body + 4, "END1", 4);
    return bytes;
}

bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t len = c < 0x80             ? 1
                                : (c & 0xE0) == 0xC0 ? 2
                                : (c & 0xF0) == 0xE0 ? 3
                                : (c & 0xF8) == 0xF0 ? 4
                                                     : 0;
        if (len == 0 || i + len > s.size()) return false;
        std::uint32_t cp = len == 1 ? c : c & (0x7Fu >> len);
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        const std::uint32_t min = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

// A loaded database is one a parse could have produced.
void check_database(const PreparedDatabase& db) {
    const std::size_t count = db.size();
    require(count > 0 && db.offsets.size() == count + 1 && db.ids.size() == count && db.descriptions.size() == count);
    require(db.offsets.front() == 0 && db.offsets.back() == db.residues.size());
    std::vector<bool> seen(count);
    std::array<bool, 256> letter{};
    for (char c : alphabet_letters(db.alphabet)) letter[static_cast<unsigned char>(c)] = true;
    for (std::size_t p = 0; p < count; ++p) {
        require(db.offsets[p + 1] > db.offsets[p]);  // no empty sequence
        require(p == 0 || db.length(p) >= db.length(p - 1));
        require(db.file_index[p] < count && !seen[db.file_index[p]]);
        seen[db.file_index[p]] = true;
        require(!db.ids[p].empty());
        for (char c : db.ids[p]) require(static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x80);
        for (char c : db.descriptions[p]) require(static_cast<unsigned char>(c) >= 0x20 || c == '\t');
        require(valid_utf8(db.descriptions[p]));
    }
    for (char c : db.residues) require(letter[static_cast<unsigned char>(c)]);
}

// What `search` does with a database once it has one.
void use_database(const PreparedDatabase& db) {
    const SubstitutionMatrix matrix =
        SubstitutionMatrix::builtin(db.alphabet == AlphabetKind::Protein ? "BLOSUM62" : "EDNAFULL");
    try {
        const std::vector<std::uint8_t> codes = encode_database(db, matrix);
        require(codes.size() == db.residues.size());
        for (std::uint8_t c : codes) require(c < matrix.size());
    } catch (const Error&) {
    }
    std::size_t covered = 0;
    for (const auto& [first, last] : db.partitions(16)) {
        require(first == covered && last > first && last <= db.size());
        covered = last;
    }
    require(covered == db.size());
    for (std::size_t p = 0; p < db.size(); ++p) require(db.sequence(p).residues.size() == db.length(p));
}

// Writes `bytes` as the cache of `fasta` and prepares the database. Returns
// whether the cache was loaded.
bool try_cache(const std::string& bytes, const Fasta& fasta) {
    fuzz::write_file(fasta.cache, bytes);
    const PreparedDatabaseLoad load = prepare_database(fasta.path);
    require(load.cache_path == fasta.cache);
    if (load.outcome == CacheOutcome::Loaded) {
        // Only a cache whose checksum and key are right is used.
        require(bytes.size() >= 72);
        const std::size_t body = bytes.size() - 8;
        require(fuzz::load_le<std::uint32_t>(bytes.data() + body) == crc32_of(bytes.data(), body));
        require(std::memcmp(bytes.data() + body + 4, "END1", 4) == 0);
        require(fuzz::load_le<std::uint64_t>(bytes.data() + 16) == fasta.size);
        require(fuzz::load_le<std::int64_t>(bytes.data() + 24) == fasta.mtime_ns);
        require(fuzz::load_le<std::uint32_t>(bytes.data() + 32) == fasta.crc);
        check_database(load.database);
        if (bytes == fasta.genuine) require(same_database(load.database, fasta.parsed));
        use_database(load.database);
        return true;
    }
    // Anything else: reported, rebuilt from the FASTA, and the cache rewritten.
    require(load.outcome == CacheOutcome::Rebuilt);
    require(load.reason.rfind("cache " + fasta.cache + " ", 0) == 0 && load.reason.size() > fasta.cache.size() + 7);
    require(same_database(load.database, fasta.parsed));
    require(read_file(fasta.cache) == fasta.genuine);
    return false;
}

void write_seeds(const std::string& dir) {
    std::filesystem::create_directories(dir);
    auto put = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(dir + "/" + name, std::ios::binary)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        std::printf("%s/%s: %zu bytes\n", dir.c_str(), name.c_str(), bytes.size());
    };
    put("protein.alsdb", protein().genuine);
    put("dna.alsdb", dna().genuine);
    std::string stale = protein().genuine;
    fuzz::store_le<std::int64_t>(stale.data() + 24, protein().mtime_ns + 1);
    const std::size_t body = stale.size() - 8;
    fuzz::store_le<std::uint32_t>(stale.data() + body, crc32_of(stale.data(), body));
    put("protein-stale-mtime.alsdb", stale);
    std::string old = dna().genuine;
    fuzz::store_le<std::uint32_t>(old.data() + 8, 0);
    fuzz::store_le<std::uint32_t>(old.data() + old.size() - 8, crc32_of(old.data(), old.size() - 8));
    put("dna-version-0.alsdb", old);
    put("protein-cut.alsdb", protein().genuine.substr(0, protein().genuine.size() / 2));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    (void)protein();
    (void)dna();
    if (const char* seeds = std::getenv("ALIGNSCOPE_FUZZ_WRITE_SEEDS"); seeds && *seeds) {
        write_seeds(seeds);
        std::exit(0);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    // The alphabet field (offset 12) picks the FASTA: 0 and 1 (DNA, RNA) the
    // nucleotide one, anything else the protein one.
    const bool nucleotide = size >= 16 && fuzz::load_le<std::uint32_t>(bytes.data() + 12) <= 1;
    const Fasta& fasta = nucleotide ? dna() : protein();
    if (!try_cache(bytes, fasta) && size >= 72) try_cache(repaired(bytes, fasta), fasta);
    return 0;
}
