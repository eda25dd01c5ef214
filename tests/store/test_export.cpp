// Exports parsed back: JSON Lines with QJsonDocument, TSV by splitting, CSV
// with a small RFC 4180 reader written here, pair text by reassembling the
// aligned rows, Chrome traces with read_chrome_trace; and the choice of table.
#include "store_test_support.hpp"

#include <alignscope/error.hpp>
#include <alignscope/store/export.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <sstream>

using namespace alignscope;
using namespace store_test;

namespace {

// RFC 4180: fields separated by commas, a quoted field may hold commas,
// doubled quotes and line breaks.
QList<QStringList> parse_csv(const QString& text) {
    QList<QStringList> rows;
    QStringList row;
    QString field;
    bool quoted = false, field_started = false;
    for (qsizetype k = 0; k < text.size(); ++k) {
        const QChar c = text[k];
        if (quoted) {
            if (c == '"' && k + 1 < text.size() && text[k + 1] == '"') {
                field += '"';
                ++k;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"' && !field_started) {
            quoted = field_started = true;
        } else if (c == ',') {
            row << field;
            field.clear();
            field_started = false;
        } else if (c == '\n') {
            row << field;
            rows << row;
            row.clear();
            field.clear();
            field_started = false;
        } else {
            field += c;
            field_started = true;
        }
    }
    if (!row.isEmpty() || !field.isEmpty()) rows << (row << field);
    return rows;
}

QList<QStringList> parse_tsv(const QString& text) {
    QList<QStringList> rows;
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) rows << line.split('\t');
    return rows;
}

QList<QJsonObject> parse_json_lines(const QString& text) {
    QList<QJsonObject> objects;
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) {
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(line.toUtf8(), &error);
        if (error.error != QJsonParseError::NoError) qFatal("bad JSON line: %s", qPrintable(line));
        objects << doc.object();
    }
    return objects;
}

QString export_text(const store::Project& project, std::int64_t job, store::ExportFormat format,
                    store::ExportTable table = store::ExportTable::Auto, std::int64_t* rows = nullptr) {
    std::ostringstream out;
    const std::int64_t n = store::export_job(project, job, format, out, table);
    if (rows) *rows = n;
    return QString::fromStdString(out.str());
}

double rounded_fraction(std::int64_t part, std::int64_t whole) {
    return whole ? std::round(10000.0 * double(part) / double(whole)) / 10000.0 : 0.0;
}

struct Fixture {
    QTemporaryDir dir;
    QString path = dir.filePath("export.alsproj");
    std::unique_ptr<store::Project> project;
    std::vector<Alignment> alignments = sample_alignments(23);
    std::vector<store::Hit> hits = sample_hits(40);
    std::vector<TimelineEvent> events = sample_events(60);
    std::vector<store::BenchPoint> bench = sample_bench(6);
    std::int64_t align_job = 0, search_job = 0, bench_job = 0;

    Fixture() {
        store::ProjectOptions options;
        options.create_if_missing = true;
        project = std::make_unique<store::Project>(path.toStdString(), options);
        auto align = project->begin_job(sample_spec("align"));
        align->add_alignments(alignments);
        align->add_timeline(events, "cupti");
        align->finish_done();
        align_job = align->job_id();
        auto search = project->begin_job(sample_spec("search"));
        search->add_hits(hits);
        search->add_long_alignment(sample_long_alignment());
        search->finish_done();
        search_job = search->job_id();
        auto bench_run = project->begin_job(sample_spec("bench"));
        bench_run->add_bench_points(bench);
        bench_run->finish_done();
        bench_job = bench_run->job_id();
    }
};

}  // namespace

