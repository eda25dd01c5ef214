// Scores past 2^31 through the real binary: `search` and `allvsall` with a
// match of 1,000,000 and penalties of 1,000,000 (the accepted maximum) on DNA
// of a few thousand bases, on the cpu and cpu-ref devices, local and global,
// and both under mpirun (Debian openmpi-bin). Every score read back
// (hit table, pair table, PHYLIP matrix, project) must equal a plain 64-bit
// Gotoh DP (gotoh64.hpp), and every job must exit 0.
#include "cli_runner.hpp"
#include "gotoh64.hpp"

#include <QtTest>

#include <alignscope/store/project.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr std::int64_t kMatch = 1'000'000, kMismatch = -1'000'000, kOpen = 1'000'000, kExtend = 1'000'000;
constexpr std::int64_t k32 = std::numeric_limits<std::int32_t>::max();

// The oracle's score, each pair computed once (the rows of a test share them).
std::int64_t gotoh(const std::string& a, const std::string& b, bool local) {
    static std::map<std::tuple<std::string, std::string, bool>, std::int64_t> known;
    const auto key = std::make_tuple(std::min(a, b), std::max(a, b), local);
    if (const auto it = known.find(key); it != known.end()) return it->second;
    return known[key] = alignscope::test::Gotoh64{kMatch, kMismatch, kOpen, kExtend}.score(a, b, local);
}

struct Record {
    std::string id, residues;
};

// A seeded set: 2,400 bases, a copy (2.4 x 10^9 against it), a variant with
// substitutions and a 30-base deletion, and two unrelated ones (a short one
// puts global scores below -2^31).
std::vector<Record> make_set() {
    std::mt19937 random(20261126);
    auto bases = [&](std::size_t n) {
        std::string s;
        for (std::size_t k = 0; k < n; ++k) s += "ACGT"[random() % 4];
        return s;
    };
    const std::string source = bases(2400);
    std::string variant = source.substr(0, 1000) + source.substr(1030);
    for (std::size_t k = 0; k < variant.size(); k += 53) variant[k] = variant[k] == 'A' ? 'C' : 'A';
    return {{"source", source}, {"copy", source}, {"variant", variant}, {"short", bases(40)}, {"other", bases(1200)}};
}

QString write_set(const QTemporaryDir& dir, const QString& name, const std::vector<Record>& records) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return path;
    for (const Record& r : records)
        f.write(">" + QByteArray::fromStdString(r.id) + "\n" + QByteArray::fromStdString(r.residues) + "\n");
    return path;
}

QByteArray slurp(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList scheme(const QString& mode) {
    return {"--match",      "1000000", "--mismatch", "-1000000", "--gap-open", "1000000",
            "--gap-extend", "1000000", "--mode",     mode,       "--quiet"};
}

// Rows of a TSV file after its header, split at tabs.
std::vector<QList<QByteArray>> rows(const QString& path) {
    std::vector<QList<QByteArray>> out;
    const QList<QByteArray> lines = slurp(path).split('\n');
    for (qsizetype k = 1; k < lines.size(); ++k)
        if (!lines[k].isEmpty()) out.push_back(lines[k].split('\t'));
    return out;
}

std::int64_t integer(const QByteArray& text) {
    bool ok = false;
    const qlonglong v = text.toLongLong(&ok);
    return ok ? std::int64_t(v) : std::numeric_limits<std::int64_t>::min();
}

}  // namespace

