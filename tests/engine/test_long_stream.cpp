// Streaming a long-pair alignment (LongPairOptions::sink, AlignmentFileStream):
// the files written while stage 3 runs are byte for byte what the ordinary
// writers write for the in-memory alignment of the same pair (pair, JSON with
// and without the CLI's extra object, TSV, SAM), on the scalar pass runner and
// on the CPU backends' Myers-Miller path; the sink gets the columns in path
// order with at most the window's tracebacks held; the incremental re-scoring
// (PathScorer) agrees with rescore() and complete_alignment() and catches
// corrupted paths; a cancel or an error mid-stream leaves no file (an older
// file of that name untouched); a path that cannot be written is one error
// naming it.
#include "random_relatives.hpp"

#include <alignscope/align/alignment_sink.hpp>
#include <alignscope/align/cigar.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/path_scorer.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/io/alignment_stream.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

// Small special-row spacing and base segments: hundreds of segments per pair.
LongPairOptions streaming_options(AlignOptions align) {
    LongPairOptions o;
    o.align = align;
    o.min_band_rows = 40;
    o.special_row_budget = 1u << 20;
    o.base_rows = 4;
    o.base_cells = 64;
    o.threads = 3;
    return o;
}

ScoringScheme scheme_of(const char* matrix, double open, double extend) {
    return ScoringScheme::create(SubstitutionMatrix::builtin(matrix), open, extend);
}

// The pair format's run date is the time of writing: left out of comparisons.
std::string without_rundate(const std::string& text) {
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line))
        if (line.rfind("# Rundate:", 0) != 0) out += line + "\n";
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

WriterContext writer_context(const ScoringScheme& scheme, const Sequence& target) {
    WriterContext c;
    c.command_line = "alignscope-cli align --long q.fa t.fa";
    c.scheme = scheme;
    c.references.push_back(&target);
    return c;
}

// What the ordinary writer writes for one alignment.
std::string written(OutputFormat format, const Alignment& a, const Sequence& q, const Sequence& t,
                    const ScoringScheme& scheme) {
    std::ostringstream out;
    auto writer = AlignmentWriter::create(format, out, writer_context(scheme, t));
    writer->begin();
    writer->write(a, q, t);
    writer->end();
    return out.str();
}

// The CLI's json record for align --long: the writer's object plus "long_pair".
std::string written_with_extra(const Alignment& a, const Sequence& q, const Sequence& t, const ScoringScheme& scheme,
                               const std::string& extra_key, const std::string& extra_value_json) {
    std::string line = written(OutputFormat::Json, a, q, t, scheme);
    // Insert the extra field by hand where sorted keys put it, as an independent
    // check of the streamed writer's merge (keys: ... "length", "long_pair", "mode" ...).
    const std::string before = "\"mode\":";
    const auto at = line.find(before);
    if (at == std::string::npos) return "no mode field in " + line;
    line.insert(at, "\"" + extra_key + "\":" + extra_value_json + ",");
    return line;
}

// Forwards to several sinks.
class Tee final : public AlignmentSink {
public:
    explicit Tee(std::vector<AlignmentSink*> sinks) : sinks_(std::move(sinks)) {}
    void begin(const Alignment& h) override {
        for (AlignmentSink* s : sinks_) s->begin(h);
    }
    void columns(std::span<const CigarOp> runs) override {
        for (AlignmentSink* s : sinks_) s->columns(runs);
    }
    void end(const Alignment& a) override {
        for (AlignmentSink* s : sinks_) s->end(a);
    }

private:
    std::vector<AlignmentSink*> sinks_;
};

// Records what it is given, in order; optionally slow (a disk that lags) or
// cancelling / failing after some pieces.
class Recorder final : public AlignmentSink {
public:
    int begins = 0, ends = 0;
    bool columns_before_begin = false, columns_after_end = false;
    Alignment header, final_alignment;
    std::vector<std::vector<CigarOp>> pieces;
    int slow_pieces = 0;    // sleep 3 ms on each of the first N pieces
    int cancel_after = -1;  // cancel this token after N pieces
    CancellationToken* token = nullptr;
    int fail_after = -1;            // throw Error after N pieces
    AlignmentSink* next = nullptr;  // forward to (a file)

