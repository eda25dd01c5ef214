// Profile search against HMMER's hmmsearch on the same model and targets:
// the four pipeline counts must be identical (HMMER's filter arithmetic is
// reproduced, saturation and rounding included), the reported sequences the
// same, their bit scores within 0.05 bits and E-values within 1 % (of what
// hmmsearch prints, allowing for its two significant digits), and domain
// envelopes, alignment and model coordinates identical for >= 99 % of domains.
#include "hmmsearch_oracle.hpp"
#include "sanitizers.hpp"

#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/filter_verify.hpp>
#include <alignscope/profile/filters.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/msv_striped.hpp>
#include <alignscope/profile/plan7_profile.hpp>
#include <alignscope/profile/profile_search.hpp>

#include <QtTest>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::test;

namespace {

struct Expected {
    QVector<qulonglong> counts;
    QMap<QString, QStringList> targets;  // name -> tblout fields
    QVector<QStringList> domains;        // domtblout fields, in file order
};

Expected run_hmmsearch(const QTemporaryDir& dir, const QString& model, const QString& db, const QStringList& extra) {
    Expected e;
    const QString tbl = dir.filePath(QStringLiteral("ref.tbl")), dom = dir.filePath(QStringLiteral("ref.dom"));
    QStringList args{QStringLiteral("--cpu"),       QStringLiteral("1"),
                     QStringLiteral("--seed"),      QStringLiteral("42"),
                     QStringLiteral("--tblout"),    tbl,
                     QStringLiteral("--domtblout"), dom};
    args << extra << model << db;
    const ProcessResult r = run_program(QStringLiteral("hmmsearch"), args);
    if (r.exit_code != 0) qWarning("hmmsearch failed: %s", r.err.constData());
    e.counts = passed_counts(r.out);
    for (const QString& row : table_rows(tbl)) {
        const QStringList f = row.split(' ', Qt::SkipEmptyParts);
        e.targets[f[0]] = f;
    }
    for (const QString& row : table_rows(dom)) e.domains.push_back(row.split(' ', Qt::SkipEmptyParts));
    return e;
}

// Our value against hmmsearch's printed one: within `tolerance`, plus half a
// unit of the printed precision.
bool score_agrees(double ours, const QString& printed) {
    return std::fabs(ours - printed.toDouble()) <= 0.05 + 0.05 + 1e-9;
}
bool evalue_agrees(double ours, const QString& printed) {
    const double theirs = printed.toDouble();
    if (theirs == 0) return ours < 1e-300;
    // %.2g keeps two significant digits: half a unit of the second digit.
    const double half_unit = 0.5 * std::pow(10.0, std::floor(std::log10(theirs)) - 1);
    return std::fabs(ours - theirs) <= 0.01 * theirs + half_unit;
}

// CRC-32 (the reflected 0xEDB88320 polynomial, as zlib's), bit by bit: the
// checksum a target cache ends with, for a cache this test writes itself.
std::uint32_t crc32_bitwise(const QByteArray& bytes) {
    std::uint32_t crc = 0xFFFFFFFFu;
    for (char ch : bytes) {
        crc ^= static_cast<unsigned char>(ch);
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

// A little-endian unsigned integer of `size` bytes at `at`.
std::uint64_t little_endian(const QByteArray& bytes, qsizetype at, int size) {
    std::uint64_t v = 0;
    for (int k = size - 1; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(bytes[at + k]);
    return v;
}

}  // namespace

class TestProfileSearch : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("Pkinase");
        // 5000 records; 1500 under the sanitizers (a minute there otherwise,
        // the longest suite of CI's ASan run): hmmsearch reads the same slice.
        slice_ = database_slice(dir_, QStringLiteral("slice.fa"), test::kSanitized ? 1500 : 5000);
        small_ = database_slice(dir_, QStringLiteral("small.fa"), 300);
        // Low-complexity targets that a long coiled-coil model scores highly
        // enough for HMMER's Backward to take scale factors of its own.
        runs_ = dir_.filePath(QStringLiteral("runs.fa"));
        QFile runs(runs_);
        QVERIFY(runs.open(QIODevice::WriteOnly));
        // Under the sanitizers, runs of 1,500 only and two mixed targets (E's
        // and K's still switch there): the row took about 30 s of ASan's run.
        const std::vector<int> lengths =
            test::kSanitized ? std::vector<int>{1500} : std::vector<int>{1000, 1200, 1500, 3000};
        for (const char residue : {'E', 'K', 'Q'})
            for (const int length : lengths)
                runs.write(QByteArray(">run_") + residue + "_" + QByteArray::number(length) + "\n" +
                           QByteArray(length, residue) + "\n");
        // And runs between stretches of UniProt sequence (the slice's), where
        // the regions' edges depend on the corrected posteriors.
        SequenceReader flanks(slice_.toStdString());
        Sequence flank;
        for (int t = 0; t < (test::kSanitized ? 2 : 6); ++t) {
            QByteArray residues;
            for (int piece = 0; piece < 3 && flanks.next(flank); ++piece)
                residues +=
                    QByteArray::fromStdString(flank.residues.substr(0, 300)) + QByteArray(1200 + 300 * t, "EKQ"[t % 3]);
            runs.write(QByteArray(">mixed_") + QByteArray::number(t) + "\n" + residues + "\n");
        }
        // The tutorial's 330 kb human chromosome piece in 20 kb windows (hmmsearch
        // takes targets of at most 100,000 residues).
        dna_ = dir_.filePath(QStringLiteral("dna_windows.fa"));
        SequenceReader reader((kTutorial + "/dna_target.fa").toStdString());
        Sequence s;
        QFile out(dna_);
        QVERIFY(out.open(QIODevice::WriteOnly));
        while (reader.next(s))
            for (std::size_t at = 0; at < s.residues.size(); at += 20000)
                out.write(QByteArray::fromStdString(">" + s.id + "_" + std::to_string(at + 1) + "\n" +
                                                    s.residues.substr(at, 20000) + "\n"));
    }

    void same_as_hmmsearch_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("database");
        QTest::addColumn<QStringList>("options");
        QTest::newRow("globins4, UniProt slice") << "globins4"
                                                 << "slice" << QStringList{};
        QTest::newRow("fn3, UniProt slice") << "fn3"
                                            << "slice" << QStringList{};
        QTest::newRow("Pkinase, UniProt slice") << "Pkinase"
                                                << "slice" << QStringList{};
        QTest::newRow("Pkinase --nobias") << "Pkinase"
                                          << "slice" << QStringList{QStringLiteral("--nobias")};
        QTest::newRow("fn3 --F1 0.05 --F2 0.01 --F3 0.001")
            << "fn3"
            << "slice" << QStringList{"--F1", "0.05", "--F2", "0.01", "--F3", "0.001"};
        QTest::newRow("fn3 --max, 300 UniProt") << "fn3"
                                                << "small" << QStringList{QStringLiteral("--max")};
        QTest::newRow("MADE1 (DNA), tutorial chromosome piece") << "MADE1"
                                                                << "dna" << QStringList{};
        // A large model (M=1151, HMMER3/e, gzip) with many clustered multi-domain
        // regions: exact only when Forward/Backward do their float work in
        // HMMER's order.
        QTest::newRow("SMC_N, UniProt slice") << "../testsuite/SMC_N.hmm.gz"
                                              << "slice" << QStringList{};
        // Runs of E, K and Q of up to 3,000 residues: the Backward overflows
        // unless it switches to its own scale factors where hmmsearch does,
        // and the posteriors must follow.
        QTest::newRow("SMC_N, E/K/Q runs") << "../testsuite/SMC_N.hmm.gz"
                                           << "runs" << QStringList{"--max", "-E", "1e9", "--domE", "1e9"};
    }

