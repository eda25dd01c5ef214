// The alignment viewer on real globins (the demo set): the EMBOSS-like header
// against counts made here from the aligned rows, the markup line against its
// definition, residue colours in the rendered image where the residues are,
// position search (both sequences, wrapped and single-line), mouse selection
// and copy, exports parsed back (pair, FASTA, SAM), a job read from a project,
// and a 1,000,000-column alignment painted only where it is in view.
#include "views/alignment/alignment_view.hpp"

#include <alignscope/align/cigar.hpp>
#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/verify.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <QClipboard>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

const QString demo = QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo/");

AlignedPair globins(AlignmentMode mode) {
    const SequenceSet human = read_sequences((demo + "globins_human.fa").toStdString());
    const SequenceSet others = read_sequences((demo + "globins_others.fa").toStdString());
    AlignedPair pair;
    pair.query = human.records.at(0);    // HBB_HUMAN
    pair.target = others.records.at(2);  // MYG_PHYCA: gaps, mismatches, similar residues
    pair.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 10, 0.5);
    pair.options.mode = mode;
    pair.alignment = align_reference(pair.query.residues, pair.target.residues, pair.scheme, pair.options);
    pair.alignment.query_id = pair.query.id;
    pair.alignment.target_id = pair.target.id;
    return pair;
}

void show(QWidget& w, QSize size) {
    w.resize(size);
    w.show();
    QApplication::processEvents();
}

QImage paint(AlignmentCanvas* canvas) { return canvas->viewport()->grab().toImage(); }

// Residue rows of an EMBOSS pair text for `id` (the 3rd field of its lines).
QString pair_rows(const QString& text, const QString& id) {
    QString row;
    for (const QString& line : text.split('\n')) {
        const QStringList f = line.split(' ', Qt::SkipEmptyParts);
        if (f.size() == 4 && f[0] == id.left(13)) row += f[2];
    }
    return row;
}

}  // namespace

class TestViewAlignment : public QObject {
    Q_OBJECT
private slots:
    void headerAndMarkup() {
        const AlignedPair pair = globins(AlignmentMode::Global);
        AlignmentView view;
        view.setAlignedPair(pair);
        const Alignment& a = pair.alignment;
        std::int64_t ident = 0, similar = 0, gaps = 0;
        const std::string& q = a.query_aligned;
        const std::string& t = a.target_aligned;
        const std::string& m = view.markup();
        QCOMPARE(m.size(), q.size());
        for (std::size_t c = 0; c < q.size(); ++c) {
            if (q[c] == '-' || t[c] == '-') {
                ++gaps;
                QCOMPARE(m[c], ' ');
                continue;
            }
            const int s =
                pair.scheme.matrix.score(pair.scheme.matrix.index_of(q[c]), pair.scheme.matrix.index_of(t[c]));
            if (q[c] == t[c]) ++ident;
            if (s > 0) ++similar;
            QCOMPARE(m[c], q[c] == t[c] ? '|' : s > 0 ? ':' : '.');
        }
        QVERIFY(gaps > 0 && ident > 10);
        const QString header = view.headerText();
        const QString L = QString::number(q.size());
        QVERIFY2(header.contains(QString("# Identity:   %1/%2 (").arg(ident).arg(L)), qPrintable(header));
        QVERIFY(header.contains(QString("# Similarity: %1/%2 (").arg(similar).arg(L)));
        QVERIFY(header.contains(QString("# Gaps:       %1/%2 (").arg(gaps).arg(L)));
        QVERIFY(header.contains("# 1: HBB_HUMAN") && header.contains("# 2: MYG_PHYCA"));
        QVERIFY(header.contains("# Matrix: BLOSUM62") && header.contains("# Gap_penalty: 10") &&
                header.contains("# Extend_penalty: 0.5"));
        QVERIFY(header.contains(QString("# Query: 1-%1 of %1").arg(pair.query.residues.size())));
        QVERIFY(header.contains("# Score: " + QString::fromStdString(format_score(pair.scheme.to_user(a.score)))));
        // A score-only result cannot be shown.
        Alignment bare = a;
        bare.cigar = Cigar();
        QVERIFY_THROWS_EXCEPTION(Error, view.setAlignment(bare, pair.query, pair.target, pair.scheme));
    }

