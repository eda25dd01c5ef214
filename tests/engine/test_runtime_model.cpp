// The long-pair run-time model t(m, n) = a*m*n + b*(m+n) + c
// (bench/runtime_model.hpp): synthetic observations made from known
// coefficients give those coefficients back; fewer sizes fit fewer
// parameters; hand-solved least-squares cases for the degenerate inputs;
// coefficients that would be negative are held at 0; bad observations are one
// clear error; the observations kept in stored bench --long points; and real
// CPU timings of the long-pair path (run_long_bench on the "cpu" backend,
// 2k..8k) predict a held-out 12k pair within a factor of 2.
#include <alignscope/bench/bench.hpp>
#include <alignscope/bench/long_bench.hpp>
#include <alignscope/bench/runtime_model.hpp>
#include <alignscope/device/backend.hpp>
#include <alignscope/error.hpp>

#include <QtTest>

#include <cmath>
#include <vector>

using namespace alignscope;

namespace {

bool near(double got, double want, double rel) { return std::fabs(got - want) <= rel * std::fabs(want); }

std::vector<RuntimeSample> synthetic(double a, double b, double c,
                                     const std::vector<std::pair<double, double>>& sizes) {
    std::vector<RuntimeSample> out;
    for (const auto& [m, n] : sizes) out.push_back({m, n, a * m * n + b * (m + n) + c});
    return out;
}

}  // namespace

class TestRuntimeModel : public QObject {
    Q_OBJECT

private slots:
    void recovers_known_coefficients() {
        // A GPU-like device (bench --long's lengths) and a CPU-like one with
        // non-square pairs, each point seen twice.
        struct Case {
            double a, b, c;
            std::vector<std::pair<double, double>> sizes;
        };
        const std::vector<Case> cases = {
            {1.0 / 800e9, 2e-7, 0.35, {{1e4, 1e4}, {1e5, 1e5}, {1e6, 1e6}, {5e6, 5e6}}},
            {1.0 / 300e6, 4e-6, 0.02, {{3000, 3000}, {6000, 5000}, {12000, 12000}, {2000, 9000}, {6000, 5000}}},
            {2.5e-9, 1e-5, 0.5, {{10000, 10000}, {30000, 30000}, {60000, 60000}}},  // exactly 3 sizes
        };
        for (const Case& k : cases) {
            const RuntimeModel model = fit_runtime_model(synthetic(k.a, k.b, k.c, k.sizes));
            QCOMPARE(model.parameters, 3);
            QVERIFY2(near(model.a, k.a, 1e-6), qPrintable(QString::number(model.a, 'g', 17)));
            QVERIFY2(near(model.b, k.b, 1e-6), qPrintable(QString::number(model.b, 'g', 17)));
            QVERIFY2(near(model.c, k.c, 1e-6), qPrintable(QString::number(model.c, 'g', 17)));
            QVERIFY(model.relative_rms < 1e-9);
            QVERIFY(near(model.predict(5e6, 5e6), k.a * 25e12 + k.b * 1e7 + k.c, 1e-6));
        }
        // No per-residue term in the data: b comes out 0, not a small negative.
        const RuntimeModel ac = fit_runtime_model(synthetic(3e-9, 0, 0.25, {{1000, 1000}, {4000, 4000}, {9000, 8000}}));
        QVERIFY(near(ac.a, 3e-9, 1e-6) && near(ac.c, 0.25, 1e-6));
        QVERIFY(ac.b >= 0 && ac.b < 1e-15);
    }

    void no_observations() {
        const RuntimeModel model = fit_runtime_model({});
        QVERIFY(!model.valid());
        QCOMPARE(model.parameters, 0);
        QCOMPARE(model.samples, 0);
    }

    void one_observation_is_a_rate() {
        const RuntimeModel model = fit_runtime_model({{20000, 10000, 4.0}});
        QCOMPARE(model.parameters, 1);
        QVERIFY(model.exact());
        QVERIFY(near(model.a, 4.0 / 2e8, 1e-12));
        QCOMPARE(model.b, 0.0);
        QCOMPARE(model.c, 0.0);
        QVERIFY(QString::fromStdString(model.describe()).contains("exact fit (no error estimate)"));
    }