    void same_as_hmmsearch() {
        QFETCH(QString, model);
        QFETCH(QString, database);
        QFETCH(QStringList, options);
        const QString model_path = model.endsWith(".gz") ? kTutorial + "/" + model : kTutorial + "/" + model + ".hmm";
        const QString db = database == "slice"   ? slice_
                           : database == "small" ? small_
                           : database == "runs"  ? runs_
                                                 : dna_;
        QTemporaryDir dir;
        const Expected expected = run_hmmsearch(dir, model_path, db, options);
        QCOMPARE(expected.counts.size(), 4);

        const auto models = read_hmm_file(model_path.toStdString());
        const ProfileTargets targets = read_profile_targets(db.toStdString(), models[0].alphabet);
        PipelineSettings settings;
        settings.threads = 2;
        for (int i = 0; i < options.size(); ++i) {
            if (options[i] == "--max") settings.set_max();
            if (options[i] == "--nobias") settings.bias_filter = false;
            if (options[i] == "--F1") settings.F1 = options[i + 1].toDouble();
            if (options[i] == "--F2") settings.F2 = options[i + 1].toDouble();
            if (options[i] == "--F3") settings.F3 = options[i + 1].toDouble();
            if (options[i] == "-E") settings.report_E = options[i + 1].toDouble();
            if (options[i] == "--domE") settings.domain_E = options[i + 1].toDouble();
        }
        auto scanner = make_cpu_profile_scanner_registry()->create("cpu", 2);
        JobContext context;
        scanner->load(targets, context);
        const ModelSearch ours = search_profile(models[0], targets, *scanner, settings, context);

        const QVector<qulonglong> counts{ours.counts.past_msv, ours.counts.past_bias, ours.counts.past_viterbi,
                                         ours.counts.past_forward};
        QCOMPARE(counts, expected.counts);

        int reported = 0, exact = 0;
        for (const TargetHit& h : ours.hits) {
            if (!h.reported) continue;
            ++reported;
            const QString name = QString::fromStdString(h.name);
            QVERIFY2(expected.targets.contains(name), qPrintable("only we report " + name));
            const QStringList& f = expected.targets[name];
            const double E = std::exp(h.lnP) * ours.Z;
            QVERIFY2(score_agrees(h.score, f[5]),
                     qPrintable(QStringLiteral("%1: score %2, hmmsearch %3").arg(name).arg(h.score).arg(f[5])));
            QVERIFY2(evalue_agrees(E, f[4]),
                     qPrintable(QStringLiteral("%1: E %2, hmmsearch %3").arg(name).arg(E).arg(f[4])));
            exact += QString::asprintf("%.1f", static_cast<double>(h.score)) == f[5];
            // The domain stage's own counts (tblout's exp, reg, clu, ov, env):
            // what the posteriors of the parser matrices decided.
            const QStringList stage{QString::asprintf("%.1f", static_cast<double>(h.expected_domains)),
                                    QString::number(h.regions), QString::number(h.clustered),
                                    QString::number(h.overlaps), QString::number(h.envelopes)};
            QVERIFY2(stage == f.mid(10, 5), qPrintable(name + ": exp/reg/clu/ov/env " + stage.join(' ') +
                                                       ", hmmsearch " + f.mid(10, 5).join(' ')));
        }
        QCOMPARE(reported, static_cast<int>(expected.targets.size()));
        QVERIFY(exact >= 0.99 * reported);

        // Reported domains in domtblout order: target order, then position.
        QVector<QStringList> domains;
        for (const TargetHit& h : ours.hits) {
            if (!h.reported) continue;
            for (const DomainHit& d : h.domains) {
                if (!d.reported) continue;
                domains.push_back({QString::fromStdString(h.name), QString::number(d.alignment.hmm_from),
                                   QString::number(d.alignment.hmm_to), QString::number(d.alignment.target_from),
                                   QString::number(d.alignment.target_to), QString::number(d.env_from),
                                   QString::number(d.env_to), QString::asprintf("%.1f", static_cast<double>(d.score))});
            }
        }
        QCOMPARE(domains.size(), expected.domains.size());
        int same_coordinates = 0;
        for (int i = 0; i < domains.size(); ++i) {
            const QStringList& f = expected.domains[i];
            QCOMPARE(domains[i][0], f[0]);
            const QStringList theirs{f[0], f[15], f[16], f[17], f[18], f[19], f[20]};
            same_coordinates += domains[i].mid(0, 7) == theirs;
            QVERIFY2(score_agrees(domains[i][7].toDouble(), f[13]),
                     qPrintable(domains[i].join(' ') + " vs " + f.join(' ')));
        }
        QVERIFY2(same_coordinates >= 0.99 * domains.size(),
                 qPrintable(QStringLiteral("%1 of %2 domains with hmmsearch's coordinates")
                                .arg(same_coordinates)
                                .arg(domains.size())));
        qInfo("%s: counts %llu/%llu/%llu/%llu, %d sequences, %d/%lld domains with identical coordinates",
              qPrintable(model), counts[0], counts[1], counts[2], counts[3], reported, same_coordinates,
              static_cast<long long>(domains.size()));
    }