class TestExport : public QObject {
    Q_OBJECT

private slots:
    void alignmentsAsJsonLines() {
        Fixture f;
        std::int64_t rows = 0;
        const auto objects =
            parse_json_lines(export_text(*f.project, f.align_job, store::ExportFormat::Json, {}, &rows));
        QCOMPARE(rows, std::int64_t(f.alignments.size()));
        QCOMPARE(objects.size(), qsizetype(f.alignments.size()));
        for (std::size_t k = 0; k < f.alignments.size(); ++k) {
            const Alignment& a = f.alignments[k];
            const QJsonObject& o = objects[qsizetype(k)];
            QCOMPARE(o["query"].toString().toStdString(), a.query_id);
            QCOMPARE(o["target"].toString().toStdString(), a.target_id);
            QCOMPARE(o["score"].toDouble(), a.score / 2.0);  // stored scaled by 2
            QCOMPARE(o["mode"].toString(), QString("local"));
            QCOMPARE(o["query_begin"].toInteger(), a.query_begin);
            QCOMPARE(o["query_end"].toInteger(), a.query_end);
            QCOMPARE(o["target_begin"].toInteger(), a.target_begin);
            QCOMPARE(o["target_end"].toInteger(), a.target_end);
            QCOMPARE(o["cigar"].toString().toStdString(), a.cigar.to_string());
            QCOMPARE(o["identity"].toDouble(), rounded_fraction(a.stats.identities, a.stats.length));
            QCOMPARE(o["similarity"].toDouble(), rounded_fraction(a.stats.similarities, a.stats.length));
            QCOMPARE(o["gaps"].toInteger(), a.stats.gaps);
            QCOMPARE(o["length"].toInteger(), a.stats.length);
            QCOMPARE(o["device"].toString().toStdString(), a.device);
            QCOMPARE(o["kernel"].toString().toStdString(), a.kernel);
        }
    }

    void alignmentsAsTsvAndCsv() {
        Fixture f;
        const auto tsv = parse_tsv(export_text(*f.project, f.align_job, store::ExportFormat::Tsv));
        const auto csv = parse_csv(export_text(*f.project, f.align_job, store::ExportFormat::Csv));
        QCOMPARE(tsv.size(), qsizetype(f.alignments.size() + 1));
        QCOMPARE(csv.size(), qsizetype(f.alignments.size() + 1));
        for (const auto& table : {tsv, csv}) {
            const QStringList header = table[0];
            for (std::size_t k = 0; k < f.alignments.size(); ++k) {
                const Alignment& a = f.alignments[k];
                const QStringList row = table[qsizetype(k + 1)];
                QCOMPARE(row.size(), header.size());
                auto at = [&](const char* column) { return row[header.indexOf(column)]; };
                QCOMPARE(at("query").toStdString(), a.query_id);
                QCOMPARE(at("target").toStdString(), a.target_id);
                QCOMPARE(at("score").toDouble(), a.score / 2.0);
                QCOMPARE(at("query_begin").toLongLong(), a.query_begin);
                QCOMPARE(at("target_end").toLongLong(), a.target_end);
                QCOMPARE(at("cigar").toStdString(), a.cigar.to_string());
                QCOMPARE(at("identity").toDouble(), rounded_fraction(a.stats.identities, a.stats.length));
                QCOMPARE(at("gaps").toLongLong(), a.stats.gaps);
            }
        }
    }

    void alignmentsAsPair() {
        Fixture f;
        const QString text = export_text(*f.project, f.align_job, store::ExportFormat::Pair);
        // Reassemble each alignment from its blocks: query row, markup, target row.
        const QStringList sections = text.split("#=======================================\n");
        QList<std::pair<QString, QString>> rows;
        QStringList scores;
        for (const QString& section : sections) {
            if (section.contains("# Score: ")) {
                scores << section.section("# Score: ", 1).section('\n', 0, 0);
                continue;
            }
            if (section.trimmed().isEmpty() || section.startsWith("###") || scores.size() == rows.size()) continue;
            QString query, target;
            const QStringList lines = section.split('\n');
            for (qsizetype k = 0; k + 2 < lines.size(); ++k) {
                if (lines[k].size() <= 21 || lines[k].startsWith('#')) continue;
                query += lines[k].mid(21).section(' ', 0, 0);
                target += lines[k + 2].mid(21).section(' ', 0, 0);
                k += 3;
            }
            rows << std::pair{query, target};
        }
        QCOMPARE(rows.size(), qsizetype(f.alignments.size()));
        for (std::size_t k = 0; k < f.alignments.size(); ++k) {
            const Alignment& a = f.alignments[k];
            QCOMPARE(rows[qsizetype(k)].first.toStdString(), a.query_aligned);
            QCOMPARE(rows[qsizetype(k)].second.toStdString(), a.target_aligned);
            QCOMPARE(scores[qsizetype(k)].toDouble(), a.score / 2.0);
        }
        QVERIFY(text.contains("# Matrix: BLOSUM62"));
        QVERIFY(text.contains("# Gap_penalty: 10.5"));
    }

