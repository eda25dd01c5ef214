// The search defaults the CLI and the workbench share: BLAST's default gap
// costs per matrix (checked against NCBI BLAST's documented defaults, converted
// to our convention, and against the statistics table: every default must have
// published parameters, or E-values would be missing out of the box), the
// scanner chosen for "auto" when a device cannot scan a setup, and the project
// record of a search job and its hits.
#include <alignscope/error.hpp>
#include <alignscope/score/substitution_matrix.hpp>
#include <alignscope/search/search_settings.hpp>
#include <alignscope/search/statistics.hpp>

#include <QtTest>

using namespace alignscope;

namespace {

// A scanner family that only scans local alignments (as a GPU scanner may).
std::unique_ptr<ScannerRegistry> registry_with_local_only_device() {
    auto registry = make_cpu_scanner_registry();
    DeviceInfo info;
    info.id = "gpu:0";
    info.kind = "gpu";
    info.name = "a local-only scanner";
    registry->add(
        info, [] { return make_cpu_scanner_registry()->create("cpu"); },
        [](const ScanSetup& setup) {
            if (setup.options.mode == AlignmentMode::Local) return ScanCapability{};
            return ScanCapability{false, "only local alignment is implemented"};
        });
    return registry;
}

ScanSetup setup_for(AlignmentMode mode) {
    ScanSetup setup;
    setup.scheme = ScoringScheme::create(SubstitutionMatrix::builtin("BLOSUM62"), 12, 1);
    setup.options.mode = mode;
    return setup;
}

}  // namespace

class TestSearchSettings : public QObject {
    Q_OBJECT

private slots:
    void blastDefaultGaps_data() {
        QTest::addColumn<QString>("matrix");
        QTest::addColumn<int>("existence");  // NCBI BLAST's documented default
        QTest::addColumn<int>("extension");
        QTest::newRow("BLOSUM62") << "BLOSUM62" << 11 << 1;
        QTest::newRow("blosum62, lower case") << "blosum62" << 11 << 1;
        QTest::newRow("EBLOSUM62, EMBOSS name") << "EBLOSUM62" << 11 << 1;
        // blast_stat.c: blosum45_prefs marks the {14, 2} row BLAST_MATRIX_BEST.
        QTest::newRow("BLOSUM45") << "BLOSUM45" << 14 << 2;
        QTest::newRow("BLOSUM50") << "BLOSUM50" << 13 << 2;
        QTest::newRow("BLOSUM80") << "BLOSUM80" << 10 << 1;
        QTest::newRow("PAM30") << "PAM30" << 9 << 1;
        QTest::newRow("PAM70") << "PAM70" << 10 << 1;
        QTest::newRow("PAM250") << "PAM250" << 14 << 2;
    }

    void blastDefaultGaps() {
        QFETCH(QString, matrix);
        QFETCH(int, existence);
        QFETCH(int, extension);
        const auto gaps = blast_default_gaps(matrix.toStdString());
        QVERIFY(gaps);
        QCOMPARE(gaps->open, double(existence + extension));
        QCOMPARE(gaps->extend, double(extension));
    }