    void coloursWhereTheResiduesAre() {
        const AlignedPair pair = globins(AlignmentMode::Global);
        AlignmentView view;
        show(view, QSize(1000, 700));
        view.setAlignedPair(pair);
        AlignmentCanvas* canvas = view.canvas();
        QCOMPARE(canvas->effectiveColouring(), ResidueColouring::Protein);
        const QImage image = paint(canvas);
        const auto [first, last] = canvas->lastPaintedColumns();
        QVERIFY(last - first > 100);
        int checked = 0, right = 0, dark_cells = 0;
        for (std::int64_t c = first; c < last; ++c)
            for (const int line : {1, 3}) {
                const char r =
                    (line == 1 ? pair.alignment.query_aligned : pair.alignment.target_aligned)[std::size_t(c)];
                const QRect cell = canvas->cellRect(c, line);
                QVERIFY(!cell.isEmpty());
                const QColor want = r == '-' ? QColor(Qt::white) : residue_colour(r, ResidueColouring::Protein);
                ++checked;
                right += image.pixelColor(cell.topLeft() + QPoint(0, 1)) == want;
                // The letter itself: some dark pixels inside the cell.
                int dark = 0;
                for (int y = cell.top(); y <= cell.bottom(); ++y)
                    for (int x = cell.left(); x <= cell.right(); ++x) dark += image.pixelColor(x, y).lightness() < 90;
                dark_cells += dark > 0;
            }
        QVERIFY2(right >= checked * 97 / 100, qPrintable(QString("%1 of %2").arg(right).arg(checked)));
        QVERIFY(dark_cells >= checked * 9 / 10);
        // No colouring: residue cells go white.
        view.setColouring(ResidueColouring::None);
        const QImage plain = paint(canvas);
        const QRect cell = canvas->cellRect(first, 1);
        QCOMPARE(plain.pixelColor(cell.topLeft() + QPoint(0, 1)), QColor(Qt::white));
    }

    void searchForPositions() {
        const AlignedPair pair = globins(AlignmentMode::Local);
        AlignmentView view;
        show(view, QSize(700, 300));  // a few blocks in view: searching must scroll
        view.setAlignedPair(pair);
        const Alignment& a = pair.alignment;
        for (const bool wrapped : {true, false}) {
            view.setWrapped(wrapped);
            for (const AlignedSide side : {AlignedSide::Query, AlignedSide::Target}) {
                const std::string& row = side == AlignedSide::Query ? a.query_aligned : a.target_aligned;
                const std::int64_t begin = side == AlignedSide::Query ? a.query_begin : a.target_begin;
                const std::int64_t end = side == AlignedSide::Query ? a.query_end : a.target_end;
                for (std::int64_t pos = begin; pos <= end; pos += 7) {
                    QVERIFY(view.goToPosition(side, pos));
                    const std::int64_t c = view.canvas()->highlight();
                    QVERIFY(row[std::size_t(c)] != '-');
                    QCOMPARE(std::int64_t(std::count_if(row.begin(), row.begin() + c, [](char x) { return x != '-'; })),
                             pos - begin);
                    QApplication::processEvents();
                    QVERIFY2(!view.canvas()->cellRect(c, 1).isEmpty(),
                             qPrintable(QString("column %1 not in view").arg(c)));
                }
                QVERIFY(!view.goToPosition(side, end + 1));
                QVERIFY(view.messageText().contains("outside"));
            }
        }
        // Single-line mode scrolls sideways: the scroll range is the columns not in view.
        view.setWrapped(false);
        QScrollBar* h = view.canvas()->horizontalScrollBar();
        QCOMPARE(h->maximum() + h->pageStep(), int(a.query_aligned.size()));
    }

