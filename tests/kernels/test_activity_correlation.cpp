// How CUPTI's activity records become labelled timeline events, without a GPU
// (kernels/common/activity_correlation.hpp): records and external correlation
// links in any order and from several timelines in, each operation's records
// out, named by the launch's KernelName whatever device function ran it, with
// the demangled function (c++filt's reading, short of namespaces) as detail.
#include "../../kernels/common/activity_correlation.hpp"

#include <alignscope/device/kernel_name.hpp>

#include <QtTest>

using namespace alignscope;
using namespace alignscope::kernels;

namespace {

// Device functions as CUPTI names them (mangled), taken from the stubs nvcc
// wrote for pass_launch.cu.
constexpr const char* kIntraS16Chunked8 = "_ZN10alignscope7kernels6device17intra_s16_chunkedILi8EEEvNS0_10PassParamsE";
constexpr const char* kIntraS16NwSg8 =
    "_ZN10alignscope7kernels6device9intra_s16ILi8ENS1_4mode5nw_sgEEEvNS0_10PassParamsE";
constexpr const char* kIntraS16Sw8 = "_ZN10alignscope7kernels6device9intra_s16ILi8ENS1_4mode2swEEEvNS0_10PassParamsE";
constexpr const char* kInterS16Sw = "_ZN10alignscope7kernels6device9inter_s16INS1_4mode2swEEEvNS0_10PassParamsE";

ActivityRecord kernel_record(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, const char* function) {
    return {correlation, start, end, 0, function};
}

ActivityRecord copy_record(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uint64_t bytes) {
    return {correlation, start, end, bytes};
}

}  // namespace

class TestActivityCorrelation : public QObject {
    Q_OBJECT

private slots:
    void readable_function_data() {
        QTest::addColumn<QString>("mangled");
        QTest::addColumn<QString>("readable");
        // c++filt: "void alignscope::kernels::device::intra_s16_chunked<8>(alignscope::kernels::PassParams)".
        QTest::newRow("template") << kIntraS16Chunked8 << "intra_s16_chunked<8>(PassParams)";
        // c++filt: "void alignscope::kernels::device::inter_s16<alignscope::kernels::device::mode::sw>(...)".
        QTest::newRow("type argument") << kInterS16Sw << "inter_s16<sw>(PassParams)";
        QTest::newRow("two arguments") << kIntraS16NwSg8 << "intra_s16<8, nw_sg>(PassParams)";
        // c++filt: "void a::strip_<8, false>(int)".
        QTest::newRow("bool argument") << "_ZN1a6strip_ILi8ELb0EEEvi"
                                       << "strip_<8, false>(int)";
        // c++filt: "(anonymous namespace)::kernel()".
        QTest::newRow("anonymous namespace") << "_ZN12_GLOBAL__N_16kernelEv"
                                             << "kernel()";
        QTest::newRow("demangled already")
            << "void alignscope::kernels::device::intra_s16_chunked<8>(alignscope::kernels::PassParams)"
            << "intra_s16_chunked<8>(PassParams)";
        QTest::newRow("plain C name") << "saxpy"
                                      << "saxpy";
        QTest::newRow("not a mangled name") << "_Zfoo"
                                            << "_Zfoo";
    }
    void readable_function() {
        QFETCH(QString, mangled);
        QFETCH(QString, readable);
        QCOMPARE(QString::fromStdString(kernels::readable_function(mangled.toStdString())), readable);
    }

    void records_go_to_the_operation_they_ran_under() {
        ActivityCorrelation books;
        // CUPTI's order: the link comes before its runtime call's record; the
        // kernel and copy records come later, in any order.
        books.add_external(100, 1);
        books.add_external(101, 2);
        books.add_external(102, 2);
        books.add_record(copy_record(102, 900, 950, 4096));
        books.add_record(kernel_record(100, 500, 800, kIntraS16Chunked8));
        books.add_record(kernel_record(101, 820, 880, kInterS16Sw));
        auto taken = books.take({1, 2});
        QCOMPARE(taken.size(), std::size_t(2));
        QCOMPARE(taken.at(1).size(), std::size_t(1));
        QCOMPARE(taken.at(1)[0].start, std::uint64_t(500));
        QCOMPARE(QString::fromStdString(taken.at(1)[0].function), QString(kIntraS16Chunked8));
        // Two runtime calls under one id, in the order they ran.
        QCOMPARE(taken.at(2).size(), std::size_t(2));
        QCOMPARE(taken.at(2)[0].start, std::uint64_t(820));
        QCOMPARE(taken.at(2)[1].bytes, std::uint64_t(4096));
        QCOMPARE(books.held_records(), std::size_t(0));
        QCOMPARE(books.held_links(), std::size_t(0));
    }

