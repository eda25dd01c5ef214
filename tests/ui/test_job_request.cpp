// The job panel's checks and the job a request becomes: each impossible
// combination is caught with a message naming the problem, valid ones pass,
// and the pairs and cell counts agree with a count made here by brute force.
#include <jobs/job_request.hpp>

#include <QtTest>

#include <set>

using namespace alignscope;
using namespace alignscope::ui;

namespace {

SequenceList list(std::vector<std::string> residues, AlphabetKind alphabet, std::vector<std::int64_t> ids = {1}) {
    auto records = std::make_shared<std::vector<Sequence>>();
    int n = 0;
    for (auto& r : residues) records->push_back(Sequence{"s" + std::to_string(++n), "", r, ""});
    SequenceList l;
    l.records = records;
    l.alphabet = alphabet;
    l.label = "test.fa";
    l.set_ids = std::move(ids);
    return l;
}

std::vector<DeviceInfo> cpu_devices() {
    DeviceInfo ref;
    ref.id = "cpu-ref";
    ref.kind = "cpu";
    ref.name = "CPU reference";
    DeviceInfo simd;
    simd.id = "cpu";
    simd.kind = "cpu";
    simd.name = "CPU SIMD";
    DeviceInfo gpu;
    gpu.id = "gpu";
    gpu.kind = "gpu";
    gpu.name = "CUDA GPUs";
    gpu.available = false;
    gpu.unavailable_reason = "this build has no CUDA backend";
    return {ref, simd, gpu};
}

JobRequest protein_request() {
    JobRequest r;
    r.queries = list({"MKVLAAGIV", "MKV"}, AlphabetKind::Protein);
    r.targets = list({"MKVLGAGIVW", "AGIV", "W"}, AlphabetKind::Protein, {2});
    r.scoring.matrix = "BLOSUM62";
    r.device = "cpu";
    return r;
}

QString joined(const std::vector<JobProblem>& problems, JobProblem::Severity severity) {
    QStringList lines;
    for (const auto& p : problems)
        if (p.severity == severity) lines << QString::fromStdString(p.message);
    return lines.join("\n");
}

}  // namespace

class JobRequestTest : public QObject {
    Q_OBJECT
private slots:
    void validRequestHasNoProblems() {
        const auto problems = check_request(protein_request(), cpu_devices());
        QVERIFY2(problems.empty(), qPrintable(joined(problems, JobProblem::Severity::Error)));
    }

    void problems_data() {
        QTest::addColumn<QString>("change");
        QTest::addColumn<bool>("error");  // false: a warning
        QTest::addColumn<QString>("mentions");
        QTest::newRow("no queries") << "no-queries" << true << "No query sequences";
        QTest::newRow("empty selection") << "empty-selection" << true << "the selection";
        QTest::newRow("no targets") << "no-targets" << true << "No target sequences";
        QTest::newRow("protein with match/mismatch")
            << "protein-match" << true << "Match/mismatch scoring is for nucleotides";
        QTest::newRow("protein with EDNAFULL") << "protein-ednafull" << true << "EDNAFULL scores nucleotides";
        QTest::newRow("DNA with BLOSUM62") << "dna-blosum" << false << "protein matrix";
        QTest::newRow("protein against DNA") << "mixed" << true << "both sides must be protein or both nucleotide";
        QTest::newRow("extend above open") << "extend-above-open" << true << "open + (k-1)*extend";
        QTest::newRow("half-step missed") << "quarter-step" << true << "multiple of 0.5";
        QTest::newRow("negative penalty") << "negative-open" << true << "gap open";
        QTest::newRow("unknown matrix") << "unknown-matrix" << true << "BLOSUM99";
        QTest::newRow("zip of unequal lists") << "zip-unequal" << true << "2 queries and 3 targets";
        QTest::newRow("GPU absent") << "gpu" << true << "no CUDA backend";
        QTest::newRow("unknown device") << "gpu:7" << true << "gpu:7";
        QTest::newRow("match not positive") << "match-zero" << true << "match score must be positive";
        QTest::newRow("semi-global without free ends") << "semiglobal-none" << false << "same as global";
    }

