// The streamed pair pipeline (align --zip) inside the engine, its threads at
// work on many tiny chunks: two readers, a pool that parses and formats, the
// aligning thread and the writer. Every pair comes out once, in input order,
// with the scalar reference's score; a cancellation from the progress callback
// and a count mismatch found at the end stop every stage cleanly; SAM's header
// goes out ahead of the last pair with the same bytes. Small and
// quick (it runs under ASan too), and meant for ThreadSanitizer as well.
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/pair_pipeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <zlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace alignscope;

namespace {

constexpr int kPairs = 240;

ScoringScheme blosum62() { return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1); }

// Related random proteins (a fixed seed): target k is query k with point changes.
std::vector<Sequence> proteins(int count, unsigned seed, const std::string& prefix, const std::vector<Sequence>* like) {
    std::mt19937 rng(seed);
    const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
    std::vector<Sequence> out;
    for (int k = 0; k < count; ++k) {
        std::string residues;
        if (like) {
            residues = (*like)[static_cast<std::size_t>(k)].residues;
            for (char& c : residues)
                if (rng() % 5 == 0) c = letters[rng() % letters.size()];
        } else {
            const std::size_t length = 8 + rng() % 90;
            for (std::size_t i = 0; i < length; ++i) residues += letters[rng() % letters.size()];
        }
        out.push_back({prefix + std::to_string(k), "", residues, ""});
    }
    return out;
}

void write_fasta(const QString& path, const std::vector<Sequence>& records) {
    std::ofstream out(path.toStdString());
    for (const Sequence& s : records) out << '>' << s.id << '\n' << s.residues << '\n';
}

// Settings for local alignment of the two files in chunks of `chunk` pairs on `threads` threads.
PairPipelineSettings settings_for(const QString& queries, const QString& targets, std::size_t chunk, int threads) {
    PairPipelineSettings s;
    s.query_path = queries.toStdString();
    s.target_path = targets.toStdString();
    s.format = OutputFormat::Tsv;
    s.chunk_pairs = chunk;
    s.threads = threads;
    s.writer.scheme = blosum62();
    s.make_job = [](AlphabetKind, AlphabetKind) {
        PairJob job;
        job.scheme = blosum62();
        job.options.mode = AlignmentMode::Local;
        job.threads = 2;
        return job;
    };
    s.count_mismatch = [](std::uint64_t q, std::uint64_t t) {
        return std::to_string(q) + " queries but " + std::to_string(t) + " targets";
    };
    return s;
}

// A backend that takes its time over each chunk, as a GPU's start-up and
// copies do, so that what runs beside the alignment gets ahead of it.
class SlowBackend : public Backend {
public:
    explicit SlowBackend(Backend& inner) : inner_(inner) {}
    DeviceInfo info() const override { return inner_.info(); }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        return inner_.align_pairs(job, context);
    }

private:
    Backend& inner_;
};

QByteArray file_bytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

std::vector<QStringList> tsv_rows(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    std::vector<QStringList> rows;
    const QList<QByteArray> lines = file.readAll().split('\n');
    for (int k = 1; k < lines.size(); ++k)  // after the header
        if (!lines[k].isEmpty()) rows.push_back(QString::fromUtf8(lines[k]).split('\t'));
    return rows;
}

}  // namespace

