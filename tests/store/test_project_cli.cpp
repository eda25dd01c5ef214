// `alignscope-cli project FILE ...` end to end through the real binary: list,
// show, export (atomic output files, parsed back), delete, vacuum, check, and
// the one-line errors for files that are not projects.
#include "cli_runner.hpp"
#include "store_test_support.hpp"

#include <QDir>
#include <QFile>
#include <QFileInfo>

using namespace alignscope;
using namespace store_test;

namespace {

struct CliFixture {
    QTemporaryDir dir;
    QString path = dir.filePath("cli.alsproj");
    std::int64_t align_job = 0, search_job = 0, dead_job = 0;

    CliFixture() {
        store::ProjectOptions options;
        options.create_if_missing = true;
        store::Project project(path.toStdString(), options);
        auto align = project.begin_job(sample_spec("align"));
        align->add_alignments(sample_alignments(9));
        align->add_timeline(sample_events(20), "steady-clock");
        align->finish_done();
        align_job = align->job_id();
        auto search = project.begin_job(sample_spec("search"));
        search->add_hits(sample_hits(30));
        search->finish_done();
        search_job = search->job_id();
        // A job left 'running' by a process that is gone: a raw row whose
        // owner lock nobody holds.
        RawDatabase raw(path, true);
        raw.execute(
            "INSERT INTO jobs (command, algorithm, mode, scoring, score_scale, devices, streams, threads, "
            "kernel, build_version, driver_version, spec, state, created_ms, started_ms, owner_pid, "
            "owner_host) VALUES ('bench', '', '', '', 1, 'cpu', 0, 0, '', '', '', '{\"command\":\"bench\"}', "
            "'running', 1, 1, 4242, 'gone')");
        dead_job = raw.integer("SELECT max(id) FROM jobs");
    }
    QStringList args(const QStringList& rest) const { return QStringList{"project", path} + rest; }
};

}  // namespace

class TestProjectCli : public QObject {
    Q_OBJECT

private slots:
    // The binary is a dependency of this suite: without it every case fails
    // here, once, saying so (never a silent pass).
    void initTestCase() {
        QVERIFY2(QFileInfo::exists(QStringLiteral(ALIGNSCOPE_CLI)), "alignscope-cli is not built: " ALIGNSCOPE_CLI);
    }

    void listAndShow() {
        CliFixture f;
        const ProcessResult list = run_cli(f.args({"list"}));
        QVERIFY2(list.exit_code == 0, list.err.constData());
        const QString out = QString::fromUtf8(list.out);
        QVERIFY2(out.contains("done") && out.contains("interrupted") && out.contains("9 alignments") &&
                     out.contains("30 hits") && out.contains("3 jobs"),
                 qPrintable(out));
        const ProcessResult show = run_cli(f.args({"show", QString::number(f.align_job)}));
        QCOMPARE(show.exit_code, 0);
        const QString text = QString::fromUtf8(show.out);
        QVERIFY2(text.contains("BLOSUM62") && text.contains("sw_affine") && text.contains("20 timeline events"),
                 qPrintable(text));
        const ProcessResult json = run_cli(f.args({"show", QString::number(f.align_job), "--json"}));
        const QJsonObject object = QJsonDocument::fromJson(json.out).object();
        QCOMPARE(object["state"].toString(), QString("done"));
        QCOMPARE(object["spec"].toObject()["gap_open"].toDouble(), 10.5);
        const ProcessResult missing = run_cli(f.args({"show", "77"}));
        QCOMPARE(missing.exit_code, 2);
        QVERIFY(QString::fromUtf8(missing.err).contains("no job 77"));
    }