    void begin(const Alignment& h) override {
        ++begins;
        header = h;
        if (next) next->begin(h);
    }
    void columns(std::span<const CigarOp> runs) override {
        if (begins == 0) columns_before_begin = true;
        if (ends > 0) columns_after_end = true;
        pieces.emplace_back(runs.begin(), runs.end());
        if (next) next->columns(runs);
        const int n = static_cast<int>(pieces.size());
        if (n <= slow_pieces) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        if (n == cancel_after && token) token->cancel();
        if (n == fail_after) throw Error("the disk is full (simulated)");
    }
    void end(const Alignment& a) override {
        ++ends;
        final_alignment = a;
        if (next) next->end(a);
    }
    Cigar joined() const {
        Cigar c;
        for (const auto& p : pieces)
            for (const CigarOp& op : p) c.push(op.op, op.length);
        return c;
    }
    std::int64_t largest_piece() const {
        std::int64_t most = 0;
        for (const auto& p : pieces) {
            std::int64_t n = 0;
            for (const CigarOp& op : p) n += op.length;
            most = std::max(most, n);
        }
        return most;
    }
};

QStringList files_in(const QString& dir) {
    return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

struct Pair {
    Sequence q, t;
};

Pair random_pair(unsigned seed, const std::string& alphabet, std::size_t length) {
    std::mt19937 rng(seed);
    Pair p;
    p.q.id = "query_with_a_long_name_" + std::to_string(seed);  // the pair format cuts names at 13
    p.t.id = "t" + std::to_string(seed);
    p.q.residues = random_residues(rng, alphabet, length);
    p.t.residues = mutate(rng, p.q.residues, alphabet);
    if (seed % 2) p.q.residues = random_residues(rng, alphabet, 150) + p.q.residues;  // an overhang to skip
    return p;
}

}  // namespace