    void two_sizes_fit_rate_and_fixed_cost() {
        // 1 s at 10k x 10k and 3 s at 30k x 30k: a = 2 / 8e8, c = 0.75.
        const RuntimeModel model = fit_runtime_model({{10000, 10000, 1.0}, {30000, 30000, 3.0}});
        QCOMPARE(model.parameters, 2);
        QCOMPARE(model.sizes, 2);
        QVERIFY(model.exact());
        QVERIFY(near(model.a, 2.5e-9, 1e-9));
        QCOMPARE(model.b, 0.0);
        QVERIFY(near(model.c, 0.75, 1e-9));
    }

    void identical_sizes_fit_one_parameter() {
        // 1 s and 3 s at the same size: minimise (x - 1)^2 + (x/3 - 1)^2 over
        // the predicted x: x = (1 + 1/3) / (1 + 1/9) = 1.2 s, relative errors
        // +0.2 and -0.6, RMS sqrt(0.2).
        const RuntimeModel model = fit_runtime_model({{5000, 5000, 1.0}, {5000, 5000, 3.0}});
        QCOMPARE(model.parameters, 1);
        QCOMPARE(model.sizes, 1);
        QVERIFY(!model.exact());
        QVERIFY(near(model.predict(5000, 5000), 1.2, 1e-12));
        QVERIFY(near(model.relative_rms, std::sqrt(0.2), 1e-12));
        // m x n and n x m are the same size.
        QCOMPARE(fit_runtime_model({{2000, 7000, 1.0}, {7000, 2000, 1.1}, {2000, 7000, 0.9}}).parameters, 1);
    }

    void negative_coefficients_are_held_at_zero() {
        // t = a*L^2 - 0.5 at two sizes: the free fit needs c = -0.5; held at
        // 0, the best is a alone: a = sum(x) / sum(x^2), x = L^2 / t.
        const double a = 1e-8;
        const std::vector<RuntimeSample> two = {{10000, 10000, a * 1e8 - 0.5}, {20000, 20000, a * 4e8 - 0.5}};
        const RuntimeModel model = fit_runtime_model(two);
        QCOMPARE(model.c, 0.0);
        QCOMPARE(model.b, 0.0);
        QCOMPARE(model.free_parameters, 1);
        QVERIFY(!model.exact());  // two points, one free parameter: a real residual
        QVERIFY(QString::fromStdString(model.describe()).contains("relative RMS"));
        const double x1 = 1e8 / two[0].seconds, x2 = 4e8 / two[1].seconds;
        QVERIFY(near(model.a, (x1 + x2) / (x1 * x1 + x2 * x2), 1e-9));
        // Three sizes with a negative per-residue term: b held at 0, a and c
        // no worse than either alone.
        std::vector<RuntimeSample> three;
        for (double L : {1000.0, 3000.0, 9000.0}) three.push_back({L, L, 2e-9 * L * L - 2e-5 * 2 * L + 0.2});
        const RuntimeModel clamped = fit_runtime_model(three);
        QCOMPARE(clamped.parameters, 3);
        QCOMPARE(clamped.b, 0.0);
        QVERIFY(!clamped.exact());
        QVERIFY(clamped.a >= 0 && clamped.c >= 0);
        QVERIFY(clamped.relative_rms > 0);
        double sx = 0, sxx = 0;
        for (const RuntimeSample& s : three) {
            const double x = s.m * s.n / s.seconds;
            sx += x;
            sxx += x * x;
        }
        const double rate = sx / sxx;  // the best a alone
        double rms = 0;
        for (const RuntimeSample& s : three) rms += std::pow((rate * s.m * s.n - s.seconds) / s.seconds, 2);
        QVERIFY(clamped.relative_rms <= std::sqrt(rms / 3) + 1e-12);
        for (const RuntimeSample& s : three) QVERIFY(clamped.predict(s.m, s.n) > 0);
    }

    void bad_observations_are_an_error() {
        for (const RuntimeSample bad : {RuntimeSample{1000, 1000, 0}, RuntimeSample{1000, -5, 1},
                                        RuntimeSample{NAN, 1000, 1}, RuntimeSample{1000, 1000, INFINITY}}) {
            try {
                fit_runtime_model({{1000, 1000, 1.0}, bad});
                QFAIL("no error");
            } catch (const Error& e) {
                QVERIFY2(QString(e.what()).contains("observation 2"), e.what());
            }
        }
    }

