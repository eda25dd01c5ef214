// Checkpoint and resume of the long-pair pipeline's stage 1 (long_checkpoint.hpp)
// on the scalar pass runner: a job killed (cancelled) after some special rows
// were checkpointed and then resumed gives the alignment of an uninterrupted
// run and of the CPU reference (score, end, CIGAR re-scored), computing only
// the rows below the checkpoint, with other special-row spacing too, and a
// second kill and resume; a checkpoint of a finished stage 1 skips it. A
// damaged or truncated manifest or row file, a missing row file, a row file
// swapped for another, a checkpoint of another pair, scheme or mode, nothing
// to resume and a directory that cannot be written are each one clear Error;
// so are files with right checksums holding what no job writes (cells outside
// the checkpoint, scores out of range) and files far larger than they should
// be, refused before they are read; values no stage 1 of the job leaves (a
// column 0 off the left edge, H below F, H falling by more than a gap
// opening, best cells below the rows' H) are refused on resume, and values
// that pass those checks but are another pair's end the resumed job in one
// Error naming the checkpoint, not an internal error of the pipeline.
#include "crc32.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/long_checkpoint.hpp>
#include <alignscope/align/long_pair.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/error.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <sys/stat.h>
#include <memory>
#include <random>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

using namespace alignscope;
using namespace alignscope::longpair;

namespace {

namespace fs = std::filesystem;

struct Job {
    std::string query, target;
    ScoringScheme scheme;
    AlignOptions align;
};

LongPairOptions options_for(const Job& job, const std::string& dir, std::int64_t band_rows = 1000) {
    LongPairOptions o;
    o.align = job.align;
    o.min_band_rows = band_rows;
    o.checkpoint_dir = dir;
    o.checkpoint_every = 0;  // at every special row
    o.threads = 2;
    return o;
}

// Runs the job and cancels it once stage 1 has done `fraction` of the matrix.
// Returns true when it was cancelled (as a kill would stop it).
bool run_until(const Job& job, const LongPairOptions& o, double fraction) {
    CancellationToken token;
    JobContext context;
    context.cancel = &token;
    const double cells = double(job.query.size()) * double(job.target.size());
    context.progress = [&](const Progress& p) {
        if (double(p.cells_done) >= fraction * cells) token.cancel();
    };
    auto runner = make_cpu_pass_runner();
    try {
        align_long(job.query, job.target, job.scheme, o, *runner, context);
    } catch (const Cancelled&) {
        return true;
    }
    return false;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

void flip_byte(const QString& path, qint64 at) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.seek(at));
    char c = 0;
    QVERIFY(f.getChar(&c));
    QVERIFY(f.seek(at));
    QVERIFY(f.putChar(static_cast<char>(c ^ 0x5a)));
}

void truncate_file(const QString& path, qint64 by) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.resize(f.size() - by));
}

QByteArray file_bytes_of(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList row_files(const QString& dir) {
    return QDir(dir).entryList({"long-pair-row-*.bin"}, QDir::Files, QDir::Name);
}

void copy_dir(const QString& from, const QString& to) {
    fs::copy(from.toStdString(), to.toStdString(), fs::copy_options::recursive);
}

// A checkpoint file with this payload: the header says its size, the CRC is right.
QByteArray checkpoint_file(const QByteArray& header16, const QByteArray& payload) {
    QByteArray out = header16;  // magic, version, kind
    const quint64 size = static_cast<quint64>(payload.size());
    out.append(reinterpret_cast<const char*>(&size), 8);
    out.append(payload);
    const quint32 crc = crc32_of(out);
    out.append(reinterpret_cast<const char*>(&crc), 4);
    return out;
}

// The manifest's layout (long_checkpoint.cpp), as offsets into its payload.
struct ManifestLayout {
    int rows_at = 0, count = 0, best_at = 0, last_column_at = 0;
    explicit ManifestLayout(const QByteArray& payload) {
        quint32 name = 0;
        std::memcpy(&name, payload.constData() + 24, 4);
        const int count_at = 28 + int(name) + 4 + 12 + 1 + 4 + 1;
        qint64 c = 0;
        std::memcpy(&c, payload.constData() + count_at, 8);
        count = int(c);
        rows_at = count_at + 8;
        best_at = rows_at + 12 * count;
        last_column_at = best_at + 20;
    }
};

// Rewrites the checkpoint in `dir`: row file k's H and F (columns 0..n) and
// the manifest's payload changed as asked, every CRC made right again (the
// row file's own, the manifest's record of it, the manifest's own).
void forge(const QString& dir, int k, const std::function<void(std::vector<qint32>&, std::vector<qint32>&)>& row,
           const std::function<void(QByteArray&, const ManifestLayout&)>& manifest = {}) {
    const QString manifest_path = dir + "/long-pair.manifest";
    const QByteArray mbytes = file_bytes_of(manifest_path);
    QVERIFY(mbytes.size() > 28);
    QByteArray payload = mbytes.mid(24, mbytes.size() - 28);
    const ManifestLayout at(payload);
    QVERIFY(k < at.count);
    if (row) {
        const QString path = dir + "/" + row_files(dir).at(k);
        const QByteArray bytes = file_bytes_of(path);
        QByteArray row_payload = bytes.mid(24, bytes.size() - 28);
        const int n1 = (row_payload.size() - 16) / 8;  // n + 1
        std::vector<qint32> h(static_cast<std::size_t>(n1)), f(h.size());
        std::memcpy(h.data(), row_payload.constData() + 16, 4 * h.size());
        std::memcpy(f.data(), row_payload.constData() + 16 + 4 * n1, 4 * f.size());
        row(h, f);
        std::memcpy(row_payload.data() + 16, h.data(), 4 * h.size());
        std::memcpy(row_payload.data() + 16 + 4 * n1, f.data(), 4 * f.size());
        QFile w(path);
        QVERIFY(w.open(QIODevice::WriteOnly | QIODevice::Truncate));
        w.write(checkpoint_file(bytes.left(16), row_payload));
        const quint32 crc = crc32_of(row_payload.mid(16));
        std::memcpy(payload.data() + at.rows_at + 12 * k + 8, &crc, 4);
    }
    if (manifest) manifest(payload, at);
    QFile w(manifest_path);
    QVERIFY(w.open(QIODevice::WriteOnly | QIODevice::Truncate));
    w.write(checkpoint_file(mbytes.left(16), payload));
}

// H and F of row r of a job's stage 1, by the scalar runner.
void stage1_row(const Job& j, std::int64_t r, std::vector<Score>& h, std::vector<Score>& f) {
    const EncodedSequence eq = encode(j.query, j.scheme.matrix, "q"), et = encode(j.target, j.scheme.matrix, "t");
    auto runner = make_cpu_pass_runner();
    runner->prepare(eq.data(), std::int64_t(eq.size()), et.data(), std::int64_t(et.size()), j.scheme);
    std::vector<PassTask> tasks(1);
    PassTask& p = tasks[0];
    p.row_end = r;
    p.col_end = std::int64_t(et.size());
    p.local = j.align.mode == AlignmentMode::Local;
    const bool semi = j.align.mode == AlignmentMode::SemiGlobal;
    p.top = p.local || (semi && j.align.free_ends.query_begin) ? Edge::Zero : Edge::Gap;
    p.left = p.local || (semi && j.align.free_ends.target_begin) ? Edge::Zero : Edge::Gap;
    p.want_last_row = true;
    runner->run(tasks, {}, {});
    h = p.last_h;
    f = p.last_f;
}

}  // namespace

