// FASTA/FASTQ reading: hand-made good files (CRLF, wrapping, blank lines, gzip),
// a corpus of malformed files with the exact error each must give, real
// packaged data checked against `gzip -dc` and a plain line parser, and very
// long lines generated on the fly.
#include "oracles.hpp"
#include "sanitizers.hpp"

#include <alignscope/error.hpp>
#include <alignscope/seq/record_blocks.hpp>
#include <alignscope/seq/sequence_reader.hpp>

#include <zlib.h>

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>

using namespace alignscope;

Q_DECLARE_METATYPE(alignscope::AlphabetKind)

namespace {

const QString kData = QStringLiteral(ALIGNSCOPE_TEST_DATA "/");
const QString kMalformed = QStringLiteral(ALIGNSCOPE_TEST_DATA "/malformed/");

std::vector<Sequence> read_all(const std::string& path) {
    SequenceReader reader(path);
    std::vector<Sequence> records;
    Sequence s;
    while (reader.next(s)) records.push_back(s);
    return records;
}

template <typename F>
QString error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no error>");
}

void write_file(const QString& path, const std::string& bytes) {
    std::ofstream out(path.toStdString(), std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    QVERIFY(out.good());
}

void write_gzip(const QString& path, const std::string& bytes, const char* mode = "wb1") {
    gzFile gz = gzopen(path.toLocal8Bit().constData(), mode);
    QVERIFY(gz);
    for (std::size_t off = 0; off < bytes.size(); off += 1 << 24) {
        const auto n = static_cast<unsigned>(std::min<std::size_t>(1 << 24, bytes.size() - off));
        QCOMPARE(gzwrite(gz, bytes.data() + off, n), static_cast<int>(n));
    }
    QCOMPARE(gzclose(gz), Z_OK);
}

// Residues from a fixed-seed xorshift generator (synthetic: only the length and
// the bytes matter here, the content is compared byte for byte).
std::string random_dna(std::size_t n, std::uint64_t seed) {
    std::string s(n, 'A');
    std::uint64_t x = seed;
    for (auto& c : s) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = "ACGT"[x & 3];
    }
    return s;
}

// A deliberately naive reference parser over text another tool decompressed:
// FASTA: '>' lines start records; FASTQ: groups of four lines.
std::vector<Sequence> reference_parse(const QByteArray& text, bool fastq) {
    std::vector<Sequence> out;
    const QList<QByteArray> lines = text.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i) {
        QByteArray line = lines[i];
        if (line.endsWith('\r')) line.chop(1);
        if (fastq) {
            if (line.isEmpty()) continue;
            Sequence s;
            s.id = line.mid(1).split(' ').first().split('\t').first().toStdString();
            s.residues = lines[i + 1].trimmed().toStdString();
            s.quality = lines[i + 3].trimmed().toStdString();
            out.push_back(s);
            i += 3;
        } else if (line.startsWith('>')) {
            Sequence s;
            s.id = line.mid(1).simplified().split(' ').first().toStdString();
            out.push_back(s);
        } else if (!out.empty()) {
            QByteArray letters = line;
            letters.replace(' ', "").replace('\t', "");
            out.back().residues += letters.toStdString();
        }
    }
    return out;
}

}  // namespace