    void problems() {
        QFETCH(QString, change);
        QFETCH(bool, error);
        QFETCH(QString, mentions);
        JobRequest r = protein_request();
        const SequenceList dna = list({"ACGTACGT", "ACGGT"}, AlphabetKind::Dna);
        if (change == "no-queries") r.queries = SequenceList{};
        if (change == "empty-selection") {
            r.queries = SequenceList{};
            r.queries.label = "the selection in the Sequences table";
        }
        if (change == "no-targets") r.targets = SequenceList{};
        if (change == "protein-match") r.scoring.match_mismatch = true;
        if (change == "protein-ednafull") r.scoring.matrix = "EDNAFULL";
        if (change == "dna-blosum") r.queries = r.targets = dna;
        if (change == "mixed") r.targets = dna;
        if (change == "extend-above-open") r.scoring.gap_extend = 11;
        if (change == "quarter-step") r.scoring.gap_open = 10.25;
        if (change == "negative-open") r.scoring.gap_open = -1;
        if (change == "unknown-matrix") r.scoring.matrix = "BLOSUM99";
        if (change == "zip-unequal") r.pairing = Pairing::RecordByRecord;
        if (change.startsWith("gpu")) r.device = change.toStdString();
        if (change == "match-zero") {
            r.queries = r.targets = dna;
            r.scoring.match_mismatch = true;
            r.scoring.match = 0;
        }
        if (change == "semiglobal-none") {
            r.algorithm = JobAlgorithm::SemiGlobal;
            r.free_ends = FreeEndGaps::none();
        }
        const auto problems = check_request(r, cpu_devices());
        const auto severity = error ? JobProblem::Severity::Error : JobProblem::Severity::Warning;
        const QString found = joined(problems, severity);
        QVERIFY2(found.contains(mentions, Qt::CaseInsensitive),
                 qPrintable("expected '" + mentions + "' among:\n" + found));
        QCOMPARE(has_errors(problems), error);
    }

    void nucleotideMatchMismatchIsFine() {
        JobRequest r = protein_request();
        r.queries = r.targets = list({"ACGTACGT", "ACGGT"}, AlphabetKind::Dna);
        r.scoring.match_mismatch = true;
        r.scoring.match = 2;
        r.scoring.mismatch = -3;
        r.scoring.gap_open = 5;
        r.scoring.gap_extend = 2;
        QVERIFY(check_request(r, cpu_devices()).empty());
        const ScoringScheme scheme = r.scoring.scheme();
        // The convention the panel shows: a gap of length k costs open + (k-1)*extend.
        QCOMPARE(scheme.to_user(scheme.gap_cost(1)), 5.0);
        QCOMPARE(scheme.to_user(scheme.gap_cost(4)), 11.0);
    }

    void pairsAndCells_data() {
        QTest::addColumn<int>("pairing");
        QTest::newRow("all against all") << int(Pairing::AllAgainstAll);
        QTest::newRow("record by record") << int(Pairing::RecordByRecord);
    }

    void pairsAndCells() {
        QFETCH(int, pairing);
        JobRequest r = protein_request();
        r.pairing = Pairing(pairing);
        if (r.pairing == Pairing::RecordByRecord) r.targets = list({"MKVL", "GAGIVW"}, AlphabetKind::Protein);
        const PairJob job = make_pair_job(r);
        // Brute force: enumerate the pairs the pairing means.
        std::set<std::pair<std::uint32_t, std::uint32_t>> expected;
        std::uint64_t cells = 0;
        for (std::uint32_t i = 0; i < r.queries.size(); ++i)
            for (std::uint32_t j = 0; j < r.targets.size(); ++j)
                if (r.pairing == Pairing::AllAgainstAll || i == j) {
                    expected.insert({i, j});
                    cells += (*r.queries.records)[i].residues.size() * (*r.targets.records)[j].residues.size();
                }
        QCOMPARE(std::set(job.pairs.begin(), job.pairs.end()), expected);
        QCOMPARE(job.pairs.size(), expected.size());
        QCOMPARE(r.pair_count(), std::uint64_t(expected.size()));
        QCOMPARE(r.cell_count(), cells);
        QCOMPARE(job.total_cells(), cells);
        QCOMPARE(job.options.mode, AlignmentMode::Global);
        QCOMPARE(job.scheme.matrix.name(), std::string("BLOSUM62"));
    }

    void searchChecks_data() {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("mentions");  // empty: no problem
        QTest::newRow("valid") << ""
                               << "";
        QTest::newRow("no database") << "no-database"
                                     << "No database sequences";
        QTest::newRow("top zero") << "top-zero"
                                  << "at least 1";
        QTest::newRow("nucleotide database") << "dna-database"
                                             << "database sequences are dna";
        QTest::newRow("no scanners") << "no-scanners"
                                     << "not available";
        QTest::newRow("unknown device") << "gpu:7"
                                        << "gpu:7";
        // A search has no pair limit: it keeps K hits per query, not a result per pair.
        QTest::newRow("many pairs") << "many-pairs"
                                    << "";
    }