    // The striped SSV/MSV of the "cpu" scanner against the scalar reference
    // ("cpu-ref"), MSV and the Viterbi filter: every real target of the slice and random targets over
    // every residue code (degenerate ones and '*' included), plus targets that
    // overflow the byte range (the model's own consensus, repeated).
    void striped_filters_equal_scalar() {
        const auto registry = make_cpu_profile_scanner_registry();
        JobContext context;
        for (const char* name : {"globins4", "fn3", "Pkinase", "MADE1"}) {
            const auto models = read_hmm_file((kTutorial + "/" + name + ".hmm").toStdString());
            const ProfileHmm& hmm = models[0];
            ProfileTargets targets = hmm.alphabet == ResidueAlphabet::Amino
                                         ? read_profile_targets(slice_.toStdString(), hmm.alphabet)
                                         : read_profile_targets(dna_.toStdString(), hmm.alphabet);
            const ResidueCode& code = ResidueCode::of(hmm.alphabet);
            const std::size_t real = targets.size();
            std::uint32_t state = 12345;
            auto next = [&state] {
                state = state * 1664525u + 1013904223u;
                return state >> 8;
            };
            std::vector<int> codes;
            for (int x = 0; x < code.all_codes(); ++x)
                if (x != code.gap() && x != code.missing()) codes.push_back(x);
            for (int t = 0; t < 300; ++t) {
                const int L = 1 + static_cast<int>(next() % 1500);
                for (int i = 0; i < L; ++i)
                    targets.residues.push_back(static_cast<std::uint8_t>(codes[next() % codes.size()]));
                targets.offsets.push_back(targets.residues.size());
                targets.names.push_back("random" + std::to_string(t));
                targets.descriptions.emplace_back();
            }
            std::string consensus;
            for (int k = 1; k <= hmm.length; ++k) consensus += hmm.consensus[static_cast<std::size_t>(k)];
            std::vector<std::uint8_t> digital;
            code.digitise(consensus + consensus + consensus, digital);
            targets.residues.insert(targets.residues.end(), digital.begin(), digital.end());
            targets.offsets.push_back(targets.residues.size());
            targets.names.push_back("consensus x3");
            targets.descriptions.emplace_back();

            NullModel null_model(hmm.alphabet);
            const MsvProfile msv = make_msv_profile(configure_local(hmm, null_model));
            std::vector<float> striped(targets.size()), scalar(targets.size());
            auto cpu = registry->create("cpu", 2), reference = registry->create("cpu-ref", 2);
            cpu->load(targets, context);
            reference->load(targets, context);
            cpu->msv(msv, striped, context);
            reference->msv(msv, scalar, context);
            int differ = 0;
            for (std::size_t t = 0; t < targets.size(); ++t)
                differ += std::memcmp(&striped[t], &scalar[t], sizeof(float)) != 0;
            QVERIFY2(differ == 0,
                     qPrintable(
                         QStringLiteral("%1: %2 of %3 MSV scores differ").arg(name).arg(differ).arg(targets.size())));
            QVERIFY(std::isinf(scalar.back()));  // the repeated consensus overflows the byte range

            // The Viterbi filter ("cpu" striped SSE2 words): every made-up
            // target and every fourth real one (the scalar reference is slow).
            const ViterbiFilterProfile vit = make_viterbi_filter_profile(configure_local(hmm, null_model));
            std::vector<std::uint32_t> some;
            for (std::uint32_t t = 0; t < targets.size(); ++t)
                if (t >= real || t % 4 == 0) some.push_back(t);
            std::vector<float> vit_striped(some.size()), vit_scalar(some.size());
            cpu->viterbi(vit, some, vit_striped, context);
            reference->viterbi(vit, some, vit_scalar, context);
            differ = 0;
            for (std::size_t i = 0; i < some.size(); ++i)
                differ += std::memcmp(&vit_striped[i], &vit_scalar[i], sizeof(float)) != 0;
            QVERIFY2(differ == 0, qPrintable(QStringLiteral("%1: %2 of %3 Viterbi filter scores differ")
                                                 .arg(name)
                                                 .arg(differ)
                                                 .arg(some.size())));
        }
    }

