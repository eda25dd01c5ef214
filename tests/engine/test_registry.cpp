// The device registry: the --device grammar (cpu-ref, cpu, gpu, gpu:N,
// gpu:N,M, auto) over registries with and without GPUs, multi-GPU groups, the
// errors and their listing of available and unavailable devices, and
// PairJob::total_cells.
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <memory>

using namespace alignscope;

namespace {

// Stands in for a GPU backend; only its identity matters here.
class FakeBackend : public Backend {
public:
    FakeBackend(std::string id, std::string kind) : id_(std::move(id)), kind_(std::move(kind)) {}
    DeviceInfo info() const override {
        DeviceInfo d;
        d.id = id_;
        d.kind = kind_;
        d.name = "fake " + id_;
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob&, JobContext&) override { return {}; }

private:
    std::string id_, kind_;
};

// What the group factory was given, for checking which GPUs a spec selects.
class FakeGroup : public Backend {
public:
    explicit FakeGroup(std::vector<Backend*> members) : members_(std::move(members)) {}
    DeviceInfo info() const override {
        DeviceInfo d;
        d.kind = "gpu";
        d.id = "group";
        for (Backend* m : members_) d.id += " " + m->info().id;
        return d;
    }
    std::vector<Alignment> align_pairs(const PairJob&, JobContext&) override { return {}; }

private:
    std::vector<Backend*> members_;
};

std::unique_ptr<DeviceRegistry> registry_with_gpus(int gpus, bool factory = true) {
    auto r = make_cpu_registry();
    for (int k = 0; k < gpus; ++k) r->add(std::make_unique<FakeBackend>("gpu:" + std::to_string(k), "gpu"));
    if (factory)
        r->set_gpu_group_factory([](std::vector<Backend*> members) -> std::unique_ptr<Backend> {
            return std::make_unique<FakeGroup>(std::move(members));
        });
    return r;
}

template <typename F>
QString error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return QString::fromStdString(e.what());
    }
    return QStringLiteral("<no error>");
}

}  // namespace

class TestRegistry : public QObject {
    Q_OBJECT
private slots:
    void cpu_registry_lists_both_backends() {
        auto r = make_cpu_registry();
        const auto devices = r->devices();
        QCOMPARE(devices.size(), std::size_t(2));
        QCOMPARE(QString::fromStdString(devices[0].id), QStringLiteral("cpu-ref"));
        QCOMPARE(QString::fromStdString(devices[1].id), QStringLiteral("cpu"));
        for (const auto& d : devices) {
            QCOMPARE(QString::fromStdString(d.kind), QStringLiteral("cpu"));
            QVERIFY(d.available);
            QVERIFY(d.threads >= 1);
            QVERIFY(!d.description.empty());
        }
        // The SIMD backend says which instruction set parasail dispatches to.
        const QString simd = QString::fromStdString(devices[1].description);
        QVERIFY2(simd.contains("AVX2") || simd.contains("SSE") || simd.contains("NEON") || simd.contains("AltiVec") ||
                     simd.contains("no SIMD"),
                 qPrintable(simd));
    }

    void select_grammar_data() {
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("expected_id");
        QTest::newRow("cpu-ref") << 0 << "cpu-ref"
                                 << "cpu-ref";
        QTest::newRow("cpu") << 0 << "cpu"
                             << "cpu";
        QTest::newRow("case and spaces") << 0 << " CPU "
                                         << "cpu";
        QTest::newRow("auto without gpu") << 0 << "auto"
                                          << "cpu";
        QTest::newRow("auto one gpu") << 1 << "auto"
                                      << "gpu:0";
        QTest::newRow("auto three gpus") << 3 << "auto"
                                         << "group gpu:0 gpu:1 gpu:2";
        QTest::newRow("gpu one") << 1 << "gpu"
                                 << "gpu:0";
        QTest::newRow("gpu all") << 2 << "gpu"
                                 << "group gpu:0 gpu:1";
        QTest::newRow("gpu:N") << 3 << "gpu:2"
                               << "gpu:2";
        QTest::newRow("gpu list") << 3 << "gpu:0,2"
                                  << "group gpu:0 gpu:2";
        QTest::newRow("gpu list unordered") << 3 << "gpu:2,0"
                                            << "group gpu:0 gpu:2";
        QTest::newRow("gpu list repeated") << 3 << "gpu:1,1"
                                           << "gpu:1";
        QTest::newRow("gpu list spaces") << 3 << "gpu:1, 2"
                                         << "group gpu:1 gpu:2";
        QTest::newRow("gpu list of ids") << 3 << "gpu:0,gpu:2"
                                         << "group gpu:0 gpu:2";
        QTest::newRow("gpu list of ids repeated") << 3 << "gpu:1,gpu:1"
                                                  << "gpu:1";
        QTest::newRow("cpu with gpus") << 2 << "cpu"
                                       << "cpu";
    }

    void select_grammar() {
        QFETCH(int, gpus);
        QFETCH(QString, spec);
        QFETCH(QString, expected_id);
        auto r = registry_with_gpus(gpus);
        Backend& b = r->select(spec.toStdString());
        QCOMPARE(QString::fromStdString(b.info().id), expected_id);
    }

