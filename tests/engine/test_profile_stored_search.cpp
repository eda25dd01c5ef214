// The stored profile search (profile/stored_search.hpp): a real search
// (HMMER's tutorial models over real globin and sevenless sequences, the
// reported targets checked against hmmsearch's own) written and read back
// field for field; a record as the workbench's Qt writer laid it out, and one
// from an older writer with fields missing, read too; other documents refused.
#include "hmmsearch_oracle.hpp"

#include <alignscope/error.hpp>
#include <alignscope/profile/filter_scan.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/profile/profile_search.hpp>
#include <alignscope/profile/stored_search.hpp>

#include <QJsonDocument>
#include <QtTest>

#include <cctype>
#include <map>
#include <set>

using namespace alignscope;
using namespace alignscope::profile;
using namespace alignscope::test;

namespace {

// Exact equality (bit scores and log P-values must come back unchanged, not
// merely close); names the field on failure.
#define SAME(a, b) QVERIFY2((a) == (b), #a " differs")

void same_domain(const DomainHit& a, const DomainHit& b) {
    SAME(a.env_from, b.env_from);
    SAME(a.env_to, b.env_to);
    SAME(a.score, b.score);
    SAME(a.bias, b.bias);
    SAME(a.lnP, b.lnP);
    SAME(a.expected_accuracy, b.expected_accuracy);
    SAME(a.reported, b.reported);
    SAME(a.included, b.included);
    const DomainAlignment &x = a.alignment, &y = b.alignment;
    SAME(x.model, y.model);
    SAME(x.match, y.match);
    SAME(x.target, y.target);
    SAME(x.posterior, y.posterior);
    SAME(x.reference, y.reference);
    SAME(x.structure, y.structure);
    SAME(x.hmm_from, y.hmm_from);
    SAME(x.hmm_to, y.hmm_to);
    SAME(x.target_from, y.target_from);
    SAME(x.target_to, y.target_to);
}

void same_hit(const TargetHit& a, const TargetHit& b) {
    SAME(a.target, b.target);
    SAME(a.name, b.name);
    SAME(a.description, b.description);
    SAME(a.length, b.length);
    SAME(a.score, b.score);
    SAME(a.pre_score, b.pre_score);
    SAME(a.lnP, b.lnP);
    SAME(a.expected_domains, b.expected_domains);
    SAME(a.included, b.included);
    SAME(a.reported, b.reported);
    SAME(a.regions, b.regions);
    SAME(a.clustered, b.clustered);
    SAME(a.overlaps, b.overlaps);
    SAME(a.envelopes, b.envelopes);
    SAME(a.best_domain, b.best_domain);
    SAME(a.reported_domains, b.reported_domains);
    QCOMPARE(a.domains.size(), b.domains.size());
    for (std::size_t d = 0; d < a.domains.size(); ++d) {
        same_domain(a.domains[d], b.domains[d]);
        if (QTest::currentTestFailed()) return;
    }
}

void same_settings(const PipelineSettings& a, const PipelineSettings& b) {
    SAME(a.F1, b.F1);
    SAME(a.F2, b.F2);
    SAME(a.F3, b.F3);
    SAME(a.bias_filter, b.bias_filter);
    SAME(a.null2, b.null2);
    SAME(a.report_E, b.report_E);
    SAME(a.domain_E, b.domain_E);
    SAME(a.include_E, b.include_E);
    SAME(a.include_domain_E, b.include_domain_E);
    SAME(a.report_T, b.report_T);
    SAME(a.domain_T, b.domain_T);
    SAME(a.Z, b.Z);
    SAME(a.domZ, b.domZ);
    SAME(a.seed, b.seed);
}

// Every field the format keeps.
void same_search(const StoredSearch& a, const StoredSearch& b) {
    SAME(a.profile_label, b.profile_label);
    SAME(a.targets_label, b.targets_label);
    SAME(a.device, b.device);
    SAME(a.seconds, b.seconds);
    same_settings(a.settings, b.settings);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(a.models.size(), b.models.size());
    for (std::size_t m = 0; m < a.models.size(); ++m) {
        const StoredModel &x = a.models[m], &y = b.models[m];
        SAME(x.name, y.name);
        SAME(x.accession, y.accession);
        SAME(x.description, y.description);
        SAME(x.length, y.length);
        const ModelSearch &s = x.search, &t = y.search;
        SAME(s.Z, t.Z);
        SAME(s.domZ, t.domZ);
        SAME(s.reported, t.reported);
        SAME(s.included, t.included);
        SAME(s.seconds, t.seconds);
        SAME(s.counts.targets, t.counts.targets);
        SAME(s.counts.residues, t.counts.residues);
        SAME(s.counts.past_msv, t.counts.past_msv);
        SAME(s.counts.past_bias, t.counts.past_bias);
        SAME(s.counts.past_viterbi, t.counts.past_viterbi);
        SAME(s.counts.past_forward, t.counts.past_forward);
        QCOMPARE(s.hits.size(), t.hits.size());
        for (std::size_t h = 0; h < s.hits.size(); ++h) {
            same_hit(s.hits[h], t.hits[h]);
            if (QTest::currentTestFailed()) return;
        }
    }
}

// The sequence of a UniProt flat file (the tutorial's 7LESS_DROME) as FASTA:
// the SQ block's letters under its ID.
QByteArray fasta_of_swissprot(const QString& path) {
    QFile in(path);
    if (!in.open(QIODevice::ReadOnly)) return {};
    QByteArray id, residues;
    bool sequence = false;
    for (const QByteArray& line : in.readAll().split('\n')) {
        if (line.startsWith("ID ")) id = line.mid(5).simplified().split(' ').value(0);
        else if (line.startsWith("SQ "))
            sequence = true;
        else if (line.startsWith("//"))
            sequence = false;
        else if (sequence)
            for (char c : line)
                if (std::isalpha(static_cast<unsigned char>(c))) residues += c;
    }
    return id.isEmpty() || residues.isEmpty() ? QByteArray() : ">" + id + "\n" + residues + "\n";
}

void refused(const std::string& text, const char* expected) {
    try {
        (void)read_stored_search(text);
        QFAIL(qPrintable("read: " + QString::fromStdString(text)));
    } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find(expected) != std::string::npos, e.what());
    }
}

}  // namespace