    // Every vector width this CPU has (SSE2 MSV; SSE4.1 and AVX2 SSV first)
    // against the scalar MSV, on models from M = 1 to 803 (SSV's row in
    // registers and in memory), real targets, random ones of 1 to 100,000
    // residues (the longest leave SSV's signed range), the consensus (a strong
    // hit) and it repeated (overflow). SSV must decide most targets and the
    // full MSV must still score some.
    void msv_every_simd_level_equals_scalar() {
        const QString suite = kTutorial + "/../testsuite/";
        const QStringList models{suite + "M1.hmm",         suite + "20aa.hmm.gz",      kTutorial + "/fn3.hmm",
                                 kTutorial + "/MADE1.hmm", kTutorial + "/Pkinase.hmm", suite + "LuxC.hmm.gz",
                                 suite + "Patched.hmm.gz"};
        std::map<SimdLevel, std::pair<int, int>> routes;  // level -> (decided by SSV, full MSV)
        for (const QString& path : models) {
            const ProfileHmm hmm = read_hmm_file(path.toStdString()).front();
            const bool amino = hmm.alphabet == ResidueAlphabet::Amino;
            ProfileTargets targets = read_profile_targets((amino ? small_ : dna_).toStdString(), hmm.alphabet);
            const ResidueCode& code = ResidueCode::of(hmm.alphabet);
            std::uint32_t state = 777;
            auto next = [&state] {
                state = state * 1664525u + 1013904223u;
                return state >> 8;
            };
            auto add = [&targets](const std::vector<std::uint8_t>& codes) {
                targets.residues.insert(targets.residues.end(), codes.begin(), codes.end());
                targets.offsets.push_back(targets.residues.size());
                targets.names.push_back("made-up");
                targets.descriptions.emplace_back();
            };
            for (int t = 0; t < 40; ++t) {
                const int L = t < 3    ? 30000 + static_cast<int>(next() % 70000)
                              : t < 15 ? 1 + static_cast<int>(next() % 6)
                                       : 1 + static_cast<int>(next() % 1500);
                std::vector<std::uint8_t> codes(static_cast<std::size_t>(L));
                for (auto& c : codes) c = static_cast<std::uint8_t>(next() % static_cast<unsigned>(code.canonical()));
                add(codes);
            }
            std::string consensus;
            for (int k = 1; k <= hmm.length; ++k) consensus += hmm.consensus[static_cast<std::size_t>(k)];
            for (const std::string& text : {consensus, consensus + consensus + consensus}) {
                std::vector<std::uint8_t> digital;
                code.digitise(text, digital);
                add(digital);
            }
            NullModel null_model(hmm.alphabet);
            const MsvProfile msv = make_msv_profile(configure_local(hmm, null_model));
            std::vector<float> scalar(targets.size());
            for (std::size_t t = 0; t < targets.size(); ++t)
                scalar[t] = msv_filter(msv, targets.codes(t), targets.length(t));
            for (SimdLevel level : supported_simd_levels()) {
                const StripedMsvProfile striped = make_striped_msv_profile(msv, level);
                int differ = 0;
                for (std::size_t t = 0; t < targets.size(); ++t) {
                    bool by_ssv = false;
                    const float score = msv_filter_striped(striped, targets.codes(t), targets.length(t), &by_ssv);
                    differ += std::memcmp(&score, &scalar[t], sizeof(float)) != 0;
                    (by_ssv ? routes[level].first : routes[level].second) += 1;
                }
                QVERIFY2(differ == 0, qPrintable(QStringLiteral("%1, %2: %3 of %4 MSV scores differ")
                                                     .arg(path)
                                                     .arg(QString::fromStdString(std::string(to_string(level))))
                                                     .arg(differ)
                                                     .arg(targets.size())));
            }
        }
        for (const auto& [level, count] : routes) {
            qInfo("%s: %d targets decided by SSV, %d by the full MSV", std::string(to_string(level)).c_str(),
                  count.first, count.second);
            if (level == SimdLevel::Sse41 || level == SimdLevel::Avx2) {
                QVERIFY(count.first > 10 * count.second);
                QVERIFY(count.second > 0);
            }
        }
    }

