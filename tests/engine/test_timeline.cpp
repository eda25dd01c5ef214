// Kernel timelines: the in-memory recorder, Chrome trace-event JSON written by
// us and parsed back independently with nlohmann-json (units, pids/tids,
// metadata), traces of other tools (B/E pairs, string ids), and the errors for
// malformed traces (inputs from fuzz_chrome_trace among them).
#include <alignscope/device/timeline.hpp>
#include <alignscope/error.hpp>

#include <nlohmann/json.hpp>

#include <QtTest>

#include <map>
#include <set>
#include <sstream>
#include <thread>

using namespace alignscope;
using nlohmann::json;

namespace {

TimelineEvent make_event(std::string name, std::string category, std::string device, int lane, std::int64_t start,
                         std::int64_t end, std::uint64_t bytes, std::uint64_t cells) {
    TimelineEvent e;
    e.name = std::move(name);
    e.category = std::move(category);
    e.device = std::move(device);
    e.lane = lane;
    e.start_ns = start;
    e.end_ns = end;
    e.bytes = bytes;
    e.cells = cells;
    return e;
}

std::vector<TimelineEvent> sample_events() {
    // Absolute times far from zero, as the steady clock gives them.
    const std::int64_t t0 = 5'000'000'000'123;
    std::vector<TimelineEvent> events = {
        make_event("H2D", "copy", "gpu:0", 1, t0 + 0, t0 + 1'500, 4096, 0),
        make_event("sw_affine_inter_s16", "kernel", "gpu:0", 1, t0 + 2'000, t0 + 10'250, 0, 1'000'000),
        make_event("sw_affine_inter_s16", "kernel", "gpu:0", 3, t0 + 2'500, t0 + 9'000, 0, 750'000),
        make_event("sw_affine_striped_s16", "cpu", "cpu", 0, t0 + 100, t0 + 7'777, 0, 123'456),
        make_event("sw_affine_striped_s16", "cpu", "cpu", 1, t0 + 333, t0 + 8'001, 0, 654'321),
    };
    // A reverse pass, told apart from its forward pass by the detail only.
    events[2].detail = "reverse pass; inter_s16<sw>(PassParams)";
    return events;
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

class TestTimeline : public QObject {
    Q_OBJECT
private slots:
    void recorder_sorts_by_start_and_is_thread_safe() {
        TimelineRecorder recorder;
        QCOMPARE(QString::fromStdString(recorder.clock_source()), QStringLiteral("steady-clock"));
        constexpr int per_thread = 500;
        {
            std::vector<std::jthread> threads;
            for (int t = 0; t < 4; ++t)
                threads.emplace_back([&recorder, t] {
                    for (int k = 0; k < per_thread; ++k)
                        recorder.record(make_event("e", "cpu", "cpu", t, (k * 7919 + t * 31) % 1000, 2000, 0, 1));
                });
        }
        const auto events = recorder.events();
        QCOMPARE(events.size(), std::size_t(4 * per_thread));
        for (std::size_t k = 1; k < events.size(); ++k) QVERIFY(events[k - 1].start_ns <= events[k].start_ns);
        recorder.set_clock_source("cupti");
        QCOMPARE(QString::fromStdString(recorder.clock_source()), QStringLiteral("cupti"));
    }

    void steady_clock_advances() {
        const std::int64_t a = steady_now_ns();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const std::int64_t b = steady_now_ns();
        QVERIFY(b - a >= 2'000'000);
        QVERIFY(b - a < 2'000'000'000);
    }

    void chrome_trace_parses_with_units_and_metadata() {
        const auto events = sample_events();
        std::ostringstream out;
        write_chrome_trace(out, events, "cuda-events");
        const json doc = json::parse(out.str());

        QCOMPARE(QString::fromStdString(doc.at("displayTimeUnit").get<std::string>()), QStringLiteral("ns"));
        QCOMPARE(QString::fromStdString(doc.at("otherData").at("clock_source").get<std::string>()),
                 QStringLiteral("cuda-events"));

        std::map<int, std::string> process_names;
        std::map<std::pair<int, int>, std::string> thread_names;
        std::vector<json> complete;
        for (const json& ev : doc.at("traceEvents")) {
            const std::string ph = ev.at("ph");
            if (ph == "M" && ev.at("name") == "process_name")
                process_names[ev.at("pid").get<int>()] = ev.at("args").at("name").get<std::string>();
            else if (ph == "M" && ev.at("name") == "thread_name")
                thread_names[{ev.at("pid").get<int>(), ev.at("tid").get<int>()}] =
                    ev.at("args").at("name").get<std::string>();
            else if (ph == "X")
                complete.push_back(ev);
        }
        QCOMPARE(complete.size(), events.size());
        // One process per device, one thread per lane, named the way a reader expects.
        QCOMPARE(process_names.size(), std::size_t(2));
        std::map<std::string, int> pid_of;
        for (const auto& [pid, name] : process_names) pid_of[name] = pid;
        QVERIFY(pid_of.count("gpu:0") && pid_of.count("cpu"));
        QCOMPARE(QString::fromStdString(thread_names.at({pid_of["gpu:0"], 3})), QStringLiteral("stream 3"));
        QCOMPARE(QString::fromStdString(thread_names.at({pid_of["gpu:0"], 1})), QStringLiteral("stream 1"));
        QCOMPARE(QString::fromStdString(thread_names.at({pid_of["cpu"], 1})), QStringLiteral("worker 1"));
        QCOMPARE(thread_names.size(), std::size_t(4));

        // ts and dur in microseconds, relative to the earliest event.
        const std::int64_t origin = events.front().start_ns;
        for (std::size_t k = 0; k < events.size(); ++k) {
            const TimelineEvent& e = events[k];
            const json* match = nullptr;
            for (const json& ev : complete)
                if (ev.at("name") == e.name && ev.at("tid") == e.lane && ev.at("pid") == pid_of[e.device] &&
                    std::abs(ev.at("ts").get<double>() - double(e.start_ns - origin) / 1000.0) < 1e-6)
                    match = &ev;
            QVERIFY2(match, qPrintable(QString("event %1 missing").arg(k)));
            QCOMPARE(match->at("dur").get<double>(), double(e.end_ns - e.start_ns) / 1000.0);
            QCOMPARE(QString::fromStdString(match->at("cat").get<std::string>()), QString::fromStdString(e.category));
            QCOMPARE(match->at("args").at("bytes").get<std::uint64_t>(), e.bytes);
            QCOMPARE(match->at("args").at("cells").get<std::uint64_t>(), e.cells);
            QCOMPARE(QString::fromStdString(match->at("args").at("device").get<std::string>()),
                     QString::fromStdString(e.device));
            QCOMPARE(match->at("args").at("lane").get<int>(), e.lane);
            // The detail is written only where there is one.
            QCOMPARE(match->at("args").contains("detail"), !e.detail.empty());
            if (!e.detail.empty())
                QCOMPARE(QString::fromStdString(match->at("args").at("detail").get<std::string>()),
                         QString::fromStdString(e.detail));
        }
        // The earliest event sits at zero; a 1.5 us copy is 1.5, not 1500.
        bool copy_seen = false;
        for (const json& ev : complete)
            if (ev.at("name") == "H2D") {
                QCOMPARE(ev.at("ts").get<double>(), 0.0);
                QCOMPARE(ev.at("dur").get<double>(), 1.5);
                copy_seen = true;
            }
        QVERIFY(copy_seen);
    }

    void chrome_trace_round_trips() {
        const auto events = sample_events();
        std::ostringstream out;
        write_chrome_trace(out, events, "steady-clock");
        const auto back = read_chrome_trace(out.str(), "roundtrip.json");
        QCOMPARE(back.size(), events.size());
        const std::int64_t origin = events.front().start_ns;
        std::multiset<std::tuple<std::string, std::string, std::string, int, std::int64_t, std::int64_t, std::uint64_t,
                                 std::uint64_t, std::string>>
            expected, got;
        for (const auto& e : events)
            expected.emplace(e.name, e.category, e.device, e.lane, e.start_ns - origin, e.end_ns - origin, e.bytes,
                             e.cells, e.detail);
        for (const auto& e : back)
            got.emplace(e.name, e.category, e.device, e.lane, e.start_ns, e.end_ns, e.bytes, e.cells, e.detail);
        QVERIFY(expected == got);
        for (std::size_t k = 1; k < back.size(); ++k) QVERIFY(back[k - 1].start_ns <= back[k].start_ns);
    }

    void empty_timeline_is_a_valid_trace() {
        std::ostringstream out;
        write_chrome_trace(out, {}, "steady-clock");
        const json doc = json::parse(out.str());
        QVERIFY(doc.at("traceEvents").is_array());
        QVERIFY(doc.at("traceEvents").empty());
        QVERIFY(read_chrome_trace(out.str(), "empty.json").empty());
    }

    void foreign_trace_with_begin_end_pairs() {
        // As another profiler writes it: string pids, OS thread ids, nested
        // B/E pairs, integer and fractional microseconds, phases we ignore,
        // metadata after the events it names.
        const std::string text = R"({
          "traceEvents": [
            {"name": "outer", "cat": "kernel", "ph": "B", "ts": 10, "pid": "node7", "tid": 4242},
            {"name": "inner", "cat": "kernel", "ph": "B", "ts": 12.5, "pid": "node7", "tid": 4242},
            {"name": "other", "cat": "copy", "ph": "B", "ts": 11, "pid": "node7", "tid": "io-thread",
             "args": {"bytes": 2048}},
            {"name": "tick", "ph": "i", "ts": 13, "pid": "node7", "tid": 4242, "s": "t"},
            {"name": "counter", "ph": "C", "ts": 13, "pid": "node7", "args": {"v": 3}},
            {"ph": "E", "ts": 14, "pid": "node7", "tid": 4242},
            {"ph": "E", "ts": 20, "pid": "node7", "tid": "io-thread"},
            {"ph": "E", "ts": 30.25, "pid": "node7", "tid": 4242, "args": {"cells": 99}},
            {"name": "k", "cat": "kernel", "ph": "X", "ts": 40, "dur": 2.5, "pid": 3, "tid": 1},
            {"name": "process_name", "ph": "M", "pid": 3, "tid": 0, "args": {"name": "GPU 0"}}
          ]})";
        const auto events = read_chrome_trace(text, "foreign.json");
        QCOMPARE(events.size(), std::size_t(4));
        // Sorted by start: outer (10), other (11), inner (12.5), k (40).
        QCOMPARE(QString::fromStdString(events[0].name), QStringLiteral("outer"));
        QCOMPARE(events[0].start_ns, std::int64_t(10'000));
        QCOMPARE(events[0].end_ns, std::int64_t(30'250));  // the last E closes the first B
        QCOMPARE(events[0].cells, std::uint64_t(99));
        QCOMPARE(QString::fromStdString(events[0].device), QStringLiteral("node7"));
        QCOMPARE(events[0].lane, 4242);
        QCOMPARE(QString::fromStdString(events[1].name), QStringLiteral("other"));
        QCOMPARE(QString::fromStdString(events[1].category), QStringLiteral("copy"));
        QCOMPARE(events[1].end_ns - events[1].start_ns, std::int64_t(9'000));
        QCOMPARE(events[1].bytes, std::uint64_t(2048));
        QCOMPARE(QString::fromStdString(events[2].name), QStringLiteral("inner"));
        QCOMPARE(events[2].start_ns, std::int64_t(12'500));
        QCOMPARE(events[2].end_ns, std::int64_t(14'000));
        QCOMPARE(QString::fromStdString(events[3].name), QStringLiteral("k"));
        QCOMPARE(QString::fromStdString(events[3].device), QStringLiteral("GPU 0"));
        QCOMPARE(events[3].lane, 1);
        QCOMPARE(events[3].end_ns - events[3].start_ns, std::int64_t(2'500));
    }

    void bare_array_format_is_accepted() {
        const auto events =
            read_chrome_trace(R"([{"name":"a","ph":"X","ts":1,"dur":1,"pid":0,"tid":0}])", "array.json");
        QCOMPARE(events.size(), std::size_t(1));
        QCOMPARE(events[0].end_ns, std::int64_t(2'000));
    }

    void malformed_traces_are_errors_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("not json") << "{\"traceEvents\": ["
                                  << "not a valid JSON trace";
        QTest::newRow("garbage") << "hello"
                                 << "not a valid JSON trace";
        QTest::newRow("a number") << "42"
                                  << "JSON object or array";
        QTest::newRow("no traceEvents") << "{\"events\": []}"
                                        << "no \"traceEvents\"";
        QTest::newRow("traceEvents not array") << "{\"traceEvents\": {}}"
                                               << "not an array";
        QTest::newRow("event not object") << "{\"traceEvents\": [1]}"
                                          << "trace event 0 is not a JSON object";
        QTest::newRow("no phase") << R"({"traceEvents":[{"name":"a","ts":1,"pid":0,"tid":0}]})"
                                  << "no \"ph\"";
        QTest::newRow("X without dur") << R"({"traceEvents":[{"name":"a","ph":"X","ts":1,"pid":0,"tid":0}]})"
                                       << "no \"dur\"";
        QTest::newRow("X without ts") << R"({"traceEvents":[{"name":"a","ph":"X","dur":1,"pid":0,"tid":0}]})"
                                      << "no \"ts\"";
        QTest::newRow("X without name") << R"({"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":0,"tid":0}]})"
                                        << "no \"name\"";
        QTest::newRow("X without pid") << R"({"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":1,"tid":0}]})"
                                       << "no \"pid\"";
        QTest::newRow("ts not a number")
            << R"({"traceEvents":[{"name":"a","ph":"X","ts":"1","dur":1,"pid":0,"tid":0}]})"
            << "not a number";
        QTest::newRow("E without B") << R"({"traceEvents":[{"ph":"E","ts":1,"pid":0,"tid":0}]})"
                                     << "without a matching \"B\"";
        QTest::newRow("E on another thread")
            << R"({"traceEvents":[{"name":"a","ph":"B","ts":1,"pid":0,"tid":0},{"ph":"E","ts":2,"pid":0,"tid":1}]})"
            << "trace event 1";
        QTest::newRow("E before B") << R"({"traceEvents":[{"name":"a","ph":"B","ts":5,"pid":0,"tid":0},)"
                                       R"({"ph":"E","ts":2,"pid":0,"tid":0}]})"
                                    << "ends before";
        // Found by fuzz_chrome_trace: a number nlohmann-json cannot hold threw
        // its out_of_range, not an Error; a negative duration ended an event
        // before it began; an end past 2^63 ns overflowed; events a century
        // apart overflowed the timeline's span arithmetic.
        QTest::newRow("number overflow")
            << R"({"traceEvents":[{"name":"a","ph":"X","ts":1e400,"dur":1,"pid":0,"tid":0}]})"
            << "not a valid JSON trace";
        QTest::newRow("negative dur") << R"({"traceEvents":[{"name":"a","ph":"X","ts":10,"dur":-5,"pid":0,"tid":0}]})"
                                      << "trace event 0 has a negative \"dur\"";
        QTest::newRow("end past 2^63 ns")
            << R"({"traceEvents":[{"name":"a","ph":"X","ts":9e15,"dur":9e15,"pid":0,"tid":0}]})"
            << "trace event 0 ends out of range";
        QTest::newRow("events centuries apart")
            << R"({"traceEvents":[{"name":"a","ph":"X","ts":-4e15,"dur":1,"pid":0,"tid":0},)"
               R"({"name":"b","ph":"X","ts":4e15,"dur":1,"pid":0,"tid":0}]})"
            << "spans more than";
    }

    // What the reader passes over without an error: metadata with a name that
    // is not a string, and byte or cell counts no uint64 holds (1e30 was a
    // float-to-integer conversion out of range, undefined behaviour).
    void odd_values_are_ignored() {
        const std::string text =
            R"({"traceEvents":[{"name":5,"ph":"M","pid":0,"tid":0,"args":{"name":"x"}},)"
            R"({"name":"a","ph":"X","ts":1,"dur":2,"pid":0,"tid":0,"args":{"bytes":1e30,"cells":-3}},)"
            R"({"name":"b","ph":"X","ts":2,"dur":2,"pid":0,"tid":0,"args":{"bytes":1.8e19,"cells":4096.0}}]})";
        std::vector<TimelineEvent> events;
        try {
            events = read_chrome_trace(text, "odd.json");
        } catch (const std::exception& e) {
            QFAIL(e.what());
        }
        QCOMPARE(events.size(), std::size_t(2));
        QCOMPARE(events[0].bytes, std::uint64_t(0));
        QCOMPARE(events[0].cells, std::uint64_t(0));
        QCOMPARE(events[1].bytes, std::uint64_t(18'000'000'000'000'000'000ull));
        QCOMPARE(events[1].cells, std::uint64_t(4096));
        QCOMPARE(QString::fromStdString(events[0].device), QStringLiteral("0"));
    }

    void malformed_traces_are_errors() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        QString message;
        try {
            message = error_of([&] { read_chrome_trace(text.toStdString(), "bad/trace.json"); });
        } catch (const std::exception& e) {
            message = QStringLiteral("not an Error: ") + e.what();
        }
        QVERIFY2(message.startsWith("bad/trace.json: "), qPrintable(message));
        QVERIFY2(message.contains(expected), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestTimeline)
#include "test_timeline.moc"
