// The same profile search kept by `alignscope-cli hmmsearch --project` and by
// the workbench (run_profile_search, then parameters_json and to_json, as the
// profile search view keeps a finished search): three HMMER tutorial models
// over the tutorial's globins. Both records must be the same document but for
// the run times, the parameters the same but for the CLI's command line; each
// reads back (profile_results_from_json) to the same search.
#include "hmmsearch_oracle.hpp"

#include <analysis/profile_search.hpp>

#include <alignscope/device/job.hpp>
#include <alignscope/profile/hmm_file.hpp>
#include <alignscope/store/project.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace alignscope;
using namespace alignscope::test;

namespace {

// The document without its "seconds" (the run's and each model's).
QJsonObject without_times(QJsonObject doc) {
    doc.remove(QLatin1String("seconds"));
    QJsonArray models;
    for (const QJsonValue& m : doc["models"].toArray()) {
        QJsonObject model = m.toObject();
        model.remove(QLatin1String("seconds"));
        models.append(model);
    }
    doc["models"] = models;
    return doc;
}

QJsonObject object_of(const std::string& json) {
    QJsonParseError error{};
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(json), &error);
    return error.error == QJsonParseError::NoError ? doc.object() : QJsonObject();
}

}  // namespace

class TestProfileSearchRecords : public QObject {
    Q_OBJECT

private slots:
    void cli_and_workbench_keep_the_same_record() {
        ALIGNSCOPE_REQUIRE_PROFILE_ORACLES("globins4");
        QTemporaryDir dir;
        const QString models = three_tutorial_models(dir, QStringLiteral("three.hmm"));
        QVERIFY(!models.isEmpty());
        const QString globins = kTutorial + "/globins45.fa";
        const QString project = dir.filePath(QStringLiteral("p.alsproj"));
        const ProcessResult r = run_cli({"hmmsearch", "--device", "cpu", "--threads", "2", "--noali", "--project",
                                         project, "-o", "/dev/null", models, globins});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        store::ProjectOptions read_only;
        read_only.read_only = true;
        const store::Project p(project.toStdString(), read_only);
        const auto analyses = p.analyses();
        QCOMPARE(int(analyses.size()), 1);
        const std::string cli_results = p.analysis_results(analyses[0].id);

        ui::ProfileSearchRequest request;
        request.models = profile::read_hmm_file(models.toStdString());
        request.profile_label = "three.hmm";
        request.database_path = globins.toStdString();
        request.targets_label = "globins45.fa";
        request.device = "cpu";
        request.settings.threads = 2;
        JobContext context;
        const ui::ProfileSearchResults gui = ui::run_profile_search(request, context);
        const QByteArray gui_results = ui::to_json(gui);

        const QJsonObject cli_doc = object_of(cli_results), gui_doc = object_of(gui_results.toStdString());
        QCOMPARE(cli_doc["format"].toString(), QStringLiteral("alignscope profile search 1"));
        QCOMPARE(cli_doc["models"].toArray().size(), 3);
        int hits = 0;
        for (const QJsonValue& m : cli_doc["models"].toArray()) hits += int(m["hits"].toArray().size());
        QVERIFY(hits > 40);  // globins4 finds the globins
        QVERIFY(cli_doc["models"].toArray()[0].toObject().contains(QLatin1String("seconds")));
        QCOMPARE(without_times(cli_doc), without_times(gui_doc));

        // The parameters: the same, and the CLI's command line beside them.
        QJsonObject cli_parameters = object_of(analyses[0].parameters);
        QVERIFY(cli_parameters["command_line"].toString().contains(QLatin1String("--project")));
        cli_parameters.remove(QLatin1String("command_line"));
        QCOMPARE(cli_parameters, object_of(ui::parameters_json(gui).toStdString()));

        // What the workbench reads from either record.
        const ui::ProfileSearchResults from_cli = ui::profile_results_from_json(QByteArray::fromStdString(cli_results));
        const ui::ProfileSearchResults from_gui = ui::profile_results_from_json(gui_results);
        QCOMPARE(from_cli.models.size(), gui.models.size());
        for (std::size_t m = 0; m < gui.models.size(); ++m) {
            QCOMPARE(from_cli.models[m].search.hits.size(), gui.models[m].search.hits.size());
            for (std::size_t h = 0; h < gui.models[m].search.hits.size(); ++h) {
                const profile::TargetHit &a = from_cli.models[m].search.hits[h], &b = from_gui.models[m].search.hits[h];
                QCOMPARE(a.name, b.name);
                QVERIFY(a.score == b.score && a.lnP == b.lnP);
                QCOMPARE(a.domains.size(), gui.models[m].search.hits[h].domains.size());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestProfileSearchRecords)
#include "test_profile_search_records.moc"