    // The targets' cache: built, then loaded with the targets a parse gives;
    // a flipped byte and a truncated file are damage, a changed FASTA makes it
    // stale: each is said and the cache rebuilt from the FASTA.
    void target_cache_built_loaded_and_rebuilt() {
        QTemporaryDir dir;
        const std::string fasta = dir.filePath(QStringLiteral("db.fa")).toStdString();
        QVERIFY(QFile::copy(small_, QString::fromStdString(fasta)));
        TargetCacheOptions options;
        options.enabled = true;
        options.directory = dir.filePath(QStringLiteral("cache")).toStdString();
        ProfileTargets parsed = read_profile_targets(fasta, ResidueAlphabet::Amino);
        auto same = [&parsed](const ProfileTargets& t) {
            return t.names == parsed.names && t.descriptions == parsed.descriptions && t.residues == parsed.residues &&
                   t.offsets == parsed.offsets && t.alphabet == parsed.alphabet && t.path == parsed.path;
        };
        auto load = [&](CacheOutcome expected, const char* reason) {
            const ProfileTargetsLoad l = load_profile_targets(fasta, ResidueAlphabet::Amino, options);
            QVERIFY2(l.outcome == expected,
                     qPrintable(QString::fromStdString(std::string(to_string(l.outcome)) + ": " + l.reason)));
            QVERIFY2(l.reason.find(reason) != std::string::npos, l.reason.c_str());
            QVERIFY(same(l.targets));
        };
        const std::string path = profile_targets_cache_path(fasta, ResidueAlphabet::Amino, options);
        QVERIFY(path != profile_targets_cache_path(fasta, ResidueAlphabet::Dna, options));
        load(CacheOutcome::Built, "");
        QVERIFY(QFile::exists(QString::fromStdString(path)));
        load(CacheOutcome::Loaded, "");
        QFile cache(QString::fromStdString(path));
        QVERIFY(cache.open(QIODevice::ReadWrite));
        QVERIFY(cache.seek(cache.size() / 2));
        char byte = 0;
        QVERIFY(cache.getChar(&byte));
        QVERIFY(cache.seek(cache.size() / 2));
        QVERIFY(cache.putChar(static_cast<char>(byte ^ 0x10)));
        cache.close();
        load(CacheOutcome::Rebuilt, "damaged: its contents do not match their checksum");
        load(CacheOutcome::Loaded, "");
        QVERIFY(cache.resize(cache.size() - 9));
        load(CacheOutcome::Rebuilt, "damaged");
        QFile db(QString::fromStdString(fasta));
        QVERIFY(db.open(QIODevice::Append));
        db.write(">added one more\nMKVLAAGIW\n");
        db.close();
        parsed = read_profile_targets(fasta, ResidueAlphabet::Amino);
        load(CacheOutcome::Rebuilt, "stale: the FASTA is now");
        load(CacheOutcome::Loaded, "");
        QCOMPARE(parsed.names.back(), std::string("added"));
        QVERIFY_THROWS_EXCEPTION(Error, load_profile_targets("-", ResidueAlphabet::Amino, options));
    }