    void timelineAsChromeTrace() {
        Fixture f;
        const QString text = export_text(*f.project, f.align_job, store::ExportFormat::ChromeTrace);
        const auto events = read_chrome_trace(text.toStdString(), "export");
        QCOMPARE(events.size(), f.events.size());
        const std::int64_t origin = f.events.front().start_ns;  // traces start at the earliest event
        for (std::size_t k = 0; k < events.size(); ++k) {
            const TimelineEvent& want = f.events[k];
            const TimelineEvent& got = events[k];
            QCOMPARE(got.name, want.name);
            QCOMPARE(got.device, want.device);
            QCOMPARE(got.lane, want.lane);
            QVERIFY(std::llabs(got.start_ns - (want.start_ns - origin)) <= 1);
            QVERIFY(std::llabs((got.end_ns - got.start_ns) - (want.end_ns - want.start_ns)) <= 1);
            QCOMPARE(got.bytes, want.bytes);
            QCOMPARE(got.cells, want.cells);
        }
        QVERIFY(text.contains("cupti"));
        // The timeline as a table too.
        const auto csv =
            parse_csv(export_text(*f.project, f.align_job, store::ExportFormat::Csv, store::ExportTable::Timeline));
        QCOMPARE(csv.size(), qsizetype(f.events.size() + 1));
        QCOMPARE(csv[5][csv[0].indexOf("start_ns")].toLongLong(), f.events[4].start_ns);
    }

    // The jobs row's event counter, damaged in the file (found by
    // fuzz_project: -1 made the export reserve SIZE_MAX events and throw
    // std::length_error; 2^40 asks for 100 TB): the export reads the rows
    // there, whatever the counter says, and `check` reports the counter.
    void aDamagedEventCountIsNotTrusted_data() {
        QTest::addColumn<qlonglong>("count");
        QTest::newRow("-1") << qlonglong(-1);
        QTest::newRow("2^40") << qlonglong(1ll << 40);
    }
    void aDamagedEventCountIsNotTrusted() {
        QFETCH(qlonglong, count);
        Fixture f;
        {
            RawDatabase raw(f.path, true);
            const QByteArray sql =
                QString("UPDATE jobs SET timeline_event_count = %1 WHERE id = %2").arg(count).arg(f.align_job).toUtf8();
            QVERIFY2(raw.execute(sql.constData()), qPrintable(raw.error()));
        }
        QString text;
        try {
            text = export_text(*f.project, f.align_job, store::ExportFormat::ChromeTrace);
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QCOMPARE(read_chrome_trace(text.toStdString(), "export").size(), f.events.size());
        QVERIFY(!f.project->check().ok());
    }

    // Text that is not UTF-8 in a damaged project (found by fuzz_project:
    // nlohmann-json's dump threw its type_error 316 out of export_job): JSON
    // exports carry U+FFFD instead and stay valid JSON.
    void invalidUtf8InTheProjectExportsAsReplacementCharacters() {
        Fixture f;
        {
            RawDatabase raw(f.path, true);
            for (const char* sql : {"UPDATE alignments SET query_id = CAST(x'71ff31' AS TEXT)",
                                    "UPDATE hits SET target_id = CAST(x'74c331' AS TEXT)",
                                    "UPDATE long_alignments SET query_id = CAST(x'6cfe' AS TEXT)",
                                    "UPDATE timeline_events SET name = CAST(x'6b80' AS TEXT)",
                                    "UPDATE bench_points SET series = CAST(x'73eda080' AS TEXT)"})
                QVERIFY2(raw.execute(sql), qPrintable(raw.error()));
        }
        struct Case {
            std::int64_t job;
            store::ExportFormat format;
            store::ExportTable table;
            const char* text;
        };
        const Case cases[] = {{f.align_job, store::ExportFormat::Json, store::ExportTable::Alignments, "q\uFFFD1"},
                              {f.search_job, store::ExportFormat::Json, store::ExportTable::Hits, "t\uFFFD1"},
                              {f.search_job, store::ExportFormat::Json, store::ExportTable::LongAlignments, "l\uFFFD"},
                              {f.align_job, store::ExportFormat::ChromeTrace, store::ExportTable::Auto, "k\uFFFD"},
                              {f.bench_job, store::ExportFormat::Json, store::ExportTable::Bench, "s\uFFFD"}};
        for (const Case& c : cases) {
            QString text;
            try {
                text = export_text(*f.project, c.job, c.format, c.table);
            } catch (const std::exception& e) {
                QFAIL(e.what());
            }
            QVERIFY2(text.contains(QString::fromUtf8(c.text)), qPrintable(text.left(300)));
            for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) {
                QJsonParseError error{};
                QJsonDocument::fromJson(line.toUtf8(), &error);
                if (c.format == store::ExportFormat::Json) QCOMPARE(error.error, QJsonParseError::NoError);
            }
            if (c.format == store::ExportFormat::ChromeTrace) {
                QJsonParseError error{};
                QJsonDocument::fromJson(text.toUtf8(), &error);
                QCOMPARE(error.error, QJsonParseError::NoError);
            }
        }
    }

