// The all-against-all result spool read back with too little memory: one
// tile's record (about 54 MB here, above glibc's largest mmap threshold, so
// freed copies are not kept in the heap) does not fit under an address-space limit
// set in a child process a few MiB above what it already uses, and reading
// the spool must then fail with one Error naming the spool file, the tile and
// what the user can do (more memory, a smaller --tile), never a bare
// std::bad_alloc. The same spool reads back whole without the limit.
#include "sanitizers.hpp"

#include <alignscope/allvsall/allvsall.hpp>
#include <alignscope/allvsall/spool.hpp>
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>

#include "memory_limit.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cstdio>
#include <fstream>
#include <new>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace alignscope;
using namespace alignscope::allvsall;

class TestAllVsAllSpoolMemory : public QObject {
    Q_OBJECT

private slots:
    void readingBackPastMemoryNamesTheSpool() {
        if (test::kSanitized) QSKIP("an address-space limit stops the sanitizer's runtime, not the code under test");
        // 3,000 records in one tile: 4,498,500 pairs, a 54 MB record.
        std::vector<Sequence> set;
        for (int k = 0; k < 3000; ++k) {
            Sequence s;
            s.id = "s";
            s.id += std::to_string(k);
            s.residues = "ACGTACGT";
            set.push_back(std::move(s));
        }
        const Problem problem =
            make_problem(set, nullptr, ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 1),
                         AlignOptions{}, TraceCriteria{}, 3000);
        QCOMPARE(problem.tiling.tile_count(), std::uint64_t{1});
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        SpoolOptions options;
        options.temp_dir = dir.path().toStdString();
        ResultSpool spool(problem, options);
        {
            TileResult tile;
            tile.tile = 0;
            tile.scores.resize(problem.tiling.pair_count(0), PairScore{0, 1, 7});
            spool.put(std::move(tile));
        }
        QVERIFY(spool.complete());

        // With 8 MiB to spare: the read fails, naming the spool.
        const auto [status, said] = test::in_limited_child(std::uint64_t{8} << 20, [&spool](std::string& message) {
            try {
                spool.for_each([](const TileResult&) {});
            } catch (const Error& e) {
                message = e.what();
                return 0;
            } catch (const std::bad_alloc&) {
                message = "std::bad_alloc escaped";
                return 3;
            }
            message = "read back whole";
            return 4;
        });
        QVERIFY2(status == 0, said.c_str());
        const QString text = QString::fromStdString(said);
        QVERIFY2(text.contains(QString::fromStdString(spool.spool_path())), said.c_str());
        QVERIFY2(text.contains("out of memory reading tile 0"), said.c_str());
        QVERIFY2(text.contains("--tile"), said.c_str());

        // Without the limit: every pair comes back.
        std::uint64_t pairs = 0;
        spool.for_each([&](const TileResult& r) { pairs += r.scores.size(); });
        QCOMPARE(pairs, problem.tiling.pair_count());
    }
};

QTEST_GUILESS_MAIN(TestAllVsAllSpoolMemory)
#include "test_allvsall_spool_memory.moc"