class TestLongStream : public QObject {
    Q_OBJECT
    std::unique_ptr<DeviceRegistry> registry_ = make_cpu_registry();

private slots:
    void streamed_files_equal_in_memory_writers_data() {
        QTest::addColumn<QString>("mode");  // global, local, semiglobal, semiglobal:qb,qe
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<double>("open");
        QTest::addColumn<double>("extend");
        QTest::addColumn<int>("window");
        QTest::newRow("global dna 10/0.5") << "global"
                                           << "EDNAFULL" << 10.0 << 0.5 << 0;
        QTest::newRow("global dna 16/4 window 1") << "global"
                                                  << "EDNAFULL" << 16.0 << 4.0 << 1;
        QTest::newRow("global dna linear 6/6") << "global"
                                               << "EDNAFULL" << 6.0 << 6.0 << 2;
        QTest::newRow("local dna 10/0.5") << "local"
                                          << "EDNAFULL" << 10.0 << 0.5 << 3;
        QTest::newRow("local dna 16/4") << "local"
                                        << "EDNAFULL" << 16.0 << 4.0 << 0;
        QTest::newRow("semiglobal all free") << "semiglobal"
                                             << "EDNAFULL" << 10.0 << 0.5 << 4;
        QTest::newRow("semiglobal qb,qe") << "semiglobal:qb,qe"
                                          << "EDNAFULL" << 10.0 << 1.0 << 2;
        QTest::newRow("global protein") << "global"
                                        << "BLOSUM62" << 11.0 << 1.0 << 2;
        QTest::newRow("local protein") << "local"
                                       << "BLOSUM62" << 11.0 << 1.0 << 0;
    }
    void streamed_files_equal_in_memory_writers() {
        QFETCH(QString, mode);
        QFETCH(QString, matrix);
        QFETCH(double, open);
        QFETCH(double, extend);
        QFETCH(int, window);
        const ScoringScheme scheme = scheme_of(matrix.toStdString().c_str(), open, extend);
        AlignOptions align;
        const QStringList parts = mode.split(':');
        align.mode = parse_mode(parts[0].toStdString());
        if (parts.size() > 1) align.free_ends = FreeEndGaps::parse(parts[1].toStdString());
        const std::string alphabet = matrix == "BLOSUM62" ? "ACDEFGHIKLMNPQRSTVWY" : "ACGT";
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (unsigned seed : {11u, 12u}) {
            const Pair p = random_pair(seed * 7 + static_cast<unsigned>(mode.size()), alphabet, 900 + seed * 40);
            LongPairOptions options = streaming_options(align);
            options.sink_window = window;
            auto runner = make_cpu_pass_runner();
            LongPairStats plain_stats;
            Alignment plain = align_long(p.q.residues, p.t.residues, scheme, options, *runner, {}, &plain_stats);
            plain.query_id = p.q.id;
            plain.target_id = p.t.id;
            // The in-memory path is the reference's alignment and carries its text.
            const Alignment ref = align_reference(p.q.residues, p.t.residues, scheme, align);
            QCOMPARE(plain.score, ref.score);
            QVERIFY(plain.score <= 0 || plain.query_aligned.size() == static_cast<std::size_t>(plain.stats.length));

            const std::string base = dir.filePath("a").toStdString() + std::to_string(seed);
            AlignmentFileStream pair_file(base + ".pair", OutputFormat::Pair, writer_context(scheme, p.t), p.q, p.t);
            AlignmentFileStream json_file(base + ".json", OutputFormat::Json, writer_context(scheme, p.t), p.q, p.t);
            AlignmentFileStream cli_json(base + ".cli.json", OutputFormat::Json, writer_context(scheme, p.t), p.q, p.t);
            AlignmentFileStream tsv_file(base + ".tsv", OutputFormat::Tsv, writer_context(scheme, p.t), p.q, p.t);
            AlignmentFileStream sam_file(base + ".sam", OutputFormat::Sam, writer_context(scheme, p.t), p.q, p.t);
            Recorder recorder;
            Tee tee({&pair_file, &json_file, &cli_json, &tsv_file, &sam_file, &recorder});
            options.sink = &tee;
            LongPairStats stats;
            const Alignment got = align_long(p.q.residues, p.t.residues, scheme, options, *runner, {}, &stats);
            pair_file.commit();
            json_file.commit();
            cli_json.commit(R"({"long_pair":{"seconds":1.5,"strategy":"cpu-passes"}})");
            tsv_file.commit();
            sam_file.commit();

            // The same alignment, without its text.
            QCOMPARE(got.score, plain.score);
            QCOMPARE(got.query_begin, plain.query_begin);
            QCOMPARE(got.query_end, plain.query_end);
            QCOMPARE(got.target_begin, plain.target_begin);
            QCOMPARE(got.target_end, plain.target_end);
            QVERIFY(got.cigar == plain.cigar);
            QCOMPARE(got.stats.length, plain.stats.length);
            QCOMPARE(got.stats.identities, plain.stats.identities);
            QCOMPARE(got.stats.similarities, plain.stats.similarities);
            QCOMPARE(got.stats.gaps, plain.stats.gaps);
            QCOMPARE(got.stats.gap_opens, plain.stats.gap_opens);
            QVERIFY(got.query_aligned.empty() && got.target_aligned.empty());
            if (plain.has_traceback())
                QCOMPARE(rescore(got.cigar, p.q.residues, p.t.residues, got.query_begin, got.target_begin, scheme),
                         ref.score);
            QCOMPARE(recorder.begins, 1);
            QCOMPARE(recorder.ends, 1);
            QVERIFY(recorder.joined() == got.cigar);
            QCOMPARE(stats.base_segments, plain_stats.base_segments);
            if (plain.has_traceback()) QVERIFY2(stats.base_segments > 20, "too few segments to test the ordering");

            // Byte for byte.
            QCOMPARE(without_rundate(read_file(base + ".pair")),
                     without_rundate(written(OutputFormat::Pair, plain, p.q, p.t, scheme)));
            QVERIFY(read_file(base + ".pair").find("# Rundate: ") != std::string::npos);
            QCOMPARE(read_file(base + ".json"), written(OutputFormat::Json, plain, p.q, p.t, scheme));
            QCOMPARE(read_file(base + ".cli.json"), written_with_extra(plain, p.q, p.t, scheme, "long_pair",
                                                                       R"({"seconds":1.5,"strategy":"cpu-passes"})"));
            QCOMPARE(read_file(base + ".tsv"), written(OutputFormat::Tsv, plain, p.q, p.t, scheme));
            QCOMPARE(read_file(base + ".sam"), written(OutputFormat::Sam, plain, p.q, p.t, scheme));
        }
        // Nothing else left behind (temporary files, spools).
        QCOMPARE(files_in(dir.path()).size(), 2 * 5);
    }

