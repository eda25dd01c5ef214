// Backend::align_pairs_into, the call that aligns into a result buffer the
// caller keeps from job to job: on the CPU backends ("cpu-ref", "cpu") and on
// a backend with only align_pairs (the default), a buffer first filled with
// garbage, with another job's results, larger or smaller than the job, must
// come back equal in every field to what a fresh align_pairs returns. The pair
// pipeline hands formatted chunks' vectors to later chunks: over a backend
// that writes in place as a GPU does, its output in every format is byte for
// byte that of a backend that makes a new vector per chunk.
#include "random_relatives.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/device/pair_pipeline.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/atomic_file.hpp>
#include <alignscope/score/scoring_scheme.hpp>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <fstream>
#include <random>
#include <thread>
#include <tuple>

using namespace alignscope;

namespace {

std::string random_protein(std::mt19937& rng, std::size_t length) {
    return random_residues(rng, "ACDEFGHIKLMNPQRSTVWY", length);
}

// Related and unrelated pairs of 5-120 residues, ids short and long (past the
// strings' inline storage), and pairs that align to nothing locally
// (tryptophans against prolines: every column scores -4).
struct PairSet {
    std::vector<Sequence> queries, targets;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
};

PairSet make_pairs(std::uint32_t seed, int count) {
    std::mt19937 rng(seed);
    PairSet set;
    for (int k = 0; k < count; ++k) {
        Sequence q, t;
        q.id = (k % 3 == 0 ? "query-with-an-id-well-past-fifteen-characters-" : "q") + std::to_string(k);
        t.id = (k % 4 == 1 ? "target-with-an-id-well-past-fifteen-characters-" : "t") + std::to_string(k);
        q.residues = random_protein(rng, 5 + rng() % 116);
        if (k % 7 == 3) {
            q.residues = std::string(5 + rng() % 20, 'W');
            t.residues = std::string(5 + rng() % 20, 'P');
        } else if (k % 2 == 0) {
            t.residues = q.residues;
            for (char& c : t.residues)
                if (rng() % 5 == 0) c = random_protein(rng, 1)[0];
            t.residues.insert(rng() % t.residues.size(), random_protein(rng, rng() % 6));
        } else {
            t.residues = random_protein(rng, 5 + rng() % 116);
        }
        set.queries.push_back(q);
        set.targets.push_back(t);
        set.pairs.emplace_back(k, k);
    }
    return set;
}

ScoringScheme blosum62() { return ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1); }

PairJob make_job(const PairSet& set, AlignmentMode mode, bool traceback, bool begins) {
    PairJob job;
    job.queries = &set.queries;
    job.targets = &set.targets;
    job.pairs = set.pairs;
    job.scheme = blosum62();
    job.options.mode = mode;
    job.options.traceback = traceback;
    job.options.begins = begins;
    job.threads = 2;
    return job;
}

// An Alignment with every field set to what no job here returns.
Alignment garbage(std::size_t k) {
    Alignment a;
    a.query_id = "stale-query-id-long-enough-to-live-on-the-heap-" + std::to_string(k);
    a.target_id = "stale-target-id-long-enough-to-live-on-the-heap-" + std::to_string(k);
    a.mode = AlignmentMode::SemiGlobal;
    a.score = -987654321;
    a.query_begin = 777, a.query_end = 778, a.target_begin = 779, a.target_end = 780;
    a.query_length = 9999, a.target_length = 8888;
    a.cigar = Cigar::parse("50=3X7I2D40=");
    a.query_aligned = std::string(400, 'Z');
    a.target_aligned = std::string(401, 'B');
    a.stats = {101, 102, 103, 104, 105};
    a.device = "stale-device-name-on-the-heap-too";
    a.kernel = "stale_kernel_name_on_the_heap_too";
    return a;
}

