// Reading a file as blocks of whole records (the pair pipeline's reader): for
// every block size down to one byte, the records, the alphabet and the first
// error are read_sequences' own, on FASTA and FASTQ (quality lines that start
// with '@' or '+', blank lines, CRLF, a byte-order mark, gzip) and on every
// malformed file of the reader's corpus; repeated ids are counted alike. Plain
// FASTA files are cut by offset and their blocks read and parsed out of order:
// records split at every byte, faults in late blocks named at their lines.
#include <alignscope/error.hpp>
#include <alignscope/seq/record_blocks.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <zlib.h>

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <random>
#include <string_view>
#include <vector>

using namespace alignscope;

namespace {

const QString kData = QStringLiteral(ALIGNSCOPE_TEST_DATA "/");

struct BlockRead {
    AlphabetKind alphabet = AlphabetKind::Protein;
    std::vector<Sequence> records;
    std::string error;  // the first error, in file order
};

BlockRead read_in_blocks(const std::string& path, std::size_t block_bytes, const ReadOptions& options = {}) {
    BlockRead result;
    try {
        RecordBlockReader reader(path, block_bytes);
        result.alphabet = reader.detect_alphabet();
        if (reader.empty() && !options.allow_empty)
            throw Error(path + ": expected FASTA ('>') or FASTQ ('@') records, found none");
        RecordBlock block;
        std::uint64_t index = 0;
        while (reader.next(block)) {
            if (block.index != index++) throw Error("blocks out of order");
            for (Sequence& s : parse_record_block(block, path, reader.format(), result.alphabet, options))
                result.records.push_back(std::move(s));
        }
        if (result.records.empty() && !options.allow_empty)
            throw Error(path + ": expected FASTA ('>') or FASTQ ('@') records, found none");
    } catch (const Error& e) {
        result.error = e.what();
    }
    return result;
}

// The blocks of a file, cut first, then read and parsed in the order
// `order` gives (as a pool of threads may), the first error in file order.
BlockRead read_out_of_order(const std::string& path, std::size_t block_bytes, bool reverse, const ReadOptions& options,
                            bool* by_offset = nullptr) {
    BlockRead result;
    try {
        RecordBlockReader reader(path, block_bytes);
        // As the pair pipeline: an alphabet given, no block is parsed before its turn.
        result.alphabet = options.alphabet ? *options.alphabet : reader.detect_alphabet();
        if (!options.alphabet && reader.empty() && !options.allow_empty)
            throw Error(path + ": expected FASTA ('>') or FASTQ ('@') records, found none");
        std::vector<RecordBlock> blocks;
        for (RecordBlock block; reader.next(block);) blocks.push_back(std::move(block));
        if (by_offset) *by_offset = !blocks.empty() && blocks.back().source != nullptr;
        std::vector<std::vector<Sequence>> parsed(blocks.size());
        std::vector<std::string> errors(blocks.size());
        for (std::size_t n = 0; n < blocks.size(); ++n) {
            const std::size_t k = reverse ? blocks.size() - 1 - n : n;
            try {
                load_record_block(blocks[k]);
                parsed[k] = parse_record_block(blocks[k], path, reader.format(), result.alphabet, options);
            } catch (const Error& e) {
                errors[k] = e.what();
            }
        }
        for (std::size_t k = 0; k < blocks.size(); ++k) {
            if (!errors[k].empty()) throw Error(errors[k]);
            for (Sequence& s : parsed[k]) result.records.push_back(std::move(s));
        }
        if (result.records.empty() && !options.allow_empty)
            throw Error(path + ": expected FASTA ('>') or FASTQ ('@') records, found none");
    } catch (const Error& e) {
        result.error = e.what();
    }
    return result;
}

// read_sequences' records, or its error.
BlockRead read_whole(const std::string& path, const ReadOptions& options) {
    BlockRead result;
    try {
        SequenceSet set = read_sequences(path, options);
        result.alphabet = set.alphabet;
        result.records = std::move(set.records);
    } catch (const Error& e) {
        result.error = e.what();
    }
    return result;
}

std::string write_file(const QTemporaryDir& dir, const char* name, const std::string& text) {
    const std::string path = dir.filePath(name).toStdString();
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

std::string write_gzip(const QTemporaryDir& dir, const char* name, const std::string& text) {
    const std::string path = dir.filePath(name).toStdString();
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    return path;
}

// The records read in blocks against those read whole (a SequenceSet or a
// BlockRead), field by field. QCOMPARE returns from here only: the caller
// checks QTest::currentTestFailed().
template <typename Whole>
void compare_records(const BlockRead& blocks, const Whole& whole) {
    QCOMPARE(blocks.alphabet, whole.alphabet);
    QCOMPARE(blocks.records.size(), whole.records.size());
    for (std::size_t k = 0; k < whole.records.size(); ++k) {
        QCOMPARE(blocks.records[k].id, whole.records[k].id);
        QCOMPARE(blocks.records[k].description, whole.records[k].description);
        QCOMPARE(blocks.records[k].residues, whole.records[k].residues);
        QCOMPARE(blocks.records[k].quality, whole.records[k].quality);
    }
}

}  // namespace

class TestRecordBlocks : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void same_records_as_read_sequences_data() {
        QTest::addColumn<QString>("path");
        for (const char* name : {"seq_proteins.fa", "seq_proteins.fa.gz", "seq_wrapped_crlf.fa",
                                 "seq_no_final_newline.fa", "seq_reads.fq", "seq_reads_crlf.fq"})
            QTest::newRow(name) << kData + name;
        // FASTQ whose quality lines start with the record markers, blank lines
        // between records, a byte-order mark; FASTA with '>' inside headers.
        std::mt19937 rng(11);
        std::string fastq = "\xEF\xBB\xBF";
        for (int k = 0; k < 200; ++k) {
            std::string residues, quality;
            const int length = 1 + static_cast<int>(rng() % 40);
            for (int i = 0; i < length; ++i) {
                residues += "ACGT"[rng() % 4];
                quality += static_cast<char>(i == 0 ? (k % 3 == 0 ? '@' : k % 3 == 1 ? '+' : 'I') : '!' + rng() % 60);
            }
            fastq += "@r" + std::to_string(k) + " read " + std::to_string(k) + (k % 5 == 0 ? "\r\n" : "\n") + residues +
                     "\n+\n" + quality + "\n" + (k % 7 == 0 ? "\n  \n" : "");
        }
        QTest::newRow("fastq with marker qualities") << QString::fromStdString(write_file(dir_, "marks.fq", fastq));
        QTest::newRow("fastq gzip") << QString::fromStdString(write_gzip(dir_, "marks.fq.gz", fastq));
        std::string fasta;
        for (int k = 0; k < 150; ++k) {
            fasta += ">p" + std::to_string(k) + " a > b\n";
            const int length = 1 + static_cast<int>(rng() % 200);
            for (int i = 0; i < length; ++i) {
                fasta += "ACDEFGHIKLMNPQRSTVWY"[rng() % 20];
                if (i % 60 == 59) fasta += "\n";
            }
            fasta += "\n";
        }
        QTest::newRow("wrapped fasta") << QString::fromStdString(write_file(dir_, "wrapped.fa", fasta));
    }
    void same_records_as_read_sequences() {
        QFETCH(QString, path);
        ReadOptions options;
        options.allow_empty = true;  // seq_reads.fq holds an empty record
        const SequenceSet whole = read_sequences(path.toStdString(), options);
        for (std::size_t block_bytes :
             {std::size_t{1}, std::size_t{7}, std::size_t{100}, std::size_t{4096}, std::size_t{4} << 20}) {
            const BlockRead blocks = read_in_blocks(path.toStdString(), block_bytes, options);
            QVERIFY2(blocks.error.empty(), blocks.error.c_str());
            compare_records(blocks, whole);
            if (QTest::currentTestFailed()) return;
        }
    }

