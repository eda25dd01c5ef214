// Reading a file as blocks of whole records (the pair pipeline's reader): for
// every block size down to one byte, the records, the alphabet and the first
// error are read_sequences' own, on FASTA and FASTQ (quality lines that start
// with '@' or '+', blank lines, CRLF, a byte-order mark, gzip) and on every
// malformed file of the reader's corpus; repeated ids are counted alike.
#include <alignscope/error.hpp>
#include <alignscope/seq/record_blocks.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <zlib.h>

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <random>

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
            QCOMPARE(blocks.alphabet, whole.alphabet);
            QCOMPARE(blocks.records.size(), whole.records.size());
            for (std::size_t k = 0; k < whole.records.size(); ++k) {
                QCOMPARE(blocks.records[k].id, whole.records[k].id);
                QCOMPARE(blocks.records[k].description, whole.records[k].description);
                QCOMPARE(blocks.records[k].residues, whole.records[k].residues);
                QCOMPARE(blocks.records[k].quality, whole.records[k].quality);
            }
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
};

QTEST_GUILESS_MAIN(TestRecordBlocks)
#include "test_record_blocks.moc"