// The first field in which two results differ, or empty.
QString difference(const Alignment& a, const Alignment& b) {
    const auto text = [](const std::string& s) { return QString::fromStdString(s); };
    if (a.query_id != b.query_id) return "query_id " + text(a.query_id) + " / " + text(b.query_id);
    if (a.target_id != b.target_id) return "target_id " + text(a.target_id) + " / " + text(b.target_id);
    if (a.mode != b.mode) return "mode";
    if (a.score != b.score) return QString("score %1 / %2").arg(a.score).arg(b.score);
    if (a.query_begin != b.query_begin || a.query_end != b.query_end) return "query coordinates";
    if (a.target_begin != b.target_begin || a.target_end != b.target_end) return "target coordinates";
    if (a.query_length != b.query_length || a.target_length != b.target_length) return "lengths";
    if (!(a.cigar == b.cigar)) return "cigar " + text(a.cigar.to_string()) + " / " + text(b.cigar.to_string());
    if (a.query_aligned != b.query_aligned) return "query_aligned " + text(a.query_aligned);
    if (a.target_aligned != b.target_aligned) return "target_aligned " + text(a.target_aligned);
    const AlignmentStats &s = a.stats, &t = b.stats;
    if (s.length != t.length || s.identities != t.identities || s.similarities != t.similarities || s.gaps != t.gaps ||
        s.gap_opens != t.gap_opens)
        return "stats";
    if (a.device != b.device) return "device " + text(a.device) + " / " + text(b.device);
    if (a.kernel != b.kernel) return "kernel " + text(a.kernel) + " / " + text(b.kernel);
    return {};
}

void compare_results(const std::vector<Alignment>& got, const std::vector<Alignment>& expected, const QString& what) {
    QVERIFY2(got.size() == expected.size(),
             qPrintable(what + QString(": %1 results for %2 pairs").arg(got.size()).arg(expected.size())));
    for (std::size_t k = 0; k < got.size(); ++k) {
        const QString diff = difference(got[k], expected[k]);
        QVERIFY2(diff.isEmpty(), qPrintable(what + QString(": pair %1: ").arg(k) + diff));
    }
}

// A backend with align_pairs only: the default align_pairs_into serves it.
class PlainBackend : public Backend {
public:
    explicit PlainBackend(Backend& inner) : inner_(inner) {}
    DeviceInfo info() const override { return inner_.info(); }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        return inner_.align_pairs(job, context);
    }

private:
    Backend& inner_;
};

// The pipeline's files: 300 pairs.
constexpr int kPairs = 300;

// Related random proteins of 8-97 residues, every eleventh 400-700 (a long
// path, then short ones, in a reused vector's elements).
void write_pairs(const QString& query_path, const QString& target_path) {
    std::mt19937 rng(20261126);
    const std::string letters = "ACDEFGHIKLMNPQRSTVWY";
    std::ofstream queries(query_path.toStdString()), targets(target_path.toStdString());
    for (int k = 0; k < kPairs; ++k) {
        const std::size_t length = k % 11 == 5 ? 400 + rng() % 301 : 8 + rng() % 90;
        std::string q, t;
        for (std::size_t i = 0; i < length; ++i) q += letters[rng() % letters.size()];
        t = q;
        for (char& c : t)
            if (rng() % 5 == 0) c = letters[rng() % letters.size()];
        t.erase(rng() % t.size(), rng() % 3);
        queries << ">query_" << k << (k % 4 == 0 ? "_with_an_id_past_the_inline_storage" : "") << '\n' << q << '\n';
        targets << ">t" << k << '\n' << t << '\n';
    }
}

// A new vector per chunk: align_pairs, moved into the caller's (the default).
class FreshBackend : public Backend {
public:
    explicit FreshBackend(Backend& inner) : inner_(inner) {}
    DeviceInfo info() const override { return inner_.info(); }
    std::vector<Alignment> align_pairs(const PairJob& job, JobContext& context) override {
        return inner_.align_pairs(job, context);
    }

private:
    Backend& inner_;
};