    void selectCopyAndExport() {
        const AlignedPair pair = globins(AlignmentMode::Global);
        const Alignment& a = pair.alignment;
        AlignmentView view;
        show(view, QSize(1000, 700));
        view.setAlignedPair(pair);
        AlignmentCanvas* canvas = view.canvas();
        // Mouse: drag from column 5 to column 20 on the query line.
        const QPoint from = canvas->cellRect(5, 1).center(), to = canvas->cellRect(20, 3).center();
        QTest::mousePress(canvas->viewport(), Qt::LeftButton, {}, from);
        QMouseEvent move(QEvent::MouseMove, QPointF(to), canvas->viewport()->mapToGlobal(QPointF(to)), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(canvas->viewport(), &move);
        QTest::mouseRelease(canvas->viewport(), Qt::LeftButton, {}, to);
        QCOMPARE(canvas->selection(), std::make_optional(std::make_pair(std::int64_t(5), std::int64_t(20))));

        canvas->setSelection(10, 129);
        view.copy();
        const QString copied = QApplication::clipboard()->text();
        QCOMPARE(pair_rows(copied, "HBB_HUMAN").toStdString(), a.query_aligned.substr(10, 120));
        QCOMPARE(pair_rows(copied, "MYG_PHYCA").toStdString(), a.target_aligned.substr(10, 120));
        const std::int64_t q_start =
            a.query_begin +
            std::count_if(a.query_aligned.begin(), a.query_aligned.begin() + 10, [](char c) { return c != '-'; });
        QCOMPARE(copied.split('\n')[0].split(' ', Qt::SkipEmptyParts)[1].toLongLong(), q_start);

        QTemporaryDir dir;
        view.exportTo(dir.filePath("a.pair"), AlignmentExport::Pair);
        QFile pair_file(dir.filePath("a.pair"));
        QVERIFY(pair_file.open(QIODevice::ReadOnly));
        const QString pair_text = QString::fromUtf8(pair_file.readAll());
        QCOMPARE(pair_rows(pair_text, "HBB_HUMAN").toStdString(), a.query_aligned);
        QCOMPARE(pair_rows(pair_text, "MYG_PHYCA").toStdString(), a.target_aligned);
        QVERIFY(pair_text.contains("# Aligned_sequences: 2"));

        view.exportTo(dir.filePath("a.fa"), AlignmentExport::Fasta);
        const SequenceSet fasta = read_sequences(dir.filePath("a.fa").toStdString());
        QCOMPARE(fasta.records.size(), std::size_t(2));
        QCOMPARE(fasta.records[0].id, std::string("HBB_HUMAN"));
        QFile fa(dir.filePath("a.fa"));
        QVERIFY(fa.open(QIODevice::ReadOnly));
        QStringList rows;
        for (const QString& line : QString::fromUtf8(fa.readAll()).split('\n', Qt::SkipEmptyParts)) {
            if (line.startsWith('>')) rows << QString();
            else
                rows.last() += line;
        }
        QCOMPARE(rows.value(0).toStdString(), a.query_aligned);
        QCOMPARE(rows.value(1).toStdString(), a.target_aligned);

        view.exportTo(dir.filePath("a.sam"), AlignmentExport::Sam);
        QFile sam(dir.filePath("a.sam"));
        QVERIFY(sam.open(QIODevice::ReadOnly));
        const QStringList sam_lines = QString::fromUtf8(sam.readAll()).split('\n', Qt::SkipEmptyParts);
        QVERIFY(sam_lines.contains(QString("@SQ\tSN:MYG_PHYCA\tLN:%1").arg(pair.target.residues.size())));
        const QStringList fields = sam_lines.last().split('\t');
        QCOMPARE(fields.value(0), QString("HBB_HUMAN"));
        QCOMPARE(fields.value(2), QString("MYG_PHYCA"));
        QCOMPARE(fields.value(3).toLongLong(), a.target_begin);
        QCOMPARE(Cigar::parse(fields.value(5).toStdString()), a.cigar);
        QCOMPARE(fields.value(9).toStdString(), pair.query.residues);
        QVERIFY_THROWS_EXCEPTION(Error, view.exportTo(dir.filePath("missing/dir/a.sam"), AlignmentExport::Sam));
    }

    void fromTheProject() {
        const AlignedPair pair = globins(AlignmentMode::Local);
        QTemporaryDir dir;
        const std::string path = dir.filePath("p.alsproj").toStdString();
        store::ProjectOptions create;
        create.create_if_missing = true;
        std::int64_t job_id = 0;
        {
            store::Project project(path, create);
            store::JobSpec spec;
            spec.command = "align";
            spec.mode = "local";
            spec.set_scheme(pair.scheme);
            auto job = project.begin_job(spec);
            job->add_input(read_sequences((demo + "globins_human.fa").toStdString()), "query");
            job->add_input(read_sequences((demo + "globins_others.fa").toStdString()), "target");
            job->add_alignments({pair.alignment});
            job_id = job->job_id();
            job->finish_done();
        }
        store::Project project(path);
        AlignmentView view;
        view.loadFromProject(project, job_id, 0);
        QCOMPARE(view.pair().alignment.query_aligned, pair.alignment.query_aligned);
        QCOMPARE(view.pair().target.residues, pair.target.residues);
        QCOMPARE(view.pair().options.mode, AlignmentMode::Local);
        QVERIFY(view.headerText().contains("# Mode: local"));
    }

    void megabaseAlignmentIsVirtualised() {
        // A 1 Mbp pair whose alignment is known by construction: the target is
        // the query with substitutions and short indels, the CIGAR recorded as
        // they are made; complete_alignment builds the rows from it.
        SeededRandom random(42);
        const std::int64_t n = 1'000'000;
        Sequence query{"chrQ", "", random_residues(random, AlphabetKind::Dna, n), ""};
        std::string target;
        target.reserve(std::size_t(n + n / 50));
        Cigar cigar;
        for (std::int64_t i = 0; i < n;) {
            const double r = random.unit();
            if (r < 0.01 && i > 0) {  // deletion from the target's view: query residues against gaps
                const std::uint32_t k = 1 + std::uint32_t(random.between(0, 3));
                const std::uint32_t take = std::uint32_t(std::min<std::int64_t>(k, n - i));
                cigar.push('I', take);
                i += take;
            } else if (r < 0.02 && i > 0) {
                const std::uint32_t k = 1 + std::uint32_t(random.between(0, 3));
                target += random_residues(random, AlphabetKind::Dna, k);
                cigar.push('D', k);
            } else {
                const char c = query.residues[std::size_t(i)];
                const char t = r < 0.06 ? "ACGT"[(std::string("ACGT").find(c) + 1) % 4] : c;
                target += t;
                cigar.push(t == c ? '=' : 'X');
                ++i;
            }
        }
        if (cigar.ops().back().op == 'I' || cigar.ops().back().op == 'D') {
            target += query.residues.back();
        }
        AlignedPair pair;
        pair.query = query;
        pair.target = Sequence{"chrT", "", target, ""};
        pair.scheme = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        pair.options.mode = AlignmentMode::Global;
        Alignment& a = pair.alignment;
        a.query_id = "chrQ";
        a.target_id = "chrT";
        a.mode = AlignmentMode::Global;
        a.query_begin = a.target_begin = 1;
        a.query_end = a.query_length = n;
        a.target_end = cigar.target_span();
        a.target_length = std::int64_t(target.size());
        a.cigar = cigar;
        a.score = rescore(cigar, query.residues, target, 1, 1, pair.scheme);
        AlignmentView view;
        show(view, QSize(1100, 800));
        QElapsedTimer timer;
        timer.start();
        view.setAlignedPair(pair);
        const qint64 open_ms = timer.elapsed();
        AlignmentCanvas* canvas = view.canvas();
        QVERIFY(canvas->columns() > n);
        double worst = 0, total = 0;
        int frames = 0;
        SeededRandom where(7);
        for (int k = 0; k < 40; ++k) {
            const std::int64_t pos = where.between(1, n);
            QVERIFY(view.goToPosition(AlignedSide::Query, pos));
            timer.restart();
            const QImage image = paint(canvas);
            const double ms = double(timer.nsecsElapsed()) / 1e6;
            worst = std::max(worst, ms);
            total += ms;
            ++frames;
            const auto [first, last] = canvas->lastPaintedColumns();
            // Only what is on screen was painted.
            QVERIFY(last - first <= std::int64_t(canvas->lineWidth()) *
                                        (canvas->viewport()->height() / (6 * canvas->lineHeight()) + 1));
            QVERIFY(canvas->highlight() >= first && canvas->highlight() < last);
            const std::int64_t c = canvas->highlight();
            QCOMPARE(canvas->residuesBefore(AlignedSide::Query, c), pos - 1);
        }
        view.setWrapped(false);
        paint(canvas);
        QVERIFY(canvas->lastPaintedColumns().second - canvas->lastPaintedColumns().first < 200);
        qInfo(
            "1,000,000-residue alignment (%lld columns): opened in %lld ms; paint after a jump: mean %.1f ms, worst "
            "%.1f ms",
            static_cast<long long>(canvas->columns()), open_ms, total / frames, worst);
        QVERIFY(worst < 2000);  // a sanity bound; the figures above are the measurement
    }
};

QTEST_MAIN(TestViewAlignment)
#include "test_view_alignment.moc"
