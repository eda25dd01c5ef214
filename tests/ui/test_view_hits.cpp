// Ranked hit tables: hits ranked here from reference alignments of a real
// query against the demo globins, shown in rank order, sorted by other
// columns, the selected hit's alignment equal to the reference's, the table's
// rows drawn, and a job's hits paged in from a project with its sequences.
#include "views/hits/hits_view.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/io/alignment_format.hpp>
#include <alignscope/seq/sequence_reader.hpp>
#include <alignscope/store/job_recording.hpp>
#include <alignscope/store/project.hpp>

#include <QHeaderView>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

const QString demo = QStringLiteral(ALIGNSCOPE_SOURCE_DIR "/resources/demo/");

struct Search {
    std::vector<Sequence> queries, targets;
    ScoringScheme scheme;
    AlignOptions options;
    std::vector<store::Hit> hits;  // rank order
    std::vector<Alignment> alignments;  // in the same order
};

// One query against every demo globin, ranked by reference local score.
Search search() {
    Search s;
    s.queries = {read_sequences((demo + "globins_human.fa").toStdString()).records.at(1)};  // HBA_HUMAN
    s.targets = read_sequences((demo + "globins_others.fa").toStdString()).records;
    s.targets.push_back(read_sequences((demo + "globins_human.fa").toStdString()).records.at(0));
    s.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 11, 1);
    s.options.mode = AlignmentMode::Local;
    std::vector<std::pair<Alignment, const Sequence*>> found;
    for (const Sequence& t : s.targets) {
        Alignment a = align_reference(s.queries[0].residues, t.residues, s.scheme, s.options);
        a.query_id = s.queries[0].id;
        a.target_id = t.id;
        found.emplace_back(a, &t);
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first.score > y.first.score; });
    for (std::size_t k = 0; k < found.size(); ++k) {
        const Alignment& a = found[k].first;
        store::Hit h;
        h.query_id = a.query_id;
        h.target_id = a.target_id;
        h.rank = std::int64_t(k + 1);
        h.score = a.score;
        h.query_begin = a.query_begin;
        h.query_end = a.query_end;
        h.target_begin = a.target_begin;
        h.target_end = a.target_end;
        h.query_length = a.query_length;
        h.target_length = a.target_length;
        s.hits.push_back(h);
        s.alignments.push_back(a);
    }
    return s;
}

}  // namespace

