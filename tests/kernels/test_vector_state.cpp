// clear_upper_vector_state() (kernels/common/vector_state.hpp), which every
// CUDA call's check runs: after 256-bit AVX code leaves the upper halves of
// the vector registers in use, it puts them back in their initial state, as
// the processor itself reports it (XGETBV with ECX = 1: the state components
// in use, bit 2 = the upper halves of YMM0-15).
#include "../../kernels/common/vector_state.hpp"

#include <QtTest>

#include <cpuid.h>
#include <cstdint>

using alignscope::kernels::clear_upper_vector_state;

namespace {

#if defined(__x86_64__)
bool can_read_state_in_use() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__builtin_cpu_supports("avx")) return false;
    if (__get_cpuid_max(0, nullptr) < 0xd) return false;
    __cpuid_count(0xd, 1, a, b, c, d);
    return (a & (1u << 2)) != 0;  // XGETBV with ECX = 1
}

// Sets every bit of YMM0 (its upper half too), as a driver's AVX copy loop
// would leave it; optionally clears the upper halves; then asks the
// processor whether the AVX state is in use. Nothing between the three may
// call code that could run VZEROUPPER itself.
__attribute__((noinline)) bool avx_state_in_use_after(bool clear) {
    asm volatile("vcmpps $15, %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");  // predicate 15: always true
    if (clear) clear_upper_vector_state();
    unsigned lo = 0, hi = 0;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return (lo & (1u << 2)) != 0;
}
#endif

}  // namespace

class TestVectorState : public QObject {
    Q_OBJECT

private slots:
    void clearsTheUpperHalves() {
#if defined(__x86_64__)
        if (!can_read_state_in_use())
            QSKIP("this processor has no AVX or cannot report the state in use (XGETBV ECX=1)");
        clear_upper_vector_state();  // its one-time CPU check, outside the measured sequence
        // The probe first: dirty upper halves are seen as such.
        QVERIFY(avx_state_in_use_after(false));
        QVERIFY(!avx_state_in_use_after(true));
        // And again after the state was clean.
        QVERIFY(!avx_state_in_use_after(true));
#else
        QSKIP("VZEROUPPER exists on x86-64 only; elsewhere the function does nothing");
#endif
    }
};

QTEST_GUILESS_MAIN(TestVectorState)
#include "test_vector_state.moc"