    // Descriptions keep the trailing blanks and tabs of their headers (hmmsearch
    // prints them), through the cache too. A cache of format version 1 held
    // them trimmed: one made here (a version 2 cache with its descriptions
    // trimmed, its sizes and checksum redone) is stale and rebuilt.
    void target_cache_of_trimmed_descriptions_rebuilt() {
        QTemporaryDir dir;
        const std::string fasta = dir.filePath(QStringLiteral("tricky.fa")).toStdString();
        {
            QFile f(QString::fromStdString(fasta));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(">one  blank at the end \nMKVLAAGIW\n>tab\ta\tb\t\t\r\nACDEFGHIK\r\n>none   \nLMNPQRST\n");
        }
        const std::vector<std::string> expected{"blank at the end ", "a\tb\t\t", ""};
        QCOMPARE(read_profile_targets(fasta, ResidueAlphabet::Amino).descriptions, expected);
        TargetCacheOptions options;
        options.enabled = true;
        options.directory = dir.filePath(QStringLiteral("cache")).toStdString();
        QCOMPARE(load_profile_targets(fasta, ResidueAlphabet::Amino, options).outcome, CacheOutcome::Built);
        const ProfileTargetsLoad cached = load_profile_targets(fasta, ResidueAlphabet::Amino, options);
        QCOMPARE(cached.outcome, CacheOutcome::Loaded);
        QCOMPARE(cached.targets.descriptions, expected);

        // Header: u32 version at 8; u64 targets, residue bytes, name bytes at 40.
        QFile cache(QString::fromStdString(cached.cache_path));
        QVERIFY(cache.open(QIODevice::ReadOnly));
        QByteArray bytes = cache.readAll();
        cache.close();
        QCOMPARE(little_endian(bytes, 8, 4), std::uint64_t{2});
        const auto names_at =
            static_cast<qsizetype>(64 + 8 * (little_endian(bytes, 40, 8) + 1) + little_endian(bytes, 48, 8));
        QList<QByteArray> names = bytes.mid(names_at, static_cast<qsizetype>(little_endian(bytes, 56, 8))).split('\0');
        names.removeLast();  // after the last NUL
        QCOMPARE(names.size(), 6);
        for (qsizetype k = 1; k < names.size(); k += 2)
            while (names[k].endsWith(' ') || names[k].endsWith('\t')) names[k].chop(1);
        QByteArray old = bytes.left(names_at) + names.join('\0') + QByteArray(1, '\0');
        const std::uint64_t name_bytes = static_cast<std::uint64_t>(old.size() - names_at);
        old[8] = 1;
        for (int k = 0; k < 8; ++k) old[56 + k] = static_cast<char>(name_bytes >> (8 * k));
        const std::uint32_t crc = crc32_bitwise(old);
        for (int k = 0; k < 4; ++k) old.append(static_cast<char>(crc >> (8 * k)));
        old.append("END1");
        QVERIFY(old.size() < bytes.size());
        QVERIFY(cache.open(QIODevice::WriteOnly | QIODevice::Truncate));
        QCOMPARE(cache.write(old), old.size());
        cache.close();

        const ProfileTargetsLoad rebuilt = load_profile_targets(fasta, ResidueAlphabet::Amino, options);
        QVERIFY2(rebuilt.outcome == CacheOutcome::Rebuilt, rebuilt.reason.c_str());
        QVERIFY2(rebuilt.reason.find("stale: cache format version 1, this build writes 2") != std::string::npos,
                 rebuilt.reason.c_str());
        QCOMPARE(rebuilt.targets.descriptions, expected);
        const ProfileTargetsLoad again = load_profile_targets(fasta, ResidueAlphabet::Amino, options);
        QCOMPARE(again.outcome, CacheOutcome::Loaded);
        QCOMPARE(again.targets.descriptions, expected);
    }