    // The malformed corpus: the same first error, line number included.
    void same_errors_as_read_sequences() {
        const QStringList files = QDir(kData + "malformed").entryList({"*.fa", "*.fq", "*.gz", "*.bin"}, QDir::Files);
        QVERIFY(files.size() >= 20);
        for (const QString& name : files) {
            const std::string path = (kData + "malformed/" + name).toStdString();
            std::string expected;
            try {
                read_sequences(path);
            } catch (const Error& e) {
                expected = e.what();
            }
            QVERIFY2(!expected.empty(), path.c_str());
            for (std::size_t block_bytes : {std::size_t{1}, std::size_t{16}, std::size_t{4} << 20}) {
                const BlockRead blocks = read_in_blocks(path, block_bytes);
                QVERIFY2(blocks.error == expected, qPrintable(name + " (blocks of " + QString::number(block_bytes) +
                                                              "): " + QString::fromStdString(blocks.error) +
                                                              " instead of " + QString::fromStdString(expected)));
            }
        }
    }

    // Plain FASTA (and FASTQ) cut by offset, every block size from one byte
    // up: records that straddle every boundary, CRLF, blank lines, '>' inside
    // headers, lower case, stops, tabs and runs of spaces in headers, a
    // byte-order mark, no final newline, empty files. Gzip is still cut by the
    // one reading thread.
    void cut_by_offset_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("by_offset");
        QTest::addColumn<bool>("allow_empty");
        const auto row = [this](const char* name, const std::string& text, bool by_offset, bool allow_empty = false) {
            QTest::newRow(name) << QString::fromStdString(write_file(dir_, name, text)) << by_offset << allow_empty;
        };
        row("split.fa", ">a one\nACDEFGHIKL\nMNPQRSTVWY\n>b\nWWW\n>c two  three \nKLM\n", true);
        row("crlf.fa", ">a x\r\nACDE\r\nFGHI\r\n>b y\r\nKLMN\r\n", true);
        row("blank lines.fa", ">a\nACDE\n\nFGH\n\n\n>b\n\nKLM\n\n", true);
        row("leading blank lines.fa", "\n  \n>a\nACDE\n>b\nKLM\n", true);
        row("gt in headers.fa", ">a>b c>d\nACDE\n>>e >\nKLM\n>f\nPQ\n", true);
        row("case, stops, tabs.fa", ">a\tdesc\twith tabs\nacdeFGHI*\n>b   many   spaces   \nklm*\n>c\nX*W\n", true);
        row("byte-order mark.fa", "\xEF\xBB\xBF>a\nACDE\n>b\nKLM\n", true);
        row("no final newline.fa", ">a\nACDE\n>b\nKLMN", true);
        row("header last, no newline.fa", ">a\nACDE\n>b", true, true);
        row("empty records.fa", ">a\n>b\n\n>c\nACGT\n>d\n", true, true);
        row("empty.fa", "", false);
        row("only blank.fa", "\n\n  \n", false);
        row("fastq at-quality.fq", "@r1\nACGT\n+\n@@II\n@r2\nTTGA\n+r2\n@III\n\n@r3\nAC\n+\n@@\n", true);
        std::string fasta;
        std::mt19937 rng(5);
        for (int k = 0; k < 40; ++k) {
            fasta += ">s" + std::to_string(k) + (k % 3 ? " window " + std::to_string(k) : "") + (k % 4 ? "\n" : "\r\n");
            const int length = static_cast<int>(rng() % 90);
            for (int i = 0; i < length; ++i) {
                fasta += "ACGTacgtN"[rng() % 9];
                if (i % 29 == 28) fasta += k % 5 ? "\n" : "\r\n";
            }
            fasta += "\n";
        }
        row("random dna.fa", fasta, true, true);
    }
    void cut_by_offset() {
        QFETCH(QString, path);
        QFETCH(bool, by_offset);
        QFETCH(bool, allow_empty);
        ReadOptions options;
        options.allow_empty = allow_empty;
        const BlockRead whole = read_whole(path.toStdString(), options);
        for (std::size_t block_bytes = 1; block_bytes <= 64; ++block_bytes)
            for (bool reverse : {false, true}) {
                bool offset = false;
                const BlockRead blocks = read_out_of_order(path.toStdString(), block_bytes, reverse, options, &offset);
                const QString where =
                    QStringLiteral("blocks of %1%2").arg(block_bytes).arg(reverse ? ", last first" : "");
                QVERIFY2(blocks.error == whole.error, qPrintable(where + ": " + QString::fromStdString(blocks.error) +
                                                                 " instead of " + QString::fromStdString(whole.error)));
                if (!whole.error.empty()) continue;
                QCOMPARE(offset, by_offset);
                compare_records(blocks, whole);
                if (QTest::currentTestFailed()) return;
            }
    }

    // A fault in a late block, its blocks parsed last first: the line is
    // counted from the file (the blocks before it were not parsed yet) and is
    // read_sequences' line.
    void late_faults_name_their_lines_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("expected");
        std::string head;
        for (int k = 0; k < 300; ++k) head += ">p" + std::to_string(k) + " d\r\nACDEFGHIKL\n\nMNPQRS\n";
        const auto row = [&](const char* name, std::string_view tail, const char* expected) {
            QTest::newRow(name) << QString::fromStdString(write_file(dir_, name, head + std::string(tail))) << expected;
        };
        row("bad residue.fa", ">x\nACDE\nAC1E\n>y\nAC\n", ":1203: record 'x': residue '1' at position 7");
        row("nul byte.fa", std::string_view(">x\nAC\nA\0C\n", 11), ":1203: expected sequence text, found a NUL byte");
        row("empty record.fa", ">x\n>y\nAC\n", ":1201: record 'x': expected residues");
        row("empty id.fa", "> \nAC\n", ":1201: expected a sequence id after '>'");
        row("gt inside a line.fa", ">x\nAC>D\n", ":1202: record 'x': residue '>' at position 3");
    }
    void late_faults_name_their_lines() {
        QFETCH(QString, path);
        QFETCH(QString, expected);
        ReadOptions options;
        options.alphabet = AlphabetKind::Protein;
        const std::string whole = read_whole(path.toStdString(), options).error;
        QVERIFY2(QString::fromStdString(whole).contains(expected), whole.c_str());
        for (std::size_t block_bytes : {std::size_t{1}, std::size_t{13}, std::size_t{100}, std::size_t{4096}})
            for (bool reverse : {false, true}) {
                bool offset = false;
                const BlockRead blocks = read_out_of_order(path.toStdString(), block_bytes, reverse, options, &offset);
                QVERIFY(offset);
                QVERIFY2(blocks.error == whole, qPrintable(QString::fromStdString(blocks.error) + " instead of " +
                                                           QString::fromStdString(whole)));
            }
    }

    // Every byte at every place of a line of letters or quality letters
    // (sixteen letters are checked at once), FASTA and FASTQ: the records or
    // the error of the full parser, which a block opening with a byte-order
    // mark is given to.
    void every_byte_as_a_residue() {
        const auto parse = [](const std::string& text, bool full, AlphabetKind alphabet, std::string& error) {
            RecordBlock block;
            block.text = full ? "\xEF\xBB\xBF" + text : text;
            block.file_start = full;
            ReadOptions options;
            options.alphabet = alphabet;
            const SequenceFormat format = text[0] == '>' ? SequenceFormat::Fasta : SequenceFormat::Fastq;
            try {
                return parse_record_block(block, "x.fa", format, alphabet, options);
            } catch (const Error& e) {
                error = e.what();
            }
            return std::vector<Sequence>{};
        };
        int faults = 0;
        for (AlphabetKind alphabet : {AlphabetKind::Dna, AlphabetKind::Rna, AlphabetKind::Protein}) {
            const std::string usual = alphabet == AlphabetKind::Protein ? "ACDEFGHIKLMNPQRSTVWYacdwy*"
                                      : alphabet == AlphabetKind::Dna   ? "ACGTNacgtn"
                                                                        : "ACGUNacgun";
            for (int byte = 1; byte < 256; ++byte) {
                if (byte == '\n') continue;
                for (std::size_t at : {0, 5, 15, 16, 17, 31, 32, 39}) {
                    std::string line, quality(40, 'I');
                    for (std::size_t k = 0; k < 40; ++k) line += usual[(k * 7 + at) % usual.size()];
                    std::string odd_line = line, odd_quality = quality;
                    odd_line[at] = static_cast<char>(byte);
                    odd_quality[at] = static_cast<char>(byte);
                    // FASTA (wrapped, CRLF), FASTQ with the byte in the letters, in the quality.
                    for (const std::string& text :
                         {">r one\n" + odd_line + "\r\n" + line + "\n>s\nACGT\n",
                          "@r one\n" + odd_line + "\r\n+\n" + quality + "\n@s\nACGT\n+s\nIIII\n",
                          "@r one\n" + line + "\n+r\n" + odd_quality + "\r\n@s\nACGT\n+\n!!!!"}) {
                        std::string fast_error, full_error;
                        const std::vector<Sequence> fast = parse(text, false, alphabet, fast_error);
                        const std::vector<Sequence> full = parse(text, true, alphabet, full_error);
                        const QString where = QStringLiteral("%1, byte 0x%2 at %3 of %4")
                                                  .arg(QString::fromUtf8(to_string(alphabet).data()))
                                                  .arg(byte, 2, 16, QChar('0'))
                                                  .arg(at)
                                                  .arg(QString::fromStdString(text.substr(0, 20)));
                        QVERIFY2(fast_error == full_error,
                                 qPrintable(where + ": " + QString::fromStdString(fast_error) + " instead of " +
                                            QString::fromStdString(full_error)));
                        faults += full_error.empty() ? 0 : 1;
                        QVERIFY2(fast.size() == full.size(), qPrintable(where));
                        for (std::size_t k = 0; k < full.size(); ++k) {
                            QCOMPARE(fast[k].id, full[k].id);
                            QCOMPARE(fast[k].description, full[k].description);
                            QCOMPARE(fast[k].residues, full[k].residues);
                            QCOMPARE(fast[k].quality, full[k].quality);
                        }
                    }
                }
            }
        }
        QVERIFY(faults > 1000);  // most bytes are no residue: the faults were compared too
    }

    void repeated_ids_counted_alike() {
        const std::string path = write_file(dir_, "dup.fa", ">x\nAC\n>y\nAC\n>x\nAC\n>z\nAC\n>y\nAC\n>x\nAC\n");
        const SequenceSet whole = read_sequences(path);
        RepeatedIds ids;
        for (const Sequence& s : whole.records) ids.add(s.id);
        QVERIFY(!whole.duplicate_id_warning().empty());
        QCOMPARE(ids.warning(path), whole.duplicate_id_warning());
        RepeatedIds distinct;
        for (const char* id : {"a", "b", "c"}) distinct.add(id);
        QVERIFY(distinct.warning(path).empty());
    }
    // Plain FASTQ cut by offset: quality lines that open with '@' and '+'
    // (and a '+' line naming the id, blank lines, CRLF, empty records), reads
    // longer than the cutter's 64 KiB window, and malformed files whose cuts
    // could fall inside a record (an empty record whose quality line is an
    // '@' line; a sequence line opening with '@'; a missing '+' line): the
    // same records, or the same first error, as the whole file read in order.
    void fastq_cut_by_offset_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("malformed");
        const auto row = [this](const char* name, const std::string& text, bool malformed = false) {
            QTest::newRow(name) << QString::fromStdString(write_file(dir_, name, text)) << malformed;
        };
        std::mt19937 rng(23);
        std::string marks;
        for (int k = 0; k < 60; ++k) {
            std::string residues, quality;
            const int length = static_cast<int>(rng() % 12);
            for (int i = 0; i < length; ++i) {
                residues += "ACGTN"[rng() % 5];
                quality += i == 0 ? "@+I"[k % 3] : static_cast<char>('!' + rng() % 94);
            }
            const char* end = k % 4 ? "\n" : "\r\n";
            marks += "@q" + std::to_string(k) + end + residues + end + (k % 5 ? "+" : "+q" + std::to_string(k)) + end +
                     quality + end + (k % 9 == 0 ? "\n" : "");
        }
        row("marker qualities.fq", marks);
        row("quality like a record.fq", "@a\nAC\n+\n@b\n@b\nAC\n+\n+I\n@c\nA\n+\n@\n");
        std::string long_reads;
        for (int k = 0; k < 3; ++k) {
            std::string residues(70000 + k * 9000, 'A'), quality(residues.size(), '@');
            for (std::size_t i = 0; i < residues.size(); ++i) residues[i] = "ACGT"[rng() % 4];
            long_reads += "@long" + std::to_string(k) + "\n" + residues + "\n+\n" + quality + "\n";
        }
        row("long reads.fq", long_reads);
        row("empty record, at quality.fq", "@r\n\n+\n@x\nAC\n+\nII\n@s\nA\n+\nI\n", true);
        row("sequence opens with at.fq", "@r\n@CGT\n+\nIIII\n@s\nAC\n+\nII\n", true);
        row("no plus line.fq", "@r\nACGT\n@IIII\n@s\nAC\n+\nII\n@t\nA\n+\nI\n", true);
        row("short quality.fq", "@r\nACGT\n+\n@II\n@s\nAC\n+\nII\n", true);
    }
    void fastq_cut_by_offset() {
        QFETCH(QString, path);
        QFETCH(bool, malformed);
        ReadOptions options;
        options.allow_empty = true;
        const BlockRead whole = read_whole(path.toStdString(), options);
        QVERIFY2(whole.error.empty() != malformed, whole.error.c_str());
        const bool long_reads = path.contains("long reads");
        for (std::size_t block_bytes = 1; block_bytes <= (long_reads ? 4 : 48); ++block_bytes)
            for (bool reverse : {false, true}) {
                bool offset = false;
                const std::size_t bytes = long_reads ? block_bytes * 40000 : block_bytes;
                const BlockRead blocks = read_out_of_order(path.toStdString(), bytes, reverse, options, &offset);
                const QString where = QStringLiteral("blocks of %1%2").arg(bytes).arg(reverse ? ", last first" : "");
                QVERIFY2(blocks.error == whole.error, qPrintable(where + ": " + QString::fromStdString(blocks.error) +
                                                                 " instead of " + QString::fromStdString(whole.error)));
                if (!whole.error.empty()) continue;
                QVERIFY(offset);
                compare_records(blocks, whole);
                if (QTest::currentTestFailed()) return;
            }
    }
};

QTEST_GUILESS_MAIN(TestRecordBlocks)
#include "test_record_blocks.moc"