    // One string per device set, whichever way it was written down.
    void device_sets() {
        const std::pair<const char*, const char*> cases[] = {
            {"gpu:0", "gpu:0"},  // one GPU
            {"gpu:12", "gpu:12"},
            {"gpu:0,1", "gpu:0,1"},  // the registry's group id
            {"gpu:1,0", "gpu:0,1"},  // as asked on the command line
            {"gpu:0,gpu:1", "gpu:0,1"},
            {"gpu:0+gpu:1", "gpu:0,1"},  // the split runner's device
            {"gpu:2+gpu:10+gpu:0", "gpu:0,2,10"},
            {"gpu:1,1", "gpu:1"},  // listed twice, used once
            {"cpu", "cpu"},        // not a set of GPUs: as it is
            {"cpu-ref", "cpu-ref"},
            {"gpu", "gpu"},  // all GPUs of some machine: unknown which
            {"auto", "auto"},
            {"gpu:", "gpu:"},
            {"gpu:x", "gpu:x"},
            {"gpu:0,", "gpu:0,"},
            {"gpu:-1", "gpu:-1"},
            {"gpu:0+cpu", "gpu:0+cpu"},
            {"", ""},
        };
        for (const auto& [in, out] : cases) QCOMPARE(device_set_id(in), std::string(out));
    }

    void samples_of_stored_bench_points() {
        LongBenchPoint p;
        p.length = 6000;
        p.strategy = "linear-space";
        p.device = "cpu";
        p.cells = 36'000'000;
        p.score_only_seconds = 0.25;
        p.full_seconds = 0.75;
        const store::BenchPoint stored = to_store_point(to_bench_point(p));
        const auto full = long_bench_sample(stored, true), score = long_bench_sample(stored, false);
        QVERIFY(full && score);
        QCOMPARE(full->m, 6000.0);
        QCOMPARE(full->n, 6000.0);
        QCOMPARE(full->seconds, 0.75);
        QCOMPARE(score->seconds, 0.25);
        // Not a long-pair series, or no figure: nothing.
        store::BenchPoint other = stored;
        other.series = "sw_affine on cpu";
        QVERIFY(!long_bench_sample(other, true));
        store::BenchPoint bare;
        bare.series = "long/strips";
        bare.x = 10000;
        bare.parameters = {{"seconds", "2"}};
        QVERIFY(!long_bench_sample(bare, false));
        QCOMPARE(long_bench_sample(bare, true)->m, 10000.0);
    }

    void predicts_held_out_cpu_timings() {
        // Real timings of the CPU long-pair path: fitted on 2k..8k, the model
        // predicts a 12k pair (2.25x the cells of the largest) within 2x.
        auto registry = make_cpu_registry();
        Backend& cpu = registry->select("cpu");
        LongBenchOptions options;
        options.threads = 1;
        options.lengths = {2000, 4000, 6000, 8000};
        const LongBenchReport fit_runs = run_long_bench(cpu, options, {}, {});
        options.lengths = {12000};
        const LongBenchReport held_out = run_long_bench(cpu, options, {}, {});
        QCOMPARE(fit_runs.points.size(), std::size_t{4});
        QCOMPARE(held_out.points.size(), std::size_t{1});
        for (bool traceback : {false, true}) {
            std::vector<RuntimeSample> samples;
            for (const LongBenchPoint& p : fit_runs.points)
                samples.push_back(*long_bench_sample(to_store_point(to_bench_point(p)), traceback));
            const RuntimeModel model = fit_runtime_model(samples);
            QCOMPARE(model.parameters, 3);
            const LongBenchPoint& h = held_out.points.front();
            const double measured = traceback ? h.full_seconds : h.score_only_seconds;
            const double predicted = model.predict(12000, 12000);
            qInfo("traceback %s: %s; 12k predicted %.3f s, measured %.3f s", traceback ? "on" : "off",
                  model.describe().c_str(), predicted, measured);
            QVERIFY2(predicted > measured / 2 && predicted < measured * 2,
                     qPrintable(QString("predicted %1 s, measured %2 s").arg(predicted).arg(measured)));
        }
    }
};

QTEST_GUILESS_MAIN(TestRuntimeModel)
#include "test_runtime_model.moc"