class TestSequenceReader : public QObject {
    Q_OBJECT
private slots:
    void fasta_crlf_wrapped() {
        SequenceReader reader((kData + "seq_wrapped_crlf.fa").toStdString());
        QVERIFY(!reader.format());
        Sequence s;
        QVERIFY(reader.next(s));
        QCOMPARE(reader.format(), std::optional<SequenceFormat>(SequenceFormat::Fasta));
        QCOMPARE(s.id, std::string("seq1"));
        QCOMPARE(s.description, std::string("first test sequence"));
        QCOMPARE(s.residues, std::string("acgtacgtacGTACGTACGTAC"));
        QVERIFY(s.quality.empty());
        QCOMPARE(reader.line(), std::uint64_t{1});
        QVERIFY(reader.next(s));
        QCOMPARE(s.id, std::string("seq2"));
        QCOMPARE(s.description, std::string());
        QCOMPARE(s.residues, std::string("NNNNacgt"));
        QCOMPARE(reader.line(), std::uint64_t{6});
        QVERIFY(reader.next(s));
        QCOMPARE(s.id, std::string("seq3"));
        QCOMPARE(s.description, std::string("tabbed  description"));
        QCOMPARE(s.residues, std::string("ACGT"));
        QCOMPARE(reader.line(), std::uint64_t{9});
        QVERIFY(!reader.next(s));
        QVERIFY(!reader.next(s));  // stays at the end
        QCOMPARE(reader.bytes_read(), reader.file_size());
        QCOMPARE(reader.file_size(), static_cast<std::uint64_t>(QFileInfo(kData + "seq_wrapped_crlf.fa").size()));

        const SequenceSet set = read_sequences((kData + "seq_wrapped_crlf.fa").toStdString());
        QCOMPARE(set.alphabet, AlphabetKind::Dna);
        QCOMPARE(set.records.size(), std::size_t{3});
        QCOMPARE(set.records[0].residues, std::string("ACGTACGTACGTACGTACGTAC"));  // normalised
        QCOMPARE(set.residue_count(), std::uint64_t{22 + 8 + 4});
    }