    // Timeline times a job cannot have recorded, in a damaged project: the
    // writer's and the timeline view's differences (start - origin, end -
    // start) overflowed int64 (undefined behaviour; a negative ts in the
    // export). Reading such an event is an Error naming the project and job.
    void timelineTimesOutOfRangeAreRefused() {
        Fixture f;
        {
            RawDatabase raw(f.path, true);
            QVERIFY(raw.execute("UPDATE timeline_events SET start_ns = -9223372036854775807 WHERE ordinal = 3"));
            QVERIFY(raw.execute("UPDATE timeline_events SET end_ns = 9223372036854775807 WHERE ordinal = 4"));
        }
        QString message;
        try {
            export_text(*f.project, f.align_job, store::ExportFormat::ChromeTrace);
            message = "(no error)";
        } catch (const Error& e) {
            message = e.what();
        }
        QVERIFY2(message.contains(f.path) && message.contains("job " + QString::number(f.align_job)) &&
                     message.contains("timeline event"),
                 qPrintable(message));
    }

    void hitsAsCsvJsonTsv() {
        Fixture f;
        const auto csv = parse_csv(export_text(*f.project, f.search_job, store::ExportFormat::Csv));
        const auto tsv = parse_tsv(export_text(*f.project, f.search_job, store::ExportFormat::Tsv));
        const auto json = parse_json_lines(export_text(*f.project, f.search_job, store::ExportFormat::Json));
        QCOMPARE(csv.size(), qsizetype(f.hits.size() + 1));
        QCOMPARE(tsv.size(), qsizetype(f.hits.size() + 1));
        QCOMPARE(json.size(), qsizetype(f.hits.size()));
        for (std::size_t k = 0; k < f.hits.size(); ++k) {
            const store::Hit& h = f.hits[k];
            for (const auto& table : {csv, tsv}) {
                const QStringList& header = table[0];
                const QStringList& row = table[qsizetype(k + 1)];
                auto at = [&](const char* column) { return row[header.indexOf(column)]; };
                QCOMPARE(at("target").toStdString(), h.target_id);
                QCOMPARE(at("rank").toLongLong(), h.rank);
                QCOMPARE(at("score").toDouble(), h.score / 2.0);
                if (h.evalue) QCOMPARE(at("evalue").toDouble(), *h.evalue);  // shortest round-trip text
                else
                    QVERIFY(at("evalue").isEmpty());
                QCOMPARE(at("target_length").toLongLong(), h.target_length);
            }
            const QJsonObject& o = json[qsizetype(k)];
            QCOMPARE(o["query"].toString().toStdString(), h.query_id);
            QCOMPARE(o["score"].toDouble(), h.score / 2.0);
            if (h.bits) QCOMPARE(o["bits"].toDouble(), *h.bits);
            else
                QVERIFY(o["bits"].isNull());
        }
        const auto longs = parse_json_lines(
            export_text(*f.project, f.search_job, store::ExportFormat::Json, store::ExportTable::LongAlignments));
        QCOMPARE(longs.size(), qsizetype(1));
        QCOMPARE(longs[0]["alignment_path"].toString().toStdString(), sample_long_alignment().alignment_path);
        QCOMPARE(longs[0]["score"].toDouble(), sample_long_alignment().score / 2.0);
    }