class TestScoresPast32Bits : public QObject {
    Q_OBJECT

private slots:
    void search_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("mode");
        for (const char* device : {"cpu", "cpu-ref"})
            for (const char* mode : {"local", "global"})
                QTest::newRow((std::string(device) + " " + mode).c_str()) << device << mode;
    }
    // Every database sequence is a hit (--top 10): the hit table's scores and
    // the project's are the oracle's, past 2^31 above and below.
    void search() {
        QFETCH(QString, device);
        QFETCH(QString, mode);
        const bool local = mode == "local";
        QTemporaryDir dir;
        const std::vector<Record> set = make_set();
        const QString query = write_set(dir, "q.fa", {set[0]});
        const std::vector<Record> database(set.begin() + 1, set.end());
        const QString db = write_set(dir, "db.fa", database);
        const QString hits = dir.filePath("hits.tsv"), project = dir.filePath("p.alsproj");
        const ProcessResult r = run_cli(QStringList{"search", "-q", query, "-d", db, "--device", device, "--db-cache",
                                                    "off", "-o", hits, "--project", project} +
                                        scheme(mode));
        QVERIFY2(r.exit_code == 0, r.err.constData());

        std::map<std::string, std::int64_t> oracle;
        bool past = false;
        for (const Record& d : database) {
            oracle[d.id] = gotoh(set[0].residues, d.residues, local);
            past = past || oracle[d.id] > k32 || oracle[d.id] < -k32 - 1;
        }
        QVERIFY(past);
        const std::vector<QList<QByteArray>> table = rows(hits);
        QCOMPARE(table.size(), database.size());
        for (const QList<QByteArray>& f : table) {
            QVERIFY(f.size() >= 3);
            QCOMPARE(integer(f[2]), oracle.at(f[1].toStdString()));
        }
        QCOMPARE(integer(table.front()[2]), std::int64_t{2400} * kMatch);  // the copy, first

        alignscope::store::ProjectOptions options;
        options.read_only = true;
        const alignscope::store::Project p(project.toStdString(), options);
        const auto jobs = p.jobs();
        QCOMPARE(jobs.size(), std::size_t(1));
        const auto stored = p.hits(jobs[0].id, 0, 100);
        QCOMPARE(stored.rows.size(), database.size());
        for (const alignscope::store::Hit& h : stored.rows) QCOMPARE(h.score, oracle.at(h.target_id));
        const auto aligned = p.alignments(jobs[0].id, 0, 100);
        QCOMPARE(aligned.rows.size(), database.size());
        for (const alignscope::Alignment& a : aligned.rows) QCOMPARE(a.score, oracle.at(a.target_id));
    }

    void allvsall_data() { search_data(); }
    // Every pair of the set traced: the pair table's scores and normalised
    // scores, the PHYLIP distances and the project's alignments follow the
    // oracle; the copy and its source are one cluster.
    void allvsall() {
        QFETCH(QString, device);
        QFETCH(QString, mode);
        const bool local = mode == "local";
        QTemporaryDir dir;
        const std::vector<Record> set = make_set();
        const QString path = write_set(dir, "set.fa", set);
        const QString table = dir.filePath("pairs.tsv"), phylip = dir.filePath("d.phy"),
                      clusters = dir.filePath("clusters.tsv"), project = dir.filePath("p.alsproj");
        const ProcessResult r =
            run_cli(QStringList{"allvsall", path, "--device", device, "--tile", "2", "--min-score", "-1e18", "-o",
                                table, "--matrix-out", phylip, "--clusters", clusters, "--project", project} +
                    scheme(mode));
        QVERIFY2(r.exit_code == 0, r.err.constData());

        const std::size_t n = set.size();
        std::vector<std::int64_t> self(n);
        for (std::size_t k = 0; k < n; ++k) self[k] = gotoh(set[k].residues, set[k].residues, local);
        std::map<std::pair<std::string, std::string>, std::int64_t> oracle;
        std::vector<double> distance(n * n, 0.0);
        bool past = false;
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j) {
                const std::int64_t s = gotoh(set[i].residues, set[j].residues, local);
                oracle[{set[i].id, set[j].id}] = s;
                past = past || s > k32 || s < -k32 - 1;
                const std::int64_t low = std::min(self[i], self[j]);
                const double normalised = low > 0 ? double(s) / double(low) : 0.0;
                distance[i * n + j] = distance[j * n + i] = std::max(0.0, 1.0 - normalised);
            }
        QVERIFY(past);

        const std::vector<QList<QByteArray>> pairs = rows(table);
        QCOMPARE(pairs.size(), n * (n - 1) / 2);
        for (const QList<QByteArray>& f : pairs) {
            QCOMPARE(f.size(), 14);
            const std::size_t i = std::size_t(f[0].toInt() - 1), j = std::size_t(f[1].toInt() - 1);
            const std::int64_t s = oracle.at({f[2].toStdString(), f[3].toStdString()});
            QCOMPARE(integer(f[4]), s);
            const std::int64_t low = std::min(self[i], self[j]);
            QVERIFY(std::fabs(f[5].toDouble() - (low > 0 ? double(s) / double(low) : 0.0)) < 1e-4);
            QVERIFY2(f[13] != "*", f.join('\t').constData());  // traced back: --min-score below every score
        }

        // PHYLIP: n, then each record's distances (1 - normalised, at least 0).
        const QList<QByteArray> lines = slurp(phylip).split('\n');
        QCOMPARE(lines.first().toInt(), int(n));
        for (std::size_t i = 0; i < n; ++i) {
            const QList<QByteArray> f = lines[qsizetype(i + 1)].split(' ');
            QCOMPARE(f.first().toStdString(), set[i].id);
            for (std::size_t j = 0; j < n; ++j)
                QVERIFY(std::fabs(f[qsizetype(j + 1)].toDouble() - distance[i * n + j]) < 1e-5);
        }
        // Clusters at 0.9: the source and its copy (normalised 1) together.
        std::map<std::string, QByteArray> cluster;
        for (const QList<QByteArray>& f : rows(clusters)) cluster[f[1].toStdString()] = f[3];
        QCOMPARE(cluster.size(), n);
        QCOMPARE(cluster["source"], cluster["copy"]);

        alignscope::store::ProjectOptions options;
        options.read_only = true;
        const alignscope::store::Project p(project.toStdString(), options);
        const auto jobs = p.jobs();
        QCOMPARE(jobs.size(), std::size_t(1));
        const auto aligned = p.alignments(jobs[0].id, 0, 100);
        QCOMPARE(aligned.rows.size(), pairs.size());
        for (const alignscope::Alignment& a : aligned.rows) QCOMPARE(a.score, oracle.at({a.query_id, a.target_id}));
    }

    void search_under_mpirun_data() {
        QTest::addColumn<QStringList>("scoring");
        QTest::addColumn<bool>("local");
        QTest::addColumn<int>("halves");  // 2 where half-step penalties double every score
        QTest::newRow("match 1000000, global") << scheme("global") << false << 1;
        // A matrix file at its limit, doubled for half-step penalties: the
        // matrix that goes to the other ranks holds 200,000.
        QTest::newRow("file matrix 100000, gaps 100000.5")
            << QStringList{"--gap-open", "100000.5", "--gap-extend", "100000.5", "--mode", "local", "--quiet"} << true
            << 2;
    }
    // Under mpirun -np 2 the ranks get the scheme from rank 0 and send their
    // hits back: the same scores as the oracle's.
    void search_under_mpirun() {
        QFETCH(QStringList, scoring);
        QFETCH(bool, local);
        QFETCH(int, halves);
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QFAIL("mpirun is not installed: install the Debian packages openmpi-bin and libopenmpi-dev");
        QTemporaryDir dir;
        const std::vector<Record> set = make_set();
        const QString query = write_set(dir, "q.fa", {set[0]});
        const std::vector<Record> database(set.begin() + 1, set.end());
        const QString db = write_set(dir, "db.fa", database), hits = dir.filePath("hits.tsv");
        const QString matrix = dir.filePath("dna.mat");
        {
            QFile f(matrix);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("   A       C       G       T\n");
            for (const char r : std::string("ACGT")) {
                f.write(QByteArray(1, r));
                for (const char c : std::string("ACGT")) f.write(r == c ? " 100000" : " -100000");
                f.write("\n");
            }
        }
        if (halves == 2) scoring += QStringList{"--matrix", matrix};
        const ProcessResult r =
            run_program(mpirun, QStringList{"--allow-run-as-root", "--oversubscribe", "-np", "2", ALIGNSCOPE_CLI,
                                            "search", "-q", query, "-d", db, "--device", "cpu", "--threads", "1",
                                            "--db-cache", "off", "-o", hits} +
                                    scoring);
        QVERIFY2(r.exit_code == 0, r.err.constData());
        // In scaled units: a half-step scheme scores 2 x 100,000 and gaps 200,001.
        const alignscope::test::Gotoh64 oracle = halves == 2
                                                     ? alignscope::test::Gotoh64{200000, -200000, 200001, 200001}
                                                     : alignscope::test::Gotoh64{kMatch, kMismatch, kOpen, kExtend};
        const std::vector<QList<QByteArray>> table = rows(hits);
        QCOMPARE(table.size(), database.size());
        for (const QList<QByteArray>& f : table) {
            QVERIFY(f.size() >= 3);
            const auto d = std::find_if(database.begin(), database.end(),
                                        [&](const Record& x) { return x.id == f[1].toStdString(); });
            QVERIFY(d != database.end());
            QCOMPARE(f[2].toDouble() * halves, double(oracle.score(set[0].residues, d->residues, local)));
        }
    }

    // Under mpirun -np 3 the tiles' results (records with 64-bit scores) come
    // to rank 0 as messages: the pair table still holds the oracle's scores.
    void allvsall_under_mpirun() {
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QFAIL("mpirun is not installed: install the Debian packages openmpi-bin and libopenmpi-dev");
        QTemporaryDir dir;
        const std::vector<Record> set = make_set();
        const QString path = write_set(dir, "set.fa", set), table = dir.filePath("pairs.tsv");
        const ProcessResult r = run_program(mpirun, QStringList{"--allow-run-as-root", "--oversubscribe", "-np", "3",
                                                                ALIGNSCOPE_CLI, "allvsall", path, "--device", "cpu",
                                                                "--threads", "1", "--tile", "2", "-o", table} +
                                                        scheme("global"));
        QVERIFY2(r.exit_code == 0, r.err.constData());
        std::map<std::string, std::string> residues;
        for (const Record& x : set) residues[x.id] = x.residues;
        const std::vector<QList<QByteArray>> pairs = rows(table);
        QCOMPARE(pairs.size(), set.size() * (set.size() - 1) / 2);
        bool past = false;
        for (const QList<QByteArray>& f : pairs) {
            QCOMPARE(f.size(), 14);
            const std::int64_t s = gotoh(residues.at(f[2].toStdString()), residues.at(f[3].toStdString()), false);
            QCOMPARE(integer(f[4]), s);
            past = past || s > k32 || s < -k32 - 1;
        }
        QVERIFY(past);
    }
};

QTEST_GUILESS_MAIN(TestScoresPast32Bits)
#include "test_scores_past_32_bits.moc"