    void searchChecks() {
        QFETCH(QString, change);
        QFETCH(QString, mentions);
        JobRequest r = protein_request();
        r.algorithm = JobAlgorithm::DatabaseSearch;
        r.top = 3;
        const auto scanners = make_cpu_scanner_registry();
        const ScannerRegistry* given = scanners.get();
        if (change == "no-database") r.targets = list({}, AlphabetKind::Protein);
        if (change == "top-zero") r.top = 0;
        if (change == "dna-database") r.targets = list({"ACGTACGT"}, AlphabetKind::Dna);
        if (change == "no-scanners") given = nullptr;
        if (change.startsWith("gpu")) r.device = change.toStdString();
        if (change == "many-pairs") {
            r.queries = list(std::vector<std::string>(20'000, "MKV"), AlphabetKind::Protein);
            r.targets = list(std::vector<std::string>(10'000, "W"), AlphabetKind::Protein);
            QVERIFY(r.pair_count() > max_pairs_per_job);
        }
        const auto problems = check_request(r, cpu_devices(), given);
        const QString found = joined(problems, JobProblem::Severity::Error);
        if (mentions.isEmpty()) {
            QVERIFY2(problems.empty(), qPrintable(found));
        } else {
            QVERIFY2(found.contains(mentions, Qt::CaseInsensitive),
                     qPrintable("expected '" + mentions + "' among:\n" + found));
        }
    }

    void searchIsLocalWithBlastGaps() {
        JobRequest r = protein_request();
        r.algorithm = JobAlgorithm::DatabaseSearch;
        r.pairing = Pairing::RecordByRecord;  // ignored by a search
        QCOMPARE(r.align_options().mode, AlignmentMode::Local);
        QCOMPARE(r.pair_count(), std::uint64_t(2 * 3));
        QCOMPARE(r.cell_count(), std::uint64_t((9 + 3) * (10 + 4 + 1)));
        // BLAST's defaults (existence/extension 11/1 for BLOSUM62, 5/2 for
        // BLASTN's +2/-3) in our convention.
        QCOMPARE(search_default_gaps(r.scoring, AlphabetKind::Protein), (GapCosts{12, 1}));
        ScoringChoice dna;
        dna.match_mismatch = true;
        dna.match = 2;
        dna.mismatch = -3;
        QCOMPARE(search_default_gaps(dna, AlphabetKind::Dna), (GapCosts{7, 2}));
        r.scoring.gap_open = 12;
        r.scoring.gap_extend = 1;
        const ScanSetup setup = scan_setup(r);
        QCOMPARE(setup.options.mode, AlignmentMode::Local);
        QCOMPARE(setup.scheme.gap_open, 12);
        QVERIFY(QString::fromStdString(r.summary()).contains("top 10"));
    }

    void longPairChecks_data() {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("errors");    // expected among the errors; empty: none
        QTest::addColumn<QString>("warnings");  // expected among the warnings; empty: none
        QTest::newRow("one pair on a GPU") << ""
                                           << ""
                                           << "";
        QTest::newRow("several pairs") << "several"
                                       << ""
                                       << "the first query, s1 (2000 residues), with the first target, s1 (1500 "
                                          "residues); the 1 other queries and 2 other targets are not aligned";
        QTest::newRow("zip of unequal lists is no error") << "zip"
                                                          << ""
                                                          << "first query";
        QTest::newRow("CPU device") << "cpu"
                                    << ""
                                    << "Myers-Miller in linear space";
        QTest::newRow("all GPUs") << "all-gpus"
                                  << ""
                                  << "A long pair on all 2 GPUs (gpu:0, gpu:1) is split over them: each computes a "
                                     "slice of the columns";
        QTest::newRow("all GPUs, one available") << "all-gpus-one"
                                                 << ""
                                                 << "";
        QTest::newRow("unknown strategy") << "strategy"
                                          << "Unknown long-pair strategy 'waves'"
                                          << "";
        QTest::newRow("too many kernels") << "kernels"
                                          << "Kernels must be between 1 and 4096"
                                          << "";
        QTest::newRow("counts with strips") << "strips-counts"
                                            << ""
                                            << "apply to the streams strategy only";
        QTest::newRow("streams over kernels") << "streams-over"
                                              << ""
                                              << "8 streams for 2 kernels";
        QTest::newRow("small pair") << "small"
                                    << ""
                                    << "This pair is small";
        QTest::newRow("semi-global without free ends") << "semi-none"
                                                       << ""
                                                       << "same as global";
    }

    void longPairChecks() {
        QFETCH(QString, change);
        QFETCH(QString, errors);
        QFETCH(QString, warnings);
        std::vector<DeviceInfo> devices = cpu_devices();
        devices.pop_back();  // the unavailable "gpu"
        for (const char* id : {"gpu:0", "gpu:1"}) {
            DeviceInfo gpu;
            gpu.id = id;
            gpu.kind = "gpu";
            gpu.name = "a GPU";
            devices.push_back(gpu);
        }
        JobRequest r;
        r.algorithm = JobAlgorithm::LongPair;
        r.scoring.match_mismatch = true;
        r.scoring.gap_open = 5;
        r.scoring.gap_extend = 2;
        r.queries = list({std::string(2000, 'A')}, AlphabetKind::Dna);
        r.targets = list({std::string(1500, 'C')}, AlphabetKind::Dna, {2});
        r.device = "gpu:0";
        if (change == "several" || change == "zip") {
            r.queries = list({std::string(2000, 'A'), "ACGT"}, AlphabetKind::Dna);
            r.targets = list({std::string(1500, 'C'), "ACG", "TT"}, AlphabetKind::Dna, {2});
        }
        if (change == "zip") r.pairing = Pairing::RecordByRecord;
        if (change == "cpu") r.device = "cpu";
        if (change == "all-gpus" || change == "all-gpus-one") r.device = "gpu";
        if (change == "all-gpus-one") devices.back().available = false;  // gpu:1: the group is gpu:0 alone
        if (change == "strategy") r.strategy = "waves";
        if (change == "kernels") {
            r.strategy = "streams";
            r.kernels = 5000;
        }
        if (change == "strips-counts") r.kernels = 4;
        if (change == "streams-over") {
            r.strategy = "streams";
            r.kernels = 2;
            r.streams = 8;
        }
        if (change == "small") r.targets = list({"ACGT"}, AlphabetKind::Dna);
        if (change == "semi-none") {
            r.long_mode = AlignmentMode::SemiGlobal;
            r.free_ends = FreeEndGaps::none();
        }
        const auto problems = check_request(r, devices);
        const QString found_errors = joined(problems, JobProblem::Severity::Error);
        const QString found_warnings = joined(problems, JobProblem::Severity::Warning);
        if (errors.isEmpty()) QVERIFY2(found_errors.isEmpty(), qPrintable(found_errors));
        else
            QVERIFY2(found_errors.contains(errors), qPrintable("expected '" + errors + "' among:\n" + found_errors));
        if (warnings.isEmpty()) QVERIFY2(found_warnings.isEmpty(), qPrintable(found_warnings));
        else
            QVERIFY2(found_warnings.contains(warnings),
                     qPrintable("expected '" + warnings + "' among:\n" + found_warnings));
        // Several GPUs split a long pair (GpuGroup::make_long_runner): never "the first".
        QVERIFY2(!found_warnings.contains("runs on the first"), qPrintable(found_warnings));
    }

    void longPairIsTheFirstPair() {
        JobRequest r;
        r.algorithm = JobAlgorithm::LongPair;
        r.queries = list({std::string(300, 'A'), std::string(7000, 'A')}, AlphabetKind::Dna);
        r.targets = list({std::string(200, 'C'), "ACGT", std::string(9000, 'G')}, AlphabetKind::Dna, {2});
        r.pairing = Pairing::AllAgainstAll;  // ignored: one pair
        QCOMPARE(r.pair_count(), std::uint64_t{1});
        QCOMPARE(r.cell_count(), std::uint64_t{300 * 200});
        for (AlignmentMode mode : {AlignmentMode::Global, AlignmentMode::Local, AlignmentMode::SemiGlobal}) {
            r.long_mode = mode;
            QCOMPARE(r.align_options().mode, mode);
        }
        r.free_ends = FreeEndGaps::parse("qb,te");
        QVERIFY(r.align_options().free_ends == FreeEndGaps::parse("qb,te"));
        QVERIFY2(QString::fromStdString(r.summary()).startsWith("long semiglobal"), r.summary().c_str());
        QVERIFY(QString::fromStdString(r.summary()).contains("s1 (300) x s1 (200)"));
        // Runner settings: counts only with the streams strategy.
        r.kernels = 4;
        r.streams = 2;
        LongRunnerSettings s = long_runner_settings(r);
        QCOMPARE(s.strategy, std::string("strips"));
        QCOMPARE(s.kernels, 0);
        QCOMPARE(s.streams, 0);
        r.strategy = "streams";
        s = long_runner_settings(r);
        QCOMPARE(s.strategy, std::string("streams"));
        QCOMPARE(s.kernels, 4);
        QCOMPARE(s.streams, 2);
        QCOMPARE(parse_algorithm("long"), JobAlgorithm::LongPair);
        QCOMPARE(display_name(JobAlgorithm::LongPair), std::string("Long pair (linear space)"));
    }

    void algorithmsRoundTrip() {
        for (JobAlgorithm a : available_algorithms()) QCOMPARE(parse_algorithm(to_string(a)), a);
        QVERIFY_THROWS_EXCEPTION(Error, parse_algorithm("needleman"));
    }
};

QTEST_GUILESS_MAIN(JobRequestTest)
#include "test_job_request.moc"
