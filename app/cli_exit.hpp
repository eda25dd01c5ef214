// How alignscope-cli ends once a command's outputs are in place: a command
// whose last step leaves nothing to write may let the process end without
// tearing down what it built (a GPU's pinned buffers, streams and context, the
// heap), which the operating system takes back at once.
#pragma once

#include <atomic>

namespace alignscope::cli {

// Set by a command once its outputs are committed and flushed (files renamed
// into place, the progress line finished): nothing left but teardown.
inline std::atomic<bool>& teardown_left_to_exit() {
    static std::atomic<bool> flag{false};
    return flag;
}

// False in sanitizer builds: their checks (LeakSanitizer's above all) run
// while the process ends normally.
constexpr bool can_skip_teardown() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
    return false;
#else
    return true;
#endif
#else
    return true;
#endif
}

}  // namespace alignscope::cli