class TestLongCheckpoint : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;
    SeedGenome genome_;

    Job job(AlignmentMode mode, std::int64_t m, std::int64_t n, std::uint64_t seed, const char* free_ends = nullptr) {
        Job j;
        const LongPair pair = generate_long_pair(seed, genome_.residues, m, n);
        j.query = pair.query;
        j.target = pair.target;
        j.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        j.align.mode = mode;
        if (free_ends) j.align.free_ends = FreeEndGaps::parse(free_ends);
        return j;
    }

    // A checkpoint of `j` cancelled at `fraction` in a fresh directory.
    QString partial_checkpoint(const Job& j, const QString& name, double fraction) {
        const QString dir = tmp_.filePath(name);
        if (!run_until(j, options_for(j, dir.toStdString()), fraction)) return {};
        return dir;
    }

private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        genome_ = load_seed_genome();
    }

    // Kill, resume, compare: local, global, semi-global (all ends free, and
    // free target ends only, where the last column's best must be carried).
    void resume_gives_the_uninterrupted_alignment_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("free_ends");
        QTest::addColumn<int>("overview");
        QTest::newRow("local") << int(AlignmentMode::Local) << QString() << 24;
        QTest::newRow("global") << int(AlignmentMode::Global) << QString() << 0;
        QTest::newRow("semiglobal") << int(AlignmentMode::SemiGlobal) << QString("all") << 0;
        QTest::newRow("semiglobal tb,te") << int(AlignmentMode::SemiGlobal) << QString("tb,te") << 0;
    }
    void resume_gives_the_uninterrupted_alignment() {
        QFETCH(int, mode);
        QFETCH(QString, free_ends);
        QFETCH(int, overview);
        const std::string fe = free_ends.toStdString();
        // tb,te: a target much longer than the query, so the last column matters.
        const Job j = free_ends == "tb,te"
                          ? job(AlignmentMode(mode), 7000, 11000, 31, fe.c_str())
                          : job(AlignmentMode(mode), 10000, 10300, 17, fe.empty() ? nullptr : fe.c_str());
        const auto m = static_cast<std::int64_t>(j.query.size()), n = static_cast<std::int64_t>(j.target.size());

        // The uninterrupted run and the reference.
        LongPairOptions plain = options_for(j, "");
        plain.overview_size = overview;
        auto runner = make_cpu_pass_runner();
        LongPairStats plain_stats;
        const Alignment whole = align_long(j.query, j.target, j.scheme, plain, *runner, {}, &plain_stats);
        const Alignment ref = align_reference(j.query, j.target, j.scheme, j.align);
        QCOMPARE(whole.score, ref.score);
        QCOMPARE(whole.query_end, ref.query_end);
        QCOMPARE(whole.target_end, ref.target_end);
        QCOMPARE(plain_stats.checkpoints, 0);

        // Killed at 45 %: rows down to some r are in the checkpoint.
        const QString dir = tmp_.filePath(QString("resume-%1-%2").arg(mode).arg(free_ends));
        LongPairOptions o = options_for(j, dir.toStdString());
        o.overview_size = overview;
        QVERIFY(run_until(j, o, 0.45));
        QVERIFY(QFile::exists(dir + "/long-pair.manifest"));
        QVERIFY(row_files(dir).size() >= 3);

        // Resumed with special rows at another spacing (as another runner, kernel
        // count or stream count would place them).
        o.resume = true;
        o.min_band_rows = 700;
        LongPairStats stats;
        auto runner2 = make_cpu_pass_runner();
        const Alignment got = align_long(j.query, j.target, j.scheme, o, *runner2, {}, &stats);
        QVERIFY2(stats.resumed_from_row >= 3000 && stats.resumed_from_row < m - 2000,
                 qPrintable(QString::number(stats.resumed_from_row)));
        QCOMPARE(stats.stage_cells[0],
                 static_cast<std::uint64_t>(m - stats.resumed_from_row) * static_cast<std::uint64_t>(n));
        QCOMPARE(got.score, ref.score);
        QCOMPARE(got.query_end, ref.query_end);
        QCOMPARE(got.target_end, ref.target_end);
        QCOMPARE(got.query_begin, whole.query_begin);
        QCOMPARE(got.target_begin, whole.target_begin);
        QCOMPARE(rescore(got.cigar, j.query, j.target, got.query_begin, got.target_begin, j.scheme), got.score);
        QCOMPARE(got.query_begin + got.cigar.query_span() - 1, got.query_end);
        QCOMPARE(got.target_begin + got.cigar.target_span() - 1, got.target_end);
        // The special rows of both parts serve stage 2: the checkpoint's (every
        // 1000 rows down to r) and the resumed pass's (every 700 rows below r).
        const std::int64_t r = stats.resumed_from_row;
        QCOMPARE(stats.special_rows, r / 1000 + (m - r - 1) / 700);
        QVERIFY(stats.crossings >= 3);
        // A successful job removes its checkpoint (the directory it created too).
        QVERIFY2(!QDir(dir).exists(), qPrintable(QDir(dir).entryList().join(' ')));

        if (overview > 0) {
            // The overview pieced together from the checkpoint and the resumed pass
            // is the max-pool of the full matrix over its row blocks.
            QVERIFY(!stats.overview.empty());
            QCOMPARE(stats.overview.row_edges.front(), std::int64_t{1});
            const EncodedSequence eq = encode(j.query, j.scheme.matrix, "q"),
                                  et = encode(j.target, j.scheme.matrix, "t");
            auto full = make_cpu_pass_runner();
            full->prepare(eq.data(), m, et.data(), n, j.scheme);
            std::vector<PassTask> tasks(1);
            PassTask& p = tasks[0];
            p.row_end = m;
            p.col_end = n;
            p.local = j.align.mode == AlignmentMode::Local;
            p.top = p.local || j.align.free_ends.query_begin ? Edge::Zero : Edge::Gap;
            p.left = p.local || j.align.free_ends.target_begin ? Edge::Zero : Edge::Gap;
            p.overview_rows = static_cast<int>(m);  // one block per row
            p.overview_cols = stats.overview.grid_cols;
            full->run(tasks, {}, {});
            const auto blocks = static_cast<std::int64_t>(stats.overview.row_edges.size());
            for (std::int64_t b = 0; b < blocks; ++b) {
                const std::int64_t lo = stats.overview.row_edges[static_cast<std::size_t>(b)];
                const std::int64_t hi =
                    b + 1 < blocks ? stats.overview.row_edges[static_cast<std::size_t>(b + 1)] : m + 1;
                QVERIFY2(hi > lo, qPrintable(QString("block %1: rows %2..%3").arg(b).arg(lo).arg(hi)));
                for (int c = 0; c < stats.overview.grid_cols; ++c) {
                    Score expect = kNegInf;
                    for (std::int64_t i = lo; i < hi; ++i)
                        expect = std::max(expect,
                                          p.overview[static_cast<std::size_t>((i - 1) * stats.overview.grid_cols + c)]);
                    QCOMPARE(stats.overview.max_h[static_cast<std::size_t>(b * stats.overview.grid_cols + c)], expect);
                }
            }
        }
    }

    // Killed twice: the resumed job checkpoints on, and resumes again.
    void kill_resume_kill_resume() {
        const Job j = job(AlignmentMode::Local, 10000, 10400, 5);
        const QString dir = tmp_.filePath("twice");
        LongPairOptions o = options_for(j, dir.toStdString());
        QVERIFY(run_until(j, o, 0.3));
        o.resume = true;
        o.min_band_rows = 1300;
        o.keep_checkpoint = true;
        QVERIFY(run_until(j, o, 0.4));  // 40 % of the whole matrix, counted from the resume row
        auto runner = make_cpu_pass_runner();
        LongPairStats stats;
        const Alignment got = align_long(j.query, j.target, j.scheme, o, *runner, {}, &stats);
        const Alignment ref = align_reference(j.query, j.target, j.scheme, j.align);
        QVERIFY2(stats.resumed_from_row > 6000, qPrintable(QString::number(stats.resumed_from_row)));
        QCOMPARE(got.score, ref.score);
        QCOMPARE(got.query_end, ref.query_end);
        QCOMPARE(got.target_end, ref.target_end);
        QCOMPARE(rescore(got.cigar, j.query, j.target, got.query_begin, got.target_begin, j.scheme), got.score);
        // keep_checkpoint: the files stay, now with all of stage 1 (the last row m).
        QVERIFY(QFile::exists(dir + "/long-pair.manifest"));
        QVERIFY(
            row_files(dir).contains(QString("long-pair-row-%1.bin").arg(qint64(j.query.size()), 12, 10, QChar('0'))));
    }

    // Killed after stage 1: the checkpoint holds all of it (with the last row),
    // and the resumed job starts at stage 2.
    void a_finished_stage_one_is_not_computed_again() {
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local}) {
            const Job j = job(mode, 8000, 8300, 11);
            const QString dir = tmp_.filePath(QString("after-stage1-%1").arg(int(mode)));
            LongPairOptions o = options_for(j, dir.toStdString());
            QVERIFY(run_until(j, o, 1.0));  // cancelled as stage 1 reports its last cells
            o.resume = true;
            auto runner = make_cpu_pass_runner();
            LongPairStats stats;
            const Alignment got = align_long(j.query, j.target, j.scheme, o, *runner, {}, &stats);
            const Alignment ref = align_reference(j.query, j.target, j.scheme, j.align);
            QCOMPARE(stats.resumed_from_row, std::int64_t(j.query.size()));
            QCOMPARE(stats.stage_cells[0], std::uint64_t{0});
            QCOMPARE(got.score, ref.score);
            QCOMPARE(got.query_end, ref.query_end);
            QCOMPARE(got.target_end, ref.target_end);
            QCOMPARE(rescore(got.cigar, j.query, j.target, got.query_begin, got.target_begin, j.scheme), got.score);
        }
    }

    // The special-row budget holds the checkpoint's rows and the resumed pass's together.
    void the_budget_counts_the_checkpoint_rows() {
        const Job j = job(AlignmentMode::Local, 6000, 6100, 41);
        const QString dir = tmp_.filePath("budget");
        LongPairOptions o = options_for(j, dir.toStdString(), 1);
        o.special_row_budget = 8 * (j.target.size() + 1) * 8;  // eight rows
        QVERIFY(run_until(j, o, 0.5));
        o.resume = true;
        auto runner = make_cpu_pass_runner();
        LongPairStats stats;
        const Alignment got = align_long(j.query, j.target, j.scheme, o, *runner, {}, &stats);
        QVERIFY2(stats.resumed_from_row >= 3000, qPrintable(QString::number(stats.resumed_from_row)));
        QVERIFY2(stats.special_rows >= 7 && stats.special_rows <= 8, qPrintable(QString::number(stats.special_rows)));
        const Alignment ref = align_reference(j.query, j.target, j.scheme, j.align);
        QCOMPARE(got.score, ref.score);
        QCOMPARE(got.query_end, ref.query_end);
        QCOMPARE(got.target_end, ref.target_end);
        QCOMPARE(rescore(got.cigar, j.query, j.target, got.query_begin, got.target_begin, j.scheme), got.score);
    }

    // A long interval writes no checkpoint in a short job: nothing to resume.
    void the_interval_is_honoured() {
        const Job j = job(AlignmentMode::Local, 6000, 6000, 3);
        const QString dir = tmp_.filePath("interval");
        LongPairOptions o = options_for(j, dir.toStdString());
        o.checkpoint_every = 3600;
        QVERIFY(run_until(j, o, 0.8));
        QVERIFY(!QFile::exists(dir + "/long-pair.manifest"));
        QVERIFY(!QDir(dir).exists());  // it made the directory, wrote nothing there, and took it away again
        o.resume = true;
        auto runner = make_cpu_pass_runner();
        const std::string e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("nothing to resume") != std::string::npos, e.c_str());
    }

    // Damage of every kind: one Error naming the file.
    void a_damaged_checkpoint_is_refused() {
        const Job j = job(AlignmentMode::Global, 6000, 6100, 23);
        const QString base = partial_checkpoint(j, "damage-base", 0.6);
        QVERIFY(!base.isEmpty());
        const QStringList rows = row_files(base);
        QVERIFY(rows.size() >= 2);
        int variant = 0;
        auto resume_error = [&](const std::function<void(const QString&)>& damage) {
            const QString dir = tmp_.filePath(QString("damage-%1").arg(++variant));
            copy_dir(base, dir);
            damage(dir);
            LongPairOptions o = options_for(j, dir.toStdString());
            o.resume = true;
            auto runner = make_cpu_pass_runner();
            return error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        };
        const std::string manifest = "long-pair.manifest";
        std::string e = resume_error([](const QString& d) { flip_byte(d + "/long-pair.manifest", 40); });
        QVERIFY2(e.find(manifest) != std::string::npos && e.find("damaged") != std::string::npos, e.c_str());
        e = resume_error([](const QString& d) { truncate_file(d + "/long-pair.manifest", 9); });
        QVERIFY2(e.find(manifest) != std::string::npos && e.find("truncated") != std::string::npos, e.c_str());
        e = resume_error([](const QString& d) { flip_byte(d + "/long-pair.manifest", 9); });  // the format version
        QVERIFY2(e.find(manifest) != std::string::npos && e.find("version") != std::string::npos, e.c_str());
        e = resume_error([&](const QString& d) { flip_byte(d + "/" + rows[1], 1000); });
        QVERIFY2(e.find(rows[1].toStdString()) != std::string::npos && e.find("damaged") != std::string::npos,
                 e.c_str());
        e = resume_error([&](const QString& d) { truncate_file(d + "/" + rows[0], 4000); });
        QVERIFY2(e.find(rows[0].toStdString()) != std::string::npos && e.find("truncated") != std::string::npos,
                 e.c_str());
        e = resume_error([&](const QString& d) { QVERIFY(QFile::remove(d + "/" + rows.last())); });
        QVERIFY2(e.find(rows.last().toStdString()) != std::string::npos && e.find("missing") != std::string::npos,
                 e.c_str());
        // A whole, valid row file under another row's name.
        e = resume_error([&](const QString& d) {
            QVERIFY(QFile::remove(d + "/" + rows[0]));
            QVERIFY(QFile::copy(d + "/" + rows[1], d + "/" + rows[0]));
        });
        QVERIFY2(e.find(rows[0].toStdString()) != std::string::npos && e.find("holds row") != std::string::npos,
                 e.c_str());
        // Not a checkpoint file at all.
        e = resume_error([](const QString& d) {
            QFile f(d + "/long-pair.manifest");
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write("hello\n");
        });
        QVERIFY2(e.find(manifest) != std::string::npos && e.find("not an AlignScope") != std::string::npos, e.c_str());

        // What a crash in the middle of the next checkpoint leaves (a temporary
        // manifest and a row file the manifest does not list) changes nothing.
        const QString dir = tmp_.filePath("crash-leftovers");
        copy_dir(base, dir);
        {
            QFile t(dir + "/.long-pair.manifest.tmp.4242");
            QVERIFY(t.open(QIODevice::WriteOnly));
            t.write("half a manif");
            QFile r(dir + "/long-pair-row-000000005999.bin");
            QVERIFY(r.open(QIODevice::WriteOnly));
            r.write("half a row");
        }
        LongPairOptions o = options_for(j, dir.toStdString());
        o.resume = true;
        auto runner = make_cpu_pass_runner();
        const Alignment got = align_long(j.query, j.target, j.scheme, o, *runner);
        const Alignment ref = align_reference(j.query, j.target, j.scheme, j.align);
        QCOMPARE(got.score, ref.score);
        QCOMPARE(rescore(got.cigar, j.query, j.target, got.query_begin, got.target_begin, j.scheme), got.score);
        // Its own files removed, the stray row file and temporary file too.
        QVERIFY2(QDir(dir).entryList(QDir::Files | QDir::Hidden).isEmpty(),
                 qPrintable(QDir(dir).entryList(QDir::Files | QDir::Hidden).join(' ')));
    }

    // Manifests whose checksum is right but whose contents are not (random
    // bytes changed, cut short, grown): an Error or a checkpoint, never a crash.
    void malformed_manifests_with_good_checksums() {
        const Job j = job(AlignmentMode::SemiGlobal, 3000, 3100, 43, "tb,te");
        const QString base = tmp_.filePath("malformed-base");
        LongPairOptions o = options_for(j, base.toStdString(), 500);
        o.overview_size = 8;
        QVERIFY(run_until(j, o, 0.7));
        const QByteArray good = file_bytes_of(base + "/long-pair.manifest");
        QVERIFY(good.size() > 28);
        // The file re-assembled by the test's CRC is the file as written.
        QCOMPARE(checkpoint_file(good.left(16), good.mid(24, good.size() - 28)), good);
        const EncodedSequence eq = encode(j.query, j.scheme.matrix, "q"), et = encode(j.target, j.scheme.matrix, "t");
        const CheckpointIdentity id = CheckpointIdentity::of(eq.data(), std::int64_t(eq.size()), et.data(),
                                                             std::int64_t(et.size()), j.scheme, j.align);
        std::mt19937 rng(2027);
        int errors = 0, accepted = 0;
        for (int round = 0; round < 400; ++round) {
            QByteArray payload = good.mid(24, good.size() - 28);
            const int kind = round % 4;
            if (kind == 0 || kind == 1) {
                for (int k = 0, changes = 1 + int(rng() % 4); k < changes; ++k)
                    payload[int(rng() % payload.size())] = char(rng() & 0xff);
            } else if (kind == 2) {
                payload.truncate(int(rng() % payload.size()));
            } else {
                payload.insert(int(rng() % (payload.size() + 1)), QByteArray(1 + int(rng() % 16), char(rng() & 0xff)));
            }
            QFile f(base + "/long-pair.manifest");
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(checkpoint_file(good.left(16), payload));
            f.close();
            try {
                LongCheckpoint::resume(base.toStdString(), id);
                ++accepted;
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find("checkpoint") != std::string::npos, e.what());
                ++errors;
            }
        }
        QVERIFY2(errors > 300, qPrintable(QString("%1 errors, %2 accepted").arg(errors).arg(accepted)));
    }

    // Checkpoints whose checksums are all right but whose contents no job
    // writes: a best cell outside the rows saved or the target, a last-column
    // cell off the last column, scores beyond the kernels' range in the
    // manifest, the overview or a row file. Each is one Error naming the file
    // (a cell below the checkpoint once sent stage 2 past the query's end).
    void forged_checkpoints_with_good_checksums_are_refused_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("forgery");
        const int local = int(AlignmentMode::Local), semi = int(AlignmentMode::SemiGlobal);
        QTest::newRow("local best cell at row 2^46") << local << "best.i=70368744177664";
        QTest::newRow("local best cell below the checkpoint") << local << "best.i=last+1";
        QTest::newRow("local best cell right of the target") << local << "best.j=n+1";
        QTest::newRow("local best cell at a negative row") << local << "best.i=-5";
        QTest::newRow("local best score 2^30") << local << "best.score=1073741824";
        QTest::newRow("local best score -2^31") << local << "best.score=-2147483648";
        QTest::newRow("last column cell below the checkpoint") << semi << "last_column.i=last+1";
        QTest::newRow("last column cell off the last column") << semi << "last_column.j=7";
        QTest::newRow("overview wider than the target") << local << "overview_cols=n+1";
        QTest::newRow("overview score -2^31") << local << "overview[0]=-2147483648";
        QTest::newRow("row file H -2^31") << local << "row.h[5]=-2147483648";
        QTest::newRow("row file F 2^31 - 1") << semi << "row.f[9]=2147483647";
    }
    void forged_checkpoints_with_good_checksums_are_refused() {
        QFETCH(int, mode);
        QFETCH(QString, forgery);
        const Job j = mode == int(AlignmentMode::Local) ? job(AlignmentMode::Local, 3000, 3100, 47)
                                                        : job(AlignmentMode::SemiGlobal, 2000, 3100, 53, "tb,te");
        static int variant = 0;
        const QString dir = tmp_.filePath(QString("forged-%1").arg(++variant));
        LongPairOptions o = options_for(j, dir.toStdString(), 500);
        o.overview_size = 16;
        QVERIFY(run_until(j, o, 0.6));
        const QString manifest_path = dir + "/long-pair.manifest";
        QByteArray manifest = file_bytes_of(manifest_path);
        QVERIFY(manifest.size() > 28);
        QByteArray payload = manifest.mid(24, manifest.size() - 28);
        // The manifest's layout (long_checkpoint.cpp): where each field lies.
        auto u32_at = [&](int at) {
            quint32 v;
            std::memcpy(&v, payload.constData() + at, 4);
            return v;
        };
        auto i64_at = [&](int at) {
            qint64 v;
            std::memcpy(&v, payload.constData() + at, 8);
            return v;
        };
        const int name = int(u32_at(24));
        const int count_at = 28 + name + 4 + 12 + 1 + 4 + 1;
        const int count = int(i64_at(count_at));
        const int rows_at = count_at + 8, best_at = rows_at + 12 * count, last_column_at = best_at + 20;
        const int overview_cols_at = last_column_at + 20, blocks_at = overview_cols_at + 4;
        const qint64 last = i64_at(rows_at + 12 * (count - 1)), n = qint64(j.target.size());
        const int grid_at = blocks_at + 8 + 8 * int(i64_at(blocks_at));
        QVERIFY(count >= 2 && i64_at(blocks_at) >= 1 && int(u32_at(overview_cols_at)) == 16);
        auto put32 = [&](int at, qint64 v) {
            const qint32 x = qint32(v);
            std::memcpy(payload.data() + at, &x, 4);
        };
        auto put64 = [&](int at, qint64 v) { std::memcpy(payload.data() + at, &v, 8); };

        const QString f = forgery.section('=', 0, 0), value = forgery.section('=', 1);
        const qint64 v = value == "last+1" ? last + 1 : value == "n+1" ? n + 1 : value.toLongLong();
        QString named = manifest_path;
        // A cell's score 2^28 (in range) beats every real one: the alignment ends there.
        if (f == "best.i") {
            put32(best_at, 1 << 28);
            put64(best_at + 4, v);
        } else if (f == "best.j") {
            put32(best_at, 1 << 28);
            put64(best_at + 12, v);
        } else if (f == "best.score") {
            put32(best_at, v);
        } else if (f == "last_column.i") {
            put32(last_column_at, 1 << 28);
            put64(last_column_at + 4, v);
        } else if (f == "last_column.j") {
            put64(last_column_at + 12, v);
        } else if (f == "overview_cols") {
            // As many columns as that takes: the grid grows to blocks x (n + 1) values.
            const qint64 blocks = i64_at(blocks_at);
            put32(overview_cols_at, v);
            payload.insert(grid_at, QByteArray(int(blocks * (v - 16) * 4), '\0'));
        } else if (f == "overview[0]") {
            put32(grid_at, v);
        } else {
            // A row file: its value changed, its own CRC and the manifest's made right.
            const QString row = dir + "/" + row_files(dir).first();
            named = row;
            QByteArray bytes = file_bytes_of(row);
            QByteArray row_payload = bytes.mid(24, bytes.size() - 28);
            const int column = f == "row.h[5]" ? 5 : int(n + 1) + 9;
            const qint32 x = qint32(v);
            std::memcpy(row_payload.data() + 16 + 4 * column, &x, 4);
            QFile w(row);
            QVERIFY(w.open(QIODevice::WriteOnly | QIODevice::Truncate));
            w.write(checkpoint_file(bytes.left(16), row_payload));
            w.close();
            const quint32 crc = crc32_of(row_payload.mid(16));
            std::memcpy(payload.data() + rows_at + 8, &crc, 4);  // the first row's checksum
        }
        QFile w(manifest_path);
        QVERIFY(w.open(QIODevice::WriteOnly | QIODevice::Truncate));
        w.write(checkpoint_file(manifest.left(16), payload));
        w.close();

        o.resume = true;
        auto runner = make_cpu_pass_runner();
        const std::string e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find(QFileInfo(named).fileName().toStdString()) != std::string::npos, e.c_str());
        QVERIFY2(e.find("checksum is right") != std::string::npos, e.c_str());
    }

    // Values no stage 1 of this job can leave, with every checksum right and
    // every score in range: refused on resume by the DP's own invariants, one
    // Error naming the file and what to do.
    void forged_values_fail_the_row_checks_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("forgery");
        QTest::addColumn<QString>("expect");
        const int local = int(AlignmentMode::Local), global = int(AlignmentMode::Global),
                  semi = int(AlignmentMode::SemiGlobal);
        QTest::newRow("global column 0") << global << "h[0]-=1"
                                         << "in column 0, where this job's left edge has";
        QTest::newRow("local column 0") << local << "h[0]=3"
                                        << "in column 0, where this job's left edge has";
        QTest::newRow("semiglobal tb,te column 0 F") << semi << "f[0]=-5"
                                                     << "in column 0, where this job's left edge has";
        QTest::newRow("global H below F") << global << "f[100]=h[100]+1"
                                          << "below F";
        QTest::newRow("global H falls") << global << "h[200]=h[199]-open-1"
                                        << "by more than a gap opening";
        QTest::newRow("local negative H") << local << "h[300]=-1"
                                          << "negative H";
        QTest::newRow("local best below a row") << local << "best.score=0"
                                                << "records a best score of 0";
        QTest::newRow("semiglobal last column below a row") << semi << "last_column.score=h[n]-1"
                                                            << "in the last column";
    }
    void forged_values_fail_the_row_checks() {
        QFETCH(int, mode);
        QFETCH(QString, forgery);
        QFETCH(QString, expect);
        const Job j = mode == int(AlignmentMode::SemiGlobal) ? job(AlignmentMode::SemiGlobal, 2000, 3100, 53, "tb,te")
                                                             : job(AlignmentMode(mode), 3000, 3100, 61);
        static int variant = 0;
        const QString dir = tmp_.filePath(QString("row-checks-%1").arg(++variant));
        LongPairOptions o = options_for(j, dir.toStdString(), 500);
        QVERIFY(run_until(j, o, 0.6));
        const QStringList rows = row_files(dir);
        QVERIFY(rows.size() >= 2);
        const int k = 1;
        const int open = j.scheme.gap_open;
        QString named = dir + "/" + rows.at(k);
        if (forgery.startsWith("best") || forgery.startsWith("last_column")) {
            named = dir + "/long-pair.manifest";
            qint32 last_h = 0;
            forge(
                dir, k, [&](std::vector<qint32>& h, std::vector<qint32>&) { last_h = h.back(); },
                [&](QByteArray& payload, const ManifestLayout& at) {
                    const qint32 v = forgery.startsWith("best") ? 0 : last_h - 1;
                    std::memcpy(payload.data() + (forgery.startsWith("best") ? at.best_at : at.last_column_at), &v, 4);
                });
        } else {
            forge(dir, k, [&](std::vector<qint32>& h, std::vector<qint32>& f) {
                if (forgery == "h[0]-=1") h[0] -= 1;
                else if (forgery == "h[0]=3")
                    h[0] = 3;
                else if (forgery == "f[0]=-5")
                    f[0] = -5;
                else if (forgery == "f[100]=h[100]+1")
                    f[100] = h[100] + 1;
                else if (forgery == "h[200]=h[199]-open-1") {
                    h[200] = h[199] - open - 1;
                    f[200] = std::min(f[200], h[200]);
                } else if (forgery == "h[300]=-1") {
                    h[300] = -1;
                    f[300] = std::min(f[300], -1);
                }
            });
        }
        if (QTest::currentTestFailed()) return;
        o.resume = true;
        auto runner = make_cpu_pass_runner();
        const std::string e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("checkpoint: " + named.toStdString() + " does not match this job") != std::string::npos,
                 e.c_str());
        QVERIFY2(e.find(expect.toStdString()) != std::string::npos, e.c_str());
        QVERIFY2(e.find("delete the checkpoint or run without --resume") != std::string::npos, e.c_str());
    }

    // Values that pass those checks but are still not this job's: a row of
    // another pair of the same lengths (a real DP row, so every invariant
    // holds), a best cell one higher than any path reaches (the alignment's
    // score + 1, so that it is the end). Resuming ends in
    // one Error naming the checkpoint and its rows (not an internal error of
    // the pipeline), on one runner and on a split runner; nothing crashes, and
    // the checkpoint is left for the user to delete.
    void forged_values_that_pass_the_checks_name_the_checkpoint_data() {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("forgery");
        QTest::addColumn<bool>("split");
        const int local = int(AlignmentMode::Local), global = int(AlignmentMode::Global),
                  semi = int(AlignmentMode::SemiGlobal);
        QTest::newRow("global, its first row from another pair") << global << "first row" << false;
        QTest::newRow("global, its last row from another pair") << global << "last row" << false;
        QTest::newRow("global, its last row from another pair, split") << global << "last row" << true;
        QTest::newRow("local, its first row from another pair") << local << "first row" << false;
        QTest::newRow("local, best score beyond the optimum") << local << "best" << false;
        QTest::newRow("local, best score beyond the optimum, split") << local << "best" << true;
        QTest::newRow("semiglobal tb,te, first row from another pair") << semi << "first row" << false;
        QTest::newRow("semiglobal tb,te, last column beyond the optimum") << semi << "last column" << false;
    }
    void forged_values_that_pass_the_checks_name_the_checkpoint() {
        QFETCH(int, mode);
        QFETCH(QString, forgery);
        QFETCH(bool, split);
        auto make = [&](std::uint64_t seed) {
            return mode == int(AlignmentMode::SemiGlobal) ? job(AlignmentMode::SemiGlobal, 2000, 3100, seed, "tb,te")
                                                          : job(AlignmentMode(mode), 3000, 3100, seed);
        };
        const Job j = make(67), other = make(71);
        static int variant = 0;
        const QString dir = tmp_.filePath(QString("forged-values-%1").arg(++variant));
        LongPairOptions o = options_for(j, dir.toStdString(), 500);
        QVERIFY(run_until(j, o, 0.6));
        const QStringList rows = row_files(dir);
        QVERIFY(rows.size() >= 2);
        const int k = forgery == "first row" ? 0 : int(rows.size()) - 1;
        const std::int64_t row = rows.at(k).mid(14, 12).toLongLong();
        QVERIFY(row > 0);
        if (forgery.endsWith("row")) {
            std::vector<Score> h, f;
            stage1_row(other, row, h, f);
            forge(dir, k, [&](std::vector<qint32>& rh, std::vector<qint32>& rf) {
                QCOMPARE(rh.size(), h.size());
                QVERIFY(rh != h);
                rh.assign(h.begin(), h.end());
                rf.assign(f.begin(), f.end());
            });
        } else {
            const qint32 v = qint32(align_reference(j.query, j.target, j.scheme, j.align).score + 1);
            forge(dir, 0, {}, [&](QByteArray& payload, const ManifestLayout& at) {
                std::memcpy(payload.data() + (forgery == "best" ? at.best_at : at.last_column_at), &v, 4);
            });
        }
        if (QTest::currentTestFailed()) return;
        // The checkpoint passes every check of its own...
        const EncodedSequence eq = encode(j.query, j.scheme.matrix, "q"), et = encode(j.target, j.scheme.matrix, "t");
        const CheckpointIdentity id = CheckpointIdentity::of(eq.data(), std::int64_t(eq.size()), et.data(),
                                                             std::int64_t(et.size()), j.scheme, j.align);
        const std::string loaded = error_of([&] { LongCheckpoint::resume(dir.toStdString(), id); });
        QVERIFY2(loaded == "(no error)", loaded.c_str());
        // ...and the resumed job says what is wrong, once.
        o.resume = true;
        std::unique_ptr<PassRunner> runner;
        if (split) {
            std::vector<std::unique_ptr<PassRunner>> members;
            members.push_back(make_cpu_pass_runner());
            members.push_back(make_cpu_pass_runner());
            runner = make_split_pass_runner(std::move(members), {{1, 2}, 0, 1});
        } else {
            runner = make_cpu_pass_runner();
        }
        const std::string e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        const std::string first = std::to_string(rows.first().mid(14, 12).toLongLong());
        const std::string last = std::to_string(rows.last().mid(14, 12).toLongLong());
        QVERIFY2(e.find("the checkpoint in " + dir.toStdString() +
                        " does not match this job: its stage-1 state for rows " + first + ".." + last +
                        " is inconsistent with the sequences and the scoring") != std::string::npos,
                 e.c_str());
        QVERIFY2(e.find("delete it or run without --resume") != std::string::npos, e.c_str());
        QVERIFY2(e.find("internal error") == std::string::npos, e.c_str());
        QVERIFY(QFile::exists(dir + "/long-pair.manifest"));
    }

    // A file far larger than its header says (or than a row of this job) is
    // refused from its size, before it is read: a sparse 1 TiB manifest or row
    // file, with the address space limited to 1 GiB more than in use.
    void huge_files_are_refused_unread() {
        const Job j = job(AlignmentMode::Global, 3000, 3000, 59);
        for (const bool manifest : {true, false}) {
            const QString dir = tmp_.filePath(manifest ? "huge-manifest" : "huge-row");
            QVERIFY(run_until(j, options_for(j, dir.toStdString(), 500), 0.5));
            const QString path = manifest ? dir + "/long-pair.manifest" : dir + "/" + row_files(dir).first();
            QVERIFY(::truncate(path.toLocal8Bit().constData(), off_t(1) << 40) == 0);
            LongPairOptions o = options_for(j, dir.toStdString(), 500);
            o.resume = true;
            auto runner = make_cpu_pass_runner();
            rlimit before{};
            QVERIFY(::getrlimit(RLIMIT_AS, &before) == 0);
            std::uint64_t pages = 0;
            std::ifstream("/proc/self/statm") >> pages;
            QVERIFY(pages > 0);
            rlimit limited = before;
            limited.rlim_cur =
                std::min<rlim_t>(before.rlim_max, pages * std::uint64_t(::sysconf(_SC_PAGESIZE)) + (1ull << 30));
            QVERIFY(::setrlimit(RLIMIT_AS, &limited) == 0);
            std::string e;
            try {
                align_long(j.query, j.target, j.scheme, o, *runner);
                e = "(no error)";
            } catch (const Error& error) {
                e = error.what();
            } catch (const std::bad_alloc&) {
                e = "(the file was read into memory)";
            }
            QVERIFY(::setrlimit(RLIMIT_AS, &before) == 0);
            QVERIFY2(e.find(QFileInfo(path).fileName().toStdString()) != std::string::npos &&
                         e.find("1099511627776 bytes") != std::string::npos,
                     e.c_str());
        }
    }

    // A FIFO named like the manifest: --resume refuses it at once instead of
    // waiting for a writer forever.
    void a_fifo_manifest_is_refused_at_once() {
        const Job j = job(AlignmentMode::Global, 3000, 3000, 61);
        const QString dir = tmp_.filePath("fifo-manifest");
        QVERIFY(QDir().mkpath(dir));
        QCOMPARE(::mkfifo((dir + "/long-pair.manifest").toLocal8Bit().constData(), 0600), 0);
        LongPairOptions o = options_for(j, dir.toStdString(), 500);
        o.resume = true;
        auto runner = make_cpu_pass_runner();
        const std::string e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("long-pair.manifest is not a regular file (a FIFO)") != std::string::npos, e.c_str());
    }

    void a_checkpoint_of_another_job_is_refused() {
        const Job j = job(AlignmentMode::Local, 6000, 6100, 29);
        const QString dir = partial_checkpoint(j, "identity", 0.5);
        QVERIFY(!dir.isEmpty());
        auto resume_error = [&](Job other) {
            LongPairOptions o = options_for(other, dir.toStdString());
            o.resume = true;
            auto runner = make_cpu_pass_runner();
            return error_of([&] { align_long(other.query, other.target, other.scheme, o, *runner); });
        };
        Job other = j;
        other.target[3000] = other.target[3000] == 'A' ? 'C' : 'A';
        std::string e = resume_error(other);
        QVERIFY2(e.find("long-pair.manifest is for another pair or scheme") != std::string::npos &&
                     e.find("the target's residues differ") != std::string::npos,
                 e.c_str());
        other = j;
        other.query.pop_back();
        e = resume_error(other);
        QVERIFY2(e.find("the query has 5999 residues here, 6000 in the checkpoint") != std::string::npos, e.c_str());
        other = j;
        other.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 11, 0.5);
        e = resume_error(other);
        QVERIFY2(e.find("gap open is 11 here, 10 in the checkpoint") != std::string::npos, e.c_str());
        other.scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 10, 0.5);
        e = resume_error(other);
        QVERIFY2(e.find("the matrix is") != std::string::npos, e.c_str());
        other = j;
        other.align.mode = AlignmentMode::Global;
        e = resume_error(other);
        QVERIFY2(e.find("the mode is global here, local in the checkpoint") != std::string::npos, e.c_str());
        // The checkpoint is still there and still resumes.
        LongPairOptions o = options_for(j, dir.toStdString());
        o.resume = true;
        auto runner = make_cpu_pass_runner();
        QCOMPARE(align_long(j.query, j.target, j.scheme, o, *runner).score,
                 align_reference(j.query, j.target, j.scheme, j.align).score);
    }

    void directory_errors() {
        const Job j = job(AlignmentMode::Local, 3000, 3000, 37);
        auto runner = make_cpu_pass_runner();
        // --resume without a directory; a directory without a checkpoint.
        LongPairOptions o = options_for(j, "");
        o.resume = true;
        std::string e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("needs the checkpoint directory") != std::string::npos, e.c_str());
        const QString empty = tmp_.filePath("empty");
        QVERIFY(QDir().mkpath(empty));
        o.checkpoint_dir = empty.toStdString();
        e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("holds no long-pair checkpoint") != std::string::npos, e.c_str());
        // A new job where a checkpoint already is: refused, the checkpoint untouched.
        const QString dir = partial_checkpoint(j, "occupied", 0.7);
        QVERIFY(!dir.isEmpty());
        const QByteArray before = [&] {
            QFile f(dir + "/long-pair.manifest");
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        o = options_for(j, dir.toStdString());
        e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("already holds a long-pair checkpoint") != std::string::npos &&
                     e.find("--resume") != std::string::npos,
                 e.c_str());
        QFile f(dir + "/long-pair.manifest");
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
        // Two jobs on one checkpoint: the second is refused while the first holds it.
        {
            const EncodedSequence eq = encode(j.query, j.scheme.matrix, "q"),
                                  et = encode(j.target, j.scheme.matrix, "t");
            const CheckpointIdentity id = CheckpointIdentity::of(eq.data(), std::int64_t(eq.size()), et.data(),
                                                                 std::int64_t(et.size()), j.scheme, j.align);
            LongCheckpoint first = LongCheckpoint::resume(dir.toStdString(), id);
            o = options_for(j, dir.toStdString());
            o.resume = true;
            e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
            QVERIFY2(e.find("another job is using the checkpoint directory") != std::string::npos, e.c_str());
        }
        QCOMPARE(align_long(j.query, j.target, j.scheme, o, *runner).score,
                 align_reference(j.query, j.target, j.scheme, j.align).score);
        // A directory that cannot be made (a file is in the way).
        const QString file = tmp_.filePath("a-file");
        {
            QFile w(file);
            QVERIFY(w.open(QIODevice::WriteOnly));
        }
        o = options_for(j, (file + "/sub").toStdString());
        e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("cannot create the directory") != std::string::npos &&
                     e.find("a-file/sub") != std::string::npos,
                 e.c_str());
        o = options_for(j, file.toStdString());
        e = error_of([&] { align_long(j.query, j.target, j.scheme, o, *runner); });
        QVERIFY2(e.find("is not a directory") != std::string::npos, e.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLongCheckpoint)
#include "test_long_checkpoint.moc"