    void exportWritesWholeFiles() {
        CliFixture f;
        const QString out = f.dir.filePath("hits.csv");
        const ProcessResult csv =
            run_cli(f.args({"export", QString::number(f.search_job), "--format", "csv", "-o", out}));
        QVERIFY2(csv.exit_code == 0, csv.err.constData());
        QFile file(out);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().split('\n');
        QCOMPARE(lines.size(), qsizetype(32));  // header, 30 rows, final empty
        QVERIFY(lines[0].startsWith("query,target,rank,score"));
        file.close();

        const ProcessResult json = run_cli(f.args({"export", QString::number(f.align_job), "--format", "json"}));
        QCOMPARE(parse_json_lines(json.out).size(), 9);
        const ProcessResult trace =
            run_cli(f.args({"export", QString::number(f.align_job), "--format", "chrome-trace"}));
        QCOMPARE(read_chrome_trace(trace.out.toStdString(), "cli").size(), std::size_t{20});

        // A refused export leaves an existing file as it was and no temporary behind.
        const QByteArray before = "keep me\n";
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(before);
        file.close();
        const ProcessResult refused =
            run_cli(f.args({"export", QString::number(f.search_job), "--format", "pair", "-o", out}));
        QCOMPARE(refused.exit_code, 2);
        QVERIFY2(QString::fromUtf8(refused.err).contains("no alignments"), refused.err.constData());
        QCOMPARE(refused.err.count('\n'), 1);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), before);
        QCOMPARE(QDir(f.dir.path()).entryList({"*.tmp*", ".*tmp*"}, QDir::Files | QDir::Hidden), QStringList{});
    }

    void deleteVacuumCheck() {
        CliFixture f;
        const ProcessResult check = run_cli(f.args({"check"}));
        QVERIFY2(check.exit_code == 0, check.out.constData());
        QVERIFY(QString::fromUtf8(check.out).contains(": ok"));
        // `check` opened the file writable, so the dead job is now recorded as interrupted.
        QCOMPARE(RawDatabase(f.path).column(
                     ("SELECT state FROM jobs WHERE id = " + std::to_string(f.dead_job)).c_str()),
                 QStringList{"interrupted"});
        const ProcessResult erase = run_cli(f.args({"delete", QString::number(f.search_job)}));
        QVERIFY2(erase.exit_code == 0, erase.err.constData());
        QVERIFY(QString::fromUtf8(erase.out).contains("30 hits"));
        QVERIFY(!QString::fromUtf8(run_cli(f.args({"list"})).out).contains("30 hits"));
        const ProcessResult vacuum = run_cli(f.args({"vacuum"}));
        QVERIFY2(vacuum.exit_code == 0, vacuum.err.constData());
        {
            RawDatabase raw(f.path, true);
            QVERIFY(raw.execute("UPDATE jobs SET alignment_count = 1"));
        }
        const ProcessResult bad = run_cli(f.args({"check"}));
        QCOMPARE(bad.exit_code, 1);
        QVERIFY2(QString::fromUtf8(bad.out).contains("problem"), bad.out.constData());
    }

    // `align --project`: the recorded alignments export to exactly the JSON
    // Lines the same run printed, and a run that fails is recorded as failed.
    void alignRecordsIntoAProject() {
        QTemporaryDir dir;
        const QString fasta = dir.filePath("globins.fa");
        QFile file(fasta);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            ">hba MVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHGKKVADALTNAVAHV\n"
            "MVLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHGKKVADALTNAVAHV\n"
            ">hbb\nMVHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGAFSDGLAH\n");
        file.close();
        const QString project = dir.filePath("run.alsproj");
        const ProcessResult align = run_cli({"align", fasta, fasta, "--mode", "local", "--device", "cpu-ref",
                                             "--format", "json", "--project", project});
        QVERIFY2(align.exit_code == 0, align.err.constData());
        const ProcessResult exported = run_cli({"project", project, "export", "1", "--format", "json"});
        QVERIFY2(exported.exit_code == 0, exported.err.constData());
        QCOMPARE(parse_json_lines(exported.out).size(), 4);
        QCOMPARE(parse_json_lines(exported.out), parse_json_lines(align.out));
        {
            store::Project recorded(project.toStdString());
            const store::JobInfo job = recorded.job(1);
            QCOMPARE(job.state, store::JobState::Done);
            QCOMPARE(job.spec.mode, std::string("local"));
            QCOMPARE(job.inputs.size(), std::size_t{2});  // the same file as query and as target
            QCOMPARE(recorded.inputs().size(), std::size_t{1});
        }
        const ProcessResult failing =
            run_cli({"align", fasta, fasta, "--device", "cpu", "--kernel", "no_such_kernel", "--project", project});
        QCOMPARE(failing.exit_code, 2);
        store::Project recorded(project.toStdString());
        const auto jobs = recorded.jobs();
        QCOMPARE(jobs.size(), std::size_t{2});  // the kernel is refused by the backend, after the job began
        QCOMPARE(jobs[1].state, store::JobState::Failed);
        QVERIFY(!jobs[1].error.empty());
        QVERIFY2(QString::fromUtf8(failing.err).contains(QString::fromStdString(jobs[1].error)),
                 failing.err.constData());
    }

    void notAProject() {
        QTemporaryDir dir;
        const QString png = dir.filePath("picture.png");
        QFile file(png);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("\x89PNG\r\n\x1a\n", 8) + QByteArray(100, 'x'));
        file.close();
        const ProcessResult result = run_cli({"project", png, "list"});
        QCOMPARE(result.exit_code, 2);
        QCOMPARE(result.err.count('\n'), 1);
        QVERIFY2(QString::fromUtf8(result.err).contains("not an SQLite database"), result.err.constData());
        const ProcessResult absent = run_cli({"project", dir.filePath("none.alsproj"), "list"});
        QCOMPARE(absent.exit_code, 2);
        QVERIFY(!QFileInfo::exists(dir.filePath("none.alsproj")));
    }

    // An empty file that was never a project is refused by every project
    // command and left empty; a command that records a job makes it one.
    void anEmptyFileIsNotMadeAProject() {
        QTemporaryDir dir;
        const QString empty = dir.filePath("empty.alsproj");
        {
            QFile file(empty);
            QVERIFY(file.open(QIODevice::WriteOnly));
        }
        for (const QStringList& command :
             {QStringList{"list"}, QStringList{"show", "1"}, QStringList{"vacuum"}, QStringList{"delete", "1"}}) {
            const ProcessResult r = run_cli(QStringList{"project", empty} + command);
            QCOMPARE(r.exit_code, 2);
            QCOMPARE(r.err.count('\n'), 1);
            QVERIFY2(r.err.contains("is an empty file, not an AlignScope project"), r.err.constData());
            QCOMPARE(QFileInfo(empty).size(), qint64(0));
        }
        const QString fasta = dir.filePath("d.fa");
        QFile file(fasta);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(">a\nACGTACGT\n");
        file.close();
        QCOMPARE(run_cli({"align", fasta, fasta, "--project", empty}).exit_code, 0);
        QCOMPARE(run_cli({"project", empty, "list"}).exit_code, 0);
    }

    // check on a file too damaged to open reports that as its problem: exit 1
    // as README says, one problem line, and no advice to run check.
    void checkOnADamagedFile() {
        CliFixture f;
        QFile file(f.path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QByteArray bytes = file.readAll();
        QVERIFY(bytes.size() > 8 * 4096);
        for (qsizetype page = 1; page < bytes.size() / 4096; ++page)
            bytes.replace(page * 4096, 8, QByteArray("\x0d\xff\xff\xff\xff\xff\xff\xff", 8));
        QVERIFY(file.seek(0));
        QCOMPARE(file.write(bytes), bytes.size());
        file.close();
        QFile::remove(f.path + "-wal");
        QFile::remove(f.path + "-shm");
        const ProcessResult check = run_cli(f.args({"check"}));
        QCOMPARE(check.exit_code, 1);
        QVERIFY2(check.out.startsWith("problem: " + f.path.toUtf8() + " is damaged") &&
                     check.out.contains("restore it from a backup") && !check.out.contains("run `alignscope-cli"),
                 check.out.constData());
        // Other commands still point to check.
        const ProcessResult list = run_cli(f.args({"list"}));
        QCOMPARE(list.exit_code, 2);
        QVERIFY2(list.err.contains("check`"), list.err.constData());
        // Not a project at all: a problem too; no file at all: a usage error.
        QFile other(f.path);
        QVERIFY(other.open(QIODevice::WriteOnly | QIODevice::Truncate));
        other.write(QByteArray(8192, 'x'));
        other.close();
        QCOMPARE(run_cli(f.args({"check"})).exit_code, 1);
        QCOMPARE(run_cli({"project", f.path + ".none", "check"}).exit_code, 2);
    }

    // Job numbers start at 1: 0 or a negative one is one line saying so, not
    // the range of a double.
    void jobNumbersStartAtOne() {
        CliFixture f;
        for (const QString& job : {QStringLiteral("0"), QStringLiteral("-3"), QStringLiteral("99999999999999999999")}) {
            const ProcessResult r = run_cli(f.args({"show", job}));
            QCOMPARE(r.exit_code, 2);
            QCOMPARE(r.err.count('\n'), 1);
            QVERIFY2(r.err.size() < 200 && r.err.contains("job"), r.err.constData());
        }
        QVERIFY(run_cli(f.args({"show", "0"})).err.contains("job numbers start at 1"));
    }
};

QTEST_GUILESS_MAIN(TestProjectCli)
#include "test_project_cli.moc"