    // check_profile_filters (what the GPU self-test and verify run) on the
    // striped CPU scanner and made-up targets: it finds no difference there,
    // and finds the one planted by a scanner that is off by a byte unit.
    void filter_check_on_made_up_targets() {
        const ProfileHmm hmm = read_hmm_file((kTutorial + "/fn3.hmm").toStdString()).front();
        const ProfileTargets targets = made_up_profile_targets(hmm, 60, 11);
        QVERIFY(targets.size() > 60 + 6 + 2 * 20);
        auto scanner = make_cpu_profile_scanner_registry()->create("cpu", 2);
        JobContext context;
        const FilterCheck check = check_profile_filters(*scanner, hmm, targets, "made-up", 2, context);
        QCOMPARE(check.compared, 2 * targets.size());
        QVERIFY2(check.differing == 0, check.mismatches.empty() ? "" : check.mismatches.front().c_str());
        QVERIFY(check.msv_overflows > 0);  // the repeated consensus

        struct OffByOne final : ProfileFilterScanner {
            std::unique_ptr<ProfileFilterScanner> inner;
            DeviceInfo info() const override { return inner->info(); }
            void load(const ProfileTargets& t, JobContext& c) override { inner->load(t, c); }
            void msv(const MsvProfile& m, std::span<float> s, JobContext& c) override {
                inner->msv(m, s, c);
                s[3] += 1.0f / m.scale;
            }
            void viterbi(const ViterbiFilterProfile& m, std::span<const std::uint32_t> t, std::span<float> s,
                         JobContext& c) override {
                inner->viterbi(m, t, s, c);
            }
        } wrong;
        wrong.inner = make_cpu_profile_scanner_registry()->create("cpu", 2);
        const FilterCheck planted = check_profile_filters(wrong, hmm, targets, "made-up", 2, context);
        QCOMPARE(planted.differing, std::size_t{1});
        QCOMPARE(planted.mismatches.size(), std::size_t{1});
    }

