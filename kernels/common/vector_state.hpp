// The x86 vector registers' upper halves after foreign code: VZEROUPPER on
// demand. Plain C++ (no CUDA), so a CPU test can check it.
#pragma once

namespace alignscope::kernels {

// The CUDA driver's host code may return with the upper halves of the AVX
// registers still in use. Until something clears them, every SSE instruction
// the thread runs next (libm's log and exp, our code built for baseline
// x86-64) waits on those halves: measured on an H100 host, the per-target
// length costs and null scores of a profile search ran 30 to 50 times slower
// on the thread that had just synchronised with the GPU, unless a profiler's
// callbacks (compiled for AVX, so ending in VZEROUPPER) ran in between.
// VZEROUPPER clears the upper halves; the lower ones, where SSE values live,
// are kept. Nothing on CPUs without AVX or other architectures.
inline void clear_upper_vector_state() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const bool has_avx = __builtin_cpu_supports("avx");
    if (has_avx)
        asm volatile("vzeroupper" ::
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
                           "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#endif
}

}  // namespace alignscope::kernels