    void benchAsCsvAndJson() {
        Fixture f;
        const auto csv = parse_csv(export_text(*f.project, f.bench_job, store::ExportFormat::Csv));
        const auto json = parse_json_lines(export_text(*f.project, f.bench_job, store::ExportFormat::Json));
        QCOMPARE(csv.size(), qsizetype(f.bench.size() + 1));
        QCOMPARE(csv[0], (QStringList{"series", "device", "x", "y", "x_label", "y_label", "parameters"}));
        for (std::size_t k = 0; k < f.bench.size(); ++k) {
            const store::BenchPoint& p = f.bench[k];
            const QStringList& row = csv[qsizetype(k + 1)];
            QCOMPARE(row[0].toStdString(), p.series);
            QCOMPARE(row[1].toStdString(), p.device);
            QCOMPARE(row[2].toDouble(), p.x);
            QCOMPARE(row[3].toDouble(), p.y);  // exact: the shortest text that reads back as the same double
            const QJsonObject parameters = QJsonDocument::fromJson(row[6].toUtf8()).object();
            QCOMPARE(parameters["note"].toString().toStdString(), p.parameters.at("note"));
            const QJsonObject& o = json[qsizetype(k)];
            QCOMPARE(o["y"].toDouble(), p.y);
            QCOMPARE(o["parameters"].toObject()["streams"].toString().toStdString(), p.parameters.at("streams"));
        }
    }

    void tableChoiceAndRefusals() {
        Fixture f;
        using store::ExportFormat;
        using store::ExportTable;
        QCOMPARE(store::resolve_export_table(*f.project, f.align_job, ExportFormat::Json), ExportTable::Alignments);
        QCOMPARE(store::resolve_export_table(*f.project, f.align_job, ExportFormat::ChromeTrace),
                 ExportTable::Timeline);
        QCOMPARE(store::resolve_export_table(*f.project, f.search_job, ExportFormat::Csv), ExportTable::Hits);
        QCOMPARE(store::resolve_export_table(*f.project, f.bench_job, ExportFormat::Csv), ExportTable::Bench);
        auto refused = [&](std::int64_t job, ExportFormat format, ExportTable table) {
            try {
                std::ostringstream out;
                store::export_job(*f.project, job, format, out, table);
            } catch (const Error& e) {
                return QString::fromUtf8(e.what());
            }
            return QString("no error");
        };
        QVERIFY(refused(f.search_job, ExportFormat::Pair, ExportTable::Auto).contains("no alignments"));
        QVERIFY(refused(f.bench_job, ExportFormat::ChromeTrace, ExportTable::Auto).contains("no timeline"));
        QVERIFY(refused(f.align_job, ExportFormat::Pair, ExportTable::Hits).contains("alignments only"));
        QVERIFY(refused(999, ExportFormat::Json, ExportTable::Auto).contains("no job 999"));
        QCOMPARE(store::parse_export_format("chrome-trace"), ExportFormat::ChromeTrace);
        bool threw = false;
        try {
            store::parse_export_format("xml");
        } catch (const Error& e) {
            threw = QString(e.what()).contains("--format");
        }
        QVERIFY(threw);
    }
};

QTEST_GUILESS_MAIN(TestExport)
#include "test_export.moc"
