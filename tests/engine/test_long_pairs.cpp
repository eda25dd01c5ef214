// The seeded long-pair generator (bench/long_pairs.hpp): reproducible from the
// seed, exact lengths, the lambda genome read from Debian's bowtie2-examples,
// mutation rates as asked (measured by direct comparison), rearrangements that
// keep the base-pair composition, generated relatives that align as relatives
// and planted regions that a local alignment finds (the CPU reference as the
// judge); and the length parser of --lengths/--max-length.
#include "oracles.hpp"

#include <alignscope/align/reference_aligner.hpp>
#include <alignscope/bench/long_pairs.hpp>
#include <alignscope/error.hpp>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <string>

using namespace alignscope;

namespace {

std::int64_t count_of(const std::string& s, char c) { return std::count(s.begin(), s.end(), c); }

}  // namespace

class TestLongPairs : public QObject {
    Q_OBJECT

private slots:
    void lambda_genome_is_read() {
        ALIGNSCOPE_REQUIRE_ORACLE(QFile::exists(kLambdaGenomePath),
                                  "bowtie2-examples is not installed (Debian package)");
        const SeedGenome g = load_seed_genome();
        QVERIFY(g.real);
        // NC_001416.1, Enterobacteria phage lambda: 48,502 bp.
        QCOMPARE(static_cast<qint64>(g.residues.size()), qint64(48502));
        QVERIFY(g.residues.find_first_not_of("ACGTN") == std::string::npos);
        QVERIFY(g.residues.rfind("GGGCGGCGACCT", 0) == 0);  // the genome's first bases
        QVERIFY2(g.source.find("lambda") != std::string::npos, g.source.c_str());
    }

    void a_given_file_that_is_not_dna_is_refused() {
        QTemporaryDir dir;
        const QString path = dir.filePath("protein.fa");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(">p\nMKVLWEEPQRST\n");
        f.close();
        QVERIFY_THROWS_EXCEPTION(Error, load_seed_genome(path.toStdString()));
        QVERIFY_THROWS_EXCEPTION(Error, load_seed_genome(dir.filePath("missing.fa").toStdString()));
    }