    // The CPU backends (Myers-Miller in linear space, and the scalar pass
    // runner when checkpointing) stream what they write in memory.
    void cpu_backends_stream_the_same_bytes_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<bool>("checkpoint");
        QTest::newRow("cpu") << "cpu" << false;
        QTest::newRow("cpu-ref") << "cpu-ref" << false;
        QTest::newRow("cpu checkpointed") << "cpu" << true;
    }
    void cpu_backends_stream_the_same_bytes() {
        QFETCH(QString, device);
        QFETCH(bool, checkpoint);
        const ScoringScheme scheme = scheme_of("EDNAFULL", 10, 0.5);
        Backend& backend = registry_->select(device.toStdString());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal}) {
            const Pair p = random_pair(40 + static_cast<unsigned>(mode), "ACGT", 3000);
            AlignOptions align;
            align.mode = mode;
            LongPairOptions options = streaming_options(align);
            if (checkpoint) options.checkpoint_dir = dir.filePath("ckpt").toStdString();
            Alignment plain = align_long_on(backend, p.q.residues, p.t.residues, scheme, options, LongRunnerSettings{});
            plain.query_id = p.q.id;
            plain.target_id = p.t.id;
            QVERIFY(!plain.query_aligned.empty());
            const std::string base = dir.filePath("b").toStdString();
            AlignmentFileStream pair_file(base + ".pair", OutputFormat::Pair, writer_context(scheme, p.t), p.q, p.t);
            AlignmentFileStream json_file(base + ".json", OutputFormat::Json, writer_context(scheme, p.t), p.q, p.t);
            Recorder recorder;
            Tee tee({&pair_file, &json_file, &recorder});
            options.sink = &tee;
            LongPairStats stats;
            const Alignment got =
                align_long_on(backend, p.q.residues, p.t.residues, scheme, options, LongRunnerSettings{}, {}, &stats);
            pair_file.commit();
            json_file.commit();
            QVERIFY(got.query_aligned.empty());
            QVERIFY(got.cigar == plain.cigar);
            QCOMPARE(got.device, plain.device);
            QCOMPARE(recorder.header.device, plain.device);
            QCOMPARE(recorder.final_alignment.device, plain.device);
            QVERIFY(recorder.joined() == got.cigar);
            QVERIFY(stats.streamed_pieces > 0);
            if (!checkpoint) QVERIFY(got.kernel.find("myersmiller") != std::string::npos);
            QCOMPARE(without_rundate(read_file(base + ".pair")),
                     without_rundate(written(OutputFormat::Pair, plain, p.q, p.t, scheme)));
            QCOMPARE(read_file(base + ".json"), written(OutputFormat::Json, plain, p.q, p.t, scheme));
        }
    }

    // In path order, one call per base segment, begin before and end after,
    // and never more than the window's tracebacks held, even when the sink
    // lags behind four threads.
    void pieces_in_order_within_the_window_data() {
        QTest::addColumn<int>("window");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("slow");
        QTest::newRow("window 1, 4 threads, slow sink") << 1 << 4 << 12;
        QTest::newRow("window 2, 4 threads, slow sink") << 2 << 4 << 12;
        QTest::newRow("window 5, 4 threads, slow sink") << 5 << 4 << 12;
        QTest::newRow("window 3, 1 thread") << 3 << 1 << 0;
        QTest::newRow("default window, 2 threads") << 0 << 2 << 0;
    }
    void pieces_in_order_within_the_window() {
        QFETCH(int, window);
        QFETCH(int, threads);
        QFETCH(int, slow);
        const ScoringScheme scheme = scheme_of("EDNAFULL", 16, 4);
        const Pair p = random_pair(77, "ACGT", 1500);
        AlignOptions align;
        align.mode = AlignmentMode::Global;
        LongPairOptions options = streaming_options(align);
        options.threads = threads;
        auto runner = make_cpu_pass_runner();
        const Alignment plain = align_long(p.q.residues, p.t.residues, scheme, options, *runner);
        Recorder recorder;
        recorder.slow_pieces = slow;
        options.sink = &recorder;
        options.sink_window = window;
        LongPairStats stats;
        const Alignment got = align_long(p.q.residues, p.t.residues, scheme, options, *runner, {}, &stats);
        const int expected_window = window > 0 ? window : 8 * threads;
        QCOMPARE(stats.stream_window, expected_window);
        QVERIFY2(stats.stream_peak_pieces >= 1 && stats.stream_peak_pieces <= expected_window,
                 qPrintable(
                     QString("peak %1 tracebacks held, window %2").arg(stats.stream_peak_pieces).arg(expected_window)));
        QVERIFY(stats.stream_peak_columns <= expected_window * recorder.largest_piece());
        if (slow && window > 1)  // the threads work ahead while the sink lags
            QVERIFY2(stats.stream_peak_pieces >= 2, qPrintable(QString("peak %1").arg(stats.stream_peak_pieces)));
        QCOMPARE(recorder.begins, 1);
        QCOMPARE(recorder.ends, 1);
        QVERIFY(!recorder.columns_before_begin && !recorder.columns_after_end);
        QVERIFY(recorder.header.cigar.empty());
        QCOMPARE(recorder.header.score, plain.score);
        QCOMPARE(recorder.header.query_begin, plain.query_begin);
        QCOMPARE(recorder.header.target_end, plain.target_end);
        QCOMPARE(static_cast<std::int64_t>(recorder.pieces.size()), stats.streamed_pieces);
        QVERIFY(stats.streamed_pieces <= stats.base_segments + 1);
        QVERIFY(stats.base_segments > 50);
        // In order: the pieces joined are the in-memory path, and each piece
        // starts where the previous one ended (the PathScorer's walk).
        QVERIFY(recorder.joined() == plain.cigar);
        QVERIFY(got.cigar == plain.cigar);
        PathScorer walk(p.q.residues, p.t.residues, plain.query_begin, plain.target_begin, scheme);
        for (const auto& piece : recorder.pieces)
            for (const CigarOp& op : piece) walk.push(op.op, op.length);
        QCOMPARE(walk.score(), plain.score);
        QCOMPARE(recorder.final_alignment.stats.length, plain.stats.length);
    }

    // PathScorer against rescore() and complete_alignment() (the in-memory
    // checks) on the reference aligner's alignments, fed in pieces that split
    // runs at random.
    void path_scorer_matches_rescore() {
        std::mt19937 rng(3);
        for (int round = 0; round < 60; ++round) {
            const bool protein = round % 3 == 0;
            const std::string alphabet = protein ? "ACDEFGHIKLMNPQRSTVWY" : "ACGTN";
            const ScoringScheme scheme =
                protein ? scheme_of("BLOSUM62", 11, 1) : scheme_of("EDNAFULL", 10 + round % 7, 0.5 + round % 3);
            const std::string q = random_residues(rng, alphabet, 20 + rng() % 200);
            const std::string t = mutate(rng, q, alphabet) + random_residues(rng, alphabet, rng() % 20);
            AlignOptions align;
            align.mode = static_cast<AlignmentMode>(round % 3);
            const Alignment a = align_reference(q, t, scheme, align);
            if (!a.has_traceback()) continue;
            PathScorer scorer(q, t, a.query_begin, a.target_begin, scheme);
            for (const CigarOp& op : a.cigar.ops()) {
                std::uint32_t left = op.length;
                while (left > 0) {
                    const std::uint32_t part = 1 + static_cast<std::uint32_t>(rng() % left);
                    scorer.push(op.op, part);
                    left -= part;
                }
            }
            QCOMPARE(scorer.score(), rescore(a.cigar, q, t, a.query_begin, a.target_begin, scheme));
            QCOMPARE(scorer.score(), a.score);
            QCOMPARE(scorer.stats().length, a.stats.length);
            QCOMPARE(scorer.stats().identities, a.stats.identities);
            QCOMPARE(scorer.stats().similarities, a.stats.similarities);
            QCOMPARE(scorer.stats().gaps, a.stats.gaps);
            QCOMPARE(scorer.stats().gap_opens, a.stats.gap_opens);
            QCOMPARE(scorer.query_next() - 1, a.query_end);
            QCOMPARE(scorer.target_next() - 1, a.target_end);
        }
    }

    // The streamed re-scoring catches what rescore() catches: a column that
    // disagrees with the residues, pieces out of order, a path past the end.
    void path_scorer_catches_corrupted_paths() {
        const ScoringScheme scheme = scheme_of("EDNAFULL", 10, 0.5);
        const Pair p = random_pair(5, "ACGT", 400);
        const Alignment a = align_reference(p.q.residues, p.t.residues, scheme, AlignOptions{});
        const std::vector<CigarOp>& ops = a.cigar.ops();
        QVERIFY(ops.size() > 20);
        auto score_of = [&](const std::vector<CigarOp>& path, std::int64_t* q_end = nullptr) {
            PathScorer s(p.q.residues, p.t.residues, a.query_begin, a.target_begin, scheme);
            for (const CigarOp& op : path) s.push(op.op, op.length);
            if (q_end) *q_end = s.query_next() - 1;
            return s.score();
        };
        QCOMPARE(score_of(ops), a.score);
        // '=' where the residues differ.
        {
            std::vector<CigarOp> bad = ops;
            auto it = std::find_if(bad.begin(), bad.end(), [](const CigarOp& op) { return op.op == 'X'; });
            QVERIFY(it != bad.end());
            it->op = '=';
            try {
                score_of(bad);
                QFAIL("a '=' over different residues was not caught");
            } catch (const Error& e) {
                QVERIFY2(QString(e.what()).contains("CIGAR says '='") && QString(e.what()).contains("different"),
                         e.what());
            }
        }
        // Two pieces swapped (the path out of order): an error, or a path that
        // no longer scores the score.
        for (std::size_t k = 1; k + 1 < ops.size(); k += 3) {
            if (ops[k].op == ops[k + 1].op) continue;
            std::vector<CigarOp> bad = ops;
            std::swap(bad[k], bad[k + 1]);
            bool caught = false;
            try {
                caught = score_of(bad) != a.score;
            } catch (const Error&) {
                caught = true;
            }
            QVERIFY2(caught, qPrintable(QString("runs %1 and %2 swapped went unnoticed").arg(k).arg(k + 1)));
        }
        // A column dropped: the path ends short of the end cell.
        {
            std::vector<CigarOp> bad = ops;
            bad.back().length -= 1;
            if (bad.back().length == 0) bad.pop_back();
            std::int64_t q_end = 0;
            bool caught = false;
            try {
                caught = score_of(bad, &q_end) != a.score || q_end != a.query_end;
            } catch (const Error&) {
                caught = true;
            }
            QVERIFY(caught);
        }
        // Past the end of the query.
        {
            std::vector<CigarOp> bad = ops;
            bad.push_back({'I', 1});
            QVERIFY_THROWS_EXCEPTION(Error, score_of(bad));
        }
        QVERIFY_THROWS_EXCEPTION(Error, PathScorer(p.q.residues, p.t.residues, 0, 1, scheme));
        QVERIFY_THROWS_EXCEPTION(Error, score_of({{'Q', 1}}));
    }

    // A cancel or an error while the columns stream leaves no file, no
    // temporary and no spool; an older file of the same name is untouched.
    void cancel_or_error_mid_stream_leaves_nothing_data() {
        QTest::addColumn<QString>("format");
        QTest::addColumn<bool>("cancel");  // else the sink fails (a full disk)
        QTest::newRow("pair cancel") << "pair" << true;
        QTest::newRow("json cancel") << "json" << true;
        QTest::newRow("tsv cancel") << "tsv" << true;
        QTest::newRow("pair error") << "pair" << false;
        QTest::newRow("json error") << "json" << false;
    }
    void cancel_or_error_mid_stream_leaves_nothing() {
        QFETCH(QString, format);
        QFETCH(bool, cancel);
        const ScoringScheme scheme = scheme_of("EDNAFULL", 10, 0.5);
        const Pair p = random_pair(9, "ACGT", 1500);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString out = dir.filePath("out." + format);
        {
            QFile old(out);
            QVERIFY(old.open(QIODevice::WriteOnly));
            old.write("an older result\n");
        }
        AlignOptions align;
        LongPairOptions options = streaming_options(align);
        CancellationToken token;
        JobContext context;
        context.cancel = &token;
        Recorder recorder;
        {
            AlignmentFileStream file(out.toStdString(), parse_output_format(format.toStdString()),
                                     writer_context(scheme, p.t), p.q, p.t);
            recorder.next = &file;
            if (cancel) {
                recorder.cancel_after = 5;
                recorder.token = &token;
            } else {
                recorder.fail_after = 5;
            }
            options.sink = &recorder;
            auto runner = make_cpu_pass_runner();
            if (cancel) {
                QVERIFY_THROWS_EXCEPTION(Cancelled,
                                         align_long(p.q.residues, p.t.residues, scheme, options, *runner, context));
            } else {
                try {
                    align_long(p.q.residues, p.t.residues, scheme, options, *runner, context);
                    QFAIL("the sink's error was lost");
                } catch (const Error& e) {
                    QVERIFY2(QString(e.what()).contains("disk is full"), e.what());
                }
            }
            QCOMPARE(recorder.ends, 0);
            QVERIFY(recorder.pieces.size() >= 5);
            QVERIFY_THROWS_EXCEPTION(Error, file.commit());  // no end(): nothing to commit
            QVERIFY(files_in(dir.path()).size() >= 2);       // the temporary output is there while the writer lives
        }
        QCOMPARE(files_in(dir.path()), QStringList{"out." + format});
        QFile old(out);
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), QByteArray("an older result\n"));
    }

    // A file that cannot be written is refused before any work, naming it.
    void unwritable_path_is_a_clear_error() {
        const ScoringScheme scheme = scheme_of("EDNAFULL", 10, 0.5);
        const Pair p = random_pair(1, "ACGT", 50);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto message = [&](const std::string& path, OutputFormat format) -> QString {
            try {
                AlignmentFileStream file(path, format, writer_context(scheme, p.t), p.q, p.t);
            } catch (const Error& e) {
                return QString::fromUtf8(e.what());
            }
            return {};
        };
        const std::string missing = dir.filePath("no/such/dir/out.pair").toStdString();
        QString m = message(missing, OutputFormat::Pair);
        QVERIFY2(m.contains(QString::fromStdString(missing)) && m.contains("does not exist"), qPrintable(m));
        m = message(dir.path().toStdString(), OutputFormat::Json);
        QVERIFY2(m.contains(dir.path()) && m.contains("is a directory"), qPrintable(m));
        m = message("-", OutputFormat::Pair);
        QVERIFY2(m.contains("standard output"), qPrintable(m));
        if (::geteuid() != 0) {  // root writes anywhere
            const QString locked = dir.filePath("locked");
            QVERIFY(QDir().mkdir(locked));
            QFile::setPermissions(locked, QFile::ReadOwner | QFile::ExeOwner);
            const std::string path = (locked + "/out.pair").toStdString();
            m = message(path, OutputFormat::Pair);
            QVERIFY2(m.contains(QString::fromStdString(path)) && m.contains("cannot write here"), qPrintable(m));
            QFile::setPermissions(locked, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        }
        QCOMPARE(files_in(dir.path()).size(), 0);
    }

    // No path (an empty local alignment, or --no-traceback): begin and end
    // only, and the files are still the ordinary writers'.
    // Every format's sink checks that the columns stay inside both sequences
    // (json once advanced no positions, so its check could not fire), and a
    // sink that refused columns leaves no file.
    void sinks_refuse_columns_past_the_sequences() {
        const ScoringScheme scheme = scheme_of("EDNAFULL", 10, 0.5);
        const Sequence q{"q", "", "ACGTACGTAC", ""}, t{"t", "", "ACGTACGTACGTAC", ""};
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (OutputFormat format : {OutputFormat::Pair, OutputFormat::Json, OutputFormat::Tsv, OutputFormat::Sam}) {
            for (char op : {'=', 'I', 'D'}) {
                const std::string path = dir.filePath(QString("past-%1-%2").arg(int(format)).arg(op)).toStdString();
                {
                    AlignmentFileStream file(path, format, writer_context(scheme, t), q, t);
                    Alignment header;
                    header.query_id = q.id;
                    header.target_id = t.id;
                    header.query_begin = header.target_begin = 1;
                    file.begin(header);
                    const std::uint32_t inside = op == 'D' ? 14 : 10;
                    const std::vector<CigarOp> fits{{op, inside - 1}};
                    file.columns(fits);
                    const std::vector<CigarOp> past{{op, 2}};
                    QString message;
                    try {
                        file.columns(past);
                    } catch (const Error& e) {
                        message = QString::fromUtf8(e.what());
                    }
                    QVERIFY2(message.contains("runs past the end") && message.contains(QString::fromStdString(path)),
                             qPrintable(QString("format %1 op %2: '%3'").arg(int(format)).arg(op).arg(message)));
                }
                QVERIFY(!QFileInfo::exists(QString::fromStdString(path)));
            }
        }
    }

    void alignments_without_a_path() {
        const ScoringScheme scheme = scheme_of("EDNAFULL", 10, 0.5);
        Sequence q{"q", "", "AAAAAAAAAAAAAAAAAAAA", ""}, t{"t", "", "CCCCCCCCCCCCCCCCCCCCCCCCC", ""};
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        for (bool traceback : {true, false}) {
            AlignOptions align;
            align.mode = traceback ? AlignmentMode::Local : AlignmentMode::Global;
            align.traceback = traceback;
            LongPairOptions options = streaming_options(align);
            auto runner = make_cpu_pass_runner();
            Alignment plain = align_long(q.residues, t.residues, scheme, options, *runner);
            plain.query_id = q.id;
            plain.target_id = t.id;
            QVERIFY(!plain.has_traceback());
            const std::string base = dir.filePath(traceback ? "empty" : "score-only").toStdString();
            AlignmentFileStream pair_file(base + ".pair", OutputFormat::Pair, writer_context(scheme, t), q, t);
            AlignmentFileStream json_file(base + ".json", OutputFormat::Json, writer_context(scheme, t), q, t);
            Recorder recorder;
            Tee tee({&pair_file, &json_file, &recorder});
            options.sink = &tee;
            align_long(q.residues, t.residues, scheme, options, *runner);
            pair_file.commit();
            json_file.commit();
            QCOMPARE(recorder.begins, 1);
            QCOMPARE(recorder.ends, 1);
            QVERIFY(recorder.pieces.empty());
            QCOMPARE(without_rundate(read_file(base + ".pair")),
                     without_rundate(written(OutputFormat::Pair, plain, q, t, scheme)));
            QCOMPARE(read_file(base + ".json"), written(OutputFormat::Json, plain, q, t, scheme));
        }
    }
};

QTEST_APPLESS_MAIN(TestLongStream)
#include "test_long_stream.moc"