    void groups_are_made_once() {
        auto r = registry_with_gpus(3);
        Backend& a = r->select("gpu:0,2");
        Backend& b = r->select("gpu:2,0");
        Backend& c = r->select("gpu:0,1");
        QCOMPARE(&a, &b);
        QVERIFY(&a != &c);
    }

    void select_errors_data() {
        QTest::addColumn<int>("gpus");
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QStringList>("expected");
        const QStringList listing_cpu{"available devices: cpu-ref, cpu"};
        QTest::newRow("empty") << 0 << "" << QStringList{"no device named", "cpu-ref, cpu"};
        QTest::newRow("unknown") << 0 << "tpu" << QStringList{"'tpu'", "unknown device", "cpu-ref, cpu"};
        QTest::newRow("gpu without gpus") << 0 << "gpu" << QStringList{"no GPU is available", "cpu-ref, cpu"};
        QTest::newRow("gpu:N without gpus") << 0 << "gpu:0" << QStringList{"there is no gpu:0"};
        QTest::newRow("gpu index too high") << 2 << "gpu:5" << QStringList{"there is no gpu:5", "gpu:0, gpu:1"};
        QTest::newRow("gpu index not a number") << 2 << "gpu:x" << QStringList{"'x' is not a GPU index"};
        QTest::newRow("gpu index negative") << 2 << "gpu:-1" << QStringList{"'-1' is not a GPU index"};
        QTest::newRow("gpu list trailing comma") << 2 << "gpu:0," << QStringList{"'' is not a GPU index"};
        QTest::newRow("gpu colon only") << 2 << "gpu:" << QStringList{"expected a GPU index"};
        QTest::newRow("gpu list unknown member") << 2 << "gpu:0,3" << QStringList{"there is no gpu:3"};
        QTest::newRow("gpu list of ids unknown") << 2 << "gpu:0,gpu:3" << QStringList{"there is no gpu:3"};
        QTest::newRow("gpu list of ids malformed") << 2 << "gpu:0,gpu:" << QStringList{"'' is not a GPU index"};
    }

    void select_errors() {
        QFETCH(int, gpus);
        QFETCH(QString, spec);
        QFETCH(QStringList, expected);
        auto r = registry_with_gpus(gpus);
        const QString message = error_of([&] { r->select(spec.toStdString()); });
        QVERIFY2(message.startsWith("--device '" + spec + "'"), qPrintable(message));
        for (const QString& part : expected) QVERIFY2(message.contains(part), qPrintable(message));
    }

    void multi_gpu_without_factory_is_an_error() {
        auto r = registry_with_gpus(2, false);
        QCOMPARE(QString::fromStdString(r->select("gpu:1").info().id), QStringLiteral("gpu:1"));
        const QString message = error_of([&] { r->select("gpu"); });
        QVERIFY2(message.contains("several GPUs"), qPrintable(message));
    }

    void unavailable_devices_are_listed_with_reasons() {
        auto r = make_cpu_registry();
        DeviceInfo missing;
        missing.id = "gpu";
        missing.kind = "gpu";
        missing.name = "CUDA";
        missing.available = true;  // add_unavailable marks it
        missing.unavailable_reason = "no CUDA driver found (libcuda.so.1)";
        r->add_unavailable(missing);

        const auto devices = r->devices();
        QCOMPARE(devices.size(), std::size_t(3));
        QVERIFY(!devices[2].available);
        QCOMPARE(QString::fromStdString(devices[2].unavailable_reason),
                 QStringLiteral("no CUDA driver found (libcuda.so.1)"));

        for (const char* spec : {"gpu", "gpu:0", "gpu:1,2"}) {
            const QString message = error_of([&] { r->select(spec); });
            QVERIFY2(message.contains("no CUDA driver found (libcuda.so.1)"), qPrintable(message));
            QVERIFY2(message.contains("available devices: cpu-ref, cpu"), qPrintable(message));
            QVERIFY2(message.contains("unavailable: gpu (no CUDA driver"), qPrintable(message));
        }
        // auto falls back to the CPU when the GPUs are unusable.
        QCOMPARE(QString::fromStdString(r->select("auto").info().id), QStringLiteral("cpu"));
    }

    void duplicate_ids_are_refused() {
        auto r = make_cpu_registry();
        const QString message = error_of([&] { r->add(std::make_unique<FakeBackend>("cpu", "cpu")); });
        QVERIFY2(message.contains("already registered"), qPrintable(message));
    }

    void total_cells() {
        std::vector<Sequence> queries(2), targets(3);
        queries[0].residues = std::string(10, 'A');
        queries[1].residues = std::string(7, 'A');
        targets[0].residues = std::string(3, 'A');
        targets[1].residues = std::string(100'000, 'A');
        targets[2].residues = std::string(1, 'A');
        PairJob job;
        QCOMPARE(job.total_cells(), std::uint64_t(0));
        job.queries = &queries;
        job.targets = &targets;
        job.pairs = {{0, 0}, {1, 1}, {1, 2}, {0, 1}};
        QCOMPARE(job.total_cells(), std::uint64_t(10 * 3 + 7 * 100'000 + 7 * 1 + 10 * 100'000));
        job.pairs.push_back({2, 0});
        const QString message = error_of([&] { job.total_cells(); });
        QVERIFY2(message.contains("query 2"), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestRegistry)
#include "test_registry.moc"