    void same_seed_same_pair_and_exact_lengths() {
        const SeedGenome g = load_seed_genome();
        for (auto [m, n] :
             {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 300}, {5000, 5200}, {60000, 120000}, {100, 50000}}) {
            const LongPair a = generate_long_pair(42, g.residues, m, n);
            const LongPair b = generate_long_pair(42, g.residues, m, n);
            const LongPair c = generate_long_pair(43, g.residues, m, n);
            QCOMPARE(static_cast<std::int64_t>(a.query.size()), m);
            QCOMPARE(static_cast<std::int64_t>(a.target.size()), n);
            QVERIFY(a.query == b.query && a.target == b.target);
            if (m > 100) QVERIFY(a.query != c.query);
            QVERIFY(a.query.find_first_not_of("ACGTN") == std::string::npos);
            for (AlphabetKind k : {AlphabetKind::Dna, AlphabetKind::Protein}) {
                const LongPair p = planted_pair(9, k, m, n);
                QCOMPARE(static_cast<std::int64_t>(p.query.size()), m);
                QCOMPARE(static_cast<std::int64_t>(p.target.size()), n);
                QVERIFY(p.query == planted_pair(9, k, m, n).query);
            }
        }
    }

    void substitution_rate_is_what_was_asked() {
        SeededRandom random(5);
        const std::string ancestor = random_residues(random, AlphabetKind::Dna, 200000);
        Evolution e;
        e.substitution_rate = 0.1;
        e.short_indel_rate = e.long_indel_rate = e.rearrangement_rate = 0;
        EvolutionCounts counts;
        const std::string child = evolve(random, ancestor, e, &counts);
        QCOMPARE(child.size(), ancestor.size());
        std::int64_t differ = 0;
        for (std::size_t k = 0; k < child.size(); ++k) differ += child[k] != ancestor[k];
        QCOMPARE(differ, counts.substitutions);  // every substitution changes the base
        QVERIFY2(differ > 19000 && differ < 21000, qPrintable(QString::number(differ)));  // 0.1 +- 5 sd
    }

    void rearrangements_keep_base_pairs() {
        const SeedGenome g = load_seed_genome();
        SeededRandom random(11);
        Evolution e;
        e.substitution_rate = e.short_indel_rate = e.long_indel_rate = 0;
        e.rearrangement_rate = 1e-4;  // about 5 on the genome
        EvolutionCounts counts;
        const std::string child = evolve(random, g.residues, e, &counts);
        QVERIFY(counts.moves + counts.inversions >= 2);
        QVERIFY(child != g.residues);
        QCOMPARE(child.size(), g.residues.size());
        // Moves keep each base, inversions swap A<->T and C<->G: the pairs' sums stay.
        QCOMPARE(count_of(child, 'A') + count_of(child, 'T'), count_of(g.residues, 'A') + count_of(g.residues, 'T'));
        QCOMPARE(count_of(child, 'C') + count_of(child, 'G'), count_of(g.residues, 'C') + count_of(g.residues, 'G'));
    }

    void indels_change_lengths() {
        SeededRandom random(3);
        const std::string ancestor = random_residues(random, AlphabetKind::Dna, 100000);
        Evolution e;
        e.substitution_rate = 0;
        e.rearrangement_rate = 0;
        e.short_indel_rate = 0.01;
        e.long_indel_rate = 0.0001;
        EvolutionCounts counts;
        const std::string child = evolve(random, ancestor, e, &counts);
        QVERIFY(counts.short_indels > 800 && counts.short_indels < 1200);
        QVERIFY(counts.long_indels >= 3);
        QVERIFY(child != ancestor);
    }

    // The reference aligner judges: generated relatives align with high
    // identity, planted regions give a local score far above unrelated pairs.
    void pairs_align_as_intended() {
        const SeedGenome g = load_seed_genome();
        const ScoringScheme dna = ScoringScheme::create(SubstitutionMatrix::builtin("EDNAFULL"), 10, 0.5);
        AlignOptions global;
        const LongPair relatives = generate_long_pair(7, g.residues, 3000, 3000);
        const Alignment a = align_reference(relatives.query, relatives.target, dna, global);
        QVERIFY2(a.identity() > 0.8, qPrintable(QString::number(a.identity())));

        // BLASTN-like penalties: unrelated DNA scores logarithmically in the lengths
        // (EDNAFULL's 10/0.5 is cheap enough that it scores linearly).
        const ScoringScheme blastn = ScoringScheme::create(SubstitutionMatrix::match_mismatch(2, -3), 5, 2);
        AlignOptions local;
        local.mode = AlignmentMode::Local;
        const LongPair planted = planted_pair(5, AlphabetKind::Dna, 3000, 4000, 3, 0.15);
        const LongPair unrelated = planted_pair(5, AlphabetKind::Dna, 3000, 4000, 0);
        const std::int64_t with = align_reference(planted.query, planted.target, blastn, local).score;
        const std::int64_t without = align_reference(unrelated.query, unrelated.target, blastn, local).score;
        QVERIFY2(with > 10 * without, qPrintable(QString("%1 vs %2").arg(with).arg(without)));
        // A planted region is at least 300 residues at about 85% identity.
        QVERIFY2(with > 300 * (0.85 * 2 - 0.15 * 3) - 100, qPrintable(QString::number(with)));
    }

    void lengths_parse() {
        QCOMPARE(parse_length("5000", "--lengths"), std::int64_t(5000));
        QCOMPARE(parse_length("10k", "--lengths"), std::int64_t(10000));
        QCOMPARE(parse_length("1.5M", "--lengths"), std::int64_t(1500000));
        QCOMPARE(parse_length("5M", "--lengths"), std::int64_t(5000000));
        for (const char* bad : {"", "abc", "0", "-5", "1.5", "10x", "3kk"}) {
            try {
                parse_length(bad, "--max-length");
                QFAIL(bad);
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find("--max-length") != std::string::npos, e.what());
            }
        }
        QCOMPARE(format_length(10000), std::string("10k"));
        QCOMPARE(format_length(5000000), std::string("5M"));
        QCOMPARE(format_length(48502), std::string("48502"));
    }
};

QTEST_GUILESS_MAIN(TestLongPairs)
#include "test_long_pairs.moc"