// Writes in place, as the CUDA backend does: every field assigned into the
// element the caller's vector has. Counts the chunks that came with a vector
// of an earlier chunk.
class InPlaceBackend : public FreshBackend {
public:
    using FreshBackend::FreshBackend;
    void align_pairs_into(const PairJob& job, JobContext& context, std::vector<Alignment>& results) override {
        if (results.capacity() > 0) ++reused;
        ++calls;
        const std::vector<Alignment> fresh = align_pairs(job, context);
        results.resize(fresh.size());
        for (std::size_t k = 0; k < fresh.size(); ++k) {
            Alignment& a = results[k];
            const Alignment& f = fresh[k];
            a.query_id.assign(f.query_id);
            a.target_id.assign(f.target_id);
            a.mode = f.mode;
            a.score = f.score;
            a.query_begin = f.query_begin, a.query_end = f.query_end;
            a.target_begin = f.target_begin, a.target_end = f.target_end;
            a.query_length = f.query_length, a.target_length = f.target_length;
            a.cigar = f.cigar;  // copy-assigned: the element's storage where it holds the runs
            a.query_aligned.assign(f.query_aligned);
            a.target_aligned.assign(f.target_aligned);
            a.stats = f.stats;
            a.device.assign(f.device);
            a.kernel.assign(f.kernel);
        }
        // Slow enough that a chunk's formatting ends before the next but one is aligned.
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::atomic<int> reused{0}, calls{0};
};

PairPipelineSettings settings_for(const QString& queries, const QString& targets, OutputFormat format, bool traceback,
                                  int aligning_chunks) {
    PairPipelineSettings s;
    s.query_path = queries.toStdString();
    s.target_path = targets.toStdString();
    s.format = format;
    s.chunk_pairs = 7;
    s.threads = 3;
    s.aligning_chunks = aligning_chunks;
    s.writer.scheme = blosum62();
    s.make_job = [traceback](AlphabetKind, AlphabetKind) {
        PairJob job;
        job.scheme = blosum62();
        job.options.mode = AlignmentMode::Local;
        job.options.traceback = traceback;
        job.threads = 2;
        return job;
    };
    s.count_mismatch = [](std::uint64_t q, std::uint64_t t) {
        return std::to_string(q) + " queries but " + std::to_string(t) + " targets";
    };
    return s;
}

QByteArray file_bytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class TestResultBuffer : public QObject {
    Q_OBJECT
private:
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();
    QTemporaryDir dir_;
    QString query_path_, target_path_;

    QByteArray run(Backend& backend, const PairPipelineSettings& settings, const QString& name) {
        const QString output = dir_.filePath(name);
        JobContext context;
        AtomicOutput out(output.toStdString());
        const PairPipelineStats stats = run_pair_pipeline(settings, backend, context, out);
        out.commit();
        if (stats.pairs != kPairs) return {};
        // The pair format's header dates the run to the second: two runs
        // that straddle a second differ there and nowhere else.
        QByteArray bytes = file_bytes(output);
        static const QRegularExpression rundate(QStringLiteral("^# Rundate: [^\n]*$"),
                                                QRegularExpression::MultilineOption);
        return QString::fromUtf8(bytes).replace(rundate, QStringLiteral("# Rundate: (the run's)")).toUtf8();
    }

    // Every job shape through `backend`, into buffers that held garbage (more,
    // as many and fewer elements than the job's pairs) and into one that holds
    // the previous job's results.
    void check_backend(Backend& backend, const QString& name) {
        const PairSet set = make_pairs(20261126, 60);
        const PairSet other = make_pairs(7, 90);
        struct Shape {
            AlignmentMode mode;
            bool traceback, begins;
        };
        const Shape shapes[] = {{AlignmentMode::Local, true, true},       {AlignmentMode::Local, false, true},
                                {AlignmentMode::Local, false, false},     {AlignmentMode::Global, true, true},
                                {AlignmentMode::SemiGlobal, false, true}, {AlignmentMode::Global, false, false}};
        std::vector<Alignment> kept;  // carried from shape to shape
        for (const Shape& shape : shapes) {
            const QString what = name + QString(" mode %1 traceback %2 begins %3")
                                            .arg(QString::fromStdString(std::string(to_string(shape.mode))))
                                            .arg(shape.traceback)
                                            .arg(shape.begins);
            const PairJob job = make_job(set, shape.mode, shape.traceback, shape.begins);
            JobContext context;
            const std::vector<Alignment> fresh = backend.align_pairs(job, context);
            QCOMPARE(fresh.size(), set.pairs.size());
            for (const std::size_t size : {set.pairs.size() + 13, set.pairs.size(), set.pairs.size() / 2}) {
                std::vector<Alignment> buffer;
                for (std::size_t k = 0; k < size; ++k) buffer.push_back(garbage(k));
                backend.align_pairs_into(job, context, buffer);
                compare_results(buffer, fresh, what + QString(" into %1 garbage results").arg(size));
            }
            // The previous shape's results (traceback or not), then a larger
            // job of other pairs and back.
            backend.align_pairs_into(job, context, kept);
            compare_results(kept, fresh, what + " into the previous job's results");
            const PairJob larger = make_job(other, AlignmentMode::Local, true, true);
            const std::vector<Alignment> larger_fresh = backend.align_pairs(larger, context);
            backend.align_pairs_into(larger, context, kept);
            compare_results(kept, larger_fresh, what + " (a larger job between)");
            backend.align_pairs_into(job, context, kept);
            compare_results(kept, fresh, what + " after a larger job");
        }
        // An empty job empties the buffer.
        PairJob empty = make_job(set, AlignmentMode::Local, true, true);
        empty.pairs.clear();
        JobContext context;
        backend.align_pairs_into(empty, context, kept);
        QVERIFY(kept.empty());
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        query_path_ = dir_.filePath("queries.fa");
        target_path_ = dir_.filePath("targets.fa");
        write_pairs(query_path_, target_path_);
    }

    void same_bytes_as_new_vectors_data() {
        QTest::addColumn<int>("format");
        QTest::addColumn<bool>("traceback");
        QTest::addColumn<int>("aligning");
        // Every format with traceback, two without; one chunk at a time and three.
        const std::tuple<OutputFormat, bool, int> rows[] = {
            {OutputFormat::Pair, true, 1}, {OutputFormat::Json, true, 3}, {OutputFormat::Tsv, true, 3},
            {OutputFormat::Sam, true, 1},  {OutputFormat::Sam, true, 3},  {OutputFormat::Tsv, false, 1},
            {OutputFormat::Json, false, 3}};
        for (const auto& [format, traceback, aligning] : rows)
            QTest::addRow("%s %s %d at once", std::string(to_string(format)).c_str(),
                          traceback ? "traceback" : "no traceback", aligning)
                << int(format) << traceback << aligning;
    }

    void same_bytes_as_new_vectors() {
        QFETCH(int, format);
        QFETCH(bool, traceback);
        QFETCH(int, aligning);
        const PairPipelineSettings settings =
            settings_for(query_path_, target_path_, OutputFormat(format), traceback, aligning);
        FreshBackend fresh(registry_->select("cpu"));
        InPlaceBackend in_place(registry_->select("cpu"));
        const QByteArray expected = run(fresh, settings, "fresh.out");
        QVERIFY(!expected.isEmpty());
        if (OutputFormat(format) == OutputFormat::Pair) QVERIFY(expected.contains("# Rundate: (the run's)\n"));
        const QByteArray got = run(in_place, settings, "in_place.out");
        QVERIFY2(got == expected, "the output differs where chunks reuse result vectors");
        // 43 chunks; all but the first few find a formatted chunk's vector.
        QCOMPARE(in_place.calls.load(), (kPairs + 6) / 7);
        QVERIFY2(in_place.reused >= in_place.calls / 2,
                 qPrintable(QString("%1 of %2 chunks reused a vector").arg(in_place.reused).arg(in_place.calls)));
    }

    void reference_backend() { check_backend(registry_->select("cpu-ref"), "cpu-ref"); }
    void simd_backend() { check_backend(registry_->select("cpu"), "cpu"); }
    void default_implementation() {
        PlainBackend plain(registry_->select("cpu"));
        check_backend(plain, "align_pairs only");
    }

    // A failing job names the pair, as align_pairs does, whatever the buffer held.
    void errors_as_align_pairs() {
        const PairSet set = make_pairs(3, 4);
        PairJob job = make_job(set, AlignmentMode::Local, true, true);
        job.pairs.emplace_back(0, 99);
        std::vector<Alignment> buffer(3, garbage(0));
        JobContext context;
        for (const char* device : {"cpu-ref", "cpu"}) {
            QString message;
            try {
                registry_->select(device).align_pairs_into(job, context, buffer);
            } catch (const Error& e) {
                message = e.what();
            }
            QVERIFY2(message.contains("target 99"), qPrintable(message));
        }
    }
};

QTEST_GUILESS_MAIN(TestResultBuffer)
#include "test_result_buffer.moc"