class TestProfileStoredSearch : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString models_, targets_;
    StoredSearch search_;  // fn3 and globins4 over the targets, as the workbench and hmmsearch --project keep it

private slots:
    // The search every test reads: two tutorial models (fn3 finds several
    // domains on sevenless, globins4 many globins) over 46 real sequences,
    // with a reporting threshold and Z set so that the optional settings are kept.
    void initTestCase() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("fn3");
        QVERIFY(dir_.isValid());
        models_ = dir_.filePath(QStringLiteral("models.hmm"));
        targets_ = dir_.filePath(QStringLiteral("targets.fa"));
        {
            QFile out(models_), fa(targets_);
            QVERIFY(out.open(QIODevice::WriteOnly) && fa.open(QIODevice::WriteOnly));
            for (const char* m : {"fn3.hmm", "globins4.hmm"}) {
                QFile in(kTutorial + "/" + m);
                QVERIFY(in.open(QIODevice::ReadOnly));
                out.write(in.readAll());
            }
            QFile globins(kTutorial + "/globins45.fa");
            QVERIFY(globins.open(QIODevice::ReadOnly));
            fa.write(globins.readAll());
            const QByteArray sevenless = fasta_of_swissprot(kTutorial + "/7LESS_DROME");
            QVERIFY(!sevenless.isEmpty());
            fa.write(sevenless);
        }
        const std::vector<ProfileHmm> models = read_hmm_file(models_.toStdString());
        QCOMPARE(models.size(), std::size_t(2));
        const ProfileTargets targets = read_profile_targets(targets_.toStdString(), models[0].alphabet);
        auto scanner = make_cpu_profile_scanner_registry()->create("cpu", 1);
        JobContext job;
        scanner->load(targets, job);
        search_.profile_label = "models.hmm";
        search_.targets_label = "targets.fa (46 sequences)";
        search_.device = scanner->info().id;
        search_.seconds = 0.125;
        search_.settings.threads = 1;
        search_.settings.report_E = 5;
        search_.settings.domain_T = 0.5;
        search_.settings.Z = 1000;
        for (const ProfileHmm& hmm : models)
            search_.models.push_back(stored_model(hmm, search_profile(hmm, targets, *scanner, search_.settings, job)));
    }

    // Only the reported targets are kept, all their domains with them; the
    // targets are the ones hmmsearch reports with the same thresholds.
    void keeps_the_reported_targets() {
        const ProcessResult ref = run_program(QStringLiteral("hmmsearch"),
                                              {"--cpu", "1", "-E", "5", "--domT", "0.5", "-Z", "1000", "--tblout",
                                               dir_.filePath(QStringLiteral("ref.tbl")), models_, targets_});
        QCOMPARE(ref.exit_code, 0);
        std::map<std::string, std::set<std::string>> expected;  // model -> targets
        for (const QString& row : table_rows(dir_.filePath(QStringLiteral("ref.tbl")))) {
            const QStringList f = row.split(' ', Qt::SkipEmptyParts);
            expected[f[2].toStdString()].insert(f[0].toStdString());
        }
        int multi_domain = 0;
        for (const StoredModel& m : search_.models) {
            std::set<std::string> kept;
            for (const TargetHit& h : m.search.hits) {
                QVERIFY(h.reported);
                QVERIFY(!h.domains.empty());
                kept.insert(h.name);
                multi_domain += h.domains.size() > 1;
            }
            QCOMPARE(int(kept.size()), m.search.reported);
            QCOMPARE(kept, expected[m.name]);
        }
        QVERIFY(multi_domain > 0);  // sevenless's fn3 domains
    }

    // Written and read back: every field the same, and the same text again.
    void round_trip() {
        const std::string json = stored_search_json(search_);
        const StoredSearch back = read_stored_search(json);
        same_search(search_, back);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(stored_search_json(back), json);
        // The field names the format has always had, where other readers look.
        const QJsonObject doc = QJsonDocument::fromJson(QByteArray::fromStdString(json)).object();
        QCOMPARE(doc["format"].toString(), QStringLiteral("alignscope profile search 1"));
        QCOMPARE(doc["settings"].toObject()["domT"].toDouble(), 0.5);
        const QJsonObject model = doc["models"].toArray()[0].toObject();
        QCOMPARE(model["name"].toString(), QStringLiteral("fn3"));
        QCOMPARE(qulonglong(model["pipeline"].toObject()["passed_forward"].toDouble()),
                 qulonglong(search_.models[0].search.counts.past_forward));
        const QJsonObject domain = model["hits"].toArray()[0].toObject()["domains"].toArray()[0].toObject();
        for (const char* key : {"env_from", "env_to", "hmm_from", "hmm_to", "ali_from", "ali_to", "model_line",
                                "match_line", "target_line", "pp_line", "rf_line", "cs_line", "reported"})
            QVERIFY2(domain.contains(QLatin1String(key)), key);
    }

    // A record as the workbench's Qt writer laid it out (keys sorted, whole
    // numbers without a decimal point) reads the same.
    void reads_what_the_qt_writer_wrote() {
        const QByteArray qt = QJsonDocument::fromJson(QByteArray::fromStdString(stored_search_json(search_)))
                                  .toJson(QJsonDocument::Compact);
        QVERIFY(qt.contains("\"target\":"));
        same_search(search_, read_stored_search(qt.toStdString()));
    }

    // The parameters: the settings, the labels, the device, and the command
    // line only when given.
    void parameters() {
        const QJsonObject gui =
            QJsonDocument::fromJson(QByteArray::fromStdString(stored_search_parameters(search_))).object();
        QCOMPARE(gui["profile"].toString(), QStringLiteral("models.hmm"));
        QCOMPARE(gui["targets"].toString(), QStringLiteral("targets.fa (46 sequences)"));
        QCOMPARE(gui["device"].toString(), QStringLiteral("cpu"));
        QCOMPARE(gui["E"].toDouble(), 5.0);
        QCOMPARE(gui["Z"].toDouble(), 1000.0);
        QVERIFY(!gui.contains(QLatin1String("command_line")));
        QVERIFY(!gui.contains(QLatin1String("T")));
        const QJsonObject cli =
            QJsonDocument::fromJson(QByteArray::fromStdString(stored_search_parameters(search_, "hmmsearch x y")))
                .object();
        QCOMPARE(cli["command_line"].toString(), QStringLiteral("hmmsearch x y"));
        QJsonObject rest = cli;
        rest.remove(QLatin1String("command_line"));
        QCOMPARE(rest, gui);
    }

    // An older record without most fields: the defaults the format's first
    // reader gave (domains reported, the filters and seed of hmmsearch).
    void reads_an_older_record_with_fields_missing() {
        const StoredSearch r = read_stored_search(
            R"({"format":"alignscope profile search 1","profile":"p.hmm","models":[{"name":"m","length":12,)"
            R"("hits":[{"name":"t","target":3,"domains":[{"env_from":2,"env_to":9,"score":"x"}]}]}]})");
        QCOMPARE(r.profile_label, std::string("p.hmm"));
        QCOMPARE(r.settings.F1, 0.02);
        QCOMPARE(r.settings.seed, 42u);
        QVERIFY(r.settings.bias_filter && r.settings.null2 && !r.settings.Z);
        QCOMPARE(r.models.size(), std::size_t(1));
        const ModelSearch& s = r.models[0].search;
        QCOMPARE(s.name, std::string("m"));
        QCOMPARE(s.model_length, 12);
        QCOMPARE(s.hits.size(), std::size_t(1));
        QCOMPARE(s.hits[0].target, std::size_t(3));
        QVERIFY(s.hits[0].reported);
        const DomainHit& d = s.hits[0].domains.at(0);
        QVERIFY(d.reported && !d.included);
        QCOMPARE(d.env_to, 9);
        QCOMPARE(d.score, 0.0f);  // not a number: the default
    }

    // Numbers that do not fit their field take the default, never a wrapped value.
    void numbers_out_of_range() {
        const StoredSearch r = read_stored_search(
            R"({"format":"alignscope profile search 1","settings":{"seed":-1},"models":[{"length":1e30,)"
            R"("pipeline":{"targets":-5,"residues":2.5,"passed_msv":7}}]})");
        QCOMPARE(r.settings.seed, 42u);
        QCOMPARE(r.models.at(0).length, 0);
        QCOMPARE(r.models[0].search.counts.targets, std::uint64_t(0));
        QCOMPARE(r.models[0].search.counts.residues, std::uint64_t(0));
        QCOMPARE(r.models[0].search.counts.past_msv, std::uint64_t(7));
    }

    void refuses_other_documents() {
        refused("", "not valid JSON");
        refused("{\"format\":", "not valid JSON");
        refused("[]", "its format is not 'alignscope profile search 1'");
        refused(R"({"format":"alignscope profile search 2","models":[]})", "its format is not");
        refused(R"({"E":10})", "its format is not");
    }
};

QTEST_GUILESS_MAIN(TestProfileStoredSearch)
#include "test_profile_stored_search.moc"