    void everyDefaultHasStatistics_data() {
        QTest::addColumn<QString>("matrix");
        for (const char* name : {"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "PAM30", "PAM70", "PAM250"})
            QTest::newRow(name) << name;
    }

    void everyDefaultHasStatistics() {
        QFETCH(QString, matrix);
        const auto gaps = blast_default_gaps(matrix.toStdString());
        QVERIFY(gaps);
        const ScoringScheme scheme =
            ScoringScheme::create(SubstitutionMatrix::builtin(matrix.toStdString()), gaps->open, gaps->extend);
        std::string why;
        QVERIFY2(karlin_altschul_for(scheme, AlignmentMode::Local, &why), why.c_str());
    }

    void searchDefaults() {
        std::string note;
        QCOMPARE(default_search_gaps("", std::nullopt, std::nullopt, AlphabetKind::Protein, &note), (GapCosts{12, 1}));
        QVERIFY(note.empty());
        QCOMPARE(default_search_gaps("", std::nullopt, std::nullopt, AlphabetKind::Dna, &note), (GapCosts{16, 6}));
        QCOMPARE(default_search_gaps("DNAFULL", std::nullopt, std::nullopt, AlphabetKind::Dna, &note),
                 (GapCosts{16, 6}));
        // BLASTN's match 2, mismatch -3 with existence 5, extension 2.
        QCOMPARE(default_search_gaps("", 2.0, -3.0, AlphabetKind::Dna, &note), (GapCosts{7, 2}));
        QVERIFY(note.empty());
        QVERIFY(!blast_default_gaps("BLOSUM90"));
        QCOMPARE(default_search_gaps("BLOSUM90", std::nullopt, std::nullopt, AlphabetKind::Protein, &note),
                 (GapCosts{10, 0.5}));
        QVERIFY2(note.find("no BLAST default") != std::string::npos, note.c_str());
        note.clear();
        QCOMPARE(default_search_gaps("", 1.0, -1.0, AlphabetKind::Dna, &note), (GapCosts{10, 0.5}));
        QVERIFY(!note.empty());
    }

    void scanDeviceForAuto() {
        const auto registry = registry_with_local_only_device();
        std::string note;
        QCOMPARE(choose_scan_device(*registry, "auto", setup_for(AlignmentMode::Local), &note), std::string("auto"));
        QVERIFY(note.empty());
        QCOMPARE(choose_scan_device(*registry, "auto", setup_for(AlignmentMode::Global), &note), std::string("cpu"));
        QVERIFY2(note.find("gpu:0 cannot scan this: only local") != std::string::npos, note.c_str());
        QCOMPARE(choose_scan_device(*registry, "cpu", setup_for(AlignmentMode::Global), &note), std::string("cpu"));
        try {
            choose_scan_device(*registry, "gpu:0", setup_for(AlignmentMode::Global), &note, "Device");
            QFAIL("gpu:0 was accepted for a global scan");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("Device gpu:0: gpu:0 cannot scan this") != std::string::npos, e.what());
        }
    }

    void jobSpecAndHits() {
        ScanSetup setup = setup_for(AlignmentMode::Local);
        setup.threads = 3;
        SearchOptions search;
        search.top = 7;
        search.max_evalue = 1e-3;
        DeviceInfo device;
        device.id = "cpu";
        device.name = "CPU SIMD";
        const store::JobSpec spec = search_job_spec("gui", setup, search, device);
        QCOMPARE(spec.command, std::string("gui"));
        QCOMPARE(spec.mode, std::string("local"));
        QCOMPARE(spec.algorithm, std::string("sw_affine"));
        QCOMPARE(spec.devices, std::string("cpu"));
        QCOMPARE(spec.threads, 3);
        QCOMPARE(spec.parameters.at("top"), std::string("7"));
        QCOMPARE(std::stod(spec.parameters.at("max_evalue")), 1e-3);
        QVERIFY(!spec.parameters.count("pairs"));
        QCOMPARE(spec.gap_open, 12.0);
        QCOMPARE(spec.scheme().gap_open, 12);

        SearchHit hit;
        hit.rank = 2;
        hit.score = 88;
        hit.bits = 40.5;
        hit.evalue = 2e-9;
        hit.alignment.query_id = "q";
        hit.alignment.target_id = "t";
        hit.alignment.query_begin = 3;
        hit.alignment.query_end = 50;
        hit.alignment.target_begin = 10;
        hit.alignment.target_end = 58;
        hit.alignment.query_length = 60;
        hit.alignment.target_length = 70;
        const store::Hit stored = to_store_hit(hit);
        QCOMPARE(stored.query_id, std::string("q"));
        QCOMPARE(stored.target_id, std::string("t"));
        QCOMPARE(stored.rank, std::int64_t{2});
        QCOMPARE(stored.score, std::int64_t{88});
        QCOMPARE(*stored.bits, 40.5);
        QCOMPARE(*stored.evalue, 2e-9);
        QCOMPARE(stored.query_begin, std::int64_t{3});
        QCOMPARE(stored.target_end, std::int64_t{58});
        QCOMPARE(stored.target_length, std::int64_t{70});
    }
};

QTEST_GUILESS_MAIN(TestSearchSettings)
#include "test_search_settings.moc"