class TestViewHits : public QObject {
    Q_OBJECT
private slots:
    void rankedAndSelected() {
        const Search s = search();
        HitsView view;
        view.resize(1000, 800);
        view.show();
        QApplication::processEvents();
        std::vector<store::Hit> shuffled(s.hits.rbegin(), s.hits.rend());  // the table sorts by rank itself
        view.setHits(shuffled, s.queries, s.targets, s.scheme, s.options);
        HitTableModel* model = view.model();
        QCOMPARE(model->rowCount(), int(s.hits.size()));
        for (int r = 0; r < model->rowCount(); ++r) {
            QCOMPARE(model->hit(r), s.hits[std::size_t(r)]);
            QCOMPARE(model->data(model->index(r, HitTableModel::Target)).toString().toStdString(), s.hits[std::size_t(r)].target_id);
            QCOMPARE(model->data(model->index(r, HitTableModel::Score)).toString().toStdString(),
                     format_score(s.scheme.to_user(s.hits[std::size_t(r)].score)));
        }
        QCOMPARE(model->data(model->index(0, HitTableModel::Target)).toString(), QString("HBA_HORSE"));  // its closest relative
        // Sorting by score, high first, keeps the ranks in order.
        view.table()->sortByColumn(HitTableModel::Score, Qt::DescendingOrder);
        for (int r = 1; r < model->rowCount(); ++r) QVERIFY(model->hit(r - 1).score >= model->hit(r).score);
        view.table()->sortByColumn(HitTableModel::Rank, Qt::AscendingOrder);

        QSignalSpy selected(&view, &HitsView::hitSelected);
        for (int r = 0; r < model->rowCount(); ++r) {
            view.selectHit(r);
            const Alignment& shown = view.alignmentView()->pair().alignment;
            QCOMPARE(shown.target_id, s.alignments[std::size_t(r)].target_id);
            QCOMPARE(shown.score, s.hits[std::size_t(r)].score);
            QCOMPARE(shown.query_aligned, s.alignments[std::size_t(r)].query_aligned);
            QVERIFY2(view.noteText().startsWith(QString("Rank %1:").arg(r + 1)) && !view.noteText().contains("differs"),
                     qPrintable(view.noteText()));
        }
        QVERIFY(selected.count() >= model->rowCount());
        // The table is drawn: each row's band of the image has text in it.
        view.table()->clearSelection();  // dark text on the plain row colours
        view.table()->scrollToTop();
        QApplication::processEvents();
        const QImage image = view.table()->viewport()->grab().toImage();
        int drawn = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const QRect row = view.table()->visualRect(model->index(r, HitTableModel::Target));
            if (!image.rect().contains(row)) continue;
            ++drawn;
            int dark = 0;
            for (int y = row.top(); y <= row.bottom(); ++y)
                for (int x = row.left(); x <= row.right(); ++x) dark += image.pixelColor(x, y).lightness() < 100;
            QVERIFY2(dark > 10, qPrintable(QString("row %1").arg(r)));
        }
        QVERIFY(drawn >= 3);
        // A hit whose sequences are unknown says so instead of aligning.
        std::vector<store::Hit> odd = s.hits;
        odd[0].target_id = "NOT_THERE";
        view.setHits(odd, s.queries, s.targets, s.scheme, s.options);
        view.selectHit(0);
        QVERIFY(view.noteText().contains("not available"));
        QVERIFY(!view.alignmentView()->hasAlignment());
    }

    void pagedFromTheProject() {
        const Search s = search();
        QTemporaryDir dir;
        const std::string path = dir.filePath("p.alsproj").toStdString();
        store::ProjectOptions create;
        create.create_if_missing = true;
        std::int64_t job_id = 0;
        // 1,200 hits: the real six, then ranked repeats of them (a long table to page through).
        std::vector<store::Hit> many;
        for (int k = 0; k < 1200; ++k) {
            store::Hit h = s.hits[std::size_t(k) % s.hits.size()];
            h.rank = k + 1;
            many.push_back(h);
        }
        {
            store::Project project(path, create);
            store::JobSpec spec;
            spec.command = "search";
            spec.mode = "local";
            spec.set_scheme(s.scheme);
            auto job = project.begin_job(spec);
            job->add_input(read_sequences((demo + "globins_human.fa").toStdString()), "query");
            job->add_input(read_sequences((demo + "globins_others.fa").toStdString()), "database");
            job->add_input(read_sequences((demo + "globins_human.fa").toStdString()), "database");
            job->add_hits(many);
            job_id = job->job_id();
            job->finish_done();
        }
        store::Project project(path);
        HitsView view;
        view.loadFromProject(project, job_id);
        HitTableModel* model = view.model();
        QCOMPARE(model->totalHits(), std::int64_t(1200));
        int pages = 0;
        while (model->canFetchMore({})) {
            model->fetchMore({});
            ++pages;
        }
        QCOMPARE(pages, 3);  // 500 + 500 + 200
        QCOMPARE(model->rowCount(), 1200);
        for (int r = 0; r < 1200; r += 97) QCOMPARE(model->hit(r), many[std::size_t(r)]);
        view.selectHit(2);
        QCOMPARE(view.alignmentView()->pair().alignment.score, s.hits[2].score);
        QCOMPARE(view.alignmentView()->pair().alignment.target_id, s.hits[2].target_id);
    }
};

QTEST_MAIN(TestViewHits)
#include "test_view_hits.moc"