class TestPairPipeline : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();
    std::vector<Sequence> queries_ = proteins(kPairs, 7, "q", nullptr);
    std::vector<Sequence> targets_ = proteins(kPairs, 11, "t", &queries_);
    QString query_path_, target_path_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        query_path_ = dir_.filePath("queries.fa");
        target_path_ = dir_.filePath("targets.fa");
        write_fasta(query_path_, queries_);
        write_fasta(target_path_, targets_);
    }

    // Chunks of three pairs on four threads: all pairs, in order, each with the reference's score.
    void every_pair_in_order_across_tiny_chunks() {
        const QString output = dir_.filePath("out.tsv");
        JobContext context;
        std::atomic<std::uint64_t> reported{0};  // progress comes from the backend's threads
        context.progress = [&reported](const Progress& p) { reported = p.items_done; };
        {
            AtomicOutput out(output.toStdString());
            const PairPipelineStats stats = run_pair_pipeline(settings_for(query_path_, target_path_, 3, 4),
                                                              registry_->select("cpu"), context, out);
            out.commit();
            QCOMPARE(stats.pairs, std::uint64_t{kPairs});
            QVERIFY(stats.chunks >= kPairs / 3);
        }
        QVERIFY(reported > 0);
        const auto rows = tsv_rows(output);
        QCOMPARE(int(rows.size()), kPairs);
        AlignOptions local;
        local.mode = AlignmentMode::Local;
        for (int k = 0; k < kPairs; ++k) {
            const auto& q = queries_[std::size_t(k)];
            const auto& t = targets_[std::size_t(k)];
            QCOMPARE(rows[std::size_t(k)].value(0), QString::fromStdString(q.id));
            QCOMPARE(rows[std::size_t(k)].value(1), QString::fromStdString(t.id));
            const Alignment expected = align_reference(q.residues, t.residues, blosum62(), local);
            QCOMPARE(rows[std::size_t(k)].value(2).toLongLong(), static_cast<qlonglong>(expected.score));
        }
    }

    // Several chunks aligned at once (as on a GPU): still every pair once, in
    // input order, with the reference's score; the summed progress never goes
    // back and ends at every pair and cell.
    void every_pair_in_order_with_chunks_aligned_at_once() {
        const QString output = dir_.filePath("at_once.tsv");
        JobContext context;
        std::mutex mutex;
        std::uint64_t last_items = 0, last_cells = 0;
        bool backwards = false;
        context.progress = [&](const Progress& p) {
            std::lock_guard lock(mutex);
            backwards = backwards || p.items_done < last_items || p.cells_done < last_cells;
            last_items = p.items_done;
            last_cells = p.cells_done;
        };
        PairPipelineSettings settings = settings_for(query_path_, target_path_, 3, 4);
        settings.aligning_chunks = 3;
        std::uint64_t cells = 0;
        for (int k = 0; k < kPairs; ++k)
            cells += queries_[std::size_t(k)].residues.size() * targets_[std::size_t(k)].residues.size();
        {
            AtomicOutput out(output.toStdString());
            const PairPipelineStats stats = run_pair_pipeline(settings, registry_->select("cpu"), context, out);
            out.commit();
            QCOMPARE(stats.pairs, std::uint64_t{kPairs});
            QCOMPARE(stats.cells, cells);
        }
        QVERIFY(!backwards);
        QCOMPARE(last_items, std::uint64_t{kPairs});
        QCOMPARE(last_cells, cells);
        const auto rows = tsv_rows(output);
        QCOMPARE(int(rows.size()), kPairs);
        AlignOptions local;
        local.mode = AlignmentMode::Local;
        for (int k = 0; k < kPairs; ++k) {
            const auto& q = queries_[std::size_t(k)];
            const auto& t = targets_[std::size_t(k)];
            QCOMPARE(rows[std::size_t(k)].value(0), QString::fromStdString(q.id));
            const Alignment expected = align_reference(q.residues, t.residues, blosum62(), local);
            QCOMPARE(rows[std::size_t(k)].value(2).toLongLong(), static_cast<qlonglong>(expected.score));
        }
    }

    // SAM into a file: the targets' @SQ lines listed from the target file
    // ahead of the pipeline let the header out while pairs are still being
    // aligned, and the body follows it as it comes. The bytes are those of the same job
    // whose target file is gzip, which is not read twice (the body waits in a
    // spool for the last pair, the @SQ lines come from the pairs).
    void sam_header_ahead_same_bytes_as_after_the_last_pair() {
        const QString gzip_targets = dir_.filePath("targets.fa.gz");
        {
            const QByteArray text = file_bytes(target_path_);
            gzFile gz = gzopen(gzip_targets.toLocal8Bit().constData(), "wb");
            QVERIFY(gz != nullptr);
            QCOMPARE(gzwrite(gz, text.constData(), static_cast<unsigned>(text.size())), int(text.size()));
            QCOMPARE(gzclose(gz), Z_OK);
        }
        SlowBackend slow(registry_->select("cpu"));
        PairPipelineStats ahead, after;
        const QString listed = dir_.filePath("listed.sam"), spooled = dir_.filePath("spooled.sam");
        for (const auto& [targets, output, stats] :
             {std::tuple{target_path_, listed, &ahead}, std::tuple{gzip_targets, spooled, &after}}) {
            PairPipelineSettings settings = settings_for(query_path_, targets, 30, 3);
            settings.format = OutputFormat::Sam;
            JobContext context;
            AtomicOutput out(output.toStdString());
            *stats = run_pair_pipeline(settings, slow, context, out);
            out.commit();
        }
        QVERIFY2(ahead.sam_head > 0, "the header waited for the last pair");
        QCOMPARE(after.sam_head, 0.0);
        const QByteArray bytes = file_bytes(listed);
        QCOMPARE(bytes, file_bytes(spooled));
        const QList<QByteArray> lines = bytes.split('\n');
        int references = 0, records = 0;
        for (const QByteArray& line : lines) {
            if (line.startsWith("@SQ\tSN:")) {
                const Sequence& t = targets_[std::size_t(references++)];
                QCOMPARE(line, QByteArray("@SQ\tSN:") + t.id.c_str() +
                                   "\tLN:" + QByteArray::number(qulonglong(t.residues.size())));
            } else if (!line.isEmpty() && !line.startsWith('@')) {
                QCOMPARE(line.split('\t').value(0), QByteArray(queries_[std::size_t(records++)].id.c_str()));
            }
        }
        QCOMPARE(references, kPairs);
        QCOMPARE(records, kPairs);
    }

    // A cancellation asked for from the progress callback (a backend thread)
    // ends the run with Cancelled, every thread joined, nothing committed.
    void cancel_from_progress_stops_every_stage() {
        CancellationToken token;
        JobContext context;
        context.cancel = &token;
        context.progress = [&token](const Progress& p) {
            if (p.items_done >= 30) token.cancel();
        };
        const QString output = dir_.filePath("cancelled.tsv");
        bool cancelled = false;
        try {
            AtomicOutput out(output.toStdString());
            run_pair_pipeline(settings_for(query_path_, target_path_, 2, 4), registry_->select("cpu"), context, out);
        } catch (const Cancelled&) {
            cancelled = true;
        }
        QVERIFY(cancelled);
        QVERIFY(!QFile::exists(output));
    }

    // Files of unequal length: found when both readers are done, reported
    // with the caller's words, the other stages stopped.
    void count_mismatch_stops_every_stage() {
        const QString shorter = dir_.filePath("shorter.fa");
        write_fasta(shorter, std::vector<Sequence>(targets_.begin(), targets_.begin() + kPairs - 5));
        JobContext context;
        QString message;
        try {
            AtomicOutput out(dir_.filePath("mismatch.tsv").toStdString());
            run_pair_pipeline(settings_for(query_path_, shorter, 4, 3), registry_->select("cpu"), context, out);
        } catch (const Error& e) {
            message = QString::fromStdString(e.what());
        }
        QVERIFY2(message.contains(QString("%1 queries but %2 targets").arg(kPairs).arg(kPairs - 5)),
                 qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestPairPipeline)
#include "test_pair_pipeline.moc"