    // The filters are a batch interface: scores of a subset equal those of the whole.
    void viterbi_batch_subset() {
        const auto models = read_hmm_file((kTutorial + "/fn3.hmm").toStdString());
        const ProfileTargets targets = read_profile_targets(small_.toStdString(), models[0].alphabet);
        NullModel null_model(models[0].alphabet);
        const Plan7Profile gm = configure_local(models[0], null_model);
        const ViterbiFilterProfile vit = make_viterbi_filter_profile(gm);
        auto scanner = make_cpu_profile_scanner_registry()->create("cpu", 2);
        JobContext context;
        scanner->load(targets, context);
        std::vector<std::uint32_t> all(targets.size()), odd;
        for (std::uint32_t t = 0; t < all.size(); ++t) {
            all[t] = t;
            if (t % 2) odd.push_back(t);
        }
        std::vector<float> a(all.size()), b(odd.size());
        scanner->viterbi(vit, all, a, context);
        scanner->viterbi(vit, odd, b, context);
        for (std::size_t i = 0; i < odd.size(); ++i) QCOMPARE(b[i], a[odd[i]]);
    }

private:
    QTemporaryDir dir_;
    QString slice_, small_, dna_, runs_;
};

QTEST_GUILESS_MAIN(TestProfileSearch)
#include "test_profile_search.moc"