    void fastq_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("lf") << "seq_reads.fq";
        QTest::newRow("crlf") << "seq_reads_crlf.fq";
    }
    void fastq() {
        QFETCH(QString, file);
        SequenceReader reader((kData + file).toStdString());
        Sequence s;
        QVERIFY(reader.next(s));
        QCOMPARE(reader.format(), std::optional<SequenceFormat>(SequenceFormat::Fastq));
        QCOMPARE(s.id, std::string("read1"));
        QCOMPARE(s.description, std::string("lane=1"));
        QCOMPARE(s.residues, std::string("ACGTNACGTA"));
        QCOMPARE(s.quality, std::string("IIIIIIIII#"));
        QVERIFY(reader.next(s));
        QCOMPARE(s.id, std::string("read2"));
        QCOMPARE(s.residues, std::string("GGGCCC"));
        QCOMPARE(s.quality, std::string("!!!~~~"));
        QCOMPARE(reader.line(), std::uint64_t{5});
        QVERIFY(reader.next(s));
        QCOMPARE(s.id, std::string("read3"));
        QCOMPARE(s.description, std::string("empty"));
        QVERIFY(s.residues.empty());
        QVERIFY(s.quality.empty());
        QCOMPARE(reader.line(), std::uint64_t{10});
        QVERIFY(!reader.next(s));

        const std::string path = (kData + file).toStdString();
        QCOMPARE(error_of([&] { read_sequences(path); }),
                 QString("%1:10: record 'read3': expected residues, the record is empty").arg(kData + file));
        ReadOptions options;
        options.allow_empty = true;
        const SequenceSet set = read_sequences(path, options);
        QCOMPARE(set.records.size(), std::size_t{3});
        QCOMPARE(set.alphabet, AlphabetKind::Dna);
        QCOMPARE(set.records[0].quality, std::string("IIIIIIIII#"));
    }

    void no_final_newline() {
        const auto records = read_all((kData + "seq_no_final_newline.fa").toStdString());
        QCOMPARE(records.size(), std::size_t{1});
        QCOMPARE(records[0].id, std::string("last"));
        QCOMPARE(records[0].residues, std::string("ACGTAC"));
    }

    void gzip_same_as_plain() {
        const auto plain = read_all((kData + "seq_proteins.fa").toStdString());
        const auto gz = read_all((kData + "seq_proteins.fa.gz").toStdString());
        QCOMPARE(plain.size(), std::size_t{2});
        QCOMPARE(gz.size(), plain.size());
        for (std::size_t i = 0; i < plain.size(); ++i) {
            QCOMPARE(gz[i].id, plain[i].id);
            QCOMPARE(gz[i].description, plain[i].description);
            QCOMPARE(gz[i].residues, plain[i].residues);
        }
        QCOMPARE(plain[0].id, std::string("sp|P69905|HBA_HUMAN"));
        QCOMPARE(plain[1].residues.size(), std::size_t{148});  // 147 residues and a '*'

        const SequenceSet set = read_sequences((kData + "seq_proteins.fa.gz").toStdString());
        QCOMPARE(set.alphabet, AlphabetKind::Protein);
        QCOMPARE(set.records[0].residues.size(), std::size_t{142});
        QCOMPARE(set.records[1].residues.size(), std::size_t{147});  // the stop is removed
    }

    // Concatenated gzip members (as `cat a.gz b.gz` makes) are read as one stream.
    void gzip_members() {
        QTemporaryDir dir;
        const QString path = dir.filePath("two.fa.gz");
        write_gzip(path, ">a\nACGT\nAC", "wb");
        write_gzip(path, "GT\n>b\nTTTT\n", "ab");
        const auto records = read_all(path.toStdString());
        QCOMPARE(records.size(), std::size_t{2});
        QCOMPARE(records[0].residues, std::string("ACGTACGT"));
        QCOMPARE(records[1].residues, std::string("TTTT"));
    }

    void standard_input() {
        const int saved = dup(STDIN_FILENO);
        const int fd = open((kData + "seq_proteins.fa.gz").toLocal8Bit().constData(), O_RDONLY);
        QVERIFY(saved >= 0 && fd >= 0);
        dup2(fd, STDIN_FILENO);
        close(fd);
        QString error;
        std::vector<Sequence> records;
        try {
            SequenceReader reader("-");
            QCOMPARE(reader.file_size(), std::uint64_t{0});
            Sequence s;
            while (reader.next(s)) records.push_back(s);
        } catch (const Error& e) {
            error = e.what();
        }
        dup2(saved, STDIN_FILENO);
        close(saved);
        QCOMPARE(error, QString());
        QCOMPARE(records.size(), std::size_t{2});
        QCOMPARE(records[1].id, std::string("sp|P68871|HBB_HUMAN"));
    }

    void malformed_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QStringList>("expected");  // substrings of the message
        auto row = [](const char* file, std::initializer_list<QString> expected) {
            QTest::newRow(file) << QString(file) << QStringList(expected);
        };
        row("no_header.fa", {"no_header.fa:1: expected a FASTA header '>' or FASTQ header '@'"});
        row("garbage.bin", {"garbage.bin:1: expected a FASTA header '>' or FASTQ header '@'"});
        row("blank_then_text.fa", {"blank_then_text.fa:3: expected a FASTA header '>' or FASTQ header '@'"});
        row("empty_id.fa", {"empty_id.fa:3: expected a sequence id after '>'"});
        row("header_control.fa", {"header_control.fa:1: expected a header of text, found the control byte 0x07"});
        row("bad_utf8_header.fa",
            {"bad_utf8_header.fa:1: expected UTF-8 text in the header of record 'r1', found the non-ASCII byte 0xE9"});
        row("nul_bytes.fa", {"nul_bytes.fa:2: expected sequence text, found a NUL byte"});
        row("non_ascii.fa", {"non_ascii.fa:2: expected sequence text, found the non-ASCII byte 0xC3"});
        row("control_byte.fa", {"control_byte.fa:2: expected sequence text, found the control byte 0x01"});
        row("fastq_bad_plus.fq", {"fastq_bad_plus.fq:3: expected the '+' line of record 'r1'"});
        row("fastq_multiline.fq",
            {"fastq_multiline.fq:3: expected the '+' line of record 'r1'", "multi-line FASTQ is not supported"});
        row("fastq_plus_other_id.fq", {"fastq_plus_other_id.fq:3: expected '+' alone or '+r1', found '+r2'"});
        row("fastq_qual_length.fq",
            {"fastq_qual_length.fq:4: expected 4 quality letters of record 'r1' (one per residue), found 3"});
        row("fastq_qual_space.fq", {"fastq_qual_space.fq:4: expected quality letters '!' to '~', found a space"});
        row("truncated.fq", {"truncated.fq:7: expected the '+' line of record 'r2', found the end of the file"});
        row("truncated_after_plus.fq",
            {"truncated_after_plus.fq:4: expected the quality line of record 'r1', found the end of the file"});
        row("fastq_then_fasta.fq", {"fastq_then_fasta.fq:5: expected a FASTQ header '@'"});
        row("fastq_gap.fq", {"fastq_gap.fq:1: record 'r1': expected no gap characters or trailing stop"});
        row("truncated.fa.gz", {"truncated.fa.gz:", ": cannot read: the gzip data is truncated"});
        row("corrupt.fa.gz", {"corrupt.fa.gz:", ": cannot read: the gzip data is corrupt"});
        row("bad_residue.fa",
            {"bad_residue.fa:4: record 'r2': residue 'J' at position 12 is not valid in a dna sequence"});
        row("fasta_stray_letter.fa",
            {"fasta_stray_letter.fa:5: record 'r1': residue 'X' at position 5 is not valid in a dna sequence"});
        row("empty_record.fa", {"empty_record.fa:3: record 'r2': expected residues, the record is empty"});
        row("empty.fa", {"empty.fa: expected FASTA ('>') or FASTQ ('@') records, found none"});
        row("no_such_file.fa", {"no_such_file.fa: cannot open: No such file or directory"});
        row(".", {"malformed/.: cannot open: it is a directory"});
    }
    void malformed() {
        QFETCH(QString, file);
        QFETCH(QStringList, expected);
        const std::string path = (kMalformed + file).toStdString();
        const QString message = error_of([&path] { read_sequences(path); });
        QVERIFY2(message.startsWith(kMalformed + file), qPrintable(message));
        for (const QString& part : expected) QVERIFY2(message.contains(part), qPrintable(message));
    }

    void alphabet_override() {
        const std::string proteins = (kData + "seq_proteins.fa").toStdString();
        ReadOptions dna;
        dna.alphabet = AlphabetKind::Dna;
        QCOMPARE(error_of([&] { read_sequences(proteins, dna); }),
                 QString::fromStdString(proteins + ":2: record 'sp|P69905|HBA_HUMAN': residue 'L' at position 3 "
                                                   "is not valid in a dna sequence"));  // M and V are IUPAC codes
        ReadOptions rna;
        rna.alphabet = AlphabetKind::Rna;
        const std::string reads = (kData + "seq_wrapped_crlf.fa").toStdString();
        QCOMPARE(error_of([&] { read_sequences(reads, rna); }),
                 QString::fromStdString(reads +
                                        ":2: record 'seq1': residue 'T' at position 4 is not valid in a rna sequence"));
        ReadOptions protein;
        protein.alphabet = AlphabetKind::Protein;
        QCOMPARE(read_sequences(reads, protein).alphabet, AlphabetKind::Protein);
    }

    // Detection looks at about the first megabyte of residues, then holds the
    // rest of the file to that alphabet.
    void detection_window() {
        QTemporaryDir dir;
        const QString dna_first = dir.filePath("dna_first.fa");
        write_file(dna_first, ">r1\n" + random_dna(1'500'000, 1) + "\n>r2\nMKVLWEFPQ\n");
        QCOMPARE(error_of([&] { read_sequences(dna_first.toStdString()); }),
                 dna_first + ":4: record 'r2': residue 'L' at position 4 is not valid in a dna sequence");

        const QString protein_bulk = dir.filePath("protein_bulk.fa");
        std::string protein;
        while (protein.size() < 1'200'000) protein += "MKVLWEFPQHRSTYIDNA";
        write_file(protein_bulk, ">r1\nACGT\n>r2\n" + protein + "\n>r3\nACGT\n");
        const SequenceSet set = read_sequences(protein_bulk.toStdString());
        QCOMPARE(set.alphabet, AlphabetKind::Protein);
        QCOMPARE(set.records.size(), std::size_t{3});
    }

    // One 50 MB line, plain and gzip: proves long lines are read in linear time
    // and byte for byte; progress is reported about every megabyte.
    void long_line() {
        QTemporaryDir dir;
        const std::string residues = random_dna(50'000'000, 42);
        const std::string text = ">big a single 50 MB line\n" + residues + "\n";
        const QString plain = dir.filePath("big.fa");
        const QString gz = dir.filePath("big.fa.gz");
        write_file(plain, text);
        write_gzip(gz, text);

        for (const QString& path : {plain, gz}) {
            QElapsedTimer timer;
            timer.start();
            const auto records = read_all(path.toStdString());
            qInfo("%s: read 50 MB in %lld ms", qPrintable(QFileInfo(path).fileName()), timer.elapsed());
            QCOMPARE(records.size(), std::size_t{1});
            QCOMPARE(records[0].id, std::string("big"));
            QVERIFY(records[0].residues == residues);
        }

        std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
        const SequenceSet set = read_sequences(gz.toStdString(), {}, [&calls](std::uint64_t done, std::uint64_t total) {
            calls.emplace_back(done, total);
        });
        const auto size = static_cast<std::uint64_t>(QFileInfo(gz).size());
        QCOMPARE(set.residue_count(), std::uint64_t{50'000'000});
        QVERIFY2(calls.size() >= size / (1 << 20), qPrintable(QString::number(calls.size())));
        QCOMPARE(calls.front().first, std::uint64_t{0});
        QCOMPARE(calls.back().first, size);
        for (std::size_t i = 0; i < calls.size(); ++i) {
            QCOMPARE(calls[i].second, size);
            if (i) QVERIFY(calls[i].first >= calls[i - 1].first);
        }

        // A callback that throws Cancelled stops the read.
        int seen = 0;
        bool cancelled = false;
        try {
            read_sequences(gz.toStdString(), {}, [&seen](std::uint64_t, std::uint64_t) {
                if (++seen == 3) throw Cancelled();
            });
        } catch (const Cancelled&) {
            cancelled = true;
        }
        QVERIFY(cancelled);
        QCOMPARE(seen, 3);
    }

    // Many short wrapped CRLF lines: the other extreme of line length.
    void many_short_lines() {
        QTemporaryDir dir;
        const std::string residues = random_dna(10'000'000, 7);
        std::string text = ">wrapped\r\n";
        for (std::size_t i = 0; i < residues.size(); i += 60) text += residues.substr(i, 60) + "\r\n";
        const QString path = dir.filePath("wrapped.fa");
        write_file(path, text);
        const auto records = read_all(path.toStdString());
        QCOMPARE(records.size(), std::size_t{1});
        QVERIFY(records[0].residues == residues);
    }

    void packaged_data_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("fastq");
        QTest::addColumn<AlphabetKind>("alphabet");
        QTest::newRow("mmseqs2 DB.fasta.gz")
            << "/usr/share/doc/mmseqs2/example-data/DB.fasta.gz" << false << AlphabetKind::Protein;
        QTest::newRow("bowtie2 lambda_virus.fa.gz")
            << "/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz" << false << AlphabetKind::Dna;
        QTest::newRow("bowtie2 reads_1.fq.gz")
            << "/usr/share/doc/bowtie2/examples/reads/reads_1.fq.gz" << true << AlphabetKind::Dna;
        QTest::newRow("bowtie2 longreads.fq.gz")
            << "/usr/share/doc/bowtie2/examples/reads/longreads.fq.gz" << true << AlphabetKind::Dna;
        QTest::newRow("EMBOSS globins630.fa")
            << "/usr/share/EMBOSS/test/data/hmmnew/globins630.fa" << false << AlphabetKind::Protein;
    }
    // Real files written by other people, against `gzip -dc` and a naive parser.
    void packaged_data() {
        QFETCH(QString, path);
        QFETCH(bool, fastq);
        QFETCH(AlphabetKind, alphabet);
        ALIGNSCOPE_REQUIRE_ORACLE(QFileInfo::exists(path), path + " is absent (its Debian package is not installed)");
        QByteArray text;
        if (path.endsWith(".gz")) {
            QProcess gzip;
            gzip.start("gzip", {"-dc", path});
            QVERIFY(gzip.waitForFinished(60000));
            QCOMPARE(gzip.exitCode(), 0);
            text = gzip.readAllStandardOutput();
        } else {
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            text = f.readAll();
        }
        const auto expected = reference_parse(text, fastq);
        const auto records = read_all(path.toStdString());
        QVERIFY(!expected.empty());
        QCOMPARE(records.size(), expected.size());
        for (std::size_t i = 0; i < records.size(); ++i) {
            QCOMPARE(records[i].id, expected[i].id);
            QCOMPARE(records[i].residues, expected[i].residues);
            QCOMPARE(records[i].quality, expected[i].quality);
        }
        QCOMPARE(read_sequences(path.toStdString()).alphabet, alphabet);
    }
    // A residue error names the line the residue is on, not the record's header,
    // through wrapped lines of any widths, blank lines and gap characters.
    void residue_error_names_its_line_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("wrapped") << QByteArray(">r1\nACGTACGT\nACGTACGT\nACGTAJGT\nACG\n")
                                 << ":4: record 'r1': residue 'J' at position 22";
        QTest::newRow("ragged lines and a blank one")
            << QByteArray(">r1\nACGT\nACGTACGTAC\n\nAC\nACGTTTZ\n") << ":6: record 'r1': residue 'Z' at position 23";
        QTest::newRow("gaps before it") << QByteArray(">r1\nAC--GT\n..AC\nA-CQ\n")
                                        << ":4: record 'r1': residue 'Q' at position 9";
        QTest::newRow("second record, CRLF") << QByteArray(">r1\r\nACGT\r\n>r2\r\nACGT\r\nAC\r\nGGGE\r\n")
                                             << ":6: record 'r2': residue 'E' at position 10";
        QTest::newRow("fastq") << QByteArray("@r1\nACGT\n+\nIIII\n@r2\nACJT\n+\nIIII\n")
                               << ":6: record 'r2': residue 'J' at position 3";
    }
    void residue_error_names_its_line() {
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath("r.fa");
        write_file(path, text.toStdString());
        ReadOptions dna;
        dna.alphabet = AlphabetKind::Dna;
        const QString message = error_of([&] { read_sequences(path.toStdString(), dna); });
        QVERIFY2(message.startsWith(path + expected), qPrintable(message));
    }

    // A UTF-8 byte-order mark before the first header is not an error.
    void byte_order_mark() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bom.fa");
        write_file(path, "\xEF\xBB\xBF>r1 first\nACGT\n>r2\nGGCC\n");
        const SequenceSet set = read_sequences(path.toStdString());
        QCOMPARE(set.records.size(), std::size_t{2});
        QCOMPARE(set.records[0].id, std::string("r1"));
        QCOMPARE(set.records[0].residues, std::string("ACGT"));
        // Only at the start: elsewhere those bytes are what they are.
        write_file(path, ">r1\nACGT\n\xEF\xBB\xBF>r2\nGGCC\n");
        QVERIFY(error_of([&] { read_sequences(path.toStdString()); }).contains("non-ASCII byte 0xEF"));
    }

    // Nucleotides written with IUPAC ambiguity codes are nucleotides; a record
    // of only X is protein (X is no nucleotide letter).
    void detection_of_whole_files_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<AlphabetKind>("expected");
        QTest::newRow("IUPAC codes") << QByteArray(">d\nacgtACGTacgtNnRy\n") << AlphabetKind::Dna;
        QTest::newRow("only X") << QByteArray(">x\nXXXXXXXX\n") << AlphabetKind::Protein;
        QTest::newRow("only N") << QByteArray(">n\nNNNN\n") << AlphabetKind::Dna;
        QTest::newRow("protein") << QByteArray(">p\nMVHLTPEEKSAVTALWGKV\n") << AlphabetKind::Protein;
    }
    void detection_of_whole_files() {
        QFETCH(QByteArray, text);
        QFETCH(AlphabetKind, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath("d.fa");
        write_file(path, text.toStdString());
        QCOMPARE(read_sequences(path.toStdString()).alphabet, expected);
    }

    // Records that repeat an earlier id are counted and the first named.
    void duplicate_ids() {
        QTemporaryDir dir;
        const QString path = dir.filePath("dup.fa");
        write_file(path, ">a\nACGT\n>b\nACGT\n>c\nACGT\n>b desc\nAC\n>a\nGG\n>b\nTT\n");
        const SequenceSet set = read_sequences(path.toStdString());
        QCOMPARE(set.duplicate_ids, std::uint64_t{3});
        QCOMPARE(set.first_duplicate, std::size_t{3});
        QCOMPARE(set.first_duplicate_of, std::size_t{1});
        const QString warning = QString::fromStdString(set.duplicate_id_warning());
        QVERIFY2(warning.startsWith(path + ": 3 records repeat the id of an earlier one (the first: record 4, 'b', as "
                                           "record 2)"),
                 qPrintable(warning));
        write_file(path, ">a\nACGT\n>b\nACGT\n");
        QVERIFY(read_sequences(path.toStdString()).duplicate_id_warning().empty());
    }

    // A device is not a sequence file (/dev/zero would be read forever); a pipe is.
    void devices_refused_pipes_read() {
        QVERIFY(error_of([] { read_sequences("/dev/zero"); }).contains("/dev/zero: cannot open: it is a device"));
        QTemporaryDir dir;
        const QString fifo = dir.filePath("in.fifo");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QProcess writer;
        writer.start("sh", {"-c", "printf '>p\\nACGT\\n' > \"$0\"", fifo});
        const SequenceSet set = read_sequences(fifo.toStdString());
        QVERIFY(writer.waitForFinished(10000));
        QCOMPARE(set.records.size(), std::size_t{1});
        QCOMPARE(set.records[0].residues, std::string("ACGT"));
    }

    // A gzip file that inflates past what memory can hold is refused by name,
    // early, with what to do, not read until memory runs out. The process's
    // data limit stands in for a small machine: 512 MiB, so the guard is at 128 MiB.
    void inflating_past_memory_is_refused() {
        // The release build's ctest runs this; under a sanitizer the lowered
        // data limit makes the sanitizer's own allocator fail to map memory.
        if (alignscope::test::kSanitized) QSKIP("a lowered RLIMIT_DATA starves the sanitizer runtime");
        QTemporaryDir dir;
        const QString path = dir.filePath("bomb.fa.gz");
        {
            gzFile gz = gzopen(path.toLocal8Bit().constData(), "wb9");
            QVERIFY(gz);
            QVERIFY(gzputs(gz, ">one huge record\n") > 0);
            const std::string block(1 << 20, 'A');
            for (int k = 0; k < 200; ++k)
                QCOMPARE(gzwrite(gz, block.data(), static_cast<unsigned>(block.size())),
                         static_cast<int>(block.size()));
            QCOMPARE(gzclose(gz), Z_OK);
        }
        QVERIFY(QFileInfo(path).size() < (1 << 20));  // 200 MiB in a small file
        rlimit before{};
        QCOMPARE(getrlimit(RLIMIT_DATA, &before), 0);
        rlimit lowered = before;
        lowered.rlim_cur = std::min<rlim_t>(before.rlim_cur, rlim_t{512} << 20);
        QCOMPARE(setrlimit(RLIMIT_DATA, &lowered), 0);
        const QString message = error_of([&] { read_sequences(path.toStdString()); });
        QCOMPARE(setrlimit(RLIMIT_DATA, &before), 0);
        QVERIFY2(message.startsWith(path + ": ") && message.contains("of residues read so far") &&
                     message.contains("split the file"),
                 qPrintable(message));
    }
    // Many gzip members, as bgzip writes (each written by zlib here, members
    // ending inside lines and records): read whole, by the line reader and by
    // blocks; every truncation inside a member, or a damaged member check, is
    // one error naming the file; bytes after the last member are ignored, as
    // zlib and `gzip -d` ignore them.
    void gzip_many_members() {
        QTemporaryDir dir;
        std::string text;
        for (int k = 0; k < 60; ++k)
            text += ">r" + std::to_string(k) + " member test\n" + random_dna(997, 40 + k) + "\n";
        const QString plain = dir.filePath("many.fa"), gz = dir.filePath("many.fa.gz");
        write_file(plain, text);
        std::vector<std::size_t> member_ends;  // compressed offset after each member
        for (std::size_t off = 0, k = 0; off < text.size(); off += 3001, ++k) {
            write_gzip(gz, text.substr(off, 3001), k == 0 ? "wb6" : "ab6");
            member_ends.push_back(static_cast<std::size_t>(QFileInfo(gz).size()));
        }
        QVERIFY(member_ends.size() > 10);
        const auto expected = read_all(plain.toStdString());
        const auto block_read = [](const std::string& path) {
            RecordBlockReader reader(path, 4096);
            const AlphabetKind alphabet = reader.detect_alphabet();
            std::vector<Sequence> records;
            RecordBlock block;
            while (reader.next(block))
                for (Sequence& r : parse_record_block(block, path, reader.format(), alphabet, ReadOptions{}))
                    records.push_back(std::move(r));
            return records;
        };
        QFile file(gz);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const std::string bytes = file.readAll().toStdString();
        const auto same = [&](const std::string& path) {
            const auto records = read_all(path);
            const SequenceSet set = read_sequences(path);
            const auto blocks = block_read(path);
            QCOMPARE(records.size(), expected.size());
            QCOMPARE(set.records.size(), expected.size());
            QCOMPARE(blocks.size(), expected.size());
            for (std::size_t i = 0; i < expected.size(); ++i) {
                QCOMPARE(records[i].residues, expected[i].residues);
                QCOMPARE(set.records[i].id, expected[i].id);
                QCOMPARE(blocks[i].residues, expected[i].residues);
            }
        };
        same(gz.toStdString());
        const QString padded = dir.filePath("padded.fa.gz");
        write_file(padded, bytes + std::string(512, '\0'));
        same(padded.toStdString());

        const auto fails_with = [&](const std::string& damaged, const char* why) {
            const QString path = dir.filePath("damaged.fa.gz");
            write_file(path, damaged);
            const QString line_reader = error_of([&] { read_sequences(path.toStdString()); });
            const QString by_blocks = error_of([&] { block_read(path.toStdString()); });
            for (const QString& message : {line_reader, by_blocks})
                QVERIFY2(message.startsWith(path + ":") && message.contains(QString(": cannot read: ") + why),
                         qPrintable(message));
            QCOMPARE(by_blocks, line_reader);
        };
        const std::size_t m = member_ends.size() / 2;  // a member in the middle, and the last
        for (std::size_t end : {member_ends[m], member_ends.back()}) {
            for (std::size_t back : {std::size_t{1}, std::size_t{4}, std::size_t{8}, std::size_t{9}, std::size_t{200}})
                fails_with(bytes.substr(0, end - back), "the gzip data is truncated");
            std::string crc = bytes;
            crc[end - 8] = static_cast<char>(crc[end - 8] ^ 0x5a);  // the member's CRC-32
            fails_with(crc, "the gzip data is corrupt");
        }
        fails_with(bytes.substr(0, member_ends[m] + 3), "the gzip data is truncated");  // a header begun
    }
    // A fault in the text read before a gzip fault is the one named, by the
    // line reader and by blocks alike: the line reader parses up to the
    // fault, so the blocks' last text is parsed before the fault is thrown.
    void gzip_fault_after_bad_text() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad then corrupt.fa.gz");
        write_gzip(path, ">a\nACGT\n>b\nAC\x01GT\n>c\nACGT\n", "wb6");
        std::string bytes;
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            bytes = file.readAll().toStdString();
        }
        bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0x5a);  // the CRC-32
        write_file(path, bytes);
        const QString line_reader = error_of([&] { read_sequences(path.toStdString()); });
        QCOMPARE(line_reader, path + ":4: expected sequence text, found the control byte 0x01");
        for (std::size_t block_bytes : {std::size_t{1}, std::size_t{8}, std::size_t{4096}}) {
            const QString by_blocks = error_of([&] {
                RecordBlockReader reader(path.toStdString(), block_bytes);
                const AlphabetKind alphabet = reader.detect_alphabet();
                for (RecordBlock block; reader.next(block);)
                    parse_record_block(block, path.toStdString(), reader.format(), alphabet, ReadOptions{});
            });
            QCOMPARE(by_blocks, line_reader);
        }
        // Without the bad byte, the fault itself, on the line after the text.
        write_gzip(path, ">a\nACGT\n>b\nACGT\n", "wb6");
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            bytes = file.readAll().toStdString();
        }
        bytes.resize(bytes.size() - 3);  // into the length field
        write_file(path, bytes);
        QCOMPARE(error_of([&] { read_sequences(path.toStdString()); }),
                 path + ":5: cannot read: the gzip data is truncated (unexpected end of file)");
    }
};

QTEST_GUILESS_MAIN(TestSequenceReader)
#include "test_sequence_reader.moc"