    void records_of_other_timelines_and_unlabelled_work_stay() {
        ActivityCorrelation books;
        books.add_record(kernel_record(7, 10, 20, kInterS16Sw));  // before its link
        books.add_external(7, 5);
        books.add_external(8, 6);  // another GPU's timeline
        books.add_record(kernel_record(8, 15, 25, kInterS16Sw));
        books.add_record(copy_record(9, 30, 40, 4));  // a memset under no operation
        auto first = books.take({5});
        QCOMPARE(first.size(), std::size_t(1));
        QCOMPARE(first.at(5).size(), std::size_t(1));
        QCOMPARE(books.held_records(), std::size_t(2));
        QCOMPARE(books.held_links(), std::size_t(1));
        // An id whose records are not there yet gives nothing, and nothing is lost.
        QVERIFY(books.take({42}).empty());
        auto second = books.take({6});
        QCOMPARE(second.at(6).size(), std::size_t(1));
        QCOMPARE(second.at(6)[0].correlation, std::uint32_t(8));
        QCOMPARE(books.held_records(), std::size_t(1));
        books.clear();
        QCOMPARE(books.held_records(), std::size_t(0));
    }

    // Global and semi-global share one device function; local 16-bit runs one
    // of two by target length: the timeline names each launch by its KernelName.
    void each_launch_shows_its_kernel_name() {
        const KernelName global{AlignmentMode::Global, false, "intra", 8, KernelWidth::S16};
        const KernelName semi{AlignmentMode::SemiGlobal, false, "intra", 8, KernelWidth::S16};
        const KernelName local{AlignmentMode::Local, false, "intra", 8, KernelWidth::S16};
        const GpuOp ops[] = {kernel_op(global, 0, 1000, "forward pass"), kernel_op(semi, 1, 2000, "forward pass"),
                             kernel_op(local, 0, 3000, "forward pass"), kernel_op(local, 1, 4000, "forward pass")};
        // The last batch's targets are too wide for the chunked kernel.
        const char* functions[] = {kIntraS16NwSg8, kIntraS16NwSg8, kIntraS16Chunked8, kIntraS16Sw8};
        ActivityCorrelation books;
        for (std::uint32_t k = 0; k < 4; ++k) {
            books.add_external(200 + k, 10 + k);
            books.add_record(kernel_record(200 + k, 1000 * k, 1000 * k + 600, functions[k]));
        }
        auto taken = books.take({10, 11, 12, 13});
        const std::int64_t offset = -250;
        const QString expected_detail[] = {"forward pass; intra_s16<8, nw_sg>(PassParams)",
                                           "forward pass; intra_s16<8, nw_sg>(PassParams)",
                                           "forward pass; intra_s16_chunked<8>(PassParams)",
                                           "forward pass; intra_s16<8, sw>(PassParams)"};
        const QString expected_name[] = {"nw_affine_intra8_s16", "sg_affine_intra8_s16", "sw_affine_intra8_s16",
                                         "sw_affine_intra8_s16"};
        for (std::uint32_t k = 0; k < 4; ++k) {
            QCOMPARE(taken.at(10 + k).size(), std::size_t(1));
            const TimelineEvent e = labelled_event(ops[k], taken.at(10 + k)[0], "gpu:0", offset);
            QCOMPARE(QString::fromStdString(e.name), expected_name[k]);
            QVERIFY(KernelName::parse(e.name) == (k == 0 ? global : k == 1 ? semi : local));
            QCOMPARE(QString::fromStdString(e.category), QStringLiteral("kernel"));
            QCOMPARE(QString::fromStdString(e.detail), expected_detail[k]);
            QCOMPARE(QString::fromStdString(e.device), QStringLiteral("gpu:0"));
            QCOMPARE(e.lane, ops[k].lane);
            QCOMPARE(e.cells, ops[k].cells);
            QCOMPARE(e.start_ns, std::int64_t(1000 * k) + offset);
            QCOMPARE(e.end_ns, std::int64_t(1000 * k + 600) + offset);
        }
    }

    void copies_take_their_bytes_from_cupti() {
        const GpuOp copy{"D2H", "copy", 2, 999, 0};
        const TimelineEvent e = labelled_event(copy, copy_record(1, 100, 200, 4096), "gpu:1", 0);
        QCOMPARE(e.bytes, std::uint64_t(4096));
        QVERIFY(e.detail.empty());
        QCOMPARE(QString::fromStdString(e.name), QStringLiteral("D2H"));
        // A kernel's bytes are the operation's: CUPTI reports none.
        const GpuOp kernel{"sw_affine_inter_s16", "kernel", 0, 64, 10};
        QCOMPARE(labelled_event(kernel, kernel_record(1, 0, 1, kInterS16Sw), "gpu:0", 0).bytes, std::uint64_t(64));
    }
};

QTEST_GUILESS_MAIN(TestActivityCorrelation)
#include "test_activity_correlation.moc"
