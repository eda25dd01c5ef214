// `alignscope-cli verify --all-kernels` through the real binary: every CPU
// kernel variant the catalog holds (the cpu-ref and cpu pairwise kernels,
// their database scanners, the CPU long-pair path and the CPU profile
// filters) runs against the CPU reference, one line each, exit status 0;
// flags of the other checks are refused with one error line.
#include "cli_runner.hpp"

#include <alignscope/bench/kernel_checks.hpp>
#include <alignscope/profile/filter_verify.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

using namespace alignscope;

class TestVerifyAllKernels : public QObject {
    Q_OBJECT

private slots:
    void every_cpu_variant_passes() {
        const ProcessResult r = run_cli({"verify", "--all-kernels", "--device", "auto", "--threads", "2"}, 600000);
        QVERIFY2(!r.crashed, r.err.constData());
        QVERIFY2(r.exit_code == 0, (r.out + r.err).constData());
        const QStringList lines = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);

        // One line per (device, variant) of the engine's catalog: "area device name N pairs: ...".
        KernelCatalog catalog;
        add_cpu_kernel_families(catalog);
        profile::add_cpu_profile_kernel_families(catalog);
        int expected = 0;
        for (const KernelFamilyEntry& family : catalog.families())
            for (const KernelName& kernel : family.variants) {
                ++expected;
                const QRegularExpression line("^" + QRegularExpression::escape(QString::fromStdString(family.area)) +
                                              " +" + QRegularExpression::escape(QString::fromStdString(family.device)) +
                                              " +" +
                                              QRegularExpression::escape(QString::fromStdString(kernel.format())) +
                                              R"( +(\d+) pairs: (\d+) passed, 0 failed, (\d+) refused  ok$)");
                int found = 0;
                for (const QString& l : lines) {
                    const auto m = line.match(l);
                    if (!m.hasMatch()) continue;
                    ++found;
                    QVERIFY2(m.captured(2).toULongLong() > 0, qPrintable(l));  // something really ran
                }
                QVERIFY2(found == 1, qPrintable(QString::fromStdString(family.device + " " + kernel.format()) + "\n" +
                                                QString::fromUtf8(r.out)));
            }
        QVERIFY(expected >= 40);
        QCOMPARE(lines.last(), QString("%1 variants: %1 ok, 0 failed").arg(expected));
    }

    // `devices --json` lists each device's kernels of the same catalog, by area.
    void devices_list_the_catalog() {
        const ProcessResult r = run_cli({"devices", "--json"});
        QCOMPARE(r.exit_code, 0);
        const QJsonArray devices = QJsonDocument::fromJson(r.out).array();
        KernelCatalog catalog;
        add_cpu_kernel_families(catalog);
        profile::add_cpu_profile_kernel_families(catalog);
        int checked = 0;
        for (const QJsonValue& value : devices) {
            const QJsonObject device = value.toObject();
            const std::string id = device.value("id").toString().toStdString();
            if (id != "cpu" && id != "cpu-ref") continue;
            const QJsonObject kernels = device.value("kernels").toObject();
            for (const KernelFamilyEntry& family : catalog.families()) {
                if (family.device != id) continue;
                QStringList expected;
                for (const KernelName& k : family.variants) expected << QString::fromStdString(k.format());
                QStringList listed;
                for (const QJsonValue& name : kernels.value(QString::fromStdString(family.area)).toArray())
                    listed << name.toString();
                QCOMPARE(listed, expected);
                ++checked;
            }
        }
        QCOMPARE(checked, int(catalog.families().size()));
    }

    void refuses_flags_of_other_checks_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("says");
        QTest::newRow("kernel") << QStringList{"--kernel", "sw_affine_scan_s16"}
                                << "--kernel: --all-kernels runs every kernel";
        QTest::newRow("search") << QStringList{"--search"} << "drop --search and --long";
        QTest::newRow("long") << QStringList{"--long"} << "drop --search and --long";
        QTest::newRow("reference") << QStringList{"--reference", "cpu"} << "drop --reference";
        QTest::newRow("no device") << QStringList{"--device", "gpu:7"} << "--device: no usable device 'gpu:7'";
        QTest::newRow("no pairs") << QStringList{"--pairs", "0", "--device", "cpu-ref"} << "--pairs must be at least 1";
    }
    void refuses_flags_of_other_checks() {
        QFETCH(QStringList, extra);
        QFETCH(QString, says);
        const ProcessResult r = run_cli(QStringList{"verify", "--all-kernels"} + extra);
        QCOMPARE(r.exit_code, 2);
        const QString err = QString::fromUtf8(r.err).trimmed();
        QVERIFY2(!err.contains('\n'), qPrintable(err));
        QVERIFY2(err.contains(says), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestVerifyAllKernels)
#include "test_verify_all_kernels.moc"
