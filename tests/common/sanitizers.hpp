// Whether this test binary is built with a sanitizer (the asan and tsan
// presets), and how much longer a timed step may take there: instrumented code
// runs several times slower (ASan about 2-3x, TSan 5-15x), so a time limit
// meant for a release build is multiplied by kSanitizerSlowdown rather than
// failing on speed alone. Limits still catch what they are for (a cancellation
// that is never checked takes the whole job, seconds to minutes).
#pragma once

#if defined(__SANITIZE_THREAD__)
#define ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN 10.0
#elif defined(__SANITIZE_ADDRESS__)
#define ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN 4.0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN 10.0
#elif __has_feature(address_sanitizer)
#define ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN 4.0
#endif
#endif
#ifndef ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN
#define ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN 1.0
#endif

namespace alignscope::test {

inline constexpr double kSanitizerSlowdown = ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN;
// Under ASan or TSan (their runtimes reserve terabytes of address space and
// map shadow memory as they go, so a lowered RLIMIT_DATA or RLIMIT_AS stops
// the runtime itself, not the code under test).
inline constexpr bool kSanitized = ALIGNSCOPE_TEST_SANITIZER_SLOWDOWN > 1.0;

}  // namespace alignscope::test
